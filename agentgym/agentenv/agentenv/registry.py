"""Environment discovery through Python entry points.

An environment package declares ``[agentenv.envs] NAME = module:Class``; this module
is the only list of environments the project has.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from agentenv.env import Environment

ENTRY_POINT_GROUP = "agentenv.envs"


class UnknownEnvironment(KeyError):
    def __str__(self) -> str:  # KeyError quotes its message; we want it readable
        return str(self.args[0])


def _entry_points() -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def names() -> list[str]:
    """Installed environment names, sorted."""
    return sorted(_entry_points())


def entry_point(name: str) -> EntryPoint:
    eps = _entry_points()
    if name not in eps:
        known = ", ".join(sorted(eps)) or "none"
        raise UnknownEnvironment(f"unknown environment {name!r}; installed: {known} (install its package, "
                                 f"e.g. pip install -e agentgym/agentenv-{name}, or give a running server "
                                 f"with --server {name}=URL)")
    return eps[name]


@cache
def load(name: str) -> type[Environment]:
    """The Environment class registered under ``name``."""
    cls = entry_point(name).load()
    if not (isinstance(cls, type) and issubclass(cls, Environment)):
        raise TypeError(f"entry point {name!r} does not name an agentenv.Environment subclass: {cls!r}")
    if getattr(cls, "name", None) != name:
        raise TypeError(f"entry point {name!r} loads {cls.__name__} whose name is {getattr(cls, 'name', None)!r}")
    return cls


def parse_names(spec: str, remote: Iterable[str] = ()) -> list[str]:
    """``"maze,wordle"`` or ``"all"`` -> a list of names, each installed here unless it is one of
    ``remote`` (served by a server someone else started)."""
    if spec.strip() == "all":
        return names()
    out = list(dict.fromkeys(s.strip() for s in spec.split(",") if s.strip()))
    if not out:
        raise UnknownEnvironment(f"{spec!r} names no environment; installed: {', '.join(names()) or 'none'}")
    remote = set(remote)
    for n in out:
        if n not in remote:
            entry_point(n)
    return out
