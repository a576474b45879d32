"""The agentgym profile of academia: AgentGym's academia server on DBLP pickles, answer for answer.

The real DBLP pickles are not public in AgentGym's repository, so the tests play this package's generated network
written in upstream's layout (``agentenv_academia.dblp_export``: its 280 questions as ``academia.jsonl``, the six
pickles under ``tool-query/academia/raw``). The upstream comparison replays a recording of AgentGym's own server
(``tests/data/agentgym/academia_upstream.json.gz``: its ``agentenv-tool`` academia server from its public repository,
Python 3.8 with networkx 3.1, run in a scratch environment on that export; ``python -m
agentenv.interop.agentgym_compare academia --indices 0-279 --option data_dir=DIR --record FILE``) plus five episodes
of edge calls (graphs not loaded, neither graph, unhashable and missing arguments, inputs that are no dictionary,
unknown tools, ``neighborCheck``, a list answer unsorted, mixed and of another type, ``Finish`` capitalised).
AgentGym's own question file (``academia.jsonl`` in ``$AGENTGYM_TOOL_DATA`` or ``../shared``) is played where it is
present, on the export's graphs.
"""

import os
import pickle
import random

import httpx
import pytest
from agentenv_academia import dblp_export
from agentenv_academia.agentgym_profile import (
    MAX_ROUNDS,
    RULES,
    AcademiaOptions,
    AgentGymAcademiaEnv,
    named,
)
from agentenv_academia.env import AcademiaEnv

from agentenv import profiles, registry
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.interop.agentgym_toolusage import DATA_VAR, FORMAT_ERROR
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, play_in_process, serve_app_in_thread

from helpers import AGENTGYM_TOOL_DATA, REPO

RECORDING = REPO / "tests" / "data" / "agentgym" / "academia_upstream.json.gz"
UPSTREAM_QUESTIONS = AGENTGYM_TOOL_DATA / "academia.jsonl"


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    """The generated network and its questions in upstream's layout (what the recording was made on)."""
    return dblp_export.export(tmp_path_factory.mktemp("dblp"))


def profile_env(options: dict) -> AgentGymAcademiaEnv:
    env = AgentGymAcademiaEnv()
    env.options = AcademiaOptions(**options)
    env.shared = AgentGymAcademiaEnv.load_shared(env.options)
    return env


def call(tool: str, args: str) -> str:
    return f"Thought: I call {tool}.\n\nAction: {tool} with Action Input: {args}"


@pytest.mark.parametrize("part", checks_for(AgentGymAcademiaEnv))
def test_check_environment(part, export):
    """The SDK's contract; the expert solves every question of the export within upstream's 12 rounds (its 20 test
    kinds and the six more of the train split); three questions are played over HTTP and AgentGym's routes."""
    report = check_environment(AgentGymAcademiaEnv, options={"data_dir": str(export)}, checks=(part,), thoughts=True,
                               splits={"test": range(20), "train": range(20, 280, 7)}, served=(0, 1, 13))
    for episode in report.episodes:
        assert episode.total == 1.0 and len(episode.results) <= MAX_ROUNDS


def test_the_option_chooses_the_profile_and_compat_serves_it():
    native = registry.load("academia")
    assert profiles.resolve(native, "agentgym") is AgentGymAcademiaEnv
    assert profiles.available(AcademiaEnv) == ["native", "agentgym"]
    assert native.agentgym.options == {"profile": "agentgym"} and AgentGymAcademiaEnv.max_turns == 12
    assert AgentGymAcademiaEnv.agentgym.action_prefix == "Action: "


def test_answers_as_agentgyms_own_server(export):
    """Every answer AgentGym's server gave on the export (280 scripted items and 5 of edge calls); the same
    recording against the native game under AgentGym's routes differs (the check can fail)."""
    recorded = agentgym_compare.read_recording(RECORDING)
    steps = [s for item in recorded["items"] for s in item["steps"]]
    assert len(recorded["items"]) == 285 and len(steps) > 2000
    assert sum(s["reward"] == 1.0 and s["done"] for s in steps) > 150  # successes, and many failures
    seen = {s["observation"] for s in steps}
    assert {"Observation: AttributeError('str' object has no attribute 'neighbors')\nGive me one action.",
            "Observation: ERROR | TypeError(string indices must be integers)\nGive me one action.",
            "Observation: ERROR | Invalid action: Finish.\nGive me one action.", FORMAT_ERROR} <= seen
    config = ServerConfig(options={"data_dir": str(export)})
    with serve_app_in_thread(create_agentgym_app(AcademiaEnv, config)) as url:  # the profile by default
        assert agentgym_compare.compare(recorded, url) == [], "a change of the generator makes the recording stale"
    with serve_app_in_thread(create_agentgym_app(AcademiaEnv, ServerConfig(options={"profile": "native"}))) as url:
        assert len(agentgym_compare.compare({**recorded, "items": recorded["items"][:3]}, url)) > 0


def test_first_observation_rules_and_compat_answers(export):
    env = profile_env({"data_dir": str(export)})
    first, info = env.reset(1, "test")
    goal = (export / "academia.jsonl").read_text().splitlines()[1]
    assert first.startswith(RULES + "\nNow new trial starts.\nYou should perform actions to accomplish the goal: ")
    assert first.endswith("\nGive me one action.") and info["agentgym_index"] == 1 and "Which paper by" in goal
    with serve_app_in_thread(create_agentgym_app(AcademiaEnv, ServerConfig(options={"data_dir": str(export)}))) as url:
        http = httpx.Client(base_url=url, timeout=30)
        handle = http.post("/create", json={"id": 1}).json()
        assert http.post("/reset", json={"env_idx": handle, "id": 1}).json() == first[len(RULES) + 1:]
        step = http.post("/step", json={"env_idx": handle, "action": call("loadAuthorNet", "{}")}).json()
        assert {k: step[k] for k in ("observation", "reward", "done")} == {
            "observation": "Observation: AuthorNet is loaded.\nGive me one action.", "reward": 0.0, "done": False}
    env.close()


def test_the_value_is_the_best_share_and_a_number_is_not_its_text(export):
    """Question 0 asks for a number: "4" is wrong, 4 and 4.0 are right (upstream compares with ==); a subgoal
    reached stays reached; a list answer is sorted before it is compared."""
    env = profile_env({"data_dir": str(export)})
    env.reset(0, "test")
    answer = env.gold_program()[-1].args["answer"]
    assert isinstance(answer, int)
    wrong = env.step(call("finish", f'{{"answer": "{answer}"}}'))
    assert wrong.done and wrong.reward == 0.0 and not wrong.success
    env.reset(0, "test")
    right = env.step(call("finish", f'{{"answer": {float(answer)}}}'))
    assert right.done and right.success and right.info["agentgym_reward"] == 1.0
    env.reset(2, "test")
    names = env.gold_program()[-1].args["answer"]
    assert isinstance(names, list) and len(names) > 1
    last = env.step(call("finish", repr(dict(answer=list(reversed(names))))))
    assert last.success and last.observation == f"Observation: {sorted(names)}\nGive me one action."
    env.close()


def test_named_reads_upstreams_question_kinds():
    assert named("How many mutual collaborators do Florian Kirchbuchner and Fadi Boutros share? Please give me a "
                 "numerical value as an answer.") == (["Florian Kirchbuchner", "Fadi Boutros"], [])
    assert named("Of Fred Zhang's collaborators, who are from different organizations than Fred Zhang? Please "
                 "provide a list in the format: ['author1', 'author2', ...].") == (["Fred Zhang"], [])
    assert named("Is the article 'A B' from the same publication venue as 'C: D'? Please answer 'Yes' or "
                 "'No'.") == ([], ["A B", "C: D"])


@pytest.mark.skipif(not UPSTREAM_QUESTIONS.is_file(), reason=f"AgentGym's academia.jsonl absent: set ${DATA_VAR}")
def test_agentgyms_own_questions_are_solved_by_the_expert(export, tmp_path):
    """AgentGym's 20 questions (on the export's graphs: the real DBLP is not here): the expert's answer, in the type
    upstream's file gives it, is graded 1 on every one within 12 rounds; what it reads first is refused politely
    (the names are not in the generated network) and counts for nothing."""
    (tmp_path / "academia.jsonl").write_bytes(UPSTREAM_QUESTIONS.read_bytes())
    graphs = export / dblp_export.RAW
    env = profile_env({"data_dir": str(tmp_path), "graph_dir": str(graphs)})
    solved = 0
    for index in range(20):
        total, steps = play_in_process(env, index, "test", lambda e: e.expert_action())
        solved += total == 1.0 and steps[-1].success
    assert solved == 20
    env.close()


def test_missing_or_foreign_data_are_one_line_errors(export, tmp_path, monkeypatch):
    monkeypatch.delenv(DATA_VAR, raising=False)
    with pytest.raises(ValueError, match="give --option data_dir=DIR"):
        AgentGymAcademiaEnv.load()
    (tmp_path / "academia.jsonl").write_bytes((export / "academia.jsonl").read_bytes())
    with pytest.raises(ValueError, match="give --option graph_dir=DIR") as e:
        AgentGymAcademiaEnv.load(tmp_path)
    assert "\n" not in str(e.value)
    evil = tmp_path / "evil"
    evil.mkdir()
    for name in dblp_export.PICKLES:
        (evil / name).write_bytes((export / dblp_export.RAW / name).read_bytes())

    class Shell:
        def __reduce__(self):
            return (os.getcwd, ())

    (evil / "author_net.pkl").write_bytes(pickle.dumps(Shell()))
    with pytest.raises(ValueError, match=r"names \S+getcwd; only networkx graphs and plain data are read"):
        AgentGymAcademiaEnv.load(tmp_path, evil)
    env = profile_env({"data_dir": str(export)})
    with pytest.raises(IndexError, match=r"tasks 0\.\.279"):
        env.reset(280, "test")


def test_random_calls_rarely_solve_a_question(export):
    env = profile_env({"data_dir": str(export)})
    rng = random.Random(0)
    solved = 0
    for index in range(20):
        env.reset(index, "test")
        for _ in range(MAX_ROUNDS):
            result = env.step(env.random_action(rng))
            if result.done:
                solved += result.success
                break
    assert solved <= 2
    env.close()
