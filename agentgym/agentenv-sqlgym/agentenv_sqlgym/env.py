"""The ``sqlgym`` environment: answer questions about SQLite databases with SQL (BIRD-style text-to-SQL).

A task is a question about one database; the first observation shows the database's schema (its
CREATE TABLE statements with example rows) and the question. Each action is one SQL query. By
default the agent explores: a query's result (or the database's error) comes back, and the episode
goes on until the agent submits a query by writing ``SUBMIT`` before it; the submission is graded
(its result against the gold query's) and ends the episode. AgentGym's own sqlgym is single-turn,
the first query being the answer: ``--option single_turn=true`` plays the generated tasks that way, and the
``agentgym`` profile (``--option profile=agentgym``, what ``--compat agentgym`` serves) is AgentGym's sqlgym on the
user's BIRD (:mod:`agentenv_sqlgym.agentgym_profile`).

Databases and tasks are built once per server (``load_shared``): six generated databases with about
1,400 questions by default, or the published BIRD/Spider files with ``--option data_path=DIR``.
Queries run read-only and time-limited in each session's own connection (``sandbox``).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Environment, Split, StepResult
from agentenv.env import file_stamps
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_sqlgym import render, tasks, upstream
from agentenv_sqlgym.reward import reward
from agentenv_sqlgym.sandbox import QueryResult, ReadOnlyDatabase
from agentenv_sqlgym.tasks import Task

INSTRUCTION = (
    "You answer questions about SQLite databases by writing SQL. Each task shows a database's schema (its "
    "CREATE TABLE statements, each followed by a few example rows) and a question. Every turn, write one SQLite "
    "statement in a ```sql code block. A query you run shows its result (the first rows of it) or the database's "
    "error, so you can look at the data before answering. When you are sure, submit the query that answers the "
    "question by writing SUBMIT before it:\n"
    "```sql\nSUBMIT SELECT name FROM students WHERE grade_level = 10\n```\n"
    "The submission ends the task. Its result must equal the correct answer's: the same rows, with the columns "
    "the question asks for in the order it names them; the order of the rows matters only when the question "
    "asks for one. Only queries can run (SELECT, WITH, PRAGMA table_info): the databases are read-only, and a "
    "query is stopped after a time limit."
)
_SUBMIT = re.compile(r"^\s*(?:--\s*)?submit\b[ \t]*:?\s*", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*[A-Za-z]*[ \t]*\n?(.*?)```", re.DOTALL)
_IDENT = re.compile(r"[A-Za-z_]\w*")
UPSTREAM_GOLD_ROWS = 100_000  # a published gold query's result is read up to this many rows
NUM_GENERATED = {"train": len(tasks.DIFFICULTIES) * 6 * tasks.PER_CELL - tasks.TEST_SIZE, "test": tasks.TEST_SIZE}


class SqlGymOptions(BaseModel):
    """Server options (``agentenv serve sqlgym --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: a folder with the published BIRD or Spider questions and databases (see ``upstream``); None: generated
    data_path: str | None = None
    #: AgentGym's form: the first query is the answer (no exploration, no SUBMIT)
    single_turn: bool = False
    #: example rows shown under each CREATE TABLE in the first observation
    sample_rows: int = Field(default=2, ge=0, le=10)
    #: seconds an agent's query may run
    time_limit: float = Field(default=1.0, gt=0, le=60)
    #: seconds a published gold query may run when a submission is graded
    gold_time_limit: float = Field(default=60.0, gt=0, le=600)
    #: rows of a result shown to the agent
    max_rows_shown: int = Field(default=20, ge=1, le=200)
    #: where the generated databases and tasks are written (default: <tmp>/agentenv-sqlgym-cache)
    cache_dir: str | None = None


@dataclass
class Shared:
    """What every session reads: database files, tasks, schema texts, table names."""

    databases: dict[str, Path]
    splits: dict[str, list[Task]]
    schemas: dict[str, str]
    tables: dict[str, list[str]]

    def counts(self) -> dict[str, int]:
        return {split: len(ts) for split, ts in self.splits.items()}


@lru_cache(maxsize=4)
def _load(options: SqlGymOptions) -> Shared:
    """One shared set per distinct options in a process (a server builds it once; tests reuse it)."""
    if options.data_path:
        databases, splits = upstream.load(options.data_path)
    else:
        generated = tasks.load_generated(options.cache_dir)
        databases, splits = generated.databases, generated.splits
    schemas, tables = {}, {}
    for key, path in sorted(databases.items()):
        db = ReadOnlyDatabase(path, time_limit=30)
        try:
            schemas[key] = render.schema(db, options.sample_rows)
            names = db.run("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                           "ORDER BY rowid", max_rows=10_000)
            tables[key] = [r[0] for r in names.rows]
        finally:
            db.close()
    return Shared(databases, splits, schemas, tables)


def name_sql(name: str) -> str:
    """A table name as SQL: bare when it is an identifier, else quoted."""
    return name if _IDENT.fullmatch(name) else render.quote(name)


def table_looks(name: str) -> list[str]:
    """The random policy's queries on one table: a look at a few rows and a count."""
    q = name_sql(name)
    return [f"SELECT * FROM {q} LIMIT 5", f"SELECT COUNT(*) FROM {q}"]


def parse(action: str) -> tuple[bool, str]:
    """(is it a submission, the SQL) of an action; a ```sql fence and an ``Action:`` prefix are taken off."""
    text = str(action or "")
    blocks = _FENCE.findall(text)
    if blocks:
        text = blocks[-1]
    text = re.sub(r"^\s*action\s*:\s*", "", text, flags=re.IGNORECASE)
    match = _SUBMIT.match(text)
    if match:
        return True, text[match.end():].strip()
    return False, text.strip()


class SqlGymEnv(Environment):
    """Text-to-SQL over real SQLite databases; reward 1 when the submitted query's result is right."""

    name: ClassVar[str] = "sqlgym"
    version: ClassVar[str] = "1"
    max_turns: ClassVar[int] = 10
    success_threshold: ClassVar[float] = 1.0
    action_format: ClassVar[str] = "code"
    code_language: ClassVar[str | None] = "sql"
    action_hint: ClassVar[str] = "one SQLite query in a ```sql block; SUBMIT before it to give it as the answer"
    instruction: ClassVar[str] = INSTRUCTION
    step_timeout: ClassVar[float | None] = 300.0
    Options: ClassVar[type[BaseModel]] = SqlGymOptions
    #: AgentGym's sqlgym server: /create (no body) answers a bare int, /reset takes {"env_idx", "item_id"}
    #: and answers [observation, null], /step answers {"state", "reward", "done", "info"}, GET /observation;
    #: item ids 0-9427 are BIRD train, 9428-10961 BIRD dev; one query is the answer. ``--compat agentgym`` serves
    #: the agentgym profile (AgentGym's item N on the user's BIRD); with ``--option profile=native`` the generated
    #: train tasks, then the test tasks, fill the index space
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        handle="env_idx", reset_key="item_id", reset_returns="pair", step_observation="state",
        index_order=("train", "test"), upstream_splits={"train": (0, 9428), "test": (9428, 10962)},
        has_close=False, hello="ok", options={"profile": "agentgym"})
    #: ``--option profile=agentgym``: AgentGym's sqlgym on BIRD, read from the user's copy
    profiles = MappingProxyType({"agentgym": "agentenv_sqlgym.agentgym_profile:AgentGymSqlGymEnv"})

    def __init__(self) -> None:
        self._task: Task | None = None
        self._db: ReadOnlyDatabase | None = None
        self._obs = ""
        self._turn = 0
        self._done = False

    # -- tasks and shared data ----------------------------------------------------------------------------
    @classmethod
    def num_tasks(cls, split: Split) -> int:
        """Task counts of the generated set; a server counts loaded data with ``task_counts``."""
        if split not in NUM_GENERATED:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(NUM_GENERATED)}")
        return NUM_GENERATED[split]

    @classmethod
    def load_shared(cls, options: SqlGymOptions) -> Shared:
        return _load(options)

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        return super().task_counts(shared) if shared is None else shared.counts()

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        """The default hash, plus the generator's source (generated) or the question files' sizes and times."""
        data_path = getattr(options, "data_path", None)
        extra = file_stamps(upstream.data_files(data_path)) if data_path else tasks.source_key()
        return super().fingerprint(counts, options, extra)

    def _shared(self) -> Shared:
        if self.shared is None:  # outside a server (tests, notebooks): build or reuse the default
            self.options = self.options or SqlGymOptions()
            self.shared = self.load_shared(self.options)
        return self.shared

    def _options(self) -> SqlGymOptions:
        self._shared()
        return self.options

    def _get(self, task_id: int, split: Split) -> Task:
        splits = self._shared().splits
        if split not in splits:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(splits)}")
        if not 0 <= task_id < len(splits[split]):
            raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{len(splits[split]) - 1})")
        return splits[split][task_id]

    def initial_observation(self, task_id: int, split: Split) -> str:
        t = self._get(task_id, split)
        return render.first_observation(t.db_id, self._shared().schemas[t.db_key], t.question, t.evidence,
                                        self._options().single_turn)

    # -- an episode ------------------------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        task = self._get(task_id, split)
        opts = self._options()
        if self._db is None or self._task is None or self._task.db_key != task.db_key:
            self.close()
            self._db = ReadOnlyDatabase(self._shared().databases[task.db_key], time_limit=opts.time_limit)
        self._task, self._turn, self._done = task, 0, False
        self._obs = self.initial_observation(task_id, split)
        return self._obs, {"task_id": task_id, "split": split, "db_id": task.db_id, "difficulty": task.difficulty}

    def step(self, action: str) -> StepResult:
        task, db = self._task, self._db
        if task is None or db is None:
            return StepResult("Call reset before step.", valid=False)
        if self._done:
            return StepResult("The episode is over: a query was already submitted.", valid=False, done=True)
        self._turn += 1
        opts = self._options()
        submit, sql = parse(action)
        submit = submit or opts.single_turn
        if not sql:
            self._obs = ("Empty query. Write one SQLite query in a ```sql block" +
                         ("." if opts.single_turn else ", and SUBMIT before the one that answers the question."))
            if opts.single_turn:
                self._done = True
                return StepResult(self._obs, valid=False, done=True, info={"submitted": True})
            return StepResult(self._obs, valid=False)
        if not submit:
            res = db.run(sql)
            self._obs = render.result(res, opts.max_rows_shown)
            return StepResult(self._obs, valid=res.ok or res.timed_out, info=self._info(res, False))
        return self._submit(task, db, sql, opts)

    def _submit(self, task: Task, db: ReadOnlyDatabase, sql: str, opts: SqlGymOptions) -> StepResult:
        gold, gold_error = self.gold_rows(task, db, opts.gold_time_limit)
        cap = UPSTREAM_GOLD_ROWS if task.comparison == "set" else max(200, len(gold or ()) + 1)
        res = db.run(sql, max_rows=cap, max_bytes=64_000_000)
        shown = render.result(res, opts.max_rows_shown)
        if not res.ok and not opts.single_turn:  # nothing was submitted: the agent may fix the query
            self._obs = f"{shown}\nNothing was submitted: fix the query and submit it again."
            return StepResult(self._obs, valid=res.timed_out, info=self._info(res, False))
        self._done = True
        predicted = res.rows if res.ok and not res.truncated else None
        r = reward(predicted, gold, task.comparison) if gold is not None else 0.0
        verdict = "correct" if r >= 1.0 else "not correct"
        self._obs = f"{shown}\nSubmitted: the answer is {verdict}." if res.ok else shown
        info = self._info(res, True)
        if gold_error:
            info["gold_error"] = gold_error
        return StepResult(self._obs, reward=r, done=True, success=r >= self.success_threshold, score=r,
                          valid=res.ok or res.timed_out, info=info)

    @staticmethod
    def gold_rows(task: Task, db: ReadOnlyDatabase, time_limit: float = 60.0) -> tuple[list | None, str]:
        """The gold result: kept with a generated task, else the gold query run now (published data)."""
        if task.gold is not None:
            return [tuple(r) for r in task.gold], ""
        res = db.run(task.sql, time_limit=time_limit, max_rows=UPSTREAM_GOLD_ROWS, max_bytes=256_000_000)
        if not res.ok:
            return None, str(res.error)
        return res.rows, ""

    def _info(self, res: QueryResult, submitted: bool) -> dict[str, Any]:
        info: dict[str, Any] = {"submitted": submitted, "rows": len(res.rows), "truncated": res.truncated}
        if res.error:
            info["error"] = res.error
        return info

    def observation(self) -> str:
        return self._obs

    # -- policies ------------------------------------------------------------------------------------------
    def _exploring(self) -> bool:
        t = self._task
        return bool(t and t.explore_table and self._turn == 0 and not self._options().single_turn)

    def expert_action(self) -> str:
        """Look at a few rows of the table the question is about (first turn), then submit the gold SQL."""
        t = self._task
        if t is None:
            raise RuntimeError("reset first")
        if self._exploring():
            return f"SELECT * FROM {name_sql(t.explore_table)} LIMIT 3"
        return t.sql if self._options().single_turn else f"SUBMIT {t.sql}"

    def expert_thought(self) -> str | None:
        t = self._task
        if t is None:
            return None
        if self._exploring():
            return (f"The question is about the {t.explore_table} table. Before answering, I look at a few of its "
                    "rows to see how the values are written.")
        why = t.plan or ("I write the query the question asks for" +
                         (f", reading the evidence: {t.evidence}" if t.evidence else "") + ".")
        return why + (" This query is my answer." if self._options().single_turn else
                      " That answers the question, so I submit this query.")

    def available_actions(self) -> list[str]:
        """Plausible queries on the task's database (the random policy): look at a table, count it, or submit
        one of those as the answer."""
        t = self._task
        if t is None:
            return []
        single = self._options().single_turn
        out = ["SELECT name FROM sqlite_master WHERE type = 'table'"]
        for name in self._shared().tables.get(t.db_key, []):
            looks = table_looks(name)
            out += looks if single else looks + [f"SUBMIT {s}" for s in looks]
        return out

    def random_action(self, rng: random.Random) -> str:
        actions = self.available_actions()
        return rng.choice(actions) if actions else "SELECT 1"

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
