"""Exploration (the last model plays a wider set of instructions) and the filter that keeps successes."""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from agentenv.launcher import server_info
from openmanus_rl import cluster, datasets, expert_data, trajectories
from openmanus_rl.agent_registration import AGENT_NAME, CONFIG_VAR, write_agent_loop_files
from openmanus_rl.agentevol.config import (
    explore_block_start,
    explore_counts,
    explore_starts,
    reply_budgets,
    turn_caps,
)
from openmanus_rl.agentevol.steps import per_env_lines
from openmanus_rl.launch import run_verl
from openmanus_rl.model_presets import model_preset
from openmanus_rl.policies import GenerationSettings, PolicySpec
from openmanus_rl.verl_args import verl_overrides


def explore(urls: dict[str, list[str]], envs: Sequence[str], model: str, cfg: DictConfig, directory: Path,
            seed: int, iteration: int = 1) -> None:
    """``directory/explore/<env>.jsonl``: every sampled trajectory (AgentTraj), ``sample`` = which draw."""
    items: dict[str, list[dict[str, Any]]] = {env: [] for env in envs}
    caps, budgets, counts = turn_caps(cfg, envs), reply_budgets(cfg, "explore", envs), explore_counts(cfg, envs)
    starts = iteration_starts(urls, envs, cfg, iteration)
    for j in range(int(cfg.explore.samples_per_instruction)):
        s = GenerationSettings(max_new_tokens=budgets, temperature=float(cfg.explore.temperature),
                               top_p=float(cfg.explore.top_p), seed=seed + j)
        result = expert_data.play(urls, envs, PolicySpec("hf", model), "train", counts,
                                  s.seed, int(cfg.explore.concurrency), s, max_turns=caps,
                                  on_env=per_env_lines("train tasks explored"), start=starts)
        for it in result["trajectories"]:
            items[trajectories.parse_item_id(it["item_id"])[0]].append({**it, "sample": j})
    for env in envs:
        expert_data.write_atomic(directory / "explore" / f"{env}.jsonl", items[env])


def explore_verl(urls: dict[str, list[str]], envs: Sequence[str], model: str, cfg: DictConfig, directory: Path,
                 seed: int, iteration: int = 1) -> None:
    """Exploration through verl itself: ``main_ppo`` in validation-only mode (``trainer.val_only``) on a
    parquet of the exploration instructions, sampling with ``rollout.val_kwargs`` through the OpenManus
    agent loop and verl's rollout replicas (the PPO path); the loop's rollout log (AgentTraj lines) becomes
    ``directory/explore/<env>.jsonl``."""

    work = directory / "explore_verl.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    samples, counts = int(cfg.explore.samples_per_instruction), explore_counts(cfg, envs)
    starts = iteration_starts(urls, envs, cfg, iteration)
    rows = [{**r, "extra_info": {**r["extra_info"], "sample": j, "sample_seed": sample_seed(seed, env, r, j)}}
            for env in envs
            for r in asyncio.run(datasets.task_rows(env, "train", urls[env], counts[env], start=starts[env]))
            for j in range(samples)]
    datasets.write_parquet(rows, work / "instructions.parquet")
    # the agent loop takes one limit for all or a mapping per environment, as this run's settings do
    loop_settings = {"env_servers": urls, "rollout_dir": str(work / "rollouts"),
                     "max_new_tokens": reply_budgets(cfg, "explore", envs), "max_turns": turn_caps(cfg, envs)}
    registration, settings = write_agent_loop_files(work, loop_settings)
    preset_verl = model_preset(str(cfg.model)).get("verl", {})
    overrides: dict[str, Any] = {
        **preset_verl,
        "data.train_files": [str(work / "instructions.parquet")],
        "data.val_files": [str(work / "instructions.parquet")],
        "data.val_batch_size": int(cfg.explore.concurrency),  # episodes in flight: the generation batch
        "data.max_prompt_length": int(cfg.explore.verl.max_prompt_length),
        "data.max_response_length": int(cfg.explore.verl.max_response_length),
        "trainer.val_only": True,
        "trainer.val_before_train": True,
        "trainer.total_training_steps": 1,
        "trainer.save_freq": -1,
        "trainer.default_local_dir": str(work / "checkpoints"),
        "trainer.project_name": "agentenv_rl",
        "trainer.experiment_name": f"agentevol-{directory.name}-explore",
        "trainer.logger": ["console"],
        "algorithm.adv_estimator": "grpo",
        "actor_rollout_ref.rollout.agent.agent_loop_config_path": str(registration),
        "actor_rollout_ref.rollout.agent.default_agent_loop": AGENT_NAME,
        "actor_rollout_ref.rollout.val_kwargs.do_sample": True,
        "actor_rollout_ref.rollout.val_kwargs.temperature": float(cfg.explore.temperature),
        "actor_rollout_ref.rollout.val_kwargs.top_p": float(cfg.explore.top_p),
        "actor_rollout_ref.rollout.val_kwargs.n": 1,  # the parquet holds each instruction once per sample
        "data.seed": seed,
        **OmegaConf.to_container(cfg.explore.verl.overrides),
    }
    worker_env = {CONFIG_VAR: str(settings)}
    cmd = cluster.join_cluster([sys.executable, "-m", "verl.trainer.main_ppo",
                                *verl_overrides(str(cfg.preset), model_path=model, overrides=overrides)],
                               cluster.server_placement(cfg, 0), worker_env)
    (work / "verl_command.txt").write_text(" ".join(cmd) + "\n")
    code = run_verl(cmd, work, worker_env)
    if code != 0:
        raise RuntimeError(f"verl exploration failed (exit {code}); command in {work / 'verl_command.txt'}")
    timing = ("env_seconds", "gen_seconds")  # wall-clock: the only fields a rerun would change
    items = [{k: v for k, v in it.items() if k not in timing}
             for f in sorted((work / "rollouts").glob("*.jsonl")) for it in trajectories.read(f)]
    for env in envs:
        mine = sorted((it for it in items if it.get("env") == env), key=lambda it: (int(it["task_id"]), it["sample"]))
        expert_data.write_atomic(directory / "explore" / f"{env}.jsonl", mine)
    shutil.rmtree(work, ignore_errors=True)


def iteration_starts(urls: dict[str, list[str]], envs: Sequence[str], cfg: DictConfig,
                     iteration: int) -> dict[str, int]:
    """The first train instruction each environment explores in this iteration: ``data.explore_start``, or with
    ``data.explore_fresh`` the block after the previous iteration's (the servers say where the split ends)."""
    starts = explore_starts(cfg, envs)
    if not cfg.data.get("explore_fresh", False):
        return starts
    counts = explore_counts(cfg, envs)
    return {env: explore_block_start(starts[env], counts[env], iteration,
                                     int(server_info(urls[env]).splits["train"])) for env in envs}


def sample_seed(seed: int, env: str, row: dict[str, Any], sample: int) -> int:
    """The sampling seed of one exploration episode (the agent loop derives each turn's from it):
    the same run, instruction and draw always sample the same trajectory."""
    key = f"{seed}/{env}/{row['extra_info']['task_id']}/{sample}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:7], "big")


def filter_successes(urls: dict[str, list[str]], envs: Sequence[str], directory: Path) -> None:
    for env in envs:
        items = list(trajectories.read(directory / "explore" / f"{env}.jsonl"))
        kept = expert_data.successful(items, expert_data.success_threshold(urls[env]))
        expert_data.write_atomic(directory / "filtered" / f"{env}.jsonl", kept)
