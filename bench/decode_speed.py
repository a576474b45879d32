"""Batched decoding on CPU: transformers' own KV cache and sdpa attention against openmanus_rl's
(openmanus_rl/generation/attention.py: no ``repeat_kv`` for one query token, cache layers that grow in place).

    .venv/bin/python bench/decode_speed.py [--tokens 64] [--hidden 128] [--layers 2]

A tiny Qwen2 built in code (grouped-query: 4 heads, 2 key/value heads), left-padded batches of random prompts
of the given lengths (a quarter of the rows 10% shorter, so the padding mask is real), greedy, the same model
and inputs for both; ms per decoded token of the whole batch after the first forward pass. Prints one table.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch
from transformers import AttentionInterface
from transformers.cache_utils import DynamicCache
from transformers.integrations.sdpa_attention import sdpa_attention_forward

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from openmanus_rl.generation import attention  # noqa: E402
from openmanus_rl.policies.hf import load_model  # noqa: E402
from openmanus_rl.tiny_model import build_tiny_model  # noqa: E402

SHAPES = [(1, 1500), (16, 1500), (50, 300), (50, 1500), (50, 3000)]


@torch.no_grad()
def decode_ms(model: torch.nn.Module, batch: int, length: int, tokens: int, ours: bool) -> float:
    AttentionInterface.register("sdpa", attention.grouped_decode_sdpa if ours else sdpa_attention_forward)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(10, model.config.vocab_size, (batch, length), generator=g)
    mask = torch.ones(batch, length, dtype=torch.long)
    mask[: batch // 4, : length // 10] = 0  # left padding
    positions = (mask.cumsum(1) - 1).clamp(min=0)
    past = attention.growing_cache() if ours else DynamicCache()
    out = model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=past, use_cache=True)
    nxt, pos = out.logits[:, -1].argmax(-1, keepdim=True), positions[:, -1:] + 1
    start = time.perf_counter()
    for _ in range(tokens):
        mask = torch.cat([mask, torch.ones(batch, 1, dtype=torch.long)], dim=1)
        out = model(input_ids=nxt, attention_mask=mask, position_ids=pos, past_key_values=out.past_key_values,
                    use_cache=True)
        nxt, pos = out.logits[:, -1].argmax(-1, keepdim=True), pos + 1
    return 1000 * (time.perf_counter() - start) / tokens


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model, _ = load_model(build_tiny_model(Path(tmp) / "tiny", hidden_size=args.hidden, num_layers=args.layers,
                                               vocab_size=4096, max_position_embeddings=4096))
    print(f"tiny Qwen2 {args.hidden}x{args.layers}, {torch.get_num_threads()} threads, greedy, {args.tokens} tokens")
    print(f"{'batch':>5} {'context':>7} {'transformers ms/token':>22} {'ours ms/token':>14} {'speed-up':>9}")
    for batch, length in SHAPES:
        theirs = decode_ms(model, batch, length, args.tokens, ours=False)
        ours = decode_ms(model, batch, length, args.tokens, ours=True)
        print(f"{batch:>5} {length:>7} {theirs:>22.1f} {ours:>14.1f} {theirs / ours:>8.1f}x")
    AttentionInterface.register("sdpa", sdpa_attention_forward)


if __name__ == "__main__":
    main()
