"""Writing the generated databases to disk, once, where every session of every server can read them.

A database is built in memory (``CREATE TABLE`` from the spec, the seeded rows), serialized, and
written under a content-addressed name (``<db>-<sha256 prefix>.sqlite``) into a cache directory, by
an atomic rename and read-only (mode 0444). Servers started with the same package find the files
already there and reuse them; a changed generator writes new names and never touches old files.
Sessions open them read-only (``sandbox``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
from pathlib import Path

from agentenv_sqlgym.databases import DATABASES, Rows, rows_of
from agentenv_sqlgym.schema import DatabaseSpec


def default_cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / "agentenv-sqlgym-cache"


def build_bytes(spec: DatabaseSpec, rows: Rows) -> bytes:
    """The database file's bytes (SQLite's own serialization of an in-memory database)."""
    conn = sqlite3.connect(":memory:")
    try:
        for table in spec.tables:
            conn.execute(table.create_sql())
            marks = ", ".join("?" * len(table.columns))
            conn.executemany(f"INSERT INTO {table.name} VALUES ({marks})", rows[table.name])
            for index in table.index_sql():
                conn.execute(index)
        conn.commit()
        return conn.serialize()
    finally:
        conn.close()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def write_database(data: bytes, name: str, cache_dir: Path) -> Path:
    """``data`` at ``cache_dir/<name>-<hash>.sqlite``, written once (atomically) and read-only."""
    digest = hashlib.sha256(data).hexdigest()
    path = cache_dir / f"{name}-{digest[:16]}.sqlite"
    if path.exists() and sha256_file(path) == digest:
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}-", suffix=".tmp", dir=cache_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return path


def build_all(cache_dir: Path | None = None) -> dict[str, tuple[DatabaseSpec, Rows, Path]]:
    """Every generated database: its spec, its rows and the path of its file."""
    cache = Path(cache_dir) if cache_dir else default_cache_dir()
    out = {}
    for spec, fill in DATABASES:
        rows = rows_of(spec, fill)
        out[spec.name] = (spec, rows, write_database(build_bytes(spec, rows), spec.name, cache))
    return out
