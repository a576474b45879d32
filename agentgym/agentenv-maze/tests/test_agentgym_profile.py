"""The agentgym profile of maze: AgentGym's LMRL-Gym maze, answer for answer.

The upstream comparison replays a recording of AgentGym's own server (``tests/data/agentgym/
maze_upstream.json.gz``, written by ``python -m agentenv.interop.agentgym_compare maze --record``
against AgentGym's ``agentenv-lmrlgym`` server with LMRL-Gym, run from their public repositories in a
scratch environment: they are not installable from a package registry, so CI cannot start them).
"""

from pathlib import Path

import httpx
import pytest

from agentenv import profiles, registry
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.server import ServerConfig, create_app
from agentenv.testing import check_environment, checks_for, play_in_process, serve_app_in_thread, serve_in_thread
from agentenv_maze.agentgym_profile import DIST, GOAL, MAX_MOVES, RULES, STARTS, AgentGymMazeEnv, describe
from agentenv_maze.env import MazeEnv

RECORDING = Path(__file__).resolve().parents[3] / "tests" / "data" / "agentgym" / "maze_upstream.json.gz"


@pytest.mark.parametrize("part", checks_for(AgentGymMazeEnv))
def test_check_environment(part):
    """The SDK's contract; the expert solves all 25 games within AgentGym's 15 rounds."""
    report = check_environment(AgentGymMazeEnv, checks=(part,), splits=("test", "train"), thoughts=True,
                               served=(0, 24))
    for episode in report.episodes:
        assert episode.total == 1.0 and len(episode.results) == DIST[STARTS[episode.task_id]]


def test_the_option_chooses_the_profile_and_info_says_which():
    assert profiles.resolve(registry.load("maze"), "agentgym") is AgentGymMazeEnv
    assert profiles.available(MazeEnv) == ["native", "agentgym"]
    with serve_in_thread(MazeEnv, ServerConfig(options={"profile": "agentgym"})) as url:
        info = httpx.get(url + "/info").json()
    assert (info["profile"], info["splits"], info["max_turns"]) == ("agentgym", {"train": 25, "test": 25}, 15)
    with serve_in_thread(MazeEnv) as url:
        native = httpx.get(url + "/info").json()
    assert native["profile"] == "native" and native["fingerprint"] != info["fingerprint"]
    with pytest.raises(ValueError, match="maze has no profile 'upstream'; it has: native, agentgym"):
        create_app(MazeEnv, ServerConfig(options={"profile": "upstream"}))
    with pytest.raises(ValueError, match="bad option for maze"):  # the native game's options are not the profile's
        create_app(MazeEnv, ServerConfig(options={"profile": "agentgym", "progress_reward": 0.1}))


def test_answers_as_agentgyms_own_server_on_every_agenteval_item():
    """25 items, 560 actions (random moves into walls, replies that are no move, 50 moves to the failure,
    the expert to the goal): every observation, reward and done as upstream's server gave them."""
    recording = agentgym_compare.read_recording(RECORDING)
    assert [item["index"] for item in recording["items"]] == list(range(25))
    endings = [item["steps"][-1]["observation"] for item in recording["items"]]
    assert endings.count("Failure\n") == 5 and endings.count("Success\n") == 20
    with serve_app_in_thread(create_agentgym_app(MazeEnv)) as url:  # --compat agentgym: the profile by default
        assert agentgym_compare.compare(recording, url) == []
    # the check can fail: the native game under AgentGym's routes is another game
    with serve_app_in_thread(create_agentgym_app(MazeEnv, ServerConfig(options={"profile": "native"}))) as url:
        assert len(agentgym_compare.compare({**recording, "items": recording["items"][:2]}, url)) > 0


def test_rules_reach_the_model_but_not_agentgyms_client():
    env = AgentGymMazeEnv()
    first, info = env.reset(16, "test")
    assert first == f"{RULES}\n{describe((5, 6))}" and info["agentgym_index"] == 16
    assert describe((5, 6)) == "The goal is at position 8, 6. Your current position is at position 5, 6. " \
                               "There is a wall above you."
    with serve_app_in_thread(create_agentgym_app(MazeEnv)) as url:
        http = httpx.Client(base_url=url + "/maze", timeout=30)
        handle = http.post("/create").json()["id"]
        assert http.post("/reset", json={"id": handle, "game": 16}).json()["observation"] == describe((5, 6))
        assert http.get("/observation", params={"id": handle}).json() == describe((5, 6))
        assert "not valid" in http.post("/reset", json={"id": handle, "game": 25}).json()["error"]


def test_fifty_moves_then_failure():
    env = AgentGymMazeEnv()
    env.reset(0, "test")
    for _ in range(MAX_MOVES):
        result = env.step("move up")  # into the wall above (1, 1): the agent stays, the move counts
        assert (result.done, result.reward, result.valid) == (False, 0.0, True)
    assert env.step("move up").observation == "Failure\n"
    env.reset(18, "test")  # one move from the goal
    result = env.step("go down")  # not a move: the turn counts, nothing happens
    assert (result.valid, result.observation) == (False, describe((7, 6)))
    result = env.step("move down")
    assert (result.observation, result.reward, result.done, result.success) == ("Success\n", 1.0, True, True)
    assert GOAL == (8, 6)


def test_random_policy_rarely_reaches_the_goal():
    import random

    rng = random.Random(0)
    env = AgentGymMazeEnv()
    wins = sum(play_in_process(env, t, "test", lambda e: e.random_action(rng))[0] > 0 for t in range(25))
    assert wins < 25
