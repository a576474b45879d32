"""The per-step summaries a training run prints and plots (openmanus_rl/run_summary.py)."""

from __future__ import annotations

import json
from pathlib import Path

from openmanus_rl.run_summary import StepWatcher, read_metrics


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
