"""Process checks shared by the tests that stop servers, Ray actors or whole runs."""

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
