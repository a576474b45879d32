"""Turn limits per training step (openmanus_rl.horizon) and the model a launcher trains (model_presets)."""

from __future__ import annotations

import pytest

from openmanus_rl.horizon import TurnSchedule
from openmanus_rl.model_presets import resolve_model_path, settings_preset
from openmanus_rl.train import main as train_main


def test_a_schedule_gives_each_step_its_limit():
    s = TurnSchedule.parse([[20, 10], [1, 5], [40, 20]])  # given in any order
    assert [s.limit(step) for step in (0, 1, 19, 20, 39, 40, 1000)] == [5, 5, 5, 10, 10, 20, 20]
    assert s.limit(None) == 20  # validation: the horizon the agent is finally judged on
    assert TurnSchedule.parse(7).limit(3) == 7 and TurnSchedule.parse(None) is None


@pytest.mark.parametrize("bad", [0, -2, True, "5", [], [[1]], [[1, 2, 3]], [[1, 0]], [[-1, 4]], [[1, 4], [1, 6]],
                                 [[1.5, 4]], [["a", 4]]])
def test_a_bad_schedule_says_what_is_expected(bad):
    with pytest.raises(ValueError, match=r"agent\.max_turns"):
        TurnSchedule.parse(bad)


def test_a_bad_schedule_stops_train_ppo_before_anything_starts(capsys, tmp_path):
    code = train_main(["--env_name", "maze", "--output_dir", str(tmp_path), "agent.max_turns=[[1,0]]"])
    assert code == 2 and "agent.max_turns: a turn limit must be a positive int" in capsys.readouterr().err


def test_a_model_given_by_path_resolves_to_weights_with_their_tokenizer(tmp_path):
    from openmanus_rl.tiny_model import build_tiny_model

    hf = build_tiny_model(tmp_path / "ckpt" / "global_step_7" / "huggingface")
    (tmp_path / "ckpt" / "latest_checkpointed_iteration.txt").write_text("7")
    for given in (tmp_path / "ckpt", tmp_path / "ckpt" / "global_step_7", hf):
        assert resolve_model_path(str(given)) == str(hf.resolve())
    assert resolve_model_path("Qwen/Qwen2.5-7B-Instruct") == "Qwen/Qwen2.5-7B-Instruct"  # a hub name
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="not a verl checkpoint"):
        resolve_model_path(str(tmp_path / "empty"))
    (hf / "model.safetensors").unlink()
    with pytest.raises(ValueError, match="no full weights"):
        resolve_model_path(str(tmp_path / "ckpt"))


def test_model_preset_lends_settings_not_weights():
    tiny_bc = settings_preset("tiny-bc")
    assert "build" not in tiny_bc and "path" not in tiny_bc and tiny_bc["agent"]["max_turns"] == 20
    with pytest.raises(ValueError, match=r"unknown model preset .nope.; configs/model/ has .*tiny"):
        settings_preset("nope")
