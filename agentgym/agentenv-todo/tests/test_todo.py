"""The todo tool environment: the SDK's contract (check_environment: the expert on every test task and a train
sample, the protocol and AgentGym's routes over HTTP), accounts, tools, state grading, the random policy."""

import random

import pytest
from agentenv_todo.env import TodoEnv, default_tasks
from agentenv_todo.reward import answer_score, checks, reward
from agentenv_todo.tasks import NUM_TASKS, TEST_KINDS, build

from agentenv.interop.agentgym_toolusage import DATA_VAR
from agentenv.testing import check_environment, checks_for, play_in_process

from helpers import AGENTGYM_TOOL_DATA  # reference data beside the checkout, never copied into it


@pytest.fixture(scope="module")
def env():
    return TodoEnv()


def _ids(text):
    """The ids in a tool's observation (Python-literal lists of dicts)."""
    import ast
    return [item["id"] for item in ast.literal_eval(text)]


@pytest.mark.parametrize("part", checks_for(TodoEnv))
def test_check_environment(part, monkeypatch):
    """The contract; the expert solves every test task and every 7th train task with a return of 1, a thought
    at every turn; tasks 11, 12 (delete the expired tasks) and 18 are played over HTTP, one session after
    another. AgentGym's routes (``--compat agentgym``) serve the agentgym profile, which reads AgentGym's data
    from ``$AGENTGYM_TOOL_DATA``: its check plays the profile's tasks 0-2 through them (TodoEnvClient's flow:
    create with {"id"}, reset with env_idx and id returning a string, GET /observation)."""
    if part == "agentgym":
        if not (AGENTGYM_TOOL_DATA / "todo.jsonl").is_file():
            pytest.skip(f"AgentGym's tool data (todo.jsonl) absent: set ${DATA_VAR} or add ../shared")
        monkeypatch.setenv(DATA_VAR, str(AGENTGYM_TOOL_DATA))
    report = check_environment(TodoEnv, checks=(part,), thoughts=True, served=(11, 12, 18),
                               splits={"test": range(NUM_TASKS["test"]), "train": range(0, NUM_TASKS["train"], 7)})
    assert all(episode.total == 1.0 for episode in report.episodes)


def test_sizes():
    assert TodoEnv.num_tasks("test") == 20 == len(TEST_KINDS)
    assert TodoEnv.num_tasks("train") >= 200
    with pytest.raises(ValueError):
        TodoEnv.num_tasks("dev")


def test_splits_are_deterministic_and_disjoint():
    tasks = default_tasks().tasks
    for split, ids in (("test", range(20)), ("train", range(0, NUM_TASKS["train"], 11))):
        for i in ids:
            again = build(split, i)
            assert (again.question, again.answer, again.account) == (tasks[split][i].question, tasks[split][i].answer,
                                                                      tasks[split][i].account)
    seen = {(t.question, t.account.current_date) for t in tasks["test"]}
    assert not seen & {(t.question, t.account.current_date) for t in tasks["train"]}
    assert [t.kind for t in tasks["test"]] == [k.__name__ for k in TEST_KINDS]
    ops = sum(t.expected is not None for t in tasks["train"])
    assert 0.3 < ops / NUM_TASKS["train"] < 0.7  # questions and operations both


def test_first_observation_holds_the_task(env):
    for task_id in (0, 1, 17):
        obs, info = env.reset(task_id, "test")
        assert env._task.question in obs and info["kind"] == env._task.kind
        assert obs == env.initial_observation(task_id, "test") == env.observation()
    for name in ("get_user_current_date", "get_user_current_location", "get_projects", "update_project", "get_tasks",
                 "get_task_description", "get_task_duration", "complete_task", "update_task", "delete_task",
                 "check_valid_actions", "finish"):
        assert f"- {name}(" in TodoEnv.describe()["instruction"]


def test_sessions_edit_their_own_copy():
    a, b = TodoEnv(), TodoEnv()
    a.reset(1, "test")  # complete one task
    b.reset(1, "test")
    template = default_tasks().task("test", 1).account
    before = template.snapshot()
    for _ in range(a.max_turns):
        if a.step(a.expert_action()).done:
            break
    assert template.snapshot() == before and b._account.snapshot() == before
    assert a._account.snapshot() != before


@pytest.mark.parametrize(("given", "expected", "score"), [
    ("2015-06-01", "2015-06-01", 1.0), ("2015-06-02", "2015-06-01", 0.0), ("60 (minute)", "60(minute)", 1.0),
    (17, 17, 1.0), ("17 tasks", 17, 1.0), ("yes", "Yes", 1.0), ("No.", "Yes", 0.0), ("none", "None", 1.0),
    (["b", "a"], ["a", "b"], 1.0), ("['a']", ["a", "b"], 0.5), (["a", "b", "c"], ["a", "b"], 2 / 3),
])
def test_answer_scores(given, expected, score):
    assert answer_score(given, expected) == pytest.approx(score)


def test_state_checks_with_partial_credit():
    task = default_tasks().task("test", 17)  # complete_then_minutes: two targets and an answer
    assert task.kind == "complete_then_minutes" and len(task.targets) == 2
    acc = task.account.copy()
    # nothing done: no target holds, so 0 whatever the answer
    found = checks(task.account, acc, task.expected, task.targets, task.answer, task.answer)
    assert reward(found, True) == 0.0 and len(found) == 4
    # one of the two targets, the right answer, nothing else touched: 3 of 4 checks
    acc.task(task.targets[0]).is_completed = True
    found = checks(task.account, acc, task.expected, task.targets, task.answer, task.answer)
    assert reward(found, True) == pytest.approx(3 / 4)
    # both targets but another task deleted as well: the collateral check fails
    acc.task(task.targets[1]).is_completed = True
    other = next(t for t in acc.tasks if t.id not in task.targets)
    acc.tasks.remove(other)
    found = checks(task.account, acc, task.expected, task.targets, task.answer, task.answer)
    assert reward(found, True) == pytest.approx(3 / 4) and dict(found)["nothing else changed"] == 0.0
    # a question answered right after an edit it did not ask for: 1 of 2
    q = default_tasks().task("test", 0)
    edited = q.account.copy()
    edited.tasks[0].priority = 5 - edited.tasks[0].priority
    assert reward(checks(q.account, edited, None, (), q.answer, q.answer), False) == 0.5
    assert reward(checks(q.account, q.account.copy(), None, (), q.answer, q.answer), False) == 1.0


def test_tools_read_and_edit(env):
    env.reset(1, "test")
    projects = env.step(env.call("get_projects"))
    assert projects.valid and "'is_favorite':" in projects.observation
    pid = _ids(projects.observation)[0]
    listed = env.step(env.call("get_tasks", project_id=pid))
    assert "'due_date':" in listed.observation and "'priority':" in listed.observation
    tid = _ids(listed.observation)[0]
    assert "(minute)" in env.step(env.call("get_task_duration", task_id=tid)).observation
    assert "- Place:" in env.step(env.call("get_task_description", task_id=tid)).observation
    step = env.step(env.call("update_task", task_id=tid, due_date="next week"))
    assert step.valid and "YYYY-MM-DD" in step.observation
    step = env.step(env.call("update_task", task_id=tid, due_date="2030-01-02"))
    assert env._account.task(tid).due_date == "2030-01-02"
    assert "does not exist" in env.step(env.call("complete_task", task_id="123")).observation
    step = env.step(env.call("update_project", project_id=pid, is_favorite="True"))
    assert env._account.project(pid).is_favorite
    env.step(env.call("delete_task", task_id=tid))
    assert env._account.task(tid) is None
    assert "does not exist" in env.step(env.call("get_task_duration", task_id=tid)).observation
    assert env.step(env.call("get_user_current_date")).observation == env._account.current_date
    step = env.step(env.call("finish", answer="done"))
    assert step.done and not step.success


@pytest.mark.parametrize(("action", "says"), [
    ("show my tasks", "no tool call"),
    ("add_task with Action Input: {}", 'no tool "add_task"'),
    ('get_tasks with Action Input: {"project_id": "1"', "not valid JSON"),
    ("update_task with Action Input: {\"task_id\": \"1\"}", 'missing argument "due_date"'),
    ('update_project with Action Input: {"project_id": "1", "is_favorite": "yes"}', 'argument "is_favorite"'),
    ('get_tasks with Action Input: {"project_id": 22}', 'argument "project_id"'),
])
def test_bad_calls_are_invalid(env, action, says):
    env.reset(0, "test")
    step = env.step(action)
    assert not step.valid and not step.done and says in step.observation, step.observation


def test_random_policy_does_far_worse(env):
    rng = random.Random(0)
    wins = sum(play_in_process(env, i, "test", lambda e: e.random_action(rng))[1][-1].success for i in range(20))
    assert wins <= 2
    assert len(env.available_actions()) == len(TodoEnv.tools)

