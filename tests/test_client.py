"""Client behaviour against real servers: retries, errors, the replica pool."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

from agentenv.client import AsyncEnvClient, EnvClient, EnvPool
from agentenv.errors import EpisodeDone, ServerUnavailable, SessionLimit, SessionNotFound, TaskNotFound
from agentenv.server import ServerConfig
from agentenv.testing import serve_in_thread

from toy_envs import EchoEnv


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_errors_carry_the_server_message(echo_url):
    with EnvClient(echo_url) as c:
        with pytest.raises(TaskNotFound, match="out of range"):
            c.create(10, "test")
        env_id = c.create(0).env_id
        c.step(env_id, "finish")
        with pytest.raises(EpisodeDone) as err:
            c.step(env_id, "x")
        assert err.value.status == 409 and "has ended" in err.value.message
        c.close(env_id)
        with pytest.raises(SessionNotFound):
            c.close(env_id)


def test_unreachable_server_raises_after_retries():
    with EnvClient(f"http://127.0.0.1:{_free_port()}", retries=2, backoff=0.01) as c:
        t0 = time.monotonic()
        with pytest.raises(ServerUnavailable, match="did not answer"):
            c.create(0)
        assert time.monotonic() - t0 < 5


def test_connection_errors_are_retried_until_the_server_is_up():
    """A create sent while the server is still starting succeeds once it listens."""
    import uvicorn

    from agentenv.server import bind_socket, create_app, run_event_loop

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(EchoEnv), log_level="error"))

    def start_late() -> None:
        time.sleep(0.4)
        run_event_loop(server.serve(sockets=[bind_socket("127.0.0.1", port)]))

    threading.Thread(target=start_late, daemon=True).start()
    try:
        with EnvClient(f"http://127.0.0.1:{port}", retries=6, backoff=0.1) as c:
            assert c.create(2).observation.startswith("task train/2")
    finally:
        server.should_exit = True


async def test_pool_spreads_sessions_and_closes_them_when_the_caller_fails():
    with serve_in_thread(EchoEnv) as u1, serve_in_thread(EchoEnv) as u2:
        pool = EnvPool([u1, u2])
        sessions = [await pool.open(i) for i in range(6)]
        by_url = {c.base_url: (await c.health())["sessions"] for c in pool.clients}
        assert by_url == {u1: 3, u2: 3}

        class Boom(Exception):
            pass

        with pytest.raises(Boom):
            async with pool.session(7) as s:
                await s.step("wait")
                raise Boom
        assert pool.open_sessions == 6
        await sessions[0].close()
        assert pool.open_sessions == 5
        await pool.aclose()  # closes the five still open
        async with AsyncEnvClient(u1) as c1, AsyncEnvClient(u2) as c2:
            assert (await c1.health())["sessions"] == 0 and (await c2.health())["sessions"] == 0


async def test_pool_fails_over_to_a_live_replica():
    dead = f"http://127.0.0.1:{_free_port()}"
    with serve_in_thread(EchoEnv) as live:
        async with EnvPool([dead, live], retries=1, backoff=0.01) as pool:
            sessions = await asyncio.gather(*(pool.open(i) for i in range(4)))
            assert {s.client.base_url for s in sessions} == {live}
            assert (await sessions[0].step("finish")).success


async def test_pool_reports_a_full_server():
    with serve_in_thread(EchoEnv, ServerConfig(max_sessions=1)) as url:
        async with EnvPool([url]) as pool:
            await pool.open(0)
            with pytest.raises(SessionLimit):
                await pool.open(1)


async def test_coalesced_steps_share_requests(echo_url):
    async with AsyncEnvClient(echo_url) as c:
        created = await asyncio.gather(*(c.create(i) for i in range(16)))
        sent = []
        original = c.step_batch

        async def counting(steps):
            sent.append(len(steps))
            return await original(steps)

        c.step_batch = counting  # type: ignore[method-assign]
        steps = await asyncio.gather(*(c.step(cr.env_id, "wait") for cr in created))
        assert all(s.observation.endswith("history wait") for s in steps)
        assert sum(sent) == 16 and len(sent) < 16  # fewer requests than steps
        await asyncio.gather(*(c.close(cr.env_id) for cr in created))


async def test_pool_moves_on_from_a_full_replica():
    with serve_in_thread(EchoEnv, ServerConfig(max_sessions=1)) as small, serve_in_thread(EchoEnv) as big:
        async with EnvPool([small, big]) as pool:
            sessions = [await pool.open(i) for i in range(3)]
            assert sorted(s.client.base_url == big for s in sessions) == [False, True, True]
