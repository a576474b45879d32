"""Synthetic copy episodes: the agent repeats spans of the expert episodes' own text.

A small model cloned on expert episodes learns their form but not to copy a name or an id from its context
into its action (a movie search for a film the question does not name, an alfworld object that is not in the
room: docs/results/multi-env-bc.md). Episodes whose every reply is the span the observation before it gave
teach exactly that, in the environments' own words and tokens, so the embeddings stay on the text the agent
reads (a warm-up on random tokens before BC disturbed them more than BC could mend). They go into the
behaviour-cloning data beside the expert episodes (AgentEvol's ``data.copy_episodes``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from openmanus_rl import trajectories

#: the item ids' environment part: never a registered environment's name, so no tool takes them for one
ENV = "copy"
INSTRUCTION = "Repeat the text after 'Text:' exactly, nothing else."
MIN_WORDS, MAX_WORDS = 2, 30


def source_texts(items: Iterable[dict[str, Any]]) -> list[list[str]]:
    """The words of every turn after the first (observations and replies; the first turn's instructions are
    the same in every episode, so a span of them is recalled, not copied) with at least ``MIN_WORDS`` words."""
    out = []
    for item in items:
        for turn in item["conversations"][1:]:
            words = str(turn["value"]).split()
            if len(words) >= MIN_WORDS:
                out.append(words)
    return out


def make(texts: Sequence[Sequence[str]], count: int, turns: int = 8, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` AgentTraj items of ``turns`` exchanges each: the observation gives a span of ``MIN_WORDS`` to
    ``MAX_WORDS`` consecutive words of one text, the reply (the loss) is that span. Deterministic in ``seed``."""
    if count < 0 or turns < 1:
        raise ValueError(f"copy episodes: count >= 0 and turns >= 1, not {count} and {turns}")
    if count and not texts:
        raise ValueError(f"copy episodes: no text of at least {MIN_WORDS} words to take spans from")
    rng = random.Random(seed)
    items = []
    for i in range(count):
        messages = []
        for t in range(turns):
            words = rng.choice(texts)
            k = rng.randint(MIN_WORDS, min(MAX_WORDS, len(words)))
            start = rng.randint(0, len(words) - k)
            span = " ".join(words[start:start + k])
            head = f"{INSTRUCTION}\n" if t == 0 else ""
            messages += [{"role": "user", "content": f"{head}Text: {span}"}, {"role": "assistant", "content": span}]
        items.append(trajectories.from_messages(ENV, i, messages, reward=1.0, success=True))
    return items


def from_files(expert_files: Sequence[str | Path], count: int, turns: int = 8, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` copy episodes from the text of the trajectory files ``expert_files`` (written by the caller like
    every other trajectory file, with ``expert_data.write_atomic``)."""
    return make(source_texts(it for f in expert_files for it in trajectories.read(f)), count, turns, seed)
