"""An original AgentGym server driven like a server of this project (URL ``agentgym+http://HOST:PORT[/prefix]#NAME``).

Clients, evaluation and training of this project then run on upstream servers and their full data:
:func:`agentenv.client.client_for` picks :class:`AgentGymClient` for such a URL (the scheme is read
by :mod:`agentenv.addresses`), and the environment's
:class:`~agentenv.interop.agentgym_routes.AgentGymRoutes` say how its server speaks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from agentenv import profiles, registry
from agentenv.addresses import AGENTGYM_SCHEME, is_agentgym_url, split_url
from agentenv.errors import (
    AgentEnvError,
    EnvironmentCrashed,
    EpisodeDone,
    NotSupported,
    ServerUnavailable,
    SessionNotFound,
    TaskNotFound,
)
from agentenv.interop import agentgym_items
from agentenv.interop.agentgym_routes import routes_of
from agentenv.interop.first_observations import first_observations
from agentenv.results import Created, Step

SCHEME = AGENTGYM_SCHEME

__all__ = ["SCHEME", "AgentGymClient", "is_agentgym_url", "split_url"]


class AgentGymClient:
    """Drives an original AgentGym server with the interface of :class:`agentenv.client.AsyncEnvClient`
    (what the replica pool, the episode driver, evaluation and training use).

    A session is a handle (``/create``) reset to the task's index (``/reset``). With AgentGym's published item
    lists (``items``, or ``$AGENTGYM_ITEMS``: :mod:`agentenv.interop.agentgym_items`) task ``k`` of the test split
    is AgentEval's ``k``-th item and of the train split AgentTraj's ``k``-th task; without them the splits are the
    environment's declared index ranges (``upstream_splits``), which are not AgentEval. Rewards are per step (a
    running score is turned into its increments, negative ones included); the episode's ``score`` is upstream's
    (the running score, or the rewards' sum), ``success`` that score reaching the environment's
    ``success_threshold``, and each step's info carries ``agentgym_reward``, the reward AgentGym's own client
    reports for it (what its evaluator averages over the final steps). Upstream servers have no ``valid`` flag
    (always true) and no scripted policies (501).
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 300.0,
                 items: str | Path | None = None, **_: Any) -> None:
        self.base_url, self.env = split_url(url)
        native = registry.load(self.env)
        # upstream's turn limit, instruction and rules where a profile reproduces them
        self.env_cls = profiles.resolve(native, "agentgym") if "agentgym" in native.profiles else native
        self.routes = routes_of(self.env_cls)
        root = agentgym_items.items_root(items)
        self.items = agentgym_items.load(root, self.routes.item_prefix or self.env) if root else None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout)
        self._returns: dict[str, float] = {}  # env_id -> the episode's return so far
        self._scores: dict[str, float] = {}  # env_id -> the last running score (score clients)
        self._observations: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"AgentGymClient({self.base_url!r}, env={self.env!r})"

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            resp = await self._http.request(method, path, **kwargs)
        except httpx.TransportError as e:
            raise ServerUnavailable(f"AgentGym server {self.base_url} did not answer: {type(e).__name__}: {e}") from e
        if resp.status_code >= 400:
            raise EnvironmentCrashed(f"AgentGym server {self.base_url}{path} answered {resp.status_code}: "
                                     f"{resp.text[:300]}", status=502 if resp.status_code < 500 else 500)
        body = resp.json()
        if isinstance(body, dict) and "error" in body:
            message = str(body["error"])
            if "finished" in message:
                raise EpisodeDone(message)
            if "not valid" in message or "deleted" in message:
                raise SessionNotFound(message)
            raise EnvironmentCrashed(f"AgentGym server {self.base_url}{path}: {message}")
        return body

    def _path(self, route: str) -> str:
        return self.routes.prefix.rstrip("/") + route

    async def health(self) -> dict:
        await self._call("GET", "/")
        return {"status": "ok", "env": self.env, "sessions": len(self._returns), "protocol": 1, "compat": "agentgym"}

    def indices(self, split: str) -> Sequence[int]:
        """The upstream task indices of a split, task id ``k`` being the ``k``-th."""
        if self.items is not None:
            return self.items.splits.get(split, ())
        start, stop = self.routes.upstream_splits.get(split, (0, 0))
        return range(start, max(start, stop))

    async def info(self) -> dict:
        cls = self.env_cls
        splits = {s: len(self.indices(s)) for s in ("train", "test")}
        task_set = "agentgym-items" if self.items is not None else "agentgym-index-ranges"
        return {"env": self.env, "splits": splits, "max_turns": cls.max_turns, **cls.describe(),
                "success_threshold": cls.success_threshold, "max_sessions": None, "step_timeout": None,
                "options": {"task_set": task_set}, "version": f"agentgym:{self.base_url}",
                "fingerprint": f"agentgym:{self.base_url}:{task_set}"}

    def _index(self, task_id: int, split: str) -> int:
        indices = self.indices(split)
        if not 0 <= task_id < len(indices):
            raise TaskNotFound(f"task_id {task_id} out of range for split {split!r} (0..{len(indices) - 1})")
        return indices[task_id]

    async def create(self, task_id: int, split: str = "train", seed: int | None = None):
        index = self._index(task_id, split)
        body = self.routes.create_json(index)
        created = await self._call("POST", self._path("/create"), **({"json": body} if body is not None else {}))
        handle = created.get("id", created.get("env_idx")) if isinstance(created, dict) else int(created)
        env_id = str(handle)
        try:
            return await self.reset(env_id, task_id, split, seed, index=index)
        except BaseException:
            await self.close(env_id)
            raise

    async def reset(self, env_id: str, task_id: int, split: str | None = None, seed: int | None = None, *,
                    index: int | None = None):
        index = self._index(task_id, split or "train") if index is None else index
        body = {self.routes.handle: int(env_id), self.routes.reset_key: index, **self.routes.reset_extra}
        answer = await self._call("POST", self._path("/reset"), json=body)
        if self.routes.id_family and isinstance(answer, dict):
            observation = str(answer.get("observation", ""))
            if self.routes.first_observation == "available_actions":
                observation = self.routes.listed(observation, answer.get("available_actions") or [])
            elif self.routes.first_observation == "task_description":
                observation = f"{answer.get('task_description', '')}\n{observation}"
        elif self.routes.reset_returns == "string" and isinstance(answer, str):
            observation = answer
        else:
            observation = await self._call("GET", self._path("/observation"),
                                           params={self.routes.handle: int(env_id)})
        observation = self.routes.with_rules(str(observation))  # what AgentGym's client shows first
        self._returns[env_id], self._scores[env_id] = 0.0, 0.0
        self._observations[env_id] = str(observation)
        return Created(env_id, str(observation), {"agentgym_index": index})

    async def step(self, env_id: str, action: str):
        body = {self.routes.handle: int(env_id), "action": self.routes.client_action(action)}
        answer = await self._call("POST", self._path("/step"), json=body)
        observation = str(answer.get(self.routes.step_observation, answer.get("observation", "")))
        if self.routes.score_scale:
            upstream = float(answer.get("score", 0.0)) / self.routes.score_scale
        else:
            upstream = float(answer.get("reward", 0.0))
        if self.routes.score_scale or self.routes.running_reward:  # a running score: this step's change
            reward, self._scores[env_id] = upstream - self._scores.get(env_id, 0.0), upstream
        else:
            reward = upstream
        self._returns[env_id] = self._returns.get(env_id, 0.0) + reward  # = the running score for those
        done = bool(answer.get(self.routes.step_done, False))
        success = done and self._returns[env_id] >= self.env_cls.success_threshold
        self._observations[env_id] = observation
        return Step(observation, reward, done, {"success": success, "score": self._returns[env_id], "valid": True,
                                                "agentgym_reward": upstream})

    async def step_batch(self, steps: list[tuple[str, str]]) -> list:
        out: list = []
        for env_id, action in steps:
            try:
                out.append(await self.step(env_id, action))
            except AgentEnvError as e:
                out.append(e)
        return out

    async def observation(self, env_id: str) -> str:
        return self._observations.get(env_id, "")

    async def available_actions(self, env_id: str) -> list[str]:
        try:
            got = await self._call("GET", self._path("/available_actions"), params={self.routes.handle: int(env_id)})
        except AgentEnvError:
            return []
        return [str(a) for a in got] if isinstance(got, list) else []

    async def suggest(self, env_id: str, policy: str = "expert"):
        raise NotSupported(f"an AgentGym server has no {policy} policy")

    async def policy_action(self, env_id: str, policy: str = "expert") -> str:
        raise NotSupported(f"an AgentGym server has no {policy} policy")

    async def tasks(self, split: str = "train", offset: int = 0, limit: int = 100) -> list[tuple[int, str]]:
        """First observations, by opening one handle and resetting it task after task."""
        stop = min(len(self.indices(split)), offset + limit)
        return await first_observations(self, split, range(offset, stop))

    async def close(self, env_id: str) -> None:
        self._returns.pop(env_id, None)
        self._scores.pop(env_id, None)
        self._observations.pop(env_id, None)
        if self.routes.has_close:
            try:
                await self._call("POST", self._path("/close"), json={self.routes.handle: int(env_id)})
            except AgentEnvError:
                pass

    async def aclose(self) -> None:
        await asyncio.shield(self._http.aclose())
