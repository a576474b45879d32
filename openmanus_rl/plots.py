"""Figures the runs write themselves (AgentEvol's iterations, a training run's curves)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openmanus_rl import atomic


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only backend (runs have no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, dpi: int = 100) -> Path:
    """Write ``fig`` to ``path`` atomically (a reader never sees half a PNG) and close it."""
    try:
        with atomic.path(path) as tmp:
            fig.savefig(tmp, dpi=dpi, metadata={"Software": None} if path.suffix == ".png" else None)
    finally:
        pyplot().close(fig)
    return path
