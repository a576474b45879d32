"""Tasks: which item each (split, task_id) asks for, and the crafting commands it is shown.

A task is a goal item. Goals are the craftable items 1 to 4 crafting levels deep
(:attr:`RecipeBook.depth`); each is the goal of exactly one task, so no test goal is ever trained
on. The test split takes an equal share of every depth (at most half of a depth's items, the rest
spread over the other depths), the train split all the other goals. Both are drawn with seeded
RNGs from id-sorted lists, so every machine gets the same tasks.

The first observation is TextCraft's: ``Crafting commands:``, the recipes that can take part in
making the goal (:meth:`RecipeBook.tree`) mixed with up to ``max_distractors`` recipes that use
the same ingredients for something else, in a shuffled order, then ``Goal: craft <item>.``. The
shuffle and the distractors are seeded by the goal alone, so a goal always reads the same.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agentenv import tasksets
from agentenv_textcraft.recipes import Recipe, RecipeBook, display

MIN_DEPTH, MAX_DEPTH = 1, 4
TEST_SIZE = 100
MAX_DISTRACTORS = 10
SPLITS = ("train", "test")
_SEED = "agentenv-textcraft/v1"


@dataclass(frozen=True)
class Task:
    """One goal: craft one ``goal`` (an item id), ``depth`` crafting levels above base items."""

    goal: str
    depth: int


def quota_per_depth(sizes: dict[int, int], total: int) -> dict[int, int]:
    """How many test goals each depth gives: an equal share of ``total``, at most half of a depth's
    goals (train keeps the rest), what a small depth cannot give going to the others in turn."""
    quota = dict.fromkeys(sizes, 0)
    caps = {d: n // 2 for d, n in sizes.items()}
    left = min(total, sum(caps.values()))
    while left:
        open_depths = [d for d in sorted(sizes) if quota[d] < caps[d]]
        share = max(1, left // len(open_depths))
        for d in open_depths:
            take = min(share, caps[d] - quota[d], left)
            quota[d] += take
            left -= take
    return quota


def build_splits(book: RecipeBook, test_size: int = TEST_SIZE) -> dict[str, tuple[Task, ...]]:
    """The train and test tasks of a recipe book (deterministic: sorted inputs, seeded RNGs)."""
    by_depth: dict[int, list[str]] = {}
    for item, depth in book.goals(MIN_DEPTH, MAX_DEPTH):
        by_depth.setdefault(depth, []).append(item)
    quota = quota_per_depth({d: len(items) for d, items in by_depth.items()}, test_size)
    test: list[Task] = []
    train: list[Task] = []
    for depth in sorted(by_depth):
        items = list(by_depth[depth])
        random.Random(f"{_SEED}/split/{depth}").shuffle(items)
        test.extend(Task(item, depth) for item in items[: quota[depth]])
        train.extend(Task(item, depth) for item in items[quota[depth]:])
    # interleave the depths, so that any prefix of a split (a sample, a curriculum) has them all
    random.Random(f"{_SEED}/order/test").shuffle(test)
    random.Random(f"{_SEED}/order/train").shuffle(train)
    return {"train": tuple(train), "test": tuple(test)}


class TaskSet(tasksets.TaskSet[Task]):
    """The recipe book, the splits and every goal's command list: what a server shares. The splits are built
    whole (their depths are balanced across them); the core's task set looks tasks up and checks ids."""

    def __init__(self, book: RecipeBook, max_distractors: int = MAX_DISTRACTORS, test_size: int = TEST_SIZE) -> None:
        self.book = book
        self.max_distractors = max_distractors
        self.splits = build_splits(book, test_size)
        self._listings: dict[str, tuple[Recipe, ...]] = {}
        super().__init__({split: len(tasks) for split, tasks in self.splits.items()},
                         lambda split, task_id: self.splits[split][task_id])

    def listing(self, goal: str) -> tuple[Recipe, ...]:
        """The recipes the goal's first observation lists, in their shown order.

        Computed once per goal (a dict write is atomic, and a race computes the same value)."""
        cached = self._listings.get(goal)
        if cached is None:
            cached = self._listings[goal] = self._make_listing(goal)
        return cached

    def _make_listing(self, goal: str) -> tuple[Recipe, ...]:
        book = self.book
        rng = random.Random(f"{_SEED}/commands/{goal}")
        relevant: dict[str, Recipe] = {}
        for recipe in book.tree(goal):
            relevant.setdefault(recipe.command, recipe)
        others: dict[str, Recipe] = {}
        for recipe in relevant.values():
            for ingredient in recipe.inputs:
                for use in book.uses.get(ingredient.name, ()):
                    if use.command not in relevant:
                        others.setdefault(use.command, use)
        picked = rng.sample(sorted(others), min(self.max_distractors, len(others)))
        shown = list(relevant.values()) + [others[c] for c in picked]
        rng.shuffle(shown)
        return tuple(shown)

    def first_observation(self, goal: str) -> str:
        """``Crafting commands:`` + the listing + ``Goal: craft <item>.`` (TextCraft's wording)."""
        lines = "\n".join(recipe.command for recipe in self.listing(goal))
        return f"Crafting commands:\n{lines}\n\nGoal: craft {display(goal)}."
