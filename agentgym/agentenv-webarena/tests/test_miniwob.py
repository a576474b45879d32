"""MiniWoB++'s pages as the second task set (task_set=miniwob), through the same observation and actions."""

import random
import re

import pytest
from agentenv_webarena import miniwob
from agentenv_webarena.env import WebArenaEnv, WebArenaOptions
from agentenv_webarena.expert import role_and_name

from agentenv.testing import in_process

NEEDS_CHROMIUM = True  # (conftest.py skips the module where there is none)


@pytest.fixture(scope="module")
def env():
    with in_process(WebArenaEnv, task_set="miniwob", settle=0.05) as made:
        yield made


def task(env, page, seed_index=0):
    ids = [t.config["task_id"] for t in env.shared.tasks["test"] if t.config["intent_template"] == page]
    return ids[seed_index]


def button(env, name):
    return next(i for i, n in env._obs.nodes.items() if role_and_name(n.text) == ("button", name))


def test_every_page_is_a_task_with_seeds_per_split(env):
    assert WebArenaEnv.task_counts(env.shared) == {"train": 130 * 10, "test": 130 * 2}
    config = env.shared.tasks["test"][0].config
    assert config["start_url"].startswith("__MINIWOB__/miniwob/") and config["eval"]["eval_types"] == ["miniwob"]


def test_the_page_states_the_objective_and_a_seed_draws_the_same_problem(env):
    first, info = env.reset(task(env, "click-button"), "test")
    assert re.fullmatch(r'Click on the ".*" button\.', info["intent"]) and f"OBJECTIVE: {info['intent']}" in first
    assert "URL: http://miniwob.webarena.local/miniwob/click-button.html" in first
    assert env.reset(task(env, "click-button"), "test")[0] == first
    assert env.reset(task(env, "click-button", 1), "test")[0] != first  # the other seed


def test_the_pages_reward_ends_the_episode(env):
    _, info = env.reset(task(env, "click-button"), "test")
    wanted = re.search(r'"(.*)"', info["intent"]).group(1)
    result = env.step(f"```click [{button(env, wanted)}]```")
    assert result.done and result.success and result.reward == 1.0 and result.info["evaluators"] == {"miniwob": 1.0}
    env.reset(task(env, "click-button"), "test")
    other = next(n for i, n in env._obs.nodes.items()
                 if (rn := role_and_name(n.text)) and rn[0] == "button" and rn[1] != wanted)
    result = env.step(f"```click [{other.text.split(']')[0][1:]}]```")
    assert result.done and not result.success and result.reward == 0.0 and result.score == -1.0


def test_stop_before_the_page_ends_scores_nothing_and_random_rarely_wins(env):
    env.reset(task(env, "enter-text"), "test")
    assert env.step("```stop []```").reward == 0.0
    rng, wins = random.Random(0), 0
    for t in range(0, 260, 26):  # 10 pages (the whole split, measured by `agentenv play`: 11 of 260)
        env.reset(t, "test")
        for _ in range(env.max_turns):
            result = env.step(env.random_action(rng))
            if result.done:
                break
        wins += result.success
    assert wins <= 3


def test_without_the_package_one_clear_error(monkeypatch):
    monkeypatch.setattr(miniwob, "PACKAGE", "no-such-miniwob")
    with pytest.raises(miniwob.MiniWobMissing, match="pip install --no-deps miniwob"):
        WebArenaEnv.load_shared(WebArenaOptions(task_set="miniwob"))
