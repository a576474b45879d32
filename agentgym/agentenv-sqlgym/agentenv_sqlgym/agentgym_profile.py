"""The sqlgym of AgentGym (``--option profile=agentgym``): BIRD, one query per task, as AgentGym's server plays it.

AgentGym's sqlgym server wraps the ``sqlgym`` package (0.1.2) over BIRD. BIRD does not ship with this project: the
profile reads the user's copy, ``--option data_path=DIR`` or ``$AGENTENV_SQLGYM_BIRD_PATH`` (upstream's variable),
a BIRD root holding ``train/train.json``, ``train/train_tables.json``, ``train/train_databases/`` and the same under
``dev/``. What is reproduced, from the public code of AgentGym (``agentenv-sqlgym``, its client ``SqlGymEnvClient``)
and of ``sqlgym`` (``SqlGymEnv``, ``BirdDataset``); read, not copied:

- **the tasks**: one index space, items 0-9427 BIRD's train questions in ``train.json``'s order and 9428-10961 its
  dev questions (9428 + the position in ``dev.json``), fixed as upstream fixes them whatever the files hold; both
  splits of the profile are that space (AgentEval's 200 items are dev questions, AgentTraj's 3,000 train ones);
- **the first observation**: the database described in sentences from ``*_tables.json`` (the natural table and
  column names, lower-cased; its primary keys; its foreign keys), a blank line, then the question. BIRD's evidence
  is not shown. Upstream's description has two quirks, kept: a foreign key names the columns one position after
  the ones its entry points at (upstream indexes a list that lacks the ``*`` column), and a composite primary key
  lists none of its columns;
- **a step**: the query runs once on the read-only database; the server answers its rows as Python prints the list
  (``[('Echo Tablet',)]``) or SQLite's error message, cut to 100 characters and ``...``; the reward is 1 when the
  rows, as a set, equal the gold query's rows as a set, else 0; every step ends the episode. The action is the
  query itself (AgentGym's client takes it out of the reply's ```` ```sql ```` block, this project's agent loop
  likewise);
- **the turn limit**: AgentGym evaluates sqlgym for 1 round (its ``max_round``).

Three deliberate differences, for a server many sessions share: a query may run ``time_limit`` seconds (upstream:
no limit; past it the answer is this project's ``query stopped ...``), at most ``max_rows`` rows are read (a
larger result is graded 0), and SQLite may not attach other files. ``python -m agentenv_sqlgym.bird_export DIR``
writes this package's generated databases and questions as such a BIRD root, so AgentGym's own server and this
profile can be compared on data that needs no download (``tests/data/agentgym/sqlgym_upstream.json.gz``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Environment, Split, StepResult
from agentenv.env import file_stamps
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_sqlgym.env import SqlGymEnv, table_looks
from agentenv_sqlgym.sandbox import ReadOnlyDatabase

BIRD_VAR = "AGENTENV_SQLGYM_BIRD_PATH"
#: upstream's index space: BIRD's train questions, then its dev questions (``ITEM_RANGE`` of AgentGym's server)
MODES = (("train", 0, 9428), ("dev", 9428, 10962))
NUM_TASKS = MODES[-1][2]
SHOWN = 100  # characters of a result the server sends before "..."
INSTRUCTION = "You answer questions about SQLite databases with one SQL query."
RULES = (
    "You are given a description of a SQLite database and a question about it. Explain the problem and how you "
    "will solve it, then give one SQL statement that answers the question. Your first query is your answer: its "
    "result must hold exactly the rows of the correct answer. Answer in this form, the SQL on one line:\n"
    "Thought: <your thinking>\n\nAction: ```sql\nSELECT * FROM table WHERE condition;\n```"
)


class AgentGymSqlOptions(BaseModel):
    """Server options of the agentgym profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: a BIRD root (train/ and dev/ under it); else $AGENTENV_SQLGYM_BIRD_PATH
    data_path: str | None = None
    #: seconds a query may run (the agent's and the gold one)
    time_limit: float = Field(default=30.0, gt=0, le=600)
    #: rows of a result read at most (a larger result is graded 0)
    max_rows: int = Field(default=100_000, ge=1, le=10_000_000)


@dataclass(frozen=True)
class BirdSplit:
    """One of BIRD's folders as ``BirdDataset`` reads it: its questions and its databases' descriptions."""

    mode: str
    folder: Path
    questions: tuple[dict[str, Any], ...]
    tables: dict[str, dict[str, Any]]  # db_id -> its entry of *_tables.json

    def database(self, db_id: str) -> Path:
        return self.folder / f"{self.mode}_databases" / db_id / f"{db_id}.sqlite"


@dataclass(frozen=True)
class BirdData:
    root: Path
    splits: dict[str, BirdSplit]  # "train" / "dev": the folders present


def bird_root(given: str | None) -> Path:
    """The BIRD root given, else ``$AGENTENV_SQLGYM_BIRD_PATH``; a one-line error saying what to set otherwise."""
    path = given or os.environ.get(BIRD_VAR)
    if not path:
        raise ValueError(f"sqlgym's agentgym profile reads BIRD: give --option data_path=DIR or set ${BIRD_VAR} to "
                         "the directory holding train/ and dev/ (BIRD's train.zip and dev.zip, unpacked)")
    root = Path(path).expanduser()
    if not root.is_dir():
        raise ValueError(f"sqlgym's agentgym profile: BIRD root {str(root)!r} is not a directory")
    return root


def _files(root: Path, mode: str) -> tuple[Path, Path]:
    return root / mode / f"{mode}.json", root / mode / f"{mode}_tables.json"


@lru_cache(maxsize=4)
def read_bird(root: Path) -> BirdData:
    """The folders of the BIRD root that hold their question and table files (at least one must)."""
    splits = {}
    for mode, _, _ in MODES:
        questions, tables = _files(root, mode)
        if not questions.is_file():
            continue
        if not tables.is_file():
            raise ValueError(f"sqlgym's agentgym profile: {questions} needs {tables.name} beside it")
        try:
            items = json.loads(questions.read_text(encoding="utf-8"))
            entries = {t["db_id"]: t for t in json.loads(tables.read_text(encoding="utf-8"))}
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"sqlgym's agentgym profile cannot read BIRD's {mode} files in {root}: {e}") from None
        splits[mode] = BirdSplit(mode, root / mode, tuple(items), entries)
    if not splits:
        raise ValueError(f"sqlgym's agentgym profile: {root} holds neither train/train.json nor dev/dev.json "
                         f"(${BIRD_VAR} or --option data_path must name a BIRD root)")
    return BirdData(root, splits)


def locate(index: int) -> tuple[str, int]:
    """Upstream index -> (BIRD folder, position in its question file)."""
    for mode, start, stop in MODES:
        if start <= index < stop:
            return mode, index - start
    raise IndexError(f"sqlgym (agentgym) has items 0..{NUM_TASKS - 1}, not {index}")


def describe(db_id: str, entry: dict[str, Any]) -> str:
    """The database in sentences, as ``BirdDataset`` describes it (its quirks kept: module docstring)."""
    tables = [str(t).lower() for t in entry["table_names"]]
    columns = entry["column_names"]  # [[table index, name], ...], the first [-1, "*"]
    keys = entry["primary_keys"]
    # upstream indexes foreign keys into this list: every column but "*", once per table
    listed = [str(name).lower() for _, name in columns[1:]] * len(tables)
    out = [f"{db_id} contains tables such as {', '.join(tables)}."]
    for t, table in enumerate(tables):
        own = [(cid, str(name).lower()) for cid, (ti, name) in enumerate(columns) if cid > 0 and ti == t]
        out.append(f"Table {table} has columns such as {', '.join(name for _, name in own)}.")
        out.append(f"{', '.join(name for cid, name in own if cid in keys)} is the primary key.")
    for x, y in entry["foreign_keys"]:
        out.append(f"The {listed[x]} of {tables[columns[x][0]]} is the foreign key of {listed[y]} of "
                   f"{tables[columns[y][0]]}.")
    return " ".join(out)


def shown(result: str) -> str:
    return result[:SHOWN] + "..." if len(result) > SHOWN else result


class AgentGymSqlGymEnv(Environment):
    """AgentGym's sqlgym item N on the user's BIRD, one query graded as its server grades (module docstring)."""

    name: ClassVar[str] = "sqlgym"
    profile: ClassVar[str] = "agentgym"
    version: ClassVar[str] = "agentgym-1"
    max_turns: ClassVar[int] = 1  # AgentGym's max_round for sqlgym
    success_threshold: ClassVar[float] = 1.0
    action_format: ClassVar[str] = "code"
    code_language: ClassVar[str | None] = "sql"
    action_hint: ClassVar[str] = "one SQLite query in a ```sql block: your answer"
    instruction: ClassVar[str] = INSTRUCTION
    step_timeout: ClassVar[float | None] = 300.0
    Options: ClassVar[type[BaseModel]] = AgentGymSqlOptions
    #: one index space (the test split; train is the same space), the rules AgentGym's client shows, no turn limit
    #: of the server's own; checked on the first train questions of a BIRD root
    agentgym: ClassVar[AgentGymRoutes] = dataclasses.replace(
        SqlGymEnv.agentgym, options={}, index_order=("test",), rules=RULES, server_truncates=False,
        upstream_splits={"train": (0, NUM_TASKS), "test": (0, NUM_TASKS)}, check_tasks=(0, 1, 2))

    def __init__(self) -> None:
        self._db: ReadOnlyDatabase | None = None
        self._item: dict[str, Any] | None = None
        self._split: BirdSplit | None = None
        self._obs = ""
        self._done = False

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in cls.splits:
            raise ValueError(f"unknown split {split!r}; expected one of {list(cls.splits)}")
        return NUM_TASKS

    @classmethod
    def load_shared(cls, options: AgentGymSqlOptions) -> BirdData:
        return read_bird(bird_root(options.data_path).resolve())

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        """The default hash, plus the question files' sizes and times (another BIRD copy is another dataset)."""
        root = bird_root(getattr(options, "data_path", None))
        files = [p for mode, _, _ in MODES for p in _files(root, mode) if p.is_file()]
        return super().fingerprint(counts, options, file_stamps(files))

    def _data(self) -> BirdData:
        if self.shared is None:  # outside a server (tests, notebooks)
            self.options = self.options or AgentGymSqlOptions()
            self.shared = self.load_shared(self.options)
        return self.shared

    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        self.num_tasks(split)
        mode, position = locate(int(task_id))
        data = self._data()
        folder = data.splits.get(mode)
        if folder is None:
            raise IndexError(f"sqlgym (agentgym) item {task_id} is BIRD {mode} question {position}, and "
                             f"{data.root} has no {mode}/{mode}.json")
        if position >= len(folder.questions):
            raise IndexError(f"sqlgym (agentgym) item {task_id} is BIRD {mode} question {position}; "
                             f"{data.root}/{mode}/{mode}.json has {len(folder.questions)}")
        item = folder.questions[position]
        db_id = str(item["db_id"])
        if db_id not in folder.tables:
            raise IndexError(f"sqlgym (agentgym) item {task_id}: {mode}_tables.json does not describe {db_id!r}")
        path = folder.database(db_id)
        if not path.is_file():
            raise IndexError(f"sqlgym (agentgym) item {task_id} needs the database {path}, which is missing")
        self.close()
        opts = self.options
        self._db = ReadOnlyDatabase(path, time_limit=opts.time_limit, max_rows=opts.max_rows,
                                    max_bytes=256_000_000, guard=False)
        self._item, self._split, self._done = item, folder, False
        self._obs = self.agentgym.with_rules(f"{describe(db_id, folder.tables[db_id])}\n\n{item['question']}")
        return self._obs, {"task_id": task_id, "split": split, "agentgym_index": task_id, "bird": mode,
                           "db_id": db_id, "difficulty": str(item.get("difficulty", ""))}

    def step(self, action: str) -> StepResult:
        if self._item is None or self._db is None:
            return StepResult("Call reset before step.", valid=False)
        if self._done:
            return StepResult("The episode is over: the query was given.", valid=False, done=True)
        self._done = True
        res = self._db.run(str(action))
        gold = self._db.run(str(self._item["SQL"]))
        complete = res.ok and not res.truncated and gold.ok and not gold.truncated
        right = complete and set(res.rows) == set(gold.rows)
        self._obs = shown(str(res.rows) if res.ok else str(res.error))
        info: dict[str, Any] = {"agentgym_reward": float(right), "rows": len(res.rows)}
        for key, r in (("error", res), ("gold_error", gold)):
            if r.error:
                info[key] = r.error
        if res.truncated or gold.truncated:
            info["truncated"] = True
        return StepResult(self._obs, reward=float(right), done=True, success=right, score=float(right),
                          valid=res.ok or res.timed_out, info=info)

    def observation(self) -> str:
        return self._obs

    # -- policies ------------------------------------------------------------------------------------------
    def expert_action(self) -> str:
        """The gold SQL (BIRD's ``SQL`` field)."""
        if self._item is None:
            raise RuntimeError("reset first")
        return str(self._item["SQL"])

    def expert_thought(self) -> str | None:
        if self._item is None:
            return None
        return "I write the query that selects exactly what the question asks for; it is my answer."

    def available_actions(self) -> list[str]:
        """A look at or a count of one of the database's tables (the random policy)."""
        if self._item is None or self._split is None:
            return []
        entry = self._split.tables[str(self._item["db_id"])]
        return [query for table in entry.get("table_names_original", []) for query in table_looks(table)]

    def random_action(self, rng: random.Random) -> str:
        actions = self.available_actions()
        return rng.choice(actions) if actions else "SELECT 1"

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
