"""Word lists and task splits, derived from ``wordfreq`` (pinned, so the lists never move).

Answers are the most frequent five-letter words, allowed guesses a much longer tail of them.
wordfreq lower-cases everything, so a few frequent proper nouns (``david``, ``china``) are answers
too; that is the price of not hand-typing a list, and it is the same for every policy.
"""

from __future__ import annotations

import random
import re
from functools import lru_cache

#: answers: the first NUM_ANSWERS five-letter words in wordfreq's English frequency order
NUM_ANSWERS = 2500
#: allowed guesses: every five-letter word among the ALLOWED_TOP_N most frequent English words
ALLOWED_TOP_N = 100_000
NUM_TEST = 25
_SPLIT_SEED = "agentenv-wordle/v1/split"
_WORD_RE = re.compile(r"[a-z]{5}")


@lru_cache(maxsize=1)
def allowed_words() -> tuple[str, ...]:
    """Every allowed guess, most frequent first (answers are the first :data:`NUM_ANSWERS`)."""
    import wordfreq  # imported here: loading its data takes a moment and only word lists need it

    return tuple(w for w in wordfreq.top_n_list("en", ALLOWED_TOP_N) if _WORD_RE.fullmatch(w))


@lru_cache(maxsize=1)
def allowed_set() -> frozenset[str]:
    return frozenset(allowed_words())


@lru_cache(maxsize=1)
def answer_words() -> tuple[str, ...]:
    words = allowed_words()[:NUM_ANSWERS]
    if len(words) != NUM_ANSWERS:  # only if a different wordfreq than the pinned one is installed
        raise RuntimeError(f"wordfreq gave {len(words)} five-letter answers, expected {NUM_ANSWERS}")
    return words


@lru_cache(maxsize=1)
def splits() -> dict[str, tuple[str, ...]]:
    """A fixed shuffle of the answers: its first NUM_TEST words are the test split, the rest train.

    Shuffling (rather than taking, say, the most frequent words for test) keeps both splits at the
    same difficulty; ``random.Random(str)`` is stable across platforms and Python versions.
    """
    words = list(answer_words())
    random.Random(_SPLIT_SEED).shuffle(words)
    return {"test": tuple(words[:NUM_TEST]), "train": tuple(words[NUM_TEST:])}


NUM_TASKS = {"train": NUM_ANSWERS - NUM_TEST, "test": NUM_TEST}


def answer(split: str, task_id: int) -> str:
    if split not in NUM_TASKS:
        raise ValueError(f"unknown split {split!r}; expected one of {sorted(NUM_TASKS)}")
    if not 0 <= task_id < NUM_TASKS[split]:
        raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{NUM_TASKS[split] - 1})")
    return splits()[split][task_id]
