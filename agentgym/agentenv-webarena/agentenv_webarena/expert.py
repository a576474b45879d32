"""The expert: a task's plan (steps over the site's data, named as the page names its elements) carried out through
the browser. Each step is found in the observation by role and name (``link 'My Orders'``); an element out of the
viewport is scrolled to first. It acts as an agent reading the observation would, by element ids."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from agentenv_webarena.axtree import NodeInfo
from agentenv_webarena.browser import VIEWPORT
from agentenv_webarena.tasks import Step

_LINE = re.compile(r"\[(\d+)\] (\S+) ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
MAX_SCROLLS = 8


def role_and_name(line: str) -> tuple[str, str] | None:
    """``[12] link 'My Orders' focused: True`` -> (``link``, ``My Orders``)."""
    found = _LINE.match(line.strip())
    if found is None:
        return None
    return found.group(2), ast.literal_eval(found.group(3))


def find(nodes: Mapping[str, NodeInfo], role: str, name: str, clickable: bool = False) -> str | None:
    """The id of the first printed node with this role and name; ``clickable``: only one whose centre (where an
    action acts) is in the viewport (a node cut by its lower edge is printed, but a click there hits nothing)."""
    for node_id, node in nodes.items():
        if role_and_name(node.text) == (role, name):
            if not clickable:
                return node_id
            if node.bound is not None:
                x, y, w, h = node.bound
                if 0 <= x + w / 2 < VIEWPORT["width"] and 0 <= y + h / 2 < VIEWPORT["height"]:
                    return node_id
    return None


def reply(action: str) -> str:
    """An action in WebArena's reply format (what its agent writes)."""
    return f"In summary, the next action I will perform is ```{action}```"


class Expert:
    """Follows one task's plan: :meth:`peek` says what it would do on the page ``nodes`` shows, :meth:`next` does
    it (the plan moves on)."""

    def __init__(self, plan: tuple[Step, ...]) -> None:
        self.plan = plan
        self.done = 0  # steps carried out
        self.scrolls = 0  # scrolls since the last step

    def peek(self, nodes: Mapping[str, NodeInfo]) -> tuple[str, str]:
        """(thought, action) for the page as ``nodes`` shows it."""
        return self._decide(nodes)[:2]

    def next(self, nodes: Mapping[str, NodeInfo]) -> tuple[str, str]:
        """(thought, action), and the plan moves on."""
        thought, action, self.done, self.scrolls = self._decide(nodes)
        return thought, action

    def _decide(self, nodes: Mapping[str, NodeInfo]) -> tuple[str, str, int, int]:
        """(thought, action, steps done after it, scrolls after it)."""
        done, scrolls = self.done, self.scrolls
        if done >= len(self.plan):
            return "The task is done.", "stop []", done, scrolls
        step = self.plan[done]
        kind = step[0]
        if kind == "stop":
            answer = step[1]
            thought = f"I have found the answer: {answer}." if answer else "The task is complete."
            return thought, f"stop [{answer}]", done + 1, scrolls
        if kind == "goto":
            return f"I will go to {step[1]}.", f"goto [{step[1]}]", done + 1, scrolls
        role, name = step[1], step[2]
        node_id = find(nodes, role, name, clickable=True)
        if node_id is None:
            if scrolls + 1 > MAX_SCROLLS:  # not on this page: give up as an agent would
                return f"I cannot find {role} '{name}'.", "stop []", len(self.plan), scrolls + 1
            return (f"I do not see {role} '{name}' yet; it may be further down the page.", "scroll [down]", done,
                    scrolls + 1)
        if kind == "click":
            return f"I will click the {role} '{name}'.", f"click [{node_id}]", done + 1, 0
        text, enter = step[3], step[4]
        return (f"I will type \"{text}\" into the {role} '{name}'" + (" and press Enter." if enter else "."),
                f"type [{node_id}] [{text}] [{int(enter)}]", done + 1, 0)
