"""AgentEval (`agentenv-eval`) as a user runs it, against real servers on loopback.

No mocks: environment servers are the real ones (started by the evaluator, by agentenv's launcher, or
in a thread); the OpenAI-compatible endpoint is a small FastAPI app served on 127.0.0.1 that plays the
environment's expert (it stands in for a vLLM server, which needs a GPU and a hub model); LLM
checkpoints are tiny models built in code, and the verl checkpoint is written by verl's own FSDP
checkpoint manager (gloo, world size 1, CPU).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fastapi import FastAPI, Request

from agentenv import Environment, StepResult, registry
from agentenv.actions import parse_reply as parse_action
from agentenv.errors import EnvironmentCrashed, NotSupported, ServerUnavailable, SessionNotFound, TaskNotFound
from agentenv.launcher import ServerProcess
from agentenv.rollout import server_failed
from agentenv.testing import serve_app_in_thread, serve_in_thread
from openmanus_rl import prompts, trajectories
from openmanus_rl.evaluate import main as eval_main
from openmanus_rl.policies import PolicySpecError, parse_policy_spec

from helpers import AGENTGYM_TOOL_DATA

ENVS = ("maze", "wordle", "babyai")
FULL = {"maze": 100, "wordle": 25, "babyai": 90}


# -- helpers ---------------------------------------------------------------------------------------


def cli(*args: str, env: dict[str, str] | None = None, unset: tuple[str, ...] = (),
        timeout: float = 600) -> subprocess.CompletedProcess:
    """The console script as installed (``pip install -e .``), else the module."""
    script = Path(sys.executable).with_name("agentenv-eval")
    cmd = [str(script)] if script.exists() else [sys.executable, "-m", "openmanus_rl.evaluate"]
    environ = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=timeout,
                          env={**environ, **(env or {})})


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def without_run(result: dict[str, Any]) -> dict[str, Any]:
    """A result minus what legitimately differs between runs (time, ports, counters)."""
    return {k: v for k, v in result.items() if k != "run"}


def table_rows(stdout: str) -> dict[str, list[str]]:
    lines = [ln for ln in stdout.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines]
    header, body = cells[0], cells[2:]
    return {"header": header, **{row[0]: row[1:] for row in body}}


def check_agenttraj(item: dict[str, Any], env: str) -> None:
    """An item is AgentTraj-shaped and its chat is the prompts.py chat of its actions."""
    name, task_id = trajectories.parse_item_id(item["item_id"])
    assert name == env and task_id >= 0
    conv = item["conversations"]
    assert [t["from"] for t in conv] == ["human", "gpt"] * (len(conv) // 2)
    assert len(conv) == 2 * item["turns"] and item["turns"] == len(item["actions"])
    assert conv[0]["value"].startswith(prompts.system_prompt(env) + "\n\n")
    assert [parse_action(t["value"]).action for t in conv[1::2]] == item["actions"]
    assert trajectories.loss_mask(item) == [False, True] * item["turns"]
    assert isinstance(item["reward"], float) and isinstance(item["success"], bool)


@pytest.fixture(scope="module")
def env_servers():
    """One real server per environment for in-process runs (the CLI tests start their own)."""
    servers = [ServerProcess(name) for name in ENVS]
    for s in servers:
        s.launch()
    try:
        yield {s.name: s.wait_ready() for s in servers}
    finally:
        for s in servers:
            s.stop()


def server_args(urls: dict[str, str], names=ENVS) -> list[str]:
    return [a for n in names for a in ("--server", f"{n}={urls[n]}")]


# -- scripted policies -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def expert_full(tmp_path_factory):
    """The full expert run over the three test splits, from the command line."""
    out = tmp_path_factory.mktemp("expert") / "expert.json"
    t0 = time.monotonic()
    proc = cli("--env", "maze,wordle,babyai", "--policy", "expert", "--output", str(out), "--quiet")
    return proc, out, time.monotonic() - t0


def test_expert_full_run_prints_the_table_and_writes_agenttraj(expert_full):
    proc, out, _ = expert_full
    assert proc.returncode == 0, proc.stderr
    rows = table_rows(proc.stdout)
    assert rows["header"] == ["policy", "maze", "wordle", "babyai", "avg"]
    assert all(float(v) >= 95.0 for v in rows["expert"])
    result = load(out)
    assert result["format"] == "agenteval/1" and result["label"] == "expert" and result["split"] == "test"
    for env in ENVS:
        m = result["envs"][env]
        assert m["episodes"] == FULL[env] == m["tasks"]
        assert m["success_rate"] >= 0.95 and m["invalid_rate"] == 0.0 and m["format_error_rate"] == 0.0
        assert m["server_retries"] == 0 and m["avg_turns"] > 1
    items = result["trajectories"]
    assert len(items) == sum(FULL.values())
    assert [i["item_id"] for i in items] == [f"{e}_{t}" for e in ENVS for t in range(FULL[e])]
    for item in items:
        check_agenttraj(item, item["item_id"].rsplit("_", 1)[0])
        # scripted replies are the ReAct form the parser reads (documented choice), with the expert's own
        # thought where the environment gives one (maze), a generic one elsewhere
        reply, action = item["conversations"][1]["value"], item["actions"][0]
        if item["item_id"].startswith("maze_"):
            assert reply.startswith("Thought: The goal is ") and reply.endswith(f"\nAction: {action}")
        else:
            assert reply == prompts.format_reply(action)
    for env in ENVS:
        mine = [i for i in items if i["item_id"].startswith(env + "_")]
        assert result["envs"][env]["success_rate"] == round(sum(i["success"] for i in mine) / len(mine), 4)
    # the observations in the chat are the environment's: each follows the action that led to it
    maze0 = items[0]
    assert "You are at" in maze0["conversations"][2]["value"]
    assert maze0["final_observation"] and maze0["success"] is True


def test_random_run_and_merge_into_one_table_and_chart(expert_full, tmp_path):
    proc, expert_out, _ = expert_full
    assert proc.returncode == 0, proc.stderr
    rand_out = tmp_path / "random.json"
    rand = cli("--env", "maze,wordle,babyai", "--policy", "random", "--limit", "10", "--output", str(rand_out),
               "--label", "uniform-random", "--quiet")
    assert rand.returncode == 0, rand.stderr
    result = load(rand_out)
    assert [result["envs"][e]["episodes"] for e in ENVS] == [10, 10, 10]
    assert result["average"]["success_rate"] <= 0.5
    assert result["label"] == "uniform-random"
    assert table_rows(rand.stdout)["uniform-random"][-1] == f"{100 * result['average']['success_rate']:.2f}"

    chart = tmp_path / "chart.png"
    merged = cli("merge", str(expert_out), str(rand_out), "--plot", str(chart))
    assert merged.returncode == 0, merged.stderr
    rows = table_rows(merged.stdout)
    assert rows["header"] == ["policy", "maze", "wordle", "babyai", "avg"]
    assert set(rows) == {"header", "expert", "uniform-random"}
    assert float(rows["expert"][-1]) - float(rows["uniform-random"][-1]) >= 40
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and chart.stat().st_size > 5000


def test_scripted_results_repeat_exactly(env_servers, tmp_path):
    def run(policy: str, seed: int, name: str) -> dict[str, Any]:
        out = tmp_path / name
        args = ["--policy", policy, "--limit", "4", "--seed", str(seed), "--output", str(out), "--quiet"]
        assert eval_main([*args, *server_args(env_servers)]) == 0
        return load(out)

    assert without_run(run("expert", 0, "e1.json")) == without_run(run("expert", 0, "e2.json"))
    r1, r2 = run("random", 3, "r1.json"), run("random", 3, "r2.json")
    assert without_run(r1) == without_run(r2)
    r3 = run("random", 4, "r3.json")  # the seed is really used
    assert [i["actions"] for i in r3["trajectories"]] != [i["actions"] for i in r1["trajectories"]]


# -- an OpenAI-compatible endpoint ---------------------------------------------------------------


class ExpertChatServer:
    """An OpenAI-compatible chat endpoint that plays maze's expert, and guesses "crane" in wordle.

    For maze it finds the task by the first observation in the chat, replays the actions of the
    assistant turns on its own copy of the environment and answers the expert's next action as
    ``Thought: ... Action: ...``. Two answers are deliberately off: task 1's first reply is a bare
    action (a format error the environment still understands), task 2's first reply names an action
    that does not exist (well formed, but invalid). Wordle's first observation does not reveal the
    word, so there it always answers the same valid guess.
    """

    def __init__(self, tasks: int = 4) -> None:
        self.requests: list[dict[str, Any]] = []
        maze = registry.load("maze")
        self.first_obs = {tid: maze().reset(tid, "test", 0)[0] for tid in range(tasks)}

    def answer(self, messages: list[dict[str, str]]) -> str:
        first = messages[0]["content"]
        if first.startswith(prompts.system_prompt("wordle")):
            return "Thought: a good opening word.\nAction: crane"
        (tid,) = [t for t, obs in self.first_obs.items() if first == prompts.first_user_turn("maze", obs)]
        game = registry.load("maze")()
        game.reset(tid, "test", 0)
        for m in messages[1::2]:
            game.step(parse_action(m["content"]).action)
        turn = len(messages) // 2
        action = game.expert_action()
        if (tid, turn) == (1, 0):
            return action
        if (tid, turn) == (2, 0):
            return "Thought: let me try something.\nAction: fly away"
        return f"Thought: the expert would do this.\nAction: {action}"

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/v1/models")
        async def models():
            return {"object": "list", "data": [{"id": "served-model", "object": "model"}]}

        @app.post("/v1/chat/completions")
        async def chat(request: Request):
            body = await request.json()
            reply = self.answer(body["messages"])
            self.requests.append({"auth": request.headers.get("authorization"), "body": body, "reply": reply})
            return {"id": f"c{len(self.requests)}", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                                 "finish_reason": "stop"}]}

        return app


def wordle_crane_outcomes(tasks: int) -> list[tuple[bool, int]]:
    """(success, turns) of always guessing "crane", played on a local copy of the environment."""
    outcomes = []
    for tid in range(tasks):
        game = registry.load("wordle")()
        game.reset(tid, "test", 0)
        turns = 0
        while True:
            turns += 1
            step = game.step("crane")
            if step.done or turns >= game.max_turns:
                outcomes.append((step.success, turns))
                break
    return outcomes


@pytest.fixture()
def chat_server():
    fake = ExpertChatServer()
    with serve_app_in_thread(fake.app()) as url:
        yield fake, f"{url}/v1"


def test_openai_policy_sends_the_training_chat_and_parses_replies(chat_server, tmp_path):
    fake, url = chat_server
    out = tmp_path / "openai.json"
    proc = cli("--env", "maze,wordle", "--policy", f"openai:{url}:fake-model", "--limit", "4",
               "--max-new-tokens", "64", "--output", str(out), "--quiet", env={"OPENAI_API_KEY": "sk-test"})
    assert proc.returncode == 0, proc.stderr
    result = load(out)
    items = {i["item_id"]: i for i in result["trajectories"]}
    assert len(items) == 8

    # proper requests: model, auth, bounds, and the prompts.py chat with user/assistant alternation
    assert len(fake.requests) == sum(i["turns"] for i in items.values())
    for r in fake.requests:
        body = r["body"]
        assert r["auth"] == "Bearer sk-test"
        assert body["model"] == "fake-model" and body["max_tokens"] == 64 and body["temperature"] == 0.0
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
    for obs in fake.first_obs.values():
        assert any(r["body"]["messages"][0]["content"] == prompts.first_user_turn("maze", obs) for r in fake.requests)
    # every recorded trajectory is the chat the endpoint saw, turn by turn, with the endpoint's replies
    answered = {json.dumps(r["body"]["messages"]): r["reply"] for r in fake.requests}
    for item in items.values():
        env = item["item_id"].rsplit("_", 1)[0]
        check_agenttraj(item, env)
        chat = trajectories.to_messages(item)
        for k in range(1, len(chat), 2):
            assert answered[json.dumps(chat[:k])] == chat[k]["content"]

    maze = result["envs"]["maze"]
    assert maze["success_rate"] == 1.0  # the endpoint's replies were parsed and played
    maze_turns = sum(items[f"maze_{t}"]["turns"] for t in range(4))
    assert items["maze_1"]["format_errors"] == 1 and items["maze_1"]["invalid_actions"] == 0
    assert items["maze_2"]["format_errors"] == 0 and items["maze_2"]["invalid_actions"] == 1
    assert items["maze_2"]["actions"][0] == "fly away"  # a parsed action is sent as the model wrote it
    assert maze["format_error_rate"] == round(1 / maze_turns, 4) and maze["invalid_rate"] == round(1 / maze_turns, 4)
    wordle = [(items[f"wordle_{t}"]["success"], items[f"wordle_{t}"]["turns"]) for t in range(4)]
    assert wordle == wordle_crane_outcomes(4)
    assert all(a == "crane" for t in range(4) for a in items[f"wordle_{t}"]["actions"])
    assert result["envs"]["wordle"]["invalid_rate"] == 0.0 and result["envs"]["wordle"]["format_error_rate"] == 0.0
    wordle_rate = 100 * sum(s for s, _ in wordle) / 4
    assert table_rows(proc.stdout)["openai:fake-model"][:2] == ["100.00", f"{wordle_rate:.2f}"]
    assert result["run"]["policy_stats"]["requests"] == len(fake.requests)
    assert result["run"]["machine"]["cores"] == os.cpu_count()  # what the report's times were measured on


def test_openai_policy_asks_the_endpoint_for_its_model_and_sends_no_key_without_one(chat_server, tmp_path):
    fake, url = chat_server
    out = tmp_path / "o.json"
    proc = cli("--env", "wordle", "--policy", f"openai:{url}", "--limit", "2", "--output", str(out), "--quiet",
               unset=("OPENAI_API_KEY",))
    assert proc.returncode == 0, proc.stderr
    assert fake.requests and all(r["auth"] is None and r["body"]["model"] == "served-model" for r in fake.requests)
    assert load(out)["label"] == "openai:served-model"


# -- local checkpoints -----------------------------------------------------------------------------


def loud_tiny_model(path: Path) -> Path:
    """build_tiny_model with larger random weights, so greedy replies depend on the prompt (the default
    init answers newlines to everything, which would make batching and seeding tests vacuous)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from openmanus_rl.tiny_model import build_tiny_model

    base = build_tiny_model(path.parent / "tiny-base")
    model = AutoModelForCausalLM.from_pretrained(base)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(base).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return loud_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


def test_hf_batched_generation_is_left_padded_and_bounded(tiny):
    from openmanus_rl.policies.chat import ChatRequest, GenerationSettings
    from openmanus_rl.policies.hf import HFBackend, load_model

    model, tok = load_model(tiny)
    backend = HFBackend(model, tok, GenerationSettings(max_new_tokens=10))
    reqs = [ChatRequest(prompts.initial_messages("maze", "Find the goal. " + "x " * k), "maze", k, 0)
            for k in (1, 9, 40)]
    batched = backend.generate(reqs)
    assert batched == [backend.generate([r])[0] for r in reqs]  # padding never changes a reply
    assert len(set(batched)) == 3  # replies depend on the prompt (the check above is not vacuous)
    assert backend.batch_sizes == [3, 1, 1, 1] and 0 < backend.longest_reply <= 10

    # the next turn starts from the keys and values of the first (prompt + reply), and replies as if it had
    # encoded the whole conversation again
    fresh = HFBackend(model, tok, GenerationSettings(max_new_tokens=10), prefix_cache_tokens=0)
    backend.prefix_cache.clear()
    backend.generate(reqs)
    nexts = [ChatRequest([*r.messages, {"role": "assistant", "content": reply.text},
                          {"role": "user", "content": "You moved. " + "y " * r.task_id}], "maze", r.task_id, 1)
             for r, reply in zip(reqs, batched, strict=True)]
    hits = backend.prefix_cache.hits
    assert backend.generate(nexts) == fresh.generate(nexts)
    assert backend.prefix_cache.hits > hits and fresh.prefix_cache is None


def test_hf_policy_runs_episodes_end_to_end_with_lockstep_batches(tiny, tmp_path):
    out = tmp_path / "hf.json"
    proc = cli("--env", "maze,wordle,babyai", "--policy", f"hf:{tiny}", "--limit", "4", "--concurrency", "3",
               "--max-turns", "3", "--max-new-tokens", "12", "--output", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert table_rows(proc.stdout)["hf:tiny"] == ["0.00", "0.00", "0.00", "0.00"]
    result = load(out)
    assert result["generation"] == {"max_new_tokens": 12, "temperature": 0.0, "top_p": 1.0, "seed": 0}
    for env in ENVS:
        m = result["envs"][env]
        assert m["episodes"] == 4 and m["avg_turns"] == 3.0 and m["max_turns"] == 3
        assert m["format_error_rate"] > 0.5 and m["invalid_rate"] > 0.5  # random weights: gibberish
    # tasks 0-2 play in lockstep (3 turns, batches of 3), then task 3 alone: per environment 3x3, 3x1
    stats = result["run"]["policy_stats"]
    assert stats["generate_calls"] == 18 and stats["max_batch"] == 3 and stats["mean_batch"] == 2.0
    assert 0 < stats["longest_reply_tokens"] <= 12
    assert stats["prefix_cache_hit_tokens"] > 0  # turns 2 and 3 start from their episode's earlier turns
    for item in result["trajectories"]:
        check_agenttraj(item, item["item_id"].rsplit("_", 1)[0])
        assert item["turns"] == 3 and item["success"] is False


def test_task_counts_turn_limits_and_reply_budgets_per_environment(tiny, env_servers, tmp_path):
    from openmanus_rl.policies.chat import ChatRequest, GenerationSettings
    from openmanus_rl.policies.hf import HFBackend, load_model

    # a reply budget per environment: the same prompt, greedy, stops after 3 tokens for maze and 10 for the rest
    model, tok = load_model(tiny)
    backend = HFBackend(model, tok, GenerationSettings(max_new_tokens={"maze": 3, "default": 10}))
    messages = prompts.initial_messages("maze", "Find the goal.")
    short, long = backend.generate([ChatRequest(messages, "maze", 0, 0), ChatRequest(messages, "wordle", 0, 0)])
    assert short.cut and long.text.startswith(short.text) and len(long.text) > len(short.text)

    out = tmp_path / "per_env.json"
    assert eval_main(["--policy", f"hf:{tiny}", "--limit", "{maze: 2, wordle: 1}", "--concurrency", "2", "--max-turns",
                      "{maze: 2, default: 3}", "--max-new-tokens", "{maze: 4, wordle: 6}", "--output", str(out),
                      "--quiet", *server_args(env_servers, ("maze", "wordle"))]) == 0
    result = load(out)
    assert result["max_turns"] == {"maze": 2, "wordle": 3} and result["limit"] == {"maze": 2, "wordle": 1}
    assert {e: len([i for i in result["trajectories"] if i["item_id"].startswith(e)]) for e in ("maze", "wordle")} \
        == {"maze": 2, "wordle": 1}
    assert result["generation"]["max_new_tokens"] == {"maze": 4, "wordle": 6}
    for env, turns in (("maze", 2), ("wordle", 3)):  # random weights never finish: every episode runs to its cap
        assert result["envs"][env]["max_turns"] == turns and result["envs"][env]["avg_turns"] == turns


def test_hf_results_repeat_with_the_same_seed(tiny, env_servers, tmp_path):
    def run(name: str, *extra: str) -> dict[str, Any]:
        out = tmp_path / name
        args = ["--policy", f"hf:{tiny}", "--limit", "3", "--concurrency", "2", "--max-turns", "2",
                "--max-new-tokens", "8", "--output", str(out), "--quiet", *extra]
        assert eval_main([*args, *server_args(env_servers, ("maze", "wordle"))]) == 0
        return load(out)

    def replies(result: dict[str, Any]) -> list[str]:
        return [t["value"] for i in result["trajectories"] for t in i["conversations"] if t["from"] == "gpt"]

    assert without_run(run("g1.json")) == without_run(run("g2.json"))  # greedy
    sampled = ("--temperature", "1.0", "--seed", "7")
    s1, s2 = run("s1.json", *sampled), run("s2.json", *sampled)
    assert without_run(s1) == without_run(s2)
    s3 = run("s3.json", "--temperature", "1.0", "--seed", "8")
    assert replies(s3) != replies(s1)


VERL_CHECKPOINT_SCRIPT = textwrap.dedent("""
    import os, sys
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from verl.utils.checkpoint.fsdp_checkpoint_manager import FSDPCheckpointManager

    model_dir, root, port = sys.argv[1], sys.argv[2], sys.argv[3]
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    dist.init_process_group("gloo", rank=0, world_size=1)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("fsdp",))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    manager = FSDPCheckpointManager(model, None, processing_class=AutoTokenizer.from_pretrained(model_dir),
                                    checkpoint_config={"save_contents": ["model"], "load_contents": ["model"]})
    manager.save_checkpoint(os.path.join(root, "global_step_3", "actor"), global_step=3)
    with open(os.path.join(root, "latest_checkpointed_iteration.txt"), "w") as f:  # as verl's trainer does
        f.write("3")
    dist.destroy_process_group()
""")


@pytest.fixture(scope="module")
def verl_checkpoint(tiny, tmp_path_factory) -> Path:
    import socket

    root = tmp_path_factory.mktemp("verl") / "checkpoints"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run([sys.executable, "-c", VERL_CHECKPOINT_SCRIPT, str(tiny), str(root), str(port)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root


def test_verl_checkpoint_is_merged_with_verls_merger(verl_checkpoint, tiny, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from openmanus_rl.policies.verl_ckpt import CheckpointError, actor_dir, transformers_dir

    actor = verl_checkpoint / "global_step_3" / "actor"
    assert sorted(p.name for p in actor.iterdir()) == ["fsdp_config.json", "huggingface",
                                                       "model_world_size_1_rank_0.pt"]
    for form in (verl_checkpoint, verl_checkpoint / "global_step_3", actor):
        assert actor_dir(form) == actor
    with pytest.raises(CheckpointError, match="not a verl checkpoint"):
        actor_dir(tiny)
    with transformers_dir(verl_checkpoint) as merged:
        got = AutoModelForCausalLM.from_pretrained(merged, dtype=torch.float32).state_dict()
        assert merged != actor / "huggingface"
    assert not merged.exists()  # the temporary merge is gone
    want = AutoModelForCausalLM.from_pretrained(tiny).state_dict()
    assert got.keys() == want.keys()
    assert all(torch.allclose(got[k], want[k], atol=0.02, rtol=0.01) for k in want)  # verl merges to bf16

    out = tmp_path / "verl.json"
    proc = cli("--env", "maze", "--policy", f"verl:{verl_checkpoint}", "--limit", "2",
               "--max-turns", "2", "--max-new-tokens", "8", "--output", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = load(out)
    assert result["label"] == "verl:global_step_3" and result["policy"] == f"verl:{verl_checkpoint}"
    assert result["envs"]["maze"]["episodes"] == 2 and result["envs"]["maze"]["avg_turns"] == 2.0
    assert "verl:global_step_3" in table_rows(proc.stdout)


def test_verl_checkpoint_with_full_hf_weights_is_loaded_as_is(tiny, tmp_path):
    from openmanus_rl.policies.verl_ckpt import transformers_dir

    hf = tmp_path / "global_step_1" / "actor" / "huggingface"
    shutil.copytree(tiny, hf)  # checkpoint.save_contents with hf_model: the full model in huggingface/
    with transformers_dir(tmp_path / "global_step_1") as path:
        assert path == hf


# -- server failures ---------------------------------------------------------------------------------


class FlakyEnv(Environment):
    """Its first step of each even task raises once (a 500); the expert says 'finish'."""

    name = "flaky"
    max_turns = 4
    failed: ClassVar[set[int]] = set()
    broken_task: ClassVar[int | None] = None

    @classmethod
    def num_tasks(cls, split):
        return 6

    def reset(self, task_id, split, seed=None):
        self.task = task_id
        return f"task {task_id}: say finish", {}

    def step(self, action):
        if self.task == type(self).broken_task:
            raise RuntimeError("this task always breaks the server")
        if self.task % 2 == 0 and self.task not in type(self).failed:
            type(self).failed.add(self.task)
            raise RuntimeError("transient failure")
        return StepResult("done", reward=1.0, done=True, success=True, score=1.0)

    def observation(self):
        return f"task {self.task}"

    def expert_action(self):
        return "finish"


def test_an_episode_whose_server_failed_is_rerun_not_scored(tmp_path):
    FlakyEnv.failed.clear()
    out = tmp_path / "flaky.json"
    with serve_in_thread(FlakyEnv) as url:
        code = eval_main(["--server", f"flaky={url}", "--policy", "expert", "--output", str(out), "--quiet"])
    assert code == 0
    m = load(out)["envs"]["flaky"]
    assert m["episodes"] == 6 and m["success_rate"] == 1.0 and m["server_retries"] == 3
    assert FlakyEnv.failed == {0, 2, 4}


def test_a_server_that_keeps_failing_aborts_without_output(tmp_path, capsys):
    class BrokenEnv(FlakyEnv):
        name = "broken"
        broken_task = 1

    out = tmp_path / "broken.json"
    with serve_in_thread(BrokenEnv) as url:
        code = eval_main(["--server", f"broken={url}", "--policy", "expert", "--retries", "1", "--output", str(out),
                          "--quiet"])
    assert code == 1
    err = capsys.readouterr().err
    assert "evaluation failed" in err and "always breaks the server" in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_what_counts_as_a_server_failure():
    assert server_failed(ServerUnavailable("down")) and server_failed(EnvironmentCrashed("boom"))
    assert server_failed(SessionNotFound("restarted server forgot it"))
    assert not server_failed(NotSupported("no expert")) and not server_failed(TaskNotFound("bad id"))
    assert not server_failed(ValueError("a policy bug"))


# -- bad input ------------------------------------------------------------------------------------


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("args,message", [
    (["--env", "maze,nope", "--policy", "expert"], "unknown environment 'nope'"),
    (["--env", "maze", "--policy", "gpt4:whatever"], "unknown policy 'gpt4:whatever'"),
    (["--env", "maze", "--policy", "expert", "--server", f"maze=http://127.0.0.1:{_closed_port()}"],
     "is unreachable"),
    (["--env", "maze", "--policy", "hf:/no/such/checkpoint"], "is not a directory"),
    (["--env", "maze", "--policy", f"verl:{Path(__file__).parent}"], "not a verl checkpoint"),
    (["--env", "maze", "--policy", "openai:localhost:8000"], "needs an http(s) base URL"),
    (["--env", "maze", "--policy", "expert", "--server", "maze"], "--server takes NAME=URL"),
    (["--env", "maze", "--policy", "expert", "--limit", "0"], "--limit for maze must be a positive int, not 0"),
    (["--env", "maze", "--policy", "expert", "--concurrency", "0"], "--concurrency must be at least 1"),
    (["--env", "maze", "--policy", "expert", "--limit", "{wordle: 3}"], "--limit gives no value for 'maze'"),
    (["--suite", "agenteval", "--env", "maze", "--policy", "expert", "--items", "/no/such/dir"],
     "--suite agenteval needs AgentGym's published item ids"),
    (["--env", "maze", "--policy", "expert", "--items", "/no/such/dir"], "--items goes with --suite agenteval"),
    (["--env", "maze", "--policy", "expert", "--max-turns", "{maze: 5, mazee: 3}"], "names mazee, neither"),
    (["--env", "maze", "--policy", "expert", "--max-new-tokens", "{wordle: 5}"], "gives no value for 'maze'"),
    (["--env", "maze", "--policy", "expert", "--max-turns", "{maze: 0}"], "must be a positive int, not 0"),
    (["--env", "maze", "--policy", "expert", "--max-turns", "many"], "--max-turns takes a number or a mapping"),
    (["--env", "maze", "--policy", "expert", "--max-new-tokens", "{maze: null}"], "must be a positive int, not None"),
])
def test_bad_input_is_a_clear_error_and_writes_nothing(args, message, tmp_path):
    out = tmp_path / "sub" / "result.json"
    proc = cli(*args, "--output", str(out), "--quiet", timeout=120)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert message in proc.stderr and proc.stderr.startswith("agentenv-eval: ")
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not out.parent.exists()


def test_a_server_of_another_environment_is_refused(env_servers, tmp_path, capsys):
    out = tmp_path / "x.json"
    assert eval_main(["--env", "wordle", "--policy", "expert", "--server", f"wordle={env_servers['maze']}",
                      "--output", str(out), "--quiet"]) == 2
    assert "serves 'maze', not 'wordle'" in capsys.readouterr().err and not out.exists()


def test_merge_refuses_files_that_are_not_results(tmp_path):
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    proc = cli("merge", str(bogus))
    assert proc.returncode == 2 and "not an agentenv-eval result file" in proc.stderr


def test_policy_specs():
    assert parse_policy_spec("expert").kind == "expert"
    s = parse_policy_spec("openai:http://10.0.0.1:8000/v1:Qwen/Qwen2.5-7B-Instruct")
    assert (s.target, s.model, s.label) == ("http://10.0.0.1:8000/v1", "Qwen/Qwen2.5-7B-Instruct",
                                            "openai:Qwen/Qwen2.5-7B-Instruct")
    s = parse_policy_spec("openai:http://10.0.0.1:8000/v1")
    assert (s.target, s.model) == ("http://10.0.0.1:8000/v1", None)
    s = parse_policy_spec("openai:https://api.example.com:443")
    assert (s.target, s.model) == ("https://api.example.com:443", None)
    assert parse_policy_spec("verl:/runs/x/global_step_40/actor").label == "verl:global_step_40"
    assert parse_policy_spec("hf:/models/qwen-0.5b/").label == "hf:qwen-0.5b"
    for bad in ("hf:", "expert2", "random:x", "openai:ftp://x"):
        with pytest.raises(PolicySpecError):
            parse_policy_spec(bad)


def test_options_reach_the_servers_it_starts(capsys):
    """``--option NAME.KEY=VALUE`` is handed to the environment's server, which refuses a key it does not take."""
    assert eval_main(["--env", "maze", "--policy", "expert", "--option", "maze.nope=1", "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["agentenv-eval: could not start the maze server: agentenv: bad option for maze: nope: "
                   "Extra inputs are not permitted (options it takes: progress_reward)"]
    assert eval_main(["--env", "maze", "--policy", "expert", "--option", "nope=1"]) == 2
    assert "--option takes NAME.KEY=VALUE" in capsys.readouterr().err


# -- AgentEval: the published items on AgentGym's servers -----------------------------------------------------


def test_agenteval_suite_plays_exactly_the_published_items_and_reports_agentgyms_metric(tiny, tmp_path):
    """``--suite agenteval`` plays the items of a published list (here a made-up list of three, one twice) in its
    order on an AgentGym-protocol server (this project's maze server with ``--compat agentgym`` standing in for
    LMRL-Gym's), reports AgentGym's metric beside the success rate, and lists what it could not run and why: an
    environment without an AgentEval list, and one whose only server is this project's own (its own tasks)."""
    from agentenv.launcher import ServerProcess

    (tmp_path / "items" / "eval").mkdir(parents=True)
    (tmp_path / "items" / "eval" / "lmrlgym_maze_test.json").write_text(
        json.dumps([{"item_id": f"lmrlgym_maze_{i}"} for i in (3, 8, 3)]))
    (tmp_path / "items" / "eval" / "tool_weather_test.json").write_text('[{"item_id": "tool_weather_3"}]')
    out = tmp_path / "agenteval.json"
    with ServerProcess("maze", extra_args=["--compat", "agentgym"]) as upstream:
        proc = cli("--suite", "agenteval", "--items", str(tmp_path / "items"), "--env", "maze,wordle,weather",
                   "--policy", f"hf:{tiny}", "--server", f"maze=agentgym+{upstream.url}#maze", "--max-turns", "3",
                   "--max-new-tokens", "8", "--output", str(out), "--quiet")
        assert proc.returncode == 0, proc.stderr[-3000:]
        refused = cli("--suite", "agenteval", "--items", str(tmp_path / "items"), "--env", "weather", "--policy",
                      f"hf:{tiny}", "--quiet")
    result = load(out)
    assert result["suite"] == "agenteval" and list(result["envs"]) == ["maze"]
    maze = result["envs"]["maze"]
    assert maze["episodes"] == maze["tasks"] == 3 and {"agentgym_score", "agentgym_success"} <= set(maze)
    assert [t["agentgym_index"] for t in result["trajectories"]] == [3, 8, 3]
    assert "no AgentEval list" in result["not_run"]["wordle"]
    assert "no agentgym profile here, and its own tasks are not AgentEval's" in result["not_run"]["weather"]
    assert "not run: weather: it has no agentgym profile here" in proc.stdout
    assert refused.returncode == 2 and "no environment of --suite agenteval can run here: weather" in refused.stderr


def test_agenteval_suite_offline_in_the_agentgym_profile(tmp_path):
    """With no server given, an environment with an agentgym profile plays AgentEval's items on this project's
    server in that profile (upstream index N = its task N): ``--policy expert`` solves them all; a server given
    that plays the native tasks is refused with the way out."""
    (tmp_path / "items" / "eval").mkdir(parents=True)
    (tmp_path / "items" / "eval" / "lmrlgym_maze_test.json").write_text(
        json.dumps([{"item_id": f"lmrlgym_maze_{i}"} for i in (24, 0, 16)]))
    out = tmp_path / "agenteval.json"
    proc = cli("--suite", "agenteval", "--items", str(tmp_path / "items"), "--env", "maze", "--policy", "expert",
               "--output", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    maze = load(out)["envs"]["maze"]
    assert (maze["tasks"], maze["success_rate"], maze["agentgym_score"], maze["agentgym_success"]) == (3, 1.0, 1.0, 1.0)
    assert [t["agentgym_index"] for t in load(out)["trajectories"]] == [24, 0, 16]
    assert "maze" in proc.stdout and "agentgym_score" in proc.stdout  # the table
    with ServerProcess("maze") as native:
        refused = cli("--suite", "agenteval", "--items", str(tmp_path / "items"), "--env", "maze", "--policy",
                      "expert", "--server", f"maze={native.url}", "--quiet")
    assert refused.returncode == 2 and "give none (its agentgym profile is served)" in refused.stderr


def test_agenteval_lists_a_profile_that_cannot_load_its_data_as_not_run(tmp_path, monkeypatch):
    """todo's agentgym profile reads AgentGym's files from a path: without one the suite says so and runs the rest;
    with the path given as the environment's option it plays offline."""
    from openmanus_rl.evaluate import agenteval_envs

    (tmp_path / "eval").mkdir()
    for prefix in ("tool_todo", "lmrlgym_maze"):
        (tmp_path / "eval" / f"{prefix}_test.json").write_text(json.dumps([{"item_id": f"{prefix}_1"}]))
    monkeypatch.delenv("AGENTGYM_TOOL_DATA", raising=False)
    runnable, not_run, offline = agenteval_envs(["maze", "todo"], {}, tmp_path)
    assert runnable == ["maze"] and offline == {"maze": [1]}
    assert "its agentgym profile cannot start here" in not_run["todo"] and "AGENTGYM_TOOL_DATA" in not_run["todo"]
    data = AGENTGYM_TOOL_DATA
    if (data / "todo.jsonl").is_file():
        runnable, not_run, offline = agenteval_envs(["todo"], {}, tmp_path, {"todo": {"data_dir": str(data)}})
        assert (runnable, not_run, offline) == (["todo"], {}, {"todo": [1]})
