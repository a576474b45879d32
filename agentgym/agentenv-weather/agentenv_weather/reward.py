"""Grading a finished answer: the share of the task's checks that the answer passes.

A task's answer has one part (a number, a city, a date, Yes/No) or several (an array, e.g. the
lowest and highest temperature of a week); each part is one check. Numbers pass within a
tolerance (absolute, or relative for large quantities such as distances); text passes when it
equals the expected text or one of its accepted spellings after normalization (case, spacing,
quotes and final punctuation ignored). An array answer is compared position by position, and
surplus parts count against it: reward = passed checks / max(checks, parts given).
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from typing import Any

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Check:
    """One part of an answer: a number within a tolerance, or a text with its accepted spellings."""

    expected: float | str
    abs_tol: float = 0.1
    rel_tol: float = 0.0
    accept: tuple[str, ...] = ()

    @property
    def numeric(self) -> bool:
        return not isinstance(self.expected, str)

    def passes(self, given: Any) -> bool:
        if self.numeric:
            value = to_number(given)
            if value is None:
                return False
            target = float(self.expected)
            return abs(value - target) <= max(self.abs_tol, self.rel_tol * abs(target)) + 1e-9
        text = normalize(given)
        return bool(text) and text in {normalize(self.expected), *(normalize(a) for a in self.accept)}


def normalize(value: Any) -> str:
    """Lower case, outer quotes/brackets and final punctuation dropped, single spaces."""
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, (int, float)):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(normalize(v) for v in value)
    text = str(value).strip().lower()
    text = text.strip(" \t\n\"'`[]().!?;:")
    return " ".join(text.split())


def to_number(value: Any) -> float | None:
    """A number from a number, or the first number written in a text ("18.5 °C" -> 18.5)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return to_number(value[0])
    if isinstance(value, str):
        m = _NUMBER.search(re.sub(r"(?<=\d),(?=\d{3}\b)", "", value))  # 1,643.9 -> 1643.9
        return float(m.group()) if m else None
    return None


def parts_of(answer: Any, expected_parts: int) -> list[Any]:
    """The answer as a list of parts: a list as it is, a text holding a JSON/Python list read as one,
    a comma-separated text split when several parts are expected, anything else as one part."""
    if isinstance(answer, (list, tuple)):
        return list(answer)
    if isinstance(answer, str):
        text = answer.strip()
        if text.startswith("[") and text.endswith("]"):
            for loader in (json.loads, ast.literal_eval):
                try:
                    value = loader(text)
                except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
                    continue
                if isinstance(value, (list, tuple)):
                    return list(value)
        if expected_parts > 1 and "," in text:
            return [p.strip() for p in text.strip("[]").split(",")]
    return [answer]


def score(answer: Any, checks: tuple[Check, ...]) -> float:
    """The share of checks the answer passes, in [0, 1] (see the module's docstring)."""
    if not checks:
        return 0.0
    parts = parts_of(answer, len(checks))
    if len(checks) == 1:
        return 1.0 if checks[0].passes(parts[0] if len(parts) == 1 else answer) else 0.0
    passed = sum(1 for check, part in zip(checks, parts, strict=False) if check.passes(part))
    return passed / max(len(checks), len(parts))
