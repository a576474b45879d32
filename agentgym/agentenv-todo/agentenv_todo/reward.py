"""Grading at finish: the share of the task's checks that hold, on the answer and on the final account.

- A question has one check, its answer (normalised as in :func:`answer_score`; a list scores
  |given ∩ expected| / |given ∪ expected|). A question changes nothing: if the account was changed
  anyway, a failed "nothing else changed" check is added (a right answer then earns 0.5).
- An operation has one check per task or project it must change (the final record equals the
  expected one: completed, its new due date, deleted, a favorite) and one check that nothing else
  changed (no other task or project edited or deleted); an operation that also asks a question
  adds the answer's check. An operation none of whose targets holds earns 0, whatever else holds.

1.0, every check holding, is success.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from agentenv_todo.data import Account

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def norm(text: Any) -> str:
    """Case-folded text without surrounding quotes, spaces or a final full stop."""
    s = re.sub(r"\s+", " ", str(text).strip().strip("'\"`").strip())
    return s.rstrip(".").strip().casefold()


def as_list(answer: Any) -> list[Any]:
    """An answer read as a list: a list as is, "['a', 'b']" parsed, else comma-separated parts."""
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


def answer_score(given: Any, expected: str | int | list[str]) -> float:
    """How right an answer is, in [0, 1]: numbers by value, Yes/No by the first word, texts after
    normalisation (a date exactly, '60(minute)' with or without spaces), lists as sets."""
    if isinstance(expected, list):
        got = {norm(x) for x in as_list(given)} - {""}
        want = {norm(x) for x in expected}
        return 1.0 if not got and not want else len(got & want) / len(got | want)
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
    return float(norm(given).replace(" ", "") == norm(expected).replace(" ", ""))


def _records(acc: Account) -> dict[str, Any]:
    snap = acc.snapshot()
    return {**{f"project:{k}": v for k, v in snap["projects"].items()},
            **{f"task:{k}": v for k, v in snap["tasks"].items()}}


def checks(initial: Account, final: Account, expected: Account | None, targets: tuple[str, ...],
           answer: Any, expected_answer: Any) -> list[tuple[str, float]]:
    """Every check of a finished episode, as (what it checks, how far it holds in [0, 1])."""
    before, after = _records(initial), _records(final)
    out: list[tuple[str, float]] = []
    keys = set()
    if expected is not None:
        want = _records(expected)
        for tid in targets:
            key = next(k for k in (f"task:{tid}", f"project:{tid}") if k in before)
            keys.add(key)
            out.append((f"{key} as requested", float(after.get(key) == want.get(key))))
    if expected_answer is not None:
        out.append(("the answer", answer_score(answer, expected_answer)))
    untouched = all(after.get(k) == before.get(k) for k in set(before) | set(after) if k not in keys)
    if expected is not None or not untouched:
        out.append(("nothing else changed", float(untouched)))
    return out


def reward(found: list[tuple[str, float]], operation: bool) -> float:
    """The share of the checks that hold; 0 for an operation none of whose targets was done."""
    if operation and not any(v == 1.0 for name, v in found if name.endswith("as requested")):
        return 0.0
    return sum(v for _, v in found) / len(found) if found else 0.0
