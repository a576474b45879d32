"""The expert: a planner over the recipe tree that works from whatever the inventory holds.

It works out how many of every item the goal needs, top-down: each item is made with its
shallowest recipe (:meth:`RecipeBook.best_recipe`), in as many batches as cover what is needed
beyond what the inventory already holds (recipes make 1, 4, 8, ... at a time, so surplus is
normal); a tag ingredient is filled by one member (one that the inventory already holds enough
of, else the shallowest, preferring one the inventory holds some of). Since every ingredient of a
chosen recipe is shallower than its output, visiting items from the deepest down sees all of an
item's demand before deciding on it. The plan is then: ``get`` every base item that is short,
then one ``craft`` per item, batched, ingredients before what uses them. The expert replans from
the current inventory at every turn, so it recovers from any detour an agent took.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from agentenv_textcraft.recipes import Recipe, RecipeBook, display


@dataclass(frozen=True)
class Step:
    """One command of a plan, with what it is for (the expert's thought says it)."""

    action: str
    item: str
    count: int  # how many it gets or makes
    recipe: Recipe | None = None  # None: a get
    batches: int = 0
    needed_by: tuple[str, ...] = ()  # the items it is an ingredient of; () for the goal


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    choices: tuple[tuple[str, str], ...]  # (tag, member) the plan fills each tag ingredient with


def craft_command(recipe: Recipe, batches: int, choices: Mapping[str, str]) -> str:
    """``craft 8 oak planks using 2 oak logs``: the recipe run ``batches`` times, tags filled in."""
    using = ", ".join(f"{batches * i.count} {display(choices.get(i.name, i.name))}" for i in recipe.inputs)
    return f"craft {batches * recipe.count} {display(recipe.output)} using {using}"


def choose_member(book: RecipeBook, tag: str, needed: int, available: Mapping[str, int]) -> str:
    """The member that fills ``needed`` of ``tag``: one of which ``available`` (inventory not yet
    promised to other uses) covers it all, else the shallowest, the most available first."""
    members = book.members[tag]
    covered = [m for m in members if available.get(m, 0) >= needed]
    if covered:
        return min(covered, key=lambda m: (-available.get(m, 0), m))
    return min((m for m in members if m in book.depth), key=lambda m: (book.depth[m], -available.get(m, 0), m))


def plan(book: RecipeBook, goal: str, inventory: Mapping[str, int]) -> Plan:
    """The commands that make one ``goal`` from ``inventory``; no steps when it is already there."""
    need: dict[str, int] = defaultdict(int)
    needed_by: dict[str, list[str]] = defaultdict(list)
    need[goal] = 1
    pending, done = {goal}, set()
    gets: list[Step] = []
    crafts: list[tuple[str, Recipe, int]] = []
    choices: dict[str, str] = {}

    def order(name: str) -> tuple[int, int, str]:
        # deepest first; a tag before its members (same depth); names break ties deterministically
        return book.depth.get(name, 0), int(book.is_tag(name)), name

    while pending:
        name = max(pending, key=order)
        pending.remove(name)
        done.add(name)
        if book.is_tag(name):
            available = {m: inventory.get(m, 0) - need.get(m, 0) for m in book.members[name]}
            member = choose_member(book, name, need[name], available)
            choices[name] = member
            need[member] += need[name]
            needed_by[member].extend(needed_by[name])
            if member not in done:
                pending.add(member)
            continue
        short = need[name] - inventory.get(name, 0)
        if short <= 0:
            continue
        if book.is_craftable(name):
            recipe = book.best_recipe(name)
            batches = math.ceil(short / recipe.count)
            crafts.append((name, recipe, batches))
            for ingredient in recipe.inputs:
                need[ingredient.name] += batches * ingredient.count
                needed_by[ingredient.name].append(name)
                pending.add(ingredient.name)
        else:
            gets.append(Step(f"get {short} {display(name)}", name, short, needed_by=tuple(needed_by[name])))
    steps = list(reversed(gets))
    for name, recipe, batches in reversed(crafts):  # ingredients are shallower: made before their users
        steps.append(Step(craft_command(recipe, batches, choices), name, batches * recipe.count, recipe, batches,
                          tuple(needed_by[name])))
    return Plan(tuple(steps), tuple(sorted(choices.items())))


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def explain(book: RecipeBook, goal: str, current: Plan, overview: bool) -> str:
    """Why the plan's first step comes now, as an agent reading the crafting commands could say it;
    with ``overview``, first the whole plan (what an agent works out at the start)."""
    if not current.steps:
        return f"I already have {display(goal)}."
    step = current.steps[0]
    parts = []
    if overview:
        parts.append(f"My goal is {display(goal)}. From the crafting commands, the plan is: "
                     + "; ".join(s.action for s in current.steps) + ".")
        parts.extend(f"Where a command says {display(tag)}, any kind of {display(tag)} will do; "
                     f"I use {display(member)}." for tag, member in current.choices)
    users = _join(sorted({display(u) for u in step.needed_by})) if step.needed_by else ""
    if step.recipe is None:
        parts.append(f"I need {step.count} {display(step.item)} for {users}. It is not crafted from anything, "
                     f"so I get it.")
    elif step.item == goal:
        parts.append(f"I have all the ingredients of {display(goal)}, so I craft it.")
    else:
        batch = f"{step.batches} batches" if step.batches > 1 else "one batch"
        parts.append(f"I have the ingredients for {display(step.item)}, which I need for {users}; the recipe makes "
                     f"{step.recipe.count} at a time, so I craft {batch}.")
    return " ".join(parts)
