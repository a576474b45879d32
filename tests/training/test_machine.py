"""The machine a run records beside its results (``openmanus_rl.machine``)."""

from __future__ import annotations

import json
import os

import torch

from openmanus_rl import machine

X86 = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B13
flags\t\t: fpu vme avx2

processor\t: 1
model name\t: AMD EPYC 7B13
"""
ARM = """processor\t: 0
BogoMIPS\t: 108.00
CPU part\t: 0xd0c

Hardware\t: BCM2835
"""


def test_the_cpu_name_is_read_from_cpuinfo_of_either_kind():
    assert machine.cpu_model(X86) == "AMD EPYC 7B13"
    assert machine.cpu_model(ARM) == "BCM2835"
    assert machine.cpu_model("processor\t: 0\nmodel name\t:\n") is None  # an empty name is no name


def test_describe_reports_this_process_cores_and_torch_kernels():
    m = machine.describe()
    assert m["cores"] == os.cpu_count() and 1 <= m["usable_cores"] <= m["cores"]
    assert m["torch"] == torch.__version__ and m["torch_threads"] == torch.get_num_threads()
    assert m["torch_cpu_kernels"] == torch.backends.cpu.get_cpu_capability()
    assert m["cpu"] and m["memory_gib"] > 0
    assert m["gpus"] == ([torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
                         if torch.cuda.is_available() else [])
    json.dumps(m)  # plain JSON values


def test_record_appends_a_line_per_start(tmp_path):
    out = tmp_path / "run"
    first = machine.record(out)
    machine.record(out)
    lines = [json.loads(line) for line in (out / machine.MACHINES_FILE).read_text().splitlines()]
    assert len(lines) == 2 and lines[0] == first and set(lines[1]) == set(first)
    assert first["started"].endswith("+00:00")
