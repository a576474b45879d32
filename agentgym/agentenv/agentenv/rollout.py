"""Running whole episodes of a policy against servers, and summarising them."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from agentenv.client import EnvPool
from agentenv.errors import AgentEnvError, NotSupported, ServerUnavailable, SessionNotFound
from agentenv.policies import Policy


@dataclass
class Turn:
    action: str
    observation: str
    reward: float
    done: bool
    valid: bool


@dataclass
class Episode:
    env: str
    task_id: int
    split: str
    instruction: str  # the first observation
    turns: list[Turn] = field(default_factory=list)
    reward: float = 0.0
    success: bool = False
    score: float = 0.0
    done: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # what the policy recorded (e.g. an LLM's raw replies)

    @property
    def num_turns(self) -> int:
        return len(self.turns)

    @property
    def invalid_actions(self) -> int:
        return sum(not t.valid for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def server_failed(exc: BaseException) -> bool:
    """Did the environment's side fail (not the policy)? Such an episode is rerun, never scored.

    No server answered, a 5xx (the environment raised, the server broke), or the session vanished
    (a restarted server forgot it). A 501 (no scripted policy) is permanent, so not retried.
    """
    if isinstance(exc, (ServerUnavailable, SessionNotFound)):
        return True
    return isinstance(exc, AgentEnvError) and exc.status >= 500 and not isinstance(exc, NotSupported)


async def run_episode(pool: EnvPool, env: str, task_id: int, policy: Policy, *, split: str = "test",
                      seed: int | None = None, max_turns: int | None = None) -> Episode:
    """One episode from create to close (closed whatever happens); the policy's ``begin``
    and ``end`` hooks bracket it."""
    async with pool.session(task_id, split, seed) as sess:
        ep = Episode(env=env, task_id=task_id, split=split, instruction=sess.observation)
        error: BaseException | None = None
        try:
            await policy.begin(sess, ep)
            obs = sess.observation
            while max_turns is None or ep.num_turns < max_turns:
                action = await policy.act(sess, obs)
                step = await sess.step(action)
                obs = step.observation
                ep.turns.append(Turn(action, obs, step.reward, step.done, step.valid))
                ep.reward += step.reward
                ep.success, ep.score = step.success, step.score
                if step.done:
                    ep.done = True
                    break
        except BaseException as e:
            error = e
            raise
        finally:
            await policy.end(sess, ep, error)
        return ep


async def run_episodes(pool: EnvPool, env: str, task_ids: Sequence[int], policy: Policy, *, split: str = "test",
                       concurrency: int = 8, seed: int | None = None, max_turns: int | None = None,
                       retries: int = 2, progress: bool = True, retry_backoff: float = 0.5) -> list[Episode]:
    """Episodes for ``task_ids`` in order; an episode whose server failed (:func:`server_failed`)
    is rerun up to ``retries`` times, not counted as a policy failure."""
    from tqdm.auto import tqdm

    sem = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(task_ids), desc=f"{env} {getattr(policy, 'name', 'policy')}", disable=not progress,
               leave=False)

    async def one(tid: int) -> Episode:
        async with sem:
            for attempt in range(retries + 1):
                try:
                    ep = await run_episode(pool, env, tid, policy, split=split, seed=seed, max_turns=max_turns)
                    break
                except Exception as e:
                    if attempt == retries or not server_failed(e):
                        raise
                    await asyncio.sleep(retry_backoff * 2**attempt)
            bar.update(1)
            return ep

    try:
        return list(await asyncio.gather(*(one(t) for t in task_ids)))
    finally:
        bar.close()


def summarize_outcomes(outcomes: Sequence[tuple[bool, float, int, int]]) -> dict[str, float | int]:
    """Success rate, average reward and turns, invalid-action rate of episodes given as
    ``(success, reward, turns, invalid_actions)``."""
    n = len(outcomes)

    def mean(xs: Sequence[float]) -> float:
        return round(sum(xs) / n, 4) if n else math.nan

    turns = sum(o[2] for o in outcomes)
    return {
        "episodes": n,
        "success_rate": mean([float(o[0]) for o in outcomes]),
        "avg_reward": mean([o[1] for o in outcomes]),
        "avg_turns": mean([float(o[2]) for o in outcomes]),
        "invalid_rate": round(sum(o[3] for o in outcomes) / max(1, turns), 4),
    }


def summarize(episodes: Sequence[Episode]) -> dict[str, float | int]:
    return summarize_outcomes([(e.success, e.reward, e.num_turns, e.invalid_actions) for e in episodes])
