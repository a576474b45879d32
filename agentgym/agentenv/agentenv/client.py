"""Clients of protocol v1: sync, async (with step coalescing) and a replica pool.

Retries: a request that never reached the server (connection refused or timed out
while connecting) is retried for every route; a 5xx or a broken connection is
retried only for idempotent routes, so a step is never applied twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from agentenv import addresses, errors
from agentenv.actions import ACTION_FORMATS
from agentenv.errors import AgentEnvError, ServerUnavailable
from agentenv.interop.agentgym_client import AgentGymClient
from agentenv.interop.openenv_client import OpenEnvClient
from agentenv.protocol import InfoResponse
from agentenv.results import Created, Step, Suggestion

__all__ = ["AsyncEnvClient", "Created", "EnvClient", "EnvPool", "EnvSession", "Step", "Suggestion", "client_for",
           "read_info"]

# Nagle's algorithm turns small request/response pairs into 40 ms round trips.
_SOCKET_OPTIONS = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def _decode(resp: httpx.Response) -> dict:
    try:
        body = resp.json()
    except ValueError:
        body = resp.text
    if resp.status_code >= 400:
        raise errors.from_response(resp.status_code, body)
    if not isinstance(body, dict):
        raise AgentEnvError(f"server sent a non-object body: {str(body)[:200]}", status=502, type="bad_gateway")
    return body


def _step_from(body: dict) -> Step:
    return Step(body["observation"], float(body["reward"]), bool(body["done"]), body.get("info") or {})


def _created_from(body: dict) -> Created:
    return Created(body["env_id"], body["observation"], body.get("info") or {})


def read_info(body: dict[str, Any]) -> InfoResponse:
    """``/info`` as a model. Servers from before the metadata fields get their defaults, and an
    ``action_format`` that describes the action in words is read as a text action with that hint."""
    info = InfoResponse.model_validate(body)
    if info.action_format not in ACTION_FORMATS:
        info = info.model_copy(update={"action_format": "text", "action_hint": info.action_hint or info.action_format})
    return info


@dataclass
class _Retry:
    """Decides, after each attempt, whether to try again (shared by both clients)."""

    retries: int
    backoff: float
    attempt: int = 0

    def should_retry(self, exc: BaseException | None, resp: httpx.Response | None, idempotent: bool) -> bool:
        self.attempt += 1
        if self.attempt > self.retries:
            return False
        if exc is not None:
            return isinstance(exc, _NOT_SENT) or (idempotent and isinstance(exc, httpx.TransportError))
        return idempotent and resp is not None and resp.status_code >= 500

    @property
    def delay(self) -> float:
        return self.backoff * (2 ** (self.attempt - 1))


def _unavailable(url: str, exc: BaseException) -> ServerUnavailable:
    return ServerUnavailable(f"environment server {url} did not answer: {type(exc).__name__}: {exc}")


class _ClientBase:
    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 120.0, retries: int = 3,
                 backoff: float = 0.2) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries, self.backoff = retries, backoff
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._timeout = httpx.Timeout(timeout, connect=min(10.0, timeout))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_url!r})"


class EnvClient(_ClientBase):
    """Blocking client of one environment server."""

    def __init__(self, base_url: str, **kwargs: Any) -> None:
        super().__init__(base_url, **kwargs)
        self._http = httpx.Client(base_url=self.base_url, headers=self._headers, timeout=self._timeout,
                                  transport=httpx.HTTPTransport(socket_options=_SOCKET_OPTIONS))

    def request(self, method: str, path: str, *, idempotent: bool, **kwargs: Any) -> dict:
        retry = _Retry(self.retries, self.backoff)
        while True:
            try:
                resp = self._http.request(method, path, **kwargs)
            except httpx.TransportError as e:
                if not retry.should_retry(e, None, idempotent):
                    raise _unavailable(self.base_url, e) from e
            else:
                if not retry.should_retry(None, resp, idempotent):
                    return _decode(resp)
            time.sleep(retry.delay)

    def health(self) -> dict:
        return self.request("GET", "/health", idempotent=True)

    def info(self) -> dict:
        return self.request("GET", "/info", idempotent=True)

    def tasks(self, split: str = "train", offset: int = 0, limit: int = 100) -> list[tuple[int, str]]:
        """First observations of tasks ``offset..offset+limit-1`` without opening sessions."""
        body = self.request("GET", "/tasks", params={"split": split, "offset": offset, "limit": limit},
                            idempotent=True)
        return [(int(t["task_id"]), t["observation"]) for t in body["tasks"]]

    def create(self, task_id: int, split: str = "train", seed: int | None = None) -> Created:
        body = {"task_id": task_id, "split": split, "seed": seed}
        return _created_from(self.request("POST", "/create", json=body, idempotent=False))

    def reset(self, env_id: str, task_id: int, split: str | None = None, seed: int | None = None) -> Created:
        body = {"env_id": env_id, "task_id": task_id, "split": split, "seed": seed}
        return _created_from(self.request("POST", "/reset", json=body, idempotent=False))

    def step(self, env_id: str, action: str) -> Step:
        return _step_from(self.request("POST", "/step", json={"env_id": env_id, "action": action}, idempotent=False))

    def step_batch(self, steps: Sequence[tuple[str, str]]) -> list[Step | AgentEnvError]:
        body = {"steps": [{"env_id": e, "action": a} for e, a in steps]}
        return [_batch_entry(r) for r in self.request("POST", "/step_batch", json=body, idempotent=False)["results"]]

    def observation(self, env_id: str) -> str:
        return self.request("GET", "/observation", params={"env_id": env_id}, idempotent=True)["observation"]

    def available_actions(self, env_id: str) -> list[str]:
        return self.request("GET", "/available_actions", params={"env_id": env_id}, idempotent=True)["actions"]

    def policy_action(self, env_id: str, policy: str = "expert") -> str:
        return self.suggest(env_id, policy).action

    def suggest(self, env_id: str, policy: str = "expert") -> Suggestion:
        """The scripted policy's next action and (expert only, where the environment has one) thought."""
        params = {"env_id": env_id, "policy": policy}
        return Suggestion.from_body(self.request("GET", "/policy_action", params=params, idempotent=True))

    def close(self, env_id: str) -> None:
        self.request("POST", "/close", json={"env_id": env_id}, idempotent=False)

    def disconnect(self) -> None:
        """Close the HTTP connections (``close`` closes a session)."""
        self._http.close()

    def __enter__(self) -> EnvClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()


def _batch_entry(r: dict) -> Step | AgentEnvError:
    if "error" in r:
        return errors.from_response(int(r.get("status", 500)), r)
    return _step_from(r)


class AsyncEnvClient(_ClientBase):
    """Async client of one environment server.

    Steps issued concurrently by many coroutines are coalesced into ``/step_batch``
    requests (one in flight at a time; the next batch gathers while it runs), which
    cuts HTTP overhead per step by the batch size. ``coalesce=False`` sends each
    step on its own.
    """

    def __init__(self, base_url: str, *, coalesce: bool = True, max_connections: int = 64, **kwargs: Any) -> None:
        super().__init__(base_url, **kwargs)
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=self._timeout,
                                       transport=httpx.AsyncHTTPTransport(socket_options=_SOCKET_OPTIONS,
                                                                          limits=limits))
        self.coalesce = coalesce
        self._pending: list[tuple[str, str, asyncio.Future]] = []
        self._flusher: asyncio.Task | None = None

    async def request(self, method: str, path: str, *, idempotent: bool, **kwargs: Any) -> dict:
        retry = _Retry(self.retries, self.backoff)
        while True:
            try:
                resp = await self._http.request(method, path, **kwargs)
            except httpx.TransportError as e:
                if not retry.should_retry(e, None, idempotent):
                    raise _unavailable(self.base_url, e) from e
            else:
                if not retry.should_retry(None, resp, idempotent):
                    return _decode(resp)
            await asyncio.sleep(retry.delay)

    async def health(self) -> dict:
        return await self.request("GET", "/health", idempotent=True)

    async def info(self) -> dict:
        return await self.request("GET", "/info", idempotent=True)

    async def tasks(self, split: str = "train", offset: int = 0, limit: int = 100) -> list[tuple[int, str]]:
        body = await self.request("GET", "/tasks", params={"split": split, "offset": offset, "limit": limit},
                                  idempotent=True)
        return [(int(t["task_id"]), t["observation"]) for t in body["tasks"]]

    async def create(self, task_id: int, split: str = "train", seed: int | None = None) -> Created:
        body = {"task_id": task_id, "split": split, "seed": seed}
        return _created_from(await self.request("POST", "/create", json=body, idempotent=False))

    async def reset(self, env_id: str, task_id: int, split: str | None = None, seed: int | None = None) -> Created:
        body = {"env_id": env_id, "task_id": task_id, "split": split, "seed": seed}
        return _created_from(await self.request("POST", "/reset", json=body, idempotent=False))

    async def step(self, env_id: str, action: str) -> Step:
        if not self.coalesce:
            body = {"env_id": env_id, "action": action}
            return _step_from(await self.request("POST", "/step", json=body, idempotent=False))
        fut = asyncio.get_running_loop().create_future()
        self._pending.append((env_id, action, fut))
        if self._flusher is None:
            self._flusher = asyncio.create_task(self._flush())
        return await fut

    async def _flush(self) -> None:
        try:
            while self._pending:
                await asyncio.sleep(0)  # let steps issued in the same tick join this batch
                batch, self._pending = self._pending, []
                try:
                    results = await self.step_batch([(e, a) for e, a, _ in batch])
                except errors.NotFound as e:
                    if e.type != "no_such_route":
                        raise
                    self.coalesce = False  # an older server without /step_batch
                    results = await asyncio.gather(*(self.step(e, a) for e, a, _ in batch), return_exceptions=True)
                except Exception as e:
                    results = [e] * len(batch)
                for (_, _, fut), res in zip(batch, results, strict=True):
                    if fut.done():
                        continue
                    if isinstance(res, BaseException):
                        fut.set_exception(res)
                    else:
                        fut.set_result(res)
        finally:
            self._flusher = None

    async def step_batch(self, steps: Sequence[tuple[str, str]]) -> list[Step | AgentEnvError]:
        body = {"steps": [{"env_id": e, "action": a} for e, a in steps]}
        results = (await self.request("POST", "/step_batch", json=body, idempotent=False))["results"]
        return [_batch_entry(r) for r in results]

    async def observation(self, env_id: str) -> str:
        return (await self.request("GET", "/observation", params={"env_id": env_id}, idempotent=True))["observation"]

    async def available_actions(self, env_id: str) -> list[str]:
        body = await self.request("GET", "/available_actions", params={"env_id": env_id}, idempotent=True)
        return body["actions"]

    async def policy_action(self, env_id: str, policy: str = "expert") -> str:
        return (await self.suggest(env_id, policy)).action

    async def suggest(self, env_id: str, policy: str = "expert") -> Suggestion:
        params = {"env_id": env_id, "policy": policy}
        return Suggestion.from_body(await self.request("GET", "/policy_action", params=params, idempotent=True))

    async def close(self, env_id: str) -> None:
        await self.request("POST", "/close", json={"env_id": env_id}, idempotent=False)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncEnvClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def client_for(url: str, **kwargs: Any) -> AsyncEnvClient:
    """The client a URL calls for: protocol v1, AgentGym's own routes (``agentgym+http://...#NAME``) or OpenEnv's
    protocol (``openenv+ws://...#NAME``)."""
    if addresses.is_agentgym_url(url):
        return AgentGymClient(url, **kwargs)  # type: ignore[return-value]
    if addresses.is_openenv_url(url):
        return OpenEnvClient(url, **kwargs)  # type: ignore[return-value]
    return AsyncEnvClient(url, **kwargs)


class EnvSession:
    """One open episode on one replica; obtained from :meth:`EnvPool.session`."""

    def __init__(self, pool: EnvPool, client: AsyncEnvClient, created: Created,
                 env_info: InfoResponse | None = None) -> None:
        self.pool, self.client = pool, client
        self.env_id, self.observation, self.info = created.env_id, created.observation, created.info
        #: the environment's metadata (``/info``): action format, instruction, success threshold, ...
        self.env_info = env_info
        self.closed = False

    async def step(self, action: str) -> Step:
        step = await self.client.step(self.env_id, action)
        self.observation = step.observation
        return step

    async def reset(self, task_id: int, split: str | None = None, seed: int | None = None) -> Created:
        created = await self.client.reset(self.env_id, task_id, split, seed)
        self.observation = created.observation
        return created

    async def available_actions(self) -> list[str]:
        return await self.client.available_actions(self.env_id)

    async def policy_action(self, policy: str = "expert") -> str:
        return await self.client.policy_action(self.env_id, policy)

    async def suggest(self, policy: str = "expert") -> Suggestion:
        return await self.client.suggest(self.env_id, policy)

    async def close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.pool._release(self)


class EnvPool:
    """Sessions spread over several replicas of one environment (least-loaded first).

    A URL may be a directory of replicas (``agentenv+ray://...``, :mod:`agentenv.addresses`): the
    pool then asks it for the live replicas (and their token) at most every ``refresh`` seconds when
    it opens a session, at once after a replica failed, and waits up to ``wait_live`` seconds for one
    to come back when none answers, so sessions go only to live replicas while dead ones restart.

    When every replica is full (its session cap answered 429), :meth:`open` queues: it waits for a
    session to close, in this pool or (polled) anywhere else, for up to ``wait_full`` seconds, then
    raises :class:`~agentenv.errors.SessionLimit` saying how many sessions were open. A trainer that
    starts a whole step's episodes at once thus plays all of them, never more at a time than the
    servers hold.

    Every session the pool opened is closed by :meth:`session`'s context exit or, at
    the latest, by :meth:`aclose`, whatever the caller raised.
    """

    def __init__(self, urls: Sequence[str], *, token: str | None = None, refresh: float = 2.0,
                 wait_live: float = 120.0, wait_full: float = 1800.0, **client_kwargs: Any) -> None:
        if not urls:
            raise ValueError("EnvPool needs at least one server URL")
        self._directories = [u for u in urls if addresses.is_directory_url(u)]
        self._token, self._client_kwargs = token, client_kwargs
        self.refresh, self.wait_live, self.wait_full = refresh, wait_live, wait_full
        self._freed: asyncio.Event | None = None  # set when one of this pool's sessions closes
        self.queued = 0  # opens waiting for a free session now
        self._clients: dict[str, AsyncEnvClient] = {}  # url -> client, the replicas sessions may go to
        self._retired: dict[str, AsyncEnvClient] = {}  # gone from a directory: no new sessions, closed by aclose
        self._load: dict[int, int] = {}
        self._refreshed = -float("inf")
        for u in urls:
            if not addresses.is_directory_url(u):
                self._add(u, token)
        self._open: set[EnvSession] = set()
        self._info: InfoResponse | None = None

    @property
    def clients(self) -> list[AsyncEnvClient]:
        """The replicas new sessions may go to (after the last look at the directories)."""
        return list(self._clients.values())

    def _add(self, url: str, token: str | None) -> None:
        client = self._retired.pop(url, None) or client_for(url, token=token, **self._client_kwargs)
        self._clients[url] = client
        self._load.setdefault(id(client), 0)

    async def replicas(self, force: bool = False) -> list[AsyncEnvClient]:
        """The live replicas, asking the directories again when ``refresh`` seconds passed (or ``force``)."""
        if self._directories and (force or time.monotonic() - self._refreshed > self.refresh):
            listed: dict[str, str] = {}
            for d in self._directories:
                urls, token = await addresses.lookup(d)
                listed.update(dict.fromkeys(urls, token))
            for url in [u for u in self._clients if u not in listed]:  # dead or restarted elsewhere
                # kept (idle) until aclose: an open() or a session's close may still be using it
                self._retired[url] = self._clients.pop(url)
            for url, token in listed.items():
                if url not in self._clients:
                    self._add(url, token)
            self._refreshed = time.monotonic()
        return self.clients

    async def info(self) -> InfoResponse:
        """The environment's metadata, asked once (of the first replica that answers)."""
        if self._info is None:
            last: Exception = ServerUnavailable("no live replica of this environment's servers")
            for client in await self.replicas():
                try:
                    self._info = read_info(await client.info())
                    break
                except ServerUnavailable as e:
                    last = e
            else:
                raise last
        return self._info

    @property
    def open_sessions(self) -> int:
        return len(self._open)

    async def open(self, task_id: int, split: str = "train", seed: int | None = None) -> EnvSession:
        """Create a session on the least-loaded replica; fall over to others if it is down or full
        (with directories: look again, and wait up to ``wait_live`` seconds for a live one); when all
        are full, wait up to ``wait_full`` seconds for a session to close."""
        deadline = time.monotonic() + self.wait_live
        full_deadline: float | None = None
        force = False
        while True:
            last: Exception = ServerUnavailable("no live replica of this environment's servers")
            try:
                env_info = await self.info()
                replicas = await self.replicas(force)
            except ServerUnavailable as e:
                last, replicas = e, []
            full = bool(replicas)  # every replica tried answered 429
            for client in sorted(replicas, key=lambda c: self._load[id(c)]):
                self._load[id(client)] += 1
                try:
                    created = await client.create(task_id, split, seed)
                except (ServerUnavailable, errors.SessionLimit) as e:  # down or full: try the next replica
                    self._load[id(client)] -= 1
                    last, full = e, full and isinstance(e, errors.SessionLimit)
                    continue
                except BaseException:
                    self._load[id(client)] -= 1
                    raise
                sess = EnvSession(self, client, created, env_info)
                self._open.add(sess)
                return sess
            if full:
                full_deadline = full_deadline or time.monotonic() + self.wait_full
                if time.monotonic() > full_deadline:
                    raise errors.SessionLimit(
                        f"every replica stayed full for {self.wait_full:.0f} s ({len(replicas)} replica(s), "
                        f"{len(self._open)} session(s) open through this pool, {self.queued} waiting): start more "
                        f"replicas or raise the servers' --max-sessions ({last})")
                await self._wait_for_free(full_deadline)
                deadline = time.monotonic() + self.wait_live  # a replica may go down while we wait
                continue
            if not self._directories or not isinstance(last, ServerUnavailable) or time.monotonic() > deadline:
                raise last
            force = True  # a replica is down: its directory will list its successor once it is up
            await asyncio.sleep(min(1.0, self.refresh))

    async def _wait_for_free(self, until: float) -> None:
        """Until one of this pool's sessions closes, or a short poll interval passes (sessions of other
        pools and processes on the same servers close unseen), but not past ``until``."""
        if self._freed is None:
            self._freed = asyncio.Event()
        self._freed.clear()
        self.queued += 1
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._freed.wait(), max(0.0, min(self._FULL_POLL, until - time.monotonic())))
        finally:
            self.queued -= 1

    _FULL_POLL = 0.5  # seconds between retries of full servers when nothing closed here

    @contextlib.asynccontextmanager
    async def session(self, task_id: int, split: str = "train", seed: int | None = None) -> AsyncIterator[EnvSession]:
        sess = await self.open(task_id, split, seed)
        try:
            yield sess
        finally:
            await asyncio.shield(sess.close())

    async def _release(self, sess: EnvSession) -> None:
        self._open.discard(sess)
        self._load[id(sess.client)] -= 1
        try:
            with contextlib.suppress(AgentEnvError):  # expired, or its server is gone: nothing left to free
                await sess.client.close(sess.env_id)
        finally:
            if self._freed is not None:
                self._freed.set()  # a queued open may now find room

    async def aclose(self) -> None:
        await asyncio.gather(*(s.close() for s in list(self._open)), return_exceptions=True)
        await asyncio.gather(*(c.aclose() for c in [*self._clients.values(), *self._retired.values()]),
                             return_exceptions=True)

    async def __aenter__(self) -> EnvPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
