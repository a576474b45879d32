"""What a behaviour-cloning step costs per tiny-model size, on the experiment's own multi-environment data.

    .venv/bin/python bench/bc_model_size.py --expert DIR [--sizes 128x2,128x4,192x3,256x4] [--vocab 4096] [--steps 25]
        [--attention packed,padded]

For each ``WIDTHxLAYERS`` it builds the tiny model (``openmanus_rl.tiny_model``, its BPE trained on the first 50
expert episodes of every ``DIR/<env>.jsonl``, as train_agentevol.sh does), then runs verl's SFT trainer as
AgentEvol runs it (``openmanus_rl.sft``: torchrun, the CPU preset, one gloo rank per core, batches of 16
episodes) for ``--steps`` steps over all the environments' episodes. The time of a step is measured from the
trainer's log after its first step (start-up and the first step excluded). Prints one row per size: parameters,
seconds a step, tokens a second, and the minutes a BC budget of ``--budget`` steps would take. ``--attention``
compares the CPU preset's training attention (``packed``: each micro-batch's episodes in one row, attending each to
itself, ``openmanus_rl/verl_cpu/packed_attention.py``) with sdpa over the micro-batch padded to its longest episode
(``padded``, the preset before).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

from openmanus_rl import sft
from openmanus_rl.agentevol.loop import tiny_corpus
from openmanus_rl.tiny_model import build_tiny_model


def step_times(log: Path, stop: threading.Event) -> list[float]:
    """Wall-clock time at which each ``train/loss`` line appeared in ``log``."""
    seen: list[float] = []
    while not stop.is_set():
        n = log.read_text().count("train/loss:") if log.is_file() else 0
        seen += [time.monotonic()] * (n - len(seen))
        time.sleep(0.05)
    return seen


ATTENTION = {"packed": ["model.use_remove_padding=true", "model.override_config.attn_implementation=sdpa_packed"],
             "padded": ["model.use_remove_padding=false", "model.override_config.attn_implementation=sdpa"]}


def measure(files: list[Path], width: int, layers: int, vocab: int, steps: int, work: Path,
            attention: str = "packed") -> dict:
    from transformers import AutoModelForCausalLM

    model = build_tiny_model(work / f"m{width}x{layers}", corpus=tiny_corpus(files), hidden_size=width,
                             num_layers=layers, vocab_size=vocab)
    params = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(str(model)).parameters())
    data = work / "data.parquet"
    if not data.is_file():
        sft.write_sft_parquet(sft.read_items(files), data)
    log = work / f"sft{width}x{layers}{attention}.log"
    stop = threading.Event()
    times: list[float] = []
    watcher = threading.Thread(target=lambda: times.extend(step_times(log, stop)))
    watcher.start()
    try:
        sft.train(data, model, work / f"ckpt{width}x{layers}", log=log, epochs=100, batch_size=16, lr=3e-3,
                  max_length=4096, extra=[f"trainer.total_training_steps={steps}", *ATTENTION[attention]])
    finally:
        stop.set()
        watcher.join()
    tokens = sft.metric(log, "train/global_tokens")
    per_step = (times[-1] - times[0]) / max(1, len(times) - 1)
    return {"size": f"{width}x{layers}", "attention": attention, "params": params, "s_per_step": per_step,
            "tokens_per_s": sum(tokens[1:]) / max(1e-9, times[-1] - times[0])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--expert", required=True, help="directory of <env>.jsonl expert trajectories")
    p.add_argument("--sizes", default="128x2,128x4,192x3,256x4", help="WIDTHxLAYERS,...")
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--budget", type=int, default=750, help="BC steps to project the minutes of")
    p.add_argument("--attention", default="packed", help="packed and/or padded, comma-separated")
    args = p.parse_args(argv)
    attentions = args.attention.split(",")
    if not set(attentions) <= set(ATTENTION):
        p.error(f"--attention takes {' and/or '.join(ATTENTION)}, not {args.attention}")
    files = sorted(Path(args.expert).glob("*.jsonl"))
    if not files:
        p.error(f"{args.expert} holds no <env>.jsonl")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            width, layers = (int(x) for x in size.split("x"))
            for attention in attentions:
                rows.append(measure(files, width, layers, args.vocab, args.steps, Path(tmp), attention))
                print(f"bc_model_size: {size} {attention} done", file=sys.stderr, flush=True)
    print(f"BC on {', '.join(f.stem for f in files)} (vocab {args.vocab}, batches of 16 episodes, "
          f"{args.steps} steps each)\n")
    print(f"| size | attention | parameters | s / step | tokens / s | {args.budget} steps |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['size']} | {r['attention']} | {r['params'] / 1e6:.2f}M | {r['s_per_step']:.2f} | "
              f"{r['tokens_per_s']:,.0f} | "
              f"{r['s_per_step'] * args.budget / 60:.0f} min |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
