"""Evaluation result files (agentenv-eval): loading, the results table and the bar chart.

The table follows the AgentGym paper's layout: one row per policy, one column per environment,
success rate in percent, and an average column (the unweighted mean over the row's environments).
``agentenv-eval merge a.json b.json --plot out.png`` puts several result files in one table and
one chart; rows with the same label (e.g. one policy evaluated env by env) are joined.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FORMAT = "agenteval/1"


def load_result(path: str | Path) -> dict[str, Any]:
    """A result file written by ``agentenv-eval`` (checked enough to give a clear error)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read result file {path}: {e}") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("envs"), dict):
        raise ValueError(f"{path} is not an agentenv-eval result file (format {FORMAT})")
    return data


def rows_of(results: Sequence[dict[str, Any]],
            metric: str = "success_rate") -> tuple[list[str], dict[str, dict[str, float]]]:
    """Columns (environments, first seen first) and per-label values of ``metric`` (where a result has it)."""
    columns: list[str] = []
    rows: dict[str, dict[str, float]] = {}
    for result in results:
        row = rows.setdefault(str(result["label"]), {})
        for env, summary in result["envs"].items():
            if metric not in summary:
                continue
            if env not in columns:
                columns.append(env)
            if env in row:
                print(f"agentenv-eval: {result['label']} has {env} twice; keeping the later result", file=sys.stderr)
            row[env] = float(summary[metric])
    return columns, rows


def average(row: dict[str, float]) -> float:
    return sum(row.values()) / len(row) if row else float("nan")


def results_table(results: Sequence[dict[str, Any]], metric: str = "success_rate") -> str:
    """A Markdown table of success rates in percent (it reads as plain text too); ``metric="agentgym_score"``:
    AgentGym's own metric (its evaluator's mean final reward, times 100) where the results have it."""
    columns, rows = rows_of(results, metric)
    header = ["policy", *columns, "avg"]
    lines = [header]
    for label, row in rows.items():
        cells = [f"{100 * row[c]:.2f}" if c in row else "-" for c in columns]
        lines.append([label, *cells, f"{100 * average(row):.2f}"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]

    def fmt(cells: list[str]) -> str:
        out = [cells[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "| " + " | ".join(out) + " |"

    rule = "| " + " | ".join(["-" * widths[0]] + ["-" * (w - 1) + ":" for w in widths[1:]]) + " |"
    text = [fmt(lines[0]), rule, *(fmt(line) for line in lines[1:])]
    if any(len(row) != len(columns) for row in rows.values()):
        text.append("(avg is over the environments a row has; '-' = not evaluated)")
    return "\n".join(text)


def plot(results: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Grouped bars: one group per environment (and the average), one bar per policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns, rows = rows_of(results)
    groups = [*columns, "avg"]
    width = 0.8 / max(1, len(rows))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(groups) * max(1, len(rows)) ** 0.5 + 2), 4))
    for i, (label, row) in enumerate(rows.items()):
        values = [100 * row.get(c, float("nan")) for c in columns] + [100 * average(row)]
        xs = [g + (i - (len(rows) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, values, width, label=label)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel("success rate (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize="small")
    suites = {r.get("suite") for r in results}
    ax.set_title("AgentEval (AgentGym's published items)" if suites == {"agenteval"} else "success rate, test splits")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def merge_main(argv: Sequence[str]) -> int:
    p = argparse.ArgumentParser(prog="agentenv-eval merge", description="one table (and chart) from result files")
    p.add_argument("files", nargs="+", help="result files written by agentenv-eval --output")
    p.add_argument("--plot", default=None, help="write a bar chart (PNG, SVG, PDF by extension)")
    args = p.parse_args(argv)
    try:
        results = [load_result(f) for f in args.files]
    except ValueError as e:
        print(f"agentenv-eval: {e}", file=sys.stderr)
        return 2
    print(results_table(results))
    if args.plot:
        print(f"chart written to {plot(results, args.plot)}", file=sys.stderr)
    return 0
