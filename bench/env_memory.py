"""Memory of an environment server over many sessions: is there a per-session leak?

    python bench/env_memory.py [--env webshop,sciworld] [--warmup 50] [--cycles 500] [--width 8] [--every 100]

For each environment it starts `agentenv serve`, runs a warm-up of create/step/close cycles
(caches, thread pool, allocator arenas), then measures the resident memory of the server's whole
process tree (simulators and JVMs included) before and after ``--cycles`` more, and checks that no
session and no child process is left. It prints one row per environment.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

import psutil
from tqdm import tqdm

from agentenv.client import AsyncEnvClient
from agentenv.launcher import ServerProcess
from agentenv.processes import REAPER_MARK
from agentenv.testing import create_close_cycles, tree_rss


def left_behind(pid: int) -> list[psutil.Process]:
    """The server's child processes, but the reaper, which lives as long as the server (agentenv.processes)."""
    out = []
    for p in psutil.Process(pid).children(recursive=True):
        try:
            if not any(REAPER_MARK in part for part in p.cmdline()):
                out.append(p)
        except psutil.Error:  # ended meanwhile
            pass
    return out


def measure(name: str, warmup: int, cycles: int, width: int, every: int = 0) -> dict:
    with ServerProcess(name) as server:
        async def run() -> dict:
            async with AsyncEnvClient(server.url, max_connections=max(8, width)) as c:
                info = await c.info()
                width_ = min(width, info.get("max_sessions") or width)
                n_tasks = info["splits"]["train"]
                await create_close_cycles(c, warmup, n_tasks, width_)
                before = tree_rss(server.proc.pid)
                t0 = time.perf_counter()
                series = []  # (cycles so far, KiB): a leak keeps climbing, allocator warm-up levels off
                with tqdm(total=cycles, desc=f"{name} sessions", leave=False) as bar:
                    done = 0
                    while done < cycles:
                        chunk = min(every or cycles, cycles - done)
                        await create_close_cycles(c, chunk, n_tasks, width_, progress=bar.update)
                        done += chunk
                        series.append((done, tree_rss(server.proc.pid) >> 10))
                seconds = time.perf_counter() - t0
                after = tree_rss(server.proc.pid)
                return {"series": series, "env": name, "cycles": cycles, "width": width_, "before_kib": before >> 10,
                        "after_kib": after >> 10, "growth_kib": (after - before) >> 10,
                        "sessions_left": (await c.health())["sessions"],
                        "children_left": len(left_behind(server.proc.pid)),
                        "seconds": seconds}

        return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="webshop,sciworld")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--cycles", type=int, default=500)
    p.add_argument("--width", type=int, default=8, help="sessions at a time (capped by the server's max_sessions)")
    p.add_argument("--every", type=int, default=0, help="also read the memory every N cycles (0: only at the end)")
    args = p.parse_args(argv)
    rows = [measure(name, args.warmup, args.cycles, args.width, args.every) for name in args.env.split(",")]
    cols = ["env", "cycles", "width", "before_kib", "after_kib", "growth_kib", "sessions_left", "children_left",
            "seconds"]
    print(" | ".join(cols))
    print(" | ".join("---" for _ in cols))
    for r in rows:
        print(" | ".join(f"{r[c]:.0f}" if isinstance(r[c], float) else str(r[c]) for c in cols))
    for r in rows:
        if len(r["series"]) > 1:
            print(f"{r['env']} KiB after N cycles: " + ", ".join(f"{n}: {kib:,}" for n, kib in r["series"]))
    return 0 if all(r["sessions_left"] == 0 and r["children_left"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
