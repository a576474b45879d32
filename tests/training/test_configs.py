"""The experiment as hydra composes it (openmanus_rl.configs): the machine, the experiment file, the model, the
algorithm, then the command line, each winning over the ones before; a user's own experiment file beside them."""

from __future__ import annotations

import contextlib
import io

import pytest

from openmanus_rl import configs, train
from openmanus_rl.verl_args import load_preset


def launch_config(*argv: str):
    return train.load_config(*train.parse_args(["--env_name", "maze", *argv]))


def test_the_groups_are_layered_in_the_order_of_the_defaults_list():
    cfg = launch_config("--preset", "cpu")
    # machine < experiment < model: the machine's batch of 4 stays; the experiment's save_freq 10 loses to the
    # tiny model's every step; the experiment's checkpoints kept stay
    assert load_preset("cpu")["data.max_response_length"] == 128 and cfg.verl["data.max_response_length"] == 256
    assert cfg.verl["trainer.save_freq"] == 1 and cfg.verl["trainer.max_actor_ckpt_to_keep"] == 2
    assert cfg.verl["trainer.device"] == "cpu" and cfg.verl["actor_rollout_ref.rollout.name"] == "hf"
    # experiment < model: the tiny model's reply budget, the experiment's turn limit
    assert cfg.agent.max_new_tokens == 48 and cfg.agent.max_turns == 8
    assert cfg.model.build == "tiny" and cfg.algo == "grpo" and cfg.verl["actor_rollout_ref.rollout.n"] == 4
    # model < algorithm < command line; a key of no layer goes to verl as given
    cfg = launch_config("--preset", "cpu", "--algo", "ppo", "agent.max_new_tokens=20", "agent.max_turns=[[1,2],[3,3]]",
                        "trainer.save_freq=7", "env_options.maze.progress_reward=0.1", "--steps", "9")
    assert cfg.algo == "ppo" and cfg.verl["algorithm.adv_estimator"] == "gae"
    assert cfg.verl["+algorithm.reward_per_turn"] is True and cfg.verl["actor_rollout_ref.rollout.n"] == 1
    assert cfg.agent.max_new_tokens == 20 and cfg.agent.max_turns == [[1, 2], [3, 3]] and cfg.steps == 9
    assert cfg.env_options.maze.progress_reward == 0.1
    assert cfg.verl_extra == ["trainer.save_freq=7"] and cfg.output_dir == "outputs/maze-ppo"


def test_a_model_is_chosen_by_preset_hub_name_or_path_and_a_preset_lends_its_settings(tmp_path):
    by_name, by_hub = launch_config("--model", "qwen2.5-7b"), launch_config("model=Qwen/Qwen2.5-7B-Instruct")
    assert by_name.model.path == by_hub.model.path == "Qwen/Qwen2.5-7B-Instruct"
    assert by_name.agent.max_turns == 30 and by_name.verl["actor_rollout_ref.rollout.tensor_model_parallel_size"] == 2
    other = launch_config("--model", "some-org/model")  # no preset of its own: configs/model/default.yaml
    assert other.model.path == "some-org/model" and other.verl["data.max_response_length"] == "auto"
    lent = launch_config("--model", str(tmp_path / "a dir"), "--model_preset", "tiny-bc")
    assert lent.model.path == str(tmp_path / "a dir") and lent.model.build is None and lent.agent.max_turns == 20


def test_a_mapping_on_the_command_line_replaces_the_presets_and_one_entry_changes_one_environment(tmp_path):
    """As train_agentevol.sh: hydra alone would merge agent.max_turns={default: 5} into tiny-agent's mapping and keep
    its maze: 15; an entry of a preset's mapping is a setting though configs/ppo.yaml has one value there."""
    ckpt = ["--model", str(tmp_path / "ckpt"), "--model_preset", "tiny-agent"]
    assert launch_config(*ckpt).agent.max_turns.maze == 15
    assert launch_config(*ckpt, "agent.max_turns={default: 5}").agent.max_turns == {"default": 5}
    one = launch_config(*ckpt, "agent.max_turns.maze=7", "max_train_tasks={maze: 3, default: 2}")
    assert one.agent.max_turns.maze == 7 and one.agent.max_turns.babyai == 20 and one.verl_extra == []
    assert one.max_train_tasks == {"maze": 3, "default": 2}
    with pytest.raises(SystemExit, match=r"agent\.max_turns is one value in this run, not one per environment"):
        launch_config("agent.max_turns.maze=7")  # the tiny preset's one turn limit
    with pytest.raises(SystemExit, match=r"max_train_tasks=\{maze: 3, default: null\}"):
        launch_config("max_train_tasks.maze=3")  # null (every task) is one value too, not a key for verl
    with pytest.raises(SystemExit, match=r"max_train_tasks=3,4 is a sweep in hydra's grammar"):
        launch_config("max_train_tasks=3,4")  # one run, not hydra's multirun of two


@pytest.mark.parametrize(("argv", "message"), [
    (["--algo", "dpo"], "unknown --algo 'dpo'; choose from grpo, ppo"),
    (["--preset", "tpu"], "unknown --preset 'tpu'; choose from auto, cpu, gpu"),
    (["--model", "x", "--model_preset", "nope"], "unknown model preset 'nope'"),
    (["--model_preset", "tiny-bc"], "--model_preset lends a preset's settings to a --model given by path"),
])
def test_a_choice_that_does_not_exist_is_one_line(argv, message):
    with pytest.raises(SystemExit, match=message):
        launch_config(*argv)


def test_a_users_experiment_file_chooses_from_the_groups(tmp_path):
    mine = tmp_path / "elsewhere" / "webshop_7b.yaml"
    mine.parent.mkdir()
    mine.write_text((configs.config_dir() / "ppo.yaml").read_text().replace("model: tiny", "model: qwen2.5-0.5b")
                    .replace("env_name: maze", "env_name: webshop").replace("max_val_tasks: 8", "max_val_tasks: 50"))
    cfg = train.load_config(*train.parse_args(["--config", str(mine), "--preset", "gpu", "--algo", "ppo"]))
    assert cfg.env_name == "webshop" and cfg.max_val_tasks == 50 and cfg.model.path == "Qwen/Qwen2.5-0.5B-Instruct"
    assert cfg.verl["actor_rollout_ref.rollout.name"] == "vllm" and cfg.verl["algorithm.adv_estimator"] == "gae"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert train.main(["--config", str(mine), "--preset", "gpu", "--output_dir", str(tmp_path / "run"),
                           "--dry_run"]) == 0
    assert "actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct" in out.getvalue()
    with pytest.raises(SystemExit, match="no experiment config"):
        launch_config("--config", str(tmp_path / "missing.yaml"))
