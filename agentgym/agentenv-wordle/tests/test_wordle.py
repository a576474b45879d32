"""Tests of the wordle environment: the SDK's contract (check_environment), word lists, splits, feedback rules,
rewards, policies."""

import random

import numpy as np
import pytest

from agentenv.testing import check_environment, checks_for, play_in_process
from agentenv_wordle import solver
from agentenv_wordle.env import MAX_GUESSES, PARTIAL_WEIGHT, WordleEnv, parse_guess, partial_credit
from agentenv_wordle.feedback import ALL_GREEN, encode, feedback, pattern_code, pattern_matrix
from agentenv_wordle.words import NUM_TASKS, allowed_set, allowed_words, answer, answer_words, splits

G, Y, B = 2, 1, 0


def run_episode(env, task_id, split, policy):
    """One episode under the runtime's rules; return (reward sum, last step result)."""
    total, results = play_in_process(env, task_id, split, policy)
    assert all(0.0 <= r.reward <= 1.0 for r in results) and 0.0 <= total <= 1.0
    return total, results[-1]


@pytest.mark.parametrize("part", checks_for(WordleEnv))
def test_check_environment(part):
    """The contract: declarations, resets, the expert on every test task, HTTP and AgentGym's routes."""
    report = check_environment(WordleEnv, checks=(part,), served=(0, 24))
    for episode in report.episodes:  # every solved game pays exactly 1, nothing before the end
        assert all(0.0 <= r.reward <= 1.0 for r in episode.results) and episode.total == 1.0


def test_sizes():
    assert WordleEnv.num_tasks("test") == 25
    assert WordleEnv.num_tasks("train") == len(answer_words()) - 25 >= 2000
    with pytest.raises(ValueError):
        WordleEnv.num_tasks("valid")


def test_word_lists_come_from_wordfreq_and_are_clean():
    words = allowed_words()
    assert len(words) > 4 * len(answer_words())
    assert all(len(w) == 5 and w.isascii() and w.isalpha() and w.islower() for w in words)
    assert len(set(words)) == len(words)
    assert set(answer_words()) <= allowed_set()
    assert {"about", "crane", "house", "water"} <= set(answer_words())


def test_splits_are_deterministic_and_disjoint():
    assert splits.__wrapped__() == splits()
    test, train = set(splits()["test"]), set(splits()["train"])
    assert len(test) == NUM_TASKS["test"] and len(train) == NUM_TASKS["train"]
    assert not test & train and test | train == set(answer_words())
    assert [answer("test", i) for i in range(3)] == list(splits()["test"][:3])


@pytest.mark.parametrize(
    "guess,secret,marks",
    [
        ("crane", "crane", (G, G, G, G, G)),
        ("crane", "those", (B, B, B, B, G)),
        ("geese", "those", (B, B, B, G, G)),  # the green e uses the only e: the others are grey
        ("speed", "abide", (B, B, Y, B, Y)),  # one e in the answer: only the first e is yellow
        ("ladle", "hello", (Y, B, B, G, Y)),  # green l matched first, the other l is yellow
        ("eerie", "there", (Y, B, Y, B, G)),
        ("mamma", "maxim", (G, G, Y, B, B)),
    ],
)
def test_feedback_rules(guess, secret, marks):
    assert feedback(guess, secret) == marks
    assert pattern_matrix(encode([guess]), encode([secret]))[0, 0] == pattern_code(marks)


def test_vectorised_feedback_matches_reference():
    rng = random.Random(1)
    words = list(answer_words())
    repeated = [w for w in words if len(set(w)) < 5]
    guesses = rng.sample(words, 150) + rng.sample(repeated, 150)
    secrets = rng.sample(words, 200) + rng.sample(repeated, 100)
    got = pattern_matrix(encode(guesses), encode(secrets))
    want = np.array([[pattern_code(feedback(g, s)) for s in secrets] for g in guesses])
    assert (got == want).all()
    assert pattern_code((G,) * 5) == ALL_GREEN


@pytest.mark.parametrize(
    "text,word",
    [
        ("crane", "crane"),
        ("CRANE", "crane"),
        ("  guess crane ", "crane"),
        ('Guess: "Crane".', "crane"),
        ("`crane`", "crane"),
        ("Action: guess crane", "crane"),
        ("guess", "guess"),
        ("two words", None),
        ("", None),
    ],
)
def test_parse_guess(text, word):
    assert parse_guess(text) == word


def test_first_observation_has_instruction():
    obs, info = WordleEnv().reset(0, "test")
    assert "five-letter" in obs and "6 guesses" in obs and "G =" in obs and "Y =" in obs and "B =" in obs
    assert answer("test", 0) not in obs and answer("test", 0) not in str(info)


def test_invalid_guesses_are_flagged_and_free():
    env = WordleEnv()
    env.reset(0, "test")
    for bad in ["abc", "zzzzz", "hello there", "", "toolong"]:
        result = env.step(bad)
        assert not result.valid and not result.done and result.reward == 0.0
        assert "6 guesses left" in result.observation and result.info["guesses"] == 0
    result = env.step(answer("test", 0).upper() + ".")
    assert result.valid and result.done and result.success and result.reward == 1.0 and result.score == 1.0


def test_feedback_and_history_in_observation():
    env = WordleEnv()
    env.reset(0, "test")
    secret = answer("test", 0)
    guess = next(w for w in answer_words() if w != secret)
    result = env.step(f"guess {guess}")
    marks = feedback(guess, secret)
    code = "".join("BYG"[m] for m in marks)
    assert result.valid and not result.done and result.reward == 0.0
    assert f"1. {guess} {code}" in result.observation and "5 guesses left" in result.observation
    assert env.observation() == result.observation


def test_losing_gives_small_partial_credit_once():
    env = WordleEnv()
    env.reset(3, "test")
    secret = answer("test", 3)
    wrong = [w for w in answer_words() if w != secret][:MAX_GUESSES]
    rewards = [env.step(w) for w in wrong]
    assert [r.done for r in rewards] == [False] * 5 + [True]
    assert sum(r.reward for r in rewards[:-1]) == 0.0
    last = rewards[-1]
    expected = partial_credit([feedback(w, secret) for w in wrong])
    assert not last.success and last.reward == pytest.approx(expected) and last.score == last.reward
    assert 0.0 < last.reward < PARTIAL_WEIGHT and secret in last.observation
    after = env.step(secret)
    assert after.done and not after.valid and after.reward == 0.0


def test_partial_credit_values():
    assert partial_credit([]) == 0.0
    assert partial_credit([(B,) * 5]) == 0.0
    assert partial_credit([(G, G, B, Y, B), (G, B, B, B, B)]) == pytest.approx(PARTIAL_WEIGHT * 2.5 / 5)


def test_expert_reads_only_feedback():
    env = WordleEnv()
    openers = set()
    for i in range(5):
        env.reset(i, "test")
        openers.add(env.expert_action())
    assert openers == {solver.opener()}
    # from a position an agent left it in (a valid non-answer guess), the expert still solves
    env.reset(4, "test")
    outsider = next(w for w in allowed_words()[len(answer_words()) :] if len(set(w)) == 5)
    env.step(outsider)
    for _ in range(MAX_GUESSES - 1):
        result = env.step(env.expert_action())
        if result.done:
            break
    assert result.success


def test_random_policy_mostly_fails():
    env, rng = WordleEnv(), random.Random(0)
    results = [run_episode(env, i, "test", lambda e: e.random_action(rng)) for i in range(NUM_TASKS["test"])]
    assert all(r.done for _, r in results)  # six valid guesses always end the game
    assert sum(r.success for _, r in results) / len(results) < 0.3

