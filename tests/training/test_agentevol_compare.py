"""The paper's table over AgentEvol runs, variants and RL evaluations (openmanus_rl.agentevol.compare)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openmanus_rl.agentevol import compare


def _eval(path: Path, **success: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"envs": {e: {"success_rate": s, "episodes": 100 if e == "maze" else 90}
                                         for e, s in success.items()}}))


def _run(root: Path, untrained: tuple, *iters: tuple) -> Path:
    _eval(root / "untrained" / "eval.json", maze=untrained[0], babyai=untrained[1])
    for k, (m, b) in enumerate(iters):
        _eval(root / f"iter_{k}" / "eval.json", maze=m, babyai=b)
    return root


def test_the_table_averages_seeds_with_their_range_and_judges_each_row_against_bc(tmp_path, capsys):
    s0 = _run(tmp_path / "s0", (0.0, 0.0), (0.30, 0.40), (0.45, 0.50))
    s1 = _run(tmp_path / "s1", (0.0, 0.0), (0.34, 0.36), (0.41, 0.48))
    dpo = _run(tmp_path / "dpo", (0.0, 0.0), (0.30, 0.40), (0.33, 0.40))
    _eval(tmp_path / "rl.json", maze=0.50, babyai=0.38)
    assert compare.main(["--run", f"AgentEvol={s0},{s1}", "--run", f"AgentEvol + DPO={dpo}",
                         "--eval", f"GRPO from BC={tmp_path / 'rl.json'}", "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "table.md").read_text()
    lines = text.splitlines()
    assert lines[0] == "|  | seeds | maze (100) | babyai (90) | average |"  # the runs' order, not sorted
    assert lines[2] == "| untrained | 2 | 0.0 (0-0) | 0.0 (0-0) | 0.0 (0-0) |"
    assert lines[3] == "| BC | 2 | 32.0 (30-34) | 38.0 (36-40) | 35.0 (35-35) |"
    # a range keeps its ends' tenths (44.5, not 44)
    assert lines[4] == "| AgentEvol iteration 1 | 2 | 43.0 (41-45) | 49.0 (48-50) | 46.0 (44.5-47.5) |"
    assert lines[5] == "| AgentEvol + DPO iteration 1 | 1 | 33.0 | 40.0 | 36.5 |"  # its own BC row is not repeated
    assert lines[6] == "| GRPO from BC | 1 | 50.0 | 38.0 | 44.0 |"
    assert "AgentEvol iteration 1 vs BC: +11.0 points on average (beyond the seed spread: worst 44.5 vs best 35.0)" \
        in text
    assert "AgentEvol + DPO iteration 1 vs BC: +1.5 points on average (beyond the seed spread: worst 36.5 vs best " \
        "35.0)" in text
    assert (tmp_path / "out" / "success_rate.png").read_bytes()[:4] == b"\x89PNG"
    assert lines[3] in capsys.readouterr().out


def test_columns_follow_the_order_the_run_named_its_environments_in(tmp_path):
    run = _run(tmp_path / "s0", (0.0, 0.0), (0.30, 0.40))
    (run / "agentevol_config.yaml").write_text("env_name: babyai,maze\nseed: 0\n")  # as train_agentevol.sh writes it
    _eval(tmp_path / "rl.json", wordle=0.1, maze=0.5)  # an environment no run named comes last
    assert compare.main(["--run", f"AgentEvol={run}", "--eval", f"RL={tmp_path / 'rl.json'}",
                         "--out", str(tmp_path / "out")]) == 0
    head = (tmp_path / "out" / "table.md").read_text().splitlines()[0]
    assert head == "|  | seeds | babyai (90) | maze (100) | wordle (90) | average |"


def test_the_spread_decides_beyond_or_within(tmp_path):
    s0 = _run(tmp_path / "a", (0.0, 0.0), (0.30, 0.30), (0.40, 0.40))
    s1 = _run(tmp_path / "b", (0.0, 0.0), (0.50, 0.50), (0.45, 0.45))  # BC's best seed beats the iteration's worst
    rows = compare.run_rows("AgentEvol", [s0, s1])
    assert "within the seed spread" in compare.gain(rows, ["maze", "babyai"], "BC", "AgentEvol iteration 1")
    one = compare.run_rows("AgentEvol", [s0])  # one seed has no spread to be beyond
    assert compare.gain(one, ["maze", "babyai"], "BC", "AgentEvol iteration 1") == \
        "AgentEvol iteration 1 vs BC: +10.0 points on average (one seed each: no spread yet)"


def test_seeds_that_agree_draw_without_a_negative_error_bar(tmp_path):
    """Three seeds at 46.67%: their float mean lies an ulp above each, which matplotlib refuses as an error bar."""
    runs = [_run(tmp_path / f"s{k}", (0.0, 0.0), (0.4667, 0.30)) for k in range(3)]
    assert compare.main(["--run", "AgentEvol=" + ",".join(map(str, runs)), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "success_rate.png").read_bytes()[:4] == b"\x89PNG"


def test_bad_arguments_are_one_line(tmp_path):
    with pytest.raises(SystemExit, match="NAME=PATH"):
        compare.main(["--run", str(tmp_path), "--out", str(tmp_path / "o")])
    with pytest.raises(SystemExit, match="does not exist"):
        compare.main(["--eval", f"x={tmp_path / 'missing.json'}", "--out", str(tmp_path / "o")])
    with pytest.raises(SystemExit, match="at least one"):
        compare.main(["--out", str(tmp_path / "o")])
