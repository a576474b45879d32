import json

import pytest

from agentenv.actions import ToolCallError, parse_reply, parse_tool_call
from agentenv.client import read_info
from openmanus_rl.prompts import format_reply, initial_messages, read_reply, system_prompt


def parse_action(reply):
    return parse_reply(reply, "text")


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


def test_a_cut_reply_is_never_well_formed():
    for fmt, reply in (("text", "Action: move up"), ("code", "```sql\nSELECT 1\n```"),
                       ("tool", 'Action: add with Action Input: {"a": 1, "b": 2}')):
        assert parse_reply(reply, fmt).well_formed
        assert not parse_reply(reply, fmt, cut=True).well_formed


MULTILINE_TOOL = """Thought: I need the weather in two places.
Action: get_weather with Action Input: {
  "city": "Paris",
  "dates": ["2024-01-01",
            "2024-01-02"],
  "note": "line one\\nline two"
}"""


def test_tool_calls_spanning_lines_arrive_whole():
    parsed = parse_reply(MULTILINE_TOOL, "tool")
    assert parsed.well_formed
    call = parse_tool_call(parsed.action)
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris", "dates": ["2024-01-01", "2024-01-02"], "note": "line one\nline two"}
    # the old one-line reading of this reply would have sent `get_weather with Action Input: {`
    assert parse_reply(MULTILINE_TOOL, "text").action == "get_weather with Action Input: {"


@pytest.mark.parametrize("reply", [
    'Action: add with Action Input: {"a": 1, "b": 2',  # cut JSON
    "Action: add with Action Input: [1, 2]",  # not an object
    "Action: add",  # no input
    "Thought: nothing to do",
])
def test_unreadable_tool_calls_are_not_well_formed(reply):
    assert not parse_reply(reply, "tool").well_formed


def test_json_function_calls_are_read_as_tool_calls():
    call = '{"name": "add", "arguments": {"a": 1, "b": 2}}'
    assert parse_tool_call(call).arguments == {"a": 1, "b": 2}
    openai_style = json.dumps({"function": {"name": "add", "arguments": json.dumps({"a": 3})}})
    assert parse_tool_call(openai_style).name == "add" and parse_tool_call(openai_style).arguments == {"a": 3}
    parsed = parse_reply(f"Thought: sum\nAction: ```json\n{call}\n```", "tool")
    assert parsed.well_formed and parse_tool_call(parsed.action).arguments == {"a": 1, "b": 2}
    with pytest.raises(ToolCallError, match="not valid JSON"):
        parse_tool_call("add with Action Input: {a: 1}")


def test_python_dict_inputs_as_agentgyms_tool_servers_read_them():
    """AgentGym's tool servers read Action Inputs as Python; its reference trajectories use single quotes."""
    call = parse_tool_call("Action: open_sheet with Action Input: {'title': 'Sheet1', 'rows': [1, {'n': 2}]}")
    assert call == type(call)("open_sheet", {"title": "Sheet1", "rows": [1, {"n": 2}]})
    assert call.render() == 'open_sheet with Action Input: {"title": "Sheet1", "rows": [1, {"n": 2}]}'
    assert parse_tool_call("f with Action Input: {'a': '}'} and more").arguments == {"a": "}"}
    for bad in ("f with Action Input: {'a': __import__('os')}", "f with Action Input: {'a': 1",
                "f with Action Input: {['a', 'b']}", "f with Action Input: {[1]: 2}"):  # unhashable: no crash
        with pytest.raises(ToolCallError, match="not valid JSON"):  # a literal only: no names, no calls
            parse_tool_call(bad)
    assert not parse_reply("Thought: t\nAction: f with Action Input: {['a']}", "tool").well_formed


def test_code_blocks_arrive_whole_and_unfenced_code_is_a_format_error():
    reply = "Thought: count them\nAction:\n```sql\nSELECT name,\n       COUNT(*)\nFROM t\nGROUP BY name;\n```"
    parsed = parse_reply(reply, "code")
    assert parsed == type(parsed)("SELECT name,\n       COUNT(*)\nFROM t\nGROUP BY name;", True)
    half = parse_reply("Action:\n```sql\nSELECT name FROM", "code")  # the budget ran out inside the block
    assert not half.well_formed
    assert parse_reply("Action: SELECT 1", "code") == type(parsed)("SELECT 1", False)


def test_prompts_follow_the_servers_action_format():
    text = read_info({"env": "maze", "splits": {}, "max_turns": 5, "action_format": "one of: move up"})
    assert text.action_format == "text" and text.action_hint == "one of: move up"  # an older server
    assert system_prompt(text) == system_prompt("maze")  # no instruction: the prompt training always used
    sql = read_info({"env": "sqlgym", "splits": {}, "max_turns": 5, "action_format": "code", "code_language": "sql",
                     "instruction": "Answer questions about a SQLite database."})
    prompt = system_prompt(sql)
    assert "```sql" in prompt and prompt.endswith("Answer questions about a SQLite database.")
    reply = format_reply("SELECT 1", "check", sql)
    assert read_reply(sql, reply).action == "SELECT 1" and read_reply(sql, reply).well_formed
    tool = read_info({"env": "weather", "splits": {}, "max_turns": 5, "action_format": "tool"})
    assert "with Action Input: <a JSON object of its arguments>" in system_prompt(tool)
    decision = read_reply(tool, MULTILINE_TOOL)
    assert decision.well_formed and decision.reply == MULTILINE_TOOL
    assert parse_tool_call(decision.action).arguments["dates"] == ["2024-01-01", "2024-01-02"]


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
