"""Batched token-in/token-out sampling with a ``transformers`` causal LM (pure torch, no Ray).

Used by the ``hf`` rollout server (:mod:`openmanus_rl.verl_cpu.rollout`), and testable on its own.
Each request carries its own sampling parameters; a batch is left-padded and decoded together with
a KV cache. With a :class:`~.prefix_cache.PrefixCache`, a request whose prompt starts with a
sequence an earlier call ran (an episode's previous turn) starts from its keys and values and only
encodes the tokens its prompt adds. Log-probs are those of the distribution actually
sampled from ("processed" log-probs, as vLLM's default ``logprobs_mode``):
``log_softmax(logits / temperature)`` after top-k/top-p filtering; for greedy requests
(temperature 0), ``log_softmax(logits)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from transformers.cache_utils import Cache

from openmanus_rl.generation import attention
from openmanus_rl.generation.prefix_cache import CachedPrefix, PrefixCache


@dataclass
class GenRequest:
    prompt_ids: list[int]
    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    ignore_eos: bool = False
    stop_token_ids: list[int] = field(default_factory=list)
    seed: int | None = None


@dataclass
class GenResult:
    token_ids: list[int]
    log_probs: list[float]
    finish_reason: str  # "stop" (EOS / stop token) or "length"


def _filter_logits(logits: torch.Tensor, top_k: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """Mask (to -inf) tokens outside each row's top-k / nucleus(top-p) set. logits: [B, V]."""
    vocab = logits.size(-1)
    need_k = bool(((top_k > 0) & (top_k < vocab)).any())
    need_p = bool((top_p < 1.0).any())
    if not (need_k or need_p):
        return logits
    sorted_logits, sorted_idx = torch.sort(logits, dim=-1, descending=True)
    remove = torch.zeros_like(sorted_logits, dtype=torch.bool)
    ranks = torch.arange(vocab, device=logits.device).unsqueeze(0)
    if need_k:
        k = torch.where(top_k > 0, top_k, torch.full_like(top_k, vocab)).clamp(max=vocab)
        remove |= ranks >= k.unsqueeze(1)
    if need_p:
        probs = torch.softmax(sorted_logits.masked_fill(remove, float("-inf")), dim=-1)
        cum = probs.cumsum(dim=-1)
        # drop a token when the mass before it already reaches top_p (always keep the first)
        remove |= (cum - probs) >= top_p.unsqueeze(1)
        remove[:, 0] = False
    mask = torch.zeros_like(remove).scatter(1, sorted_idx, remove)
    return logits.masked_fill(mask, float("-inf"))


class HFGenerator:
    """Generate for a list of requests at once with a ``transformers`` causal LM."""

    def __init__(self, model: torch.nn.Module, eos_token_ids: list[int], pad_token_id: int, seed: int = 0,
                 prefix_cache: PrefixCache | None = None):
        attention.install()  # decoding without copying the KV cache (openmanus_rl/generation/attention.py)
        self.model = model
        self.prefix_cache = prefix_cache
        self.eos_token_ids = sorted({int(t) for t in eos_token_ids if t is not None})
        self.pad_token_id = int(pad_token_id)
        self._rng = torch.Generator(device="cpu")
        self._rng.manual_seed(seed)

    @torch.no_grad()
    def generate(self, requests: list[GenRequest]) -> list[GenResult]:
        if not requests:
            return []
        if min(len(r.prompt_ids) for r in requests) == 0:
            raise ValueError("empty prompt")
        cache = self.prefix_cache
        cached = [cache.take(r.prompt_ids) if cache is not None else None for r in requests]
        # The first forward pass pads every row to the longest new segment: a new episode's whole first prompt
        # next to episodes that only add an observation would make all of them encode ~1,000 tokens. Rows
        # the cache serves and rows it does not are generated as two batches.
        groups = [[i for i, c in enumerate(cached) if (c is not None) == hit] for hit in (True, False)]
        groups = [g for g in groups if g]
        if len(groups) == 1:
            return self._generate(requests, cached)
        results: list[GenResult | None] = [None] * len(requests)
        for group in groups:
            for i, result in zip(group, self._generate([requests[i] for i in group], [cached[i] for i in group]),
                                 strict=True):
                results[i] = result
        return results  # type: ignore[return-value]

    def _generate(self, requests: list[GenRequest], cached: list[CachedPrefix | None]) -> list[GenResult]:
        model = self.model
        device = next(model.parameters()).device
        bsz = len(requests)
        cache = self.prefix_cache
        input_ids, attention_mask, position_ids, past = self._prefill_inputs(requests, cached, device)
        prefill_len = attention_mask.shape[1]

        temps = torch.tensor([max(float(r.temperature), 0.0) for r in requests], dtype=torch.float32)
        greedy = temps <= 1e-6
        safe_temps = torch.where(greedy, torch.ones_like(temps), temps).unsqueeze(1)
        top_p = torch.tensor([float(r.top_p) if r.top_p is not None else 1.0 for r in requests])
        top_p = torch.where(greedy, torch.ones_like(top_p), top_p.clamp(min=1e-6, max=1.0))
        top_k = torch.tensor([int(r.top_k) if r.top_k is not None else -1 for r in requests], dtype=torch.long)
        top_k = torch.where(greedy, torch.full_like(top_k, -1), top_k)
        max_tokens = [max(0, int(r.max_tokens)) for r in requests]
        stop_sets = []
        for r in requests:
            stops = set() if r.ignore_eos else set(self.eos_token_ids)
            stops.update(int(t) for t in (r.stop_token_ids or []))
            stop_sets.append(stops)
        # one generator per request that asked for a seed, the shared one otherwise
        rngs = []
        for r in requests:
            if r.seed is None:
                rngs.append(self._rng)
            else:
                g = torch.Generator(device="cpu")
                g.manual_seed(int(r.seed))
                rngs.append(g)

        out_tokens: list[list[int]] = [[] for _ in range(bsz)]
        out_logprobs: list[list[float]] = [[] for _ in range(bsz)]
        finish = ["length"] * bsz
        done = [m == 0 for m in max_tokens]
        if all(done):
            return [GenResult([], [], "length") for _ in requests]

        out = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids,
                    past_key_values=past, use_cache=True)
        past = out.past_key_values
        logits = out.logits[:, -1, :].float().cpu()
        next_pos = position_ids[:, -1:] + 1

        for _step in range(max(max_tokens)):
            scaled = logits / safe_temps
            processed = _filter_logits(scaled, top_k, top_p)
            logp = torch.log_softmax(processed, dim=-1)
            probs = logp.exp()
            next_tokens = torch.empty(bsz, dtype=torch.long)
            for i in range(bsz):
                if done[i]:
                    next_tokens[i] = self.pad_token_id
                elif greedy[i]:
                    next_tokens[i] = int(torch.argmax(logits[i]))
                else:
                    next_tokens[i] = int(torch.multinomial(probs[i], 1, generator=rngs[i]))
            for i in range(bsz):
                if done[i]:
                    continue
                tok = int(next_tokens[i])
                out_tokens[i].append(tok)
                out_logprobs[i].append(float(logp[i, tok]))
                if tok in stop_sets[i]:
                    done[i], finish[i] = True, "stop"
                elif len(out_tokens[i]) >= max_tokens[i]:
                    done[i], finish[i] = True, "length"
            if all(done):
                break
            attention_mask = torch.cat([attention_mask, torch.ones((bsz, 1), dtype=torch.long, device=device)], dim=1)
            out = model(
                input_ids=next_tokens.unsqueeze(1).to(device),
                attention_mask=attention_mask,
                position_ids=next_pos,
                past_key_values=past,
                use_cache=True,
            )
            past = out.past_key_values
            logits = out.logits[:, -1, :].float().cpu()
            next_pos = next_pos + 1

        if cache is not None:
            self._keep(requests, out_tokens, attention_mask[:, :prefill_len], past)
        return [GenResult(out_tokens[i], out_logprobs[i], finish[i]) for i in range(bsz)]

    def _prefill_inputs(self, requests: list[GenRequest], cached: list[CachedPrefix | None], device: torch.device):
        """The first forward pass of a batch: each row is [pad][its cached prefix][pad][its new tokens],
        cached keys/values left-padded to a common length, new tokens right-aligned so that the last
        column is every row's last prompt token; padding is masked and positions are explicit."""
        bsz = len(requests)
        n_cached = [len(c.token_ids) if c is not None else 0 for c in cached]
        new = [r.prompt_ids[n:] for r, n in zip(requests, n_cached, strict=True)]
        lc, ls = max(n_cached), max(len(t) for t in new)
        input_ids = torch.full((bsz, ls), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((bsz, lc + ls), dtype=torch.long)
        position_ids = torch.zeros((bsz, ls), dtype=torch.long)
        for i, (tokens, n) in enumerate(zip(new, n_cached, strict=True)):
            input_ids[i, ls - len(tokens):] = torch.tensor(tokens, dtype=torch.long)
            attention_mask[i, lc - n:lc] = 1
            attention_mask[i, lc + ls - len(tokens):] = 1
            position_ids[i, ls - len(tokens):] = torch.arange(n, n + len(tokens))
        past = attention.growing_cache()
        if lc:
            first = next(c for c in cached if c is not None).layers
            layers = []
            for li, (k0, v0) in enumerate(first):
                keys = k0.new_zeros((bsz, k0.shape[0], lc, k0.shape[2]))
                values = v0.new_zeros((bsz, v0.shape[0], lc, v0.shape[2]))
                for i, c in enumerate(cached):
                    if c is not None:
                        keys[i, :, lc - n_cached[i]:] = c.layers[li][0]
                        values[i, :, lc - n_cached[i]:] = c.layers[li][1]
                layers.append((keys.to(device), values.to(device)))
            past = attention.growing_cache(layers)
        return input_ids.to(device), attention_mask.to(device), position_ids.to(device), past

    def _keep(self, requests: list[GenRequest], out_tokens: list[list[int]], prefill_mask: torch.Tensor,
              past: Cache) -> None:
        """Store each request's keys/values: its prompt and the reply's tokens that were run through
        the model (all but the last, which was sampled and never encoded)."""
        prefill_len = prefill_mask.shape[1]
        for i, r in enumerate(requests):
            if not out_tokens[i]:
                continue
            fed = len(out_tokens[i]) - 1
            cols = torch.cat([prefill_mask[i].nonzero().flatten(),
                              torch.arange(prefill_len, prefill_len + fed, device=prefill_mask.device)])
            layers = [(layer.keys[i].index_select(1, cols), layer.values[i].index_select(1, cols))
                      for layer in past.layers]
            self.prefix_cache.put(CachedPrefix(list(r.prompt_ids) + out_tokens[i][:fed], layers,
                                               prompt_length=len(r.prompt_ids)))
