"""Keys and values of an episode's conversation, kept between its turns.

An agent loop sends the whole conversation every turn: the previous prompt, the reply just
generated and the new observation. Without a cache the rollout server encodes all of it again,
so an episode of T turns costs O(T^2) prompt tokens. The server keeps the keys and values of the
token sequences it has run (prompt and reply), and a new prompt that starts with one of them only
encodes what it adds. Entries are found by their tokens, not by a request id: verl's server client
sends every turn under a fresh id (vLLM's prefix caching also matches by content, hashing blocks).

An entry also matches by its prompt alone (without the reply): a caller that sends the conversation
as text (the evaluator) re-tokenizes the reply, which need not give the tokens that were generated;
its next turn then still starts from the previous prompt's keys and values.

Entries are least-recently-used, bounded by a total token count, and used once (the turn that
extends an entry stores the longer sequence). A weight update must clear them: the keys and values
belong to the old weights.

The bound must hold every episode in flight: with lockstep batches, one episode whose entry was evicted
re-encodes its whole conversation, and the batch's first forward pass is padded to that length for every
row (textcraft's 50 evaluation episodes took minutes a turn once their conversations outgrew 131,072
tokens). :func:`tokens_for` sizes it by memory instead: a tiny model's keys and values take ~1 KiB a token.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass

import torch

CPU_BUDGET_BYTES = 2 << 30  # the default on CPU of the evaluator's hf: policy and the CPU rollout replica


def tokens_for(model: torch.nn.Module, budget_bytes: int, floor: int) -> int:
    """How many tokens' keys and values of ``model`` (a ``transformers`` causal LM) fit ``budget_bytes``,
    at least ``floor``."""
    c = model.config
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads
    kv_heads = getattr(c, "num_key_value_heads", None) or c.num_attention_heads
    per_token = c.num_hidden_layers * 2 * kv_heads * head_dim * next(model.parameters()).element_size()
    return max(int(floor), int(budget_bytes) // per_token)


@dataclass
class CachedPrefix:
    token_ids: list[int]
    #: per layer (keys, values), each [kv_heads, len(token_ids), head_dim]
    layers: list[tuple[torch.Tensor, torch.Tensor]]
    #: how many of ``token_ids`` were the prompt (the rest: the reply); None: all
    prompt_length: int | None = None

    def first(self, n: int) -> CachedPrefix:
        if n == len(self.token_ids):
            return self
        return CachedPrefix(self.token_ids[:n], [(k[:, :n], v[:, :n]) for k, v in self.layers])

    def match_lengths(self) -> set[int]:
        return {len(self.token_ids)} | ({self.prompt_length} if self.prompt_length else set())


class PrefixCache:
    def __init__(self, max_tokens: int):
        self.max_tokens = int(max_tokens)
        self._entries: OrderedDict[int, CachedPrefix] = OrderedDict()  # by hash of the token tuple
        self._by_prompt: dict[int, int] = {}  # hash of an entry's prompt tokens -> the entry's key
        self._lengths: Counter[int] = Counter()
        self._tokens = 0
        self.hits = 0  # prompt tokens served from the cache
        self.misses = 0  # prompt tokens that had to be encoded

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def tokens(self) -> int:
        return self._tokens

    def counters(self) -> dict[str, int]:
        """Prompt tokens served from the cache and encoded, for a server's or backend's stats."""
        return {"prefix_cache_hit_tokens": self.hits, "prefix_cache_miss_tokens": self.misses}

    def take(self, prompt_ids: list[int]) -> CachedPrefix | None:
        """Remove and return the longest entry that ``prompt_ids`` starts with, leaving at least one
        prompt token to encode (its logits start the reply); None when none fits."""
        found = None
        for n in sorted(self._lengths, reverse=True):
            if n >= len(prompt_ids):
                continue
            head = hash(tuple(prompt_ids[:n]))
            key = head if head in self._entries else self._by_prompt.get(head)
            entry = self._entries.get(key) if key is not None else None
            if entry is not None and len(entry.token_ids) >= n and entry.token_ids[:n] == prompt_ids[:n]:
                found = entry.first(n)
                break
        if found is None:
            self.misses += len(prompt_ids)
            return None
        self._drop(key)
        self.hits += len(found.token_ids)
        self.misses += len(prompt_ids) - len(found.token_ids)
        return found

    def put(self, entry: CachedPrefix) -> None:
        n = len(entry.token_ids)
        if not n or n > self.max_tokens:
            return
        key = hash(tuple(entry.token_ids))
        self._drop(key)
        self._entries[key] = entry
        if entry.prompt_length:
            self._by_prompt[hash(tuple(entry.token_ids[:entry.prompt_length]))] = key
        self._lengths.update(entry.match_lengths())
        self._tokens += n
        while self._tokens > self.max_tokens:
            self._drop(next(iter(self._entries)))

    def _drop(self, key: int) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._tokens -= len(entry.token_ids)
            if entry.prompt_length:
                head = hash(tuple(entry.token_ids[:entry.prompt_length]))
                if self._by_prompt.get(head) == key:
                    del self._by_prompt[head]
            for n in entry.match_lengths():
                self._lengths[n] -= 1
                if not self._lengths[n]:
                    del self._lengths[n]

    def clear(self) -> None:
        self._entries.clear()
        self._by_prompt.clear()
        self._lengths.clear()
        self._tokens = 0
