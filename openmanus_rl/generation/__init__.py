"""Batched generation with transformers, token ids and log-probs out, keys and values kept between an
episode's turns: the engine of the CPU rollout replica (:mod:`openmanus_rl.verl_cpu.rollout`) and of the
evaluator's ``hf:`` policy on any device (:mod:`openmanus_rl.policies.hf`). It needs no verl.
"""

from openmanus_rl.generation.engine import GenRequest, HFGenerator
from openmanus_rl.generation.prefix_cache import CachedPrefix, PrefixCache

__all__ = ["CachedPrefix", "GenRequest", "HFGenerator", "PrefixCache"]
