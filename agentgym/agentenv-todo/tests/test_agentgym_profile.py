"""The agentgym profile of todo: AgentGym's 155 questions on its starting account, graded as its server grades.

AgentGym's data (``todo.jsonl``, ``todo_projects.json``) is reference data read from where it lies, never copied
here: ``$AGENTGYM_TOOL_DATA``, else ``../shared/agentgym/upstream-data/tool`` beside the checkout (its item lists,
``AgentItemId``, beside it). Without it these tests skip (the error a server gives without it is the core's test,
tests/core/test_agentgym_toolusage.py).
"""

import random

import httpx
import pytest
from agentenv_todo.agentgym_profile import RULES, AgentGymTodoEnv
from agentenv_todo.env import TodoEnv

from agentenv import profiles, registry
from agentenv.interop import agentgym_items
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.interop.agentgym_toolusage import DATA_VAR, FORMAT_ERROR
from agentenv.interop.agentgym_toolusage import client_reply as call
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, play_in_process, serve_app_in_thread, serve_in_thread

from helpers import AGENTGYM_ITEMS, AGENTGYM_TOOL_DATA

DATA = AGENTGYM_TOOL_DATA
needs_data = pytest.mark.skipif(not (DATA / "todo.jsonl").is_file(),
                                reason=f"AgentGym's tool data (todo.jsonl) absent: set ${DATA_VAR} or add ../shared")
OPTIONS = {"data_dir": str(DATA)}


def agenteval() -> list[int]:
    """AgentEval's 20 todo items (their upstream indices); without the item lists, tasks 0..19."""
    if AGENTGYM_ITEMS is None:
        return list(range(20))
    return list(agentgym_items.load(AGENTGYM_ITEMS, TodoEnv.agentgym.item_prefix).test)


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv(DATA_VAR, str(DATA))
    return AgentGymTodoEnv()


@needs_data
@pytest.mark.parametrize("part", checks_for(AgentGymTodoEnv))
def test_check_environment(part):
    """The SDK's contract; the expert solves AgentEval's 20 items within 15 rounds; a question, completing a task
    and moving a due date are played over HTTP and AgentGym's routes."""
    splits = {"test": agenteval()}
    report = check_environment(AgentGymTodoEnv, options=OPTIONS, checks=(part,), splits=splits, thoughts=True,
                               served=(0, 1, 2))
    for episode in report.episodes:
        assert episode.total == 1.0 and len(episode.results) <= 15


@needs_data
def test_the_option_chooses_the_profile():
    assert profiles.resolve(registry.load("todo"), "agentgym") is AgentGymTodoEnv
    assert profiles.available(TodoEnv) == ["native", "agentgym"]
    with serve_in_thread(TodoEnv, ServerConfig(options={"profile": "agentgym", **OPTIONS})) as url:
        info = httpx.get(url + "/info").json()
    assert (info["profile"], info["splits"], info["max_turns"]) == ("agentgym", {"train": 155, "test": 155}, 15)
    assert [t["name"] for t in info["tools"]][-2:] == ["check_valid_actions", "finish"]


@needs_data
def test_the_expert_solves_every_task_of_the_file(env):
    """All 155 lines of todo.jsonl (questions and operations), each within AgentGym's 15 rounds."""
    for task_id in range(155):
        total, steps = play_in_process(env, task_id, "test", lambda e: e.expert_action())
        assert total == 1.0 and steps[-1].success and len(steps) <= 15, task_id


@needs_data
def test_first_observation_and_the_account(env):
    data = AgentGymTodoEnv.load(DATA)
    assert len(data.tasks) == 155 and len(data.account.projects) == 5 and len(data.account.tasks) == 15
    first, info = env.reset(19, "test")
    goal = data.tasks[19].goal
    assert first == f"{RULES}\nNow new trial starts.\nYou should perform actions to accomplish the goal: {goal}\n" \
                    "Give me one action." and info["agentgym_index"] == 19
    step = env.step(call("get_projects"))
    assert step.observation.startswith("Observation: [{'id': '2300000001', 'order': 1, 'color': 'charcoal', "
                                       "'name': 'Homework and Assignments', 'is_favorite': False}, ")
    assert step.observation.endswith("}]\nGive me one action.") and (step.reward, step.done) == (0.0, False)
    step = env.step(call("get_task_duration", task_id="7000000001"))
    assert step.observation == "Observation: {'id': '7000000001', 'content': 'Solve algebra equations', " \
                               "'duration': '60(minute)'}\nGive me one action."


@needs_data
def test_a_right_answer_of_the_wrong_type_is_wrong(env):
    """Item 19's answer is the number 1: the string "1" is another subgoal (upstream compares with ==)."""
    env.reset(19, "test")
    step = env.step(call("finish", answer="1"))
    assert (step.observation, step.reward, step.done, step.success) == ("Observation: 1\nGive me one action.",
                                                                        0.0, True, False)
    env.reset(19, "test")
    step = env.step(call("finish", answer=1))
    assert (step.reward, step.success, step.info["agentgym_reward"]) == (1.0, True, 1.0)


@needs_data
def test_the_account_must_be_the_ground_truth(env):
    """A right answer after an edit the question did not ask for scores 0; an operation needs its edit."""
    env.reset(19, "test")
    assert "Delete the task successfully." in env.step(call("delete_task", task_id="7000000015")).observation
    assert env.step(call("finish", answer=1)).reward == 0.0
    env.reset(1, "test")  # mark "Read and summarize a history chapter" as completed
    step = env.step(call("finish", answer="done"))
    assert (step.reward, step.done, step.success) == (0.0, True, False)
    env.reset(1, "test")  # deleting it leaves the same active tasks as completing it
    env.step(call("delete_task", task_id="7000000003"))
    assert env.step(call("finish", answer="done")).success


@needs_data
def test_a_subgoal_found_before_finish_counts(env):
    """Item 64's answer is 2015-06-01, the user's date: asking for the date finds the subgoal, the reward AgentGym's
    server sends is then 1 on every step, and a wrong answer at finish still ends with 1 (its best share)."""
    env.reset(64, "test")
    step = env.step(call("get_user_current_date"))
    assert (step.observation, step.reward, step.info["agentgym_reward"]) == (
        "Observation: 2015-06-01\nGive me one action.", 1.0, 1.0)
    step = env.step(call("get_projects"))
    assert (step.reward, step.info["agentgym_reward"]) == (0.0, 1.0)  # the change of a running value
    step = env.step(call("finish", answer="2015-06-02"))
    assert step.done and step.success and step.info["agentgym_reward"] == 1.0


@needs_data
def test_upstreams_parsing_and_errors(env):
    env.reset(5, "test")
    step = env.step("Action: get_projects with Action Input: {}\nThat is my call.")  # not on the last line
    assert (step.observation, step.valid, step.done) == (FORMAT_ERROR, False, False)
    step = env.step('Action: get_tasks with Action Input: {"project_id": true}')  # JSON's true is no Python literal
    assert step.observation == "Observation: ERROR | Exception(Parameters in action input are not valid, please " \
                               "change your action input.)\nGive me one action." and not step.valid
    assert "ERROR | KeyError('project_id')" in env.step("Action: get_tasks with Action Input: {}").observation
    assert "ERROR | Invalid action: add_task." in env.step("Action: add_task with Action Input: {}").observation
    assert env.step("get_tasks with Action Input: {'project_id': 2300000001}").observation.startswith(
        "Observation: [{'id': '7000000001'")  # the parsed call this project's agent loop sends; an int id works
    valid = env.step(call("check_valid_actions")).observation
    assert valid.startswith("Observation: You can use following valid actions: ['get_user_current_date', ")
    # a completed task leaves the listing; completing it again fails, and the failure is a subgoal of its own
    assert "Complete task successfully." in env.step(call("complete_task", task_id="7000000001")).observation
    assert "7000000001" not in env.step(call("get_tasks", project_id="2300000001")).observation
    step = env.step(call("complete_task", task_id="7000000001"))
    assert step.observation == "Observation: Task 7000000001 is not exists.\nGive me one action." and step.valid
    assert env._path[-1]["Subgoal"] == "Calling complete_task with {'task_id': '7000000001'} failed"
    # a list answer is sorted before it is compared
    step = env.step(call("finish", answer=["Solve algebra equations", "Read and summarize a history chapter"]))
    assert step.done and step.info["agentgym_reward"] == 0.0  # the right list, but a task was completed


@needs_data
def test_any_action_that_says_finish_ends_the_episode(env):
    env.reset(5, "test")
    step = env.step(call("get_tasks", project_id="finish"))
    assert (step.observation, step.done, step.reward) == ("Observation: []\nGive me one action.", True, 0.0)


@needs_data
def test_agentgyms_routes_answer_as_its_todo_server():
    with serve_app_in_thread(create_agentgym_app(TodoEnv, ServerConfig(options=OPTIONS))) as url:
        http = httpx.Client(base_url=url, timeout=30)
        handle = http.post("/create", json={"id": 19}).json()
        assert isinstance(handle, int)
        first = http.post("/reset", json={"env_idx": handle, "id": 19}).json()
        assert first.startswith("Now new trial starts.\n") and RULES not in first
        assert http.get("/observation", params={"env_idx": handle}).json() == first
        step = http.post("/step", json={"env_idx": handle, "action": call("finish", answer=1)}).json()
        assert step == {"observation": "Observation: 1\nGive me one action.", "reward": 1.0, "done": True,
                        "info": None}


@needs_data
def test_random_calls_rarely_solve_a_task(env):
    rng = random.Random(0)
    wins = sum(play_in_process(env, t, "test", lambda e: e.random_action(rng))[0] == 1.0 for t in agenteval())
    assert wins <= 2
