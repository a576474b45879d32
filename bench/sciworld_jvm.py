"""How long a sciworld session's JVM takes to start, with and without the class archive (a table).

Every sciworld session starts a JVM (agentenv_sciworld.simulator); the first one to find no class-data-sharing
archive writes it at its exit, later ones map it (simulator.ClassArchive). This starts ``--jvms`` JVMs one after
another in each mode, in a fresh archive directory, loads a task into each and reports the medians: seconds to the
JVM's port, seconds to load the task, and the CPU seconds the JVM used by then.

    .venv/bin/python bench/sciworld_jvm.py [--jvms 5] [--task boil]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import psutil

from agentenv_sciworld.simulator import Simulator


class _Owner:
    """Stands for the environment instance a JVM belongs to."""


def measure(archive_dir: str, jvms: int, task: str) -> list[tuple[float, float, float]]:
    """``(start s, load s, JVM CPU s)`` of each JVM, started one after another."""
    os.environ["AGENTENV_SCIWORLD_CDS"] = archive_dir
    rows = []
    for _ in range(jvms):
        t0 = time.perf_counter()
        sim = Simulator(_Owner())
        t1 = time.perf_counter()
        sim.load(task, 0, "", generateGoldPath=False)
        t2 = time.perf_counter()
        cpu = psutil.Process(sim.pid).cpu_times()
        rows.append((t1 - t0, t2 - t1, cpu.user + cpu.system))
        sim.close()
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jvms", type=int, default=5, help="JVMs per mode (the archive's writer is the first)")
    p.add_argument("--task", default="boil")
    args = p.parse_args()
    print("| class archive | JVMs | start s | load s | JVM CPU s |\n| --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as archives:
        for mode, directory in (("off", ""), ("on", archives), ("off", "")):  # off twice: the first warms caches
            rows = measure(directory, args.jvms, args.task)
            if mode == "on":  # the first JVM found none and wrote it: its own row is the "off" case plus the dump
                print(f"| writing | 1 | {rows[0][0]:.2f} | {rows[0][1]:.2f} | {rows[0][2]:.2f} |")
                rows = rows[1:]
            med = [statistics.median(col) for col in zip(*rows, strict=True)]
            print(f"| {mode} | {len(rows)} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} |")


if __name__ == "__main__":
    main()
