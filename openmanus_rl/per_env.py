"""Settings that may differ per environment: one value for all, or a mapping from environment names to values.

A multi-environment run's environments want different limits: AgentGym's own scripts give each its turn limit
(``max_round``: maze 15, textcraft 20, alfworld 30) and their replies differ tenfold (babyai's expert says a dozen
tokens, textcraft's up to ~180), and a failing episode costs its turn limit times its reply budget. So a turn
limit or a reply budget may be written either way::

    max_turns: 20                                      # every environment
    max_turns: {maze: 15, alfworld: 30, default: 20}   # per environment; ``default`` for the rest

A mapping without ``default`` must name every environment of the run. It may name environments the run does not
have (a model preset's mapping serves any subset of its environments), but only installed ones: a typo would
otherwise silently leave that environment at its default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from agentenv import registry

DEFAULT = "default"


def plain(value: Any) -> Any:
    """An OmegaConf node as plain Python (dicts and lists); anything else unchanged."""
    return OmegaConf.to_container(value) if isinstance(value, DictConfig | ListConfig) else value


def is_per_env(value: Any) -> bool:
    return isinstance(plain(value), Mapping)


def value_for(value: Any, env: str, what: str) -> Any:
    """The setting for ``env``: the value itself, or its mapping's entry (else ``default``)."""
    value = plain(value)
    if not isinstance(value, Mapping):
        return value
    if env in value:
        return value[env]
    if DEFAULT in value:
        return value[DEFAULT]
    raise ValueError(f"{what} gives no value for {env!r} and no {DEFAULT!r} (it names {', '.join(map(str, value))})")


def check(value: Any, envs: Sequence[str], what: str) -> dict[str, Any]:
    """Each environment's setting; a mapping naming an environment that is neither the run's nor installed, or
    leaving one of the run's out without a ``default``, is a ValueError."""
    value = plain(value)
    if isinstance(value, Mapping):
        known = {*envs, *registry.names()}
        unknown = sorted(str(k) for k in value if k != DEFAULT and k not in known)
        if unknown:
            raise ValueError(f"{what} names {', '.join(unknown)}, neither an environment of this run "
                             f"({', '.join(envs)}) nor an installed one")
    return {env: value_for(value, env, what) for env in envs}


def positive_ints(value: Any, envs: Sequence[str], what: str, optional: bool = False) -> dict[str, int | None]:
    """:func:`check` for a count (a turn limit, a reply budget): each a positive int (or None if ``optional``)."""
    return _ints(value, envs, what, 1, optional)


def non_negative_ints(value: Any, envs: Sequence[str], what: str) -> dict[str, int]:
    """:func:`check` for an index (the first task of a range): each an int of at least 0."""
    return _ints(value, envs, what, 0, False)  # type: ignore[return-value]


def _ints(value: Any, envs: Sequence[str], what: str, least: int, optional: bool) -> dict[str, int | None]:
    out: dict[str, int | None] = {}
    for env, v in check(value, envs, what).items():
        if v is None and optional:
            out[env] = None
            continue
        if isinstance(v, bool) or not isinstance(v, int) or v < least:
            kind = "a positive int" if least == 1 else f"an int of at least {least}"
            raise ValueError(f"{what} for {env} must be {kind}, not {v!r}")
        out[env] = v
    return out
