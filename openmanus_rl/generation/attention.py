"""Decoding attention without copying the KV cache: grouped-query attention for one new token, and cache layers
that grow in place.

Profiled on the 2-core CPU (py-spy, 50 textcraft episodes decoding against ~2,000-token conversations with the
128x2 tiny model), 70% of generation was copying keys and values, not attending: ``transformers``' sdpa
attention with a padding mask repeats each key/value head for the query heads that share it (``repeat_kv``, a
copy of the whole cache per layer and token: 41%), and ``DynamicLayer`` concatenates the cache with each new
token (another copy: 31%). Both are exact rewrites here:

* a decoding step (one query token) of a grouped-query model attends with the query heads of a group as that
  group's queries, ``[batch, kv_heads, group, dim]`` against the group's own keys, which needs no copy (the
  padding mask is per key, so it broadcasts over them); anything else is transformers' own sdpa attention;
* :class:`GrowingLayer` keeps keys and values in buffers that double when full and returns views of the filled
  part, so a token is written once.
"""

from __future__ import annotations

import torch
from transformers import AttentionInterface
from transformers.cache_utils import Cache, DynamicLayer
from transformers.integrations.sdpa_attention import sdpa_attention_forward


def grouped_decode_sdpa(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                        attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                        is_causal: bool | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """transformers' sdpa attention, but one query token of a grouped-query model attends without ``repeat_kv``."""
    groups = int(getattr(module, "num_key_value_groups", 1))
    if groups == 1 or query.shape[2] != 1 or dropout or kwargs.get("output_attentions"):
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      is_causal=is_causal, **kwargs)
    batch, heads, _, dim = query.shape
    grouped = query.reshape(batch, heads // groups, groups, dim)  # query head h = kv head (h // groups)'s query
    out = torch.nn.functional.scaled_dot_product_attention(grouped, key, value, attn_mask=attention_mask,
                                                           scale=scaling)
    return out.reshape(batch, heads, 1, dim).transpose(1, 2).contiguous(), None


def install() -> None:
    """Make ``sdpa`` models decode through :func:`grouped_decode_sdpa` (the same numbers; idempotent)."""
    AttentionInterface.register("sdpa", grouped_decode_sdpa)


class GrowingLayer(DynamicLayer):
    """A layer's keys and values in buffers that double when full; ``keys``/``values`` are views of the filled
    part (``DynamicLayer`` would concatenate the whole cache with each token)."""

    def lazy_initialization(self, key_states: torch.Tensor, value_states: torch.Tensor) -> None:
        super().lazy_initialization(key_states, value_states)
        self._length = 0
        self._key_buf: torch.Tensor | None = None
        self._value_buf: torch.Tensor | None = None

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs):
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        start, end = self._length, self._length + key_states.shape[-2]
        if self._key_buf is None or end > self._key_buf.shape[-2]:
            room = max(end + 256, 2 * end)
            self._key_buf = self._grow(self._key_buf, key_states, room)
            self._value_buf = self._grow(self._value_buf, value_states, room)
        self._key_buf[:, :, start:end] = key_states
        self._value_buf[:, :, start:end] = value_states
        self._length = end
        self.keys, self.values = self._key_buf[:, :, :end], self._value_buf[:, :, :end]
        return self.keys, self.values

    def _grow(self, buf: torch.Tensor | None, like: torch.Tensor, room: int) -> torch.Tensor:
        new = like.new_empty((*like.shape[:2], room, like.shape[-1]))
        if buf is not None:
            new[:, :, :self._length] = buf[:, :, :self._length]
        return new


def growing_cache(layers: list[tuple[torch.Tensor, torch.Tensor]] | None = None) -> Cache:
    """A KV cache of :class:`GrowingLayer` holding ``layers`` (per layer: keys and values) if given."""
    cache = Cache(layer_class_to_replicate=GrowingLayer)
    for i, (keys, values) in enumerate(layers or ()):
        cache.update(keys, values, i)
    return cache
