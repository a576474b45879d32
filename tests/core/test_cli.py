"""The `agentenv` command as a user runs it: list, serve, play, new."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentenv.client import EnvClient
from agentenv.launcher import ServerProcess
from openmanus_rl import trajectories

ENVS = ("maze", "wordle", "babyai")


def agentenv(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentenv", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_list_shows_the_installed_environments():
    out = agentenv("list", "--json")
    assert out.returncode == 0, out.stderr
    assert set(ENVS) <= set(json.loads(out.stdout))


def test_unknown_environment_is_a_clear_error():
    out = agentenv("serve", "no_such_env", "--port", "0")
    assert out.returncode == 2
    assert "unknown environment 'no_such_env'" in out.stderr and "maze" in out.stderr


def test_serve_announces_its_port_and_stops_on_sigterm():
    proc = subprocess.Popen([sys.executable, "-m", "agentenv", "serve", "maze", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("listening on http://127.0.0.1:")
        url = line.removeprefix("listening on ")
        with EnvClient(url) as c:
            assert c.health()["env"] == "maze"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_listening_beyond_loopback_needs_a_token():
    out = agentenv("serve", "maze", "--host", "0.0.0.0", "--port", "0", timeout=60, env={"AGENTENV_TOKEN": ""})
    assert out.returncode == 2
    assert "listening on 0.0.0.0 (beyond loopback) needs a bearer token" in out.stderr
    assert "Traceback" not in out.stderr


def test_token_from_environment_variable():
    with ServerProcess("maze", token="tok") as server:
        from agentenv.errors import Unauthorized

        with EnvClient(server.url) as c, pytest.raises(Unauthorized):
            c.info()
        with EnvClient(server.url, token="tok") as c:
            assert c.info()["env"] == "maze"


@pytest.mark.parametrize("name", ENVS)
def test_play_expert_succeeds_and_random_does_not(name, tmp_path):
    summaries = {}
    with ServerProcess(name) as server:
        for policy in ("expert", "random"):
            out = agentenv("play", name, "--policy", policy, "--split", "test", "--server", server.url, "--quiet",
                           "--output", str(tmp_path / f"{policy}.jsonl"))
            assert out.returncode == 0, out.stderr
            summaries[policy] = json.loads(out.stdout.strip().splitlines()[-1])
    expert, rand = summaries["expert"], summaries["random"]
    assert expert["env"] == name and expert["policy"] == "expert"
    assert expert["episodes"] == {"maze": 100, "wordle": 25, "babyai": 90}[name]
    assert expert["success_rate"] >= 0.95, expert
    assert rand["success_rate"] <= expert["success_rate"] - 0.4, (expert, rand)
    assert {"avg_reward", "avg_turns"} <= set(expert)
    episodes = list(trajectories.read(tmp_path / "expert.jsonl"))
    assert len(episodes) == expert["episodes"]
    assert sum(e["success"] for e in episodes) / len(episodes) == expert["success_rate"]


def test_play_starts_its_own_server():
    out = agentenv("play", "maze", "--policy", "expert", "--limit", "3", "--quiet")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["episodes"] == 3 and summary["success_rate"] == 1.0


def test_new_scaffolds_a_package_that_installs_serves_and_passes_its_test(tmp_path):
    out = agentenv("new", "demo", "--dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    pkg = tmp_path / "agentenv-demo"
    for f in ("setup.py", "setup.sh", "environment.yml", "README.md", "agentenv_demo/env.py", "tests/test_demo.py"):
        assert (pkg / f).is_file(), f
    assert agentenv("new", "demo", "--dir", str(tmp_path)).returncode == 2  # never overwrites

    site = tmp_path / "site"
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-q",
                              "--target", str(site), str(pkg)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    listed = agentenv("list", "--json", env=env)
    assert "demo" in json.loads(listed.stdout)
    test = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(pkg / "tests")],
                          capture_output=True, text=True, timeout=300, env={**os.environ, **env}, cwd=tmp_path)
    assert test.returncode == 0, test.stdout + test.stderr
    assert "5 passed" in test.stdout  # the four parts of check_environment and a rule of its own
    played = agentenv("play", "demo", "--policy", "expert", "--quiet", env=env)
    assert json.loads(played.stdout.strip().splitlines()[-1])["success_rate"] == 1.0


def test_new_rejects_bad_names(tmp_path):
    out = agentenv("new", "Bad-Name", "--dir", str(tmp_path))
    assert out.returncode == 2 and "lower case" in out.stderr
    assert not any(Path(tmp_path).iterdir())
