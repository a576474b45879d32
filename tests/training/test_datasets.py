"""verl parquet datasets built from real servers (the format of docs/protocol.md), rebuilt when stale."""

import pandas as pd

from agentenv.client import EnvClient
from agentenv.launcher import ServerProcess
from openmanus_rl import datasets, prompts


def test_rows_follow_the_design_and_hold_the_first_observation(tmp_path):
    with ServerProcess("wordle") as server:
        paths = datasets.build(["wordle"], tmp_path, {"wordle": [server.url]}, max_train=5, reward_style="success")
        train = pd.read_parquet(paths["wordle"]["train"])
        test = pd.read_parquet(paths["wordle"]["test"])
        assert len(train) == 5 and len(test) == 25
        assert list(train.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"]
        row = test.iloc[3]
        assert row["data_source"] == "wordle" and row["ability"] == "agent" and row["agent_name"] == "openmanus"
        assert row["reward_model"] == {"style": "success", "ground_truth": "wordle_3"}
        assert row["extra_info"] == {"env_name": "wordle", "split": "test", "task_id": 3, "index": 3}
        with EnvClient(server.url) as c:
            created = c.create(3, "test")
            c.close(created.env_id)
        assert list(row["prompt"]) == prompts.initial_messages("wordle", created.observation)


def test_missing_changed_or_stale_files_are_rebuilt(tmp_path, capsys):
    with ServerProcess("maze") as server:
        given = {"maze": [server.url]}
        paths = datasets.build(["maze"], tmp_path, given, max_train=4)["maze"]
        capsys.readouterr()
        datasets.build(["maze"], tmp_path, given, max_train=4)
        assert "wrote" not in capsys.readouterr().out  # nothing changed: nothing rebuilt
        datasets.build(["maze"], tmp_path, given, max_train=6)
        assert len(pd.read_parquet(paths["train"])) == 6  # another limit: rebuilt
        # a file built from another task set (the server's fingerprint differs) is rebuilt, and that is
        # judged without resetting a single task
        frame = pd.read_parquet(paths["test"])
        frame.at[0, "prompt"] = [{"role": "user", "content": "an old version of the task"}]
        frame.to_parquet(paths["test"], index=False)
        datasets.build(["maze"], tmp_path, given, max_train=6)
        assert "an old version" in str(pd.read_parquet(paths["test"]).iloc[0]["prompt"])  # same task set: kept
        made_by = paths["test"].with_suffix(".json")
        made_by.write_text(made_by.read_text().replace('"fingerprint": "', '"fingerprint": "old'))
        datasets.build(["maze"], tmp_path, given, max_train=6)
        assert "an old version" not in str(pd.read_parquet(paths["test"]).iloc[0]["prompt"])


def test_a_multi_environment_mix_takes_a_task_count_per_environment(tmp_path):
    with ServerProcess("maze") as maze, ServerProcess("wordle") as wordle:
        given = {"maze": [maze.url], "wordle": [wordle.url]}
        paths = datasets.build(["maze", "wordle"], tmp_path, given, max_train={"maze": 7, "default": 3})
        assert {env: len(pd.read_parquet(p["train"])) for env, p in paths.items()} == {"maze": 7, "wordle": 3}
        assert len(pd.read_parquet(paths["wordle"]["test"])) == 25  # the test split whole
