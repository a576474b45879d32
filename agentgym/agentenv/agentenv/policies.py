"""Scripted policies for ``play`` and evaluation: they ask the server what to do.

The expert and random policies run inside the environment (``/policy_action``) so
that they see the true state, and so that they work unchanged against any replica.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from agentenv.client import EnvSession


class Policy(ABC):
    name: str

    @abstractmethod
    async def act(self, session: EnvSession, observation: str) -> str:
        """The next action given the latest observation."""


class ServerPolicy(Policy):
    """A policy the environment itself implements (``expert`` or ``random``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def act(self, session: EnvSession, observation: str) -> str:
        return await session.policy_action(self.name)


SCRIPTED = ("expert", "random")


def scripted_policy(name: str) -> Policy:
    if name not in SCRIPTED:
        raise ValueError(f"unknown scripted policy {name!r}; choose from {', '.join(SCRIPTED)}")
    return ServerPolicy(name)
