"""The agent's turn limit per training step: a fixed limit, or a horizon curriculum.

AgentGym-RL's ScalingInter-RL starts RL with short episodes (the agent learns to act well in few
turns, with little noise from long failing episodes) and lets the horizon grow as training goes.
``agent.max_turns`` is either one limit or a schedule of ``[step, limit]`` pairs::

    agent:
      max_turns: [[1, 5], [20, 10], [40, 20]]   # steps 1-19: 5 turns, 20-39: 10, from 40 on: 20

A step before the schedule's first pair takes the first limit. The environment's own ``max_turns``
caps every limit. Validation episodes run with the schedule's last limit: the horizon the agent is
finally judged on, so validation numbers compare across the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class TurnSchedule:
    """Turn limits from a step on: ``points`` is ``((step, limit), ...)`` sorted by step."""

    points: tuple[tuple[int, int], ...]

    @classmethod
    def parse(cls, value: Any) -> TurnSchedule | None:
        """``None`` (no limit but the environment's), an int, or a list of ``[step, limit]`` pairs;
        anything else is a ValueError that says what is expected."""
        if value is None:
            return None
        if isinstance(value, bool):
            raise ValueError(f"agent.max_turns must be an int or a list of [step, limit] pairs, not {value!r}")
        if isinstance(value, int):
            return cls(((0, _positive(value)),))
        if isinstance(value, Sequence) and not isinstance(value, str) and value:
            points = []
            for pair in value:
                if (not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2
                        or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)):
                    raise ValueError(f"agent.max_turns: each entry must be a [step, limit] pair of ints, not {pair!r}")
                if pair[0] < 0:
                    raise ValueError(f"agent.max_turns: step {pair[0]} is negative")
                points.append((int(pair[0]), _positive(pair[1])))
            steps = [s for s, _ in points]
            if len(set(steps)) != len(steps):
                raise ValueError(f"agent.max_turns: a step appears twice in {value!r}")
            return cls(tuple(sorted(points)))
        raise ValueError(f"agent.max_turns must be an int or a list of [step, limit] pairs, not {value!r}")

    def limit(self, step: int | None) -> int:
        """The limit at training step ``step`` (None: the schedule's last, e.g. for validation)."""
        if step is None:
            return self.points[-1][1]
        current = self.points[0][1]
        for start, limit in self.points:
            if step >= start:
                current = limit
        return current


def _positive(limit: Any) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError(f"agent.max_turns: a turn limit must be a positive int, not {limit!r}")
    return limit
