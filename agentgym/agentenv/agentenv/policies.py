"""Scripted policies for ``play`` and evaluation: they ask the server what to do.

The expert and random policies run inside the environment (``/policy_action``) so
that they see the true state, and so that they work unchanged against any replica.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentenv.client import EnvSession

if TYPE_CHECKING:
    from agentenv.rollout import Episode


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


class ServerPolicy(Policy):
    """A policy the environment itself implements (``expert`` or ``random``).

    The expert's thoughts (``Environment.expert_thought``; None where it gives none) are kept on each
    turn: expert trajectories write them as the replies' ``Thought:``.
    """

    def __init__(self, name: str) -> None:
        self.name = name

    async def act(self, session: EnvSession, observation: str) -> Decision:
        suggestion = await session.suggest(self.name)
        return Decision(suggestion.action, thought=suggestion.thought)


SCRIPTED = ("expert", "random")


def scripted_policy(name: str) -> Policy:
    if name not in SCRIPTED:
        raise ValueError(f"unknown scripted policy {name!r}; choose from {', '.join(SCRIPTED)}")
    return ServerPolicy(name)
