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
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
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


#: the JVM's log (warnings included) goes to stderr: by default a warning, e.g. a class archive it cannot use,
#: would come first on stdout, where the simulator reads the port the JVM listens on; a crash report goes to the
#: temporary directory, not to the JVM's working directory (the installed scienceworld package)
LOG_OPTS: tuple[str, ...] = ("-Xlog:disable", "-Xlog:all=warning:stderr",
                             f"-XX:ErrorFile={Path(tempfile.gettempdir()) / 'sciworld-jvm-crash-%p.log'}")
#: where class archives are kept (``$AGENTENV_SCIWORLD_CDS`` overrides; an empty value turns archives off)
CDS_DIR = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentenv-sciworld" / "cds"


class ClassArchive:
    """A dynamic class-data-sharing archive of the classes a ScienceWorld JVM loads (JDK 13+).

    Every session starts a JVM that parses and verifies the same Scala classes; with an archive it maps them
    instead (bench/sciworld_jvm.py on the 2-core machine: start 1.7 -> 1.2 s, 3.6 -> 2.6 s of CPU per JVM by the
    time a task is loaded; the archive is 12 MB).
    The first JVM to find none writes it when it exits (``-XX:ArchiveClassesAtExit``; one writer at a time, by
    a lock file), into a temporary file that :meth:`finish` renames once that JVM exited normally. The archive's
    name is a digest of the Java runtime, the classpath and the JVM options, all of which an archive is bound
    to. One of another runtime is ignored by the JVM (``-Xshare:auto``); one cut short crashes it, and
    :class:`Simulator` then deletes it (:meth:`discard`) and starts the JVM again without it."""

    def __init__(self, java_bin: str, classpath: Sequence[str], java_opts: Sequence[str],
                 directory: str | Path | None = None) -> None:
        given = os.environ.get("AGENTENV_SCIWORLD_CDS") if directory is None else str(directory)
        self.directory = None if given == "" else Path(given) if given else CDS_DIR
        self.writing: Path | None = None
        digest = hashlib.sha256()
        for part in (os.path.realpath(java_bin), *classpath):
            st = os.stat(part)
            digest.update(f"{part}:{st.st_size}:{st.st_mtime_ns};".encode())
        digest.update(" ".join(java_opts).encode())
        self.name = f"sciworld-{digest.hexdigest()[:20]}.jsa"

    @property
    def path(self) -> Path | None:
        return None if self.directory is None else self.directory / self.name

    def options(self) -> list[str]:
        """The JVM options that use the archive, or write it when there is none yet (and no one writes it)."""
        path = self.path
        if path is None:
            return []
        if path.is_file():
            return [f"-XX:SharedArchiveFile={path}"]
        lock = path.with_suffix(".lock")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                if lock.stat().st_mtime < time.time() - 600:  # a writer that died long ago (its server killed):
                    for tmp in path.parent.glob(f"{path.stem}.*.tmp"):  # what it left, then its lock
                        tmp.unlink(missing_ok=True)
                    lock.unlink()
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except OSError:  # another JVM writes it, or the directory is not writable: run without
            return []
        self.writing = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        return [f"-XX:ArchiveClassesAtExit={self.writing}"]

    def discard(self) -> None:
        """Delete an archive a JVM could not start with (the next session writes a new one)."""
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()

    def finish(self, exited_normally: bool) -> None:
        """After the JVM exited: publish the archive it wrote (a JVM killed mid-write leaves none)."""
        if self.writing is None or self.path is None:
            return
        tmp, self.writing = self.writing, None
        with contextlib.suppress(OSError):
            if exited_normally and tmp.is_file() and tmp.stat().st_size > 0:
                os.replace(tmp, self.path)
        with contextlib.suppress(OSError):
            tmp.unlink()
        with contextlib.suppress(OSError):
            self.path.with_suffix(".lock").unlink()


#: seconds a JVM writing the class archive has to exit after its input closes
ARCHIVE_GRACE = 30.0


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
                 callback_server: bool = False, class_archive: bool = True) -> None:
        # no super().__init__(): it would launch a JVM of its own; the attributes its methods read are set here
        self._closed = False
        self._proc: subprocess.Popen | None = None
        self._archive: ClassArchive | None = None
        java_bin = shutil.which(java)
        if java_bin is None:
            raise SimulatorError(f"no Java runtime found ({java!r} is not on PATH); install one, e.g. "
                                 "`apt-get install default-jre-headless` (setup.sh does it)")
        jar = jar_path or JAR_PATH
        if not os.path.isfile(jar):
            raise SimulatorError(f"ScienceWorld jar not found: {jar}")
        classpath = [find_jar_path(), jar]
        self._archive = ClassArchive(java_bin, classpath, java_opts) if class_archive else None
        archive = self._archive.options() if self._archive else []
        try:
            port = self._launch(owner, java_bin, java_opts, archive, classpath, start_timeout)
        except SimulatorError:
            if not any(a.startswith("-XX:SharedArchiveFile=") for a in archive):
                raise
            # an archive this JVM could not map (one cut short crashes it): drop it and start once more without
            assert self._archive is not None
            self._archive.discard()
            self._closed = False
            port = self._launch(owner, java_bin, java_opts, [], classpath, start_timeout)
        proc = self._proc
        assert proc is not None and proc.stdout is not None
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

    def _launch(self, owner: Any, java_bin: str, java_opts: Sequence[str], archive: Sequence[str],
                classpath: Sequence[str], start_timeout: float) -> int:
        """Start the JVM and read the port it listens on (its first line on stdout)."""
        cmd = [java_bin, *java_opts, *LOG_OPTS, *archive, "-classpath", os.pathsep.join(classpath),
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
            return int(line)
        except ValueError:
            self.close()
            raise SimulatorError(f"the ScienceWorld JVM did not start (said {line[:200]!r}); command: "
                                 f"{' '.join(cmd)}") from None

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
        # a JVM that writes the class archive dumps ~12 MB as it exits: seconds on a loaded machine, so it gets
        # longer before the kill than one that only exits (a kill mid-dump loses the archive)
        writing = self._archive is not None and self._archive.writing is not None
        processes.end(proc, grace=ARCHIVE_GRACE if writing else processes.GRACE)
        if self._archive is not None:
            self._archive.finish(proc.returncode == 0)
        self._finalizer.detach()

    def __del__(self) -> None:
        self.close()
