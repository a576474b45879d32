"""No browser process outlives its session or its server: a session that expires, a step past the time limit, a
server killed with SIGKILL (close is tested in test_env.py); and a page that hangs fails its action, not the server."""

import asyncio
import json
import os
import signal

import httpx
import psutil
import pytest
from agentenv_webarena.env import WebArenaEnv
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

from agentenv.client import EnvClient
from agentenv.errors import StepTimeout
from agentenv.server import ServerConfig
from agentenv.server_process import ServerProcess
from agentenv.testing import serve_app_in_thread, serve_in_thread

from helpers.processes import left_running

NEEDS_CHROMIUM = True  # (conftest.py skips the module where there is none)


def browsers_under(pid: int) -> set[int]:
    """Playwright's drivers and Chromium's processes started by process ``pid`` (crash reporters run apart)."""
    found = set()
    for p in psutil.Process(pid).children(recursive=True):
        try:
            line = " ".join(p.cmdline())
        except psutil.Error:
            continue
        if "run-driver" in line or "chrom" in p.name().lower():
            found.add(p.pid)
    return found


def test_an_expired_session_takes_its_browser_along():
    with ServerProcess("webarena", session_ttl=2.0) as server:
        client = EnvClient(server.url)
        client.create(0, "test")
        held = browsers_under(server.proc.pid)
        assert held
        assert not left_running(held, timeout=30), "the expired session's browser is still running"
        assert client.health()["sessions"] == 0


def test_a_killed_server_takes_every_browser_along():
    with ServerProcess("webarena") as server:
        client = EnvClient(server.url)
        for task in (0, 1):
            client.create(task, "test")
        held = browsers_under(server.proc.pid)
        assert len([p for p in held if "run-driver" in " ".join(psutil.Process(p).cmdline())]) == 2
        os.kill(server.proc.pid, signal.SIGKILL)
        assert not left_running(held, timeout=30), "browsers outlived their server"


async def hang(request):
    await asyncio.sleep(120)
    return HTMLResponse("late")


async def home(request):
    return HTMLResponse('<title>Fixture</title><h1>Fixture</h1><a href="/hang">Hang</a>')


class QuickTimeoutWebArena(WebArenaEnv):
    """The environment with a step time limit of 4 s (its own is 90 s)."""

    step_timeout = 4.0


def test_a_hanging_page_fails_its_action_and_a_step_past_the_limit_kills_the_browser(tmp_path):
    app = Starlette(routes=[Route("/", home), Route("/hang", hang)])
    with serve_app_in_thread(app) as site:
        config = tmp_path / "tasks.json"
        config.write_text(json.dumps([{"sites": ["shopping"], "task_id": 0, "require_login": False,
                                       "storage_state": None, "start_url": "__SHOPPING__", "intent": "wait",
                                       "eval": {"eval_types": ["url_match"], "reference_url": "__SHOPPING__/"}}]))
        options = {"config": str(config), "sites": f"shopping={site}", "settle": 0.05}
        # Playwright's page limit (1 s) below the step limit: the action fails, the session goes on
        with serve_in_thread(QuickTimeoutWebArena, ServerConfig(options={**options, "page_timeout": 1.0})) as url:
            client = EnvClient(url)
            created = client.create(0, "test")
            step = client.step(created.env_id, f"```goto [{site}/hang]```")
            assert "it failed" in step.observation and "Timeout" in step.observation and not step.done
            client.close(created.env_id)
        # the page limit above the step limit: the runtime gives up on the session and kills its browser
        with serve_in_thread(QuickTimeoutWebArena, ServerConfig(options={**options, "page_timeout": 60.0})) as url:
            client = EnvClient(url)
            created = client.create(0, "test")
            held = browsers_under(os.getpid())
            with pytest.raises(StepTimeout):
                client.step(created.env_id, f"```goto [{site}/hang]```")
            assert not left_running(held, timeout=20), "the browser of a session that timed out is still running"
            with pytest.raises(httpx.HTTPError):
                httpx.get(f"{site}/hang", timeout=0.5)  # (the site itself is still hanging)
