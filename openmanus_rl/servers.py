"""Environment servers for a training or evaluation run: start, health-check, stop.

One group of replicas per environment, each replica its own `agentenv serve` process on a
free loopback port, stopped whatever way the run ends. ``--server NAME=URL`` style
mappings let a run use servers someone else started (another machine, a cluster).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

from agentenv.client import EnvClient
from agentenv.launcher import ServerProcess


def parse_server_args(items: Sequence[str]) -> dict[str, list[str]]:
    """``["maze=http://h:1", "maze=http://h:2"]`` -> ``{"maze": [url, url]}``."""
    out: dict[str, list[str]] = {}
    for item in items:
        name, sep, url = item.partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            raise ValueError(f"--server takes NAME=URL (e.g. maze=http://127.0.0.1:8000), got {item!r}")
        out.setdefault(name.strip(), []).append(url.strip())
    return out


def check_health(servers: Mapping[str, Sequence[str]], token: str | None = None) -> None:
    """Every URL answers /health for the environment it is listed under."""
    for name, urls in servers.items():
        for url in urls:
            with EnvClient(url, token=token, retries=2, timeout=10) as c:
                got = c.health()["env"]
            if got != name:
                raise RuntimeError(f"server {url} serves {got!r}, not {name!r}")


@contextlib.contextmanager
def env_servers(names: Sequence[str], replicas: int = 1, given: Mapping[str, Sequence[str]] | None = None,
                token: str | None = None, max_sessions: int | None = None) -> Iterator[dict[str, list[str]]]:
    """URLs per environment: the given ones, plus ``replicas`` started here for the rest."""
    given = {k: list(v) for k, v in (given or {}).items()}
    procs = [ServerProcess(n, token=token, max_sessions=max_sessions) for n in names if n not in given
             for _ in range(replicas)]
    try:
        for p in procs:
            p.launch()
        urls: dict[str, list[str]] = {n: list(given[n]) for n in names if n in given}
        for p in procs:
            urls.setdefault(p.name, []).append(p.wait_ready())
        check_health(urls, token)
        yield urls
    finally:
        for p in procs:
            p.stop()
