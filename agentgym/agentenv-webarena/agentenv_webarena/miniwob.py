"""MiniWoB++ (Farama's ``miniwob`` package on PyPI) as a second task set through the same interface.

The package ships 130 small web tasks as HTML pages whose own JavaScript (``core.js``) draws a problem, states it
("Click on the button labelled OK") and ends the episode with a reward in [-1, 1] when the page is solved or failed.
Only those pages are used (the package's Python side drives Selenium): they are served on loopback, a task is one
page and one seed (``Math.seedrandom``, which ``core.js`` ships, then ``core.startEpisodeReal()``), the objective is
the page's utterance, and the episode ends when the page says so (or on ``stop``), its raw reward the score. The
agent sees and acts exactly as on the embedded sites: WebArena's observation and actions. MiniWoB's 10-second limit
per episode is lifted (the agent's turns bound it). There is no expert (MiniWoB has none); the random policy works.

``setup.sh`` installs the package without its dependencies (``pip install --no-deps miniwob==1.1.0``): its pages are
data here.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGE = "miniwob"
#: test seeds and train seeds of every page (a page and a seed are one task)
TEST_SEEDS = range(2)
TRAIN_SEEDS = range(100, 110)
START = """() => {
  core.EPISODE_MAX_TIME = 24 * 3600 * 1000;
  Math.seedrandom(%s);
  core.startEpisodeReal();
  return core.getUtterance();
}"""
#: a page without MiniWoB's script (the agent went back, or elsewhere) has not ended: nothing is won there
OUTCOME = """() => typeof WOB_DONE_GLOBAL === "undefined" ? [false, 0, "not on the task's page"]
                                                       : [WOB_DONE_GLOBAL, WOB_RAW_REWARD_GLOBAL, WOB_REWARD_REASON]"""


class MiniWobMissing(RuntimeError):
    """The ``miniwob`` package (its pages) is not installed."""


def html_dir() -> Path:
    """The installed package's ``html`` folder (its ``miniwob/*.html`` pages and their scripts)."""
    try:
        folder = Path(str(metadata.distribution(PACKAGE).locate_file("miniwob/html")))
    except metadata.PackageNotFoundError:
        folder = None
    if folder is None or not (folder / "core" / "core.js").is_file():
        raise MiniWobMissing("task_set=miniwob needs MiniWoB++'s pages: pip install --no-deps miniwob==1.1.0 "
                             "(agentgym/agentenv-webarena/setup.sh does)")
    return folder


def pages(folder: Path | None = None) -> list[str]:
    return sorted(p.stem for p in ((folder or html_dir()) / "miniwob").glob("*.html"))


def tasks(folder: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """Task configs in WebArena's shape, per split: every page with each split's seeds (the objective is the page's
    utterance, known once the page has drawn its problem)."""
    names = pages(folder)
    out: dict[str, list[dict[str, Any]]] = {}
    for split, seeds in (("test", TEST_SEEDS), ("train", TRAIN_SEEDS)):
        out[split] = [{"sites": ["miniwob"], "task_id": i, "require_login": False, "storage_state": None,
                       "start_url": f"__MINIWOB__/miniwob/{name}.html", "geolocation": None, "intent": "",
                       "intent_template": name, "instantiation_dict": {"seed": seed}, "require_reset": False,
                       "eval": {"eval_types": ["miniwob"]}, "intent_template_id": 0}
                      for i, (name, seed) in enumerate((n, s) for s in seeds for n in names)]
    return out


def start(browser: Any, seed: int) -> str:
    """Draw the page's problem for ``seed``; its utterance (the objective)."""
    return str(browser.evaluate(START % json.dumps(str(seed))))


def app(folder: Path) -> Any:
    """The pages, served as files (a missing one is a plain 404)."""
    from starlette.applications import Starlette
    from starlette.routing import Mount
    from starlette.staticfiles import StaticFiles

    return Starlette(routes=[Mount("/", StaticFiles(directory=folder))])


def outcome(browser: Any) -> tuple[bool, float, str]:
    """(done, raw reward, reason) as the page's script left them."""
    try:
        done, reward, reason = browser.evaluate(OUTCOME)
    except Exception:  # a page that is loading or gone
        return False, 0.0, "the page could not be read"
    return bool(done), float(reward or 0.0), str(reason or "")
