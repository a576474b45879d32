"""Child processes of a session (a simulator, a JVM, a database server) that never outlive it.

An environment starts them with :func:`spawn` instead of ``subprocess.Popen``. Each child leads
a process group of its own and gets a parent-death signal, and the runtime kills every group an
environment spawned right after the environment's ``close()`` (on close, TTL expiry, a step
timeout and server shutdown), so a forgotten or stuck child is reaped either way. If the server
itself is killed (even with SIGKILL), the kernel sends the children SIGKILL (the processes spawned
here, not their own children: those die then only if their parent takes them along).

The parent-death signal is set up here only (:func:`die_with_parent` for the calling process,
:func:`die_with_parent_preexec` for a child about to exec): the launcher's servers use it too.
Processes a library starts itself (Playwright's driver and the browser it launches) get no such signal;
:func:`kill_with_me` hands them to a small reaper process that kills them when this process dies.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

_ATTR = "_agentenv_children"
_ADOPTED = "_agentenv_adopted"  # (kind, number) of processes a library started for an owner
_PR_SET_PDEATHSIG = 1
_lock = threading.Lock()
_prctl: Any = None  # libc's prctl, looked up in the parent (never between fork and exec)
_prctl_looked_up = False
_spawner: queue.SimpleQueue | None = None  # jobs of the one thread that forks every child


def _libc_prctl() -> Any:
    """libc's ``prctl`` (None where there is none), looked up once and never between fork and exec
    (loading a library there can deadlock on a lock another thread of the parent held)."""
    global _prctl, _prctl_looked_up
    if not _prctl_looked_up:
        with contextlib.suppress(Exception):
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        _prctl_looked_up = True
    return _prctl


def _arm(prctl: Any, sig: int, parent: int | None, orphan_sig: int) -> bool:
    armed = prctl is not None and prctl(_PR_SET_PDEATHSIG, sig) == 0
    # a parent that died before the signal was armed sends nothing: the process is an orphan already
    if (os.getppid() != parent) if parent is not None else os.getppid() == 1:
        os.kill(os.getpid(), orphan_sig)
    return armed


def parent_of(pid: int) -> int | None:
    """The parent of process ``pid`` (None when it is gone or /proc cannot tell)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2:].split()[1])  # after "pid (comm) state"


def die_with_parent(sig: int = signal.SIGTERM, *, parent: int | None = None,
                    grandparent: int | None = None) -> bool:
    """Have the kernel send this process ``sig`` when its parent dies (Linux's parent-death signal;
    for a parent that is a thread of a process: when that *thread* exits). A parent that is gone
    already sends nothing, so the process sends itself ``sig`` at once when it is an orphan: its
    parent is no longer ``parent`` (a pid), or its parent's parent is not ``grandparent`` (the pid of
    the launcher that started the parent), or, given neither, it was re-parented to init. Only the
    pids tell reliably: an orphan goes to the nearest *subreaper* (a container's init, a CI runner,
    systemd --user), which is not pid 1. True when the signal is armed (False without ``prctl``)."""
    if grandparent is not None and parent is None:
        ppid = os.getppid()
        parent = ppid if parent_of(ppid) == grandparent else -1  # -1: orphaned already
    return _arm(_libc_prctl(), sig, parent, sig)


_launchers_checked: set[str] = set()


def die_with_launcher(variable: str, sig: int = signal.SIGTERM) -> bool | None:
    """:func:`die_with_parent` for a process whose launcher named itself in ``$variable`` (its pid: the process
    that started this one's parent, e.g. the one that ran torchrun for torchrun's workers): the process ends
    itself at once if its grandparent is no longer that launcher. Then the variable names this process's parent,
    so its own children (data loaders, ...) check the same way. Once per process and variable; None when the
    variable holds no pid (or was checked already), else whether the signal is armed."""
    value = os.environ.get(variable, "")
    if not value.isdigit() or variable in _launchers_checked:
        return None
    _launchers_checked.add(variable)
    armed = die_with_parent(sig, grandparent=int(value))
    os.environ[variable] = str(os.getppid())
    return armed


def die_with_parent_preexec(sig: int = signal.SIGKILL) -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess.Popen`` that makes the child die with the calling process:
    the kernel sends it ``sig`` when the thread that forks it exits (fork from a long-lived thread),
    and a child whose parent died before the signal was armed kills itself. Call it in the parent,
    right before ``Popen``: libc is looked up here, never between fork and exec."""
    prctl, parent = _libc_prctl(), os.getpid()

    def in_child() -> None:  # pragma: no cover - runs between fork and exec
        _arm(prctl, sig, parent, signal.SIGKILL)  # an orphan not yet exec'd has nothing to clean up

    return in_child


def _serve_spawns(jobs: queue.SimpleQueue) -> None:
    while True:
        fn, fut = jobs.get()
        if fut.set_running_or_notify_cancel():
            try:
                fut.set_result(fn())
            except BaseException as e:  # handed to the caller of spawn
                fut.set_exception(e)


def _on_spawner_thread(fn: Callable[[], subprocess.Popen]) -> subprocess.Popen:
    """Run ``fn`` on the spawner thread: the kernel sends the parent-death signal when the *thread*
    that forked a child exits, so children are forked by one thread that lives as long as the process
    (not by whichever thread an environment happens to run on, which may be short-lived)."""
    global _spawner
    with _lock:
        if _spawner is None:
            _spawner = queue.SimpleQueue()
            threading.Thread(target=_serve_spawns, args=(_spawner,), daemon=True, name="agentenv-spawner").start()
        jobs = _spawner
    fut: Future = Future()
    jobs.put((fn, fut))
    return fut.result()


def _forget_spawner() -> None:  # a forked copy of this process has no spawner thread (and nobody holds the lock)
    global _spawner, _lock
    _spawner, _lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_spawner)


def spawn(owner: Any, args: Sequence[str] | str, **popen_kwargs: Any) -> subprocess.Popen:
    """``subprocess.Popen(args, **popen_kwargs)`` tied to ``owner`` (the environment instance).

    Safe to call from any thread: the fork happens on a dedicated long-lived thread, so the child's
    parent-death signal fires only when the server process dies.
    """
    in_child = die_with_parent_preexec(signal.SIGKILL)
    proc = _on_spawner_thread(lambda: subprocess.Popen(
        args, start_new_session=True, preexec_fn=in_child, **popen_kwargs))
    with _lock:
        children = owner.__dict__.setdefault(_ATTR, [])
        children[:] = [p for p in children if p.poll() is None]
        children.append(proc)
    return proc


#: seconds :func:`end` gives a child to exit after its input closes, before it is killed
GRACE = 3.0


def end(proc: subprocess.Popen, grace: float = GRACE) -> None:
    """End a child that exits when its input closes (a JVM started with ``--die-on-broken-pipe``): close its stdin,
    wait up to ``grace`` seconds, then kill it."""
    if proc.stdin is not None:
        with contextlib.suppress(Exception):
            proc.stdin.close()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        with contextlib.suppress(Exception):
            proc.wait(5)


#: the reaper: it reads "group PGID" / "pid PID" / "forget N" lines and, when its input ends (its owner is gone,
#: however it went), kills the process groups and processes it still holds
REAPER_MARK = "# agentenv reaper"  # the first line of its program: how a process listing tells it apart
_REAPER = REAPER_MARK + """
import os, signal, sys
held = {}
for line in sys.stdin:
    verb, _, arg = line.strip().partition(" ")
    if verb in ("group", "pid"):
        held[int(arg)] = verb
    elif verb == "forget":
        held.pop(int(arg), None)
for n, verb in held.items():
    try:
        (os.killpg if verb == "group" else os.kill)(n, signal.SIGKILL)
    except OSError:
        pass
"""
_reaper: subprocess.Popen | None = None  # one per process, started by the first kill_with_me
_reaper_lock = threading.Lock()


def _tell_reaper(*lines: str) -> None:
    global _reaper
    with _reaper_lock:
        if _reaper is None or _reaper.poll() is not None:
            _reaper = subprocess.Popen([sys.executable, "-c", _REAPER], stdin=subprocess.PIPE, text=True,
                                       start_new_session=True)
        assert _reaper.stdin is not None
        _reaper.stdin.write("".join(line + "\n" for line in lines))
        _reaper.stdin.flush()


def kill_with_me(*, pids: Sequence[int] = (), groups: Sequence[int] = ()) -> None:
    """Have processes this one did not spawn (a library's driver, the browser it started) killed when this process
    dies, however it dies: no parent-death signal of ours reaches them. A small reaper process, one per process,
    holds their ids and kills them (``groups``: whole process groups) once its pipe from this process closes."""
    _tell_reaper(*(f"pid {p}" for p in pids), *(f"group {g}" for g in groups))


def forget(*numbers: int) -> None:
    """Processes or groups that ended normally: the reaper lets them be (their ids may be reused)."""
    if numbers:
        _tell_reaper(*(f"forget {n}" for n in numbers))


def _forget_reaper() -> None:  # a forked child must not hold the reaper's pipe open: it is not the owner
    global _reaper, _reaper_lock
    if _reaper is not None and _reaper.stdin is not None:
        with contextlib.suppress(OSError):
            _reaper.stdin.close()
    _reaper, _reaper_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_reaper)


def children(owner: Any) -> list[subprocess.Popen]:
    """The processes ``owner`` spawned that are still running."""
    return [p for p in owner.__dict__.get(_ATTR, []) if p.poll() is None]


def adopt(owner: Any, *, pids: Sequence[int] = (), groups: Sequence[int] = ()) -> None:
    """Make processes ``owner`` did not spawn (a library's driver, the browser it started) its children for
    :func:`kill_children`: the runtime then kills them with the session (close, expiry, a step past its time limit,
    which is what unblocks a step waiting on them)."""
    with _lock:
        held = owner.__dict__.setdefault(_ADOPTED, [])
        held.extend([("pid", p) for p in pids] + [("group", g) for g in groups])


def disown(owner: Any) -> None:
    """Forget what ``owner`` adopted: those processes ended normally (their ids may be reused)."""
    with _lock:
        owner.__dict__.pop(_ADOPTED, None)


def _signal_adopted(adopted: list[tuple[str, int]], sig: int) -> None:
    for kind, number in adopted:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            (os.kill if kind == "pid" else os.killpg)(number, sig)


def kill_children(owner: Any, grace: float = 2.0) -> None:
    """SIGTERM each child's process group (and what ``owner`` adopted), SIGKILL what is left after ``grace``
    seconds, reap them."""
    with _lock:
        procs = owner.__dict__.pop(_ATTR, [])
        adopted = owner.__dict__.pop(_ADOPTED, [])
    if adopted:
        _signal_adopted(adopted, signal.SIGTERM)
        _signal_adopted(adopted, signal.SIGKILL)
    live = [p for p in procs if p.poll() is None]
    for p in live:
        _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in live:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        _signal_group(p, signal.SIGKILL)  # the group: grandchildren too, even when the child is gone
        with contextlib.suppress(Exception):
            p.wait(5)


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
