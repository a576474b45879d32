"""Start and stop environment servers as child processes (``agentenv serve``).

Used by ``agentenv play``, the trainers and the evaluator: each server is its own
process (environments never share one), bound to a free loopback port, and dies
with its parent even if the parent is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

_LISTENING = "listening on "


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class ServerProcess:
    """One ``agentenv serve NAME`` child process; ``start()`` returns its URL."""

    def __init__(self, name: str, *, host: str = "127.0.0.1", port: int = 0, max_sessions: int | None = None,
                 session_ttl: float | None = None, token: str | None = None, extra_args: Sequence[str] = (),
                 python: str = sys.executable, env: dict[str, str] | None = None) -> None:
        self.name = name
        self.args = [python, "-m", "agentenv", "serve", name, "--host", host, "--port", str(port)]
        if max_sessions is not None:
            self.args += ["--max-sessions", str(max_sessions)]
        if session_ttl is not None:
            self.args += ["--session-ttl", str(session_ttl)]
        self.args += list(extra_args)
        self.env = {**os.environ, **(env or {})}
        if token:
            self.env["AGENTENV_TOKEN"] = token
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server
            prefix=f"agentenv-{name}-", suffix=".log", delete=False)

    @property
    def log_path(self) -> Path:
        return Path(self._log.name)

    def log_tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def launch(self) -> None:
        """Spawn the process without waiting. The server is tied to the *thread* that
        spawns it (Linux parent-death signal), so spawn from a long-lived thread."""
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=self._log, stdin=subprocess.DEVNULL,
                                     env=self.env, text=True, preexec_fn=_die_with_parent)
        self._found: list[str] = []
        self._ready = threading.Event()

        def pump() -> None:  # read until the announcement, then keep draining the pipe
            assert self.proc is not None and self.proc.stdout is not None
            for line in self.proc.stdout:
                if not self._found and line.startswith(_LISTENING):
                    self._found.append(line[len(_LISTENING):].strip())
                    self._ready.set()
            self._ready.set()

        threading.Thread(target=pump, daemon=True, name=f"pump-{self.name}").start()

    def wait_ready(self, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.1):
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"server {self.name} did not start within {timeout:.0f}s\n{self.log_tail()}")
        if not self._found:
            assert self.proc is not None
            code = self.proc.wait()
            raise RuntimeError(f"server {self.name} exited with code {code} before listening\n{self.log_tail()}")
        self.url = self._found[0]
        return self.url

    def start(self, timeout: float = 120.0) -> str:
        self.launch()
        return self.wait_ready(timeout)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def running_servers(name: str, replicas: int = 1, **kwargs) -> Iterator[list[str]]:
    """Start ``replicas`` servers of ``name`` (booting in parallel) and stop them all on exit."""
    servers = [ServerProcess(name, **kwargs) for _ in range(replicas)]
    try:
        for s in servers:
            s.launch()
        yield [s.wait_ready() for s in servers]
    finally:
        for s in servers:
            s.stop()
