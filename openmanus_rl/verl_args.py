"""verl's command line: a machine preset and a run's settings rendered as hydra overrides.

A machine preset is ``configs/machine/NAME.yaml``: ``cpu`` / ``gpu`` for ``python -m verl.trainer.main_ppo``,
``cpu_sft`` / ``gpu_sft`` for ``torchrun -m verl.trainer.sft_trainer``. Its ``verl:`` block maps dotted config keys
to values (a leading ``+`` adds a key verl's config lacks). train_ppo.sh composes it with the rest of the
experiment (:mod:`openmanus_rl.configs`) and renders the merged block with :func:`render`; other callers take a
preset and their overrides in one call::

    from openmanus_rl.verl_args import verl_overrides
    cmd = [sys.executable, "-m", "verl.trainer.main_ppo", *verl_overrides(
        "auto", model_path=model_dir, overrides={"algorithm.adv_estimator": "grpo", "data.train_files": f})]

``preset="auto"`` picks ``cpu`` when ``torch.cuda.is_available()`` is false, else ``gpu`` (``"auto_sft"``:
``cpu_sft`` / ``gpu_sft``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from openmanus_rl.configs import config_dir

PRESETS = ("cpu", "gpu", "cpu_sft", "gpu_sft")
PPO_MODEL_PATH_KEYS = ("actor_rollout_ref.model.path", "critic.model.path")


#: a GPU driver's device nodes (NVIDIA, ROCm, WSL's GPU): without one there is no device for torch to find
GPU_DEVICE_NODES = ("/dev/nvidiactl", "/dev/kfd", "/dev/dxg")


def default_preset() -> str:
    """``"cpu"`` if CUDA is not available, else ``"gpu"``. Torch (3 s to import) is asked only where a GPU
    driver's device node exists: the launchers stay light on a CPU machine."""
    if not any(os.path.exists(node) for node in GPU_DEVICE_NODES):
        return "cpu"
    import torch

    return "gpu" if torch.cuda.is_available() else "cpu"


def flash_attention_installed() -> bool:
    """Whether flash-attn can be imported (looked up, not imported: the launcher stays light)."""
    import importlib.util

    return importlib.util.find_spec("flash_attn") is not None


def attention_settings() -> dict[str, Any]:
    """The placeholders of the GPU presets' attention: flash-attn with remove-padding when it is installed,
    else PyTorch's sdpa without remove-padding (packed sequences need flash-attn's varlen kernels)."""
    flash = flash_attention_installed()
    return {"attn_implementation": "flash_attention_2" if flash else "sdpa", "remove_padding": flash}


def _resolve(preset: str) -> str:
    if preset == "auto":
        return default_preset()
    if preset == "auto_sft":
        return f"{default_preset()}_sft"
    return preset


def _load(preset: str) -> dict:
    from omegaconf import OmegaConf

    preset = _resolve(preset)
    if preset not in PRESETS:
        path = Path(preset)
        if not path.exists():
            raise ValueError(f"unknown preset {preset!r}: use one of {PRESETS}, 'auto' or a YAML path")
    else:
        path = config_dir() / "machine" / f"{preset}.yaml"
    data = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    if "overrides" in data:  # a preset file of the earlier layout (configs/verl/NAME.yaml, an ``overrides:`` block)
        data["verl"] = data.pop("overrides")
    return data


def load_preset(preset: str = "auto") -> dict[str, Any]:
    """The preset's ``verl:`` mapping (dotted key, possibly ``+``-prefixed -> value), in file order."""
    return dict(_load(preset).get("verl") or {})


_BARE = re.compile(r"^[A-Za-z0-9_./:@~-]*$")


def format_value(value: Any) -> str:
    """Render a Python value in hydra's override grammar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(format_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{format_value(v)}" for k, v in value.items()) + "}"
    text = str(value)
    if text and _BARE.match(text) and text not in ("true", "false", "null"):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def override_key(setting: str) -> str:
    """The key a hydra override sets, without its ``+``/``++``/``~`` prefix: ``+a.b=1`` -> ``a.b``."""
    return setting.partition("=")[0].lstrip("+~")


def _split_key(key: str) -> tuple[str, str]:
    stripped = override_key(key)
    return key[: len(key) - len(stripped)], stripped


OverridesArg = Mapping[str, Any] | Iterable[str] | None


def verl_overrides(
    preset: str = "auto",
    model_path: str | None = None,
    overrides: OverridesArg = None,
    n_gpus_per_node: int | None = None,
) -> list[str]:
    """Hydra overrides for verl's ``main_ppo`` (or SFT trainer) from a machine preset, then ``overrides`` on top.

    Args:
        preset: ``"cpu"``, ``"gpu"``, ``"auto"`` (cpu unless CUDA is available) for ``main_ppo``;
            ``"cpu_sft"``, ``"gpu_sft"``, ``"auto_sft"`` for ``verl.trainer.sft_trainer``; or a preset YAML path.
        model_path: sets the preset's ``model_path_keys`` (PPO: ``actor_rollout_ref.model.path`` and
            ``critic.model.path``; SFT: ``model.path``).
        overrides: extra overrides, a mapping ``{"dotted.key": value}`` (values are rendered) or strings
            ``"dotted.key=value"`` (kept verbatim). They replace preset entries with the same key; the
            preset's ``+`` prefix is kept unless the caller gives one.
        n_gpus_per_node: GPUs per node (gpu preset; default: all visible). On CPU it is the number of
            trainer processes (logical GPUs), default ``trainer.n_gpus_per_node`` of the overrides or 1.
    Returns:
        ``["key=value", ...]`` ready to append to ``python -m verl.trainer.main_ppo``.
    """
    data = _load(preset)
    keys = data.get("model_path_keys") or PPO_MODEL_PATH_KEYS
    return render(data.get("verl") or {}, model_path, overrides, n_gpus_per_node,
                  gpu=_resolve(preset).startswith("gpu"), model_path_keys=keys)


def render(
    entries: Mapping[str, Any],
    model_path: str | None = None,
    overrides: OverridesArg = None,
    n_gpus_per_node: int | None = None,
    *,
    gpu: bool,
    model_path_keys: Iterable[str] = PPO_MODEL_PATH_KEYS,
) -> list[str]:
    """A ``verl:`` block (a machine preset's, or a composed experiment's: the same key may come from several
    layers, with and without ``+``; the last value wins, with the last prefix given) as hydra overrides, with
    the placeholders filled; ``model_path`` and ``overrides`` as :func:`verl_overrides` takes them."""
    base: dict[str, tuple[str, Any]] = {}  # bare key -> (prefix, value)
    for key, value in entries.items():
        prefix, bare = _split_key(key)
        base[bare] = (prefix or base.get(bare, ("", None))[0], value)
    user: dict[str, tuple[str | None, Any, bool]] = {}  # key -> (prefix or None, value, verbatim)
    if model_path is not None:
        for key in model_path_keys:
            user[key] = (None, str(model_path), False)
    if overrides:
        items = overrides.items() if isinstance(overrides, Mapping) else [_parse(o) for o in overrides]
        verbatim = not isinstance(overrides, Mapping)
        for key, value in items:
            prefix, bare = _split_key(key)
            user[bare] = (prefix or None, value, verbatim)

    # placeholders: {n_gpus_per_node}, {n_gpus} (= per node * nnodes), {attn_implementation} and
    # {remove_padding} (flash-attn when installed, else sdpa without remove-padding)
    def _int(key: str, default: int) -> int:
        raw = user[key][1] if key in user else base.get(key, ("", default))[1]
        return int(raw) if str(raw).isdigit() else default

    if n_gpus_per_node is None:
        if "trainer.n_gpus_per_node" in user:
            n_gpus_per_node = int(user["trainer.n_gpus_per_node"][1])
        elif gpu:
            import torch

            n_gpus_per_node = max(torch.cuda.device_count(), 1)
        else:
            n_gpus_per_node = _int("trainer.n_gpus_per_node", 1)
    fill = {"n_gpus_per_node": n_gpus_per_node, "n_gpus": n_gpus_per_node * _int("trainer.nnodes", 1),
            **attention_settings()}
    user.setdefault("trainer.n_gpus_per_node", (None, n_gpus_per_node, False))

    out: list[str] = []
    for bare, (prefix, value) in base.items():
        if bare in user:
            uprefix, value, verbatim = user.pop(bare)
            prefix = prefix if uprefix is None else uprefix
            out.append(f"{prefix}{bare}={value if verbatim else format_value(value)}")
            continue
        if isinstance(value, str) and _PLACEHOLDER.fullmatch(value):
            value = fill[value[1:-1]]
        out.append(f"{prefix}{bare}={format_value(value)}")
    for bare, (uprefix, value, verbatim) in user.items():
        out.append(f"{uprefix or ''}{bare}={value if verbatim else format_value(value)}")
    return out


_PLACEHOLDER = re.compile(r"\{(n_gpus_per_node|n_gpus|attn_implementation|remove_padding)\}")


def _parse(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep:
        raise ValueError(f"override {item!r} is not of the form key=value")
    return key, value
