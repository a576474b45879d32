"""The sheet environment: AgentGym's spreadsheet tools on a local, in-memory workbook.

AgentGym's sheet environment drives a copy of a Google spreadsheet through gspread; this one keeps
its tool names, arguments, 1-based rows and columns, A1 notation and the shapes of its results
(the sheet's values as a list of rows, cell addresses as a list), on a workbook generated per task
(:mod:`agentenv_sheet.tasks`). Each session edits its own copy of the task's workbook. Editing
goals are graded on the final sheet when the agent calls ``finish``; questions on its answer.
"""

from __future__ import annotations

import functools
import re
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agentenv.env import StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.tools import GoldCall, ToolEnvironment, ToolError, tool
from agentenv_sheet.a1 import A1Error, is_a1, parse_a1, parse_range, to_a1
from agentenv_sheet.formula import OPERATORS, FormulaError, evaluate
from agentenv_sheet.reward import answer_holds, score, state_checks
from agentenv_sheet.tasks import TEST_SIZE, TRAIN_SIZE, Task, TaskSet
from agentenv_sheet.workbook import Sheet, SheetError, Workbook, show

INSTRUCTION = (
    "You work in a spreadsheet (a workbook of named sheets, as in Google Sheets) through tools. Open the sheet the "
    "goal names with open_sheet before anything else, and read it with get_all_values. Rows and columns are "
    "numbered from 1 (row 1 holds the column headers); cells are written in A1 notation (\"B7\" is column 2, row "
    "7; get_A1_annotation translates). sort_sheet_by_col sorts the rows below the frozen rows (row 1 is frozen "
    "in every sheet, so the header stays on top). A value starting with \"=\" is a formula (e.g. \"=SUM(B2:B9)\", "
    "\"=C2*D2\"); formulas and the formula tools (operators SUM, AVERAGE, COUNT, MAX, MIN, MINUS, PRODUCT) are "
    "computed when written and the cell keeps the result. filter_cells searches cells with a regular expression "
    "(\"^Completed$\" for the exact text). When the goal asks to change the sheet, make the changes and call "
    "finish with no answer: the sheet is graded as you leave it. When it asks a question, call finish with the "
    "answer."
)

_DIMENSION_ROWS = {"row", "rows"}
_DIMENSION_COLS = {"col", "cols", "column", "columns"}


class SheetOptions(BaseModel):
    """Server options."""

    model_config = ConfigDict(extra="forbid")
    train_size: int = Field(TRAIN_SIZE, ge=1, le=10_000, description="tasks in the train split")


@functools.lru_cache(maxsize=4)
def default_tasks(train_size: int = TRAIN_SIZE) -> TaskSet:
    """The generated task set (built once per process; a server builds it in load_shared)."""
    return TaskSet.build(train=train_size, test=TEST_SIZE)


def first_observation(task: Task) -> str:
    """The first observation of a task (reset's and initial_observation's, byte for byte)."""
    sheets = ", ".join(f'"{name}"' for name in task.workbook.sheets)
    ending = ("call finish with your answer" if task.reading
              else "call finish with no answer; the sheet is graded as you leave it")
    return (f"New trial starts. You should perform actions to accomplish the goal: {task.goal}\n"
            f"The spreadsheet holds the sheets {sheets}. Open the sheet the goal names first. Once you have "
            f"finished the goal, {ending}.")


def _render(values: Any) -> str:
    """Values the way AgentGym's tools print them (Python's list form)."""
    return str(values)


class SheetEnv(ToolEnvironment):
    name = "sheet"
    version = "1"
    max_turns = 30
    success_threshold = 1.0
    instruction = INSTRUCTION
    Options = SheetOptions
    #: the expert's gold program edits the sheet, so a call counts only in the program's order (the same
    #: update_cell made before a sort is not the one the program makes after it)
    gold_in_order = True
    # AgentGym's sheet server: /create {"id"} -> int, /reset {"env_idx", "id"} -> the observation string,
    # /step {"env_idx", "action"} -> {observation, reward, done}, GET /observation?env_idx=; no /close.
    # Its 20 tasks (AgentEval's) are ids 0..19 for both splits; ``--compat agentgym`` serves the agentgym
    # profile (index N: its task N), and with ``--option profile=native`` ids 0..19 are our test split.
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        item_prefix="tool_sheet", handle="env_idx", reset_key="id", create_key="id", reset_returns="string",
        index_order=("test", "train"), has_close=False, hello="ok", action_prefix="Action: ", running_reward=True,
        upstream_splits={"train": (0, 20), "test": (0, 20)}, options={"profile": "agentgym"})
    #: ``--option profile=agentgym``: AgentGym's 20 tasks on its reference workbook, read from the user's copy
    profiles = MappingProxyType({"agentgym": "agentenv_sheet.agentgym_profile:AgentGymSheetEnv"})

    def __init__(self) -> None:
        self._task: Task | None = None
        self._book: Workbook | None = None
        self._open: str | None = None

    # -- tasks -------------------------------------------------------------------------------------
    @classmethod
    def num_tasks(cls, split: str) -> int:
        counts = {"train": TRAIN_SIZE, "test": TEST_SIZE}
        if split not in counts:
            raise ValueError(f"unknown split {split!r}")
        return counts[split]

    @classmethod
    def load_shared(cls, options: SheetOptions) -> TaskSet:
        return default_tasks(options.train_size)

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        return dict(shared.counts) if isinstance(shared, TaskSet) else super().task_counts(shared)

    def _tasks(self) -> TaskSet:
        return self.shared if isinstance(self.shared, TaskSet) else default_tasks()

    def initial_observation(self, task_id: int, split: str) -> str:
        return first_observation(self._tasks().splits[split][task_id])

    def reset(self, task_id: int, split: str, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        tasks = self._tasks().splits[split]
        if not 0 <= task_id < len(tasks):
            raise IndexError(f"task_id {task_id} out of range for {split}")
        self._task = tasks[task_id]
        self._book = self._task.workbook.copy()
        self._open = None
        return first_observation(self._task), {"task_id": task_id, "kind": self._task.kind}

    # -- the episode ---------------------------------------------------------------------------------
    def _sheet(self) -> Sheet:
        if self._book is None or self._open is None or self._open not in self._book.sheets:
            raise ToolError("Please open a sheet before operating it")
        return self._book.sheets[self._open]

    def _all(self) -> str:
        return _render(self._sheet().display())

    # -- AgentGym's tools, in its order ---------------------------------------------------------------
    @tool
    def open_sheet(self, name: str) -> str:
        """Open a sheet by name.

        Args:
            name: the name of the sheet to open, e.g. "Sheet3".
        """
        assert self._book is not None
        sheet = _guard(lambda: self._book.sheet(name))  # type: ignore[union-attr]
        self._open = name
        return (f"<Worksheet '{name}' id:{sheet.sheet_id}> is open: you are now in {name} "
                f"({sheet.n_rows} rows, {sheet.n_cols} columns).")

    @tool
    def del_sheet(self, name: str) -> str:
        """Delete the specified sheet.

        Args:
            name: the name of the sheet to be deleted.
        """
        assert self._book is not None
        _guard(lambda: self._book.delete(name))  # type: ignore[union-attr]
        if self._open == name:
            self._open = None
        return f"You have deleted sheet {name} successfully"

    @tool
    def freeze_data(self, dimension: str, num: int) -> str:
        """Freeze rows or columns of the sheet (sorting leaves frozen rows in place).

        Args:
            dimension: "rows" or "columns".
            num: how many rows/columns to freeze (0 unfreezes).
        """
        sheet = self._sheet()
        if num < 0:
            raise ToolError("num must be 0 or more")
        if dimension == "rows":
            sheet.frozen_rows = num
        elif dimension == "columns":
            sheet.frozen_cols = num
        else:
            raise ToolError("the dimension should be one of the rows/columns")
        return f"You have successfully frozen the {dimension} {num}"

    @tool
    def get_A1_annotation(self, row: int, col: int) -> str:
        """Translate the cell position (row, col) into A1 notation.

        Args:
            row: row index, from 1.
            col: column index, from 1.
        """
        self._sheet()
        return _guard(lambda: to_a1(row, col))

    @tool
    def insert_cols(self, values_list: list[list[str | float | None]], col_idx: int) -> str:
        """Insert columns into the sheet at a column index; returns the sheet's values.

        Args:
            values_list: a list of lists, each holding one column's values from row 1 down.
            col_idx: the column the first new column becomes (from 1; the last column + 1 appends).
        """
        sheet = self._sheet()
        if not values_list:
            raise ToolError("values_list is empty")
        _guard(lambda: sheet.insert_cols(col_idx, values_list))
        return self._all()

    @tool
    def insert_rows(self, values_list: list[list[str | float | None]], row_idx: int) -> str:
        """Insert rows into the sheet at a row index; returns the sheet's values.

        Args:
            values_list: a list of lists, each holding one row's values from column A on.
            row_idx: the row the first new row becomes (from 1; the last row + 1 appends).
        """
        sheet = self._sheet()
        if not values_list:
            raise ToolError("values_list is empty")
        _guard(lambda: sheet.insert_rows(row_idx, values_list))
        return self._all()

    @tool
    def delete_batch_data(self, dimension: str, index_list: list[int]) -> str:
        """Delete a batch of rows or columns, by their indexes before the deletion; returns the sheet's values.

        Args:
            dimension: "row" or "col".
            index_list: the indexes (from 1) of the rows/columns to delete.
        """
        sheet = self._sheet()
        if not index_list:
            raise ToolError("index_list is empty")
        if dimension in _DIMENSION_ROWS:
            if len(set(index_list)) >= sheet.n_rows - 1:
                raise ToolError("Warning: You cannot delete whole sheet at once, please try other functions")
            _guard(lambda: sheet.delete_rows(index_list))
        elif dimension in _DIMENSION_COLS:
            if len(set(index_list)) >= sheet.n_cols:
                raise ToolError("Warning: You cannot delete whole sheet at once, please try other functions")
            _guard(lambda: sheet.delete_cols(index_list))
        else:
            raise ToolError("Wrong dimension, please choose from row/col")
        return self._all()

    @tool
    def update_cell(self, position: str, value: str | float | None) -> str:
        """Update the value of a cell (a value starting with "=" is a formula); returns the sheet's values.

        Args:
            position: the cell in A1 notation, e.g. "C5".
            value: the value to set: text, a number, or a formula such as "=C5*1.1".
        """
        sheet = self._sheet()
        row, col = _guard(lambda: parse_a1(position))
        _guard(lambda: sheet.write(row, col, value))
        return self._all()

    @tool
    def update_cell_by_formula(self, operator: str, result_position: str, start_position: str = "B1",
                               end_position: str = "D2", position_list: list[str] | None = None) -> str:
        """Apply a formula to a range (start_position:end_position) or to a list of cells and store the
        result in result_position; returns the sheet's values.

        Args:
            operator: one of SUM, AVERAGE, COUNT, MAX, MIN, MINUS, PRODUCT.
            result_position: the cell in A1 notation that receives the result.
            start_position: the range's first cell in A1 notation (when position_list is not given).
            end_position: the range's last cell in A1 notation (when position_list is not given).
            position_list: cells in A1 notation, e.g. ["C2", "D2"] (instead of a range).
        """
        sheet = self._sheet()
        formula = _formula(operator, start_position, end_position, position_list, result_position)
        row, col = parse_a1(result_position)
        _guard(lambda: sheet.write(row, col, formula))
        return self._all()

    @tool
    def update_range(self, start_position: str, end_position: str, values_list: list[list[str | float | None]]) -> str:
        """Update a range of cells from a list of rows (it must fit in the range); returns the sheet's values.

        Args:
            start_position: the range's top-left cell in A1 notation.
            end_position: the range's bottom-right cell in A1 notation.
            values_list: the rows of values, e.g. [["8"], ["5"]] for a column of two cells.
        """
        sheet = self._sheet()
        top, left, bottom, right = _guard(lambda: parse_range(start_position, end_position))
        if (top, left) == (1, 1) and (bottom, right) == (sheet.n_rows, sheet.n_cols):
            raise ToolError("Warning: You cannot update whole sheet at once, please try other functions")
        if len(values_list) > bottom - top + 1 or any(len(r) > right - left + 1 for r in values_list):
            raise ToolError(f"Requested writing within range {to_a1(top, left)}:{to_a1(bottom, right)}, but "
                            f"values_list has {len(values_list)} rows of up to "
                            f"{max((len(r) for r in values_list), default=0)} values")
        for i, line in enumerate(values_list):
            for j, value in enumerate(line):
                _guard(lambda i=i, j=j, value=value: sheet.write(top + i, left + j, value))
        return self._all()

    @tool
    def sort_sheet_by_col(self, col_num: int, order: str) -> str:
        """Sort the rows below the frozen rows by one column; returns the sheet's values.

        Args:
            col_num: the index of the sort column, from 1.
            order: "asc" or "des".
        """
        sheet = self._sheet()
        if order not in ("asc", "des"):
            raise ToolError("Either 'asc' or 'des' should be specified as the order")
        _guard(lambda: sheet.sort(col_num, order == "des"))
        return self._all()

    @tool
    def merge_cells(self, start_position: str, end_position: str) -> str:
        """Merge a range of cells into one (it keeps the top-left value); returns the sheet's values.

        Args:
            start_position: the top-left cell in A1 notation.
            end_position: the bottom-right cell in A1 notation.
        """
        sheet = self._sheet()
        box = _guard(lambda: parse_range(start_position, end_position))
        _guard(lambda: sheet.merge(*box))
        return self._all()

    @tool
    def update_note(self, position: str, content: str) -> str:
        """Set the note of a cell.

        Args:
            position: the cell in A1 notation.
            content: the text of the note.
        """
        sheet = self._sheet()
        cell = _guard(lambda: parse_a1(position))
        sheet.notes[cell] = content
        return f"Updated! the {position}'s note is {content}"

    @tool
    def get_all_values(self) -> str:
        """All cell values of the current sheet, as a list of rows."""
        return self._all()

    @tool
    def get_range_values(self, start_position: str, end_position: str) -> str:
        """The values of a range, as a list of rows.

        Args:
            start_position: the range's top-left cell in A1 notation.
            end_position: the range's bottom-right cell in A1 notation.
        """
        sheet = self._sheet()
        top, left, bottom, right = _guard(lambda: parse_range(start_position, end_position))
        return _render(sheet.display(top, left, bottom, right))

    @tool
    def get_cell_value(self, position: str) -> str:
        """The value of one cell ("None" when it is empty).

        Args:
            position: the cell in A1 notation.
        """
        sheet = self._sheet()
        row, col = _guard(lambda: parse_a1(position))
        value = sheet.get(*sheet.merge_anchor(row, col))
        return "None" if value is None else show(value)

    @tool
    def get_value_by_formula(self, start_position: str = "B1", end_position: str = "D2",
                             position_list: list[str] | None = None, operator: str = "") -> str:
        """Compute a formula over a range (start_position:end_position) or a list of cells, without writing it.

        Args:
            start_position: the range's first cell in A1 notation (when position_list is not given).
            end_position: the range's last cell in A1 notation (when position_list is not given).
            position_list: cells in A1 notation, e.g. ["F2", "F9"] (instead of a range).
            operator: one of SUM, AVERAGE, COUNT, MAX, MIN, MINUS, PRODUCT.
        """
        sheet = self._sheet()
        formula = _formula(operator, start_position, end_position, position_list, None)
        try:
            return show(evaluate(formula, sheet.get))
        except FormulaError as e:
            raise ToolError(f"the formula {formula} failed: {e}") from None

    @tool
    def filter_cells(self, query: str, in_row: int | None = None, in_column: int | None = None) -> str:
        """The addresses of the cells whose text matches a regular expression (searched anywhere in the text:
        anchor it, e.g. "^Completed$", for whole cells), optionally in one row or one column.

        Args:
            query: a regular expression (plain text matches itself unless it has special characters).
            in_row: only search this row (from 1).
            in_column: only search this column (from 1).
        """
        sheet = self._sheet()
        if in_row is not None and in_column is not None:
            raise ToolError("Either 'in_row' or 'in_column' should be specified, not both")
        try:
            pattern = re.compile(query)
        except re.error as e:
            raise ToolError(f"the query is not a valid regular expression: {e}") from None
        values = sheet.display()
        found = [to_a1(r, c) for r, line in enumerate(values, 1) for c, text in enumerate(line, 1)
                 if (in_row is None or r == in_row) and (in_column is None or c == in_column)
                 and pattern.search(text)]
        return _render(found)

    @tool
    def get_note(self, position: str) -> str:
        """The note of a cell.

        Args:
            position: the cell in A1 notation.
        """
        sheet = self._sheet()
        cell = _guard(lambda: parse_a1(position))
        note = sheet.notes.get(cell)
        return note if note else f"The cell {position} has no note."

    @tool
    def finish(self, answer: str = "") -> StepResult:
        """End the task. For a question, give the answer; for a change to the sheet, call it with no answer
        once the sheet is as the goal asks.

        Args:
            answer: the answer to a question (leave it out when the goal changes the sheet).
        """
        return self.end(self.grade(answer))

    # -- grading and the expert ---------------------------------------------------------------------
    def grade(self, answer: Any) -> StepResult:
        task, book = self._task, self._book
        assert task is not None and book is not None
        if task.reading:
            assert task.answer is not None
            ok = answer_holds(str(answer), task.answer, task.keys)
            reward = 1.0 if ok else 0.0
            text = f"Your answer is {'correct' if ok else 'not correct'}; the task is finished (reward {reward:g})."
            return StepResult(text, reward=reward, success=ok, score=reward, info={"checks": [ok]})
        assert task.expected is not None
        checks = state_checks(task.workbook, book, task.sheet, task.expected)
        reward = score(checks)
        final = book.sheets.get(task.sheet)
        shown = _render(final.display()) if final is not None else f"(the sheet {task.sheet} was deleted)"
        text = (f"The task is finished: {sum(c.holds for c in checks)} of {len(checks)} checks hold "
                f"(reward {reward:.3g}). {task.sheet}: {shown}")
        return StepResult(text, reward=reward, success=reward >= self.success_threshold, score=reward,
                          info={"checks": [c.holds for c in checks]})

    def gold_program(self) -> list[GoldCall]:
        """The task's gold program (open, read, the edits or lookups, finish), followed in order."""
        assert self._task is not None
        return self._task.gold


def _guard(fn: Any) -> Any:
    """Run a sheet operation; what it refuses becomes the tool's error (a valid action, an informative observation)."""
    try:
        return fn()
    except (SheetError, A1Error) as e:
        raise ToolError(str(e)) from None


def _formula(operator: str, start: str, end: str, cells: list[str] | None, result: str | None) -> str:
    """The formula AgentGym's formula tools write: =OP(start:end) or =OP(a,b,...), positions checked."""
    if operator not in OPERATORS:
        raise ToolError(f"the operator should be one of {list(OPERATORS)}")
    positions = ([result] if result is not None else []) + (list(cells) if cells is not None else [start, end])
    if not all(isinstance(p, str) and is_a1(p) for p in positions):
        raise ToolError("In the sheet formula, you should use A1 notation to display all positions in the sheet and "
                        "you can use get_A1_annotation(row, col) to get its A1 address.")
    if cells is not None:
        if not cells:
            raise ToolError("position_list is empty")
        return f"={operator}({','.join(cells)})"
    return f"={operator}({start}:{end})"
