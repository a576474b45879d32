"""WebArena's action grammar as its agent's replies are read (agentenv_webarena.actions)."""

import pytest
from agentenv_webarena.actions import (
    Action,
    ActionParsingError,
    ActionType,
    describe,
    extract,
    parse,
    read_reply,
)


def test_the_first_backtick_block_is_the_action():
    reply = "Let's think. In summary, the next action I will perform is ```click [1234]``` and ```stop [x]```"
    assert extract(reply) == "click [1234]"
    assert extract("```\ntype [5] [hi] [0]\n```") == "type [5] [hi] [0]"
    with pytest.raises(ActionParsingError, match="Cannot find the answer phrase"):
        extract("click [12]")
    assert read_reply("click [12]") == Action(ActionType.CLICK, element_id="12")  # no block: the reply itself
    with pytest.raises(ActionParsingError, match="Invalid action python"):
        read_reply("```python\nclick [1]```")  # a language tag is not stripped, as in WebArena


@pytest.mark.parametrize(("text", "action"), [
    ("click [12]", Action(ActionType.CLICK, element_id="12")),
    ("click[12] where it is the search box", Action(ActionType.CLICK, element_id="12")),
    ("hover [7]", Action(ActionType.HOVER, element_id="7")),
    ("type [5] [hi]", Action(ActionType.TYPE, element_id="5", text="hi\n")),
    ("type [5] [hi] [0]", Action(ActionType.TYPE, element_id="5", text="hi")),
    ("type [5] [a] [b] [1]", Action(ActionType.TYPE, element_id="5", text="a] [b\n")),
    ("type [5] [hi] [2]", Action(ActionType.TYPE, element_id="5", text="hi] [2\n")),
    ("press [ctrl+enter]", Action(ActionType.KEY_PRESS, key_comb="ctrl+Enter")),
    ("press [Meta+a]", Action(ActionType.KEY_PRESS, key_comb="Meta+a")),
    ("scroll [down]", Action(ActionType.SCROLL, direction="down")),
    ("scroll up", Action(ActionType.SCROLL, direction="up")),
    ("goto [http://example.com/a?b=1]", Action(ActionType.GOTO_URL, url="http://example.com/a?b=1")),
    ("tab_focus [2]", Action(ActionType.PAGE_FOCUS, page_number=2)),
    ("new_tab", Action(ActionType.NEW_TAB)),
    ("close_tab", Action(ActionType.PAGE_CLOSE)),
    ("go_back", Action(ActionType.GO_BACK)),
    ("go_forward", Action(ActionType.GO_FORWARD)),
    ("stop [$25.99]", Action(ActionType.STOP, answer="$25.99")),
    ("stop [a] b [c]", Action(ActionType.STOP, answer="a] b [c")),
    ("stop", Action(ActionType.STOP, answer="")),
    ("stop [two\nlines]", Action(ActionType.STOP, answer="")),
])
def test_the_grammar_reads_as_webarenas(text, action):
    assert parse(text) == action


@pytest.mark.parametrize(("text", "message"), [
    ("Click [1]", "Invalid action Click [1]"),
    ("click on [1]", "Invalid action click on [1]"),
    ("click [abc]", "Invalid click action click [abc]"),
    ("scroll [direction=down]", "Invalid scroll action"),
    ("type [5] [two\nlines] [1]", "Invalid type action"),
    ("tab_focus [x]", "Invalid tab_focus action"),
    ("type [5] [caf\u00e9 \u2019quoted\u2019]", "cannot type"),
    ("", "empty"),
])
def test_what_webarena_cannot_read_is_an_error_saying_why(text, message):
    with pytest.raises(ActionParsingError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse(text)


def test_the_previous_action_is_described_with_the_element_it_acted_on():
    lines = {"164": "[164] textbox 'Search' focused: True required: False"}
    assert describe(parse("click [164]"), lines) == \
        "click [164] where [164] is textbox 'Search' focused: True required: False"
    assert describe(parse("type [164] [shoes]"), lines) == \
        "type [164] [shoes ] where [164] is textbox 'Search' focused: True required: False"
    assert describe(parse("hover [9]"), lines).startswith('Attempt to perfom "hover" on element "[9]"')
    assert describe(parse("tab_focus [1]"), lines) == "page_focus [1]"
    assert describe(parse("stop [N/A]"), lines) == "stop [N/A]"

