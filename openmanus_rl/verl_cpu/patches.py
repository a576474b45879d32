"""The monkeypatches of verl internals needed on CPU (and only there).

Everything else in this plugin goes through verl's public hooks (platform registry, rollout replica
registry, hydra overrides). The three places below cannot be reached that way in verl 0.9.1. They are
applied by :func:`apply` only when the ``cpu`` platform is active (``cpu_platform_wanted()``): with CUDA
(or any accelerator) present, nothing here runs.

1. Process-group backend string (verl/utils/distributed.py:63 and :89). verl builds
   ``f"cpu:gloo,{device}:{backend}"``; with device "cpu" that is ``"cpu:gloo,cpu:gloo"``, which torch
   rejects ("Duplicate device type cpu"). ``initialize_global_process_group`` (torchrun, SFT trainer) and
   ``initialize_global_process_group_ray`` (Ray workers, engine_workers.py:89) are wrapped to use plain
   ``"gloo"`` when no explicit backend is given. The wrapped functions are also rebound in verl modules
   that imported them by name (engine_workers, checkpoint_engine.base, sft_trainer).
2. Critic attention (verl/utils/model.py:649 and :674). ``load_valuehead_model`` hard-codes
   ``attn_implementation="flash_attention_2"``, unavailable on CPU; the critic then cannot be built.
   It is wrapped to load the value model with the attention implementation of the critic's own
   hf_config (``critic.model.override_config.attn_implementation``, "sdpa" in the CPU preset). A GPU
   host without flash-attn needs this one too (:func:`apply_critic_attention`, from the plugin).
3. Reference policy memory (verl/workers/engine/fsdp/transformer_impl.py:462). A forward-only FSDP2
   engine, which is what the reference model of ``actor.use_kl_loss`` / ``algorithm.use_kl_in_reward``
   is, always gets ``CPUOffloadPolicy(pin_memory=True)``, and pinning needs an accelerator ("Cannot
   access accelerator device when none is available"). The module's ``CPUOffloadPolicy`` is rebound to
   one that never pins: on CPU the parameters already live in host memory.

Patches are installed lazily with a post-import hook, so ``import verl`` stays as fast as before.
"""

from __future__ import annotations

import functools
import logging
import os
from datetime import timedelta

from openmanus_rl.post_import import when_imported

logger = logging.getLogger(__name__)

_applied = False


# ---------------------------------------------------------------------------------------------------------
# 1. process group backend
# ---------------------------------------------------------------------------------------------------------
_PG_USERS = ("verl.workers.engine_workers", "verl.checkpoint_engine.base", "verl.trainer.sft_trainer")


def _patch_distributed(dist_mod) -> None:
    import torch.distributed

    if getattr(dist_mod, "_openmanus_cpu_patched", False):
        return
    orig_ray = dist_mod.initialize_global_process_group_ray

    @functools.wraps(orig_ray)
    def initialize_global_process_group_ray(timeout_second=None, backend=None):
        # verl default would be "cpu:gloo,cpu:gloo" (utils/distributed.py:89)
        return orig_ray(timeout_second=timeout_second, backend=backend or "gloo")

    def initialize_global_process_group(timeout_second=36000):
        # same as utils/distributed.py:62-74 with backend "gloo" and no device selection
        torch.distributed.init_process_group(
            backend="gloo",
            timeout=timedelta(seconds=timeout_second),
            init_method=os.environ.get("DIST_INIT_METHOD", None),
        )
        return int(os.environ["LOCAL_RANK"]), int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])

    dist_mod.initialize_global_process_group_ray = initialize_global_process_group_ray
    dist_mod.initialize_global_process_group = initialize_global_process_group
    dist_mod._openmanus_cpu_patched = True

    def rebind(module):
        for name in ("initialize_global_process_group_ray", "initialize_global_process_group"):
            if hasattr(module, name):
                setattr(module, name, getattr(dist_mod, name))

    for user in _PG_USERS:
        when_imported(user, rebind)


# ---------------------------------------------------------------------------------------------------------
# 2. critic attention implementation
# ---------------------------------------------------------------------------------------------------------
def _patch_valuehead(model_mod) -> None:
    if getattr(model_mod, "_openmanus_cpu_patched", False):
        return
    orig = model_mod.load_valuehead_model

    @functools.wraps(orig)
    def load_valuehead_model(local_path, torch_dtype, model_config, trust_remote_code):
        from transformers import AutoModelForTokenClassification

        attn = getattr(model_config, "_attn_implementation", None)
        if attn in (None, "flash_attention_2", "flash_attention_3"):
            attn = "sdpa"
        # utils/model.py:645-651 with the attention implementation made configurable
        try:
            return AutoModelForTokenClassification.from_pretrained(
                pretrained_model_name_or_path=local_path,
                torch_dtype=torch_dtype,
                config=model_config,
                attn_implementation=attn,
                trust_remote_code=trust_remote_code,
            )
        except Exception as e:  # e.g. architectures without a token-classification head: verl's trl path
            logger.warning("value model via AutoModelForTokenClassification failed (%s); using verl's loader", e)
            return orig(local_path, torch_dtype, model_config, trust_remote_code)

    model_mod.load_valuehead_model = load_valuehead_model
    model_mod._openmanus_cpu_patched = True


# ---------------------------------------------------------------------------------------------------------
# 3. reference model offload without pinned memory
# ---------------------------------------------------------------------------------------------------------
def _patch_ref_offload(impl_mod) -> None:
    if getattr(impl_mod, "_openmanus_cpu_patched", False):
        return
    policy_cls = impl_mod.CPUOffloadPolicy

    def cpu_offload_policy(pin_memory: bool = True):
        return policy_cls(pin_memory=False)

    impl_mod.CPUOffloadPolicy = cpu_offload_policy
    impl_mod._openmanus_cpu_patched = True


# ---------------------------------------------------------------------------------------------------------
def apply() -> None:
    """Install the CPU patches (idempotent). Call only when the cpu platform is active."""
    global _applied
    if _applied:
        return
    _applied = True
    when_imported("verl.utils.distributed", _patch_distributed)
    when_imported("verl.utils.model", _patch_valuehead)
    when_imported("verl.workers.engine.fsdp.transformer_impl", _patch_ref_offload)


def apply_critic_attention() -> None:
    """Only patch 2 (idempotent): a GPU host without flash-attn, where verl's value-model loader would
    still ask for flash_attention_2 and the GPU preset configures sdpa."""
    when_imported("verl.utils.model", _patch_valuehead)


def applied() -> bool:
    return _applied
