"""Moved to :mod:`openmanus_rl.generation` (kept as an alias for a release)."""

from openmanus_rl.generation.engine import GenRequest, HFGenerator

__all__ = ["GenRequest", "HFGenerator"]
