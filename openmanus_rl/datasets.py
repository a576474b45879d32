"""verl RL datasets built from the environments' own task lists.

``data/<env>/{train,test}.parquet``, one row per task (DESIGN.md): ``data_source``,
``prompt`` (the chat of prompts.py, whose user turn holds the task's first observation,
read from a real server), ``ability``, ``reward_model``, ``extra_info``, ``agent_name``.

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
from openmanus_rl import prompts, rewards, trajectories
from openmanus_rl.servers import env_servers, parse_server_args

AGENT_NAME = "openmanus"
SPLITS = ("train", "test")


def row(env: str, split: str, task_id: int, first_observation: str, reward_style: str) -> dict[str, Any]:
    return {
        "data_source": env,
        "prompt": prompts.initial_messages(env, first_observation),
        "ability": "agent",
        "reward_model": {"style": reward_style, "ground_truth": trajectories.item_id(env, task_id)},
        "extra_info": {"env_name": env, "split": split, "task_id": task_id, "index": task_id},
        "agent_name": AGENT_NAME,
    }


async def task_rows(env: str, split: str, urls: Sequence[str], limit: int | None = None,
                    reward_style: str = rewards.DEFAULT_STYLE, concurrency: int = 16) -> list[dict[str, Any]]:
    """One row per task of ``split`` (the first ``limit``), first observations from the servers."""
    from tqdm.auto import tqdm

    rewards.shape(reward_style, rewards.Outcome(0.0, False, 0.0))  # fail early on an unknown style
    async with EnvPool(urls) as pool:
        n = (await pool.clients[0].info())["splits"][split]
        ids = list(range(n if limit is None else min(n, limit)))
        sem = asyncio.Semaphore(concurrency)
        bar = tqdm(total=len(ids), desc=f"{env}/{split} tasks", leave=False)

        async def one(task_id: int) -> dict[str, Any]:
            async with sem, pool.session(task_id, split) as sess:
                bar.update(1)
                return row(env, split, task_id, sess.observation, reward_style)

        try:
            return list(await asyncio.gather(*(one(t) for t in ids)))
        finally:
            bar.close()


def dataset_paths(out_dir: str | Path, env: str) -> dict[str, Path]:
    return {split: Path(out_dir) / env / f"{split}.parquet" for split in SPLITS}


def write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".parquet.tmp")
    pd.DataFrame(rows).to_parquet(tmp, index=False)
    tmp.replace(path)  # never leave a half-written dataset behind


async def _first_observation(urls: Sequence[str], task_id: int, split: str) -> str:
    async with EnvPool(urls) as pool, pool.session(task_id, split) as sess:
        return sess.observation


def is_stale(path: Path, urls: Sequence[str]) -> bool:
    """Does the file's first row still hold what the environment shows for that task? (An updated
    environment package changes its tasks; a stale dataset would prompt with the wrong task.)"""
    import pandas as pd

    first = pd.read_parquet(path).iloc[0]
    extra = first["extra_info"]
    observation = asyncio.run(_first_observation(urls, int(extra["task_id"]), str(extra["split"])))
    return observation not in first["prompt"][-1]["content"]


def build(envs: Sequence[str], out_dir: str | Path = "data", servers: Mapping[str, Sequence[str]] | None = None,
          max_train: int | None = None, max_test: int | None = None, reward_style: str = rewards.DEFAULT_STYLE,
          force: bool = False) -> dict[str, dict[str, Path]]:
    """Build the datasets that are missing or stale (all with ``force``); returns their paths."""
    paths = {env: dataset_paths(out_dir, env) for env in envs}
    limits = {"train": max_train, "test": max_test}
    given = {k: v for k, v in (servers or {}).items() if k in envs}
    with env_servers(envs, given=given) as urls:
        for env in envs:
            for split in SPLITS:
                path = paths[env][split]
                recipe = {"limit": limits[split], "reward_style": reward_style}
                made_by = path.with_suffix(".json")  # how the file was built: other settings mean a rebuild
                if (not force and path.exists() and made_by.exists() and json.loads(made_by.read_text()) == recipe
                        and not is_stale(path, urls[env])):
                    continue
                rows = asyncio.run(task_rows(env, split, urls[env], limits[split], reward_style))
                write_parquet(rows, path)
                made_by.write_text(json.dumps(recipe))
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
    build(registry.parse_names(args.env), args.out, parse_server_args(args.server), args.max_train, args.max_test,
          args.reward_style, args.force)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
