"""AgentGym's own routes, both ways, over real servers.

Outbound: ``agentenv serve NAME --compat agentgym`` is driven by a client written here to
AgentGym's published routes and JSON (the flow of its client classes: create, reset with the task
index under the environment's own key, step with the handle, reading the fields those clients
read). Inbound: the project's replica pool drives an AgentGym-protocol server (here the outbound
one, whose wire format the first tests pin) through ``agentgym+http://...#NAME``, and its episodes
equal the native server's.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agentenv.client import EnvClient, EnvPool
from agentenv.interop.agentgym_routes import routes_of
from agentenv.launcher import ServerProcess, parse_server_specs
from agentenv.policies import Policy
from agentenv.rollout import run_episode
from openmanus_rl import datasets

ENVS = ("maze", "wordle", "babyai", "textcraft", "webshop", "alfworld")
# the compat servers of alfworld and webshop serve their agentgym profiles too, which play ALFWorld's games and
# WebShop's products (not here): their generated
# tasks under AgentGym's routes instead
COMPAT = {"alfworld": {"profile": "native"}, "webshop": {"profile": "native"}}


@pytest.fixture(scope="module")
def servers():
    """A native and an AgentGym-compatible server per environment."""
    # the compat servers of babyai, maze, wordle and textcraft serve their agentgym profiles by default: their
    # native twins are told to as well
    options = {"babyai": {"profile": "agentgym"}, "maze": {"profile": "agentgym"},
               "wordle": {"profile": "agentgym"}, "textcraft": {"profile": "agentgym"}}
    procs = {(n, mode): ServerProcess(n, extra_args=["--compat", "agentgym"] if mode == "compat" else [],
                                      options=(options if mode == "native" else COMPAT).get(n))
             for n in ENVS for mode in ("native", "compat")}
    for p in procs.values():
        p.launch()
    urls = {key: p.wait_ready() for key, p in procs.items()}
    yield urls
    for p in procs.values():
        p.stop()


def native_episode(url: str, split: str, task_id: int) -> tuple[list[str], list[dict]]:
    """The expert's actions on the native server, and each step's observation, reward and done."""
    with EnvClient(url) as c:
        env_id = c.create(task_id, split).env_id
        actions, steps = [], []
        while True:
            actions.append(c.policy_action(env_id, "expert"))
            step = c.step(env_id, actions[-1])
            steps.append({"observation": step.observation, "reward": step.reward, "done": step.done})
            if step.done:
                break
        c.close(env_id)
    return actions, steps


class AgentGymStyleClient:
    """What AgentGym's client classes do, written from their published routes (not their code)."""

    def __init__(self, base: str, prefix: str, reset_key: str, reads_score: bool = False) -> None:
        self.http = httpx.Client(base_url=base + prefix, timeout=60)
        self.reset_key, self.reads_score = reset_key, reads_score
        created = self.http.post("/create")
        assert created.status_code == 200
        self.id = created.json()["id"]

    def reset(self, idx: int) -> dict:
        answer = self.http.post("/reset", json={self.reset_key: idx, "id": self.id})
        assert answer.status_code == 200 and "error" not in answer.json()
        return answer.json()

    def step(self, action: str) -> tuple[str, float, bool]:
        answer = self.http.post("/step", json={"action": action, "id": self.id})
        assert answer.status_code == 200
        body = answer.json()
        return body["observation"], body["score" if self.reads_score else "reward"], body["done"]


@pytest.mark.parametrize("env,prefix,key,score", [
    ("maze", "/maze", "game", False), ("wordle", "/wordle", "seed", False), ("babyai", "", "data_idx", True),
    ("textcraft", "", "data_idx", False), ("alfworld", "", "game", False)])
def test_agentgym_clients_drive_the_compat_server(servers, env, prefix, key, score):
    base = servers[(env, "compat")]
    assert httpx.get(base + prefix + "/").status_code == 200
    client = AgentGymStyleClient(base, prefix, key, reads_score=score)
    if env == "wordle":  # AgentGym's Wordle client lists the vocabulary in its prompt (LMRL-Gym's 40 words)
        vocab = client.http.get("/filtered_vocab", params={"id": client.id}).json()
        assert vocab[:3] == ["panic", "solar", "shire"] and len(vocab) == 40
    for idx in (3, 7):  # the index space is the train split, then the test split
        actions, expected = native_episode(servers[(env, "native")], "train", idx)
        first = client.reset(idx)
        native_first = EnvClient(servers[(env, "native")]).create(idx, "train").observation
        assert first["observation"] == without_rules(env, native_first)
        total = 0.0
        for action, want in zip(actions, expected, strict=True):
            observation, reward, done = client.step(action)
            assert observation == want["observation"] and done == want["done"]
            total = reward if score else total + reward
        assert done and total == pytest.approx(sum(s["reward"] for s in expected)) and total > 0
        again = client.http.post("/step", json={"action": actions[0], "id": client.id})
        assert again.status_code == 200 and "has finished" in again.json()["error"]  # AgentGym's error style
    bad = client.http.post("/step", json={"action": "x", "id": 99999})
    assert bad.status_code == 200 and "not valid" in bad.json()["error"]


def test_env_idx_family_answers_as_agentgyms_webshop_server(servers):
    """The other wire family: bare-int handles under "env_idx", /reset answers [observation, null],
    the client reads the first observation from GET /observation and a step's from "state"."""
    http = httpx.Client(base_url=servers[("webshop", "compat")], timeout=60)
    handle = http.post("/create").json()
    assert isinstance(handle, int)
    actions, expected = native_episode(servers[("webshop", "native")], "test", 5)
    pair = http.post("/reset", json={"session_id": 5, "env_idx": handle}).json()  # test goals come first
    assert isinstance(pair, list) and pair[1] is None
    first = http.get("/observation", params={"env_idx": handle}).json()
    assert first == pair[0] == EnvClient(servers[("webshop", "native")]).create(5, "test").observation
    for action, want in zip(actions, expected, strict=True):
        body = http.post("/step", json={"env_idx": handle, "action": action}).json()
        assert (body["state"], body["reward"], body["done"], body["info"]) == (
            want["observation"], want["reward"], want["done"], None)
    assert body["done"] and body["reward"] == 1.0


def without_rules(env: str, observation: str) -> str:
    """What AgentGym's server answers for a first observation of this project (its client shows the rules)."""
    from agentenv import profiles, registry

    native = registry.load(env)
    return routes_of(profiles.split_options(native, native.agentgym.options)[0]).served_first(observation)


@pytest.mark.parametrize("env", ["babyai", "maze"])
def test_a_task_index_past_every_split_is_an_error(servers, env):
    """In their agentgym profiles, babyai's index space is upstream's 12,880 indices and maze's its 25 games,
    each once (the profiles' test split)."""
    prefix, key = ("/maze", "game") if env == "maze" else ("", "data_idx")
    client = AgentGymStyleClient(servers[(env, "compat")], prefix, key)
    info = httpx.get(servers[(env, "native")] + "/info").json()
    order = ("test",)
    past = sum(info["splits"][s] for s in order)
    answer = client.http.post("/reset", json={key: past, "id": client.id}).json()
    assert "not valid" in answer["error"]
    last = client.reset(past - 1)  # the last test task
    expected = EnvClient(servers[(env, "native")]).create(info["splits"]["test"] - 1, "test").observation
    assert last["observation"] == without_rules(env, expected)


class Replay(Policy):
    name = "replay"

    def __init__(self, actions: list[str]) -> None:
        self.actions = list(actions)

    async def act(self, session, observation: str) -> str:
        return self.actions.pop(0)


def compat_task(native_url: str, routes, index: int) -> tuple[str, int]:
    """Which of its own tasks a compat server plays for an AgentGym task index (its splits in order)."""
    counts = httpx.get(native_url + "/info").json()["splits"]
    for split in routes.index_order:
        if index < counts[split]:
            return split, index
        index -= counts[split]
    raise AssertionError("index past the splits")


@pytest.mark.parametrize("env", ENVS)
def test_the_pool_drives_an_agentgym_server_through_the_inbound_adapter(servers, env):
    from agentenv import profiles, registry

    (url,) = parse_server_specs([f"{env}=agentgym+{servers[(env, 'compat')]}"])[env]
    assert url.endswith(f"#{env}")
    # test task 2 is upstream index (start of the upstream test range + 2) for the adapter, which speaks to an
    # AgentGym server as to the environment's agentgym profile; the compat server plays its own task for that
    # index, so the native expert of that task solves it
    native = registry.load(env)
    adapter = profiles.resolve(native, "agentgym") if "agentgym" in native.profiles else native
    served, _ = profiles.split_options(native, {**native.agentgym.options, **COMPAT.get(env, {})})
    index = adapter.agentgym.upstream_splits["test"][0] + 2
    split, task_id = compat_task(servers[(env, "native")], served.agentgym, index)
    actions, expected = native_episode(servers[(env, "native")], split, task_id)

    async def play():
        async with EnvPool([url]) as pool:
            info = await pool.info()
            assert info.env == env and info.splits["test"] > 2
            return await run_episode(pool, env, 2, Replay(actions), split="test")

    episode = asyncio.run(play())
    assert [t.observation for t in episode.turns] == [s["observation"] for s in expected]
    assert episode.done and episode.success
    assert episode.reward == pytest.approx(sum(s["reward"] for s in expected))


def test_datasets_build_from_an_agentgym_server(servers, tmp_path):
    (url,) = parse_server_specs([f"maze=agentgym+{servers[('maze', 'compat')]}"])["maze"]
    rows = asyncio.run(datasets.task_rows("maze", "test", [url], limit=3))
    with EnvClient(servers[("maze", "native")]) as c:
        for row in rows:  # upstream test index t = train task t of the compat server (maze's ranges overlap)
            assert c.create(row["extra_info"]["task_id"], "train").observation in row["prompt"][0]["content"]


def test_a_running_reward_server_gives_increments():
    """AgentGym's sheet server sends as "reward" the best score so far, every step (a stand-in written to
    its wire format: env_idx handles, /create {"id"}, /reset returns the observation string). The
    inbound adapter turns it into increments, so the episode's return is the final score, not a sum."""
    from fastapi import FastAPI

    from agentenv.testing import serve_app_in_thread

    app, running = FastAPI(), [0.0, 0.5, 0.5, 1.0]
    state = {"created": None, "turn": 0}

    @app.get("/")
    def hello() -> str:
        return "ok"

    @app.post("/create")
    def create(body: dict) -> int:
        state["created"] = body
        return 0

    @app.post("/reset")
    def reset(body: dict) -> str:
        state["turn"] = 0
        return f"Goal of task {body['id']}"

    @app.post("/step")
    def step(body: dict) -> dict:
        state["turn"] += 1
        turn = state["turn"]
        return {"observation": f"turn {turn}", "reward": running[turn], "done": turn == len(running) - 1}

    with serve_app_in_thread(app) as base:
        (url,) = parse_server_specs([f"sheet=agentgym+{base}#sheet"])["sheet"]

        async def play():
            async with EnvPool([url]) as pool:
                return await run_episode(pool, "sheet", 3, Replay(["a", "b", "c"]), split="test")

        episode = asyncio.run(play())
    assert state["created"] == {"id": 3}  # the task index travels with /create
    assert [t.reward for t in episode.turns] == [0.5, 0.0, 0.5]
    assert episode.reward == pytest.approx(1.0) and episode.success


def test_a_reset_without_an_index_replays_the_task_and_list_envs(servers):
    client = AgentGymStyleClient(servers[("maze", "compat")], "/maze", "game")
    first = client.reset(5)
    client.step("move up")
    again = client.http.post("/reset", json={"id": client.id}).json()  # AgentGym's "reset the current task"
    assert again["observation"] == first["observation"] and again["score"] == 0
    assert client.id in client.http.get("/list_envs").json()
    assert client.http.post("/close", json={"id": client.id}).json() is True
    assert client.id not in client.http.get("/list_envs").json()


def test_server_info_of_an_agentgym_server_is_the_adapters(servers):
    """Launchers ask every environment's metadata (datasets, token budgets): an AgentGym server has no /info,
    and the inbound adapter answers for it."""
    from agentenv.launcher import server_info

    (url,) = parse_server_specs([f"maze=agentgym+{servers[('maze', 'compat')]}"])["maze"]
    info = server_info([url])
    assert info.env == "maze" and info.max_turns > 0 and info.splits["test"] > 0
