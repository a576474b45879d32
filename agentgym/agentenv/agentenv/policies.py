"""Scripted policies for ``play`` and evaluation: they ask the server what to do.

The expert and random policies run inside the environment (``/policy_action``) so
that they see the true state, and so that they work unchanged against any replica.
"""

from __future__ import annotations

from agentenv.client import EnvSession
from agentenv.episodes import Decision, Policy

__all__ = ["SCRIPTED", "Decision", "Policy", "ServerPolicy", "scripted_policy"]


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
