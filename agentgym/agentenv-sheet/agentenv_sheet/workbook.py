"""The in-memory spreadsheet: a workbook of named sheets, each a grid of values with notes,
merged ranges and frozen rows/columns — what AgentGym's sheet tools do on Google Sheets.

Rows and columns are 1-based, as in Google Sheets. A cell holds text, a number (a float) or
nothing (None). Text that reads as a number is stored as the number, as AgentGym's tools convert
it before they write. Operations that cannot be done on legal input raise :class:`SheetError`.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field

from agentenv_sheet.a1 import to_a1
from agentenv_sheet.formula import FormulaError, Value, evaluate, to_number

Grid = list[list[Value]]


class SheetError(Exception):
    """An operation the sheet refuses (out of range, deleting every row, ...): the message says why."""


def coerce(value: object) -> Value:
    """What a written value becomes: numbers and numeric text -> float, "" -> None, the rest text."""
    if value is None or isinstance(value, bool):
        return None if value is None else str(value).upper()
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value)
    if not text.strip():
        return None
    try:
        number = float(text.replace(",", "")) if re.fullmatch(r"\s*[-+]?[\d,]*\.?\d+(e[-+]?\d+)?\s*", text, re.I) \
            else None
    except ValueError:
        number = None
    return number if number is not None and math.isfinite(number) else text


def show(value: Value) -> str:
    """A value as the sheet displays it: 68 not 68.0, 53.1, "" for an empty cell."""
    if value is None:
        return ""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(round(value, 10))
    return str(value)


def same(a: Value, b: Value) -> bool:
    """Whether two cells hold the same thing: numbers within half a cent, text exactly (trimmed)."""
    x, y = to_number(coerce(a)), to_number(coerce(b))
    if x is not None and y is not None:
        return abs(x - y) <= 0.005 + 1e-9 * abs(y)
    return show(coerce(a)).strip() == show(coerce(b)).strip()


@dataclass
class Sheet:
    """One worksheet. ``cells`` is a list of rows (ragged is fine: missing cells are empty)."""

    name: str
    sheet_id: int
    cells: Grid
    notes: dict[tuple[int, int], str] = field(default_factory=dict)
    merges: list[tuple[int, int, int, int]] = field(default_factory=list)  # top, left, bottom, right
    frozen_rows: int = 1
    frozen_cols: int = 0

    # -- reading -------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        """Rows of the used range (up to the last row with a value)."""
        n = len(self.cells)
        while n and all(v is None for v in self.cells[n - 1]):
            n -= 1
        return n

    @property
    def n_cols(self) -> int:
        """Columns of the used range (up to the last column with a value in any row)."""
        width = 0
        for row in self.cells:
            for j in range(len(row), 0, -1):
                if row[j - 1] is not None:
                    width = max(width, j)
                    break
        return width

    def get(self, row: int, col: int) -> Value:
        if 1 <= row <= len(self.cells) and 1 <= col <= len(self.cells[row - 1]):
            return self.cells[row - 1][col - 1]
        return None

    def grid(self) -> Grid:
        """The used range as a rectangle of raw values (no merge filling): what grading compares."""
        rows, cols = self.n_rows, self.n_cols
        return [[self.get(r, c) for c in range(1, cols + 1)] for r in range(1, rows + 1)]

    def display(self, top: int = 1, left: int = 1, bottom: int | None = None,
                right: int | None = None) -> list[list[str]]:
        """Displayed text of a range (default: the used range); a merged range shows its top-left value
        in each of its cells (gspread's ``combine_merged_cells``)."""
        bottom = self.n_rows if bottom is None else bottom
        right = self.n_cols if right is None else right
        out = []
        for r in range(top, bottom + 1):
            row = []
            for c in range(left, right + 1):
                anchor = self.merge_anchor(r, c)
                row.append(show(self.get(*anchor)))
            out.append(row)
        return out

    def merge_anchor(self, row: int, col: int) -> tuple[int, int]:
        for top, left, bottom, right in self.merges:
            if top <= row <= bottom and left <= col <= right:
                return top, left
        return row, col

    # -- writing -------------------------------------------------------------------------------
    def set(self, row: int, col: int, value: Value) -> None:
        if row < 1 or col < 1:
            raise SheetError(f"there is no cell at row {row}, column {col} (rows and columns start at 1)")
        while len(self.cells) < row:
            self.cells.append([])
        line = self.cells[row - 1]
        while len(line) < col:
            line.append(None)
        line[col - 1] = value

    def write(self, row: int, col: int, raw: object) -> Value:
        """Write what a user enters: a formula (text starting with "=") is computed, the rest coerced."""
        if isinstance(raw, str) and raw.strip().startswith("="):
            try:
                value = evaluate(raw.strip(), self.get)
            except FormulaError as e:
                raise SheetError(f"the formula {raw.strip()} failed: {e}") from None
        else:
            value = coerce(raw)
        self.set(row, col, value)
        return value

    def _trim(self) -> None:
        """Drop trailing empty cells and rows (the used range is what matters)."""
        for line in self.cells:
            while line and line[-1] is None:
                line.pop()
        while self.cells and not self.cells[-1]:
            self.cells.pop()

    def insert_rows(self, index: int, rows: list[list[object]]) -> None:
        if not 1 <= index <= self.n_rows + 1:
            raise SheetError(f"row_idx {index} is out of range: rows can be inserted at 1..{self.n_rows + 1}")
        new = [[coerce(v) for v in row] for row in rows]
        while len(self.cells) < index - 1:
            self.cells.append([])
        self.cells[index - 1:index - 1] = new
        k = len(new)
        self.notes = {((r + k if r >= index else r), c): t for (r, c), t in self.notes.items()}
        self.merges = [(t + k, left, b + k, right) if t >= index else (t, left, b + (k if b >= index else 0), right)
                       for t, left, b, right in self.merges]
        self._trim()

    def insert_cols(self, index: int, cols: list[list[object]]) -> None:
        if not 1 <= index <= self.n_cols + 1:
            raise SheetError(f"col_idx {index} is out of range: columns can be inserted at 1..{self.n_cols + 1}")
        k = len(cols)
        height = max([self.n_rows] + [len(c) for c in cols])
        while len(self.cells) < height:
            self.cells.append([])
        for r, line in enumerate(self.cells):
            while len(line) < index - 1:
                line.append(None)
            line[index - 1:index - 1] = [coerce(col[r]) if r < len(col) else None for col in cols]
        self.notes = {(r, (c + k if c >= index else c)): t for (r, c), t in self.notes.items()}
        self.merges = [(t, left + k, b, right + k) if left >= index
                       else (t, left, b, right + (k if right >= index else 0)) for t, left, b, right in self.merges]
        self._trim()

    def delete_rows(self, indices: list[int]) -> None:
        rows = self.n_rows
        bad = [i for i in indices if not 1 <= i <= rows]
        if bad:
            raise SheetError(f"row index {bad[0]} is out of range (the sheet has rows 1..{rows})")
        gone = set(indices)
        self.cells = [line for r, line in enumerate(self.cells, 1) if r not in gone]
        shift = sorted(gone)

        def moved(r: int) -> int:
            return r - sum(1 for g in shift if g < r)

        self.notes = {(moved(r), c): t for (r, c), t in self.notes.items() if r not in gone}
        self.merges = [(moved(t), left, moved(b), right) for t, left, b, right in self.merges
                       if not all(r in gone for r in range(t, b + 1))]
        self.merges = [m for m in self.merges if m[2] >= m[0]]
        self._trim()

    def delete_cols(self, indices: list[int]) -> None:
        cols = self.n_cols
        bad = [i for i in indices if not 1 <= i <= cols]
        if bad:
            raise SheetError(f"column index {bad[0]} is out of range (the sheet has columns 1..{cols})")
        gone = set(indices)
        self.cells = [[v for c, v in enumerate(line, 1) if c not in gone] for line in self.cells]
        shift = sorted(gone)

        def moved(c: int) -> int:
            return c - sum(1 for g in shift if g < c)

        self.notes = {(r, moved(c)): t for (r, c), t in self.notes.items() if c not in gone}
        self.merges = [(t, moved(left), b, moved(right)) for t, left, b, right in self.merges
                       if not all(c in gone for c in range(left, right + 1))]
        self._trim()

    def sort(self, col: int, descending: bool) -> None:
        """Sort the rows below the frozen rows by one column (gspread's ``sort``: without frozen rows the
        header is sorted too). Numbers come before text, empty cells last in both orders; ties keep
        their order."""
        if not 1 <= col <= max(self.n_cols, 1):
            raise SheetError(f"col_num {col} is out of range (the sheet has columns 1..{self.n_cols})")
        first = self.frozen_rows + 1
        last = self.n_rows
        if last < first:
            return
        if any(t < b and b >= first for t, _, b, _ in self.merges):
            raise SheetError("you can't sort a range that contains vertically merged cells")
        order = list(range(first, last + 1))
        filled = [r for r in order if self.get(r, col) is not None]
        empty = [r for r in order if self.get(r, col) is None]

        def key(r: int) -> tuple[int, float, str]:
            v = self.get(r, col)
            n = to_number(v)
            return (0, n, "") if n is not None else (1, 0.0, show(v).lower())

        new_order = sorted(filled, key=key, reverse=descending) + empty
        lines = {r: (self.cells[r - 1] if r <= len(self.cells) else []) for r in order}
        for pos, r in enumerate(new_order):
            self.cells[first - 1 + pos] = lines[r]
        where = {old: first + pos for pos, old in enumerate(new_order)}
        self.notes = {(where.get(r, r), c): t for (r, c), t in self.notes.items()}
        self.merges = [m if m[2] < first else (where[m[0]], m[1], where[m[0]], m[3]) for m in self.merges]

    def merge(self, top: int, left: int, bottom: int, right: int) -> None:
        """MERGE_ALL: one cell over the range, holding the top-left value (the others are cleared)."""
        if (top, left) == (bottom, right):
            raise SheetError("a merge needs at least two cells")
        for r in range(top, bottom + 1):
            for c in range(left, right + 1):
                if (r, c) != (top, left) and self.get(r, c) is not None:
                    self.set(r, c, None)
        self.merges = [m for m in self.merges if m[2] < top or m[0] > bottom or m[3] < left or m[1] > right]
        self.merges.append((top, left, bottom, right))
        self._trim()

    def address(self, row: int, col: int) -> str:
        return to_a1(row, col)


@dataclass
class Workbook:
    """Named sheets in order. Sessions edit their own :meth:`copy`; the shared original never changes."""

    sheets: dict[str, Sheet]

    def copy(self) -> Workbook:
        return copy.deepcopy(self)

    def sheet(self, name: str) -> Sheet:
        if name not in self.sheets:
            raise SheetError(f"WorksheetNotFound: there is no sheet named {name!r}; the sheets are "
                             + ", ".join(repr(n) for n in self.sheets))
        return self.sheets[name]

    def delete(self, name: str) -> None:
        self.sheet(name)
        if len(self.sheets) == 1:
            raise SheetError("you can't remove all the sheets in a document")
        del self.sheets[name]
