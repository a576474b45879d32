"""The embedded task set: generated households with one task each, fixed by (split, task_id).

Task ``i`` has type ``TASK_TYPES[i % 6]``, so the six types take turns in both splits. Its room
(one where ALFRED has that type: heating and cooling in kitchens, cleaning in kitchens and
bathrooms, looking under a lamp in bedrooms and living rooms, placing anywhere), the numbered
receptacles, the objects and where they lie, the target object and receptacle and the goal
sentence (one of ALFWorld's two templates for the type) are drawn from a ``random.Random`` seeded
with a SHA-512 of ``agentenv-alfworld/v1/<split>/<task_id>``, so every machine builds the same tasks
whatever its hash seed. Receptacles that open start closed. For the placing tasks no object of
the target type starts in a receptacle of the target type, so the goal never holds at the start.
"""

from __future__ import annotations

import functools
import hashlib
import random
from dataclasses import dataclass

from agentenv_alfworld.catalogue import APPLIANCE, LAMP, LAMP_PLACES, OPENABLE, ROOMS, STATE_OBJECTS, Room
from agentenv_alfworld.reward import STATE_OF, TASK_TYPES, Goal
from agentenv_alfworld.world import BANNER, Obj, Receptacle, World

NUM_TASKS: dict[str, int] = {"train": 6000, "test": 200}
SEED_PREFIX = "agentenv-alfworld/v1"

#: rooms where ALFRED has each task type
ROOMS_FOR: dict[str, tuple[str, ...]] = {
    "pick_and_place_simple": ("kitchen", "livingroom", "bedroom", "bathroom"),
    "look_at_obj_in_light": ("livingroom", "bedroom"),
    "pick_clean_then_place_in_recep": ("kitchen", "bathroom"),
    "pick_heat_then_place_in_recep": ("kitchen",),
    "pick_cool_then_place_in_recep": ("kitchen",),
    "pick_two_obj_and_place": ("kitchen", "livingroom", "bedroom", "bathroom"),
}

#: ALFWorld's goal templates (its goal library), two per task type
TEMPLATES: dict[str, tuple[str, str]] = {
    "pick_and_place_simple": ("put a {obj} in {recep}", "put some {obj} on {recep}"),
    "look_at_obj_in_light": ("look at {obj} under the {light}", "examine the {obj} with the {light}"),
    "pick_clean_then_place_in_recep": ("put a clean {obj} in {recep}", "clean some {obj} and put it in {recep}"),
    "pick_heat_then_place_in_recep": ("put a hot {obj} in {recep}", "heat some {obj} and put it in {recep}"),
    "pick_cool_then_place_in_recep": ("put a cool {obj} in {recep}", "cool some {obj} and put it in {recep}"),
    "pick_two_obj_and_place": ("put two {obj} in {recep}", "find two {obj} and put them in {recep}"),
}


@dataclass(frozen=True)
class Task:
    """One generated task: its room, initial layout and goal (immutable; worlds are built from it)."""

    split: str
    task_id: int
    room: str
    goal: Goal
    goal_text: str
    #: (receptacle name, its contents in listing order), receptacles in listing order
    layout: tuple[tuple[str, tuple[str, ...]], ...]

    def new_world(self) -> World:
        """A fresh world in the task's initial state: the agent in the middle of the room, hands empty."""
        room = ROOMS[self.room]
        receptacles = [Receptacle(name, name.rsplit(" ", 1)[0], name.rsplit(" ", 1)[0] in OPENABLE,
                                  contents=list(contents)) for name, contents in self.layout]
        objects = [Obj(name, name.rsplit(" ", 1)[0]) for _, contents in self.layout for name in contents]
        return World(room, receptacles, objects)

    def intro(self) -> str:
        """The first observation, as ALFWorld opens a game: banner, overview, task."""
        return f"{BANNER}\n\n{self.new_world().overview()}\n\nYour task is to: {self.goal_text}."


def check_task_id(task_id: int, split: str) -> None:
    """ValueError for an unknown split, IndexError for an id outside the split."""
    if split not in NUM_TASKS:
        raise ValueError(f"unknown split {split!r}; alfworld has {', '.join(NUM_TASKS)}")
    if not 0 <= task_id < NUM_TASKS[split]:
        raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{NUM_TASKS[split] - 1})")


def _rng(split: str, task_id: int) -> random.Random:
    digest = hashlib.sha512(f"{SEED_PREFIX}/{split}/{task_id}".encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


@functools.lru_cache(maxsize=2048)
def generate(split: str, task_id: int) -> Task:
    """Task ``task_id`` of ``split`` (deterministic; cached, as resets of the same task are common)."""
    check_task_id(task_id, split)
    rng = _rng(split, task_id)
    task_type = TASK_TYPES[task_id % len(TASK_TYPES)]
    while True:  # a draw without a possible goal (rare: a room lacking the right receptacles) is redrawn
        room = ROOMS[rng.choice(ROOMS_FOR[task_type])]
        counts = {rtype: rng.randint(lo, hi) for rtype, (lo, hi) in sorted(room.receptacles.items())}
        names = [f"{rtype} {i}" for rtype, n in counts.items() for i in range(1, n + 1)]
        goal = _choose_goal(rng, task_type, room, {rtype for rtype, n in counts.items() if n})
        if goal is not None:
            break
    contents = _place_objects(rng, room, names, goal)
    template = rng.choice(TEMPLATES[task_type])
    text = template.format(obj=goal.otype, recep=goal.rtype, light=goal.light)
    layout = tuple((name, tuple(contents[name])) for name in names)
    return Task(split, task_id, room.name, goal, text, layout)


def _choose_goal(rng: random.Random, task_type: str, room: Room, present: set[str]) -> Goal | None:
    """A target object type (uniform among those possible here), then a target receptacle type."""
    state = STATE_OF.get(task_type)
    if task_type == "look_at_obj_in_light":
        if not room.has_lamp or not present & set(LAMP_PLACES):
            return None
        otypes = [o for o, places in sorted(room.objects.items()) if present & set(places)]
        return Goal(task_type, rng.choice(otypes), light=LAMP) if otypes else None
    if state is not None and APPLIANCE[state] not in present:
        return None
    options: list[tuple[str, list[str]]] = []
    for otype, places in sorted(room.objects.items()):
        if state is not None and otype not in STATE_OBJECTS[state]:
            continue
        targets = [r for r in places if r in present and r != (APPLIANCE[state] if state else None)]
        # the objects must have somewhere to start that is not a target receptacle
        targets = [r for r in targets if any(p in present and p != r for p in places)]
        if targets:
            options.append((otype, targets))
    if not options:
        return None
    otype, targets = rng.choice(options)
    return Goal(task_type, otype, rtype=rng.choice(targets))


def _place_objects(rng: random.Random, room: Room, names: list[str], goal: Goal) -> dict[str, list[str]]:
    """Target objects (two or three for pick_two, else one to three), five to nine other object
    types (one or two of each) and, in rooms with one, a desk lamp, each in a receptacle that can
    hold it."""
    present = {name.rsplit(" ", 1)[0] for name in names}
    n_target = rng.randint(2, 3) if goal.count == 2 else rng.randint(1, 3)
    others = [o for o, places in sorted(room.objects.items()) if o != goal.otype and present & set(places)]
    chosen = rng.sample(others, min(len(others), rng.randint(5, 9)))
    instances = [(goal.otype, i) for i in range(1, n_target + 1)]
    instances += [(o, i) for o in chosen for i in range(1, rng.randint(1, 2) + 1)]
    if room.has_lamp:
        instances.append((LAMP, 1))
    rng.shuffle(instances)
    contents: dict[str, list[str]] = {name: [] for name in names}
    for otype, i in instances:
        places = LAMP_PLACES if otype == LAMP else room.objects[otype]
        allowed = [n for n in names if n.rsplit(" ", 1)[0] in places]
        if otype == goal.otype and goal.rtype is not None and goal.state is None:
            allowed = [n for n in allowed if n.rsplit(" ", 1)[0] != goal.rtype]
        contents[rng.choice(allowed)].append(f"{otype} {i}")
    return contents
