"""Scripted policies for ``play`` and evaluation: they ask the server what to do.

The expert and random policies run inside the environment (``/policy_action``) so
that they see the true state, and so that they work unchanged against any replica.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from agentenv.client import EnvSession

if TYPE_CHECKING:
    from agentenv.rollout import Episode


class Policy(ABC):
    name: str

    async def begin(self, session: EnvSession, episode: Episode) -> None:  # noqa: B027 - optional hook
        """An episode starts (its first observation is ``episode.instruction``).

        Policies with per-episode state (an LLM policy's chat) set it up here; scripted ones keep none.
        """

    @abstractmethod
    async def act(self, session: EnvSession, observation: str) -> str:
        """The next action given the latest observation."""

    async def end(self, session: EnvSession, episode: Episode,  # noqa: B027 - optional hook
                  error: BaseException | None) -> None:
        """The episode is over; ``error`` is set when it was aborted (it may then be rerun).

        Release per-episode state here; what the policy wants kept goes into ``episode.meta``.
        """


class ServerPolicy(Policy):
    """A policy the environment itself implements (``expert`` or ``random``).

    The expert's thoughts (``Environment.expert_thought``; None where it gives none) are kept per turn
    in ``episode.meta["thoughts"]``: expert trajectories write them as the replies' ``Thought:``.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._thoughts: dict[int, list[str | None]] = {}  # per open session (concurrent episodes)

    async def begin(self, session: EnvSession, episode: Episode) -> None:
        self._thoughts[id(session)] = episode.meta["thoughts"] = []

    async def act(self, session: EnvSession, observation: str) -> str:
        suggestion = await session.suggest(self.name)
        thoughts = self._thoughts.get(id(session))
        if thoughts is not None:
            thoughts.append(suggestion.thought)
        return suggestion.action

    async def end(self, session: EnvSession, episode: Episode, error: BaseException | None) -> None:
        self._thoughts.pop(id(session), None)


SCRIPTED = ("expert", "random")


def scripted_policy(name: str) -> Policy:
    if name not in SCRIPTED:
        raise ValueError(f"unknown scripted policy {name!r}; choose from {', '.join(SCRIPTED)}")
    return ServerPolicy(name)
