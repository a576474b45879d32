"""The one way to start, health-check and stop environment servers, and to read ``NAME=URL``.

Used by ``agentenv play``, ``train_ppo.sh``, ``train_agentevol.sh``, the dataset builder and
``openmanus-eval``: each server is its own ``agentenv serve`` process (environments never share
one), bound to a free loopback port, and dies with its parent even if the parent is killed.
Servers someone else started (another machine, a cluster) are given as ``NAME=URL``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv import registry
from agentenv.errors import AgentEnvError
from agentenv.protocol import InfoResponse

_LISTENING = "listening on "


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class ServerProcess:
    """One ``agentenv serve NAME`` child process; ``start()`` returns its URL."""

    def __init__(self, name: str, *, host: str = "127.0.0.1", port: int = 0, max_sessions: int | None = None,
                 session_ttl: float | None = None, token: str | None = None, extra_args: Sequence[str] = (),
                 options: Mapping[str, Any] | None = None, python: str = sys.executable,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.args = [python, "-m", "agentenv", "serve", name, "--host", host, "--port", str(port)]
        if max_sessions is not None:
            self.args += ["--max-sessions", str(max_sessions)]
        if session_ttl is not None:
            self.args += ["--session-ttl", str(session_ttl)]
        for key, value in (options or {}).items():
            self.args += ["--option", f"{key}={value}"]
        self.args += list(extra_args)
        self.env = {**os.environ, **(env or {})}
        if token:
            self.env["AGENTENV_TOKEN"] = token
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server (stop removes it)
            prefix=f"agentenv-{name}-", suffix=".log", delete=False)

    @property
    def log_path(self) -> Path:
        return Path(self._log.name)

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def launch(self) -> None:
        """Spawn the process without waiting. The server is tied to the *thread* that
        spawns it (Linux parent-death signal), so spawn from a long-lived thread."""
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL,
                                     env=self.env, text=True, preexec_fn=_die_with_parent)
        self._found: list[str] = []
        self._ready = threading.Event()

        def pump() -> None:  # read until the announcement, then keep draining the pipe
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                if not self._found and line.startswith(_LISTENING):
                    self._found.append(line[len(_LISTENING):].strip())
                    self._ready.set()
            self._ready.set()

        threading.Thread(target=pump, daemon=True, name=f"pump-{self.name}").start()

    def wait_ready(self, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.1):
            if time.monotonic() > deadline:
                tail = self.log_tail()
                self.stop()
                raise TimeoutError(f"server {self.name} did not start within {timeout:.0f}s\n{tail}")
        if not self._found:
            assert self.proc is not None
            code = self.proc.wait()
            raise RuntimeError(f"server {self.name} exited with code {code} before listening\n{self.log_tail()}")
        self.url = self._found[0]
        return self.url

    def why_not_started(self, error: BaseException) -> str:
        """One line for the user after :meth:`wait_ready` failed: a server that refused its arguments
        (exit 2) said why on its last log line; otherwise the error itself."""
        if self.proc is not None and self.proc.poll() == 2:
            lines = [x for x in self.log_tail().splitlines() if x.strip()]
            if lines:
                return lines[-1]
        return str(error)

    def start(self, timeout: float = 120.0) -> str:
        self.launch()
        return self.wait_ready(timeout)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)  # read it (log_tail) before stopping, if it matters

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ServerError(RuntimeError):
    """A server that could not be started, reached, or that serves another environment: one line
    for the user (commands print it and exit with status 2)."""


def parse_server_specs(items: Sequence[str]) -> dict[str, list[str]]:
    """``["maze=http://h:1", "maze=http://h:2"]`` -> ``{"maze": [url, url]}`` (replicas in order).

    ``NAME=agentgym+http://HOST:PORT[/prefix]`` is an original AgentGym server of NAME (its own routes,
    driven by ``agentenv.interop.agentgym``); its URL is kept as ``agentgym+http://...#NAME``.
    """
    from agentenv.ray_servers import is_directory_url, parse_directory_url

    out: dict[str, list[str]] = {}
    for item in items:
        name, sep, url = item.partition("=")
        name, url = name.strip(), url.strip().rstrip("/")
        if sep and name and is_directory_url(url):  # the replicas of a running job on Ray
            try:
                parse_directory_url(url)
            except ValueError as e:
                raise ServerError(str(e)) from None
            out.setdefault(name, []).append(url)
            continue
        upstream = url.startswith("agentgym+")
        plain = url.removeprefix("agentgym+").split("#", 1)[0].rstrip("/")
        if not sep or not name or not plain.startswith(("http://", "https://")) or not plain.split("://", 1)[1]:
            raise ServerError(f"--server takes NAME=URL (e.g. maze=http://127.0.0.1:8000, or "
                              f"webshop=agentgym+http://127.0.0.1:36001 for an AgentGym server), not {item!r}")
        out.setdefault(name, []).append(f"agentgym+{plain}#{name}" if upstream else plain)
    return out


def parse_option_specs(items: Sequence[str]) -> dict[str, dict[str, str]]:
    """``["webshop.data=/x", "sqlgym.timeout=2"]`` -> ``{"webshop": {"data": "/x"}, ...}``."""
    out: dict[str, dict[str, str]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        name, dot, option = key.strip().partition(".")
        if not sep or not dot or not name or not option:
            raise ServerError(f"--option takes NAME.KEY=VALUE (e.g. webshop.data_path=/data/webshop), not {item!r}")
        out.setdefault(name, {})[option] = value
    return out


def check_servers(servers: Mapping[str, Sequence[str]], token: str | None = None) -> None:
    """Every URL answers ``/health`` for the environment it is listed under."""
    import httpx

    from agentenv.client import EnvClient
    from agentenv.interop.agentgym import is_agentgym_url, split_url
    from agentenv.ray_servers import is_directory_url, lookup_sync

    for name, urls in servers.items():
        for url in urls:
            if is_directory_url(url):  # a directory of replicas: check the live ones, with its token
                try:
                    live, run_token = lookup_sync(url)
                except AgentEnvError as e:
                    raise ServerError(f"server {name}={url} is unreachable: {e}") from e
                if not live:
                    raise ServerError(f"server {name}={url} has no live replica")
                check_servers({name: live}, run_token)
                continue
            try:
                if is_agentgym_url(url):  # an AgentGym server tells no name: it answers GET / at its base
                    base, _ = split_url(url)
                    httpx.get(base + "/", timeout=10.0).raise_for_status()
                    continue
                with EnvClient(url, token=token, timeout=10.0, retries=1) as client:
                    served = client.health().get("env")
            except (AgentEnvError, httpx.HTTPError, ValueError) as e:
                raise ServerError(f"server {name}={url} is unreachable: {e}") from e
            if served != name:
                raise ServerError(f"server {name}={url} serves {served!r}, not {name!r}")


def server_info(urls: Sequence[str], token: str | None = None, timeout: float = 30.0) -> InfoResponse:
    """``/info`` of an environment's servers: of the first URL, or of a live replica of a directory."""
    from agentenv.client import EnvClient, read_info
    from agentenv.ray_servers import is_directory_url, lookup_sync

    url = urls[0]
    if is_directory_url(url):
        live, token = lookup_sync(url)
        if not live:
            raise ServerError(f"{url} has no live replica")
        url = live[0]
    with EnvClient(url, token=token, timeout=timeout) as client:
        return read_info(client.info())


BACKENDS = ("local", "ray")


@contextlib.contextmanager
def env_servers(names: Sequence[str], replicas: int = 1, given: Mapping[str, Sequence[str]] | None = None, *,
                token: str | None = None, options: Mapping[str, Mapping[str, Any]] | None = None,
                max_sessions: int | None = None, timeout: float = 300.0, backend: str = "local",
                ray: Mapping[str, Any] | None = None) -> Iterator[dict[str, list[str]]]:
    """URLs per environment: the ``given`` ones (checked), plus ``replicas`` servers started for the
    rest (booting in parallel, each with ``options[name]``), all stopped on exit however it comes.

    ``backend="local"``: child processes on this machine, on loopback. ``backend="ray"``: Ray actors
    placed over the cluster (:mod:`agentenv.ray_servers`; ``ray`` holds its settings: ``address``,
    ``init_kwargs``, ``health_interval``, ``max_restarts``), given out as one directory URL each."""
    if backend not in BACKENDS:
        raise ServerError(f"unknown server backend {backend!r}; choose from {', '.join(BACKENDS)}")
    given = {k: list(v) for k, v in (given or {}).items() if k in names}
    missing = [n for n in dict.fromkeys(names) if n not in given]
    for name in missing:
        registry.entry_point(name)  # an unknown name fails here, before anything starts
    check_servers(given, token)
    if backend == "ray" and missing:
        from agentenv.ray_servers import ray_env_servers

        with contextlib.ExitStack() as stack:
            try:
                placed = stack.enter_context(ray_env_servers(
                    missing, replicas, options=options, max_sessions=max_sessions, timeout=timeout, **dict(ray or {})))
            except (RuntimeError, TimeoutError, ConnectionError) as e:  # ConnectionError: no cluster at the address
                raise ServerError(f"could not start the environment servers on Ray: {e}") from e
            yield {**{n: given[n] for n in names if n in given}, **placed.urls}
        return
    procs = [ServerProcess(n, token=token, max_sessions=max_sessions, options=(options or {}).get(n))
             for n in missing for _ in range(replicas)]
    try:
        for p in procs:
            p.launch()
        urls: dict[str, list[str]] = {n: given[n] for n in names if n in given}
        for p in procs:
            try:
                urls.setdefault(p.name, []).append(p.wait_ready(timeout))
            except (RuntimeError, TimeoutError) as e:
                raise ServerError(f"could not start the {p.name} server: {p.why_not_started(e)}") from e
        yield urls
    finally:
        for p in procs:
            p.stop()
