"""The one way to start, health-check and stop environment servers.

Used by ``agentenv play``, ``train_ppo.sh``, ``train_agentevol.sh``, the dataset builder and
``agentenv-eval``: each server is its own ``agentenv serve`` process
(:class:`~agentenv.server_process.ServerProcess`; environments never share one), bound to a free
loopback port, and dies with its parent even if the parent is killed. Servers someone else started
(another machine, a cluster) are given as ``NAME=URL`` (read by :mod:`agentenv.addresses`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx

from agentenv import addresses, registry
from agentenv.addresses import ServerError, parse_server_specs
from agentenv.client import EnvClient, EnvPool
from agentenv.errors import AgentEnvError, ServerUnavailable
from agentenv.interop.openenv_client import OpenEnvAddress
from agentenv.protocol import InfoResponse
from agentenv.ray_servers import ray_env_servers
from agentenv.server_process import ServerProcess

__all__ = ["BACKENDS", "ServerError", "ServerProcess", "check_servers", "env_servers", "parse_option_specs",
           "parse_server_specs", "server_info"]


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
    for name, urls in servers.items():
        for url in urls:
            if addresses.is_directory_url(url):  # a directory of replicas: check the live ones, with its token
                try:
                    live, run_token = addresses.lookup_sync(url)
                except AgentEnvError as e:
                    raise ServerError(f"server {name}={url} is unreachable: {e}") from e
                if not live:
                    raise ServerError(f"server {name}={url} has no live replica")
                check_servers({name: live}, run_token)
                continue
            try:
                if addresses.is_agentgym_url(url):  # an AgentGym server tells no name: it answers GET / at its base
                    base, _ = addresses.split_url(url)
                    httpx.get(base + "/", timeout=10.0).raise_for_status()
                    continue
                if addresses.is_openenv_url(url):  # neither does an OpenEnv server: its /health and /schema answer
                    address = OpenEnvAddress.parse(url)
                    headers = {"Authorization": f"Bearer {token}"} if token else {}
                    for route in ("/health", "/schema"):
                        httpx.get(address.http + route, headers=headers, timeout=10.0).raise_for_status()
                    continue
                with EnvClient(url, token=token, timeout=10.0, retries=1) as client:
                    served = client.health().get("env")
            except (AgentEnvError, httpx.HTTPError, ValueError) as e:
                raise ServerError(f"server {name}={url} is unreachable: {e}") from e
            if served != name:
                raise ServerError(f"server {name}={url} serves {served!r}, not {name!r}")


def server_info(urls: Sequence[str], token: str | None = None, timeout: float = 30.0) -> InfoResponse:
    """The environment's metadata from its servers, whatever their kind: the replica pool reads every kind of
    address (``/info`` of a server, of a live replica behind a directory, what the inbound adapter states for an
    AgentGym server). A server that does not answer is a :class:`ServerError` (one line for the user)."""
    async def ask() -> InfoResponse:
        async with EnvPool(list(urls), token=token, timeout=timeout) as pool:
            return await pool.info()

    try:
        return asyncio.run(ask())
    except ServerUnavailable as e:
        raise ServerError(f"{', '.join(urls)}: {e}") from None


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
