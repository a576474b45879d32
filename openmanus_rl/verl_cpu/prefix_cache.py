"""Moved to :mod:`openmanus_rl.generation.prefix_cache` (kept as an alias for a release)."""

from openmanus_rl.generation.prefix_cache import CachedPrefix, PrefixCache

__all__ = ["CachedPrefix", "PrefixCache"]
