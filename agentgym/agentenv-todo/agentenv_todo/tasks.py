"""To-do tasks in AgentGym's styles: questions graded on the answer, operations graded on the final state.

The wording and answer forms follow AgentGym's ``todo.jsonl`` (dates as YYYY-MM-DD, durations as
'number(unit)', lists as ['task1', 'task2', ...], Yes/No, and "done" for operations). Each task
gets its own generated account (:mod:`agentenv_todo.data`). Answers and the expected final state
are computed when the task is built, with the gold program: the tool calls that find the facts and
make the edits, in the order an agent would (projects, then their tasks, then details).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass

from agentenv import tasksets
from agentenv.gold import GoldCall
from agentenv_todo.data import Account, Todo, generate_account

Answer = str | int | list[str]

TASK_LIST = " Please answer in the form of a list ['task1', 'task2', ...]."
NUMBER = " Please answer in the form of a number."
YES_NO = " Please answer Yes or No."


@dataclass(frozen=True)
class Task:
    kind: str
    question: str
    account: Account  # the initial account (a template: sessions edit copies)
    answer: Answer | None  # None: an operation, its answer ("done") is not graded
    program: tuple[GoldCall, ...]  # ends with finish
    expected: Account | None = None  # the account after the operation (None for a question)
    targets: tuple[str, ...] = ()  # ids of the tasks / projects the operation must change


def _date(d: dt.date) -> str:
    return d.isoformat()


def _open(acc: Account) -> list[Todo]:
    return [t for t in acc.tasks if not t.is_completed]


# -- gold-program pieces -----------------------------------------------------------------------------


def _projects_call() -> GoldCall:
    return GoldCall("get_projects", {}, "I need the projects and their ids first.")


def _tasks_calls(acc: Account, names: list[str] | None = None) -> list[GoldCall]:
    """get_tasks for the named projects (all by default), in the account's order."""
    return [GoldCall("get_tasks", {"project_id": p.id}, f"I list the tasks of the {p.name} project.")
            for p in acc.projects if names is None or p.name in names]


def _find_calls(acc: Account, content: str) -> list[GoldCall]:
    """get_tasks project after project until the one holding the task (an agent does not know where it is)."""
    calls = []
    for p in acc.projects:
        calls.append(GoldCall("get_tasks", {"project_id": p.id}, f"I look for '{content}' in the {p.name} project."))
        if any(t.content == content for t in acc.tasks_of(p.id)):
            return calls
    raise AssertionError(f"{content} is in no project")


def _today_call() -> GoldCall:
    return GoldCall("get_user_current_date", {}, "The task depends on today's date, so I ask for it.")


def _durations(tasks: list[Todo]) -> list[GoldCall]:
    return [GoldCall("get_task_duration", {"task_id": t.id}, f"I need the duration of '{t.content}'.") for t in tasks]


def _finish(answer: Answer, why: str) -> GoldCall:
    return GoldCall("finish", {"answer": answer}, why)


def _question(kind: str, question: str, acc: Account, answer: Answer, calls: list[GoldCall], why: str) -> Task:
    return Task(kind, question, acc, answer, (*calls, _finish(answer, why)))


def _operation(kind: str, question: str, acc: Account, after: Account, targets: list[str], calls: list[GoldCall],
               answer: Answer | None = None, why: str = "The requested changes are made.") -> Task:
    return Task(kind, question, acc, answer, (*calls, _finish("done" if answer is None else answer, why)),
                after, tuple(targets))


# -- questions --------------------------------------------------------------------------------------------
# a builder returns None when the drawn account or subjects do not make a question with one answer


def due_date(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(acc.tasks)
    p = acc.project(t.project_id)
    return _question("due_date", f"When is the due date of {t.content} in {p.name}? Please provide the answer in the "
                     "YYYY-MM-DD format.", acc, t.due_date,
                     [_projects_call(), *_tasks_calls(acc, [p.name])], f"'{t.content}' is due on {t.due_date}.")


def do_first(acc: Account, rng: random.Random) -> Task | None:
    a, b = rng.sample(_open(acc), 2)
    if a.due_date == b.due_date:
        return None
    first = min(a, b, key=lambda t: t.due_date)
    return _question("do_first", f"Which task should I do first today to avoid missing the deadline? {a.content} or "
                     f"{b.content}?", acc, first.content,
                     [_projects_call(), *_tasks_calls(acc, [acc.project(a.project_id).name,
                                                            acc.project(b.project_id).name])],
                     f"'{first.content}' is due earlier ({first.due_date}).")


def _deadline(acc: Account, rng: random.Random) -> str:
    return _date(acc.today + dt.timedelta(days=rng.randint(3, 14)))


def before_date_in_project(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    day = _deadline(acc, rng)
    names = sorted(t.content for t in acc.tasks_of(p.id) if not t.is_completed and t.due_date < day)
    if not names:
        return None
    return _question("before_date_in_project", f"What unfinished tasks should I complete before {day} in the {p.name} "
                     f"project?{TASK_LIST}", acc, names, [_projects_call(), *_tasks_calls(acc, [p.name])],
                     f"These unfinished tasks are due before {day}.")


def before_date_all(acc: Account, rng: random.Random) -> Task | None:
    day = _deadline(acc, rng)
    names = sorted(t.content for t in _open(acc) if t.due_date < day)
    if not names:
        return None
    return _question("before_date_all", f"What unfinished tasks should I complete before {day}?{TASK_LIST}", acc, names,
                     [_projects_call(), *_tasks_calls(acc)], f"Across all projects these are due before {day}.")


def overdue_count(acc: Account, rng: random.Random) -> Task | None:
    n = sum(t.due_date < acc.current_date for t in _open(acc))
    return _question("overdue_count", "Until today, how many unfinished tasks are overdue? Please give me a number as "
                     "an answer.", acc, n, [_today_call(), _projects_call(), *_tasks_calls(acc)],
                     f"{n} unfinished tasks are due before today, {acc.current_date}.")


def most_important_week(acc: Account, rng: random.Random) -> Task | None:
    end = _date(acc.today + dt.timedelta(days=7))
    window = [t for t in _open(acc) if acc.current_date <= t.due_date <= end]
    if not window:
        return None
    top = max(t.priority for t in window)
    best = [t for t in window if t.priority == top]
    if len(best) != 1:
        return None
    return _question("most_important_week", "What is the most important (highest priority) unfinished task for me in "
                     "the next 7 days, today included?", acc, best[0].content,
                     [_today_call(), _projects_call(), *_tasks_calls(acc)],
                     f"Due by {end}, '{best[0].content}' has the highest priority, {top}.")


def duration_of(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(acc.tasks)
    return _question("duration_of", f"How long is it expected to take to complete the task {t.content}? Please answer "
                     "in the format of 'number(unit)'.", acc, t.duration_text,
                     [_projects_call(), *_find_calls(acc, t.content), *_durations([t])],
                     f"It takes {t.duration_text}.")


def place_of(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(acc.tasks)
    return _question("place_of", f"Where do I need to go for the task \"{t.content}\"? Please answer with the place "
                     "given in its description.", acc, t.place,
                     [_projects_call(), *_find_calls(acc, t.content),
                      GoldCall("get_task_description", {"task_id": t.id}, "The place is in the task's description.")],
                     f"The description says the place is {t.place}.")


def same_place(acc: Account, rng: random.Random) -> Task | None:
    a = rng.choice(acc.tasks)
    same = [t for t in acc.tasks if t.place == a.place and t is not a]
    b = rng.choice(same) if same and rng.random() < 0.5 else rng.choice([t for t in acc.tasks if t is not a])
    flag = "Yes" if a.place == b.place else "No"
    calls = [_projects_call(), *_find_calls(acc, a.content)]
    calls += [c for c in _find_calls(acc, b.content) if c not in calls]
    calls += [GoldCall("get_task_description", {"task_id": t.id}, f"I read where '{t.content}' takes place.")
              for t in (a, b)]
    return _question("same_place", f"Is the place for \"{a.content}\" the same as the place for \"{b.content}\"?"
                     f"{YES_NO}", acc, flag, calls, f"The places are {a.place} and {b.place}.")


def more_time(acc: Account, rng: random.Random) -> Task | None:
    a, b = rng.sample(acc.tasks, 2)
    if a.duration == b.duration:
        return None
    longer = max(a, b, key=lambda t: t.duration)
    calls = [_projects_call(), *_find_calls(acc, a.content)]
    calls += [c for c in _find_calls(acc, b.content) if c not in calls]
    return _question("more_time", f"Which task requires more time, {a.content} or {b.content}?", acc, longer.content,
                     [*calls, *_durations([a, b])], f"'{longer.content}' takes longer ({longer.duration_text}).")


def longest_in_project(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    tasks = acc.tasks_of(p.id)
    top = max(t.duration for t in tasks)
    best = [t for t in tasks if t.duration == top]
    if len(best) != 1:
        return None
    return _question("longest_in_project", f"What is the task that takes the longest time in the {p.name} project?",
                     acc, best[0].content, [_projects_call(), *_tasks_calls(acc, [p.name]), *_durations(tasks)],
                     f"'{best[0].content}' takes the longest, {best[0].duration_text}.")


def total_tasks(acc: Account, rng: random.Random) -> Task | None:
    n = len(acc.tasks)
    return _question("total_tasks", f"How many tasks are there in total, finished or not?{NUMBER}", acc, n,
                     [_projects_call(), *_tasks_calls(acc)], f"The projects hold {n} tasks.")


def priority_of(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(acc.tasks)
    p = acc.project(t.project_id)
    return _question("priority_of", f"What is the priority level of the task \"{t.content}\" in the {p.name}?{NUMBER}",
                     acc, t.priority, [_projects_call(), *_tasks_calls(acc, [p.name])],
                     f"Its priority is {t.priority}.")


def project_minutes(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    tasks = acc.tasks_of(p.id)
    n = sum(t.duration for t in tasks)
    return _question("project_minutes", f"How many minutes in total are required to complete all tasks in the {p.name} "
                     f"project?{NUMBER}", acc, n, [_projects_call(), *_tasks_calls(acc, [p.name]), *_durations(tasks)],
                     f"The durations add up to {n} minutes.")


def project_of(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(acc.tasks)
    p = acc.project(t.project_id)
    return _question("project_of", f"What is the project name that includes the task \"{t.content}\"? Please answer in "
                     "the form of a string.", acc, p.name, [_projects_call(), *_find_calls(acc, t.content)],
                     f"It is in {p.name}.")


def favorite_project(acc: Account, rng: random.Random) -> Task | None:
    fav = [p.name for p in acc.projects if p.is_favorite]
    answer = fav[0] if fav else "None"
    return _question("favorite_project", "Which project is marked as a favorite? Please answer in the form of a string "
                     "or \"None\".", acc, answer, [_projects_call()],
                     f"{answer} is the favorite." if fav else "No project is a favorite.")


def most_tasks_project(acc: Account, rng: random.Random) -> Task | None:
    counts = {p.name: len(acc.tasks_of(p.id)) for p in acc.projects}
    top = max(counts.values())
    best = [n for n, c in counts.items() if c == top]
    if len(best) != 1:
        return None
    return _question("most_tasks_project", "Which project has the most tasks? Please answer in the form of a string.",
                     acc, best[0], [_projects_call(), *_tasks_calls(acc)], f"{best[0]} has {top} tasks, the most.")


def with_priority(acc: Account, rng: random.Random) -> Task | None:
    k = rng.randint(1, 4)
    names = sorted(t.content for t in acc.tasks if t.priority == k)
    if not names:
        return None
    return _question("with_priority", f"What tasks have a priority level of {k}?{TASK_LIST}", acc, names,
                     [_projects_call(), *_tasks_calls(acc)], f"These tasks have priority {k}.")


def earliest_in_project(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    tasks = [t for t in acc.tasks_of(p.id) if not t.is_completed]
    if not tasks:
        return None
    first = min(t.due_date for t in tasks)
    best = [t for t in tasks if t.due_date == first]
    if len(best) != 1:
        return None
    return _question("earliest_in_project", f"Among the unfinished tasks in the {p.name} project, which one has the "
                     "earliest due date? Please answer with the task name.", acc, best[0].content,
                     [_projects_call(), *_tasks_calls(acc, [p.name])], f"'{best[0].content}' is due first, {first}.")


def project_count(acc: Account, rng: random.Random) -> Task | None:
    n = len(acc.projects)
    return _question("project_count", f"How many projects are there?{NUMBER}", acc, n, [_projects_call()],
                     f"There are {n} projects.")


def completed_count(acc: Account, rng: random.Random) -> Task | None:
    n = sum(t.is_completed for t in acc.tasks)
    return _question("completed_count", f"How many tasks have I already completed?{NUMBER}", acc, n,
                     [_projects_call(), *_tasks_calls(acc)], f"{n} tasks are marked completed.")


# -- operations -------------------------------------------------------------------------------------------


def _complete_calls(tasks: list[Todo]) -> list[GoldCall]:
    return [GoldCall("complete_task", {"task_id": t.id}, f"I mark '{t.content}' as completed.") for t in tasks]


def _update_calls(tasks: list[Todo], day: dict[str, str]) -> list[GoldCall]:
    return [GoldCall("update_task", {"task_id": t.id, "due_date": day[t.id]}, f"I move '{t.content}' to {day[t.id]}.")
            for t in tasks]


def _delete_calls(tasks: list[Todo]) -> list[GoldCall]:
    return [GoldCall("delete_task", {"task_id": t.id}, f"I delete '{t.content}'.") for t in tasks]


def _apply(acc: Account, complete: list[Todo] = (), due: dict[str, str] | None = None,
           delete: list[Todo] = (), favorite: str | None = None) -> Account:
    """The account after the edits (a copy)."""
    after = acc.copy()
    for t in complete:
        after.task(t.id).is_completed = True
    for tid, day in (due or {}).items():
        after.task(tid).due_date = day
    gone = {t.id for t in delete}
    after.tasks = [t for t in after.tasks if t.id not in gone]
    if favorite is not None:
        after.project(favorite).is_favorite = True
    return after


def complete_one(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(_open(acc))
    return _operation("complete_one", f"Finally, I have completed the task {t.content}, please mark it as completed.",
                      acc, _apply(acc, complete=[t]), [t.id],
                      [_projects_call(), *_find_calls(acc, t.content), *_complete_calls([t])])


def set_due(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(_open(acc))
    day = _date(dt.date.fromisoformat(t.due_date) + dt.timedelta(days=rng.randint(5, 20)))
    return _operation("set_due", f"I think it is hard for me to complete the task {t.content} timely, please extend "
                      f"the due date to {day}.", acc, _apply(acc, due={t.id: day}), [t.id],
                      [_projects_call(), *_find_calls(acc, t.content), *_update_calls([t], {t.id: day})])


def shift_due(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(_open(acc))
    p = acc.project(t.project_id)
    n = rng.choice((-2, -1, 1, 2, 3))
    day = _date(dt.date.fromisoformat(t.due_date) + dt.timedelta(days=n))
    words = {1: "one day later", 2: "two days later", 3: "three days later", -1: "one day earlier",
             -2: "two days earlier"}[n]
    return _operation("shift_due", f"Could you update the due date of the task \"{t.content}\" to be {words} in the "
                      f"\"{p.name}\" project?", acc, _apply(acc, due={t.id: day}), [t.id],
                      [_projects_call(), *_tasks_calls(acc, [p.name]), *_update_calls([t], {t.id: day})])


def overdue_to_tomorrow(acc: Account, rng: random.Random) -> Task | None:
    late = [t for t in _open(acc) if t.due_date < acc.current_date]
    if not late:
        return None
    day = _date(acc.today + dt.timedelta(days=1))
    due = {t.id: day for t in late}
    return _operation("overdue_to_tomorrow", "Until today, some unfinished tasks have expired. Please help me adjust "
                      "their deadlines to tomorrow.", acc, _apply(acc, due=due), [t.id for t in late],
                      [_today_call(), _projects_call(), *_tasks_calls(acc), *_update_calls(late, due)])


def delete_expired(acc: Account, rng: random.Random) -> Task | None:
    late = [t for t in _open(acc) if t.due_date < acc.current_date]
    if not late:
        return None
    return _operation("delete_expired", "Until today, please help me delete all expired unfinished tasks.", acc,
                      _apply(acc, delete=late), [t.id for t in late],
                      [_today_call(), _projects_call(), *_tasks_calls(acc), *_delete_calls(late)])


def favorite_of(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(acc.tasks)
    p = acc.project(t.project_id)
    if p.is_favorite:
        return None
    return _operation("favorite_of", f"Please mark the project that includes the task \"{t.content}\" as a favorite.",
                      acc, _apply(acc, favorite=p.id), [p.id],
                      [_projects_call(), *_find_calls(acc, t.content),
                       GoldCall("update_project", {"project_id": p.id, "is_favorite": "True"},
                                f"The task is in {p.name}; I make that project a favorite.")])


def delete_one(acc: Account, rng: random.Random) -> Task | None:
    t = rng.choice(acc.tasks)
    p = acc.project(t.project_id)
    return _operation("delete_one", f"Please help me delete the task \"{t.content}\" from the \"{p.name}\" project.",
                      acc, _apply(acc, delete=[t]), [t.id],
                      [_projects_call(), *_tasks_calls(acc, [p.name]), *_delete_calls([t])])


def complete_overdue_in_project(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    late = [t for t in acc.tasks_of(p.id) if not t.is_completed and t.due_date < acc.current_date]
    if not late:
        return None
    return _operation("complete_overdue_in_project", f"Mark every overdue task of the \"{p.name}\" project as "
                      "completed.", acc, _apply(acc, complete=late), [t.id for t in late],
                      [_today_call(), _projects_call(), *_tasks_calls(acc, [p.name]), *_complete_calls(late)])


def complete_priority_in_project(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    k = rng.randint(1, 4)
    hit = [t for t in acc.tasks_of(p.id) if not t.is_completed and t.priority == k]
    if not hit:
        return None
    return _operation("complete_priority_in_project", f"Can you mark all unfinished tasks in the \"{p.name}\" project "
                      f"with a priority of {k} as completed?", acc, _apply(acc, complete=hit), [t.id for t in hit],
                      [_projects_call(), *_tasks_calls(acc, [p.name]), *_complete_calls(hit)])


def delete_short_in_project(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    limit = rng.choice((30, 45, 60))
    tasks = acc.tasks_of(p.id)
    short = [t for t in tasks if t.duration < limit]
    if not short:
        return None
    return _operation("delete_short_in_project", f"Please help me find and delete all tasks in the \"{p.name}\" "
                      f"project that have a duration less than {limit} minutes.", acc, _apply(acc, delete=short),
                      [t.id for t in short],
                      [_projects_call(), *_tasks_calls(acc, [p.name]), *_durations(tasks), *_delete_calls(short)])


def due_except_priority(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    k = rng.randint(1, 4)
    n = rng.choice((1, 2, 3, 4))
    day = _date(acc.today + dt.timedelta(days=n))
    hit = [t for t in acc.tasks_of(p.id) if not t.is_completed and t.priority != k and t.due_date != day]
    if not hit or len(hit) == len([t for t in acc.tasks_of(p.id) if not t.is_completed]):
        return None  # the exception must exclude something
    due = {t.id: day for t in hit}
    when = "tomorrow" if n == 1 else f"{['', '', 'two', 'three', 'four'][n]} days from today"
    return _operation("due_except_priority", f"Can you update the due date of the unfinished tasks in the \"{p.name}\" "
                      f"project to be {when}, except those with a priority of {k}?", acc, _apply(acc, due=due),
                      [t.id for t in hit],
                      [_today_call(), _projects_call(), *_tasks_calls(acc, [p.name]), *_update_calls(hit, due)])


def complete_then_minutes(acc: Account, rng: random.Random) -> Task | None:
    p = rng.choice(acc.projects)
    k = rng.randint(1, 4)
    tasks = acc.tasks_of(p.id)
    hit = [t for t in tasks if not t.is_completed and t.priority == k]
    rest = [t for t in tasks if not t.is_completed and t.priority != k]
    if not hit or not rest:
        return None
    n = sum(t.duration for t in rest)
    return _operation("complete_then_minutes", f"Please help me mark all unfinished tasks in the \"{p.name}\" project "
                      f"with priority {k} as completed. Then tell me how many minutes the tasks of that project that "
                      f"are still unfinished will take in total.{NUMBER}", acc, _apply(acc, complete=hit),
                      [t.id for t in hit],
                      [_projects_call(), *_tasks_calls(acc, [p.name]), *_complete_calls(hit), *_durations(rest)],
                      n, f"The remaining unfinished tasks take {n} minutes.")


Builder = Callable[[Account, random.Random], Task | None]

#: the test split: one task of each kind, questions and operations of AgentGym's todo set
TEST_KINDS: tuple[Builder, ...] = (
    due_date, complete_one, set_due, do_first, before_date_in_project, before_date_all, overdue_count,
    most_important_week, duration_of, place_of, same_place, overdue_to_tomorrow, delete_expired, more_time,
    favorite_of, longest_in_project, complete_overdue_in_project, complete_then_minutes, delete_short_in_project,
    due_except_priority,
)
TRAIN_KINDS: tuple[Builder, ...] = TEST_KINDS + (
    total_tasks, priority_of, project_minutes, project_of, favorite_project, most_tasks_project, with_priority,
    earliest_in_project, project_count, completed_count, shift_due, delete_one, complete_priority_in_project,
)
NUM_TASKS = {"train": 264, "test": len(TEST_KINDS)}


def build(split: str, task_id: int) -> Task:
    """Task ``task_id`` of ``split``: its kind by position, its account and subjects from a seeded RNG."""
    if split not in NUM_TASKS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(NUM_TASKS)}")
    if not 0 <= task_id < NUM_TASKS[split]:
        raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{NUM_TASKS[split] - 1})")
    kinds = TEST_KINDS if split == "test" else TRAIN_KINDS
    kind = kinds[task_id % len(kinds)]
    rng = random.Random(f"agentenv-todo/{split}/{task_id}")
    for _ in range(10_000):
        task = kind(generate_account(rng), rng)
        if task is not None:
            return task
    raise RuntimeError(f"no {kind.__name__} task found for {split}/{task_id}")


class TaskSet(tasksets.TaskSet[Task]):
    """Every task of both splits, built once per server (a fraction of a second)."""

    def __init__(self) -> None:
        self.tasks = {split: [build(split, i) for i in range(n)] for split, n in NUM_TASKS.items()}
        super().__init__({split: len(tasks) for split, tasks in self.tasks.items()},
                         lambda split, task_id: self.tasks[split][task_id])
