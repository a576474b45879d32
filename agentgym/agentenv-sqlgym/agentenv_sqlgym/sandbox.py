"""Running an agent's SQL safely: read-only, time-limited, size-capped.

An agent's query is untrusted text. Several independent locks keep it from changing a database
every session shares, or from holding the server:

- the file is opened read-only (``file:...?mode=ro`` URI) and ``PRAGMA query_only`` is on;
- an authorizer allows only reading (SELECT, reading columns, calling functions, recursive CTEs and
  a few schema-reading pragmas such as ``table_info``) and denies everything else: writes, DDL,
  ATTACH, transactions, other pragmas, ``load_extension``;
- no database can be attached (``SQLITE_LIMIT_ATTACHED`` 0) and strings/blobs are capped
  (``SQLITE_LIMIT_LENGTH``), so ``randomblob(1e9)`` cannot take the memory;
- a progress handler aborts a query past its time budget (an endless ``WITH RECURSIVE`` stops in
  about the budget); the budget covers fetching the rows too;
- at most ``max_rows`` rows and ``max_bytes`` bytes are fetched;
- one statement per call (the sqlite3 module refuses a second one), and it must be a query (its
  first keyword SELECT, WITH, VALUES, PRAGMA or EXPLAIN) before SQLite sees it at all.

``guard=False`` drops the checks of the statement itself (the authorizer and the first keyword), so a
query's errors are SQLite's own words, as where a profile reproduces a server that shows them (AgentGym's
sqlgym); the read-only file, ``query_only``, the limits, the time budget and the caps stay.

Each session has its own connection, so a slow query of one session never blocks another's.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
#: pragmas that only describe the schema, whatever their argument
READ_PRAGMAS = frozenset({"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
                          "foreign_key_list"})
_DENIED_FUNCTIONS = frozenset({"load_extension"})
QUERY_KEYWORDS = ("select", "with", "values", "pragma", "explain")
STATEMENT_KEYWORDS = frozenset({"insert", "update", "delete", "replace", "upsert", "create", "drop", "alter", "attach",
                                "detach", "begin", "commit", "rollback", "end", "savepoint", "release", "vacuum",
                                "reindex", "analyze"})
_LEADING = re.compile(r"^(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/|\()*", re.DOTALL)
MAX_LENGTH = 1_000_000  # longest string or blob a query may make (bytes)
_CHECK_EVERY = 1000  # SQLite VM instructions between two looks at the clock


def _authorize(action: int, arg1: str | None, arg2: str | None, db_name: str | None, trigger: str | None) -> int:
    """SQLite's authorizer callback: read, or nothing."""
    if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS:
        return sqlite3.SQLITE_DENY
    if action in _ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


@dataclass
class QueryResult:
    """What a query gave: its columns and (at most ``max_rows``) rows, or an error."""

    columns: list[str] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False  # more rows than were fetched
    error: str | None = None
    timed_out: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


class ReadOnlyDatabase:
    """One session's read-only connection to one database file."""

    def __init__(self, path: str | Path, time_limit: float = 1.0, max_rows: int = 200,
                 max_bytes: int = 4_000_000, guard: bool = True) -> None:
        self.path = Path(path).resolve()
        self.time_limit, self.max_rows, self.max_bytes, self.guard = time_limit, max_rows, max_bytes, guard
        self._deadline = 0.0
        self.conn = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, check_same_thread=False,
                                    isolation_level=None)
        self.conn.execute("PRAGMA query_only = ON")
        self.conn.execute("PRAGMA trusted_schema = OFF")
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        self.conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_LENGTH)
        if guard:
            self.conn.set_authorizer(_authorize)
        self.conn.set_progress_handler(self._progress, _CHECK_EVERY)

    def _progress(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0  # non-zero aborts the statement

    def run(self, sql: str, *, time_limit: float | None = None, max_rows: int | None = None,
            max_bytes: int | None = None) -> QueryResult:
        """Run one statement under the limits; never raises for a bad query (``error`` says why)."""
        limit = self.time_limit if time_limit is None else time_limit
        cap = self.max_rows if max_rows is None else max_rows
        byte_cap = self.max_bytes if max_bytes is None else max_bytes
        start = time.monotonic()
        self._deadline = start + limit
        result = QueryResult()
        word = first_keyword(sql)
        if self.guard and word not in QUERY_KEYWORDS:
            if word in STATEMENT_KEYWORDS:
                result.error = (f"{word.upper()} is not allowed: only queries can run here (SELECT, WITH, VALUES, "
                                "PRAGMA table_info, EXPLAIN); the databases are read-only")
            else:
                result.error = (f"near {sql.strip().split()[0][:40] if sql.strip() else ''!r}: syntax error "
                                "(a query starts with SELECT or WITH)")
            return result
        cur = self.conn.cursor()
        try:
            cur.execute(sql)
            result.columns = [d[0] for d in cur.description or ()]
            size = 0
            while len(result.rows) < cap:
                batch = cur.fetchmany(min(100, cap - len(result.rows)))
                if not batch:
                    break
                result.rows.extend(batch)
                size += sum(_size(v) for row in batch for v in row)
                if size > byte_cap:
                    result.truncated = True
                    break
            else:
                result.truncated = cur.fetchone() is not None
        except sqlite3.Warning as e:  # "You can only execute one statement at a time."
            result.error = str(e)
        except sqlite3.Error as e:
            if time.monotonic() > self._deadline and "interrupt" in str(e).lower():
                result.timed_out = True
                result.error = f"query stopped after {limit:g} s (time limit)"
            else:
                result.error = str(e)
        except (ValueError, OverflowError, MemoryError) as e:  # a NUL in the text, a value Python cannot hold
            result.error = str(e)
        finally:
            cur.close()
            result.seconds = time.monotonic() - start
        return result

    def close(self) -> None:
        self.conn.close()


def first_keyword(sql: str) -> str:
    """The statement's first word, lower-case, after comments and opening parentheses."""
    rest = _LEADING.sub("", sql, count=1)
    match = re.match(r"[A-Za-z]+", rest)
    return match.group(0).lower() if match else ""


def _size(value: Any) -> int:
    if isinstance(value, (str, bytes)):
        return len(value)
    return 8
