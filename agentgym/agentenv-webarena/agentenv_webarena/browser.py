"""A real browser for one session: Debian's Chromium driven by Playwright, set up and read as WebArena does.

WebArena drives Chromium with Playwright's synchronous API: one context per task (1280x720, device scale 1, the
task's stored login and geolocation), one page per start URL (``" |AND| "`` separates them), a CDP session per
page, and after every action a pause, then the observation (:mod:`agentenv_webarena.axtree`) read over CDP:
the accessibility tree, and each node's client rect through its DOM node. Actions act at the centre of the
element's rect as the last observation measured it, with the mouse and keyboard, as WebArena's do.

Playwright's own browser downloads are not reachable here, so the browser is the system's Chromium (Debian's
``chromium``, which ``setup.sh`` installs), started by Playwright through ``executable_path``; ``$AGENTENV_CHROMIUM``
names another. Playwright's synchronous objects belong to the thread that made them, while a server runs a
session's calls on whichever worker thread is free: every call therefore runs on a thread the session owns.
:meth:`Browser.close` ends the context, the browser and Playwright's driver. A server that dies instead (even by
SIGKILL) takes nothing along by itself: Playwright's driver outlives it and keeps its browser. So every browser and
its driver are handed to :func:`agentenv.processes.kill_with_me`, whose reaper kills them when the server's pipe to
it closes (Chromium's crash reporter, which runs apart from the browser, ends with it).
"""

from __future__ import annotations

import os
import queue
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psutil

from agentenv import processes
from agentenv_webarena import axtree
from agentenv_webarena.actions import Action, ActionType

T = TypeVar("T")
CHROMIUM_VAR = "AGENTENV_CHROMIUM"
VIEWPORT = {"width": 1280, "height": 720}
START_SEPARATOR = " |AND| "
#: a node's client rect, a text node's through a range (WebArena reads both)
RECT_JS = """function () {
  if (this.nodeType == 3) {
    const range = document.createRange();
    range.selectNode(this);
    const rect = range.getBoundingClientRect().toJSON();
    range.detach();
    return rect;
  }
  return this.getBoundingClientRect().toJSON();
}"""


_STARTS = threading.Lock()  # one browser start at a time: its driver is the new one among this process's children


def _drivers() -> set[int]:
    return {p.pid for p in psutil.Process().children() if "run-driver" in " ".join(_cmdline(p))}


def _cmdline(proc: Any) -> list[str]:
    try:
        return proc.cmdline()
    except Exception:  # a process that ended meanwhile
        return []


class BrowserError(RuntimeError):
    """No browser could be started, or the session's browser is gone (a one-line message)."""


def chromium_path(given: str | None = None) -> str:
    """The Chromium to drive: the path given, ``$AGENTENV_CHROMIUM``, else Debian's ``chromium`` on PATH."""
    path = given or os.environ.get(CHROMIUM_VAR) or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path or not Path(path).exists():
        raise BrowserError(f"no Chromium found: install Debian's chromium (setup.sh does) or set ${CHROMIUM_VAR}")
    return path


@dataclass
class Observation:
    """What the agent sees after a reset or an action, and what the next action needs."""

    text: str  # WebArena's observation: the tab bar, a blank line, the accessibility tree
    url: str
    nodes: dict[str, axtree.NodeInfo] = field(default_factory=dict)
    fail_error: str = ""  # why the last action failed ("" when it ran)


def read_page(page: Any, client: Any, stable_ids: bool = True) -> Observation:
    """WebArena's observation of ``page`` through its CDP session ``client`` (any thread that owns them); element ids
    are the nodes' positions in the tree (``stable_ids``, :func:`axtree.renumber`) or Chrome's own, as WebArena's."""
    tabs = page.context.pages
    try:
        header = axtree.tab_bar([tab.title() for tab in tabs], tabs.index(page))
    except Exception:  # WebArena's fallback, its missing f included
        header = " | ".join(["Tab {idx}" for _ in range(len(tabs))])
    try:
        width, height = _window(page, client)
    except Exception:
        page.wait_for_load_state("load", timeout=500)
        width, height = _window(page, client)
    nodes = client.send("Accessibility.getFullAXTree", {})["nodes"]
    if stable_ids:
        nodes = axtree.renumber(nodes)
    rects: dict[str, Any] = {}
    for node in axtree.unique(nodes):
        if "backendDOMNodeId" in node and node["role"]["value"] != "RootWebArea":
            rects[node["nodeId"]] = _rect(client, node["backendDOMNodeId"])
    text, info = axtree.observation(nodes, rects, header, width, height)
    return Observation(text, page.url, info)


def _window(page: Any, client: Any) -> tuple[float, float]:
    """The window WebArena measures the viewport against (``window.screen``); its DOM snapshot is taken too, as
    WebArena's is, so a page that cannot give one fails here as there."""
    client.send("DOMSnapshot.captureSnapshot", {"computedStyles": [], "includeDOMRects": True,
                                                 "includePaintOrder": True})
    return float(page.evaluate("window.screen.width")), float(page.evaluate("window.screen.height"))


def _rect(client: Any, backend_id: int) -> dict[str, float] | None:
    try:
        obj = client.send("DOM.resolveNode", {"backendNodeId": int(backend_id)})["object"]["objectId"]
        got = client.send("Runtime.callFunctionOn", {"objectId": obj, "functionDeclaration": RECT_JS,
                                                     "returnByValue": True})
    except Exception:  # a node that has gone, or cannot be measured: no bound
        return None
    if got.get("result", {}).get("subtype") == "error":
        return None
    return got["result"]["value"]


class _Thread:
    """A thread that runs the functions given to it, one at a time, and hands back their results."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, daemon=True, name=name)
        self._thread.start()

    def _serve(self) -> None:
        while (job := self._jobs.get()) is not None:
            fn, fut = job
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn())
                except BaseException as e:  # handed to the caller
                    fut.set_exception(e)

    def run(self, fn: Callable[[], T], timeout: float | None = None) -> T:
        if not self._thread.is_alive():
            raise BrowserError("the browser's thread has ended")
        fut: Future = Future()
        self._jobs.put((fn, fut))
        return fut.result(timeout)

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join(10)


class Browser:
    """One Chromium, one context at a time, driven as WebArena drives its browser (module docstring)."""

    _closed = True  # until the browser has started

    def __init__(self, executable: str | None = None, *, settle: float = 0.5, headless: bool = True,
                 timeout: float = 20.0, stable_ids: bool = True) -> None:
        self._thread = _Thread("webarena-browser")
        self._settle = settle
        self._stable_ids = stable_ids
        self._navigations = 0  # main-frame navigations the pages of the context have started
        self._loads = 0  # ... and load events they have fired (an action that navigates waits for its page)
        self._timeout_ms = timeout * 1000  # Playwright's limit for one navigation or wait: a hanging page fails
        self._nodes: dict[str, axtree.NodeInfo] = {}
        self._context: Any = None
        self._page: Any = None
        self._driver: int | None = None  # Playwright's driver process
        self._groups: list[int] = []  # Chromium's process groups
        path = chromium_path(executable)
        try:
            self._playwright, self._browser = self._thread.run(lambda: self._start(path, headless))
        except Exception as e:
            self._thread.stop()
            raise BrowserError(f"Chromium did not start ({path}): {type(e).__name__}: {e}") from None
        self._closed = False

    def _start(self, path: str, headless: bool) -> tuple[Any, Any]:
        """Playwright's driver and Chromium, both to be killed with this process (module docstring)."""
        from playwright.sync_api import sync_playwright  # a few hundred ms: only browser sessions pay it

        with _STARTS:
            before = _drivers()
            pw = sync_playwright().start()
            driver = next(iter(_drivers() - before), None)
            try:
                browser = pw.chromium.launch(executable_path=path, headless=headless)
            except BaseException:
                pw.stop()
                raise
        if driver is not None:
            self._driver = driver
            self._groups = [os.getpgid(p.pid) for p in psutil.Process(driver).children() if "chrom" in p.name().lower()]
            pids, groups = self.owned()
            processes.kill_with_me(pids=pids, groups=groups)
        return pw, browser

    # -- a task's pages ------------------------------------------------------------------------------------------
    def open(self, start_urls: str | Sequence[str], storage_state: str | dict | None = None,
             geolocation: dict[str, float] | None = None) -> Observation:
        """A fresh context with the task's start pages (WebArena's ``setup``), and the first observation."""
        urls = start_urls.split(START_SEPARATOR) if isinstance(start_urls, str) else list(start_urls)
        return self._thread.run(lambda: self._open(urls, storage_state, geolocation))

    def _open(self, urls: list[str], storage_state: str | dict | None,
              geolocation: dict[str, float] | None) -> Observation:
        if self._context is not None:
            self._context.close()
        self._context = self._browser.new_context(viewport=VIEWPORT, storage_state=storage_state,
                                                  geolocation=geolocation, device_scale_factor=1)
        self._context.set_default_timeout(self._timeout_ms)
        self._context.on("page", self._watch)
        for url in urls or ["about:blank"]:
            page = self._context.new_page()
            self._client(page).send("Accessibility.enable")
            if url != "about:blank":
                page.goto(url)
        self._page = self._context.pages[0]
        self._page.bring_to_front()
        self._pause()
        return self._observe()

    def _client(self, page: Any) -> Any:
        """The page's CDP session (made once; a page opened by an action gets one when first read)."""
        client = getattr(page, "_agentenv_cdp", None)
        if client is None:
            client = page.context.new_cdp_session(page)
            page._agentenv_cdp = client
        return client

    def _watch(self, page: Any) -> None:
        def request(req: Any) -> None:
            if req.is_navigation_request() and req.frame.parent_frame is None:
                self._navigations += 1

        def loaded(_: Any) -> None:
            self._loads += 1

        page.on("request", request)
        page.on("load", loaded)

    def _pause(self, navigations: int | None = None, loads: int = 0) -> None:
        """WebArena's pause after an action; then, when the action started a navigation (``navigations``: the count
        before it), until the new page has loaded: the old page is loaded already, so waiting for the current page's
        load state alone may observe it, or a page half loaded."""
        page = self._page
        if page is None:
            time.sleep(self._settle)
            return
        try:
            page.wait_for_timeout(self._settle * 1000)  # (it lets Playwright deliver the page's events meanwhile)
            if navigations is not None:
                deadline = time.monotonic() + self._timeout_ms / 1000
                for _ in range(2):  # a navigation seen late (a busy machine) is waited for too
                    while self._navigations != navigations and self._loads == loads and time.monotonic() < deadline:
                        page.wait_for_timeout(20)
                    page.wait_for_load_state("load")
                    page.wait_for_timeout(20)
            page.wait_for_load_state("load")
        except Exception:  # a page that never loads: stopped, and observed as it is (reading it would wait)
            self._stop_loading(page)

    def _stop_loading(self, page: Any) -> None:
        try:
            self._client(page).send("Page.stopLoading")
        except Exception:  # a page that has gone
            pass

    # -- the observation -------------------------------------------------------------------------------------------
    def observe(self) -> Observation:
        return self._thread.run(self._observe)

    def _observe(self) -> Observation:
        page = self._require()
        obs = read_page(page, self._client(page), self._stable_ids)
        self._nodes = dict(obs.nodes)
        return obs

    # -- actions ----------------------------------------------------------------------------------------------------
    def act(self, action: Action) -> Observation:
        """Run an action as WebArena's ``execute_action`` does, pause, observe; a failure is the observation's
        ``fail_error`` (WebArena's ``str`` of the exception), not an exception."""
        def run() -> Observation:
            error = ""
            navigations, loads = self._navigations, self._loads
            try:
                self._execute(action)
            except Exception as e:
                error = str(e) or type(e).__name__
                self._stop_loading(self._require())
            self._pause(navigations, loads)
            obs = self._observe()
            obs.fail_error = error
            return obs
        return self._thread.run(run)

    def _centre(self, element_id: str) -> tuple[float, float]:
        node = self._nodes.get(element_id)
        if node is None or node.bound is None:
            raise KeyError(f"no element [{element_id}] in the last observation")
        x, y, w, h = node.bound
        return x + w / 2, y + h / 2

    def _execute(self, action: Action) -> None:
        page, kind = self._require(), action.kind
        if kind == ActionType.CLICK:
            page.mouse.click(*self._centre(action.element_id))
        elif kind == ActionType.HOVER:
            page.mouse.move(*self._centre(action.element_id))
        elif kind == ActionType.TYPE:
            page.mouse.click(*self._centre(action.element_id))
            page.keyboard.type(action.text)
        elif kind == ActionType.KEY_PRESS:
            keys = action.key_comb
            if "Meta" in keys and "Mac" not in page.evaluate("navigator.platform"):
                keys = keys.replace("Meta", "Control")
            page.keyboard.press(keys)
        elif kind == ActionType.SCROLL:
            sign = "-" if "up" in action.direction else "+"
            page.evaluate("(document.scrollingElement || document.body).scrollTop = "
                          f"(document.scrollingElement || document.body).scrollTop {sign} window.innerHeight;")
        elif kind == ActionType.NEW_TAB:
            self._page = self._context.new_page()
        elif kind == ActionType.PAGE_FOCUS:
            self._page = self._context.pages[action.page_number]
            self._page.bring_to_front()
        elif kind == ActionType.PAGE_CLOSE:
            page.close()
            self._page = self._context.pages[-1] if self._context.pages else self._context.new_page()
        elif kind == ActionType.GOTO_URL:
            page.goto(action.url)
        elif kind == ActionType.GO_BACK:
            page.go_back()
        elif kind == ActionType.GO_FORWARD:
            page.go_forward()
        # NONE and STOP do nothing in the browser

    # -- reading the page (evaluators, screenshots) ---------------------------------------------------------------
    def url(self) -> str:
        return self._thread.run(lambda: self._require().url)

    def content(self) -> str:
        return self._thread.run(lambda: self._require().content())

    def evaluate(self, script: str) -> Any:
        return self._thread.run(lambda: self._require().evaluate(script))

    def goto(self, url: str) -> None:
        self._thread.run(lambda: self._require().goto(url))

    def screenshot(self, path: str | os.PathLike) -> Path:
        target = Path(path)
        self._thread.run(lambda: self._require().screenshot(path=str(target)))
        return target

    def _require(self) -> Any:
        if self._page is None:
            raise BrowserError("no page is open: open() a task first")
        return self._page

    def owned(self) -> tuple[list[int], list[int]]:
        """What this browser started, as :mod:`agentenv.processes` takes it: (Playwright's driver, Chromium's process
        groups)."""
        return ([self._driver] if self._driver is not None else []), list(self._groups)

    def pids(self) -> set[int]:
        """This browser's processes: Playwright's driver and everything under it."""
        if self._driver is None:
            return set()
        try:
            driver = psutil.Process(self._driver)
            return {driver.pid, *(p.pid for p in driver.children(recursive=True))}
        except psutil.NoSuchProcess:
            return set()

    # -- the end --------------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the context and the browser and stop Playwright's driver (idempotent)."""
        if getattr(self, "_closed", True):
            return
        self._closed = True

        def stop() -> None:
            for part in (self._context, self._browser):
                try:
                    if part is not None:
                        part.close()
                except Exception:  # a browser that died already
                    pass
            self._playwright.stop()
        try:
            self._thread.run(stop, timeout=30)
        finally:
            self._thread.stop()
            pids, groups = self.owned()
            processes.forget(*pids, *groups)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
