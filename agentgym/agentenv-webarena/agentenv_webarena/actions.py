"""WebArena's actions: what the agent writes, how it is read, and how it is told back as the previous action.

WebArena's agent answers in prose and puts its action between triple backticks ("In summary, the next action I
will perform is ```click [1234]```"); the first such block is the action (the phrase itself is not needed). The
action grammar is WebArena's id-based set, read as its ``create_id_based_action`` reads it (written from its code,
read, not copied): the keyword is the text before the first ``[`` (else the first word), matched exactly and
case-sensitively, and each action's arguments by WebArena's expressions, with their consequences kept:

- ``click [id]``, ``hover [id]``: a number in brackets; text after it is ignored;
- ``type [id] [text] [0|1]``: ``[1]`` (press Enter after typing) is added when the action does not end in ``[0]`` or
  ``[1]``; the text is greedy (``type [5] [a] [b] [1]`` types ``a] [b``); text on two lines does not parse;
- ``press [key+comb]``: each part named as Playwright names keys (``enter`` -> ``Enter``, ``f5`` -> ``F5``);
- ``scroll [up|down]`` (brackets optional; ``scroll [direction=down]`` does not parse, as in WebArena);
- ``goto [url]``, ``new_tab``, ``tab_focus [n]``, ``close_tab``, ``go_back``, ``go_forward``;
- ``stop [answer]``: the answer on one line; anything else (``stop``, a multi-line answer) is the empty answer.

Anything else is an :class:`ActionParsingError` whose message is WebArena's (``Invalid click action ...``). One
deliberate difference: text WebArena's keyboard table cannot type (a tab, code points from 1000 up such as CJK or
curly quotes) is refused here with a message; WebArena fails on it with a ``KeyError`` that ends the task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

SPLITTER = "```"
ANSWER_PHRASE = "In summary, the next action I will perform is"
#: Playwright's names of the keys WebArena maps from lower case
KEY_NAMES = {"backquote": "Backquote", "minus": "Minus", "equal": "Equal", "backslash": "Backslash",
             "backspace": "Backspace", "meta": "Meta", "tab": "Tab", "delete": "Delete", "escape": "Escape",
             "arrowdown": "ArrowDown", "end": "End", "enter": "Enter", "home": "Home", "insert": "Insert",
             "pagedown": "PageDown", "pageup": "PageUp", "arrowright": "ArrowRight", "arrowup": "ArrowUp",
             **{f"f{i}": f"F{i}" for i in range(1, 13)}}
_BLOCK = re.compile(re.escape(SPLITTER) + r"((.|\n)*?)" + re.escape(SPLITTER))


class ActionType(IntEnum):
    """WebArena's action types (its numbering)."""

    NONE = 0
    SCROLL = 1
    KEY_PRESS = 2
    CLICK = 6
    TYPE = 7
    HOVER = 8
    PAGE_FOCUS = 9
    NEW_TAB = 10
    GO_BACK = 11
    GO_FORWARD = 12
    GOTO_URL = 13
    PAGE_CLOSE = 14
    STOP = 17


class ActionParsingError(ValueError):
    """The reply holds no action WebArena can read (its message says why)."""


@dataclass(frozen=True)
class Action:
    kind: ActionType
    element_id: str = ""
    text: str = ""  # what TYPE types ("\n" last when it presses Enter)
    key_comb: str = ""
    direction: str = ""
    url: str = ""
    page_number: int = 0
    answer: str = ""


def typeable(ch: str) -> bool:
    """Whether WebArena's keyboard table holds the character (printable ASCII, code points 129-999, newline)."""
    code = ord(ch)
    return ch == "\n" or 32 <= code <= 127 or 129 <= code <= 999


def extract(reply: str) -> str:
    """The action in a reply: the first text between two triple backticks, stripped."""
    found = _BLOCK.search(reply)
    if found is None:
        raise ActionParsingError(f'Cannot find the answer phrase "{ANSWER_PHRASE}" in "{reply}"')
    return found.group(1).strip()


def _arg(pattern: str, text: str, what: str) -> re.Match[str]:
    found = re.search(pattern, text)
    if found is None:
        raise ActionParsingError(f"Invalid {what} action {text}")
    return found


def parse(text: str) -> Action:
    """One action in WebArena's id-based grammar (module docstring)."""
    text = text.strip()
    if not text:
        raise ActionParsingError("Invalid action (empty)")
    keyword = text.split("[")[0].strip() if "[" in text else text.split()[0].strip()
    if keyword in ("click", "hover"):
        found = _arg(rf"{keyword} ?\[(\d+)\]", text, keyword)
        return Action(ActionType.CLICK if keyword == "click" else ActionType.HOVER, element_id=found.group(1))
    if keyword == "type":
        if not (text.endswith("[0]") or text.endswith("[1]")):
            text += " [1]"
        found = _arg(r"type ?\[(\d+)\] ?\[(.+)\] ?\[(\d+)\]", text, "type")
        element_id, typed, enter = found.groups()
        if enter == "1":
            typed += "\n"
        bad = sorted({ch for ch in typed if not typeable(ch)})
        if bad:
            raise ActionParsingError(f"Invalid type action {text}: WebArena's keyboard cannot type {bad}")
        return Action(ActionType.TYPE, element_id=element_id, text=typed)
    if keyword == "press":
        found = _arg(r"press ?\[(.+)\]", text, "press")
        keys = "+".join(KEY_NAMES.get(part.lower(), part) for part in found.group(1).split("+"))
        return Action(ActionType.KEY_PRESS, key_comb=keys)
    if keyword == "scroll":
        found = _arg(r"scroll ?\[?(up|down)\]?", text, "scroll")
        return Action(ActionType.SCROLL, direction=found.group(1))
    if keyword == "goto":
        return Action(ActionType.GOTO_URL, url=_arg(r"goto ?\[(.+)\]", text, "goto").group(1))
    if keyword == "tab_focus":
        return Action(ActionType.PAGE_FOCUS, page_number=int(_arg(r"tab_focus ?\[(\d+)\]", text, "tab_focus").group(1)))
    if keyword == "stop":
        found = re.search(r"stop ?\[(.+)\]", text)
        return Action(ActionType.STOP, answer=found.group(1) if found else "")
    simple = {"new_tab": ActionType.NEW_TAB, "go_back": ActionType.GO_BACK, "go_forward": ActionType.GO_FORWARD,
              "close_tab": ActionType.PAGE_CLOSE}
    if keyword in simple:
        return Action(simple[keyword])
    raise ActionParsingError(f"Invalid action {text}")


def read_reply(reply: str) -> Action:
    """The action of a whole reply (the first backtick block), else the reply itself read as an action."""
    try:
        return parse(extract(reply))
    except ActionParsingError:
        if SPLITTER in reply:
            raise
        return parse(reply)


def describe(action: Action, lines: dict[str, str]) -> str:
    """The action as WebArena's prompt shows it next turn (its "PREVIOUS ACTION"); ``lines``: each printed node's
    line (without the indent) in the observation the action was taken on."""
    kind = action.kind
    if kind in (ActionType.CLICK, ActionType.HOVER, ActionType.TYPE):
        verb = {ActionType.CLICK: "click", ActionType.HOVER: "hover", ActionType.TYPE: "type"}[kind]
        line = lines.get(action.element_id)
        if line is None:
            return (f'Attempt to perfom "{verb}" on element "[{action.element_id}]" but no matching element found. '
                    "Please check the observation more carefully.")
        content = " ".join(line.split()[1:])
        if kind == ActionType.TYPE:
            typed = action.text.replace("\n", " ")
            return f"type [{action.element_id}] [{typed}] where [{action.element_id}] is {content}"
        return f"{verb} [{action.element_id}] where [{action.element_id}] is {content}"
    return {ActionType.SCROLL: f"scroll [{action.direction}]", ActionType.KEY_PRESS: f"press [{action.key_comb}]",
            ActionType.GOTO_URL: f"goto [{action.url}]", ActionType.NEW_TAB: "new_tab",
            ActionType.PAGE_CLOSE: "close_tab", ActionType.GO_BACK: "go_back", ActionType.GO_FORWARD: "go_forward",
            ActionType.PAGE_FOCUS: f"page_focus [{action.page_number}]", ActionType.STOP: f"stop [{action.answer}]",
            ActionType.NONE: "none"}[kind]

