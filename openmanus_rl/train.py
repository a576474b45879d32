"""``train_ppo.sh``: PPO/GRPO on one or several environments with verl's own trainer.

    ./train_ppo.sh --env_name maze [--algo grpo|ppo] [--model tiny|PATH|HUB_NAME] [--model_preset NAME]
                   [--steps N] [--output_dir DIR] [--server NAME=URL ...] [key=value ...]

It builds the datasets that are missing, starts the environment servers it needs (or
uses ``--server``), writes the agent-loop config that tells verl's rollout workers where
they are, runs ``python -m verl.trainer.main_ppo`` with the experiment (configs/ppo.yaml composed by
hydra with its machine, model and algo groups: :mod:`openmanus_rl.configs`), prints
a per-environment summary of every step's episodes, and stops the servers on any exit.
A re-run with the same output directory resumes from verl's last checkpoint. RL from behaviour
cloning: ``--model`` a BC checkpoint (``openmanus_rl.model_presets``), ``--model_preset tiny-bc``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, OmegaConf

from agentenv import registry
from agentenv.launcher import env_servers, parse_server_specs, server_info
from openmanus_rl import budgets, capacity, cluster, configs, datasets, demos, machine, per_env, run_summary
from openmanus_rl.agent_registration import CONFIG_VAR, SETTINGS_VAR, write_agent_loop_files
from openmanus_rl.horizon import TurnSchedule
from openmanus_rl.launch import (
    apply_setting,
    clear_errors,
    env_options,
    launcher_parser,
    parse_launcher_args,
    run_verl,
)
from openmanus_rl.model_presets import model_overrides, resolve_model_path
from openmanus_rl.policies.verl_ckpt import TRACKER
from openmanus_rl.verl_args import default_preset, format_value, override_key, render

SETTING_FLAGS = ("env_name", "steps", "minutes", "output_dir", "replicas")  # flags that set a key of the config
GROUP_KEYS = ("model", "model_preset", "algo", "preset", "machine")  # key=value forms of the group flags


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    p = launcher_parser("train_ppo.sh", __doc__, "ppo.yaml")
    p.add_argument("--algo", help="a config of configs/algo/: grpo | ppo")
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
    """The experiment (configs/ppo.yaml, or --config) composed by hydra with the groups the flags choose
    (machine, model, algo) and the flags and ``key=value`` settings on top; a ``key=value`` that names no key
    of the experiment goes to verl as it is (``cfg.verl_extra``)."""
    experiment = args.config or "ppo.yaml"
    try:
        base = configs.compose(experiment)
    except configs.ConfigError as e:
        raise SystemExit(f"train_ppo.sh: {e}") from None
    given = {k: v for k, v in (e.split("=", 1) for e in extra) if k in GROUP_KEYS}
    preset = args.preset or given.get("preset") or given.get("machine") or str(base.preset)
    preset = default_preset() if preset == "auto" else preset
    machines = [m for m in configs.options("machine") if not m.endswith("_sft")]
    if preset not in machines:
        raise SystemExit(f"train_ppo.sh: unknown --preset {preset!r}; choose from auto, {', '.join(machines)}")
    algo = args.algo or given.get("algo")
    if algo is not None and algo not in configs.options("algo"):
        raise SystemExit(f"train_ppo.sh: unknown --algo {algo!r}; choose from {', '.join(configs.options('algo'))}")
    model, lend = args.model or given.get("model"), args.model_preset or given.get("model_preset")
    if lend and not model:
        raise SystemExit("train_ppo.sh: --model_preset lends a preset's settings to a --model given by path")
    try:
        chosen = [f"machine={preset}", *([f"algo={algo}"] if algo else []),
                  *(model_overrides(model, lend) if model else [])]
    except ValueError as e:
        raise SystemExit(f"train_ppo.sh: {e}") from None
    flags = [f"++{f}={format_value(getattr(args, f))}" for f in SETTING_FLAGS if getattr(args, f) is not None]
    try:
        cfg = configs.compose(experiment, [*chosen, *flags])
        OmegaConf.set_struct(cfg, False)
        # a setting is a key of the experiment as its groups make it (a preset's per-environment mapping has
        # entries, agent.max_turns.maze, that configs/ppo.yaml's single value does not); it is set as
        # train_agentevol.sh sets it (a whole mapping replaces the preset's), in hydra's grammar
        verl_extra = []  # the rest goes to verl as given
        for e in extra:
            given, value = e.split("=", 1)
            if given not in GROUP_KEYS and not apply_setting("train_ppo.sh", cfg, override_key(e), value):
                verl_extra.append(e)
    except configs.ConfigError as e:
        raise SystemExit(f"train_ppo.sh: {e}") from None
    cfg.preset = preset
    cfg.verl_extra = verl_extra
    if cfg.output_dir is None:
        cfg.output_dir = f"outputs/{cfg.env_name.replace(',', '+')}-{cfg.algo}"
    return cfg


def training_model(cfg: DictConfig) -> dict[str, Any]:
    """The run's ``model:`` (what its preset names), a path resolved (a verl checkpoint directory: its latest
    weights)."""
    model = OmegaConf.to_container(cfg.get("model") or OmegaConf.create({}))
    if model.get("build") != "tiny":
        if not model.get("path"):
            raise ValueError("the model preset names no weights (model.path); give --model")
        model["path"] = resolve_model_path(str(model["path"]))
    return model


def prepare_model(model: dict[str, Any], train_files: Sequence[Path], out: Path) -> str:
    """The model path verl loads: a built tiny model (corpus: the environments' own text) or a given one."""
    if model.get("build") != "tiny":
        return str(model["path"])
    import pandas as pd

    from openmanus_rl import prompts
    from openmanus_rl.tiny_model import build_tiny_model, default_cache

    corpus = [prompts.format_reply("move up")]
    for f in train_files:
        frame = pd.read_parquet(f)
        corpus += [m["content"] for msgs in frame["prompt"].head(200) for m in msgs]
    return str(build_tiny_model(out / "model", corpus=corpus, cache=default_cache(), **model.get("tiny", {})))


def experiment_settings(cfg: DictConfig) -> dict[str, Any]:
    """verl's settings as this run gives them (keys without hydra's ``+``): the composed ``verl:`` block (machine,
    experiment, model, algorithm), then the command line's, later ones winning."""
    merged = {override_key(k): v for k, v in OmegaConf.to_container(cfg.verl).items()}
    merged.update({override_key(k): v for k, v in (_key_value(e) for e in cfg.verl_extra)})
    return merged


def demo_settings(cfg: DictConfig, envs: Sequence[str], settings: dict[str, Any]) -> dict[str, int]:
    """``agent.demos``' recorded successes per environment, read here so a malformed file is a user's error
    before anything starts. A replayed reply is not the model's sample and has no rollout log-probs
    (0 is recorded), so PPO's old log-probs must be the actor's: a command line that keeps the rollout's (bypass
    mode), or weighs samples by rollout log-probs (verl's rollout importance sampling or rejection), is refused."""
    agent = cfg.get("agent") or {}
    spec = agent.get("demos")
    spec = OmegaConf.to_container(spec) if isinstance(spec, DictConfig) else spec
    found = {env: len(demos.load(path, env)) for env, path in demos.files(spec, envs).items()}
    if not spec:
        return found
    if int(agent.get("demos_per_group", 1)) < 0:
        raise ValueError("agent.demos_per_group must be 0 or more")
    if any(override_key(e) == BYPASS for e in cfg.verl_extra) and settings.get(BYPASS):
        raise ValueError(f"agent.demos replays expert tokens, whose old log-probs the actor must compute: "
                         f"drop {BYPASS}=true")
    weighed = [k for k in ("algorithm.rollout_correction.rollout_is", "algorithm.rollout_correction.rollout_rs")
               if settings.get(k) not in (None, "null", "None")]
    if weighed:
        raise ValueError(f"agent.demos: replayed expert tokens have no rollout log-probs to weigh by; "
                         f"drop {', '.join(weighed)}")
    # the rollout workers read them: absolute paths, whatever directory a worker runs in
    cfg.agent.demos = ({env: str(Path(path).resolve()) for env, path in spec.items()} if isinstance(spec, dict)
                       else str(Path(spec).resolve()))
    return found


BYPASS = "algorithm.rollout_correction.bypass_mode"


def _key_value(setting: str) -> tuple[str, Any]:
    key, _, value = setting.partition("=")
    try:
        return key, yaml.safe_load(value)
    except yaml.YAMLError:  # hydra's own grammar (e.g. interpolations): kept as written
        return key, value


def rendered(cfg: DictConfig, model_path: str | None = None, overrides: dict[str, Any] | None = None,
             resolved: Sequence[str] = ()) -> list[str]:
    """The run's verl settings as hydra overrides, the command line's last but for the ``resolved`` keys (a
    command line's ``auto`` budget the run has measured: its number, not the word, goes to verl)."""
    block = OmegaConf.to_container(cfg.verl)
    extra = [e for e in cfg.verl_extra if override_key(e) not in resolved]
    return [*render(block, model_path, overrides, gpu=str(cfg.preset).startswith("gpu")), *extra]


def verl_command(cfg: DictConfig, model_path: str, agent_yaml: Path, data: dict[str, dict[str, Path]],
                 out: Path, budget: dict[str, Any] | None = None) -> list[str]:
    overrides: dict[str, Any] = dict(budget or {})  # the token budgets the run measured (run_budgets)
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
    if (cfg.get("agent") or {}).get("demos"):
        overrides[BYPASS] = False  # replayed tokens are not the rollout's samples (openmanus_rl.demos)
    return [sys.executable, "-m", "verl.trainer.main_ppo", *rendered(cfg, model_path, overrides, list(budget or ()))]


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
    return clear_errors("train_ppo.sh", lambda: train(cfg, args))


def train(cfg: DictConfig, args: argparse.Namespace) -> int:
    given = parse_server_specs(args.server)
    envs = registry.parse_names(cfg.env_name, remote=given)
    out = Path(cfg.output_dir).resolve()
    try:
        model = training_model(cfg)
        agent_limits(cfg, envs)
        train_tasks = per_env.positive_ints(cfg.max_train_tasks, envs, "max_train_tasks", optional=True)
        if cfg.get("minutes") is not None and not float(cfg.minutes) > 0:
            raise ValueError(f"--minutes must be positive, got {cfg.minutes}")
        settings = experiment_settings(cfg)
        demo_counts = demo_settings(cfg, envs, settings)
        local = [e for e in envs if e not in given]
        replicas, notes = capacity.choose_replicas(
            cfg.replicas, capacity.needs(local, capacity.concurrent_episodes(settings, cfg.max_val_tasks)))
    except ValueError as e:
        print(f"train_ppo.sh: {e}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"train_ppo: {note}", flush=True)
    if demo_counts:
        counts = ", ".join(f"{env} {n}" for env, n in demo_counts.items())
        print(f"train_ppo: expert demonstrations in the groups (recorded successes): {counts}", flush=True)
    if args.dry_run:
        return dry_run(cfg, envs, model, settings, out)

    out.mkdir(parents=True, exist_ok=True)
    placement = cluster.server_placement(cfg, replicas * len(local), rendered(cfg))
    with env_servers(envs, replicas, given=given, options=env_options(cfg), **placement) as urls:
        data = datasets.build(envs, Path(cfg.data_dir).resolve(), urls, max_train=train_tasks,
                              reward_style=cfg.reward_style)
        data = validation_files(data, cfg.max_val_tasks)
        model_path = prepare_model(model, [p["train"] for p in data.values()], out)
        infos = {env: server_info(urls[env]) for env in envs}
        files = [f for p in data.values() for f in (p["train"], p["val"])]
        try:
            budget = run_budgets(cfg, envs, settings, infos, budgets.longest_first_prompt(files, model_path),
                                 model_path)
        except budgets.BudgetError as e:
            print(f"train_ppo.sh: {e}", file=sys.stderr)
            return 2
        OmegaConf.save(cfg, out / "train_config.yaml")
        machine.record(out)
        agent_yaml, agent_settings = write_agent_loop_files(
            out, {"env_servers": urls, "rollout_dir": str(out / "rollouts"), **OmegaConf.to_container(cfg.agent)})
        worker_env = {CONFIG_VAR: str(agent_settings)}
        cmd = cluster.join_cluster(verl_command(cfg, model_path, agent_yaml, data, out, budget), placement, worker_env)
        (out / "verl_command.txt").write_text(" ".join(cmd) + "\n")
        print(f"train_ppo: {', '.join(envs)} | {cfg.algo} | model {model_path} | preset {cfg.preset} | "
              f"servers {dict(urls)} | output {out}", flush=True)
        after = resumes_after(settings, out / "checkpoints")
        moved = run_summary.set_aside_steps_after(out / "rollouts", after)
        if moved is not None:
            print(f"train_ppo: resuming after step {after}: the logs of the steps after it, which an earlier run "
                  f"did not finish, moved to {moved}", flush=True)
        return run_verl(cmd, out, worker_env)


def resumes_after(settings: dict[str, Any], checkpoints: Path) -> int:
    """The step verl's trainer resumes after, by its ``trainer.resume_mode`` (0: it starts over)."""
    mode = settings.get("trainer.resume_mode", "auto")
    if mode == "disable":
        return 0
    if mode == "resume_path":
        m = re.search(r"global_step_(\d+)", str(settings.get("trainer.resume_from_path") or ""))
        return int(m.group(1)) if m else 0
    tracker = Path(settings.get("trainer.default_local_dir") or checkpoints) / TRACKER
    try:
        return int(tracker.read_text().strip())
    except (OSError, ValueError):
        return 0


def agent_limits(cfg: DictConfig, envs: Sequence[str]) -> tuple[Any, Any]:
    """The agent's turn cap (its schedule's largest limit) and reply budget: one value when one serves every
    environment, else a mapping per environment (``openmanus_rl.per_env``); a ValueError says what is wrong."""
    agent = OmegaConf.to_container(cfg.agent)
    turns, replies = agent.get("max_turns"), agent["max_new_tokens"]
    per_turns = per_env.check(turns, envs, "agent.max_turns")
    for limit in per_turns.values():
        TurnSchedule.parse(limit)  # a limit or a schedule, else a ValueError
    per_replies = per_env.positive_ints(replies, envs, "agent.max_new_tokens")
    caps = {env: budgets.agent_turn_cap(limit) for env, limit in per_turns.items()}
    return (caps if per_env.is_per_env(turns) else budgets.agent_turn_cap(turns),
            per_replies if per_env.is_per_env(replies) else int(replies))


def run_budgets(cfg: DictConfig, envs: Sequence[str], settings: dict[str, Any], infos: dict[str, Any],
                prompts: budgets.PromptLengths | None, model_path: str | None) -> dict[str, Any]:
    """The token budgets a model preset left to the run (``auto``), printed with how they were reached."""
    agent = OmegaConf.to_container(cfg.agent)
    caps, replies = agent_limits(cfg, envs)
    wants_context = settings.get(budgets.RESPONSE_KEY) == budgets.AUTO
    changed, notes = budgets.resolve(
        settings, prompts=prompts, turn_limits=budgets.turn_limits_of(infos),
        agent_turns=caps, reply_tokens=replies,
        observation_tokens=int(agent.get("observation_tokens", 512)),
        context=budgets.context_length(model_path) if wants_context else None)
    for note in notes:
        print(f"train_ppo: {note}", flush=True)
    return changed


def dry_run(cfg: DictConfig, envs: Sequence[str], model: dict[str, Any], settings: dict[str, Any],
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
    model_path = str(out / "model") if model.get("build") == "tiny" else str(model["path"])  # prepare_model's
    budget = run_budgets(cfg, envs, settings, infos, None, None)  # no hub look-up: the context is read at run time
    placement = {"backend": str((cfg.get("env_servers") or {}).get("backend") or "local")}
    # on Ray the settings travel in the job's runtime environment; the file is not written yet: a placeholder
    worker_env = {CONFIG_VAR: str(out / "agent_settings.yaml"), SETTINGS_VAR: "<the run's agent settings>"}
    cmd = cluster.join_cluster(verl_command(cfg, model_path, out / "agent_loop.yaml", data, out, budget), placement,
                               worker_env)
    print(" ".join(cmd))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
