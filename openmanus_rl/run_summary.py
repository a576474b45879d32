"""Per-environment summaries of the episodes a training run wrote (``rollouts/step_<N>.jsonl``).

verl logs the batch-level metrics; this adds what a multi-environment run needs to be
read: for every step and environment, success rate, reward, turns and invalid actions.
Each summarised step is printed and appended to ``env_metrics.jsonl`` beside the rollouts.
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from agentenv.rollout import summarize_outcomes

_STEP_FILE = re.compile(r"^(val_)?step_(\d+)\.jsonl$")


def summarize_file(path: Path) -> dict[str, dict[str, float]]:
    per_env: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        if line.strip():
            item = json.loads(line)
            per_env[item["env"]].append(item)
    return {env: summarize_outcomes([(bool(i["success"]), i["reward"], i["turns"], i["invalid_actions"])
                                     for i in items])
            for env, items in sorted(per_env.items())}


def format_line(label: str, summary: dict[str, dict[str, float]]) -> str:
    parts = [f"{env}: success {m['success_rate']:.2f} reward {m['avg_reward']:.3f} turns {m['avg_turns']:.1f} "
             f"invalid {m['invalid_rate']:.2f} (n={m['episodes']})" for env, m in summary.items()]
    return f"[{label}] " + " | ".join(parts)


class StepWatcher:
    """Summarises a step once the next one has started (its file is then complete)."""

    def __init__(self, rollout_dir: Path) -> None:
        self.dir = rollout_dir
        self.done: set[str] = set()

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
            complete = final or val or any(s > step for _, s, _ in train)
            if path.name in self.done or not complete:
                continue
            self.done.add(path.name)
            summary = summarize_file(path)
            label = f"{'validation ' if val else ''}step {step}"
            print(format_line(label, summary), flush=True)
            with (self.dir.parent / "env_metrics.jsonl").open("a") as f:
                f.write(json.dumps({"step": step, "validation": val, "envs": summary}) + "\n")

    def follow(self, stop: threading.Event, period: float = 2.0) -> None:
        while not stop.wait(period):
            self.poll()

    def flush(self) -> None:
        self.poll(final=True)
