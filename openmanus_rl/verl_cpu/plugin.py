"""The verl plugin itself: what ``import verl`` runs in the driver and in every Ray worker.

verl loads it through the ``verl.plugins`` entry point (setup.py). Importing the package
``openmanus_rl.verl_cpu`` alone does none of this (launchers read presets without importing verl or
torch), so a user's mistake is reported without first waiting for verl's imports.
"""

from __future__ import annotations

import os

from . import ROLLOUT_NAME
from .platform import cpu_platform_wanted

_status = {"platform_registered": True, "rollout_registered": False, "patches_applied": False,
           "engines_registered": False, "threads": None}

_ADAPTER_FQN = "openmanus_rl.verl_cpu.rollout.HFServerAdapter"


def _load_hf_replica():
    from .rollout import HFReplica

    return HFReplica


def _register_replica(replica_mod) -> None:
    # public hook (verl/workers/rollout/replica.py:RolloutReplicaRegistry); the loader imports lazily
    replica_mod.RolloutReplicaRegistry.register(ROLLOUT_NAME, _load_hf_replica)
    _status["rollout_registered"] = True


def _register_adapter(base_mod) -> None:
    # verl has no public registration function for the in-worker adapter (workers/rollout/base.py:
    # _ROLLOUT_REGISTRY, read by get_rollout_class); adding a new key changes nothing for other backends.
    base_mod._ROLLOUT_REGISTRY[(ROLLOUT_NAME, "async")] = _ADAPTER_FQN


def _register_cpu_engines(impl) -> None:
    """verl registers its FSDP engines for devices cuda/npu only (workers/engine/fsdp/transformer_impl.py:1143,
    :1594; lookup in workers/engine/base.py:get_engine_cls). Register the same classes for device "cpu"
    through the public ``EngineRegistry.register`` decorator."""
    from verl.workers.engine.base import EngineRegistry

    engines = (("language_model", impl.FSDPEngineWithLMHead), ("value_model", impl.FSDPEngineWithValueHead))
    for model_type, cls in engines:
        registered = EngineRegistry._engines.get(model_type, {}).get("fsdp2", {})
        if "cpu" not in registered:
            EngineRegistry.register(model_type=model_type, backend=["fsdp", "fsdp2"], device="cpu")(cls)
    _status["engines_registered"] = True


def _register_packed_attention(_modeling_utils) -> None:
    """``attn_implementation="sdpa_packed"`` (packed_attention.py), the CPU presets' training attention."""
    from .packed_attention import register

    register()
    _status["packed_attention_registered"] = True


DIE_WITH_PARENT = "OPENMANUS_DIE_WITH_PARENT"


def _die_with_parent() -> None:
    """A verl process started by a launcher that may be killed outright (torchrun's SFT workers run in
    sessions of their own, so killing the launcher's process group does not reach them): with
    ``$OPENMANUS_DIE_WITH_PARENT`` set to the pid of the process that started its parent (the one that
    ran torchrun), the kernel sends it SIGTERM when its parent dies, and a process orphaned before this ran
    (a kill during the seconds a worker spends importing) ends itself instead of waiting forever for a
    rendezvous (:func:`agentenv.processes.die_with_launcher`)."""
    from agentenv.processes import die_with_launcher

    if die_with_launcher(DIE_WITH_PARENT):
        _status["dies_with_parent"] = True


def _setup() -> None:
    from openmanus_rl.post_import import when_imported

    from .patches import apply

    _die_with_parent()

    # The registries live in modules verl imports lazily; register when they get imported.
    when_imported("verl.workers.rollout.base", _register_adapter)
    when_imported("verl.workers.rollout.replica", _register_replica)
    if cpu_platform_wanted():
        apply()
        _status["patches_applied"] = True
        when_imported("verl.workers.engine.fsdp.transformer_impl", _register_cpu_engines)
        when_imported("transformers.modeling_utils", _register_packed_attention)
        threads = os.environ.get("OPENMANUS_VERL_CPU_THREADS", "1").strip()
        if threads and threads != "0":
            import torch

            torch.set_num_threads(int(threads))
            _status["threads"] = int(threads)
    else:
        from openmanus_rl.verl_args import flash_attention_installed

        if not flash_attention_installed():
            # verl's value-model loader hard-codes flash_attention_2 (verl/utils/model.py:649): without
            # flash-attn the critic loads with its configured attention (sdpa, configs/machine/gpu.yaml)
            from .patches import apply_critic_attention

            apply_critic_attention()
            _status["critic_attention_patched"] = True


def plugin_status() -> dict:
    """What the plugin did in this process (for tests and diagnostics)."""
    return dict(_status)


_setup()
