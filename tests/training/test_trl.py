"""TRL: any environment served here as ``GRPOTrainer(environment_factory=...)`` takes it (agentenv.interop.trl_env),
and TRL's real trainer (``trl`` 1.12.0 from PyPI, installed beside the project's pins and verl) running GRPO steps on
one with the tiny model on the CPU (examples/trl_grpo.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from transformers.utils import get_json_schema

from agentenv import registry
from agentenv.interop.trl_env import (
    EPISODE_OVER,
    environment_factory,
    expert_tool_call,
    task_rows,
    tool_call,
    tool_names,
)
from agentenv.testing import serve_in_thread

from helpers import REPO
from helpers.toy_envs import ForkEnv


def test_the_pinned_trl_keeps_what_verl_imports_when_trl_is_installed():
    """verl 0.9.1 patches TRL's value-head model whenever ``trl`` is importable (``verl.utils.model``,
    ``verl.models.transformers.monkey_patch``); TRL 1.13 removed it, and every verl run then failed at model load
    (measured with trl 1.16.0). trl 1.12.0 is the newest release with both that class and ``environment_factory``."""
    from verl.utils.import_utils import is_trl_available

    assert is_trl_available()
    from trl.experimental.ppo import AutoModelForCausalLMWithValueHead  # noqa: F401


def test_a_text_environment_is_one_tool_and_its_return_is_the_reward():
    with serve_in_thread(ForkEnv) as url:
        factory = environment_factory(url)
        assert tool_names(factory) == ["act"]
        env = factory()
        schema = get_json_schema(env.act)  # what TRL puts in the prompt for the tool
        assert schema["function"]["name"] == "act"
        assert schema["function"]["parameters"]["properties"]["action"] == {"type": "string",
                                                                             "description": ForkEnv.action_hint}
        rows = task_rows(factory, 10, split="test")
        assert [r["task_id"] for r in rows] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
        assert rows[0]["prompt"][0]["content"].startswith(ForkEnv.instruction)
        first = env.reset(**rows[3])  # TRL passes the whole row
        assert first == ForkEnv().reset(3, "test")[0]
        assert env.act(action="left").startswith("You walk through the left door")
        last = env.act(action="left")
        assert last.endswith(f"{EPISODE_OVER} Task solved.") and env.get_reward() == 1.0
        assert env.act(action="right") == EPISODE_OVER and env.get_reward() == 1.0  # nothing changes after the end
        again = env.reset(task_id=0, split="train")  # a new episode on the same instance
        assert again == first and env.get_reward() == 0.0
        assert env.act(action="sideways").endswith("(The environment did not accept that action.)")
        assert tool_call(factory, "left") == ("act", {"action": "left"})


def test_an_openenv_server_is_a_trl_environment_too():
    """The adapter drives any URL the project's clients read: here an OpenEnv server (OpenEnv's own server library)."""
    from agentenv.launcher import parse_server_specs

    from helpers.openenv_envs import DoorAction, DoorsEnv, TextObservation, serve_openenv

    with serve_openenv(DoorsEnv, DoorAction, TextObservation) as ws:
        (url,) = parse_server_specs([f"fork=openenv+{ws}?train=4&test=2&max_turns=2"])["fork"]
        factory = environment_factory(url)
        assert tool_names(factory) == ["act"] and factory.info.action_hint == ForkEnv.action_hint
        env = factory()
        assert env.reset(**task_rows(factory, 1)[0]) == ForkEnv().reset(0, "train")[0]
        env.act(action="left")
        assert env.act(action="left").endswith(f"{EPISODE_OVER} Task solved.") and env.get_reward() == 1.0


def test_a_tool_environment_gives_its_own_tools_with_their_schemas():
    weather = registry.load("weather")
    with serve_in_thread(weather) as url:
        factory = environment_factory(url)
        names = {t["name"] for t in weather.describe()["tools"]}
        assert set(tool_names(factory)) == names
        env = factory()
        for name in tool_names(factory):
            schema = get_json_schema(getattr(env, name))["function"]
            tool = next(t for t in weather.describe()["tools"] if t["name"] == name)
            assert schema["name"] == name
            assert set(schema["parameters"]["properties"]) == set(tool["parameters"].get("properties", {}))
        env.reset(task_id=0, split="test")
        while not env.done:  # the expert's actions, as tool calls through the methods TRL would call
            name, arguments = expert_tool_call(env)
            getattr(env, name)(**arguments)
        assert env.success and env.get_reward() >= weather.success_threshold


def test_trl_grpo_steps_on_an_environment_with_the_tiny_model(tmp_path):
    """examples/trl_grpo.py on the fork: a short behaviour-cloning warm start on an expert episode (so that the
    tiny model calls the tool), then GRPO steps of TRL's trainer, whose reward is the environment's return."""
    with serve_in_thread(ForkEnv) as url:
        proc = subprocess.run([sys.executable, str(REPO / "examples" / "trl_grpo.py"), "--server", url, "--steps", "2",
                               "--warm_start", "1", "--output_dir", str(tmp_path)], capture_output=True, text=True,
                              timeout=900, cwd=REPO, env={**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1",
                                                          # one torch thread: beside the suite's other worker, two
                                                          # were slower (77 s against 49 s with two busy cores)
                                                          "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["env"] == "fork" and summary["steps"] == 2
    assert max(summary["tool_calls"]) > 0  # the model called the environment's tool
    assert max(summary["reward"]) > 0  # and the environment's reward reached TRL's trainer
