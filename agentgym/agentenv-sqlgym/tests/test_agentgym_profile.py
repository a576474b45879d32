"""The agentgym profile of sqlgym: AgentGym's sqlgym server on BIRD, answer for answer.

BIRD cannot be downloaded here, so the tests play this package's generated databases and questions written in
BIRD's layout (``agentenv_sqlgym.bird_export``: the first 60 train and 60 test questions as BIRD's train and dev).
The upstream comparison replays a recording of AgentGym's own server (``tests/data/agentgym/sqlgym_upstream.json.gz``:
its ``agentenv-sqlgym`` from its public repository with ``sqlgym==0.1.2`` from PyPI, run in a scratch environment on
that export, ``python -m agentenv.interop.agentgym_compare sqlgym --indices 0-59,9428-9487 --option data_path=DIR
--record FILE``) plus its answers to 19 edge queries on item 9428 (writes, two statements, empty, unknown names,
duplicates and order under set equality, a fenced reply sent whole, NULL, blobs, long results). The export is the
same on every machine (the generated databases are byte-for-byte reproducible); a change of the generator makes
the recording stale, and this test says so.
"""

import json

import httpx
import pytest
from agentenv_sqlgym import bird_export
from agentenv_sqlgym.agentgym_profile import (
    BIRD_VAR,
    NUM_TASKS,
    RULES,
    AgentGymSqlGymEnv,
    AgentGymSqlOptions,
    describe,
    shown,
)
from agentenv_sqlgym.env import SqlGymEnv

from agentenv import profiles, registry
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, play_in_process, serve_app_in_thread

from helpers import REPO

RECORDING = REPO / "tests" / "data" / "agentgym" / "sqlgym_upstream.json.gz"
DEV = 9428  # upstream's first dev item


@pytest.fixture(scope="module")
def bird(tmp_path_factory):
    """The generated set's first 60 train and 60 test questions as a BIRD root (what the recording was made on)."""
    return bird_export.export(tmp_path_factory.mktemp("bird"), train=60, dev=60)


def profile_env(bird) -> AgentGymSqlGymEnv:
    env = AgentGymSqlGymEnv()
    env.options = AgentGymSqlOptions(data_path=str(bird))
    env.shared = AgentGymSqlGymEnv.load_shared(env.options)
    return env


@pytest.mark.parametrize("part", checks_for(AgentGymSqlGymEnv))
def test_check_environment(part, bird):
    """The SDK's contract; the expert's one query is right on every question of the export (train and dev items);
    two items are played over HTTP and AgentGym's routes."""
    report = check_environment(AgentGymSqlGymEnv, options={"data_path": str(bird)}, checks=(part,), thoughts=True,
                               splits={"test": range(DEV, DEV + 60), "train": range(0, 60, 4)}, served=(DEV, 1))
    assert all(episode.total == 1.0 and episode.turns == 1 for episode in report.episodes)


def test_the_option_chooses_the_profile_and_compat_serves_it():
    native = registry.load("sqlgym")
    assert profiles.resolve(native, "agentgym") is AgentGymSqlGymEnv
    assert native.agentgym.options == {"profile": "agentgym"} and AgentGymSqlGymEnv.max_turns == 1
    assert AgentGymSqlGymEnv.task_counts() == {"train": NUM_TASKS, "test": NUM_TASKS} and NUM_TASKS == 10962


def test_answers_as_agentgyms_own_server(bird):
    """Every answer AgentGym's server gave on the export: 120 items scripted by the compare tool and 19 edge
    queries; then the same recording against the native game under AgentGym's routes differs (the check can fail)."""
    recorded = agentgym_compare.read_recording(RECORDING)
    steps = [s for item in recorded["items"] for s in item["steps"]]
    assert len(recorded["items"]) == 139 and sum(s["reward"] for s in steps) >= 20
    assert {"attempt to write a readonly database", "You can only execute one statement at a time.",
            "[]"} <= {s["observation"] for s in steps}
    config = ServerConfig(options={"data_path": str(bird)})
    with serve_app_in_thread(create_agentgym_app(SqlGymEnv, config)) as url:  # the profile by default
        assert agentgym_compare.compare(recorded, url) == [], "a change of the generator makes the recording stale"
    native = ServerConfig(options={"profile": "native", "single_turn": True})
    with serve_app_in_thread(create_agentgym_app(SqlGymEnv, native)) as url:
        assert len(agentgym_compare.compare({**recorded, "items": recorded["items"][:3]}, url)) > 0


def test_the_rules_reach_only_the_model_and_the_first_observation_is_upstreams(bird):
    env = profile_env(bird)
    first, info = env.reset(DEV, "test")
    task = json.loads((bird / "dev" / "dev.json").read_text())[0]
    assert first.startswith(RULES + "\n") and first.endswith("\n\n" + task["question"])
    assert info["bird"] == "dev" and info["db_id"] == task["db_id"]
    with serve_app_in_thread(create_agentgym_app(SqlGymEnv, ServerConfig(options={"data_path": str(bird)}))) as url:
        http = httpx.Client(base_url=url, timeout=30)
        handle = http.post("/create").json()
        observation, none = http.post("/reset", json={"env_idx": handle, "item_id": DEV}).json()
        assert none is None and observation == first[len(RULES) + 1:]
        answer = http.post("/step", json={"env_idx": handle, "action": env.expert_action()}).json()
        assert answer["reward"] == 1.0 and answer["done"] is True and answer["state"].startswith("[(")
    env.close()


def test_the_description_keeps_upstreams_quirks():
    """A foreign key names the columns one position on (upstream's list has no "*"), a composite primary key lists
    no column, and names are lower-cased; a foreign key on the last column of a one-table database fails as
    upstream's description does."""
    entry = {"table_names": ["Shop", "Sale Line"],
             "column_names": [[-1, "*"], [0, "Shop ID"], [0, "City"], [1, "Shop ID"], [1, "Line No"], [1, "Amount"]],
             "primary_keys": [1, [3, 4]], "foreign_keys": [[3, 1]]}
    assert describe("shops", entry) == (
        "shops contains tables such as shop, sale line. Table shop has columns such as shop id, city. shop id is the "
        "primary key. Table sale line has columns such as shop id, line no, amount.  is the primary key. The line no "
        "of sale line is the foreign key of city of shop.")
    one = {"table_names": ["t"], "column_names": [[-1, "*"], [0, "a"], [0, "b"]], "primary_keys": [],
           "foreign_keys": [[2, 1]]}
    with pytest.raises(IndexError):
        describe("one", one)
    assert shown("x" * 100) == "x" * 100 and shown("x" * 101) == "x" * 100 + "..."


def test_missing_data_and_unknown_items_are_one_line_errors(bird, tmp_path, monkeypatch):
    monkeypatch.delenv(BIRD_VAR, raising=False)
    with pytest.raises(ValueError, match=BIRD_VAR):
        AgentGymSqlGymEnv.load_shared(AgentGymSqlOptions())
    with pytest.raises(ValueError, match=r"neither train/train\.json nor dev/dev\.json"):
        AgentGymSqlGymEnv.load_shared(AgentGymSqlOptions(data_path=str(tmp_path)))
    monkeypatch.setenv(BIRD_VAR, str(bird))  # upstream's variable is read too
    assert AgentGymSqlGymEnv.load_shared(AgentGymSqlOptions()).root == bird.resolve()
    env = profile_env(bird)
    with pytest.raises(IndexError, match=r"BIRD train question 60; .*has 60"):
        env.reset(60, "test")
    with pytest.raises(IndexError, match="not 10962"):
        env.reset(NUM_TASKS, "test")
    env.close()


def test_random_queries_rarely_answer(bird):
    """The random policy (a look at or a count of a table) against the expert, on the export's 60 dev items."""
    import random

    env = profile_env(bird)
    rng = random.Random(0)
    random_wins = sum(play_in_process(env, DEV + i, "test", lambda e: e.random_action(rng))[0] for i in range(60))
    expert_wins = sum(play_in_process(env, DEV + i, "test", lambda e: e.expert_action())[0] for i in range(60))
    env.close()
    assert expert_wins == 60 and random_wins <= 6


def test_the_compare_tool_takes_the_indices_a_users_data_holds():
    """``--indices`` (how the recording was made: the export holds only some of upstream's items)."""
    assert agentgym_compare.parse_indices("0-2, 9428") == [0, 1, 2, 9428]
    recorded = agentgym_compare.read_recording(RECORDING)
    assert [item["index"] for item in recorded["items"][:120]] == agentgym_compare.parse_indices("0-59,9428-9487")
    for bad in ("a", "3-", "1-x"):
        with pytest.raises(ValueError, match="not an index or a range"):
            agentgym_compare.parse_indices(bad)
