"""Environment server replicas as Ray actors: placed over a cluster, health-checked, restarted.

The ``ray`` backend of :func:`agentenv.launcher.env_servers`. Each replica is an actor that runs
``agentenv serve NAME`` on whichever node Ray placed it (spread over nodes, with the CPUs and
memory the environment declares), bound to that node's address and guarded by a bearer token made
for the run. When its server process dies the actor exits with it and Ray starts it again; a
server that stops answering is killed so the same happens. A named directory actor probes every
replica's ``/health`` and lists the live URLs.

Clients never see a fixed replica list: the launcher hands out one *directory URL* per environment,
``agentenv+ray://NAMESPACE/DIRECTORY#NAME``, and :class:`agentenv.client.EnvPool` asks the directory
for the live URLs (and the token) whenever it opens sessions (:func:`agentenv.addresses.lookup`, the
clients' side, which imports Ray only then), so a dead replica stops getting sessions and its
restarted successor starts getting them. The token travels only through Ray,
never through a file, a command line or a log line.

Actors belong to the job that started them: they end when it ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentenv import registry
from agentenv.addresses import (  # the clients' side: where a directory is, what it lists
    RAY_SCHEME,
    _directory,  # noqa: F401 - kept here for callers of ray_servers._directory
    directory_url,
    is_directory_url,
    lookup,
    lookup_sync,
    parse_directory_url,
)
from agentenv.server_process import ServerProcess

SCHEME = RAY_SCHEME
NAMESPACE = "agentenv"

__all__ = ["NAMESPACE", "SCHEME", "RayServers", "Resources", "ServerDirectory", "ServerReplica", "cluster_address",
           "directory_url", "is_directory_url", "lookup", "lookup_sync", "parse_directory_url", "ray_env_servers"]


# -- the actors ------------------------------------------------------------------------------------

class ServerReplica:
    """One ``agentenv serve`` process on this node. Exits with its server, so Ray restarts both."""

    def __init__(self, name: str, token: str, options: Mapping[str, Any] | None = None,
                 max_sessions: int | None = None, timeout: float = 300.0) -> None:
        import ray

        self.node_id = ray.get_runtime_context().get_node_id()
        host = ray.util.get_node_ip_address()
        self.server = ServerProcess(name, host=host, token=token, options=options, max_sessions=max_sessions)
        self._stopping = False
        launched = threading.Event()

        def keep() -> None:  # the server's parent thread (its death signal is tied to it): lives as long as it
            try:
                self.server.launch()
            finally:
                launched.set()
            assert self.server.proc is not None
            self.server.proc.wait()
            if self.server.url is not None and not self._stopping:
                os._exit(1)  # the server died after it served: take the actor down with it, Ray restarts both

        threading.Thread(target=keep, daemon=True, name=f"replica-{name}").start()
        launched.wait()
        try:
            self.url = self.server.wait_ready(timeout)
        except (RuntimeError, TimeoutError) as e:  # a constructor error: Ray does not restart it
            raise RuntimeError(self.server.why_not_started(e)) from None

    def describe(self) -> dict[str, Any]:
        assert self.server.proc is not None
        return {"url": self.url, "node_id": self.node_id, "pid": self.server.proc.pid, "actor_pid": os.getpid()}

    def restart(self) -> None:
        """Kill the server (SIGKILL: a hung one ignores SIGTERM); the actor exits with it, Ray restarts both."""
        assert self.server.proc is not None
        self.server.proc.kill()

    def stop(self) -> None:
        self._stopping = True
        self.server.stop()


@dataclass
class _Slot:
    env: str
    handle: Any
    url: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    live: bool = False
    dead: str | None = None  # why Ray gave up on it
    failures: int = 0
    starts: int = 0


class ServerDirectory:
    """Knows every replica of the run, probes them, and tells clients the live ones and the token."""

    def __init__(self, token: str, interval: float = 2.0, hung_after: int = 3) -> None:
        self._token = token
        self.interval, self.hung_after = interval, hung_after
        self.slots: list[_Slot] = []
        self._watchers: list[asyncio.Task] = []
        self._http: Any = None

    async def register(self, env: str, handles: Sequence[Any]) -> None:
        import httpx

        if self._http is None:
            self._http = httpx.AsyncClient(timeout=5.0)  # a loaded node answers late, not never
        for h in handles:
            slot = _Slot(env, h)
            self.slots.append(slot)
            self._watchers.append(asyncio.create_task(self._watch(slot)))  # one each: a slow one delays no other

    async def lookup(self, env: str) -> tuple[list[str], str]:
        """The live replicas of ``env`` and the run's token (a client's one question)."""
        return [s.url for s in self.slots if s.env == env and s.live and s.url], self._token

    async def status(self) -> list[dict[str, Any]]:
        return [{"env": s.env, "url": s.url, "live": s.live, "dead": s.dead, "starts": s.starts, **s.info}
                for s in self.slots]

    async def wait_live(self, timeout: float) -> dict[str, list[str]]:
        """Every replica live (or, for one Ray gave up on, the reason), within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            dead = [s for s in self.slots if s.dead]
            if dead:
                raise RuntimeError(f"the {dead[0].env} server replica could not start: {dead[0].dead}")
            if all(s.live for s in self.slots):
                out: dict[str, list[str]] = {}
                for s in self.slots:
                    out.setdefault(s.env, []).append(str(s.url))
                return out
            if time.monotonic() > deadline:
                late = sorted({s.env for s in self.slots if not s.live})
                raise TimeoutError(f"server replicas of {', '.join(late)} not live within {timeout:.0f}s")
            await asyncio.sleep(0.2)

    async def _watch(self, slot: _Slot) -> None:
        while slot.dead is None:
            await self._check(slot)
            await asyncio.sleep(self.interval)

    async def _check(self, slot: _Slot) -> None:
        import ray

        if slot.url is not None and await self._healthy(slot):
            slot.live, slot.failures = True, 0
            return
        slot.live = False
        try:  # where does its server listen now? (a restarted actor answers once its server is up)
            info = await asyncio.wait_for(slot.handle.describe.remote(), timeout=max(30.0, 10 * self.interval))
        except ray.exceptions.ActorDiedError as e:  # out of restarts, or its constructor failed
            slot.dead = _first_line(e)
            return
        except (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError, asyncio.TimeoutError):
            slot.url = None  # restarting: ask again next round
            return
        if info["actor_pid"] != slot.info.get("actor_pid"):  # new, or restarted since the last look
            slot.url, slot.info, slot.failures = info["url"], info, 0
            slot.starts += 1
            slot.live = await self._healthy(slot)
            return
        slot.failures += 1  # the same actor, its server not answering
        if slot.failures >= self.hung_after:  # hung: restart it
            slot.handle.restart.remote()
            slot.url, slot.failures = None, 0

    async def _healthy(self, slot: _Slot) -> bool:
        try:
            resp = await self._http.get(f"{slot.url}/health")
            return resp.status_code == 200 and resp.json().get("env") == slot.env
        except Exception:
            return False


def _first_line(e: BaseException) -> str:
    lines = [x.strip() for x in str(e).splitlines() if x.strip() and not x.startswith("Traceback")]
    errors = [x for x in lines if "Error" in x and ":" in x]
    return (errors[-1] if errors else lines[0] if lines else type(e).__name__)[:500]


# -- the driver's side -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Resources:
    """What one replica asks Ray for: the environment's declaration (``server_cpus``, ``server_memory_mb``)."""

    cpus: float = 1.0
    memory_mb: int | None = None

    @classmethod
    def of(cls, name: str) -> Resources:
        env = registry.load(name)
        return cls(float(getattr(env, "server_cpus", 1.0)), getattr(env, "server_memory_mb", None))

    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = {"num_cpus": self.cpus}
        if self.memory_mb:
            opts["memory"] = int(self.memory_mb) * 2**20
        return opts


class RayServers:
    """The replicas of one run (started by :meth:`start`, all gone after :meth:`stop`)."""

    def __init__(self, names: Sequence[str], replicas: int = 1, *,
                 options: Mapping[str, Mapping[str, Any]] | None = None, max_sessions: int | None = None,
                 health_interval: float = 2.0, max_restarts: int = 10, namespace: str = NAMESPACE) -> None:
        self.names, self.replicas = list(dict.fromkeys(names)), int(replicas)
        self.options, self.max_sessions = dict(options or {}), max_sessions
        self.health_interval, self.max_restarts = health_interval, max_restarts
        self.namespace = namespace
        self.directory_name = f"servers-{uuid.uuid4().hex[:12]}"
        self.directory: Any = None
        self.handles: list[Any] = []
        self._token = secrets.token_urlsafe(32)

    @property
    def urls(self) -> dict[str, list[str]]:
        """One directory URL per environment: what clients are given."""
        return {n: [directory_url(self.namespace, self.directory_name, n)] for n in self.names}

    def start(self, timeout: float = 300.0) -> dict[str, list[str]]:
        """Place and start every replica; return the URLs they serve on (once all are live)."""
        import ray

        directory_cls = ray.remote(ServerDirectory).options(
            name=self.directory_name, namespace=self.namespace, num_cpus=0, max_concurrency=1000)
        self.directory = directory_cls.remote(self._token, self.health_interval)
        for name in self.names:
            replica = ray.remote(ServerReplica).options(
                **Resources.of(name).options(), scheduling_strategy="SPREAD", max_restarts=self.max_restarts,
                max_concurrency=4)
            handles = [replica.remote(name, self._token, self.options.get(name), self.max_sessions)
                       for _ in range(self.replicas)]
            self.handles += handles
            ray.get(self.directory.register.remote(name, handles))
        try:
            return ray.get(self.directory.wait_live.remote(timeout))
        except ray.exceptions.RayTaskError as e:  # the directory's own error, without Ray's wrapping
            raise RuntimeError(str(e.cause) if e.cause is not None else _first_line(e)) from None

    def stop(self) -> None:
        import ray

        stops = [h.stop.remote() for h in self.handles]
        with contextlib.suppress(Exception):
            ray.wait(stops, num_returns=len(stops), timeout=15)
        for h in [*self.handles, self.directory]:
            if h is not None:
                with contextlib.suppress(Exception):
                    ray.kill(h, no_restart=True)
        self.handles, self.directory = [], None


@contextlib.contextmanager
def ray_env_servers(names: Sequence[str], replicas: int = 1, *, address: str | None = None,
                    init_kwargs: Mapping[str, Any] | None = None, timeout: float = 300.0,
                    **kwargs: Any) -> Iterator[RayServers]:
    """Replicas of ``names`` on the Ray cluster at ``address`` (None: a local one started here, with
    ``init_kwargs``), stopped on exit however it comes."""
    try:
        import ray
    except ModuleNotFoundError:
        raise RuntimeError("the ray server backend needs Ray: pip install 'agentenv[ray]'") from None

    started_ray = not ray.is_initialized()
    if started_ray:
        ray.init(address=address, **({} if address else dict(init_kwargs or {})), include_dashboard=False,
                 log_to_driver=False, logging_level="WARNING")
    servers = RayServers(names, replicas, **kwargs)
    try:
        servers.start(timeout)
        yield servers
    finally:
        servers.stop()
        if started_ray:
            ray.shutdown()


def cluster_address() -> str:
    """The GCS address of the cluster this process is connected to (for another driver to join)."""
    import ray

    return ray.get_runtime_context().gcs_address
