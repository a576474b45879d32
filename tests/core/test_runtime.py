"""The runtime's features over real HTTP servers: /info metadata, options and shared resources,
/tasks, heavy sessions (session caps, step time limits), child processes, and body limits."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import psutil
import pytest

from agentenv import processes
from agentenv.server import ServerConfig, create_app
from agentenv.testing import serve_app_in_thread, serve_in_thread

from helpers import TESTS
from helpers.toy_envs import (
    CappedEnv,
    CountingEnv,
    InitialObsEnv,
    MetaEnv,
    MetaOptions,
    SharedEnv,
    SlowStepEnv,
    SpawnEnv,
    SpawnTreeEnv,
    ThreadSpawnEnv,
    ToolMetaEnv,
)

# -- helpers ------------------------------------------------------------------------------------------------------

def _error(resp: httpx.Response, status: int, etype: str | None = None) -> dict:
    assert resp.status_code == status, resp.text
    body = resp.json()["error"]
    assert isinstance(body["message"], str) and body["message"]
    if etype:
        assert body["type"] == etype, body
    return body


def _create(url: str, task_id: int = 0, split: str = "train", **kw) -> dict:
    resp = httpx.post(f"{url}/create", json={"task_id": task_id, "split": split, **kw}, timeout=30)
    assert resp.status_code == 200, resp.text
    return resp.json()


def _gone(proc: psutil.Process) -> bool:
    """Dead: reaped, or a zombie nobody reaps (an orphan of a killed server, under a non-reaping init)."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(procs: list[psutil.Process], timeout: float = 5.0) -> list[psutil.Process]:
    """The processes still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        alive = [p for p in procs if not _gone(p)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _session_procs(created: dict, with_descendants: bool = False) -> list[psutil.Process]:
    procs = [psutil.Process(pid) for pid in created["info"]["pids"]]
    if with_descendants:
        deadline = time.monotonic() + 3
        while not all(p.children() for p in procs if p.name() == "sh") and time.monotonic() < deadline:
            time.sleep(0.02)  # let the shells start their own children
        procs += [c for p in procs for c in p.children(recursive=True)]
    return procs


def _sleepers() -> set[int]:
    """Our own ``sleep 1000`` descendants (children of in-process servers)."""
    out = set()
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if p.cmdline() == ["sleep", "1000"] and not _gone(p):
                out.add(p.pid)
    return out


async def _closes_reach(env_cls, n: int, timeout: float) -> bool:
    for _ in range(int(timeout / 0.02)):
        if env_cls.closes >= n:
            break
        await asyncio.sleep(0.02)
    return env_cls.closes == n


@contextlib.contextmanager
def _serve_without_lifespan(env_cls, config: ServerConfig | None = None) -> Iterator[str]:
    """Like serve_in_thread, but the ASGI lifespan never runs: the first requests start the service."""
    with serve_app_in_thread(create_app(env_cls, config), lifespan="off") as url:
        yield url


# -- /info ----------------------------------------------------------------------------------------------------------

def test_info_serves_every_declared_field():
    with serve_in_thread(MetaEnv, ServerConfig(options={"size": "5"})) as url:
        info = httpx.get(f"{url}/info").json()
        counts = {"train": 6, "test": 4, "valid": 2}
        fingerprint = MetaEnv.fingerprint(counts, MetaOptions(size=5))
        assert info == {
            "env": "meta", "splits": counts, "max_turns": 7, "action_format": "code",
            "action_hint": "one SQL query", "code_language": "sql", "instruction": "Answer with SQL.", "tools": [],
            "success_threshold": 0.5, "max_sessions": 2, "step_timeout": 5.0,
            "options": {"size": 5, "label": "plain"}, "version": "3", "fingerprint": fingerprint, "profile": "native",
        }
        assert len(fingerprint) == 16 and int(fingerprint, 16) >= 0
        # the third split is a split like the others
        assert _create(url, 1, "valid")["observation"].startswith("task valid/1")
        _error(httpx.post(f"{url}/create", json={"task_id": 2, "split": "valid"}), 404, "unknown_task_id")
    # other options: another task set; a lower server limit wins over the class's
    with serve_in_thread(MetaEnv, ServerConfig(options={"label": "x"}, max_sessions=1)) as url:
        info = httpx.get(f"{url}/info").json()
        assert info["options"] == {"size": 3, "label": "x"} and info["max_sessions"] == 1
        assert info["fingerprint"] != fingerprint


def test_info_of_a_tool_environment_lists_its_tools():
    with serve_in_thread(ToolMetaEnv) as url:
        info = httpx.get(f"{url}/info").json()
    assert info["action_format"] == "tool" and info["code_language"] is None
    assert info["tools"] == [{"name": "lookup", "description": "look a word up",
                              "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}]


def test_unknown_split_is_422_with_the_known_ones():
    with serve_in_thread(MetaEnv) as url:
        for resp in (httpx.post(f"{url}/create", json={"task_id": 0, "split": "dev"}),
                     httpx.get(f"{url}/tasks", params={"split": "dev"})):
            body = _error(resp, 422, "validation_error")
            assert "unknown split 'dev'" in body["message"] and "train, test, valid" in body["message"]
        env_id = _create(url)["env_id"]
        body = _error(httpx.post(f"{url}/reset", json={"env_id": env_id, "task_id": 0, "split": "dev"}), 422)
        assert "unknown split 'dev'" in body["message"]


# -- options and shared resources ------------------------------------------------------------------------------------

def test_options_reach_shared_data_task_counts_and_sessions():
    SharedEnv.loads, SharedEnv.releases[:] = 0, []
    with serve_in_thread(SharedEnv, ServerConfig(options={"n_train": "3", "greeting": "hi"})) as url:
        info = httpx.get(f"{url}/info").json()
        assert info["splits"] == {"train": 3, "test": 2}  # task_counts(shared)
        assert info["options"] == {"n_train": 3, "greeting": "hi"}
        created = _create(url, 2)
        assert created["observation"] == "hi task train/2 seed None: say 'finish' to win"
        assert created["info"]["options"] == {"n_train": 3, "greeting": "hi"}
        _error(httpx.post(f"{url}/create", json={"task_id": 3}), 404, "unknown_task_id")


@pytest.mark.parametrize("options,words", [
    ({"n_train": "many"}, ["bad option for shared", "n_train", "integer"]),
    ({"nope": "1"}, ["bad option for shared", "nope", "options it takes: n_train, greeting"]),
])
def test_bad_option_is_a_clear_error_at_app_creation(options, words):
    with pytest.raises(ValueError) as caught:
        create_app(SharedEnv, ServerConfig(options=options))
    message = str(caught.value)
    assert "\n" not in message and all(w in message for w in words), message


class _MissingDataEnv(SharedEnv):
    name = "missingdata"

    @classmethod
    def load_shared(cls, options):
        raise FileNotFoundError("/data/catalogue.json")


def test_shared_data_that_fails_to_load_stops_serve_before_it_listens():
    from agentenv.server import serve

    with pytest.raises(ValueError) as caught:  # the CLI prints it as one line and exits 2
        serve(_MissingDataEnv, port=0)
    assert str(caught.value) == ("cannot start missingdata: loading its shared data failed: "
                                 "FileNotFoundError: /data/catalogue.json")


def _agentenv(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentenv", *args], capture_output=True, text=True, timeout=60)


def test_cli_bad_option_exits_2_with_one_line(tmp_path):
    bad_key = tmp_path / "bad_key.yaml"
    bad_key.write_text("nope: 1\n")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("size: [1\n")
    int_key = tmp_path / "int_key.yaml"
    int_key.write_text("1: 2\n")
    cases = [
        (["--option", "nope=1"], ["bad option for maze", "nope", "options it takes: progress_reward"]),
        (["--option", "nope"], ["--option takes KEY=VALUE", "'nope'"]),
        (["--config", str(bad_key)], ["bad option for maze", "nope"]),
        (["--config", str(bad_yaml)], [f"cannot read --config {bad_yaml}", "line"]),
        (["--config", str(int_key)], ["bad option for maze", "1: Extra inputs"]),
        (["--config", str(tmp_path / "missing.yaml")], ["cannot read --config", "No such file"]),
    ]
    with ThreadPoolExecutor(len(cases)) as pool:  # a second or so each, to import and fail
        outs = list(pool.map(lambda case: _agentenv("serve", "maze", "--port", "0", *case[0]), cases))
    for (extra, words), out in zip(cases, outs, strict=True):
        assert out.returncode == 2, (extra, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("agentenv: "), (extra, out.stderr)
        assert all(w in lines[0] for w in words), (extra, lines[0])
        assert out.stdout == ""  # never listened


async def test_load_shared_runs_once_and_is_released_at_shutdown():
    SharedEnv.loads, SharedEnv.releases[:] = 0, []
    with serve_in_thread(SharedEnv) as url:
        assert SharedEnv.loads == 1  # at startup, before any request
        async with httpx.AsyncClient(timeout=30) as c:
            resps = await asyncio.gather(*(c.post(f"{url}/create", json={"task_id": i % 5}) for i in range(32)))
        assert [r.status_code for r in resps] == [200] * 32
        shared_ids = {r.json()["info"]["shared_id"] for r in resps}
        assert len(shared_ids) == 1 and SharedEnv.loads == 1
        assert SharedEnv.releases == []
    assert SharedEnv.loads == 1 and len(SharedEnv.releases) == 1
    assert id(SharedEnv.releases[0]) == shared_ids.pop()  # the very object the sessions saw


async def test_load_shared_runs_once_when_the_first_requests_arrive_together():
    SharedEnv.loads, SharedEnv.releases[:] = 0, []
    with _serve_without_lifespan(SharedEnv) as url:
        assert SharedEnv.loads == 0
        async with httpx.AsyncClient(timeout=30) as c:
            resps = await asyncio.gather(*(c.post(f"{url}/create", json={"task_id": i % 5}) for i in range(32)),
                                         c.get(f"{url}/info"), c.get(f"{url}/tasks", params={"split": "test"}))
        assert [r.status_code for r in resps] == [200] * 34, [r.text for r in resps if r.status_code != 200]
        assert SharedEnv.loads == 1
        assert len({r.json()["info"]["shared_id"] for r in resps[:32]}) == 1


# -- /tasks ---------------------------------------------------------------------------------------------------------

def test_tasks_use_the_cheap_initial_observation():
    InitialObsEnv.resets = InitialObsEnv.closes = 0
    with serve_in_thread(InitialObsEnv) as url:
        listed = httpx.get(f"{url}/tasks", params={"split": "test"}).json()
        assert InitialObsEnv.resets == 0  # no reset at all
        assert listed["split"] == "test" and listed["total"] == 10
        assert [t["task_id"] for t in listed["tasks"]] == list(range(10))
        page = httpx.get(f"{url}/tasks", params={"split": "test", "offset": 8, "limit": 5}).json()
        assert [t["task_id"] for t in page["tasks"]] == [8, 9] and page["total"] == 10
        assert httpx.get(f"{url}/tasks", params={"split": "train", "offset": 200}).json()["tasks"] == []
        for task in listed["tasks"]:
            assert task["observation"] == _create(url, task["task_id"], "test")["observation"]
        assert httpx.get(f"{url}/health").json()["sessions"] == 10  # only the creates made sessions


def test_tasks_fall_back_to_resets_of_one_scratch_instance():
    CountingEnv.resets = CountingEnv.closes = 0
    with serve_in_thread(CountingEnv) as url:
        listed = httpx.get(f"{url}/tasks", params={"split": "train", "offset": 3, "limit": 4}).json()
        assert [t["task_id"] for t in listed["tasks"]] == [3, 4, 5, 6] and listed["total"] == 100
        assert CountingEnv.resets == 4
        # one instance reset task after task (a simulator starts once), closed at the end
        assert CountingEnv.closes == 1
        assert httpx.get(f"{url}/health").json()["sessions"] == 0
        for task in listed["tasks"]:
            assert task["observation"] == _create(url, task["task_id"])["observation"]


def test_tasks_leave_no_child_process():
    before = _sleepers()
    with serve_in_thread(SpawnEnv) as url:
        listed = httpx.get(f"{url}/tasks", params={"split": "test", "limit": 5}).json()
        assert len(listed["tasks"]) == 5
        assert _sleepers() - before == set()  # every child of a scratch reset is gone


# -- child processes ------------------------------------------------------------------------------------------------

def test_children_are_killed_on_close_grandchildren_too():
    with serve_in_thread(SpawnTreeEnv) as url:
        a, b = _create(url, 0), _create(url, 1)
        pa, pb = _session_procs(a, with_descendants=True), _session_procs(b, with_descendants=True)
        assert len(pa) == 3 and len(pb) == 3  # sleep, sh, and the shell's sleep
        for p in pa[:2]:
            assert os.getpgid(p.pid) == p.pid  # each child leads a process group of its own
        assert not [p for p in pa + pb if _gone(p)]
        assert httpx.post(f"{url}/close", json={"env_id": a["env_id"]}).json() == {"closed": True}
        assert _wait_gone(pa, 3) == []
        assert not [p for p in pb if _gone(p)]  # the other session's are untouched
        assert SpawnTreeEnv.closes >= 1


def test_children_are_killed_when_the_session_expires():
    SpawnEnv.closes = 0
    with serve_in_thread(SpawnEnv, ServerConfig(session_ttl=0.5)) as url:
        created = _create(url)
        procs = _session_procs(created)
        assert not _gone(procs[0])
        deadline = time.monotonic() + 5
        while httpx.get(f"{url}/observation", params={"env_id": created["env_id"]}).status_code == 200:
            assert time.monotonic() < deadline, "session did not expire"
            time.sleep(1.0)  # well past the TTL and a sweep: the check above must not keep it alive
        assert _wait_gone(procs, 3) == []
        assert SpawnEnv.closes == 1


def test_children_are_killed_at_shutdown():
    with serve_in_thread(SpawnEnv) as url:
        procs = _session_procs(_create(url, 0)) + _session_procs(_create(url, 1))
        assert not [p for p in procs if _gone(p)]
    assert _wait_gone(procs, 3) == []


@pytest.mark.parametrize("env_cls", [SpawnEnv, ThreadSpawnEnv])
async def test_children_survive_normal_operation(env_cls):
    """The parent-death signal follows the thread that forked; nothing in normal operation (busy worker
    threads, an environment spawning from a short-lived helper thread of its own) may fire it."""
    with serve_in_thread(env_cls, ServerConfig(threads=4)) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            created = [r.json() for r in await asyncio.gather(*(c.post(f"{url}/create", json={"task_id": i})
                                                                  for i in range(8)))]
            procs = [p for cr in created for p in _session_procs(cr)]
            for _ in range(3):
                await asyncio.gather(*(c.post(f"{url}/step", json={"env_id": cr["env_id"], "action": "wait"})
                                       for cr in created))
            await asyncio.sleep(0.5)
            assert [p for p in procs if _gone(p)] == []
            await asyncio.gather(*(c.post(f"{url}/close", json={"env_id": cr["env_id"]}) for cr in created))
        assert _wait_gone(procs, 3) == []


SERVE_SCRIPT = ("import sys; sys.path.insert(0, sys.argv[1]); from helpers import toy_envs; "
                "from agentenv.server import serve; serve(getattr(toy_envs, sys.argv[2]), port=0)")


@pytest.mark.parametrize("env_name", ["SpawnEnv", "ThreadSpawnEnv"])
def test_children_die_when_the_server_is_sigkilled(env_name):
    server = subprocess.Popen([sys.executable, "-c", SERVE_SCRIPT, str(TESTS), env_name], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    procs: list[psutil.Process] = []
    try:
        line = server.stdout.readline().strip()
        assert line.startswith("listening on http://"), line + server.stderr.read()
        url = line.removeprefix("listening on ")
        created = [_create(url, i) for i in range(3)]
        procs = [p for cr in created for p in _session_procs(cr)]
        assert len(procs) == 3 and all(p.ppid() == server.pid for p in procs)
        for cr in created:  # some normal operation first: the children must outlive it
            assert httpx.post(f"{url}/step", json={"env_id": cr["env_id"], "action": "wait"}).status_code == 200
        time.sleep(0.3)
        assert [p for p in procs if _gone(p)] == []
        os.kill(server.pid, signal.SIGKILL)
        server.wait(5)
        assert _wait_gone(procs, 5) == []
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()


KILL_WITH_ME_SCRIPT = """
import subprocess, sys, time
from agentenv import processes
loner = subprocess.Popen(["sleep", "300"])  # no parent-death signal: a library's own child
group = subprocess.Popen(["sleep", "300"], start_new_session=True)
gone = subprocess.Popen(["sleep", "300"], start_new_session=True)
processes.kill_with_me(pids=[loner.pid], groups=[group.pid, gone.pid])
gone.kill(); gone.wait(); processes.forget(gone.pid)  # ended normally: its id is not the reaper's any more
print(loner.pid, group.pid, flush=True)
time.sleep(300)
"""


def test_processes_it_did_not_spawn_die_with_it_when_handed_to_the_reaper():
    """A process SIGKILLed takes along what it handed to ``kill_with_me`` (a process, a process group)."""
    owner = subprocess.Popen([sys.executable, "-c", KILL_WITH_ME_SCRIPT], stdout=subprocess.PIPE, text=True)
    procs: list[psutil.Process] = []
    try:
        assert owner.stdout is not None
        procs = [psutil.Process(int(pid)) for pid in owner.stdout.readline().split()]
        assert len(procs) == 2 and not any(_gone(p) for p in procs)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(5)
        assert _wait_gone(procs, 10) == []
    finally:
        if owner.poll() is None:
            owner.kill()
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()



class _Owner:
    """A session's environment, as far as agentenv.processes is concerned: an object with attributes."""


def test_adopted_processes_die_with_their_owners_children_and_disowned_ones_do_not():
    """``adopt`` makes a library's processes (a process, a process group) die with ``kill_children``, as the runtime
    calls it on close, expiry and a step past its limit; ``disown`` says they ended on their own."""
    loner = subprocess.Popen(["sleep", "300"])
    group = subprocess.Popen(["sleep", "300"], start_new_session=True)
    kept = subprocess.Popen(["sleep", "300"])
    try:
        owner, other = _Owner(), _Owner()
        processes.adopt(owner, pids=[loner.pid], groups=[group.pid])
        processes.adopt(other, pids=[kept.pid])
        processes.disown(other)
        processes.kill_children(owner)
        processes.kill_children(other)
        assert loner.wait(5) is not None and group.wait(5) is not None
        assert kept.poll() is None
    finally:
        for p in (loner, group, kept):
            p.kill()
            p.wait()

# -- heavy sessions: step time limit, session cap ---------------------------------------------------------------------

async def test_step_timeout_drops_the_session_and_kills_its_children():
    SlowStepEnv.closes = 0
    with serve_in_thread(SlowStepEnv) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            slow, other = [(await c.post(f"{url}/create", json={"task_id": i})).json() for i in (0, 1)]
            procs = _session_procs(slow)
            started = time.monotonic()
            hung = asyncio.create_task(c.post(f"{url}/step", json={"env_id": slow["env_id"], "action": "hang"}))
            await asyncio.sleep(0.05)
            for i in range(3):  # another session keeps working meanwhile
                resp = await c.post(f"{url}/step", json={"env_id": other["env_id"], "action": f"w{i}"})
                assert resp.status_code == 200, resp.text
            assert not hung.done()
            resp = await hung
            elapsed = time.monotonic() - started
            body = _error(resp, 504, "step_timeout")
            assert "0.5s" in body["message"]
            assert 0.45 <= elapsed < 3.0, elapsed  # the step itself would have taken 20 s
            assert _wait_gone(procs, 3) == []
            _error(await c.post(f"{url}/step", json={"env_id": slow["env_id"], "action": "wait"}), 404,
                   "unknown_env_id")
            _error(await c.get(f"{url}/observation", params={"env_id": slow["env_id"]}), 404)
            resp = await c.post(f"{url}/step", json={"env_id": other["env_id"], "action": "w3"})
            assert resp.json()["observation"] == "task 1 history w0|w1|w2|w3"
            assert (await c.get(f"{url}/health")).json()["sessions"] == 1
            assert await _closes_reach(SlowStepEnv, 1, 3)  # closed once its step returned


async def test_step_timeout_of_a_step_nothing_unblocks():
    SlowStepEnv.closes = 0
    with serve_in_thread(SlowStepEnv) as url:
        async with httpx.AsyncClient(timeout=30) as c:
            created = (await c.post(f"{url}/create", json={"task_id": 0})).json()
            procs = _session_procs(created)
            started = time.monotonic()
            resp = await c.post(f"{url}/step", json={"env_id": created["env_id"], "action": "nap"})
            assert time.monotonic() - started < 1.5  # the nap takes 2 s
            _error(resp, 504, "step_timeout")
            assert _wait_gone(procs, 3) == []
            assert SlowStepEnv.closes == 0  # still napping: closed only when the step returns
            other = (await c.post(f"{url}/create", json={"task_id": 1})).json()
            assert (await c.post(f"{url}/step", json={"env_id": other["env_id"], "action": "x"})).status_code == 200
            assert await _closes_reach(SlowStepEnv, 1, 4)


def test_step_timeout_through_step_batch():
    with serve_in_thread(SlowStepEnv) as url:
        slow, other = _create(url, 0), _create(url, 1)
        procs = _session_procs(slow)
        started = time.monotonic()
        resp = httpx.post(f"{url}/step_batch", timeout=30, json={"steps": [
            {"env_id": slow["env_id"], "action": "hang"},
            {"env_id": other["env_id"], "action": "a"},
            {"env_id": slow["env_id"], "action": "after"},
            {"env_id": other["env_id"], "action": "b"},
        ]})
        assert time.monotonic() - started < 3.0
        results = resp.json()["results"]
        assert results[0]["status"] == 504 and results[0]["error"]["type"] == "step_timeout"
        assert results[1]["observation"] == "task 1 history a"
        assert results[2]["status"] == 404  # the session is gone
        assert results[3]["observation"] == "task 1 history a|b"
        assert _wait_gone(procs, 3) == []
        assert httpx.get(f"{url}/health").json()["sessions"] == 1


async def test_environment_max_sessions_caps_the_table():
    with serve_in_thread(CappedEnv) as url:  # the server's own limit is the default 1024
        async with httpx.AsyncClient(timeout=30) as c:
            assert (await c.get(f"{url}/info")).json()["max_sessions"] == 2
            resps = await asyncio.gather(*(c.post(f"{url}/create", json={"task_id": i}) for i in range(8)))
            assert sorted(r.status_code for r in resps) == [200] * 2 + [429] * 6
            body = _error(await c.post(f"{url}/create", json={"task_id": 0}), 429, "session_limit")
            assert "session limit of 2" in body["message"]
            first = next(r.json()["env_id"] for r in resps if r.status_code == 200)
            assert (await c.post(f"{url}/close", json={"env_id": first})).status_code == 200
            resp = await c.post(f"{url}/create", json={"task_id": 5})
            assert resp.json()["observation"].startswith("task train/5")


# -- body limits ------------------------------------------------------------------------------------------------------

def test_oversized_body_is_always_413_never_a_reset(echo_url):
    env_id = _create(echo_url)["env_id"]
    big = {"env_id": env_id, "action": "a" * (2 << 20)}  # 2 MB against the default 1 MB
    with httpx.Client(timeout=30) as c:  # one kept-alive connection
        for _ in range(20):
            resp = c.post(f"{echo_url}/step", json=big)
            assert int(resp.request.headers["content-length"]) > 1 << 20
            _error(resp, 413, "payload_too_large")
        assert c.post(f"{echo_url}/step", json={"env_id": env_id, "action": "wait"}).status_code == 200
    for _ in range(20):  # a new connection each time
        _error(httpx.post(f"{echo_url}/step", json=big, timeout=30), 413, "payload_too_large")
    httpx.post(f"{echo_url}/close", json={"env_id": env_id})


def test_oversized_chunked_body_is_always_413(echo_url):
    env_id = _create(echo_url)["env_id"]

    def chunks():  # no content-length: 2.5 MB in 40 chunks
        for _ in range(40):
            yield b"y" * 65536

    with httpx.Client(timeout=30) as c:
        for _ in range(20):
            resp = c.post(f"{echo_url}/step", content=chunks(), headers={"content-type": "application/json"})
            assert "content-length" not in resp.request.headers
            assert resp.request.headers["transfer-encoding"] == "chunked"
            _error(resp, 413, "payload_too_large")
        small = c.post(f"{echo_url}/step", content=iter([b'{"env_id": "%s", ' % env_id.encode(), b'"action": "ok"}']),
                       headers={"content-type": "application/json"})
        assert small.status_code == 200 and small.json()["observation"] == "task 0 history ok"
    httpx.post(f"{echo_url}/close", json={"env_id": env_id})
