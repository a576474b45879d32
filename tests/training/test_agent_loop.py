"""The OpenManus agent loop against real environment servers.

The policy model is scripted (a fake ``server_manager``): a model that solves a maze
cannot be trained inside a CPU test, and the loop's job — tokens, masks, rewards,
sessions, logs — is the same whatever writes the replies. Everything else is real:
the tiny Qwen2 tokenizer, verl's token builder and output conversion, HTTP servers.
"""

from __future__ import annotations

import pytest
import torch

from agentenv.client import EnvClient
from agentenv.launcher import ServerProcess
from openmanus_rl import prompts, trajectories
from openmanus_rl.agent_loop import OpenManusAgentLoop, _train_on_action

from helpers.agent_loop import ScriptedModel, maze_tokenizer, play


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return maze_tokenizer(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def maze():
    servers = [ServerProcess("maze"), ServerProcess("maze")]
    for s in servers:
        s.launch()
    for s in servers:
        s.wait_ready()
    yield servers
    for s in servers:
        s.stop()


def first_observation(url, env, task_id, split="test"):
    with EnvClient(url) as c:
        created = c.create(task_id, split)
        c.close(created.env_id)
    return created.observation


def expert_actions(url, task_id, split="test"):
    with EnvClient(url) as c:
        env_id = c.create(task_id, split).env_id
        actions = []
        while True:
            actions.append(c.policy_action(env_id, "expert"))
            if c.step(env_id, actions[-1]).done:
                break
        c.close(env_id)
    return actions


def row(env, task_id, observation, style="env_reward", split="test", step=3):
    return {"raw_prompt": prompts.initial_messages(env, observation),
            "extra_info": {"env_name": env, "split": split, "task_id": task_id, "index": task_id},
            "reward_model": {"style": style, "ground_truth": f"{env}_{task_id}"}, "global_steps": step}


def spans(mask):
    """(start, end, value) runs of the response mask."""
    out, start = [], 0
    for i in range(1, len(mask) + 1):
        if i == len(mask) or mask[i] != mask[start]:
            out.append((start, i, mask[start]))
            start = i
    return out


def test_launchers_name_the_loop_verl_imports():
    from openmanus_rl.agent_registration import LOOP_CLASS

    assert f"{OpenManusAgentLoop.__module__}.{OpenManusAgentLoop.__qualname__}" == LOOP_CLASS


def test_successful_episode_reward_on_last_model_token(tokenizer, maze, tmp_path):
    url = maze[0].url
    actions = expert_actions(url, 0)
    model = ScriptedModel(tokenizer, [prompts.format_reply(a) for a in actions])
    kwargs = row("maze", 0, first_observation(url, "maze", 0))
    out = play(tokenizer, model, {"env_servers": {"maze": [url]}, "rollout_dir": str(tmp_path / "rollouts")},
               {"temperature": 1.0, "logprobs": True}, kwargs)

    assert out.reward_score == 1.0
    info = out.extra_fields["reward_extra_info"]
    assert info["success"] == 1.0 and info["turns"] == len(actions) and info["invalid_actions"] == 0
    # the batch verl trains on (AgentLoopOutput.as_dict feeds TransferQueue): reward only on the last token,
    # and that token is the model's
    batch = out.as_dict()
    scores, mask = batch["rm_scores"], batch["response_mask"]
    assert scores[-1] == 1.0 and scores.sum() == 1.0 and mask[-1] == 1
    assert batch["rollout_log_probs"].shape == mask.shape
    logprobs = batch["rollout_log_probs"]
    assert torch.all(logprobs[mask == 0] == 0) and torch.all(logprobs[mask == 1] == -0.5)
    # model turns are exactly the replies; environment turns hold the observations
    runs = spans(out.response_mask)
    model_runs = [tokenizer.decode(out.response_ids[a:b], skip_special_tokens=True) for a, b, v in runs if v == 1]
    env_runs = [tokenizer.decode(out.response_ids[a:b]) for a, b, v in runs if v == 0]
    assert model_runs == [prompts.format_reply(a) for a in actions]
    assert len(env_runs) == len(actions) - 1 and all("<|im_start|>user" in r for r in env_runs)
    # each turn's span and state, for step-level credit (gigpo): the span is exactly the reply's tokens
    turn_spans, states = out.extra_fields["turn_spans"], out.extra_fields["turn_states"]
    assert [tokenizer.decode(out.response_ids[a:b], skip_special_tokens=True) for a, b in turn_spans] == model_runs
    assert len(states) == len(actions) and len(set(states)) == len(actions)  # the expert never revisits a square
    assert out.extra_fields["turn_rewards"] == [0.0] * (len(actions) - 1) + [1.0]  # the environment's, per turn
    expected_prompt = tokenizer.apply_chat_template(kwargs["raw_prompt"], add_generation_prompt=True, tokenize=True)
    assert out.prompt_ids == list(getattr(expected_prompt, "input_ids", expected_prompt))
    # sessions were closed; the episode went to the rollout log of its trainer step
    with EnvClient(url) as c:
        assert c.health()["sessions"] == 0
    # a test-split row is a validation episode: it goes to val_step_<trainer step>.jsonl
    (item,) = list(trajectories.read(tmp_path / "rollouts" / "val_step_3.jsonl"))
    assert item["item_id"] == "maze_0" and item["success"] is True and item["actions"] == actions
    assert item["trained_tokens"] == int(mask.sum()) == sum(b - a for a, b in turn_spans)  # the replies only
    assert [t["from"] for t in item["conversations"]] == ["human"] + ["gpt", "human"] * (len(actions) - 1) + ["gpt"]


def test_train_on_action_keeps_only_action_lines_in_the_loss(tokenizer, maze):
    """agent.train_on=action: each reply's thought is generated and kept in the sequence but has mask 0;
    its "Action:" line and end-of-turn token have mask 1; a reply with no action line stays whole."""
    url = maze[0].url
    actions = expert_actions(url, 0)
    replies = ["no idea", *(prompts.format_reply(a) for a in actions)]  # a first reply in no accepted form
    model = ScriptedModel(tokenizer, replies)
    out = play(tokenizer, model, {"env_servers": {"maze": [url]}, "train_on": "action", "max_turns": 30},
               {"temperature": 1.0, "logprobs": True}, row("maze", 0, first_observation(url, "maze", 0)))
    assert out.extra_fields["reward_extra_info"]["success"] == 1.0
    trained = [tokenizer.decode(out.response_ids[a:b]) for a, b, v in spans(out.response_mask) if v == 1]
    assert trained[0] == "no idea<|im_end|>"
    assert trained[1:] == [f"Action: {a}<|im_end|>" for a in actions]
    thoughts = [tokenizer.decode(out.response_ids[a:b]) for a, b, v in spans(out.response_mask) if v == 0]
    states = out.extra_fields["turn_states"]
    assert states[0] != states[1] and len(states) == len(replies)  # a wasted turn is a new observation
    assert all("Thought:" in t for t in thoughts)  # generated, seen by the model, not trained
    with pytest.raises(ValueError, match="train_on"):
        play(tokenizer, model, {"env_servers": {"maze": [url]}, "train_on": "thought"}, {}, row("maze", 0, ""))


def test_train_on_action_masks_exactly_the_tokens_before_the_action_line(tokenizer):
    """The first trained token is the first whose text reaches into the last "Action:" line, for short and
    long thoughts (found by bisection; checked here against decoding every prefix)."""
    for thought in ("go", "the goal is up and I can move up or down " * 40, "Action: move up is tempting"):
        reply = prompts.format_reply("move left", thought=thought)
        ids = tokenizer.encode(reply, add_special_tokens=False) + [tokenizer.eos_token_id]
        mask = [0, 1] + [1] * len(ids)  # an earlier token of the response stays as it was
        text = tokenizer.decode(ids, skip_special_tokens=True)
        _train_on_action(mask, ids, text, tokenizer)
        start = text.rindex("Action:")
        first = next(i for i in range(len(ids))
                     if len(tokenizer.decode(ids[: i + 1], skip_special_tokens=True)) > start)
        assert mask == [0, 1] + [0] * first + [1] * (len(ids) - first)
        assert tokenizer.decode(ids[first:], skip_special_tokens=True).strip() == "Action: move left"


def test_failed_episode_gets_no_reward_and_counts_invalid_actions(tokenizer, maze):
    url = maze[0].url
    model = ScriptedModel(tokenizer, ["Thought: no idea\nAction: fly away"])
    out = play(tokenizer, model, {"env_servers": {"maze": [url]}, "max_turns": 3},
               {"temperature": 1.0, "logprobs": True}, row("maze", 1, first_observation(url, "maze", 1)))
    assert out.reward_score == 0.0 and out.as_dict()["rm_scores"].abs().sum() == 0
    info = out.extra_fields["reward_extra_info"]
    assert (info["success"], info["turns"], info["invalid_actions"], info["format_errors"]) == (0.0, 3, 3, 0)
    assert out.response_mask[-1] == 1 and out.metrics.tool_calls > 0 and out.metrics.generate_sequences > 0


def test_unparseable_reply_is_sent_as_is_and_counted(tokenizer, maze):
    url = maze[0].url
    out = play(tokenizer, ScriptedModel(tokenizer, ["move up"]), {"env_servers": {"maze": [url]}, "max_turns": 2},
               {"logprobs": False}, row("maze", 2, first_observation(url, "maze", 2)))
    info = out.extra_fields["reward_extra_info"]
    assert info["format_errors"] == 2 and info["invalid_actions"] == 0  # the maze understood "move up"
    assert out.response_logprobs is None


def test_a_rows_sample_seed_seeds_every_turn_and_is_logged(tokenizer, maze, tmp_path):
    """AgentEvol's exploration rows carry ``sample_seed``: each turn's request gets its own seed derived from it
    (the same row always samples the same episode, whatever shares the batch); rows without one stay unseeded."""
    url = maze[0].url
    settings = {"env_servers": {"maze": [url]}, "max_turns": 3, "rollout_dir": str(tmp_path / "rollouts")}

    def seeds(extra):
        model = ScriptedModel(tokenizer, [prompts.format_reply("move left")])
        kwargs = row("maze", 4, first_observation(url, "maze", 4), split="train")
        kwargs["extra_info"].update(extra)
        play(tokenizer, model, settings, {"temperature": 1.0}, kwargs)
        return [params.get("seed") for _, params in model.calls]

    first = seeds({"sample_seed": 12345, "sample": 1})
    assert len(first) == 3 and len(set(first)) == 3 and all(isinstance(x, int) for x in first)
    assert seeds({"sample_seed": 12345, "sample": 1}) == first
    assert set(seeds({"sample_seed": 12346, "sample": 0})).isdisjoint(first)
    assert seeds({}) == [None, None, None]
    logged = list(trajectories.read(tmp_path / "rollouts" / "step_3.jsonl"))
    assert [it.get("sample") for it in logged] == [1, 1, 0, None]


def test_response_budget_ends_on_a_model_token(tokenizer, maze):
    url = maze[0].url
    model = ScriptedModel(tokenizer, [prompts.format_reply("move left")])
    out = play(tokenizer, model, {"env_servers": {"maze": [url]}}, {"logprobs": True},
               row("maze", 3, first_observation(url, "maze", 3)), response_length=120)
    assert len(out.response_ids) <= 120 and out.response_mask[-1] == 1
    assert all(params["max_tokens"] <= 120 for _, params in model.calls)


def test_reward_style_shapes_partial_credit(tokenizer, tmp_path):
    with ServerProcess("wordle") as server:
        obs = first_observation(server.url, "wordle", 0)
        guesses = ["Thought: try\nAction: guess " + w for w in ("crane", "pilot", "mound", "shady", "fight", "brick")]
        results = {}
        for style in ("env_reward", "success"):
            model = ScriptedModel(tokenizer, guesses)
            results[style] = play(tokenizer, model, {"env_servers": {"wordle": [server.url]}}, {"logprobs": True},
                                  row("wordle", 0, obs, style))
    partial = results["env_reward"].extra_fields["reward_extra_info"]
    if partial["success"]:
        pytest.skip("the scripted guesses happened to solve the task")
    assert 0 < results["env_reward"].reward_score < 1 and results["env_reward"].reward_score == partial["env_reward"]
    assert results["success"].reward_score == 0.0


def test_server_dying_mid_episode_replays_it_on_another_replica(tokenizer, maze):
    spare = ServerProcess("maze")
    spare.start()
    live = maze[0].url
    actions = expert_actions(live, 4)

    def kill_on_third_call(n):
        if n == 3:
            spare.stop()

    model = ScriptedModel(tokenizer, [prompts.format_reply(a) for a in actions], on_call=kill_on_third_call)
    # the spare is listed first and is empty, so the episode starts there
    out = play(tokenizer, model, {"env_servers": {"maze": [spare.url, live]}}, {"logprobs": True},
               row("maze", 4, first_observation(live, "maze", 4)))
    assert out.reward_score == 1.0 and out.extra_fields["reward_extra_info"]["turns"] == len(actions)
    assert [t for t, _ in model.calls][:3] == [0, 1, 2] and model.calls[3][0] == 0  # restarted from turn 0


def test_rollout_rewards_equal_a_replay_on_a_fresh_server(tokenizer, tmp_path):
    """What the log records is what the environment gives for the same actions."""
    with ServerProcess("maze") as server:
        url = server.url
        scripts = {0: [prompts.format_reply(a) for a in expert_actions(url, 5, "train")],
                   1: ["Thought: go\nAction: move down", "Thought: go\nAction: move right", "Action: jump"]}
        for k, script in scripts.items():
            obs = first_observation(url, "maze", 5 + k, "train")
            play(tokenizer, ScriptedModel(tokenizer, script),
                 {"env_servers": {"maze": [url]}, "rollout_dir": str(tmp_path), "max_turns": 40},
                 {"logprobs": True}, row("maze", 5 + k, obs, split="train"))
    items = list(trajectories.read(tmp_path / "step_3.jsonl"))
    assert len(items) == 2
    with ServerProcess("maze") as fresh, EnvClient(fresh.url) as c:
        for item in items:
            env_id = c.create(item["task_id"], item["split"]).env_id
            steps = [c.step(env_id, a) for a in item["actions"]]
            c.close(env_id)
            assert sum(s.reward for s in steps) == item["reward"]
            assert steps[-1].success == item["success"]
            assert sum(not s.valid for s in steps) == item["invalid_actions"]
    assert {i["success"] for i in items} == {True, False}


def test_turn_limit_and_reply_budget_may_be_given_per_environment(tokenizer, maze):
    """``max_turns`` and ``max_new_tokens`` as mappings (openmanus_rl.per_env): maze's own entries apply; a
    mapping that names neither maze nor a default stops the episode with an error that says so."""
    url = maze[0].url
    model = ScriptedModel(tokenizer, ["Thought: no idea\nAction: fly away"])
    settings = {"env_servers": {"maze": [url]}, "max_turns": {"maze": 2, "default": 5},
                "max_new_tokens": {"babyai": 99, "maze": 7}}
    out = play(tokenizer, model, settings, {"logprobs": False}, row("maze", 1, first_observation(url, "maze", 1)))
    assert out.extra_fields["reward_extra_info"]["turns"] == 2
    assert [params["max_tokens"] for _, params in model.calls] == [7, 7]
    with pytest.raises(ValueError, match=r"agent\.max_new_tokens gives no value for 'maze'"):
        play(tokenizer, model, {**settings, "max_new_tokens": {"babyai": 99}}, {"logprobs": False},
             row("maze", 1, first_observation(url, "maze", 1)))
