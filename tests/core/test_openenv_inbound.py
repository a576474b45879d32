"""OpenEnv inbound: servers built with OpenEnv's own server library (``openenv`` from PyPI, small environments
written in tests/helpers/openenv_envs.py) driven through ``openenv+ws://`` URLs by this project's replica pool,
episode driver, ``agentenv play`` and ``agentenv-eval``; and this project's own ``--compat openenv`` server driven
back the same way, to the same tasks and rewards as over protocol v1. (The two-step ``train_ppo.sh`` run, and
more, is the learning test's: tests/training/test_learning.py trains on an OpenEnv fork.)"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation

from agentenv import registry
from agentenv.addresses import ServerError, parse_server_specs
from agentenv.client import EnvPool, client_for
from agentenv.errors import ServerUnavailable, TaskNotFound
from agentenv.interop.openenv_client import OpenEnvClient, action_shape, observation_text
from agentenv.interop.openenv_server import create_openenv_app
from agentenv.launcher import check_servers, server_info
from agentenv.server import ServerConfig
from agentenv.testing import serve_app_in_thread

from helpers import REPO
from helpers.openenv_envs import (
    CounterMCPEnv,
    DoorAction,
    DoorsEnv,
    LockAction,
    LockEnv,
    LockObservation,
    TextObservation,
    serve_openenv,
)
from helpers.toy_envs import ForkEnv


def url_of(ws: str, name: str, **settings: object) -> str:
    query = "&".join(f"{k}={v}" for k, v in settings.items())
    return f"openenv+{ws}{'?' + query if query else ''}#{name}"


def run(coro):
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def doors():
    with serve_openenv(DoorsEnv, DoorAction, TextObservation) as ws:
        yield ws


def test_server_specs_read_openenv_urls_and_refuse_malformed_ones():
    specs = parse_server_specs(["fork=openenv+ws://127.0.0.1:9/?train=4", "fork=openenv+http://h:8/env",
                                "lock=openenv+https://h"])
    assert specs == {"fork": ["openenv+ws://127.0.0.1:9?train=4#fork", "openenv+ws://h:8/env#fork"],
                     "lock": ["openenv+wss://h#lock"]}
    for bad in ("fork=openenv+ftp://h:1", "fork=openenv+ws://", "openenv+ws://h:1"):
        with pytest.raises(ServerError, match="NAME="):
            parse_server_specs([bad])
    with pytest.raises(ValueError, match="unknown setting"):
        OpenEnvClient("openenv+ws://h:1?trian=4#fork")


def test_an_openenv_text_environment_plays_as_one_of_ours(doors):
    """Info from /schema and /metadata, the episode over /ws: the same observations, rewards and success as the
    fork this environment was written after, played in process."""
    url = url_of(doors, "fork", train=64, test=8, max_turns=2)
    info = server_info([url])
    assert (info.env, info.splits, info.max_turns) == ("fork", {"train": 64, "test": 8}, 2)
    assert (info.action_format, info.action_hint, info.instruction) == ("text", ForkEnv.action_hint,
                                                                        ForkEnv.instruction)
    assert isinstance(client_for(url), OpenEnvClient)

    async def play(doors_chosen):
        async with EnvPool([url]) as pool, pool.session(3, "test") as sess:
            seen = [sess.observation]
            steps = [await sess.step(door) for door in doors_chosen]
            return seen + [s.observation for s in steps], steps

    for chosen in (["left", "left"], ["right", "fly"]):
        seen, steps = run(play(chosen))
        ref = ForkEnv()
        expected = [ref.reset(3, "test")[0]] + [ref.step(d).observation for d in chosen]
        assert seen == expected
        assert [s.done for s in steps] == [False, True]
        assert steps[-1].reward == ref.reward and steps[-1].info["score"] == ref.reward
        assert steps[-1].success == (chosen == ["left", "left"])

    with pytest.raises(TaskNotFound):
        run(EnvPool([url]).open(8, "test"))


def test_a_tool_shaped_action_a_refused_one_and_a_malformed_one():
    """An action of two integer fields is one tool; a call the server's validation refuses, or no tool call at all,
    is an observation saying why (the episode goes on); task k of the test split is seed 1000000 + k."""
    with serve_openenv(LockEnv, LockAction, LockObservation) as ws:
        url = url_of(ws, "lock", test=5)
        info = server_info([url])
        assert info.action_format == "tool" and [t.name for t in info.tools] == ["LockAction"]
        assert set(info.tools[0].parameters["properties"]) == {"position", "digit"}

        async def play():
            async with EnvPool([url]) as pool, pool.session(4, "test") as sess:
                first = sess.observation
                refused = await sess.step('LockAction with Action Input: {"position": 7, "digit": 1}')
                garbled = await sess.step("turn the dials")
                wrong_tool = await sess.step('Open with Action Input: {}')
                moves = [await sess.step(f'LockAction with Action Input: {{"position": 2, "digit": {d}}}')
                         for d in (3, 4)]
                return first, refused, garbled, wrong_tool, moves

        first, refused, garbled, wrong_tool, moves = run(play())
        assert json.loads(first) == {"dials": [0, 0, 0], "message": "Open the lock. Code hint: 1000004"}
        for step in (refused, garbled, wrong_tool):
            assert not step.info["valid"] and not step.done and step.observation == first
        assert "position" in refused.info["error"] and "less than or equal to 2" in refused.info["error"]
        assert "unknown tool 'Open'" in wrong_tool.info["error"]
        assert json.loads(moves[0].observation)["dials"] == [0, 0, 3] and not moves[0].done
        assert moves[1].done and moves[1].success and moves[1].reward == 1.0


def test_an_openenv_mcp_environment_is_played_through_its_mcp_tools():
    """OpenEnv's MCP environments take ``CallToolAction``: their tools come from MCP's ``tools/list`` and a reply's
    tool call is sent as ``call_tool``; a tool's failure is an invalid step saying why."""
    with serve_openenv(CounterMCPEnv, CallToolAction, CallToolObservation) as ws:
        url = url_of(ws, "counter", test=4)
        info = server_info([url])
        assert info.action_format == "tool" and sorted(t.name for t in info.tools) == ["add", "peek"]
        assert set(next(t for t in info.tools if t.name == "add").parameters["properties"]) == {"n"}

        async def play():
            async with EnvPool([url]) as pool, pool.session(2, "test") as sess:  # seed 1000002: target 5
                first = sess.observation
                failed = await sess.step('add with Action Input: {"n": 9}')
                steps = [await sess.step(f'add with Action Input: {{"n": {n}}}') for n in (2, 3)]
                return first, failed, steps

        first, failed, steps = run(play())
        assert first == "Count to exactly 5 with add(n)."
        assert not failed.info["valid"] and "n must be 1-5" in failed.observation
        assert steps[0].observation == "The count is 2." and not steps[0].done
        assert steps[1].done and steps[1].success and steps[1].reward == 1.0


def test_a_full_openenv_server_is_waited_for_and_a_dead_one_is_unavailable():
    """OpenEnv answers a connection past its cap with CAPACITY_REACHED: the pool waits for a session to close
    (a full server here queues, it does not drop); a server that goes away mid-episode is unavailable (the
    trainer's agent loop replays such an episode on another replica)."""
    with serve_openenv(LockEnv, LockAction, LockObservation, max_concurrent_envs=1) as ws:
        url = url_of(ws, "lock")

        async def queue():
            async with EnvPool([url], wait_full=30) as pool:
                first = await pool.open(0, "train")
                second = asyncio.create_task(pool.open(1, "train"))
                await asyncio.sleep(1.0)
                waiting = not second.done()
                await first.close()
                sess = await asyncio.wait_for(second, 20)
                await sess.close()
                return waiting, sess.observation

        waiting, observation = run(queue())
        assert waiting and "Code hint: 1" in observation

    with serve_openenv(LockEnv, LockAction, LockObservation) as ws:
        client = OpenEnvClient(url_of(ws, "lock"))
        loop = asyncio.new_event_loop()
        created = loop.run_until_complete(client.create(0))
    with pytest.raises(ServerUnavailable):  # the server has stopped
        loop.run_until_complete(client.step(created.env_id, 'LockAction with Action Input: {"position": 0}'))
    loop.run_until_complete(client.aclose())
    loop.close()


def test_this_projects_openenv_server_driven_back_gives_the_tasks_and_rewards_of_protocol_v1():
    """maze served with ``--compat openenv`` and driven through ``openenv+ws://``: reset passes task and split
    through (OpenEnv hands them to a reset that takes them), so each test task's first observation, and its expert
    episode's rewards, are protocol v1's."""
    maze = registry.load("maze")
    with serve_app_in_thread(create_openenv_app(maze, ServerConfig())) as http:
        url = url_of(http.replace("http://", "ws://"), "maze", test=3, max_turns=maze.max_turns)

        async def play(task_id):
            ref = maze()
            first, _ = ref.reset(task_id, "test")
            async with EnvPool([url]) as pool, pool.session(task_id, "test") as sess:
                assert sess.observation == first
                rewards, expected = [], []
                while True:
                    action = ref.expert_action()
                    want = ref.step(action)
                    got = await sess.step(action)
                    rewards.append(got.reward)
                    expected.append(want.reward)
                    assert got.observation == want.observation
                    if got.done:
                        return rewards, expected, got.success

        for task_id in range(3):
            rewards, expected, success = run(play(task_id))
            assert rewards == expected and success

    # behind a token: the launchers' check and the sessions carry it, and without it the check says so
    with serve_app_in_thread(create_openenv_app(maze, ServerConfig(token="s3cret"))) as http:
        spec = parse_server_specs([f"maze=openenv+{http}?test=1"])
        check_servers(spec, "s3cret")
        with pytest.raises(ServerError, match="401"):
            check_servers(spec, None)

        async def first_with_token() -> str:
            async with EnvPool(spec["maze"], token="s3cret") as pool, pool.session(0, "test") as sess:
                return sess.observation

        assert run(first_with_token()) == maze().reset(0, "test")[0]


def test_agentevol_clones_given_trajectories_where_an_openenv_server_has_no_expert(doors, tmp_path):
    """AgentEvol's behaviour cloning needs expert episodes; an OpenEnv server has no expert, so train_agentevol.sh
    says so in one line (exit 2), and takes AgentTraj files instead (``data.expert_files.NAME=FILE``)."""
    from openmanus_rl import expert_data, trajectories

    server = f"fork={url_of(doors, 'fork', train=4, test=2, max_turns=2)}"
    proc = subprocess.run([str(REPO / "train_agentevol.sh"), "--env_name", "fork", "--server", server,
                           "--output_dir", str(tmp_path / "run")], capture_output=True, text=True, timeout=300,
                          cwd=REPO, env={**os.environ, "PYTHON": sys.executable})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "fork: an OpenEnv server has no expert policy; give expert trajectories" in proc.stderr
    assert "data.expert_files.fork=FILE" in proc.stderr

    messages = [{"role": "user", "content": "Choose a door."}, {"role": "assistant", "content": "Action: left"}]
    given = tmp_path / "fork.jsonl"
    trajectories.write(given, [trajectories.from_messages("fork", 0, messages, reward=1.0, success=True),
                               trajectories.from_messages("fork", 1, messages, reward=0.0, success=False)])
    from openmanus_rl import agentevol

    args, extra = agentevol.parse_args(["--env_name", "fork", f"data.expert_files.fork={given}"])
    assert agentevol.load_config(args, extra).data.expert_files.fork == str(given)  # a setting of the command line
    urls = parse_server_specs([server])
    paths = expert_data.collect(["fork"], tmp_path / "expert", 10, urls, given={"fork": given})
    kept = list(trajectories.read(paths["fork"]))
    assert [it["item_id"] for it in kept] == ["fork_0"]  # the successful one


class EndpointReplies:
    """An OpenAI-compatible chat endpoint that always goes left, and remembers the first prompt it saw."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def complete(request: Request) -> dict:
            body = await request.json()
            self.prompts.append(body["messages"][0]["content"])
            reply = "Thought: left has paid before.\nAction: left"
            return {"id": "x", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": reply}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

        return app


def test_agentenv_eval_and_play_on_an_openenv_server(doors, tmp_path):
    """The evaluator scores a policy on the OpenEnv server's test tasks as on any environment's; ``agentenv play``
    reaches it too (and says that OpenEnv has no scripted policies)."""
    url = url_of(doors, "fork", test=4, max_turns=2)
    endpoint = EndpointReplies()
    with serve_app_in_thread(endpoint.app()) as base:
        out = tmp_path / "eval.json"
        script = Path(sys.executable).with_name("agentenv-eval")
        cmd = [str(script)] if script.exists() else [sys.executable, "-m", "openmanus_rl.evaluate"]
        proc = subprocess.run([*cmd, "--server", f"fork={url.split('#')[0]}", "--policy", f"openai:{base}/v1:m",
                               "--output", str(out), "--quiet"], capture_output=True, text=True, timeout=300,
                              env={**os.environ, "OPENAI_API_KEY": "sk-test"}, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    fork = result["envs"]["fork"]
    assert fork["episodes"] == 4 and fork["success_rate"] == 1.0 and fork["avg_reward"] == 1.0
    assert len(endpoint.prompts) == 8 and ForkEnv.instruction in endpoint.prompts[0]
    assert {item["item_id"] for item in result["trajectories"]} == {f"fork_{k}" for k in range(4)}

    play = subprocess.run([sys.executable, "-m", "agentenv", "play", "fork", "--server", url.split("#")[0],
                           "--policy", "random", "--limit", "1", "--quiet"], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert play.returncode != 0 and "an OpenEnv server has no random policy" in play.stderr
    assert "Traceback" not in play.stderr


def test_schema_and_observation_readings():
    text = action_shape({"properties": {"message": {"type": "string", "description": "say it"},
                                        "metadata": {"type": "object"}}, "required": ["message"]})
    assert (text.format, text.hint, text.to_action("hi")) == ("text", "say it", {"message": "hi"})
    code = action_shape({"properties": {"code": {"type": "string"}}})
    assert code.format == "code" and code.to_action("print(1)") == {"code": "print(1)"}
    ours = action_shape({"properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
                         "oneOf": [{"properties": {"tool": {"const": "add", "description": "sum"},
                                                   "arguments": {"type": "object", "properties": {"a": {}}}}}]})
    assert ours.format == "tool" and ours.tools[0]["name"] == "add"
    assert ours.to_action('add with Action Input: {"a": 1}') == {"tool": "add", "arguments": {"a": 1}}
    assert observation_text({"text": "t", "valid": True, "metadata": {}}) == "t"
    assert observation_text({"prompt": "p", "metadata": {}}) == "p"
    assert json.loads(observation_text({"board": [1, 2], "note": "n"})) == {"board": [1, 2], "note": "n"}
