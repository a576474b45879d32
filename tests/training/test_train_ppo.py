"""./train_ppo.sh end to end: verl's real trainer on CPU with the tiny model and real servers."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from agentenv.client import EnvClient
from agentenv.launcher import ServerProcess

from helpers import REPO as ROOT
from helpers.processes import left_running
from helpers.train_runs import SMALL, rollouts, step_metrics


def train(out: Path, data: Path, *args: str, timeout: int = 900) -> str:
    cmd = [str(ROOT / "train_ppo.sh"), "--output_dir", str(out), f"data_dir={data}", *SMALL, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                          env=dict(os.environ, PYTHON=sys.executable))
    log = proc.stdout + proc.stderr
    (out / "test_run.log").write_text(log)
    assert proc.returncode == 0, log[-5000:]
    return log


def metric(line: str, key: str) -> float:
    """One value of a step's metrics line (verl prints some as ``np.float64(x)``)."""
    return float(re.search(rf"{re.escape(key)}:(?:np\.\w+\()?([-\w.+]+)", line).group(1))


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("data")


CURRICULUM = "agent.max_turns=[[1,2],[2,3]]"  # a horizon curriculum: 2 turns for step 1, 3 from step 2
KL_LOSS = ("actor_rollout_ref.actor.use_kl_loss=true", "actor_rollout_ref.actor.kl_loss_coef=0.5",
           "actor_rollout_ref.actor.kl_loss_type=low_var_kl")


def test_grpo_with_a_horizon_curriculum_and_a_time_budget_on_a_server_that_holds_fewer_sessions(tmp_path, data):
    """GRPO with a horizon curriculum (2 turns for step 1, 3 from step 2), played on a server that holds 2
    sessions: verl starts a step's 16 episodes at once, the pool queues the rest, so every GRPO group is whole
    (4 samples of each of 4 tasks) and the server never holds more than 2. The episodes of each step had that
    step's turn limit, their rewards are what the environment gives for the same actions, and rollout and
    trainer log-probs agree at every step. ``--minutes`` ends the run at a step boundary: a budget one step
    overruns makes step 2 the last of 5, checkpointed and validated as verl's last step."""
    import threading
    from collections import Counter

    out = tmp_path / "run"
    with ServerProcess("maze", max_sessions=2) as server:
        peak, stop = [0], threading.Event()

        def watch() -> None:
            with EnvClient(server.url) as c:
                while not stop.is_set():
                    peak[0] = max(peak[0], c.health()["sessions"])
                    time.sleep(0.02)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            # a response budget that holds 3 turns of replies grown longer by an update (else the check below
            # that step 2's episodes reach its limit fails on episodes cut by the budget)
            log = train(out, data, "--env_name", "maze", "--server", f"maze={server.url}", "--algo", "grpo",
                        "--steps", "5", "--minutes", "0.01", CURRICULUM, "data.max_response_length=512")
        finally:
            stop.set()
            watcher.join(5)
        assert 1 <= peak[0] <= 2

        steps = step_metrics(log)
        assert sorted(steps) == [1, 2] and "time budget: step 2 is the last" in log
        assert "critic/score/mean" in steps[2] and "val-aux/maze/success/mean@1" in steps[2]
        for line in steps.values():  # rollout log-probs == trainer log-probs: weights synced before each rollout
            assert metric(line, "rollout_probs_diff_max") < 1e-3
        assert "[step 1] maze: success" in log and "[validation step 2] maze" in log
        first = rollouts(out, "step_1.jsonl")
        assert len(first) == 4 * 4  # train_batch_size x rollout.n
        assert sorted(Counter(item["task_id"] for item in first).values()) == [4, 4, 4, 4]  # every group whole
        assert all(item["item_id"] == f"maze_{item['task_id']}" and item["conversations"][0]["from"] == "human"
                   for item in first)
        assert (out / "checkpoints" / "global_step_2").is_dir()

        # the rewards in the log are what the environment gives for the same actions
        with EnvClient(server.url) as c:
            for item in first[:6]:
                env_id = c.create(item["task_id"], item["split"]).env_id
                steps_ = [c.step(env_id, a) for a in item["actions"]]
                c.close(env_id)
                assert sum(s.reward for s in steps_) == item["reward"]
                assert [s.valid for s in steps_].count(False) == item["invalid_actions"]

    # the curriculum: the turn limits the episodes of each step actually had (validation: the last limit)
    for name, limit in (("step_1.jsonl", 2), ("step_2.jsonl", 3), ("val_step_2.jsonl", 3)):
        items = rollouts(out, name)
        assert {i["turn_limit"] for i in items} == {limit}, name
        assert max(i["turns"] for i in items) <= limit and any(i["turns"] == limit for i in items), name
        assert all(i["cut_by_turns"] == (i["turns"] == limit and not i["done"]) for i in items), name
    assert "episode/maze/turn_limit:3.0" in steps[2] and "(limit 3)" in log


def test_grpo_with_expert_demonstrations_in_its_groups(tmp_path, data):
    """``agent.demos``: one GRPO step on maze with the expert's recorded successes of the train tasks (AgentEvol's
    ``expert/`` layout). Each group's first sample replays its task's recording on the server (a success the
    environment scores), the other three are the model's; the actor recomputes PPO's old log-probs (verl's bypass
    mode off, as replayed tokens are not the rollout's samples), and the step's summary counts the model's
    episodes only."""
    from collections import Counter

    from openmanus_rl import expert_data

    expert_data.collect(["maze"], tmp_path / "expert", max_per_env=32)
    out = tmp_path / "run"
    log = train(out, data, "--env_name", "maze", "--algo", "grpo", "--steps", "1", f"agent.demos={tmp_path / 'expert'}",
                "agent.max_turns=30", "agent.max_new_tokens=96", "data.max_response_length=3072")
    assert "algorithm.rollout_correction.bypass_mode=false" in (out / "verl_command.txt").read_text()
    assert "expert demonstrations in the groups (recorded successes): maze 32" in log
    items = rollouts(out, "step_1.jsonl")
    assert len(items) == 16
    replayed = [i for i in items if i.get("demo")]
    assert sorted(Counter(i["task_id"] for i in replayed).values()) == [1, 1, 1, 1]  # one in each group
    assert {i["task_id"] for i in replayed} == {i["task_id"] for i in items}
    assert all(i["success"] and i["demo_turns"] == i["turns"] for i in replayed)
    steps = step_metrics(log)
    assert "episode/maze/demos:4.0" in steps[1] and "episode/maze/count:12.0" in steps[1]
    assert metric(steps[1], "timing_s/old_log_prob") > 0.0
    model_success = sum(i["success"] for i in items if not i.get("demo")) / 12
    assert f"[step 1] maze: success {model_success:.2f}" in log and "(n=12, demos 4)" in log


def test_ppo_with_critic_killed_mid_run_takes_its_processes_along_and_resumes(tmp_path, data):
    """A PPO run (critic, and a KL loss to the reference model) killed with SIGTERM once step 3 has begun, as a
    scheduler or a user stops a job: verl's trainer, the Ray cluster it started (raylet, GCS and every worker) and
    the environment servers end with the launcher. The same command again resumes after the last checkpoint
    (actor, critic, data position) and plays the next step afresh; a log the killed run left of a step after that
    checkpoint is set aside, not mixed into the new one. (Ray's workers outlive the signal by a few seconds, in
    which a 3-second step of this size can still finish: the checkpoint the run resumes from is step 2 or later.)
    PPO puts each turn's reward on its turn by default (every episode: the reward style is env_reward); the
    second run turns that off, and takes PPO's old log-probs from the rollout (verl's bypass mode, the tiny-bc
    preset's setting) instead of recomputing them.

    verl builds the reference as a forward-only FSDP2 engine that it always offloads with pinned memory, which
    failed on CPU at start-up ("Cannot access accelerator device") until patch 3 of
    openmanus_rl/verl_cpu/patches.py."""
    out = tmp_path / "ppo"
    out.mkdir()
    cmd = [str(ROOT / "train_ppo.sh"), "--output_dir", str(out), f"data_dir={data}", *SMALL,
           "--env_name", "maze", "--algo", "ppo", "--steps", "5", *KL_LOSS]
    with (out / "killed_run.log").open("w") as sink:
        launcher = subprocess.Popen(cmd, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT,
                                    env=dict(os.environ, PYTHON=sys.executable))
    tracker = out / "checkpoints" / "latest_checkpointed_iteration.txt"
    try:
        deadline = time.time() + 600
        # step 3 has begun (its first episode logged) after step 2's checkpoint
        while not ((out / "rollouts" / "step_3.jsonl").is_file() and tracker.is_file()
                   and tracker.read_text().strip() not in ("", "1")):
            assert launcher.poll() is None and time.time() < deadline, (out / "killed_run.log").read_text()[-3000:]
            time.sleep(0.5)
        names = {p.pid: _name(p) for p in psutil.Process(launcher.pid).children(recursive=True)}
        ray_tasks = {n for n in names.values() if n.startswith("ray::") and n not in RAY_SERVICES}
        assert "ray::TaskRunnerV1.run" in ray_tasks and len(ray_tasks) >= 4, names
        assert any("agentenv" in n for n in names.values()), names
        launcher.send_signal(signal.SIGTERM)
        code = launcher.wait(90)
        left = left_running(set(names), timeout=60)
        assert not left, f"outlived the launcher: {left} of {names}"
        assert code == 128 + signal.SIGTERM  # verl stopped, servers stopped, then a normal exit
    finally:
        if launcher.poll() is None:
            launcher.kill()
    killed = (out / "killed_run.log").read_text()
    steps = step_metrics(killed)
    assert {1, 2} <= set(steps) and "critic/vf_loss" in steps[1]
    # the reference is the start model in fp32: at step 1's one update the actor equals it exactly; that update
    # (the critic's values make the advantages nonzero) moves it away
    assert 0.0 <= metric(steps[1], "actor/kl_loss") < 1e-6 < metric(steps[2], "actor/kl_loss")
    assert all(metric(steps[s], "reward/per_turn_share") == 1.0 for s in (1, 2))
    # the trainer recomputed the old log-probs and compared them with the rollout's
    assert "training/rollout_probs_diff_max" in steps[1]
    # the checkpoint resumed from is step 2 or later, with the critic beside the actor (configs/ppo.yaml keeps the
    # last two: on a fast machine the workers finish steps 3 and 4 after the signal, and step 2's is deleted)
    last = int(tracker.read_text())
    kept = {p.name for p in (out / "checkpoints" / f"global_step_{last}").iterdir()}
    assert last >= 2 and {"actor", "critic"} <= kept
    unfinished = {p.name: p.read_bytes() for p in (out / "rollouts").glob("*step_*.jsonl")
                  if int(p.stem.rsplit("_", 1)[1]) > last}

    # the same directory again: resumed after the last checkpoint (actor, critic, data position), not started over
    log = train(out, data, "--env_name", "maze", "--algo", "ppo", "--steps", str(last + 1),
                "algorithm.reward_per_turn=false", "algorithm.rollout_correction.bypass_mode=true")
    steps = step_metrics(log)
    assert sorted(steps) == [last + 1] and "critic/vf_loss" in steps[last + 1] and f"global_step_{last}" in log
    assert "reward/per_turn_share" not in steps[last + 1]
    # bypass mode: no recompute, so no comparison; the loss is taken against the rollout's log-probs
    assert "training/rollout_probs_diff_max" not in steps[last + 1]
    assert math.isfinite(metric(steps[last + 1], "actor/pg_loss"))
    # the step's log holds the resumed run's episodes only; what the killed run logged after its checkpoint is kept
    assert len(rollouts(out, "step_1.jsonl")) == 4 and len(rollouts(out, f"step_{last + 1}.jsonl")) == 4
    aside = out / "rollouts" / "interrupted" / "1"
    assert {p.name: p.read_bytes() for p in aside.glob("*")} == unfinished if unfinished else not aside.exists()
    assert (f"resuming after step {last}" in log) == bool(unfinished)
    assert tracker.read_text().strip() == str(last + 1)
    starts = [json.loads(line) for line in (out / "machines.jsonl").read_text().splitlines()]
    assert len(starts) == 2 and {m["cores"] for m in starts} == {os.cpu_count()}  # each start's machine


#: processes every Ray node runs, besides the tasks and actors of a job
RAY_SERVICES = {"ray::IDLE", "ray::DashboardAgent", "ray::RuntimeEnvAgent"}


def _name(proc: psutil.Process) -> str:
    """A process's title as ps shows it (Ray's workers rename themselves ``ray::Actor.method``, padded with spaces)."""
    try:
        return " ".join(proc.cmdline()).strip() or proc.name()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return ""


def test_a_malformed_demonstration_file_is_one_line_before_anything_starts(tmp_path):
    """A demonstrations file the rollout workers could not read is the launcher's clear error, not theirs."""
    (tmp_path / "expert").mkdir()
    (tmp_path / "expert" / "maze.jsonl").write_text(json.dumps({"item_id": "maze_1", "conversations": [
        {"from": "human", "value": "a"}, {"from": "human", "value": "b"}]}) + "\n")
    proc = subprocess.run([str(ROOT / "train_ppo.sh"), "--output_dir", str(tmp_path / "run"), "--env_name", "maze",
                           "--dry_run", f"agent.demos={tmp_path / 'expert'}"], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=dict(os.environ, PYTHON=sys.executable))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "train_ppo.sh: " in proc.stderr and "maze_1 does not alternate human and gpt turns" in proc.stderr


@pytest.mark.parametrize("script,args", [
    ("train_ppo.sh", ["--env_name", "no_such_env"]),
    ("train_ppo.sh", ["--env_name", "maze", "--server", "maze=localhost:1"]),
    ("train_agentevol.sh", ["--env_name", "maze,no_such_env"]),
    ("train_agentevol.sh", ["--env_name", "maze", "env_options.maze.nope=1"]),
    ("train_ppo.sh", ["--env_name", "maze", "env_options.maze.nope=1"]),  # options reach the server, which refuses
    ("train_ppo.sh", ["--env_name", "maze", "--minutes", "0"]),
    ("train_agentevol.sh", ["--env_name", "maze", "max_turns={mze: 4, default: 9}"]),
    ("train_ppo.sh", ["--env_name", "maze,wordle", "max_train_tasks={maze: 30}"]),
    ("train_ppo.sh", ["--env_name", "maze", "agent.demos=/no/such/expert"]),
    ("train_ppo.sh", ["--env_name", "maze", "agent.demos=configs", "algorithm.rollout_correction.bypass_mode=true"]),
])
def test_a_users_mistake_is_one_clear_line_and_exit_2(script, args, tmp_path):
    """An environment that is not installed, or a malformed --server: no traceback, exit status 2."""
    proc = subprocess.run([str(ROOT / script), "--output_dir", str(tmp_path / "run"), *args], capture_output=True,
                          text=True, timeout=300, cwd=ROOT, env=dict(os.environ, PYTHON=sys.executable))
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith(f"{script}: ")]
    assert (("unknown environment 'no_such_env'" in line and "maze" in line) or "--server takes NAME=URL" in line
            or "could not start the maze server: agentenv: bad option for maze: nope" in line
            or "--minutes must be positive, got 0" in line
            or "max_turns names mze, neither an environment of this run (maze)" in line
            or "max_train_tasks gives no value for 'wordle'" in line
            or "agent.demos: /no/such/expert is not a directory" in line
            or "drop algorithm.rollout_correction.bypass_mode=true" in line)
