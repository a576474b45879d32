"""Protocol v1 over real HTTP: every route, every error code, limits and isolation."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from agentenv.client import AsyncEnvClient, EnvClient
from agentenv.server import ServerConfig
from agentenv.testing import serve_in_thread

from helpers.toy_envs import CloseCounterEnv, EchoEnv


@pytest.fixture
def client(echo_url):
    with EnvClient(echo_url) as c:
        yield c


def _error(resp: httpx.Response, status: int, etype: str | None = None) -> dict:
    assert resp.status_code == status, resp.text
    body = resp.json()["error"]
    assert isinstance(body["message"], str) and body["message"]
    if etype:
        assert body["type"] == etype
    return body


def test_health_and_info(echo_url):
    assert httpx.get(f"{echo_url}/health").json() == {"status": "ok", "env": "echo", "sessions": 0, "protocol": 1} \
        or httpx.get(f"{echo_url}/health").json()["protocol"] == 1
    info = httpx.get(f"{echo_url}/info").json()
    # protocol v1's original four fields, then the metadata added since, at the defaults of an env declaring none
    assert {k: info.pop(k) for k in ("env", "splits", "max_turns", "action_format")} == \
        {"env": "echo", "splits": {"train": 100, "test": 10}, "max_turns": 5, "action_format": "text"}
    assert len(info.pop("fingerprint")) == 16
    assert info == {"action_hint": "any text", "code_language": None, "instruction": "", "tools": [],
                    "success_threshold": 1.0, "max_sessions": 1024, "step_timeout": None, "options": {},
                    "version": "1", "profile": "native"}


def test_episode_through_every_route(client):
    created = client.create(3, "test", seed=11)
    assert created.observation == "task test/3 seed 11: say 'finish' to win"
    assert client.observation(created.env_id) == created.observation
    assert client.available_actions(created.env_id) == ["finish", "wait"]
    step = client.step(created.env_id, "hello")
    assert (step.observation, step.reward, step.done) == ("task 3 history hello", 0.0, False)
    assert step.info == {"success": False, "score": 0.0, "valid": True, "turn": 1}
    assert client.step(created.env_id, "nonsense").valid is False
    assert client.policy_action(created.env_id, "expert") == "finish"
    assert client.suggest(created.env_id, "expert").thought == "2 actions so far; time to finish"
    random_choice = client.suggest(created.env_id, "random")
    assert random_choice.action in ("finish", "wait") and random_choice.thought is None
    reset = client.reset(created.env_id, 4)  # keeps the split
    assert reset.env_id == created.env_id and reset.observation.startswith("task test/4")
    final = client.step(created.env_id, "finish")
    assert final.done and final.reward == 1.0 and final.success and final.score == 7.0
    assert client.health()["sessions"] >= 1
    client.close(created.env_id)
    with pytest.raises(Exception, match="unknown env_id"):
        client.observation(created.env_id)


def test_episode_truncates_at_max_turns(client):
    env_id = client.create(0).env_id
    steps = [client.step(env_id, "wait") for _ in range(EchoEnv.max_turns)]
    assert [s.done for s in steps] == [False] * 4 + [True]
    assert steps[-1].info["truncated"] is True and not steps[-1].success
    client.close(env_id)


@pytest.mark.parametrize("method,path,kwargs", [
    ("POST", "/step", {"json": {"env_id": "nope", "action": "x"}}),
    ("POST", "/reset", {"json": {"env_id": "nope", "task_id": 0}}),
    ("POST", "/close", {"json": {"env_id": "nope"}}),
    ("GET", "/observation", {"params": {"env_id": "nope"}}),
    ("GET", "/available_actions", {"params": {"env_id": "nope"}}),
    ("GET", "/policy_action", {"params": {"env_id": "nope"}}),
])
def test_unknown_env_id_is_404_on_every_route(echo_url, method, path, kwargs):
    _error(httpx.request(method, echo_url + path, **kwargs), 404, "unknown_env_id")


def test_malformed_requests(echo_url):
    _error(httpx.post(f"{echo_url}/create", content=b"{not json", headers={"content-type": "application/json"}),
           400, "bad_request")
    _error(httpx.post(f"{echo_url}/create", json={"split": "test"}), 422, "validation_error")
    _error(httpx.post(f"{echo_url}/create", json={"task_id": "three"}), 422)
    _error(httpx.post(f"{echo_url}/create", json={"task_id": 1, "split": "validation"}), 422)
    _error(httpx.post(f"{echo_url}/step", json={"env_id": "x"}), 422)
    _error(httpx.get(f"{echo_url}/observation"), 422)
    _error(httpx.get(f"{echo_url}/no/such/route"), 404, "no_such_route")
    _error(httpx.get(f"{echo_url}/create"), 405)


def test_task_out_of_range_is_404(echo_url, client):
    _error(httpx.post(f"{echo_url}/create", json={"task_id": 10, "split": "test"}), 404, "unknown_task_id")
    _error(httpx.post(f"{echo_url}/create", json={"task_id": -1}), 404, "unknown_task_id")
    env_id = client.create(0, "test").env_id
    _error(httpx.post(f"{echo_url}/reset", json={"env_id": env_id, "task_id": 50}), 404, "unknown_task_id")
    assert client.reset(env_id, 50, "train").observation.startswith("task train/50")
    client.close(env_id)


def test_step_after_done_is_409(echo_url, client):
    env_id = client.create(0).env_id
    client.step(env_id, "finish")
    _error(httpx.post(f"{echo_url}/step", json={"env_id": env_id, "action": "x"}), 409, "episode_done")
    _error(httpx.get(f"{echo_url}/policy_action", params={"env_id": env_id}), 409)
    client.reset(env_id, 1)
    assert not client.step(env_id, "wait").done  # a reset episode steps again
    client.close(env_id)


def test_oversize_action_and_body_are_413(echo_url, client):
    env_id = client.create(0).env_id
    _error(httpx.post(f"{echo_url}/step", json={"env_id": env_id, "action": "a" * 20_000}), 413,
           "payload_too_large")
    _error(httpx.post(f"{echo_url}/step", content=b"x" * (2 << 20), headers={"content-type": "application/json"}),
           413)

    def chunks():  # no content-length: the cap must hold while streaming
        for _ in range(40):
            yield b"y" * 65536

    _error(httpx.post(f"{echo_url}/step", content=chunks(), headers={"content-type": "application/json"}), 413)
    assert client.step(env_id, "wait").observation == "task 0 history wait"  # nothing lost
    client.close(env_id)


def test_session_limit_is_429_and_frees_on_close():
    with serve_in_thread(EchoEnv, ServerConfig(max_sessions=3)) as url, EnvClient(url) as c:
        ids = [c.create(i).env_id for i in range(3)]
        _error(httpx.post(f"{url}/create", json={"task_id": 0}), 429, "session_limit")
        c.close(ids[0])
        ids[0] = c.create(5).env_id
        assert c.health()["sessions"] == 3


def test_crash_is_500_and_others_keep_working(echo_url, client):
    a, b = client.create(0).env_id, client.create(1).env_id
    body = _error(httpx.post(f"{echo_url}/step", json={"env_id": a, "action": "crash"}), 500, "environment_error")
    assert "boom" in body["message"]
    assert client.step(b, "wait").observation == "task 1 history wait"
    assert client.step(a, "wait").observation == "task 0 history wait"  # the crashed session is still usable
    assert client.health()["status"] == "ok"
    client.close(a)
    client.close(b)


def test_token_guards_every_route_but_health():
    with serve_in_thread(EchoEnv, ServerConfig(token="s3cret")) as url:
        assert httpx.get(f"{url}/health").status_code == 200
        _error(httpx.get(f"{url}/info"), 401, "unauthorized")
        _error(httpx.post(f"{url}/create", json={"task_id": 0}, headers={"Authorization": "Bearer wrong"}), 401)
        with EnvClient(url, token="s3cret") as c:
            env_id = c.create(0).env_id
            assert c.step(env_id, "finish").success
            c.close(env_id)


def test_step_batch_orders_per_session_and_isolates_errors(echo_url, client):
    a, b = client.create(0).env_id, client.create(1).env_id
    results = client.step_batch([(a, "x"), (b, "y"), ("nope", "z"), (a, "crash"), (a, "w"), (b, "a" * 20_000)])
    assert results[0].observation == "task 0 history x"
    assert results[1].observation == "task 1 history y"
    assert results[2].status == 404
    assert results[3].status == 500
    assert results[4].observation == "task 0 history x|w"
    assert results[5].status == 413
    raw = httpx.post(f"{echo_url}/step_batch", json={"steps": [{"env_id": "nope", "action": "x"}]})
    assert raw.status_code == 200 and raw.json()["results"][0]["status"] == 404
    client.close(a)
    client.close(b)


@pytest.mark.parametrize("coalesce", [True, False])
async def test_64_concurrent_sessions_no_cross_talk(echo_url, coalesce):
    async with AsyncEnvClient(echo_url, coalesce=coalesce) as c:
        created = await asyncio.gather(*(c.create(i % 100, "train") for i in range(64)))

        async def play(k: int, env_id: str) -> list[str]:
            observations = []
            for t in range(4):
                step = await c.step(env_id, f"s{k}t{t}")
                observations.append(step.observation)
            return observations

        results = await asyncio.gather(*(play(k, cr.env_id) for k, cr in enumerate(created)))
        for k, obs in enumerate(results):
            assert obs[-1] == f"task {k % 100} history " + "|".join(f"s{k}t{t}" for t in range(4))
        assert (await c.health())["sessions"] == 64
        await asyncio.gather(*(c.close(cr.env_id) for cr in created))
        assert (await c.health())["sessions"] == 0


async def test_slow_session_does_not_block_others(echo_url):
    async with AsyncEnvClient(echo_url, coalesce=False) as c:
        slow, fast = (await c.create(0)).env_id, (await c.create(1)).env_id
        finished: list[str] = []

        async def step(env_id: str, action: str, tag: str) -> None:
            await c.step(env_id, action)
            finished.append(tag)

        slow_task = asyncio.create_task(step(slow, "sleep", "slow"))
        await asyncio.sleep(0.05)
        await asyncio.gather(*(step(fast, "wait", f"fast{i}") for i in range(3)))
        await slow_task
        assert finished[-1] == "slow", finished  # three round trips finished during one slow step
        await c.close(slow)
        await c.close(fast)


def test_idle_sessions_expire_and_are_closed():
    CloseCounterEnv.closed = 0
    # a TTL a stalled keep-alive loop cannot outlast on two contended cores (0.3 s did, once, in a suite run)
    with serve_in_thread(CloseCounterEnv, ServerConfig(session_ttl=1.0)) as url, EnvClient(url) as c:
        idle = c.create(0).env_id
        busy = c.create(1).env_id
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:  # keep one session in use past the TTL
            c.step(busy, "wait") if c.observation(busy).count("|") < 2 else c.observation(busy)
            time.sleep(0.05)
        _error(httpx.post(f"{url}/step", json={"env_id": idle, "action": "x"}), 404, "unknown_env_id")
        assert c.observation(busy)
        assert CloseCounterEnv.closed == 1
        assert c.health()["sessions"] == 1
    assert CloseCounterEnv.closed == 2  # shutdown closes what is left
