"""The agentgym profile of babyai: AgentGym's BabyAI server, answer for answer, on the project's minigrid 3.2.

The upstream comparison replays a recording of AgentGym's own server (``tests/data/agentgym/babyai_upstream.json.gz``,
written by ``python -m agentenv.interop.agentgym_compare babyai --record`` against AgentGym's ``agentenv-babyai``
with minigrid 2.3.1, gymnasium 0.29.1 and gym 0.26.2 in a scratch environment; CI does not start it).
"""

from pathlib import Path

import httpx
import pytest
from minigrid.envs.babyai import Synth, SynthLoc

from agentenv import profiles, registry
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, serve_app_in_thread, serve_in_thread
from agentenv_babyai.agentgym_profile import (
    CHECK,
    COMPLETED,
    LEVELS,
    NO_CHANGE,
    NOT_RECOGNIZED,
    RULES,
    AgentGymBabyAIEnv,
    build_level,
    mission_text,
)
from agentenv_babyai.env import BabyAIEnv

RECORDING = Path(__file__).resolve().parents[3] / "tests" / "data" / "agentgym" / "babyai_upstream.json.gz"
#: AgentEval items the expert solves within 20 rounds (in 1 to 5), one of each of the 18 levels AgentEval draws,
#: and two AgentTraj items
SOLVED = {"test": [1880, 2401, 1882, 2163, 1884, 4765, 7606, 3727, 1888, 3569, 2890, 3978, 3459, 2180, 5029, 3150,
                   4632, 12755],
          "train": [0, 1]}


@pytest.mark.parametrize("part", checks_for(AgentGymBabyAIEnv))
def test_check_environment(part):
    """The SDK's contract on a sample of AgentEval's items; upstream ends an episode only on a success whose
    reward (minigrid's ``1 - 0.9 * steps / max_steps``) is above 0.5."""
    report = check_environment(AgentGymBabyAIEnv, checks=(part,), splits=SOLVED, thoughts=True, served=(0, 89))
    for episode in report.episodes:
        assert 0.5 < episode.total <= 1 and len(episode.results) <= AgentGymBabyAIEnv.max_turns


def test_the_option_chooses_the_profile():
    assert profiles.resolve(registry.load("babyai"), "agentgym") is AgentGymBabyAIEnv
    assert profiles.available(BabyAIEnv) == ["native", "agentgym"]
    with serve_in_thread(BabyAIEnv, ServerConfig(options={"profile": "agentgym"})) as url:
        info = httpx.get(url + "/info").json()
    assert (info["profile"], info["splits"], info["max_turns"]) == ("agentgym", {"train": 11160, "test": 12880}, 20)
    assert len(LEVELS) == 40 and AgentGymBabyAIEnv.num_tasks("test") > 12875  # AgentEval's last item


def test_answers_as_agentgyms_own_server_on_every_agenteval_item():
    """90 items, 1,669 answers (60 random actions, AgentGym's Thought/Action reply sent whole, text that is no
    action, the expert): every observation, reward, score and done exactly (upstream sends rewards such as
    0.6656249999999999, and so does the compat server)."""
    recording = agentgym_compare.read_recording(RECORDING)
    steps = [s for item in recording["items"] for s in item["steps"]]
    assert len(recording["items"]) == 90 and len(steps) == 1669
    # upstream's quirks are in it: a success at reward <= 0.5 goes on, rewards below 0 past minigrid's step limit
    assert any(COMPLETED in s["observation"] and not s["done"] and s["reward"] < 0 for s in steps)
    assert any(s["observation"].startswith(NOT_RECOGNIZED) for s in steps)
    with serve_app_in_thread(create_agentgym_app(BabyAIEnv)) as url:  # --compat agentgym: the profile by default
        assert agentgym_compare.compare(recording, url) == []
    # the check can fail: the native tasks under AgentGym's routes are other tasks
    with serve_app_in_thread(create_agentgym_app(BabyAIEnv, ServerConfig(options={"profile": "native"}))) as url:
        assert len(agentgym_compare.compare({**recording, "items": recording["items"][:2]}, url)) > 0


def test_levels_are_generated_as_minigrid_2_3_does():
    """GoToObjS6-v0 had a 4-cell room; the Synth levels keep minigrid 2.3's stale locked room between attempts
    (minigrid 3.2 alone gives another mission for these indices)."""
    assert build_level(3)[0].grid.width == 4
    assert build_level(155)[0].mission == "go to the red box"  # SynthLoc, seed 3
    plain = SynthLoc()
    plain.reset(seed=3)
    assert plain.mission == "go to a door on your right"
    assert build_level(2994)[0].mission == "open the grey door"  # Synth, seed 74
    plain = Synth(room_size=5, num_rows=2)
    plain.reset(seed=74)
    assert plain.mission == "open the green door"
    assert mission_text("open a door, then go to the key after you pick up a ball") == \
        "open a door, and go to the key and pick up a ball"


def test_a_step_answers_as_upstreams():
    env = AgentGymBabyAIEnv()
    first, info = env.reset(1804, "test")
    assert first.startswith(RULES + "\nYour goal: go to a red box\nIn front of you in this room, you can see several "
                                    "objects: There is a purple key 1 right in front of you 2 steps away.  ")
    listing = first[first.index("\nAvailable actions: ["):]
    assert info["level"] == "BabyAI-GoToLocalS8N7-v0" and info["seed"] == 45
    checked = env.step("please CHECK")  # any text with "check" lists the actions, and costs no minigrid step
    assert checked.observation.startswith("You can take the following actions: turn left, turn right, ") and \
        checked.observation.endswith(listing) and checked.valid and env._level.step_count == 0
    assert env.step("fly").observation == NOT_RECOGNIZED + listing
    assert env.step("drop").observation.startswith("You cannot drop the object, as you are not carrying anything.")
    assert env.step("").observation == NO_CHANGE + listing
    done = env.step("Go to red box 1 ")  # lower-cased and stripped
    assert done.done and done.success and done.reward == 1 - 0.9 * 2 / 64 and done.info["steps"] == 2
    # the paragraph, upstream's completion line, then the actions of the new state (still listed)
    assert COMPLETED + '\nAvailable actions: ["turn left", ' in done.observation
    assert done.observation.endswith(f'"{CHECK}"]') and env.available_actions() == []
