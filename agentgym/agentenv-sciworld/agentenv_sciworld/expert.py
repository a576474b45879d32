"""The expert: ScienceWorld's own gold action sequence for the loaded variation, followed in order.

The simulator writes the gold sequence when a task is loaded with ``generateGoldPath`` (by running
its scripted solution on the world, which takes up to ~30 s on the longest tasks), so the environment
asks for it only when the expert is first consulted in an episode. ``GoldPath`` keeps the position in
the sequence: an action equal to the next gold action advances it, any other action leaves it (the
expert then still proposes the gold action it was at: the best it can do, since the sequence was
written for the unperturbed world). ``thought`` says, in words an agent could use, why an action
is taken; it is read from the action's verb and the task.
"""

from __future__ import annotations

import re


def normalize(action: str) -> str:
    """Case and spacing do not matter to the simulator's parser."""
    return " ".join(action.lower().split())


class GoldPath:
    """A gold action sequence and how far an episode has followed it."""

    def __init__(self, actions: list[str]) -> None:
        # the wrapper returns a one-line error instead of a sequence when no gold path was generated
        self.actions = [a for a in actions if a and not a.startswith("ERROR")]
        self.pos = 0

    def observe(self, action: str) -> None:
        """An action was taken in the episode: if it is the next gold action, move past it."""
        if self.pos < len(self.actions) and normalize(action) == normalize(self.actions[self.pos]):
            self.pos += 1

    def next(self) -> str | None:
        """The next gold action; None when the sequence is used up."""
        return self.actions[self.pos] if self.pos < len(self.actions) else None


#: what the expert does once the gold sequence is used up without success: let time pass (heating,
#: growing and mixing processes finish on their own)
FALLBACK_ACTION = "wait1"

_TEMPLATES: list[tuple[str, str]] = [
    (r"open door to (.+)", "The door to the {0} is closed; I open it so I can go there."),
    (r"open (.+)", "I open the {0} to reach what is inside."),
    (r"close (.+)", "I close the {0}."),
    (r"go to (.+)", "I go to the {0}, where I expect to find what the task needs."),
    (r"look around", "I look around to see what is in this room."),
    (r"look at (.+)", "I look at the {0} to check its state."),
    (r"look in (.+)", "I look in the {0} to see what it contains."),
    (r"examine (.+)", "I examine the {0} to check its state."),
    (r"read (.+)", "I read the {0}; it may tell me what I need to know."),
    (r"pick up (.+)", "I pick up the {0} so I can take it with me."),
    (r"(?:put down|drop) (.+)", "I put down the {0}; I no longer need to carry it."),
    (r"focus on (.+)", "The {0} is what the task is about, so I focus on it."),
    (r"move (.+) to (.+)", "I move the {0} to the {1}, as the task requires."),
    (r"pour (.+) (?:in|into) (.+)", "I pour the {0} into the {1}."),
    (r"dunk (.+) (?:in|into) (.+)", "I dunk the {0} into the {1}."),
    (r"mix (.+)", "Everything needed is in the {0}; I mix it."),
    (r"activate (.+)", "I turn on the {0} to start the process the task needs."),
    (r"deactivate (.+)", "I turn off the {0}; it has done its job."),
    (r"use (.+) on (.+)", "I use the {0} on the {1} to measure or act on it."),
    (r"use (.+)", "I use the {0}."),
    (r"connect (.+) to (.+)", "I connect the {0} to the {1} to build the circuit."),
    (r"disconnect (.+)", "I disconnect the {0}."),
    (r"eat (.+)", "I eat the {0}."),
    (r"flush (.+)", "I flush the {0}."),
    (r"wait1?", "I wait and let time pass so the process can progress."),
    (r"inventory", "I check what I am carrying."),
    (r"task", "I reread the task."),
    (r"\d+", "Several objects match what I meant; I choose option {whole}."),
]
_COMPILED = [(re.compile(pattern + r"$", re.IGNORECASE), text) for pattern, text in _TEMPLATES]


def thought(action: str, task_description: str = "", first: bool = False) -> str:
    """Why the expert takes ``action``; the first thought of an episode restates the task."""
    act = " ".join(action.split())
    reason = f"Next I {act}."
    for pattern, text in _COMPILED:
        m = pattern.match(act)
        if m:
            reason = text.format(*m.groups(), whole=act)
            break
    if first and task_description:
        return f"{task_description.strip()} {reason}"
    return reason
