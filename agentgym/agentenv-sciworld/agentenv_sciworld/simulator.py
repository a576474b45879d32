"""One ScienceWorld simulator (one JVM) whose process belongs to the session that started it.

``scienceworld.ScienceWorldEnv`` starts its JVM with py4j's ``launch_gateway`` (a plain ``Popen``):
the JVM dies when the Python process closes its stdin, but it sits in the server's process group and
the runtime cannot see it. Here the same JVM (py4j's ``GatewayServer`` with the bundled
``scienceworld.jar`` on the classpath, ``--die-on-broken-pipe``) is started with
:func:`agentenv.processes.spawn` instead, so the runtime kills it when the session is closed, expires
or overruns a step, and the kernel kills it when the server dies, even by SIGKILL. Everything else is
``ScienceWorldEnv``'s own code (``load``, ``look``, gold paths, valid actions), inherited unchanged.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import weakref
from collections.abc import Sequence
from typing import IO, Any

from py4j.java_gateway import CallbackServerParameters, GatewayParameters, JavaGateway, find_jar_path
from scienceworld import ScienceWorldEnv
from scienceworld.constants import BASEPATH, JAR_PATH

from agentenv import processes

#: a bounded heap and the serial collector: ~0.5 GB resident per session instead of up to 3 GB with
#: the JVM's defaults on a large machine (gold-path generation of the longest tasks fits in it)
DEFAULT_JAVA_OPTS: tuple[str, ...] = ("-Xmx512m", "-XX:+UseSerialGC")
#: what the simulator answers to input it cannot parse (no time passes)
UNKNOWN_ACTION_PREFIXES: tuple[str, ...] = ("No known action matches that input.", "Unknown action.")


class SimulatorError(RuntimeError):
    """The JVM could not be started or did not answer."""


def _drain(stream: IO[bytes]) -> None:
    """Read the JVM's stdout to its end, so its prints never fill the pipe and block it."""
    with contextlib.suppress(Exception):
        while stream.read(65536):
            pass
    with contextlib.suppress(Exception):
        stream.close()


def _kill(proc: subprocess.Popen) -> None:
    """Last resort for a simulator dropped without ``close()`` (garbage collection, interpreter exit)."""
    with contextlib.suppress(Exception):
        proc.kill()
        proc.wait(5)


class Simulator(ScienceWorldEnv):
    """``ScienceWorldEnv`` with a JVM owned by ``owner`` (an environment instance, see module doc)."""

    def __init__(self, owner: Any, jar_path: str | None = None, java: str = "java",
                 java_opts: Sequence[str] = DEFAULT_JAVA_OPTS, start_timeout: float = 120.0,
                 callback_server: bool = False) -> None:
        # no super().__init__(): it would launch a JVM of its own; the attributes its methods read are set here
        self._closed = False
        self._proc: subprocess.Popen | None = None
        java_bin = shutil.which(java)
        if java_bin is None:
            raise SimulatorError(f"no Java runtime found ({java!r} is not on PATH); install one, e.g. "
                                 "`apt-get install default-jre-headless` (setup.sh does it)")
        jar = jar_path or JAR_PATH
        if not os.path.isfile(jar):
            raise SimulatorError(f"ScienceWorld jar not found: {jar}")
        cmd = [java_bin, *java_opts, "-classpath", os.pathsep.join([find_jar_path(), jar]),
               "py4j.GatewayServer", "--die-on-broken-pipe", "0"]
        proc = self._proc = processes.spawn(owner, cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=subprocess.DEVNULL, cwd=BASEPATH)
        self._finalizer = weakref.finalize(self, _kill, proc)
        assert proc.stdout is not None
        watchdog = threading.Timer(start_timeout, _kill, args=(proc,))  # a JVM that never announces its port
        watchdog.daemon = True
        watchdog.start()
        try:
            line = proc.stdout.readline()
        finally:
            watchdog.cancel()
        try:
            port = int(line)
        except ValueError:
            self.close()
            raise SimulatorError(f"the ScienceWorld JVM did not start (said {line[:200]!r}); command: "
                                 f"{' '.join(cmd)}") from None
        threading.Thread(target=_drain, args=(proc.stdout,), daemon=True, name=f"sciworld-jvm-{proc.pid}").start()
        # no memory management: with it, a Python-side JavaObject collected by the garbage collector sends the JVM a
        # "delete" command from whichever thread collects it - the server's event loop too, which then hangs on a
        # stuck JVM before a step timeout can kill it (seen once in CI). The JVM lives only as long as its session.
        self._gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auto_field=True, auto_close=True,
                                                                         enable_memory_management=False),
                                    callback_server_parameters=CallbackServerParameters(port=0, daemonize=True)
                                    if callback_server else None, java_process=proc)
        if callback_server:  # as ScienceWorldEnv connects: the JVM then runs as upstream's (see agentgym_profile)
            server = self._gateway.java_gateway_server
            server.resetCallbackClient(server.getCallbackClient().getAddress(),
                                       self._gateway.get_callback_server().get_listening_port())
        self.server = self._gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()
        # what ScienceWorldEnv's methods expect to find
        self.taskName = ""
        self.variationIdx = 0
        self.simplificationStr = ""
        self.lastStepScore = 0
        self.envStepLimit = 1 << 30  # the runtime's max_turns bounds an episode, not the wrapper
        self.goldPathGenerated = False
        self.runHistories: dict = {}

    @property
    def pid(self) -> int | None:
        """The JVM's process id."""
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def act(self, action: str) -> tuple[str, int, bool]:
        """One simulator step: (observation, native score -100..100, completed). Unlike
        ``ScienceWorldEnv.step`` it does not also compute the look, inventory and the list of valid
        actions (which costs 100-300 ms a step): only what an episode needs."""
        observation = str(self.server.step(action))
        score = round(100 * float(self.server.getScore()))
        return observation, score, bool(self.server.getCompleted())

    def close(self) -> None:
        """Disconnect, close the JVM's stdin (it exits on EOF), and kill it if it lingers. Idempotent."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        gateway = getattr(self, "_gateway", None)
        if gateway is not None:
            with contextlib.suppress(Exception):
                gateway.shutdown()
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        try:
            proc.wait(3)
        except subprocess.TimeoutExpired:
            _kill(proc)
        self._finalizer.detach()

    def __del__(self) -> None:
        self.close()
