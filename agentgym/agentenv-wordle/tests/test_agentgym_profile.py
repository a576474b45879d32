"""The agentgym profile of wordle: LMRL-Gym's Wordle as AgentGym's server plays it, answer for answer.

The upstream comparisons replay recordings of AgentGym's own server (``tests/data/agentgym/wordle_upstream.json.gz``
on AgentEval's 25 items, ``wordle_train_upstream.json.gz`` on AgentTraj's 955, written by
``python -m agentenv.interop.agentgym_compare wordle --record`` against AgentGym's ``agentenv-lmrlgym`` server
with LMRL-Gym, run from their public repositories in a scratch environment: they are not installable from a
package registry, so CI cannot start them).
"""

import random
from pathlib import Path

import httpx
import pytest

from agentenv import profiles, registry
from agentenv.interop import agentgym_compare
from agentenv.interop.agentgym_server import create_agentgym_app
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, play_in_process, serve_app_in_thread
from agentenv_wordle.agentgym_profile import INVALID, RULES, START, TRIES, WORDS, AgentGymWordleEnv, Game, best_guess
from agentenv_wordle.env import WordleEnv

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "agentgym"


@pytest.mark.parametrize("part", checks_for(AgentGymWordleEnv))
def test_check_environment(part):
    """The SDK's contract; the expert wins every AgentEval seed within 3 tries, reading only the feedback."""
    report = check_environment(AgentGymWordleEnv, checks=(part,), splits={"train": range(100), "test": range(25)},
                               thoughts=True, served=(1, 2))
    for episode in report.episodes:
        assert episode.total == 1.0 and len(episode.results) <= 3


def test_the_option_chooses_the_profile():
    assert profiles.resolve(registry.load("wordle"), "agentgym") is AgentGymWordleEnv
    assert AgentGymWordleEnv.max_turns == 8 and len(WORDS) == 40 == len(set(WORDS))


@pytest.mark.parametrize("recording", ["wordle_upstream.json.gz", "wordle_train_upstream.json.gz"])
def test_answers_as_agentgyms_own_server(recording):
    """Every answer upstream gave: random words to the sixth try, AgentGym's Thought/Action reply sent whole (an
    invalid word that uses a try), the expert to the win. AgentEval's 25 items (48 answers) all; of AgentTraj's
    955 (1,828 answers, all compared once, 0 differences) every tenth, to keep the suite quick."""
    recorded = agentgym_compare.read_recording(DATA / recording)
    recorded["items"] = recorded["items"][::10] if recorded.get("split") == "train" else recorded["items"]
    observations = [s["observation"] for item in recorded["items"] for s in item["steps"]]
    assert INVALID in observations and sum(s["reward"] for i in recorded["items"] for s in i["steps"]) > 0
    with serve_app_in_thread(create_agentgym_app(WordleEnv)) as url:  # --compat agentgym: the profile by default
        assert agentgym_compare.compare(recorded, url) == []
    # the check can fail: the native game under AgentGym's routes answers otherwise
    with serve_app_in_thread(create_agentgym_app(WordleEnv, ServerConfig(options={"profile": "native"}))) as url:
        assert len(agentgym_compare.compare({**recorded, "items": recorded["items"][:3]}, url)) > 0


def test_the_routes_answer_as_upstream_and_the_rules_reach_only_the_model():
    first, info = AgentGymWordleEnv().reset(3, "test")
    assert first == f"{RULES}\n{START}" and info["agentgym_index"] == 3
    with serve_app_in_thread(create_agentgym_app(WordleEnv)) as url:
        http = httpx.Client(base_url=url + "/wordle", timeout=30)
        handle = http.post("/create").json()["id"]
        assert http.get("/filtered_vocab", params={"id": handle}).json() == list(WORDS)
        assert http.post("/reset", json={"id": handle, "seed": 3}).json()["observation"] == START
        # what AgentGym's server answered to these four tries on seed 3 (its answers, asked by hand)
        answers = [http.post("/step", json={"id": handle, "action": a}).json()
                   for a in ("s h i r e", "panic", "xxxxx", "ROBOT")]
        assert [a["observation"] for a in answers] == ["b b b y b\n", "b b b b b\n", INVALID, INVALID]
        assert [a["done"] for a in answers] == [False] * 4
        assert http.get("/filtered_vocab", params={"id": handle}).json() == ["robot"]


def test_every_try_counts_and_the_win_needs_the_one_word_left():
    game = Game(3)
    assert [game.play(w) for w in ("shire", "panic", "xxxxx", "ROBOT")][2:] == [INVALID, INVALID]
    assert game.fitting == ("robot",) and not game.won  # one word fits, but it was not guessed yet
    assert game.play("r o b o t") == "g g g g g\n" and game.won and game.over
    game = Game(0)
    for _ in range(TRIES):
        assert not game.over
        game.play("hello")
    assert game.over and not game.won and game.tries == ["hello"] * TRIES


def test_the_expert_reads_only_the_feedback():
    """The same feedback, whatever the seed, gives the same guess; over AgentTraj's whole seed range it wins
    every game in at most 3 tries, where random words rarely do."""
    game = Game(7)
    game.play("panic")
    other = Game(7)
    other.knowledge, other.fitting = dict(game.knowledge), game.fitting
    assert best_guess(game.knowledge, game.fitting) == best_guess(other.knowledge, other.fitting)
    env = AgentGymWordleEnv()
    tries = [len(play_in_process(env, seed, "train", lambda e: e.expert_action())[1]) for seed in range(0, 1451, 7)]
    assert max(tries) <= 3
    rng = random.Random(0)
    wins = sum(play_in_process(env, s, "test", lambda e: e.random_action(rng))[0] > 0 for s in range(25))
    assert wins < 20
