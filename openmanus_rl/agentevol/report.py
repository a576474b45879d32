"""The run's table, plot and wall times, redrawn after every iteration."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openmanus_rl import trajectories
from openmanus_rl.agentevol.steps import minutes, write_json


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
        if (d / "pairs").is_dir():  # learning from failures: the preference pairs DPO trained on
            row["pairs"] = {e: sum(1 for _ in trajectories.read(d / "pairs" / f"{e}.jsonl")) for e in envs}
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
            if "pairs" in r:
                kept += f", {r['pairs'][e]} pairs"
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
