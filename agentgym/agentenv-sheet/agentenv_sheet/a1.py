"""A1 notation: 1-based (row, column) <-> "B7", as Google Sheets writes cell addresses."""

from __future__ import annotations

import re

_CELL = re.compile(r"^([A-Z]{1,2})([1-9][0-9]*)$")


class A1Error(ValueError):
    """An address that is not a cell in A1 notation."""


def col_letters(col: int) -> str:
    """1 -> "A", 27 -> "AA"."""
    if col < 1:
        raise A1Error(f"column {col} is out of range (columns start at 1)")
    out = ""
    while col:
        col, rest = divmod(col - 1, 26)
        out = chr(ord("A") + rest) + out
    return out


def to_a1(row: int, col: int) -> str:
    """(1, 1) -> "A1"."""
    if row < 1:
        raise A1Error(f"row {row} is out of range (rows start at 1)")
    return f"{col_letters(col)}{row}"


def is_a1(text: str) -> bool:
    return bool(_CELL.match(text))


def parse_a1(text: str) -> tuple[int, int]:
    """"B7" -> (7, 2). Upper-case letters only, as the sheet's formulas need them."""
    m = _CELL.match(text.strip()) if isinstance(text, str) else None
    if not m:
        raise A1Error(f"{text!r} is not a cell position in A1 notation (e.g. \"B7\"; column letters in upper case, "
                      "rows from 1); get_A1_annotation(row, col) gives the address of a cell")
    col = 0
    for ch in m.group(1):
        col = col * 26 + ord(ch) - ord("A") + 1
    return int(m.group(2)), col


def parse_range(start: str, end: str) -> tuple[int, int, int, int]:
    """Two corners -> (top, left, bottom, right), whichever order the corners come in."""
    r1, c1 = parse_a1(start)
    r2, c2 = parse_a1(end)
    return min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)
