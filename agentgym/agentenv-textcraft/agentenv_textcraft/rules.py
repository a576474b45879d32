"""The game's rules: the three commands, and what they do to an inventory.

- ``get N item``: adds N of a base item (one no recipe makes) to the inventory.
- ``craft N item using N a, N b, ...``: the ingredients must be exactly those of one of the item's
  recipes, in any order, each count multiplied by the same number of batches k >= 1, and N (which
  may be left out) must be k times what the recipe makes. An ingredient that is a tag (``planks``)
  takes one specific member (``oak planks``). The inventory must hold all the ingredients; they are
  used up and k batches of the output are added.
- ``inventory``: lists what the inventory holds.

Observations use TextCraft's wording (``Got 1 oak logs``, ``Crafted 4 minecraft:oak_planks``,
``Could not find enough items to craft minecraft:stick``, ``Inventory: [oak planks] (4)``,
``Could not execute ...``), sometimes followed by a short reason.

An outcome is *valid* when the command was understood and is allowed by the recipes: a
well-formed craft that only lacks ingredients in the inventory is valid (the state, not the
command, is wrong); text that is no command, an unknown item, fetching an item that must be
crafted and a craft that matches no recipe are not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentenv_textcraft.recipes import Ingredient, Recipe, RecipeBook, display, to_id

_GET = re.compile(r"get\s+(\d+)\s+(.+)")
_GET_NO_COUNT = re.compile(r"get\s+(?:an?\s+)?([a-z][^0-9]*)")
_CRAFT = re.compile(r"craft\s+(?:(\d+)\s+)?(.+?)\s+using\s+(.+)")
_INGREDIENT = re.compile(r"(\d+)\s+(.+)")
_INVENTORY = re.compile(r"(?:(?:check|show|look at|open|view)\s+(?:the\s+|my\s+)?)?inventory")
_PREFIX = re.compile(r"^(?:action\s*:\s*)")
_STRIP = " \t\r\n\"'`*.!?;,"


def normalize(action: str) -> str:
    """Lower case, one space between words, without an ``Action:`` prefix, surrounding quotes or
    a final full stop; the first line only (a command is one line)."""
    lines = action.strip().splitlines() or [""]
    text = _PREFIX.sub("", " ".join(lines[0].lower().split())).strip(_STRIP)
    return " ".join(text.split())


@dataclass(frozen=True)
class Get:
    item: str  # item id
    count: int
    name: str  # as written (after normalisation)


@dataclass(frozen=True)
class Craft:
    output: str  # item id
    count: int | None  # None: not stated
    inputs: tuple[tuple[str, int], ...]  # (item id, count)
    name: str  # the output as written


@dataclass(frozen=True)
class Inventory:
    pass


Command = Get | Craft | Inventory


@dataclass(frozen=True)
class Outcome:
    """What a command did: the observation, whether it was valid, whether the inventory changed."""

    observation: str
    valid: bool
    changed: bool = False


class CommandError(ValueError):
    """Text that is not a command; the message is the observation."""


def parse_command(text: str) -> Command:
    """The command ``text`` states; :class:`CommandError` (with TextCraft's message) if none."""
    if _INVENTORY.fullmatch(text):
        return Inventory()
    m = _CRAFT.fullmatch(text)
    if m:
        inputs = []
        for part in m.group(3).split(","):
            im = _INGREDIENT.fullmatch(part.strip())
            if not im:
                raise CommandError(f"Wrong item format: {part.strip()}. Give each ingredient as a count and a "
                                   "name, e.g. craft 4 stick using 2 oak planks")
            inputs.append((to_id(im.group(2)), int(im.group(1))))
        count = int(m.group(1)) if m.group(1) else None
        return Craft(to_id(m.group(2)), count, tuple(inputs), m.group(2))
    m = _GET.fullmatch(text)
    if m:
        return Get(to_id(m.group(2)), int(m.group(1)), m.group(2))
    m = _GET_NO_COUNT.fullmatch(text)
    if m:
        raise CommandError(f"Could not execute {text}: say how many, e.g. get 1 {m.group(1)}")
    raise CommandError(f"Could not execute {text}. The commands are: get N item; craft N item using N "
                       "ingredient, N ingredient, ...; inventory")


@dataclass(frozen=True)
class Match:
    """A craft command that fits ``recipe`` run ``batches`` times."""

    recipe: Recipe
    batches: int


def _assign(book: RecipeBook, wanted: tuple[Ingredient, ...], given: list[tuple[str, int]],
            batches: int | None) -> int | None:
    """The batch count k with which ``given`` (item, count) pairs are exactly ``wanted``, each count
    times k, in some order (a tag ingredient also matches the tag's own name); None if none."""
    if not wanted:
        return batches if not given else None
    first, rest = wanted[0], wanted[1:]
    for i, (item, count) in enumerate(given):
        if not (book.accepts(first, item) or (first.is_tag and item == first.name)):
            continue
        if count % first.count or count == 0:
            continue
        k = count // first.count
        if batches is not None and k != batches:
            continue
        found = _assign(book, rest, given[:i] + given[i + 1:], k)
        if found is not None:
            return found
    return None


def match_recipe(book: RecipeBook, craft: Craft) -> Match | str:
    """The recipe and batch count a craft command fits, or why it fits none (the observation)."""
    name = display(craft.output)
    if book.is_tag(craft.output):
        example = book.members[craft.output][0]
        return (f"Could not find a valid recipe for {name}: {name} is a kind of item, craft a specific one "
                f"(e.g. {display(example)})")
    if not book.is_craftable(craft.output):
        why = "it is a base item, get it instead" if book.is_base(craft.output) else "there is no such item"
        return f"Could not find a valid recipe for {name}: {why}"
    names = [item for item, _ in craft.inputs]
    if len(set(names)) == len(names):
        for recipe in book.recipes_for(craft.output):
            k = _assign(book, recipe.inputs, list(craft.inputs), None)
            if k is None:
                continue
            if craft.count is not None and craft.count != k * recipe.count:
                return (f"Could not find a valid recipe for {craft.count} {name}: those ingredients make "
                        f"{k * recipe.count} {name}")
            return Match(recipe, k)
    return (f"Could not find a valid recipe for {name}: use exactly the ingredients of one of its crafting "
            "commands, each count multiplied by the same number of batches")


class Workbench:
    """One episode's inventory and the rules that change it."""

    def __init__(self, book: RecipeBook) -> None:
        self.book = book
        #: item id -> count (> 0), in the order items first arrived, as TextCraft lists them
        self.inventory: dict[str, int] = {}

    def execute(self, action: str) -> Outcome:
        """Apply one command (any text); never raises."""
        text = normalize(action)
        try:
            command = parse_command(text)
        except CommandError as e:
            return Outcome(str(e), valid=False)
        if isinstance(command, Inventory):
            return Outcome(self.describe(), valid=True)
        if isinstance(command, Get):
            return self.get(command)
        return self.craft(command)

    def get(self, command: Get) -> Outcome:
        name = display(command.item)
        if command.count < 1:
            return Outcome(f"Could not get {command.count} {name}: get at least 1", valid=False)
        if not self.book.is_base(command.item):
            if self.book.is_craftable(command.item) or self.book.is_tag(command.item):
                return Outcome(f"Could not find {name}: it is made by crafting, not found", valid=False)
            return Outcome(f"Could not find {command.name}", valid=False)
        self.add(command.item, command.count)
        return Outcome(f"Got {command.count} {name}", valid=True, changed=True)

    def craft(self, command: Craft) -> Outcome:
        found = match_recipe(self.book, command)
        if isinstance(found, str):
            return Outcome(found, valid=False)
        lacking = [item for item, n in command.inputs if self.inventory.get(item, 0) < n]
        if lacking:
            text = f"Could not find enough items to craft {command.output}"
            tags = [item for item in lacking if self.book.is_tag(item)]
            if tags:  # "2 planks": the player named the kind, not an item it holds
                kind, members = display(tags[0]), self.book.members[tags[0]]
                held = [m for m in members if m in self.inventory]
                example = display((held or members)[0])
                return Outcome(f"{text}: {kind} stands for any kind of {kind}, name the one you have "
                               f"(e.g. {example})", valid=False)
            return Outcome(text, valid=True)
        for item, n in command.inputs:
            self.remove(item, n)
        made = found.batches * found.recipe.count
        self.add(command.output, made)
        return Outcome(f"Crafted {made} {command.output}", valid=True, changed=True)

    def add(self, item: str, count: int) -> None:
        self.inventory[item] = self.inventory.get(item, 0) + count

    def remove(self, item: str, count: int) -> None:
        left = self.inventory[item] - count
        if left > 0:
            self.inventory[item] = left
        else:
            del self.inventory[item]

    def describe(self) -> str:
        """``Inventory: [oak planks] (4) [stick] (4)``, or that it is empty."""
        if not self.inventory:
            return "Inventory: You are not carrying anything."
        return "Inventory: " + " ".join(f"[{display(item)}] ({n})" for item, n in self.inventory.items())
