import pytest

from agentenv.actions import parse_reply as parse_action
from openmanus_rl.prompts import format_reply, initial_messages


@pytest.mark.parametrize("reply,action,ok", [
    ("Thought: the goal is up.\nAction: move up", "move up", True),
    ("Thought: hmm\naction:  guess crane  \n", "guess crane", True),
    ("Action: turn left\nThought: wait\nAction: move forward", "move forward", True),
    ("I will <action>pick up</action> now", "pick up", True),
    ("Action: `toggle`", "toggle", True),
    ("<action>drop</action>\nAction: toggle", "drop", True),
    ("move up", "move up", False),
    ("Thought: no action line", "Thought: no action line", False),
    ("", "", False),
])
def test_parse_action(reply, action, ok):
    parsed = parse_action(reply)
    assert (parsed.action, parsed.well_formed) == (action, ok)


def test_formatted_replies_parse_back():
    assert parse_action(format_reply("guess slate", "start wide")).action == "guess slate"
    messages = initial_messages("maze", "Find the goal.")
    assert [m["role"] for m in messages] == ["user"]
    assert messages[0]["content"].endswith("\n\nFind the goal.") and "Action:" in messages[0]["content"]


def test_agenttraj_round_trip(tmp_path):
    import json

    from openmanus_rl import trajectories

    messages = initial_messages("maze", "Find the goal.") + [
        {"role": "assistant", "content": format_reply("move up")},
        {"role": "user", "content": "You are at (1, 2)."},
        {"role": "assistant", "content": format_reply("move left")},
    ]
    item = trajectories.from_messages("maze", 7, messages, reward=1.0, success=True)
    assert item["item_id"] == "maze_7" and trajectories.parse_item_id("wordle_12") == ("wordle", 12)
    assert [t["from"] for t in item["conversations"]] == ["human", "gpt", "human", "gpt"]
    assert trajectories.loss_mask(item) == [False, True, False, True]
    trajectories.write(tmp_path / "a.jsonl", [item, item])
    assert list(trajectories.read(tmp_path / "a.jsonl")) == [item, item]
    # a published AgentTraj file: one JSON array, loss given or null
    published = [{"item_id": "webshop_0", "conversations": [{"from": "human", "value": "hi", "loss": None},
                                                             {"from": "gpt", "value": "OK", "loss": False}]}]
    (tmp_path / "pub.json").write_text(json.dumps(published))
    loaded = list(trajectories.read(tmp_path / "pub.json"))
    assert trajectories.to_messages(loaded[0]) == [{"role": "user", "content": "hi"},
                                                   {"role": "assistant", "content": "OK"}]
    assert trajectories.loss_mask(loaded[0]) == [False, False]
