"""``train_agentevol.sh``: behaviour cloning, then AgentEvol (AgentGym paper, sec. 4) on verl's SFT trainer.

    ./train_agentevol.sh --env_name maze[,wordle...] [--iterations M] [--model tiny|PATH] [--output_dir DIR]
                         [--server NAME=URL ...] [key=value ...]

Iteration 0 (behaviour cloning): the environments' experts play train tasks ``0..data.bc_tasks-1``; the
successful episodes (AgentTraj, ``openmanus_rl.expert_data``) are the initial data; the base model is
fine-tuned on them with ``verl.trainer.sft_trainer`` (``openmanus_rl.sft``). Iteration k >= 1:

1. explore: the model of iteration k-1 samples ``explore.samples_per_instruction`` trajectories per
   instruction of train tasks ``0..data.explore_tasks-1`` (a wider set than BC's) at
   ``explore.temperature``, with the training prompts and action parser. ``explore.backend: verl``
   (default) runs verl's ``main_ppo`` in validation-only mode (``trainer.val_only``,
   ``rollout.val_kwargs``) with the OpenManus agent loop and verl's rollout replicas (the PPO path;
   vLLM/SGLang on GPUs) and collects the loop's AgentTraj rollout log; ``explore.backend: hf`` uses the
   evaluator's episode runner (batched generation reusing each episode's keys and values, no Ray). Both
   seed every episode and turn from (seed, task, draw), so reruns repeat exactly;
2. filter: keeps the trajectories whose reward reaches the environment's ``success_threshold``;
3. fine-tune on initial data + this iteration's successes (``merge.data: current``; ``accumulate`` keeps
   every iteration's), continuing the previous model for ``sft.iteration_epochs`` passes (``merge.init:
   previous``, the default: minutes on a CPU) or, as in the paper, from the base model (``merge.init: base``
   with ``sft.iteration_epochs: null``: the BC budget ``sft.epochs``);
4. evaluate: greedy decoding on each environment's test split (``openmanus-eval``'s code).

Layout of ``DIR``: ``base_model/`` (tiny model), ``expert/<env>.jsonl``, ``untrained/eval.json``,
``iter_<k>/{explore,filtered}/<env>.jsonl``, ``iter_<k>/sft_data.parquet``, ``iter_<k>/checkpoint/`` (verl
layout; ``checkpoint/global_step_N/huggingface`` is the transformers model), ``iter_<k>/eval.json``
(per-environment success rate and average reward), ``iter_<k>/eval_trajectories.jsonl``,
``summary.json``, ``table.txt``, ``success_rate.png``, ``timings.txt`` (wall time per stage; each
directory's ``timings.json`` holds its sub-steps' seconds).

Resuming: every sub-step writes its outputs under temporary names, renames them into place and then
writes its marker ``<dir>/.done/<step>``; a re-run with the same ``--output_dir`` skips every marked
sub-step and redoes an unmarked one from scratch, so an interrupted run loses at most the sub-step
that was running. Sub-steps are deterministic for a fixed ``seed``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, OmegaConf

from agentenv import registry
from agentenv.launcher import env_servers, parse_server_specs
from openmanus_rl import atomic, capacity, cluster, expert_data, sft, trajectories
from openmanus_rl.model_presets import model_preset
from openmanus_rl.policies import GenerationSettings, PolicySpec
from openmanus_rl.verl_cpu.presets import config_dir, default_preset

TOP_LEVEL_FLAGS = ("env_name", "iterations", "model", "output_dir", "preset")
EVAL_KEYS = ("episodes", "success_rate", "avg_reward", "avg_turns", "invalid_rate", "format_error_rate")


# -- configuration ------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    from openmanus_rl.train import launcher_parser, parse_launcher_args

    p = launcher_parser("train_agentevol.sh", __doc__.split("\n\n")[0], "agentevol.yaml")
    p.add_argument("--iterations", type=int)
    return parse_launcher_args(p, argv)


def load_config(args: argparse.Namespace, extra: Sequence[str]) -> DictConfig:
    from openmanus_rl.train import is_setting

    cfg = OmegaConf.load(args.config or config_dir() / "agentevol.yaml")
    for flag in TOP_LEVEL_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            cfg[flag] = value
    # configs/agentevol.yaml < the model preset's agentevol: block (a pretrained model's learning rates and
    # reply budgets, not the tiny model's) < the command line
    cfg = OmegaConf.merge(cfg, model_preset(str(cfg.model)).get("agentevol") or {})
    for e in extra:
        key, value = e.split("=", 1)
        key = key.lstrip("+")
        if key.startswith("verl."):
            cfg.verl[key[len("verl."):]] = yaml.safe_load(value) if value else value
        else:
            if not is_setting(cfg, key):
                raise SystemExit(f"train_agentevol.sh: unknown setting {key!r} (see configs/agentevol.yaml; "
                                 "verl's SFT settings go as verl.KEY=VALUE)")
            OmegaConf.update(cfg, key, yaml.safe_load(value) if value else value, merge=True)
    if cfg.preset == "auto":
        cfg.preset = default_preset()
    if cfg.output_dir is None:
        cfg.output_dir = f"outputs/agentevol-{str(cfg.env_name).replace(',', '+')}"
    if int(cfg.iterations) < 0:
        raise SystemExit("train_agentevol.sh: --iterations must be >= 0")
    if cfg.merge.data not in ("current", "accumulate") or cfg.merge.init not in ("base", "previous"):
        raise SystemExit("train_agentevol.sh: merge.data is current|accumulate, merge.init is base|previous")
    return cfg


# -- resumable sub-steps ------------------------------------------------------------------------------


def done(directory: Path, step: str) -> bool:
    return (directory / ".done" / step).is_file()


def mark(directory: Path, step: str) -> None:
    atomic.write_text(directory / ".done" / step, "done\n")


def substep(directory: Path, step: str, run: Callable[[], Any], label: str) -> bool:
    """Run ``run`` unless ``directory/.done/step`` says it finished; True if it ran. Its wall time goes to
    ``directory/timings.json`` (kept apart from the results, which a resumed run reproduces exactly)."""
    if done(directory, step):
        print(f"agentevol: {label}: done already, skipped", flush=True)
        return False
    print(f"agentevol: {label} ...", flush=True)
    start = time.monotonic()
    run()
    seconds = time.monotonic() - start
    timings = directory / "timings.json"
    write_json(timings, {**(json.loads(timings.read_text()) if timings.is_file() else {}), step: round(seconds, 1)})
    mark(directory, step)
    print(f"agentevol: {label}: {minutes(seconds)}", flush=True)
    return True


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s" if seconds >= 60 else f"{seconds:.0f} s"


def write_json(path: Path, data: Any) -> None:
    atomic.write_json(path, data, sort_keys=True)


# -- the pieces -------------------------------------------------------------------------------------


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
    from openmanus_rl.tiny_model import build_tiny_model

    settings = {**preset.get("tiny", {}), **OmegaConf.to_container(cfg.tiny)}
    return str(build_tiny_model(out / "base_model", corpus=tiny_corpus(expert_files), seed=int(cfg.seed),
                                **settings))


def evaluate_model(urls: dict[str, list[str]], envs: Sequence[str], model: str, cfg: DictConfig, directory: Path,
                   seed: int) -> None:
    """``directory/eval.json`` (per-environment metrics) and ``eval_trajectories.jsonl``."""
    settings = GenerationSettings(max_new_tokens=int(cfg.eval.max_new_tokens), temperature=0.0, seed=seed)
    result = expert_data.play(urls, envs, PolicySpec("hf", model), str(cfg.eval.split), cfg.eval.tasks, seed,
                              int(cfg.eval.concurrency), settings)
    expert_data.write_atomic(directory / "eval_trajectories.jsonl", result["trajectories"])
    write_json(directory / "eval.json", {
        "split": result["split"], "seed": seed, "greedy": True,
        "envs": {env: {k: m[k] for k in EVAL_KEYS} for env, m in result["envs"].items()},
        "average": {k: result["average"][k] for k in ("success_rate", "avg_reward")},
    })


def explore(urls: dict[str, list[str]], envs: Sequence[str], model: str, cfg: DictConfig, directory: Path,
            seed: int) -> None:
    """``directory/explore/<env>.jsonl``: every sampled trajectory (AgentTraj), ``sample`` = which draw."""
    settings = [GenerationSettings(max_new_tokens=int(cfg.explore.max_new_tokens),
                                   temperature=float(cfg.explore.temperature), top_p=float(cfg.explore.top_p),
                                   seed=seed + j) for j in range(int(cfg.explore.samples_per_instruction))]
    for env in envs:
        items = []
        for j, s in enumerate(settings):
            result = expert_data.play(urls, [env], PolicySpec("hf", model), "train", int(cfg.data.explore_tasks),
                                      s.seed, int(cfg.explore.concurrency), s)
            items += [{**it, "sample": j} for it in result["trajectories"]]
        expert_data.write_atomic(directory / "explore" / f"{env}.jsonl", items)


def explore_verl(urls: dict[str, list[str]], envs: Sequence[str], model: str, cfg: DictConfig, directory: Path,
                 seed: int) -> None:
    """Exploration through verl itself: ``main_ppo`` in validation-only mode (``trainer.val_only``) on a
    parquet of the exploration instructions, sampling with ``rollout.val_kwargs`` through the OpenManus
    agent loop and verl's rollout replicas (the PPO path); the loop's rollout log (AgentTraj lines) becomes
    ``directory/explore/<env>.jsonl``."""
    import asyncio

    from openmanus_rl import datasets
    from openmanus_rl.agent_registration import AGENT_NAME, CONFIG_VAR, write_agent_loop_files
    from openmanus_rl.train import run_verl
    from openmanus_rl.verl_cpu.presets import verl_overrides

    work = directory / "explore_verl.partial"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    samples = int(cfg.explore.samples_per_instruction)
    rows = [{**r, "extra_info": {**r["extra_info"], "sample": j, "sample_seed": sample_seed(seed, env, r, j)}}
            for env in envs
            for r in asyncio.run(datasets.task_rows(env, "train", urls[env], int(cfg.data.explore_tasks)))
            for j in range(samples)]
    datasets.write_parquet(rows, work / "instructions.parquet")
    registration, settings = write_agent_loop_files(work, {"env_servers": urls, "rollout_dir": str(work / "rollouts"),
                                                           "max_new_tokens": int(cfg.explore.max_new_tokens)})
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
        "trainer.project_name": "openmanus_rl",
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
    import sys

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


def sample_seed(seed: int, env: str, row: dict[str, Any], sample: int) -> int:
    """The sampling seed of one exploration episode (the agent loop derives each turn's from it):
    the same run, instruction and draw always sample the same trajectory."""
    import hashlib

    key = f"{seed}/{env}/{row['extra_info']['task_id']}/{sample}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:7], "big")


def filter_successes(urls: dict[str, list[str]], envs: Sequence[str], directory: Path) -> None:
    for env in envs:
        items = list(trajectories.read(directory / "explore" / f"{env}.jsonl"))
        kept = expert_data.successful(items, expert_data.success_threshold(urls[env]))
        expert_data.write_atomic(directory / "filtered" / f"{env}.jsonl", kept)


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


# -- report -------------------------------------------------------------------------------------------


def rows(out: Path, envs: Sequence[str], iterations: int) -> list[dict[str, Any]]:
    """One row per finished evaluation: untrained, BC (0), AgentEvol 1..M."""
    found = []
    candidates = [("untrained", out / "untrained")] + [(str(k), out / f"iter_{k}") for k in range(iterations + 1)]
    for name, d in candidates:
        if not (d / "eval.json").is_file():
            continue
        ev = json.loads((d / "eval.json").read_text())
        row: dict[str, Any] = {"iteration": name, "eval": ev["envs"]}
        if (d / "filtered").is_dir():
            row["kept"] = {e: sum(1 for _ in trajectories.read(d / "filtered" / f"{e}.jsonl")) for e in envs}
            row["explored"] = {e: sum(1 for _ in trajectories.read(d / "explore" / f"{e}.jsonl")) for e in envs}
        if (d / "sft_data.parquet").is_file():
            import pyarrow.parquet as pq

            row["sft_items"] = pq.ParquetFile(d / "sft_data.parquet").metadata.num_rows
        found.append(row)
    return found


def table(found: list[dict[str, Any]], envs: Sequence[str]) -> str:
    head = ["iteration", "sft data"] + [f"{e} {m}" for e in envs for m in ("success", "reward", "kept")]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in found:
        name = {"untrained": "untrained", "0": "0 (BC)"}.get(r["iteration"], r["iteration"])
        cells = [name, str(r.get("sft_items", "-"))]
        for e in envs:
            m = r["eval"][e]
            kept = f"{r['kept'][e]}/{r['explored'][e]}" if "kept" in r else "-"
            cells += [f"{100 * m['success_rate']:.1f}%", f"{m['avg_reward']:.3f}", kept]
        lines.append(" | ".join(cells))
    return "\n".join(lines)


def plot(found: list[dict[str, Any]], envs: Sequence[str], path: Path) -> None:
    from openmanus_rl.plots import pyplot, save_figure

    plt = pyplot()
    iters = [r for r in found if r["iteration"] != "untrained"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for e in envs:
        ax.plot([int(r["iteration"]) for r in iters], [100 * r["eval"][e]["success_rate"] for r in iters],
                marker="o", label=e)
        base = next((r for r in found if r["iteration"] == "untrained"), None)
        if base is not None:
            ax.axhline(100 * base["eval"][e]["success_rate"], linestyle=":", linewidth=1,
                       color=ax.lines[-1].get_color(), label=f"{e} untrained")
    ax.set_xlabel("iteration (0 = behaviour cloning)")
    ax.set_ylabel("test success rate (%)")
    ax.set_xticks([int(r["iteration"]) for r in iters])
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    ax.set_title("AgentEvol")
    fig.tight_layout()
    save_figure(fig, path)


def time_table(out: Path, iterations: int) -> str:
    """Wall time of each stage, as the runs that finished them measured it (a resumed run's table shows
    the interrupted sub-step's redone part only)."""
    head = ["stage", "explore", "keep", "fine-tune", "evaluate", "total"]
    keys = ["explore", "filter", "sft", "eval"]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    total = 0.0
    stages = [("expert trajectories", out), ("untrained", out / "untrained")]
    stages += [("0 (BC)" if k == 0 else str(k), out / f"iter_{k}") for k in range(iterations + 1)]
    for name, d in stages:
        seen = json.loads((d / "timings.json").read_text()) if (d / "timings.json").is_file() else {}
        if seen:
            total += sum(seen.values())
            cells = [minutes(seen[k]) if k in seen else "-" for k in keys]
            lines.append(" | ".join([name, *cells, minutes(sum(seen.values()))]))
    lines.append(" | ".join(["all stages", *["" for _ in keys], minutes(total)]))
    return "\n".join(lines)


def report(out: Path, envs: Sequence[str], iterations: int, final: bool = False) -> str:
    found = rows(out, envs, iterations)
    text = table(found, envs)
    if final:
        write_json(out / "summary.json", {"envs": list(envs), "iterations": iterations, "rows": found})
        (out / "table.txt").write_text(text + "\n")
        (out / "timings.txt").write_text(time_table(out, iterations) + "\n")
        plot(found, envs, out / "success_rate.png")
    return text


# -- the loop -----------------------------------------------------------------------------------------


def run(cfg: DictConfig, given: dict[str, list[str]]) -> Path:
    envs = registry.parse_names(str(cfg.env_name), remote=given)
    out = Path(cfg.output_dir).resolve()
    out.mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, out / "agentevol_config.yaml")
    seed, iterations = int(cfg.seed), int(cfg.iterations)
    expert_files = [out / "expert" / f"{e}.jsonl" for e in envs]
    from openmanus_rl.train import env_options
    from openmanus_rl.verl_cpu.presets import verl_overrides

    local = [e for e in envs if e not in given]
    at_once = max(int(cfg.explore.concurrency), int(cfg.eval.concurrency))  # episodes in flight, at most
    replicas, notes = capacity.choose_replicas(cfg.get("replicas") or "auto", capacity.needs(local, at_once))
    for note in notes:
        print(f"agentevol: {note}", flush=True)
    placement = cluster.server_placement(cfg, replicas * len(local), verl_overrides(str(cfg.preset)))
    with env_servers(envs, replicas, given=given, options=env_options(cfg), **placement) as urls:
        substep(out, "expert", lambda: expert_data.collect(envs, out / "expert", int(cfg.data.bc_tasks), urls, seed),
                "expert trajectories")
        base = base_model(cfg, out, expert_files)
        if cfg.eval.untrained:
            substep(out / "untrained", "eval", lambda: evaluate_model(urls, envs, base, cfg, out / "untrained", seed),
                    "evaluate the untrained model")
        model = base
        for k in range(iterations + 1):
            d = out / f"iter_{k}"
            if k == 0:
                files = expert_files
            else:
                prev = model
                explorer = explore_verl if cfg.explore.backend == "verl" else explore
                substep(d, "explore",
                        lambda d=d, prev=prev, k=k, f=explorer: f(urls, envs, prev, cfg, d, seed + 1000 * k),
                        f"iteration {k}: explore ({cfg.explore.backend})")
                substep(d, "filter", lambda d=d: filter_successes(urls, envs, d), f"iteration {k}: keep successes")
                since = range(1, k + 1) if cfg.merge.data == "accumulate" else [k]
                files = expert_files + [out / f"iter_{j}" / "filtered" / f"{e}.jsonl" for j in since for e in envs]
            init = base if k == 0 or cfg.merge.init == "base" else model
            substep(d, "sft", lambda d=d, init=init, files=files, k=k: finetune(cfg, init, files, d, k),
                    f"iteration {k}: fine-tune{' (behaviour cloning)' if k == 0 else ''}")
            model = str(sft.hf_dir(d / "checkpoint"))
            substep(d, "eval", lambda d=d, model=model: evaluate_model(urls, envs, model, cfg, d, seed),
                    f"iteration {k}: evaluate")
            print(report(out, envs, iterations), flush=True)
    print(report(out, envs, iterations, final=True), flush=True)
    print("\nwall time\n" + (out / "timings.txt").read_text(), flush=True)
    print(f"agentevol: wrote {out / 'table.txt'}, {out / 'timings.txt'}, {out / 'success_rate.png'}, "
          f"{out / 'summary.json'}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from openmanus_rl.train import clear_errors

    args, extra = parse_args(argv)
    cfg = load_config(args, extra)
    if not cfg.env_name:
        raise SystemExit("train_agentevol.sh: name the environments with --env_name NAME[,NAME...]")
    return clear_errors("train_agentevol.sh", lambda: run(cfg, parse_server_specs(args.server)))


if __name__ == "__main__":
    raise SystemExit(main())
