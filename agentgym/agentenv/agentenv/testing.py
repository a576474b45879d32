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

