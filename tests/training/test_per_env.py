"""Settings per environment (openmanus_rl.per_env): one value for all, or a mapping with an optional default."""

from __future__ import annotations

import contextlib
import io

import pytest
from omegaconf import OmegaConf

from openmanus_rl import budgets, per_env, train


def test_one_value_serves_every_environment_and_a_mapping_each_its_own():
    assert per_env.check(20, ["maze", "alfworld"], "max_turns") == {"maze": 20, "alfworld": 20}
    given = OmegaConf.create({"maze": 15, "default": 30})  # as a config file gives it
    assert per_env.check(given, ["maze", "alfworld"], "max_turns") == {"maze": 15, "alfworld": 30}
    assert per_env.value_for({"maze": 15}, "maze", "max_turns") == 15
    # a preset's mapping may name installed environments the run does not have
    assert per_env.check({"maze": 15, "alfworld": 30}, ["maze"], "max_turns") == {"maze": 15}
    assert per_env.positive_ints(None, ["maze"], "max_turns", optional=True) == {"maze": None}


@pytest.mark.parametrize("value,message", [
    ({"maze": 15}, "gives no value for 'alfworld' and no 'default'"),
    ({"maze": 15, "alfwrld": 20, "default": 9}, "names alfwrld, neither an environment of this run"),
    ({"maze": 0, "default": 9}, "for maze must be a positive int, not 0"),
    ({"default": "12"}, "must be a positive int, not '12'"),
    (True, "must be a positive int, not True"),
])
def test_a_mapping_that_misses_or_misnames_an_environment_is_refused(value, message):
    with pytest.raises(ValueError, match=message):
        per_env.positive_ints(value, ["maze", "alfworld"], "eval.max_new_tokens")


def test_the_response_budget_holds_the_longest_episode_of_the_environments_own_limits():
    """Per-environment limits: textcraft's 12 turns of 160-token replies outgrow babyai's 20 turns of 16."""
    settings = {budgets.PROMPT_KEY: 512, budgets.RESPONSE_KEY: budgets.AUTO}
    changed, notes = budgets.resolve(settings, prompts=None, turn_limits={"textcraft": 20, "babyai": 64},
                                     agent_turns={"textcraft": 12, "babyai": 20},
                                     reply_tokens={"textcraft": 160, "babyai": 16}, observation_tokens=100,
                                     context=None)
    assert changed[budgets.RESPONSE_KEY] == 12 * (160 + 100)
    assert "textcraft's 12 turns x (160 reply + 100 observation tokens)" in notes[-1]
    # one reply budget for both: babyai's 20 turns now make the longer episode
    changed, _ = budgets.resolve(settings, prompts=None, turn_limits={"textcraft": 20, "babyai": 64},
                                 agent_turns={"textcraft": 12, "babyai": 20}, reply_tokens=160,
                                 observation_tokens=100, context=None)
    assert changed[budgets.RESPONSE_KEY] == 20 * (160 + 100)


def test_train_ppo_sizes_its_budget_from_per_environment_limits_and_refuses_a_misnamed_one(tmp_path, capsys):
    def response_budget(*extra: str) -> int:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert train.main(["--env_name", "maze,babyai", "--output_dir", str(tmp_path / "run"),
                               f"data_dir={tmp_path / 'data'}", "data.max_response_length=auto",
                               "agent.observation_tokens=100", *extra, "--dry_run"]) == 0
        (arg,) = [w for w in out.getvalue().split() if w.startswith("data.max_response_length=")]
        return int(arg.split("=")[1])

    assert response_budget("agent.max_turns={maze: 4, babyai: 10}", "agent.max_new_tokens={maze: 50, default: 20}") \
        == 10 * (20 + 100)  # babyai's 10 turns x 120 > maze's 4 x 150
    assert response_budget("agent.max_turns=4", "agent.max_new_tokens={maze: 500, babyai: 20}") == 4 * (500 + 100)
    code = train.main(["--env_name", "maze", "--output_dir", str(tmp_path / "bad"), "agent.max_turns={maze: 4, mze: 5}",
                       "--dry_run"])
    assert code == 2 and "agent.max_turns names mze, neither an environment of this run" in capsys.readouterr().err
