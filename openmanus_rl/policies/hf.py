"""A local ``transformers`` checkpoint as a policy, with concurrent episodes batched together.

Batching is *lockstep*: a batch is generated once every running episode has asked for its next
reply (the evaluator tells the backend how many episodes it runs and how many at once, see
:meth:`HFBackend.plan`). Which requests share a batch, and their order in it, therefore depend
only on the task list and the concurrency, never on timing, so greedy results (and sampled ones,
seeded per batch) repeat exactly from run to run. A safety timeout flushes a batch that waits too
long (a stuck episode must not stall the others); that is logged, as it can break exact repeats.
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
    """Generates replies for many episodes at once with ``model.generate`` (left-padded batches)."""

    def __init__(self, model: Any, tokenizer: Any, settings: GenerationSettings, *, flush_timeout: float = 60.0):
        self.model, self.tokenizer, self.settings = model, tokenizer, settings
        self.flush_timeout = flush_timeout
        self.batch_sizes: list[int] = []  # what each generate call got (for tests and diagnostics)
        self.longest_reply = 0  # most new tokens any call produced (bounded by max_new_tokens)
        self._pending: list[_Pending] = []
        self._slots: int | None = None
        self._remaining = 0
        self._round = 0
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
        self._remaining, self._slots, self._round = episodes, max(1, concurrency), 0

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
        self._generating = asyncio.get_running_loop().create_task(self._run(batch, self._round))
        self._round += 1

    async def _run(self, batch: list[_Pending], round_index: int) -> None:
        try:
            replies = await asyncio.to_thread(self.generate, [p.request for p in batch], round_index)
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
        room = int(self._context) - self.settings.max_new_tokens
        if room > 0 and len(ids) > room:  # keep the latest turns; the chat is recorded in full regardless
            if not self._warned_truncation:
                log.warning("a prompt of %d tokens exceeds the model's context; keeping its last %d", len(ids), room)
                self._warned_truncation = True
            ids = ids[-room:]
        return ids

    def generate(self, requests: list[ChatRequest], round_index: int = 0) -> list[Reply]:
        """Replies for ``requests`` in one ``generate`` call (blocking; run off the event loop)."""
        import torch

        s = self.settings
        prompts = [self._prompt_ids(r) for r in requests]
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        device = next(self.model.parameters()).device
        eos = self.model.generation_config.eos_token_id
        if eos is None:
            eos = self.tokenizer.eos_token_id
        kwargs: dict[str, Any] = {"max_new_tokens": s.max_new_tokens, "pad_token_id": pad, "eos_token_id": eos,
                                  "do_sample": not s.greedy}
        if s.greedy:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        else:
            kwargs.update(temperature=s.temperature, top_p=s.top_p, top_k=0)  # 0: no top-k cut
        self.batch_sizes.append(len(requests))
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(requests[0].seed(s.seed) ^ round_index)
            out = self.model.generate(input_ids=input_ids.to(device), attention_mask=attention.to(device), **kwargs)
        self.longest_reply = max(self.longest_reply, out.shape[1] - width)
        eos_ids = set(eos if isinstance(eos, (list, tuple)) else [eos])
        replies = []
        for row in out.cpu().tolist():
            new = row[width:]
            ended = any(t in eos_ids for t in new)  # else it ran to max_new_tokens: cut
            replies.append(Reply(self.tokenizer.decode(new, skip_special_tokens=True), cut=not ended))
        return replies

    def stats(self) -> dict[str, float]:
        sizes = self.batch_sizes
        return {"generate_calls": len(sizes), "mean_batch": round(sum(sizes) / len(sizes), 3) if sizes else 0.0,
                "max_batch": max(sizes, default=0), "longest_reply_tokens": self.longest_reply}

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
