"""The todo environment of AgentGym (``--option profile=agentgym``): its 155 questions on its Todoist account.

AgentGym's todo server (``agentenv-tool``, from AgentBoard's tool-use tasks) drives a live Todoist account that
it fills from ``projects.json`` and asks the questions of ``todo.jsonl``. Neither file ships with this project:
the profile reads them (``todo.jsonl``, ``todo_projects.json``) from the directory the user gives, ``--option
data_dir=DIR`` or ``$AGENTGYM_TOOL_DATA``. What is reproduced, from the public code of AgentGym (its todo server,
``todo_env.py``, ``todo_tools.py`` and its client ``TodoEnvClient``; read, not copied):

- **the tasks**: task N is line N of ``todo.jsonl`` (both splits are the whole file, as upstream has one index
  space; AgentEval's items are 20 of them), its goal, its user's date and city, its one ground-truth subgoal (the
  answer) and the account the task must leave (``additional_info.answer``);
- **the account**: the five projects of ``todo_projects.json`` with their 15 tasks, as Todoist lists them
  (project ``order`` 1..5, colour ``charcoal``, tasks ordered 1..n in their project); every session edits its
  own copy. Todoist's active-task listing is reproduced: a completed task disappears, as a deleted one does;
- **a step**: the server finds ``ACTION with Action Input: INPUT`` on the reply's last line (else its format
  error), then reads the tool name after ``Action:`` and the input as a Python literal; a tool's answer comes
  back as ``Observation: <answer>\\nGive me one action.``, in the text form of upstream's tools (Python's
  ``str`` of their dicts and lists, their messages), an error as ``ERROR | Type(message)``;
- **the grading**: every tool call adds a subgoal to the episode's action path (its answer without ids, or
  ``Calling TOOL with {args} failed``; ``finish`` adds its answer, a list sorted); while the episode runs the
  reward AgentGym's server sends is the best share so far of the ground-truth subgoals found in that path
  (recomputed after every step whose answer does not contain "Invalid"); an action containing "finish" ends the
  episode, and its reward is 1 if that share is 1 and the account (projects and active tasks, ids left out)
  equals the ground truth, else 0;
- **the turn limit**: AgentGym's evaluation plays todo for 15 rounds (its ``max_round``); its server has none.

This project's reward is the change of that value at each step (so an episode's return is the value AgentGym's
client reads last); ``info["agentgym_reward"]`` is the value itself, ``score`` too, and ``success`` is an ended
episode graded 1. The first observation is the server's (``Now new trial starts. ...``); the tool descriptions
and the answer form AgentGym's client shows before it are given here in this project's words (``RULES``; under
``--compat agentgym`` the server answers without them, as upstream's does).

What cannot be reproduced: the live account's ids (Todoist gives them; here projects are ``2300000001`` ..
and tasks ``7000000001`` .., in the file's order), and Todoist's own error texts for an unknown id or a bad value
(here ``Task not found``, ``Project not found``, ``Invalid argument value``; upstream's own texts, such as ``Task
N is not exists.``, are reproduced). One deliberate difference: upstream reads the tool name only after the word
``Action:``; this project's agent loop sends the parsed call, ``NAME with Action Input: {...}``, which is read
here as if ``Action:`` preceded it (upstream answers ``ERROR | TypeError(cannot unpack ...)``). The input is read
with :func:`ast.literal_eval`, not Python's ``eval``: literals only, never code.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from agentenv import StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.interop.agentgym_toolusage import (
    REPLY_FORM,
    ToolUsageProfile,
    profile_routes,
    subgoal_share,
    valid_actions,
)
from agentenv.tools import GoldCall, tool
from agentenv_todo.data import Account, Project, Todo
from agentenv_todo.env import TodoEnv

QUESTIONS, ACCOUNT = "todo.jsonl", "todo_projects.json"
NUM_TASKS = 155  # the lines of upstream's todo.jsonl (counted from the file once it is loaded)
MAX_ROUNDS = 15
TOOL_NAMES = ("get_user_current_date", "get_user_current_location", "get_projects", "update_project", "get_tasks",
              "get_task_description", "get_task_duration", "complete_task", "update_task", "delete_task",
              "check_valid_actions", "finish")

INSTRUCTION = "You are an autonomous agent that manages the user's Todoist account with tools."
RULES = (
    "You help the user with their Todoist to-do account, one tool call per turn. Projects and tasks are named "
    "by ids: take them from what get_projects and get_tasks show, never make one up. get_tasks lists a "
    "project's unfinished tasks (a completed task is no longer listed) with their name (content), priority "
    "(1 normal .. 4 urgent) and due date; get_task_description and get_task_duration give a task's details. "
    "When you have the answer, or have made the changes asked for, call finish: with the answer to a question "
    "(a date as YYYY-MM-DD, a duration as 'number(unit)', a number, a name, Yes or No, a list ['task1', "
    "'task2', ...]), or with \"done\" after an operation. The task is solved when the answer is exactly the "
    "expected one and the account is exactly as it should be.\n" + REPLY_FORM
)


@dataclass(frozen=True)
class UpstreamTask:
    """One line of todo.jsonl."""

    index: int
    goal: str
    subgoals: tuple[Any, ...]  # the ground-truth subgoals (todo's have one: the answer)
    final: dict[str, Any]  # the account the task must leave: {"projects": [...], "tasks": [...]}, no ids
    current_date: str
    current_location: str


@dataclass(frozen=True)
class TodoData:
    root: Path
    account: Account  # the starting account (a template: sessions edit copies)
    units: dict[str, str]  # task id -> its duration's unit
    tasks: tuple[UpstreamTask, ...]


def starting_account(projects: list[dict[str, Any]]) -> tuple[Account, dict[str, str]]:
    """The account upstream's server fills from todo_projects.json, as Todoist then lists it."""
    out, tasks, units = [], [], {}
    for i, p in enumerate(projects):
        project = Project(str(2_300_000_001 + i), p["name"], i + 1, "charcoal", bool(p.get("is_favorite", False)))
        out.append(project)
        for j, t in enumerate(p["tasks"]):
            todo = Todo(str(7_000_000_001 + len(tasks)), project.id, j + 1, t["content"], t["description"],
                        t["due_date"], int(t["duration"]), int(t["priority"]))
            tasks.append(todo)
            units[todo.id] = str(t.get("duration_unit", "minute"))
    return Account(out, tasks, "", ""), units


# -- upstream's account, as its tools see it ------------------------------------------------------------------


def active(acc: Account, project_id: str | None = None) -> list[Todo]:
    """The tasks Todoist lists (not completed), of one project or all, project by project."""
    projects = acc.projects if project_id is None else [p for p in acc.projects if p.id == project_id]
    return [t for p in projects for t in acc.tasks_of(p.id) if not t.is_completed]


def status(acc: Account) -> dict[str, list[dict[str, Any]]]:
    """What upstream's server compares with the ground truth at the end: projects and active tasks, ids left out."""
    def bare(view: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in view.items() if k != "id"}
    return {"projects": [bare(p.view()) for p in acc.projects], "tasks": [bare(t.view()) for t in active(acc)]}


def subgoal_of(result: Any) -> Any:
    """The subgoal a successful call adds: its answer with the ids taken out (upstream's cleaning, which fails
    on an answer of another shape just as upstream's does)."""
    out = json.loads(json.dumps(result)) if isinstance(result, (list, dict)) else result
    if isinstance(out, list):
        for item in out:
            if isinstance(item, dict):
                item.pop("id")
    elif isinstance(out, dict):
        out.pop("id", None)
        for key in ("task", "project"):
            if key in out:
                out[key].pop("id")
    return out


class _Failed(Exception):
    """A tool call Todoist refused: its answer, and a failure subgoal in the action path."""


def _iso_date(value: Any) -> str | None:
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            return None
    return None


class AgentGymTodoEnv(ToolUsageProfile):
    """AgentGym's todo task N on its starting account, graded as its server grades (module docstring)."""

    name = "todo"
    max_turns = MAX_ROUNDS
    instruction = INSTRUCTION
    data_files = (QUESTIONS, ACCOUNT)
    Data = TodoData
    upstream_tasks = NUM_TASKS
    graded_at_end = True  # the answer and the account, at finish
    grades_failed_calls = False
    # check_tasks: a question, completing a task, moving a due date
    agentgym: ClassVar[AgentGymRoutes] = profile_routes(TodoEnv.agentgym, rules=RULES, num_tasks=NUM_TASKS,
                                                        check_tasks=(0, 1, 2))
    _task: UpstreamTask | None

    def __init__(self) -> None:
        super().__init__()
        self._acc: Account | None = None
        self._units: dict[str, str] = {}
        self._path: list[dict[str, Any]] = []

    @classmethod
    def read_data(cls, root: Path) -> TodoData:
        """The questions and the starting account in the data directory."""
        account, units = starting_account(json.loads((root / ACCOUNT).read_text()))
        tasks = []
        for n, line in enumerate((root / QUESTIONS).read_text().splitlines()):
            row = json.loads(line)
            info = row["additional_info"]
            tasks.append(UpstreamTask(n, row["goal"], tuple(row["subgoals"]), info["answer"],
                                      info["init_config"]["current_date"], info["init_config"]["current_location"]))
        return TodoData(root, account, units, tuple(tasks))

    def _start(self, data: TodoData, task: UpstreamTask) -> None:
        acc = data.account.copy()
        acc.current_date, acc.current_location = task.current_date, task.current_location
        self._acc, self._units, self._path = acc, data.units, []
        self._program = expert_program(task, data.account)

    # -- a step, as upstream's environment takes it --------------------------------------------------------
    def _dispatch_call(self, name: str, params: Any) -> Any:
        if name == "check_valid_actions":
            return valid_actions(TOOL_NAMES)
        if name in TOOL_NAMES:
            return self._call(name, params)
        return f"ERROR | Invalid action: {name}."

    def _ends(self, text: str) -> bool:
        return "Finish" in text or "finish" in text

    def _end_value(self) -> float:
        assert self._task is not None and self._acc is not None
        return float(self._best == 1.0 and status(self._acc) == self._task.final)

    def _call(self, name: str, params: Any) -> Any:
        """One logged tool call: its arguments read from ``params`` as upstream reads them, its answer, the
        subgoal it adds to the action path."""
        kwargs = {arg: params[arg] for arg in _ARGS[name]}  # KeyError / TypeError as upstream's lookups
        try:
            result = getattr(self, "_" + name)(**kwargs)
        except _Failed as failed:
            self._path.append({"Action": name, "Subgoal": f"Calling {name} with {kwargs} failed"})
            self._remember(name, kwargs, False)
            return failed.args[0]
        self._path.append({"Action": name, "Subgoal": subgoal_of(result)})
        self._remember(name, kwargs)
        return result

    def _value(self) -> float:
        """The share of the ground-truth subgoals found in the action path."""
        assert self._task is not None
        return subgoal_share(self._task.subgoals, [item["Subgoal"] for item in self._path])

    # -- the tools' answers (upstream's todo_tools over the local account) ------------------------------------
    def _account(self) -> Account:
        assert self._acc is not None
        return self._acc

    def _project(self, project_id: Any) -> Project:
        found = self._account().project(str(project_id))
        if found is None:
            raise _Failed("Project not found")
        return found

    def _active(self, task_id: Any, missing: str = "Task not found") -> Todo:
        found = self._account().task(str(task_id))
        if found is None or found.is_completed:
            raise _Failed(missing)
        return found

    def _get_user_current_date(self) -> str:
        return self._account().current_date

    def _get_user_current_location(self) -> str:
        return self._account().current_location

    def _get_projects(self) -> list[dict[str, Any]]:
        return [p.view() for p in self._account().projects]

    def _update_project(self, project_id: Any, is_favorite: Any) -> dict[str, Any]:
        project = self._project(project_id)
        if is_favorite is not None:
            flag = str(is_favorite).lower()
            if flag not in ("true", "false"):
                raise _Failed("Invalid argument value")
            project.is_favorite = flag == "true"
        return {"message": "Update the project successfully.", "project": project.view()}

    def _get_tasks(self, project_id: Any) -> list[dict[str, Any]]:
        return [t.view() for t in active(self._account(), str(project_id))]

    def _get_task_description(self, task_id: Any) -> dict[str, Any]:
        t = self._active(task_id)
        return {"id": t.id, "content": t.content, "description": t.description}

    def _get_task_duration(self, task_id: Any) -> dict[str, Any]:
        t = self._active(task_id)
        return {"id": t.id, "content": t.content, "duration": f"{t.duration}({self._units.get(t.id, 'minute')})"}

    def _complete_task(self, task_id: Any) -> dict[str, Any]:
        t = self._active(task_id, f"Task {task_id} is not exists.")
        view = t.view()
        view.pop("is_completed")
        t.is_completed = True
        return {"message": "Complete task successfully.", "task": view}

    def _update_task(self, task_id: Any, due_date: Any) -> dict[str, Any]:
        t = self._active(task_id)
        if due_date is not None:
            day = _iso_date(due_date)
            if day is None:
                raise _Failed("Invalid argument value")
            t.due_date = day
        return {"message": "Update the task successfully", "task": t.view()}

    def _delete_task(self, task_id: Any) -> dict[str, Any]:
        t = self._active(task_id, f"Task {task_id} is not exists.")
        acc = self._account()
        acc.tasks = [other for other in acc.tasks if other is not t]
        return {"message": "Delete the task successfully.", "task": t.view()}

    def _finish(self, answer: Any) -> Any:
        return sorted(answer) if isinstance(answer, list) else answer

    # -- the tools as declared (schemas, the instruction's list, the expert's calls) ----------------------------
    @tool
    def get_user_current_date(self) -> str:
        """The user's current date, as YYYY-MM-DD."""
        return self._get_user_current_date()

    @tool
    def get_user_current_location(self) -> str:
        """The user's current city."""
        return self._get_user_current_location()

    @tool
    def get_projects(self) -> str:
        """Every project of the account: id, order, color, name, is_favorite."""
        return str(self._get_projects())

    @tool
    def update_project(self, project_id: str, is_favorite: Literal["True", "False"]) -> str:
        """Mark a project as a favorite or not.

        Args:
            project_id: the project's id, as get_projects shows it.
            is_favorite: "True" or "False".
        """
        return str(self._update_project(project_id, is_favorite))

    @tool
    def get_tasks(self, project_id: str) -> str:
        """A project's unfinished tasks: id, order, content (the task's name), is_completed, priority (1 normal ..
        4 urgent), due_date.

        Args:
            project_id: the project's id, as get_projects shows it.
        """
        return str(self._get_tasks(project_id))

    @tool
    def get_task_description(self, task_id: str) -> str:
        """A task's description (its place, tips, ...).

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        return str(self._get_task_description(task_id))

    @tool
    def get_task_duration(self, task_id: str) -> str:
        """How long a task takes, as 'amount(unit)'.

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        return str(self._get_task_duration(task_id))

    @tool
    def complete_task(self, task_id: str) -> str:
        """Mark a task as completed.

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        return str(self._complete_task(task_id))

    @tool
    def update_task(self, task_id: str, due_date: str) -> str:
        """Change a task's due date.

        Args:
            task_id: the task's id, as get_tasks shows it.
            due_date: the new due date, YYYY-MM-DD.
        """
        return str(self._update_task(task_id, due_date))

    @tool
    def delete_task(self, task_id: str) -> str:
        """Delete a task from the account.

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        return str(self._delete_task(task_id))

    @tool
    def check_valid_actions(self) -> str:
        """List the tools you can call."""
        return valid_actions(TOOL_NAMES)

    @tool
    def finish(self, answer: str | int | float | list[str]) -> StepResult:
        """Give the answer to a question, or "done" after an operation; this ends the task.

        Args:
            answer: the answer in the form the question asks for, or "done".
        """
        raise NotImplementedError("step() runs finish as upstream does")


#: the arguments upstream's environment reads from the input, per tool
_ARGS: dict[str, tuple[str, ...]] = {
    "get_user_current_date": (), "get_user_current_location": (), "get_projects": (),
    "update_project": ("project_id", "is_favorite"), "get_tasks": ("project_id",),
    "get_task_description": ("task_id",), "get_task_duration": ("task_id",), "complete_task": ("task_id",),
    "update_task": ("task_id", "due_date"), "delete_task": ("task_id",), "finish": ("answer",)}

#: what in a goal says that it depends on today's date, on durations, on descriptions; that tasks go away deleted
_DATE_WORDS = re.compile(r"\b(today|overdue|expired?|tomorrow|later|earlier|next 7 days)\b")
_DURATION_WORDS = re.compile(r"\b(duration|how long|time|minutes?|hours?)\b")
_DESCRIPTION_WORDS = re.compile(r"\b(description|place|location|where|contact|chapter|title|building)\b")
_DELETE_WORDS = re.compile(r"\b(delete|clear|remove)\b")


def expert_program(task: UpstreamTask, start: Account) -> tuple[GoldCall, ...]:
    """The calls an agent who knows the reference answer makes: today's date where the goal depends on it, the
    projects, the tasks of the projects concerned (project after project where the goal names none), the
    durations or descriptions the goal asks about (as many as 15 rounds leave room for), the edits that turn the
    starting account into the ground truth, then ``finish`` with the answer of the question file.

    The answer and the edits come from the question file; the reading is what an agent would look at (a
    question whose evidence needs more lookups than the rounds allow is answered after reading a part)."""
    goal = task.goal.lower()
    edits, touched = _edits(task, start)
    named_projects = [p for p in start.projects if p.name.lower() in goal]
    named_tasks = [t for t in start.tasks if t.content.lower() in goal]
    needed = {t.project_id for t in named_tasks} | touched
    if named_projects:
        listed = [p for p in start.projects if p in named_projects or p.id in needed]
    elif needed:
        last = max(i for i, p in enumerate(start.projects) if p.id in needed)
        listed = start.projects[: last + 1]
    else:
        listed = list(start.projects)
    calls = [GoldCall("get_user_current_date", {}, "The goal depends on today's date, so I ask for it.")] \
        if _DATE_WORDS.search(goal) else []
    calls.append(GoldCall("get_projects", {}, "I need the projects and their ids first."))
    calls += [GoldCall("get_tasks", {"project_id": p.id}, f"I list the tasks of the {p.name} project.")
              for p in listed]
    subjects = named_tasks or [t for p in listed for t in start.tasks_of(p.id)]
    details = []
    if _DURATION_WORDS.search(goal):
        details += [GoldCall("get_task_duration", {"task_id": t.id}, f"I need the duration of '{t.content}'.")
                    for t in subjects]
    if _DESCRIPTION_WORDS.search(goal):
        details += [GoldCall("get_task_description", {"task_id": t.id}, f"I read the description of '{t.content}'.")
                    for t in subjects]
    room = MAX_ROUNDS - len(calls) - len(edits) - 1
    answer = task.subgoals[0] if len(task.subgoals) == 1 else "done"
    why = "The account is now as asked." if answer == "done" else f"The answer is {answer!r}."
    return (*calls, *details[:max(room, 0)], *edits, GoldCall("finish", {"answer": answer}, why))


def _edits(task: UpstreamTask, start: Account) -> tuple[list[GoldCall], set[str]]:
    """The edits that turn the starting account into the task's ground truth, and the projects they touch."""
    goal = task.goal.lower()
    calls, touched = [], set()
    final_projects = {p["name"]: p for p in task.final.get("projects", [])}
    for p in start.projects:
        want = final_projects.get(p.name)
        if want is not None and want.get("is_favorite") != p.is_favorite:
            flag = "True" if want.get("is_favorite") else "False"
            calls.append(GoldCall("update_project", {"project_id": p.id, "is_favorite": flag},
                                  f"I set {p.name} as {'a' if flag == 'True' else 'no'} favorite."))
    final_tasks = {t["content"]: t for t in task.final.get("tasks", [])}
    for t in start.tasks:
        want = final_tasks.get(t.content)
        if want is None:
            delete = _DELETE_WORDS.search(goal) is not None
            calls.append(GoldCall("delete_task" if delete else "complete_task", {"task_id": t.id},
                                  f"I {'delete' if delete else 'complete'} '{t.content}'."))
            touched.add(t.project_id)
        elif want.get("due_date") != t.due_date:
            calls.append(GoldCall("update_task", {"task_id": t.id, "due_date": want["due_date"]},
                                  f"I move '{t.content}' to {want['due_date']}."))
            touched.add(t.project_id)
    return calls, touched
