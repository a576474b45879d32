"""Resumable sub-steps: each writes its outputs whole, then its marker; a re-run skips what is marked."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openmanus_rl import atomic


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


def per_env_lines(what: str) -> Callable[[str, dict[str, Any]], None]:
    """A callback for ``expert_data.play`` that prints each environment's success and time as it finishes: a
    stage of many minutes shows where it is."""
    since = time.monotonic()

    def finished(env: str, m: dict[str, Any]) -> None:
        nonlocal since
        print(f"agentevol:   {env}: {100 * m['success_rate']:.1f}% of {m['episodes']} {what} "
              f"({minutes(time.monotonic() - since)})", flush=True)
        since = time.monotonic()

    return finished


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s" if seconds >= 60 else f"{seconds:.0f} s"


def write_json(path: Path, data: Any) -> None:
    atomic.write_json(path, data, sort_keys=True)
