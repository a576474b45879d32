"""Tasks: a generated workbook, a goal in AgentGym's wording, the gold program, and what is graded.

Editing tasks (sort, update, delete, insert, add totals, follow the notes, ...) are graded on the
target sheet's final state; reading tasks on the answer given to ``finish``. Every task is built
from a seeded RNG (``sheet:<split>:<task_id>``), so the splits are the same on every machine. The
gold program (the expert's tool calls, each with the reason for it) is computed from the generated
table when the task is built; the expected final sheet is computed independently of the sheet
engine (plain list operations), so the expert's success also checks the engine.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentenv import tasksets
from agentenv.gold import GoldCall
from agentenv_sheet.a1 import col_letters, to_a1
from agentenv_sheet.formula import Value
from agentenv_sheet.tables import FIRST_NAMES, GADGETS, GENERATORS, LAST_NAMES, TASK_NAMES, Table
from agentenv_sheet.workbook import Grid, Sheet, Workbook, show

TEST_SIZE = 20  # as AgentGym's AgentEval sheet set
TRAIN_SIZE = 240


@dataclass
class Task:
    kind: str
    goal: str
    sheet: str  # the sheet the goal is about
    workbook: Workbook  # the initial workbook (shared, read-only: sessions copy it)
    gold: list[GoldCall]
    expected: Grid | None = None  # the target sheet's final used range (editing tasks)
    answer: str | float | None = None  # the expected answer (reading tasks)
    keys: tuple[str, ...] = ()  # the table's row keys (a text answer must name the right one only)

    @property
    def reading(self) -> bool:
        return self.expected is None


class _NoTask(Exception):
    """This table cannot carry this kind of task (e.g. a tie at the top): draw another table."""


def _pick(rng: random.Random, options: list[Any]) -> Any:
    if not options:
        raise _NoTask
    return rng.choice(options)


@dataclass
class _Draft:
    """What a task kind decides: its goal, its calls after open+read, and its outcome."""

    goal: str
    calls: list[GoldCall]
    expected: Grid | None = None
    answer: str | float | None = None
    notes: dict[tuple[int, int], str] = field(default_factory=dict)


# -- helpers over plain rows -----------------------------------------------------------------------

def _q(text: str) -> str:
    return f'"{text}"'


def _rows(table: Table) -> list[list[Value]]:
    return [list(r) for r in table.rows]


def _sorted(rows: list[list[Value]], col: int, descending: bool) -> list[list[Value]]:
    """Stable sort on one column (the columns here hold one type each and no empty cells)."""
    return sorted(rows, key=lambda r: (r[col].lower() if isinstance(r[col], str) else r[col]), reverse=descending)


def _fmt(value: float, decimals: int) -> str:
    return show(round(value, decimals))


def _values(rows: list[list[Value]]) -> list[list[str]]:
    return [[show(v) for v in row] for row in rows]


def _maybe_sort(rng: random.Random, table: Table, rows: list[list[Value]], calls: list[GoldCall],
                avoid: int | None = None) -> tuple[str, list[list[Value]]]:
    """Half the time, a final "then sort by X" (as most of AgentGym's sheet goals end)."""
    if rng.random() < 0.5:
        return "", rows
    choices = [c for c in table.numbers if c != avoid] or list(table.numbers)
    col = rng.choice(choices)
    desc = rng.random() < 0.7
    word = "descending" if desc else "ascending"
    calls.append(GoldCall("sort_sheet_by_col", {"col_num": col + 1, "order": "des" if desc else "asc"},
                          f'Last, the table must be sorted by {_q(table.header[col])}, column {col + 1}, in {word} '
                          "order; row 1 is frozen, so the header stays on top."))
    return f' Then, sort the table by {_q(table.header[col])} in {word} order.', _sorted(rows, col, desc)


def _escape(text: str) -> str:
    """A regular expression matching ``text`` literally (only the special characters escaped)."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def _editable(table: Table) -> list[int]:
    """Numeric columns whose values a task may change (not class numbers, discount rates or ratings)."""
    return [c for c in table.numbers if table.header[c] not in ("Class", "Discount", "Product Rating")]


def _cap(table: Table, col: int) -> float:
    """The largest value a column may take (scores stop at 100)."""
    return 100.0 if table.domain == "grades" else math.inf


def _noun(table: Table) -> tuple[str, str]:
    return {"inventory": ("product", "products"), "grades": ("student", "students"), "tasks": ("task", "tasks"),
            "payroll": ("employee", "employees"), "sales": ("product", "products")}[table.domain]


# -- editing tasks -----------------------------------------------------------------------------------

def k_sort(rng: random.Random, t: Table, sheet: str) -> _Draft:
    col = rng.choice(list(t.numbers) + [0])
    desc = rng.random() < 0.6
    word = "descending" if desc else "ascending"
    goal = f'In {_q(sheet)}, which holds {t.title}, sort the table by {_q(t.header[col])} in {word} order.'
    calls = [GoldCall("sort_sheet_by_col", {"col_num": col + 1, "order": "des" if desc else "asc"},
                      f'{_q(t.header[col])} is column {col + 1}; the header row is frozen, so sorting keeps it on '
                      "top.")]
    return _Draft(goal, calls, [list(t.header)] + _sorted(_rows(t), col, desc))


def k_restock(rng: random.Random, t: Table, sheet: str) -> _Draft:
    """AgentGym's "Product Update": subtract today's sales from the quantities, then sort."""
    rows = _rows(t)
    qcol = t.header.index("Quantity")
    sold = {r[0]: float(rng.randint(0, int(r[qcol]))) for r in rows if rng.random() < 0.7}
    if not sold:
        sold = {rows[0][0]: 1.0}
    data = [["Product", "Today Sold"]] + [[k, show(v)] for k, v in sold.items()]
    new = [r[qcol] - sold.get(r[0], 0.0) for r in rows]
    for r, q in zip(rows, new, strict=True):
        r[qcol] = q
    letter = col_letters(qcol + 1)
    goal = (f'Product Update: The table in {_q(sheet)} contains the product inventory information, and {data} is '
            f"today's sales data. Please update the quantities in {_q(sheet)} and then sort by \"Quantity\" in "
            "descending order.")
    calls = [GoldCall("update_range", {"start_position": f"{letter}2", "end_position": f"{letter}{len(rows) + 1}",
                                       "values_list": [[show(q)] for q in new]},
                      "Each product's new quantity is its stock minus what was sold today (unsold products keep "
                      f"theirs); I write the whole Quantity column {letter}2:{letter}{len(rows) + 1} at once."),
             GoldCall("sort_sheet_by_col", {"col_num": qcol + 1, "order": "des"},
                      f'Now sort by "Quantity" (column {qcol + 1}) in descending order.')]
    return _Draft(goal, calls, [list(t.header)] + _sorted(rows, qcol, True))


def k_update_values(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    col = rng.choice(_editable(t))
    dec = t.decimals[col]
    picked = sorted(rng.sample(range(len(rows)), rng.randint(2, 4)))
    calls, data = [], [[t.header[0], t.header[col]]]
    for i in picked:
        old = float(rows[i][col])  # type: ignore[arg-type]
        new = old
        while new == old:
            new = round(old * rng.uniform(0.8, 1.25) + rng.choice([-1, 1]) * 10 ** -dec, dec)
            new = min(max(new, 10 ** -dec), _cap(t, col))
        rows[i][col] = new
        data.append([str(rows[i][0]), _fmt(new, dec)])
        pos = to_a1(i + 2, col + 1)
        calls.append(GoldCall("update_cell", {"position": pos, "value": new},
                              f'{rows[i][0]} is in row {i + 2} and {_q(t.header[col])} is column '
                              f"{col_letters(col + 1)}, so its new value {_fmt(new, dec)} goes to {pos}."))
    tail, rows = _maybe_sort(rng, t, rows, calls)
    goal = f'In {_q(sheet)}, which holds {t.title}, update the table with the following information: {data}.{tail}'
    return _Draft(goal, calls, [list(t.header)] + rows)


def k_delete_matching(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    options = []
    for c in t.categories:
        for v in sorted({show(r[c]) for r in rows}):
            hits = [i for i, r in enumerate(rows) if show(r[c]) == v]
            if 1 <= len(hits) <= len(rows) - 3:
                options.append((c, v, hits))
    c, v, hits = _pick(rng, options)
    plural = _noun(t)[1]
    found = [to_a1(i + 2, c + 1) for i in hits]
    calls = [GoldCall("filter_cells", {"query": f"^{_escape(v)}$", "in_column": c + 1},
                      f'I look for the cells of column {c + 1} ({_q(t.header[c])}) that are exactly {_q(v)}.'),
             GoldCall("delete_batch_data", {"dimension": "row", "index_list": [i + 2 for i in hits]},
                      f"The matches are {', '.join(found)}, so rows {', '.join(str(i + 2) for i in hits)} go, all in "
                      "one call (indexes are those of the sheet before the deletion).")]
    kept = [r for i, r in enumerate(rows) if i not in set(hits)]
    tail, kept = _maybe_sort(rng, t, kept, calls)
    goal = f'In {_q(sheet)}, which holds {t.title}, delete the {plural} whose {_q(t.header[c])} is {_q(v)}.{tail}'
    return _Draft(goal, calls, [list(t.header)] + kept)


def k_delete_threshold(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    col = rng.choice([c for c in t.numbers if t.header[c] != "Class"])
    values = sorted({float(r[col]) for r in rows})  # type: ignore[arg-type]
    below = rng.random() < 0.5
    k = rng.randint(1, max(1, min(4, len(rows) - 3)))
    if below:
        cut = values[min(k, len(values) - 1)]
        hits = [i for i, r in enumerate(rows) if float(r[col]) < cut]  # type: ignore[arg-type]
        cond = f"less than {show(cut)}"
    else:
        cut = values[max(len(values) - 1 - k, 0)]
        hits = [i for i, r in enumerate(rows) if float(r[col]) > cut]  # type: ignore[arg-type]
        cond = f"greater than {show(cut)}"
    if not hits or len(hits) > len(rows) - 2:
        return k_delete_matching(rng, t, sheet)
    plural = _noun(t)[1]
    names = ", ".join(str(rows[i][0]) for i in hits)
    calls = [GoldCall("delete_batch_data", {"dimension": "row", "index_list": [i + 2 for i in hits]},
                      f'In column {_q(t.header[col])} the values {cond} belong to {names}, in rows '
                      f"{', '.join(str(i + 2) for i in hits)}; I delete those rows in one call.")]
    kept = [r for i, r in enumerate(rows) if i not in set(hits)]
    tail, kept = _maybe_sort(rng, t, kept, calls)
    goal = (f'In {_q(sheet)}, which holds {t.title}, delete the records of the {plural} whose {_q(t.header[col])} '
            f"is {cond}.{tail}")
    return _Draft(goal, calls, [list(t.header)] + kept)


def k_total_column(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    width = len(t.header)
    res = col_letters(width + 1)
    calls: list[GoldCall] = []
    if t.domain == "grades":
        op = rng.choice(["SUM", "AVERAGE"])
        name = "Total" if op == "SUM" else "Average"
        last = col_letters(width)
        goal = (f'In {_q(sheet)}, which holds {t.title}, add a column {_q(name)} right after the last column and fill '
                f"in each student's {'total' if op == 'SUM' else 'average'} score over the five subjects.")
        calls.append(GoldCall("update_cell", {"position": f"{res}1", "value": name},
                              f"The table ends at column {last}, so the new {_q(name)} header goes to {res}1."))
        for i, r in enumerate(rows):
            nums = [float(x) for x in r[2:]]  # type: ignore[arg-type]
            r.append(math.fsum(nums) if op == "SUM" else math.fsum(nums) / len(nums))
            calls.append(GoldCall("update_cell_by_formula",
                                  {"start_position": f"C{i + 2}", "end_position": f"{last}{i + 2}",
                                   "result_position": f"{res}{i + 2}", "operator": op},
                                  f"{r[0]}'s scores are C{i + 2}:{last}{i + 2}; their {op} goes to {res}{i + 2}."))
        header = [*t.header, name]
    elif t.domain == "sales":
        name = "Revenue"
        goal = (f'In {_q(sheet)}, which holds {t.title}, add a column "Revenue" after the last column holding each '
                'product\'s revenue ("Units Sold" times "Unit Price").')
        calls.append(GoldCall("update_cell", {"position": f"{res}1", "value": name},
                              f"The table ends at column {col_letters(width)}, so the Revenue header goes to {res}1."))
        for i, r in enumerate(rows):
            r.append(float(r[2]) * float(r[3]))  # type: ignore[arg-type]
            calls.append(GoldCall("update_cell_by_formula",
                                  {"position_list": [f"C{i + 2}", f"D{i + 2}"], "result_position": f"{res}{i + 2}",
                                   "operator": "PRODUCT"},
                                  f"{r[0]}: revenue = C{i + 2} (units) x D{i + 2} (price), written to {res}{i + 2}."))
        header = [*t.header, name]
    else:  # payroll: a formula per row through update_cell
        name = "Salary"
        goal = (f'In {_q(sheet)}, which holds {t.title}, add a column "Salary" after the last column with each '
                'employee\'s salary: "Hours Worked" times "Hourly Rate", plus "Bonus".')
        calls.append(GoldCall("update_cell", {"position": f"{res}1", "value": name},
                              f"The table ends at column {col_letters(width)}, so the Salary header goes to {res}1."))
        for i, r in enumerate(rows):
            r.append(float(r[3]) * float(r[4]) + float(r[5]))  # type: ignore[arg-type]
            calls.append(GoldCall("update_cell", {"position": f"{res}{i + 2}", "value": f"=D{i + 2}*E{i + 2}+F{i + 2}"},
                                  f"{r[0]}: salary = D{i + 2} x E{i + 2} + F{i + 2}; a formula computes it in "
                                  f"{res}{i + 2}."))
        header = [*t.header, name]
    return _Draft(goal, calls, [header] + rows)


def k_total_row(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    cols = sorted(rng.sample(list(t.summable), min(len(t.summable), rng.randint(1, 2))))
    n = len(rows)
    total = [None] * len(t.header)
    total[0] = "Total"
    calls = [GoldCall("update_cell", {"position": f"A{n + 2}", "value": "Total"},
                      f"The data ends at row {n + 1}, so the Total row is row {n + 2}; its label goes to A{n + 2}.")]
    for c in cols:
        letter = col_letters(c + 1)
        total[c] = math.fsum(float(r[c]) for r in rows)  # type: ignore[arg-type]
        calls.append(GoldCall("update_cell_by_formula",
                              {"start_position": f"{letter}2", "end_position": f"{letter}{n + 1}",
                               "result_position": f"{letter}{n + 2}", "operator": "SUM"},
                              f"The sum of {_q(t.header[c])} ({letter}2:{letter}{n + 1}) goes under it, in "
                              f"{letter}{n + 2}."))
    names = " and ".join(_q(t.header[c]) for c in cols)
    goal = (f'In {_q(sheet)}, which holds {t.title}, add a row "Total" right below the table (its label in the '
            f"first column) with the sum of {names}; leave its other cells empty.")
    return _Draft(goal, calls, [list(t.header)] + rows + [total])


def _new_record(rng: random.Random, t: Table, taken: set[str]) -> list[Value]:
    """A record the table does not hold yet, with values in the ranges of its columns."""
    pool = {"grades": FIRST_NAMES, "tasks": TASK_NAMES, "sales": GADGETS,
            "payroll": [f"{f} {ln}" for f in FIRST_NAMES for ln in LAST_NAMES],
            "inventory": ["avocado", "melon", "plum", "celery", "garlic", "sausage", "cod", "clam"]}[t.domain]
    key = rng.choice(sorted(set(pool) - taken))
    donor = rng.choice(t.rows)
    record: list[Value] = [key]
    for c in range(1, len(t.header)):
        if c in t.numbers:
            col = [float(v) for v in t.column(c)]  # type: ignore[arg-type]
            low, high = min(col), max(col)
            record.append(round(rng.uniform(low, high), t.decimals[c]) if t.decimals[c] else float(rng.randint(
                int(low), int(high))))
        else:
            record.append(donor[c])
    return record


def k_insert_rows(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    taken = {str(r[0]) for r in rows}
    new = []
    for _ in range(rng.randint(1, 2)):
        rec = _new_record(rng, t, taken)
        taken.add(str(rec[0]))
        new.append(rec)
    described = " and ".join(str([show(v) for v in rec]) for rec in new)
    col = rng.choice([0, *t.numbers])
    desc = col != 0 and rng.random() < 0.7
    word = "descending" if desc else "ascending"
    n = len(rows)
    calls = [GoldCall("insert_rows", {"values_list": [list(rec) for rec in new],
                                      "row_idx": n + 2},
                      f"The table's last row is {n + 1}; I append the new records below it, at row {n + 2}."),
             GoldCall("sort_sheet_by_col", {"col_num": col + 1, "order": "des" if desc else "asc"},
                      f'Then sort by {_q(t.header[col])} (column {col + 1}) in {word} order.')]
    goal = (f'Insert {described} (values in the column order {list(t.header)}) into {_q(sheet)} and sort the table '
            f'by {_q(t.header[col])} in {word} order.')
    return _Draft(goal, calls, [list(t.header)] + _sorted(rows + new, col, desc))


def k_notes(rng: random.Random, t: Table, sheet: str) -> _Draft:
    """AgentGym's note tasks: corrections written as notes on the records' key cells."""
    rows = _rows(t)
    picked = sorted(rng.sample(range(len(rows)), rng.randint(2, 4)))
    notes: dict[tuple[int, int], str] = {}
    reads, writes = [], []
    for i in picked:
        col = rng.choice(_editable(t))
        dec = t.decimals[col]
        old = float(rows[i][col])  # type: ignore[arg-type]
        new = old
        while new == old:
            new = round(old * rng.uniform(0.75, 1.3) + rng.choice([-1, 1]) * 10 ** -dec, dec)
            new = min(max(new, 10 ** -dec), _cap(t, col))
        rows[i][col] = new
        notes[(i + 2, 1)] = f"Corrected {t.header[col]}: {_fmt(new, dec)}"
        pos = to_a1(i + 2, col + 1)
        reads.append(GoldCall("get_note", {"position": f"A{i + 2}"}, f"{rows[i][0]} is in A{i + 2}; I read its note."))
        writes.append(GoldCall("update_cell", {"position": pos, "value": new},
                               f'The note on A{i + 2} says {_q(notes[(i + 2, 1)])}; {_q(t.header[col])} of row {i + 2} '
                               f"is {pos}."))
    calls = [c for pair in zip(reads, writes, strict=True) for c in pair]
    names = ", ".join(_q(str(rows[i][0])) for i in picked)
    tail, rows = _maybe_sort(rng, t, rows, calls)
    goal = (f'In {_q(sheet)}, which holds {t.title}, please update the data according to the notes on the cells of '
            f"{names}.{tail}")
    return _Draft(goal, calls, [list(t.header)] + rows, notes=notes)


def k_delete_column(rng: random.Random, t: Table, sheet: str) -> _Draft:
    cols = sorted(rng.sample(range(1, len(t.header)), rng.randint(1, 2)))
    names = " and ".join(_q(t.header[c]) for c in cols)
    calls = [GoldCall("delete_batch_data", {"dimension": "col", "index_list": [c + 1 for c in cols]},
                      f"{names} {'is column' if len(cols) == 1 else 'are columns'} "
                      f"{', '.join(str(c + 1) for c in cols)}; I delete {'it' if len(cols) == 1 else 'them'}.")]
    keep = [c for c in range(len(t.header)) if c not in cols]
    goal = f'In {_q(sheet)}, which holds {t.title}, remove the {names} column{"s" if len(cols) > 1 else ""}.'
    return _Draft(goal, calls, [[row[c] for c in keep] for row in [list(t.header)] + _rows(t)])


def k_percent_change(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    target = {"inventory": ("Price", 1), "payroll": ("Hourly Rate", 1), "sales": ("Unit Price", 1)}[t.domain]
    col = t.header.index(target[0])
    group_col = target[1]
    groups = sorted({str(r[group_col]) for r in rows})
    group = rng.choice([g for g in groups if sum(r[group_col] == g for r in rows) <= 5] or groups)
    pct = rng.choice([5, 10, 15, 20, 25])
    up = rng.random() < 0.6
    factor = 1 + pct / 100 if up else 1 - pct / 100
    hits = [i for i, r in enumerate(rows) if r[group_col] == group]
    calls = [GoldCall("filter_cells", {"query": f"^{_escape(group)}$", "in_column": group_col + 1},
                      f'First I find the rows whose {_q(t.header[group_col])} is {_q(group)}.')]
    for i in hits:
        new = round(float(rows[i][col]) * factor, 2)  # type: ignore[arg-type]
        pos = to_a1(i + 2, col + 1)
        calls.append(GoldCall("update_cell", {"position": pos, "value": new},
                              f"Row {i + 2} ({rows[i][0]}): {show(rows[i][col])} x {factor:g} = {show(new)}, "
                              f"written to {pos}."))
        rows[i][col] = new
    tail, rows = _maybe_sort(rng, t, rows, calls)
    goal = (f'In {_q(sheet)}, which holds {t.title}, {"increase" if up else "decrease"} the {_q(t.header[col])} '
            f'of every record whose {_q(t.header[group_col])} is {_q(group)} by {pct}% (round to 2 decimals).{tail}')
    return _Draft(goal, calls, [list(t.header)] + rows)


# -- reading tasks -------------------------------------------------------------------------------------

def k_sum_where(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    c = rng.choice(t.categories)
    v = rng.choice(sorted({show(r[c]) for r in rows}))
    col = rng.choice(t.summable)
    hits = [i for i, r in enumerate(rows) if show(r[c]) == v]
    total = math.fsum(float(rows[i][col]) for i in hits)  # type: ignore[arg-type]
    cells = [to_a1(i + 2, col + 1) for i in hits]
    calls = [GoldCall("filter_cells", {"query": f"^{_escape(v)}$", "in_column": c + 1},
                      f'I find the rows whose {_q(t.header[c])} is {_q(v)}.'),
             GoldCall("get_value_by_formula", {"position_list": cells, "operator": "SUM"},
                      f"They are rows {', '.join(str(i + 2) for i in hits)}; the SUM of their {_q(t.header[col])} "
                      f"cells {', '.join(cells)} is the answer."),
             GoldCall("finish", {"answer": show(total)}, f"The total is {show(total)}.")]
    plural = _noun(t)[1]
    goal = (f'In {_q(sheet)}, which holds {t.title}, what is the total {_q(t.header[col])} of the {plural} whose '
            f'{_q(t.header[c])} is {_q(v)}? Answer with the number.')
    return _Draft(goal, calls, answer=total)


def k_extreme(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    options = []
    for col in t.numbers:
        if t.header[col] == "Class":
            continue
        vals = [float(r[col]) for r in rows]  # type: ignore[arg-type]
        for high in (True, False):
            best = max(vals) if high else min(vals)
            if vals.count(best) == 1:
                options.append((col, high, best))
    col, high, best = _pick(rng, options)
    i = [float(r[col]) for r in rows].index(best)  # type: ignore[arg-type]
    letter = col_letters(col + 1)
    op = "MAX" if high else "MIN"
    noun = _noun(t)[0]
    calls = [GoldCall("get_value_by_formula",
                      {"start_position": f"{letter}2", "end_position": f"{letter}{len(rows) + 1}", "operator": op},
                      f'{_q(t.header[col])} is column {letter}; its {op} over {letter}2:{letter}{len(rows) + 1} is the '
                      "value to look for."),
             GoldCall("filter_cells", {"query": f"^{_escape(show(best))}$", "in_column": col + 1},
                      f"The {op} is {show(best)}; I find the row that holds it."),
             GoldCall("get_cell_value", {"position": f"A{i + 2}"},
                      f"It is in row {i + 2}; the {noun}'s name is in A{i + 2}."),
             GoldCall("finish", {"answer": str(rows[i][0])}, f"A{i + 2} holds {rows[i][0]}, the answer.")]
    goal = (f'In {_q(sheet)}, which holds {t.title}, which {noun} has the {"highest" if high else "lowest"} '
            f'{_q(t.header[col])}? Answer with its {_q(t.header[0])}.')
    return _Draft(goal, calls, answer=str(rows[i][0]))


def k_average(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    col = rng.choice([c for c in t.numbers if t.header[c] != "Class"])
    letter = col_letters(col + 1)
    avg = math.fsum(float(r[col]) for r in rows) / len(rows)  # type: ignore[arg-type]
    calls = [GoldCall("get_value_by_formula",
                      {"start_position": f"{letter}2", "end_position": f"{letter}{len(rows) + 1}",
                       "operator": "AVERAGE"},
                      f'{_q(t.header[col])} is column {letter}, rows 2 to {len(rows) + 1}; AVERAGE gives the answer.'),
             GoldCall("finish", {"answer": f"{avg:.2f}"}, f"The average is {avg:.2f} rounded to 2 decimals.")]
    plural = _noun(t)[1]
    goal = (f'In {_q(sheet)}, which holds {t.title}, what is the average {_q(t.header[col])} over all {plural}? '
            "Answer with the number rounded to 2 decimals.")
    return _Draft(goal, calls, answer=round(avg, 2))


def k_count_where(rng: random.Random, t: Table, sheet: str) -> _Draft:
    rows = _rows(t)
    c = rng.choice(t.categories)
    v = rng.choice(sorted({show(r[c]) for r in rows}))
    hits = [i for i, r in enumerate(rows) if show(r[c]) == v]
    calls = [GoldCall("filter_cells", {"query": f"^{_escape(v)}$", "in_column": c + 1},
                      f'I find the cells of column {c + 1} ({_q(t.header[c])}) that are exactly {_q(v)}.'),
             GoldCall("finish", {"answer": str(len(hits))}, f"{len(hits)} cells match, so {len(hits)} records.")]
    plural = _noun(t)[1]
    goal = (f'In {_q(sheet)}, which holds {t.title}, how many {plural} have {_q(t.header[c])} {_q(v)}? '
            "Answer with the number.")
    return _Draft(goal, calls, answer=float(len(hits)))


Kind = Callable[[random.Random, Table, str], _Draft]
#: task kinds in the order the splits cycle through them, with the table domains each fits
KINDS: dict[str, tuple[Kind, tuple[str, ...]]] = {
    "sort": (k_sort, tuple(GENERATORS)),
    "restock": (k_restock, ("inventory",)),
    "update_values": (k_update_values, tuple(GENERATORS)),
    "sum_where": (k_sum_where, tuple(GENERATORS)),
    "delete_matching": (k_delete_matching, tuple(GENERATORS)),
    "total_column": (k_total_column, ("grades", "sales", "payroll")),
    "extreme": (k_extreme, tuple(GENERATORS)),
    "notes": (k_notes, tuple(GENERATORS)),
    "total_row": (k_total_row, tuple(GENERATORS)),
    "delete_threshold": (k_delete_threshold, tuple(GENERATORS)),
    "average": (k_average, tuple(GENERATORS)),
    "insert_rows": (k_insert_rows, tuple(GENERATORS)),
    "percent_change": (k_percent_change, ("inventory", "payroll", "sales")),
    "delete_column": (k_delete_column, tuple(GENERATORS)),
    "count_where": (k_count_where, tuple(GENERATORS)),
}


def _sheet(name: str, sheet_id: int, table: Table) -> Sheet:
    return Sheet(name, sheet_id, [list(table.header)] + [list(r) for r in table.rows])


def build_task(split: str, task_id: int) -> Task:
    """Task ``task_id`` of ``split``: its kind cycles through :data:`KINDS`; the rest is drawn from a seeded RNG."""
    rng = random.Random(f"sheet:{split}:{task_id}")
    kind = list(KINDS)[task_id % len(KINDS)]
    make, domains = KINDS[kind]
    domain = rng.choice(domains)
    numbers = rng.sample(range(1, 31), 3)
    target = f"Sheet{numbers[0]}"
    for _ in range(50):
        n_rows = rng.randint(6, 9) if kind == "total_column" else rng.randint(8, 12)
        table = GENERATORS[domain](rng, n_rows)
        try:
            draft = make(rng, table, target)
            break
        except _NoTask:
            continue
    else:
        raise RuntimeError(f"no {kind} task from {domain} tables")
    others = rng.sample(sorted(set(GENERATORS) - {domain}), 2)
    sheets = [_sheet(target, numbers[0], table)]
    for num, dom in zip(numbers[1:], others, strict=True):
        sheets.append(_sheet(f"Sheet{num}", num, GENERATORS[dom](rng, rng.randint(6, 10))))
    sheets[0].notes.update(draft.notes)
    sheets.sort(key=lambda s: s.sheet_id)
    book = Workbook({s.name: s for s in sheets})
    opening = [GoldCall("open_sheet", {"name": target}, f"The goal is about {_q(target)}; I open it first."),
               GoldCall("get_all_values", {}, "I read the whole sheet to see its columns and rows.")]
    gold = opening + draft.calls
    if draft.expected is not None:
        gold.append(GoldCall("finish", {}, "The sheet now holds what the goal asks for; I finish."))
    return Task(kind, draft.goal.strip(), target, book, gold, draft.expected, draft.answer,
                tuple(str(r[0]) for r in table.rows))


class TaskSet(tasksets.TaskSet[Task]):
    """Every task of every split, built once per server (``load_shared``) and shared read-only; the core's task
    set looks tasks up and checks ids."""

    def __init__(self, splits: dict[str, list[Task]]) -> None:
        self.splits = splits
        super().__init__({split: len(tasks) for split, tasks in splits.items()},
                         lambda split, task_id: self.splits[split][task_id])

    @classmethod
    def build(cls, train: int = TRAIN_SIZE, test: int = TEST_SIZE) -> TaskSet:
        return cls({"train": [build_task("train", i) for i in range(train)],
                    "test": [build_task("test", i) for i in range(test)]})
