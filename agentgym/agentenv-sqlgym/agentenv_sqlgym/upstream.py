"""Loading the published BIRD or Spider questions and databases (``--option data_path=DIR``).

Layouts read (the first that matches):

- a BIRD root, as AgentGym's ``AGENTENV_SQLGYM_BIRD_PATH``: ``DIR/train/train.json`` with
  ``DIR/train/train_databases/<db_id>/<db_id>.sqlite``, and ``DIR/dev/dev.json`` with ``dev_databases``;
- one BIRD split folder: ``DIR/dev.json`` (or ``train.json``) next to ``DIR/dev_databases/`` (``train_databases/``);
- Spider: ``DIR/dev.json`` (test), ``DIR/train_spider.json`` and ``DIR/train_others.json`` (train) and
  ``DIR/database/<db_id>/<db_id>.sqlite``.

BIRD's dev questions are the test split and its train questions the train split (upstream's item ids
0-9427 are train, 9428-10961 dev); Spider's likewise. Task ids follow the files' order. A split without
a file has no tasks. Fields read: ``question``, the gold ``SQL`` (BIRD) or ``query`` (Spider), ``db_id``,
``evidence`` and ``difficulty`` (BIRD). Results are compared as sets, as BIRD's evaluation and
AgentGym's sqlgym do.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentenv_sqlgym.tasks import Task

_FROM = re.compile(r"\bFROM\s+(?:\"([^\"]+)\"|`([^`]+)`|\[([^\]]+)\]|([A-Za-z_]\w*))", re.IGNORECASE)


def _bird_split(folder: Path, split: str) -> tuple[Path, Path] | None:
    questions, databases = folder / f"{split}.json", folder / f"{split}_databases"
    return (questions, databases) if questions.is_file() and databases.is_dir() else None


def locate(data_path: str | Path) -> dict[str, list[tuple[Path, Path]]]:
    """For each split, the (question file, folder of database folders) pairs under ``data_path``."""
    root = Path(data_path).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"data_path {str(root)!r} is not a directory")
    found: dict[str, list[tuple[Path, Path]]] = {"train": [], "test": []}
    for split, name in (("train", "train"), ("test", "dev")):
        for folder in (root / name, root):
            pair = _bird_split(folder, name)
            if pair:
                found[split].append(pair)
                break
    if not any(found.values()) and (root / "database").is_dir():
        found["test"] = [(root / "dev.json", root / "database")] if (root / "dev.json").is_file() else []
        found["train"] = [(root / f, root / "database") for f in ("train_spider.json", "train_others.json")
                          if (root / f).is_file()]
    if not any(found.values()):
        raise FileNotFoundError(f"no BIRD (dev.json + dev_databases/, train/train.json + train_databases/) or "
                                f"Spider (dev.json + database/) files under {str(root)!r}")
    return found


def explore_table(sql: str) -> str:
    """The first table the gold query reads (the expert looks at it first)."""
    match = _FROM.search(sql)
    return next((g for g in match.groups() if g), "") if match else ""


def load(data_path: str | Path) -> tuple[dict[str, Path], dict[str, list[Task]]]:
    """The databases (key -> file) and the task splits of the published data under ``data_path``."""
    root = Path(data_path).expanduser().resolve()
    databases: dict[str, Path] = {}
    splits: dict[str, list[Task]] = {"train": [], "test": []}
    for split, sources in locate(root).items():
        for questions, db_root in sources:
            items = json.loads(questions.read_text(encoding="utf-8"))
            for i, item in enumerate(items):
                db_id = str(item["db_id"])
                path = db_root.resolve() / db_id / f"{db_id}.sqlite"
                if not path.is_file():
                    raise FileNotFoundError(f"{questions.name} item {i} needs database {str(path)!r}, which is missing")
                key = str(path.relative_to(root))
                databases[key] = path
                sql = str(item.get("SQL", item.get("query", ""))).strip()
                if not sql:
                    raise ValueError(f"{questions.name} item {i} has no gold SQL (\"SQL\" or \"query\")")
                splits[split].append(Task(
                    db_id=db_id, db_key=key, question=str(item["question"]).strip(), sql=sql, comparison="set",
                    difficulty=str(item.get("difficulty", "")), evidence=str(item.get("evidence", "") or "").strip(),
                    plan="", explore_table=explore_table(sql), template="upstream"))
    return databases, splits


def data_files(data_path: str | Path) -> list[Path]:
    """The question files read (their sizes and times go into the server's fingerprint)."""
    return sorted({q for sources in locate(data_path).values() for q, _ in sources})
