"""How many server replicas a run needs so that a step's episodes never wait for a session.

verl starts every episode of a step at once: ``data.train_batch_size x rollout.n`` (a validation, its
whole set). A server holds at most ``max_sessions`` sessions (what the environment declares, e.g.
sciworld's 16 JVMs); beyond that the pool queues episodes (``agentenv.client.EnvPool``), so nothing is
lost, but the step waits. ``replicas: auto`` starts enough replicas to hold them all; an explicit
``--replicas`` that is fewer prints the numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SERVER_DEFAULT_SESSIONS = 1024  # agentenv serve's --max-sessions default
MAX_AUTO_REPLICAS = 16  # auto never starts more per environment; past it, episodes queue


@dataclass(frozen=True)
class Need:
    env: str
    episodes: int  # at once, at most
    sessions_per_replica: int

    @property
    def replicas(self) -> int:
        return max(1, math.ceil(self.episodes / self.sessions_per_replica))


def concurrent_episodes(settings: Mapping[str, Any], val_tasks: int | None) -> int:
    """Episodes a step (or a validation) runs at once, from verl's settings."""
    train = int(settings.get("data.train_batch_size", 1)) * int(settings.get("actor_rollout_ref.rollout.n", 1))
    val = int(val_tasks or 0) * int(settings.get("actor_rollout_ref.rollout.val_kwargs.n", 1))
    return max(train, val)


def declared_sessions(env: str) -> int:
    """The session cap an environment declares (its class's ``max_sessions``), else the server's default."""
    from agentenv import registry

    return int(registry.load(env).max_sessions or SERVER_DEFAULT_SESSIONS)


def needs(envs: Sequence[str], episodes: int) -> list[Need]:
    return [Need(env, episodes, declared_sessions(env)) for env in envs]


def choose_replicas(requested: Any, found: Sequence[Need]) -> tuple[int, list[str]]:
    """``replicas`` as configured (an int, or ``auto``) and the lines to print about it."""
    want = max((n.replicas for n in found), default=1)
    if str(requested) == "auto":
        chosen = min(want, MAX_AUTO_REPLICAS)
        notes = [f"replicas: {chosen} per environment (auto: {_why(n)})" for n in found if n.replicas > 1]
        if want > chosen:
            notes.append(f"replicas: auto stops at {MAX_AUTO_REPLICAS}; the other episodes wait for a session")
        return chosen, notes
    chosen = int(requested)
    if chosen < 1:
        raise ValueError(f"--replicas must be >= 1 or auto, got {requested}")
    return chosen, [f"warning: --replicas {chosen} holds fewer sessions than a step starts ({_why(n)}); the "
                    "other episodes wait for a session (slower steps, none lost)" for n in found if n.replicas > chosen]


def _why(n: Need) -> str:
    return (f"{n.env}: {n.episodes} episodes at once, {n.sessions_per_replica} sessions a replica, "
            f"{n.replicas} replicas hold them")
