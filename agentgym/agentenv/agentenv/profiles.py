"""Profiles: another rule set of one environment, chosen per server with ``--option profile=NAME``.

An environment's own task set and settings are its ``native`` profile (what the CPU demos and tests
train on). A profile reproduces someone else's version of the same environment, e.g. ``agentgym``:
AgentGym's task for each upstream index, its text, actions, turn limit and reward, so results
compare with the AgentGym papers and ``--compat agentgym`` serves upstream index N as upstream's
task N. A profile is an Environment class of its own (its metadata differ: turn limit, instruction,
task counts), with the same ``name``; the environment lists it in ``profiles``, loaded on demand.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from agentenv.env import Environment

#: the option key that chooses a profile; the runtime takes it out before the environment's Options parse
PROFILE_KEY = "profile"
NATIVE = "native"


def available(env_cls: type[Environment]) -> list[str]:
    """The profiles ``env_cls`` (an environment's native class) can serve."""
    return [NATIVE, *env_cls.profiles]


def resolve(env_cls: type[Environment], profile: str | None) -> type[Environment]:
    """The class serving ``profile`` of the environment whose native class is ``env_cls``."""
    if profile in (None, "", NATIVE, env_cls.profile):
        return env_cls
    target = env_cls.profiles.get(str(profile))
    if target is None:
        raise ValueError(f"{env_cls.name} has no profile {profile!r}; it has: {', '.join(available(env_cls))}")
    module, _, attr = target.partition(":")
    cls = getattr(import_module(module), attr)
    if not (isinstance(cls, type) and issubclass(cls, Environment)) or cls.name != env_cls.name:
        raise TypeError(f"profile {profile!r} of {env_cls.name} names {target}, not an Environment named "
                        f"{env_cls.name!r}")
    if cls.profile != profile:
        raise TypeError(f"{target} declares profile {cls.profile!r}, listed as {profile!r}")
    return cls


def split_options(env_cls: type[Environment], raw: Mapping[str, Any]) -> tuple[type[Environment], dict[str, Any]]:
    """The profile's class and the options left for its ``Options`` model."""
    rest = dict(raw)
    return resolve(env_cls, rest.pop(PROFILE_KEY, None)), rest
