"""The Environment base class: the one thing an environment author writes.

Everything about HTTP, sessions, limits and turn counting lives in the runtime
(`agentenv.server`); an environment only knows its tasks and its rules. What the agent and
the runtime need to know about it (splits, turn limit, success threshold, action format,
instruction, session cap, step time limit, options) is declared once on the class and
served by ``/info`` (docs/environments.md).
"""

from __future__ import annotations

import hashlib
import json
import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from agentenv.actions import ACTION_FORMATS

#: a split name; every environment has "train" and "test", some have more (e.g. "valid")
Split = str
SPLITS: tuple[str, ...] = ("train", "test")


class NoOptions(BaseModel):
    """Server options of an environment that takes none (any key is an error)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass
class StepResult:
    """What one action does to an episode.

    ``reward`` is the training reward (the runtime sums it over an episode, so an
    environment that scores once should return it on the final step); ``score`` is
    the environment's native score; ``valid`` tells whether the action was understood.
    """

    observation: str
    reward: float = 0.0
    done: bool = False
    success: bool = False
    score: float = 0.0
    valid: bool = True
    info: dict[str, Any] = field(default_factory=dict)


def file_stamps(paths: Iterable[Path]) -> list[list[Any]]:
    """Name, size and modification time of each file: what a fingerprint hashes of data read from files."""
    return [[p.name, p.stat().st_size, int(p.stat().st_mtime)] for p in paths]


class Environment(ABC):
    """One episode at a time of a text environment.

    A server builds one instance per session and calls :meth:`reset` before the
    first :meth:`step`. Instances never share mutable state, so sessions are
    independent; read-only data every session needs (a catalogue, an index, databases)
    is built once per server by :meth:`load_shared` and handed to each instance as
    ``self.shared`` (with the parsed ``self.options``) before its first reset.
    Methods may block: the runtime calls them off the event loop.
    """

    # -- metadata, declared once (served by /info) ---------------------------------------------
    #: canonical lower-case name (docs/protocol.md), used by the CLI, datasets and servers
    name: ClassVar[str]
    #: version of the task set: bump it when tasks change, so datasets built from the old ones are rebuilt
    version: ClassVar[str] = "1"
    #: the splits this environment has; "train" and "test" are required, others (e.g. "valid") optional
    splits: ClassVar[tuple[str, ...]] = SPLITS
    #: the runtime ends an episode (``done``, ``info["truncated"]``) after this many steps
    max_turns: ClassVar[int] = 30
    #: the episode reward at or above which an episode counts as a success (AgentEvol's filter, metrics)
    success_threshold: ClassVar[float] = 1.0
    #: how an agent writes an action: "text" (one line), "tool" (a tool call with JSON arguments),
    #: "code" (a fenced code block in ``code_language``); it picks the prompt and the reply parser
    action_format: ClassVar[str] = "text"
    #: a short human description of an action, e.g. "one of: move up, move down"
    action_hint: ClassVar[str] = ""
    #: the fenced block's language for ``action_format = "code"`` (e.g. "sql")
    code_language: ClassVar[str | None] = None
    #: what the agent is told before any task: what the environment is, what actions exist
    instruction: ClassVar[str] = ""
    #: most sessions one server holds at once (heavy sessions: a JVM each); None = the server's limit
    max_sessions: ClassVar[int | None] = None
    #: seconds one step may take before the runtime gives up on the session; None = no limit
    step_timeout: ClassVar[float | None] = None
    #: what one server replica asks of a cluster node (the ``ray`` server backend places replicas by it):
    #: logical CPUs, and memory in MiB (None: no reservation)
    server_cpus: ClassVar[float] = 1.0
    server_memory_mb: ClassVar[int | None] = None
    #: the server options this environment takes (``agentenv serve NAME --option KEY=VALUE``)
    Options: ClassVar[type[BaseModel]] = NoOptions
    #: which rule set this class is (agentenv.profiles): "native" for the environment's own tasks
    profile: ClassVar[str] = "native"
    #: the other profiles of this environment, chosen by ``--option profile=NAME``: name -> "module:Class"
    profiles: ClassVar[Mapping[str, str]] = MappingProxyType({})

    #: set by the runtime before the first reset: what :meth:`load_shared` built, and the options
    shared: Any = None
    options: Any = None

    # -- tasks -----------------------------------------------------------------------------------
    @classmethod
    @abstractmethod
    def num_tasks(cls, split: Split) -> int:
        """How many tasks ``split`` holds; task ids are ``range(num_tasks(split))``."""

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        """Tasks per split. Environments whose tasks come from data loaded by :meth:`load_shared`
        (a user's upstream files) override this to count them."""
        return {split: int(cls.num_tasks(split)) for split in cls.splits}

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel, extra: Any = None) -> str:
        """Identifies the task set a server serves (datasets built from another one are stale).
        By default: name, version, task counts and options; override to hash loaded data, passing what identifies
        it as ``extra`` (e.g. :func:`file_stamps` of the files read)."""
        blob = json.dumps([cls.name, cls.version, counts, options.model_dump(mode="json")]
                          + ([cls.profile] if cls.profile != "native" else []), sort_keys=True)
        digest = hashlib.sha256(blob.encode()).hexdigest()[:16]
        if extra is None:
            return digest
        return hashlib.sha256(json.dumps([digest, extra]).encode()).hexdigest()[:16]

    def initial_observation(self, task_id: int, split: Split) -> str | None:
        """The first observation :meth:`reset` would return for the task, when it can be stated
        more cheaply than by a reset (datasets are built from it); None: the runtime resets instead.
        Called on an instance that has ``shared`` and ``options`` but was never reset."""
        return None

    # -- shared, read-only resources of a server -------------------------------------------------
    @classmethod
    def load_shared(cls, options: Any) -> Any:
        """Build what every session reads (once per server, before the first session)."""
        return None

    @classmethod  # noqa: B027 - optional hook
    def release_shared(cls, shared: Any) -> None:
        """Free what :meth:`load_shared` built, at server shutdown."""

    # -- what /info serves -------------------------------------------------------------------------
    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The agent-facing part of ``/info``. An old-style ``action_format`` that describes the
        action in words is read as a text action with that hint."""
        fmt, hint = cls.action_format, cls.action_hint
        if fmt not in ACTION_FORMATS:
            fmt, hint = "text", hint or fmt
        return {"action_format": fmt, "action_hint": hint, "code_language": cls.code_language,
                "instruction": cls.instruction, "tools": []}

    # -- an episode --------------------------------------------------------------------------------
    @abstractmethod
    def reset(self, task_id: int, split: Split, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Start task ``task_id`` of ``split``; return the first observation (with the
        task instruction in it) and an info dict."""

    @abstractmethod
    def step(self, action: str) -> StepResult:
        """Apply one action. Invalid actions return ``valid=False``, never raise."""

    @abstractmethod
    def observation(self) -> str:
        """The current observation, as the last reset/step returned it."""

    def available_actions(self) -> list[str]:
        """The actions that make sense now; an empty list where the space is open."""
        return []

    def expert_action(self) -> str:
        """The action an expert takes now (used by ``play --policy expert`` and for
        expert trajectories). Environments without an expert leave it unimplemented."""
        raise NotImplementedError(f"environment {self.name!r} has no expert")

    def expert_thought(self) -> str | None:
        """Why the expert takes its next action, as an agent could reason it from what it has seen
        (asked just before :meth:`expert_action`). It becomes the ``Thought:`` of expert
        trajectories, so a model cloning them learns to state what matters before it acts.
        None: the expert has nothing to say (a generic thought is used)."""
        return None

    def random_action(self, rng: random.Random) -> str:
        """A uniformly random action; environments with an open action space override it."""
        actions = self.available_actions()
        if not actions:
            raise NotImplementedError(f"environment {self.name!r} has an open action space and no random policy")
        return rng.choice(actions)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the episode holds (files, subprocesses). Child processes started with
        :func:`agentenv.processes.spawn` are killed by the runtime after this, whatever it does."""
