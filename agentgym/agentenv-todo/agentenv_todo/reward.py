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

from typing import Any

from agentenv.answers import exact_score
from agentenv_todo.data import Account


def answer_score(given: Any, expected: str | int | list[str]) -> float:
    """How right an answer is, in [0, 1] (:func:`agentenv.answers.exact_score`): numbers by value, Yes/No by
    the first word, texts after normalisation and without spaces (a date exactly, '60(minute)' with or
    without spaces), lists as sets."""
    return exact_score(given, expected, ignore_spaces=True)


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
