"""The machine a run ran on: what explains why two runs of one command differ in time or in result.

The same command and seed on two days gave BC 13.8% and 13.7% on average but other per-environment numbers, and
stages 1.3-1.4x apart in time: float kernels and speed depend on the CPU (torch picks AVX2 or AVX-512 code at
start-up). So every run records the machine beside its results: ``machines.jsonl`` in a training run's output
directory (a line per start, so a resumed run shows each machine it ran on) and ``run.machine`` in an
evaluation's report.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from pathlib import Path
from typing import Any

MACHINES_FILE = "machines.jsonl"


def cpu_model(cpuinfo: str) -> str | None:
    """The CPU's name from the text of ``/proc/cpuinfo`` (x86: "model name"; some ARM kernels: "Hardware")."""
    for key in ("model name", "Hardware"):
        for line in cpuinfo.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                return value.strip()
    return None


def usable_cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def describe() -> dict[str, Any]:
    """CPU, cores, memory, torch's kernels and threads, GPUs: plain JSON values."""
    try:
        model = cpu_model(Path("/proc/cpuinfo").read_text(errors="replace"))
    except OSError:
        model = None
    try:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        memory = None
    return {
        "cpu": model or platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "usable_cores": usable_cores(),
        "memory_gib": memory,
        **torch_side(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def torch_side() -> dict[str, Any]:
    """torch's version, CPU kernels (AVX2, AVX512, ...), threads and GPUs; None and no GPUs without torch."""
    try:
        import torch  # start-up cost: the runs that record a machine load torch anyway
    except ImportError:  # an API-policy evaluation on a machine without it
        return {"torch": None, "torch_cpu_kernels": None, "torch_threads": None, "gpus": []}
    gpus = ([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
            if torch.cuda.is_available() else [])
    return {"torch": torch.__version__, "torch_cpu_kernels": torch.backends.cpu.get_cpu_capability(),
            "torch_threads": torch.get_num_threads(), "gpus": gpus}


def record(directory: Path) -> dict[str, Any]:
    """Append this start's machine, with the time, to ``directory/machines.jsonl``; returns the line's data."""
    line = {"started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), **describe()}
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / MACHINES_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(line, sort_keys=True) + "\n")  # one write: a killed run leaves whole lines
    return line
