"""The OpenManus agent loop: verl rollouts that play whole episodes on environment servers.

Selected per dataset row by ``agent_name == "openmanus"``. For a row it opens a session
on one of the environment's server replicas (task and split from ``extra_info``), then
alternates model turns and environment turns until the episode ends, a turn limit, or the
response budget. Token-in/token-out: the model's tokens are kept as generated (mask 1,
with their log-probs) and only the new observation is tokenized each turn (mask 0).
The episode always ends on a model token, and that is where verl puts the reward.

verl's rollout workers import the loop through the agent-loop YAML
(``actor_rollout_ref.rollout.agent.agent_loop_config_path``: ``- name: openmanus``,
``_target_: openmanus_rl.agent_loop.OpenManusAgentLoop``). Its settings come from the
YAML file named by ``$OPENMANUS_AGENT_CONFIG`` (the launcher writes it; Ray workers
inherit the variable), e.g.::

    env_servers: {maze: [http://127.0.0.1:40001]}
    max_turns: 30
    rollout_dir: /runs/maze/rollouts

(Keyword arguments take precedence: the YAML entry may carry them too, but verl's
``@register`` replaces that entry once the module is imported, so the file is the
reliable way.)
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from agentenv.client import EnvPool, EnvSession
from agentenv.errors import AgentEnvError
from agentenv.rollout import server_failed
from openmanus_rl import prompts, rewards, trajectories
from openmanus_rl.actions import parse_action

log = logging.getLogger(__name__)
AGENT_NAME = "openmanus"
CONFIG_VAR = "OPENMANUS_AGENT_CONFIG"  # path of the settings YAML

# Pools live per process and event loop: verl builds a new agent loop object per sample.
_POOLS: dict[tuple[int, str, tuple[str, ...]], EnvPool] = {}
_MAX_TURNS: dict[tuple[str, tuple[str, ...]], int] = {}


@dataclass
class Episode:
    """What one rollout did, for the reward, the metrics and the rollout log."""

    env: str
    task_id: int
    split: str
    messages: list[dict[str, str]]
    actions: list[str] = field(default_factory=list)
    env_reward: float = 0.0
    success: bool = False
    score: float = 0.0
    done: bool = False
    invalid_actions: int = 0
    format_errors: int = 0
    env_seconds: float = 0.0
    gen_seconds: float = 0.0
    global_steps: int | None = None  # weight version that generated it
    train_step: int | None = None  # the trainer step whose batch it belongs to
    #: the row's ``extra_info.sample_seed``: each turn samples with a seed derived from it, so the
    #: episode repeats exactly whatever else shares the batch (AgentEvol's exploration); None: unseeded
    sample_seed: int | None = None
    sample: int | None = None  # the row's ``extra_info.sample`` (which draw for its instruction), logged

    def turn_seed(self) -> int | None:
        return None if self.sample_seed is None else (self.sample_seed * 1_000_003 + self.turns) % (1 << 62)

    @property
    def turns(self) -> int:
        return len(self.actions)


def _weight_versions(extra: dict[str, Any]) -> dict[str, int | None]:
    version = extra.get("global_steps")
    version = int(version) if version is not None else None
    lo, hi = extra.get("min_global_steps", version), extra.get("max_global_steps", version)
    return {"global_steps": version, "min_global_steps": int(lo) if lo is not None else version,
            "max_global_steps": int(hi) if hi is not None else version}


def _plain(value: Any) -> Any:
    """numpy/pyarrow containers from the dataset as plain Python objects."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _settings_file() -> dict[str, Any]:
    path = os.environ.get(CONFIG_VAR)
    if not path:
        return {}
    if path not in _SETTINGS:
        import yaml

        _SETTINGS[path] = yaml.safe_load(Path(path).read_text()) or {}
    return _SETTINGS[path]


_SETTINGS: dict[str, dict[str, Any]] = {}


@register(AGENT_NAME)
class OpenManusAgentLoop(AgentLoopBase):
    def __init__(self, *args: Any, env_servers: dict[str, list[str]] | None = None, max_turns: int | None = None,
                 rollout_dir: str | None = None, token: str | None = None, episode_retries: int | None = None,
                 max_observation_chars: int | None = None, **kwargs: Any) -> None:
        kwargs.pop("name", None)  # the YAML entry's own name
        kwargs.pop("tools", None)  # verl passes its tool list to every loop; episodes have no tools
        super().__init__(*args, **kwargs)
        given = {"env_servers": env_servers, "max_turns": max_turns, "rollout_dir": rollout_dir, "token": token,
                 "episode_retries": episode_retries, "max_observation_chars": max_observation_chars}
        settings = {**_settings_file(), **{k: v for k, v in given.items() if v is not None}}
        self.env_servers = {k: list(v) for k, v in _plain(settings.get("env_servers") or {}).items()}
        self.max_turns = settings.get("max_turns")
        self.rollout_dir = Path(settings["rollout_dir"]) if settings.get("rollout_dir") else None
        self.token = settings.get("token") or os.environ.get("AGENTENV_TOKEN")
        self.episode_retries = int(settings.get("episode_retries", 2))
        self.max_observation_chars = int(settings.get("max_observation_chars", prompts.MAX_OBSERVATION_CHARS))
        self.max_new_tokens = int(settings.get("max_new_tokens", 512))  # per model turn
        self.response_length = self.rollout_config.response_length
        self.eos_id = self.tokenizer.eos_token_id
        # the per-request sampling seed's name: vLLM's SamplingParams (and the CPU replica) say seed, SGLang's
        self.seed_key = "sampling_seed" if getattr(self.rollout_config, "name", None) == "sglang" else "seed"

    # -- servers ---------------------------------------------------------------------------

    def _urls(self, env: str) -> tuple[str, ...]:
        urls = self.env_servers.get(env)
        if not urls:
            raise RuntimeError(f"no environment server for {env!r}; the agent loop knows {sorted(self.env_servers)}")
        return tuple(urls)

    def _pool(self, env: str) -> EnvPool:
        key = (id(asyncio.get_running_loop()), env, self._urls(env))
        if key not in _POOLS:
            _POOLS[key] = EnvPool(list(key[2]), token=self.token)
        return _POOLS[key]

    async def _turn_limit(self, env: str, pool: EnvPool) -> int:
        key = (env, self._urls(env))
        if key not in _MAX_TURNS:
            _MAX_TURNS[key] = int((await pool.clients[0].info())["max_turns"])
        limit = _MAX_TURNS[key]
        return min(limit, self.max_turns) if self.max_turns else limit

    # -- the loop --------------------------------------------------------------------------

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra = _plain(kwargs.get("extra_info") or {})
        env, split, task_id = extra["env_name"], extra.get("split", "train"), int(extra["task_id"])
        style = rewards.style_of(_plain(kwargs.get("reward_model")))
        messages = [dict(m) for m in _plain(kwargs["raw_prompt"])]
        seeded = {k: int(extra[k]) for k in ("sample_seed", "sample") if extra.get(k) is not None}
        for attempt in range(self.episode_retries + 1):
            try:
                output, episode = await self._episode(env, split, task_id, messages, sampling_params, **seeded)
                break
            except Exception as e:  # the environment side failed: replay the episode, never score it 0
                if attempt == self.episode_retries or not server_failed(e):
                    raise
                log.warning("episode %s/%s/%d lost its server (%s); retrying", env, split, task_id, e)
        if kwargs.get("global_steps") is not None:
            episode.train_step = int(_plain(kwargs["global_steps"]))
        outcome = rewards.Outcome(episode.env_reward, episode.success, episode.score)
        output.reward_score = rewards.shape(style, outcome)
        output.extra_fields["reward_extra_info"] = {
            "success": float(episode.success),
            "env_reward": float(episode.env_reward),
            "env_score": float(episode.score),
            "turns": float(episode.turns),
            "invalid_actions": float(episode.invalid_actions),
            "format_errors": float(episode.format_errors),
            "env_seconds": episode.env_seconds,
            "gen_seconds": episode.gen_seconds,
        }
        self._log_episode(episode, output.reward_score)
        return output

    async def _episode(self, env: str, split: str, task_id: int, messages: list[dict[str, str]],
                       sampling_params: dict[str, Any], sample_seed: int | None = None,
                       sample: int | None = None) -> tuple[AgentLoopOutput, Episode]:
        pool = self._pool(env)
        max_turns = await self._turn_limit(env, pool)
        request_id = uuid4().hex
        episode = Episode(env, task_id, split, list(messages), sample_seed=sample_seed, sample=sample)
        token_ids = await self.ct_build_initial_tokens(messages)
        prompt_len = len(token_ids)
        mask: list[int] = []
        logprobs: list[float] | None = [] if sampling_params.get("logprobs") else None
        weights: dict[str, int | None] = {}  # which weight version generated the episode (verl's staleness tags)

        t0 = time.perf_counter()
        sess = await pool.open(task_id, split)
        episode.env_seconds += time.perf_counter() - t0
        try:
            self._check_prompt(sess, messages, env, task_id)
            while True:
                budget = self.response_length - len(mask)
                if budget <= 0:
                    break
                t0 = time.perf_counter()
                params = {**sampling_params, "max_tokens": min(budget, self.max_new_tokens)}
                if episode.sample_seed is not None:
                    params[self.seed_key] = episode.turn_seed()
                out = await self.server_manager.generate(request_id=request_id, prompt_ids=token_ids,
                                                         sampling_params=params)
                episode.gen_seconds += time.perf_counter() - t0
                versions = _weight_versions(out.extra_fields)
                if "min_global_steps" not in weights:
                    weights["min_global_steps"] = versions["min_global_steps"]
                weights["max_global_steps"] = versions["max_global_steps"]
                weights["global_steps"] = versions["global_steps"]
                generated = list(out.token_ids[:budget])
                lp = list(out.log_probs[: len(generated)]) if (logprobs is not None and out.log_probs) else None
                if lp is None:
                    logprobs = None  # the backend gave none: keep the episode consistent without them
                merged, mask, new_lp = await self.ct_merge_assistant_token(
                    token_ids, generated, mask, logprobs, assistant_logprobs=lp if logprobs is not None else None)
                token_ids, logprobs = merged.token_ids, new_lp if logprobs is not None else None
                reply = self.tokenizer.decode(generated, skip_special_tokens=True)
                episode.messages.append({"role": "assistant", "content": reply})

                parsed = parse_action(reply)
                episode.format_errors += not parsed.well_formed
                t0 = time.perf_counter()
                step = await sess.step(parsed.action)
                episode.env_seconds += time.perf_counter() - t0
                episode.actions.append(parsed.action)
                episode.env_reward += step.reward
                episode.success, episode.score = step.success, step.score
                episode.invalid_actions += not step.valid
                if step.done:
                    episode.done = True
                    break
                if episode.turns >= max_turns:
                    break
                # the next observation, tokenized alone (mask 0); stop if no room is left for a reply to it
                next_ids, next_mask, next_lp = await self._append_observation(
                    token_ids, mask, logprobs, episode.messages, step.observation)
                if len(next_mask) >= self.response_length - 1:
                    break
                token_ids, mask, logprobs = next_ids, next_mask, next_lp
                episode.messages.append(prompts.observation_message(step.observation, self.max_observation_chars))
        finally:
            with contextlib.suppress(AgentEnvError):
                await asyncio.shield(sess.close())

        response_ids = token_ids[prompt_len:]
        output = AgentLoopOutput(
            prompt_ids=token_ids[:prompt_len],
            response_ids=response_ids[: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            num_turns=2 * episode.turns,
            metrics={"generate_sequences": episode.gen_seconds, "tool_calls": episode.env_seconds},
            extra_fields={"turn_scores": [], "tool_rewards": [], **weights},
        )
        episode.global_steps = weights.get("global_steps")
        return output, episode

    async def _append_observation(self, token_ids: list[int], mask: list[int], logprobs: list[float] | None,
                                  messages: list[dict[str, str]], observation: str):
        if token_ids and token_ids[-1] != self.eos_id:
            # the reply was cut by the budget: close the turn as the chat template would (not trained on)
            token_ids = [*token_ids, self.eos_id]
            mask = [*mask, 0]
            logprobs = [*logprobs, 0.0] if logprobs is not None else None
        updated = [*messages, prompts.observation_message(observation, self.max_observation_chars)]
        merged, new_mask, new_lp = await self.ct_merge_context_msg(messages, updated, token_ids, mask, logprobs)
        return merged.token_ids, new_mask, new_lp

    @staticmethod
    def _check_prompt(sess: EnvSession, messages: list[dict[str, str]], env: str, task_id: int) -> None:
        """The dataset's prompt was built from this task's first observation; a mismatch means stale data."""
        if sess.observation not in messages[-1]["content"]:
            log.warning("first observation of %s task %d differs from the dataset prompt (rebuild data/%s)",
                        env, task_id, env)

    # -- the rollout log -------------------------------------------------------------------

    def _log_episode(self, episode: Episode, training_reward: float) -> None:
        """Append the episode to ``step_<N>.jsonl`` or, for test-split rows, ``val_step_<N>.jsonl``.

        N is the trainer's step (verl passes it with the row); without it, the weight version
        tells: training step N samples with the weights of version N-1, validation after step N
        with version N."""
        if self.rollout_dir is None:
            return
        validation = episode.split == "test"
        if episode.train_step is not None:
            step = episode.train_step
        else:
            version = episode.global_steps or 0
            step = version if validation else version + 1
        prefix = "val_step" if validation else "step"
        item = trajectories.from_messages(
            episode.env, episode.task_id, episode.messages, episode.env_reward, episode.success,
            env=episode.env, split=episode.split, task_id=episode.task_id, step=step, actions=episode.actions,
            training_reward=training_reward, turns=episode.turns, done=episode.done, score=episode.score,
            invalid_actions=episode.invalid_actions, format_errors=episode.format_errors,
            env_seconds=round(episode.env_seconds, 4), gen_seconds=round(episode.gen_seconds, 4),
            **({"sample": episode.sample} if episode.sample is not None else {}))
        _append_line(self.rollout_dir / f"{prefix}_{step}.jsonl", json.dumps(item, ensure_ascii=False))


def _append_line(path: Path, line: str) -> None:
    """Append one line; several rollout workers (processes) write the same file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.write(line + "\n")
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
