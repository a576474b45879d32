"""The task set: a question about one database, its gold SQL and how answers are compared; the
generated tasks and their deterministic train/test splits.

Generated tasks come from :mod:`agentenv_sqlgym.questions`: per database and difficulty, templates
take turns, each attempt with its own seeded RNG, until :data:`PER_CELL` distinct questions passed
the checks against the real database (their gold rows are kept, so grading never re-runs the gold).
Each (database, difficulty) cell then gives an equal share of the 200 test tasks (a seeded shuffle
picks them) and the rest to train; each split is shuffled once more (seeded) so databases and
difficulties interleave. Same tasks on every machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import random
import sqlite3
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentenv_sqlgym import store
from agentenv_sqlgym.questions import DIFFICULTIES, TEMPLATES, Candidate, Ctx
from agentenv_sqlgym.sandbox import ReadOnlyDatabase
from agentenv_sqlgym.schema import DatabaseSpec

PER_CELL = 80  # questions per (database, difficulty)
TEST_SIZE = 200
MAX_ATTEMPTS = 3000  # per cell


@dataclass(frozen=True)
class Task:
    """One question. ``db_key`` finds the database file; ``db_id`` is the name the agent sees."""

    db_id: str
    db_key: str
    question: str
    sql: str
    comparison: str = "multiset"
    difficulty: str = ""
    evidence: str = ""
    plan: str = ""
    explore_table: str = ""
    template: str = ""
    gold: tuple[tuple[Any, ...], ...] | None = None  # the gold rows where known in advance


@dataclass
class Generation:
    """What generating produced: the splits, and why candidates were dropped (for tests)."""

    splits: dict[str, list[Task]]
    rejected: Counter = field(default_factory=Counter)


def check(db: ReadOnlyDatabase, c: Candidate) -> tuple[tuple[tuple[Any, ...], ...] | None, str]:
    """The candidate's gold rows if its answer is non-trivial, else None and why not."""
    res = db.run(c.sql, time_limit=10, max_rows=c.max_rows + 1)
    if not res.ok:
        return None, "error"
    rows = res.rows
    if not c.min_rows <= len(rows) <= c.max_rows:
        return None, "row count"
    if all(v is None for row in rows for v in row):
        return None, "null"
    if c.positive and not (len(rows) == 1 and isinstance(rows[0][0], (int, float)) and rows[0][0] > 0):
        return None, "zero"
    if c.tie_sql:
        keys = db.run(c.tie_sql, time_limit=10, max_rows=50)
        if not keys.ok:
            return None, "error"
        if len({r[0] for r in keys.rows}) != len(keys.rows):
            return None, "tie"
    return tuple(tuple(r) for r in rows), ""


def generate(built: dict[str, tuple[DatabaseSpec, dict[str, list[tuple]], Path]]) -> Generation:
    """The generated task set over the databases ``store.build_all`` wrote."""
    cells: list[list[Task]] = []
    rejected: Counter = Counter()
    for name in sorted(built):
        spec, rows, path = built[name]
        ctx = Ctx(spec, rows)
        db = ReadOnlyDatabase(path, time_limit=10)
        try:
            for difficulty in DIFFICULTIES:
                templates = TEMPLATES[difficulty]
                cell: list[Task] = []
                seen: set[str] = set()
                for attempt in range(MAX_ATTEMPTS):
                    if len(cell) >= PER_CELL:
                        break
                    ctx.rng = random.Random(f"{name}/{difficulty}/{attempt}")
                    cand = templates[attempt % len(templates)](ctx)
                    if cand is None or cand.sql in seen or cand.question in seen:
                        continue
                    seen.update((cand.sql, cand.question))
                    gold, why = check(db, cand)
                    if gold is None:
                        rejected[why] += 1
                        continue
                    cell.append(Task(name, name, cand.question, cand.sql, cand.comparison, difficulty, "", cand.plan,
                                     cand.table, cand.template, gold))
                cells.append(cell)
        finally:
            db.close()
    return Generation(split(cells, TEST_SIZE), rejected)


def split(cells: list[list[Task]], test_size: int) -> dict[str, list[Task]]:
    """An equal share of ``test_size`` from each cell (seeded), the rest to train; both shuffled."""
    base, extra = divmod(test_size, len(cells))
    test, train = [], []
    for i, cell in enumerate(cells):
        order = list(cell)
        random.Random(f"split/{i}").shuffle(order)
        quota = base + (1 if i < extra else 0)
        test += order[:quota]
        train += order[quota:]
    random.Random("order/test").shuffle(test)
    random.Random("order/train").shuffle(train)
    return {"train": train, "test": test}


# -- the generated set, built once per machine ------------------------------------------------------------------
_SOURCES = ("schema.py", "databases.py", "questions.py", "tasks.py", "store.py", "sandbox.py")


def source_key() -> str:
    """Identifies what generating would produce: the generator's source and SQLite's version."""
    h = hashlib.sha256(sqlite3.sqlite_version.encode())
    for name in _SOURCES:
        h.update((Path(__file__).parent / name).read_bytes())
    return h.hexdigest()[:16]


@dataclass
class Generated:
    """The generated databases (name -> file) and task splits."""

    databases: dict[str, Path]
    splits: dict[str, list[Task]]


def _task_from_json(d: dict[str, Any]) -> Task:
    gold = d.pop("gold")
    return Task(**d, gold=None if gold is None else tuple(tuple(r) for r in gold))


def load_generated(cache_dir: str | Path | None = None) -> Generated:
    """The generated databases and tasks, from the cache directory when an earlier server (of the same
    generator) wrote them there, else built now (a few seconds) and written for the next one."""
    cache = Path(cache_dir) if cache_dir else store.default_cache_dir()
    manifest = cache / f"tasks-{source_key()}.json"
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        saved = json.loads(manifest.read_text())
        dbs = {name: cache / entry["file"] for name, entry in saved["databases"].items()}
        if all(store.sha256_file(dbs[name]) == entry["sha256"] for name, entry in saved["databases"].items()):
            return Generated(dbs, {s: [_task_from_json(t) for t in ts] for s, ts in saved["splits"].items()})
    try:
        built = store.build_all(cache)
    except OSError:  # the cache folder is not ours to write: a private one for this process
        cache = Path(tempfile.mkdtemp(prefix="agentenv-sqlgym-"))
        built = store.build_all(cache)
    gen = generate(built)
    dbs = {name: path for name, (_, _, path) in built.items()}
    blob = {"databases": {n: {"file": p.name, "sha256": store.sha256_file(p)} for n, p in dbs.items()},
            "splits": {s: [dataclasses.asdict(t) for t in ts] for s, ts in gen.splits.items()}}
    with contextlib.suppress(OSError):  # without a manifest the next server generates again, nothing worse
        fd, tmp = tempfile.mkstemp(prefix=".tasks-", suffix=".tmp", dir=cache)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(blob, f)
            os.chmod(tmp, 0o644)
            os.replace(tmp, manifest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    return Generated(dbs, gen.splits)
