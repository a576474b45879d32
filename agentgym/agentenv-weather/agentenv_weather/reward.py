"""Grading a finished answer: the share of the task's checks that the answer passes.

A task's answer has one part (a number, a city, a date, Yes/No) or several (an array, e.g. the
lowest and highest temperature of a week); each part is one check (:class:`agentenv.answers.Check`).
Numbers pass within a tolerance (absolute, or relative for large quantities such as distances); text
passes when it equals the expected text or one of its accepted spellings after normalization (case,
spacing, quotes and final punctuation ignored). An array answer is compared position by position
(its parts mean different things: the lowest, then the highest), and surplus parts count against
it: reward = passed checks / max(checks, parts given).
"""

from __future__ import annotations

from typing import Any

from agentenv.answers import Check
from agentenv.answers import score as _score


def score(answer: Any, checks: tuple[Check, ...]) -> float:
    """The share of checks the answer passes, in [0, 1], array parts in order (see the module's docstring)."""
    return _score(answer, checks, ordered=True)
