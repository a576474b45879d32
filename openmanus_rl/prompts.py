"""The one source of prompts: training, evaluation and expert trajectories all use it.

An episode is a chat that starts with one user message: how to answer, then the
environment's first observation (which holds the task instruction); then assistant
replies (``Thought: ...`` / ``Action: ...``) alternate with observations. There is no
system message, so an episode maps one-to-one onto AgentTraj's human/gpt turns.
"""

from __future__ import annotations

SYSTEM_PROMPT = (
    "You are an agent in a text environment ({env}). Read the task and each observation, then answer "
    "with one short thought and one action, exactly in this form:\n"
    "Thought: <your reasoning>\n"
    "Action: <the action>"
)


def system_prompt(env_name: str) -> str:
    return SYSTEM_PROMPT.format(env=env_name)


def first_user_turn(env_name: str, first_observation: str) -> str:
    return f"{system_prompt(env_name)}\n\n{first_observation}"


def initial_messages(env_name: str, first_observation: str) -> list[dict[str, str]]:
    """The chat an episode starts from (what the model sees before its first reply)."""
    return [{"role": "user", "content": first_user_turn(env_name, first_observation)}]


MAX_OBSERVATION_CHARS = 4000


def observation_message(observation: str, max_chars: int = MAX_OBSERVATION_CHARS) -> dict[str, str]:
    """An environment turn; very long observations are cut so one turn cannot fill the context."""
    if len(observation) > max_chars:
        observation = observation[:max_chars] + " ...(truncated)"
    return {"role": "user", "content": observation}


def format_reply(action: str, thought: str | None = None) -> str:
    """An assistant reply in the ReAct form the parser reads back."""
    return f"Thought: {thought or 'I take the next step.'}\nAction: {action}"
