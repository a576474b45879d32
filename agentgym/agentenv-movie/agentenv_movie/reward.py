"""Grading a finished answer: the share of the task's checks that the answer passes.

A task's answer has one part (a name, a title, a date, a number, Yes/No) or several (an array,
e.g. a film's genres or production companies); each part is one check
(:class:`agentenv.answers.Check`). Numbers pass within a tolerance; text passes when it equals the
expected text or one of its accepted spellings after normalization (case, spacing, quotes and final
punctuation ignored). An array answer is compared as a set (each expected item matched by a
different given item, in any order, as upstream sorts lists), and surplus items count against it:
reward = passed checks / max(checks, items given).
"""

from __future__ import annotations

from typing import Any

from agentenv.answers import Check
from agentenv.answers import score as _score


def score(answer: Any, checks: tuple[Check, ...]) -> float:
    """The share of checks the answer passes, in [0, 1], array items in any order (see the module's docstring)."""
    return _score(answer, checks, ordered=False)
