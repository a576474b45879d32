"""Expert demonstrations in RL groups (``agent.demos``): the agent loop replays a recorded success for the first
sample of a group, on a real maze server, and hands the episode to the model where the recording stops fitting.

The model is scripted (a fake ``server_manager``, as in test_agent_loop.py); servers, tokenizer and verl's token
builder are real."""

from __future__ import annotations

import json

import pytest

from agentenv.client import EnvClient
from agentenv.launcher import ServerProcess
from openmanus_rl import demos, episode_metrics, prompts, run_summary, trajectories

from helpers.agent_loop import ScriptedModel, maze_tokenizer, play

TASKS = (3, 5)


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return maze_tokenizer(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def maze():
    with ServerProcess("maze") as server:
        yield server


def record_expert(url: str, task_id: int) -> dict:
    """A successful expert episode of a train task as an AgentTraj item, the way AgentEvol's expert/ holds it."""
    with EnvClient(url) as c:
        created = c.create(task_id, "train")
        messages = prompts.initial_messages("maze", created.observation)
        actions, reward = [], 0.0
        while True:
            action = c.policy_action(created.env_id, "expert")
            messages.append({"role": "assistant", "content": prompts.format_reply(action, "I go on.")})
            step = c.step(created.env_id, action)
            actions.append(action)
            reward += step.reward
            if step.done:
                break
            messages.append(prompts.observation_message(step.observation))
        c.close(created.env_id)
    return trajectories.from_messages("maze", task_id, messages, reward=reward, success=True, actions=actions)


@pytest.fixture(scope="module")
def demo_dir(maze, tmp_path_factory):
    folder = tmp_path_factory.mktemp("expert")
    items = [record_expert(maze.url, t) for t in TASKS]
    failed = {**record_expert(maze.url, 7), "success": False}  # a recorded failure is no demonstration
    trajectories.write(folder / "maze.jsonl", [*items, failed])
    return folder


def row(url: str, task_id: int, step: int | None, split: str = "train") -> dict:
    with EnvClient(url) as c:
        created = c.create(task_id, split)
        c.close(created.env_id)
    out = {"raw_prompt": prompts.initial_messages("maze", created.observation),
           "extra_info": {"env_name": "maze", "split": split, "task_id": task_id, "index": task_id},
           "reward_model": {"style": "env_reward", "ground_truth": f"maze_{task_id}"}}
    return {**out, "global_steps": step} if step is not None else out


SAMPLING = {"temperature": 1.0, "logprobs": True}


def settings(url, demo_spec, **more):
    return {"env_servers": {"maze": [url]}, "max_turns": 30, "max_new_tokens": 64, "demos": demo_spec, **more}


def test_the_first_sample_of_a_group_replays_the_expert_and_the_others_sample(tokenizer, maze, demo_dir, tmp_path):
    expert = {d["item_id"]: d for d in trajectories.read(demo_dir / "maze.jsonl")}["maze_3"]
    model = ScriptedModel(tokenizer, [prompts.format_reply("move up")])
    conf = settings(maze.url, str(demo_dir), rollout_dir=str(tmp_path / "rollouts"))
    kwargs = row(maze.url, 3, step=101)
    first, second = (play(tokenizer, model, conf, SAMPLING, kwargs) for _ in range(2))

    # the replay: every reply is the recording's, the model is never asked, the environment rewards it
    info = first.extra_fields["reward_extra_info"]
    assert info["demo"] == 1.0 and info["demo_turns"] == info["turns"] == len(expert["actions"])
    assert info["success"] == 1.0 and first.reward_score == pytest.approx(expert["reward"])
    replies = [t["value"] for t in expert["conversations"][1::2]]
    text = tokenizer.decode([t for t, m in zip(first.response_ids, first.response_mask, strict=True) if m])
    assert text.replace("<|im_end|>", "") == "".join(replies)
    assert first.response_logprobs is not None and len(first.response_logprobs) == len(first.response_ids)
    assert first.extra_fields["min_global_steps"] == 100  # training step N samples with weights N-1
    # the same group's next sample is the model's
    assert second.extra_fields["reward_extra_info"]["demo"] == 0.0 and len(model.calls) >= 1
    assert second.extra_fields["reward_extra_info"]["demo_turns"] == 0
    # the next step's group of the same task gets its demonstration again
    calls = len(model.calls)
    third = play(tokenizer, model, conf, SAMPLING, row(maze.url, 3, step=102))
    assert third.extra_fields["reward_extra_info"]["demo"] == 1.0 and len(model.calls) == calls

    # the rollout log marks it, and the step's summary keeps it out of the model's success rate
    log = list(trajectories.read(tmp_path / "rollouts" / "step_101.jsonl"))
    assert [bool(i.get("demo")) for i in log] == [True, False]
    summary = run_summary.summarize_file(tmp_path / "rollouts" / "step_101.jsonl")["maze"]
    assert summary["episodes"] == 1 and summary["demos"] == 1
    assert summary["success_rate"] == float(second.extra_fields["reward_extra_info"]["success"])
    means = episode_metrics.per_environment(["maze", "maze"], [first.extra_fields["reward_extra_info"],
                                                               second.extra_fields["reward_extra_info"]])
    assert means["episode/maze/count"] == 1 and means["episode/maze/demos"] == 1
    assert means["episode/maze/success"] == second.extra_fields["reward_extra_info"]["success"]


def test_validation_tasks_without_a_recording_and_a_zero_share_always_sample(tokenizer, maze, demo_dir):
    model = ScriptedModel(tokenizer, [prompts.format_reply("move up")])
    for kwargs, conf in ((row(maze.url, 3, step=None, split="test"), settings(maze.url, str(demo_dir))),
                         (row(maze.url, 9, step=201), settings(maze.url, str(demo_dir))),  # no recording of task 9
                         (row(maze.url, 7, step=201), settings(maze.url, str(demo_dir))),  # a recorded failure
                         (row(maze.url, 5, step=201), settings(maze.url, str(demo_dir), demos_per_group=0))):
        out = play(tokenizer, model, conf, SAMPLING, kwargs)
        assert out.extra_fields["reward_extra_info"]["demo"] == 0.0
    assert len(model.calls) >= 4


def test_a_replay_hands_over_to_the_model_where_the_environment_departs_from_the_recording(tokenizer, maze,
                                                                                           tmp_path):
    item = record_expert(maze.url, 5)
    assert len(item["actions"]) >= 3
    item["conversations"][2]["value"] = "You are somewhere else."  # the second observation no longer fits
    path = tmp_path / "maze.jsonl"
    trajectories.write(path, [item])
    model = ScriptedModel(tokenizer, [prompts.format_reply("move up")])
    out = play(tokenizer, model, settings(maze.url, {"maze": str(path)}, max_turns=4), SAMPLING,
               row(maze.url, 5, step=7))
    info = out.extra_fields["reward_extra_info"]
    assert info["demo"] == 1.0 and info["demo_turns"] == 1 and info["turns"] == 4
    assert [turn for turn, _ in model.calls] == [1, 2, 3]  # the model wrote every turn after the first


def test_demonstration_files_are_checked_and_read(tmp_path, demo_dir):
    assert demos.files(str(demo_dir), ["maze", "babyai"]) == {"maze": demo_dir / "maze.jsonl"}
    assert demos.files(None, ["maze"]) == {}
    with pytest.raises(ValueError, match="is not a directory"):
        demos.files(str(tmp_path / "nowhere"), ["maze"])
    with pytest.raises(ValueError, match="names babyai, which this run does not train on"):
        demos.files({"babyai": str(demo_dir / "maze.jsonl")}, ["maze"])
    with pytest.raises(ValueError, match="no such file"):
        demos.files({"maze": str(tmp_path / "maze.jsonl")}, ["maze"])
    found = demos.load(demo_dir / "maze.jsonl", "maze")
    assert sorted(found) == list(TASKS)  # the recorded failure is left out
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item_id": "maze_1", "conversations": [
        {"from": "human", "value": "a"}, {"from": "human", "value": "b"}]}) + "\n")
    with pytest.raises(ValueError, match="does not alternate"):
        demos.load(bad, "maze")


def test_claims_give_each_group_its_share():
    claims = demos.Claims(per_group=2)
    assert [claims.claim(1, "maze", 4) for _ in range(3)] == [True, True, False]
    assert claims.claim(1, "maze", 5) and claims.claim(2, "maze", 4)
