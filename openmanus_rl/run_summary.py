"""Per-environment summaries of the episodes a training run wrote (``rollouts/step_<N>.jsonl``).

verl logs the batch-level metrics; this adds what a multi-environment run needs to be
read: for every step and environment, success rate, reward, turns, invalid actions, the share
of episodes cut by the token budget or the turn limit, the mean response length (tokens) and
the turn limit the episodes had (a horizon curriculum changes it).
Each summarised step is printed and appended to ``env_metrics.jsonl`` beside the rollouts, and
``success_rate.png`` beside it is redrawn: per environment, the training episodes' success rate per
step and the validation success rate at each validation.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from agentenv.rollout import summarize_outcomes
from openmanus_rl.trajectories import json_lines

_STEP_FILE = re.compile(r"^(val_)?step_(\d+)\.jsonl$")
#: where :func:`set_aside_steps_after` keeps the logs of steps a resumed run plays again
INTERRUPTED = "interrupted"


def set_aside_steps_after(rollout_dir: Path, step: int) -> Path | None:
    """Move the logs of steps after ``step`` (validations included) to ``interrupted/<k>/`` of ``rollout_dir``.

    verl resumes a run after its last checkpoint (``step``; 0: none) and plays the steps after it again. A run
    killed mid-step left a partial log of such a step, which the resumed run would append to, two attempts at
    one step in one file. Kept, not deleted: they are what the killed run did. Returns the directory they went
    to (None: there were none)."""
    later = [p for p in rollout_dir.glob("*step_*.jsonl")
             if (m := _STEP_FILE.match(p.name)) and int(m.group(2)) > step] if rollout_dir.is_dir() else []
    if not later:
        return None
    k = 1
    while (rollout_dir / INTERRUPTED / str(k)).exists():
        k += 1
    target = rollout_dir / INTERRUPTED / str(k)
    target.mkdir(parents=True)
    for p in later:
        p.rename(target / p.name)
    return target


def summarize_file(path: Path) -> dict[str, dict[str, float]]:
    """Per-environment means of a step's episodes. The file may be growing (rollout workers of a job on
    a shared cluster outlive its driver by a moment): a line a worker is still writing, or was killed
    writing, reads as cut short or as zeros, and is left out. Episodes that replayed a demonstration
    (``agent.demos``) are the expert's: counted as ``demos``, not in the model's means."""
    per_env: dict[str, list[dict[str, Any]]] = defaultdict(list)
    demos: dict[str, int] = defaultdict(int)
    *complete, _unfinished = json_lines(path.read_text(errors="replace"))
    for line in complete:
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue
        if item.get("demo"):
            demos[item["env"]] += 1
        else:
            per_env[item["env"]].append(item)
    out = {}
    for env, items in sorted(per_env.items()):
        out[env] = summarize_outcomes([(bool(i["success"]), i["reward"], i["turns"], i["invalid_actions"])
                                       for i in items])
        for key, name in _MEANS.items():
            values = [float(i[key]) for i in items if i.get(key) is not None]
            if values:
                out[env][name] = sum(values) / len(values)
    for env, n in demos.items():
        if env in out:
            out[env]["demos"] = n
    return out


# rollout-log fields averaged per step and environment, beside summarize_outcomes' metrics
_MEANS = {"cut_by_budget": "cut_by_budget_rate", "cut_by_turns": "cut_by_turns_rate",
          "response_length": "avg_response_length", "turn_limit": "turn_limit"}


def format_line(label: str, summary: dict[str, dict[str, float]]) -> str:
    parts = []
    for env, m in summary.items():
        text = (f"{env}: success {m['success_rate']:.2f} reward {m['avg_reward']:.3f} turns {m['avg_turns']:.1f} "
                f"invalid {m['invalid_rate']:.2f}")
        if "turn_limit" in m:
            text += (f" cut budget {m['cut_by_budget_rate']:.2f} turns {m['cut_by_turns_rate']:.2f}"
                     f" (limit {m['turn_limit']:g}) resp {m['avg_response_length']:.0f} tok")
        demos = f", demos {m['demos']}" if m.get("demos") else ""  # replayed expert episodes, not in the means
        parts.append(f"{text} (n={m['episodes']}{demos})")
    return f"[{label}] " + " | ".join(parts)


class StepWatcher:
    """Summarises a step once the next one has started (its file is then complete). A resumed run's watcher
    starts with the steps ``env_metrics.jsonl`` already has whose logs are still in place, so it adds only the
    steps it plays: those verl plays again had their logs set aside (:func:`set_aside_steps_after`) and are
    summarised anew (the last record of a step wins)."""

    def __init__(self, rollout_dir: Path) -> None:
        self.dir = rollout_dir
        metrics = rollout_dir.parent / "env_metrics.jsonl"
        names = (f"{'val_' if r['validation'] else ''}step_{r['step']}.jsonl"
                 for r in (read_metrics(metrics) if metrics.is_file() else []))
        self.done: set[str] = {n for n in names if (rollout_dir / n).is_file()}

    def _files(self) -> list[tuple[bool, int, Path]]:
        if not self.dir.is_dir():
            return []
        found = []
        for p in self.dir.iterdir():
            m = _STEP_FILE.match(p.name)
            if m:
                found.append((bool(m.group(1)), int(m.group(2)), p))
        return sorted(found)

    def poll(self, final: bool = False) -> None:
        files = self._files()
        train = [f for f in files if not f[0]]
        for val, step, path in files:
            complete = final or any(s > step for _, s, _ in train)  # the next step started: this one is whole
            if path.name in self.done or not complete:
                continue
            self.done.add(path.name)
            summary = summarize_file(path)
            label = f"{'validation ' if val else ''}step {step}"
            print(format_line(label, summary), flush=True)
            with (self.dir.parent / "env_metrics.jsonl").open("a") as f:
                f.write(json.dumps({"step": step, "validation": val, "envs": summary}) + "\n")
            plot_curves(self.dir.parent / "env_metrics.jsonl", self.dir.parent / "success_rate.png")

    def follow(self, stop: threading.Event, period: float = 2.0) -> None:
        while not stop.wait(period):
            self.poll()

    def flush(self) -> None:
        self.poll(final=True)


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """``env_metrics.jsonl`` in step order (a resumed run appends; the last record of a step wins)."""
    records: dict[tuple[int, bool], dict[str, Any]] = {}
    for line in json_lines(path.read_text()):
        if line.strip():
            r = json.loads(line)
            records[(int(r["step"]), bool(r["validation"]))] = r
    return [records[k] for k in sorted(records)]


def plot_curves(metrics_file: Path, path: Path) -> Path | None:
    """Training and validation success per step and environment (None: no step summarised yet)."""
    from openmanus_rl.plots import pyplot, save_figure

    records = read_metrics(metrics_file) if metrics_file.is_file() else []
    if not records:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for env in sorted({e for r in records for e in r["envs"]}):
        curve = {kind: [(r["step"], 100 * r["envs"][env]["success_rate"]) for r in records
                        if r["validation"] == kind and env in r["envs"]] for kind in (False, True)}
        train, val = curve[False], curve[True]
        line = ax.plot([s for s, _ in train], [v for _, v in train], label=f"{env} training")[0] if train else None
        if val:
            ax.plot([s for s, _ in val], [v for _, v in val], marker="o", linestyle="--",
                    color=line.get_color() if line else None, label=f"{env} validation")
    ax.set_xlabel("training step")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_ylabel("success rate (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8)
    ax.set_title("training run")
    fig.tight_layout()
    return save_figure(fig, path)
