"""The agentgym action set (``--option action_set=agentgym``): AgentGym's high-level BabyAI actions
and observations on top of the same minigrid levels."""

from __future__ import annotations

import json
import random

import pytest
from minigrid.core.world_object import Ball, Door, Key, Wall
from minigrid.envs.babyai.core.verifier import GoToInstr, ObjDesc

from agentenv.client import EnvClient
from agentenv.server import ServerConfig, parse_options
from agentenv.testing import check_environment, play_in_process, serve_in_thread
from agentenv_babyai import highlevel
from agentenv_babyai.env import ACTION_HELP, BabyAIEnv, BabyAIOptions

AGENTGYM = {"action_set": "agentgym"}


def agentgym_env() -> BabyAIEnv:
    env = BabyAIEnv()
    env.options = BabyAIOptions(action_set="agentgym")  # what the runtime sets before the first reset
    return env


def listed(obs: str) -> list[str]:
    """The actions of an observation's last line, ``Available actions: [...]``."""
    last = obs.rsplit("\n", 1)[-1]
    assert last.startswith("Available actions: ")
    return json.loads(last[len("Available actions: "):])


def staged(agent=(1, 3), direction=0, furnish=lambda grid: None) -> BabyAIEnv:
    """A GoToObj room (interior 1..6 x 1..6) emptied and furnished by hand; the mission names an
    object that is nowhere, so no action ends the episode by accident."""
    env = agentgym_env()
    env.reset(2, "test")
    level = env._level
    for x in range(1, 7):
        for y in range(1, 7):
            level.grid.set(x, y, None)
    level.agent_pos, level.agent_dir, level.carrying = agent, direction, None
    furnish(level.grid)
    level.instrs = GoToInstr(ObjDesc("ball", "green"))
    level.instrs.reset_verifier(level)
    level.max_steps = 1000
    env._look()
    return env


def snapshot(env: BabyAIEnv) -> tuple:
    level = env._level
    return (tuple(level.agent_pos), level.agent_dir, level.step_count, level.carrying,
            level.grid.encode().tobytes(), env.available_actions())


def balls_and_key(grid) -> None:
    grid.set(4, 3, Ball("red"))  # 3 ahead
    grid.set(2, 5, Ball("red"))  # 1 ahead, 2 to the right (as near, less far ahead: number 2)
    grid.set(3, 1, Key("grey"))  # 2 ahead, 2 to the left


def dividing_wall(grid) -> None:
    """A wall at x = 4 with a closed blue door at (4, 3) and a locked yellow door at (4, 5)."""
    for y in range(1, 7):
        grid.set(4, y, Wall())
    grid.set(4, 3, Door("blue"))
    grid.set(4, 5, Door("yellow", is_locked=True))


# -- the option --------------------------------------------------------------------------------------
def test_option_is_served_in_info_and_bad_values_are_rejected():
    assert BabyAIEnv.Options is BabyAIOptions and BabyAIOptions().action_set == "primitive"
    assert parse_options(BabyAIEnv, {"action_set": "agentgym"}).action_set == "agentgym"
    for bad in ({"action_set": "high"}, {"actions": "agentgym"}):
        with pytest.raises(ValueError, match="bad option for babyai"):
            parse_options(BabyAIEnv, bad)
    with serve_in_thread(BabyAIEnv, ServerConfig(options=AGENTGYM)) as url, EnvClient(url) as client:
        assert client.info()["options"] == {**AGENTGYM, "progress_reward": 0.0}
    with serve_in_thread(BabyAIEnv) as url, EnvClient(url) as client:
        assert client.info()["options"] == {"action_set": "primitive", "progress_reward": 0.0}


def test_default_mode_is_unchanged():
    plain, explicit = BabyAIEnv(), BabyAIEnv()
    explicit.options = BabyAIOptions()
    for tid in (0, 5, 8):
        obs, info = plain.reset(tid, "test")
        assert explicit.reset(tid, "test") == (obs, info)
        assert ACTION_HELP in obs and "Available actions" not in obs and "action_set" not in info
        assert plain.available_actions()[-1] == "check available actions" and "pickup" not in " ".join(
            plain.available_actions())
        assert plain.step("go to red ball 1").valid is False  # a high-level action means nothing here


# -- observations ------------------------------------------------------------------------------------
def test_observations_list_the_available_actions():
    env = agentgym_env()
    rng = random.Random(3)
    for tid in range(9):
        obs, info = env.reset(tid, "test")
        assert obs.startswith(f"Your goal: {info['mission']}\n") and info["action_set"] == "agentgym"
        assert ACTION_HELP not in obs
        assert listed(obs) == env.available_actions() and env.available_actions()[:2] == ["turn left", "turn right"]
        assert env.available_actions()[-1] == "check available actions"
        for _ in range(3):
            r = env.step(env.random_action(rng))
            if r.done:
                assert env.available_actions() == [] and "Available actions" not in r.observation
                break
            assert listed(r.observation) == env.available_actions() and env.observation() == r.observation


def test_description_follows_agentgym_format_and_numbering():
    env = staged(furnish=balls_and_key)
    assert env._table.description == (
        "In front of you in this room, you can see several objects: "
        "There is a red ball 1 right in front of you 3 steps away.  "
        "There is a red ball 2 1 steps in front of you and 2 steps to your right.  "
        "There is a grey key 1 2 steps in front of you and 2 steps to your left.  "
        "The room has walls around you. You are facing a wall 6 steps away. You are not carrying anything.")
    assert env.available_actions() == [
        "turn left", "turn right", "move forward", "pickup red ball 1", "pickup red ball 2", "pickup grey key 1",
        "go to red ball 1", "go to red ball 2", "go to grey key 1", "check available actions"]


# -- each kind of action -----------------------------------------------------------------------------
def test_lenient_spellings_map_to_the_listed_actions():
    env = staged(agent=(3, 3), furnish=balls_and_key)
    table = env._table
    for written, meant in [("Go to the red ball.", "go to red ball 1"), ("pick up red ball 1", "pickup red ball 1"),
                           ("PICKUP", "pickup red ball 1"), ("check valid actions", highlevel.CHECK),
                           ("go to red ball 2", "go to red ball 2"), ("Turn Left", "turn left")]:
        assert highlevel.normalize(written, table) == meant


def test_go_to_faces_the_object_by_a_shortest_route():
    env = staged(furnish=balls_and_key)
    level = env._level
    r = env.step("go to red ball 1")
    assert r.valid and not r.done and r.reward == 0 and r.info["primitive_steps"] == 2
    assert tuple(level.agent_pos) == (3, 3) and level.agent_dir == 0 and level.grid.get(4, 3).type == "ball"
    assert "There is a red ball 1 right in front of you 1 steps away." in r.observation
    assert level.step_count == 2 and r.info["steps"] == 2


def test_pickup_walks_there_and_takes_the_object():
    env = staged(furnish=balls_and_key)
    level = env._level
    ball = level.grid.get(2, 5)
    # forward to (2, 3), turn right (south), forward to (2, 4), facing the ball: pick it up
    assert env._table.plans["pickup red ball 2"] == [highlevel.FORWARD, highlevel.RIGHT, highlevel.FORWARD,
                                                     highlevel.PICKUP]
    r = env.step("Pick up the red ball 2.")  # AgentGym writes "pickup"; "pick up", case and articles are fine
    assert r.valid and level.carrying is ball and level.step_count == 4 and r.info["primitive_steps"] == 4
    assert level.grid.get(2, 5) is None and "You are carrying a red ball." in r.observation
    assert not [a for a in env.available_actions() if a.startswith("pickup")]  # hands are full
    assert "drop" in env.available_actions()
    r = env.step("drop")
    assert r.valid and level.carrying is None and level.grid.get(2, 5) is ball and level.step_count == 5


def test_toggle_and_go_through_opens_the_door_and_passes():
    env = staged(agent=(2, 3), furnish=dividing_wall)
    level = env._level
    assert "go through blue closed door 1" not in env.available_actions()
    bad = env.step("go through blue closed door 1")
    assert not bad.valid and "not open" in bad.observation and level.step_count == 0
    r = env.step("toggle and go through blue closed door 1")
    assert r.valid and r.info["primitive_steps"] == 4  # forward, toggle, into the doorway, out the other side
    assert level.grid.get(4, 3).is_open and tuple(level.agent_pos) == (5, 3) and level.agent_dir == 0
    env.step("turn left")
    env.step("turn left")
    r = env.step("go through blue open door 1")
    assert r.valid and tuple(level.agent_pos) == (3, 3) and r.info["primitive_steps"] == 2


def test_toggle_acts_on_the_door_in_front_and_locked_doors_need_their_key():
    env = staged(agent=(3, 3), furnish=dividing_wall)
    level = env._level
    assert "toggle" in env.available_actions()
    assert env.step("toggle").valid and level.grid.get(4, 3).is_open and level.step_count == 1

    env = staged(agent=(2, 5), furnish=dividing_wall)
    level = env._level
    before = snapshot(env)
    r = env.step("toggle and go through yellow locked door 1")
    assert not r.valid and "locked" in r.observation and snapshot(env) == before
    level.carrying = Key("yellow")
    env._look()
    r = env.step("toggle and go through yellow locked door 1")
    assert r.valid and level.grid.get(4, 5).is_open and tuple(level.agent_pos) == (5, 5)


def test_unreachable_objects_are_not_offered():
    def cornered(grid):
        grid.set(6, 1, Key("grey"))
        grid.set(5, 1, Wall())
        grid.set(6, 2, Wall())

    env = staged(furnish=cornered)
    assert "There is a grey key 1" in env._table.description
    assert "go to grey key 1" not in env.available_actions() and "pickup grey key 1" not in env.available_actions()
    before = snapshot(env)
    r = env.step("go to grey key 1")
    assert not r.valid and "no path" in r.observation and snapshot(env) == before


def test_invalid_actions_are_flagged_and_change_nothing():
    env = staged(agent=(3, 3), direction=0, furnish=balls_and_key)  # red ball 1 right in front
    before = snapshot(env)
    for bad in ("fly away", "", None, "go to purple ball 1", "pickup red ball 9", "move forward", "drop",
                "toggle", "x" * 5000, "go through red ball 1"):
        r = env.step(bad)
        assert not r.valid and not r.done and r.reward == 0 and r.info["primitive_steps"] == 0
        assert r.observation.rsplit("\n", 1)[-1] == "Available actions: " + json.dumps(before[-1])
        assert snapshot(env) == before
    assert env.step("fly away").observation.startswith(highlevel.NOT_RECOGNIZED)
    assert env.step("move forward").observation.startswith("You cannot move forward: a red ball is in the way.")
    r = env.step("check available actions")
    assert r.valid and snapshot(env) == before and "pickup red ball 1, pickup grey key 1" in r.observation


# -- reward, expert, random --------------------------------------------------------------------------
def test_reward_counts_the_primitive_steps_taken():
    env = agentgym_env()
    for tid in range(9):
        total, results = play_in_process(env, tid, "test", lambda e: e.expert_action())
        level = env._level
        assert results[-1].success and all(r.valid for r in results)
        assert level.step_count == sum(r.info["primitive_steps"] for r in results) > len(results) - 1
        assert total == pytest.approx(1 - 0.9 * level.step_count / level.max_steps)


def test_expert_solves_test_tasks_through_a_real_server():
    """With the agentgym action set, every fourth test task: the expert solves it in process and over HTTP,
    each step valid, the server's episode the same as the one in process; the first observation lists the
    available actions."""
    tasks = range(0, 90, 4)
    report = check_environment(BabyAIEnv, options=AGENTGYM, checks=("expert", "http"), splits={"test": tasks},
                               served=tuple(tasks))
    assert [e.task_id for e in report.episodes if e.success] == list(tasks)
    env = agentgym_env()
    for tid in tasks:
        obs, _ = env.reset(tid, "test")
        assert listed(obs) == env.available_actions()


def test_expert_recovers_after_random_high_level_actions():
    env, rng = agentgym_env(), random.Random(2)

    def sometimes_random(e: BabyAIEnv) -> str:
        if e._level.step_count < 12 and rng.random() < 0.5:  # no toggles or drops: they cannot spoil a task
            return rng.choice([a for a in e.available_actions() if a.startswith(("turn", "move", "go to"))])
        return e.expert_action()

    wins = [play_in_process(env, tid, "test", sometimes_random)[1][-1].success for tid in range(1, 90, 3)]
    assert sum(wins) / len(wins) >= 0.9


def test_random_policy_picks_listed_actions_and_is_worse_than_the_expert():
    env, rng = agentgym_env(), random.Random(0)
    wins = []
    for tid in range(0, 90, 2):
        env.reset(tid, "test")
        for _ in range(BabyAIEnv.max_turns):
            action = env.random_action(rng)
            assert action in env.available_actions() and action != highlevel.CHECK
            r = env.step(action)
            if r.done:
                break
        wins.append(r.success)
    assert 0.3 <= sum(wins) / len(wins) <= 0.95
