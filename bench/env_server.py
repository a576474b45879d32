"""Throughput and latency of an environment server under concurrent sessions.

    python bench/env_server.py [--env babyai] [--sessions 1,8,32,128] [--seconds 5]
    python bench/env_server.py --capacity [--env all] [--seconds 3] [--max-sessions 256]

For each concurrency level it starts a fresh `agentenv serve` process, opens N
sessions, and has N coroutines step them as fast as the server answers (resetting
episodes that end), through the async client (which coalesces concurrent steps into
/step_batch requests). It prints steps/s and per-step p50/p99 latency as the caller
sees them, beside the same environment stepped in-process with no HTTP.

``--capacity`` sizes replicas: for each environment it doubles the sessions on one replica
(1, 2, 4, ...) until the median step latency is twice that of one session, and prints the last
level below that: how many concurrent rollouts one replica serves before it becomes the
bottleneck (README: "replicas per N rollouts"). Sessions here step back to back; an agent that
thinks between steps loads a server less, so the figure is a safe lower bound.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time

from agentenv import registry
from agentenv.client import AsyncEnvClient
from agentenv.errors import NotSupported
from agentenv.launcher import ServerProcess


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def in_process(name: str, seconds: float) -> dict:
    env_cls = registry.load(name)
    env = env_cls()
    env.options = env_cls.Options()
    env.shared = env_cls.load_shared(env.options)  # as a server would: once, before the first reset
    rng = random.Random(0)
    n_tasks = env_cls.task_counts(env.shared)["train"]
    env.reset(0, "train")
    actions = env.available_actions()
    lat: list[float] = []
    end = time.perf_counter() + seconds
    task = 0
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        r = env.step(rng.choice(actions) if actions else env.random_action(rng))  # open space: its random policy
        lat.append(time.perf_counter() - t0)
        if r.done:
            task = (task + 1) % n_tasks
            env.reset(task, "train")
    env.close()
    env_cls.release_shared(env.shared)
    return {"mode": "in-process", "sessions": 1, "steps": len(lat), "steps_per_s": len(lat) / seconds,
            "p50_ms": 1000 * percentile(lat, 0.5), "p99_ms": 1000 * percentile(lat, 0.99)}


async def over_http(url: str, sessions: int, seconds: float, coalesce: bool) -> dict:
    client = AsyncEnvClient(url, coalesce=coalesce, max_connections=max(8, sessions))
    info = await client.info()
    n_tasks = info["splits"]["train"]
    created = await asyncio.gather(*(client.create(i % n_tasks, "train") for i in range(sessions)))
    actions = await client.available_actions(created[0].env_id)  # empty for an open action space:
    policy = "random"  # then the server's random policy picks the actions (its expert where it has none)
    if not actions:
        try:
            await client.policy_action(created[0].env_id, policy)
        except NotSupported:
            policy = "expert"
    lat: list[float] = []
    stop = False

    async def worker(k: int, env_id: str) -> None:
        rng = random.Random(k)
        task = k
        while not stop:
            action = rng.choice(actions) if actions else await client.policy_action(env_id, policy)
            t0 = time.perf_counter()
            step = await client.step(env_id, action)
            lat.append(time.perf_counter() - t0)
            if step.done:
                task = (task + sessions) % n_tasks
                await client.reset(env_id, task, "train")

    tasks = [asyncio.create_task(worker(k, c.env_id)) for k, c in enumerate(created)]
    await asyncio.sleep(min(1.0, seconds / 5))  # warm-up
    lat.clear()
    t0 = time.perf_counter()
    await asyncio.sleep(seconds)
    n, elapsed = len(lat), time.perf_counter() - t0
    window = list(lat)
    stop = True
    await asyncio.gather(*tasks, return_exceptions=True)
    await asyncio.gather(*(client.close(c.env_id) for c in created), return_exceptions=True)
    await client.aclose()
    return {"mode": "http batch" if coalesce else "http /step", "sessions": sessions, "steps": n,
            "steps_per_s": n / elapsed, "p50_ms": 1000 * percentile(window, 0.5),
            "p99_ms": 1000 * percentile(window, 0.99)}


def capacity(name: str, seconds: float, most: int) -> dict:
    """Double the sessions on one replica until the median step latency doubles."""
    rows: list[dict] = []
    n = 1
    with ServerProcess(name, max_sessions=max(1024, most)) as server:
        while n <= most:
            rows.append(asyncio.run(over_http(server.url, n, seconds, coalesce=True)))
            print(f"  {name} x{n}: p50 {rows[-1]['p50_ms']:.2f} ms", file=sys.stderr)
            if rows[-1]["p50_ms"] >= 2 * rows[0]["p50_ms"]:
                break
            n *= 2
    below = [r for r in rows if r["p50_ms"] < 2 * rows[0]["p50_ms"]]
    last = below[-1]
    return {"env": name, "p50_1_ms": rows[0]["p50_ms"], "sessions": last["sessions"],
            "capped": len(below) == len(rows), "p50_ms": last["p50_ms"], "steps_per_s": last["steps_per_s"]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--env", default="babyai", help="a name, NAME,NAME,... or all (with --capacity)")
    p.add_argument("--sessions", default="1,8,32,128")
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--no-single", action="store_true", help="skip the un-coalesced /step runs")
    p.add_argument("--capacity", action="store_true", help="sessions one replica sustains, per environment")
    p.add_argument("--max-sessions", type=int, default=256, help="--capacity stops doubling here")
    args = p.parse_args()
    if args.capacity:
        names = registry.names() if args.env == "all" else args.env.split(",")
        found = [capacity(n, args.seconds, args.max_sessions) for n in names]
        print(f"\nsessions one replica sustains before the median step latency doubles ({args.seconds:.0f}s a level, "
              "client and server on the same machine, back-to-back steps)")
        print(f"{'env':<10} {'p50 ms (1)':>10} {'sessions':>9} {'p50 ms':>8} {'steps/s':>8}")
        for r in found:
            more = "+" if r["capped"] else ""
            print(f"{r['env']:<10} {r['p50_1_ms']:>10.2f} {str(r['sessions']) + more:>9} {r['p50_ms']:>8.2f} "
                  f"{r['steps_per_s']:>8.0f}")
        return 0
    levels = [int(x) for x in args.sessions.split(",")]

    rows = [in_process(args.env, args.seconds)]
    modes = [True] if args.no_single else [True, False]
    for coalesce in modes:
        for n in levels:
            with ServerProcess(args.env, max_sessions=max(1024, n)) as server:
                rows.append(asyncio.run(over_http(server.url, n, args.seconds, coalesce)))
            print(f"  done: {rows[-1]['mode']} x{n}", file=sys.stderr)

    print(f"\n{args.env}: {args.seconds:.0f}s per row, client and server on the same machine")
    print(f"{'mode':<12} {'sessions':>8} {'steps/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    for r in rows:
        print(f"{r['mode']:<12} {r['sessions']:>8} {r['steps_per_s']:>10.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
