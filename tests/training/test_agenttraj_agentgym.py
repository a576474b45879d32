"""AgentTraj both ways: episodes written here in AgentGym's own layout load the way AgentGym's trainer loads its
training file, and AgentEval's id-only lists are read without a crash (and refused for fine-tuning, saying why).

The loading below follows AgentGym's BC trainer's data path as published (not its code): ``json.load`` of one
array, ``datasets.Dataset.from_list``, then per item ``item_id`` and each turn's ``from``/``value`` (human turns
as prompts, gpt turns as targets), and for its test files the task index as the item id's last ``_`` field.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentenv.launcher import env_servers
from openmanus_rl import expert_data, sft, trajectories

from helpers import AGENTGYM_ITEMS, REPO


@pytest.fixture(scope="module")
def maze_result(tmp_path_factory):
    """The expert's episodes on maze's first test tasks, as agentenv-eval writes them."""
    with env_servers(["maze"]) as urls:
        result = expert_data.play(urls, ["maze"], "expert", "test", 3, 0)
    path = tmp_path_factory.mktemp("eval") / "result.json"
    path.write_text(json.dumps(result))
    return path


def test_episodes_convert_to_agentgyms_layout_and_load_as_its_trainer_loads_them(maze_result, tmp_path):
    from datasets import Dataset

    out = tmp_path / "agenttraj.json"
    proc = subprocess.run([sys.executable, "-m", "openmanus_rl.trajectories", "to-agentgym", str(maze_result),
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    raw = json.loads(out.read_text())  # one JSON array
    source = json.loads(maze_result.read_text())["trajectories"]
    data = Dataset.from_list(raw)
    assert len(data) == len(source) == 3
    for item, episode in zip(data, source, strict=True):
        assert item["item_id"] == f"lmrlgym_maze_{episode['item_id'].rpartition('_')[2]}"  # AgentGym's env name
        assert int(item["item_id"].split("_")[-1]) == int(episode["item_id"].rpartition("_")[2])
        turns = item["conversations"]
        assert all(t["from"] in ("human", "gpt") and isinstance(t["value"], str) for t in turns)
        # the instruction, answered "Ok." (not trained on), then the first observation, then the episode
        assert [t["from"] for t in turns[:4]] == ["human", "gpt", "human", "gpt"]
        assert turns[1] == {"from": "gpt", "loss": False, "value": "Ok."}
        first = episode["first_observation"]
        assert turns[2]["value"] == first and first not in turns[0]["value"]
        assert turns[0]["value"] + "\n\n" + turns[2]["value"] == episode["conversations"][0]["value"]
        assert [t["value"] for t in turns[3:]] == [t["value"] for t in episode["conversations"][1:]]
        assert all(t["loss"] is True for t in turns[3:] if t["from"] == "gpt")
    # and back: this project's fine-tuning reads the array, training on the replies but not on "Ok."
    rows = [sft.sft_row(it) for it in trajectories.read(out)]
    assert [m["loss"] for m in rows[0]["messages"][:4]] == [False, False, False, True]


def agenteval_list(tmp_path):
    if AGENTGYM_ITEMS is not None:
        return AGENTGYM_ITEMS / "eval" / "lmrlgym_maze_test.json"
    path = tmp_path / "lmrlgym_maze_test.json"  # the published form, when the reference lists are absent
    path.write_text(json.dumps([{"item_id": f"lmrlgym_maze_{i}", "conversations": None} for i in range(25)]))
    return path


def test_an_agenteval_list_is_read_and_refused_for_fine_tuning_with_a_reason(tmp_path):
    path = agenteval_list(tmp_path)
    items = list(trajectories.read(path))
    assert len(items) == 25 and not any(trajectories.has_conversation(it) for it in items)
    with pytest.raises(ValueError, match="holds item ids without conversations"):
        sft.read_items([path])
    proc = subprocess.run([sys.executable, "-m", "openmanus_rl.sft", "--data", str(path), "--model", "x", "--out",
                           str(tmp_path / "ckpt")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2 and "holds item ids without conversations" in proc.stderr
    assert "Traceback" not in proc.stderr
    converted = subprocess.run([sys.executable, "-m", "openmanus_rl.trajectories", "to-agentgym", str(path), "--out",
                                str(tmp_path / "x.json")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert converted.returncode == 2 and "0 episodes" in converted.stderr and not (tmp_path / "x.json").exists()
