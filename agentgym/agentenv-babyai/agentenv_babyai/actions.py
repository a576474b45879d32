"""The text action space and its parser.

Primitive actions map one-to-one onto minigrid's; ``pick up``/``toggle`` may name their
target ("pick up the red ball"), which is only accepted when that is what lies in front,
so an agent that names the wrong object learns it instead of silently acting on another.
"""

from __future__ import annotations

import re

from minigrid.core.actions import Actions
from minigrid.core.constants import COLOR_NAMES

TURN_LEFT, TURN_RIGHT, FORWARD = "turn left", "turn right", "move forward"
PICK_UP, DROP, TOGGLE = "pick up", "drop", "toggle"
CHECK = "check available actions"

#: the primitive actions, in minigrid's order
PRIMITIVES: tuple[str, ...] = (TURN_LEFT, TURN_RIGHT, FORWARD, PICK_UP, DROP, TOGGLE)
TEXT_OF: dict[int, str] = {
    Actions.left: TURN_LEFT,
    Actions.right: TURN_RIGHT,
    Actions.forward: FORWARD,
    Actions.pickup: PICK_UP,
    Actions.drop: DROP,
    Actions.toggle: TOGGLE,
}

_ALIASES: dict[str, int | str] = {
    TURN_LEFT: Actions.left, "left": Actions.left,
    TURN_RIGHT: Actions.right, "right": Actions.right,
    FORWARD: Actions.forward, "forward": Actions.forward, "go forward": Actions.forward,
    "move ahead": Actions.forward, "go straight": Actions.forward,
    PICK_UP: Actions.pickup, "pickup": Actions.pickup,
    DROP: Actions.drop, "put down": Actions.drop,
    TOGGLE: Actions.toggle,
    CHECK: CHECK, "check actions": CHECK, "available actions": CHECK,
}
_TARGETED = {"pick up": Actions.pickup, "pickup": Actions.pickup, "toggle": Actions.toggle}
_OBJ_TYPES = {"ball", "box", "key", "door"}
_ARTICLES = {"the", "a", "an"}
_SPACES = re.compile(r"\s+")
_STRIP = " \t\r\n.!\"'`*"


def normalize(text: str) -> str:
    return _SPACES.sub(" ", text.strip(_STRIP).lower()).strip(_STRIP)


def parse(text: str) -> tuple[int | str, tuple[str | None, str | None]] | None:
    """``(minigrid action or CHECK, (color, type) named by the action))``, or None if not understood.

    The named target is ``(None, None)`` for bare actions.
    """
    t = normalize(text)
    if t in _ALIASES:
        return _ALIASES[t], (None, None)
    for verb, action in _TARGETED.items():
        if t.startswith(verb + " "):
            words = [w for w in t[len(verb) + 1:].split(" ") if w not in _ARTICLES]
            if words and words[-1].isdigit():  # "pick up red ball 1": ids some prompts use
                words.pop()
            color = typ = None
            if words and words[-1] in _OBJ_TYPES:
                typ = words.pop()
            if words and words[-1] in COLOR_NAMES:
                color = words.pop()
            if words or (color is None and typ is None):
                return None
            return action, (color, typ)
    return None


def matches(obj, target: tuple[str | None, str | None]) -> bool:
    """Whether ``obj`` (a WorldObj or None) fits the (color, type) an action named."""
    color, typ = target
    if color is None and typ is None:
        return True
    if obj is None:
        return False
    return (color is None or obj.color == color) and (typ is None or obj.type == typ)
