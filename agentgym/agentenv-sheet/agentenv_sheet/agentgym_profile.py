"""The sheet environment of AgentGym (``--option profile=agentgym``): its 20 tasks on its reference workbook.

AgentGym's sheet server (``agentenv-tool``, from AgentBoard's tool-use tasks) copies a reference Google spreadsheet
for every episode and drives the copy through gspread (5.12). Neither the spreadsheet nor the question file ships
with this project: the profile reads them (``sheet.jsonl``, ``sheet_reference_workbook.xlsx``, the spreadsheet as
an .xlsx export) from the directory the user gives, ``--option data_dir=DIR`` or ``$AGENTGYM_TOOL_DATA``. What is
reproduced, from the public code of AgentGym (its sheet server, ``sheet_env.py``, ``sheets_tools.py``, its client
``SheetEnvClient``) and of gspread 5.12.3 (read, not copied):

- **the tasks**: task N is line N of ``sheet.jsonl`` (both splits are the whole file; AgentEval's items are its 20
  lines), its goal and the table the task must leave (``additional_info.answer``);
- **the workbook**: every sheet of the .xlsx (``Sheet1`` .. ``Sheet21`` and the ``AnswerN`` sheets beside them,
  as upstream's copy has them), values, number formats, notes, merges and frozen rows; every session edits its own
  copy. A sheet answers with the strings Google Sheets displays (``get_all_values``' formatted values): a number
  under its cell's format (``#,##0.00`` shows 68 as ``68.00``, ``0.0`` as ``68.0``, General as ``68``); a cell keeps
  its format when written, rows and columns carry theirs when sorted, deleted or inserted, and inserted ones take
  their neighbour's (gspread's ``inherit_from_before``: the one before when appending, else the one after). A
  formula of SUM, AVERAGE, MAX, MIN or MINUS written into a General cell shows in the format of the first cell it
  reads (Sheets' format inference: ``=SUM(C2:G2)`` over ``95.0`` cells shows ``444.0``), others in General;
- **the tools**: the 20 of upstream's toolkit with its arguments, conversions and answers (Python's ``str`` of its
  values, ``repr`` of a failure, e.g. ``'Warning: You cannot delete whole sheet at once, please try other
  functions'``), and its quirks: ``del_sheet`` always fails (gspread's ``del_worksheet`` wants a worksheet, upstream
  gives a name), ``delete_batch_data`` deletes one index at a time from the largest, ``get_value_by_formula`` works
  in a column it appends and deletes (and leaves behind when a position is refused), positions of the formula tools
  must be one letter and digits, values are turned into floats where ``float()`` takes them;
- **a step**: the server finds ``ACTION with Action Input: INPUT`` on the reply's last line (else its format
  error), the environment reads the tool after ``Action:`` and the input as a Python literal, an exception becomes
  ``ERROR | Type(message)``; the server runs an action again, up to 4 times in all, while its answer contains
  "error" (a client sees the last), and answers ``Observation: <answer>\\nGive me one action.``;
- **the grading**: after every step whose answer does not contain "Invalid", the open sheet's displayed values are
  compared with the expected table over the rows and columns both have (upstream's ``get_match_score``: the share
  of equal cells); the reward AgentGym's server sends is the best share so far. An action whose last line contains
  "finish" ends the episode (after its tool ran);
- **the turn limit**: AgentGym's evaluation plays sheet for 15 rounds (its ``max_round``); its server has none.

This project's reward is the change of that value at each step (an episode's return is the value AgentGym's client
reads last); ``info["agentgym_reward"]`` and ``score`` are the value itself, and ``success`` is that value being 1
(AgentGym's evaluation counts a final reward of 1). The first observation is the server's (``Now new trial
starts. ...``); the tools and the answer form AgentGym's client shows before it are given here in this project's
words (``RULES``; under ``--compat agentgym`` the server answers without them, as upstream's does).

What cannot be reproduced exactly (no Google account here): the worksheets' ids in ``<Worksheet 'Sheet1' id:N>``
(Google's; here the .xlsx's sheet ids), the texts of the errors the Sheets API gives (here ``APIError({...})`` with
a message in Google's manner), Sheets' formulas beyond the seven operators, ``+ - * /``, COUNTIF and SUMIF (computed
when written: a later edit of a cell a formula reads does not change it; Sheets recomputes), the parsing of typed
text beyond numbers, formulas, percentages and TRUE/FALSE (no dates or currencies), and the automatic format beyond
"an integer, else 10 significant digits". As in todo's profile, the input is read with :func:`ast.literal_eval`
(literals only, never code), and a reply ``NAME with Action Input: {...}`` without ``Action:`` (the form this
project's agent loop sends) is read as if ``Action:`` preceded it.
"""

from __future__ import annotations

import ast
import copy
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from agentenv import StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.interop.agentgym_toolusage import REPLY_FORM, ToolUsageProfile, profile_routes
from agentenv.tools import GoldCall, tool
from agentenv_sheet.env import SheetEnv
from agentenv_sheet.formula import FormulaError, Value, evaluate
from agentenv_sheet.workbook import Sheet, SheetError
from agentenv_sheet.xlsx import GENERAL, XlsxError, display, read_xlsx

QUESTIONS, WORKBOOK = "sheet.jsonl", "sheet_reference_workbook.xlsx"
NUM_TASKS = 20  # the lines of upstream's sheet.jsonl (counted from the file once it is loaded)
MAX_ROUNDS = 15
TOOL_NAMES = ("open_sheet", "del_sheet", "freeze_data", "get_A1_annotation", "insert_cols", "insert_rows",
              "delete_batch_data", "update_cell", "update_cell_by_formula", "update_range", "sort_sheet_by_col",
              "merge_cells", "update_note", "get_all_values", "get_range_values", "get_cell_value",
              "get_value_by_formula", "filter_cells", "get_note", "finish")
OPERATORS = ("SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT")
NOT_OPEN = "Please open a sheet before operating it"
WHOLE_SHEET = "Warning: You cannot delete whole sheet at once, please try other functions"
WHOLE_UPDATE = "Warning: You cannot update whole sheet at once, please try other functions"
BAD_POSITION = ("In the sheet formula, you should use A1 notation to display all positions in the sheet and you can "
                "use get_A1_annotation(row, col) to get its A1 address.")
BAD_RANGE = ("In the sheet formula, you should use A1 notation to display the start and end cell address in the "
             "sheet and you can use get_A1_annotation(row, col) to get its A1 address.")
BAD_OPERATOR = 'the operator should be one of the ["SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT"]'
RETRIES = 4  # upstream's server runs an action whose answer says "error" again, up to this many runs in all
GRID_ROWS, GRID_COLS = 1000, 26  # a Google sheet's grid at least (the export lists 1000 rows)
_ONE_LETTER_A1 = re.compile(r"^[A-Z]{1}[0-9]+$")  # upstream's check of the formula tools' positions
_GSPREAD_A1 = re.compile(r"([A-Za-z]+)([1-9]\d*)")  # gspread's cell labels (matched at the start, any case)
_SHEET_OF_GOAL = re.compile(r'"Sheet(\d{1,2})"')

INSTRUCTION = "You are an autonomous agent that edits a Google spreadsheet with tools."
RULES = (
    "You work in a spreadsheet through its tools, one call per turn. Open the sheet the goal names with "
    "open_sheet before anything else, then read it with get_all_values. Rows and columns count from 1, cells are "
    "written in A1 notation (\"B7\"; get_A1_annotation(row, col) translates). The tools: open_sheet(name), "
    "del_sheet(name), freeze_data(dimension 'rows'|'columns', num), get_A1_annotation(row, col), "
    "insert_cols(values_list: one list per column, col_idx), insert_rows(values_list: one list per row, row_idx), "
    "delete_batch_data(dimension 'row'|'col', index_list), update_cell(position, value), "
    "update_cell_by_formula(start_position, end_position or position_list, result_position, operator), "
    "update_range(start_position, end_position, values_list), sort_sheet_by_col(col_num, order 'asc'|'des'), "
    "merge_cells(start_position, end_position), update_note(position, content), get_all_values(), "
    "get_range_values(start_position, end_position), get_cell_value(position), get_value_by_formula(start_position, "
    "end_position or position_list, operator), filter_cells(query: a regular expression, in_row or in_column), "
    "get_note(position), finish(). The operators are SUM, AVERAGE, COUNT, MAX, MIN, MINUS and PRODUCT. Sorting "
    "moves every row below the frozen ones: freeze the header row first. When the sheet is as the goal asks, call "
    "finish; the sheet is compared cell by cell with the expected one.\n" + REPLY_FORM
)


# -- the workbook, as Google Sheets keeps it -----------------------------------------------------------------------


class GridSheet(Sheet):
    """A sheet of the native workbook with what Google Sheets adds: every cell's number format (moving with its
    cell), the grid's size, and displayed values under the formats."""

    def __init__(self, *args: Any, formats: dict[tuple[int, int], str] | None = None, grid_rows: int = GRID_ROWS,
                 grid_cols: int = GRID_COLS, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.formats = dict(formats or {})
        self.grid_rows, self.grid_cols = grid_rows, grid_cols

    def fmt(self, row: int, col: int) -> str:
        return self.formats.get((row, col), GENERAL)

    def shown(self, row: int, col: int) -> str:
        return display(self.get(row, col), self.fmt(row, col))

    def carrying(self, op: Callable[[], Any]) -> Any:
        """Run a structural edit of the native sheet with the formats moved as it moves the notes."""
        keys = set(self.notes) | set(self.formats)
        self.notes = {k: (self.notes.get(k), self.formats.get(k)) for k in keys}  # type: ignore[misc]
        try:
            return op()
        finally:
            packed: dict[tuple[int, int], Any] = self.notes  # type: ignore[assignment]
            self.notes = {k: n for k, (n, _) in packed.items() if n is not None}
            self.formats = {k: f for k, (_, f) in packed.items() if f is not None}

    def values(self, top: int = 1, left: int = 1, bottom: int | None = None,
               right: int | None = None) -> list[list[str]]:
        """What gspread's ``get_values(range, combine_merged_cells=True)`` returns: the range's displayed values
        without trailing empty rows and cells, the rows padded to the longest, merged cells showing their top-left
        value where that lies in the range; an empty range fails as gspread does (IndexError)."""
        bottom = self.n_rows if bottom is None else min(bottom, self.grid_rows)
        right = self.n_cols if right is None else min(right, self.grid_cols)
        rows = []
        for r in range(top, bottom + 1):
            row = [self.shown(r, c) for c in range(left, right + 1)]
            while row and row[-1] == "":
                row.pop()
            rows.append(row)
        while rows and not rows[-1]:
            rows.pop()
        width = max((len(row) for row in rows), default=0)
        out = [row + [""] * (width - len(row)) for row in rows]
        if not out or not out[0]:
            raise IndexError("list index out of range")
        for m_top, m_left, m_bottom, m_right in self.merges:
            r0, c0 = m_top - top, m_left - left
            if r0 < 0 or c0 < 0 or r0 >= len(out) or c0 >= width:
                continue
            for r in range(r0, min(m_bottom - top + 1, len(out))):
                for c in range(c0, min(m_right - left + 1, width)):
                    out[r][c] = out[r0][c0]
        return out


def _sheet_of(x: Any) -> GridSheet:
    cells: list[list[Value]] = [[None] * max((c for (_, c) in x.values), default=0)
                                for _ in range(max((r for (r, _) in x.values), default=0))]
    for (r, c), v in x.values.items():
        cells[r - 1][c - 1] = v
    sheet = GridSheet(x.name, x.sheet_id, cells, notes=dict(x.notes), merges=list(x.merges), frozen_rows=x.frozen_rows,
                      frozen_cols=x.frozen_cols, formats=x.formats, grid_rows=max(x.n_rows, GRID_ROWS),
                      grid_cols=max(x.n_cols, GRID_COLS))
    sheet._trim()
    return sheet


# -- the data --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpstreamTask:
    """One line of sheet.jsonl."""

    index: int
    goal: str
    sheet: str | None  # the sheet the goal names ("Sheet7"), as upstream finds it
    answer: list[list[str]]  # the table the task must leave
    reference: tuple[tuple[str, dict[str, Any]], ...]  # the reference action path, as written in the file


@dataclass(frozen=True)
class SheetData:
    root: Path
    workbook: dict[str, GridSheet] = field(repr=False)  # the starting workbook (a template: sessions edit copies)
    tasks: tuple[UpstreamTask, ...]


_ACTION_LINE = re.compile(r"^Action \d+:\s*(\w+) with Action Input:\s*(.*)$")


def reference_path(text: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    """The ``Action N: TOOL with Action Input: {...}`` lines of a task's reference path, each input a literal."""
    out = []
    for line in text.splitlines():
        m = _ACTION_LINE.match(line.strip())
        if m:
            out.append((m.group(1), dict(ast.literal_eval(m.group(2)))))
    return tuple(out)


def match_score(values: Any, truth: list[list[str]]) -> float:
    """Upstream's ``get_match_score``: the share of equal cells over the rows and columns both tables have (the
    width of each taken from its first row); whatever the open sheet gave (a table, or an error's text)."""
    if values == NOT_OPEN:
        return 0.0
    rows = min(len(values), len(truth))
    cols = min(len(values[0]) if values else 0, len(truth[0]) if truth else 0)
    total = rows * cols
    same = sum(values[i][j] == truth[i][j] for i in range(rows) for j in range(cols))
    return same / total if total else 0.0


# -- upstream's conversions and errors ------------------------------------------------------------------------


class _Refused(Exception):
    """A tool's failure: its answer is the text given (upstream returns ``repr(error)``)."""


def _api_error(message: str) -> _Refused:
    """A failure of the Sheets API as gspread reports it (the message is in Google's manner, not Google's own)."""
    return _Refused(f"APIError({ {'code': 400, 'message': message, 'status': 'INVALID_ARGUMENT'} !r})")


def _numeric(value: Any) -> bool:
    try:
        float(value)
        return True
    except ValueError:
        return False


def _to_float(value: Any) -> Any:
    """Upstream's conversion: a float where ``float()`` takes the value (a TypeError where it cannot try)."""
    return float(value) if _numeric(value) else value


def _rows_to_float(data: Any) -> list[list[Any]]:
    return [[_to_float(v) for v in row] for row in data]


def _raw(value: Any) -> Value:
    """A value written as is (RAW): numbers stay numbers, text stays text (a formula too), empty text is nothing."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _api_error("Invalid values[0][0]: number must be finite")
        return value
    if isinstance(value, str):
        return value or None
    raise _api_error(f"Invalid values[0][0]: {type(value).__name__} value")


def _label(position: Any) -> tuple[int, int]:
    """gspread's reading of a cell label (``a1_to_rowcol``)."""
    m = _GSPREAD_A1.match(position)
    if not m:
        raise _Refused(f"IncorrectCellLabel({position!r})")
    col = 0
    for ch in m.group(1).upper():
        col = col * 26 + ord(ch) - 64
    return int(m.group(2)), col


def _address(row: int, col: int) -> str:
    """gspread's ``rowcol_to_a1``."""
    row, col = int(row), int(col)
    if row < 1 or col < 1:
        raise _Refused(f"IncorrectCellLabel('({row}, {col})')")
    letters = ""
    while col:
        col, rest = divmod(col - 1, 26)
        letters = chr(65 + rest) + letters
    return f"{letters}{row}"


def _range(sheet: GridSheet, start: Any, end: Any) -> tuple[int, int, int, int]:
    """A range ``start:end`` as the Sheets API reads it (either corner first; within the grid)."""
    try:
        (r1, c1), (r2, c2) = _label(str(start)), _label(str(end))
    except _Refused:
        raise _api_error(f"Unable to parse range: {sheet.name}!{start}:{end}") from None
    top, left, bottom, right = min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)
    if bottom > sheet.grid_rows or right > sheet.grid_cols:
        raise _api_error(f"Range ('{sheet.name}'!{start}:{end}) exceeds grid limits. Max rows: {sheet.grid_rows}, "
                         f"max columns: {sheet.grid_cols}")
    return top, left, bottom, right


_FORMAT_FOLLOWERS = ("SUM", "AVERAGE", "MAX", "MIN", "MINUS")
_REFERENCE = re.compile(r"\b([A-Z]{1,2})([1-9][0-9]*)\b")


def _typed(sheet: GridSheet, row: int, col: int, value: Any) -> None:
    """A value written as if typed (USER_ENTERED): a formula is computed (an error shows as its code, e.g.
    ``#DIV/0!``), ``12%`` is 0.12 in a percent format, TRUE/FALSE are booleans, a leading ``'`` keeps text."""
    if isinstance(value, float):
        sheet.set(row, col, _raw(value))
        return
    if not isinstance(value, str):
        raise _api_error(f"Invalid values[0][0]: {type(value).__name__} value")
    text = value.strip()
    if text.startswith("="):
        try:
            result: Value = evaluate(text, sheet.get)
        except FormulaError as e:
            message = str(e)
            result = message.split()[0] if message.startswith("#") else (
                "#N/A" if "takes exactly" in message else "#NAME?" if "unknown" in message else "#ERROR!")
        if isinstance(result, float) and (row, col) not in sheet.formats:
            call = re.match(r"=\s*([A-Z]+)\s*\(", text.upper())
            if call and call.group(1) in _FORMAT_FOLLOWERS:
                for letters, digits in _REFERENCE.findall(text.upper()[call.end():]):
                    r, c = _label(letters + digits)
                    if (r, c) in sheet.formats:
                        sheet.formats[(row, col)] = sheet.formats[(r, c)]
                        break
        sheet.set(row, col, result)
        return
    percent = re.fullmatch(r"([-+]?\d*\.?\d+)\s*%", text)
    if percent:
        number = percent.group(1)
        decimals = len(number.split(".")[1]) if "." in number else 0
        sheet.formats[(row, col)] = "0%" if not decimals else "0." + "0" * decimals + "%"
        sheet.set(row, col, float(number) / 100)
    elif text.upper() in ("TRUE", "FALSE"):
        sheet.set(row, col, text.upper())
    else:
        sheet.set(row, col, (value[1:] if value.startswith("'") else value) or None)


class AgentGymSheetEnv(ToolUsageProfile):
    """AgentGym's sheet task N on its reference workbook, graded as its server grades (module docstring)."""

    name = "sheet"
    max_turns = MAX_ROUNDS
    instruction = INSTRUCTION
    data_files = (QUESTIONS, WORKBOOK)
    Data = SheetData
    upstream_tasks = NUM_TASKS
    read_errors = (*ToolUsageProfile.read_errors, SyntaxError, XlsxError)
    server_runs = RETRIES
    gold_in_order = True
    # check_tasks: short reference paths (a restock, a promotion, deleting the records of wrong scores)
    agentgym: ClassVar[AgentGymRoutes] = profile_routes(SheetEnv.agentgym, rules=RULES, num_tasks=NUM_TASKS,
                                                        check_tasks=(0, 1, 7))
    _task: UpstreamTask | None

    def __init__(self) -> None:
        super().__init__()
        self._book: dict[str, GridSheet] = {}
        self._open: str | None = None

    @classmethod
    def read_data(cls, root: Path) -> SheetData:
        """The questions and the reference workbook in the data directory."""
        book = {name: _sheet_of(x) for name, x in read_xlsx(root / WORKBOOK).items()}
        tasks = []
        for n, line in enumerate((root / QUESTIONS).read_text().splitlines()):
            row = json.loads(line)
            found = _SHEET_OF_GOAL.search(row["goal"])
            tasks.append(UpstreamTask(n, row["goal"], f"Sheet{found.group(1)}" if found else None,
                                      json.loads(row["additional_info"]["answer"]), reference_path(row["subgoals"])))
        return SheetData(root, book, tuple(tasks))

    def _start(self, data: SheetData, task: UpstreamTask) -> None:
        self._book = copy.deepcopy(data.workbook)
        self._open = None
        self._program = expert_program(task)

    # -- a step, as upstream's environment takes it --------------------------------------------------------
    def _value(self) -> float:
        """upstream's ``get_match_score`` of what get_all_values gives now."""
        assert self._task is not None
        return match_score(self._space(), self._task.answer)

    def _space(self) -> Any:
        """What upstream grades: the tool get_all_values' result (a table, or the text of its failure)."""
        if self._open is None:
            return NOT_OPEN[1]  # upstream indexes the message it gets instead of a (success, result) pair
        try:
            return self._book[self._open].values()
        except IndexError as e:
            return repr(e)

    def _dispatch_call(self, name: str, params: Any) -> Any:
        """Upstream's dispatch: the arguments read from ``params`` in its order (KeyError, TypeError as its
        lookups), then the tool."""
        if name == "update_cell_by_formula":
            if "position_list" in params:
                args = {"position_list": params["position_list"], "operator": params["operator"],
                        "result_position": params["result_position"]}
            else:
                args = {k: params[k] for k in ("start_position", "end_position", "result_position", "operator")}
        elif name == "get_value_by_formula":
            if "position_list" in params:
                args = {"position_list": params["position_list"], "operator": params["operator"]}
            else:
                args = {k: params[k] for k in ("start_position", "end_position", "operator")}
        elif name == "filter_cells":
            args = {"query": params.get("query"), "in_row": params.get("in_row"), "in_column": params.get("in_column")}
        elif name == "get_observation_space":
            return ""
        elif name in _ARGS:
            args = {k: params[k] for k in _ARGS[name]}
        else:
            return f"ERROR | Invalid action: {name}. Please choose another valid action from {list(TOOL_NAMES)}"
        self._remember(name, args)
        if name != "open_sheet" and self._open is None:
            return NOT_OPEN
        try:
            return getattr(self, "_" + name)(**args)
        except _Refused as refused:
            return refused.args[0]
        except Exception as e:  # a failure inside a tool is its answer, repr'd
            return repr(e)

    # -- the tools (upstream's toolkit over the local workbook) --------------------------------------------------
    def _sheet(self) -> GridSheet:
        assert self._open is not None
        return self._book[self._open]

    def _all(self) -> list[list[str]]:
        return self._sheet().values()

    def _open_sheet(self, name: Any) -> str:
        if not isinstance(name, str) or name not in self._book:
            raise _Refused(f"WorksheetNotFound({name!r})")
        self._open = name
        return f"<Worksheet {name!r} id:{self._book[name].sheet_id}>"

    def _del_sheet(self, name: Any) -> str:
        raise _Refused(repr(AttributeError(f"'{type(name).__name__}' object has no attribute 'id'")))

    def _freeze_data(self, dimension: Any, num: Any) -> str:
        num = int(num)
        sheet = self._sheet()
        if dimension not in ("rows", "columns"):
            raise _Refused(repr("Error: the dimension should be one of the rows/columns"))
        if num < 0 or num >= (sheet.grid_rows if dimension == "rows" else sheet.grid_cols):
            raise _api_error(f"Invalid requests[0].updateSheetProperties: You can't freeze {num} {dimension}.")
        if dimension == "rows":
            sheet.frozen_rows = num
        else:
            sheet.frozen_cols = num
        return f"You have successfully freeze the {dimension} {num}"

    def _get_A1_annotation(self, row: Any, col: Any) -> str:
        return _address(int(row), int(col))

    def _insert(self, values_list: Any, index: Any, rows: bool) -> list[list[str]]:
        sheet = self._sheet()
        values = _rows_to_float(values_list)
        used = len(self._all()) if rows else len(self._all()[0])
        before = int(index) == used + 1
        if before and index == 1:
            where = "row(s) at the top" if rows else "column(s) at the left edge"
            message = f"inherit_from_before cannot be used when inserting {where} of a spreadsheet"
            raise _Refused(f"GSpreadException({message!r})")
        k, limit = len(values), sheet.grid_rows if rows else sheet.grid_cols
        index = int(index - 1) + 1  # a TypeError for an index given as text, as gspread's arithmetic on it
        if not 1 <= index <= limit + 1:
            raise _api_error(f"Invalid requests[0].insertDimension: index {index} is out of the grid")
        cells = [[_raw(v) for v in line] for line in values]
        if rows:
            sheet.carrying(lambda: _shift(sheet, index, k, rows=True))
            source = index - 1 if before else index + k
            for c in range(1, sheet.grid_cols + 1):
                if (source, c) in sheet.formats:
                    for r in range(index, index + k):
                        sheet.formats[(r, c)] = sheet.formats[(source, c)]
            for i, line in enumerate(cells):
                for j, v in enumerate(line):
                    sheet.set(index + i, 1 + j, v)
            sheet.grid_rows += k
        else:
            sheet.carrying(lambda: _shift(sheet, index, k, rows=False))
            source = index - 1 if before else index + k
            for r in range(1, sheet.grid_rows + 1):
                if (r, source) in sheet.formats:
                    for c in range(index, index + k):
                        sheet.formats[(r, c)] = sheet.formats[(r, source)]
            for j, line in enumerate(cells):
                for i, v in enumerate(line):
                    sheet.set(1 + i, index + j, v)
            sheet.grid_cols += k
        sheet._trim()
        return self._all()

    def _insert_cols(self, values_list: Any, col_idx: Any) -> list[list[str]]:
        return self._insert(values_list, col_idx, rows=False)

    def _insert_rows(self, values_list: Any, row_idx: Any) -> list[list[str]]:
        return self._insert(values_list, row_idx, rows=True)

    def _delete_batch_data(self, dimension: Any, index_list: Any) -> list[list[str]]:
        sheet = self._sheet()
        order = sorted(index_list, key=lambda x: int(x), reverse=True)
        if dimension == "row":
            if len(index_list) >= len(self._all()) - 1:
                raise _Refused(repr(WHOLE_SHEET))
        elif dimension == "col":
            if len(index_list) == len(self._all()[0]):
                raise _Refused(repr(WHOLE_SHEET))
        else:
            raise _Refused(repr("Wrong dimension, please choose from row/col"))
        rows = dimension == "row"
        for i in order:
            start = i - 1  # a TypeError for an index given as text, as upstream's arithmetic on it
            limit = sheet.grid_rows if rows else sheet.grid_cols
            if not 0 <= start < limit:
                raise _api_error(f"Invalid requests[0].deleteDimension: index {i} is out of the grid")
            if limit == 1:
                raise _api_error("Invalid requests[0].deleteDimension: You can't delete all the "
                                 f"{'rows' if rows else 'columns'} on the sheet.")
            sheet.carrying(lambda i=i: _shift(sheet, i, -1, rows=rows))
            if rows:
                sheet.grid_rows -= 1
            else:
                sheet.grid_cols -= 1
        return self._all()

    def _update_cell(self, position: Any, value: Any) -> list[list[str]]:
        value = _to_float(value)
        row, col = _label(position)
        sheet = self._sheet()
        if row > sheet.grid_rows or col > sheet.grid_cols:
            raise _api_error(f"Range ('{sheet.name}'!{position}) exceeds grid limits. Max rows: {sheet.grid_rows}, "
                             f"max columns: {sheet.grid_cols}")
        _typed(sheet, row, col, value)
        return self._all()

    def _formula(self, operator: Any, start: Any, end: Any, cells: Any, result: Any | None) -> str | None:
        """The formula upstream's formula tools write, or None when a position is not one letter and digits."""
        extra = [] if result is None else [result]
        if cells is None:
            if all(_ONE_LETTER_A1.match(p) for p in [start, end, *extra]):
                return f"={operator}({start}:{end})"
            return None
        if all(_ONE_LETTER_A1.match(p) for p in cells) and all(_ONE_LETTER_A1.match(p) for p in extra):
            return f"={operator}({','.join(cells)})"
        return None

    def _update_cell_by_formula(self, operator: Any, result_position: Any, start_position: Any = "B1",
                                end_position: Any = "D2", position_list: Any = None) -> list[list[str]]:
        if operator not in OPERATORS:
            raise _Refused(repr(BAD_OPERATOR))
        formula = self._formula(operator, start_position, end_position, position_list, result_position)
        if formula is None:
            raise _Refused(repr(BAD_POSITION))
        return self._update_cell(result_position, formula)

    def _update_range(self, start_position: Any, end_position: Any, values_list: Any) -> list[list[str]]:
        sheet = self._sheet()
        shown = self._all()
        if start_position == "A1" and end_position == _address(len(shown), len(shown[0])):
            raise _Refused(repr(WHOLE_UPDATE))
        values = _rows_to_float(values_list)
        top, left, bottom, right = _range(sheet, start_position, end_position)
        if len(values) > bottom - top + 1:
            raise _api_error(f"Requested writing within range ['{sheet.name}'!{start_position}:{end_position}], but "
                             f"tried writing to row [{bottom + 1}]")
        for line in values:
            if len(line) > right - left + 1:
                raise _api_error(f"Requested writing within range ['{sheet.name}'!{start_position}:{end_position}], "
                                 f"but tried writing to column [{_address(1, right + 1)[:-1]}]")
        cells = [[_raw(v) for v in line] for line in values]
        for i, line in enumerate(cells):
            for j, v in enumerate(line):
                sheet.set(top + i, left + j, v)
        sheet._trim()
        return self._all()

    def _sort_sheet_by_col(self, col_num: Any, order: Any) -> list[list[str]]:
        sheet = self._sheet()
        col = int(col_num)
        if order not in ("asc", "des"):
            raise _Refused(repr(ValueError("Either 'asc' or 'des' should be specified as sort order.")))
        if not 1 <= col <= sheet.grid_cols:
            raise _api_error(f"Invalid requests[0].sortRange: dimensionIndex {col - 1} is out of the range")
        if col <= sheet.n_cols:  # (by a column without values the order stays: every key is empty)
            try:
                sheet.carrying(lambda: sheet.sort(col, order == "des"))
            except SheetError:
                raise _api_error("Invalid requests[0].sortRange: You can't sort a range that includes vertically "
                                 "merged cells.") from None
        return self._all()

    def _merge_cells(self, start_position: Any, end_position: Any) -> list[list[str]]:
        sheet = self._sheet()
        box = _range(sheet, start_position, end_position)
        if box[0] == box[2] and box[1] == box[3]:
            raise _api_error("Invalid requests[0].mergeCells: the range must span more than one cell.")
        sheet.merge(*box)
        return self._all()

    def _update_note(self, position: Any, content: Any) -> str:
        if not isinstance(content, str):
            raise _Refused(repr(TypeError(f"Only string allowed as content for a note: '{position} - {content}'")))
        sheet = self._sheet()
        row, col = _range(sheet, position, position)[:2]
        if content:
            sheet.notes[(row, col)] = content
        else:
            sheet.notes.pop((row, col), None)
        return f"Updated! the {position}'s note is {self._get_note(position)}"

    def _get_all_values(self) -> list[list[str]]:
        return self._all()

    def _get_range_values(self, start_position: Any, end_position: Any) -> list[list[str]]:
        sheet = self._sheet()
        return sheet.values(*_range(sheet, start_position, end_position))

    def _get_cell_value(self, position: Any) -> str | None:
        sheet = self._sheet()
        row, col = _label(position)
        text = sheet.shown(row, col)
        return text if text else None

    def _get_value_by_formula(self, operator: Any, start_position: Any = "B1", end_position: Any = "D2",
                              position_list: Any = None) -> str | None:
        sheet = self._sheet()
        width = len(self._all()[0])
        self._insert([[1]], width + 1, rows=False)  # upstream's scratch column, its first cell holding 1
        if operator not in OPERATORS:
            self._drop_column(width + 1)
            raise _Refused(repr(BAD_OPERATOR))
        formula = self._formula(operator, start_position, end_position, position_list, None)
        if formula is None:  # upstream leaves its scratch column in place here
            raise _Refused(repr(BAD_POSITION if position_list is not None else BAD_RANGE))
        _typed(sheet, 1, width + 1, formula)
        result = self._get_cell_value(_address(1, width + 1))
        self._drop_column(width + 1)
        return result

    def _drop_column(self, col: int) -> None:
        sheet = self._sheet()
        sheet.carrying(lambda: _shift(sheet, col, -1, rows=False))
        sheet.grid_cols -= 1

    def _filter_cells(self, query: Any, in_row: Any = None, in_column: Any = None) -> list[str]:
        in_row = int(in_row) if in_row is not None else None
        in_column = int(in_column) if in_column is not None else None
        sheet = self._sheet()
        pattern = re.compile(query) if isinstance(query, str) else query
        raw = [[sheet.shown(r, c) for c in range(1, sheet.n_cols + 1)] for r in range(1, sheet.n_rows + 1)]
        if in_row and in_column:
            raise TypeError("Either 'in_row' or 'in_column' should be specified.")
        if in_column:
            cells = [(i + 1, in_column, row[in_column - 1]) for i, row in enumerate(raw)]
        elif in_row:
            cells = [(in_row, j + 1, v) for j, v in enumerate(raw[in_row - 1])]
        else:
            cells = [(i + 1, j + 1, v) for i, row in enumerate(raw) for j, v in enumerate(row)]
        return [_address(r, c) for r, c, v in cells if pattern.search(v)]

    def _get_note(self, position: Any) -> str:
        sheet = self._sheet()
        row, col = _range(sheet, position, position)[:2]
        return sheet.notes.get((row, col), "")

    def _finish(self) -> list[list[str]]:
        return self._all()

    # -- the tools as declared (schemas, the rules' list, the expert's and the random policy's calls) -----------
    @tool
    def open_sheet(self, name: str) -> str:
        """Open a sheet by name.

        Args:
            name: the sheet's name, e.g. "Sheet7".
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def del_sheet(self, name: str) -> str:
        """Delete a sheet.

        Args:
            name: the sheet's name.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def freeze_data(self, dimension: Literal["rows", "columns"], num: int) -> str:
        """Freeze rows or columns (a sort leaves the frozen rows in place).

        Args:
            dimension: "rows" or "columns".
            num: how many to freeze.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def get_A1_annotation(self, row: int, col: int) -> str:
        """The A1 address of a cell.

        Args:
            row: the row, from 1.
            col: the column, from 1.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def insert_cols(self, values_list: list[list[str | float]], col_idx: int) -> str:
        """Insert columns at a column index; the sheet's values.

        Args:
            values_list: one list of values per column, from row 1 down.
            col_idx: the index the first new column gets.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def insert_rows(self, values_list: list[list[str | float]], row_idx: int) -> str:
        """Insert rows at a row index; the sheet's values.

        Args:
            values_list: one list of values per row, from column A on.
            row_idx: the index the first new row gets.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def delete_batch_data(self, dimension: Literal["row", "col"], index_list: list[int]) -> str:
        """Delete rows or columns by their indexes; the sheet's values.

        Args:
            dimension: "row" or "col".
            index_list: the indexes to delete.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def update_cell(self, position: str, value: str | float) -> str:
        """Set a cell (a value starting with "=" is a formula); the sheet's values.

        Args:
            position: the cell in A1 notation.
            value: the value.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def update_cell_by_formula(self, operator: Literal["SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT"],
                               result_position: str, start_position: str = "B1", end_position: str = "D2",
                               position_list: list[str] | None = None) -> str:
        """Write a formula over a range or a list of cells into a cell; the sheet's values.

        Args:
            operator: the operator.
            result_position: the cell receiving the formula.
            start_position: the range's first cell (without position_list).
            end_position: the range's last cell (without position_list).
            position_list: the cells, instead of a range.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def update_range(self, start_position: str, end_position: str, values_list: list[list[str | float]]) -> str:
        """Write rows of values into a range; the sheet's values.

        Args:
            start_position: the range's top-left cell.
            end_position: the range's bottom-right cell.
            values_list: the rows of values.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def sort_sheet_by_col(self, col_num: int, order: Literal["asc", "des"]) -> str:
        """Sort the rows below the frozen ones by a column; the sheet's values.

        Args:
            col_num: the column, from 1.
            order: "asc" or "des".
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def merge_cells(self, start_position: str, end_position: str) -> str:
        """Merge a range into one cell; the sheet's values.

        Args:
            start_position: the top-left cell.
            end_position: the bottom-right cell.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def update_note(self, position: str, content: str) -> str:
        """Set a cell's note.

        Args:
            position: the cell.
            content: the note.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def get_all_values(self) -> str:
        """The open sheet's values, row by row."""
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def get_range_values(self, start_position: str, end_position: str) -> str:
        """A range's values, row by row.

        Args:
            start_position: the range's top-left cell.
            end_position: the range's bottom-right cell.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def get_cell_value(self, position: str) -> str:
        """A cell's value.

        Args:
            position: the cell.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def get_value_by_formula(self, operator: Literal["SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT"],
                             start_position: str = "B1", end_position: str = "D2",
                             position_list: list[str] | None = None) -> str:
        """Compute a formula over a range or a list of cells, without writing it.

        Args:
            operator: the operator.
            start_position: the range's first cell (without position_list).
            end_position: the range's last cell (without position_list).
            position_list: the cells, instead of a range.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def filter_cells(self, query: str, in_row: int | None = None, in_column: int | None = None) -> str:
        """The addresses of the cells a regular expression finds (searched in their displayed text).

        Args:
            query: the regular expression.
            in_row: only this row.
            in_column: only this column.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def get_note(self, position: str) -> str:
        """A cell's note ("" without one).

        Args:
            position: the cell.
        """
        raise NotImplementedError("step() runs the tools as upstream does")

    @tool
    def finish(self) -> StepResult:  # type: ignore[override]
        """End the task; the sheet's values."""
        raise NotImplementedError("step() runs finish as upstream does")


#: the arguments upstream's environment reads from the input, per tool (the formula tools and filter_cells aside)
_ARGS: dict[str, tuple[str, ...]] = {
    "open_sheet": ("name",), "del_sheet": ("name",), "freeze_data": ("dimension", "num"),
    "get_A1_annotation": ("row", "col"), "insert_cols": ("values_list", "col_idx"),
    "insert_rows": ("values_list", "row_idx"), "delete_batch_data": ("dimension", "index_list"),
    "update_cell": ("position", "value"), "update_range": ("start_position", "end_position", "values_list"),
    "sort_sheet_by_col": ("col_num", "order"), "merge_cells": ("start_position", "end_position"),
    "update_note": ("position", "content"), "get_all_values": (),
    "get_range_values": ("start_position", "end_position"),
    "get_cell_value": ("position",), "get_note": ("position",), "finish": ()}


def _shift(sheet: GridSheet, index: int, k: int, *, rows: bool) -> None:
    """Insert ``k`` empty rows/columns at ``index`` (k > 0), or delete the one at ``index`` (k == -1), anywhere in
    the grid (the native sheet's own edits check against its used range; beyond it only notes and formats move)."""
    used = sheet.n_rows if rows else sheet.n_cols
    if k > 0 and index <= used + 1:
        empty: list[list[object]] = [[] for _ in range(k)]
        (sheet.insert_rows if rows else sheet.insert_cols)(index, empty)
    elif k < 0 and index <= used:
        (sheet.delete_rows if rows else sheet.delete_cols)([index])
    else:
        def moved(n: int) -> int:
            return n + k if (n >= index if k > 0 else n > index) else n
        sheet.notes = {((moved(r), c) if rows else (r, moved(c))): t for (r, c), t in sheet.notes.items()
                       if k > 0 or (r if rows else c) != index}


# -- the expert: the reference action path ------------------------------------------------------------------------

_LISTS = ("values_list", "index_list", "position_list")
_INTS = ("col_num", "num", "row_idx", "col_idx", "in_row", "in_column", "row", "col")
_COMPILED = re.compile(r"^re\.compile\((.*)\)$", re.DOTALL)


def _expert_args(args: dict[str, Any]) -> dict[str, Any]:
    """A reference call's input as a call that does what it means: its lists written as text read as lists, its
    numbers written as text as numbers, its ``re.compile('...')`` queries as the pattern itself."""
    out = {}
    for key, value in args.items():
        if isinstance(value, str) and key in _LISTS:
            value = ast.literal_eval(value)
        elif isinstance(value, str) and key in _INTS and value.strip().lstrip("-").isdigit():
            value = int(value)
        elif isinstance(value, str) and key == "query" and _COMPILED.match(value):
            value = ast.literal_eval(_COMPILED.match(value).group(1))  # type: ignore[union-attr]
        out[key] = value
    return out


def _cells(a: dict[str, Any]) -> str:
    return ", ".join(a["position_list"]) if a.get("position_list") else f"{a['start_position']}:{a['end_position']}"


def _why(tool_name: str, a: dict[str, Any]) -> str:
    """The expert's thought for one call of the reference path."""
    if tool_name == "get_note":
        return f"The note on {a['position']} says what to change, so I read it."
    if tool_name == "filter_cells":
        scope = (f" in column {a['in_column']}" if a.get("in_column")
                 else f" in row {a['in_row']}" if a.get("in_row") else "")
        return f"I look for the cells matching {a['query']!r}{scope} to find the rows concerned."
    if tool_name == "get_value_by_formula":
        cells = _cells(a)
        return f"I compute the {a['operator']} of {cells} to decide what to change."
    if tool_name == "update_cell":
        return f"I set {a['position']} to {a['value']}."
    if tool_name == "update_range":
        return f"I write the new values into {a['start_position']}:{a['end_position']}."
    if tool_name == "update_cell_by_formula":
        cells = _cells(a)
        return f"{a['result_position']} gets the {a['operator']} of {cells}."
    if tool_name == "delete_batch_data":
        return f"The {a['dimension']}s {a['index_list']} have to go, so I delete them in one call."
    if tool_name == "sort_sheet_by_col":
        way = "descending" if a["order"] == "des" else "ascending"
        return f"Now I sort the table by column {a['col_num']} in {way} order."
    if tool_name in ("insert_rows", "insert_cols"):
        where = a.get("row_idx", a.get("col_idx"))
        return f"I insert the new {'rows' if tool_name == 'insert_rows' else 'columns'} at index {where}."
    if tool_name == "freeze_data":
        return f"I freeze {a['num']} {a['dimension']} so that the header stays on top when I sort."
    if tool_name == "merge_cells":
        return f"I merge {a['start_position']}:{a['end_position']} into one cell."
    return f"I call {tool_name}."


def expert_program(task: UpstreamTask) -> tuple[GoldCall, ...]:
    """Open the sheet the goal names, make the reference path's calls (:func:`_expert_args`), finish."""
    calls = [GoldCall("open_sheet", {"name": task.sheet or "Sheet1"},
                      f'The goal is about "{task.sheet}", so I open it first.')]
    for tool_name, args in task.reference:
        a = _expert_args(args)
        calls.append(GoldCall(tool_name, a, _why(tool_name, a)))
    calls.append(GoldCall("finish", {}, "The sheet is now as the goal asks, so I finish."))
    return tuple(calls)
