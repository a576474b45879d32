"""The ``todo`` tool environment: AgentGym's Todoist tools over a local, per-session to-do account.

AgentGym's todo environment (from AgentBoard) drives a real Todoist account through its REST API:
it answers questions about the user's projects and tasks and edits them. The tools, arguments and
answer forms here are upstream's; the account is generated per task (:mod:`agentenv_todo.data`),
built with every task once per server in ``load_shared``, and each session edits its own deep copy.
Questions are graded on the answer, operations on the account at ``finish``
(:mod:`agentenv_todo.reward`).
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from agentenv import Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.tools import GoldCall, ToolEnvironment, ToolError, tool
from agentenv_todo.data import Account, Todo
from agentenv_todo.reward import checks, reward
from agentenv_todo.tasks import NUM_TASKS, Task, TaskSet

INSTRUCTION = (
    "You manage the user's to-do list (a Todoist account) with tools: its projects, and in each project tasks with "
    "a name (content), a due date (YYYY-MM-DD), a priority from 1 (normal) to 4 (urgent), a duration, a "
    "description (where to do it, tips) and whether it is completed. Tools take the ids that get_projects and "
    "get_tasks show. Answer the user's question, or make the changes the user asks for and change nothing else. "
    "Then call finish: with the answer in the form the question asks for (a date, 'number(unit)', a number, a "
    "name, 'Yes'/'No', a list ['task1', 'task2', ...]), or with \"done\" after an operation."
)


@lru_cache(maxsize=1)
def default_tasks() -> TaskSet:
    """Every task with its account, built once per process (servers build it in ``load_shared``)."""
    return TaskSet()


class TodoEnv(ToolEnvironment):
    """Answer questions about, or edit, a to-do account with AgentGym's todo tools.

    ``finish(answer)`` ends the episode with the share of the task's checks that hold (the answer;
    each task or project the operation must change; nothing else changed). ``seed`` is ignored.
    """

    name = "todo"
    version = "1"
    max_turns = 30
    success_threshold = 1.0
    instruction = INSTRUCTION
    #: AgentGym's todo server (agentenv-tool/agentenv_todo): /create {"id": i} makes a handle for task i and
    #: returns it as a bare int, /reset {"env_idx", "id"} returns the first observation as a string, /step
    #: {"env_idx", "action"} returns observation, reward, done; no /close. Upstream has one set of 155 tasks
    #: (todo.jsonl, ids 0-154); ``--compat agentgym`` serves the agentgym profile (index N: its task N), and with
    #: ``--option profile=native`` indexes 0-19 are this project's test split
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        item_prefix="tool_todo",
        handle="env_idx", create_key="id", reset_key="id", reset_returns="string", index_order=("test", "train"),
        upstream_splits={"train": (0, 155), "test": (0, 155)}, has_close=False, hello="ok", action_prefix="Action: ",
        options={"profile": "agentgym"})
    #: ``--option profile=agentgym``: AgentGym's 155 questions on its account, read from the user's copy of its data
    profiles = MappingProxyType({"agentgym": "agentenv_todo.agentgym_profile:AgentGymTodoEnv"})

    def __init__(self) -> None:
        self._task: Task | None = None
        self._account: Account | None = None

    # -- tasks ----------------------------------------------------------------------------------------
    @classmethod
    def load_shared(cls, options: Any) -> TaskSet:
        return default_tasks()

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in NUM_TASKS:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(NUM_TASKS)}")
        return NUM_TASKS[split]

    def _tasks(self) -> TaskSet:
        shared = getattr(self, "shared", None)
        return shared if shared is not None else default_tasks()

    @staticmethod
    def _first_observation(task: Task) -> str:
        return (f"New task. Goal: {task.question}\n"
                "Call one tool per turn; call finish with the answer, or with \"done\" once the changes are made.")

    def initial_observation(self, task_id: int, split: Split) -> str:
        return self._first_observation(self._tasks().task(split, task_id))

    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        self._task = self._tasks().task(split, task_id)  # ValueError / IndexError for unknown split / id
        self._account = self._task.account.copy()  # this session's own account
        kind = "operation" if self._task.expected is not None else "question"
        return self._first_observation(self._task), {"task_id": task_id, "split": split, "kind": self._task.kind,
                                                     "type": kind}

    def _acc(self) -> Account:
        if self._account is None:
            raise RuntimeError("reset() must be called first")
        return self._account

    def _todo(self, task_id: str) -> Todo:
        found = self._acc().task(task_id)
        if found is None:
            raise ToolError(f"Task {task_id} does not exist.")
        return found

    # -- the tools (AgentGym's names and arguments) -------------------------------------------------------
    @tool
    def get_user_current_date(self) -> str:
        """The user's current date, as YYYY-MM-DD."""
        return self._acc().current_date

    @tool
    def get_user_current_location(self) -> str:
        """The user's current city."""
        return self._acc().current_location

    @tool
    def get_projects(self) -> str:
        """Every project of the account: id, order, color, name, is_favorite."""
        return str([p.view() for p in self._acc().projects])

    @tool
    def update_project(self, project_id: str, is_favorite: Literal["True", "False"] | bool) -> str:
        """Mark a project as a favorite or not.

        Args:
            project_id: the project's id, as get_projects shows it.
            is_favorite: "True" or "False".
        """
        project = self._acc().project(project_id)
        if project is None:
            raise ToolError(f"Project {project_id} does not exist.")
        project.is_favorite = is_favorite in (True, "True")
        return str({"message": "The project is updated.", "project": project.view()})

    @tool
    def get_tasks(self, project_id: str) -> str:
        """The tasks of a project: id, order, content (the task's name), is_completed, priority (1 normal .. 4
        urgent), due_date.

        Args:
            project_id: the project's id, as get_projects shows it.
        """
        if self._acc().project(project_id) is None:
            raise ToolError(f"Project {project_id} does not exist.")
        return str([t.view() for t in self._acc().tasks_of(project_id)])

    @tool
    def get_task_description(self, task_id: str) -> str:
        """A task's description (where to do it, what it needs, tips).

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        t = self._todo(task_id)
        return str({"id": t.id, "content": t.content, "description": t.description})

    @tool
    def get_task_duration(self, task_id: str) -> str:
        """How long a task takes, as 'amount(unit)', e.g. '60(minute)'.

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        t = self._todo(task_id)
        return str({"id": t.id, "content": t.content, "duration": t.duration_text})

    @tool
    def complete_task(self, task_id: str) -> str:
        """Mark a task as completed.

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        t = self._todo(task_id)
        t.is_completed = True
        view = t.view()
        view.pop("is_completed")
        return str({"message": "The task is marked as completed.", "task": view})

    @tool
    def update_task(self, task_id: str, due_date: str) -> str:
        """Change a task's due date.

        Args:
            task_id: the task's id, as get_tasks shows it.
            due_date: the new due date, YYYY-MM-DD.
        """
        t = self._todo(task_id)
        try:
            day = dt.date.fromisoformat(due_date.strip())
        except ValueError:
            raise ToolError(f"due_date must be a date as YYYY-MM-DD, not {due_date!r}.") from None
        t.due_date = day.isoformat()
        return str({"message": "The task is updated.", "task": t.view()})

    @tool
    def delete_task(self, task_id: str) -> str:
        """Delete a task from the account.

        Args:
            task_id: the task's id, as get_tasks shows it.
        """
        t = self._todo(task_id)
        acc = self._acc()
        acc.tasks = [other for other in acc.tasks if other.id != task_id]
        return str({"message": "The task is deleted.", "task": t.view()})

    @tool
    def check_valid_actions(self) -> str:
        """List the tools you can call."""
        return f"You can use following valid actions: {list(self.tools)}"

    @tool
    def finish(self, answer: str | int | float | list[str]) -> StepResult:
        """Give the answer to a question, or "done" after an operation; this ends the task.

        Args:
            answer: the answer as the question asks for it, or "done".
        """
        return self.end(self.grade(answer))

    def grade(self, answer: Any) -> StepResult:
        task = self._task
        assert task is not None
        found = checks(task.account, self._acc(), task.expected, task.targets, answer, task.answer)
        value = reward(found, task.expected is not None)
        success = value >= self.success_threshold
        failed = [name for name, v in found if v < 1.0]
        verdict = "Done: every check holds." if success else f"Not fully right; failed checks: {', '.join(failed)}."
        return StepResult(f"{verdict} The episode is over (reward {value:g}).", reward=value, done=True,
                          success=success, score=value, info={"checks": dict(found)})

    # -- the expert ------------------------------------------------------------------------------------------
    def gold_program(self) -> tuple[GoldCall, ...]:
        """The task's gold program (it ends with finish)."""
        if self._task is None:
            raise RuntimeError("reset() must be called first")
        return self._task.program
