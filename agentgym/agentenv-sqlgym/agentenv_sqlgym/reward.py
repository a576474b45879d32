"""Whether a submitted query answers the question: its result against the gold query's result.

Rows are compared as tuples, so the columns must come in the order the question names them (as
in BIRD and Spider). Values are normalized first: floats are rounded to 4 decimals (so ``AVG(x)`` and
``SUM(x) * 1.0 / COUNT(x)`` agree) and an integral float equals the integer. Three ways to compare:

- ``ordered``: the same rows in the same order (the question asks for an order, "from highest to lowest");
- ``multiset``: the same rows, each as many times, in any order (the generated questions' default);
- ``set``: the same distinct rows (BIRD's own evaluation and AgentGym's sqlgym: ``set(pred) == set(gold)``).

The reward is 1 or 0: a result is right or it is not (no partial credit, as in BIRD's execution accuracy).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

COMPARISONS = ("ordered", "multiset", "set")


def normalize_value(value: Any) -> Any:
    if isinstance(value, float):
        value = round(value, 4) + 0.0  # + 0.0 turns -0.0 into 0.0
        return int(value) if value.is_integer() else value
    return value


def normalize(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    return [tuple(normalize_value(v) for v in row) for row in rows]


def same_result(predicted: Sequence[Sequence[Any]], gold: Sequence[Sequence[Any]],
                comparison: str = "multiset") -> bool:
    """True when ``predicted`` rows answer like ``gold`` rows under ``comparison``."""
    if comparison not in COMPARISONS:
        raise ValueError(f"unknown comparison {comparison!r}; one of {', '.join(COMPARISONS)}")
    p, g = normalize(predicted), normalize(gold)
    if comparison == "ordered":
        return p == g
    if comparison == "set":
        return set(p) == set(g)
    return Counter(p) == Counter(g)


def reward(predicted: Sequence[Sequence[Any]] | None, gold: Sequence[Sequence[Any]], comparison: str) -> float:
    """1.0 for a right result, 0.0 otherwise (``predicted`` None: the query failed)."""
    return 1.0 if predicted is not None and same_result(predicted, gold, comparison) else 0.0
