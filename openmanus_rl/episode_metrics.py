"""Per-episode metrics of a training step, per environment: ``episode/<env>/<key>`` means.

verl 0.9.1's v1 trainer logs the agent loop's ``reward_extra_info`` only at validation; the trainer mode
(:mod:`openmanus_rl.trainer`) logs these means for every step and environment (``data_source``): success,
env_reward, env_score, turns, invalid_actions, format_errors, cut_by_budget, ..., and ``count``.
Episodes that replayed a demonstration (``agent.demos``, :mod:`openmanus_rl.demos`) are the expert's, not the
model's: they are left out of the means and counted as ``episode/<env>/demos``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any


def per_environment(sources: list[str], infos: list[dict[str, Any]]) -> dict[str, float]:
    """``episode/<env>/<key>`` means (and counts) of the episodes' numeric infos."""
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    demos: dict[str, int] = defaultdict(int)
    for source, info in zip(sources, infos, strict=True):
        if (info or {}).get("demo"):
            demos[source] += 1
            continue
        counts[source] += 1
        for key, value in (info or {}).items():
            if isinstance(value, (int, float)):
                sums[source][key] += float(value)
    out: dict[str, float] = {}
    for source, n in counts.items():
        out[f"episode/{source}/count"] = float(n)
        for key, total in sums[source].items():
            out[f"episode/{source}/{key}"] = total / n
    for source, n in demos.items():
        out[f"episode/{source}/demos"] = float(n)
    return out
