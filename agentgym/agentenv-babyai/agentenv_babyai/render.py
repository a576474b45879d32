"""Text rendering of the agent's 7x7 egocentric view.

We read the world grid directly over the 49 cells of the view (no numpy, no grid copies)
and apply minigrid's own occlusion rule (``Grid.process_vis``: walls and closed doors block
sight), so the text says exactly what minigrid's image observation would show.

View coordinates follow minigrid: ``i`` runs left to right (0..6), ``j`` far to near
(0..6); the agent stands at (3, 6) facing towards j = 0.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

from minigrid.core.world_object import Wall, WorldObj

VIEW = 7
HALF = VIEW // 2
AGENT_IDX = (VIEW - 1) * VIEW + HALF
FRONT_IDX = (VIEW - 2) * VIEW + HALF

#: minigrid agent_dir -> forward vector and compass word
DIR_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))
COMPASS = ("east", "south", "west", "north")

# Beyond the grid minigrid's view shows walls; one read-only instance stands for them.
_OUTSIDE = Wall()


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _rel_phrase(ahead: int, right: int) -> str:
    parts = []
    if ahead:
        parts.append(f"{_steps(ahead)} ahead")
    if right > 0:
        parts.append(f"{_steps(right)} to the right")
    elif right < 0:
        parts.append(f"{_steps(-right)} to the left")
    return " and ".join(parts)


# Per view cell: (ahead, right), its phrase, and its world offset for each direction.
_AHEAD_RIGHT = [((VIEW - 1) - j, i - HALF) for j in range(VIEW) for i in range(VIEW)]
REL_PHRASE = [_rel_phrase(a, r) for a, r in _AHEAD_RIGHT]
_OFFSETS = [
    [(a * dx - r * dy, a * dy + r * dx) for a, r in _AHEAD_RIGHT]  # right vector is (-dy, dx)
    for dx, dy in DIR_VEC
]
# Listing order: nearer (Manhattan) first, then further ahead, then left to right.
_ORDER = [(a + abs(r), -a, r) for a, r in _AHEAD_RIGHT]


def name(obj: WorldObj) -> str:
    """'red ball', 'locked blue door' (no article)."""
    if obj.type == "door":
        state = "open" if obj.is_open else ("locked" if obj.is_locked else "closed")
        return f"{state} {obj.color} door"
    if obj.type == "wall":
        return "wall"
    return f"{obj.color} {obj.type}"


def a_name(obj: WorldObj) -> str:
    n = name(obj)
    return ("an " if n[0] in "aeiou" else "a ") + n


ROW = (1 << VIEW) - 1


def _closure(transparent: int, seen: int) -> int:
    """Spread ``seen`` sideways through transparent cells of one 7-cell row (process_vis's row passes)."""
    while True:
        through = seen & transparent
        grown = seen | ((through << 1) & ROW) | (through >> 1)
        if grown == seen:
            return seen
        seen = grown


# Row closure for every (transparent, seen) pair of bitmasks, so a view costs 7 lookups.
_CLOSURE = tuple(_closure(t, m) for t in range(ROW + 1) for m in range(ROW + 1))


_ROW_OF = [k // VIEW for k in range(VIEW * VIEW)]
_BIT_OF = [1 << (k % VIEW) for k in range(VIEW * VIEW)]


class Viewer:
    """Reads the view of one level object; caches, per agent pose, which grid cells it covers.

    One per environment instance (the cache is the instance's own, never shared).
    """

    def __init__(self) -> None:
        self._getters: dict[tuple, Callable] = {}

    def view(self, env) -> tuple[list, list[int]]:
        """The 49 cells of the view (``None`` = empty floor) and, per row j, the bitmask of
        the cells the agent sees (bit i = column i), as minigrid's ``Grid.process_vis`` computes it."""
        grid = env.grid
        flat, w, h = grid.grid, grid.width, grid.height
        ax, ay = env.agent_pos
        key = (w, h, int(ax), int(ay), env.agent_dir)
        getter = self._getters.get(key)
        if getter is None:
            getter = self._getters[key] = _cell_getter(*key)
        if flat[0] is None or flat[0].type != "wall":
            cells = _cells_slow(flat, w, h, key[2], key[3], env.agent_dir)
        else:
            cells = list(getter(flat))
        # Cells that block sight (walls, closed doors), as a bitmask per row.
        opaque = [0] * VIEW
        for k, c in enumerate(cells):
            if c is not None and not c.see_behind():
                opaque[_ROW_OF[k]] |= _BIT_OF[k]
        # process_vis row by row, near to far: within a row sight spreads sideways through
        # transparent cells; each seen transparent cell lets the next row see its 3 neighbours.
        rows = [0] * VIEW
        seen = 1 << HALF
        for j in range(VIEW - 1, -1, -1):
            transparent = ROW ^ opaque[j]
            seen = _CLOSURE[(transparent << VIEW) | seen]
            rows[j] = seen
            through = seen & transparent
            seen = (through | (through << 1) | (through >> 1)) & ROW
            if not seen:
                break
        return cells, rows


def _cell_getter(w: int, h: int, ax: int, ay: int, d: int) -> Callable:
    """itemgetter of the view's cells from the flat grid; cells outside the grid read the
    corner (0, 0), which is a wall in every BabyAI level (checked by the caller)."""
    idx = []
    for ox, oy in _OFFSETS[d]:
        x, y = ax + ox, ay + oy
        idx.append(y * w + x if 0 <= x < w and 0 <= y < h else 0)
    return itemgetter(*idx)


def _cells_slow(flat: list, w: int, h: int, ax: int, ay: int, d: int) -> list:
    return [
        flat[y * w + x] if 0 <= x < w and 0 <= y < h else _OUTSIDE
        for x, y in [(ax + ox, ay + oy) for ox, oy in _OFFSETS[d]]
    ]


def visible(rows: list[int], k: int) -> bool:
    return bool(rows[k // VIEW] >> (k % VIEW) & 1)


def visible_objects(cells: list, rows: list[int]) -> list[tuple[int, WorldObj]]:
    """(view index, object) of every visible non-wall object, nearest first."""
    found = [
        (k, c)
        for k, c in enumerate(cells)
        if c is not None and c.type != "wall" and k != AGENT_IDX and rows[k // VIEW] >> (k % VIEW) & 1
    ]
    if len(found) > 1:
        found.sort(key=lambda kc: _ORDER[kc[0]])
    return found


def _wall_distances(cells: list, rows: list[int]) -> list[str]:
    """Nearest visible wall straight ahead, to the left and to the right."""
    out = []
    for label, ks in (
        ("ahead", [j * VIEW + HALF for j in range(VIEW - 2, -1, -1)]),
        ("to the left", [(VIEW - 1) * VIEW + i for i in range(HALF - 1, -1, -1)]),
        ("to the right", [(VIEW - 1) * VIEW + i for i in range(HALF + 1, VIEW)]),
    ):
        for n, k in enumerate(ks, 1):
            if not rows[k // VIEW] >> (k % VIEW) & 1:
                break
            c = cells[k]
            if c is not None and c.type == "wall":
                out.append(f"{_steps(n)} {label}")
                break
    return out


def describe(env, viewer: Viewer) -> str:
    """What the agent sees now, in words: heading, carried object, objects, front cell, walls."""
    cells, rows = viewer.view(env)
    carrying = env.carrying
    lines = [
        f"You are facing {COMPASS[env.agent_dir]}. "
        + (f"You are carrying {a_name(carrying)}." if carrying else "You are not carrying anything.")
    ]
    here = cells[AGENT_IDX]
    if here is not None and here.type == "door":
        lines.append(f"You are standing in the doorway of the open {here.color} door.")
    objs = visible_objects(cells, rows)
    if objs:
        lines.append("You see:")
        lines.extend(f"- {a_name(c)} {REL_PHRASE[k]}" for k, c in objs)
    else:
        lines.append("You see no objects.")
    front = cells[FRONT_IDX]
    if front is None:
        lines.append("In front of you: empty floor.")
    else:
        lines.append(f"In front of you: {a_name(front)}.")
    walls = _wall_distances(cells, rows)
    if walls:
        lines.append("Nearest walls: " + ", ".join(walls) + ".")
    return "\n".join(lines)
