"""The rules of a generated household: its state, which commands apply, what they do and the text
they produce.

Preconditions and effects follow ALFWorld's PDDL domain (``alfred.pddl``): go to any other receptacle; open and
close openable receptacles where you are; take an object from a receptacle where you are (open, if
it opens) with empty hands; put what you hold into a receptacle where you are (open, if it opens)
that can hold it; heat / cool / clean what you hold with the microwave / fridge / sink basin where
you are (closed or not); use (switch on) a lamp that stands where you are; examine, look,
inventory. The sentences follow ALFWorld's grammar (``alfred.twl2``), including its quirks ("a
apple 1", "cold" for a cooled object, "in/on"). A command that does not apply is, as in ALFWorld,
answered with "Nothing happens." and changes nothing.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from agentenv_alfworld.catalogue import APPLIANCE, LAMP, RECEPTACLE_OBJECTS, STATE_OBJECTS, Room, can_hold

NOTHING_HAPPENS = "Nothing happens."
BANNER = "-= Welcome to TextWorld, ALFRED! =-"
#: the ``help`` command's answer (ALFWorld's command list, with the "put ... in/on" form used here)
HELP = (
    "Available commands:\n"
    "  look:                             look around your current location\n"
    "  inventory:                        check your current inventory\n"
    "  go to (receptacle):               move to a receptacle\n"
    "  open (receptacle):                open a receptacle\n"
    "  close (receptacle):               close a receptacle\n"
    "  take (object) from (receptacle):  take an object from a receptacle\n"
    "  put (object) in/on (receptacle):  place an object in or on a receptacle\n"
    "  examine (something):              examine a receptacle or an object\n"
    "  use (object):                     use an object\n"
    "  heat (object) with (receptacle):  heat an object using a receptacle\n"
    "  clean (object) with (receptacle): clean an object using a receptacle\n"
    "  cool (object) with (receptacle):  cool an object using a receptacle"
)


@dataclass
class Receptacle:
    name: str  # "countertop 1"
    rtype: str  # "countertop"
    openable: bool
    opened: bool = False
    contents: list[str] = field(default_factory=list)  # object names, in the order they are listed

    @property
    def visible(self) -> bool:
        """Its contents can be seen (and taken): it does not open, or it is open."""
        return not self.openable or self.opened


@dataclass
class Obj:
    name: str  # "apple 1"
    otype: str  # "apple"
    hot: bool = False
    cool: bool = False
    clean: bool = False
    toggled: bool = False  # switched at least once (ALFWorld's isToggled, what look_at_obj_in_light asks)


@dataclass
class Command:
    """A parsed command: ``verb`` and up to two names (an object and/or a receptacle)."""

    verb: str  # go, open, close, take, put, heat, cool, clean, use, examine, look, inventory, help
    obj: str | None = None
    recep: str | None = None

    def text(self) -> str:
        """The command in ALFWorld's canonical wording."""
        v = self.verb
        if v == "go":
            return f"go to {self.recep}"
        if v in ("open", "close"):
            return f"{v} {self.recep}"
        if v == "take":
            return f"take {self.obj} from {self.recep}"
        if v == "put":
            return f"put {self.obj} in/on {self.recep}"
        if v in ("heat", "cool", "clean"):
            return f"{v} {self.obj} with {self.recep}"
        if v == "use":
            return f"use {self.obj}"
        if v == "examine":
            return f"examine {self.obj or self.recep}"
        return v


_NAME = r"([a-z]+ \d+)"
_PATTERNS: list[tuple[re.Pattern[str], str, tuple[str, ...]]] = [
    (re.compile(rf"^(?:go to|goto|go) {_NAME}$"), "go", ("recep",)),
    (re.compile(rf"^(open|close) {_NAME}$"), "", ("recep",)),
    (re.compile(rf"^(?:take|pick up|pickup|get) {_NAME} from {_NAME}$"), "take", ("obj", "recep")),
    (re.compile(rf"^(?:put|place) {_NAME} (?:in/on|in / on|in|on|into|onto|inside|to) (?:the )?{_NAME}$"), "put",
     ("obj", "recep")),
    (re.compile(rf"^move {_NAME} to {_NAME}$"), "put", ("obj", "recep")),  # alfworld >= 0.4 says "move ... to"
    (re.compile(rf"^(heat|cool|clean) {_NAME} (?:with|using|in) {_NAME}$"), "", ("obj", "recep")),
    (re.compile(rf"^(?:use|toggle|turn on|switch on) {_NAME}$"), "use", ("obj",)),
    (re.compile(rf"^(?:examine|x|inspect) {_NAME}$"), "examine", ("obj",)),
    (re.compile(r"^(?:look|look around|l)$"), "look", ()),
    (re.compile(r"^(?:inventory|inv|i)$"), "inventory", ()),
    (re.compile(r"^help$"), "help", ()),
]
_STRIP = " \t\r\n\"'`*.!?,;:()[]{}<>"


def parse_command(text: str) -> Command | None:
    """Read a command written as ALFWorld writes them (case, spacing, a leading "Action:", a trailing
    period and "the" before names are tolerated); None when it is no command at all."""
    t = " ".join(str(text).lower().split()).strip(_STRIP)
    t = re.sub(r"^action\s*:\s*", "", t).strip(_STRIP)
    t = re.sub(r"\bthe ", "", t)
    for pattern, verb, slots in _PATTERNS:
        m = pattern.match(t)
        if not m:
            continue
        groups = list(m.groups())
        if not verb:  # the verb is the first group
            verb = groups.pop(0)
        cmd = Command(verb)
        for slot, value in zip(slots, groups, strict=True):
            setattr(cmd, slot, value)
        return cmd
    return None


def a_list(names: list[str]) -> str:
    """TextWorld's list: "nothing", "a x", "a x, and a y", "a x, a y, and a z" (always "a")."""
    if not names:
        return "nothing"
    items = [f"a {n}" for n in names]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + ", and " + items[-1]


class World:
    """The mutable state of one episode's household."""

    def __init__(self, room: Room, receptacles: list[Receptacle], objects: list[Obj]) -> None:
        self.room = room
        self.receptacles: dict[str, Receptacle] = {r.name: r for r in receptacles}
        self.objects: dict[str, Obj] = {o.name: o for o in objects}
        self.at: str | None = None  # receptacle the agent stands at; None: the middle of the room
        self.holding: str | None = None
        #: receptacles whose contents the agent has seen; only the agent moves things, so what it saw
        #: there is still true (the expert plans from this, not from what it was never shown)
        self.seen: set[str] = set()
        self.where: dict[str, str] = {o: r.name for r in receptacles for o in r.contents}

    def copy(self) -> World:
        return copy.deepcopy(self)

    # -- queries ---------------------------------------------------------------------------------
    def location_of(self, obj: str) -> str | None:
        """The receptacle the object is in; None while it is held."""
        return self.where.get(obj)

    def here(self) -> Receptacle | None:
        return self.receptacles[self.at] if self.at else None

    def of_type(self, rtype: str) -> list[Receptacle]:
        return [r for r in self.receptacles.values() if r.rtype == rtype]

    def _reachable_object(self, name: str) -> bool:
        """An object in a visible receptacle where the agent stands (what can be taken or examined)."""
        here = self.here()
        return here is not None and here.visible and name in here.contents

    # -- text ------------------------------------------------------------------------------------
    def describe_receptacle(self, r: Receptacle) -> str:
        if r.openable and r.opened:
            return f"The {r.name} is open. In it, you see {a_list(r.contents)}."
        if r.openable:
            return f"The {r.name} is closed."
        return f"On the {r.name}, you see {a_list(r.contents)}."

    def overview(self) -> str:
        return f"You are in the middle of a room. Looking quickly around you, you see {a_list(list(self.receptacles))}."

    def look(self) -> str:
        if self.at is None:
            return self.overview()
        return f"You are facing the {self.at}. Next to it, you see nothing."

    def describe_object(self, o: Obj) -> str:
        """ALFWorld's examineObject feedback, first matching condition wins."""
        if o.otype in RECEPTACLE_OBJECTS:
            return f"This is a normal {o.name}. In it, you see nothing."
        if o.clean and o.hot:
            return f"This is a hot and clean {o.name}."
        if o.clean and o.cool:
            return f"This is a cool and clean {o.name}."
        if o.hot:
            return f"This is a hot {o.name}."
        if o.clean:
            return f"This is a clean {o.name}."
        if o.cool:
            return f"This is a cold {o.name}."
        if o.otype == LAMP:
            return f"This {o.name} is {'on' if o.toggled else 'off'}."
        return f"There's nothing special about {o.name}."

    def inventory(self) -> str:
        return f"You are carrying: a {self.holding}." if self.holding else "You are not carrying anything."

    def _saw(self, r: Receptacle) -> None:
        if r.visible:
            self.seen.add(r.name)

    # -- rules -----------------------------------------------------------------------------------
    def applies(self, cmd: Command) -> bool:
        """ALFWorld's preconditions of the command in the current state."""
        v, here = cmd.verb, self.here()
        if v in ("look", "inventory", "help"):
            return True
        if v == "go":  # not where the agent already is (ALFWorld does not list that move)
            return cmd.recep in self.receptacles and cmd.recep != self.at
        if v == "examine":
            name = cmd.obj
            if name in self.receptacles:
                return self.at == name
            return name in self.objects and (self.holding == name or self._reachable_object(name))
        if v in ("open", "close"):
            return (here is not None and here.name == cmd.recep and here.openable
                    and here.opened == (v == "close"))
        if v == "take":  # lamps are fixtures (not pickupable in ALFRED)
            return (self.holding is None and here is not None and here.name == cmd.recep
                    and self._reachable_object(cmd.obj or "") and self.objects[cmd.obj or ""].otype != LAMP)
        if v == "use":
            o = self.objects.get(cmd.obj or "")
            return (o is not None and o.otype == LAMP and here is not None
                    and self.where.get(o.name) == here.name)
        if self.holding is None or cmd.obj != self.holding or here is None or here.name != cmd.recep:
            return False
        held = self.objects[self.holding]
        if v == "put":
            return here.visible and can_hold(self.room, here.rtype, held.otype)
        state = {"heat": "hot", "cool": "cool", "clean": "clean"}.get(v)
        return state is not None and here.rtype == APPLIANCE[state] and held.otype in STATE_OBJECTS[state]

    def apply(self, cmd: Command) -> str:
        """Carry out a command that applies (see :meth:`applies`); return ALFWorld's feedback."""
        v, here = cmd.verb, self.here()
        if v == "look":
            return self.look()
        if v == "inventory":
            return self.inventory()
        if v == "help":
            return HELP
        if v == "go":
            r = self.receptacles[cmd.recep or ""]
            self.at = r.name
            self._saw(r)
            return f"You arrive at {r.name}. {self.describe_receptacle(r)}"
        if v == "examine":
            if cmd.obj in self.receptacles:
                r = self.receptacles[cmd.obj]
                self._saw(r)
                return self.describe_receptacle(r)
            return self.describe_object(self.objects[cmd.obj or ""])
        assert here is not None
        if v == "open":
            here.opened = True
            self._saw(here)
            return f"You open the {here.name}. {self.describe_receptacle(here)}"
        if v == "close":
            here.opened = False
            return f"You close the {here.name}."
        if v == "take":
            name = cmd.obj or ""
            here.contents.remove(name)
            del self.where[name]
            self.holding = name
            return f"You pick up the {name} from the {here.name}."
        if v == "use":
            self.objects[cmd.obj or ""].toggled = True
            return f"You turn on the {cmd.obj}."  # ALFWorld's wording whatever the lamp's state was
        held = self.objects[self.holding or ""]
        if v == "put":
            here.contents.append(held.name)
            self.where[held.name] = here.name
            self.holding = None
            return f"You put the {held.name} in/on the {here.name}."
        if v == "heat":
            held.hot, held.cool = True, False
        elif v == "cool":
            held.cool, held.hot = True, False
        else:
            held.clean = True
        return f"You {v} the {held.name} using the {here.name}."

    def admissible(self) -> list[str]:
        """Every command that applies now, sorted (ALFWorld's admissible commands)."""
        out = ["help", "inventory", "look"] + [f"go to {r}" for r in self.receptacles if r != self.at]
        here = self.here()
        held = self.objects[self.holding] if self.holding else None
        if held is not None:
            out.append(f"examine {held.name}")
        if here is not None:
            out.append(f"examine {here.name}")
            if here.openable:
                out.append(f"{'close' if here.opened else 'open'} {here.name}")
            if here.visible:
                for name in here.contents:
                    out.append(f"examine {name}")
                    if held is None and self.objects[name].otype != LAMP:
                        out.append(f"take {name} from {here.name}")
            for name in here.contents:
                if self.objects[name].otype == LAMP:
                    out.append(f"use {name}")
            if held is not None:
                if here.visible and can_hold(self.room, here.rtype, held.otype):
                    out.append(f"put {held.name} in/on {here.name}")
                for verb, state in (("heat", "hot"), ("cool", "cool"), ("clean", "clean")):
                    if here.rtype == APPLIANCE[state] and held.otype in STATE_OBJECTS[state]:
                        out.append(f"{verb} {held.name} with {here.name}")
        return sorted(set(out))
