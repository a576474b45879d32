"""The Environment base class: the one thing an environment author writes.

Everything about HTTP, sessions, limits and turn counting lives in the runtime
(`agentenv.server`); an environment only knows its tasks and its rules.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

Split = Literal["train", "test"]
SPLITS: tuple[Split, ...] = ("train", "test")


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


class Environment(ABC):
    """One episode at a time of a text environment.

    A server builds one instance per session and calls :meth:`reset` before the
    first :meth:`step`. Instances never share mutable state, so sessions are
    independent. Methods may block: the runtime calls them off the event loop.
    """

    #: canonical lower-case name (DESIGN.md), used by the CLI, datasets and servers
    name: ClassVar[str]
    #: the runtime ends an episode (``done``, ``info["truncated"]``) after this many steps
    max_turns: ClassVar[int] = 30
    #: a short human description of what an action looks like
    action_format: ClassVar[str] = "free text"
    #: the episode reward at or above which an episode counts as a success for filtering
    success_threshold: ClassVar[float] = 1.0

    @classmethod
    @abstractmethod
    def num_tasks(cls, split: Split) -> int:
        """How many tasks ``split`` holds; task ids are ``range(num_tasks(split))``."""

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
        """Release what the episode holds (files, subprocesses)."""
