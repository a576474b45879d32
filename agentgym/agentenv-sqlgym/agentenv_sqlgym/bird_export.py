"""Writing this package's generated databases and questions in BIRD's layout, the data AgentGym's sqlgym reads.

AgentGym's sqlgym server (``sqlgym.datasets.BirdDataset``) reads a BIRD root: ``train/train.json``,
``train/train_tables.json`` and ``train/train_databases/<db_id>/<db_id>.sqlite``, and the same under ``dev/``.
Written here: the generated train split as BIRD's train, the generated test split as its dev, each question with
its ``db_id``, ``question``, gold ``SQL``, ``evidence`` (empty) and ``difficulty``, and each database's entry in
``*_tables.json`` read from the database itself (tables in creation order, columns in ``PRAGMA table_info``
order; natural names with ``_`` read as a space, as BIRD's are; primary keys; foreign keys). So AgentGym's own
server can play this project's tasks, and the ``agentgym`` profile can be checked answer for answer against it
on data that needs no download (the test suite's fixture)::

    python -m agentenv_sqlgym.bird_export DIR [--train N] [--dev N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentenv_sqlgym.tasks import Task, load_generated


def natural(name: str) -> str:
    return name.replace("_", " ")


def tables_entry(db_id: str, path: Path) -> dict[str, Any]:
    """One database's entry of BIRD's ``*_tables.json``, read from the database file."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                                             "'sqlite_%' ORDER BY rowid")]
        columns: list[list[Any]] = [[-1, "*"]]
        types: list[str] = ["text"]
        primary: list[Any] = []
        where: dict[tuple[str, str], int] = {}  # (table, column) -> column index
        for t, table in enumerate(tables):
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()  # cid, name, type, notnull, dflt, pk
            keys = []
            for _, column, kind, _, _, pk in info:
                where[(table, column)] = len(columns)
                if pk:
                    keys.append((pk, len(columns)))
                columns.append([t, column])
                types.append((kind or "text").lower())
            keys.sort()
            if len(keys) == 1:
                primary.append(keys[0][1])
            elif keys:
                primary.append([k for _, k in keys])
        foreign = []
        for table in tables:
            for row in conn.execute(f'PRAGMA foreign_key_list("{table}")'):  # id, seq, table, from, to, ...
                target, source, dest = row[2], row[3], row[4]
                if (table, source) in where and (target, dest) in where:
                    foreign.append([where[(table, source)], where[(target, dest)]])
    finally:
        conn.close()
    return {"db_id": db_id, "table_names_original": tables, "table_names": [natural(t) for t in tables],
            "column_names_original": columns, "column_names": [[t, natural(c) if t >= 0 else c] for t, c in columns],
            "column_types": types, "primary_keys": primary, "foreign_keys": foreign}


def write_split(root: Path, mode: str, tasks: Sequence[Task], databases: dict[str, Path]) -> None:
    """``root/mode/{mode}.json``, ``{mode}_tables.json`` and ``{mode}_databases/`` for ``tasks``."""
    folder = root / mode
    (folder / f"{mode}_databases").mkdir(parents=True, exist_ok=True)
    items, entries = [], {}
    for i, task in enumerate(tasks):
        if task.db_id not in entries:
            target = folder / f"{mode}_databases" / task.db_id / f"{task.db_id}.sqlite"
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(databases[task.db_key], target)
            entries[task.db_id] = tables_entry(task.db_id, target)
        items.append({"question_id": i, "db_id": task.db_id, "question": task.question, "evidence": task.evidence,
                      "SQL": task.sql, "difficulty": task.difficulty})
    (folder / f"{mode}.json").write_text(json.dumps(items, indent=1))
    (folder / f"{mode}_tables.json").write_text(json.dumps(list(entries.values()), indent=1))


def export(root: str | Path, train: int | None = None, dev: int | None = None,
           cache_dir: str | Path | None = None) -> Path:
    """The generated set (its first ``train`` / ``dev`` questions) written as a BIRD root at ``root``."""
    out = Path(root)
    generated = load_generated(cache_dir)
    write_split(out, "train", generated.splits["train"][:train], generated.databases)
    write_split(out, "dev", generated.splits["test"][:dev], generated.databases)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m agentenv_sqlgym.bird_export", description=__doc__.split("\n\n")[0])
    p.add_argument("root", help="the BIRD root to write (train/ and dev/ under it)")
    p.add_argument("--train", type=int, default=None, help="only the first N train questions")
    p.add_argument("--dev", type=int, default=None, help="only the first N dev (test) questions")
    args = p.parse_args(argv)
    print(export(args.root, args.train, args.dev))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
