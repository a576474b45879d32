"""Which model a launcher trains, and with which settings.

``--model`` is a preset of ``configs/model/`` (its weights built in code, e.g. ``tiny``, or named by
its ``path``, e.g. a hub name), a local model directory, a verl checkpoint directory, or a hub name.
A preset (a hydra config group, composed into configs/ppo.yaml) names the weights in its ``model:`` block
(``path``, or ``build: tiny`` with its ``tiny:`` size) and carries the settings that fit the model (``agent:``,
``verl:``, and ``model.agentevol:`` for train_agentevol.sh); ``--model_preset NAME`` lends them to a model given
by path: RL from a behaviour-cloned tiny model is
``--model outputs/agentevol-maze/iter_0/checkpoint --model_preset tiny-bc``. A model with no preset gets
``configs/model/default.yaml``'s settings (a pretrained model on GPUs, budgets measured per run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from openmanus_rl.configs import config_dir
from openmanus_rl.verl_args import format_value

DEFAULT = "default"  # the settings of a model without a preset of its own (configs/model/default.yaml)


def _read(name: str) -> dict[str, Any]:
    """A preset file as one mapping: its ``model:`` block (``path``, ``build``, ``tiny``, ``agentevol``) with the
    settings it adds to the experiment (``agent``, ``verl``)."""
    data = OmegaConf.to_container(OmegaConf.load(config_dir() / "model" / f"{name}.yaml"))
    return {**(data.pop("model", None) or {}), **data}


def preset_for(model: str) -> str | None:
    """The preset ``--model`` names: a preset's own name, or the hub name a preset is for
    (``Qwen/Qwen2.5-7B-Instruct`` is ``qwen2.5-7b``); None for any other model (it gets ``default``)."""
    names = preset_names()
    if model in names and model != DEFAULT:
        return model
    return next((other for other in names if _read(other).get("path") == model), None)


def model_preset(name: str) -> dict[str, Any]:
    """``configs/model/NAME.yaml`` (or the preset whose ``path`` is NAME), else the ``default`` preset's
    settings with ``path: NAME`` (a hub name or a local model: a pretrained model, not the tiny one)."""
    found = preset_for(name)
    return _read(found) if found else {**settings_preset(DEFAULT), "path": name}


def preset_names() -> list[str]:
    return sorted(p.stem for p in (config_dir() / "model").glob("*.yaml"))


def settings_preset(name: str) -> dict[str, Any]:
    """A preset whose settings a model given by path borrows (``--model_preset``); an unknown name is
    a ValueError listing the presets."""
    if name not in preset_names():
        raise ValueError(f"unknown model preset {name!r}; configs/model/ has {', '.join(preset_names())}")
    return {k: v for k, v in _read(name).items() if k not in ("build", "path")}


def model_overrides(model: str, lend: str | None = None) -> list[str]:
    """The hydra overrides that choose the model group for ``--model MODEL [--model_preset LEND]``: the
    model's preset, or ``default`` with the model's path; with ``LEND``, that preset's settings and MODEL's
    weights (a preset's path, or MODEL as given)."""
    found = preset_for(model)
    if lend is None:
        return [f"model={found}"] if found else [f"model={DEFAULT}", f"++model.path={format_value(model)}"]
    settings_preset(lend)  # an unknown name is one line
    path = _read(found).get("path", model) if found else model
    return [f"model={lend}", f"++model.path={format_value(path)}", "++model.build=null"]


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
