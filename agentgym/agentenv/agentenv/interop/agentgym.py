"""AgentGym's own HTTP routes, both ways.

AgentGym gives every environment its own FastAPI server. They share one life cycle (``POST
/create`` -> a handle, ``POST /reset`` with the handle and a task index, ``POST /step`` with the
handle and the action) but differ in details: the handle's name (``id`` or ``env_idx``), the task
index's name (``data_idx``, ``game``, ``seed``, ``session_id``, ``item_id``, ``id``), a URL prefix
(``/maze``), what ``/create`` and ``/reset`` return, whether the observation key of a step is
``observation`` or ``state``, and whether the reward a client reads is ``reward`` or a ``score``.
An environment states its differences once, as ``agentgym = AgentGymRoutes(...)`` on its class;
from that this module

- **serves** AgentGym's routes for the environment (``agentenv serve NAME --compat agentgym``), so
  AgentGym's client classes and its evaluation drive this project's environments unchanged;
- **drives** an original AgentGym server (:class:`AgentGymClient`, picked by the URL scheme
  ``agentgym+http://HOST:PORT[/prefix]#NAME``), so clients, evaluation and training of this project
  run on upstream servers and their full data.

AgentGym servers report errors as HTTP 200 with ``{"error": message}`` (the ``id`` family) or as
HTTP 500 (the ``env_idx`` family); this module answers the same way when serving, and turns both
into the project's exceptions when driving.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agentenv.client import Created, Step
from agentenv.env import Environment
from agentenv.errors import AgentEnvError, EnvironmentCrashed, EpisodeDone, NotSupported, SessionNotFound, TaskNotFound
from agentenv.protocol import CreateRequest, ResetRequest, StepRequest

SCHEME = "agentgym+"


@dataclass(frozen=True)
class AgentGymRoutes:
    """How AgentGym's server of one environment speaks (declared on the environment class)."""

    #: URL prefix of the routes (LMRL-Gym's server serves maze under "/maze", wordle under "/wordle")
    prefix: str = ""
    #: the handle's name in bodies and queries: "id" (its /create returns {"id": n}) or "env_idx"
    #: (its /create returns a bare int)
    handle: Literal["id", "env_idx"] = "id"
    #: the name of the task index in /reset's body
    reset_key: str = "data_idx"
    #: other fields AgentGym's client sends with /reset (e.g. {"world_type": "Text"})
    reset_extra: Mapping[str, Any] = field(default_factory=dict)
    #: the body AgentGym's client sends with /create (None: no body)
    create_body: Mapping[str, Any] | None = None
    #: the name of the task index in /create's body, for servers that create a session for a task
    #: (AgentGym's tool servers: {"id": N}); /reset then names it again
    create_key: str | None = None
    #: what /reset returns in the env_idx family: "pair" ([observation, null]) or "string"
    reset_returns: Literal["object", "pair", "string"] = "object"
    #: the observation's key in /step's answer
    step_observation: Literal["observation", "state"] = "observation"
    #: the scale of the "score" AgentGym's client reads as the reward (100 for 0-100 scores); None:
    #: its client reads "reward"
    score_scale: float | None = None
    #: the "reward" of the server's /step is a running score (the best so far, repeated every step, as
    #: AgentGym's sheet server sends it), not this step's increment
    running_reward: bool = False
    #: how AgentGym's client composes the first observation it shows: "observation" (as reset returns
    #: it), "available_actions" (followed by "AVAILABLE ACTIONS: a,b,..."), "task_description" (after it)
    first_observation: Literal["observation", "available_actions", "task_description"] = "observation"
    #: the order in which this project's splits fill AgentGym's one index space when serving
    index_order: tuple[str, ...] = ("train", "test")
    #: the index ranges of the splits on an original AgentGym server (when driving one)
    upstream_splits: Mapping[str, tuple[int, int]] = field(default_factory=lambda: {"train": (0, 0), "test": (0, 0)})
    #: the original server has POST /close
    has_close: bool = True
    #: extra GET routes: path -> name of an environment method answering it (e.g. {"/filtered_vocab": ...})
    extras: Mapping[str, str] = field(default_factory=dict)
    #: what GET / answers
    hello: str = "This is an agentenv environment in AgentGym's protocol."
    #: server options ``--compat agentgym`` applies unless given (e.g. AgentGym's own action set)
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def id_family(self) -> bool:
        return self.handle == "id"


def routes_of(env_cls: type[Environment]) -> AgentGymRoutes:
    routes = getattr(env_cls, "agentgym", None)
    if not isinstance(routes, AgentGymRoutes):
        raise NotSupported(f"environment {env_cls.name!r} declares no AgentGym routes (agentgym = AgentGymRoutes(...))")
    return routes


# -- serving AgentGym's routes -------------------------------------------------------------------------


def create_agentgym_app(env_cls: type[Environment], config: Any = None) -> FastAPI:
    """An app that answers AgentGym's routes for ``env_cls`` on top of the protocol v1 runtime (the
    same sessions, limits, TTL, shared data and child-process care)."""
    from agentenv.server import EnvService, ServerConfig, _Guard, service_lifespan

    routes = routes_of(env_cls)
    config = config or ServerConfig()
    config = dataclasses.replace(config, options={**routes.options, **config.options})
    service = EnvService(env_cls, config)
    app = FastAPI(title=f"agentenv {env_cls.name} (AgentGym routes)", lifespan=service_lifespan(service))
    app.state.service = service
    handles: dict[int, str] = {}  # AgentGym handle -> session id
    scores: dict[int, float] = {}  # running reward per handle (what a "score" client reads)
    indices: dict[int, int] = {}  # the task index each handle plays (a /reset without one replays it)
    counter = itertools.count()
    p, key = routes.prefix.rstrip("/"), routes.handle

    def index_to_task(index: int) -> tuple[str, int]:
        rest = int(index)
        for split in routes.index_order:
            n = service.task_counts.get(split, 0)
            if 0 <= rest < n:
                return split, rest
            rest -= n
        total = sum(service.task_counts.get(s, 0) for s in routes.index_order)
        raise TaskNotFound(f"The game {index} is not valid (0..{total - 1}).")

    def session_of(handle: Any) -> str:
        try:
            return handles[int(handle)]
        except (KeyError, TypeError, ValueError):
            raise SessionNotFound(f"The id {handle} is not valid.") from None

    def fail(err: AgentEnvError) -> JSONResponse:
        if routes.id_family:  # AgentGym's id-family servers answer errors with 200 and an "error" field
            return JSONResponse({"error": err.message})
        return JSONResponse(err.to_body(), status_code=err.status)

    async def state(handle: int, observation: str, reward: float, done: bool, extra: Mapping[str, Any]) -> dict:
        scores[handle] = scores.get(handle, 0.0) + reward
        env_id = handles[handle]
        actions = await service.available_actions(env_id) if not done else []
        return {"id": handle, "observation": observation, "reward": reward,
                "score": round(scores[handle] * (routes.score_scale or 1.0), 9), "done": done, "deleted": False,
                "available_actions": actions, **extra}

    async def body_of(request: Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError:
            body = {}
        return body if isinstance(body, dict) else {}

    async def hello() -> str:
        return routes.hello

    for path in dict.fromkeys(["/", p + "/" if p else "/"]):
        app.add_api_route(path, hello, methods=["GET"])

    @app.get("/health")
    async def health() -> dict:
        return {"status": "ok", "env": env_cls.name, "sessions": len(service.sessions), "protocol": 1,
                "compat": "agentgym"}

    @app.get(p + "/list_envs")
    async def list_envs() -> list[int]:
        return [h for h, env_id in handles.items() if env_id in service.sessions]

    @app.post(p + "/create")
    async def create(request: Request) -> Any:
        await service.start()
        try:  # a session at once (AgentGym's textcraft client reads the observation of /create)
            index = int((await body_of(request)).get(routes.create_key, 0) or 0) if routes.create_key else 0
            split, task_id = index_to_task(index)
            created = await service.create(CreateRequest(task_id=task_id, split=split))
        except (AgentEnvError, ValueError, TypeError) as e:
            return fail(e if isinstance(e, AgentEnvError) else AgentEnvError(str(e), status=422))
        handle = next(counter)
        if handle % 256 == 0:  # forget handles whose sessions expired (AgentGym's clients never close)
            for h in [h for h, e in handles.items() if e not in service.sessions]:
                handles.pop(h, None)
                scores.pop(h, None)
                indices.pop(h, None)
        handles[handle], scores[handle], indices[handle] = created["env_id"], 0.0, index
        if not routes.id_family:
            return handle
        return {"id": handle, "observation": created["observation"], "reward": 0.0, "done": False}

    @app.post(p + "/reset")
    async def reset(request: Request) -> Any:
        body = await body_of(request)
        try:
            handle = int(body.get(key, -1))
            env_id = session_of(handle)
            given = body.get(routes.reset_key)
            index = indices.get(handle, 0) if given is None else int(given)
            split, task_id = index_to_task(index)
            created = await service.reset(ResetRequest(env_id=env_id, task_id=task_id, split=split))
            indices[handle] = index
        except (AgentEnvError, ValueError, TypeError) as e:
            return fail(e if isinstance(e, AgentEnvError) else AgentEnvError(str(e), status=422))
        scores[handle] = 0.0
        obs = created["observation"]
        if routes.reset_returns == "pair":
            return [obs, None]
        if routes.reset_returns == "string":
            return obs
        description = ""
        if routes.first_observation == "task_description":  # its client puts the description back in front
            description = str((created.get("info") or {}).get("task_description", ""))
            if description and obs.startswith(description):
                obs = obs[len(description):].lstrip("\n")
            else:
                description = ""
        return await state(handle, obs, 0.0, False, {"task_description": description,
                                                     "task_type": f"{split}/{task_id}"})

    @app.post(p + "/step")
    async def step(request: Request) -> Any:
        body = await body_of(request)
        try:
            handle = int(body.get(key, -1))
            result = await service.step(StepRequest(env_id=session_of(handle), action=str(body.get("action", ""))))
        except EpisodeDone:  # in AgentGym's words
            return fail(EpisodeDone(f"The task with environment {body.get(key)} has finished."))
        except (AgentEnvError, ValueError, TypeError) as e:
            return fail(e if isinstance(e, AgentEnvError) else AgentEnvError(str(e), status=422))
        if not routes.id_family:
            return {routes.step_observation: result["observation"], "reward": result["reward"],
                    "done": result["done"], "info": None}
        return await state(handle, result["observation"], result["reward"], result["done"], {})

    async def read(request: Request, what: str) -> Any:
        try:
            env_id = session_of(request.query_params.get(key))
            if what == "observation":
                return await service.observation(env_id)
            if what == "available_actions":
                return await service.available_actions(env_id)
            sess = service.sessions.get(env_id)
            async with sess.lock:
                return await service.run(getattr(sess.env, what))
        except AgentEnvError as e:
            return fail(e)

    @app.get(p + "/observation")
    async def observation(request: Request) -> Any:
        return await read(request, "observation")

    for path, method in routes.extras.items():  # the environment's own extra routes come first
        async def extra(request: Request, method: str = method) -> Any:
            return await read(request, method)

        app.add_api_route(p + path, extra, methods=["GET"])

    @app.get(p + "/available_actions")
    async def available_actions(request: Request) -> Any:
        return await read(request, "available_actions")

    @app.get(p + "/detail")
    async def detail(request: Request) -> Any:
        try:
            handle = int(request.query_params.get(key, -1))
            obs = await service.observation(session_of(handle))
        except (AgentEnvError, ValueError) as e:
            return fail(e if isinstance(e, AgentEnvError) else AgentEnvError(str(e), status=422))
        sess = service.sessions.get(handles[handle])
        return {"observation": obs, "done": sess.done, "reward": scores.get(handle, 0.0), "deleted": False}

    @app.post(p + "/close")
    async def close(request: Request) -> Any:
        body = await body_of(request)
        handle = body.get(key)
        try:
            env_id = session_of(handle)
        except AgentEnvError:
            return False
        handles.pop(int(handle), None)
        scores.pop(int(handle), None)
        indices.pop(int(handle), None)
        try:
            await service.close(env_id)
        except AgentEnvError:
            return False
        return True

    return _Guard(app, config.token, config.max_body_bytes)  # type: ignore[return-value]


# -- driving an original AgentGym server ---------------------------------------------------------------


def is_agentgym_url(url: str) -> bool:
    return url.startswith(SCHEME)


def split_url(url: str) -> tuple[str, str]:
    """``agentgym+http://h:p/maze#maze`` -> (``http://h:p/maze``, ``maze``)."""
    rest = url[len(SCHEME):] if is_agentgym_url(url) else url
    base, _, env = rest.partition("#")
    if not env:
        raise ValueError(f"an AgentGym server URL names its environment after '#': {SCHEME}http://HOST:PORT#NAME, "
                         f"not {url!r}")
    return base.rstrip("/"), env


class AgentGymClient:
    """Drives an original AgentGym server with the interface of :class:`agentenv.client.AsyncEnvClient`
    (what the replica pool, the episode driver, evaluation and training use).

    A session is a handle (``/create``) reset to the task's index (``/reset``); the task's index is
    its split's start on the upstream server plus the task id. Rewards are per step (a running score
    is turned into its increments); ``success`` is the episode's return reaching the environment's
    ``success_threshold``. Upstream servers have no ``valid`` flag (always true) and no scripted
    policies (501).
    """

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 300.0, **_: Any) -> None:
        import httpx

        from agentenv import registry

        self.base_url, self.env = split_url(url)
        self.env_cls = registry.load(self.env)
        self.routes = routes_of(self.env_cls)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout)
        self._returns: dict[str, float] = {}  # env_id -> the episode's return so far
        self._scores: dict[str, float] = {}  # env_id -> the last running score (score clients)
        self._observations: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"AgentGymClient({self.base_url!r}, env={self.env!r})"

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        from agentenv.errors import ServerUnavailable

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

    async def info(self) -> dict:
        cls = self.env_cls
        splits = {s: max(0, b - a) for s, (a, b) in self.routes.upstream_splits.items()}
        return {"env": self.env, "splits": splits, "max_turns": cls.max_turns, **cls.describe(),
                "success_threshold": cls.success_threshold, "max_sessions": None, "step_timeout": None,
                "options": {}, "version": f"agentgym:{self.base_url}", "fingerprint": f"agentgym:{self.base_url}"}

    def _index(self, task_id: int, split: str) -> int:
        start, stop = self.routes.upstream_splits.get(split, (0, 0))
        if not 0 <= task_id < stop - start:
            raise TaskNotFound(f"task_id {task_id} out of range for split {split!r} (0..{stop - start - 1})")
        return start + task_id

    async def create(self, task_id: int, split: str = "train", seed: int | None = None):
        index = self._index(task_id, split)
        body = dict(self.routes.create_body) if self.routes.create_body is not None else None
        if self.routes.create_key:
            body = {**(body or {}), self.routes.create_key: index}
        created = await self._call("POST", self._path("/create"), **({"json": body} if body is not None else {}))
        handle = created["id"] if isinstance(created, dict) else int(created)
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
                observation += "\nAVAILABLE ACTIONS: " + ",".join(answer.get("available_actions") or [])
            elif self.routes.first_observation == "task_description":
                observation = f"{answer.get('task_description', '')}\n{observation}"
        elif self.routes.reset_returns == "string" and isinstance(answer, str):
            observation = answer
        else:
            observation = await self._call("GET", self._path("/observation"),
                                           params={self.routes.handle: int(env_id)})
        self._returns[env_id], self._scores[env_id] = 0.0, 0.0
        self._observations[env_id] = str(observation)
        return Created(env_id, str(observation), {"agentgym_index": index})

    async def step(self, env_id: str, action: str):
        answer = await self._call("POST", self._path("/step"), json={self.routes.handle: int(env_id), "action": action})
        observation = str(answer.get(self.routes.step_observation, answer.get("observation", "")))
        if self.routes.score_scale:
            score = float(answer.get("score", 0.0)) / self.routes.score_scale
            reward, self._scores[env_id] = score - self._scores.get(env_id, 0.0), score
        elif self.routes.running_reward:
            score = float(answer.get("reward", 0.0))
            reward, self._scores[env_id] = score - self._scores.get(env_id, 0.0), score
        else:
            reward = float(answer.get("reward", 0.0))
        reward = max(0.0, reward)  # upstream penalties (e.g. -1 at a timeout) are no training reward here
        self._returns[env_id] = self._returns.get(env_id, 0.0) + reward
        done = bool(answer.get("done", False))
        success = done and self._returns[env_id] >= self.env_cls.success_threshold
        self._observations[env_id] = observation
        return Step(observation, reward, done, {"success": success, "score": self._returns[env_id], "valid": True})

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
        start, stop = self.routes.upstream_splits.get(split, (0, 0))
        ids = range(offset, min(stop - start, offset + limit))
        out: list[tuple[int, str]] = []
        if not ids:
            return out
        first = await self.create(ids[0], split)
        try:
            out.append((ids[0], first.observation))
            for task_id in ids[1:]:
                out.append((task_id, (await self.reset(first.env_id, task_id, split)).observation))
        finally:
            await self.close(first.env_id)
        return out

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
