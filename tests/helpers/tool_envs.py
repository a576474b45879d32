"""A tool environment for end-to-end tests of tool calls (not registered; served with serve_in_thread)."""

from __future__ import annotations

import json
import random
import re

from agentenv.tools import ToolEnvironment, tool

_WORDS = ["apples", "bread", "milk", "eggs", "rice", "tea", "soap", "salt", "beans", "honey"]
TASK = re.compile(r"Record the list '(\w+)' with the items: ([\w, ]+)\.")


def _task(split: str, task_id: int) -> tuple[str, list[str]]:
    rng = random.Random(f"ledger:{split}:{task_id}")
    return f"list{task_id}", rng.sample(_WORDS, rng.randint(2, 4))


class LedgerEnv(ToolEnvironment):
    """Record a shopping list with one tool call, then finish: solved only when the tool received every
    field whole (the title and all items, in order, and a note spanning lines)."""

    name = "ledger"
    max_turns = 4
    instruction = "You keep shopping lists. Record the list you are given, then call finish with done."

    @classmethod
    def num_tasks(cls, split):
        return {"train": 50, "test": 10}[split]

    def reset(self, task_id, split, seed=None):
        self.title, self.items = _task(split, task_id)
        self.recorded = None
        return f"Record the list '{self.title}' with the items: {', '.join(self.items)}.", {}

    @tool
    def record(self, title: str, items: list[str], note: str) -> str:
        """Save a shopping list.

        Args:
            title: the list's name.
            items: what to buy, in order.
            note: a free note (may span lines).
        """
        self.recorded = {"title": title, "items": items, "note": note}
        return "recorded " + json.dumps(self.recorded)

    def grade(self, answer):
        whole = (self.recorded is not None and self.recorded["title"] == self.title
                 and self.recorded["items"] == self.items and "\n" in self.recorded["note"])
        return 1.0 if whole and answer.strip() == "done" else 0.0

    def expert_action(self):
        if self.recorded is None:
            return self.call("record", title=self.title, items=self.items, note="first line\nsecond line")
        return self.call("finish", answer="done")


def multiline_reply(first_observation: str) -> str:
    """What a model typically writes: the Action Input pretty-printed over several lines."""
    title, items = TASK.search(first_observation).groups()
    listed = ",\n    ".join(json.dumps(i) for i in items.split(", "))
    return ("Thought: I record the list first.\n"
            "Action: record with Action Input: {\n"
            f'  "title": "{title}",\n'
            f"  \"items\": [\n    {listed}\n  ],\n"
            '  "note": "bought weekly\\nkeep receipts"\n'
            "}")


FINISH = 'Thought: recorded.\nAction: finish with Action Input: {"answer": "done"}'
