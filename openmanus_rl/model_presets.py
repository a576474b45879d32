"""Which model a launcher trains, and with which settings.

``--model`` is a preset of ``configs/model/`` (its weights built in code, e.g. ``tiny``, or named by
its ``path``, e.g. a hub name), a local model directory, a verl checkpoint directory, or a hub name.
A preset also carries the settings that fit the model (``agent:``, ``verl:``, ``tiny:``), and
``--model_preset NAME`` lends them to a model given by path: RL from a behaviour-cloned tiny model is
``--model outputs/agentevol-maze/iter_0/checkpoint --model_preset tiny-bc``. A model with no preset gets
``configs/model/default.yaml``'s settings (a pretrained model on GPUs, budgets measured per run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from openmanus_rl.verl_cpu.presets import config_dir

DEFAULT = "default"  # the settings of a model without a preset of its own (configs/model/default.yaml)


def model_preset(name: str) -> dict[str, Any]:
    """``configs/model/NAME.yaml`` (or the preset whose ``path`` is NAME), else the ``default`` preset's
    settings with ``path: NAME`` (a hub name or a local model: a pretrained model, not the tiny one)."""
    path = config_dir() / "model" / f"{name}.yaml"
    if path.exists() and name != DEFAULT:
        return OmegaConf.to_container(OmegaConf.load(path))
    for other in preset_names():  # a hub name a preset is for: --model Qwen/Qwen2.5-7B-Instruct is qwen2.5-7b
        found = OmegaConf.to_container(OmegaConf.load(config_dir() / "model" / f"{other}.yaml"))
        if found.get("path") == name:
            return found
    return {**settings_preset(DEFAULT), "path": name}


def preset_names() -> list[str]:
    return sorted(p.stem for p in (config_dir() / "model").glob("*.yaml"))


def settings_preset(name: str) -> dict[str, Any]:
    """A preset whose settings a model given by path borrows (``--model_preset``); an unknown name is
    a ValueError listing the presets."""
    path = config_dir() / "model" / f"{name}.yaml"
    if not path.exists():
        raise ValueError(f"unknown model preset {name!r}; configs/model/ has {', '.join(preset_names())}")
    return {k: v for k, v in OmegaConf.to_container(OmegaConf.load(path)).items() if k not in ("build", "path")}


def resolve_model_path(model: str) -> str:
    """The directory transformers loads for ``model``: a model directory as it is; a verl checkpoint (its
    root, a ``global_step_N`` or an ``actor`` directory, see :mod:`openmanus_rl.policies.verl_ckpt`) as its
    ``huggingface/`` (the weights, tokenizer and chat template it was trained with); anything else (a hub
    name) unchanged."""
    from openmanus_rl.policies.verl_ckpt import CheckpointError, actor_dir, has_full_weights

    path = Path(model).expanduser()
    if not path.is_dir():
        return model
    if (path / "config.json").is_file():
        return str(path.resolve())
    try:
        hf = actor_dir(path) / "huggingface"
    except CheckpointError as e:
        raise ValueError(f"--model {model}: {e}") from None
    if not has_full_weights(hf):
        raise ValueError(f"--model {model}: {hf} holds no full weights (the checkpoint was saved without "
                         "hf_model); merge it with `python -m verl.model_merger merge --backend fsdp ...`")
    return str(hf.resolve())
