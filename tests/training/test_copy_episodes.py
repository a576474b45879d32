"""Synthetic copy episodes (AgentEvol's data.copy_episodes): every reply is the span its observation gave, taken
from the expert episodes' own text."""

from __future__ import annotations

import pytest

from openmanus_rl import copy_episodes, expert_data, sft, trajectories


def _expert(task: int, observations: list[str]) -> dict:
    messages = [{"role": "user", "content": "You are an agent in a text environment. Same words every episode."}]
    for obs in observations:
        messages += [{"role": "assistant", "content": f"Thought: go.\nAction: look {task}"},
                     {"role": "user", "content": obs}]
    return trajectories.from_messages("movie", task, messages, reward=1.0, success=True)


EXPERT = [_expert(0, ['[{"id": 215325, "title": "The Ballad of Stars"}]', "ok"]),
          _expert(1, ["You are at (0, 2). The goal is at (4, 5). You can move down, left or right."])]


def test_every_reply_repeats_a_span_of_one_expert_text_given_by_its_observation():
    texts = copy_episodes.source_texts(EXPERT)
    # the first turn (the same instructions in every episode) gives no span, nor does a one-word turn
    assert not any("agent" in w for t in texts for w in t) and ["ok"] not in texts
    items = copy_episodes.make(texts, count=20, turns=5, seed=3)
    assert len(items) == 20 and len({it["item_id"] for it in items}) == 20
    joined = [" ".join(t) for t in texts]
    for item in items:
        assert trajectories.parse_item_id(item["item_id"])[0] == "copy" and item["success"]
        conv = item["conversations"]
        assert [t["from"] for t in conv] == ["human", "gpt"] * 5
        assert trajectories.loss_mask(item) == [False, True] * 5  # the loss is on the copy only
        assert conv[0]["value"].startswith(copy_episodes.INSTRUCTION + "\n")
        for obs, reply in zip(conv[::2], conv[1::2], strict=True):
            span = reply["value"]
            assert obs["value"].endswith(f"Text: {span}")
            assert copy_episodes.MIN_WORDS <= len(span.split()) <= copy_episodes.MAX_WORDS
            assert any(span in text for text in joined)  # consecutive words of one text
    # both texts are drawn from, and the spans vary in length
    spans = [t["value"] for it in items for t in it["conversations"][1::2]]
    assert any("Ballad" in s or "215325" in s for s in spans) and any("goal" in s or "move" in s for s in spans)
    assert len({len(s.split()) for s in spans}) > 3


def test_the_episodes_are_a_function_of_the_seed():
    texts = copy_episodes.source_texts(EXPERT)
    assert copy_episodes.make(texts, 5, 3, seed=0) == copy_episodes.make(texts, 5, 3, seed=0)
    assert copy_episodes.make(texts, 5, 3, seed=0) != copy_episodes.make(texts, 5, 3, seed=1)
    assert copy_episodes.make(texts, 0) == []


def test_bad_counts_and_no_text_are_clear_errors():
    with pytest.raises(ValueError, match="count >= 0 and turns >= 1"):
        copy_episodes.make([["a", "b"]], -1)
    with pytest.raises(ValueError, match="count >= 0 and turns >= 1"):
        copy_episodes.make([["a", "b"]], 2, turns=0)
    with pytest.raises(ValueError, match="no text of at least 2 words"):
        first_turn_only = trajectories.from_messages("movie", 0, [{"role": "user", "content": "the instructions"}],
                                                     reward=1.0, success=True)
        copy_episodes.make(copy_episodes.source_texts([first_turn_only]), 1)


def test_the_written_file_becomes_sft_rows_beside_the_expert_episodes(tmp_path):
    expert = tmp_path / "movie.jsonl"
    trajectories.write(expert, EXPERT)
    out = tmp_path / "copy" / "episodes.jsonl"
    assert expert_data.write_atomic(out, copy_episodes.from_files([expert], count=7, turns=2, seed=0)) == 7
    assert list(tmp_path.joinpath("copy").iterdir()) == [out]  # written whole: no temporary file left
    items = sft.read_items([expert, out])
    assert len(items) == 2 + 7 and items[2:] == copy_episodes.make(
        copy_episodes.source_texts(EXPERT), 7, 2, seed=0)
    import pandas as pd

    assert sft.write_sft_parquet(items, tmp_path / "sft.parquet") == 9
    last = pd.read_parquet(tmp_path / "sft.parquet").iloc[-1]
    assert [m["role"] for m in last["messages"]] == ["user", "assistant"] * 2
    assert last["messages"][1]["content"] == items[-1]["conversations"][1]["value"]
