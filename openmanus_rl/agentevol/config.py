"""Its configuration: configs/agentevol.yaml, the model preset's ``model.agentevol:`` block, the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from omegaconf import DictConfig, OmegaConf

from openmanus_rl import configs, per_env
from openmanus_rl.launch import (
    apply_setting,
    launcher_parser,
    parse_launcher_args,
    parse_setting,
)
from openmanus_rl.model_presets import model_preset
from openmanus_rl.verl_args import default_preset

DESCRIPTION = "train_agentevol.sh: behaviour cloning, then AgentEvol (AgentGym paper, sec. 4) on verl's SFT trainer."
TOP_LEVEL_FLAGS = ("env_name", "iterations", "model", "output_dir", "preset")
MERGE_DATA = ("current", "accumulate")  # merge.data: this iteration's successes, or every iteration's
MERGE_INIT = ("base", "previous", "bc")  # merge.init: where an iteration's fine-tune starts (loop.finetune_start)


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    p = launcher_parser("train_agentevol.sh", DESCRIPTION, "agentevol.yaml")
    p.add_argument("--iterations", type=int)
    return parse_launcher_args(p, argv)


def load_config(args: argparse.Namespace, extra: Sequence[str]) -> DictConfig:
    try:
        cfg = configs.compose(args.config or "agentevol.yaml")
    except configs.ConfigError as e:
        raise SystemExit(f"train_agentevol.sh: {e}") from None
    OmegaConf.set_struct(cfg, False)
    for flag in TOP_LEVEL_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            cfg[flag] = value
    # configs/agentevol.yaml < the model preset (a tiny model's size: model.tiny) < its agentevol: block (a
    # pretrained model's learning rates and reply budgets, not the tiny model's) < the command line
    preset = model_preset(str(cfg.model))
    cfg = OmegaConf.merge(cfg, {"tiny": preset.get("tiny") or {}}, preset.get("agentevol") or {})
    for e in extra:
        key, value = e.split("=", 1)
        key = key.lstrip("+")
        if key.startswith("verl."):
            cfg.verl[key[len("verl."):]] = parse_setting("train_agentevol.sh", key, value)
        elif not apply_setting("train_agentevol.sh", cfg, key, value):
            raise SystemExit(f"train_agentevol.sh: unknown setting {key!r} (see configs/agentevol.yaml; "
                             "verl's SFT settings go as verl.KEY=VALUE)")
    if cfg.preset == "auto":
        cfg.preset = default_preset()
    if cfg.output_dir is None:
        cfg.output_dir = f"outputs/agentevol-{str(cfg.env_name).replace(',', '+')}"
    if int(cfg.iterations) < 0:
        raise SystemExit("train_agentevol.sh: --iterations must be >= 0")
    if cfg.merge.data not in MERGE_DATA or cfg.merge.init not in MERGE_INIT:
        raise SystemExit(f"train_agentevol.sh: merge.data is {'|'.join(MERGE_DATA)}, "
                         f"merge.init is {'|'.join(MERGE_INIT)}")
    if not isinstance(cfg.data.get("explore_fresh", False), bool):
        raise SystemExit(f"train_agentevol.sh: data.explore_fresh is true or false, not {cfg.data.explore_fresh!r}")
    copies, turns = cfg.data.get("copy_episodes", 0), cfg.data.get("copy_turns", 8)
    if not (_whole(copies) and copies >= 0 and _whole(turns) and turns >= 1):
        raise SystemExit("train_agentevol.sh: data.copy_episodes is a count >= 0 and data.copy_turns one >= 1, not "
                         f"{copies!r} and {turns!r}")
    return cfg


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def turn_caps(cfg: DictConfig, envs: Sequence[str]) -> dict[str, int | None]:
    """Each environment's turn limit for exploration and evaluation (AgentGym's ``max_round``; one for all or
    per environment); None: the environment's own."""
    return per_env.positive_ints(cfg.get("max_turns"), envs, "max_turns", optional=True)


def bc_counts(cfg: DictConfig, envs: Sequence[str]) -> dict[str, int]:
    """How many train instructions each environment's expert plays for behaviour cloning (``data.bc_tasks``: one
    for all or per environment: an environment the model reads only after many episodes gets more)."""
    return per_env.positive_ints(cfg.data.bc_tasks, envs, "data.bc_tasks")


def explore_counts(cfg: DictConfig, envs: Sequence[str]) -> dict[str, int]:
    """How many train instructions each environment explores (``data.explore_tasks``: one for all or per
    environment, as the paper's instruction sets differ in size per environment)."""
    return per_env.positive_ints(cfg.data.explore_tasks, envs, "data.explore_tasks")


def explore_starts(cfg: DictConfig, envs: Sequence[str]) -> dict[str, int]:
    """The first train instruction each environment explores (``data.explore_start``, default 0: exploration
    plays tasks ``START..START+N-1``). Past BC's tasks, every explored instruction is one the expert episodes do
    not already hold."""
    return per_env.non_negative_ints(cfg.data.get("explore_start", 0), envs, "data.explore_start")


def explore_block_start(start: int, count: int, iteration: int, size: int) -> int:
    """The first train instruction of AgentEvol iteration ``iteration``'s block with ``data.explore_fresh``:
    iteration 1 plays tasks ``start..start+count-1`` and each later iteration the ``count`` tasks after the block
    before it, so no iteration replays an instruction an earlier one explored (measured on the five-environment
    agent: it ends where the same instructions do, docs/results/multi-env-agentevol.md). A block that would run
    past the end of a split of ``size`` tasks starts again at task 0."""
    first = start
    for _ in range(iteration - 1):
        first += count
        if first + count > size:
            first = 0
    return first


def eval_counts(cfg: DictConfig, envs: Sequence[str]) -> dict[str, int | None]:
    """How many test tasks each environment's evaluation plays (``eval.tasks``: one for all or per environment,
    e.g. a whole split where episodes are cheap); None: the whole split."""
    return per_env.positive_ints(cfg.eval.tasks, envs, "eval.tasks", optional=True)


def reply_budgets(cfg: DictConfig, section: str, envs: Sequence[str]) -> dict[str, int]:
    """Each environment's reply budget (tokens) of ``explore`` or ``eval``: one for all or per environment."""
    return per_env.positive_ints(cfg[section].max_new_tokens, envs, f"{section}.max_new_tokens")


def check_per_env(cfg: DictConfig, envs: Sequence[str]) -> None:
    """The per-environment settings name this run's environments (a SystemExit that says which does not)."""
    try:
        turn_caps(cfg, envs)
        bc_counts(cfg, envs)
        explore_counts(cfg, envs)
        explore_starts(cfg, envs)
        eval_counts(cfg, envs)
        for section in ("explore", "eval"):
            reply_budgets(cfg, section, envs)
    except ValueError as e:
        print(f"train_agentevol.sh: {e}", file=sys.stderr)
        raise SystemExit(2) from None
