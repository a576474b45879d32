"""The real browser (Debian's Chromium driven by Playwright) read and driven as WebArena's: pages the test serves.

WebArena's own observation code was run beside this one on the same pages (its ``TextObervationProcessor`` from its
public repository, on this Chromium, over the Rust book, pygame's documentation and a shop page): the texts were
byte for byte the same; that comparison needs WebArena's code and is not part of the suite. These tests check the
browser session itself: the observation's shape on a known page, every action of the grammar, and that no browser
process outlives its session or its owner.
"""

import os
import signal
import subprocess
import sys
import textwrap

import psutil
import pytest
from agentenv_webarena.actions import parse
from agentenv_webarena.browser import Browser
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from agentenv.testing import serve_app_in_thread

from helpers.processes import left_running

NEEDS_CHROMIUM = True  # (conftest.py skips the module where there is none)

HOME = """<!doctype html><html><head><title>One Stop Market</title></head><body>
<nav><a href="/">Home</a> <a href="/cart">My Cart</a></nav>
<h1>It's a deal</h1>
<form action="/search"><input type="text" name="q" aria-label="Search" required> <button>Search</button></form>
<ul><li><a href="/p/1">Blue Mug</a> <span>$12.99</span></li>
<li><a href="/p/2">Red Kettle</a> <span>$35.00</span></li></ul>
<div style="height:1000px"></div><button>Far below</button>
</body></html>"""


async def home(request):
    return HTMLResponse(HOME)


async def search(request):
    q = request.query_params.get("q", "")
    return HTMLResponse(f"<html><head><title>Search: {q}</title></head><body><h1>Results for {q}</h1></body></html>")


async def product(request):
    n = request.path_params["n"]
    return HTMLResponse(f"<html><head><title>Product {n}</title></head><body><h1>Product {n}</h1></body></html>")


@pytest.fixture(scope="module")
def site():
    app = Starlette(routes=[Route("/", home), Route("/search", search), Route("/p/{n}", product)])
    with serve_app_in_thread(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with Browser(settle=0.1) as b:
        yield b


def element(obs, text: str) -> str:
    """The id of the first printed node whose line holds ``text``."""
    return next(node_id for node_id, info in obs.nodes.items() if text in info.text)


def test_the_observation_is_the_tab_bar_and_the_tree_in_view(site, browser):
    obs = browser.open(site + "/")
    lines = obs.text.split("\n")
    assert lines[:2] == ["Tab 0 (current): One Stop Market", ""] and obs.url == site + "/"
    assert lines[2].startswith("[") and "] RootWebArea 'One Stop Market' focused: True" in lines[2]
    body = "\n".join(line.split("] ", 1)[1] for line in lines[2:])
    assert "link 'Home'" in body and "heading \"It's a deal\"" in body and "textbox 'Search' required: True" in body
    assert "StaticText '$12.99'" in body and "Far below" not in body  # 1000 px further down: out of view
    assert all(line.startswith("\t") for line in lines[3:])


def test_every_action_of_the_grammar(site, browser):
    obs = browser.open(site + "/")
    obs = browser.act(parse(f"type [{element(obs, 'textbox')}] [mug]"))  # Enter after typing
    assert obs.url == site + "/search?q=mug" and "Tab 0 (current): Search: mug" in obs.text and not obs.fail_error
    obs = browser.act(parse("go_back"))
    assert obs.url == site + "/"
    obs = browser.act(parse(f"click [{element(obs, 'Red Kettle')}]"))
    assert obs.url == site + "/p/2" and "heading 'Product 2'" in obs.text
    obs = browser.act(parse("go_back"))
    obs = browser.act(parse("go_forward"))
    assert obs.url == site + "/p/2"
    obs = browser.act(parse("goto [" + site + "/]"))
    obs = browser.act(parse("scroll [down]"))
    assert "Far below" in obs.text and "Blue Mug" not in obs.text
    obs = browser.act(parse("new_tab"))
    assert obs.text.startswith("Tab 0: One Stop Market | Tab 1 (current): ") and obs.url == "about:blank"
    obs = browser.act(parse("tab_focus [0]"))
    assert obs.text.startswith("Tab 0 (current): One Stop Market | Tab 1: ")
    obs = browser.act(parse("close_tab"))
    assert obs.text.startswith("Tab 0 (current): ") and "|" not in obs.text.split("\n")[0]
    obs = browser.act(parse("click [999999]"))
    assert "no element [999999]" in obs.fail_error  # a failure is the observation's, not an exception
    assert browser.act(parse("press [enter]")).fail_error == ""


def test_a_browser_dies_with_its_owner_however_that_dies(site):
    """Closed: every process of the browser ends (Playwright's driver, Chromium and its helpers). Its owner
    SIGKILLed: the server's reaper sees its pipe close and kills the driver and the browser's process group."""
    with Browser(settle=0) as b:
        b.open(site + "/")
        mine = b.pids()
        assert any("chrom" in psutil.Process(pid).name() for pid in mine)
    assert left_running(mine, timeout=15) == set()

    script = textwrap.dedent(f"""
        import time
        from agentenv_webarena.browser import Browser
        b = Browser(settle=0)
        b.open({site + '/'!r})
        print(" ".join(str(pid) for pid in b.pids()), flush=True)
        time.sleep(120)
    """)
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ})
    try:
        assert owner.stdout is not None
        pids = {int(p) for p in owner.stdout.readline().split()}
        assert pids
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
        assert left_running(pids, timeout=20) == set()
    finally:
        if owner.poll() is None:
            owner.kill()
