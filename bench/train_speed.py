"""How close the CPU training path comes to what the hardware allows, on real maze AgentTraj data.

    .venv/bin/python bench/train_speed.py [--steps 12] [--turns 12] [--episodes 16] [--model DIR]

(a) **SFT**: verl's SFT trainer as AgentEvol runs it (torchrun, configs/machine/cpu_sft.yaml, the
    batch size, length, ranks and threads of configs/agentevol.yaml: on CPU one single-threaded gloo
    rank per core) against a plain PyTorch loop in one process on the same model, the same rows
    tokenized by the same dataset class (same loss mask), batches of the same size padded to their
    longest row, AdamW, as many threads as the config's threads times ranks (all the cores). Tokens/s
    counts real (unpadded) tokens of the steps after the first.
(b) **Generation**: the CPU rollout replica (``HFRolloutServer``, in process: what verl's agent
    loop calls each turn with the whole conversation) against transformers' ``generate`` carrying
    its KV cache from turn to turn, on one episode of expert observations with replies of a fixed
    length; then the replica with ``--episodes`` episodes at once (no plain counterpart).

Prints one table; the ratios are replica / plain (1.0: as fast as the plain loop).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from uuid import uuid4

import torch
from omegaconf import OmegaConf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from openmanus_rl import sft, trajectories  # noqa: E402
from openmanus_rl.agentevol import tiny_corpus  # noqa: E402
from openmanus_rl.expert_data import collect  # noqa: E402

# -- (a) SFT --------------------------------------------------------------------------------------------
_STEP = re.compile(r"step:(\d+) - .*?train/global_tokens:(\d+)")
_ELAPSED = re.compile(r"Epoch \d+/\d+:[^|]*\|[^|]*\| *(\d+)/\d+ \[(\d+):(\d+)<")


def verl_sft(parquet: Path, model: str, out: Path, steps: int, s: dict) -> tuple[float, float]:
    """(tokens/s of steps 2..N, wall seconds of the whole run) of verl's SFT trainer."""
    env = {"OPENMANUS_VERL_CPU_THREADS": str(s["threads"])} if s.get("threads") else {}
    t0 = time.monotonic()
    sft.train(parquet, model, out, log=out.with_suffix(".log"), epochs=1, batch_size=s["batch_size"], lr=s["lr"],
              max_length=s["max_length"], nproc=s["nproc"], preset="cpu_sft", env=env,
              extra=[f"trainer.total_training_steps={steps}"])
    wall = time.monotonic() - t0
    text = out.with_suffix(".log").read_text()
    tokens = {int(m.group(1)): int(m.group(2)) for m in _STEP.finditer(text)}
    # tqdm's elapsed time at each finished step (1 s resolution: use enough steps)
    elapsed = [(int(m.group(1)), 60 * int(m.group(2)) + int(m.group(3))) for m in _ELAPSED.finditer(text)]
    at = {}
    for step, sec in elapsed:
        at.setdefault(step, sec)
    first, last = min(at, key=lambda k: (k < 1, k)), max(at)  # from the end of step 1
    if last <= first or at[last] <= at[first]:
        raise RuntimeError(f"too few steps to time verl's SFT trainer (log {out.with_suffix('.log')})")
    done = sum(n for k, n in tokens.items() if first < k <= last)
    return done / (at[last] - at[first]), wall


def plain_sft(parquet: Path, model_dir: str, steps: int, s: dict) -> float:
    """Tokens/s of steps 2..N of a plain PyTorch loop on the same rows and loss mask."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from openmanus_rl.sft_dataset import AgentTrajSFTDataset

    ranks = sft.resolve_nproc(s.get("nproc"), s["batch_size"])
    torch.set_num_threads(int(s.get("threads") or 1) * ranks)  # the cores verl's ranks use, in one process
    tok = AutoTokenizer.from_pretrained(model_dir)
    data = AgentTrajSFTDataset(str(parquet), tok, {"max_length": s["max_length"], "truncation": "right",
                                                   "pad_mode": "no_padding"})
    model = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation="sdpa", dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=s["lr"])
    bsz, n, tokens, start = s["batch_size"], len(data), 0, 0.0
    for step in range(steps):
        rows = [data[(step * bsz + i) % n] for i in range(bsz)]
        length = max(len(r["input_ids"]) for r in rows)
        ids = torch.full((bsz, length), tok.pad_token_id or 0, dtype=torch.long)
        mask = torch.zeros((bsz, length), dtype=torch.long)
        loss_mask = torch.zeros((bsz, length))
        for i, r in enumerate(rows):
            k = len(r["input_ids"])
            ids[i, :k], mask[i, :k], loss_mask[i, :k] = r["input_ids"], 1, r["loss_mask"].float()
        if step == 1:
            start, tokens = time.monotonic(), 0
        logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1]
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                                                reduction="none").view(bsz, -1)
        weight = loss_mask[:, 1:]
        loss = (nll * weight).sum() / weight.sum().clamp(min=1)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        tokens += int(mask.sum())
    return tokens / (time.monotonic() - start)


# -- (b) generation ---------------------------------------------------------------------------------------
def episode_turns(item: dict, tok, turns: int) -> tuple[list[int], list[list[int]]]:
    """The first prompt and ``turns`` observations that follow, as the agent loop tokenizes them (the
    episode's observations again from the start when it has fewer: a wandering agent's episode)."""
    messages = trajectories.to_messages(item)
    text = tok.apply_chat_template(messages[:1], add_generation_prompt=True, tokenize=False)
    first = tok.encode(text, add_special_tokens=False)
    obs = []
    for m in messages[2::2]:
        text = f"<|im_end|>\n<|im_start|>user\n{m['content']}<|im_end|>\n<|im_start|>assistant\n"
        obs.append(tok.encode(text, add_special_tokens=False))
    return list(first), [obs[i % len(obs)] for i in range(turns)]


async def replica_tokens_per_s(server, first: list[int], observations: list[list[int]], reply: int,
                               episodes: int) -> float:
    async def one(e: int) -> int:
        ids, n = list(first), 0
        for obs in observations:
            out = await server.generate(prompt_ids=ids, sampling_params={"temperature": 1.0, "max_tokens": reply,
                                                                         "ignore_eos": True},
                                      request_id=uuid4().hex)  # a fresh id every turn, as verl's client sends
            ids += list(out.token_ids) + obs
            n += len(out.token_ids)
        return n

    t0 = time.monotonic()
    n = sum(await asyncio.gather(*[one(e) for e in range(episodes)]))
    return n / (time.monotonic() - t0)


async def replica_rates(server, first: list[int], observations: list[list[int]], reply: int,
                        episodes: int) -> tuple[float, float]:
    """(1 episode, ``episodes`` at once) tokens/s after a short warm-up, on one event loop."""
    await replica_tokens_per_s(server, first, observations[:2], reply, 1)
    one = await replica_tokens_per_s(server, first, observations, reply, 1)
    many = await replica_tokens_per_s(server, first, observations, reply, episodes)
    return one, many


def plain_generate_tokens_per_s(model, first: list[int], observations: list[list[int]], reply: int) -> float:
    from transformers import DynamicCache

    cache, ids, n = DynamicCache(), torch.tensor([first]), 0
    t0 = time.monotonic()
    with torch.no_grad():
        for obs in observations:
            out = model.generate(ids, attention_mask=torch.ones_like(ids), past_key_values=cache, do_sample=True,
                                 max_new_tokens=reply, min_new_tokens=reply, pad_token_id=0)
            n += out.shape[1] - ids.shape[1]
            ids = torch.cat([out, torch.tensor([obs])], dim=1)
    return n / (time.monotonic() - t0)


def make_server(model_dir: str, threads: int | None, prefix_cache_tokens: int):
    from transformers import AutoTokenizer

    from openmanus_rl.verl_cpu.rollout import HFRolloutServer

    config = {"prompt_length": 4096, "response_length": 4096, "max_num_seqs": 256, "seed": 0,
              "engine_kwargs": {"hf": {"batch_wait_ms": 20, "dtype": "float32",
                                       "prefix_cache_tokens": prefix_cache_tokens,
                                       **({"num_threads": threads} if threads else {})}}}
    model_config = SimpleNamespace(local_path=model_dir, tokenizer=AutoTokenizer.from_pretrained(model_dir),
                                   generation_config=None, trust_remote_code=False)
    return HFRolloutServer(config=config, model_config=model_config)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", help="a transformers directory (default: the tiny model built on the maze data)")
    p.add_argument("--steps", type=int, default=12, help="SFT steps of each trainer")
    p.add_argument("--turns", type=int, default=20, help="turns of the generation episode (maze's limit: 20)")
    p.add_argument("--reply", type=int, default=32, help="tokens per reply")
    p.add_argument("--episodes", type=int, default=32, help="episodes at once for the batched replica rows")
    p.add_argument("--skip", choices=["sft", "generation"], action="append", default=[])
    p.add_argument("--work", type=Path, default=None, help="working directory (default: a temporary one)")
    args = p.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="train_speed_"))
    work.mkdir(parents=True, exist_ok=True)
    agentevol = OmegaConf.to_container(OmegaConf.load(ROOT / "configs" / "agentevol.yaml"))
    s = agentevol["sft"]
    # one epoch holds all the SFT steps (tqdm's elapsed time restarts every epoch)
    expert = collect(["maze"], work / "expert", max_per_env=s["batch_size"] * args.steps)["maze"]
    items = list(trajectories.read(expert))
    if args.model:
        model_dir = args.model
    else:
        from openmanus_rl.tiny_model import build_tiny_model

        model_dir = str(build_tiny_model(work / "model", corpus=tiny_corpus([expert]), **agentevol["tiny"]))
    rows: list[tuple[str, str, str, str]] = []

    if "sft" not in args.skip:
        parquet = work / "sft.parquet"
        sft.write_sft_parquet(items, parquet)
        verl_rate, verl_wall = verl_sft(parquet, model_dir, work / "verl_sft", args.steps, s)
        plain_rate = plain_sft(parquet, model_dir, args.steps, s)
        rows += [("SFT", "verl SFT trainer (AgentEvol's settings)", f"{verl_rate:,.0f}",
                  f"{verl_rate / plain_rate:.2f}"),
                 ("SFT", "plain PyTorch loop", f"{plain_rate:,.0f}", "1.00"),
                 ("SFT", f"verl run of {args.steps} steps, wall incl. start-up", f"{verl_wall:.0f} s", "")]

    if "generation" not in args.skip:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        threads = s.get("threads")
        if threads:
            torch.set_num_threads(int(threads))
        tok = AutoTokenizer.from_pretrained(model_dir)
        longest = max(items, key=lambda it: len(it["conversations"]))
        first, observations = episode_turns(longest, tok, args.turns)
        model = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation="sdpa").eval()
        plain = plain_generate_tokens_per_s(model, first, observations, args.reply)
        turns = len(observations)
        for label, cache_tokens in (("prefix cache off", 0), ("prefix cache on", 1 << 18)):
            server = make_server(model_dir, threads, cache_tokens)
            one, many = asyncio.run(replica_rates(server, first, observations, args.reply, args.episodes))
            rows += [("generation", f"rollout replica ({label}), 1 episode of {turns} turns", f"{one:,.0f}",
                      f"{one / plain:.2f}"),
                     ("generation", f"rollout replica ({label}), {args.episodes} episodes at once", f"{many:,.0f}",
                      "")]
        rows.append(("generation", "transformers generate, KV cache carried, 1 episode", f"{plain:,.0f}", "1.00"))

    print(f"\nmodel {model_dir}, {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}")
    print("| part | path | tokens/s | ratio |\n| --- | --- | ---: | ---: |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
