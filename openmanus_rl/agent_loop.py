"""The OpenManus agent loop: verl rollouts that play whole episodes on environment servers.

Selected per dataset row by ``agent_name == "openmanus"``. For a row it plays one episode
through the project's one episode driver (``agentenv.rollout.run_episode``) on one of the
environment's server replicas (task and split from ``extra_info``): model turns and environment
turns alternate until the episode ends, a turn limit, or the response budget. Replies are read
with the action format the server declares (``openmanus_rl.prompts.read_reply``). The turn
limit is ``max_turns``: one limit or a horizon curriculum over training steps
(``openmanus_rl.horizon``), capped by the environment's own; it and the reply budget
``max_new_tokens`` may each be given per environment (``openmanus_rl.per_env``).
Token-in/token-out: the model's tokens are kept as generated (mask 1,
with their log-probs) and only the new observation is tokenized each turn (mask 0).
The episode always ends on a model token, and that is where verl puts the reward (with
``algorithm.reward_per_turn``, PPO's default, the trainer then moves each turn's own reward onto that
turn: ``openmanus_rl.rewards``).

verl's rollout workers import the loop through the agent-loop YAML
(``actor_rollout_ref.rollout.agent.agent_loop_config_path``: ``- name: openmanus``,
``_target_: openmanus_rl.agent_loop.OpenManusAgentLoop``). Its settings come from the
YAML file named by ``$OPENMANUS_AGENT_CONFIG`` (the launcher writes it; Ray workers
inherit the variable, or get it from the job's runtime environment on a cluster someone else
started), e.g.::

    env_servers: {maze: [http://127.0.0.1:40001]}
    max_turns: 30                 # or [[1, 5], [20, 10]]: a limit per training step
    rollout_dir: /runs/maze/rollouts

(Keyword arguments take precedence: the YAML entry may carry them too, but verl's
``@register`` replaces that entry once the module is imported, so the file is the
reliable way.)
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from agentenv import actions
from agentenv.client import EnvPool, EnvSession
from agentenv.policies import Decision, Policy
from agentenv.protocol import InfoResponse
from agentenv.rollout import Episode, run_episode
from openmanus_rl import demos, per_env, prompts, rewards, trajectories
from openmanus_rl.agent_registration import AGENT_NAME, CONFIG_VAR, SETTINGS_VAR, decode_settings
from openmanus_rl.horizon import TurnSchedule

log = logging.getLogger(__name__)

TRAIN_ON = ("reply", "action")  # agent.train_on: which of a reply's tokens the loss reaches

# Pools live per process and event loop: verl builds a new agent loop object per sample.
_POOLS: dict[tuple[int, str, tuple[str, ...]], EnvPool] = {}
# Demonstrations (agent.demos) per process: read once per environment and setting, and which group has had its replay
_DEMOS: dict[tuple[str, str], dict[int, demos.Demo]] = {}
_CLAIMS: dict[int, demos.Claims] = {}


@dataclass
class _Trace:
    """The token side of one episode: what verl trains on, and what the rollout log records."""

    messages: list[dict[str, str]]
    token_ids: list[int] = field(default_factory=list)
    prompt_len: int = 0
    mask: list[int] = field(default_factory=list)
    logprobs: list[float] | None = None
    weights: dict[str, int | None] = field(default_factory=dict)  # weight versions that generated it
    gen_seconds: float = 0.0
    cut_by_budget: bool = False  # the response budget ended the episode
    # per model turn: the response positions of its tokens and a digest of the observation it answered
    # (the state the turn acted in), so a step-level estimator can compare turns taken in the same state
    turn_spans: list[list[int]] = field(default_factory=list)
    turn_states: list[str] = field(default_factory=list)
    demo_turns: int = 0  # replies replayed from a demonstration (agent.demos), not sampled


def turn_seed(sample_seed: int | None, turn: int) -> int | None:
    """Each turn's sampling seed, from the row's ``extra_info.sample_seed``: the episode repeats exactly
    whatever else shares the batch (AgentEvol's exploration); None: unseeded."""
    return None if sample_seed is None else (sample_seed * 1_000_003 + turn) % (1 << 62)


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
    """The launcher's settings: ``$OPENMANUS_AGENT_SETTINGS`` (the settings themselves, which reach a worker
    on any node through the job's Ray runtime environment), else the YAML file ``$OPENMANUS_AGENT_CONFIG``
    names (a worker that shares the launcher's filesystem); neither: none."""
    given = os.environ.get(SETTINGS_VAR)
    if given:
        if given not in _SETTINGS:
            _SETTINGS[given] = decode_settings(given)
        return _SETTINGS[given]
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
    def __init__(self, *args: Any, env_servers: dict[str, list[str]] | None = None,
                 max_turns: int | list | dict | None = None, max_new_tokens: int | dict | None = None,
                 rollout_dir: str | None = None, token: str | None = None, episode_retries: int | None = None,
                 max_observation_chars: int | None = None, train_on: str | None = None,
                 demos: str | dict | None = None, demos_per_group: int | None = None, **kwargs: Any) -> None:
        kwargs.pop("name", None)  # the YAML entry's own name
        kwargs.pop("tools", None)  # verl passes its tool list to every loop; episodes have no tools
        super().__init__(*args, **kwargs)
        given = {"env_servers": env_servers, "max_turns": max_turns, "max_new_tokens": max_new_tokens,
                 "rollout_dir": rollout_dir, "token": token,
                 "episode_retries": episode_retries, "max_observation_chars": max_observation_chars,
                 "train_on": train_on, "demos": demos, "demos_per_group": demos_per_group}
        settings = {**_settings_file(), **{k: v for k, v in given.items() if v is not None}}
        self.env_servers = {k: list(v) for k, v in _plain(settings.get("env_servers") or {}).items()}
        # one value for all environments or a mapping per environment (openmanus_rl.per_env)
        self.max_turns = _plain(settings.get("max_turns"))
        self.rollout_dir = Path(settings["rollout_dir"]) if settings.get("rollout_dir") else None
        self.token = settings.get("token") or os.environ.get("AGENTENV_TOKEN")
        self.episode_retries = int(settings.get("episode_retries", 2))
        self.max_observation_chars = int(settings.get("max_observation_chars", prompts.MAX_OBSERVATION_CHARS))
        self.max_new_tokens = _plain(settings.get("max_new_tokens", 512))  # per model turn
        self.train_on = str(settings.get("train_on", "reply"))
        if self.train_on not in TRAIN_ON:
            raise ValueError(f"agent.train_on must be one of {', '.join(TRAIN_ON)}, not {self.train_on!r}")
        self.demos = _plain(settings.get("demos"))  # openmanus_rl.demos: a directory or {env: file}
        self.demos_per_group = int(settings.get("demos_per_group", 1))
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

    async def _turn_limit(self, pool: EnvPool, env: str, train_step: int | None) -> int:
        """``env``'s schedule's limit at ``train_step`` (None: validation, the last limit), capped by the server's."""
        limit = (await pool.info()).max_turns  # the server's, asked once per pool
        schedule = self.turn_schedule(env)
        return min(limit, schedule.limit(train_step)) if schedule else limit

    def turn_schedule(self, env: str) -> TurnSchedule | None:
        return TurnSchedule.parse(per_env.value_for(self.max_turns, env, "agent.max_turns"))

    def reply_budget(self, env: str) -> int:
        return int(per_env.value_for(self.max_new_tokens, env, "agent.max_new_tokens"))

    def _demo(self, env: str, task_id: int, split: str, train_step: int | None) -> demos.Demo | None:
        """The demonstration this sample replays: a training sample, the first of its group to ask, of a task
        with a recorded success (agent.demos); else None."""
        if not self.demos or split == "test" or train_step is None or self.demos_per_group < 1:
            return None
        key = (env, json.dumps(self.demos, sort_keys=True))
        if key not in _DEMOS:  # looked up once per process: samples are a hot path
            path = demos.file_for(self.demos, env)
            _DEMOS[key] = demos.load(path, env) if path is not None else {}
            log.info("agent.demos: %d recorded successes of %s from %s", len(_DEMOS[key]), env, path)
        demo = _DEMOS[key].get(task_id)
        claims = _CLAIMS.setdefault(self.demos_per_group, demos.Claims(self.demos_per_group))
        return demo if demo is not None and claims.claim(train_step, env, task_id) else None

    # -- the loop --------------------------------------------------------------------------

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra = _plain(kwargs.get("extra_info") or {})
        env, split, task_id = extra["env_name"], extra.get("split", "train"), int(extra["task_id"])
        style = rewards.style_of(_plain(kwargs.get("reward_model")))
        train_step = int(_plain(kwargs["global_steps"])) if kwargs.get("global_steps") is not None else None
        policy = _TokenPolicy(self, env, [dict(m) for m in _plain(kwargs["raw_prompt"])], sampling_params,
                              *(int(extra[k]) if extra.get(k) is not None else None for k in ("sample_seed", "sample")),
                              demo=self._demo(env, task_id, split, train_step))
        pool = self._pool(env)
        turn_limit = await self._turn_limit(pool, env, None if split == "test" else train_step)
        episode = await run_episode(pool, env, task_id, policy, split=split, max_turns=turn_limit,
                                    retries=self.episode_retries)
        trace = policy.trace
        if not trace.weights and train_step is not None:  # replayed whole: the weights training step N samples with
            trace.weights = dict.fromkeys(("global_steps", "min_global_steps", "max_global_steps"), train_step - 1)
        # why an episode ended without the task ending it: the token budget (the policy stopped; the
        # driver then marks no truncation) or a turn limit (the driver's ``truncated``)
        ending = {"cut_by_budget": trace.cut_by_budget, "cut_by_turns": episode.truncated,
                  "response_length": min(len(trace.mask), self.response_length),
                  "trained_tokens": sum(trace.mask[: self.response_length]), "turn_limit": turn_limit}
        output = AgentLoopOutput(
            prompt_ids=trace.token_ids[:trace.prompt_len],
            response_ids=trace.token_ids[trace.prompt_len:][: self.response_length],
            response_mask=trace.mask[: self.response_length],
            response_logprobs=trace.logprobs[: self.response_length] if trace.logprobs else None,
            num_turns=2 * episode.num_turns,
            metrics={"generate_sequences": trace.gen_seconds, "tool_calls": episode.env_seconds},
            extra_fields={"turn_scores": [], "tool_rewards": [], **trace.weights, **self._turns(trace, episode)},
        )
        outcome = rewards.Outcome(episode.reward, episode.success, episode.score)
        output.reward_score = rewards.shape(style, outcome)
        output.extra_fields["reward_extra_info"] = {
            "success": float(episode.success),
            "env_reward": float(episode.reward),
            "env_score": float(episode.score),
            "turns": float(episode.num_turns),
            "invalid_actions": float(episode.invalid_actions),
            "format_errors": float(episode.format_errors),
            **{k: float(v) for k, v in ending.items()},
            "env_seconds": episode.env_seconds,
            "gen_seconds": trace.gen_seconds,
            "demo": float(policy.demo is not None),  # every episode has every key (verl reads the first's)
            "demo_turns": float(trace.demo_turns),
        }
        self._log_episode(episode, policy, train_step, output.reward_score, ending)
        return output

    def _turns(self, trace: _Trace, episode: Episode) -> dict[str, list]:
        """Each turn whose tokens made it into the response (the budget may cut the last ones): its span,
        its state and the environment's reward for its action."""
        n = len(trace.turn_spans)
        rewards = ([t.reward for t in episode.turns] + [0.0] * n)[:n]  # 0 for a reply left unsent
        kept = [(span, state, reward) for span, state, reward in zip(trace.turn_spans, trace.turn_states, rewards,
                                                                     strict=True)
                if span[0] - trace.prompt_len < self.response_length]
        return {"turn_spans": [[a - trace.prompt_len, min(b - trace.prompt_len, self.response_length)]
                               for (a, b), _, _ in kept],
                "turn_states": [state for _, state, _ in kept],
                "turn_rewards": [float(reward) for _, _, reward in kept]}

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

    # -- the rollout log -------------------------------------------------------------------

    def _log_episode(self, episode: Episode, policy: _TokenPolicy, train_step: int | None,
                     training_reward: float, ending: dict[str, Any]) -> None:
        """Append the episode to ``step_<N>.jsonl`` or, for test-split rows, ``val_step_<N>.jsonl``.

        N is the trainer's step (verl passes it with the row); without it, the weight version
        tells: training step N samples with the weights of version N-1, validation after step N
        with version N."""
        if self.rollout_dir is None:
            return
        validation = episode.split == "test"
        if train_step is not None:
            step = train_step
        else:
            version = policy.trace.weights.get("global_steps") or 0
            step = version if validation else version + 1
        prefix = "val_step" if validation else "step"
        item = trajectories.from_messages(
            episode.env, episode.task_id, policy.trace.messages, episode.reward, episode.success,
            env=episode.env, split=episode.split, task_id=episode.task_id, step=step,
            actions=[t.action for t in episode.turns], training_reward=training_reward, turns=episode.num_turns,
            done=episode.done, score=episode.score, invalid_actions=episode.invalid_actions,
            format_errors=episode.format_errors, **ending, env_seconds=round(episode.env_seconds, 4),
            gen_seconds=round(policy.trace.gen_seconds, 4),
            **({"sample": policy.sample} if policy.sample is not None else {}),
            **({"demo": True, "demo_turns": policy.trace.demo_turns} if policy.demo is not None else {}))
        _append_line(self.rollout_dir / f"{prefix}_{step}.jsonl", json.dumps(item, ensure_ascii=False))


class _TokenPolicy(Policy):
    """The model's side of one episode, token-in/token-out: the episode driver asks it for each turn.

    Its model tokens are kept as generated (mask 1, with their log-probs); each new observation is
    tokenized alone (mask 0); the reply is read with the environment's own action format (a reply
    cut by the budget is never well-formed). It stops the episode when the response budget has no
    room left for another reply. ``begin`` starts the trace afresh, so a replayed episode (its
    server failed) leaves nothing of the failed attempt behind.
    """

    name = AGENT_NAME

    def __init__(self, loop: OpenManusAgentLoop, env: str, messages: list[dict[str, str]],
                 sampling_params: dict[str, Any], sample_seed: int | None = None, sample: int | None = None,
                 demo: demos.Demo | None = None) -> None:
        self.loop, self.prompt, self.sampling_params = loop, messages, sampling_params
        self.demo = demo  # replies to replay while the episode follows the recording (openmanus_rl.demos)
        self.reply_budget = loop.reply_budget(env)
        self.sample_seed, self.sample = sample_seed, sample
        self.trace = _Trace(list(messages))
        self.info: InfoResponse = prompts.as_info("unknown")
        self.request_id = uuid4().hex  # one per episode: the rollout server keeps its turns together

    async def begin(self, session: EnvSession, episode: Episode) -> None:
        self.info = session.env_info or prompts.as_info(episode.env)
        self.request_id = uuid4().hex
        trace = self.trace = _Trace(list(self.prompt))
        trace.token_ids = await self.loop.ct_build_initial_tokens(self.prompt)
        trace.prompt_len = len(trace.token_ids)
        trace.logprobs = [] if self.sampling_params.get("logprobs") else None
        if session.observation not in self.prompt[-1]["content"]:  # the dataset was built from another task set
            log.warning("first observation of %s task %d differs from the dataset prompt (rebuild data/%s)",
                        episode.env, episode.task_id, episode.env)

    async def act(self, session: EnvSession, observation: str) -> Decision:
        loop, trace = self.loop, self.trace
        turn = sum(m["role"] == "assistant" for m in trace.messages)
        if turn:
            # the new observation, tokenized alone (mask 0); stop if no room is left for a reply to it
            ids, mask, lp = await loop._append_observation(trace.token_ids, trace.mask, trace.logprobs,
                                                           trace.messages, observation)
            if len(mask) >= loop.response_length - 1:
                trace.cut_by_budget = True
                return Decision("", stop=True)
            trace.token_ids, trace.mask, trace.logprobs = ids, mask, lp
            trace.messages.append(prompts.observation_message(observation, loop.max_observation_chars))
        budget = loop.response_length - len(trace.mask)
        if budget <= 0:
            trace.cut_by_budget = True
            return Decision("", stop=True)
        max_tokens = min(budget, self.reply_budget)
        recorded = self.demo.reply(turn, trace.messages[-1]["content"]) if self.demo is not None else None
        if recorded is not None and trace.demo_turns == turn:  # still on the recording: replay its reply
            generated = [*loop.tokenizer.encode(recorded, add_special_tokens=False), loop.eos_id][:max_tokens]
            lp = [0.0] * len(generated)  # not the model's sample: PPO recomputes old log-probs (see demos)
            trace.demo_turns += 1
        else:
            generated, lp = await self._sample(trace, max_tokens, turn)
        if lp is None:
            trace.logprobs = None  # the backend gave none: keep the episode consistent without them
        merged, trace.mask, new_lp = await loop.ct_merge_assistant_token(
            trace.token_ids, generated, trace.mask, trace.logprobs,
            assistant_logprobs=lp if trace.logprobs is not None else None)
        trace.token_ids = merged.token_ids
        trace.logprobs = new_lp if trace.logprobs is not None else None
        reply = loop.tokenizer.decode(generated, skip_special_tokens=True)
        trace.turn_spans.append([len(trace.token_ids) - len(generated), len(trace.token_ids)])
        trace.turn_states.append(hashlib.sha1(observation.encode()).hexdigest()[:16])
        if loop.train_on == "action":
            _train_on_action(trace.mask, generated, reply, loop.tokenizer)
        trace.messages.append({"role": "assistant", "content": reply})
        cut = not generated or generated[-1] != loop.eos_id
        return prompts.read_reply(self.info, reply, cut=cut)

    async def _sample(self, trace: _Trace, max_tokens: int, turn: int) -> tuple[list[int], list[float] | None]:
        """The model's reply to the chat so far: its tokens, and their log-probs where asked for and given."""
        loop = self.loop
        t0 = time.perf_counter()
        params = {**self.sampling_params, "max_tokens": max_tokens}
        if self.sample_seed is not None:
            params[loop.seed_key] = turn_seed(self.sample_seed, turn)
        out = await loop.server_manager.generate(request_id=self.request_id, prompt_ids=trace.token_ids,
                                                 sampling_params=params)
        trace.gen_seconds += time.perf_counter() - t0
        versions = _weight_versions(out.extra_fields)
        trace.weights.setdefault("min_global_steps", versions["min_global_steps"])
        trace.weights["max_global_steps"] = versions["max_global_steps"]
        trace.weights["global_steps"] = versions["global_steps"]
        generated = list(out.token_ids[:max_tokens])
        lp = list(out.log_probs[: len(generated)]) if (trace.logprobs is not None and out.log_probs) else None
        return generated, lp


def _train_on_action(mask: list[int], generated: list[int], reply: str, tokenizer: Any) -> None:
    """Give the reply's thought mask 0, so the loss reaches only its action: the tokens from the reply's
    last "Action:" line on (with its end-of-turn token). A reply with no action line stays whole in the
    loss (a malformed reply is the model's to unlearn). ``mask`` ends with ``generated``'s mask 1s;
    ``reply`` is ``generated`` decoded without special tokens (the turn has decoded it already)."""
    start = actions.action_start(reply)
    tail = len(mask) - len(generated)
    if start is None or start == 0 or tail < 0 or not all(mask[tail:]):
        return
    # the first token whose text reaches into the action line, by bisection: a prefix's text only grows,
    # and decoding every prefix of a long reply would cost time quadratic in its length
    lo, hi = 0, len(generated)
    while lo < hi:
        mid = (lo + hi) // 2
        if len(tokenizer.decode(generated[: mid + 1], skip_special_tokens=True)) > start:
            hi = mid
        else:
            lo = mid + 1
    mask[tail: tail + lo] = [0] * lo


def _append_line(path: Path, line: str) -> None:
    """Append one line; several rollout workers (processes) write the same file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    view = memoryview((line + "\n").encode())
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:  # every byte is in the file before the lock goes (a buffered writer would flush after it)
            while view:
                view = view[os.write(fd, view):]
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
