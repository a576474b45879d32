"""AgentGym's routes served for an environment of this project (``agentenv serve NAME --compat agentgym``).

AgentGym's client classes and its evaluation then drive this project's environments unchanged: the
app answers each route as the environment's original AgentGym server does (its
:class:`~agentenv.interop.agentgym_routes.AgentGymRoutes`), errors included, on top of the protocol
v1 runtime (the same sessions, limits, TTL, shared data and child-process care).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agentenv import profiles
from agentenv.env import Environment
from agentenv.errors import AgentEnvError, EpisodeDone, SessionNotFound, TaskNotFound
from agentenv.interop.agentgym_routes import routes_of
from agentenv.protocol import CreateRequest, ResetRequest, StepRequest
from agentenv.server import EnvService, Guard, ServerConfig, service_lifespan

__all__ = ["create_agentgym_app"]


def create_agentgym_app(env_cls: type[Environment], config: Any = None) -> FastAPI:
    """An app that answers AgentGym's routes for ``env_cls`` on top of the protocol v1 runtime (the
    same sessions, limits, TTL, shared data and child-process care)."""
    config = config or ServerConfig()
    options = {**routes_of(env_cls).options, **config.options}  # the agentgym profile by default, where there is one
    env_cls, _ = profiles.split_options(env_cls, options)
    routes = routes_of(env_cls)  # the profile's routes: upstream index N is its task N
    config = dataclasses.replace(config, options={**routes.options, **options}, truncate=routes.server_truncates)
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

    def sent(handle: int, reward: float) -> float:
        """Adds a step's reward to the handle's running value; the reward the server sends for it (before any
        scale): a running-reward server sends the value so far, as upstream's does."""
        scores[handle] = scores.get(handle, 0.0) + reward
        return scores[handle] if routes.running_reward else reward

    async def state(handle: int, observation: str, reward: float, done: bool, extra: Mapping[str, Any],
                    info: Mapping[str, Any] | None = None) -> dict:
        reward = sent(handle, reward)
        env_id = handles[handle]
        actions = await service.available_actions(env_id) if not done else []
        scale = routes.score_scale or 1.0  # a score server's "reward" is the change of its score, in its scale
        # a profile that knows upstream's running score says it (it may count what the reset did)
        score = (info or {}).get("agentgym_score", scores[handle] * scale)
        # in another scale, rounded (a 0-100 score server sends 25, not 25.000000000000004); in the profile's own
        # scale, the number as computed (upstream's babyai sends 0.6656249999999999, not 0.665625)
        exact = scale == 1.0
        return {"id": handle, "observation": observation, "reward": reward if exact else round(reward * scale, 9),
                "score": score if exact else round(score, 9), "done": done, "deleted": False,
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
            return {key: handle} if routes.create_returns == "object" else handle
        return {"id": handle, "observation": routes.served_first(created["observation"]), "reward": 0.0, "done": False}

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
        if routes.reset_method:
            sess = service.sessions.get(env_id)
            async with sess.lock:
                return await service.run(getattr(sess.env, routes.reset_method))
        obs = routes.served_first(created["observation"])
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
            answer = {routes.step_observation: result["observation"], "reward": sent(handle, result["reward"]),
                      routes.step_done: result["done"]}
            if routes.step_done == "terminated":
                answer["truncated"] = bool((result.get("info") or {}).get("truncated", False))
            return {**answer, "info": None}
        return await state(handle, result["observation"], result["reward"], result["done"], {}, result.get("info"))

    async def read(request: Request, what: str) -> Any:
        try:
            env_id = session_of(request.query_params.get(key))
            if what == "observation":
                return routes.served_first(await service.observation(env_id))
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
        return {"observation": routes.served_first(obs), "done": sess.done, "reward": scores.get(handle, 0.0),
                "deleted": False}

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
        return True if routes.id_family else routes.close_returns

    return Guard(app, config.token, config.max_body_bytes)  # type: ignore[return-value]
