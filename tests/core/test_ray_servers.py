"""Environment server replicas as Ray actors (agentenv.ray_servers), on a simulated two-node cluster.

The cluster is ``ray.cluster_utils.Cluster``: real raylets on one machine, each a node Ray schedules
on. Replicas are real ``agentenv serve`` processes; killing one is a real SIGKILL of its server. A whole
``train_ppo.sh`` run whose replica is killed mid-step is in tests/training/test_multinode.py (its run over two
nodes).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time

import httpx
import pytest

from agentenv import ray_servers
from agentenv.client import EnvPool
from agentenv.launcher import ServerError, env_servers, parse_server_specs

from helpers import REPO
from helpers.processes import left_running, server_directories


def test_directory_urls_round_trip_and_bad_ones_are_one_line() -> None:
    url = ray_servers.directory_url("agentenv", "servers-abc", "maze")
    assert ray_servers.is_directory_url(url)
    assert ray_servers.parse_directory_url(url) == ("agentenv", "servers-abc", "maze")
    assert parse_server_specs([f"maze={url}"]) == {"maze": [url]}
    with pytest.raises(ServerError, match="agentenv\\+ray://NAMESPACE/DIRECTORY#NAME"):
        parse_server_specs(["maze=agentenv+ray://agentenv#maze"])


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ServerError, match="unknown server backend 'k8s'"), env_servers(["maze"], backend="k8s"):
        pass


@pytest.fixture(scope="module")
def cluster():
    """A head node with the logical resources verl's CPU preset asks for, and a second node."""
    import ray
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 16, "num_gpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=4)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False, logging_level="WARNING")
    yield c
    ray.shutdown()
    c.shutdown()


async def _episodes(url: str, n: int) -> list[str]:
    """Hold ``n`` sessions at once through the pool, step each once; the replica each ran on."""
    async with EnvPool([url], refresh=0.5) as pool:
        sessions = [await pool.open(k, "test") for k in range(n)]
        for sess in sessions:
            await sess.step("move up")
        return [s.client.base_url for s in sessions]


def test_replicas_spread_guarded_restarted_and_gone_after(cluster) -> None:
    with env_servers(["maze"], replicas=2, backend="ray", ray={"health_interval": 0.5}) as urls:
        (url,) = urls["maze"]
        namespace, name, _ = ray_servers.parse_directory_url(url)
        directory = ray_servers._directory(namespace, name)
        import ray

        status = ray.get(directory.status.remote())
        assert len(status) == 2 and all(s["live"] for s in status)
        assert len({s["node_id"] for s in status}) == 2, "SPREAD puts the two replicas on the two nodes"
        live, token = ray_servers.lookup_sync(url)
        assert sorted(live) == sorted(s["url"] for s in status) and len(token) >= 32
        # bound to the node's address, so every route but /health wants the run's token
        assert all(u.startswith(f"http://{ray.util.get_node_ip_address()}:") for u in live)
        assert httpx.get(f"{live[0]}/info").status_code == 401
        assert httpx.get(f"{live[0]}/info", headers={"Authorization": f"Bearer {token}"}).status_code == 200

        used = asyncio.run(_episodes(url, 4))
        assert set(used) == set(live), "sessions go to both replicas"

        victim = status[0]
        os.kill(victim["pid"], signal.SIGKILL)
        # sessions keep opening meanwhile, all on the replica that is up
        assert set(asyncio.run(_episodes(url, 3))) == set(live) - {victim["url"]}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            now = ray.get(directory.status.remote())
            back = [s for s in now if s["actor_pid"] != victim["actor_pid"] and s["env"] == "maze"]
            if all(s["live"] for s in now) and len(back) == 2:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the killed replica did not come back: {now}")
        assert sorted(s["starts"] for s in now) == [1, 2]
        assert len(asyncio.run(_episodes(url, 4))) == 4
        pids = {p for s in [*status, *now] for p in (s["pid"], s["actor_pid"])}
    assert left_running(pids) == set(), "no replica actor or server outlives the context"
    assert server_directories() == []


def test_openmanus_eval_runs_on_a_runs_replicas(cluster, tmp_path) -> None:
    """``openmanus-eval --server NAME=agentenv+ray://...`` plays on the live replicas of a running job."""
    import json

    from openmanus_rl import evaluate

    with env_servers(["maze"], replicas=2, backend="ray") as urls:
        out = tmp_path / "eval.json"
        code = evaluate.main(["--env", "maze", "--policy", "expert", "--limit", "6", "--server",
                              f"maze={urls['maze'][0]}", "--output", str(out), "--quiet"])
        assert code == 0
        result = json.loads(out.read_text())
        assert result["envs"]["maze"]["episodes"] == 6 and result["envs"]["maze"]["success_rate"] == 1.0


def test_a_hung_server_is_restarted(cluster) -> None:
    """A server that stops answering (SIGSTOP: alive, silent) is killed and its replica restarted."""
    import ray

    with env_servers(["maze"], replicas=1, backend="ray", ray={"health_interval": 0.5}) as urls:
        namespace, name, _ = ray_servers.parse_directory_url(urls["maze"][0])
        directory = ray_servers._directory(namespace, name)
        (before,) = ray.get(directory.status.remote())
        os.kill(before["pid"], signal.SIGSTOP)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            (now,) = ray.get(directory.status.remote())
            if now["live"] and now["actor_pid"] != before["actor_pid"]:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the hung replica was not restarted: {now}")
        assert now["starts"] == 2 and now["url"] != before["url"]
        assert left_running({before["pid"], before["actor_pid"]}) == set()
        assert len(asyncio.run(_episodes(urls["maze"][0], 2))) == 2


def test_a_replica_that_cannot_start_is_one_line(cluster) -> None:
    with pytest.raises(ServerError, match=r"could not start the environment servers on Ray: .*no_such_option"), \
            env_servers(["maze"], backend="ray", options={"maze": {"no_such_option": "1"}}, timeout=60):
        pass


def test_a_killed_launcher_leaves_no_replica_behind(cluster, tmp_path) -> None:
    """SIGKILL of the launcher (no clean-up code runs): Ray ends its job's actors, servers die with them."""
    import ray

    cmd = [str(REPO / "train_ppo.sh"), "--env_name", "maze,wordle", "--replicas", "2", "--output_dir",
           str(tmp_path / "run"), f"data_dir={tmp_path / 'data'}", "env_servers.backend=ray",
           f"env_servers.ray_address={cluster.address}"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids: set[int] = set()
    deadline = time.monotonic() + 300
    try:
        while len(pids) < 8 and time.monotonic() < deadline:  # 4 replicas up: a server and an actor each
            assert proc.poll() is None, "the launcher ended before its replicas were up"
            time.sleep(0.2)
            for entry in server_directories():
                with contextlib.suppress(Exception):
                    status = ray.get(ray.get_actor(entry["name"], namespace=entry["namespace"]).status.remote())
                    pids = {p for s in status if s["live"] for p in (s["pid"], s["actor_pid"])}
        assert len(pids) == 8
    finally:
        proc.kill()  # SIGKILL: the launcher's finally blocks never run
        proc.wait(30)
    assert left_running(pids, timeout=60) == set(), "replicas or servers outlived their launcher"
    assert server_directories() == []
