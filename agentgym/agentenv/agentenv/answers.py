"""Grading a final answer: how much of what a task expects the answer given to ``finish`` holds.

Agents write one answer in many harmless ways ("18.5", 18.5, "18.5 °C"; "yes." for "Yes"; a list
as a JSON array, as the text "['a', 'b']" or as "a, b"), and a reward that hung on the spelling
would teach spelling, not the task. Two graders, for two kinds of expected answers:

- :func:`score` grades against a task's :class:`Check` s, one per part of the answer: numbers within a
  tolerance, texts with their accepted spellings; an array is compared position by position
  (``ordered=True``) or as a multiset (``ordered=False``), and surplus parts count against it.
- :func:`exact_score` grades against the expected value itself, as AgentBoard's tool tasks do: equal
  after normalization, a number read as the first number written, Yes/No read from the first word,
  a list as a set (|given ∩ expected| / |given ∪ expected|).
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Check", "exact_score", "normalize", "parts_of", "score", "to_number"]

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


# -- grading against checks ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Check:
    """One part of an answer: a number within a tolerance, or a text with its accepted spellings.

    The tolerance is absolute, or relative where a quantity is large (a distance in km): the larger
    of the two applies."""

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
    """Lower case, outer quotes/brackets and final punctuation dropped, single spaces (how a text is compared)."""
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
    """A number from a number, or the first number written in a text ("$1,643.9 km" -> 1643.9)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return to_number(value[0])
    if isinstance(value, str):
        m = _NUMBER.search(re.sub(r"(?<=\d),(?=\d{3}\b)", "", value))  # thousands separators: 1,643.9 -> 1643.9
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


def score(answer: Any, checks: tuple[Check, ...], *, ordered: bool) -> float:
    """The share of the checks the answer passes, in [0, 1]: passed / max(checks, parts given).

    ``ordered``: the answer's parts are matched to the checks position by position (the lowest and
    the highest temperature of a week); otherwise as a multiset, each part serving at most one check
    (a film's genres, in any order). With one check, an ordered answer is one value, so a list given
    for it is read whole (``[18.5]`` is 18.5); an unordered one is a list of one item, so the
    surplus items of a longer list count against it."""
    if not checks:
        return 0.0
    parts = parts_of(answer, len(checks))
    if len(checks) == 1 and (ordered or len(parts) == 1):
        return 1.0 if checks[0].passes(parts[0] if len(parts) == 1 else answer) else 0.0
    if ordered:
        passed = sum(1 for check, part in zip(checks, parts, strict=False) if check.passes(part))
    else:
        free = list(parts)
        passed = 0
        for check in checks:
            hit = next((i for i, part in enumerate(free) if check.passes(part)), None)
            if hit is not None:
                passed += 1
                free.pop(hit)
    return passed / max(len(checks), len(parts))


# -- grading against the expected value ------------------------------------------------------------------

_FIRST_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _plain(text: Any) -> str:
    """Case-folded text without surrounding quotes, spaces or a final full stop, single spaces."""
    s = re.sub(r"\s+", " ", str(text).strip().strip("'\"`").strip())
    return s.rstrip(".").strip().casefold()


def _as_list(answer: Any) -> list[Any]:
    """An answer read as a list: a list as is, "['a', 'b']" or '["a"]' parsed, else comma-separated parts."""
    if isinstance(answer, list):
        return answer
    text = str(answer).strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, (list, tuple)):
            return list(value)
        text = text[1:-1]
    return [part for part in (p.strip() for p in text.split(",")) if part]


def exact_score(given: Any, expected: str | int | list[str], *, ignore_spaces: bool = False) -> float:
    """How right ``given`` is for the expected value, in [0, 1].

    - a list: order does not matter; the reward is |given ∩ expected| / |given ∪ expected| (1.0 only
      for the exact set), each expected item present counting for and each extra item against;
    - a whole number: the given number, or the first number written in the text, must equal it;
    - Yes/No: the first word of the answer decides ("Yes, they did");
    - any other text: equal after :func:`_plain` normalization; ``ignore_spaces`` also ignores the
      spaces inside (for answer forms such as '60(minute)' that agents write with a space).

    A one-element list given for a single value is read as that element (any longer list is wrong).
    """
    if isinstance(expected, list):
        got = {_plain(x) for x in _as_list(given)} - {""}
        want = {_plain(x) for x in expected}
        return 1.0 if not got and not want else len(got & want) / len(got | want)
    if isinstance(given, list):
        if len(given) != 1:
            return 0.0
        given = given[0]
    if isinstance(expected, int) and not isinstance(expected, bool):
        if isinstance(given, (int, float)) and not isinstance(given, bool):
            return float(given == expected)
        m = _FIRST_NUMBER.search(str(given))
        return float(m is not None and float(m.group()) == expected)
    if _plain(expected) in ("yes", "no"):
        words = _plain(given).split()
        return float(bool(words) and words[0].strip(",.!") == _plain(expected))
    if ignore_spaces:
        return float(_plain(given).replace(" ", "") == _plain(expected).replace(" ", ""))
    return float(_plain(given) == _plain(expected))
