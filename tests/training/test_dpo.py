"""Learning from failures (openmanus_rl.dpo): preference pairs from explored episodes, the loss mask of a
multi-turn trajectory, and a real DPO run on a tiny model built in code."""

from __future__ import annotations

import json
import math

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from openmanus_rl import dpo, sft, trajectories
from openmanus_rl.tiny_model import build_tiny_model


def episode(task: int, reward: float, actions: list[str], with_task_id: bool = True) -> dict:
    conv = [{"from": "human", "value": f"Task {task}: reach the goal. You are at (0, 0)."}]
    for n, a in enumerate(actions):
        conv += [{"from": "gpt", "value": f"Thought: I go on.\nAction: {a}", "loss": True},
                 {"from": "human", "value": f"You moved. You are at ({n + 1}, 0)."}]
    item = {"item_id": f"maze_{task}", "conversations": conv[:-1], "reward": reward, "success": reward >= 1.0}
    if with_task_id:
        item["task_id"] = task
    return item


def test_each_failure_is_paired_with_a_success_of_its_own_task():
    explored = [episode(1, 1.0, ["move up"]), episode(1, 0.0, ["move left"]), episode(1, 0.2, ["move down"]),
                episode(2, 0.0, ["move left"]),  # no sampled success: the initial episode of task 2 is chosen
                episode(3, 0.0, ["move left"]),  # no success anywhere: no pair
                episode(4, 1.0, ["move up"])]    # no failure: no pair
    initial = [episode(2, 1.0, ["move right"], with_task_id=False), episode(9, 1.0, ["move up"], with_task_id=False)]
    pairs = dpo.pairs_for(explored, 1.0, initial)
    def action(item: dict) -> str:
        return item["conversations"][1]["value"].partition("Action: ")[2]

    assert [(p["task_id"], action(p["chosen"]), action(p["rejected"])) for p in pairs] == [
        (1, "move up", "move left"), (1, "move up", "move down"), (2, "move right", "move left")]
    assert all(p["chosen"]["reward"] >= 1.0 and p["rejected"]["reward"] < 1.0 for p in pairs)
    assert pairs[2]["chosen"]["item_id"] == "maze_2" and "task_id" not in pairs[2]["chosen"]
    assert dpo.pairs_for(explored, 1.0) == pairs[:2]  # without the initial data task 2 has no success
    assert dpo.pairs_for(explored, 0.2, initial)[0]["rejected"]["reward"] == 0.0  # the threshold decides


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    corpus = ["Thought: I go on.\nAction: move up", "Thought: I go on.\nAction: move left", "You moved. You are at",
              "Task 1: reach the goal. You are at (0, 0)."]
    return build_tiny_model(tmp_path_factory.mktemp("dpo") / "base", corpus=corpus, hidden_size=32, num_layers=1,
                            vocab_size=400)


def test_only_the_agent_replies_count_in_a_trajectory_log_prob(tiny):
    tok = AutoTokenizer.from_pretrained(str(tiny))
    item = episode(1, 1.0, ["move up", "move left"])
    ids, mask = dpo.encode(tok, item, 4096)
    assert len(ids) == len(mask) and ids == dpo.template_ids(tok, trajectories.to_messages(item))
    trained = tok.decode([i for i, m in zip(ids, mask, strict=True) if m])
    assert trained == ("Thought: I go on.\nAction: move up<|im_end|>\n"
                       "Thought: I go on.\nAction: move left<|im_end|>\n")
    item["conversations"][3]["loss"] = False  # a turn switched off in AgentTraj is context only
    _, mask2 = dpo.encode(tok, item, 4096)
    assert sum(mask2) < sum(mask)
    assert dpo.encode(tok, item, 10)[0] == ids[:10]


def test_dpo_at_the_start_is_log_two_and_training_prefers_the_chosen_replies(tiny, tmp_path):
    chosen = [episode(t, 1.0, ["move up", "move up"]) for t in range(8)]
    rejected = [episode(t, 0.0, ["move left", "move left"]) for t in range(8)]
    pairs = dpo.pairs_for(chosen + rejected, 1.0)
    assert len(pairs) == 8
    zero = torch.zeros(3)
    assert torch.allclose(dpo.dpo_loss(zero, zero, zero, zero, 0.1), torch.full((3,), math.log(2)))

    settings = dpo.DPOSettings(beta=0.5, lr=3e-3, epochs=4, batch_pairs=4)
    model_dir = dpo.train(pairs, tiny, tmp_path / "out", settings, log=tmp_path / "dpo.log")
    assert model_dir == sft.hf_dir(tmp_path / "out") and not (tmp_path / "out.partial").exists()
    log = [json.loads(line) for line in (tmp_path / "dpo.log").read_text().splitlines()]
    assert log[0]["pairs"] == 8 and log[-1]["step"] == 8
    assert log[1]["dpo_loss"] == pytest.approx(math.log(2), abs=1e-4)  # policy = reference at the first step
    assert log[-1]["dpo_loss"] < 0.5 * math.log(2) and log[-1]["accuracy"] == 1.0

    tok = AutoTokenizer.from_pretrained(str(tiny))
    before = AutoModelForCausalLM.from_pretrained(str(tiny))
    after = AutoModelForCausalLM.from_pretrained(str(model_dir))
    batch = [dpo.encode(tok, pairs[0]["chosen"], 4096), dpo.encode(tok, pairs[0]["rejected"], 4096)]
    with torch.no_grad():
        (c0, r0), _ = dpo.sequence_logps(before, batch, tok.pad_token_id)
        (c1, r1), _ = dpo.sequence_logps(after, batch, tok.pad_token_id)
    assert (c1 - r1) > (c0 - r0) + 1.0  # the chosen trajectory gained on the rejected one


def test_no_pairs_is_a_clear_error(tiny, tmp_path):
    with pytest.raises(ValueError, match="no preference pairs"):
        dpo.train([], tiny, tmp_path / "out", dpo.DPOSettings())


def test_a_stopped_dpo_run_goes_on_from_its_last_state_and_ends_where_an_unstopped_one_does(tiny, tmp_path,
                                                                                           monkeypatch):
    chosen = [episode(t, 1.0, ["move up", "move up"]) for t in range(8)]
    rejected = [episode(t, 0.0, ["move left", "move left"]) for t in range(8)]
    pairs = dpo.pairs_for(chosen + rejected, 1.0)
    settings = dpo.DPOSettings(beta=0.5, lr=3e-3, epochs=3, batch_pairs=3, save_every=4)  # 9 steps, epochs of 3
    whole = dpo.train(pairs, tiny, tmp_path / "whole", settings, log=tmp_path / "whole.log")

    real, trained = dpo.sequence_logps, []

    def counted(stop_at: int | None):
        def logps(model, batch, pad_id):
            if model.training:  # a training step's forward pass (the reference's runs in eval mode)
                trained.append(1)
                if len(trained) == stop_at:
                    raise KeyboardInterrupt
            return real(model, batch, pad_id)
        return logps

    monkeypatch.setattr(dpo, "sequence_logps", counted(stop_at=7))
    with pytest.raises(KeyboardInterrupt):
        dpo.train(pairs, tiny, tmp_path / "out", settings, log=tmp_path / "out.log")
    assert not (tmp_path / "out").exists() and (tmp_path / "out.partial" / dpo.RESUME).exists()

    trained.clear()
    monkeypatch.setattr(dpo, "sequence_logps", counted(stop_at=None))
    resumed = dpo.train(pairs, tiny, tmp_path / "out", settings, log=tmp_path / "out.log")
    assert len(trained) == 5  # steps 5-9: the state after step 4 was kept; 5 and 6 are trained again
    assert not (tmp_path / "out.partial").exists() and not list((tmp_path / "out").rglob(dpo.RESUME))
    log = [json.loads(line) for line in (tmp_path / "out.log").read_text().splitlines()]
    assert [r.get("step") for r in log] == [None, 1, 2, 3, 4, None, 5, 6, 7, 8, 9]
    assert log[5] == {"resumed_after": 4}
    unstopped = [json.loads(line) for line in (tmp_path / "whole.log").read_text().splitlines()]
    assert [r["loss"] for r in log if "loss" in r] == [r["loss"] for r in unstopped if "loss" in r]
    a = AutoModelForCausalLM.from_pretrained(str(whole)).state_dict()
    b = AutoModelForCausalLM.from_pretrained(str(resumed)).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)

    monkeypatch.setattr(dpo, "sequence_logps", counted(stop_at=len(trained) + 7))
    with pytest.raises(KeyboardInterrupt):
        dpo.train(pairs, tiny, tmp_path / "again", settings, log=tmp_path / "again.log")
    monkeypatch.setattr(dpo, "sequence_logps", real)
    other = dpo.DPOSettings(beta=0.5, lr=1e-3, epochs=3, batch_pairs=3, save_every=4)
    dpo.train(pairs, tiny, tmp_path / "again", other, log=tmp_path / "again.log")  # the state is of other settings
    log = [json.loads(line) for line in (tmp_path / "again.log").read_text().splitlines()]
    assert log[0]["lr"] == 1e-3 and not any("resumed_after" in r for r in log) and log[-1]["step"] == 9
