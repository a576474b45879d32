"""A run over two nodes (docs/cluster.md): environment servers every node reaches, and the agent loop's
settings carried by the job's Ray runtime environment, not by a file or the launcher's environment.

The two nodes are ``ray.cluster_utils.Cluster`` raylets on this machine, on loopback addresses of their own:
the head on 127.0.0.2, a second node on 127.0.0.3 with a custom resource ``node2`` (not 127.0.0.1: Ray
rewrites that address to the machine's routable one). Their raylets are started by this process, whose
environment has neither of the agent loop's variables, so a worker has them only if its job's runtime
environment gives them.

The ``train_ppo.sh`` run here is also the suite's run whose environment server dies mid-step: two
environments on replicas of both nodes, one maze replica's server killed while it holds sessions.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import httpx
import pytest
from omegaconf import OmegaConf

from agentenv import ray_servers
from agentenv.launcher import env_servers
from openmanus_rl import cluster as placement_of
from openmanus_rl.agent_registration import CONFIG_VAR, SETTINGS_VAR, decode_settings, write_agent_loop_files
from openmanus_rl.verl_args import verl_overrides

from helpers import REPO
from helpers.processes import left_running, server_directories
from helpers.train_runs import SMALL, rollouts, step_metrics

HEAD, NODE2 = "127.0.0.2", "127.0.0.3"
SWITCHED = "the environment servers run on Ray instead (env_servers.backend=ray)"


def _local(**given) -> OmegaConf:
    return OmegaConf.create({"env_servers": {"backend": "local", "ray_address": None, **given}})


def test_a_multi_node_run_gets_the_ray_backend_and_a_note(monkeypatch, capsys) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    cpu = verl_overrides("cpu")
    assert placement_of.server_placement(_local(), 2, cpu) == {"backend": "local"}  # one machine: as configured
    assert capsys.readouterr().err == ""
    for cfg, args, address in ((_local(), [*cpu, "trainer.nnodes=2"], "auto"),  # `ray start` on this machine
                               (_local(ray_address="10.0.0.1:6379"), cpu, "10.0.0.1:6379")):
        placement = placement_of.server_placement(cfg, 2, args)
        assert placement["backend"] == "ray" and placement["ray"]["address"] == address
        assert placement["ray"]["init_kwargs"] == {}  # joining a cluster: its resources are its own
        assert SWITCHED in capsys.readouterr().err
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.2:6379")
    assert placement_of.server_placement(_local(), 2, cpu)["ray"]["address"] == "10.0.0.2:6379"
    # the ray backend itself joins the cluster too when the run is multi-node
    ray_backend = OmegaConf.create({"env_servers": {"backend": "ray"}})
    assert placement_of.server_placement(ray_backend, 2, cpu)["ray"]["address"] == "10.0.0.2:6379"


def test_the_settings_go_into_the_runtime_env_with_the_path(tmp_path) -> None:
    urls = {"maze": ["agentenv+ray://agentenv/servers-x#maze"]}
    _, path = write_agent_loop_files(tmp_path, {"env_servers": urls, "max_turns": [[1, 2], [3, 4]],
                                                "rollout_dir": str(tmp_path / "it's, [odd] {dir}")})
    cmd = placement_of.join_cluster(["main_ppo", *verl_overrides("cpu")], {"backend": "ray", "ray": {"address": None}},
                                    {CONFIG_VAR: str(path)})
    env = _ray_init(cmd)["runtime_env"]["env_vars"]
    assert env[CONFIG_VAR] == str(path)
    assert decode_settings(env[SETTINGS_VAR]) == OmegaConf.to_container(OmegaConf.load(path))


def _ray_init(cmd: list[str]) -> dict:
    """``ray_kwargs.ray_init`` as verl's main_ppo gets it from the command's hydra overrides."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    cfg = OmegaConf.create()
    mine = [a for a in cmd if a.lstrip("+~").startswith("ray_kwargs.ray_init.")]
    for o in OverridesParser.create().parse_overrides(mine):
        OmegaConf.update(cfg, o.key_or_group, o.value(), force_add=True)
    return OmegaConf.to_container(cfg.ray_kwargs.ray_init)


@pytest.fixture(scope="module")
def two_nodes():
    """A head with the logical resources verl's CPU preset asks for, and a second node."""
    import ray
    from ray.cluster_utils import Cluster

    assert CONFIG_VAR not in os.environ and SETTINGS_VAR not in os.environ
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 16, "num_gpus": 1, "include_dashboard": False,
                                                      "node_ip_address": HEAD})
    try:
        node2 = c.add_node(num_cpus=4, node_ip_address=NODE2, resources={"node2": 1})
        c.wait_for_nodes()
        yield c, node2.node_id
    finally:
        if ray.is_initialized():
            ray.shutdown()
        c.shutdown()


# verl's driver as far as the agent loop is concerned: it joins the cluster with the ray.init arguments of
# the launcher's command (only those), and the agent loop's code runs on the second node
DRIVER = textwrap.dedent("""
    import json, sys
    import ray

    init = json.loads(sys.argv[1])
    ray.init(**init, log_to_driver=False, logging_level="WARNING")

    @ray.remote(num_cpus=0, resources={"node2": 0.01})
    def agent_loop(tasks):
        import asyncio, os
        from pathlib import Path
        from agentenv.client import EnvPool
        from agentenv.policies import ServerPolicy
        from agentenv.rollout import run_episode
        from openmanus_rl import agent_loop

        settings = agent_loop._settings_file()  # what OpenManusAgentLoop.__init__ reads
        path = os.environ.get("OPENMANUS_AGENT_CONFIG")

        async def play():
            (url,) = settings["env_servers"]["maze"]
            async with EnvPool([url], token=settings.get("token")) as pool:
                limit = min((await pool.info()).max_turns, int(settings["max_turns"]))
                episodes = await asyncio.gather(*(
                    run_episode(pool, "maze", t, ServerPolicy("expert"), split="test", max_turns=limit,
                                retries=int(settings.get("episode_retries", 2))) for t in tasks))
                return [{"success": e.success, "turns": e.num_turns} for e in episodes], \\
                    sorted(c.base_url for c in pool.clients)

        episodes, replicas = asyncio.run(play())
        return {"node_id": ray.get_runtime_context().get_node_id(), "node_ip": ray.util.get_node_ip_address(),
                "settings": settings, "path": path, "path_exists": bool(path) and Path(path).exists(),
                "episodes": episodes, "replicas": replicas}

    print("RESULT " + json.dumps(ray.get(agent_loop.remote([0, 1, 2, 3]), timeout=240)))
""")


def test_the_agent_loop_on_the_second_node_plays_with_what_the_job_gives_it(two_nodes, tmp_path, capsys) -> None:
    """The launcher's own functions (server_placement, env_servers, write_agent_loop_files, join_cluster) with
    the default local backend and a cluster address; the agent loop's code on the second node reads the
    settings, opens sessions through the directory URL and plays expert episodes to success, the settings
    file deleted before it starts."""
    import ray

    c, node2 = two_nodes
    args = verl_overrides("cpu")
    placement = placement_of.server_placement(_local(ray_address=c.address), 2, args)
    assert placement["backend"] == "ray" and SWITCHED in capsys.readouterr().err
    with env_servers(["maze"], 2, **placement) as urls:
        (url,) = urls["maze"]
        assert ray_servers.is_directory_url(url)
        replicas = ray.get(ray_servers._directory(*ray_servers.parse_directory_url(url)[:2]).status.remote())
        assert {r["url"].split("//")[1].split(":")[0] for r in replicas} == {HEAD, NODE2}, \
            "a replica on each node, bound to that node's address"

        _, path = write_agent_loop_files(tmp_path, {"env_servers": urls, "max_turns": 30,
                                                    "rollout_dir": str(tmp_path / "rollouts")})
        cmd = placement_of.join_cluster([sys.executable, "-m", "verl.trainer.main_ppo", *args], placement,
                                        {CONFIG_VAR: str(path)})
        path.unlink()  # no node reads it: the settings travel in the job's runtime environment

        # the launcher's own job (no runtime environment) sees neither variable on the second node: the raylet
        # gives its workers nothing of the agent loop's
        @ray.remote(num_cpus=0, resources={"node2": 0.01})
        def bare() -> list[str]:
            return [v for v in (CONFIG_VAR, SETTINGS_VAR) if v in os.environ]

        assert ray.get(bare.remote(), timeout=60) == []

        init = _ray_init(cmd)
        assert init["address"] == c.address and init["num_cpus"] is None  # the cluster's resources are its own
        env = {k: v for k, v in os.environ.items() if k not in (CONFIG_VAR, SETTINGS_VAR, "RAY_ADDRESS")}
        proc = subprocess.run([sys.executable, "-c", DRIVER, json.dumps(init)], capture_output=True, text=True,
                              timeout=300, cwd=REPO, env=env)
        assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
        result = json.loads(proc.stdout.split("RESULT ", 1)[1])

    assert result["node_id"] == node2 and result["node_ip"] == NODE2
    assert result["path"] == str(path) and not result["path_exists"]
    assert result["settings"] == {"env_servers": urls, "max_turns": 30, "rollout_dir": str(tmp_path / "rollouts")}
    assert result["replicas"] == sorted(r["url"] for r in replicas), "the pool found both replicas live"
    assert [e["success"] for e in result["episodes"]] == [True] * 4
    assert left_running({p for r in replicas for p in (r["pid"], r["actor_pid"])}) == set()


def test_train_ppo_two_environments_over_two_nodes_with_agent_loop_workers_on_both_survive_a_killed_replica(
        two_nodes, tmp_path) -> None:
    """``train_ppo.sh --env_name maze,wordle --steps 2`` with the default (local) backend on a cluster someone
    else started: its servers go to Ray (the note says so), verl's driver joins the cluster, and verl's own
    round-robin puts one of its two agent-loop workers on the second node; the settings file is deleted once
    verl starts, so every worker reads the settings from the job's runtime environment. One maze replica's
    server is killed while episodes run on it: they are replayed elsewhere and the replica restarts. The run
    finishes with every episode of both steps and the validation played and logged, per-environment metrics,
    the run's token in none of its files, and nothing of it left running on the cluster.

    (One run for what were two: the two-node run of the agent loop's settings, and the killed replica of
    tests/core/test_ray_servers.py.)"""
    import ray

    c, node2 = two_nodes
    out = tmp_path / "run"
    cmd = [str(REPO / "train_ppo.sh"), "--env_name", "maze,wordle", "--steps", "2", "--replicas", "2",
           "--output_dir", str(out), f"data_dir={tmp_path / 'data'}", *SMALL, "data.train_batch_size=8",
           f"env_servers.ray_address={c.address}", "env_servers.health_interval=0.5",
           "actor_rollout_ref.rollout.agent.num_workers=2"]
    env = {k: v for k, v in os.environ.items() if k not in (CONFIG_VAR, SETTINGS_VAR, "RAY_ADDRESS")}
    log_path = tmp_path / "log.txt"
    ray.init(address=c.address, log_to_driver=False, logging_level="WARNING")  # to watch the run's replicas
    try:
        with log_path.open("w") as log_file:
            proc = subprocess.Popen(cmd, cwd=REPO, stdout=log_file, stderr=subprocess.STDOUT,
                                    env=dict(env, PYTHON=sys.executable))
        deleted, killed = False, None
        restarted, seen, nodes, hosts, run_token = False, set(), set(), set(), ""
        deadline = time.monotonic() + 900
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
                if not deleted and (out / "verl_command.txt").exists():  # written just before verl starts
                    (out / "agent_settings.yaml").unlink()
                    deleted = True
                for entry in server_directories():
                    try:
                        directory = ray.get_actor(entry["name"], namespace=entry["namespace"])
                        status = ray.get(directory.status.remote(), timeout=10)
                        run_token = ray.get(directory.lookup.remote("maze"), timeout=10)[1]
                    except Exception:  # the run is ending
                        continue
                    for s in status:
                        if s.get("pid"):
                            seen |= {s["pid"], s["actor_pid"]}
                            nodes.add(s["node_id"])
                            hosts.add(s["url"].split("//")[1].split(":")[0])
                        if killed is not None:
                            restarted |= s["actor_pid"] != killed["actor_pid"] and s["starts"] >= 2 and s["live"]
                            continue
                        if not s["live"] or s["env"] != "maze":
                            continue
                        try:
                            sessions = httpx.get(f"{s['url']}/health", timeout=5).json()["sessions"]
                        except httpx.HTTPError:
                            continue
                        if sessions > 0:  # episodes are running on it: kill its server now
                            os.kill(s["pid"], signal.SIGKILL)
                            killed = s
            code = proc.wait(timeout=max(1, deadline - time.monotonic()))
        finally:
            if proc.poll() is None:  # SIGTERM: the launcher stops verl's process group and its servers
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(30)
        actors = c.global_state.actor_table(None).values()  # as the run left them
        log = log_path.read_text()
        assert code == 0, log[-5000:]
        assert deleted and SWITCHED in log and "servers {'maze': ['agentenv+ray://" in log

        # the killed replica: its episodes replayed on the other one, the replica restarted
        assert killed is not None, "no replica ever had a session to kill"
        assert "its server failed" in log and "replaying the episode from the start" in log
        assert restarted, "the killed replica came back"
        assert len(nodes) == 2 and hosts == {HEAD, NODE2}, "replicas ran on both nodes, bound to their addresses"

        steps = step_metrics(log)
        assert sorted(steps) == [1, 2]
        for step in (1, 2):  # every episode of both steps is there: those of the killed replica were replayed
            items = rollouts(out, f"step_{step}.jsonl")
            assert len(items) == 8 * 4 and {i["env"] for i in items} == {"maze", "wordle"}
            groups = Counter((i["env"], i["task_id"]) for i in items)  # no GRPO group short of an episode
            assert len(groups) == 8 and set(groups.values()) == {4}, groups
        val = rollouts(out, "val_step_2.jsonl")
        assert len(val) == 2 * 4 and Counter(i["env"] for i in val) == {"maze": 4, "wordle": 4}
        # per-episode metrics of each training step, per environment, in verl's logger and the summary line
        for env_name in ("maze", "wordle"):
            assert f"val-aux/{env_name}/success/mean@1" in steps[2]
            for key in ("success", "env_score", "turns", "invalid_actions", "env_seconds", "gen_seconds",
                        "cut_by_budget", "cut_by_turns", "response_length", "turn_limit"):
                assert f"episode/{env_name}/{key}:" in steps[1], (env_name, key)
        line = next(x for x in log.splitlines() if x.startswith("[step 1]"))
        assert "maze: success" in line and "wordle: success" in line
        # the run's token went to clients through Ray only: not in a log, a config or a command line it wrote
        written = [log, *(p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and p.suffix in
                          (".yaml", ".txt", ".jsonl", ".json", ".log"))]
        assert len(run_token) >= 32 and not any(run_token in text for text in written)

        # verl's two agent-loop workers, one on each node; nothing of the run is left on the cluster
        workers = [a for a in actors if (a["Name"] or "").startswith("agent_loop_worker_")]  # verl's names
        assert len(workers) == 2 and {a["Address"]["NodeID"] for a in workers} == {c.head_node.node_id, node2}
        assert all(a["State"] == "DEAD" for a in actors), "nothing of the run is left on the cluster"
        assert left_running(seen) == set(), "no replica actor or server outlives the run"
        assert server_directories() == [], "no directory actor outlives the run"
    finally:
        ray.shutdown()
