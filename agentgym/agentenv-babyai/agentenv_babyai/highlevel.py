"""AgentGym's high-level BabyAI action set (the server option ``action_set=agentgym``).

AgentGym's BabyAI server does not expose minigrid's primitives alone: every observation lists
what can be done now, numbered per object name (``go to red ball 1``, ``pickup grey key 2``,
``toggle and go through blue closed door 1``), and a high-level action runs as a sequence of
minigrid primitives. This module reproduces that interface on our level objects:

- objects are those minigrid's 7x7 view shows (with its occlusion), nearest first (Manhattan
  distance, then further ahead, then left to right: AgentGym's order); an object's number is
  its rank among the visible objects of the same name (``red ball``, ``blue closed door``);
- routes are shortest sequences of turn/forward primitives found by a breadth-first search over
  (cell, heading) on the true grid, through empty cells and open doors only, ending facing the
  object (``go to``, ``pickup``, doors) or on it (``go to goal``); an object without a route
  is not offered.

The sentences follow AgentGym's observation format, so prompts and trajectories written for
AgentGym's server read the same here.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field

from minigrid.core.actions import Actions
from minigrid.core.world_object import WorldObj

from agentenv_babyai import render

LEFT, RIGHT, FORWARD = int(Actions.left), int(Actions.right), int(Actions.forward)
PICKUP, DROP, TOGGLE = int(Actions.pickup), int(Actions.drop), int(Actions.toggle)

CHECK = "check available actions"
#: AgentGym's reply to an action it does not offer
NOT_RECOGNIZED = "The action is not recognized. Please check valid actions."
#: verbs whose object is named and numbered, longest first (so "toggle and go through" wins over "toggle")
_NAMED_VERBS = ("toggle and go through ", "go through ", "go to ", "pickup ")
_SPACES = re.compile(r"\s+")
_NOISE = re.compile(r"[^a-z0-9 ]+")
_ARTICLES = {"the", "a", "an"}


@dataclass(frozen=True)
class Seen:
    """One visible object, with the words AgentGym uses for it."""

    obj: WorldObj
    name: str  # "red ball", "blue closed door"
    label: str  # "red ball 1": name and rank among visible objects of that name
    pos: tuple[int, int]  # world cell
    ahead: int
    right: int  # negative: to the left


@dataclass
class Table:
    """Everything the agentgym action set needs from one state, computed once per state."""

    seen: list[Seen]
    description: str
    #: offered action -> the minigrid primitives it runs (in AgentGym's listing order)
    plans: dict[str, list[int]] = field(default_factory=dict)
    #: actions that name something real but cannot be done now -> why (their refusal message)
    refusals: dict[str, str] = field(default_factory=dict)

    @property
    def actions(self) -> list[str]:
        return list(self.plans)

    def action_for(self, verb: str, seen: Seen) -> str | None:
        """The offered action doing ``verb`` (``"go to "``, ``"pickup "``, ...) on ``seen``; None if not offered."""
        text = verb + seen.label
        return text if text in self.plans else None

    def listing(self) -> str:
        """AgentGym's line ``Available actions: ["turn left", ...]``."""
        return "Available actions: " + json.dumps(self.actions)


def name(obj: WorldObj) -> str:
    """AgentGym's name of an object: colour first, and a door's state before ``door``."""
    if obj.type == "door":
        state = "open" if obj.is_open else ("locked" if obj.is_locked else "closed")
        return f"{obj.color} {state} door"
    return f"{obj.color} {obj.type}"


def seen_objects(level, viewer: render.Viewer) -> tuple[list[Seen], list, list[int]]:
    """The visible non-wall objects, numbered per name, and the view they came from."""
    cells, rows = viewer.view(level)
    ax, ay = int(level.agent_pos[0]), int(level.agent_pos[1])
    dx, dy = render.DIR_VEC[level.agent_dir]
    counts: dict[str, int] = {}
    out = []
    for k, obj in render.visible_objects(cells, rows):
        ahead, right = (render.VIEW - 1) - k // render.VIEW, k % render.VIEW - render.HALF
        n = name(obj)
        counts[n] = counts.get(n, 0) + 1
        pos = (ax + ahead * dx - right * dy, ay + ahead * dy + right * dx)  # the right vector is (-dy, dx)
        out.append(Seen(obj, n, f"{n} {counts[n]}", pos, ahead, right))
    return out, cells, rows


def _where(s: Seen) -> str:
    if s.right == 0:
        return f"right in front of you {s.ahead} steps away."
    side = "right" if s.right > 0 else "left"
    return f"{s.ahead} steps in front of you and {abs(s.right)} steps to your {side}."


def describe(level, seen: list[Seen], cells: list, rows: list[int]) -> str:
    """AgentGym's paragraph: the objects (with their numbers and offsets), the nearest wall or box
    straight ahead, and what the agent carries."""
    if seen:
        # AgentGym separates these sentences with two spaces; kept so its trajectories read the same
        text = "In front of you in this room, you can see several objects: " + "".join(
            f"There is a {s.label} {_where(s)}  " for s in seen)
    else:
        text = "You cannot see any objects within sight. "
    text += "The room has walls around you. "
    for ahead in range(1, render.VIEW):
        k = (render.VIEW - 1 - ahead) * render.VIEW + render.HALF
        if not render.visible(rows, k):
            break
        c = cells[k]
        if c is not None and c.type in ("wall", "box"):
            text += f"You are facing a {c.type} {ahead} steps away. "
            break
    carrying = level.carrying
    text += f"You are carrying a {carrying.color} {carrying.type}." if carrying else "You are not carrying anything."
    return text


def _passable(obj: WorldObj | None) -> bool:
    """Whether a route may cross the cell: empty floor, an open door, a goal (never lava)."""
    return obj is None or (obj.can_overlap() and obj.type != "lava")


def routes(level, facing: set[tuple[int, int]], onto: set[tuple[int, int]] = frozenset()) -> dict:
    """Shortest primitive routes from the agent's pose: to face each cell of ``facing``, to stand on
    each cell of ``onto``. Keys are ``("face", cell)`` / ``("onto", cell)``; unreachable cells are absent.

    One breadth-first search over (x, y, heading), forward tried before turns (AgentGym's order),
    stopped once every target has been reached.
    """
    grid = level.grid
    flat, w, h = grid.grid, grid.width, grid.height
    start = (int(level.agent_pos[0]), int(level.agent_pos[1]), int(level.agent_dir))
    parent: dict[tuple[int, int, int], tuple[tuple[int, int, int], int] | None] = {start: None}
    queue = deque([start])
    found: dict[tuple[str, tuple[int, int]], list[int]] = {}
    wanted = len(facing) + len(onto)

    def path_to(state: tuple[int, int, int]) -> list[int]:
        out = []
        while parent[state] is not None:
            state, act = parent[state]
            out.append(act)
        return out[::-1]

    while queue and len(found) < wanted:
        state = queue.popleft()
        x, y, d = state
        dx, dy = render.DIR_VEC[d]
        front = (x + dx, y + dy)
        if front in facing and ("face", front) not in found:
            found[("face", front)] = path_to(state)
        if (x, y) in onto and ("onto", (x, y)) not in found:
            found[("onto", (x, y))] = path_to(state)
        fx, fy = front
        nexts = []
        if 0 <= fx < w and 0 <= fy < h and _passable(flat[fy * w + fx]):
            nexts.append(((fx, fy, d), FORWARD))
        nexts.append(((x, y, (d - 1) % 4), LEFT))
        nexts.append(((x, y, (d + 1) % 4), RIGHT))
        for nxt, act in nexts:
            if nxt not in parent:
                parent[nxt] = (state, act)
                queue.append(nxt)
    return found


def _beyond(level, door: Seen, route: list[int]) -> bool:
    """Whether the cell behind ``door``, seen from where ``route`` ends, can be stepped onto."""
    x, y, d = int(level.agent_pos[0]), int(level.agent_pos[1]), int(level.agent_dir)
    for act in route:
        if act == FORWARD:
            dx, dy = render.DIR_VEC[d]
            x, y = x + dx, y + dy
        else:
            d = (d + (1 if act == RIGHT else -1)) % 4
    dx, dy = render.DIR_VEC[d]
    bx, by = door.pos[0] + dx, door.pos[1] + dy
    grid = level.grid
    return 0 <= bx < grid.width and 0 <= by < grid.height and _passable(grid.get(bx, by))


def build(level, viewer: render.Viewer) -> Table:
    """The observation paragraph and the action table of the level's current state.

    Listing order follows AgentGym's server: turns, move forward, pickups, drop, door actions,
    go to goal, go to, check.
    """
    seen, cells, rows = seen_objects(level, viewer)
    table = Table(seen, describe(level, seen, cells, rows))
    plans, refusals = table.plans, table.refusals
    carrying = level.carrying
    front = cells[render.FRONT_IDX]
    found = routes(level, {s.pos for s in seen if s.obj.type != "goal"},
                   {s.pos for s in seen if s.obj.type == "goal"})

    plans["turn left"], plans["turn right"] = [LEFT], [RIGHT]
    if _passable(front):
        plans["move forward"] = [FORWARD]
    else:
        refusals["move forward"] = f"You cannot move forward: {render.a_name(front)} is in the way."

    for s in seen:
        if not s.obj.can_pickup():
            continue
        action = f"pickup {s.label}"
        route = found.get(("face", s.pos))
        if carrying is not None:
            refusals[action] = f"You cannot pick up the {s.label}: you are already carrying a " \
                               f"{carrying.color} {carrying.type}; drop it first."
        elif route is None:
            refusals[action] = f"You cannot pick up the {s.label}: no path leads to it."
        else:
            plans[action] = [*route, PICKUP]

    if carrying is None:
        refusals["drop"] = "You cannot drop anything: you are not carrying anything."
    elif front is not None:
        refusals["drop"] = f"You cannot drop the {carrying.color} {carrying.type} here: " \
                           f"{render.a_name(front)} is in front of you."
    else:
        plans["drop"] = [DROP]

    for s in seen:
        if s.obj.type != "door":
            continue
        route = found.get(("face", s.pos))
        through = f"go through {s.label}"
        toggle_through = f"toggle and go through {s.label}"
        if s.obj.is_open:
            if route is None:
                refusals[through] = f"You cannot go through the {s.label}: no path leads to it."
            else:
                plans[through] = [*route, FORWARD] + ([FORWARD] if _beyond(level, s, route) else [])
            continue
        refusals[through] = f"You cannot go through the {s.label}: it is not open; toggle it first."
        if s.obj.is_locked and (carrying is None or carrying.type != "key" or carrying.color != s.obj.color):
            refusals[toggle_through] = f"You cannot open the {s.label}: it is locked and you are not carrying " \
                                       f"the {s.obj.color} key."
            if route == []:
                refusals["toggle"] = refusals[toggle_through]
            continue
        if route is None:
            refusals[toggle_through] = f"You cannot toggle and go through the {s.label}: no path leads to it."
            continue
        plans[toggle_through] = [*route, TOGGLE, FORWARD] + ([FORWARD] if _beyond(level, s, route) else [])
        if not route:
            plans["toggle"] = [TOGGLE]
    if "toggle" not in plans and "toggle" not in refusals:
        refusals["toggle"] = "There is no closed door in front of you to toggle."

    for s in seen:
        if s.obj.type == "goal":
            route = found.get(("onto", s.pos))
            if route is None:
                refusals["go to goal"] = "You cannot go to the goal: no path leads to it."
            else:
                plans.setdefault("go to goal", route)
    for s in seen:
        if s.obj.type == "goal":
            continue
        route = found.get(("face", s.pos))
        if route is None:
            refusals[f"go to {s.label}"] = f"You cannot go to the {s.label}: no path leads to it."
        else:
            plans[f"go to {s.label}"] = route

    plans[CHECK] = []
    return table


def normalize(text: str, table: Table) -> str:
    """The canonical form of an action as an agent may write it: case, punctuation and articles
    ignored, ``pick up`` read as ``pickup``, a missing number read as 1, bare ``pickup`` as picking
    up what is in front. Returns the text unchanged (normalized) when it is none of those."""
    t = _SPACES.sub(" ", _NOISE.sub(" ", text.lower())).strip()
    t = " ".join(w for w in t.split(" ") if w not in _ARTICLES)
    if t.startswith("pick up"):
        t = "pickup" + t[len("pick up"):]
    if t.startswith("check"):
        return CHECK
    if t == "pickup":
        ahead = [s for s in table.seen if s.ahead == 1 and s.right == 0]
        return f"pickup {ahead[0].label}" if ahead else t
    if t in table.plans or t in table.refusals:
        return t
    for verb in _NAMED_VERBS:
        if t.startswith(verb) and not t[-1].isdigit() and t != "go to goal":
            return t + " 1"
    return t
