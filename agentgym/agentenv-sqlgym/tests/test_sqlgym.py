"""Tests of the sqlgym environment: the SDK's contract (check_environment: the expert on a sample of test
tasks, the protocol and AgentGym's routes over HTTP), the generated databases and task splits, observations,
the reward on hand-built results, invalid actions, the read-only and time-limited sandbox (over a real HTTP
server), the random policy, published BIRD/Spider data from a tiny fixture, and AgentGym's single-turn grading."""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from agentenv_sqlgym import bird_export, render, store, tasks
from agentenv_sqlgym.agentgym_profile import BIRD_VAR
from agentenv_sqlgym.databases import DATABASES
from agentenv_sqlgym.env import SqlGymEnv, SqlGymOptions, parse
from agentenv_sqlgym.reward import normalize, reward, same_result
from agentenv_sqlgym.sandbox import ReadOnlyDatabase

from agentenv.client import EnvClient
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.testing import check_environment, checks_for, play_in_process, serve_app_in_thread, serve_in_thread

ENDLESS = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"
ATTACKS = [
    "DROP TABLE customers", "DELETE FROM orders", "UPDATE products SET price = 0", "INSERT INTO customers "
    "(customer_id, name, city, country, signup_date, loyalty_tier) VALUES (999, 'x', 'x', 'x', 'x', 'x')",
    "ATTACH DATABASE '/tmp/agentenv-sqlgym-attack.db' AS evil", "PRAGMA query_only = OFF",
    "PRAGMA journal_mode = WAL", "PRAGMA user_version = 7", "CREATE TABLE evil (x)", "CREATE TEMP TABLE evil (x)",
    "ALTER TABLE products ADD COLUMN evil TEXT", "VACUUM", "REINDEX", "BEGIN", "SELECT 1; DROP TABLE products",
    "SELECT load_extension('evil')", ENDLESS,
]


@pytest.fixture(scope="module")
def shared():
    return SqlGymEnv.load_shared(SqlGymOptions())


@pytest.fixture()
def env(shared):
    e = SqlGymEnv()
    e.shared, e.options = shared, SqlGymOptions()
    yield e
    e.close()


def first_test_task(shared, db_id: str) -> int:
    return next(i for i, t in enumerate(shared.splits["test"]) if t.db_id == db_id)


def fingerprints(shared) -> dict[str, tuple[str, dict[str, int]]]:
    """Hash and row counts of every generated database file."""
    out = {}
    for key, path in shared.databases.items():
        conn = sqlite3.connect(f"{Path(path).as_uri()}?mode=ro", uri=True)
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        counts = {n: conn.execute(f"SELECT COUNT(*) FROM {n}").fetchone()[0] for n in names}
        conn.close()
        out[key] = (store.sha256_file(Path(path)), counts)
    return out


# -- the SDK's contract ----------------------------------------------------------------------------------
@pytest.mark.parametrize("part", checks_for(SqlGymEnv))
def test_check_environment(part, tmp_path, monkeypatch):
    """The contract; the expert solves every 5th test task in two turns (a look at the rows, then the
    submission) with a return of 1, a thought at every turn; tasks 0 and 57 are played over HTTP. AgentGym's routes
    serve the agentgym profile, on BIRD from ``$AGENTENV_SQLGYM_BIRD_PATH`` (here the generated set in BIRD's
    layout): its check plays items 0-2 through them (SqlGymEnvClient's flow: create -> a bare int, reset by item_id
    -> a pair, the observation from GET /observation, the reward from /step's "reward", its text from "state")."""
    if part == "agentgym":
        monkeypatch.setenv(BIRD_VAR, str(bird_export.export(tmp_path / "bird", train=3, dev=0)))
    report = check_environment(SqlGymEnv, checks=(part,), thoughts=True, served=(0, 57),
                               splits={"test": range(0, 200, 5)})
    assert all(episode.total == 1.0 and episode.turns == 2 for episode in report.episodes)


# -- metadata, splits ------------------------------------------------------------------------------------
def test_metadata():
    assert SqlGymEnv.action_format == "code" and SqlGymEnv.code_language == "sql"
    assert SqlGymEnv.success_threshold == 1.0 and SqlGymEnv.max_turns == 10
    assert "SUBMIT" in SqlGymEnv.instruction and "```sql" in SqlGymEnv.instruction
    assert SqlGymEnv.num_tasks("test") == 200 and SqlGymEnv.num_tasks("train") >= 1000
    with pytest.raises(ValueError):
        SqlGymEnv.num_tasks("dev")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's ValidationError: unknown options are errors
        SqlGymOptions(colour="red")


def test_splits_are_balanced_disjoint_and_match_the_declared_counts(shared):
    assert shared.counts() == SqlGymEnv.task_counts(None) == SqlGymEnv.task_counts(shared)
    test, train = shared.splits["test"], shared.splits["train"]
    assert len(shared.databases) == len(DATABASES) >= 6
    cells = Counter((t.db_id, t.difficulty) for t in test)
    assert len(cells) == 18 and set(cells.values()) <= {11, 12}
    assert not {(t.db_id, t.question) for t in test} & {(t.db_id, t.question) for t in train}
    assert len({(t.db_id, t.sql) for t in test + train}) == len(test) + len(train)
    assert len({t.template for t in test + train}) >= 20
    for t in test + train:
        assert t.gold and 1 <= len(t.gold) <= 25 and not all(v is None for r in t.gold for v in r)


def test_generation_is_deterministic(shared, tmp_path):
    """One database and its questions, rebuilt from nothing in a fresh folder, are the same."""
    spec, fill = DATABASES[3]
    rows = store.rows_of(spec, fill)
    path = store.write_database(store.build_bytes(spec, rows), spec.name, tmp_path)
    assert store.sha256_file(path) == store.sha256_file(shared.databases[spec.name])
    again = tasks.generate({spec.name: (spec, rows, path)})
    assert not again.rejected["error"]
    mine = {(t.question, t.sql, t.gold) for s in again.splits.values() for t in s}
    theirs = {(t.question, t.sql, t.gold) for s in shared.splits.values() for t in s if t.db_id == spec.name}
    assert mine == theirs and len(mine) == 3 * tasks.PER_CELL


# -- observations ------------------------------------------------------------------------------------------
def test_first_observation_holds_schema_question_and_equals_initial_observation(env, shared):
    for split, task_id in [("test", 0), ("test", 199), ("train", 0), ("train", 1000)]:
        obs, info = env.reset(task_id, split)
        t = shared.splits[split][task_id]
        assert obs.startswith(f"Database: {t.db_id}\n\nCREATE TABLE ") and f"Question: {t.question}" in obs
        assert "example rows of" in obs and "SUBMIT" in obs
        assert obs == env.initial_observation(task_id, split) == env.observation()
        assert info["db_id"] == t.db_id and info["difficulty"] == t.difficulty
    with pytest.raises(IndexError):
        env.reset(200, "test")
    single = SqlGymEnv()
    single.shared, single.options = shared, SqlGymOptions(single_turn=True)
    obs, _ = single.reset(0, "test")
    assert obs.endswith(render.SINGLE_HINT) and obs == single.initial_observation(0, "test")


def test_results_are_shown_as_a_table_with_the_row_count(env):
    env.reset(first_test_task(env.shared, "school"), "test")
    r = env.step("SELECT title, credits FROM courses ORDER BY course_id")
    assert r.valid and not r.done and r.reward == 0
    lines = r.observation.splitlines()
    assert lines[0] == "40 rows, the first 20:" and lines[1] == "title | credits" and len(lines) == 22
    assert env.step("SELECT * FROM students").observation.startswith("more than 200 rows, the first 20:")
    r = env.step("SELECT * FROM students WHERE 0")
    assert r.observation.startswith("The query returned no rows.")
    r = env.step("PRAGMA table_info(courses)")
    assert r.valid and "max_students" in r.observation


# -- reward ----------------------------------------------------------------------------------------------------
def test_reward_on_hand_built_results():
    gold = [("Ana", 3), ("Ben", 1), ("Ana", 3)]
    assert reward([("Ben", 1), ("Ana", 3), ("Ana", 3)], gold, "multiset") == 1.0  # order does not matter
    assert reward([("Ben", 1), ("Ana", 3)], gold, "multiset") == 0.0  # a duplicate row is missing
    assert reward([("Ben", 1), ("Ana", 3)], gold, "set") == 1.0  # BIRD's set comparison
    assert reward([(3, "Ana"), (1, "Ben"), (3, "Ana")], gold, "multiset") == 0.0  # column order matters
    assert reward([("Ana", 3), ("Ana", 3), ("Ben", 1)], gold, "ordered") == 0.0  # the asked order matters
    assert reward(gold, gold, "ordered") == 1.0
    assert reward([(2.0,)], [(2,)], "multiset") == 1.0  # 2.0 == 2
    assert reward([(0.1 + 0.2,)], [(0.3,)], "multiset") == 1.0  # float noise of sums
    assert reward([(12.35,)], [(12.3456,)], "multiset") == 0.0  # rounding the answer changes it
    assert reward([(None,)], [(None,)], "multiset") == 1.0
    assert reward(None, gold, "set") == 0.0  # the query failed
    assert reward([], [], "multiset") == 1.0
    assert normalize([(-0.0, 1.23456789)]) == [(0, 1.2346)]
    with pytest.raises(ValueError):
        same_result([], [], "fuzzy")


def test_submission_is_graded_and_ends_the_episode(env, shared):
    task_id = first_test_task(shared, "library")
    t = shared.splits["test"][task_id]
    env.reset(task_id, "test")
    r = env.step(f"```sql\nSUBMIT {t.sql}\n```")  # a fenced block is read too
    assert r.done and r.success and r.reward == 1.0 and r.info["submitted"] and "is correct" in r.observation
    env.reset(task_id, "test")
    r = env.step("SUBMIT SELECT title FROM books LIMIT 1")
    assert r.done and not r.success and r.reward == 0.0 and "not correct" in r.observation
    after = env.step("SELECT 1")
    assert not after.valid and after.done


def test_action_parsing():
    assert parse("SUBMIT SELECT 1") == (True, "SELECT 1")
    assert parse("submit: select 1") == (True, "select 1")
    assert parse("-- submit\nSELECT 1") == (True, "SELECT 1")
    assert parse("Action:\n```sql\nSUBMIT\nSELECT 1;\n```") == (True, "SELECT 1;")
    assert parse("SELECT submitted FROM t") == (False, "SELECT submitted FROM t")


# -- invalid actions -------------------------------------------------------------------------------------------
def test_invalid_actions_are_reported_not_raised(env, shared):
    env.reset(first_test_task(shared, "retail_shop"), "test")
    for bad, says in [("", "Empty query"), ("SUBMIT", "Empty query"), ("SELEC name FROM products", "syntax error"),
                      ("SELECT name FROM products WHERE", "incomplete input"),
                      ("SELECT nope FROM products", "no such column"), ("DROP TABLE products", "DROP is not allowed"),
                      ("DELETE FROM orders", "only queries"),
                      ("/* hi */ (UPDATE orders SET status = 1)", "UPDATE"), ("SELECT 1; SELECT 2", "one statement"),
                      ("PRAGMA writable_schema = ON", "not authorized"), ("show tables", "syntax error")]:
        r = env.step(bad)
        assert not r.valid and not r.done and says in r.observation, (bad, r.observation)
    r = env.step("SUBMIT SELECT nope FROM products")  # a failing submission submits nothing
    assert not r.valid and not r.done and "Nothing was submitted" in r.observation
    assert env.step("SELECT COUNT(*) FROM products").valid


def test_single_turn_mode_ends_on_the_first_query(shared):
    e = SqlGymEnv()
    e.shared, e.options = shared, SqlGymOptions(single_turn=True)
    t = shared.splits["test"][3]
    e.reset(3, "test")
    assert e.expert_action() == t.sql
    r = e.step(t.sql)
    assert r.done and r.reward == 1.0
    e.reset(3, "test")
    r = e.step("SELECT nope")
    assert r.done and r.reward == 0.0 and not r.valid
    e.close()


# -- safety ------------------------------------------------------------------------------------------------------
def test_sandbox_refuses_writes_and_stops_endless_queries(shared):
    before = fingerprints(shared)
    db = ReadOnlyDatabase(shared.databases["retail_shop"], time_limit=1.0)
    try:
        for sql in ATTACKS:
            res = db.run(sql)
            assert not res.ok, sql
        start = time.monotonic()
        res = db.run(ENDLESS)
        assert res.timed_out and time.monotonic() - start < 3.0
        res = db.run("SELECT * FROM order_items a, order_items b, order_items c ORDER BY random()")
        assert res.timed_out
        res = db.run("SELECT randomblob(100000000)")
        assert not res.ok and "too big" in res.error
        assert db.run("SELECT COUNT(*) FROM customers").rows == [(150,)]
    finally:
        db.close()
    assert fingerprints(shared) == before
    assert not Path("/tmp/agentenv-sqlgym-attack.db").exists()


def test_attacks_over_http_change_nothing_and_do_not_block_other_sessions(shared):
    before = fingerprints(shared)
    task_id = first_test_task(shared, "retail_shop")
    with serve_in_thread(SqlGymEnv) as url, EnvClient(url) as a, EnvClient(url) as b:
        sa, sb = a.create(task_id, "test"), b.create(task_id, "test")
        for sql in ATTACKS[:-1]:
            a.reset(sa.env_id, task_id, "test")
            step = a.step(sa.env_id, f"SUBMIT {sql}" if "DROP" in sql else sql)
            assert not step.done and not step.info["valid"], sql
        done: dict[str, float] = {}

        def endless() -> None:
            start = time.monotonic()
            done["observation"] = a.step(sa.env_id, ENDLESS).observation
            done["a"] = time.monotonic() - start

        thread = threading.Thread(target=endless)
        thread.start()
        time.sleep(0.2)  # session A is inside its endless query now
        start = time.monotonic()
        answer = b.step(sb.env_id, "SELECT COUNT(*) FROM customers")
        b_seconds = time.monotonic() - start
        thread.join(30)
        assert answer.observation == "1 row:\nCOUNT(*)\n150"
        assert "time limit" in done["observation"] and 0.5 < done["a"] < 5.0
        assert b_seconds < done["a"] and b_seconds < 1.0
        again = a.step(sa.env_id, "SELECT COUNT(*) FROM orders")  # A goes on after its stopped query
        assert again.observation == "1 row:\nCOUNT(*)\n500"
    assert fingerprints(shared) == before


# -- policies -----------------------------------------------------------------------------------------------------
def test_random_policy_does_far_worse_than_the_expert(env, shared):
    sample = range(0, 200, 5)  # the expert solves all of them (test_check_environment)
    rng = random.Random(0)
    randoms = [play_in_process(env, i, "test", lambda e: e.random_action(rng))[0] for i in sample]
    assert sum(randoms) / len(randoms) <= 0.1


def test_expert_thoughts_explain_the_steps(env):
    env.reset(7, "test")
    assert "look at a few of its rows" in env.expert_thought() and env.expert_action().endswith("LIMIT 3")
    env.step(env.expert_action())
    assert "submit" in env.expert_thought() and env.expert_action().startswith("SUBMIT ")


def test_available_actions_are_queries_on_the_tasks_database(env, shared):
    task_id = first_test_task(shared, "movies")
    env.reset(task_id, "test")
    actions = env.available_actions()
    for table in ("directors", "movies", "actors", "casting"):
        assert f"SELECT * FROM {table} LIMIT 5" in actions and f"SUBMIT SELECT COUNT(*) FROM {table}" in actions
    for a in actions:
        env.reset(task_id, "test")
        assert env.step(a).valid


# -- published data (BIRD / Spider layouts) --------------------------------------------------------------------
def _make_db(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE "school list" (id INTEGER PRIMARY KEY, name TEXT, county TEXT, enrollment INTEGER);
        INSERT INTO "school list" VALUES (1, 'Hill High', 'Alameda', 900), (2, 'Bay Prep', 'Alameda', 450),
                                         (3, 'Oak School', 'Fresno', 1200), (4, 'Sea View', 'Marin', 300);
    """)
    conn.commit()
    conn.close()


def _bird(root: Path) -> Path:
    for split, items in (("dev", [
            {"question": "Which schools in Alameda enroll more than 400 students?", "evidence": "Alameda is a county",
             "SQL": "SELECT name FROM \"school list\" WHERE county = 'Alameda' AND enrollment > 400",
             "db_id": "schools", "difficulty": "simple"},
            {"question": "How many counties are there?", "evidence": "",
             "SQL": "SELECT COUNT(DISTINCT county) FROM \"school list\"", "db_id": "schools"}]),
            ("train", [{"question": "List all school names.", "evidence": "",
                        "SQL": "SELECT name FROM \"school list\"", "db_id": "schools"}])):
        (root / split).mkdir(parents=True)
        (root / split / f"{split}.json").write_text(json.dumps(items))
        _make_db(root / split / f"{split}_databases" / "schools" / "schools.sqlite")
    return root


def test_bird_layout_loads_and_plays(tmp_path):
    root = _bird(tmp_path / "bird")
    opts = SqlGymOptions(data_path=str(root))
    shared = SqlGymEnv.load_shared(opts)
    assert shared.counts() == {"train": 1, "test": 2} == SqlGymEnv.task_counts(shared)
    e = SqlGymEnv()
    e.shared, e.options = shared, opts
    obs, info = e.reset(0, "test")
    assert 'CREATE TABLE "school list"' in obs and "Evidence: Alameda is a county" in obs
    assert obs == e.initial_observation(0, "test") and info["db_id"] == "schools"
    assert e.expert_action() == 'SELECT * FROM "school list" LIMIT 3'
    total, steps = play_in_process(e, 0, "test", lambda x: x.expert_action())
    assert total == 1.0 and len(steps) == 2
    e.reset(0, "test")  # set comparison: duplicates and order do not matter, as in BIRD's evaluation
    r = e.step("SUBMIT SELECT name FROM \"school list\" WHERE enrollment > 400 AND county = 'Alameda' "
               "UNION ALL SELECT 'Hill High' ORDER BY name")
    assert r.reward == 1.0
    e.reset(1, "test")
    assert e.step("SUBMIT SELECT COUNT(*) FROM \"school list\"").reward == 0.0
    # the split folder alone is read too, and the fingerprint follows the files
    assert SqlGymEnv.load_shared(SqlGymOptions(data_path=str(root / "dev"))).counts() == {"train": 0, "test": 2}
    assert SqlGymEnv.fingerprint(shared.counts(), opts) != SqlGymEnv.fingerprint(shared.counts(), SqlGymOptions())
    e.close()


def test_spider_layout_loads(tmp_path):
    root = tmp_path / "spider"
    _make_db(root / "database" / "schools" / "schools.sqlite")
    item = {"question": "What is the largest enrollment?", "query": "SELECT MAX(enrollment) FROM \"school list\"",
            "db_id": "schools"}
    (root / "dev.json").write_text(json.dumps([item]))
    (root / "train_spider.json").write_text(json.dumps([item, item]))
    opts = SqlGymOptions(data_path=str(root), single_turn=True)
    e = SqlGymEnv()
    e.shared, e.options = SqlGymEnv.load_shared(opts), opts
    assert e.shared.counts() == {"train": 2, "test": 1}
    e.reset(0, "test")
    r = e.step("SELECT 1200")
    assert r.done and r.reward == 1.0
    e.close()
    with pytest.raises(FileNotFoundError):
        SqlGymEnv.load_shared(SqlGymOptions(data_path=str(tmp_path / "nothing")))


# -- AgentGym's routes -----------------------------------------------------------------------------------------
def test_agentgym_routes_grade_single_turn_answers(shared):
    """``--compat agentgym --option profile=native --option single_turn=true`` (the generated tasks, AgentGym's
    single turn): a wrong query ends the episode with reward 0, and a write (index 0: the first train task) is
    refused, in the observation under "state"."""
    import httpx

    from agentenv.server import ServerConfig

    train = len(shared.splits["train"])
    config = ServerConfig(options={"profile": "native", "single_turn": True})
    with serve_app_in_thread(create_agentgym_app(SqlGymEnv, config)) as url, \
            httpx.Client(base_url=url, timeout=60) as http:
        env_idx = http.post("/create").json()
        http.post("/reset", json={"env_idx": env_idx, "item_id": train})
        got = http.post("/step", json={"env_idx": env_idx, "action": "SELECT 1"}).json()
        assert got["reward"] == 0.0 and got["done"] is True
        http.post("/reset", json={"env_idx": env_idx, "item_id": 0})
        got = http.post("/step", json={"env_idx": env_idx, "action": "DROP TABLE customers"}).json()
        assert got["done"] and got["reward"] == 0.0 and "only queries" in got["state"]
