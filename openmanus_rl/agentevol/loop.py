"""The AgentEvol loop: behaviour cloning (iteration 0), then explore, keep, fine-tune, evaluate."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from agentenv import registry
from agentenv.launcher import env_servers, parse_server_specs
from openmanus_rl import capacity, cluster, copy_episodes, dpo, expert_data, machine, sft, trajectories
from openmanus_rl.agentevol.config import (
    MERGE_INIT,
    bc_counts,
    check_per_env,
    eval_counts,
    load_config,
    parse_args,
    reply_budgets,
    turn_caps,
)
from openmanus_rl.agentevol.explore import explore, explore_verl, filter_successes
from openmanus_rl.agentevol.report import report
from openmanus_rl.agentevol.steps import per_env_lines, substep, write_json
from openmanus_rl.launch import clear_errors, env_options
from openmanus_rl.model_presets import model_preset
from openmanus_rl.policies import GenerationSettings, PolicySpec
from openmanus_rl.verl_args import verl_overrides

EVAL_KEYS = ("episodes", "success_rate", "avg_reward", "avg_turns", "invalid_rate", "format_error_rate")


def tiny_corpus(expert_files: Sequence[Path], per_env: int = 50) -> list[str]:
    """The tiny tokenizer's corpus: the text of the first expert trajectories of each environment."""
    corpus = []
    for f in expert_files:
        for item in list(trajectories.read(f))[:per_env]:
            corpus += [t["value"] for t in item["conversations"]]
    return corpus


def base_model(cfg: DictConfig, out: Path, expert_files: Sequence[Path]) -> str:
    preset = model_preset(str(cfg.model))
    if preset.get("build") != "tiny":
        return str(preset["path"])
    from openmanus_rl.tiny_model import build_tiny_model, default_cache

    return str(build_tiny_model(out / "base_model", corpus=tiny_corpus(expert_files), seed=int(cfg.seed),
                                cache=default_cache(), **OmegaConf.to_container(cfg.tiny)))


def copy_data(cfg: DictConfig, out: Path, expert_files: Sequence[Path]) -> list[Path]:
    """The synthetic copy episodes (``data.copy_episodes``) that join the expert episodes in BC and in every
    iteration's merge, written once: ``[out/copy/episodes.jsonl]``, or none."""
    count = int(cfg.data.get("copy_episodes") or 0)
    if not count:
        return []
    path = out / "copy" / "episodes.jsonl"
    turns = int(cfg.data.get("copy_turns", 8))
    substep(out, "copy", lambda: expert_data.write_atomic(
        path, copy_episodes.from_files(expert_files, count, turns, int(cfg.seed))), f"{count} copy episodes")
    return [path]


def evaluate_model(urls: dict[str, list[str]], envs: Sequence[str], model: str, cfg: DictConfig, directory: Path,
                   seed: int) -> None:
    """``directory/eval.json`` (per-environment metrics) and ``eval_trajectories.jsonl``; a line per environment
    as it finishes."""
    caps, budgets = turn_caps(cfg, envs), reply_budgets(cfg, "eval", envs)
    # one model for every environment, each with its own turn limit and reply budget
    greedy = GenerationSettings(max_new_tokens=budgets, temperature=0.0, seed=seed)
    result = expert_data.play(urls, envs, PolicySpec("hf", model), str(cfg.eval.split), eval_counts(cfg, envs), seed,
                              int(cfg.eval.concurrency), greedy, max_turns=caps,
                              on_env=per_env_lines(f"{cfg.eval.split} tasks"))
    metrics = result["envs"]
    expert_data.write_atomic(directory / "eval_trajectories.jsonl", result["trajectories"])
    write_json(directory / "eval.json", {
        "split": str(cfg.eval.split), "seed": seed, "greedy": True,
        "envs": {env: {k: m[k] for k in EVAL_KEYS} for env, m in metrics.items()},
        "average": {k: round(statistics.fmean(m[k] for m in metrics.values()), 4)
                    for k in ("success_rate", "avg_reward")},
    })


def finetune_start(how: str, iteration: int, *, base: str, bc: str | None, previous: str) -> str:
    """The weights iteration ``iteration``'s fine-tune starts from (``merge.init``). BC (iteration 0) starts from
    the base model; an iteration continues the ``previous`` iteration's model, starts again from ``bc`` (every
    iteration's model is then BC plus one fine-tune: no drift compounds over iterations), or from the ``base``
    model as in the paper."""
    if how not in MERGE_INIT:
        raise ValueError(f"merge.init is {'|'.join(MERGE_INIT)}, not {how!r}")
    if iteration == 0 or how == "base":
        return base
    if how == "previous":
        return previous
    if bc is None:
        raise ValueError("merge.init=bc: iteration 0 (BC) has no model yet")
    return bc


def finetune(cfg: DictConfig, init_model: str, files: Sequence[Path], directory: Path, iteration: int) -> None:
    items = sft.read_items(files)
    n = sft.write_sft_parquet(items, directory / "sft_data.parquet")
    def setting(key: str) -> Any:  # AgentEvol's fine-tunes (iteration >= 1) may have their own epochs and lr
        later = cfg.sft.get(f"iteration_{key}") if iteration > 0 else None
        return cfg.sft[key] if later is None else later

    epochs, lr = int(setting("epochs")), float(setting("lr"))
    batch_size = int(cfg.sft.batch_size)
    if sft.sft_steps(n, 1, batch_size) == 0:
        raise SystemExit(f"agentevol: {n} trajectories are fewer than one SFT batch ({batch_size})")
    extra = [f"optim.lr_warmup_steps={int(cfg.sft.get('warmup_steps') or -1)}"]
    if cfg.sft.get("schedule"):  # verl's scheduler over each fine-tune's steps (constant | cosine)
        extra += [f"optim.lr_scheduler_type={cfg.sft.schedule}", f"optim.min_lr_ratio={float(cfg.sft.min_lr_ratio)}"]
    if cfg.sft.get("steps"):  # a fixed budget: as many passes as it takes, verl stops at the last step
        steps = int(cfg.sft.steps)
        epochs = -(-steps // sft.sft_steps(n, 1, batch_size))
        extra.append(f"trainer.total_training_steps={steps}")
    extra += [f"{k}={v}" for k, v in OmegaConf.to_container(cfg.verl).items()]
    threads = {"OPENMANUS_VERL_CPU_THREADS": str(cfg.sft.threads)} if cfg.sft.get("threads") else {}
    sft.train(directory / "sft_data.parquet", init_model, directory / "checkpoint", log=directory / "sft.log",
              epochs=epochs, batch_size=batch_size, lr=lr,
              max_length=int(cfg.sft.max_length), nproc=cfg.sft.get("nproc"), seed=int(cfg.seed) + 1,
              preset=f"{cfg.preset}_sft", extra=extra, env=threads)


def preference_pairs(urls: dict[str, list[str]], envs: Sequence[str], cfg: DictConfig, directory: Path,
                     expert_files: Sequence[Path]) -> None:
    """``directory/pairs/<env>.jsonl``: each explored failure with a success of the same task (learning from
    failures, the paper's Table 6); a task the agent never solved takes its initial (expert) episode where
    ``dpo.pair_with_initial`` allows and there is one."""
    for env, initial in zip(envs, expert_files, strict=True):
        explored = list(trajectories.read(directory / "explore" / f"{env}.jsonl"))
        extra = trajectories.read(initial) if cfg.dpo.pair_with_initial else ()
        pairs = dpo.pairs_for(explored, expert_data.success_threshold(urls[env]), extra)
        expert_data.write_atomic(directory / "pairs" / f"{env}.jsonl", pairs)


def prefer(cfg: DictConfig, init_model: str, envs: Sequence[str], directory: Path, iteration: int) -> None:
    pairs = [p for e in envs for p in trajectories.read(directory / "pairs" / f"{e}.jsonl")]
    if not pairs:
        raise SystemExit(f"agentevol: iteration {iteration} has no preference pairs (no task with both a success "
                         "and a failure); sample more per instruction (explore.samples_per_instruction=2)")
    settings = dpo.DPOSettings(beta=float(cfg.dpo.beta), lr=float(cfg.dpo.lr), epochs=int(cfg.dpo.epochs),
                               batch_pairs=int(cfg.dpo.batch_pairs), sft_weight=float(cfg.dpo.sft_weight),
                               max_length=int(cfg.sft.max_length), seed=int(cfg.seed) + 1,
                               save_every=int(cfg.dpo.save_every))
    dpo.train(pairs, init_model, directory / "dpo_checkpoint", settings, log=directory / "dpo.log")


def run(cfg: DictConfig, given: dict[str, list[str]]) -> Path:
    envs = registry.parse_names(str(cfg.env_name), remote=given)
    check_per_env(cfg, envs)
    out = Path(cfg.output_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, out / "agentevol_config.yaml")
    machine.record(out)
    seed, iterations = int(cfg.seed), int(cfg.iterations)
    expert_files = [out / "expert" / f"{e}.jsonl" for e in envs]
    local = [e for e in envs if e not in given]
    at_once = max(int(cfg.explore.concurrency), int(cfg.eval.concurrency))  # episodes in flight, at most
    replicas, notes = capacity.choose_replicas(cfg.get("replicas") or "auto", capacity.needs(local, at_once))
    for note in notes:
        print(f"agentevol: {note}", flush=True)
    placement = cluster.server_placement(cfg, replicas * len(local), verl_overrides(str(cfg.preset)))
    with env_servers(envs, replicas, given=given, options=env_options(cfg), **placement) as urls:
        trajectory_files = {env: str(path) for env, path in (cfg.data.get("expert_files") or {}).items()}
        substep(out, "expert", lambda: expert_data.collect(envs, out / "expert", bc_counts(cfg, envs), urls, seed,
                                                           given=trajectory_files), "expert trajectories")
        initial = expert_files + copy_data(cfg, out, expert_files)
        base = base_model(cfg, out, expert_files)
        if cfg.eval.untrained:
            substep(out / "untrained", "eval", lambda: evaluate_model(urls, envs, base, cfg, out / "untrained", seed),
                    "evaluate the untrained model")
        model, bc = base, None
        for k in range(iterations + 1):
            d = out / f"iter_{k}"
            if k == 0:
                files = initial
            else:
                prev = model
                explorer = explore_verl if cfg.explore.backend == "verl" else explore
                substep(d, "explore",
                        lambda d=d, prev=prev, k=k, f=explorer: f(urls, envs, prev, cfg, d, seed + 1000 * k, k),
                        f"iteration {k}: explore ({cfg.explore.backend})")
                substep(d, "filter", lambda d=d: filter_successes(urls, envs, d), f"iteration {k}: keep successes")
                since = range(1, k + 1) if cfg.merge.data == "accumulate" else [k]
                files = initial + [out / f"iter_{j}" / "filtered" / f"{e}.jsonl" for j in since for e in envs]
            init = finetune_start(str(cfg.merge.init), k, base=base, bc=bc, previous=model)
            substep(d, "sft", lambda d=d, init=init, files=files, k=k: finetune(cfg, init, files, d, k),
                    f"iteration {k}: fine-tune{' (behaviour cloning)' if k == 0 else ''}")
            model = str(sft.hf_dir(d / "checkpoint"))
            if k == 0:
                bc = model
            if k > 0 and cfg.dpo.enabled:  # learning from failures too: DPO on top of the iteration's fine-tune
                substep(d, "pairs", lambda d=d: preference_pairs(urls, envs, cfg, d, expert_files),
                        f"iteration {k}: pair failures with successes")
                substep(d, "dpo", lambda d=d, model=model, k=k: prefer(cfg, model, envs, d, k),
                        f"iteration {k}: DPO")
                model = str(sft.hf_dir(d / "dpo_checkpoint"))
            substep(d, "eval", lambda d=d, model=model: evaluate_model(urls, envs, model, cfg, d, seed),
                    f"iteration {k}: evaluate")
            print(report(out, envs, iterations), flush=True)
    print(report(out, envs, iterations, final=True), flush=True)
    print("\nwall time\n" + (out / "timings.txt").read_text(), flush=True)
    print(f"agentevol: wrote {out / 'table.txt'}, {out / 'timings.txt'}, {out / 'success_rate.png'}, "
          f"{out / 'summary.json'}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args, extra = parse_args(argv)
    cfg = load_config(args, extra)
    if not cfg.env_name:
        raise SystemExit("train_agentevol.sh: name the environments with --env_name NAME[,NAME...]")
    return clear_errors("train_agentevol.sh", lambda: run(cfg, parse_server_specs(args.server)))
