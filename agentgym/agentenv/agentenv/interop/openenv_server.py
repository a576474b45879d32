"""OpenEnv's protocol served for an environment of this project (``agentenv serve NAME --compat openenv``).

OpenEnv clients (its ``EnvClient`` / ``GenericEnvClient``, TRL's ``environment_factory``, SkyRL, ART) then drive
the environment unchanged, on top of the protocol v1 runtime: the same sessions, limits, step timeouts, shared data,
token and child-process care. The protocol, as openenv 0.10.0 speaks it (read from its code, not copied):

- ``WS /ws``: one environment session per connection. The client sends ``{"type": "reset" | "step" | "state" |
  "close", "data": {...}}``; the server answers ``{"type": "observation", "data": {"observation": {...},
  "reward": r, "done": d}}``, ``{"type": "state", "data": {...}}`` or ``{"type": "error", "data": {"message": ...,
  "code": ...}}`` (``INVALID_JSON``, ``UNKNOWN_TYPE``, ``VALIDATION_ERROR``, ``EXECUTION_ERROR``,
  ``CAPACITY_REACHED``, ``SESSION_ERROR``). A connection beyond the server's session cap gets ``CAPACITY_REACHED``
  and is closed, as OpenEnv's servers do (protocol v1 queues instead).
- ``GET /schema`` (the JSON schemas of action, observation and state), ``GET /metadata``, ``GET /health``, MCP's
  ``POST /mcp`` (JSON-RPC; ``tools/list``); and, as in OpenEnv's simulation mode, a stateless ``POST /reset`` (the
  first observation of a task) and ``GET /state``. A step needs an episode, which only a ``/ws`` session holds:
  ``POST /step`` answers 409 and MCP's ``tools/call`` an error saying so.

Typed models follow what the environment declares (:func:`action_model`): a text action ``{"action": "..."}``,
a tool call ``{"tool": NAME, "arguments": {...}}`` (the schema lists every tool's argument schema), or a code block
``{"code": "..."}``. The observation holds the text, whether the action was valid, the actions available and the
step's info; reward and done are the environment's. ``reset`` takes ``task_id``, ``split`` and ``seed``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import uuid
from typing import Any, Literal

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agentenv.actions import ToolCall
from agentenv.env import Environment
from agentenv.errors import AgentEnvError
from agentenv.protocol import CreateRequest, StepRequest
from agentenv.protocol import ResetRequest as V1Reset
from agentenv.server import EnvService, Guard, ServerConfig, service_lifespan

__all__ = ["action_model", "create_openenv_app", "mcp_tools", "to_action_text"]

PROTOCOL = "openenv"


class OpenEnvModel(BaseModel):
    """OpenEnv's base of actions and observations: unknown fields refused, a free ``metadata`` dict."""

    model_config = ConfigDict(extra="forbid")
    metadata: dict[str, Any] = Field(default_factory=dict)


class TextAction(OpenEnvModel):
    action: str = Field(description="the action, as the environment's instruction describes it")


class CodeAction(OpenEnvModel):
    code: str = Field(description="the code to run")


class Observation(OpenEnvModel):
    """What every reset and step answers (``reward`` and ``done`` travel beside it, as OpenEnv sends them)."""

    text: str = Field(description="the observation text")
    valid: bool = Field(default=True, description="whether the environment understood the last action")
    success: bool | None = Field(default=None, description="whether the task is solved (at the end)")
    available_actions: list[str] = Field(default_factory=list, description="the actions that make sense now")
    info: dict[str, Any] = Field(default_factory=dict, description="the environment's step or reset info")
    done: bool = False
    reward: float | None = None


class State(BaseModel):
    model_config = ConfigDict(extra="allow")
    episode_id: str | None = None
    step_count: int = 0
    env: str = ""
    task_id: int | None = None
    split: str | None = None


class ResetData(BaseModel):
    """What a reset message may carry (OpenEnv's ``episode_id`` and ``seed``, this project's task and split)."""

    model_config = ConfigDict(extra="forbid")
    task_id: int = Field(default=0, ge=0)
    split: Literal["train", "test"] = "train"
    seed: int | None = None
    episode_id: str | None = Field(default=None, max_length=255)


def action_model(env_cls: type[Environment]) -> type[OpenEnvModel]:
    """The typed action of ``env_cls``: from its declared action format (and, for tools, their names)."""
    described = env_cls.describe()
    if described["action_format"] == "code":
        return CodeAction
    if described["action_format"] == "tool":
        names = tuple(t["name"] for t in described["tools"])
        tool_type = Literal[names] if names else str  # type: ignore[valid-type]
        return create_model("ToolAction", __base__=OpenEnvModel,
                            tool=(tool_type, Field(description="the tool to call")),
                            arguments=(dict[str, Any], Field(default_factory=dict,
                                                             description="the tool's arguments (its schema)")))
    return TextAction


def action_schema(env_cls: type[Environment]) -> dict[str, Any]:
    """The action's JSON schema; for tools, each tool's own argument schema too (``oneOf``)."""
    schema = action_model(env_cls).model_json_schema()
    tools = env_cls.describe()["tools"]
    if tools:
        schema["oneOf"] = [{"properties": {"tool": {"const": t["name"], "description": t.get("description", "")},
                                           "arguments": t.get("parameters", {"type": "object"})}} for t in tools]
    return schema


def to_action_text(action: BaseModel) -> str:
    """The action string the environment reads, from a typed action."""
    if isinstance(action, CodeAction):
        return action.code
    if isinstance(action, TextAction):
        return action.action
    return ToolCall(str(action.tool), dict(action.arguments)).render()  # type: ignore[attr-defined]


def mcp_tools(env_cls: type[Environment]) -> list[dict[str, Any]]:
    """The environment's tools as MCP lists them (name, description, input schema)."""
    tools = env_cls.describe()["tools"]
    if tools:
        return [{"name": t["name"], "description": t.get("description", ""),
                 "inputSchema": t.get("parameters", {"type": "object"})} for t in tools]
    schema = action_model(env_cls).model_json_schema()
    return [{"name": "step", "description": env_cls.action_hint or "one action", "inputSchema": schema}]


def _rpc_error(call_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": call_id, "error": {"code": code, "message": message}}


def _error(message: str, code: str, **extra: Any) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code, **extra}})


def _code_of(err: AgentEnvError) -> str:
    if err.type == "session_full":
        return "CAPACITY_REACHED"
    if err.status in (400, 404, 413, 422):
        return "VALIDATION_ERROR"
    return "EXECUTION_ERROR"


def _observation(text: str, reward: float | None, done: bool, valid: bool = True, success: bool | None = None,
                 actions: list[str] | None = None, info: dict[str, Any] | None = None) -> dict[str, Any]:
    obs = Observation(text=text, valid=valid, success=success, available_actions=actions or [], info=info or {})
    return {"observation": obs.model_dump(exclude={"reward", "done"}), "reward": reward, "done": done}


def create_openenv_app(env_cls: type[Environment], config: Any = None) -> FastAPI:
    """An app that speaks OpenEnv's protocol for ``env_cls`` on top of the protocol v1 runtime."""
    config = config or ServerConfig()
    service = EnvService(env_cls, config)
    app = FastAPI(title=f"agentenv {env_cls.name} (OpenEnv protocol)", lifespan=service_lifespan(service))
    app.state.service = service
    actions_cls = action_model(env_cls)
    expected = f"Bearer {config.token}" if config.token else None
    connections = {"open": 0}
    lock = asyncio.Lock()

    async def opened(created: dict[str, Any]) -> dict[str, Any]:
        """A reset's answer: the first observation, with the actions available then."""
        actions = await service.available_actions(created["env_id"])
        return _observation(created["observation"], None, False, actions=actions, info=created["info"])

    @app.get("/health")
    async def health() -> dict:
        return {"status": "healthy"}

    @app.get("/metadata")
    async def metadata() -> dict:
        described = env_cls.describe()
        return {"name": env_cls.name, "description": described["instruction"] or env_cls.action_hint or env_cls.name,
                "version": env_cls.version, "readme_content": None, "author": None, "documentation_url": None}

    @app.get("/schema")
    async def schema() -> dict:
        return {"action": action_schema(env_cls), "observation": Observation.model_json_schema(),
                "state": State.model_json_schema()}

    @app.get("/state")
    async def state() -> dict:
        return State(env=env_cls.name).model_dump()

    @app.post("/reset")
    async def reset(body: dict[str, Any] | None = None) -> Any:
        """Stateless, as in OpenEnv's simulation mode: the first observation of a task (the session is closed)."""
        await service.start()
        try:
            data = ResetData(**(body or {}))
            created = await service.create(CreateRequest(task_id=data.task_id, split=data.split, seed=data.seed))
        except ValidationError as e:
            return JSONResponse({"detail": json.loads(e.json(include_url=False))}, status_code=422)
        except AgentEnvError as e:
            return JSONResponse(e.to_body(), status_code=e.status)
        try:
            return await opened(created)
        finally:
            await service.close(created["env_id"])

    @app.post("/mcp")
    async def mcp(request: Request) -> dict:
        """MCP's JSON-RPC: ``tools/list`` names the environment's tools (a tool environment's own; else one
        ``step`` tool taking its typed action). Calling one needs an episode, which only a /ws session holds."""
        try:
            call = await request.json()
        except ValueError:
            return _rpc_error(None, -32700, "Parse error")
        if not isinstance(call, dict) or call.get("jsonrpc") != "2.0" or not isinstance(call.get("method"), str):
            return _rpc_error(call.get("id") if isinstance(call, dict) else None, -32600, "Invalid request")
        if call["method"] == "tools/list":
            return {"jsonrpc": "2.0", "id": call.get("id"), "result": {"tools": mcp_tools(env_cls)}}
        if call["method"] == "tools/call":
            return _rpc_error(call.get("id"), -32000, "a tool call needs an episode, which only a session holds: "
                                                      "connect to /ws")
        return _rpc_error(call.get("id"), -32601, f"Method not found: {call['method']}")

    @app.post("/step")
    async def step() -> Any:
        err = AgentEnvError("a step needs an episode, which only a session holds: connect to /ws (OpenEnv's "
                            "EnvClient does)", status=409, type="needs_session")
        return JSONResponse(err.to_body(), status_code=err.status)

    @app.websocket("/ws")
    async def session(ws: WebSocket) -> None:
        await ws.accept()
        if expected is not None and not hmac.compare_digest(ws.headers.get("authorization", ""), expected):
            await ws.send_text(_error("missing or wrong bearer token", "SESSION_ERROR"))
            await ws.close(code=1008)
            return
        async with lock:  # OpenEnv refuses a connection past the cap (protocol v1 queues instead)
            full = connections["open"] >= service.sessions.max_sessions
            if not full:
                connections["open"] += 1
        if full:
            await ws.send_text(_error(f"the server holds {service.sessions.max_sessions} sessions, all in use",
                                      "CAPACITY_REACHED", active_sessions=connections["open"],
                                      max_sessions=service.sessions.max_sessions))
            await ws.close()
            return
        env_id: str | None = None
        current = State(env=env_cls.name)
        try:
            await service.start()
            while True:
                raw = await ws.receive_text()
                try:
                    message = json.loads(raw)
                except ValueError as e:
                    await ws.send_text(_error(f"Invalid JSON: {e}", "INVALID_JSON"))
                    continue
                kind = message.get("type") if isinstance(message, dict) else None
                data = message.get("data") if isinstance(message, dict) else None
                data = data if isinstance(data, dict) else {}
                try:
                    if kind == "close":
                        break
                    if kind == "state":
                        await ws.send_text(json.dumps({"type": "state", "data": current.model_dump()}))
                        continue
                    if kind == "reset":
                        req = ResetData(**data)
                        if env_id is None:
                            created = await service.create(CreateRequest(task_id=req.task_id, split=req.split,
                                                                         seed=req.seed))
                            env_id = created["env_id"]
                        else:
                            created = await service.reset(V1Reset(env_id=env_id, task_id=req.task_id,
                                                                  split=req.split, seed=req.seed))
                        current = State(episode_id=req.episode_id or uuid.uuid4().hex, env=env_cls.name,
                                        task_id=req.task_id, split=req.split)
                        answer = await opened(created)
                    elif kind == "step":
                        if env_id is None:
                            raise AgentEnvError("reset before the first step", status=409, type="no_episode")
                        text = to_action_text(actions_cls(**data))
                        result = await service.step(StepRequest(env_id=env_id, action=text))
                        current.step_count += 1
                        info = dict(result["info"])
                        done = bool(result["done"])
                        actions = [] if done else await service.available_actions(env_id)
                        answer = _observation(result["observation"], float(result["reward"]), done,
                                              valid=bool(info.pop("valid", True)), success=info.pop("success", None),
                                              actions=actions, info=info)
                    else:
                        await ws.send_text(_error(f"Unknown message type: {kind}", "UNKNOWN_TYPE"))
                        continue
                except ValidationError as e:
                    await ws.send_text(_error("Invalid message", "VALIDATION_ERROR",
                                              errors=json.loads(e.json(include_url=False))))
                    continue
                except AgentEnvError as e:
                    await ws.send_text(_error(e.message, _code_of(e)))
                    continue
                await ws.send_text(json.dumps({"type": "observation", "data": answer}))
        except WebSocketDisconnect:
            pass
        finally:
            async with lock:
                connections["open"] -= 1
            if env_id is not None and env_id in service.sessions:
                await service.close(env_id)
        try:
            await ws.close()
        except RuntimeError:  # already closed by the client
            pass

    return Guard(app, config.token, config.max_body_bytes)  # type: ignore[return-value]
