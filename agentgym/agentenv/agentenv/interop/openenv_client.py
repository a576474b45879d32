"""An OpenEnv environment driven like a server of this project (``--server NAME=openenv+ws://HOST:PORT``).

Training, AgentEvol, evaluation and ``agentenv play`` then run on any server that speaks OpenEnv's protocol (one
built with OpenEnv's own server library, or this project's ``--compat openenv``): :func:`agentenv.client.client_for`
picks :class:`OpenEnvClient` for such a URL (the scheme is read by :mod:`agentenv.addresses`).

What an OpenEnv environment does not state is given in the URL's query, with these defaults:
``openenv+ws://HOST:PORT[/path]?train=1000&test=100&max_turns=30&success=1.0#NAME``.

- **Tasks.** OpenEnv has no task ids or splits: task ``k`` of ``train`` is the reset with ``seed=k``, of ``test``
  with ``seed=1000000+k``; ``task_id`` and ``split`` travel too, and OpenEnv's server hands them only to a ``reset``
  that takes them (this project's servers do: the same task as over protocol v1).
- **Actions**, from the action's JSON schema (``GET /schema``): one string field is a text action (``code``: a
  code block) written into that field; ``{"tool", "arguments"}`` (this project's tool environments) lists its
  tools; OpenEnv's MCP environments (``CallToolAction``) have the tools MCP's ``tools/list`` gives (``POST /mcp``);
  any other object is one tool whose arguments are the action's fields. A reply that is no readable tool
  call, or that the server's validation refuses, is an observation saying why (``valid: false``), as a malformed
  action is here: the episode goes on.
- **Observations**: the ``text`` field, or the only field when it is a string, or the fields as JSON; ``valid``,
  ``success`` and ``available_actions`` when the observation has them. Rewards are OpenEnv's per step (``None``:
  0); success is the observation's ``success`` when it says, else a return reaching ``success``.
- **Sessions**: one WebSocket per episode. A server at its cap (``CAPACITY_REACHED``) is full, so the replica pool
  waits for a session to close; a connection that drops is a server that is gone.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from agentenv.actions import ToolCallError, parse_tool_call
from agentenv.addresses import OPENENV_SCHEME, split_openenv_url
from agentenv.errors import (
    AgentEnvError,
    BadRequest,
    EnvironmentCrashed,
    EpisodeDone,
    NotSupported,
    ServerUnavailable,
    SessionLimit,
    SessionNotFound,
    TaskNotFound,
)
from agentenv.interop.first_observations import first_observations
from agentenv.results import Created, Step

__all__ = ["ActionShape", "OpenEnvAddress", "OpenEnvClient", "action_shape", "observation_text"]

TEST_SEED_OFFSET = 1_000_000  # seeds of test tasks start here: apart from any train task's
DEFAULTS = {"train": 1000, "test": 100, "max_turns": 30, "success": 1.0}
RESERVED = ("metadata", "reward", "done")  # OpenEnv's own fields of every action and observation


@dataclass(frozen=True)
class OpenEnvAddress:
    """Where the server is and what the URL's query says about its environment."""

    ws: str  # ws(s)://HOST:PORT[/path]: the session channel is ws + "/ws"
    http: str  # http(s)://HOST:PORT[/path]: /schema, /metadata, /health
    env: str
    splits: dict[str, int]
    max_turns: int
    success_threshold: float

    @classmethod
    def parse(cls, url: str) -> OpenEnvAddress:
        base, env = split_openenv_url(url)
        parts = urlsplit(base)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        unknown = set(query) - set(DEFAULTS)
        if unknown:
            raise ValueError(f"{url!r}: unknown setting(s) {', '.join(sorted(unknown))} (known: {', '.join(DEFAULTS)})")
        try:
            train, test = int(query.get("train", DEFAULTS["train"])), int(query.get("test", DEFAULTS["test"]))
            max_turns = int(query.get("max_turns", DEFAULTS["max_turns"]))
            success = float(query.get("success", DEFAULTS["success"]))
        except ValueError as e:
            raise ValueError(f"{url!r}: {e}") from None
        if min(train, test) < 0 or max_turns < 1:
            raise ValueError(f"{url!r}: task counts must be >= 0 and max_turns >= 1")
        ws = f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
        http = ws.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        return cls(ws, http, env, {"train": train, "test": test}, max_turns, success)


@dataclass(frozen=True)
class ActionShape:
    """How a reply becomes the server's typed action, read from the action's JSON schema."""

    format: str  # text | code | tool
    hint: str = ""
    text_field: str | None = None  # text and code: the string field the action fills
    tools: list[dict[str, Any]] = field(default_factory=list)  # tool: name, description, parameters
    # how a tool call is sent: "tool" {"tool": NAME, "arguments": {...}} (this project's tool environments), "mcp"
    # {"type": "call_tool", "tool_name": NAME, "arguments": {...}} (OpenEnv's MCP environments), None: the arguments
    # are the action's fields
    tool_field: str | None = None

    def to_action(self, action: str) -> dict[str, Any]:
        """The typed action for a reply's action text; a :class:`ToolCallError` says why there is none."""
        if self.text_field is not None:
            return {self.text_field: action}
        call = parse_tool_call(action)
        names = [t["name"] for t in self.tools]
        if call.name not in names:
            raise ToolCallError(f"unknown tool {call.name!r}; the tools are {', '.join(names)}")
        if self.tool_field == "mcp":
            return {"type": "call_tool", "tool_name": call.name, "arguments": call.arguments}
        return {"tool": call.name, "arguments": call.arguments} if self.tool_field else dict(call.arguments)


def is_mcp_action(schema: dict[str, Any]) -> bool:
    """OpenEnv's ``CallToolAction`` (an MCP environment: its tools are listed by MCP's ``tools/list``)."""
    return {"tool_name", "arguments"} <= set(schema.get("properties") or {})


def action_shape(schema: dict[str, Any], mcp_tools: list[dict[str, Any]] | None = None) -> ActionShape:
    """The action format an OpenEnv action schema calls for (see the module's docstring); ``mcp_tools``: what MCP's
    ``tools/list`` gave for an MCP environment."""
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in RESERVED}
    required = [k for k in schema.get("required", []) if k in props]
    if is_mcp_action(schema) and mcp_tools:
        return ActionShape("tool", tool_field="mcp", tools=[
            {"name": str(t["name"]), "description": str(t.get("description") or ""),
             "parameters": t.get("inputSchema") or t.get("input_schema") or {"type": "object"}} for t in mcp_tools])
    if set(props) == {"tool", "arguments"}:
        tools = [{"name": str(one["properties"]["tool"]["const"]),
                  "description": str(one["properties"]["tool"].get("description", "")),
                  "parameters": one["properties"].get("arguments") or {"type": "object"}}
                 for one in schema.get("oneOf", []) if "const" in one.get("properties", {}).get("tool", {})]
        if not tools:
            names = props["tool"].get("enum") or []
            tools = [{"name": str(n), "description": "", "parameters": {"type": "object"}} for n in names]
        if tools:
            return ActionShape("tool", tools=tools, tool_field="tool")
    if len(props) == 1:
        (name, prop), = props.items()
        if prop.get("type") == "string":
            return ActionShape("code" if name == "code" else "text", hint=str(prop.get("description", "")),
                               text_field=name)
    name = str(schema.get("title") or "act")
    parameters = {"type": "object", "properties": props, "required": required}
    return ActionShape("tool", tools=[{"name": name, "description": str(schema.get("description", "")),
                                       "parameters": parameters}])


def _mcp_result_text(result: Any) -> str:
    """An MCP tool's result as text: its text contents, or its structured data as JSON."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        texts = [c.get("text", "") for c in result.get("content") or [] if isinstance(c, dict) and "text" in c]
        if texts:
            return "\n".join(texts)
        for key in ("data", "structured_content", "structuredContent"):
            if result.get(key) is not None:
                value = result[key]
                return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return json.dumps(result, ensure_ascii=False, default=str)


def observation_text(observation: dict[str, Any]) -> str:
    """An OpenEnv observation as the text an agent reads (see the module's docstring)."""
    fields = {k: v for k, v in observation.items() if k not in RESERVED}
    if "tool_name" in fields and "result" in fields:  # an MCP environment's CallToolObservation
        error = fields.get("error")
        if error:
            return f"Error: {error.get('message', error) if isinstance(error, dict) else error}"
        return _mcp_result_text(fields["result"])
    if isinstance(fields.get("text"), str):
        return fields["text"]
    if len(fields) == 1 and isinstance(next(iter(fields.values())), str):
        return next(iter(fields.values()))
    return json.dumps(fields, ensure_ascii=False, default=str)


@dataclass
class _Session:
    socket: Any  # websockets' ClientConnection
    observation: str = ""
    available: list[str] = field(default_factory=list)
    returns: float = 0.0
    done: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class OpenEnvClient:
    """Drives an OpenEnv server with the interface of :class:`agentenv.client.AsyncEnvClient` (what the replica
    pool, the episode driver, evaluation and training use)."""

    def __init__(self, url: str, *, token: str | None = None, timeout: float = 300.0, **_: Any) -> None:
        self.address = OpenEnvAddress.parse(url)
        self.env = self.address.env
        self.timeout = timeout
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(base_url=self.address.http, headers=self._headers, timeout=timeout)
        self._sessions: dict[str, _Session] = {}
        self._info: dict[str, Any] | None = None
        self._schema: dict[str, Any] | None = None
        self._shape: ActionShape | None = None

    def __repr__(self) -> str:
        return f"OpenEnvClient({self.address.ws!r}, env={self.env!r})"

    # -- the server's description ---------------------------------------------------------------------------
    async def _get(self, path: str) -> Any:
        try:
            resp = await self._http.get(path)
        except httpx.TransportError as e:
            raise ServerUnavailable(f"OpenEnv server {self.address.http} did not answer: {type(e).__name__}: {e}") \
                from e
        if resp.status_code >= 400:
            raise EnvironmentCrashed(f"OpenEnv server {self.address.http}{path} answered {resp.status_code}: "
                                     f"{resp.text[:300]}", status=502)
        return resp.json()

    async def health(self) -> dict:
        body = await self._get("/health")
        return {"status": "ok", "env": self.env, "sessions": len(self._sessions), "protocol": 1, "compat": "openenv",
                "upstream": body}

    async def schema(self) -> dict[str, Any]:
        """``GET /schema``, read once."""
        if self._schema is None:
            self._schema = await self._get("/schema")
        return self._schema

    async def shape(self) -> ActionShape:
        if self._shape is None:
            action = (await self.schema()).get("action") or {}
            self._shape = action_shape(action, await self._mcp_tools() if is_mcp_action(action) else None)
        return self._shape

    async def _mcp_tools(self) -> list[dict[str, Any]]:
        """An MCP environment's tools: MCP's ``tools/list`` at ``POST /mcp``."""
        try:
            resp = await self._http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
            return list(((resp.json() or {}).get("result") or {}).get("tools") or [])
        except (httpx.HTTPError, ValueError):
            return []

    async def info(self) -> dict:
        if self._info is None:
            shape = await self.shape()
            try:
                meta = await self._get("/metadata")
            except EnvironmentCrashed:  # optional in OpenEnv
                meta = {}
            a = self.address
            # the task set: the environment and its counts (not where it is served: replicas share datasets)
            digest = hashlib.sha256(json.dumps([meta.get("name"), meta.get("version"), a.splits,
                                                await self.schema()], sort_keys=True,
                                               default=str).encode()).hexdigest()[:16]
            self._info = {
                "env": self.env, "splits": dict(a.splits), "max_turns": a.max_turns, "action_format": shape.format,
                "action_hint": shape.hint, "code_language": None, "instruction": str(meta.get("description") or ""),
                "tools": shape.tools, "success_threshold": a.success_threshold, "max_sessions": None,
                "step_timeout": None, "options": {"task_set": "openenv-seeds"},
                "version": f"openenv:{meta.get('name', '')}:{meta.get('version') or ''}",
                "fingerprint": f"openenv:{digest}"}
        return self._info

    # -- sessions ---------------------------------------------------------------------------------------------
    def _seed(self, task_id: int, split: str) -> int:
        n = self.address.splits.get(split)
        if n is None:
            raise TaskNotFound(f"no split {split!r} (OpenEnv tasks: train, test)")
        if not 0 <= task_id < n:
            raise TaskNotFound(f"task_id {task_id} out of range for split {split!r} (0..{n - 1})")
        return task_id + (TEST_SEED_OFFSET if split == "test" else 0)

    async def _exchange(self, sess: _Session, message: dict[str, Any]) -> dict[str, Any]:
        """One message and its answer; an OpenEnv error becomes this project's error for it."""
        from websockets.exceptions import ConnectionClosed

        try:
            await sess.socket.send(json.dumps(message))
        except ConnectionClosed:  # a server that refused the session says why before closing: read it below
            pass
        try:
            answer = json.loads(await asyncio.wait_for(sess.socket.recv(), self.timeout))
        except (ConnectionClosed, OSError, asyncio.TimeoutError) as e:
            raise ServerUnavailable(f"OpenEnv server {self.address.ws} dropped the session: "
                                    f"{type(e).__name__}: {e}") from e
        if answer.get("type") == "error":
            data = answer.get("data") or {}
            code, text = str(data.get("code", "")), str(data.get("message", ""))
            for err in data.get("errors") or []:  # pydantic's: where, and what is wrong
                if isinstance(err, dict):
                    where = ".".join(str(p) for p in err.get("loc", ()) if p != "data")
                    text += f"; {where}: {err.get('msg', '')}" if where else f"; {err.get('msg', '')}"
            if code == "CAPACITY_REACHED":
                raise SessionLimit(f"OpenEnv server {self.address.ws} is full: {text}")
            if code == "VALIDATION_ERROR":
                raise BadRequest(text)
            raise EnvironmentCrashed(f"OpenEnv server {self.address.ws}: {code} {text}".strip())
        return answer.get("data") or {}

    async def _open_socket(self) -> Any:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidURI

        try:
            return await asyncio.wait_for(connect(self.address.ws + "/ws", additional_headers=self._headers,
                                                  max_size=None, open_timeout=self.timeout), self.timeout)
        except (OSError, InvalidHandshake, InvalidURI, asyncio.TimeoutError) as e:
            raise ServerUnavailable(f"OpenEnv server {self.address.ws} did not answer: {type(e).__name__}: {e}") \
                from e

    def _read(self, sess: _Session, data: dict[str, Any]) -> tuple[str, float, bool, dict[str, Any]]:
        observation = data.get("observation") or {}
        sess.observation = observation_text(observation)
        sess.available = [str(a) for a in observation.get("available_actions") or []]
        reward = float(data.get("reward") or 0.0)
        done = bool(data.get("done", observation.get("done", False)))
        info = {k: observation[k] for k in ("valid", "success") if isinstance(observation.get(k), bool)}
        if observation.get("tool_name") is not None and observation.get("error"):  # an MCP call that failed
            info["valid"] = False
        return sess.observation, reward, done, info

    async def create(self, task_id: int, split: str = "train", seed: int | None = None) -> Created:
        env_seed = self._seed(task_id, split)
        await self.shape()  # a server without OpenEnv's schema fails here, before a session is held
        sess = _Session(await self._open_socket())
        env_id = uuid.uuid4().hex
        self._sessions[env_id] = sess
        try:
            return await self.reset(env_id, task_id, split, seed, env_seed=env_seed)
        except BaseException:
            await self.close(env_id)
            raise

    def _session(self, env_id: str) -> _Session:
        try:
            return self._sessions[env_id]
        except KeyError:
            raise SessionNotFound(f"no session {env_id!r} on this client") from None

    async def reset(self, env_id: str, task_id: int, split: str | None = None, seed: int | None = None, *,
                    env_seed: int | None = None) -> Created:
        sess = self._session(env_id)
        split = split or "train"
        env_seed = self._seed(task_id, split) if env_seed is None else env_seed
        async with sess.lock:
            data = await self._exchange(sess, {"type": "reset", "data": {"seed": env_seed, "task_id": task_id,
                                                                           "split": split}})
        text, _, _, _ = self._read(sess, data)
        sess.returns, sess.done = 0.0, False
        return Created(env_id, text, {"openenv_seed": env_seed})

    async def step(self, env_id: str, action: str) -> Step:
        sess = self._session(env_id)
        if sess.done:
            raise EpisodeDone(f"the episode of session {env_id} is over; reset it or open another")
        shape = await self.shape()
        try:
            typed = shape.to_action(action)
        except ToolCallError as e:
            return Step(sess.observation, 0.0, False, self._step_info(sess, valid=False, error=str(e)))
        async with sess.lock:
            try:
                data = await self._exchange(sess, {"type": "step", "data": typed})
            except BadRequest as e:  # the server's validation refused it: an observation saying why
                return Step(sess.observation, 0.0, False, self._step_info(sess, valid=False, error=e.message))
        text, reward, done, said = self._read(sess, data)
        sess.returns += reward
        sess.done = done
        return Step(text, reward, done, self._step_info(sess, **said))

    def _step_info(self, sess: _Session, *, valid: bool = True, success: bool | None = None,
                   error: str | None = None) -> dict[str, Any]:
        if success is None:
            success = sess.done and sess.returns >= self.address.success_threshold
        info: dict[str, Any] = {"valid": valid, "success": bool(success and sess.done), "score": sess.returns}
        if error is not None:
            info["error"] = f"the action was not sent: {error}"
        return info

    async def step_batch(self, steps: list[tuple[str, str]]) -> list[Step | AgentEnvError]:
        async def one(env_id: str, action: str) -> Step | AgentEnvError:
            try:
                return await self.step(env_id, action)
            except AgentEnvError as e:
                return e

        return list(await asyncio.gather(*(one(e, a) for e, a in steps)))

    async def observation(self, env_id: str) -> str:
        return self._session(env_id).observation

    async def available_actions(self, env_id: str) -> list[str]:
        return list(self._session(env_id).available)

    async def suggest(self, env_id: str, policy: str = "expert"):
        raise NotSupported(f"an OpenEnv server has no {policy} policy")

    async def policy_action(self, env_id: str, policy: str = "expert") -> str:
        raise NotSupported(f"an OpenEnv server has no {policy} policy")

    async def tasks(self, split: str = "train", offset: int = 0, limit: int = 100) -> list[tuple[int, str]]:
        """First observations, by resetting one session task after task."""
        stop = min(self.address.splits.get(split, 0), offset + limit)
        return await first_observations(self, split, range(offset, stop))

    async def close(self, env_id: str) -> None:
        sess = self._sessions.pop(env_id, None)
        if sess is None:
            return
        try:
            await sess.socket.send(json.dumps({"type": "close", "data": {}}))
        except Exception:  # a server that is gone holds nothing to free
            pass
        try:
            await sess.socket.close()
        except Exception:  # the same
            pass

    async def aclose(self) -> None:
        for env_id in list(self._sessions):
            await self.close(env_id)
        await asyncio.shield(self._http.aclose())


SCHEME = OPENENV_SCHEME
