"""Keys and values of an episode's conversation, kept between its turns.

An agent loop sends the whole conversation every turn: the previous prompt, the reply just
generated and the new observation. Without a cache the rollout server encodes all of it again,
so an episode of T turns costs O(T^2) prompt tokens. The server keeps, per request id (one per
episode), the keys and values of the tokens it has already run, and the next turn only encodes
what its prompt adds after the longest prefix it shares with them (vLLM's prefix caching does the
same by block hashes on GPUs).

Entries are least-recently-used and bounded by a total token count; a weight update must clear
them (the keys and values belong to the old weights).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import torch


@dataclass
class CachedPrefix:
    token_ids: list[int]
    #: per layer (keys, values), each [kv_heads, len(token_ids), head_dim]
    layers: list[tuple[torch.Tensor, torch.Tensor]]


class PrefixCache:
    def __init__(self, max_tokens: int):
        self.max_tokens = int(max_tokens)
        self._entries: OrderedDict[str, CachedPrefix] = OrderedDict()
        self._tokens = 0
        self.hits = 0  # tokens served from the cache
        self.misses = 0  # prompt tokens that had to be encoded

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def tokens(self) -> int:
        return self._tokens

    def take(self, key: str | None, prompt_ids: list[int]) -> CachedPrefix | None:
        """Remove and return the entry of ``key`` cut to the longest prefix it shares with
        ``prompt_ids``, leaving at least one prompt token to encode (its logits start the reply)."""
        entry = self._entries.pop(key, None) if key is not None else None
        if entry is None:
            self.misses += len(prompt_ids)
            return None
        self._tokens -= len(entry.token_ids)
        limit = min(len(entry.token_ids), len(prompt_ids) - 1)
        n = 0
        while n < limit and entry.token_ids[n] == prompt_ids[n]:
            n += 1
        self.hits += n
        self.misses += len(prompt_ids) - n
        if n == 0:
            return None
        if n < len(entry.token_ids):
            entry = CachedPrefix(entry.token_ids[:n], [(k[:, :n].clone(), v[:, :n].clone()) for k, v in entry.layers])
        return entry

    def put(self, key: str | None, entry: CachedPrefix) -> None:
        if key is None or not entry.token_ids or len(entry.token_ids) > self.max_tokens:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self._tokens -= len(old.token_ids)
        self._entries[key] = entry
        self._tokens += len(entry.token_ids)
        while self._tokens > self.max_tokens:
            _, dropped = self._entries.popitem(last=False)
            self._tokens -= len(dropped.token_ids)

    def clear(self) -> None:
        self._entries.clear()
        self._tokens = 0
