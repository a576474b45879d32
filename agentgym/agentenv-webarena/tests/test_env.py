"""The webarena environment on its embedded sites, in a real Chromium: the SDK's contract, the expert and a random
policy, every kind of task graded through the browser, bad input, the sites' per-task state, and the browser's
processes ending with the session."""

import random

import psutil
import pytest
from agentenv_webarena.env import SHOWN, WebArenaEnv
from agentenv_webarena.tasks import embedded_tasks

from agentenv.testing import check_environment, checks_for, in_process

NEEDS_CHROMIUM = True  # (conftest.py skips the module where there is none)

TASKS = embedded_tasks()


def _sample(split: str, per_template: int) -> list[int]:
    """The first ``per_template`` tasks of each template in ``split``."""
    seen: dict[int, int] = {}
    picked = []
    for task in TASKS[split]:
        template = task.config["intent_template_id"]
        if seen.get(template, 0) < per_template:
            seen[template] = seen.get(template, 0) + 1
            picked.append(task.config["task_id"])
    return picked


@pytest.fixture(scope="module")
def env():
    with in_process(WebArenaEnv, settle=0.05) as made:
        yield made


def _play(env, task_id, split="test", policy=None, rng=None):
    env.reset(task_id, split)
    for _ in range(env.max_turns):
        result = env.step(policy(env) if policy else env.expert_action())
        if result.done:
            return result
    raise AssertionError("the episode did not end within max_turns")


@pytest.mark.parametrize("part", checks_for(WebArenaEnv))
def test_check_environment(part):
    """The expert part plays one test task of each template (the whole split is measured by `agentenv play`). With
    element ids counted in tree order a page reads the same in every browser: resets are deterministic, the dataset
    prompt is the reset's observation, and an episode replays through AgentGym's routes in another browser."""
    check_environment(WebArenaEnv, checks=(part,), thoughts=True,
                      splits={"test": _sample("test", 1)}, served=(0,))


def test_task_set_sizes_kinds_and_format():
    assert len(TASKS["test"]) >= 200 and len(TASKS["train"]) >= 1000
    assert not {t.config["intent"] for t in TASKS["test"]} & {t.config["intent"] for t in TASKS["train"]}
    kinds = {k for t in TASKS["test"] for k in t.config["eval"]["eval_types"]}
    assert kinds == {"string_match", "url_match", "program_html"}
    for tasks in TASKS.values():
        for i, task in enumerate(tasks):
            config = task.config
            assert config["task_id"] == i and config["start_url"] in ("__SHOPPING__", "__REDDIT__")
            assert set(config) >= {"sites", "intent_template", "instantiation_dict", "intent", "eval",
                                   "require_login", "storage_state", "geolocation", "require_reset"}
            assert task.plan and task.plan[-1][0] == "stop"


def test_expert_solves_every_template_of_the_train_split(env):
    """A task of each of the 18 templates."""
    failed = []
    for task_id in _sample("train", 1):
        result = _play(env, task_id, "train")
        if not (result.success and result.reward == 1.0):
            failed.append((task_id, TASKS["train"][task_id].config["intent"], result.observation))
    assert not failed, failed


def test_wrong_answers_and_unfinished_forms_score_zero(env):
    answer_task = next(t.config["task_id"] for t in TASKS["test"] if t.config["intent_template_id"] == 1)
    env.reset(answer_task, "test")
    result = env.step("In summary, the next action I will perform is ```stop [$0.01]```")
    assert result.done and result.reward == 0.0 and not result.success
    form_task = next(t.config["task_id"] for t in TASKS["test"] if t.config["intent_template_id"] == 8)
    env.reset(form_task, "test")
    result = env.step("```stop []```")  # nothing added to the cart
    assert result.done and result.reward == 0.0 and result.info["evaluators"] == {"program_html": 0.0}


def test_each_task_starts_on_fresh_sites(env):
    """A comment posted in one task is gone in the next reset of the same task: each reset gets its own state."""
    task_id = next(t.config["task_id"] for t in TASKS["test"] if t.config["intent_template_id"] == 16)
    assert _play(env, task_id).success
    env.reset(task_id, "test")
    assert env.step("```stop []```").reward == 0.0  # the comment is not there any more


def test_malformed_actions_are_invalid_and_three_in_a_row_end_the_task(env):
    obs, _ = env.reset(0, "test")
    assert obs.startswith("OBSERVATION:\n") and "\nOBJECTIVE: " in obs and obs.endswith("PREVIOUS ACTION: None")
    first = env.step("I am not sure what to do")
    assert not first.valid and not first.done and "no action was read" in first.observation
    assert not env.step("```click 12```").done  # WebArena's grammar: click [12]
    last = env.step("```jump [3]```")
    assert last.done and not last.valid and last.reward == 0.0 and "3 replies in a row" in last.info["ended"]


def test_same_action_three_times_ends_the_task(env):
    env.reset(0, "test")
    for _ in range(2):
        assert not env.step("```scroll [down]```").done
    assert "3 times" in env.step("```scroll [down]```").info["ended"]


def test_prompt_shows_stable_addresses_and_goto_maps_them_back(env):
    task_id = next(t.config["task_id"] for t in TASKS["test"] if t.config["intent_template_id"] == 14)
    obs, _ = env.reset(task_id, "test")
    assert "127.0.0.1" not in obs and f"URL: {SHOWN['reddit']}/" in obs
    forum = TASKS["test"][task_id].config["instantiation_dict"]["forum"]
    result = env.step(f"```goto [{SHOWN['reddit']}/f/{forum}]```")
    assert f"URL: {SHOWN['reddit']}/f/{forum}" in result.observation
    assert env.step("```stop []```").success


def test_random_policy_is_far_below_the_expert(env):
    rng = random.Random(0)
    tasks = _sample("test", 1)[::2]  # 9 templates (the whole split is measured by `agentenv play`: 0 of 252)
    wins = sum(_play(env, t, policy=lambda e: e.random_action(rng)).success for t in tasks)
    assert wins <= 2, wins


def test_screenshots_are_saved_per_turn(tmp_path):
    with in_process(WebArenaEnv, settle=0.05, screenshots=str(tmp_path)) as env:
        result = _play(env, 0)
        assert result.done
        shots = sorted((tmp_path / "test-0").glob("*.png"))
        assert len(shots) == len(env._actions) + 1 and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots)


def test_browser_processes_end_with_the_session():
    with in_process(WebArenaEnv, settle=0.05) as env:
        env.reset(0, "test")
        held = env._browser.pids()
        assert held and all(psutil.pid_exists(p) for p in held)
        assert len(env.shared.sites.instances) == 1
    assert len(env.shared.sites.instances) == 0
    _, alive = psutil.wait_procs([psutil.Process(p) for p in held if psutil.pid_exists(p)], timeout=10)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
