"""The one episode driver.

Every caller that plays whole episodes goes through :func:`run_episode`: ``agentenv play``,
AgentEval (``agentenv-eval``), expert trajectories and the verl agent loop of training. A
:class:`~agentenv.episodes.Policy` decides each turn (a scripted policy asks the server; an LLM
policy reads the action out of its reply with the environment's own parser,
:func:`agentenv.actions.parse_reply`); the driver opens the session, steps, enforces the turn
limit, records each turn in the one record of an episode (:class:`~agentenv.episodes.Episode`)
and closes the session whatever happens.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Sequence

from agentenv.client import EnvPool
from agentenv.episodes import Decision, Episode, Policy, Turn
from agentenv.errors import AgentEnvError, NotSupported, ServerUnavailable, SessionNotFound

__all__ = ["Episode", "Turn", "run_episode", "run_episodes", "server_failed", "summarize", "summarize_outcomes"]

log = logging.getLogger(__name__)


def server_failed(exc: BaseException) -> bool:
    """Did the environment's side fail (not the policy)? Such an episode is rerun, never scored.

    No server answered, a 5xx (the environment raised or timed out, the server broke), or the
    session vanished (a restarted server forgot it). A 501 (no scripted policy) is permanent.
    """
    if isinstance(exc, (ServerUnavailable, SessionNotFound)):
        return True
    return isinstance(exc, AgentEnvError) and exc.status >= 500 and not isinstance(exc, NotSupported)


def _decision(value: str | Decision) -> Decision:
    return value if isinstance(value, Decision) else Decision(str(value))


async def run_episode(pool: EnvPool, env: str, task_id: int, policy: Policy, *, split: str = "test",
                      seed: int | None = None, max_turns: int | None = None, retries: int = 0,
                      retry_backoff: float = 0.5) -> Episode:
    """One episode from create to close (closed whatever happens); the policy's ``begin`` and ``end``
    hooks bracket each attempt. An attempt whose server failed (:func:`server_failed`) is rerun from
    the start up to ``retries`` times."""
    for attempt in range(retries + 1):
        try:
            return await _attempt(pool, env, task_id, policy, split, seed, max_turns)
        except Exception as e:
            if attempt == retries or not server_failed(e):
                raise
            log.warning("%s task %d: its server failed (%s); replaying the episode from the start (%d of %d)",
                        env, task_id, e, attempt + 1, retries)
            await asyncio.sleep(retry_backoff * 2**attempt)
    raise AssertionError("unreachable")


async def _attempt(pool: EnvPool, env: str, task_id: int, policy: Policy, split: str, seed: int | None,
                   max_turns: int | None) -> Episode:
    t0 = time.perf_counter()
    async with pool.session(task_id, split, seed) as sess:
        ep = Episode(env=env, task_id=task_id, split=split, instruction=sess.observation)
        if "agentgym_index" in sess.info:  # an AgentGym server's task: its index upstream (the item id's number)
            ep.meta["agentgym_index"] = sess.info["agentgym_index"]
        ep.env_seconds += time.perf_counter() - t0
        error: BaseException | None = None
        try:
            await policy.begin(sess, ep)
            obs = sess.observation
            while max_turns is None or ep.num_turns < max_turns:
                decision = _decision(await policy.act(sess, obs))
                if decision.stop:
                    ep.stopped = True
                    break
                t0 = time.perf_counter()
                step = await sess.step(decision.action)
                ep.env_seconds += time.perf_counter() - t0
                obs = step.observation
                ep.turns.append(Turn(decision.action, obs, step.reward, step.done, step.valid, decision.reply,
                                     decision.thought, decision.well_formed))
                ep.reward += step.reward
                ep.success, ep.score = step.success, step.score
                if "agentgym_reward" in step.info:  # the reward AgentGym's own client reports (its evaluator's)
                    ep.meta["agentgym_reward"] = step.info["agentgym_reward"]
                if step.done:
                    ep.done = True
                    ep.truncated = bool(step.info.get("truncated"))
                    break
            else:
                ep.truncated = True
        except BaseException as e:
            error = e
            raise
        finally:
            await policy.end(sess, ep, error)
        return ep


async def run_episodes(pool: EnvPool, env: str, task_ids: Sequence[int], policy: Policy, *, split: str = "test",
                       concurrency: int = 8, seed: int | None = None, max_turns: int | None = None,
                       retries: int = 2, progress: bool = True, retry_backoff: float = 0.5) -> list[Episode]:
    """Episodes for ``task_ids`` in order, ``concurrency`` at a time (see :func:`run_episode`)."""
    from tqdm.auto import tqdm

    sem = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(task_ids), desc=f"{env} {getattr(policy, 'name', 'policy')}", disable=not progress,
               leave=False)

    async def one(tid: int) -> Episode:
        async with sem:
            ep = await run_episode(pool, env, tid, policy, split=split, seed=seed, max_turns=max_turns,
                                   retries=retries, retry_backoff=retry_backoff)
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
