"""The generic protocol v1 server: any Environment class becomes an HTTP service.

Environment code runs in a thread pool so a slow or blocking environment never
stalls the event loop; a per-session lock keeps one session's calls in order while
different sessions run concurrently. ``/step_batch`` lets a client send many
sessions' steps in one request, which is what makes hundreds of steps per second
per core possible over HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import FastAPI, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentenv import processes, profiles
from agentenv.env import Environment, Split
from agentenv.errors import (
    AgentEnvError,
    BadRequest,
    EnvironmentCrashed,
    EpisodeDone,
    NotSupported,
    PayloadTooLarge,
    SessionNotFound,
    StepTimeout,
    TaskNotFound,
    ValidationFailed,
)
from agentenv.protocol import (
    PROTOCOL_VERSION,
    ActionsResponse,
    CloseRequest,
    CloseResponse,
    CreateRequest,
    CreateResponse,
    HealthResponse,
    InfoResponse,
    ObservationResponse,
    PolicyActionResponse,
    ResetRequest,
    StepBatchRequest,
    StepRequest,
    StepResponse,
    TasksResponse,
)
from agentenv.sessions import Session, SessionTable

log = logging.getLogger("agentenv.server")
BATCH_CHUNK = 16  # steps per thread-pool job in /step_batch
T = TypeVar("T")


@dataclass
class ServerConfig:
    max_sessions: int = 1024
    session_ttl: float = 900.0  # seconds of idleness before a session is closed
    token: str | None = None
    max_body_bytes: int = 1 << 20
    max_action_chars: int = 16384
    threads: int | None = None  # environment thread pool size
    #: the environment's options as given (``--option KEY=VALUE``, a config file); parsed by its Options model
    options: dict[str, Any] = field(default_factory=dict)
    #: the runtime ends an episode at the class's max_turns (AgentGym's routes of a profile whose original server
    #: has no turn limit switch it off: there max_turns is AgentGym's evaluation round limit)
    truncate: bool = True


class Guard:
    """ASGI middleware: bearer token on every route but /health, and a body size cap (around protocol
    v1's app and AgentGym's, :mod:`agentenv.interop.agentgym_server`).

    Written as raw ASGI (not BaseHTTPMiddleware) because it runs on every step.
    """

    def __init__(self, app: Any, token: str | None, max_body: int) -> None:
        self.app, self.max_body = app, max_body
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        if self.expected is not None and scope["path"] != "/health":
            got = headers.get(b"authorization", b"")
            if not hmac.compare_digest(got, self.expected):
                return await _send_error(send, AgentEnvError("missing or wrong bearer token", status=401,
                                                             type="unauthorized"))
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            # read the body before answering: a server that answers and closes while the client is still
            # sending makes the client see a connection reset instead of this error
            await _drain(receive, limit=64 * self.max_body)  # past that, the client may see a reset
            return await _send_error(send, PayloadTooLarge(f"request body of {int(length)} bytes exceeds the "
                                                           f"limit of {self.max_body}"))
        if length is None and scope["method"] in ("POST", "PUT", "PATCH"):
            # chunked body: read it here (up to the cap) and replay it to the app
            body, more = [], True
            seen = 0
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    break
                body.append(message.get("body", b""))
                seen += len(body[-1])
                more = message.get("more_body", False)
                if seen > self.max_body:
                    if more:
                        await _drain(receive, limit=64 * self.max_body)
                    return await _send_error(send, PayloadTooLarge(f"request body exceeds the limit of "
                                                                   f"{self.max_body} bytes"))
            replay = [{"type": "http.request", "body": b"".join(body), "more_body": False}]
            return await self.app(scope, _replaying(replay, receive), send)
        return await self.app(scope, receive, send)


async def _drain(receive: Callable, limit: int) -> None:
    """Read and drop a request body (up to ``limit`` bytes)."""
    seen = 0
    while seen <= limit:
        message = await receive()
        if message["type"] != "http.request":
            return
        seen += len(message.get("body", b""))
        if not message.get("more_body", False):
            return


def _replaying(messages: list[dict], receive: Callable) -> Callable:
    async def wrapped() -> dict:
        return messages.pop(0) if messages else await receive()

    return wrapped


async def _send_error(send: Callable, err: AgentEnvError) -> None:
    resp = JSONResponse(err.to_body(), status_code=err.status)
    await send({"type": "http.response.start", "status": resp.status_code, "headers": resp.raw_headers})
    await send({"type": "http.response.body", "body": resp.body})


class EnvService:
    """Protocol semantics on top of the session table, independent of HTTP routing."""

    def __init__(self, env_cls: type[Environment], config: ServerConfig) -> None:
        env_cls, options = profiles.split_options(env_cls, config.options)
        self.env_cls, self.config = env_cls, config
        self.options = parse_options(env_cls, options)
        cap = env_cls.max_sessions
        self.sessions = SessionTable(min(config.max_sessions, cap) if cap else config.max_sessions, config.session_ttl)
        threads = config.threads or min(64, (os.cpu_count() or 2) * 8)
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"env-{env_cls.name}")
        self.shared: Any = None
        self.task_counts: dict[str, int] = {}
        self.fingerprint = ""
        self._started = False
        self.stopping = False  # set at shutdown: long jobs (first observations of a whole split) stop early
        self._start_lock = asyncio.Lock()

    async def start(self) -> None:
        """Load the shared resources and count the tasks: once, however many requests arrive at once."""
        if self._started:
            return
        async with self._start_lock:
            if self._started:
                return
            loop = asyncio.get_running_loop()
            self.shared = await loop.run_in_executor(self.pool, self.env_cls.load_shared, self.options)
            counts = await loop.run_in_executor(self.pool, self.env_cls.task_counts, self.shared)
            missing = [s for s in ("train", "test") if s not in counts]
            if missing:
                raise RuntimeError(f"environment {self.env_cls.name} declares no {' or '.join(missing)} split")
            self.task_counts = {str(k): int(v) for k, v in counts.items()}
            self.fingerprint = self.env_cls.fingerprint(self.task_counts, self.options)
            self._started = True

    def info(self) -> dict[str, Any]:
        cls = self.env_cls
        return {"env": cls.name, "splits": self.task_counts, "max_turns": cls.max_turns, **cls.describe(),
                "success_threshold": float(cls.success_threshold), "max_sessions": self.sessions.max_sessions,
                "step_timeout": cls.step_timeout, "options": self.options.model_dump(mode="json"),
                "version": cls.version, "fingerprint": self.fingerprint, "profile": cls.profile}

    def new_env(self) -> Environment:
        env = self.env_cls()
        env.shared, env.options = self.shared, self.options
        return env

    def guarded(self, fn: Callable[..., T], *args: Any) -> T:
        """Call environment code; its exceptions become protocol errors (500/501)."""
        try:
            return fn(*args)
        except AgentEnvError:
            raise
        except NotImplementedError as e:
            raise NotSupported(str(e) or "not implemented by this environment") from e
        except Exception as e:  # the environment crashed: report, keep serving
            log.exception("environment %s raised", self.env_cls.name)
            raise EnvironmentCrashed(f"{type(e).__name__}: {e}") from e

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run environment code off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, self.guarded, fn, *args)

    def check_task(self, task_id: int, split: Split) -> None:
        self.check_split(split)
        n = self.task_counts[split]
        if not 0 <= task_id < n:
            raise TaskNotFound(f"task_id {task_id} out of range for split {split!r} (0..{n - 1})")

    def _new_env(self, task_id: int, split: Split, seed: int | None) -> tuple[Environment, str, dict]:
        env = self.new_env()
        try:
            obs, info = env.reset(task_id, split, seed)
        except BaseException:
            _close_quietly(env)
            raise
        return env, obs, info

    def _task_observations(self, split: Split, ids: range) -> list[dict[str, Any]]:
        """First observations without sessions: the environment's cheap statement of them where it
        has one, else a reset of one scratch instance (reused across tasks, as a session's is: an
        instance may hold a simulator that is slow to start; closed at the end)."""
        scratch = self.new_env()
        out = []
        try:
            for task_id in ids:
                if self.stopping:  # the server is going down: its pool's threads must not keep it alive
                    raise RuntimeError("the server is stopping")
                obs = scratch.initial_observation(task_id, split)
                if obs is None:
                    obs, _ = scratch.reset(task_id, split, None)
                out.append({"task_id": task_id, "observation": obs})
        finally:
            _close_quietly(scratch)
        return out

    async def tasks(self, split: Split, offset: int, limit: int) -> dict[str, Any]:
        self.check_split(split)
        total = self.task_counts[split]
        ids = range(max(0, offset), min(total, max(0, offset) + max(0, limit)))
        return {"split": split, "total": total, "tasks": await self.run(self._task_observations, split, ids)}

    def check_split(self, split: Split) -> None:
        if split not in self.task_counts:
            raise ValidationFailed(f"unknown split {split!r}; {self.env_cls.name} has {', '.join(self.task_counts)}")

    async def create(self, req: CreateRequest) -> dict:
        self.check_task(req.task_id, req.split)
        self.sessions.reserve()
        try:
            env, obs, info = await self.run(self._new_env, req.task_id, req.split, req.seed)
        except BaseException:
            self.sessions.release()
            raise
        sess = self.sessions.add(env, req.task_id, req.split, req.seed)
        return {"env_id": sess.env_id, "observation": obs, "info": info}

    async def reset(self, req: ResetRequest) -> dict:
        sess = self.sessions.get(req.env_id)
        split = req.split or sess.split
        self.check_task(req.task_id, split)
        async with sess.lock:
            obs, info = await self.run(sess.env.reset, req.task_id, split, req.seed)
            sess.start(req.task_id, split, req.seed)
        return {"env_id": sess.env_id, "observation": obs, "info": info}

    def _check_action(self, action: str) -> None:
        if len(action) > self.config.max_action_chars:
            raise PayloadTooLarge(f"action of {len(action)} characters exceeds the limit of "
                                  f"{self.config.max_action_chars}")

    def _apply_step(self, sess: Session, action: str) -> dict:
        """One step with its bookkeeping; runs in a worker thread with the session lock held."""
        if sess.closed:
            raise SessionNotFound(f"session {sess.env_id} was closed")
        if sess.done:
            raise EpisodeDone(f"episode of {sess.env_id} has ended; reset or close it")
        result = self.guarded(sess.env.step, action)
        sess.turns += 1
        truncated = not result.done and self.config.truncate and sess.turns >= self.env_cls.max_turns
        sess.done = bool(result.done) or truncated
        info = dict(result.info)
        info.update(success=bool(result.success), score=float(result.score), valid=bool(result.valid),
                    turn=sess.turns)
        if truncated:
            info["truncated"] = True
        return {"observation": result.observation, "reward": float(result.reward), "done": sess.done, "info": info}

    def _apply_steps(self, items: list[tuple[int, Session, str]]) -> list[tuple[int, dict]]:
        out = []
        for idx, sess, action in items:
            try:
                out.append((idx, self._apply_step(sess, action)))
            except AgentEnvError as e:
                out.append((idx, _batch_error(e)))
        return out

    async def step(self, req: StepRequest) -> dict:
        self._check_action(req.action)
        sess = self.sessions.get(req.env_id)
        async with sess.lock:
            job = asyncio.get_running_loop().run_in_executor(self.pool, self._apply_step, sess, req.action)
            limit = self.env_cls.step_timeout
            if limit is None:
                return await job
            try:
                return await asyncio.wait_for(asyncio.shield(job), limit)
            except asyncio.TimeoutError:
                await self._abandon(sess, job)
                raise StepTimeout(f"a step of {sess.env_id} took longer than {limit:g}s; the session was closed "
                                  "(its processes killed)") from None

    async def _abandon(self, sess: Session, job: asyncio.Future) -> None:
        """Drop a session whose step overran: out of the table, its processes killed (which is what
        unblocks most stuck steps), and closed once the step returns; the server keeps serving."""
        with contextlib.suppress(SessionNotFound):
            self.sessions.pop(sess.env_id)
        sess.closed = True
        await asyncio.get_running_loop().run_in_executor(None, processes.kill_children, sess.env)

        def close_after(fut: asyncio.Future) -> None:
            if not fut.cancelled():
                fut.exception()  # nobody awaits it: a late failure of the abandoned step is no error to log
            try:
                self.pool.submit(self._release_env, sess)
            except RuntimeError:  # the pool is shut down (the server is stopping)
                threading.Thread(target=self._release_env, args=(sess,), daemon=True).start()

        job.add_done_callback(close_after)

    async def step_batch(self, reqs: list[StepRequest]) -> list[dict]:
        """Steps of many sessions, in order per session.

        A batch runs as a few thread-pool jobs (chunks of whole sessions) instead of
        one job per step: dispatching each step to a thread costs more than most
        environments' step itself. A slow session delays only the others in its chunk.
        """
        if self.env_cls.step_timeout is not None:  # each step under its own time limit
            return list(await asyncio.gather(*(self._step_or_error(r) for r in reqs)))
        results: list[dict | None] = [None] * len(reqs)
        groups: dict[str, tuple[Session, list[tuple[int, str]]]] = {}
        for i, req in enumerate(reqs):
            try:
                self._check_action(req.action)
                sess = self.sessions.get(req.env_id)
            except AgentEnvError as e:
                results[i] = _batch_error(e)
                continue
            groups.setdefault(sess.env_id, (sess, []))[1].append((i, req.action))
        n_chunks = max(1, min(len(groups), -(-len(reqs) // BATCH_CHUNK)))
        chunks: list[list[tuple[Session, list[tuple[int, str]]]]] = [[] for _ in range(n_chunks)]
        for k, group in enumerate(groups.values()):
            chunks[k % n_chunks].append(group)
        for done in await asyncio.gather(*(self._run_chunk(c) for c in chunks if c)):
            for idx, res in done:
                results[idx] = res
        return results  # type: ignore[return-value]

    async def _step_or_error(self, req: StepRequest) -> dict:
        try:
            return await self.step(req)
        except AgentEnvError as e:
            return _batch_error(e)

    async def _run_chunk(self, chunk: list[tuple[Session, list[tuple[int, str]]]]) -> list[tuple[int, dict]]:
        items = sorted(((i, sess, a) for sess, steps in chunk for i, a in steps), key=lambda t: t[0])
        async with contextlib.AsyncExitStack() as stack:
            # one global lock order (by env_id), so concurrent batches cannot deadlock
            for sess in sorted((s for s, _ in chunk), key=lambda s: s.env_id):
                await stack.enter_async_context(sess.lock)
            return await asyncio.get_running_loop().run_in_executor(self.pool, self._apply_steps, items)

    async def observation(self, env_id: str) -> str:
        sess = self.sessions.get(env_id)
        async with sess.lock:
            return await self.run(sess.env.observation)

    async def available_actions(self, env_id: str) -> list[str]:
        sess = self.sessions.get(env_id)
        async with sess.lock:
            return list(await self.run(sess.env.available_actions))

    async def policy_action(self, env_id: str, policy: str) -> tuple[str, str | None]:
        """The scripted policy's action and, for the expert, its thought (one job, under the lock)."""
        sess = self.sessions.get(env_id)
        async with sess.lock:
            if sess.done:
                raise EpisodeDone(f"episode of {env_id} has ended")
            if policy == "expert":
                return await self.run(_expert_decision, sess.env)
            return await self.run(sess.env.random_action, sess.rng), None

    async def close(self, env_id: str) -> None:
        sess = self.sessions.pop(env_id)
        async with sess.lock:  # let an in-flight step finish first
            sess.closed = True
            await self._close_env(sess)

    async def _close_env(self, sess: Session) -> None:
        await asyncio.get_running_loop().run_in_executor(self.pool, self._release_env, sess)

    def _release_env(self, sess: Session) -> None:
        """The environment's own close, then whatever child processes it left (always)."""
        try:
            self.guarded(sess.env.close)
        except AgentEnvError as e:
            log.warning("closing %s failed: %s", sess.env_id, e)
        finally:
            processes.kill_children(sess.env)

    async def expire_forever(self) -> None:
        period = max(0.05, min(self.config.session_ttl / 4, 30.0))
        while True:
            await asyncio.sleep(period)
            for sess in self.sessions.pop_expired():
                log.info("session %s expired", sess.env_id)
                await self._close_env(sess)

    async def shutdown(self) -> None:
        self.stopping = True
        for sess in self.sessions.pop_all():
            await self._close_env(sess)
        if self._started:
            try:
                await self.run(self.env_cls.release_shared, self.shared)
            except AgentEnvError as e:
                log.warning("releasing shared resources failed: %s", e)
        self.pool.shutdown(wait=False, cancel_futures=True)


def parse_options(env_cls: type[Environment], raw: dict[str, Any]) -> Any:
    """The environment's Options model from ``KEY=VALUE`` strings or a config file's values."""
    from pydantic import ValidationError

    try:
        return env_cls.Options(**raw)
    except ValidationError as e:
        known = ", ".join(env_cls.Options.model_fields) or "none"
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}" for err in e.errors())
        raise ValueError(f"bad option for {env_cls.name}: {problems} (options it takes: {known})") from None


def _close_quietly(env: Environment) -> None:
    with contextlib.suppress(Exception):
        env.close()
    processes.kill_children(env)


def _expert_decision(env: Environment) -> tuple[str, str | None]:
    thought = env.expert_thought()
    return env.expert_action(), thought


def _batch_error(err: AgentEnvError) -> dict:
    return {**err.to_body(), "status": err.status}


def _error_response(err: AgentEnvError) -> JSONResponse:
    return JSONResponse(err.to_body(), status_code=err.status)


def service_lifespan(service: EnvService) -> Callable[[FastAPI], Any]:
    """Start-up and shutdown of an app around ``service``: shared data loaded, idle sessions swept,
    every session and the shared data released at the end (any app built on EnvService uses it)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        await service.start()
        sweeper = asyncio.create_task(service.expire_forever())
        try:
            yield
        finally:
            sweeper.cancel()
            await service.shutdown()

    return lifespan


def create_app(env_cls: type[Environment], config: ServerConfig | None = None) -> FastAPI:
    """The FastAPI app serving ``env_cls`` over protocol v1."""
    config = config or ServerConfig()
    service = EnvService(env_cls, config)
    lifespan = service_lifespan(service)
    app = FastAPI(title=f"agentenv {env_cls.name}", version=str(PROTOCOL_VERSION), lifespan=lifespan,
                  docs_url="/docs", redoc_url=None)
    app.state.service = service

    @app.exception_handler(AgentEnvError)
    async def _agentenv_error(request, exc: AgentEnvError):
        return _error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request, exc: RequestValidationError):
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error_response(BadRequest("request body is not valid JSON"))
        detail = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in errors[:5])
        return _error_response(ValidationFailed(detail or "invalid request"))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request, exc: StarletteHTTPException):
        etype = {404: "no_such_route", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error_response(AgentEnvError(str(exc.detail), status=exc.status_code, type=etype))

    @app.exception_handler(Exception)
    async def _internal_error(request, exc: Exception):
        log.exception("internal error")
        return _error_response(AgentEnvError(f"{type(exc).__name__}: {exc}"))

    @app.get("/health", response_model=HealthResponse)
    async def health():
        return {"status": "ok", "env": env_cls.name, "sessions": len(service.sessions), "protocol": PROTOCOL_VERSION}

    @app.get("/info", response_model=InfoResponse)
    async def info():
        await service.start()
        return service.info()

    @app.get("/tasks", response_model=TasksResponse)
    async def tasks(split: str = Query("train"), offset: int = Query(0, ge=0), limit: int = Query(100, ge=0, le=1000)):
        await service.start()
        return await service.tasks(split, offset, limit)

    @app.post("/create", response_model=CreateResponse)
    async def create(req: CreateRequest):
        await service.start()
        return await service.create(req)

    @app.post("/reset", response_model=CreateResponse)
    async def reset(req: ResetRequest):
        return await service.reset(req)

    @app.post("/step", response_model=StepResponse)
    async def step(req: StepRequest):
        # the hot path: the dict is built to the model's shape, so skip re-validating it
        return JSONResponse(await service.step(req))

    @app.post("/step_batch")
    async def step_batch(req: StepBatchRequest):
        return JSONResponse({"results": await service.step_batch(req.steps)})

    @app.get("/observation", response_model=ObservationResponse)
    async def observation(env_id: str = Query(...)):
        return {"observation": await service.observation(env_id)}

    @app.get("/available_actions", response_model=ActionsResponse)
    async def available_actions(env_id: str = Query(...)):
        return {"actions": await service.available_actions(env_id)}

    @app.get("/policy_action", response_model=PolicyActionResponse)
    async def policy_action(env_id: str = Query(...), policy: str = Query("expert", pattern="^(expert|random)$")):
        action, thought = await service.policy_action(env_id, policy)
        return {"action": action, "thought": thought}

    @app.post("/close", response_model=CloseResponse)
    async def close(req: CloseRequest):
        await service.close(req.env_id)
        return {"closed": True}

    return Guard(app, config.token, config.max_body_bytes)  # type: ignore[return-value]


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


#: seconds a stopping server waits for requests in flight before it cancels them
GRACE_SECONDS = 10


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket; port 0 picks a free port (read it back from the socket)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # accepted connections inherit it: without it, small responses wait ~40 ms for delayed ACKs
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _exit_cleanly(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def run_event_loop(main: Any) -> Any:
    """uvloop where installed (several times faster per request than asyncio's loop)."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


class AppThread:
    """An ASGI app served on a free port of ``host`` by a thread of this process (a site an environment serves its
    own browser, a test's stand-in service): started on construction, :attr:`url` to reach it, :meth:`stop` to end."""

    def __init__(self, app: Any, host: str = "127.0.0.1", lifespan: str = "auto") -> None:
        import uvicorn

        self._sock = bind_socket(host, 0)
        port = self._sock.getsockname()[1]
        self.url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False, lifespan=lifespan))
        self._thread = threading.Thread(target=lambda: run_event_loop(self._server.serve(sockets=[self._sock])),
                                        daemon=True, name=f"app-{port}")
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the app on {self.url} did not start")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()


def serve(env_cls: type[Environment], host: str = "127.0.0.1", port: int = 0,
          config: ServerConfig | None = None, log_level: str = "warning",
          app_factory: Callable[[type[Environment], ServerConfig | None], Any] | None = None) -> None:
    """Serve until interrupted; print ``listening on http://H:P`` once requests are accepted.
    ``app_factory`` builds the app (default: protocol v1's; ``agentenv.interop.agentgym_server`` serves
    AgentGym's routes instead)."""
    import uvicorn

    if not _loopback(host) and not (config and config.token):
        raise ValueError(f"listening on {host} (beyond loopback) needs a bearer token: give --token or "
                         "AGENTENV_TOKEN (clients send it as 'Authorization: Bearer ...')")
    app = (app_factory or create_app)(env_cls, config)
    try:  # load the shared data before binding: a bad data path is one line for the user, not a traceback
        asyncio.run(app.app.state.service.start())  # type: ignore[attr-defined]
    except Exception as e:
        raise ValueError(f"cannot start {env_cls.name}: loading its shared data failed: "
                         f"{type(e).__name__}: {e}") from None
    sock = bind_socket(host, port)
    bound_port = sock.getsockname()[1]
    # a request still running after SIGTERM (first observations of a whole split: minutes) is cancelled after a while
    server = uvicorn.Server(uvicorn.Config(app, log_level=log_level, access_log=False, timeout_keep_alive=75,
                                           backlog=2048, timeout_graceful_shutdown=GRACE_SECONDS))

    async def announce() -> None:
        while not server.started:  # noqa: ASYNC110 - uvicorn offers no event for it
            await asyncio.sleep(0.01)
        shown = f"[{host}]" if ":" in host else host
        print(f"listening on http://{shown}:{bound_port}", flush=True)

    async def main() -> None:
        task = asyncio.create_task(announce())
        try:
            await server.serve(sockets=[sock])
        finally:
            task.cancel()

    # uvicorn shuts down gracefully on SIGTERM, then re-raises it: make that a clean exit
    signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        run_event_loop(main())
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        sys.stdout.flush()
