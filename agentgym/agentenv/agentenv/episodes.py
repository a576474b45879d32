"""The vocabulary of episodes: what a policy decides (:class:`Policy`, :class:`Decision`) and what
an episode records (:class:`Episode`, :class:`Turn`).

The episode driver (:func:`agentenv.rollout.run_episode`) asks a :class:`Policy` for a
:class:`Decision` each turn and records a :class:`Turn` of the :class:`Episode`; the scripted
policies live in :mod:`agentenv.policies`, the LLM policies in ``openmanus_rl``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentenv.client import EnvSession

__all__ = ["Decision", "Episode", "Policy", "Turn"]


@dataclass(frozen=True)
class Decision:
    """What a policy does this turn."""

    action: str  # sent to the environment
    reply: str | None = None  # the raw text an LLM wrote (None for scripted policies)
    thought: str | None = None  # why, where the policy says (the expert's thought)
    well_formed: bool = True  # the reply followed the environment's action format, whole
    stop: bool = False  # the policy cannot go on (its token budget ran out): end without stepping


class Policy(ABC):
    """Decides each turn of an episode driven by :func:`agentenv.rollout.run_episode`."""

    name: str

    async def begin(self, session: EnvSession, episode: Episode) -> None:  # noqa: B027 - optional hook
        """An episode starts (its first observation is ``episode.instruction``).

        Policies with per-episode state (an LLM policy's chat) set it up here; scripted ones keep none.
        """

    @abstractmethod
    async def act(self, session: EnvSession, observation: str) -> Decision | str:
        """The next action given the latest observation (a plain string is an action)."""

    async def end(self, session: EnvSession, episode: Episode,  # noqa: B027 - optional hook
                  error: BaseException | None) -> None:
        """The episode is over; ``error`` is set when it was aborted (it may then be rerun).

        Release per-episode state here; what the policy wants kept goes into ``episode.meta``.
        """


@dataclass
class Turn:
    action: str  # what was sent to the environment
    observation: str  # what it answered
    reward: float
    done: bool
    valid: bool  # the environment understood the action
    reply: str | None = None  # the policy's raw text (LLM policies)
    thought: str | None = None  # why (the expert's thought, where the environment gives one)
    well_formed: bool = True  # the reply followed the environment's action format, whole


@dataclass
class Episode:
    env: str
    task_id: int
    split: str
    instruction: str  # the first observation
    turns: list[Turn] = field(default_factory=list)
    reward: float = 0.0  # the environment's rewards, summed
    success: bool = False
    score: float = 0.0
    done: bool = False  # the environment ended it (success, failure or its own turn limit)
    truncated: bool = False  # ended by a turn limit (the server's or the caller's), not by the task
    stopped: bool = False  # the policy could not go on (e.g. its token budget ran out)
    env_seconds: float = 0.0  # time spent waiting for the environment
    meta: dict[str, Any] = field(default_factory=dict)  # what the policy recorded (e.g. timings)

    @property
    def num_turns(self) -> int:
        return len(self.turns)

    @property
    def invalid_actions(self) -> int:
        return sum(not t.valid for t in self.turns)

    @property
    def format_errors(self) -> int:
        return sum(not t.well_formed for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
