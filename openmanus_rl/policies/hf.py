"""A local ``transformers`` checkpoint as a policy, with concurrent episodes batched together.

Batching is *lockstep*: a batch is generated once every running episode has asked for its next
reply (the evaluator tells the backend how many episodes it runs and how many at once, see
:meth:`HFBackend.plan`). Which requests share a batch, and their order in it, therefore depend
only on the task list and the concurrency, never on timing, so greedy results (and sampled ones,
seeded per request and turn) repeat exactly from run to run. A safety timeout flushes a batch that waits
too long (a stuck episode must not stall the others); that is logged, as it can break exact repeats.

Generation is the CPU rollout replica's (:class:`~openmanus_rl.generation.HFGenerator`): an
episode's keys and values are kept between its turns (:mod:`~openmanus_rl.generation.prefix_cache`), so a
turn encodes only the reply and observation it adds instead of the whole conversation again.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmanus_rl.policies.chat import ChatRequest, GenerationSettings, Reply

log = logging.getLogger(__name__)


def load_model(path: str | Path, dtype: str = "auto", device: str = "auto") -> tuple[Any, Any]:
    """Model and tokenizer of a local checkpoint (``save_pretrained`` layout), ready for generation."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path} is not a transformers checkpoint (no config.json)")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if dtype == "auto":  # bf16 is slow and imprecise on CPU; fp32 there, bf16 on GPUs
        dtype = "bfloat16" if device.startswith("cuda") else "float32"
    tokenizer = AutoTokenizer.from_pretrained(path)
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError(f"the tokenizer of {path} has no chat template; the prompts are chats")
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path, dtype=getattr(torch, dtype)).to(device).eval()
    return model, tokenizer


@dataclass
class _Pending:
    request: ChatRequest
    future: asyncio.Future[Reply]


class HFBackend:
    """Generates replies for many episodes at once (one batch per lockstep round, prefix-cached)."""

    def __init__(self, model: Any, tokenizer: Any, settings: GenerationSettings, *, flush_timeout: float = 60.0,
                 prefix_cache_tokens: int | None = None):
        from openmanus_rl.generation import HFGenerator, PrefixCache
        from openmanus_rl.generation.prefix_cache import CPU_BUDGET_BYTES, tokens_for

        self.model, self.tokenizer, self.settings = model, tokenizer, settings
        eos = model.generation_config.eos_token_id
        if eos is None:
            eos = tokenizer.eos_token_id
        if prefix_cache_tokens is None:  # on CPU (tiny and small models): 2 GiB of keys and values, at least
            # 131,072 tokens (every episode in flight must fit); on a GPU the entries would hold GBs
            cpu = next(model.parameters()).device.type == "cpu"
            prefix_cache_tokens = tokens_for(model, CPU_BUDGET_BYTES, 1 << 17) if cpu else 0
        self.prefix_cache = PrefixCache(prefix_cache_tokens) if prefix_cache_tokens > 0 else None
        self.generator = HFGenerator(model, list(eos) if isinstance(eos, (list, tuple)) else [eos],
                                     tokenizer.pad_token_id, prefix_cache=self.prefix_cache)
        self.flush_timeout = flush_timeout
        self.batch_sizes: list[int] = []  # what each generate call got (for tests and diagnostics)
        self.longest_reply = 0  # most new tokens any call produced (bounded by max_new_tokens)
        self._pending: list[_Pending] = []
        self._slots: int | None = None
        self._remaining = 0
        self._busy = False
        self._timer: asyncio.TimerHandle | None = None
        self._generating: asyncio.Task | None = None  # held so the running batch is not garbage-collected
        self._warned_truncation = False
        config = model.config
        self._context = getattr(config, "max_position_embeddings", None) or tokenizer.model_max_length

    # -- lockstep batching -------------------------------------------------------------------

    async def start(self) -> None:
        """The model is loaded already."""

    def plan(self, episodes: int, concurrency: int) -> None:
        self._remaining, self._slots = episodes, max(1, concurrency)

    def episode_finished(self) -> None:
        self._remaining -= 1
        self._maybe_flush()

    def _expected(self) -> int:
        if self._slots is None:  # no plan: whoever is waiting
            return max(1, len(self._pending))
        return max(1, min(self._slots, self._remaining))

    async def reply(self, request: ChatRequest) -> Reply:
        fut: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._pending.append(_Pending(request, fut))
        self._maybe_flush()
        return await fut

    def _maybe_flush(self) -> None:
        self._pending = [p for p in self._pending if not p.future.done()]  # drop cancelled waiters
        if self._busy or not self._pending:
            return
        if len(self._pending) >= self._expected():
            self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.flush_timeout, self._flush_late)

    def _flush_late(self) -> None:
        self._timer = None
        if not self._busy and self._pending:
            log.warning("flushing a batch of %d after %.0fs without all %d episodes ready; batches (and so "
                        "results) may differ from run to run", len(self._pending), self.flush_timeout,
                        self._expected())
            self._flush()

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch = sorted(self._pending, key=lambda p: p.request.key)
        self._pending = []
        self._busy = True
        self._generating = asyncio.get_running_loop().create_task(self._run(batch))

    async def _run(self, batch: list[_Pending]) -> None:
        try:
            replies = await asyncio.to_thread(self.generate, [p.request for p in batch])
        except Exception as e:
            for p in batch:
                if not p.future.done():
                    p.future.set_exception(e)
        else:
            for p, text in zip(batch, replies, strict=True):
                if not p.future.done():
                    p.future.set_result(text)
        finally:
            self._busy = False
            self._maybe_flush()

    # -- generation ----------------------------------------------------------------------------

    def _prompt_ids(self, request: ChatRequest) -> list[int]:
        text = self.tokenizer.apply_chat_template(request.messages, tokenize=False, add_generation_prompt=True)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        room = int(self._context) - self.settings.reply_budget(request.env)
        if room > 0 and len(ids) > room:  # keep the latest turns; the chat is recorded in full regardless
            if not self._warned_truncation:
                log.warning("a prompt of %d tokens exceeds the model's context; keeping its last %d", len(ids), room)
                self._warned_truncation = True
            ids = ids[-room:]
        return ids

    def generate(self, requests: list[ChatRequest]) -> list[Reply]:
        """Replies for ``requests`` in one batch (blocking; run off the event loop)."""
        from openmanus_rl.generation import GenRequest

        s = self.settings
        batch = [GenRequest(self._prompt_ids(r), s.reply_budget(r.env), temperature=0.0 if s.greedy else s.temperature,
                            top_p=s.top_p, seed=r.seed(s.seed)) for r in requests]
        self.batch_sizes.append(len(requests))
        results = self.generator.generate(batch)
        self.longest_reply = max([self.longest_reply, *(len(r.token_ids) for r in results)])
        return [Reply(self.tokenizer.decode(r.token_ids, skip_special_tokens=True), cut=r.finish_reason == "length")
                for r in results]

    def stats(self) -> dict[str, float]:
        sizes = self.batch_sizes
        reuse = self.prefix_cache.counters() if self.prefix_cache is not None else {}
        return {"generate_calls": len(sizes), "mean_batch": round(sum(sizes) / len(sizes), 3) if sizes else 0.0,
                "max_batch": max(sizes, default=0), "longest_reply_tokens": self.longest_reply, **reuse}

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
