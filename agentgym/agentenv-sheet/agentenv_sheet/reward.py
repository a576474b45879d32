"""Grading: the share of a task's checks that hold when the agent calls finish.

An editing task's checks are one per row of the expected sheet that the task changes (the row
must hold exactly the expected values), plus one check that everything else is as it was: the rows
the task leaves alone, the sheet's size (no stray rows or columns) and the other sheets. A reading
task has one check, the answer. 1.0 is a solved task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentenv_sheet.formula import Value
from agentenv_sheet.workbook import Grid, Workbook, coerce, same, show


@dataclass(frozen=True)
class Check:
    what: str
    holds: bool


def _width(grid: Grid) -> int:
    return max((max((j + 1 for j, v in enumerate(row) if v is not None), default=0) for row in grid), default=0)


def rows_same(a: list[Value] | None, b: list[Value] | None) -> bool:
    """Two rows hold the same values (missing cells are empty)."""
    a, b = a or [], b or []
    n = max(len(a), len(b))
    return all(same(a[i] if i < len(a) else None, b[i] if i < len(b) else None) for i in range(n))


def grids_same(a: Grid, b: Grid) -> bool:
    return len(a) == len(b) and all(rows_same(x, y) for x, y in zip(a, b, strict=True))


def state_checks(initial: Workbook, final: Workbook, target: str, expected: Grid) -> list[Check]:
    """The checks of an editing task on the workbook the agent leaves."""
    before = initial.sheets[target].grid()
    sheet = final.sheets.get(target)
    after = sheet.grid() if sheet is not None else []
    checks, untouched = [], []
    for r, row in enumerate(expected):
        if r < len(before) and rows_same(before[r], row):
            untouched.append(r)
            continue
        got = after[r] if r < len(after) else None
        checks.append(Check(f"row {r + 1} is {[show(v) for v in row]}", sheet is not None and rows_same(got, row)))
    others_kept = set(final.sheets) == set(initial.sheets) and all(
        grids_same(final.sheets[n].grid(), s.grid()) for n, s in initial.sheets.items() if n != target)
    rest = (sheet is not None and all(r < len(after) and rows_same(after[r], expected[r]) for r in untouched)
            and len(after) == len(expected) and _width(after) == _width(expected) and others_kept)
    checks.append(Check(f"the rest of {target} and the other sheets are as they should be "
                        f"({len(expected)} rows, {_width(expected)} columns)", rest))
    return checks


_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+")


def answer_holds(answer: str, expected: str | float, keys: tuple[str, ...] = ()) -> bool:
    """A number within 0.01 (the first number of the answer), or the expected name and no other row's name."""
    if isinstance(expected, float):
        m = _NUMBER.search(answer.replace(" ", ""))
        got = coerce(m.group(0)) if m else None
        return isinstance(got, float) and abs(got - expected) <= 0.01 + 1e-6 * abs(expected)
    text = re.sub(r"\s+", " ", answer).strip().strip("\"'.").strip().casefold()
    want = expected.casefold()
    if text == want:
        return True

    def named(key: str) -> bool:
        return re.search(rf"(?<![\w]){re.escape(key.casefold())}(?![\w])", text) is not None

    return named(want) and not any(named(k) for k in keys if k.casefold() != want and want not in k.casefold())


def score(checks: list[Check]) -> float:
    return sum(c.holds for c in checks) / len(checks) if checks else 0.0
