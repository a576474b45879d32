"""Helpers for environment authors' tests: a real server on loopback, in a thread."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from agentenv.env import Environment, StepResult
from agentenv.server import ServerConfig, bind_socket, create_app, run_event_loop


@contextlib.contextmanager
def serve_in_thread(env_cls: type[Environment], config: ServerConfig | None = None,
                    host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``env_cls`` over real HTTP on a free port for the duration of the block."""
    with serve_app_in_thread(create_app(env_cls, config), host) as url:
        yield url


@contextlib.contextmanager
def serve_app_in_thread(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve any ASGI app (an environment's, a stand-in model endpoint) on a free loopback port."""
    import uvicorn

    sock = bind_socket(host, 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", access_log=False))

    thread = threading.Thread(target=lambda: run_event_loop(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def play_in_process(env: Environment, task_id: int, split: str, policy: Callable[[Environment], str],
                    max_turns: int | None = None) -> tuple[float, list[StepResult]]:
    """One episode without a server, under the runtime's rules (truncation at ``max_turns``,
    default the class's): the reward sum and every step's result."""
    env.reset(task_id, split)  # type: ignore[arg-type]
    results: list[StepResult] = []
    for _ in range(max_turns or env.max_turns):
        results.append(env.step(policy(env)))
        if results[-1].done:
            break
    return sum(r.reward for r in results), results


def expert_steps(client: Any, env_id: str, max_steps: int = 1000) -> list[Any]:
    """Play the server's expert to the end of a session's episode over HTTP (an
    :class:`agentenv.client.EnvClient`); every expert turn must come with a thought. The steps."""
    steps = []
    for _ in range(max_steps):
        suggestion = client.suggest(env_id, "expert")
        assert suggestion.thought, "the expert gave no thought"
        steps.append(client.step(env_id, suggestion.action))
        if steps[-1].done:
            return steps
    raise AssertionError(f"the expert did not finish within {max_steps} steps")



def tree_rss(pid: int) -> int:
    """Resident memory of a process and every process under it (simulators, JVMs), in bytes."""
    import psutil

    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        with contextlib.suppress(psutil.NoSuchProcess):
            total += child.memory_info().rss
    return total


async def create_close_cycles(client: Any, n: int, n_tasks: int, width: int = 16,
                              progress: Callable[[int], None] | None = None) -> None:
    """``n`` sessions through a server (an :class:`agentenv.client.AsyncEnvClient`), ``width`` at a time:
    create on a train task, one step, close. What a per-session leak would show up over."""
    import asyncio

    async def one(k: int) -> None:
        created = await client.create(k % n_tasks, "train")
        actions = await client.available_actions(created.env_id)
        await client.step(created.env_id, actions[k % len(actions)] if actions else "look")
        await client.close(created.env_id)

    for start in range(0, n, width):
        batch = range(start, min(n, start + width))
        await asyncio.gather(*(one(k) for k in batch))
        if progress is not None:
            progress(len(batch))
