"""Process checks shared by the tests that stop servers, Ray actors or whole runs, and the environment-server
directories those runs leave (or must not leave) on a Ray cluster."""

from __future__ import annotations

import time

import psutil


def left_running(pids: set[int], timeout: float = 30.0) -> set[int]:
    """Those of ``pids`` still running (zombies count as gone) after up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        left = {p for p in pids if _running(p)}
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.5)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def server_directories() -> list[dict]:
    """The directory actors of ``agentenv.ray_servers`` (one per running ``env_servers`` on Ray) that the Ray
    cluster this process is connected to holds, in any job."""
    import ray

    from agentenv import ray_servers

    return [a for a in ray.util.list_named_actors(all_namespaces=True) if a["namespace"] == ray_servers.NAMESPACE]
