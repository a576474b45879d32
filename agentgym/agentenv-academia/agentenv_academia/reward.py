"""Grading a finished answer against the task's: the share of the answer's checks that hold.

AgentGym compares the finish answer with its ground truth exactly (lists sorted first). Agents
write the same answer in many harmless ways ("4", 4, "4 collaborators"; "yes." for "Yes"; a list
as a JSON array or as the string "['a', 'b']"), so answers are normalised before they are compared:

- a number: the first number in the answer must equal it (one check);
- a text (a title, a name, a venue, Yes/No): equal after case folding, trimming quotes, spaces and a
  final full stop (one check); a one-element list is read as its element;
- a list: order does not matter; each expected item present is a check and each extra item a failed
  check, so the reward is |given ∩ expected| / |given ∪ expected| (1.0 only for the exact set).
"""

from __future__ import annotations

import ast
import re
from typing import Any

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def norm(text: Any) -> str:
    """Case-folded text without surrounding quotes, spaces or a final full stop."""
    s = str(text).strip().strip("'\"`").strip()
    s = re.sub(r"\s+", " ", s)
    return s.rstrip(".").strip().casefold()


def as_list(answer: Any) -> list[Any]:
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


def grade(given: Any, expected: str | int | list[str]) -> float:
    """The reward in [0, 1] of answer ``given`` for the expected answer."""
    if isinstance(expected, list):
        got = {norm(x) for x in as_list(given)} - {""}
        want = {norm(x) for x in expected}
        if not got and not want:
            return 1.0
        return len(got & want) / len(got | want)
    if isinstance(given, list):
        if len(given) != 1:
            return 0.0
        given = given[0]
    if isinstance(expected, int) and not isinstance(expected, bool):
        if isinstance(given, (int, float)) and not isinstance(given, bool):
            return float(given == expected)
        m = _NUMBER.search(str(given))
        return float(m is not None and float(m.group()) == expected)
    if norm(expected) in ("yes", "no"):
        words = norm(given).split()
        return float(bool(words) and words[0].strip(",.!") == norm(expected))
    return float(norm(given) == norm(expected))
