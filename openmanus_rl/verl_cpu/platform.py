"""A ``cpu`` platform for verl's platform registry (device "cpu", backend "gloo").

verl 0.9.1 registers only accelerator platforms (nvidia, huawei/npu, amd/rocm) and falls back to
"nvidia" when none is detected (verl/plugin/platform/platform_manager.py:_detect_platform_name), which
then asks for NCCL. This platform is registered *after* the built-in ones, so on any machine where
one of them is detected it is never chosen. It is chosen when nothing else is available, or explicitly
with ``VERL_PLATFORM=cpu``.
"""

from __future__ import annotations

import glob
import os
import random
import shutil
import types
from contextlib import contextmanager
from typing import Any

import torch
from verl.plugin.platform import PlatformBase, PlatformRegistry

PLATFORM_NAME = "cpu"

# Set to 0/false to make the plugin never claim the machine (auto-detection only; VERL_PLATFORM=cpu still works).
DISABLE_ENV = "OPENMANUS_VERL_CPU"


def accelerator_present() -> bool:
    """True if this host has any accelerator verl knows about, even if this process cannot see it.

    Ray actors without a GPU bundle often have ``CUDA_VISIBLE_DEVICES=""`` so ``torch.cuda.is_available()``
    is False inside them; we therefore also look for device nodes and vendor tools, so that the plugin
    never takes over a GPU/NPU machine.
    """
    try:
        if torch.cuda.is_available():
            return True
    except Exception:  # pragma: no cover - broken driver
        return True
    if hasattr(torch, "npu"):
        return True
    if glob.glob("/dev/nvidia[0-9]*") or os.path.exists("/dev/kfd") or glob.glob("/dev/davinci[0-9]*"):
        return True
    return any(shutil.which(tool) for tool in ("nvidia-smi", "rocm-smi", "npu-smi"))


def cpu_platform_wanted() -> bool:
    """Whether verl should run on the cpu platform in this process (the plugin's activation rule)."""
    requested = os.environ.get("VERL_PLATFORM", "").strip().lower()
    if requested:
        return requested == PLATFORM_NAME
    if os.environ.get(DISABLE_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    return not accelerator_present()


def _mem_get_info(device: Any = None) -> tuple[int, int]:
    try:
        import psutil

        vm = psutil.virtual_memory()
        return int(vm.available), int(vm.total)
    except Exception:  # pragma: no cover
        return 0, 0


class _CpuDeviceModule(types.ModuleType):
    """``torch.cpu`` plus no-op/host versions of the ``torch.cuda`` functions verl calls on
    ``get_torch_device()`` (empty_cache, mem_get_info, memory_allocated, rng state, ...)."""

    def __init__(self):
        super().__init__("verl_cpu_device")

    def __getattr__(self, name: str):
        if hasattr(torch.cpu, name):
            return getattr(torch.cpu, name)
        raise AttributeError(name)

    # --- memory -------------------------------------------------------------------------------
    @staticmethod
    def empty_cache() -> None:
        return None

    @staticmethod
    def ipc_collect() -> None:
        return None

    mem_get_info = staticmethod(_mem_get_info)

    @staticmethod
    def memory_allocated(device: Any = None) -> int:
        return 0

    memory_reserved = max_memory_allocated = max_memory_reserved = memory_allocated

    @staticmethod
    def reset_peak_memory_stats(device: Any = None) -> None:
        return None

    @staticmethod
    def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
        return None

    # --- rng ----------------------------------------------------------------------------------
    @staticmethod
    def get_rng_state(device: Any = None) -> torch.Tensor:
        return torch.get_rng_state()

    @staticmethod
    def set_rng_state(state: torch.Tensor, device: Any = None) -> None:
        torch.set_rng_state(state)

    @staticmethod
    def manual_seed(seed: int) -> None:
        torch.manual_seed(seed)

    manual_seed_all = manual_seed

    # --- misc ---------------------------------------------------------------------------------
    @staticmethod
    def get_device_name(device: Any = None) -> str:
        return "cpu"

    @staticmethod
    def is_initialized() -> bool:
        return True


cpu_device_module = _CpuDeviceModule()


@PlatformRegistry.register(platform=PLATFORM_NAME)
class PlatformCPU(PlatformBase):
    """verl platform for CPU-only hosts: device "cpu", collective backend "gloo".

    Ray still schedules verl's workers on logical "GPU" resources (the resource pools hard-code them,
    verl/single_controller/ray/base.py:_check_resource_available), so ``ray_resource_name`` stays
    "GPU" and the CPU preset starts Ray with ``num_gpus`` logical GPUs.
    """

    @property
    def device_name(self) -> str:
        return "cpu"

    @property
    def vendor_name(self) -> str:
        return "cpu"

    @property
    def device_module(self) -> types.ModuleType:
        return cpu_device_module

    def is_available(self) -> bool:
        return True

    def is_platform_available(self, use_smi_check: bool = False) -> bool:
        return cpu_platform_wanted()

    def current_device(self):
        # torch.cpu.current_device() returns the string "cpu"; verl uses this value as a device
        # (``tensor.to(get_device_id())``), so an int (which would mean cuda:N) must not be returned.
        return "cpu"

    def device_count(self) -> int:
        return 1

    def set_device(self, device_index: int) -> None:
        return None

    def synchronize(self, device_index: int | None = None) -> None:
        return None

    def manual_seed(self, seed: int) -> None:
        torch.manual_seed(seed)

    def manual_seed_all(self, seed: int) -> None:
        torch.manual_seed(seed)
        random.seed(seed)

    def set_allocator_settings(self, settings: str) -> None:
        return None

    def empty_cache(self) -> None:
        return None

    def get_device_capability(self, device_index: int = 0) -> tuple[int | None, int | None]:
        return None, None

    def communication_backend_name(self) -> str:
        return "gloo"

    def visible_devices_envvar(self) -> str:
        # Ray sets CUDA_VISIBLE_DEVICES for actors holding logical GPUs; harmless on a CPU host.
        return "CUDA_VISIBLE_DEVICES"

    @contextmanager
    def nvtx_range(self, msg: str):
        yield

    def profiler_start(self) -> None:
        return None

    def profiler_stop(self) -> None:
        return None

    def ray_resource_name(self) -> str:
        return "GPU"

    def ray_resource_options(self, num_gpus: float) -> dict[str, Any]:
        return {"num_gpus": num_gpus}

    def ray_noset_envvars(self) -> list[str]:
        return ["RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"]

    def is_ipc_supported(self) -> bool:
        return False

    def cudart(self) -> Any:
        return None
