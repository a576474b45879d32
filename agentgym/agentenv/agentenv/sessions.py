"""The session table: one environment instance per session, TTL and a size limit."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field

from agentenv.env import Environment, Split
from agentenv.errors import SessionLimit, SessionNotFound


@dataclass(eq=False)
class Session:
    env_id: str
    env: Environment
    split: Split
    task_id: int
    seed: int | None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    turns: int = 0
    done: bool = False
    closed: bool = False
    last_used: float = field(default_factory=time.monotonic)
    rng: random.Random = field(default_factory=random.Random)

    def start(self, task_id: int, split: Split, seed: int | None) -> None:
        """Bookkeeping of a (re)started episode; the env itself was reset by the caller."""
        self.task_id, self.split, self.seed = task_id, split, seed
        self.turns, self.done = 0, False
        # the random policy is reproducible per task and seed
        self.rng = random.Random(f"{split}:{task_id}:{seed}")


class SessionTable:
    """Sessions by id. Slots are reserved before an environment is built, so that
    concurrent creates can never exceed ``max_sessions``."""

    def __init__(self, max_sessions: int, ttl: float) -> None:
        self.max_sessions = max_sessions
        self.ttl = ttl
        self._sessions: dict[str, Session] = {}
        self._reserved = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, env_id: object) -> bool:
        return env_id in self._sessions

    def reserve(self) -> None:
        if len(self._sessions) + self._reserved >= self.max_sessions:
            raise SessionLimit(f"session limit of {self.max_sessions} reached; close sessions or raise --max-sessions")
        self._reserved += 1

    def release(self) -> None:
        self._reserved -= 1

    def add(self, env: Environment, task_id: int, split: Split, seed: int | None) -> Session:
        """Turn a reserved slot into a session."""
        self._reserved -= 1
        sess = Session(env_id=uuid.uuid4().hex, env=env, split=split, task_id=task_id, seed=seed)
        sess.start(task_id, split, seed)
        self._sessions[sess.env_id] = sess
        return sess

    def get(self, env_id: str) -> Session:
        sess = self._sessions.get(env_id)
        if sess is None:
            raise SessionNotFound(f"unknown env_id {env_id!r} (closed, expired or never created)")
        sess.last_used = time.monotonic()
        return sess

    def pop(self, env_id: str) -> Session:
        sess = self.get(env_id)
        del self._sessions[env_id]
        return sess

    def pop_expired(self, now: float | None = None) -> list[Session]:
        """Remove and return sessions idle for longer than the TTL (not those in use)."""
        now = time.monotonic() if now is None else now
        stale = [s for s in self._sessions.values() if now - s.last_used > self.ttl and not s.lock.locked()]
        for s in stale:
            del self._sessions[s.env_id]
        return stale

    def pop_all(self) -> list[Session]:
        out = list(self._sessions.values())
        self._sessions.clear()
        return out
