"""Action formats, and reading an action out of a model's reply.

An environment declares one of three formats (``Environment.action_format``):

- ``text``: one line, ``Action: move up``;
- ``tool``: a tool call, AgentGym's ``Action: NAME with Action Input: {json}`` (the JSON may span
  lines) or a JSON function call ``{"name": NAME, "arguments": {...}}``;
- ``code``: a fenced code block (e.g. ```` ```sql ... ``` ````), whole, however many lines.

Both sides use this module: agents (training, evaluation) parse model replies with
:func:`parse_reply`, and tool environments parse the action they receive with
:func:`parse_tool_call`. A reply that follows no accepted form, or that was cut by a token budget,
is never ``well_formed``; its text is still sent, and the environment decides what it understood.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

ACTION_FORMATS = ("text", "tool", "code")

_TAGGED = re.compile(r"<action>(.*?)</action>", re.IGNORECASE | re.DOTALL)
_ACTION_LINE = re.compile(r"^\s*action\s*:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_ACTION_START = re.compile(r"^\s*action\s*:[ \t]*", re.IGNORECASE | re.MULTILINE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)\n?[ \t]*```", re.DOTALL)
# "NAME with Action Input:" (AgentGym), or ReAct's two lines "NAME" / "Action Input:" (LangChain-trained models)
_TOOL_HEAD = re.compile(r"^\s*`?([A-Za-z_][\w.-]*)`?\s+(?:with\s+)?action\s+input\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAction:
    action: str
    well_formed: bool  # the reply followed the format, whole (not cut)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]

    def render(self) -> str:
        """The canonical action text (AgentGym's form, arguments as one line of JSON)."""
        return f"{self.name} with Action Input: {json.dumps(self.arguments, ensure_ascii=False)}"


#: what ``ast.literal_eval`` raises on text that is no literal; TypeError: a set or dict of unhashable items
#: (``{[1]}``, ``{[1]: 2}``), as models write
LITERAL_ERRORS = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


class ToolCallError(ValueError):
    """An action that is no readable tool call; the message says what is wrong."""


def _json_object(text: str) -> tuple[dict[str, Any], str]:
    """The JSON object at the start of ``text`` (after blanks or a code fence) and what follows it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
    try:
        value, end = json.JSONDecoder().raw_decode(body.lstrip())
    except json.JSONDecodeError as e:
        found = _python_dict(body.lstrip())
        if found is None:
            raise ToolCallError(f"Action Input is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from e
        value, end = found
    if not isinstance(value, dict):
        raise ToolCallError(f"Action Input must be a JSON object of arguments, not {type(value).__name__}")
    return value, body.lstrip()[end:]


def _python_dict(text: str, max_tries: int = 64) -> tuple[dict[str, Any], int] | None:
    """A Python dict literal at the start of ``text`` (``{'name': 'Sheet1'}``: AgentGym's tool servers read
    Action Inputs with Python, and its reference trajectories are written so), read as a literal only."""
    if not text.startswith("{"):
        return None
    end = 0
    for _ in range(max_tries):
        end = text.find("}", end) + 1
        if end <= 0:
            return None
        try:
            value = ast.literal_eval(text[:end])
        except LITERAL_ERRORS:
            continue
        return (value, end) if isinstance(value, dict) else None
    return None


def parse_tool_call(text: str) -> ToolCall:
    """``NAME with Action Input: {json}`` (an ``Action:`` prefix allowed; ReAct's ``Action: NAME`` then
    ``Action Input: {json}`` on the next line too), or a JSON function call ``{"name": ..., "arguments":
    {...}}`` (OpenAI's ``{"function": {...}}`` wrapping too)."""
    text = text.strip()
    starts = list(_ACTION_START.finditer(text))
    if starts:
        text = text[starts[-1].end():].strip()
    head = _TOOL_HEAD.match(text)
    if head:
        args, _ = _json_object(text[head.end():])
        return ToolCall(head.group(1), args)
    if text.startswith(("{", "```")):
        call, _ = _json_object(text)
        call = call.get("function", call) if isinstance(call.get("function"), dict) else call
        name, args = call.get("name"), call.get("arguments", call.get("parameters", {}))
        if isinstance(args, str):  # OpenAI sends arguments as a JSON string
            args, _ = _json_object(args)
        if not isinstance(name, str) or not name:
            raise ToolCallError('a JSON tool call needs "name" (a string) and "arguments" (an object)')
        if not isinstance(args, dict):
            raise ToolCallError('"arguments" of a tool call must be a JSON object')
        return ToolCall(name, args)
    raise ToolCallError("no tool call found; write: Action: TOOL_NAME with Action Input: {JSON arguments}")


def _last_action_line(reply: str) -> re.Match[str] | None:
    starts = list(_ACTION_START.finditer(reply))
    return starts[-1] if starts else None


def _after_last_action(reply: str) -> str | None:
    line = _last_action_line(reply)
    return reply[line.end():].strip() if line else None


def action_start(reply: str) -> int | None:
    """Where the last "Action:" line of a reply starts (None: the reply has none)."""
    line = _last_action_line(reply)
    return line.start() if line else None


def parse_reply(reply: str, action_format: str = "text", *, cut: bool = False) -> ParsedAction:
    """The action in a model's reply, for an environment of ``action_format``.

    ``cut``: the reply ended because a token budget ran out, not because the model finished it; such
    a reply is never well-formed (its action may be half a line, half a JSON object or half a query).
    """
    if action_format not in ACTION_FORMATS:
        raise ValueError(f"unknown action format {action_format!r}; one of {', '.join(ACTION_FORMATS)}")
    tagged = _TAGGED.findall(reply)
    if tagged and tagged[-1].strip():
        return ParsedAction(tagged[-1].strip(), not cut)
    if action_format == "text":
        lines = _ACTION_LINE.findall(reply)
        if lines:
            return ParsedAction(lines[-1].strip().strip("`\"'").strip(), not cut)
        return ParsedAction(reply.strip(), False)
    if action_format == "tool":
        rest = _after_last_action(reply)
        for candidate in ([rest] if rest is not None else []) + [reply]:
            try:
                return ParsedAction(parse_tool_call(candidate).render(), not cut)
            except ToolCallError:
                continue
        return ParsedAction(rest if rest else reply.strip(), False)
    blocks = _FENCE.findall(reply)
    if blocks:
        return ParsedAction(blocks[-1][1].strip(), not cut)
    rest = _after_last_action(reply)
    return ParsedAction((rest if rest else reply).strip().strip("`").strip(), False)
