"""``hf`` rollout backend for verl: a server-mode rollout replica that serves ``transformers`` generation.

verl 0.9.1 only ships vLLM / SGLang / TensorRT-LLM replicas (verl/workers/rollout/replica.py:388-390,
verl/workers/rollout/base.py:89 _ROLLOUT_REGISTRY), none of which runs on a CPU-only host. This module
fills the gap with the same three pieces those backends have:

* :class:`HFRolloutServer` - a Ray actor (one per replica) holding a ``transformers`` causal LM. Its
  ``generate(prompt_ids, sampling_params, request_id, ...) -> TokenOutput`` is what verl's
  ``LLMServerClient.generate`` (verl/workers/rollout/llm_server.py) calls for every agent-loop turn.
  Concurrent calls are queued and decoded together in batches (:mod:`.generation`); weight updates
  wait for the running batch and block new ones until loaded.
* :class:`HFServerAdapter` - the ``BaseRollout`` that lives inside the trainer's
  ``ActorRolloutRefWorker`` (hybrid engine). verl's naive checkpoint engine hands it the actor's
  full weights every step (``update_weights``); it ships them to the server actor over Ray.
* :class:`HFReplica` - the ``RolloutReplica`` that launches the server actor(s);
  registered as ``actor_rollout_ref.rollout.name=hf`` (see :func:`register`).

Engine options go in ``actor_rollout_ref.rollout.engine_kwargs.hf`` (all optional):
``batch_wait_ms`` (max time to gather concurrent requests into a batch, default 20),
``batch_gap_ms`` (stop gathering once no request arrived for this long, default 5),
``max_batch_size`` (default ``rollout.max_num_seqs``), ``attn_implementation`` (default "sdpa"),
``num_threads`` (torch threads in the server; default: leave as is), ``dtype`` (default float32
on CPU, else ``rollout.dtype``), ``prefix_cache_tokens`` (keys/values kept between an episode's turns,
matched by content, :mod:`.prefix_cache`; default: as many as 2 GiB hold, at least 262144; 0 turns it off).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import ray
import torch
from verl.workers.rollout.base import BaseRollout
from verl.workers.rollout.replica import RolloutMode, RolloutReplica, TokenOutput

from openmanus_rl.generation import GenRequest, HFGenerator, PrefixCache
from openmanus_rl.generation.prefix_cache import CPU_BUDGET_BYTES, tokens_for

from . import ROLLOUT_NAME

logger = logging.getLogger(__name__)
logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))


def _cfg_get(cfg: Any, key: str, default: Any = None) -> Any:
    if cfg is None:
        return default
    if isinstance(cfg, dict):
        return cfg.get(key, default)
    getter = getattr(cfg, "get", None)
    if callable(getter):
        try:
            return getter(key, default)
        except Exception:
            pass
    return getattr(cfg, key, default)


def _engine_kwargs(config: Any) -> dict:
    kwargs = _cfg_get(_cfg_get(config, "engine_kwargs", {}) or {}, ROLLOUT_NAME, {}) or {}
    return dict(kwargs)


def server_actor_name(replica_rank: int, node_rank: int = 0, kind: str = "", suffix: str = "") -> str:
    """Ray actor name of a replica's server (same scheme as vLLM's ``vllm_server_{replica}_{node}``)."""
    kind = f"{kind}_" if kind else ""
    return f"{ROLLOUT_NAME}_server_{kind}{replica_rank}_{node_rank}{suffix}"


def _resolve_dtype(config: Any, engine_kwargs: dict) -> torch.dtype:
    name = engine_kwargs.get("dtype")
    if name is None:
        name = "float32" if not torch.cuda.is_available() else _cfg_get(config, "dtype", "bfloat16")
    if isinstance(name, torch.dtype):
        return name
    aliases = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32"}
    return getattr(torch, aliases.get(str(name), str(name)))


class HFRolloutServer:
    """Token-in/token-out generation server (Ray actor) backed by a ``transformers`` model.

    Public methods mirror what verl calls on a vLLM server actor: ``generate``, ``wake_up``, ``sleep``,
    ``clear_kv_cache``, ``release_kv_cache``, ``resume_kv_cache``, ``set_global_steps``,
    ``abort_all_requests``, ``resume_generation``, ``wait_for_requests_to_drain``, ``start_profile``,
    ``stop_profile``; plus the weight-update protocol used by :class:`HFServerAdapter`
    (``begin_weight_update`` / ``load_weights`` / ``end_weight_update``).
    """

    def __init__(
        self,
        config: Any,
        model_config: Any,
        rollout_mode: RolloutMode = RolloutMode.HYBRID,
        workers: list | None = None,
        replica_rank: int = 0,
        node_rank: int = 0,
        gpus_per_node: int = 1,
        nnodes: int = 1,
        **kwargs: Any,
    ):
        from transformers import AutoModelForCausalLM

        self.config = config
        self.model_config = model_config
        self.rollout_mode = rollout_mode
        self.replica_rank = replica_rank
        self.node_rank = node_rank
        self.global_steps: int = 0
        ek = _engine_kwargs(config)
        if ek.get("num_threads"):
            torch.set_num_threads(int(ek["num_threads"]))
        self.batch_wait = float(ek.get("batch_wait_ms", 20)) / 1000.0
        self.batch_gap = min(float(ek.get("batch_gap_ms", 5)) / 1000.0, self.batch_wait)
        self.max_batch_size = int(ek.get("max_batch_size") or _cfg_get(config, "max_num_seqs", 256) or 256)
        self.prompt_length = int(_cfg_get(config, "prompt_length", 512))
        self.response_length = int(_cfg_get(config, "response_length", 512))
        self.ignore_eos_default = bool(_cfg_get(config, "ignore_eos", False))

        path = _cfg_get(model_config, "local_path") or _cfg_get(model_config, "path")
        self.model = AutoModelForCausalLM.from_pretrained(
            path,
            dtype=_resolve_dtype(config, ek),
            attn_implementation=ek.get("attn_implementation", "sdpa"),
            trust_remote_code=bool(_cfg_get(model_config, "trust_remote_code", False)),
        )
        self.model.eval()
        self.model.requires_grad_(False)
        max_pos = getattr(self.model.config, "max_position_embeddings", None) or (1 << 30)
        self.max_model_len = int(_cfg_get(config, "max_model_len", None) or max_pos)
        self.max_model_len = min(self.max_model_len, max_pos)

        tokenizer = _cfg_get(model_config, "tokenizer")
        eos_ids: list[int] = []
        gen_cfg = _cfg_get(model_config, "generation_config") or getattr(self.model, "generation_config", None)
        gen_eos = getattr(gen_cfg, "eos_token_id", None)
        for value in (gen_eos, getattr(tokenizer, "eos_token_id", None), self.model.config.eos_token_id):
            if value is None:
                continue
            eos_ids.extend(value if isinstance(value, (list, tuple)) else [value])
        pad_id = getattr(tokenizer, "pad_token_id", None)
        if pad_id is None:
            pad_id = eos_ids[0] if eos_ids else 0
        seed = int(_cfg_get(config, "seed", 0) or 0) + 1000 * replica_rank + node_rank
        cache_tokens = ek.get("prefix_cache_tokens")  # default: 2 GiB of keys and values, at least 262,144 tokens
        cache_tokens = int(tokens_for(self.model, CPU_BUDGET_BYTES, 1 << 18) if cache_tokens is None else cache_tokens)
        self.prefix_cache = PrefixCache(cache_tokens) if cache_tokens > 0 else None
        self.generator = HFGenerator(self.model, eos_ids, pad_id, seed=seed, prefix_cache=self.prefix_cache)
        self.full_determinism = bool(_cfg_get(config, "full_determinism", False))

        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hf-rollout")
        self._pending: list[tuple[GenRequest, asyncio.Future]] = []
        self._has_work: asyncio.Event | None = None
        self._open: asyncio.Event | None = None  # cleared while weights update / after abort
        self._idle: asyncio.Event | None = None  # set when no batch is running
        self._drained: asyncio.Event | None = None  # set when nothing is queued or running
        self._reject = False
        self._batch_task: asyncio.Task | None = None
        self._warned: set[str] = set()
        self.stats = {"requests": 0, "batches": 0, "tokens": 0, "gen_seconds": 0.0}

    # ------------------------------------------------------------------ internals
    def _events(self):
        if self._has_work is None:
            self._has_work, self._open, self._idle = asyncio.Event(), asyncio.Event(), asyncio.Event()
            self._drained = asyncio.Event()
            self._open.set()
            self._idle.set()
            self._drained.set()
        if self._batch_task is None or self._batch_task.done():
            self._batch_task = asyncio.get_running_loop().create_task(self._batch_loop())

    def _warn_once(self, key: str, msg: str):
        if key not in self._warned:
            self._warned.add(key)
            logger.warning(msg)

    def _make_request(self, prompt_ids: list[int], sampling_params: dict) -> tuple[GenRequest, bool]:
        sp = dict(sampling_params or {})
        if "max_tokens" in sp:
            max_tokens = sp.pop("max_tokens")
        elif "max_new_tokens" in sp:
            max_tokens = sp.pop("max_new_tokens")
        else:
            max_tokens = min(self.response_length, self.prompt_length + self.response_length - len(prompt_ids))
        room = self.max_model_len - len(prompt_ids)
        if room < 1:
            raise ValueError(
                f"Prompt length ({len(prompt_ids)}) leaves no room to generate within the model's maximum "
                f"context length ({self.max_model_len})."
            )
        max_tokens = max(1, min(int(max_tokens), room))
        want_logprobs = bool(sp.pop("logprobs", False))
        rep = sp.pop("repetition_penalty", 1.0)
        if rep not in (None, 1, 1.0):
            self._warn_once("rep", "hf rollout ignores repetition_penalty")
        seed = sp.pop("seed", None)
        if seed is None and self.full_determinism:
            seed = int(_cfg_get(self.config, "seed", 0) or 0) + self.replica_rank
        stop_ids = list(sp.pop("stop_token_ids", None) or [])
        req = GenRequest(
            prompt_ids=[int(t) for t in prompt_ids],
            max_tokens=max_tokens,
            temperature=float(sp.pop("temperature", 1.0)),
            top_p=float(sp.pop("top_p", 1.0)),
            top_k=int(sp.pop("top_k", -1)),
            ignore_eos=bool(sp.pop("ignore_eos", self.ignore_eos_default)),
            stop_token_ids=stop_ids,
            seed=seed,
        )
        return req, want_logprobs

    async def _batch_loop(self):
        loop = asyncio.get_running_loop()
        while True:
            await self._has_work.wait()
            # gather concurrent requests: wait until the queue stops growing for batch_gap seconds
            # (bounded by batch_wait)
            deadline = time.monotonic() + self.batch_wait
            while time.monotonic() < deadline and len(self._pending) < self.max_batch_size:
                n = len(self._pending)
                await asyncio.sleep(self.batch_gap)
                if len(self._pending) == n:
                    break
            if not self._open.is_set():  # weight update or abort in progress
                await self._open.wait()
                continue
            # from here to the executor call there is no await: a weight update cannot slip in
            batch = [(r, f) for r, f in self._pending[: self.max_batch_size] if not f.done()]
            del self._pending[: self.max_batch_size]
            if not self._pending:
                self._has_work.clear()
            if not batch:
                if not self._pending:
                    self._drained.set()
                continue
            self._idle.clear()
            t0 = time.monotonic()
            try:
                results = await loop.run_in_executor(self._executor, self.generator.generate, [r for r, _ in batch])
            except Exception as e:  # fail this batch, keep serving
                logger.exception("hf rollout batch failed")
                for _, fut in batch:
                    if not fut.done():
                        fut.set_exception(e)
                continue
            finally:
                self._idle.set()
                if not self._pending:
                    self._drained.set()
            self.stats["batches"] += 1
            self.stats["gen_seconds"] += time.monotonic() - t0
            for (_, fut), res in zip(batch, results, strict=True):
                self.stats["tokens"] += len(res.token_ids)
                if not fut.done():
                    fut.set_result(res)

    def _aborted_output(self) -> TokenOutput:
        return TokenOutput(token_ids=[], log_probs=None, stop_reason="aborted",
                           extra_fields={"global_steps": self.global_steps})

    # ------------------------------------------------------------------ generation API
    async def generate(
        self,
        prompt_ids: list[int],
        sampling_params: dict[str, Any],
        request_id: str | None = None,
        image_data: list[Any] | None = None,
        video_data: list[Any] | None = None,
        audio_data: list[Any] | None = None,
        mm_processor_kwargs: dict[str, Any] | None = None,
        priority: int = 0,
        **kwargs: Any,
    ) -> TokenOutput:
        """Generate a continuation of ``prompt_ids``; returns response token ids and their log-probs."""
        if image_data or video_data or audio_data:
            raise NotImplementedError("hf rollout is text-only")
        self._events()
        if self._reject:
            return self._aborted_output()
        req, want_logprobs = self._make_request(list(prompt_ids), sampling_params)
        fut = asyncio.get_running_loop().create_future()
        self._pending.append((req, fut))
        self._has_work.set()
        self._drained.clear()
        self.stats["requests"] += 1
        res = await fut
        if res is None:
            return self._aborted_output()
        return TokenOutput(
            token_ids=res.token_ids,
            log_probs=res.log_probs if want_logprobs else None,
            stop_reason="completed",
            num_preempted=0,
            extra_fields={"global_steps": self.global_steps, "finish_reason": res.finish_reason},
        )

    # ------------------------------------------------------------------ weight update protocol
    async def begin_weight_update(self):
        """Stop starting new batches and wait for the running one."""
        self._events()
        self._open.clear()
        await self._idle.wait()

    def _load(self, named_tensors: list[tuple[str, torch.Tensor]]) -> tuple[int, list[str]]:
        self._drop_cache()  # keys and values of the old weights
        state = self.model.state_dict(keep_vars=True)
        loaded, unknown = 0, []
        with torch.no_grad():
            for name, tensor in named_tensors:
                target = state.get(name)
                if target is None and name.startswith("module."):
                    target = state.get(name[len("module."):])
                if target is None:
                    unknown.append(name)
                    continue
                if tuple(target.shape) != tuple(tensor.shape):
                    raise ValueError(f"shape mismatch for {name}: {tuple(tensor.shape)} vs {tuple(target.shape)}")
                target.data.copy_(tensor.to(dtype=target.dtype))
                loaded += 1
        return loaded, unknown

    async def load_weights(self, named_tensors: list[tuple[str, torch.Tensor]]) -> int:
        loop = asyncio.get_running_loop()
        loaded, unknown = await loop.run_in_executor(self._executor, self._load, named_tensors)
        if unknown:
            self._warn_once("unknown", f"hf rollout ignored unknown weights: {unknown[:5]}...")
        return loaded

    async def end_weight_update(self, global_steps: int | None = None):
        logger.info("hf rollout stats: %s", self.stats)
        if global_steps is not None:
            self.global_steps = global_steps
        self._events()
        self._open.set()

    async def update_weights(self, named_tensors: list[tuple[str, torch.Tensor]], global_steps: int | None = None):
        """One-shot weight update (begin + load + end)."""
        await self.begin_weight_update()
        try:
            loaded = await self.load_weights(named_tensors)
        finally:
            await self.end_weight_update(global_steps)
        return loaded

    async def get_state_dict(self) -> dict[str, torch.Tensor]:
        """Copy of the served weights (for tests/debugging)."""
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}

    # ------------------------------------------------------------------ lifecycle API used by verl
    async def ready(self) -> bool:
        return True

    async def get_stats(self) -> dict:
        reuse = self.prefix_cache.counters() if self.prefix_cache is not None else {}
        return dict(self.stats, **reuse, pending=len(self._pending), global_steps=self.global_steps)

    async def set_global_steps(self, global_steps: int):
        self.global_steps = global_steps

    async def wake_up(self, tags: list[str] | None = None):
        return None  # weights and (no) kv cache stay in host memory

    def _drop_cache(self) -> None:
        if self.prefix_cache is not None:
            self.prefix_cache.clear()

    async def _clear_prefix_cache(self) -> None:
        # on the generation thread: never while a batch reads the cache
        await asyncio.get_running_loop().run_in_executor(self._executor, self._drop_cache)

    async def sleep(self):
        await self._clear_prefix_cache()

    async def clear_kv_cache(self):
        await self._clear_prefix_cache()

    async def release_kv_cache(self):
        await self._clear_prefix_cache()

    async def resume_kv_cache(self):
        return None

    async def wait_for_requests_to_drain(self):
        self._events()
        if self._pending or not self._idle.is_set():
            await self._drained.wait()

    async def abort_all_requests(self, reset_prefix_cache: bool = True, reject_request: bool = False) -> dict:
        """Fail queued requests with stop_reason="aborted" and hold new ones until ``resume_generation``."""
        self._events()
        self._open.clear()
        self._reject = reject_request
        aborted = [f for _, f in self._pending if not f.done()]
        for fut in aborted:
            fut.set_result(None)
        self._pending.clear()
        self._has_work.clear()
        await self._idle.wait()
        self._drained.set()
        if reset_prefix_cache:
            await self._clear_prefix_cache()
        return {"aborted_count": len(aborted), "request_ids": []}

    async def abort_request(self, request_id: str, reset_prefix_cache: bool = True) -> dict:
        return {"aborted": False, "request_id": request_id, "error": "not supported by hf rollout"}

    async def resume_generation(self):
        self._events()
        self._reject = False
        self._open.set()

    async def resume_engine_generation(self):
        await self.resume_generation()

    async def open_submission_gate(self):
        await self.resume_generation()

    async def start_profile(self, **kwargs):
        return None

    async def stop_profile(self):
        return None


class HFServerAdapter(BaseRollout):
    """Rollout adapter inside the trainer worker: forwards weight updates / sleep / wake-up to the server."""

    def __init__(self, config, model_config, device_mesh=None, replica_rank: int = -1, **kwargs):
        super().__init__(config, model_config, device_mesh)
        rank = int(os.environ.get("RANK", 0))
        local_world_size = int(os.environ.get("RAY_LOCAL_WORLD_SIZE", 1))
        rollout_world_size = (
            self.config.tensor_model_parallel_size
            * self.config.data_parallel_size
            * self.config.pipeline_model_parallel_size
        )
        self.replica_rank = rank // rollout_world_size if replica_rank == -1 else replica_rank
        self.rollout_rank = rank % rollout_world_size
        self.node_rank = self.rollout_rank // max(local_world_size, 1)
        self.is_leader_rank = self.rollout_rank == 0
        self._has_server = self.rollout_rank % max(local_world_size, 1) == 0
        self.server_handle = None
        self.sleep_level = 1
        bucket_mb = _cfg_get(_cfg_get(self.config, "checkpoint_engine"), "update_weights_bucket_megabytes", 512)
        self.bucket_bytes = int(bucket_mb or 512) << 20

    def _ensure_server_handle(self) -> bool:
        if not self._has_server:
            return False
        if self.server_handle is None:
            self.server_handle = ray.get_actor(server_actor_name(self.replica_rank, self.node_rank))
        return True

    async def resume(self, tags: list[str]):
        if self._ensure_server_handle():
            await self.server_handle.wake_up.remote(tags=tags)

    async def release(self):
        if self._ensure_server_handle():
            await self.server_handle.sleep.remote()

    @torch.no_grad()
    async def update_weights(
        self,
        weights: Generator[tuple[str, torch.Tensor], None, None],
        wire_format: str = "named_tensors",
        global_steps: int | None = None,
        peft_config: dict | None = None,
        **kwargs,
    ):
        """Ship the trainer's full weights to the server. Every rank consumes the generator (FSDP gathers
        are collective); only the replica's leader rank sends."""
        if wire_format != "named_tensors":
            raise NotImplementedError(f"hf rollout supports wire_format='named_tensors' only, got {wire_format!r}")
        if peft_config is not None:
            raise NotImplementedError("hf rollout needs merged weights: set actor_rollout_ref.model.lora.merge=True")
        from verl.workers.rollout.utils import ensure_async_iterator

        t0 = time.time()
        send = self._ensure_server_handle()
        if send:
            await self.server_handle.begin_weight_update.remote()
        bucket: list[tuple[str, torch.Tensor]] = []
        size = 0
        try:
            async for name, tensor in ensure_async_iterator(weights):
                if not send:
                    continue
                t = tensor.detach().to("cpu").clone()
                bucket.append((name, t))
                size += t.numel() * t.element_size()
                if size >= self.bucket_bytes:
                    await self.server_handle.load_weights.remote(bucket)
                    bucket, size = [], 0
            if send and bucket:
                await self.server_handle.load_weights.remote(bucket)
        finally:
            if send:
                await self.server_handle.end_weight_update.remote(global_steps)
        if send and self.replica_rank == 0:
            logger.info("hf rollout update_weights done in %.3fs", time.time() - t0)


class HFReplica(RolloutReplica):
    """Rollout replica launching one :class:`HFRolloutServer` per replica node."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.server_class = ray.remote(HFRolloutServer)

    def _kind(self) -> str:
        return "reward" if self.is_reward_model else ("teacher" if self.is_teacher_model else "")

    async def launch_servers(self):
        node_ids = []
        if self.workers:
            node_ids = await asyncio.gather(
                *[w.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()) for w in self.workers]
            )
        else:
            node_ids = [ray.get_runtime_context().get_node_id()]
        for node_rank in range(self.nnodes):
            node_id = node_ids[min(node_rank * self.gpus_per_replica_node, len(node_ids) - 1)]
            name = server_actor_name(self.replica_rank, node_rank, self._kind(), self.name_suffix)
            server = self.server_class.options(
                name=name,
                num_cpus=0,
                max_concurrency=self.max_concurrency,
                scheduling_strategy=ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(
                    node_id=node_id, soft=True
                ),
            ).remote(
                config=self.config,
                model_config=self.model_config,
                rollout_mode=self.rollout_mode,
                workers=None,
                replica_rank=self.replica_rank,
                node_rank=node_rank,
                gpus_per_node=self.gpus_per_replica_node,
                nnodes=self.nnodes,
            )
            self.servers.append(server)
        await asyncio.gather(*[s.ready.remote() for s in self.servers])
        self._server_handle = self.servers[0]
        # Only used as a key by verl's load balancer (there is no HTTP endpoint).
        name = server_actor_name(self.replica_rank, 0, self._kind(), self.name_suffix)
        self._server_address = f"{ROLLOUT_NAME}://{name}"

    async def sleep(self):
        await asyncio.gather(*[server.sleep.remote() for server in self.servers])
