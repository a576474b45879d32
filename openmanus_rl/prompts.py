"""The one source of prompts, and of reading the model's replies: training, evaluation and expert
trajectories all use it, for every environment, from the metadata its server serves (``/info``:
action format, instruction, tools). Nothing here imports an environment package: a server may run
on another machine, from another venv.

An episode is a chat that starts with one user message: how to answer (in the environment's
action format), the environment's own instruction where it has one, then its first observation
(which holds the task); then assistant replies (``Thought: ...`` / ``Action: ...``) alternate with
observations. There is no system message, so an episode maps one-to-one onto AgentTraj's
human/gpt turns.
"""

from __future__ import annotations

from agentenv.actions import parse_reply
from agentenv.client import read_info
from agentenv.policies import Decision
from agentenv.protocol import InfoResponse

_HEAD = ("You are an agent in a text environment ({env}). Read the task and each observation, then answer "
         "with one short thought and one action, exactly in this form:\n"
         "Thought: <your reasoning>\n")
_ACTION_LINE = {
    "text": "Action: <the action>",
    "tool": "Action: <tool name> with Action Input: <a JSON object of its arguments>",
    "code": "Action:\n```{lang}\n<the {what}>\n```",
}

# Far below a server's --max-action-chars (16384): a runaway reply must cost one invalid turn, not a 413.
MAX_ACTION_CHARS = 4096
MAX_OBSERVATION_CHARS = 4000


def as_info(env: InfoResponse | str) -> InfoResponse:
    """The metadata of an environment; a bare name stands for a text environment with no instruction."""
    if isinstance(env, InfoResponse):
        return env
    return read_info({"env": env, "splits": {}, "max_turns": 0})


def system_prompt(env: InfoResponse | str) -> str:
    info = as_info(env)
    lang = info.code_language or ""
    line = _ACTION_LINE[info.action_format].format(lang=lang, what=f"{lang} code" if lang else "code")
    text = _HEAD.format(env=info.env) + line
    return f"{text}\n\n{info.instruction.strip()}" if info.instruction.strip() else text


def first_user_turn(env: InfoResponse | str, first_observation: str) -> str:
    return f"{system_prompt(env)}\n\n{first_observation}"


def initial_messages(env: InfoResponse | str, first_observation: str) -> list[dict[str, str]]:
    """The chat an episode starts from (what the model sees before its first reply)."""
    return [{"role": "user", "content": first_user_turn(env, first_observation)}]


def observation_message(observation: str, max_chars: int = MAX_OBSERVATION_CHARS) -> dict[str, str]:
    """An environment turn; very long observations are cut so one turn cannot fill the context."""
    if len(observation) > max_chars:
        observation = observation[:max_chars] + " ...(truncated)"
    return {"role": "user", "content": observation}


def format_reply(action: str, thought: str | None = None, env: InfoResponse | str | None = None) -> str:
    """An assistant reply in the form the prompt asks for and :func:`read_reply` reads back (expert
    trajectories are written with it)."""
    info = as_info(env) if env is not None else None
    head = f"Thought: {thought or 'I take the next step.'}\n"
    if info is not None and info.action_format == "code":
        return f"{head}Action:\n```{info.code_language or ''}\n{action}\n```"
    return f"{head}Action: {action}"


def read_reply(env: InfoResponse | str, reply: str, *, cut: bool = False) -> Decision:
    """The decision a model's reply makes, read with the environment's own action format. A reply cut
    by a token budget, or in no accepted form, is sent as it is but never counts as well-formed."""
    parsed = parse_reply(reply, as_info(env).action_format, cut=cut)
    return Decision(parsed.action[:MAX_ACTION_CHARS], reply=reply, well_formed=parsed.well_formed)
