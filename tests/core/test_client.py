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

from helpers.toy_envs import EchoEnv


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


async def test_pool_reports_a_server_that_stays_full():
    with serve_in_thread(EchoEnv, ServerConfig(max_sessions=1)) as url:
        async with EnvPool([url], wait_full=1.0) as pool:
            await pool.open(0)
            t0 = time.monotonic()
            with pytest.raises(SessionLimit, match=r"stayed full for 1 s \(1 replica\(s\), 1 session\(s\) open"):
                await pool.open(1)
            assert time.monotonic() - t0 >= 1.0  # it waited before giving up


class _CountingEchoEnv(EchoEnv):
    """EchoEnv that records how many of its sessions were ever alive at once (the server runs in this process)."""

    alive = peak = 0

    def reset(self, task_id, split, seed=None):
        if not hasattr(self, "task"):
            type(self).alive += 1
            type(self).peak = max(type(self).peak, type(self).alive)
        return super().reset(task_id, split, seed)

    def close(self):
        type(self).alive -= 1


async def test_pool_queues_episodes_beyond_the_session_cap_and_plays_them_all():
    """A trainer starts a step's 16 episodes at once; the server holds 4: every episode is played, in turns."""
    _CountingEchoEnv.alive = _CountingEchoEnv.peak = 0
    with serve_in_thread(_CountingEchoEnv, ServerConfig(max_sessions=4)) as url:
        async with EnvPool([url]) as pool:
            async def episode(task_id: int) -> tuple[int, float]:
                async with pool.session(task_id) as sess:
                    await sess.step("wait")
                    await asyncio.sleep(0.05)  # the model's turn
                    step = await sess.step("finish")
                    return task_id, step.reward

            done = await asyncio.wait_for(asyncio.gather(*(episode(t) for t in range(16))), 60)
            assert sorted(done) == [(t, 1.0) for t in range(16)]  # none lost, each its own task
            assert pool.open_sessions == 0 and pool.queued == 0
    assert _CountingEchoEnv.peak == 4  # full, never over


async def test_a_queued_open_takes_a_session_another_process_frees():
    """The wait also polls: a session closed by another client (another rollout worker) lets it in."""
    with serve_in_thread(EchoEnv, ServerConfig(max_sessions=1)) as url:
        async with AsyncEnvClient(url) as other, EnvPool([url], wait_full=30) as pool:
            held = await other.create(0)
            opening = asyncio.create_task(pool.open(1))
            await asyncio.sleep(0.3)
            assert not opening.done() and pool.queued == 1
            await other.close(held.env_id)
            sess = await asyncio.wait_for(opening, 5)
            assert sess.observation.startswith("task train/1")


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
