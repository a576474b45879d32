"""Generated task sets: each split's tasks by id, the same on every machine, each built once.

An environment that generates its tasks builds them from an RNG seeded by what names the task
(:func:`seeded_rng`: the world's seed, the split, the id), so a task id means one task everywhere
(datasets, servers, trajectories). A :class:`TaskSet` holds them, usually in ``load_shared``, so a
server builds each task once, when a session first asks for it, and every session reads the same.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

__all__ = ["TaskSet", "seeded_rng"]

T = TypeVar("T")


def seeded_rng(*parts: object) -> random.Random:
    """An RNG seeded by ``parts`` (joined as text and hashed): the same draws on every machine and
    Python version, unlike ``random.Random(hash(...))``."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class TaskSet(Generic[T]):
    """Each split's tasks by id: ``counts`` of them, task ``i`` of a split being ``build(split, i)``,
    built the first time it is asked for and then kept (a race builds it twice, the same task)."""

    def __init__(self, counts: Mapping[str, int], build: Callable[[str, int], T]) -> None:
        self.counts = dict(counts)
        self._build = build
        self._built: dict[tuple[str, int], T] = {}

    def count(self, split: str) -> int:
        """How many tasks ``split`` holds; ValueError for a split the set does not have."""
        if split not in self.counts:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(self.counts)}")
        return self.counts[split]

    def task(self, split: str, task_id: int) -> T:
        """Task ``task_id`` of ``split``; ValueError for an unknown split, IndexError for an id out of range."""
        n = self.count(split)
        if not 0 <= task_id < n:
            raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{n - 1})")
        key = (split, task_id)
        if key not in self._built:
            self._built[key] = self._build(split, task_id)
        return self._built[key]
