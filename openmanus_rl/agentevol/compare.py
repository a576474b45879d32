"""The paper's table across runs: untrained, BC, each AgentEvol iteration, variants and RL, over seeds.

    python -m openmanus_rl.agentevol.compare --run AgentEvol=outputs/evol-s0,outputs/evol-s1 \
        --run "AgentEvol + DPO"=outputs/evol-dpo --eval "GRPO from BC"=outputs/eval/grpo.json --out docs/results/x

Every ``--run`` is one or more ``train_agentevol.sh`` output directories (one per seed) of the same setting; its
rows are the untrained model, BC (iteration 0) and each iteration. Every ``--eval`` is one or more result files
of ``agentenv-eval`` (or an iteration's ``eval.json``): one row, e.g. RL from the same BC. A cell is the mean
success over the seeds with their range; the average column averages the environments per seed first. The
number of test tasks per environment heads its column. Writes ``OUT/table.md`` and ``OUT/success_rate.png``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf


@dataclass
class Row:
    name: str
    seeds: list[dict[str, Any]]  # per seed: {env: {"success_rate", "episodes", ...}}

    def success(self, env: str) -> list[float]:
        return [100 * s[env]["success_rate"] for s in self.seeds if env in s]

    def average(self, envs: Sequence[str]) -> list[float]:
        return [statistics.fmean(100 * s[e]["success_rate"] for e in envs) for s in self.seeds
                if all(e in s for e in envs)]


def read_eval(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    return doc["envs"]


def run_rows(name: str, dirs: Sequence[Path]) -> list[Row]:
    """The rows of one AgentEvol setting: untrained, BC and each iteration, each over the seeds that reached it."""
    stages: dict[str, list[dict[str, Any]]] = {}
    for d in dirs:
        if (d / "untrained" / "eval.json").is_file():
            stages.setdefault("untrained", []).append(read_eval(d / "untrained" / "eval.json"))
        k = 0
        while (d / f"iter_{k}" / "eval.json").is_file():
            stages.setdefault(str(k), []).append(read_eval(d / f"iter_{k}" / "eval.json"))
            k += 1
    label = {"untrained": "untrained", "0": "BC"}
    return [Row(label.get(s, f"{name} iteration {s}"), seeds) for s, seeds in stages.items()]


def run_order(d: Path) -> list[str]:
    """The environments in the order the run named them (its eval files list them sorted); none if not known."""
    config = d / "agentevol_config.yaml"
    if not config.is_file():
        return []
    # split here, not by registry.parse_names: reading results does not need the environments installed
    names = str(OmegaConf.load(config).get("env_name") or "")
    return [] if names in ("", "all") else [n.strip() for n in names.split(",")]


def cell(values: list[float]) -> str:
    if not values:
        return "-"
    mean = statistics.fmean(values)
    if len(values) == 1:
        return f"{mean:.1f}"
    return f"{mean:.1f} ({short(min(values))}-{short(max(values))})"


def short(value: float) -> str:
    """A range's end as the table's cells would show it, without a trailing .0: 36, 35.6."""
    return f"{value:.1f}".removesuffix(".0")


def table(rows: Sequence[Row], envs: Sequence[str]) -> str:
    episodes = {e: next((s[e]["episodes"] for r in rows for s in r.seeds if e in s), "?") for e in envs}
    head = ["", "seeds"] + [f"{e} ({episodes[e]})" for e in envs] + ["average"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for r in rows:
        cells = [r.name, str(len(r.seeds))] + [cell(r.success(e)) for e in envs] + [cell(r.average(envs))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gain(rows: Sequence[Row], envs: Sequence[str], base: str, other: str) -> str:
    """How far ``other`` is above ``base`` on average, and whether beyond the spread (its worst seed above
    the base's best)."""
    by = {r.name: r for r in rows}
    a, b = by[base].average(envs), by[other].average(envs)
    if not a or not b:
        return f"{other} vs {base}: not both measured"
    d = statistics.fmean(b) - statistics.fmean(a)
    if len(a) < 2 and len(b) < 2:
        return f"{other} vs {base}: {d:+.1f} points on average (one seed each: no spread yet)"
    beyond = min(b) > max(a)
    return (f"{other} vs {base}: {d:+.1f} points on average ({'beyond' if beyond else 'within'} the seed spread: "
            f"worst {min(b):.1f} vs best {max(a):.1f})")


def plot(rows: Sequence[Row], envs: Sequence[str], path: Path) -> None:
    from openmanus_rl.plots import pyplot, save_figure

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * (len(envs) + 1) * max(1, len(rows)) / 3), 4))
    groups = [*envs, "average"]
    width = 0.8 / max(1, len(rows))
    for i, r in enumerate(rows):
        values = [r.success(e) for e in envs] + [r.average(envs)]
        xs = [g + (i - (len(rows) - 1) / 2) * width for g in range(len(groups))]
        means = [statistics.fmean(v) if v else 0.0 for v in values]
        # clamped: the mean of equal values can land an ulp outside them (fmean([46.67] * 3) > 46.67)
        lo = [max(0.0, m - min(v)) if v else 0.0 for m, v in zip(means, values, strict=True)]
        hi = [max(0.0, max(v) - m) if v else 0.0 for m, v in zip(means, values, strict=True)]
        ax.bar(xs, means, width, yerr=[lo, hi], capsize=2, label=r.name)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel("test success rate (%), greedy")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    save_figure(fig, path)


def named_paths(specs: Sequence[str], flag: str) -> list[tuple[str, list[Path]]]:
    out = []
    for spec in specs:
        name, sep, paths = spec.partition("=")
        if not sep or not paths:
            raise SystemExit(f"compare: {flag} takes NAME=PATH[,PATH...], not {spec!r}")
        missing = [p for p in paths.split(",") if not Path(p).exists()]
        if missing:
            raise SystemExit(f"compare: {', '.join(missing)} does not exist")
        out.append((name, [Path(p) for p in paths.split(",")]))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--run", action="append", default=[], help="NAME=DIR[,DIR...]: train_agentevol.sh outputs (seeds)")
    p.add_argument("--eval", action="append", default=[], help="NAME=FILE[,FILE...]: agentenv-eval results (seeds)")
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    rows: list[Row] = []
    named: list[str] = []
    for i, (name, dirs) in enumerate(named_paths(args.run, "--run")):
        named += [e for d in dirs for e in run_order(d)]
        found = run_rows(name, dirs)
        rows += found if i == 0 else [r for r in found if r.name not in ("untrained", "BC")]
    for name, files in named_paths(args.eval, "--eval"):
        rows.append(Row(name, [read_eval(f) for f in files]))
    if not rows:
        raise SystemExit("compare: give at least one --run or --eval")
    measured = dict.fromkeys(e for r in rows for s in r.seeds for e in s)
    envs = [e for e in dict.fromkeys(named) if e in measured] + [e for e in measured if e not in named]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = table(rows, envs)
    names = [r.name for r in rows]
    verdicts = [gain(rows, envs, "BC", n) for n in names if n not in ("untrained", "BC") and "BC" in names]
    (out / "table.md").write_text(text + "\n\n" + "\n".join(f"- {v}" for v in verdicts) + "\n")
    plot(rows, envs, out / "success_rate.png")
    print(text + "\n\n" + "\n".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
