"""Expert trajectories, behaviour cloning with verl's SFT trainer, and the AgentEvol loop (train_agentevol.sh).

Real maze servers on loopback, verl's real SFT trainer under torchrun, a tiny model built in code.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
import torch

from agentenv.launcher import env_servers
from openmanus_rl import expert_data, sft, trajectories
from openmanus_rl.agentevol.explore import filter_successes

from helpers import REPO as ROOT

ENV = dict(os.environ, TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
ENV.pop("VERL_PLATFORM", None)
ENV.pop("OPENMANUS_VERL_CPU", None)
cpu_only = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU preset tests run on CPU-only hosts")

# a small but complete run: BC on 16 expert episodes, one AgentEvol iteration exploring 24 instructions through
# verl (the default backend), 5 SFT steps each (16 items in batches of 8: three passes, verl stops at step 5)
SMALL = ["tiny.hidden_size=32", "tiny.num_layers=1", "tiny.vocab_size=600", "data.bc_tasks=16",
         "data.explore_tasks=24", "explore.max_new_tokens=16", "explore.verl.max_response_length=1024",
         "eval.tasks=6", "eval.max_new_tokens=16", "sft.steps=5", "sft.batch_size=8", "sft.max_length=1024",
         "sft.warmup_steps=1"]


@pytest.fixture(scope="module")
def maze_urls():
    with env_servers(["maze"]) as urls:
        yield urls


@pytest.fixture(scope="module")
def expert_file(tmp_path_factory, maze_urls):
    out = tmp_path_factory.mktemp("expert")
    return expert_data.collect(["maze"], out, max_per_env=12, urls=maze_urls)["maze"]


def test_expert_trajectories_are_successful_react_agenttraj_with_a_cap(expert_file):
    items = list(trajectories.read(expert_file))
    assert len(items) == 12  # the cap; the maze expert solves every task
    assert [it["item_id"] for it in items] == [f"maze_{i}" for i in range(12)]
    for it in items:
        assert it["success"] and it["reward"] >= 1.0
        conv = it["conversations"]
        assert conv[0]["from"] == "human" and conv[0]["value"].startswith("You are an agent in a text environment")
        assert [t["from"] for t in conv] == ["human", "gpt"] * (len(conv) // 2)
        assert all(t["loss"] is (t["from"] == "gpt") for t in conv)
        assert all(t["value"].startswith("Thought: ") and "\nAction: move " in t["value"]
                   for t in conv if t["from"] == "gpt")
        assert len(it["actions"]) == len(conv) // 2


def test_a_published_json_array_file_loads_unchanged(expert_file, tmp_path):
    items = list(trajectories.read(expert_file))
    array = tmp_path / "agenttraj.json"
    array.write_text(json.dumps([{k: it[k] for k in ("item_id", "conversations")} for it in items]))
    assert [sft.sft_row(i) for i in sft.read_items([array])] == [sft.sft_row(i) for i in items]


def test_only_successes_pass_the_threshold_the_server_declares(maze_urls):
    items = [{"reward": r, "success": s} for r, s in [(1.0, True), (0.0, False), (0.06, True), (0.04, False)]]
    assert expert_data.success_threshold(maze_urls["maze"]) == 1.0  # from /info, no environment import
    assert expert_data.successful(items, 1.0) == items[:1]
    assert expert_data.successful(items, 0.05) == [items[0], items[2]]  # babyai's threshold
    assert expert_data.successful(items, None) == [items[0], items[2]]  # unknown env: its success flag
    # a shaped failure (progress_reward) can reach the threshold; a published file without the flag is judged by reward
    assert expert_data.successful([{"reward": 1.3, "success": False}, {"reward": 1.0}], 1.0) == [{"reward": 1.0}]


def test_the_filter_drops_unfinished_episodes_a_progress_reward_lifts_over_the_threshold(tmp_path):
    """Real maze servers paying 0.5 a step of progress: the expert, stopped by a 4-turn limit before the goal,
    earns a reward at or above maze's threshold of 1.0 without success; exploration's filter keeps none of those
    and every finished one."""
    with env_servers(["maze"], options={"maze": {"progress_reward": 0.5}}) as urls:
        short = expert_data.play(urls, ["maze"], "expert", tasks=24, max_turns=4)["trajectories"]
        full = expert_data.play(urls, ["maze"], "expert", tasks=24)["trajectories"]
        for name, items in (("short", short), ("full", full)):
            trajectories.write(tmp_path / name / "explore" / "maze.jsonl", items)
            filter_successes(urls, ["maze"], tmp_path / name)
    lifted = [it for it in short if it["reward"] >= 1.0 and not it["success"]]
    assert len(lifted) >= 5  # the case the flag is for occurs
    kept = list(trajectories.read(tmp_path / "short" / "filtered" / "maze.jsonl"))
    assert {it["item_id"] for it in kept} == {it["item_id"] for it in short if it["success"]}
    assert len(list(trajectories.read(tmp_path / "full" / "filtered" / "maze.jsonl"))) == len(full) == 24


@cpu_only
def test_sft_ranks_default_to_one_per_core_dividing_the_batch(monkeypatch):
    for cores, batch, want in ((1, 16, 1), (2, 16, 2), (3, 16, 2), (6, 16, 4), (8, 6, 6), (64, 16, 16), (4, 5, 1)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, n=cores: set(range(n)))
        assert sft.default_nproc(batch) == want, (cores, batch)
    cmd = sft.sft_command("d.parquet", "m", "out", batch_size=16)
    assert cmd[cmd.index("--nproc_per_node") + 1] == "4" and "trainer.n_gpus_per_node=4" in cmd  # 4 cores: the last
    cmd = sft.sft_command("d.parquet", "m", "out", batch_size=16, nproc=1)
    assert cmd[cmd.index("--nproc_per_node") + 1] == "1" and "trainer.n_gpus_per_node=1" in cmd


def test_verl_sft_dataset_trains_on_agent_turns_only(expert_file, tmp_path):
    from transformers import AutoTokenizer

    from openmanus_rl.sft_dataset import AgentTrajSFTDataset
    from openmanus_rl.tiny_model import build_tiny_model

    items = list(trajectories.read(expert_file))[:2]
    items[1]["conversations"][1]["loss"] = False  # AgentTraj may switch single agent turns off
    path = build_tiny_model(tmp_path / "m", corpus=[t["value"] for it in items for t in it["conversations"]],
                            hidden_size=32, num_layers=1, vocab_size=600)
    sft.write_sft_parquet(items, tmp_path / "d.parquet")
    tok = AutoTokenizer.from_pretrained(path)
    from omegaconf import OmegaConf

    ds = AgentTrajSFTDataset([str(tmp_path / "d.parquet")], tok, OmegaConf.create(
        {"max_length": 4096, "truncation": "error", "pad_mode": "no_padding"}))
    for it, row in zip(items, (ds[0], ds[1]), strict=True):
        ids, mask = row["input_ids"].tolist(), row["loss_mask"].tolist()
        trained = [tok.decode([t for t, m in zip(ids, mask, strict=True) if m])]
        replies = [t["value"] + "<|im_end|>\n" for t in it["conversations"] if t["from"] == "gpt" and t["loss"]]
        assert trained == ["".join(replies)]  # every reply (with its end token), no observation, no prompt
    assert tok.decode(ds[1]["input_ids"]).count("Action: move") == len(items[1]["actions"])


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# files whose contents legitimately differ between two identical runs: the trainer's log, the stages' wall
# times (timings.json, timings.txt), the machine of each start (machines.jsonl), verl's
# FSDP2 shards and optimizer/extra state (torch.save pickles of DTensors: not byte-stable even between two
# uninterrupted runs; the full weights in huggingface/model.safetensors are compared byte for byte)
VOLATILE = re.compile(r"sft\.log|timings\.json|timings\.txt|machines\.jsonl"
                      r"|(model|extra_state)_world_size_\d+_rank_\d+\.pt")


def _run(out: Path, *extra: str, kill_after: str | None = None) -> subprocess.CompletedProcess | None:
    # exploration by the hf runner: two verl start-ups less (verl's exploration has its own test below)
    cmd = [str(ROOT / "train_agentevol.sh"), "--env_name", "maze", "--iterations", "1", "--model", "tiny",
           "--output_dir", str(out), *SMALL, "explore.backend=hf", *extra]
    if kill_after is None:
        return subprocess.run(cmd, capture_output=True, text=True, env=ENV, cwd=out.parent, timeout=600)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV, cwd=out.parent,
                            start_new_session=True)
    deadline = time.time() + 600
    while not (out / kill_after).exists():
        assert proc.poll() is None, "the run ended before the point where the test kills it"
        assert time.time() < deadline
        time.sleep(0.2)
    time.sleep(3)  # well inside the next sub-step (verl's SFT trainer is starting up)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    return None


@cpu_only
def test_agentevol_runs_and_a_killed_run_resumes_to_the_same_files(tmp_path):
    full, resumed = tmp_path / "full", tmp_path / "resumed"
    t0 = time.time()
    done = _run(full)
    seconds = time.time() - t0
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]

    # the outputs of an uninterrupted run
    for k in (0, 1):
        ev = json.loads((full / f"iter_{k}" / "eval.json").read_text())
        assert set(ev["envs"]["maze"]) >= {"success_rate", "avg_reward", "episodes"}
        assert ev["envs"]["maze"]["episodes"] == 6
        ckpt = full / f"iter_{k}" / "checkpoint"
        assert (sft.hf_dir(ckpt) / "model.safetensors").is_file()
        losses = sft.losses(full / f"iter_{k}" / "sft.log")
        assert len(losses) == 5 and losses[-1] < losses[0]  # the step budget, not whole passes
        lrs = sft.metric(full / f"iter_{k}" / "sft.log", "train/lr")  # cosine from the peak to 0.1 of it
        peak = 3e-3 if k == 0 else 3e-4  # sft.lr for BC, sft.iteration_lr for the iterations
        assert peak * 1.001 >= lrs[1] > lrs[2] > lrs[3] > lrs[4] >= 0.1 * peak * 0.999, lrs
    # the checkpoint loads as the evaluator's verl: policy (and its huggingface/ as hf: / train_ppo --model)
    from openmanus_rl.policies import GenerationSettings, PolicySpec, build_policy

    assert build_policy(PolicySpec("verl", str(full / "iter_1" / "checkpoint")), GenerationSettings()).name
    explored = list(trajectories.read(full / "iter_1" / "explore" / "maze.jsonl"))
    kept = list(trajectories.read(full / "iter_1" / "filtered" / "maze.jsonl"))
    assert len(explored) == 24 and all(it["success"] for it in kept) and {it["item_id"] for it in kept} <= {
        it["item_id"] for it in explored if it["success"]}
    explored_rate = 100 * sum(bool(it["success"]) for it in explored) / 24  # printed as the stage went
    assert f"agentevol:   maze: {explored_rate:.1f}% of 24 train tasks explored (" in done.stdout
    import pandas as pd

    assert len(pd.read_parquet(full / "iter_0" / "sft_data.parquet")) == 16
    assert len(pd.read_parquet(full / "iter_1" / "sft_data.parquet")) == 16 + len(kept)
    table = (full / "table.txt").read_text()
    assert "untrained" in table and "0 (BC)" in table and "\n1 | " in table and table in done.stdout
    assert (full / "success_rate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((full / "summary.json").read_text())
    assert [r["iteration"] for r in summary["rows"]] == ["untrained", "0", "1"]
    times = (full / "timings.txt").read_text().splitlines()  # every stage's wall time, and the sum
    assert [line.split(" | ")[0] for line in times[2:]] == ["expert trajectories", "untrained", "0 (BC)", "1",
                                                             "all stages"]
    assert "-" not in times[5].split(" | ") and "wall time\n" + "\n".join(times) in done.stdout
    assert set(json.loads((full / "iter_1" / "timings.json").read_text())) == {"explore", "filter", "sft", "eval"}
    started = [json.loads(line) for line in (full / "machines.jsonl").read_text().splitlines()]
    assert len(started) == 1 and started[0]["cores"] == os.cpu_count() and started[0]["torch"] == torch.__version__

    # killed during behaviour cloning (verl's SFT trainer under torchrun), then resumed: the earliest kill that
    # leaves finished sub-steps to skip, so the two runs together cost little more than one
    _run(resumed, kill_after="untrained/.done/eval")
    assert not (resumed / "iter_0" / ".done" / "sft").exists() and not (resumed / "table.txt").exists()
    again = _run(resumed)
    assert again.returncode == 0, again.stdout[-4000:] + again.stderr[-4000:]
    for step in ("expert trajectories", "evaluate the untrained model"):
        assert f"agentevol: {step}" in again.stdout and f"{step}: done already, skipped" in again.stdout
    # the interrupted sub-step is redone, and every later one runs
    assert "agentevol: iteration 0: fine-tune (behaviour cloning) ..." in again.stdout
    assert "agentevol: iteration 1: fine-tune ..." in again.stdout and "done already" not in again.stdout.split(
        "iteration 0: fine-tune")[-1]

    assert len((resumed / "machines.jsonl").read_text().splitlines()) == 2  # a line per start: both halves' machine
    a, b = _tree(full), _tree(resumed)
    assert sorted(a) == sorted(b)  # same file set: nothing lost, no leftovers of the killed sub-step
    differ = sorted(f for f in a if a[f] != b[f])
    assert all(VOLATILE.fullmatch(Path(f).name) or f == "agentevol_config.yaml" for f in differ), differ
    assert any(f.endswith("huggingface/model.safetensors") for f in a)
    print(f"\nAgentEvol small run: {seconds:.0f} s; files differing after resume: {differ}")


@cpu_only
def test_exploration_through_verl_validation_only_with_the_openmanus_agent_loop(tmp_path, maze_urls, expert_file):
    """explore.backend=verl: verl's main_ppo (val_only) samples n trajectories per instruction through the
    OpenManus agent loop and the rollout replicas; the loop's log becomes explore/<env>.jsonl."""
    from omegaconf import OmegaConf

    from openmanus_rl import agentevol

    args, extra = agentevol.parse_args(["--env_name", "maze", "--output_dir", str(tmp_path),
                                        "data.explore_tasks={maze: 3, default: 50}",  # per environment
                                        "data.explore_start={maze: 4, default: 0}",
                                        "explore.samples_per_instruction=2", "explore.max_new_tokens=8",
                                        "explore.verl.max_response_length=256", "tiny.hidden_size=32",
                                        "tiny.num_layers=1", "tiny.vocab_size=600"])
    cfg = agentevol.load_config(args, extra)
    model = agentevol.base_model(cfg, tmp_path, [expert_file])
    agentevol.explore_verl(maze_urls, ["maze"], model, cfg, tmp_path / "iter_1", seed=1)
    items = list(trajectories.read(tmp_path / "iter_1" / "explore" / "maze.jsonl"))
    assert [(it["item_id"], it["sample"]) for it in items] == [(f"maze_{t}", j) for t in (4, 5, 6) for j in range(2)]
    for it in items:
        assert it["split"] == "train" and it["conversations"][0]["from"] == "human"
        assert [t["from"] for t in it["conversations"][1:3]] == ["gpt", "human"][: len(it["conversations"]) - 1]
        assert it["turns"] >= 1 and it["success"] is False  # an untrained model does not solve a maze
    assert not (tmp_path / "iter_1" / "explore_verl.partial").exists()
    assert OmegaConf.select(cfg, "explore.backend") == "verl"  # the default: the PPO path


@cpu_only
def test_learning_from_failures_adds_dpo_on_pairs_after_the_iterations_fine_tune(tmp_path):
    """dpo.enabled: the iteration pairs each explored failure with a success of its task (here the initial expert
    episode: a 5-step BC model solves no maze) and its evaluated model is the DPO result on top of the fine-tune."""
    out = tmp_path / "dpo"
    done = _run(out, "dpo.enabled=true", "dpo.epochs=1", "dpo.batch_pairs=4", "eval.untrained=false",
                "max_turns={maze: 4, default: 9}", "eval.max_new_tokens={maze: 16}",  # per environment (per_env)
                "data.explore_tasks={maze: 20, wordle: 5}")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    it1 = out / "iter_1"
    explored = list(trajectories.read(it1 / "explore" / "maze.jsonl"))
    assert [it["item_id"] for it in explored] == [f"maze_{t}" for t in range(20)]
    failed = {it["item_id"] for it in explored if not it["success"]}
    pairs = list(trajectories.read(it1 / "pairs" / "maze.jsonl"))
    # the failures of the 16 BC tasks (0..15) have an expert episode to be paired with; tasks 16..19 do not
    assert {p["rejected"]["item_id"] for p in pairs} == {i for i in failed if int(i.split("_")[1]) < 16}
    assert pairs and all(p["chosen"]["item_id"] == p["rejected"]["item_id"] and p["chosen"]["success"]
                         for p in pairs)
    log = [json.loads(line) for line in (it1 / "dpo.log").read_text().splitlines()]
    assert log[0]["pairs"] == len(pairs) and log[-1]["step"] == -(-len(pairs) // 4)
    assert "iteration 1: DPO" in done.stdout
    assert f", {len(pairs)} pairs | " in (out / "table.txt").read_text().splitlines()[-1] + " | "
    evaluated = list(trajectories.read(it1 / "eval_trajectories.jsonl"))  # the run's turn limit, not maze's 20
    assert max(it["turns"] for it in explored + evaluated) == 4
    assert re.search(r"agentevol:   maze: \d+\.\d% of 6 test tasks", done.stdout)
    sft_weights = (sft.hf_dir(it1 / "checkpoint") / "model.safetensors").read_bytes()
    assert (sft.hf_dir(it1 / "dpo_checkpoint") / "model.safetensors").read_bytes() != sft_weights
    assert set(json.loads((it1 / "timings.json").read_text())) == {"explore", "filter", "sft", "pairs", "dpo",
                                                                  "eval"}


def _started_from(sft_log: Path) -> str:
    return re.search(r" model\.path=(\S+)", sft_log.read_text().splitlines()[0]).group(1)


@cpu_only
def test_merge_init_bc_fine_tunes_every_iteration_from_the_bc_model(tmp_path):
    """merge.init=bc: each iteration's model is BC's plus one fine-tune on the merged data (no drift compounds),
    while each iteration still explores with the model of the iteration before. The same run sets
    data.explore_fresh (iteration 2 explores the 24 instructions after iteration 1's) and data.copy_episodes
    (3 synthetic copy episodes join the expert episodes in BC and in both merges)."""
    out = tmp_path / "bc"
    done = _run(out, "--iterations", "2", "merge.init=bc", "eval.untrained=false", "eval.tasks=2", "max_turns=4",
                "data.explore_fresh=true", "data.copy_episodes=3", "data.copy_turns=2")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    import pandas as pd

    copies = list(trajectories.read(out / "copy" / "episodes.jsonl"))
    assert len(copies) == 3 and all(len(it["conversations"]) == 4 for it in copies)
    for k in (0, 1, 2):
        rows = pd.read_parquet(out / f"iter_{k}" / "sft_data.parquet")
        assert len(rows) == 16 + 3 and (rows["data_source"] == "copy").sum() == 3
    assert [[it["item_id"] for it in trajectories.read(out / f"iter_{k}" / "explore" / "maze.jsonl")]
            for k in (1, 2)] == [[f"maze_{t}" for t in range(24)], [f"maze_{t}" for t in range(24, 48)]]
    bc = str(sft.hf_dir(out / "iter_0" / "checkpoint"))
    assert _started_from(out / "iter_1" / "sft.log") == bc and _started_from(out / "iter_2" / "sft.log") == bc
    # a 5-step BC model solves no maze, so both iterations fine-tune BC's weights on the same 16 expert episodes
    # with the same seed: the same model twice (continuing iteration 1, as merge.init=previous does, would not be)
    assert [len(list(trajectories.read(out / f"iter_{k}" / "filtered" / "maze.jsonl"))) for k in (1, 2)] == [0, 0]
    w0, w1, w2 = [(sft.hf_dir(out / f"iter_{k}" / "checkpoint") / "model.safetensors").read_bytes() for k in (0, 1, 2)]
    assert w1 == w2 != w0


def test_the_fine_tunes_start_where_merge_init_says():
    from openmanus_rl.agentevol.loop import finetune_start

    models = {"base": "B", "bc": "C", "previous": "P"}
    for how in ("base", "previous", "bc"):
        assert finetune_start(how, 0, **models) == "B"  # BC always starts from the base model
    assert [finetune_start(how, 2, **models) for how in ("base", "previous", "bc")] == ["B", "P", "C"]
    with pytest.raises(ValueError, match=re.escape("merge.init is base|previous|bc, not 'last'")):
        finetune_start("last", 1, **models)
    with pytest.raises(ValueError, match=re.escape("iteration 0 (BC) has no model yet")):
        finetune_start("bc", 1, base="B", bc=None, previous="P")


def test_an_unknown_merge_stops_the_run_with_the_choices():
    from openmanus_rl import agentevol

    with pytest.raises(SystemExit, match=re.escape("merge.init is base|previous|bc")):
        agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", "merge.init=last"]))


def test_hf_exploration_plays_the_train_tasks_from_its_start(tmp_path, maze_urls, expert_file):
    """explore.backend=hf with data.explore_start: tasks START..START+N-1, each draw once; a start past the split
    is a clear error before any episode."""
    from openmanus_rl import agentevol

    args, extra = agentevol.parse_args(["--env_name", "maze", "--output_dir", str(tmp_path), "explore.backend=hf",
                                        "data.explore_tasks=3", "data.explore_start=4998",  # maze has 5,000
                                        "explore.samples_per_instruction=2", "explore.max_new_tokens=8",
                                        "max_turns=2", "tiny.hidden_size=32", "tiny.num_layers=1",
                                        "tiny.vocab_size=600"])
    cfg = agentevol.load_config(args, extra)
    model = agentevol.base_model(cfg, tmp_path, [expert_file])
    agentevol.explore(maze_urls, ["maze"], model, cfg, tmp_path / "iter_1", seed=1)
    items = list(trajectories.read(tmp_path / "iter_1" / "explore" / "maze.jsonl"))
    assert sorted((it["item_id"], it["sample"]) for it in items) == [(f"maze_{t}", j) for t in (4998, 4999)
                                                                     for j in range(2)]  # the split's end
    cfg.data.explore_start = 5000
    with pytest.raises(Exception, match="the train split of maze has 5000 tasks; it cannot start at task 5000"):
        agentevol.explore(maze_urls, ["maze"], model, cfg, tmp_path / "iter_2", seed=1)


def test_fresh_exploration_moves_on_a_block_each_iteration_and_wraps_at_the_split_end(tmp_path, maze_urls,
                                                                                      expert_file):
    """data.explore_fresh: iteration k plays the N train tasks after iteration k-1's block; a block that would
    run past the split's end (maze has 5,000) starts again at task 0. Without it every iteration plays the same."""
    from openmanus_rl import agentevol
    from openmanus_rl.agentevol.config import explore_block_start

    assert [explore_block_start(400, 600, k, 5000) for k in (1, 2, 3)] == [400, 1000, 1600]
    assert [explore_block_start(200, 100, k, 300) for k in (1, 2, 3)] == [200, 0, 100]  # movie: 300 train tasks
    assert [explore_block_start(0, 100, k, 444) for k in range(1, 7)] == [0, 100, 200, 300, 0, 100]

    args, extra = agentevol.parse_args(["--env_name", "maze", "--output_dir", str(tmp_path), "explore.backend=hf",
                                        "data.explore_tasks=3", "data.explore_start=4994", "data.explore_fresh=true",
                                        "explore.max_new_tokens=8", "max_turns=2", "tiny.hidden_size=32",
                                        "tiny.num_layers=1", "tiny.vocab_size=600"])
    cfg = agentevol.load_config(args, extra)
    model = agentevol.base_model(cfg, tmp_path, [expert_file])
    played = {}
    for k in (1, 2, 3):
        agentevol.explore(maze_urls, ["maze"], model, cfg, tmp_path / f"iter_{k}", seed=1, iteration=k)
        played[k] = [it["item_id"] for it in trajectories.read(tmp_path / f"iter_{k}" / "explore" / "maze.jsonl")]
    assert played == {1: ["maze_4994", "maze_4995", "maze_4996"], 2: ["maze_4997", "maze_4998", "maze_4999"],
                      3: ["maze_0", "maze_1", "maze_2"]}
    cfg.data.explore_fresh = False
    agentevol.explore(maze_urls, ["maze"], model, cfg, tmp_path / "same", seed=1, iteration=3)
    assert [it["item_id"] for it in trajectories.read(tmp_path / "same" / "explore" / "maze.jsonl")] == played[1]


def test_explore_fresh_is_true_or_false():
    from openmanus_rl import agentevol

    with pytest.raises(SystemExit, match=re.escape("data.explore_fresh is true or false, not 'sometimes'")):
        agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", "data.explore_fresh=sometimes"]))


@pytest.mark.parametrize("setting", ["data.copy_episodes=-1", "data.copy_episodes=many", "data.copy_turns=0",
                                     "data.copy_episodes=2.5"])
def test_copy_episode_settings_are_whole_counts(setting):
    from openmanus_rl import agentevol

    with pytest.raises(SystemExit, match=re.escape("data.copy_episodes is a count >= 0 and data.copy_turns one >= 1")):
        agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", setting]))
    cfg = agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", "data.copy_episodes=600"]))
    assert cfg.data.copy_episodes == 600 and cfg.data.copy_turns == 8


def test_expert_caps_are_per_environment_for_played_and_given_trajectories(expert_file, maze_urls, tmp_path):
    paths = expert_data.collect(["maze", "given"], tmp_path, {"maze": 5, "given": 3}, maze_urls,
                                given={"given": expert_file})
    assert [it["item_id"] for it in trajectories.read(paths["maze"])] == [f"maze_{i}" for i in range(5)]
    assert [it["item_id"] for it in trajectories.read(paths["given"])] == [f"maze_{i}" for i in range(3)]


@pytest.mark.parametrize(("setting", "message"), [
    ("data.explore_tasks={wordle: 300}", "data.explore_tasks gives no value for 'maze'"),
    ("data.explore_tasks={maze: 0}", "data.explore_tasks for maze must be a positive int, not 0"),
    ("data.bc_tasks={babyai: 200}", "data.bc_tasks gives no value for 'maze'"),
    ("data.explore_tasks={maze: 30, mazee: 3}", "data.explore_tasks names mazee, neither"),
    ("eval.tasks={babyai: 50}", "eval.tasks gives no value for 'maze'"),
    ("data.explore_start={maze: -1}", "data.explore_start for maze must be an int of at least 0, not -1"),
])
def test_a_per_environment_setting_that_misses_an_environment_stops_the_run(setting, message, capsys):
    from openmanus_rl import agentevol
    from openmanus_rl.agentevol.config import check_per_env

    cfg = agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", setting]))
    with pytest.raises(SystemExit) as stop:
        check_per_env(cfg, ["maze"])
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_task_counts_are_one_for_all_or_per_environment():
    from openmanus_rl import agentevol
    from openmanus_rl.agentevol.config import bc_counts, check_per_env, eval_counts, explore_counts

    cfg = agentevol.load_config(*agentevol.parse_args(["--env_name", "maze,babyai", "data.explore_tasks={maze: 900,"
                                                       " default: 300}"]))
    assert explore_counts(cfg, ["maze", "babyai"]) == {"maze": 900, "babyai": 300}
    assert bc_counts(cfg, ["maze", "babyai"]) == {"maze": 600, "babyai": 600}  # configs/agentevol.yaml's one
    cfg.data.bc_tasks = {"babyai": 400, "default": 200}
    assert bc_counts(cfg, ["maze", "babyai"]) == {"maze": 200, "babyai": 400}
    cfg = agentevol.load_config(*agentevol.parse_args(["--env_name", "maze,babyai", "eval.tasks={maze: 100}"]))
    with pytest.raises(SystemExit):
        check_per_env(cfg, ["maze", "babyai"])
    cfg.eval.tasks = {"maze": 100, "default": None}  # null: the whole split
    assert eval_counts(cfg, ["maze", "babyai"]) == {"maze": 100, "babyai": None}


def test_command_line_values_are_read_in_hydras_grammar_as_train_ppo_reads_them():
    """``1e-5`` is a float (YAML 1.1 reads it as a string, which pydantic or verl would refuse or misread), and
    ``a,b``, hydra's sweep, stops the run with the way to write a list or a string instead."""
    from openmanus_rl import agentevol

    cfg = agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", "dpo.lr=1e-5", "verl.optim.lr=3e-6",
                                                       "max_turns={maze: 4, default: null}"]))
    assert cfg.dpo.lr == 1e-5 and isinstance(cfg.dpo.lr, float)
    assert cfg.verl["optim.lr"] == 3e-6 and isinstance(cfg.verl["optim.lr"], float)
    assert cfg.max_turns == {"maze": 4, "default": None}
    with pytest.raises(SystemExit, match=r"dpo\.beta=0\.1,0\.5 is a sweep in hydra's grammar; a list is \[a, b\]"):
        agentevol.load_config(*agentevol.parse_args(["--env_name", "maze", "dpo.beta=0.1,0.5"]))
