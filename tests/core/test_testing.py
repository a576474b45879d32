"""agentenv.testing.check_environment: a sound environment passes every part, each broken promise is an
AssertionError that names it (failing tasks listed one by one), and AgentGym's route families are driven
as their clients drive them."""

from __future__ import annotations

import random
import re
from typing import ClassVar

import pytest
from pydantic import BaseModel

from agentenv import Environment, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv.testing import CHECKS, check_environment, checks_for

from helpers.tool_envs import LedgerEnv

MOVE = re.compile(r"add ([12])")


class CountEnv(Environment):
    """Reach a task's target by adding 1 or 2; overshooting ends the episode without success."""

    name = "count"
    max_turns = 8
    action_hint = "add 1 or add 2"
    instruction = "Reach the target exactly."
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(hello="count")

    @classmethod
    def num_tasks(cls, split):
        return {"train": 20, "test": 10}[split]

    def reset(self, task_id, split, seed=None):
        if not 0 <= task_id < self.num_tasks(split):
            raise IndexError(task_id)
        self.task, self.split = task_id, split
        self.target, self.total = task_id % 5 + 2 + (10 if split == "train" else 0), 0
        self._obs = f"Reach {self.target} by adding 1 or 2 at a time."
        return self._obs, {"target": self.target}

    def step(self, action):
        move = MOVE.fullmatch(action.strip())
        if move is None:
            self._obs = "Invalid action: say add 1 or add 2."
            return StepResult(self._obs, valid=False)
        self.total += int(move.group(1))
        success = self.total == self.target
        self._obs = f"You are at {self.total} of {self.target}."
        return StepResult(self._obs, reward=float(success), done=self.total >= self.target, success=success,
                          score=float(success))

    def observation(self):
        return self._obs

    def available_actions(self):
        return ["add 1", "add 2"]

    def expert_action(self):
        return "add 2" if self.target - self.total >= 2 else "add 1"

    def expert_thought(self):
        return f"{self.target - self.total} to go."

    def remaining(self):
        return self.target - self.total


def test_a_sound_environment_passes_every_part():
    report = check_environment(CountEnv, registered=False, thoughts=True, served=(0, 9))
    assert report.checked == CHECKS == checks_for(CountEnv)
    assert [(e.split, e.task_id) for e in report.episodes] == [("test", i) for i in range(10)]
    assert all(e.success and e.total == 1.0 and e.failure is None for e in report.episodes)
    assert report.episode("test", 3).actions == ["add 2", "add 2", "add 1"]
    assert report.info["env"] == "count" and report.info["splits"] == {"train": 20, "test": 10}
    sample = check_environment(CountEnv, registered=False, splits={"train": range(0, 20, 7)}, checks=("expert",))
    assert [(e.split, e.task_id, e.turns) for e in sample.episodes] == [("train", 0, 6), ("train", 7, 7),
                                                                        ("train", 14, 8)]
    assert len(check_environment(CountEnv, registered=False, limit=3, checks=("expert",)).episodes) == 3


@pytest.mark.parametrize("routes", [
    AgentGymRoutes(prefix="/count", reset_key="game", extras={"/remaining": "remaining"}, hello="LMRL"),
    AgentGymRoutes(reset_key="data_idx", score_scale=100.0, first_observation="available_actions"),
    AgentGymRoutes(handle="env_idx", create_key="id", reset_key="id", reset_returns="string",
                   index_order=("test", "train"), running_reward=True, hello="ok"),
    AgentGymRoutes(handle="env_idx", reset_key="session_id", reset_returns="pair", step_observation="state",
                   index_order=("test", "train"), hello="ok"),
], ids=["prefix-extras", "score", "env_idx-string", "env_idx-pair-state"])
def test_agentgym_route_families_are_driven_as_their_clients_do(routes):
    env_cls = type("RoutedCountEnv", (CountEnv,), {"agentgym": routes})
    check_environment(env_cls, registered=False, checks=("agentgym",), served=(1, 8))


def test_an_environment_without_agentgym_routes_skips_that_part():
    plain = type("PlainCountEnv", (CountEnv,), {"agentgym": None})
    assert "agentgym" not in checks_for(plain)
    check_environment(plain, registered=False, checks=("agentgym",))  # nothing to check


def test_every_failing_task_is_reported_with_what_went_wrong():
    class SloppyCountEnv(CountEnv):
        def expert_action(self):
            if self.split == "test" and self.task == 1:
                return "add 2"  # target 3: 2, then 4 overshoots
            if self.split == "test" and self.task == 6:
                return "add three"
            return super().expert_action()

    with pytest.raises(AssertionError) as failed:
        check_environment(SloppyCountEnv, registered=False, checks=("expert",))
    message = str(failed.value)
    assert message.startswith("count: the expert solved 8 of 10 tasks (test), every task must be:")
    assert "\n  test/1: done without success after 2 turns (return 0); last observation: 'You are at 4 of 3.'" \
        in message
    assert "\n  test/6: turn 1: the expert's action 'add three' was invalid: 'Invalid action" in message
    check_environment(SloppyCountEnv, registered=False, checks=("expert",), min_success_rate=0.8)


def test_an_expert_out_of_turns_and_one_that_raises_are_failures():
    class SlowCountEnv(CountEnv):
        max_turns = 3

        def expert_action(self):
            if self.task == 2:
                raise RuntimeError("no plan")
            return "add 1"

    with pytest.raises(AssertionError) as failed:
        check_environment(SlowCountEnv, registered=False, checks=("expert",), splits={"test": [0, 2, 4]})
    message = str(failed.value)
    assert "test/0: " not in message  # target 2, two steps: solved
    assert "test/2: raised RuntimeError: no plan" in message
    assert "test/4: not done within max_turns=3 (return 0)" in message


@pytest.mark.parametrize("change, says", [
    ({"name": "Count Env"}, "must be a lower-case name"),
    ({"max_turns": 0}, "max_turns must be a positive int"),
    ({"success_threshold": 0.0}, "success_threshold must be a positive number"),
    ({"action_format": "code"}, "a code action format needs code_language"),
    ({"splits": ("train", "test", "test")}, "splits must name train and test, each once"),
    ({"Options": type("LaxOptions", (BaseModel,), {"__annotations__": {"size": int}, "size": 1})},
     "an unknown option is accepted"),
    ({"num_tasks": classmethod(lambda cls, split: {"train": 20, "test": 0}.get(split, 5))}, "has 0 tasks"),
    ({"agentgym": AgentGymRoutes(index_order=("train", "valid"))}, "index_order"),
])
def test_bad_declarations_are_named(change, says):
    env_cls = type("BadCountEnv", (CountEnv,), change)
    with pytest.raises(AssertionError, match=re.escape(says)):
        check_environment(env_cls, registered=False, checks=("class",))


def test_an_unregistered_class_fails_the_registry_check():
    with pytest.raises(AssertionError, match="count: not registered"):
        check_environment(CountEnv, checks=("class",))


class CoinEnv(CountEnv):
    """Its first observation draws a coin: two resets of a task differ."""

    def reset(self, task_id, split, seed=None):
        obs, info = super().reset(task_id, split, seed)
        self._obs = f"{obs} Coin: {random.random()}"
        return self._obs, info


class SharedObservationEnv(CountEnv):
    """Keeps its observation on the class: one session's step shows in another's observation."""

    last = ""

    def reset(self, task_id, split, seed=None):
        obs, info = super().reset(task_id, split, seed)
        SharedObservationEnv.last = obs
        return obs, info

    def step(self, action):
        result = super().step(action)
        SharedObservationEnv.last = result.observation
        return result

    def observation(self):
        return SharedObservationEnv.last


class ForgivingEnv(CountEnv):
    """Any task id plays (task ids wrap): out-of-range ids are not refused."""

    def reset(self, task_id, split, seed=None):
        return super().reset(task_id % self.num_tasks(split), split, seed)


@pytest.mark.parametrize("env_cls, says", [
    (CoinEnv, "two resets of the task differ"),
    (SharedObservationEnv, "a step of one instance changed another's observation"),
    (ForgivingEnv, "reset(20, 'train') of a task out of range did not raise IndexError"),
    (LedgerEnv, "reset(50, 'train') of a task out of range did not raise IndexError"),
])
def test_broken_resets_are_named(env_cls, says):
    with pytest.raises(AssertionError, match=re.escape(says)):
        check_environment(env_cls, registered=False, checks=("reset",))


class StrictLedgerEnv(LedgerEnv):
    """The tool environment of tests/helpers/tool_envs.py, refusing task ids out of range."""

    def reset(self, task_id, split, seed=None):
        if not 0 <= task_id < self.num_tasks(split):
            raise IndexError(task_id)
        return super().reset(task_id, split, seed)


def test_a_tool_environment_passes_and_thoughts_are_required_when_asked():
    report = check_environment(StrictLedgerEnv, registered=False, served=(3,))
    assert {t["name"] for t in report.info["tools"]} == {"record", "finish"}
    with pytest.raises(AssertionError, match=r"test/0: turn 1: the expert gave no thought for"):
        check_environment(StrictLedgerEnv, registered=False, checks=("expert",), thoughts=True)


def test_unknown_checks_and_tasks_are_errors_of_the_call():
    with pytest.raises(ValueError, match="unknown checks"):
        check_environment(CountEnv, registered=False, checks=("speed",))
    with pytest.raises(AssertionError, match=re.escape("task ids [10] are out of range for split 'test'")):
        check_environment(CountEnv, registered=False, splits={"test": [9, 10]})
    with pytest.raises(AssertionError, match=re.escape("no task of split 'test' to check (10 in the split)")):
        check_environment(CountEnv, registered=False, limit=0, checks=("expert",))
