"""The per-step summaries a training run prints and plots (openmanus_rl/run_summary.py)."""

from __future__ import annotations

import json
from pathlib import Path

from openmanus_rl import run_summary, trajectories
from openmanus_rl.run_summary import StepWatcher, read_metrics, summarize_file


def episode(success: bool, **extra) -> dict:
    return {"env": "maze", "success": success, "reward": float(success), "turns": 4, "invalid_actions": 1,
            "turn_limit": 5, "response_length": 100, "cut_by_budget": False, "cut_by_turns": not success, **extra}


def write(path: Path, items: list[dict]) -> None:
    with path.open("a") as f:
        f.writelines(json.dumps(i) + "\n" for i in items)


def test_a_step_is_summarised_once_whole_with_why_episodes_ended(tmp_path, capsys):
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()
    watcher = StepWatcher(rollouts)
    write(rollouts / "step_1.jsonl", [episode(True), episode(False)])
    write(rollouts / "val_step_1.jsonl", [episode(True)])  # validation has begun, one episode in
    watcher.poll()
    assert capsys.readouterr().out == ""  # neither file is known to be whole yet
    write(rollouts / "val_step_1.jsonl", [episode(False, response_length=300)])
    write(rollouts / "step_2.jsonl", [episode(True)])  # step 2 started: step 1 and its validation are whole
    watcher.poll()
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "[step 1] maze: success 0.50 reward 0.500 turns 4.0 invalid 0.25 cut budget 0.00 turns 0.50 (limit 5) "
        "resp 100 tok (n=2)",
        "[validation step 1] maze: success 0.50 reward 0.500 turns 4.0 invalid 0.25 cut budget 0.00 turns 0.50 "
        "(limit 5) resp 200 tok (n=2)"]
    watcher.flush()  # the end of the run: the last step too
    assert capsys.readouterr().out.startswith("[step 2] maze: success 1.00")
    records = read_metrics(tmp_path / "env_metrics.jsonl")
    assert [(r["step"], r["validation"]) for r in records] == [(1, False), (1, True), (2, False)]
    assert records[1]["envs"]["maze"]["avg_response_length"] == 200
    assert (tmp_path / "success_rate.png").stat().st_size > 0


def test_a_resumed_runs_watcher_adds_only_the_steps_it_plays(tmp_path, capsys):
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()
    write(rollouts / "step_1.jsonl", [episode(True)])
    write(rollouts / "step_2.jsonl", [episode(False)])
    StepWatcher(rollouts).flush()  # the first run: both steps
    write(rollouts / "step_3.jsonl", [episode(True), episode(False)])  # the resumed run plays step 3
    capsys.readouterr()
    StepWatcher(rollouts).flush()
    assert capsys.readouterr().out.splitlines() == [
        "[step 3] maze: success 0.50 reward 0.500 turns 4.0 invalid 0.25 cut budget 0.00 turns 0.50 (limit 5) "
        "resp 100 tok (n=2)"]
    lines = (tmp_path / "env_metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1, 2, 3]  # each step once
    # killed in step 4 after step 3's summary, resumed from step 2's checkpoint: verl plays step 3 again
    write(rollouts / "step_4.jsonl", [episode(True)])
    run_summary.set_aside_steps_after(rollouts, 2)
    watcher = StepWatcher(rollouts)  # started before verl writes the step it plays again
    write(rollouts / "step_3.jsonl", [episode(True)] * 3)
    capsys.readouterr()
    watcher.flush()
    assert capsys.readouterr().out.startswith("[step 3] maze: success 1.00")  # the replay is summarised, not skipped
    assert read_metrics(tmp_path / "env_metrics.jsonl")[2]["envs"]["maze"]["episodes"] == 3


def test_a_line_still_being_written_is_left_out(tmp_path, capsys):
    """A worker killed (or still) mid-write leaves a last line without its newline: the summary of a
    finished run skips it instead of failing the run after training ended."""
    rollouts = tmp_path / "rollouts"
    rollouts.mkdir()
    write(rollouts / "step_1.jsonl", [episode(True), episode(False)])
    with (rollouts / "step_1.jsonl").open("a") as f:
        f.write("\x00" * 30 + "\n")  # a line whose bytes are not in the file yet, as a reader may see it
        f.write(json.dumps(episode(True))[:40])
    watcher = StepWatcher(rollouts)
    watcher.flush()
    assert capsys.readouterr().out.startswith("[step 1] maze: success 0.50")



def test_a_rollout_line_is_whole_in_the_file_before_its_lock_is_released(tmp_path, monkeypatch):
    """Rollout workers in several processes append to one file under a lock; a line still in a write
    buffer when the lock goes can be interleaved with another worker's (seen in a run: a step file with
    a line starting mid-object)."""
    import fcntl

    from openmanus_rl import agent_loop

    path = tmp_path / "step_1.jsonl"
    real, sizes = fcntl.flock, []

    def flock(fd, op):
        if op == fcntl.LOCK_UN:
            sizes.append(path.stat().st_size)
        return real(fd, op)

    monkeypatch.setattr(agent_loop.fcntl, "flock", flock)
    for n in (10, 5_000, 50_000):
        agent_loop._append_line(path, json.dumps(episode(True, conversations=["x" * n])))
        assert sizes[-1] == path.stat().st_size
    assert [x["success"] for x in trajectories.read(path)] == [True] * 3


def test_a_reply_with_unicode_line_separators_stays_one_episode(tmp_path):
    """JSON leaves U+2028, U+2029 and U+0085 unescaped: a tiny model's reply held one (seen in CI) and a
    reader splitting with ``str.splitlines`` cut the episode in two, failing or dropping it."""
    from openmanus_rl import agent_loop

    path = tmp_path / "step_1.jsonl"
    replies = ["left\u2028right", "a\x85b\u2029c", "plain"]
    for reply in replies:
        agent_loop._append_line(path, json.dumps(episode(True, conversations=[reply]), ensure_ascii=False))
    assert [x["conversations"] for x in trajectories.read(path)] == [[r] for r in replies]
    assert summarize_file(path)["maze"]["episodes"] == 3


def test_a_resumed_run_sets_aside_the_logs_of_the_steps_it_plays_again(tmp_path):
    """verl resumes after its last checkpoint: the logs of later steps (a run killed in step 3 after step 2's
    checkpoint) move aside, numbered per resume, and those up to the checkpoint stay."""
    from openmanus_rl.train import resumes_after

    rollouts, ckpt = tmp_path / "rollouts", tmp_path / "checkpoints"
    rollouts.mkdir()
    for name in ("step_1.jsonl", "step_2.jsonl", "val_step_2.jsonl", "step_3.jsonl", "step_10.jsonl",
                 "val_step_3.jsonl", "notes.txt"):
        (rollouts / name).write_text(name)
    assert resumes_after({}, ckpt) == 0  # no checkpoint: verl starts over
    ckpt.mkdir()
    (ckpt / "latest_checkpointed_iteration.txt").write_text("2\n")
    assert resumes_after({}, ckpt) == 2
    assert resumes_after({"trainer.resume_mode": "disable"}, ckpt) == 0
    assert resumes_after({"trainer.resume_mode": "resume_path",
                          "trainer.resume_from_path": "/x/global_step_7"}, ckpt) == 7

    moved = run_summary.set_aside_steps_after(rollouts, 2)
    assert moved == rollouts / "interrupted" / "1"
    assert sorted(p.name for p in moved.iterdir()) == ["step_10.jsonl", "step_3.jsonl", "val_step_3.jsonl"]
    assert (moved / "step_3.jsonl").read_text() == "step_3.jsonl"
    assert sorted(p.name for p in rollouts.iterdir() if p.is_file()) == [
        "notes.txt", "step_1.jsonl", "step_2.jsonl", "val_step_2.jsonl"]
    assert run_summary.set_aside_steps_after(rollouts, 2) is None  # nothing left after step 2
    (rollouts / "step_3.jsonl").write_text("again")
    assert run_summary.set_aside_steps_after(rollouts, 0) == rollouts / "interrupted" / "2"  # starting over
    assert not list(rollouts.glob("*.jsonl"))
    assert run_summary.set_aside_steps_after(tmp_path / "none", 0) is None
