"""Behaviour cloning: multi-turn SFT on AgentTraj files with verl's own SFT trainer.

    python -m openmanus_rl.sft --data data/expert/maze.jsonl,data/expert/wordle.jsonl --model PATH \
        --out outputs/bc [--epochs 3] [--batch-size 16] [--lr 1e-4] [--nproc N] [key=value ...]

AgentTraj items (``trajectories.read``: JSON lines or a JSON array, from any number of environments,
mixed) become one parquet row each with a ``messages`` column (``trajectories.to_messages``, plus each
turn's ``loss`` flag from ``trajectories.loss_mask``). ``torchrun -m verl.trainer.sft_trainer`` trains on
it with the machine preset (``configs/machine/{cpu,gpu}_sft.yaml``). verl's ``MultiTurnSFTDataset`` puts the
loss on the assistant messages only (each message is tokenized alone with the chat template, the
generation prompt ``<|im_start|>assistant\\n`` masked); ``openmanus_rl.sft_dataset`` also honours
``loss: false`` on single agent turns. The checkpoint keeps verl's layout plus the full weights
(``checkpoint.save_contents`` includes ``hf_model``): ``OUT/global_step_N/huggingface`` is a transformers
directory for ``agentenv-eval --policy hf:...`` and ``train_ppo.sh --model ...``; ``OUT`` itself works
with ``--policy verl:OUT``. Training goes to ``OUT.partial`` and is renamed to ``OUT`` when it finished.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from openmanus_rl import atomic, machine, trajectories
from openmanus_rl.policies.verl_ckpt import TRACKER
from openmanus_rl.verl_args import verl_overrides


def sft_row(item: dict[str, Any]) -> dict[str, Any]:
    """One AgentTraj item as a row of verl's multi-turn SFT parquet."""
    messages = trajectories.to_messages(item)
    for m, loss in zip(messages, trajectories.loss_mask(item), strict=True):
        m["loss"] = bool(loss)
    env = item["item_id"].rpartition("_")[0] if "_" in str(item.get("item_id", "")) else str(item.get("env", ""))
    return {"messages": messages, "data_source": env, "item_id": str(item.get("item_id", ""))}


def write_sft_parquet(items: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Rows of ``items`` written atomically to ``path``; returns how many."""
    import pandas as pd

    rows = [sft_row(it) for it in items]
    if not rows:
        raise ValueError(f"no trajectories to write to {path}")
    path = Path(path)
    with atomic.path(path) as tmp:
        pd.DataFrame(rows).to_parquet(tmp, index=False)
    return len(rows)


def read_items(files: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The episodes of trajectory files; a file of ids only (AgentEval's item lists: no conversations) is a
    ValueError that says so, not a crash in the middle of building the data."""
    out = []
    for f in files:
        items = list(trajectories.read(f))
        episodes = [it for it in items if trajectories.has_conversation(it)]
        if items and not episodes:
            raise ValueError(f"{f} holds item ids without conversations (an AgentEval/AgentItemId list?): "
                             "nothing to fine-tune on")
        out += episodes
    return out


def hf_dir(checkpoint: str | Path) -> Path:
    """The transformers directory of a finished SFT checkpoint root."""
    root = Path(checkpoint)
    step = (root / TRACKER).read_text().strip()
    return root / f"global_step_{step}" / "huggingface"


def default_nproc(batch_size: int) -> int:
    """torchrun processes when none is asked for: one per GPU; on CPU one gloo rank per usable core (each
    single-threaded: a tiny model's small matrix products split better over ranks than over threads, 2.04 s
    against 2.58 s a maze BC step on two cores), at most a divisor of the batch so every rank gets an equal share."""
    import torch

    if torch.cuda.is_available():
        return torch.cuda.device_count()
    return max(n for n in range(1, max(1, min(machine.usable_cores(), batch_size)) + 1) if batch_size % n == 0)


def resolve_nproc(nproc: int | str | None, batch_size: int) -> int:
    """``nproc`` as given, or :func:`default_nproc` for None / ``"auto"``."""
    return default_nproc(batch_size) if nproc in (None, "auto") else int(nproc)


def sft_command(data: str | Path, model_path: str | Path, out: str | Path, *, epochs: int = 3, batch_size: int = 16,
                lr: float = 1e-4, max_length: int = 4096, nproc: int | str | None = None, seed: int = 1,
                preset: str = "auto_sft", extra: Sequence[str] = ()) -> list[str]:
    nproc = resolve_nproc(nproc, batch_size)
    overrides = {
        "data.train_files": str(data),
        "data.train_batch_size": int(batch_size),
        "data.max_length": int(max_length),
        "data.truncation": "right",
        "data.custom_cls.path": "pkg://openmanus_rl.sft_dataset",
        "data.custom_cls.name": "AgentTrajSFTDataset",
        "optim.lr": float(lr),
        "trainer.total_epochs": int(epochs),
        "trainer.save_freq": -1,
        "trainer.seed": int(seed),
        "trainer.resume_mode": "disable",
        "trainer.default_local_dir": str(out),
        "trainer.project_name": "agentenv_rl",
        "trainer.experiment_name": Path(out).name,
        "trainer.n_gpus_per_node": int(nproc),
        "checkpoint.save_contents": ["model", "extra", "hf_model"],
        "checkpoint.load_contents": ["model", "extra"],
        "hydra.run.dir": str(Path(out) / ".hydra_run"),
        "hydra.output_subdir": None,
    }
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc)]
    return [*torchrun, "-m", "verl.trainer.sft_trainer",
            *verl_overrides(preset, model_path=str(model_path), overrides=overrides), *extra]


def train(data: str | Path, model_path: str | Path, out: str | Path, *, log: str | Path | None = None,
          env: dict[str, str] | None = None, **kwargs: Any) -> Path:
    """Fine-tune ``model_path`` on the SFT parquet ``data``; returns the transformers directory.

    Runs in ``OUT.partial`` (removed first: an interrupted run starts over) and renames it to ``OUT``
    once verl wrote the last checkpoint, so ``OUT`` exists only complete."""
    out = Path(out)
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    cmd = sft_command(data, model_path, partial, **kwargs)
    # the trainer's workers die with torchrun even when this process group is killed outright (verl_cpu);
    # the variable names this process, torchrun's parent, so a worker can tell it was orphaned early
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1",
               OPENMANUS_DIE_WITH_PARENT=str(os.getpid()),
               **(env or {}))
    log_path = Path(log) if log else partial / "sft.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as f:
        f.write(" ".join(cmd) + "\n")
        f.flush()
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=partial)
    if proc.returncode != 0 or not (partial / TRACKER).is_file():
        tail = Path(log_path).read_text()[-3000:]
        raise RuntimeError(f"verl SFT failed (exit {proc.returncode}); log {log_path}:\n{tail}")
    shutil.rmtree(partial / ".hydra_run", ignore_errors=True)
    if out.exists():
        shutil.rmtree(out)
    os.replace(partial, out)
    return hf_dir(out)


def sft_steps(n_items: int, epochs: int, batch_size: int) -> int:
    """Optimizer steps verl will take (its dataloader drops the last partial batch)."""
    return max(0, n_items // batch_size) * epochs if n_items >= batch_size else 0


def metric(log: str | Path, name: str) -> list[float]:
    """A metric per step (``train/loss``, ``train/lr``, ...), read from a trainer log."""
    import re

    return [float(x) for x in re.findall(re.escape(name) + r":([-\d.e]+)", Path(log).read_text())]


def losses(log: str | Path) -> list[float]:
    return metric(log, "train/loss")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="AgentTraj file(s), comma-separated (JSON lines or JSON array)")
    p.add_argument("--model", required=True, help="model directory or hub name to fine-tune")
    p.add_argument("--out", required=True, help="checkpoint directory (verl layout + huggingface/)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--max-length", type=int, default=4096)
    p.add_argument("--nproc", type=int, default=None,
                   help="torchrun processes (default: every GPU; on CPU one gloo rank per core)")
    p.add_argument("--preset", default="auto_sft")
    p.add_argument("--threads", type=int, default=None, help="CPU: torch threads per process (default 1)")
    args, extra = p.parse_known_args(argv)
    files = [f for f in args.data.split(",") if f]
    out = Path(args.out)
    try:
        items = read_items(files)
    except (OSError, ValueError) as e:
        p.error(str(e))
    if sft_steps(len(items), args.epochs, args.batch_size) == 0:
        p.error(f"{len(items)} trajectories are fewer than one batch of {args.batch_size}")
    data = out.with_name(out.name + "_sft.parquet")
    write_sft_parquet(items, data)
    model = train(data, args.model, out, epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                  max_length=args.max_length, nproc=args.nproc, preset=args.preset, extra=extra,
                  log=out.with_name(out.name + "_sft.log"),
                  env={"OPENMANUS_VERL_CPU_THREADS": str(args.threads)} if args.threads else None)
    print(f"sft: {len(items)} trajectories -> {model}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
