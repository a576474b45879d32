"""verl RL datasets built from the environments' own task lists.

``data/<env>/{train,test}.parquet``, one row per task (docs/protocol.md): ``data_source``,
``prompt`` (the chat of prompts.py for the action format and instruction the server declares,
whose user turn holds the task's first observation, read from a real server), ``ability``,
``reward_model``, ``extra_info``, ``agent_name``.

    python -m openmanus_rl.datasets --env maze,wordle [--out data] [--max-train N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv import registry
from agentenv.client import EnvPool
from agentenv.launcher import env_servers, parse_server_specs, server_info
from agentenv.protocol import InfoResponse
from openmanus_rl import atomic, per_env, prompts, rewards, trajectories
from openmanus_rl.agent_registration import AGENT_NAME

SPLITS = ("train", "test")


def row(info: InfoResponse, split: str, task_id: int, first_observation: str, reward_style: str) -> dict[str, Any]:
    env = info.env
    return {
        "data_source": env,
        "prompt": prompts.initial_messages(info, first_observation),
        "ability": "agent",
        "reward_model": {"style": reward_style, "ground_truth": trajectories.item_id(env, task_id)},
        "extra_info": {"env_name": env, "split": split, "task_id": task_id, "index": task_id},
        "agent_name": AGENT_NAME,
    }


def task_range(env: str, split: str, n: int, start: int = 0, limit: int | None = None) -> range:
    """Tasks ``start..start+limit-1`` of a split of ``n`` (fewer at its end; all from ``start`` without a limit);
    a start at or past the end is a ValueError, not an empty range."""
    if start and start >= n:
        raise ValueError(f"the {split} split of {env} has {n} tasks; it cannot start at task {start}")
    return range(start, n if limit is None else min(n, start + limit))


async def task_rows(env: str, split: str, urls: Sequence[str], limit: int | None = None,
                    reward_style: str = rewards.DEFAULT_STYLE, page: int = 50, concurrency: int = 4,
                    token: str | None = None, start: int = 0) -> list[dict[str, Any]]:
    """One row per task of ``split`` (``limit`` of them from task ``start``), first observations from the
    servers' ``/tasks`` (no sessions: an environment that can state a task's first observation cheaply is
    never reset for it), pages spread over the replicas."""
    from tqdm.auto import tqdm

    rewards.shape(reward_style, rewards.Outcome(0.0, False, 0.0))  # fail early on an unknown style
    async with EnvPool(urls, token=token) as pool:
        info = await pool.info()
        if split not in info.splits:
            raise ValueError(f"{env} has no split {split!r} (it has {', '.join(info.splits)})")
        tasks = task_range(env, split, info.splits[split], start, limit)
        sem = asyncio.Semaphore(concurrency)
        bar = tqdm(total=len(tasks), desc=f"{env}/{split} tasks", leave=False)

        async def one(k: int, offset: int) -> list[tuple[int, str]]:
            async with sem:
                got = await pool.clients[k % len(pool.clients)].tasks(split, offset, min(page, tasks.stop - offset))
                bar.update(len(got))
                return got

        try:
            pages = await asyncio.gather(*(one(k, o) for k, o in enumerate(tasks[::page])))
        finally:
            bar.close()
    return [row(info, split, task_id, obs, reward_style) for got in pages for task_id, obs in got]


def dataset_paths(out_dir: str | Path, env: str) -> dict[str, Path]:
    return {split: Path(out_dir) / env / f"{split}.parquet" for split in SPLITS}


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    import pandas as pd

    with atomic.path(path) as tmp:  # never leave a half-written dataset behind
        pd.DataFrame(rows).to_parquet(tmp, index=False)


def recipe(info: InfoResponse, limit: int | None, reward_style: str) -> dict[str, Any]:
    """What a dataset file was built from: other settings, or another task set or prompt (the server's
    fingerprint, the metadata the prompt is made of), mean a rebuild. No task is reset to judge it."""
    prompt = {k: getattr(info, k) for k in ("action_format", "code_language", "instruction")}
    return {"limit": limit, "reward_style": reward_style, "fingerprint": info.fingerprint, "prompt": prompt}


def build(envs: Sequence[str], out_dir: str | Path = "data", servers: Mapping[str, Sequence[str]] | None = None,
          max_train: int | Mapping[str, int | None] | None = None, max_test: int | None = None,
          reward_style: str = rewards.DEFAULT_STYLE, force: bool = False, token: str | None = None,
          options: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, dict[str, Path]]:
    """Build the datasets that are missing or stale (all with ``force``); returns their paths. ``max_train`` may
    be a number per environment (``openmanus_rl.per_env``): a multi-environment run's mix of tasks."""
    paths = {env: dataset_paths(out_dir, env) for env in envs}
    limits = {"train": max_train, "test": max_test}
    with env_servers(envs, given=servers, token=token, options=options) as urls:
        for env in envs:
            info = server_info(urls[env], token)
            for split in SPLITS:
                path = paths[env][split]
                limit = per_env.value_for(limits[split], env, f"max_{split}")
                want = recipe(info, limit, reward_style)
                made_by = path.with_suffix(".json")
                if not force and path.exists() and made_by.exists() and json.loads(made_by.read_text()) == want:
                    continue
                rows = asyncio.run(task_rows(env, split, urls[env], limit, reward_style, token=token))
                write_parquet(rows, path)
                made_by.write_text(json.dumps(want))
                print(f"wrote {path} ({len(rows)} rows)")
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Build data/<env>/{train,test}.parquet for verl")
    p.add_argument("--env", required=True, help="NAME[,NAME...] or all")
    p.add_argument("--out", default="data")
    p.add_argument("--max-train", type=int, default=None, help="first N train tasks only")
    p.add_argument("--max-test", type=int, default=None)
    p.add_argument("--reward-style", default=rewards.DEFAULT_STYLE, choices=rewards.STYLES)
    p.add_argument("--server", action="append", default=[], help="NAME=URL of a running server (repeatable)")
    p.add_argument("--force", action="store_true", help="rebuild even if the files exist")
    args = p.parse_args(argv)
    given = parse_server_specs(args.server)
    build(registry.parse_names(args.env, remote=given), args.out, given, args.max_train, args.max_test,
          args.reward_style, args.force)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
