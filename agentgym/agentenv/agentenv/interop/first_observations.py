"""Tasks' first observations from a server that cannot list them (AgentGym's, OpenEnv's): one session, reset task
after task, closed at the end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


async def first_observations(client: Any, split: str, ids: Sequence[int]) -> list[tuple[int, str]]:
    """``[(task_id, first observation), ...]`` for ``ids`` of ``split``, through ``client``'s ``create``, ``reset``
    and ``close`` (the interface of :class:`agentenv.client.AsyncEnvClient`)."""
    out: list[tuple[int, str]] = []
    if not ids:
        return out
    first = await client.create(ids[0], split)
    try:
        out.append((ids[0], first.observation))
        for task_id in ids[1:]:
            out.append((task_id, (await client.reset(first.env_id, task_id, split)).observation))
    finally:
        await client.close(first.env_id)
    return out
