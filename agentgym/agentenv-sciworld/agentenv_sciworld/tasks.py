"""ScienceWorld's task types, their variations, and the train/test splits built from them.

A task is one variation of one task type (``boil`` variation 21: "Your task is to boil lead ...").
ScienceWorld itself assigns every variation of a type to its train, dev or test set; we keep that
assignment: our test split is 200 of the simulator's test variations spread evenly over the 30 task
types, our train split is every train variation. Dev variations are left out of both.

The variation table is a fact of the bundled simulator (``scienceworld`` 1.2.3's jar); it is embedded
here so that task counts and splits are known without starting a JVM, and a test checks it against
the simulator. A server started with another jar (option ``jar_path``) reads the table from that jar.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

TEST_SIZE = 200

#: task id (ScienceWorld's numbering) -> simulator task name
TASK_IDS: dict[str, str] = {
    "1-1": "boil", "1-2": "melt", "1-3": "freeze", "1-4": "change-the-state-of-matter-of",
    "2-1": "use-thermometer", "2-2": "measure-melting-point-known-substance",
    "2-3": "measure-melting-point-unknown-substance",
    "3-1": "power-component", "3-2": "power-component-renewable-vs-nonrenewable-energy",
    "3-3": "test-conductivity", "3-4": "test-conductivity-of-unknown-substances",
    "4-1": "find-living-thing", "4-2": "find-non-living-thing", "4-3": "find-plant", "4-4": "find-animal",
    "5-1": "grow-plant", "5-2": "grow-fruit",
    "6-1": "chemistry-mix", "6-2": "chemistry-mix-paint-secondary-color", "6-3": "chemistry-mix-paint-tertiary-color",
    "7-1": "lifespan-longest-lived", "7-2": "lifespan-shortest-lived",
    "7-3": "lifespan-longest-lived-then-shortest-lived",
    "8-1": "identify-life-stages-1", "8-2": "identify-life-stages-2",
    "9-1": "inclined-plane-determine-angle", "9-2": "inclined-plane-friction-named-surfaces",
    "9-3": "inclined-plane-friction-unnamed-surfaces",
    "10-1": "mendelian-genetics-known-plant", "10-2": "mendelian-genetics-unknown-plant",
}

#: simulator task name -> (number of variations, first dev variation, first test variation), as the
#: bundled jar reports them: train = [0, dev), dev = [dev, test), test = [test, number)
VARIATIONS: dict[str, tuple[int, int, int]] = {
    "boil": (30, 14, 21), "melt": (30, 14, 21), "freeze": (30, 14, 21), "change-the-state-of-matter-of": (30, 14, 21),
    "use-thermometer": (540, 270, 405), "measure-melting-point-known-substance": (436, 218, 327),
    "measure-melting-point-unknown-substance": (300, 150, 225),
    "power-component": (20, 10, 15), "power-component-renewable-vs-nonrenewable-energy": (20, 10, 15),
    "test-conductivity": (900, 450, 675), "test-conductivity-of-unknown-substances": (600, 300, 450),
    "find-living-thing": (300, 150, 225), "find-non-living-thing": (300, 150, 225), "find-plant": (300, 150, 225),
    "find-animal": (300, 150, 225),
    "grow-plant": (126, 62, 93), "grow-fruit": (126, 62, 93),
    "chemistry-mix": (32, 16, 24), "chemistry-mix-paint-secondary-color": (36, 18, 27),
    "chemistry-mix-paint-tertiary-color": (36, 18, 27),
    "lifespan-longest-lived": (125, 62, 93), "lifespan-shortest-lived": (125, 62, 93),
    "lifespan-longest-lived-then-shortest-lived": (125, 62, 93),
    "identify-life-stages-1": (14, 6, 9), "identify-life-stages-2": (10, 4, 6),
    "inclined-plane-determine-angle": (168, 84, 126), "inclined-plane-friction-named-surfaces": (1386, 692, 1038),
    "inclined-plane-friction-unnamed-surfaces": (162, 80, 120),
    "mendelian-genetics-known-plant": (120, 60, 90), "mendelian-genetics-unknown-plant": (480, 240, 360),
}


class Task(NamedTuple):
    """One episode's world: a task type and one of its variations."""

    task_id: str  # ScienceWorld's id of the type, e.g. "1-1"
    name: str  # the simulator's task name, e.g. "boil"
    variation: int


@dataclass(frozen=True)
class TaskType:
    """A task type with its variation sets as the simulator assigns them."""

    task_id: str
    name: str
    train: range
    dev: range
    test: range


def _id_key(task_id: str) -> tuple[int, ...]:
    return tuple(int(part) for part in task_id.split("-"))


def task_types(variations: dict[str, tuple[int, int, int]] | None = None,
               ids: dict[str, str] | None = None) -> list[TaskType]:
    """The task types in ScienceWorld's order (1-1, 1-2, ..., 10-2); types the id table does not
    know (another jar) follow, sorted by name."""
    variations = VARIATIONS if variations is None else variations
    ids = TASK_IDS if ids is None else ids
    by_name = {name: tid for tid, name in ids.items()}
    known = sorted((n for n in variations if n in by_name), key=lambda n: _id_key(by_name[n]))
    extra = sorted(n for n in variations if n not in by_name)
    out = []
    for name in known + extra:
        total, dev, test = variations[name]
        out.append(TaskType(by_name.get(name, name), name, range(0, dev), range(dev, test), range(test, total)))
    return out


def _round_robin(pools: list[tuple[TaskType, list[int]]]) -> list[Task]:
    """Interleave the types: the first tasks of a split cover every type before any repeats."""
    out: list[Task] = []
    for r in range(max((len(vs) for _, vs in pools), default=0)):
        out.extend(Task(t.task_id, t.name, vs[r]) for t, vs in pools if r < len(vs))
    return out


def quotas(types: list[TaskType], size: int = TEST_SIZE) -> list[int]:
    """How many test tasks each type gets: one per type per round while it has test variations
    left, in type order, until ``size`` (types with few test variations give their share away)."""
    share = [0] * len(types)
    total = min(size, sum(len(t.test) for t in types))
    while sum(share) < total:
        for i, t in enumerate(types):
            if sum(share) < total and share[i] < len(t.test):
                share[i] += 1
    return share


def build_splits(types: list[TaskType], test_size: int = TEST_SIZE) -> dict[str, list[Task]]:
    """The splits: ``test`` takes each type's quota of test variations, evenly spaced over its test
    range; ``train`` takes every train variation. Both interleave the types."""
    test_pools = []
    for t, q in zip(types, quotas(types, test_size), strict=True):
        n = len(t.test)
        test_pools.append((t, [t.test[(k * n) // q] for k in range(q)]))
    train_pools = [(t, list(t.train)) for t in types]
    return {"train": _round_robin(train_pools), "test": _round_robin(test_pools)}


class TaskTable:
    """The splits a server serves (built once per server, read by every session)."""

    def __init__(self, types: Iterable[TaskType], test_size: int = TEST_SIZE) -> None:
        self.types = list(types)
        self.splits = build_splits(self.types, test_size)

    def counts(self) -> dict[str, int]:
        return {split: len(tasks) for split, tasks in self.splits.items()}

    def task(self, split: str, task_id: int) -> Task:
        """Task ``task_id`` of ``split``; IndexError when out of range (negative ids included)."""
        tasks = self.splits[split]
        if not 0 <= task_id < len(tasks):
            raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{len(tasks) - 1})")
        return tasks[task_id]


@functools.cache
def default_table() -> TaskTable:
    """The bundled simulator's splits (no JVM needed)."""
    return TaskTable(task_types())
