"""``train_ppo.sh``: PPO/GRPO on one or several environments with verl's own trainer.

    ./train_ppo.sh --env_name maze [--algo grpo|ppo] [--model tiny|PATH|HUB_NAME] [--model_preset NAME]
                   [--steps N] [--output_dir DIR] [--server NAME=URL ...] [key=value ...]

It builds the datasets that are missing, starts the environment servers it needs (or
uses ``--server``), writes the agent-loop config that tells verl's rollout workers where
they are, runs ``python -m verl.trainer.main_ppo`` with the experiment (configs/ppo.yaml,
configs/model/*.yaml) on top of the machine preset (configs/verl/{cpu,gpu}.yaml), prints
a per-environment summary of every step's episodes, and stops the servers on any exit.
A re-run with the same output directory resumes from verl's last checkpoint. RL from behaviour
cloning: ``--model`` a BC checkpoint (``openmanus_rl.model_presets``), ``--model_preset tiny-bc``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, OmegaConf

from agentenv import registry
from agentenv.launcher import env_servers, parse_server_specs, server_info
from openmanus_rl import budgets, capacity, cluster, datasets
from openmanus_rl.agent_registration import CONFIG_VAR, write_agent_loop_files
from openmanus_rl.horizon import TurnSchedule
from openmanus_rl.launch import clear_errors, env_options, is_setting, launcher_parser, parse_launcher_args, run_verl
from openmanus_rl.model_presets import model_preset, resolve_model_path, settings_preset
from openmanus_rl.verl_cpu.presets import config_dir, default_preset, load_preset, verl_overrides

TOP_LEVEL_FLAGS = ("env_name", "algo", "model", "model_preset", "steps", "minutes", "output_dir", "preset",
                   "replicas")


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    p = launcher_parser("train_ppo.sh", __doc__, "ppo.yaml")
    p.add_argument("--algo", choices=["grpo", "ppo"])
    p.add_argument("--model_preset", "--model-preset",
                   help="settings of configs/model/NAME.yaml for a --model given by path (e.g. tiny-bc)")
    p.add_argument("--steps", type=int)
    p.add_argument("--minutes", type=float,
                   help="wall-clock budget: the run ends at the step boundary near it (--steps stays the cap)")
    p.add_argument("--replicas", help="server processes per environment, or auto (enough for a step's episodes)")
    p.add_argument("--dry_run", "--dry-run", action="store_true",
                   help="print the verl command and exit (no servers started, no datasets built)")
    return parse_launcher_args(p, argv, "verl settings")


def load_config(args: argparse.Namespace, extra: Sequence[str]) -> DictConfig:
    """configs/ppo.yaml, then the command-line flags; ``key=value`` arguments that name a key of
    the experiment file set it, the others go to verl."""
    cfg = OmegaConf.load(args.config or config_dir() / "ppo.yaml")
    for flag in TOP_LEVEL_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            cfg[flag] = value
    cfg.verl_extra = [e for e in extra if not is_setting(cfg, e.split("=", 1)[0].lstrip("+~"))]
    for e in extra:
        if e not in cfg.verl_extra:
            key, value = e.split("=", 1)
            OmegaConf.update(cfg, key.lstrip("+~"), yaml.safe_load(value) if value else value, merge=True)
    if cfg.preset == "auto":
        cfg.preset = default_preset()
    if cfg.output_dir is None:
        cfg.output_dir = f"outputs/{cfg.env_name.replace(',', '+')}-{cfg.algo}"
    if cfg.algo not in cfg.algos:
        raise SystemExit(f"train_ppo.sh: unknown --algo {cfg.algo!r}; choose from {', '.join(cfg.algos)}")
    return cfg


def cli_agent(extra: Sequence[str]) -> DictConfig:
    """``agent.*`` settings given on the command line (they win over the model preset's)."""
    given = {e.split("=", 1)[0].removeprefix("agent."): yaml.safe_load(e.split("=", 1)[1])
             for e in extra if e.startswith("agent.")}
    return OmegaConf.create(given)


def training_model(cfg: DictConfig) -> dict[str, Any]:
    """The preset of ``--model`` (weights and settings), with a ``--model_preset``'s settings for a
    model given by path, whose path is resolved (a verl checkpoint directory: its latest weights)."""
    preset = model_preset(str(cfg.model))
    if cfg.get("model_preset"):
        preset = {**settings_preset(str(cfg.model_preset)), "path": preset.get("path", str(cfg.model))}
    if "path" in preset and preset.get("build") != "tiny":
        preset["path"] = resolve_model_path(str(preset["path"]))
    return preset


def prepare_model(cfg: DictConfig, preset: dict[str, Any], train_files: Sequence[Path], out: Path) -> str:
    """The model path verl loads: a built tiny model (corpus: the environments' own text) or a given one."""
    if preset.get("build") != "tiny":
        return str(preset["path"])
    import pandas as pd

    from openmanus_rl import prompts
    from openmanus_rl.tiny_model import build_tiny_model

    corpus = [prompts.format_reply("move up")]
    for f in train_files:
        frame = pd.read_parquet(f)
        corpus += [m["content"] for msgs in frame["prompt"].head(200) for m in msgs]
    return str(build_tiny_model(out / "model", corpus=corpus, **preset.get("tiny", {})))


def experiment_layers(cfg: DictConfig, preset: dict[str, Any]) -> list[dict[str, Any]]:
    """verl overrides the run's own files give, in order (later ones win): the experiment file, the model
    preset, the algorithm."""
    return [OmegaConf.to_container(cfg.verl), preset.get("verl", {}), OmegaConf.to_container(cfg.algos[cfg.algo])]


def experiment_settings(cfg: DictConfig, preset: dict[str, Any]) -> dict[str, Any]:
    """verl's settings as this run gives them (keys without hydra's ``+``): the machine preset, the run's
    layers (:func:`experiment_layers`) and the command line, later ones winning."""
    merged: dict[str, Any] = {}
    layers = [load_preset(cfg.preset), *experiment_layers(cfg, preset), dict(_key_value(e) for e in cfg.verl_extra)]
    for layer in layers:
        merged.update({k.lstrip("+~"): v for k, v in layer.items()})
    return merged


def _key_value(setting: str) -> tuple[str, Any]:
    key, _, value = setting.partition("=")
    try:
        return key, yaml.safe_load(value)
    except yaml.YAMLError:  # hydra's own grammar (e.g. interpolations): kept as written
        return key, value


def verl_command(cfg: DictConfig, model_path: str, agent_yaml: Path, data: dict[str, dict[str, Path]],
                 out: Path, preset: dict[str, Any], budget: dict[str, Any] | None = None) -> list[str]:
    overrides: dict[str, Any] = {}
    for layer in experiment_layers(cfg, preset):
        overrides.update(layer)
    overrides.update(budget or {})  # the token budgets the run measured (run_budgets)
    overrides.update({
        "data.train_files": [str(p["train"]) for p in data.values()],
        "data.val_files": [str(p["val"]) for p in data.values()],
        "actor_rollout_ref.rollout.agent.agent_loop_config_path": str(agent_yaml),
        "trainer.total_training_steps": int(cfg.steps),
        **({"+trainer.time_budget_minutes": float(cfg.minutes)} if cfg.get("minutes") else {}),
        "trainer.test_freq": int(cfg.steps),
        "trainer.default_local_dir": str(out / "checkpoints"),
        "trainer.experiment_name": out.name,
        "hydra.run.dir": str(out / "hydra"),  # not ./outputs/<date>/<time> of the caller's directory
    })
    return [sys.executable, "-m", "verl.trainer.main_ppo",
            *verl_overrides(cfg.preset, model_path=model_path, overrides=overrides), *cfg.verl_extra]


def validation_files(data: dict[str, dict[str, Path]], limit: int | None) -> dict[str, dict[str, Path]]:
    """Validation runs on the first ``limit`` test tasks of each environment (a small parquet beside it)."""
    import pandas as pd

    out = {}
    for env, paths in data.items():
        val = paths["test"]
        if limit:
            val = paths["test"].with_name(f"test_first{limit}.parquet")
            if not val.exists() or val.stat().st_mtime < paths["test"].stat().st_mtime:
                pd.read_parquet(paths["test"]).head(limit).to_parquet(val, index=False)
        out[env] = {**paths, "val": val}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args, extra = parse_args(argv)
    cfg = load_config(args, extra)
    return clear_errors("train_ppo.sh", lambda: train(cfg, args, extra))


def train(cfg: DictConfig, args: argparse.Namespace, extra: Sequence[str]) -> int:
    given = parse_server_specs(args.server)
    envs = registry.parse_names(cfg.env_name, remote=given)
    out = Path(cfg.output_dir).resolve()
    try:
        preset = training_model(cfg)
        cfg.agent = OmegaConf.merge(cfg.agent, preset.get("agent", {}), cli_agent(extra))  # defaults < model < CLI
        TurnSchedule.parse(OmegaConf.to_container(cfg.agent).get("max_turns"))
        if cfg.get("minutes") is not None and not float(cfg.minutes) > 0:
            raise ValueError(f"--minutes must be positive, got {cfg.minutes}")
        settings = experiment_settings(cfg, preset)
        local = [e for e in envs if e not in given]
        replicas, notes = capacity.choose_replicas(
            cfg.replicas, capacity.needs(local, capacity.concurrent_episodes(settings, cfg.max_val_tasks)))
    except ValueError as e:
        print(f"train_ppo.sh: {e}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"train_ppo: {note}", flush=True)
    if args.dry_run:
        return dry_run(cfg, envs, preset, settings, out)

    out.mkdir(parents=True, exist_ok=True)
    placement = cluster.server_placement(cfg, replicas * len(local), [*verl_overrides(cfg.preset), *cfg.verl_extra])
    with env_servers(envs, replicas, given=given, options=env_options(cfg), **placement) as urls:
        data = datasets.build(envs, Path(cfg.data_dir).resolve(), urls, max_train=cfg.max_train_tasks,
                              reward_style=cfg.reward_style)
        data = validation_files(data, cfg.max_val_tasks)
        model_path = prepare_model(cfg, preset, [p["train"] for p in data.values()], out)
        infos = {env: server_info(urls[env]) for env in envs}
        files = [f for p in data.values() for f in (p["train"], p["val"])]
        try:
            budget = run_budgets(cfg, settings, infos, budgets.longest_first_prompt(files, model_path), model_path)
        except budgets.BudgetError as e:
            print(f"train_ppo.sh: {e}", file=sys.stderr)
            return 2
        OmegaConf.save(cfg, out / "train_config.yaml")
        agent_yaml, agent_settings = write_agent_loop_files(
            out, {"env_servers": urls, "rollout_dir": str(out / "rollouts"), **OmegaConf.to_container(cfg.agent)})
        worker_env = {CONFIG_VAR: str(agent_settings)}
        cmd = cluster.join_cluster(verl_command(cfg, model_path, agent_yaml, data, out, preset, budget), placement,
                                   worker_env)
        (out / "verl_command.txt").write_text(" ".join(cmd) + "\n")
        print(f"train_ppo: {', '.join(envs)} | {cfg.algo} | model {model_path} | preset {cfg.preset} | "
              f"servers {dict(urls)} | output {out}", flush=True)
        return run_verl(cmd, out, worker_env)


def run_budgets(cfg: DictConfig, settings: dict[str, Any], infos: dict[str, Any],
                prompts: budgets.PromptLengths | None, model_path: str | None) -> dict[str, Any]:
    """The token budgets a model preset left to the run (``auto``), printed with how they were reached."""
    agent = OmegaConf.to_container(cfg.agent)
    wants_context = settings.get(budgets.RESPONSE_KEY) == budgets.AUTO
    changed, notes = budgets.resolve(
        settings, prompts=prompts, turn_limits=budgets.turn_limits_of(infos),
        agent_turns=budgets.agent_turn_cap(agent.get("max_turns")), reply_tokens=int(agent["max_new_tokens"]),
        observation_tokens=int(agent.get("observation_tokens", 512)),
        context=budgets.context_length(model_path) if wants_context else None)
    for note in notes:
        print(f"train_ppo: {note}", flush=True)
    return changed


def dry_run(cfg: DictConfig, envs: Sequence[str], preset: dict[str, Any], settings: dict[str, Any],
            out: Path) -> int:
    """Print the verl command a run would start, without starting servers or building datasets: data paths
    are where the run writes them, servers are placeholders, ``auto`` budgets are estimated."""
    data = {env: {**p, "val": p["test"]}
            for env, p in ((e, datasets.dataset_paths(Path(cfg.data_dir).resolve(), e)) for e in envs)}
    infos = {}
    for env in envs:
        try:
            infos[env] = registry.load(env)  # the class declares max_turns; remote environments are not asked
        except registry.UnknownEnvironment:
            pass
    model_path = str(out / "model") if preset.get("build") == "tiny" else str(preset["path"])  # prepare_model's
    budget = run_budgets(cfg, settings, infos, None, None)  # no hub look-up: the context is read at run time
    placement = {"backend": str((cfg.get("env_servers") or {}).get("backend") or "local")}
    cmd = cluster.join_cluster(verl_command(cfg, model_path, out / "agent_loop.yaml", data, out, preset, budget),
                               placement, {CONFIG_VAR: str(out / "agent_settings.yaml")})
    print(" ".join(cmd))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
