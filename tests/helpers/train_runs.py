"""Reading the trainer runs of tests/training/test_train_ppo.py, shared by the tests that start such runs
(tests/training/test_multinode.py)."""

from __future__ import annotations

import re
from pathlib import Path

from openmanus_rl import trajectories

#: a short run's settings
SMALL = ["agent.max_turns=3", "max_train_tasks=32", "max_val_tasks=4", "agent.max_new_tokens=24"]


def step_metrics(log: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(0) for m in re.finditer(r"step:(\d+) - .*", log)}


def rollouts(out: Path, name: str) -> list[dict]:
    return list(trajectories.read(out / "rollouts" / name))
