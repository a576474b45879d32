"""The simulator's class-data-sharing archive (simulator.ClassArchive): written once, used after, never in the way."""

from __future__ import annotations

import os
import time
from pathlib import Path

import psutil

from agentenv_sciworld.simulator import ClassArchive, Simulator


class Owner:
    """Stands for the environment instance a JVM belongs to."""


def started(tmp_path, monkeypatch) -> tuple[Simulator, list[str]]:
    monkeypatch.setenv("AGENTENV_SCIWORLD_CDS", str(tmp_path))
    sim = Simulator(Owner())
    return sim, psutil.Process(sim.pid).cmdline()


def plays(sim: Simulator) -> bool:
    sim.load("boil", 0, "", generateGoldPath=False)
    return "kitchen" in sim.act("look around")[0].lower() or bool(sim.act("inventory")[0])


def test_the_first_jvm_writes_the_archive_and_the_next_ones_map_it(tmp_path, monkeypatch):
    sim, cmd = started(tmp_path, monkeypatch)
    assert any(a.startswith("-XX:ArchiveClassesAtExit=") for a in cmd) and plays(sim)
    sim.close()
    archives = list(tmp_path.glob("*.jsa"))
    assert len(archives) == 1 and archives[0].stat().st_size > 1_000_000
    assert not list(tmp_path.glob("*.lock")) and not list(tmp_path.glob("*.tmp"))

    sim, cmd = started(tmp_path, monkeypatch)
    assert f"-XX:SharedArchiveFile={archives[0]}" in cmd and plays(sim)
    sim.close()


def test_an_archive_the_jvm_cannot_use_is_dropped_and_the_session_starts_without_it(tmp_path, monkeypatch):
    """One cut short (a disk that filled up, say) crashes the JVM that maps it: the simulator deletes it and starts
    the JVM again without it; the crash report goes to the temporary directory, not into the scienceworld package
    (the JVM's working directory); the next session writes a new archive."""
    from scienceworld.constants import BASEPATH

    sim, _ = started(tmp_path, monkeypatch)
    sim.close()
    (archive,) = tmp_path.glob("*.jsa")
    archive.write_bytes(archive.read_bytes()[:4096])
    sim, cmd = started(tmp_path, monkeypatch)
    assert not any("SharedArchiveFile" in a or "ArchiveClassesAtExit" in a for a in cmd) and plays(sim)
    sim.close()
    assert not archive.exists() and not list(Path(BASEPATH).glob("hs_err_pid*"))
    sim, cmd = started(tmp_path, monkeypatch)
    assert any(a.startswith("-XX:ArchiveClassesAtExit=") for a in cmd)
    sim.close()
    assert archive.stat().st_size > 1_000_000


def test_one_writer_at_a_time_and_none_when_turned_off(tmp_path, monkeypatch):
    args = ("/bin/sh", [], ("-Xmx512m",))
    first, second = ClassArchive(*args, directory=tmp_path), ClassArchive(*args, directory=tmp_path)
    assert first.options()[0].startswith("-XX:ArchiveClassesAtExit=") and second.options() == []
    first.finish(exited_normally=False)  # a JVM killed while writing: nothing published, the lock released
    assert not list(tmp_path.iterdir())
    third = ClassArchive(*args, directory=tmp_path)
    assert third.options()[0].startswith("-XX:ArchiveClassesAtExit=")
    # its server was killed while it wrote: the lock and a partial archive stay, until the lock is 10 minutes old
    assert third.writing is not None
    third.writing.write_bytes(b"partial")
    assert ClassArchive(*args, directory=tmp_path).options() == []
    lock = next(tmp_path.glob("*.lock"))
    os.utime(lock, (time.time() - 601, time.time() - 601))
    assert ClassArchive(*args, directory=tmp_path).options()[0].startswith("-XX:ArchiveClassesAtExit=")
    assert not third.writing.exists()
    assert ClassArchive(*args, directory="").options() == []  # AGENTENV_SCIWORLD_CDS= turns archives off
    assert ClassArchive(*args, directory=tmp_path).name != ClassArchive("/bin/sh", [], ("-Xmx1g",)).name
