"""WebShop's search as AgentGym's server runs it: Lucene's BM25 over an Anserini index, in a JVM of the server's.

AgentGym's WebShop searches with pyserini 0.17's ``LuceneSearcher``: Anserini's ``SimpleSearcher`` (Lucene 8,
Anserini's English analyzer with Porter stemming and stop words, BM25 with k1 0.9 and b 0.4) over an index that
WebShop builds from its products (``search_engine/convert_product_file_format.py`` and ``run_indexing.sh``:
``JsonCollection``, ``DefaultLuceneDocumentGenerator``). Tokenising and scoring as Lucene does is not something to
re-implement by hand, so the same code runs here: Anserini's jar as pyserini 0.17.0's wheel ships it on PyPI,
fetched once (``python -m agentenv_webshop.lucene fetch``; ``setup.sh`` does it), the index written by Anserini's
own ``IndexCollection`` into a cache directory keyed by the documents' digest, and the searches answered by a
JVM that py4j talks to (the ``py4j`` package's gateway jar beside Anserini's on the classpath). The JVM is one
per server: it is started with a parent-death signal and dies with the server, however that dies.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from py4j.java_gateway import GatewayParameters, JavaGateway, find_jar_path

from agentenv import processes

PYSERINI = "pyserini==0.17.0"
JAR_NAME = "anserini-0.14.3-fatjar.jar"
JAR_IN_WHEEL = f"pyserini/resources/jars/{JAR_NAME}"
JAR_VAR = "AGENTENV_ANSERINI_JAR"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentenv-webshop"
JAVA_OPTS = ("-Xmx1g", "-XX:+UseSerialGC")


class LuceneError(RuntimeError):
    """Anserini's jar is missing, or its JVM could not index or search (a one-line message)."""


def jar_path(given: str | os.PathLike | None = None) -> Path:
    """Anserini's jar: the path given, else ``$AGENTENV_ANSERINI_JAR``, else the one ``fetch`` put in the cache."""
    path = Path(given or os.environ.get(JAR_VAR) or CACHE / JAR_NAME).expanduser()
    if not path.is_file():
        raise LuceneError(f"Anserini's jar ({JAR_NAME}, what AgentGym's WebShop searches with) is not at {path}: run "
                          f"`python -m agentenv_webshop.lucene fetch` (it takes it from {PYSERINI}'s wheel on "
                          f"PyPI) or give its path in ${JAR_VAR}")
    return path


def fetch(dest: str | os.PathLike = CACHE, python: str = sys.executable) -> Path:
    """Download pyserini 0.17.0's wheel (without its dependencies) and keep only Anserini's jar from it."""
    dest = Path(dest)
    target = dest / JAR_NAME
    if target.is_file():
        return target
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agentenv-pyserini-") as tmp:
        subprocess.run([python, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp, PYSERINI],
                       check=True)
        wheel = next(Path(tmp).glob("pyserini-*.whl"))
        with zipfile.ZipFile(wheel) as z, z.open(JAR_IN_WHEEL) as src, open(target.with_suffix(".part"), "wb") as out:
            shutil.copyfileobj(src, out)
    target.with_suffix(".part").rename(target)
    return target


def _java() -> str:
    java = shutil.which("java")
    if java is None:
        raise LuceneError("AgentGym's WebShop search needs Java (a JRE 11 or newer) on PATH")
    return java


def index(documents: Sequence[dict[str, Any]], jar: Path, cache: Path = CACHE) -> Path:
    """An Anserini index of ``documents`` (``{"id", "contents", ...}``, stored raw), built by Anserini's own
    ``IndexCollection`` as WebShop's ``run_indexing.sh`` builds its, once per set of documents."""
    lines = "".join(json.dumps(doc) + "\n" for doc in documents)
    digest = hashlib.sha256((JAR_NAME + "\n" + lines).encode()).hexdigest()[:20]
    where = cache / "indexes" / digest
    if (where / "done").is_file():
        return where
    where.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=where.parent))
    try:
        (work / "input").mkdir()
        (work / "input" / "documents.jsonl").write_text(lines)
        cmd = [_java(), *JAVA_OPTS, "-cp", str(jar), "io.anserini.index.IndexCollection", "-collection",
               "JsonCollection", "-input", str(work / "input"), "-index", str(work / "index"), "-generator",
               "DefaultLuceneDocumentGenerator", "-threads", "1", "-storePositions", "-storeDocvectors", "-storeRaw"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0 or not (work / "index").is_dir():
            tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
            raise LuceneError(f"Anserini could not index the products (exit {run.returncode}): {tail[0][:300]}")
        (work / "index" / "done").write_text(str(len(documents)))
        with contextlib.suppress(OSError):  # another server built the same index meanwhile: keep that one
            os.rename(work / "index", where)
        return where
    finally:
        shutil.rmtree(work, ignore_errors=True)


class Searcher:
    """Anserini's ``SimpleSearcher`` over an index, in a JVM of its own that dies with this process."""

    def __init__(self, index_dir: Path, jar: Path, start_timeout: float = 60.0) -> None:
        cmd = [_java(), *JAVA_OPTS, "-Xlog:disable", "-Xlog:all=warning:stderr", "-cp",
               os.pathsep.join([find_jar_path(), str(jar)]), "py4j.GatewayServer", "--die-on-broken-pipe", "0"]
        self._proc = processes.spawn(self, cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        watchdog = threading.Timer(start_timeout, self._proc.kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            line = self._proc.stdout.readline() if self._proc.stdout else ""
        finally:
            watchdog.cancel()
        try:
            port = int(line)
        except ValueError:
            self.close()
            raise LuceneError(f"the Anserini JVM did not start (said {line[:200]!r})") from None
        self._gateway = JavaGateway(gateway_parameters=GatewayParameters(
            port=port, auto_field=True, auto_close=True, enable_memory_management=False), java_process=self._proc)
        self._searcher = self._gateway.jvm.io.anserini.search.SimpleSearcher(str(index_dir))
        self._lock = threading.Lock()

    def search(self, query: str, k: int) -> list[str]:
        """The ids of the ``k`` best documents for ``query``, best first (pyserini's ``search(q, k)``)."""
        with self._lock:
            hits = self._searcher.search(query, k)
            return [json.loads(hit.raw)["id"] for hit in hits]

    def close(self) -> None:
        gateway = getattr(self, "_gateway", None)
        if gateway is not None:
            with contextlib.suppress(Exception):
                gateway.shutdown()
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            processes.end(proc)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Anserini's jar for the agentgym profile of webshop")
    sub = p.add_subparsers(dest="command", required=True)
    got = sub.add_parser("fetch", help=f"take {JAR_NAME} from {PYSERINI}'s wheel on PyPI into the cache")
    got.add_argument("--dest", default=str(CACHE))
    args = p.parse_args(argv)
    print(fetch(args.dest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
