"""What AgentGym's "Toolusage" servers share (todo, sheet, ...; AgentBoard's tool-operation environments).

AgentGym's ``agentenv-tool`` serves each tool environment from one template: the task file and the tools' data are
the user's (read from ``--option data_dir=DIR`` or ``$AGENTGYM_TOOL_DATA``, never shipped), task N is line N of the
question file in one index space, the first observation is ``Now new trial starts. ...``, a reply is read as
``Action: TOOL with Action Input: INPUT`` on its last line (the input a Python literal), a tool's answer comes back
as ``Observation: ...\\nGive me one action.``, and the reward the server sends is a running value (the best share of
the task reached so far). :class:`ToolUsageProfile` is that template written once; an environment's profile
subclasses it with its own data, tools, grading and expert (the hooks :meth:`ToolUsageProfile.read_data`,
:meth:`~ToolUsageProfile._start`, :meth:`~ToolUsageProfile._dispatch_call`, :meth:`~ToolUsageProfile._value`).

Two deliberate differences from upstream, the same for every profile: the input is read with
:func:`ast.literal_eval` (literals only, never code), and a reply ``NAME with Action Input: {...}`` without
``Action:`` (the form this project's agent loop sends) is read as if ``Action:`` preceded it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import os
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, ConfigDict

from agentenv.actions import LITERAL_ERRORS
from agentenv.env import Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.tools import GoldCall, ToolEnvironment

__all__ = ["BAD_INPUT", "DATA_VAR", "FORMAT_ERROR", "NO_CALL", "REPLY_FORM", "ToolUsageData", "ToolUsageOptions",
           "ToolUsageProfile", "client_reply", "data_dir", "profile_routes", "subgoal_share", "valid_actions"]

DATA_VAR = "AGENTGYM_TOOL_DATA"  # the directory holding AgentGym's tool data (the question files and the tools' data)
FORMAT_ERROR = ('Format error, please response in the format of  "Action: [your action] with Action Input: '
                '[your action input]')
BAD_INPUT = "Parameters in action input are not valid, please change your action input."
#: upstream's answer to a call it finds no "Action:" in (it unpacks the None its parser returns)
NO_CALL = "ERROR | TypeError(cannot unpack non-iterable NoneType object)"
#: the answer form that closes every profile's rules (what AgentGym's client asks of the model)
REPLY_FORM = ("Answer in this form, the action on one line:\nThought: <what you think, at most 3 sentences>\n\n"
              "Action: <tool name> with Action Input: <its arguments as a dictionary>")
#: what the server finds in a reply (searched; "." stops at line ends, so the call is on the last line)
_CALL = re.compile(r"\s*(.*?)\s*with\s*Action Input:\s*(.*?)$")
#: how the environment then reads the tool name (after "Action:") and the input
_PARSE = re.compile(r".*?Action:\s*(.*?)\s*with\s*Action Input:\s*(.*?)$", re.MULTILINE | re.DOTALL)


class ToolUsageOptions(BaseModel):
    """Server options of a Toolusage profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the directory holding AgentGym's tool data (else $AGENTGYM_TOOL_DATA)
    data_dir: str | None = None


class ToolUsageTask(Protocol):
    goal: str


class ToolUsageData(Protocol):
    """What a profile reads from the data directory: at least its tasks, one per line of the question file."""

    @property
    def tasks(self) -> Sequence[ToolUsageTask]: ...


def data_dir(given: str | os.PathLike | None, env: str, files: Sequence[str]) -> Path:
    """The directory given, else ``$AGENTGYM_TOOL_DATA``, holding ``files``; a one-line error saying what to set
    otherwise (a server that cannot start says it on one line)."""
    path = given if given else os.environ.get(DATA_VAR)
    if not path:
        raise ValueError(f"{env}'s agentgym profile reads AgentGym's {' and '.join(files)}: give --option "
                         f"data_dir=DIR or set ${DATA_VAR} to the directory holding them")
    root = Path(path).expanduser()
    missing = [name for name in files if not (root / name).is_file()]
    if missing:
        raise ValueError(f"{env}'s agentgym profile: {root} holds no {' or '.join(missing)} (--option data_dir / "
                         f"${DATA_VAR} must name the directory of AgentGym's tool data)")
    return root


@lru_cache(maxsize=8)
def _read(cls: type[ToolUsageProfile], root: Path) -> Any:
    """A profile's data, read once per directory (sessions copy what they edit)."""
    try:
        return cls.read_data(root)
    except cls.read_errors as e:
        raise ValueError(f"{cls.name}'s agentgym profile cannot read AgentGym's tool data in {root}: {e}") from None


def profile_routes(native: AgentGymRoutes, *, rules: str, num_tasks: int, check_tasks: tuple[int, ...]
                   ) -> AgentGymRoutes:
    """A Toolusage profile's AgentGym routes: the native environment's, serving one index space (the question
    file's lines, the test split), sending the running value, with no turn limit of the server's own."""
    return dataclasses.replace(native, index_order=("test",), options={}, rules=rules, server_truncates=False,
                               running_reward=True, upstream_splits={"train": (0, num_tasks), "test": (0, num_tasks)},
                               check_tasks=check_tasks)


def valid_actions(names: Sequence[str]) -> str:
    """Upstream's answer to ``check_valid_actions``: its list of the tool names."""
    return f"You can use following valid actions: {list(names)}"


def subgoal_share(subgoals: Sequence[Any], found: Sequence[Any]) -> float:
    """AgentBoard's progress rate, as AgentGym's tool servers grade: the share of the ground-truth subgoals found in
    the action path's subgoals (compared with ``==``; each found subgoal counts once)."""
    left, count = list(found), 0
    for subgoal in subgoals:
        if subgoal in left:
            left.remove(subgoal)
            count += 1
    return count / len(subgoals)


def client_reply(tool: str, **args: Any) -> str:
    """A reply as AgentGym's client sends it to a tool server (the model's whole text): a thought, then the call."""
    return f"Thought: I call {tool}.\n\nAction: {tool} with Action Input: {json.dumps(args)}"


class ToolUsageProfile(ToolEnvironment):
    """AgentGym's Toolusage server for one environment: the data directory, the tasks of the question file, the
    first observation, upstream's reading of a reply and wrapping of the answer, the running value as the reward.

    This project's reward is the change of the running value at each step (an episode's return is the value
    AgentGym's client reads last); ``info["agentgym_reward"]`` and ``score`` are the value itself."""

    profile = "agentgym"
    version = "agentgym-1"
    Options: ClassVar[type[BaseModel]] = ToolUsageOptions
    #: the files of the data directory the profile reads (the question file first)
    data_files: ClassVar[tuple[str, ...]] = ()
    #: what :meth:`read_data` returns (a server's shared data)
    Data: ClassVar[type] = object
    #: the lines of upstream's question file (counted from the file once it is loaded)
    upstream_tasks: ClassVar[int] = 0
    #: the failures of :meth:`read_data` that mean unreadable data (a one-line error)
    read_errors: ClassVar[tuple[type[Exception], ...]] = (OSError, ValueError, KeyError, TypeError)
    #: how many times upstream's server runs an action whose answer contains "error" (sheet's retries it)
    server_runs: ClassVar[int] = 1
    #: the server grades an ended episode by itself (:meth:`_end_value`) rather than sending its running value;
    #: success then needs the end too
    graded_at_end: ClassVar[bool] = False
    #: upstream grades after a call that raised too (its environment does not return early)
    grades_failed_calls: ClassVar[bool] = True

    def __init__(self) -> None:
        self._task: Any = None
        self._best = 0.0  # upstream's running value: the best share reached so far
        self._sent = 0.0  # the value sent last
        self._program: tuple[GoldCall, ...] = ()

    # -- the data and the tasks ----------------------------------------------------------------------------
    @classmethod
    def read_data(cls, root: Path) -> Any:
        """The profile's data, read from the data directory (an instance of :attr:`Data`)."""
        raise NotImplementedError

    @classmethod
    def load(cls, given: str | os.PathLike | None = None) -> Any:
        """The data in the directory given (else ``$AGENTGYM_TOOL_DATA``), read once per directory."""
        return _read(cls, data_dir(given, cls.name, cls.data_files).resolve())

    @classmethod
    def load_shared(cls, options: Any) -> Any:
        return cls.load(getattr(options, "data_dir", None))

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in cls.splits:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(cls.splits)}")
        return cls.upstream_tasks

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        n = len(shared.tasks) if isinstance(shared, cls.Data) else cls.upstream_tasks
        return {split: n for split in cls.splits}

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        return super().fingerprint(counts, cls.Options())  # where the files lie does not change the tasks

    def _data(self) -> Any:
        if isinstance(self.shared, self.Data):
            return self.shared
        return self.load(getattr(self.options, "data_dir", None))

    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        data = self._data()
        if split not in self.splits:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(self.splits)}")
        if not 0 <= task_id < len(data.tasks):
            raise IndexError(f"{self.name} (agentgym) has tasks 0..{len(data.tasks) - 1}, not {task_id}")
        self._task = data.tasks[task_id]
        self._best, self._sent = 0.0, 0.0
        self._start(data, self._task)
        self._observation = self.agentgym.with_rules(
            f"Now new trial starts.\nYou should perform actions to accomplish the goal: {self._task.goal}\n"
            "Give me one action.")
        return self._observation, {"task_id": task_id, "split": split, "agentgym_index": task_id}

    def _start(self, data: Any, task: Any) -> None:
        """Start the task's episode: the session's own copy of what it edits, the expert's ``_program``."""
        raise NotImplementedError

    # -- a step, as upstream's server and environment take it ----------------------------------------------
    def step(self, action: str) -> StepResult:
        if self._task is None:
            return StepResult("Call reset before step.", valid=False)
        found = _CALL.search(action)
        if found is None:
            return self._answer(FORMAT_ERROR, self._best, False, valid=False)
        text = f"{found.group(1)} with Action Input: {found.group(2)}"
        if _PARSE.match(text) is None:  # this project's agent loop sends "NAME with Action Input: ..." (docstring)
            text = "Action: " + text
        for _ in range(self.server_runs):
            observation, done, valid = self._run(text)
            observation = f"Observation: {observation}\nGive me one action."
            if "error" not in observation.lower():
                break
        value = self._end_value() if done and self.graded_at_end else self._best
        return self._answer(observation, value, done, valid=valid)

    def _answer(self, observation: str, value: float, done: bool, *, valid: bool) -> StepResult:
        reward, self._sent = value - self._sent, value
        self._observation = observation
        success = value == 1.0 and (done or not self.graded_at_end)
        return StepResult(observation, reward=reward, done=done, success=success, score=value, valid=valid,
                          info={"agentgym_reward": value})

    def _run(self, text: str) -> tuple[str, bool, bool]:
        """Upstream's environment step: the observation, whether the episode ended, whether the call was read."""
        parsed = _PARSE.match(text)
        if parsed is None:
            return NO_CALL, False, False
        name, raw = parsed.groups()
        try:
            params = ast.literal_eval(raw)
        except LITERAL_ERRORS:
            return f"ERROR | Exception({BAD_INPUT})", False, False
        try:
            observation = str(self._dispatch_call(name, params))
        except Exception as e:  # upstream turns any failure of a call into this observation
            observation, done = f"ERROR | {type(e).__name__}({e})", False
            if not self.grades_failed_calls:
                return observation, False, False
        else:
            done = self._ends(text)
        if "Invalid" not in observation:
            self._best = max(self._best, self._value())
        return observation, done, not observation.startswith("ERROR | ")

    def _dispatch_call(self, name: str, params: Any) -> Any:
        """The answer of the tool ``name`` to the input read (its text is ``str`` of it); raising is an error."""
        raise NotImplementedError

    def _remember(self, name: str, args: dict[str, Any], answered: bool = True) -> None:
        """Remember a call for the expert, which resumes after the calls made (whoever made them)."""
        try:
            key = self._gold_key(GoldCall(name, {k: v for k, v in args.items() if v is not None}))
        except ValueError:  # arguments of other types than the declared tool's: not a call of the expert's
            return
        self._calls_made += ((key, answered),)

    def _ends(self, text: str) -> bool:
        """Whether the action ends the episode: upstream's test is a word anywhere in it."""
        return "finish" in text.lower()

    def _value(self) -> float:
        """The share of the task reached now (the running value is the best of these)."""
        raise NotImplementedError

    def _end_value(self) -> float:
        """The value of an ended episode, where :attr:`graded_at_end`."""
        return self._best

    # -- grading and the expert ----------------------------------------------------------------------------
    def grade(self, answer: Any) -> float:
        raise NotImplementedError("the agentgym profile grades as upstream's server does, in step()")

    def gold_program(self) -> Sequence[GoldCall]:
        """The expert's calls for the task, set by :meth:`_start`."""
        if self._task is None:
            raise RuntimeError("reset() must be called first")
        return self._program
