"""``agentenv serve NAME --compat openenv``: this project's servers driven by OpenEnv's own client (``openenv`` from
PyPI, pinned), over its WebSocket session channel, to the same episodes as over protocol v1."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import httpx
import pytest
import websockets
from openenv.core.generic_client import GenericEnvClient

from agentenv import registry
from agentenv.actions import parse_tool_call
from agentenv.client import EnvClient
from agentenv.interop.openenv_server import create_openenv_app
from agentenv.server import ServerConfig
from agentenv.testing import serve_app_in_thread, serve_in_thread


def typed(env: str, action: str) -> dict:
    """An action string of protocol v1 as the environment's OpenEnv action."""
    fmt = registry.load(env).describe()["action_format"]
    if fmt == "tool":
        call = parse_tool_call(action)
        return {"tool": call.name, "arguments": call.arguments}
    return {"code": action} if fmt == "code" else {"action": action}


def expert_episode(env: str, task_id: int) -> tuple[str, list[str], list[tuple[str, float, bool]]]:
    """The expert over protocol v1: the first observation, its actions, each step's text, reward and done."""
    with serve_in_thread(registry.load(env)) as url, EnvClient(url) as c:
        created = c.create(task_id, "test")
        actions, steps = [], []
        while not steps or not steps[-1][2]:
            actions.append(c.policy_action(created.env_id, "expert"))
            s = c.step(created.env_id, actions[-1])
            steps.append((s.observation, s.reward, s.done))
        c.close(created.env_id)
    return created.observation, actions, steps


@pytest.mark.parametrize("env", ["maze", "weather", "sqlgym"])  # a text, a tool and a code environment
def test_an_expert_episode_through_openenvs_client_is_the_protocol_v1_episode(env):
    first, actions, expected = expert_episode(env, 2)
    assert expected[-1][1] > 0 and expected[-1][2]  # the expert solves it
    with serve_app_in_thread(create_openenv_app(registry.load(env))) as url, \
            GenericEnvClient(base_url=url).sync() as client:
        reset = client.reset(task_id=2, split="test")
        assert reset.observation["text"] == first and reset.reward is None and reset.done is False
        got = []
        for action in actions:
            r = client.step(typed(env, action))
            assert r.observation["valid"] is True
            got.append((r.observation["text"], r.reward, r.done))
        assert got == expected
        assert r.observation["success"] is True and r.observation["available_actions"] == []
        state = client.state()
        assert state["step_count"] == len(actions) and state["task_id"] == 2 and state["split"] == "test"
        assert state["env"] == env and state["episode_id"]


def test_schemas_metadata_health_and_the_stateless_routes():
    weather = registry.load("weather")
    with serve_app_in_thread(create_openenv_app(weather)) as url:
        schema = httpx.get(url + "/schema").json()
        assert set(schema) == {"action", "observation", "state"}
        tools = {t["name"]: t for t in weather.describe()["tools"]}
        assert schema["action"]["properties"]["tool"]["enum"] == list(tools)
        assert {o["properties"]["tool"]["const"]: o["properties"]["arguments"] for o in schema["action"]["oneOf"]} \
            == {name: t["parameters"] for name, t in tools.items()}  # every tool's argument schema
        assert {"text", "valid", "available_actions", "info"} <= set(schema["observation"]["properties"])
        meta = httpx.get(url + "/metadata").json()
        assert meta["name"] == "weather" and meta["version"] == weather.version and meta["description"]
        assert httpx.get(url + "/health").json() == {"status": "healthy"}
        first = httpx.post(url + "/reset", json={"task_id": 1, "split": "test"}).json()
        with serve_in_thread(weather) as v1, EnvClient(v1) as c:
            assert first["observation"]["text"] == c.create(1, "test").observation and first["done"] is False
        assert httpx.post(url + "/reset", json={"task_id": 10**6}).status_code == 404
        assert httpx.post(url + "/reset", json={"split": "dev"}).status_code == 422
        step = httpx.post(url + "/step", json={"action": {"tool": "get_user_current_date"}})
        assert step.status_code == 409 and "/ws" in step.json()["error"]["message"]
        listed = httpx.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).json()
        assert listed["id"] == 7 and {t["name"]: t["inputSchema"] for t in listed["result"]["tools"]} == {
            name: t["parameters"] for name, t in tools.items()}
        called = httpx.post(url + "/mcp", json={"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {}})
        assert called.json()["error"]["code"] == -32000 and "/ws" in called.json()["error"]["message"]
        assert httpx.post(url + "/mcp", json={}).json()["error"]["code"] == -32600
    with serve_app_in_thread(create_openenv_app(registry.load("sqlgym"))) as url:
        assert set(httpx.get(url + "/schema").json()["action"]["required"]) == {"code"}


def test_concurrent_connections_play_their_own_episodes():
    maze = registry.load("maze")
    expected = {t: expert_episode("maze", t) for t in (0, 1, 2, 3)}

    async def play(url: str, task_id: int) -> list[tuple[str, float, bool]]:
        async with GenericEnvClient(base_url=url) as client:
            await client.reset(task_id=task_id, split="test")
            out = []
            for action in expected[task_id][1]:
                r = await client.step({"action": action})
                out.append((r.observation["text"], r.reward, r.done))
            return out

    async def main(url: str) -> list:
        return await asyncio.gather(*(play(url, t) for t in expected))

    with serve_app_in_thread(create_openenv_app(maze, ServerConfig(max_sessions=4))) as url:
        results = asyncio.run(main(url))
        assert results == [expected[t][2] for t in expected]


def test_the_session_cap_is_openenvs_capacity_error_and_a_closed_connection_frees_its_session():
    with serve_app_in_thread(create_openenv_app(registry.load("maze"), ServerConfig(max_sessions=1))) as url:
        first = GenericEnvClient(base_url=url).sync()
        first.reset(task_id=0, split="test")
        with pytest.raises(RuntimeError, match=r"all in use \(code: CAPACITY_REACHED\)"), \
                GenericEnvClient(base_url=url).sync() as second:
            second.reset(task_id=1, split="test")
        first.close()
        with GenericEnvClient(base_url=url).sync() as third:  # the first's session went with its connection
            assert third.reset(task_id=1, split="test").observation["text"]


def test_malformed_messages_and_actions_are_errors_that_keep_the_session():
    maze = registry.load("maze")

    async def talk(url: str) -> list[dict]:
        answers = []
        async with websockets.connect(url.replace("http", "ws") + "/ws") as ws:
            for message in ("{not json", json.dumps({"type": "jump"}), json.dumps({"type": "step", "data": {}}),
                            json.dumps({"type": "reset", "data": {"task_id": 0, "split": "test"}}),
                            json.dumps({"type": "step", "data": {"act": "move up"}}),
                            json.dumps({"type": "step", "data": {"action": "x" * 100_000}}),
                            json.dumps({"type": "step", "data": {"action": "fly away"}}),
                            json.dumps({"type": "reset", "data": {"task_id": 10**6, "split": "test"}}),
                            json.dumps({"type": "state"})):
                await ws.send(message)
                answers.append(json.loads(await ws.recv()))
        return answers

    with serve_app_in_thread(create_openenv_app(maze)) as url:
        answers = asyncio.run(talk(url))
    codes = [a["data"].get("code") if a["type"] == "error" else a["type"] for a in answers]
    assert codes == ["INVALID_JSON", "UNKNOWN_TYPE", "EXECUTION_ERROR", "observation", "VALIDATION_ERROR",
                     "VALIDATION_ERROR", "observation", "VALIDATION_ERROR", "state"]
    assert "reset before the first step" in answers[2]["data"]["message"]
    assert "exceeds the limit" in answers[5]["data"]["message"]
    invalid = answers[6]["data"]
    assert invalid["observation"]["valid"] is False and invalid["done"] is False  # the environment's own answer
    assert answers[8]["data"]["step_count"] == 1  # the session went on
    with serve_app_in_thread(create_openenv_app(registry.load("weather"))) as url, \
            GenericEnvClient(base_url=url).sync() as client:
        client.reset(task_id=0, split="test")
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):  # not one of its tools
            client.step({"tool": "rm_rf", "arguments": {}})


def test_a_token_guards_the_session_channel_and_the_routes_but_not_health():
    config = ServerConfig(token="s3cret")
    with serve_app_in_thread(create_openenv_app(registry.load("maze"), config)) as url:
        with pytest.raises(RuntimeError, match="missing or wrong bearer token"), \
                GenericEnvClient(base_url=url).sync() as client:
            client.reset(task_id=0, split="test")
        with GenericEnvClient(base_url=url, headers={"Authorization": "Bearer s3cret"}).sync() as client:
            assert client.reset(task_id=0, split="test").observation["text"]
        assert httpx.get(url + "/schema").status_code == 401 and httpx.get(url + "/health").status_code == 200


def test_agentenv_serve_compat_openenv():
    proc = subprocess.Popen([sys.executable, "-m", "agentenv", "serve", "maze", "--compat", "openenv", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={k: v for k, v in os.environ.items() if k != "AGENTENV_TOKEN"})
    try:
        url = proc.stdout.readline().strip().rsplit(" ", 1)[-1]
        with GenericEnvClient(base_url=url).sync() as client:
            assert client.reset(task_id=0, split="test").observation["available_actions"]
    finally:
        proc.terminate()
        proc.wait(30)


def test_openenvs_own_validator_passes_the_server():
    """``openenv validate URL``'s checks of a running server (its OpenAPI version, /health, /metadata, /schema,
    the mode's routes, the WebSocket channel), from the pinned package."""
    from openenv.cli._validation import validate_running_environment

    with serve_app_in_thread(create_openenv_app(registry.load("maze"))) as url:
        report = validate_running_environment(url)
    failed = [c for c in report["criteria"] if not c["passed"]]
    assert report["passed"] and not failed, failed
    assert len(report["criteria"]) >= 4


def test_export_writes_a_manifest_an_app_and_a_dockerfile_that_serve_the_environment(tmp_path):
    """``agentenv export openenv sciworld``: OpenEnv's manifest, the app its tooling loads (served here and
    played with OpenEnv's client), and a Dockerfile that installs the sources with the package's own setup.sh
    (which installs Java for sciworld) and serves beyond loopback (so with a token). No container is built here:
    this machine has no Docker."""
    import yaml

    out = tmp_path / "sciworld-openenv"
    done = subprocess.run([sys.executable, "-m", "agentenv", "export", "openenv", "sciworld", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    manifest = yaml.safe_load((out / "openenv.yaml").read_text())
    assert manifest == {"spec_version": 1, "name": "sciworld", "version": registry.load("sciworld").version,
                        "type": "space", "runtime": "fastapi", "app": "server.app:app", "port": 8000}
    assert (out / "src" / "agentenv" / "setup.py").is_file()
    assert (out / "src" / "agentenv-sciworld" / "setup.sh").is_file()
    assert not list(out.rglob("*.egg-info")) and not list(out.rglob("tests"))
    docker = (out / "server" / "Dockerfile").read_text()
    assert "bash /app/src/agentenv-sciworld/setup.sh" in docker
    assert '"--compat", "openenv", "--host", "0.0.0.0"' in docker and "AGENTENV_TOKEN" in docker
    again = subprocess.run([sys.executable, "-m", "agentenv", "export", "openenv", "sciworld", "--out", str(out)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "exists and is not empty" in again.stderr
    maze = tmp_path / "maze-openenv"
    subprocess.run([sys.executable, "-m", "agentenv", "export", "openenv", "maze", "--out", str(maze)], check=True,
                   capture_output=True, timeout=120)
    namespace: dict = {}
    exec(compile((maze / "server" / "app.py").read_text(), "app.py", "exec"), namespace)  # what uvicorn loads
    with serve_app_in_thread(namespace["app"]) as url, GenericEnvClient(base_url=url).sync() as client:
        assert client.reset(task_id=0, split="test").observation["available_actions"]
