"""Helpers for environment authors' tests: a real server on loopback, in a thread."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from agentenv.env import Environment
from agentenv.server import ServerConfig, bind_socket, create_app, run_event_loop


@contextlib.contextmanager
def serve_in_thread(env_cls: type[Environment], config: ServerConfig | None = None,
                    host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``env_cls`` over real HTTP on a free port for the duration of the block."""
    import uvicorn

    sock = bind_socket(host, 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(env_cls, config), log_level="error", access_log=False))

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
