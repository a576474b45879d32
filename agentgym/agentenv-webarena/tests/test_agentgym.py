"""AgentGym's WebArena server, both ways: AgentGym's client flow against ``--compat agentgym`` (create -> env_idx,
reset with idx -> page text, sites and objective, step -> terminated, observation -> the prompt, close), and the
inbound adapter (``agentgym+http://...#webarena``) driving that server as AgentGym's own, its episode equal to the
native server's."""

import asyncio

import httpx
import pytest

from agentenv.client import EnvClient, EnvPool
from agentenv.launcher import ServerProcess, parse_server_specs
from agentenv.policies import Policy
from agentenv.rollout import run_episode

NEEDS_CHROMIUM = True  # (conftest.py skips the module where there is none)


@pytest.fixture(scope="module")
def servers():
    native, compat = ServerProcess("webarena"), ServerProcess("webarena", extra_args=["--compat", "agentgym"])
    for p in (native, compat):
        p.launch()
    yield native.wait_ready(), compat.wait_ready()
    for p in (native, compat):
        p.stop()


class Replay(Policy):
    name = "replay"

    def __init__(self, actions):
        self.actions = list(actions)

    async def act(self, session, observation):
        return self.actions.pop(0)


def expert_episode(url, task_id):
    with EnvClient(url) as c:
        created = c.create(task_id, "test")
        actions, steps = [], []
        while not (steps and steps[-1].done):
            actions.append(c.policy_action(created.env_id, "expert"))
            steps.append(c.step(created.env_id, actions[-1]))
        c.close(created.env_id)
    return created.observation, actions, steps


def test_agentgyms_client_flow(servers):
    native, compat = servers
    first, actions, steps = expert_episode(native, 3)
    http = httpx.Client(base_url=compat, timeout=120)
    assert http.get("/").json() == "ok"
    handle = http.post("/create").json()["env_idx"]
    reset = http.post("/reset", json={"env_idx": handle, "seed": 0, "idx": 3}).json()
    assert set(reset) == {"observation", "sites", "object"} and reset["sites"] == ["reddit"]
    assert reset["observation"] in first and f"OBJECTIVE: {reset['object']}" in first
    assert http.get("/observation", params={"env_idx": handle}).json() == first
    for action, want in zip(actions, steps, strict=True):
        got = http.post("/step", json={"env_idx": handle, "action": action}).json()
        assert set(got) == {"observation", "reward", "terminated", "truncated", "info"}
        assert (got["observation"], got["reward"], got["terminated"]) == (want.observation, want.reward, want.done)
    assert got["terminated"] and got["reward"] == 1.0
    assert http.post("/close", json={"env_idx": handle}).json() == {"closed": "closed"}


def test_the_inbound_adapter_drives_agentgyms_webarena_server(servers):
    native, compat = servers
    _, actions, steps = expert_episode(native, 2)
    (url,) = parse_server_specs([f"webarena=agentgym+{compat}"])["webarena"]

    async def play():
        async with EnvPool([url]) as pool:
            return await run_episode(pool, "webarena", 2, Replay(actions), split="test")

    episode = asyncio.run(play())
    assert [t.observation for t in episode.turns] == [s.observation for s in steps]
    assert episode.done and episode.success and episode.reward == 1.0
