"""The academia tool environment: the SDK's contract (check_environment: the expert on every test task and a
train sample, the protocol and AgentGym's routes over HTTP), tasks, tools, grading, the random policy."""

import random

import pytest
from agentenv_academia import dblp_export
from agentenv_academia.env import AcademiaEnv, default_world
from agentenv_academia.graph import generate
from agentenv_academia.reward import grade
from agentenv_academia.tasks import NUM_TASKS, TEST_KINDS, TaskSet

from agentenv.interop.agentgym_toolusage import DATA_VAR
from agentenv.testing import check_environment, checks_for, play_in_process


@pytest.fixture(scope="module")
def env():
    return AcademiaEnv()


@pytest.mark.parametrize("part", checks_for(AcademiaEnv))
def test_check_environment(part, monkeypatch, tmp_path):
    """The contract; the expert solves every test task and every 13th train task with a return of 1, a thought
    at every turn; tasks 4 and 5 are played over HTTP. AgentGym's routes (``--compat agentgym``) serve the agentgym
    profile, which reads AgentGym's data from ``$AGENTGYM_TOOL_DATA``, here this package's network exported in its
    layout: its check plays the profile's questions through them (AcademiaEnvClient's flow: create with {"id"},
    reset with env_idx and id returning a string, GET /observation)."""
    if part == "agentgym":
        monkeypatch.setenv(DATA_VAR, str(dblp_export.export(tmp_path)))
    report = check_environment(AcademiaEnv, checks=(part,), thoughts=True, served=(4, 5),
                               splits={"test": range(NUM_TASKS["test"]), "train": range(0, NUM_TASKS["train"], 13)})
    assert all(episode.total == 1.0 for episode in report.episodes)


def test_sizes():
    assert AcademiaEnv.num_tasks("test") == 20 == len(TEST_KINDS)
    assert AcademiaEnv.num_tasks("train") >= 200
    with pytest.raises(ValueError):
        AcademiaEnv.num_tasks("dev")


def test_graph_is_big_enough_and_consistent():
    g = default_world().graph
    assert len(g.papers) >= 1000 and len(g.authors) >= 300
    for title, p in list(g.papers.items())[:200]:
        assert all(title in g.authors[a].papers for a in p.authors)
        assert all(g.papers[r].year < p.year and title in g.papers[r].cited_by for r in p.references)
        assert p.n_citation == len(p.cited_by)
    for pair, joint in list(g.collaborations.items())[:200]:
        a, b = sorted(pair)
        assert joint and all({a, b} <= set(g.papers[t].authors) for t in joint)


def test_splits_are_deterministic_and_disjoint():
    again = TaskSet(generate())
    world = default_world()
    for split in ("test", "train"):
        assert [(t.question, t.answer) for t in again.tasks[split]] == \
               [(t.question, t.answer) for t in world.tasks[split]]
    test_q = {t.question for t in world.tasks["test"]}
    train_q = {t.question for t in world.tasks["train"]}
    assert len(test_q) == 20 and len(train_q) == NUM_TASKS["train"] and not test_q & train_q
    assert [t.kind for t in world.tasks["test"]] == [k.__name__ for k in TEST_KINDS]


def test_first_observation_holds_the_question(env):
    for task_id in (0, 7, 19):
        obs, info = env.reset(task_id, "test")
        assert env._task.question in obs and info["kind"] == env._task.kind
        assert obs == env.initial_observation(task_id, "test") == env.observation()
    assert "co-authored by" in env.reset(4, "test")[0]
    described = AcademiaEnv.describe()
    for name in ("loadPaperNet", "loadAuthorNet", "neighbourCheck", "paperNodeCheck", "authorNodeCheck",
                 "authorEdgeCheck", "paperEdgeCheck", "check_valid_actions", "finish"):
        assert f"- {name}(" in described["instruction"]


@pytest.mark.parametrize(("given", "expected", "reward"), [
    (4, 4, 1.0), ("4", 4, 1.0), ("4 collaborators", 4, 1.0), (4.0, 4, 1.0), ("5", 4, 0.0), ([4], 4, 1.0),
    ("yes.", "Yes", 1.0), ("No", "Yes", 0.0), ("  'MIT' ", "MIT", 1.0), ("Stanford University", "MIT", 0.0),
    (["b", "a"], ["a", "b"], 1.0), ("['a', 'b']", ["a", "b"], 1.0), ("a, b", ["a", "b"], 1.0),
    (["a"], ["a", "b"], 0.5), (["a", "b", "c"], ["a", "b"], 2 / 3), (["a", "x"], ["a", "b"], 1 / 3),
    ([], ["a"], 0.0), (["x"], ["a"], 0.0), ("KDD", ["KDD", "AAAI"], 0.5),
])
def test_grading_with_partial_credit(given, expected, reward):
    assert grade(given, expected) == pytest.approx(reward)


def test_tools_answer_and_gate(env):
    env.reset(8, "test")  # who wrote paper P
    paper = env._task.program[1].args["node"]
    step = env.step(env.call("paperNodeCheck", node=paper))
    assert step.valid and "Please load the PaperNet first." in step.observation and not step.done
    assert env.step(env.call("loadPaperNet")).observation == "PaperNet is loaded."
    step = env.step(env.call("paperNodeCheck", node=paper))
    assert step.valid and "'authors': [" in step.observation and "'n_citation':" in step.observation
    step = env.step(env.call("paperNodeCheck", node="No Such Paper"))
    assert step.valid and "There is no node named No Such Paper in the PaperNet." in step.observation
    step = env.step(env.call("check_valid_actions"))
    assert "loadAuthorNet" in step.observation and "finish" in step.observation
    step = env.step(env.call("finish", answer=["Somebody Else"]))
    assert step.done and step.reward == 0.0 and not step.success


@pytest.mark.parametrize(("action", "says"), [
    ("look at the graph", "no tool call"),
    ("searchPaper with Action Input: {}", 'no tool "searchPaper"'),
    ('paperNodeCheck with Action Input: {"node": "x"', "not valid JSON"),
    ("authorEdgeCheck with Action Input: {\"node1\": \"a\"}", 'missing argument "node2"'),
    ('neighbourCheck with Action Input: {"graph": "CitationNet", "node": "x"}', 'argument "graph"'),
    ('paperNodeCheck with Action Input: {"node": 3}', 'argument "node"'),
])
def test_bad_calls_are_invalid(env, action, says):
    env.reset(0, "test")
    step = env.step(action)
    assert not step.valid and not step.done and says in step.observation, step.observation


def test_expert_resumes_after_other_moves(env):
    env.reset(1, "test")  # most cited paper: a long program
    env.step(env.call("loadPaperNet"))
    env.step(env.call("loadAuthorNet"))
    env.step("nonsense")
    for _ in range(env.max_turns):
        step = env.step(env.expert_action())
        if step.done:
            break
    assert step.success


def test_random_policy_does_far_worse(env):
    rng = random.Random(0)
    wins = sum(play_in_process(env, i, "test", lambda e: e.random_action(rng))[1][-1].success for i in range(20))
    assert wins <= 2
    assert len(env.available_actions()) == len(AcademiaEnv.tools)
    assert all(" with Action Input: {" in a for a in env.available_actions())

