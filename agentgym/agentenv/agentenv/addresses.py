"""Where an environment's servers are: the one module that reads server addresses.

An environment's servers are named by URLs of four kinds:

- ``http://HOST:PORT`` (or ``https://``): one server speaking protocol v1 (:mod:`agentenv.client`);
- ``agentgym+http://HOST:PORT[/prefix]#NAME``: an original AgentGym server of NAME, driven through
  its own routes (:mod:`agentenv.interop.agentgym_client`);
- ``openenv+ws://HOST:PORT[/path][?settings]#NAME`` (or ``openenv+http://``): a server speaking OpenEnv's
  protocol, driven through its WebSocket sessions (:mod:`agentenv.interop.openenv_client`);
- ``agentenv+ray://NAMESPACE/DIRECTORY#NAME``: the replicas of a run on a Ray cluster
  (:mod:`agentenv.ray_servers`), behind a directory that :func:`lookup` asks for the live ones and
  their token.

Commands take them as ``NAME=URL`` (:func:`parse_server_specs`). Ray is imported only when a
directory is asked (importing it costs seconds).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from agentenv.errors import ServerUnavailable

HTTP_SCHEMES = ("http://", "https://")
AGENTGYM_SCHEME = "agentgym+"  # followed by an http(s) URL and #NAME
RAY_SCHEME = "agentenv+ray://"  # NAMESPACE/DIRECTORY#NAME
OPENENV_SCHEME = "openenv+"  # followed by a ws(s) or http(s) URL and #NAME
WS_SCHEMES = ("ws://", "wss://")


class ServerError(RuntimeError):
    """A server that could not be started, reached, or that serves another environment: one line
    for the user (commands print it and exit with status 2)."""


# -- directories of replicas on Ray ------------------------------------------------------------------


def directory_url(namespace: str, directory: str, env: str) -> str:
    return f"{RAY_SCHEME}{namespace}/{directory}#{env}"


def is_directory_url(url: str) -> bool:
    return url.startswith(RAY_SCHEME)


def parse_directory_url(url: str) -> tuple[str, str, str]:
    """``agentenv+ray://NS/DIR#NAME`` -> ``(NS, DIR, NAME)``."""
    rest = url.removeprefix(RAY_SCHEME)
    where, _, env = rest.partition("#")
    namespace, _, directory = where.partition("/")
    if not (url.startswith(RAY_SCHEME) and namespace and directory and env):
        raise ValueError(f"not a directory URL (agentenv+ray://NAMESPACE/DIRECTORY#NAME): {url!r}")
    return namespace, directory, env


_DIRECTORIES: dict[tuple[str, str], Any] = {}


def _directory(namespace: str, name: str) -> Any:
    """The directory actor (:class:`agentenv.ray_servers.ServerDirectory`) of a run."""
    import ray

    if not ray.is_initialized():  # a client outside the run's job (e.g. agentenv-eval): join the cluster
        ray.init(address=os.environ.get("RAY_ADDRESS", "auto"), log_to_driver=False, logging_level="WARNING")
    key = (namespace, name)
    if key not in _DIRECTORIES:
        try:
            _DIRECTORIES[key] = ray.get_actor(name, namespace=namespace)
        except ValueError as e:
            raise ServerUnavailable(f"no environment server directory {namespace}/{name} on this Ray cluster "
                                    f"(has its run ended?)") from e
    return _DIRECTORIES[key]


async def lookup(url: str) -> tuple[list[str], str]:
    """The live replica URLs behind a directory URL, and the token they want."""
    namespace, name, env = parse_directory_url(url)
    return await _directory(namespace, name).lookup.remote(env)


def lookup_sync(url: str) -> tuple[list[str], str]:
    import ray

    namespace, name, env = parse_directory_url(url)
    return ray.get(_directory(namespace, name).lookup.remote(env))


# -- original AgentGym servers -----------------------------------------------------------------------


def is_agentgym_url(url: str) -> bool:
    return url.startswith(AGENTGYM_SCHEME)


def split_url(url: str) -> tuple[str, str]:
    """``agentgym+http://h:p/maze#maze`` -> (``http://h:p/maze``, ``maze``)."""
    rest = url[len(AGENTGYM_SCHEME):] if is_agentgym_url(url) else url
    base, _, env = rest.partition("#")
    if not env:
        raise ValueError(f"an AgentGym server URL names its environment after '#': {AGENTGYM_SCHEME}http://HOST:PORT"
                         f"#NAME, not {url!r}")
    return base.rstrip("/"), env


# -- OpenEnv servers ---------------------------------------------------------------------------------


def is_openenv_url(url: str) -> bool:
    return url.startswith(OPENENV_SCHEME)


def split_openenv_url(url: str) -> tuple[str, str]:
    """``openenv+ws://h:p?train=8#word`` -> (``ws://h:p?train=8``, ``word``)."""
    base, _, env = url.removeprefix(OPENENV_SCHEME).partition("#")
    if not env or not base.startswith(WS_SCHEMES):
        raise ValueError(f"an OpenEnv server URL is {OPENENV_SCHEME}ws://HOST:PORT[/path]#NAME, not {url!r}")
    return base, env


def _openenv_base(url: str) -> str | None:
    """An ``openenv+`` URL's server part as ``ws(s)://...`` (http becomes ws), or None if it is not one."""
    rest = url.removeprefix(OPENENV_SCHEME).split("#", 1)[0]
    for http, ws in (("http://", "ws://"), ("https://", "wss://")):
        if rest.startswith(http):
            rest = ws + rest[len(http):]
    if not rest.startswith(WS_SCHEMES) or not rest.split("://", 1)[1].split("?", 1)[0].strip("/"):
        return None
    head, sep, query = rest.partition("?")
    return head.rstrip("/") + sep + query


# -- NAME=URL ----------------------------------------------------------------------------------------


def parse_server_specs(items: Sequence[str]) -> dict[str, list[str]]:
    """``["maze=http://h:1", "maze=http://h:2"]`` -> ``{"maze": [url, url]}`` (replicas in order).

    ``NAME=agentgym+http://HOST:PORT[/prefix]`` is an original AgentGym server of NAME (its own routes,
    driven by ``agentenv.interop.agentgym_client``); its URL is kept as ``agentgym+http://...#NAME``.
    ``NAME=agentenv+ray://NAMESPACE/DIRECTORY#NAME`` is the directory of a running job's replicas on Ray.
    ``NAME=openenv+ws://HOST:PORT[?settings]`` (or ``openenv+http://``) is a server speaking OpenEnv's protocol;
    its URL is kept as ``openenv+ws://...#NAME``.
    """
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
        if sep and name and is_openenv_url(url):  # a server speaking OpenEnv's protocol
            base = _openenv_base(url)
            if base is None:
                raise ServerError(f"--server takes NAME=openenv+ws://HOST:PORT for an OpenEnv server (or "
                                  f"openenv+http://...), not {item!r}")
            out.setdefault(name, []).append(f"{OPENENV_SCHEME}{base}#{name}")
            continue
        upstream = is_agentgym_url(url)
        plain = url.removeprefix(AGENTGYM_SCHEME).split("#", 1)[0].rstrip("/")
        if not sep or not name or not plain.startswith(HTTP_SCHEMES) or not plain.split("://", 1)[1]:
            raise ServerError(f"--server takes NAME=URL (e.g. maze=http://127.0.0.1:8000, "
                              f"webshop=agentgym+http://127.0.0.1:36001 for an AgentGym server, or "
                              f"echo=openenv+ws://127.0.0.1:8001 for an OpenEnv server), not {item!r}")
        out.setdefault(name, []).append(f"{AGENTGYM_SCHEME}{plain}#{name}" if upstream else plain)
    return out
