"""Reading an .xlsx workbook with the standard library, and showing numbers as Google Sheets shows them.

An .xlsx file is a zip of XML parts: ``xl/workbook.xml`` names the sheets and, through
``xl/_rels/workbook.xml.rels``, the part holding each; ``xl/sharedStrings.xml`` holds the text
cells' strings; ``xl/styles.xml`` the cell styles (``cellXfs``), each naming a number format;
a sheet part holds its cells (``<c r="B7" s="3" t="s"><v>12</v></c>``), merged ranges and its
frozen pane, and its relationships name the comments part holding the cells' notes (Google Sheets
exports its notes as comments). Only what a spreadsheet's values, displayed text, notes, merges
and frozen rows need is read; formulas are read as their cached values.
"""

from __future__ import annotations

import math
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from xml.etree import ElementTree as ET

_NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
       "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
       "rel": "http://schemas.openxmlformats.org/package/2006/relationships"}
_REL_ID = f"{{{_NS['r']}}}id"

#: the number formats every workbook has without declaring them (ECMA-376 part 1, 18.8.30), those used here
BUILTIN_FORMATS = {0: "General", 1: "0", 2: "0.00", 3: "#,##0", 4: "#,##0.00", 9: "0%", 10: "0.00%",
                   11: "0.00E+00", 49: "@"}
GENERAL = "General"


class XlsxError(ValueError):
    """A file that is not a readable .xlsx workbook."""


@dataclass
class XlsxSheet:
    """One worksheet as stored: values by (row, col) from 1 (str or float), number formats, notes, merges."""

    name: str
    sheet_id: int
    values: dict[tuple[int, int], str | float] = field(default_factory=dict)
    formats: dict[tuple[int, int], str] = field(default_factory=dict)  # cells with a format other than General
    notes: dict[tuple[int, int], str] = field(default_factory=dict)
    merges: list[tuple[int, int, int, int]] = field(default_factory=list)  # top, left, bottom, right
    frozen_rows: int = 0
    frozen_cols: int = 0
    n_rows: int = 0  # the grid's size (its <row> elements), not the used range
    n_cols: int = 0


_ADDRESS = re.compile(r"^([A-Z]+)(\d+)$")


def cell_of(address: str) -> tuple[int, int]:
    """"B7" -> (7, 2)."""
    m = _ADDRESS.match(address)
    if not m:
        raise XlsxError(f"not a cell address: {address!r}")
    col = 0
    for ch in m.group(1):
        col = col * 26 + ord(ch) - 64
    return int(m.group(2)), col


def _text(node: ET.Element) -> str:
    """The text of a shared string or a note: its <t>, or the <t> of each of its runs."""
    return "".join(t.text or "" for t in node.iter(f"{{{_NS['m']}}}t"))


def _read(book: zipfile.ZipFile, part: str) -> ET.Element:
    try:
        return ET.fromstring(book.read(part))
    except KeyError:
        raise XlsxError(f"the workbook has no part {part}") from None
    except ET.ParseError as e:
        raise XlsxError(f"{part} is not well-formed XML: {e}") from None


def _targets(book: zipfile.ZipFile, rels_part: str) -> dict[str, tuple[str, str]]:
    """A relationships part: id -> (type's last word, the target's path in the zip)."""
    if rels_part not in book.namelist():
        return {}
    base = posixpath.dirname(posixpath.dirname(rels_part))
    out = {}
    for rel in _read(book, rels_part).findall("rel:Relationship", _NS):
        target = rel.get("Target", "")
        path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(base, target))
        out[rel.get("Id", "")] = (rel.get("Type", "").rsplit("/", 1)[-1], path)
    return out


def _styles(book: zipfile.ZipFile) -> list[str]:
    """The number format of each cell style (the index a cell's ``s`` names)."""
    if "xl/styles.xml" not in book.namelist():
        return [GENERAL]
    root = _read(book, "xl/styles.xml")
    codes = dict(BUILTIN_FORMATS)
    for fmt in root.findall("m:numFmts/m:numFmt", _NS):
        codes[int(fmt.get("numFmtId", "0"))] = fmt.get("formatCode", GENERAL)
    return [codes.get(int(xf.get("numFmtId", "0")), GENERAL) for xf in root.findall("m:cellXfs/m:xf", _NS)]


def read_xlsx(path: str | Path) -> dict[str, XlsxSheet]:
    """Every worksheet of the workbook at ``path``, in the workbook's order."""
    try:
        book = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise XlsxError(f"cannot open {path} as an .xlsx workbook: {e}") from None
    with book:
        strings = ([_text(si) for si in _read(book, "xl/sharedStrings.xml").findall("m:si", _NS)]
                   if "xl/sharedStrings.xml" in book.namelist() else [])
        styles = _styles(book)
        parts = _targets(book, "xl/_rels/workbook.xml.rels")
        sheets = {}
        for entry in _read(book, "xl/workbook.xml").findall("m:sheets/m:sheet", _NS):
            kind, part = parts.get(entry.get(_REL_ID, ""), ("", ""))
            if kind != "worksheet":
                continue
            sheet = XlsxSheet(entry.get("name", ""), int(entry.get("sheetId", "0")))
            _fill(sheet, book, part, strings, styles)
            sheets[sheet.name] = sheet
    return sheets


def _fill(sheet: XlsxSheet, book: zipfile.ZipFile, part: str, strings: list[str], styles: list[str]) -> None:
    root = _read(book, part)
    for row in root.findall("m:sheetData/m:row", _NS):
        sheet.n_rows = max(sheet.n_rows, int(row.get("r", "0")))
        for c in row.findall("m:c", _NS):
            where = cell_of(c.get("r", ""))
            sheet.n_cols = max(sheet.n_cols, where[1])
            style = int(c.get("s", "0"))
            code = styles[style] if style < len(styles) else GENERAL
            if code != GENERAL:
                sheet.formats[where] = code
            kind, v = c.get("t", "n"), c.find("m:v", _NS)
            if kind == "inlineStr":
                inline = c.find("m:is", _NS)
                text = _text(inline) if inline is not None else ""
                if text:
                    sheet.values[where] = text
            elif v is None or v.text is None:
                continue
            elif kind == "s":
                text = strings[int(v.text)]
                if text:
                    sheet.values[where] = text
            elif kind in ("str", "e"):
                sheet.values[where] = v.text
            elif kind == "b":
                sheet.values[where] = "TRUE" if v.text.strip() == "1" else "FALSE"
            else:
                sheet.values[where] = float(v.text)
    for merge in root.findall("m:mergeCells/m:mergeCell", _NS):
        first, _, last = merge.get("ref", "").partition(":")
        (top, left), (bottom, right) = cell_of(first), cell_of(last or first)
        sheet.merges.append((top, left, bottom, right))
    pane = root.find("m:sheetViews/m:sheetView/m:pane", _NS)
    if pane is not None and pane.get("state") in ("frozen", "frozenSplit"):
        sheet.frozen_rows = int(float(pane.get("ySplit", "0")))
        sheet.frozen_cols = int(float(pane.get("xSplit", "0")))
    rels = posixpath.join(posixpath.dirname(part), "_rels", posixpath.basename(part) + ".rels")
    for kind, target in _targets(book, rels).values():
        if kind == "comments":
            for comment in _read(book, target).findall("m:commentList/m:comment", _NS):
                body = comment.find("m:text", _NS)
                sheet.notes[cell_of(comment.get("ref", ""))] = _text(body) if body is not None else ""


# -- numbers as Google Sheets displays them ------------------------------------------------------------------


def _fixed(value: float, decimals: int, grouped: bool) -> str:
    """Round half away from zero to ``decimals`` places (from the shortest decimal form of the float)."""
    exact = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    if exact == 0:
        exact = abs(exact)
    return f"{exact:,.{decimals}f}" if grouped else f"{exact:.{decimals}f}"


def general(value: float) -> str:
    """A number in the automatic format: an integer without decimals, else up to 10 significant digits."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.10g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}E{'+' if int(exponent) >= 0 else '-'}{abs(int(exponent)):02d}"
    return text


def display(value: str | float | None, code: str = GENERAL) -> str:
    """The text a cell shows: text as is, a number under its format (``0.00``, ``#,##0``, ``0.0%``, General)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if not math.isfinite(value):
        return "#NUM!"
    if code in (GENERAL, "@", ""):
        return general(value)
    m = re.fullmatch(r"(#,##)?0(?:\.(0+))?(%?)", code)
    if m is None:
        return general(value)
    grouped, decimals, percent = bool(m.group(1)), len(m.group(2) or ""), m.group(3) == "%"
    return _fixed(value * 100 if percent else value, decimals, grouped) + ("%" if percent else "")
