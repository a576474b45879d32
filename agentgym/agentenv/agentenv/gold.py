"""Gold programs: an expert that follows a task's known solution from wherever the episode stands.

A generated task usually knows the tool calls that find its answer, because it was built by making
them. A tool environment states them (:meth:`agentenv.tools.ToolEnvironment.gold_program`, ending
with ``finish``) and the base class's expert follows them: its action is the next call of the
program that has not been made, its thought that call's reason. The calls made are the episode's
own (every call a tool ran, whoever made it), so the expert also takes over after another policy's
moves without repeating what they already did.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GoldCall", "next_call"]


@dataclass(frozen=True)
class GoldCall:
    """One call of a gold program: a tool, its arguments, and why an agent would make it (the expert's
    ``Thought:`` in trajectories, so a model cloning them learns to say what the call is for)."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    thought: str = ""


def next_call(program: Sequence[GoldCall], made: Sequence[tuple[Hashable, bool]],
              key: Callable[[GoldCall], Hashable], *, in_order: bool = False) -> GoldCall:
    """The call of ``program`` to make next, given ``made``: (key, answered) of each call a tool ran so
    far, oldest first; ``answered`` is False where the tool refused it (a ToolError that is no answer).

    By default (reading tools) a call counts as made whenever it was answered: a lookup the agent
    already did needs no repeating, whatever came between, but a refused one is made again, since it
    may have been refused for want of an earlier call of the program (a graph not loaded yet).

    ``in_order`` (editing tools): a call counts only when made after the program's previous call (the
    same edit made before a sort is not the edit the program makes after it), and then whatever the
    tool said: the calls before it were made, so making it again would only meet the same refusal.

    Once every call is made, the program's last one (its ``finish``) again.
    """
    if not program:
        raise ValueError("a gold program needs at least one call (its finish)")
    keys = [key(call) for call in program]
    if in_order:
        done = 0
        for k, _ in made:
            if done < len(keys) and k == keys[done]:
                done += 1
        return program[done] if done < len(program) else program[-1]
    answered = {k for k, ok in made if ok}
    return next((call for call, k in zip(program, keys, strict=True) if k not in answered), program[-1])
