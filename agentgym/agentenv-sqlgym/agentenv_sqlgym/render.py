"""What the agent reads: a database's schema, a query's result, the first observation.

The schema is the database's own ``CREATE TABLE`` statements (from ``sqlite_master``, so generated
and published databases look alike) with a few rows of each table under it, which show how values
are written ('2023-04-01', 'Gold', 'Dr. Ana Silva'). Results are a ``|``-separated table of at most
``max_shown`` rows, long cells cut, with the row count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentenv_sqlgym.sandbox import QueryResult, ReadOnlyDatabase

CELL_CHARS = 80
SUBMIT_HINT = ("Run SQL queries to explore the database if you need to. When you are sure, submit the query that "
               "answers the question by writing SUBMIT before it, e.g. SUBMIT SELECT ...")
SINGLE_HINT = "Answer with one SQL query: its result is your answer."


def cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    text = str(value).replace("\n", " ")
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS - 3] + "..."


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = [" | ".join(columns)] if columns else []
    lines += [" | ".join(cell(v) for v in row) for row in rows]
    return "\n".join(lines)


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def schema(db: ReadOnlyDatabase, sample_rows: int = 2) -> str:
    """The CREATE TABLE statements of every table, each followed by ``sample_rows`` of its rows."""
    tables = db.run("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                    "ORDER BY rowid", time_limit=30, max_rows=10_000)
    if not tables.ok:
        raise RuntimeError(f"cannot read the schema of {db.path}: {tables.error}")
    parts = []
    for name, sql in tables.rows:
        text = (sql or f"CREATE TABLE {name} (...)").strip().rstrip(";") + ";"
        if sample_rows > 0:
            rows = db.run(f"SELECT * FROM {quote(name)} LIMIT {int(sample_rows)}", time_limit=30)
            if rows.ok and rows.rows:
                text += f"\n/* {len(rows.rows)} example rows of {name}:\n{table(rows.columns, rows.rows)}\n*/"
        parts.append(text)
    return "\n\n".join(parts)


def first_observation(db_id: str, schema_text: str, question: str, evidence: str = "",
                      single_turn: bool = False) -> str:
    text = f"Database: {db_id}\n\n{schema_text}\n\nQuestion: {question}"
    if evidence:
        text += f"\nEvidence: {evidence}"
    return text + "\n\n" + (SINGLE_HINT if single_turn else SUBMIT_HINT)


def result(res: QueryResult, max_shown: int = 20) -> str:
    """A query's result as the agent reads it."""
    if res.timed_out:
        return f"Error: {res.error}. Simplify the query (a recursive CTE needs an end, joins need conditions)."
    if not res.ok:
        return f"Error: {res.error}"
    n = len(res.rows)
    if n == 0:
        return "The query returned no rows." + (f"\nColumns: {', '.join(res.columns)}" if res.columns else "")
    count = f"more than {n} rows" if res.truncated else f"{n} row{'s' if n != 1 else ''}"
    shown = min(n, max_shown)
    head = f"{count}, the first {shown}:" if n > shown or res.truncated else f"{count}:"
    return f"{head}\n{table(res.columns, res.rows[:shown])}"
