"""Checkpoints written by verl's trainer, turned into a transformers model with verl's own merger.

verl 0.9.1's FSDP checkpoint manager writes, per actor, ``model_world_size_W_rank_R.pt`` shards,
``fsdp_config.json`` and ``huggingface/`` (config, tokenizer; the full weights too when
``checkpoint.save_contents`` includes ``hf_model``). Accepted paths: the trainer's checkpoint
root (``latest_checkpointed_iteration.txt`` names the step), a ``global_step_N`` directory or its
``actor`` directory. Full weights in ``huggingface/`` are used as they are; otherwise the shards
are merged by ``verl.model_merger`` (the code behind ``python -m verl.model_merger merge``) into a
temporary directory. To evaluate one checkpoint often, merge it once that way and use ``hf:DIR``.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

TRACKER = "latest_checkpointed_iteration.txt"  # verl.utils.checkpoint.checkpoint_manager
_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


class CheckpointError(ValueError):
    """The path is not a verl checkpoint this evaluator can load."""


def actor_dir(path: str | Path) -> Path:
    """The ``actor`` directory of a verl checkpoint given as root, ``global_step_N`` or ``actor``."""
    p = Path(path)
    if not p.is_dir():
        raise CheckpointError(f"verl checkpoint {p} does not exist")
    if (p / TRACKER).is_file():
        step = (p / TRACKER).read_text().strip()
        p = p / f"global_step_{step}"
    if (p / "actor").is_dir():
        p = p / "actor"
    if (p / "model" / "huggingface").is_dir() or (p / "dist_ckpt").is_dir():
        raise CheckpointError(f"{p} is a Megatron checkpoint; merge it with `python -m verl.model_merger merge "
                              "--backend megatron ...` and evaluate the result with hf:DIR")
    if not (p / "huggingface" / "config.json").is_file():
        raise CheckpointError(f"{path} is not a verl checkpoint: no <global_step_N>/actor/huggingface/config.json")
    return p


def has_full_weights(hf_dir: Path) -> bool:
    return any((hf_dir / name).is_file() for name in _WEIGHTS)


@contextlib.contextmanager
def transformers_dir(path: str | Path) -> Iterator[Path]:
    """A directory ``from_pretrained`` loads, valid for the duration of the block."""
    actor = actor_dir(path)
    hf_dir = actor / "huggingface"
    if has_full_weights(hf_dir):
        yield hf_dir
        return
    if not (actor / "fsdp_config.json").is_file():
        raise CheckpointError(f"{actor} has neither full weights in huggingface/ nor FSDP shards (fsdp_config.json)")
    tmp = Path(tempfile.mkdtemp(prefix="openmanus-verl-merged-"))
    try:
        merge_fsdp(actor, tmp)
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def merge_fsdp(actor: Path, target: Path) -> None:
    """Merge FSDP shards into a transformers checkpoint with verl's public merger API."""
    import torch

    threads = torch.get_num_threads()  # importing verl loads plugins that may change torch's thread count
    try:
        from verl.model_merger.base_model_merger import ModelMergerConfig
        from verl.model_merger.fsdp_model_merger import FSDPModelMerger

        config = ModelMergerConfig(operation="merge", backend="fsdp", local_dir=str(actor), target_dir=str(target),
                                   hf_model_config_path=str(actor / "huggingface"))
        merger = FSDPModelMerger(config)
        with contextlib.redirect_stdout(None):  # the merger prints progress; stdout is the evaluator's table
            merger.merge_and_save()
        merger.cleanup()
    finally:
        torch.set_num_threads(threads)
