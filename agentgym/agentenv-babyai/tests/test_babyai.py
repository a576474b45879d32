"""Tests of the babyai environment: the SDK's contract (check_environment: the expert on every test task, the
protocol and AgentGym's routes over HTTP), tasks, rendering, actions, reward, policies."""

from __future__ import annotations

import random

import numpy as np
import pytest
from minigrid.core.world_object import Ball, Box, Door, Key, Wall
from minigrid.envs.babyai.core.verifier import GoToInstr, ObjDesc

from agentenv.testing import check_environment, checks_for, play_in_process
from agentenv_babyai import levels, render
from agentenv_babyai.env import BabyAIEnv, BabyAIOptions


def play(env: BabyAIEnv, task_id: int, split: str, choose, max_turns: int = BabyAIEnv.max_turns):
    """One episode under the runtime's rules; return (reward sum, success)."""
    total, results = play_in_process(env, task_id, split, choose, max_turns)
    return total, bool(results[-1].success)


@pytest.mark.parametrize("part", checks_for(BabyAIEnv))
def test_check_environment(part):
    """The contract; the expert solves every test task with minigrid's reward, 1 - 0.9 * steps / max_steps (at
    least the success threshold); tasks 0 and 89 are played over HTTP, and AgentGym's routes (which serve the
    agentgym profile) on that profile's tasks 0 and 89."""
    report = check_environment(BabyAIEnv, checks=(part,), served=(0, 89))
    for episode in report.episodes:
        last = episode.results[-1]
        assert 0.0 < episode.total <= 1.0 and episode.total >= BabyAIEnv.success_threshold, episode.task_id
        assert episode.total == pytest.approx(1 - 0.9 * last.info["steps"] / last.info["max_steps"]), episode.task_id


def test_splits_are_deterministic_balanced_and_disjoint():
    assert BabyAIEnv.num_tasks("test") == 90
    assert BabyAIEnv.num_tasks("train") >= 1000
    test = [levels.task("test", i) for i in range(90)]
    train = [levels.task("train", i) for i in range(BabyAIEnv.num_tasks("train"))]
    assert test == [levels.task("test", i) for i in range(90)]
    counts = {}
    for spec, _ in test:
        counts[spec.name] = counts.get(spec.name, 0) + 1
    assert len(counts) == len(levels.LEVELS) >= 6 and set(counts.values()) == {90 // len(levels.LEVELS)}
    pairs = lambda tasks: {(spec.name, seed) for spec, seed in tasks}  # noqa: E731
    assert len(pairs(test)) == 90 and len(pairs(train)) == len(train)
    assert not pairs(test) & pairs(train)

    a, b = BabyAIEnv(), BabyAIEnv()
    for tid in (0, 13, 89):
        assert a.reset(tid, "test") == b.reset(tid, "test", seed=123)  # same task, same start; seed ignored
    assert a.reset(3, "train")[0] != a.reset(3, "test")[0]


def test_first_observation_has_mission_action_help_and_view():
    env = BabyAIEnv()
    obs, info = env.reset(0, "test")
    assert obs.startswith(f"Your goal: {info['mission']}\n")
    assert info["mission"] == "go to the red ball" and info["level"] == "GoToRedBallGrey"
    for action in ("turn left", "turn right", "move forward", "pick up", "drop", "toggle"):
        assert f'"{action}"' in obs
    assert "You are facing " in obs and "In front of you: " in obs
    assert env.observation() == obs


@pytest.mark.parametrize("spec", levels.LEVELS, ids=lambda s: s.name)
def test_levels_play_exactly_like_minigrid(spec):
    """Our level subclass (no image obs, quiet, fast tracking) builds and plays like minigrid's class."""
    ours = levels.make_level(spec)
    rng = random.Random(spec.name)
    for seed in (0, 7, levels.TEST_SEED_OFFSET + 3):
        ours.reset(seed=seed + 1)  # reused object: the previous episode must not leak
        ours.reset(seed=seed)
        ref = spec.cls(**spec.kwargs)
        ref.reset(seed=seed)
        assert ours.mission == ref.mission and ours.max_steps == ref.max_steps
        assert np.array_equal(ours.grid.encode(), ref.grid.encode())
        for _ in range(120):
            a = rng.choice([0, 1, 2, 2, 3, 4, 5])
            got, want = ours.step(a)[1:4], ref.step(a)[1:4]
            assert got == want
            assert tuple(ours.agent_pos) == tuple(ref.agent_pos) and ours.agent_dir == ref.agent_dir
            if want[1] or want[2]:
                break


def test_view_matches_minigrid_visibility():
    viewer, rng, checked = render.Viewer(), random.Random(0), 0
    for spec in levels.LEVELS:
        level = levels.make_level(spec)
        for seed in range(4):
            level.reset(seed=seed)
            for _ in range(30):
                grid, vis = level.gen_obs_grid()
                cells, rows = viewer.view(level)
                for j in range(7):
                    for i in range(7):
                        k = j * 7 + i
                        assert render.visible(rows, k) == bool(vis[i, j])
                        if vis[i, j] and k != render.AGENT_IDX:
                            want, got = grid.get(i, j), cells[k]
                            assert (want is None) == (got is None)
                            if want is not None:
                                assert (want.type, want.color) == (got.type, got.color)
                                checked += 1
                if any(level.step(rng.choice([0, 1, 2, 2, 2, 5]))[2:4]):
                    break
    assert checked > 1000


def _staged_room() -> BabyAIEnv:
    """A GoToObj room emptied and furnished by hand: agent at (3, 5) facing north."""
    env = BabyAIEnv()
    env.reset(2, "test")
    level = env._level
    for x in range(1, 7):
        for y in range(1, 7):
            level.grid.set(x, y, None)
    level.agent_pos, level.agent_dir, level.carrying = (3, 5), 3, None
    level.grid.set(2, 3, Ball("red"))  # 2 ahead, 1 to the left
    level.grid.set(3, 4, Key("grey"))  # directly in front
    level.grid.set(3, 0, Door("blue"))  # 5 ahead, in the outer wall
    level.grid.set(5, 5, Wall())  # 2 to the right ...
    level.grid.set(6, 5, Box("purple"))  # ... hiding this box, 3 to the right
    level.instrs = GoToInstr(ObjDesc("ball", "green"))  # no such ball: the episode cannot end by accident
    level.instrs.reset_verifier(level)
    level.max_steps = 1000
    return env


def test_rendering_of_a_constructed_scene():
    env = _staged_room()
    text = render.describe(env._level, env._viewer)
    assert "You are facing north. You are not carrying anything." in text
    assert "- a red ball 2 steps ahead and 1 step to the left" in text
    assert "- a grey key 1 step ahead" in text
    assert "- a closed blue door 5 steps ahead" in text
    assert "purple box" not in text  # occluded by the wall
    assert "In front of you: a grey key." in text
    assert "Nearest walls: 3 steps to the left, 2 steps to the right." in text
    # nearer objects are listed first
    assert text.index("grey key") < text.index("red ball") < text.index("blue door")

    assert env.available_actions() == ["turn left", "turn right", "pick up", "check available actions"]
    r = env.step("pick up the red ball")  # not what is in front: refused, nothing happens
    assert not r.valid and env._level.step_count == 0 and env._level.carrying is None
    r = env.step("Pick up the grey key.")
    assert r.valid and not r.done and r.reward == 0
    assert r.observation.startswith("You picked up the grey key.")
    assert "You are carrying a grey key." in r.observation and "In front of you: empty floor." in r.observation
    assert "drop" in env.available_actions() and "move forward" in env.available_actions()
    r = env.step("turn left")
    assert "You are facing west." in r.observation
    assert "- a red ball 1 step ahead and 2 steps to the right" in r.observation


def test_feedback_when_an_action_has_no_effect():
    env = _staged_room()
    assert env.step("move forward").observation.startswith("You cannot move forward: a grey key is in the way.")
    assert env.step("drop").observation.startswith("You are not carrying anything to drop.")
    assert env._level.step_count == 2  # they were real (wasted) minigrid steps
    env._level.grid.set(3, 4, Door("yellow", is_locked=True))
    r = env.step("toggle")
    assert r.observation.startswith("The yellow door is locked; you need to carry the yellow key")


def test_invalid_actions_are_flagged_and_change_nothing():
    env = BabyAIEnv()
    env.reset(5, "test")
    level = env._level
    before = (tuple(level.agent_pos), level.agent_dir, level.step_count)
    for bad in ("fly away", "", "pick up the unicorn", "x" * 5000, None, "toggle the", "turn around"):
        r = env.step(bad)
        assert not r.valid and not r.done and r.reward == 0 and not r.success
        assert "Invalid action" in r.observation or "not in front of you" in r.observation
    assert (tuple(level.agent_pos), level.agent_dir, level.step_count) == before
    r = env.step("check available actions")
    assert r.valid and not r.done and "Available actions: turn left, turn right" in r.observation
    assert level.step_count == before[2]
    r = env.step("  Turn Right. ")
    assert r.valid and level.agent_dir == (before[1] + 1) % 4 and level.step_count == 1


def test_level_step_limit_ends_the_episode():
    env = BabyAIEnv()
    _, info = env.reset(6, "test")  # PickupLoc: "drop" with empty hands can never succeed
    assert info["level"] == "PickupLoc"
    results = [env.step("drop") for _ in range(info["max_steps"])]
    assert [r.done for r in results] == [False] * (info["max_steps"] - 1) + [True]
    assert results[-1].info.get("truncated") and not results[-1].success and results[-1].reward == 0
    after = env.step("turn left")
    assert after.done and not after.valid


def test_random_policy_is_clearly_worse():
    env, rng = BabyAIEnv(), random.Random(0)
    successes = []
    for tid in range(BabyAIEnv.num_tasks("test")):
        total, success = play(env, tid, "test", lambda e: e.random_action(rng))
        assert 0.0 <= total <= 1.0
        successes.append(success)
    assert sum(successes) / len(successes) <= 0.5


def test_expert_recovers_when_the_agent_deviates():
    """The expert is asked only now and then, after actions it did not suggest."""
    env, rng = BabyAIEnv(), random.Random(1)

    def sometimes_random(e: BabyAIEnv) -> str:
        # random moves that cannot destroy the target (toggling a box removes it)
        if e._level.step_count < 12 and rng.random() < 0.5:
            return rng.choice(["turn left", "turn right", "move forward"])
        return e.expert_action()

    wins = [play(env, tid, "test", sometimes_random)[1] for tid in range(0, 90, 2)]
    assert sum(wins) / len(wins) >= 0.9


def test_sessions_are_independent():
    a, b = BabyAIEnv(), BabyAIEnv()
    a.reset(0, "test")
    obs_b, _ = b.reset(0, "test")
    for _ in range(5):
        a.step(a.expert_action())
    assert b.observation() == obs_b and b._level.step_count == 0 and a._level is not b._level


@pytest.mark.parametrize("action_set", ["primitive", "agentgym"])
def test_progress_reward_telescopes_to_the_bots_plan_and_keeps_success_and_score(action_set):
    """The progress_reward option pays c per step taken off the bot's plan and -c per step added; any completed
    episode's shaping sums to c times the bot's plan at the start, however it wandered; success and score are
    minigrid's as without the option; an action that reaches no minigrid step pays nothing."""
    c = 0.1
    plain, shaped = BabyAIEnv(), BabyAIEnv()
    plain.options = BabyAIOptions(action_set=action_set)
    shaped.options = BabyAIOptions(action_set=action_set, progress_reward=c)
    rng = random.Random(2)
    signs, wins = set(), 0
    for tid in range(0, 90, 9):
        plain.reset(tid, "test")
        shaped.reset(tid, "test")
        start_plan = shaped._expert.steps_to_finish(shaped._level, shaped._history)
        assert start_plan is not None and start_plan > 0
        rewards = []
        for turn in range(BabyAIEnv.max_turns):
            wander = turn < 6 and rng.random() < 0.5
            if action_set == "primitive":
                action = rng.choice(["turn left", "turn right", "move forward"]) if wander else shaped.expert_action()
            else:
                action = shaped.random_action(rng) if wander and "toggle" not in str(shaped.expert_action()) \
                    else shaped.expert_action()
            a, b = plain.step(action), shaped.step(action)
            assert (a.success, a.score, a.done, a.observation) == (b.success, b.score, b.done, b.observation)
            shaping = b.reward - a.reward
            assert shaping == pytest.approx(c * round(shaping / c))  # whole steps of the plan
            signs.add((shaping > 0) - (shaping < 0))
            rewards.append(shaping)
            if b.done:
                break
        if b.success:
            wins += 1
            assert sum(rewards) == pytest.approx(c * start_plan), tid
    assert wins >= 8 and {1, -1} <= signs  # wandering costs, the expert's steps pay
    shaped.reset(5, "test")
    for bad in ("fly away", "check available actions"):
        assert shaped.step(bad).reward == 0.0
    with pytest.raises(ValueError):
        BabyAIOptions(progress_reward=-0.1)
