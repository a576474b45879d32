"""Reading the trainer runs of tests/training/test_train_ppo.py, shared by the tests that start such runs
(tests/training/test_multinode.py)."""

from __future__ import annotations

import re
from pathlib import Path

from openmanus_rl import trajectories

#: a short run's settings
SMALL = ["agent.max_turns=3", "max_train_tasks=32", "max_val_tasks=4", "agent.max_new_tokens=24"]


#: Ray's prefix of a worker's line in the driver's output: "(TaskRunnerV1 pid=123)", colours and an ip optional
_RAY_PREFIX = re.compile(r"^(?:\x1b\[\d+m)?\(\w+ pid=(\d+)(?:, ip=[\d.]+)?\)(?:\x1b\[0m)? ?")
_PAIR = re.compile(r"^\S+:\S+$")


def _continues_metrics(text: str) -> bool:
    """A piece of verl's "k:v - k:v" line: cut at both ends, whole pairs between."""
    parts = text.split(" - ")
    return len(parts) > 1 and " " not in parts[0] + parts[-1] and all(_PAIR.match(p) for p in parts[1:-1])


def unsplit(log: str) -> str:
    """Ray's log monitor may cut a worker's long line in two, each piece under the worker's prefix and other
    workers' lines between them: join the pieces of verl's metrics lines back together."""
    out: list[str] = []
    open_line: dict[str, int] = {}  # a worker's metrics line that may go on in its next line
    for line in log.splitlines():
        m = _RAY_PREFIX.match(line)
        pid, text = (m.group(1), line[m.end():]) if m else ("", line)
        starts = re.match(r"step:\d+ - ", text)
        if pid in open_line and not starts and _continues_metrics(text):
            out[open_line[pid]] += text
            continue
        open_line.pop(pid, None)
        if starts:
            open_line[pid] = len(out)
        out.append(text)
    return "\n".join(out)


def step_metrics(log: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(0) for m in re.finditer(r"step:(\d+) - .*", unsplit(log))}


def rollouts(out: Path, name: str) -> list[dict]:
    return list(trajectories.read(out / "rollouts" / name))
