"""One ``agentenv serve NAME`` child process: started, announced, stopped.

The launcher (:func:`agentenv.launcher.env_servers`) and the Ray replicas
(:mod:`agentenv.ray_servers`) start their servers with it. A server dies with the thread that
started it, even if its whole process is killed (the parent-death signal of
:mod:`agentenv.processes`: SIGTERM, so it closes its sessions and their children first).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentenv import processes

_LISTENING = "listening on "


class ServerProcess:
    """One ``agentenv serve NAME`` child process; ``start()`` returns its URL."""

    def __init__(self, name: str, *, host: str = "127.0.0.1", port: int = 0, max_sessions: int | None = None,
                 session_ttl: float | None = None, token: str | None = None, extra_args: Sequence[str] = (),
                 options: Mapping[str, Any] | None = None, python: str = sys.executable,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.args = [python, "-m", "agentenv", "serve", name, "--host", host, "--port", str(port)]
        if max_sessions is not None:
            self.args += ["--max-sessions", str(max_sessions)]
        if session_ttl is not None:
            self.args += ["--session-ttl", str(session_ttl)]
        for key, value in (options or {}).items():
            self.args += ["--option", f"{key}={value}"]
        self.args += list(extra_args)
        self.env = {**os.environ, **(env or {})}
        if token:
            self.env["AGENTENV_TOKEN"] = token
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self._log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - lives as long as the server (stop removes it)
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
                                     env=self.env, text=True,
                                     preexec_fn=processes.die_with_parent_preexec(signal.SIGTERM))
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
                tail = self.log_tail()
                self.stop()
                raise TimeoutError(f"server {self.name} did not start within {timeout:.0f}s\n{tail}")
        if not self._found:
            assert self.proc is not None
            code = self.proc.wait()
            raise RuntimeError(f"server {self.name} exited with code {code} before listening\n{self.log_tail()}")
        self.url = self._found[0]
        return self.url

    def why_not_started(self, error: BaseException) -> str:
        """One line for the user after :meth:`wait_ready` failed: a server that refused its arguments
        (exit 2) said why on its last log line; otherwise the error itself."""
        if self.proc is not None and self.proc.poll() == 2:
            lines = [x for x in self.log_tail().splitlines() if x.strip()]
            if lines:
                return lines[-1]
        return str(error)

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
        self.log_path.unlink(missing_ok=True)  # read it (log_tail) before stopping, if it matters

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
