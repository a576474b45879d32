"""Deterministic maze tasks: every (split, task_id) names one maze, start and goal.

Tasks are generated from a string seed instead of being stored, so a split of any size costs
nothing until a task is used and needs no data files. ``random.Random(str)`` hashes the string
with SHA-512, so the mapping does not depend on ``PYTHONHASHSEED`` or the platform.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from functools import lru_cache

#: interior side lengths (rows and columns are drawn independently); the border is wall
MIN_SIDE, MAX_SIDE = 6, 7
#: shortest-path length range of a task: long enough that a random walk rarely arrives within
#: ``MAX_TURNS``, short enough that the expert needs under half of it (and that a tiny model
#: trained on CPU in minutes can learn it: v2 halved the v1 sides 7-9 / distances 12-22)
MIN_DIST, MAX_DIST = 5, 10
#: extra walls knocked out after carving, so some mazes have more than one route
MAX_LOOPS = 2
NUM_TASKS = {"train": 5000, "test": 100}

Cell = tuple[int, int]
# (row, column) offsets; "up" decreases the row, as on a printed map
MOVES: dict[str, Cell] = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


@dataclass(frozen=True)
class MazeTask:
    """One immutable task; safe to share between sessions through the cache."""

    height: int
    width: int
    open_cells: frozenset[Cell]
    start: Cell
    goal: Cell
    #: BFS distance to the goal for every open cell: the expert reads it, the tests check it
    dist_to_goal: dict[Cell, int]

    def render(self, position: Cell | None = None) -> str:
        """ASCII picture (``#`` wall, ``S`` start, ``G`` goal, ``@`` position); for humans and tests."""
        rows = []
        for r in range(-1, self.height + 1):
            row = []
            for c in range(-1, self.width + 1):
                cell = (r, c)
                if cell == position:
                    row.append("@")
                elif cell == self.goal:
                    row.append("G")
                elif cell == self.start:
                    row.append("S")
                else:
                    row.append("." if cell in self.open_cells else "#")
            rows.append("".join(row))
        return "\n".join(rows)


def neighbours(cell: Cell) -> list[Cell]:
    r, c = cell
    return [(r + dr, c + dc) for dr, dc in MOVES.values()]


def bfs(open_cells: frozenset[Cell] | set[Cell], source: Cell) -> dict[Cell, int]:
    """Distances from ``source`` to every reachable open cell."""
    dist = {source: 0}
    queue = deque([source])
    while queue:
        cell = queue.popleft()
        for nxt in neighbours(cell):
            if nxt in open_cells and nxt not in dist:
                dist[nxt] = dist[cell] + 1
                queue.append(nxt)
    return dist


def carve(height: int, width: int, rng: random.Random) -> set[Cell]:
    """A tree of one-cell-wide corridors filling the grid (randomized depth-first carving).

    A wall cell is opened only if the current cell would be its only open neighbour, so the
    corridors never merge into rooms and the result has no loops; :func:`add_loops` adds a few.
    """

    def inside(cell: Cell) -> bool:
        return 0 <= cell[0] < height and 0 <= cell[1] < width

    first = (rng.randrange(height), rng.randrange(width))
    open_cells = {first}
    stack = [first]
    while stack:
        cell = stack[-1]
        options = [
            n
            for n in neighbours(cell)
            if inside(n) and n not in open_cells and all(m == cell or m not in open_cells for m in neighbours(n))
        ]
        if not options:
            stack.pop()
            continue
        nxt = rng.choice(options)
        open_cells.add(nxt)
        stack.append(nxt)
    return open_cells


def add_loops(open_cells: set[Cell], height: int, width: int, rng: random.Random) -> None:
    """Open up to ``MAX_LOOPS`` wall cells that join two corridors (each makes one loop)."""
    walls = [
        (r, c)
        for r in range(height)
        for c in range(width)
        if (r, c) not in open_cells and sum(n in open_cells for n in neighbours((r, c))) == 2
    ]
    rng.shuffle(walls)
    for cell in walls[: rng.randint(0, MAX_LOOPS)]:
        open_cells.add(cell)


def check_task_id(task_id: int, split: str) -> None:
    if split not in NUM_TASKS:
        raise ValueError(f"unknown split {split!r}; expected one of {sorted(NUM_TASKS)}")
    if not 0 <= task_id < NUM_TASKS[split]:
        raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{NUM_TASKS[split] - 1})")


@lru_cache(maxsize=512)  # ~8 KB a task: bounded memory, and a miss costs < 1 ms
def generate(split: str, task_id: int) -> MazeTask:
    """The task ``task_id`` of ``split``; the same arguments always give the same task.

    Splits use disjoint seed strings, so train and test mazes are independent draws; the tests
    check that no test maze (with its start and goal) occurs in the train split.
    """
    check_task_id(task_id, split)
    rng = random.Random(f"agentenv-maze/v2/{split}/{task_id}")
    while True:
        height, width = rng.randint(MIN_SIDE, MAX_SIDE), rng.randint(MIN_SIDE, MAX_SIDE)
        open_cells = carve(height, width, rng)
        add_loops(open_cells, height, width, rng)
        frozen = frozenset(open_cells)
        cells = sorted(frozen)  # sorted: set iteration order must not leak into the draw
        for _ in range(8):
            start = rng.choice(cells)
            dist = bfs(frozen, start)
            goals = sorted(cell for cell, d in dist.items() if MIN_DIST <= d <= MAX_DIST)
            if goals:
                goal = rng.choice(goals)
                return MazeTask(height, width, frozen, start, goal, bfs(frozen, goal))
