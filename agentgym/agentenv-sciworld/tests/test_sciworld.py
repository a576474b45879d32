"""Tests of the sciworld environment on the real simulator: the SDK's contract (check_environment), tasks,
reward, actions, policies, and the life of the simulator JVMs (closed, expired, crashed sessions and a killed
server leave none behind).

JVM starts take seconds, so one in-process environment and one server are shared by the tests
(module-scoped fixtures); the expert is checked on a sample of quick test tasks (the whole split is
measured in the README).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from typing import ClassVar

import psutil
import pytest

from agentenv.client import EnvClient
from agentenv.errors import StepTimeout
from agentenv.launcher import ServerProcess
from agentenv.testing import check_environment, checks_for, play_in_process, serve_in_thread
from agentenv_sciworld import expert, reward, tasks
from agentenv_sciworld.env import SIMPLIFICATIONS, SciWorldEnv, SciWorldOptions

#: quick test tasks (gold path generation well under a second): find-living-thing, power-component,
#: chemistry-mix, identify-life-stages-2
EXPERT_SAMPLE = (11, 7, 17, 24)


@pytest.fixture(scope="module")
def env():
    e = SciWorldEnv()
    yield e
    e.close()


@pytest.fixture(scope="module")
def server():
    with ServerProcess("sciworld") as s:
        yield s


def java_children(pid: int) -> list[psutil.Process]:
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [p for p in kids if _alive(p) and p.name() == "java"]


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pids: list[int], timeout: float = 15.0) -> list[int]:
    """The pids still running after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    left = list(pids)
    while left and time.monotonic() < deadline:
        left = [p for p in left if psutil.pid_exists(p) and _alive(psutil.Process(p))]
        time.sleep(0.1)
    return left


def same_world(observation: str) -> list[str]:
    """What two observations of one state share: their lines, in any order (the simulator lists same-named
    objects in an order of its own)."""
    return sorted(observation.splitlines())


# -- the SDK's contract ---------------------------------------------------------------------------------

@pytest.mark.parametrize("part", checks_for(SciWorldEnv))
def test_check_environment(part):
    """The contract, each simulator a JVM of its own; the expert solves the quick sample of test tasks with a
    return of 1, a thought at every turn; the first of them is played over HTTP and through AgentGym's routes
    (create, reset by data_idx, step by id, the 0-100 "score" as its reward; the description comes apart
    from the look, as upstream)."""
    report = check_environment(SciWorldEnv, checks=(part,), thoughts=True, splits={"test": EXPERT_SAMPLE},
                               served=EXPERT_SAMPLE[:1], observation_key=same_world)
    assert all(episode.total == pytest.approx(1.0) for episode in report.episodes)


# -- without a JVM ---------------------------------------------------------------------------------

def test_declarations():
    assert SciWorldEnv.success_threshold == 1.0 and SciWorldEnv.max_sessions and SciWorldEnv.step_timeout


def test_splits_are_deterministic_spread_and_from_the_simulators_sets():
    table = tasks.default_table()
    assert table.counts() == {"train": 3592, "test": 200}
    assert SciWorldEnv.num_tasks("test") == 200 and SciWorldEnv.task_counts() == table.counts()
    again = tasks.TaskTable(tasks.task_types())
    assert again.splits == table.splits
    types = {t.name: t for t in table.types}
    assert len(types) == 30
    test, train = table.splits["test"], table.splits["train"]
    assert all(t.variation in types[t.name].test for t in test)
    assert all(t.variation in types[t.name].train for t in train)
    assert len(set(test)) == 200 and len(set(train)) == len(train)
    per_type = {name: sum(t.name == name for t in test) for name in types}
    assert set(per_type.values()) <= {4, 5, 6, 7} and per_type["identify-life-stages-2"] == 4  # it has 4 only
    assert {t.name for t in test[:30]} == set(types)  # types interleave: any prefix is spread
    assert test[0] == tasks.Task("1-1", "boil", 21)
    with pytest.raises(IndexError):
        table.task("test", 200)
    with pytest.raises(IndexError):
        table.task("test", -1)


def test_no_electrical_simplification_drops_electrical_types():
    shared = SciWorldEnv.load_shared(SciWorldOptions(simplifications="noElectricalAction,openDoors"))
    names = {t.name for t in shared.table.types}
    assert len(names) == 26 and not any("power-component" in n or "conductivity" in n for n in names)
    with pytest.raises(ValueError):
        SciWorldEnv.load_shared(SciWorldOptions(simplifications="flying"))
    fp = SciWorldEnv.fingerprint
    counts = SciWorldEnv.task_counts()
    assert fp(counts, SciWorldOptions()) == fp(counts, SciWorldOptions(java_opts="-Xmx1g"))
    assert fp(counts, SciWorldOptions()) != fp(counts, SciWorldOptions(simplifications="easy"))


def test_reward_is_the_clamped_score_delta():
    # partial credit, then a setback, then success: rewards sum to the final score / 100
    scores, prev, total = [(8, False), (33, False), (25, False), (100, True)], 0, 0.0
    for native, completed in scores:
        out = reward.outcome(prev, native, completed)
        total, prev = total + out.reward, out.score
    assert out.success and out.done and total == pytest.approx(1.0)
    assert reward.outcome(0, 33, False) == reward.Outcome(0.33, 33, False, False, False)
    assert reward.outcome(33, 25, False).reward == pytest.approx(-0.08)
    # the simulator's -100 (a failed task) ends the episode and counts as 0: the sum stays >= 0
    failed = reward.outcome(50, -100, False)
    assert failed.done and failed.failed and not failed.success and failed.score == 0 and failed.reward == -0.5
    assert reward.clamp(-100) == 0 and reward.clamp(130) == 100


def test_gold_path_follows_and_thoughts():
    gold = expert.GoldPath(["open door to kitchen", "go to kitchen", "focus on thermometer"])
    gold.observe("look around")  # not gold: stays
    assert gold.next() == "open door to kitchen"
    gold.observe("Open  door to Kitchen")
    assert gold.next() == "go to kitchen"
    assert expert.GoldPath(["ERROR: Gold path was not generated."]).next() is None
    assert expert.thought("open door to kitchen") == "The door to the kitchen is closed; I open it so I can go there."
    assert "focus on it" in expert.thought("focus on red apple")
    assert expert.thought("move orange to blue box") == "I move the orange to the blue box, as the task requires."
    assert expert.thought("look around", "Your task is to boil water.", first=True).startswith("Your task is to boil")
    assert "option 1" in expert.thought("1")


# -- the simulator, in process ----------------------------------------------------------------------

def test_embedded_table_is_the_simulators(env):
    """Every type's number of variations; the train/dev/test sets of a sample of types (each needs a load;
    all 30 were checked when the table was written, and ``read_table`` reads them from any jar)."""
    env.reset(0, "test")
    sim = env._sim
    assert sorted(sim.get_task_names()) == sorted(tasks.VARIATIONS)
    assert {name: sim.get_max_variations(name) for name in tasks.VARIATIONS} == {
        name: total for name, (total, _, _) in tasks.VARIATIONS.items()}
    for name in ("boil", "identify-life-stages-2", "inclined-plane-friction-named-surfaces", "grow-fruit"):
        total, dev, test = tasks.VARIATIONS[name]
        sim.load(name, 0, "")
        assert list(sim.get_variations_train()) == list(range(0, dev))
        assert list(sim.get_variations_dev()) == list(range(dev, test))
        assert list(sim.get_variations_test()) == list(range(test, total))
    assert set(sim.get_possible_simplifications()) | {"easy"} == set(SIMPLIFICATIONS)


def test_first_observation_holds_the_task_and_the_room(env):
    obs, info = env.reset(7, "test")
    assert info["task_type"] == "power-component" and info["variation"] == 15
    assert obs.startswith("Your task is to turn on the electric motor.")
    assert "\n\nThis room is called the workshop." in obs and env.observation() == obs
    assert env.initial_observation(7, "test") is None  # a first observation needs the simulator
    again, _ = env.reset(7, "test")  # same task, same world (listing order of same-named objects may vary)
    assert sorted(again.splitlines()) == sorted(obs.splitlines())


def test_invalid_actions_are_flagged_and_change_nothing(env):
    env.reset(7, "test")
    for bad in ("fly to the moon", "", "   ", "reset task", None, "x" * 3000):
        r = env.step(bad)
        assert not r.valid and not r.done and r.reward == 0 and r.score == 0 and r.observation
    r = env.step("look around")
    assert r.valid and "This room is called the workshop" in r.observation
    assert r.reward == pytest.approx(r.score / 100)  # the score already earned by standing in the workshop


def test_available_and_random_actions(env):
    env.reset(7, "test")
    actions = env.available_actions()
    assert len(actions) > 100 and actions == sorted(set(actions))
    for a in ("look around", "focus on electric motor", "open door", "wait1"):
        assert a in actions
    assert any(a.startswith("connect ") for a in actions)
    assert "reset task" not in actions
    assert env.random_action(random.Random(0)) in actions


def test_expert_thought_and_recovery_after_other_actions(env):
    env.reset(7, "test")
    env.step("look at table")  # not gold: the expert replays it on the reloaded world and goes on
    thought = env.expert_thought()
    assert thought and env.expert_action() in env.gold_path().actions
    results = []
    for _ in range(30):
        results.append(env.step(env.expert_action()))
        if results[-1].done:
            break
    assert results[-1].success


def test_a_wrong_focus_fails_the_task_with_zero_reward(env):
    _, info = env.reset(11, "test")  # find a living thing: the air is not one
    assert info["task_type"] == "find-living-thing"
    r = env.step("focus on air")
    assert r.done and not r.success and r.score == 0 and r.info["raw_score"] == -100
    assert "failed" in r.observation
    assert not env.step("look around").valid and env.available_actions() == []


def test_random_policy_is_far_worse(env):
    """Random valid actions (each step asks the simulator for them: slow) on two of the expert's tasks."""
    rng = random.Random(0)
    for task_id in EXPERT_SAMPLE[:2]:
        total, results = play_in_process(env, task_id, "test", lambda e: e.random_action(rng), max_turns=8)
        assert 0.0 <= total < 0.5 and not results[-1].success


def test_a_crashed_simulator_is_replaced_at_reset(env):
    env.reset(7, "test")
    old = env._sim.pid
    os.kill(old, signal.SIGKILL)
    with pytest.raises(Exception):  # noqa: B017 - a dead JVM: the step fails (a 500 on a server)
        env.step("look around")
    obs, _ = env.reset(7, "test")
    assert env._sim.pid != old and "workshop" in obs and not wait_gone([old], 5)


# -- over HTTP: sessions and their JVMs -----------------------------------------------------------

def test_sessions_over_http_and_no_jvm_survives_close(server):
    with EnvClient(server.url) as client:
        info = client.info()
        assert info["splits"] == {"train": 3592, "test": 200} and info["max_sessions"] == SciWorldEnv.max_sessions
        rss = []
        for k in range(3):
            created = client.create(7, "test")
            assert created.observation.startswith("Your task is to turn on the electric motor.")
            jvms = java_children(server.proc.pid)
            assert len(jvms) == 1
            if k == 0:  # the expert over HTTP, with its thought
                suggestion = client.suggest(created.env_id, "expert")
                step = client.step(created.env_id, suggestion.action)
                assert step.valid and suggestion.thought
            else:
                assert client.step(created.env_id, "look around").valid
            client.close(created.env_id)
            assert not wait_gone([p.pid for p in jvms]), "a JVM outlived its session"
            rss.append(psutil.Process(server.proc.pid).memory_info().rss)
        assert client.health()["sessions"] == 0 and not java_children(server.proc.pid)
        assert rss[-1] - rss[0] < 32 * 2**20  # the server itself stays flat; the JVMs are gone


def test_expired_sessions_and_a_killed_server_leave_no_jvm():
    with ServerProcess("sciworld", session_ttl=2) as srv, EnvClient(srv.url) as client:
        client.create(7, "test")
        jvms = [p.pid for p in java_children(srv.proc.pid)]
        assert len(jvms) == 1
        assert not wait_gone(jvms, 20), "an expired session kept its JVM"
        client.create(7, "test")
        jvms = [p.pid for p in java_children(srv.proc.pid)]
        assert len(jvms) == 1
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(10)
        left = wait_gone(jvms, 15)
        for pid in left:  # never leave one behind, even when the test fails
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        assert not left, "a JVM outlived its server"


class QuickTimeoutSciWorld(SciWorldEnv):
    step_timeout = 2.0
    made: ClassVar[list[SciWorldEnv]] = []  # every instance the server made, to find the session's own JVM

    def __init__(self) -> None:
        super().__init__()
        self.made.append(self)


def test_a_stuck_step_times_out_and_frees_its_jvm():
    QuickTimeoutSciWorld.made.clear()
    with serve_in_thread(QuickTimeoutSciWorld) as url, EnvClient(url, retries=0) as client:
        created = client.create(7, "test")
        # the session's JVM by its simulator's pid: another test's JVM under this worker (one still closing)
        # must not be the one suspended
        (env,) = [e for e in QuickTimeoutSciWorld.made if e._sim is not None]
        jvm = psutil.Process(env._sim.pid)
        assert jvm.name() == "java"
        jvm.suspend()  # a JVM that stops answering
        try:
            with pytest.raises(StepTimeout):
                client.step(created.env_id, "look around")
            assert not wait_gone([jvm.pid], 10), "the JVM of a timed-out session survived"
        finally:
            with contextlib.suppress(psutil.NoSuchProcess):
                jvm.kill()
        assert client.health()["sessions"] == 0

