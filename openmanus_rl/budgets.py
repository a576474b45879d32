"""Token budgets of a PPO/GRPO run: how long verl lets a first prompt and a whole episode be.

A model preset may leave ``data.max_prompt_length`` and ``data.max_response_length`` to the launcher
(``auto``, as ``configs/model/default.yaml`` does for any hub model without a preset of its own):

* the prompt budget is the longest first prompt of the run's datasets, tokenized with the model's own
  tokenizer and chat template (rounded up to a multiple of 64);
* the response budget is a whole episode: the turn limit (the environment's, or ``agent.max_turns``
  when lower) times a reply (``agent.max_new_tokens``) and an observation (``agent.observation_tokens``),
  capped by the model's context length. An episode that still does not fit is cut and counted
  (``episode/<env>/cut_by_budget``).

Whatever the budgets, a first prompt longer than ``data.max_prompt_length`` is an error here, before
verl starts: verl's agent loop would otherwise cut it from the left with only a warning.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openmanus_rl.tiny_model import chat_token_counts

AUTO = "auto"
PROMPT_KEY = "data.max_prompt_length"
RESPONSE_KEY = "data.max_response_length"
TOKEN_LEN_KEYS = ("actor_rollout_ref.actor.ppo_max_token_len_per_gpu", "critic.ppo_max_token_len_per_gpu")
DRY_RUN_PROMPT = 4096  # a dry run builds no dataset: the prompt budget it prints for ``auto``
VERL_TOKEN_LEN = 16384  # verl's default token budget of a micro-batch
CHARS_PER_TOKEN_BOUND = 2  # without the tokenizer, a token is counted as at most this many characters


class BudgetError(ValueError):
    """A budget that cannot hold the run's prompts."""


@dataclass(frozen=True)
class PromptLengths:
    longest: int  # tokens (or an upper estimate when not exact)
    rows: int
    exact: bool  # measured with the model's tokenizer


def round_up(n: int, multiple: int = 64) -> int:
    return max(multiple, math.ceil(n / multiple) * multiple)


def longest_first_prompt(files: Iterable[Path], model_path: str | None) -> PromptLengths:
    """The longest first prompt of the datasets: the model's tokenizer and chat template with the generation
    prompt (what the agent loop sends first), or, if the tokenizer cannot be loaded, an upper estimate."""
    import pandas as pd

    chats = [[dict(m) for m in p] for f in files for p in pd.read_parquet(f, columns=["prompt"])["prompt"]]
    counts = chat_token_counts(model_path, chats) if model_path else None
    if counts is not None:  # a tiny model: counted without transformers
        return PromptLengths(max(counts, default=0), len(chats), exact=True)
    tokenizer = _tokenizer(model_path)
    if tokenizer is None:
        chars = max((sum(len(m["content"]) for m in c) + 16 * len(c) for c in chats), default=0)
        return PromptLengths(math.ceil(chars / CHARS_PER_TOKEN_BOUND), len(chats), exact=False)
    longest = max((len(tokenizer.apply_chat_template(c, add_generation_prompt=True, tokenize=True, return_dict=False))
                   for c in chats), default=0)
    return PromptLengths(longest, len(chats), exact=True)


def _tokenizer(model_path: str | None) -> Any:
    if not model_path:
        return None
    try:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(model_path)
    except Exception:  # no hub, no such model: the estimate
        return None


def context_length(model_path: str | None) -> int | None:
    """The model's context (``max_position_embeddings`` of its config), if its config can be read."""
    if not model_path:
        return None
    try:
        from transformers import AutoConfig

        return int(getattr(AutoConfig.from_pretrained(model_path), "max_position_embeddings", 0)) or None
    except Exception:
        return None


def episode_tokens(turns: int, reply_tokens: int, observation_tokens: int) -> int:
    return turns * (reply_tokens + observation_tokens)


def resolve(overrides: Mapping[str, Any], *, prompts: PromptLengths | None, turn_limits: Mapping[str, int],
            agent_turns: int | Mapping[str, int | None] | None, reply_tokens: int | Mapping[str, int],
            observation_tokens: int,
            context: int | None) -> tuple[dict[str, Any], list[str]]:
    """The settings that replace ``auto`` budgets (and raise token-budget micro-batches to one whole
    sequence), with a line saying how each was reached; a prompt budget smaller than the longest
    measured prompt is a :class:`BudgetError`."""
    changed: dict[str, Any] = {}
    notes: list[str] = []
    prompt = overrides.get(PROMPT_KEY)
    if prompt == AUTO:
        if prompts is None:
            prompt = DRY_RUN_PROMPT
            notes.append(f"prompt budget {prompt} tokens (dry run: measured on the datasets when the run starts)")
        else:
            prompt = round_up(prompts.longest)
            how = "the model's tokenizer" if prompts.exact else f"<= {CHARS_PER_TOKEN_BOUND} characters a token"
            notes.append(f"prompt budget {prompt} tokens: the longest of {prompts.rows} first prompts is "
                         f"{prompts.longest} ({how})")
        changed[PROMPT_KEY] = prompt
    elif prompts is not None and prompts.exact and int(prompt) < prompts.longest:
        raise BudgetError(f"the longest first prompt is {prompts.longest} tokens but {PROMPT_KEY} is {prompt}: verl "
                          f"would cut it from the left; raise it (or set it to {AUTO})")
    response = overrides.get(RESPONSE_KEY)
    if response == AUTO:  # the longest episode of the run's environments, each with its own limits
        def episode(env: str | None) -> tuple[int, int]:  # None: no environment named at all
            cap = agent_turns.get(env) if isinstance(agent_turns, Mapping) else agent_turns
            reply = int(reply_tokens[env] if isinstance(reply_tokens, Mapping) else reply_tokens)
            turns = turn_limits.get(env, cap or 1)  # an environment that does not say (or none): the agent's
            return (turns if cap is None else min(turns, cap)), reply

        names = sorted({*turn_limits, *(agent_turns if isinstance(agent_turns, Mapping) else ()),
                        *(reply_tokens if isinstance(reply_tokens, Mapping) else ())})
        longest = max(names, key=lambda e: episode_tokens(*episode(e), observation_tokens), default=None)
        turns, reply = episode(longest)
        response = episode_tokens(turns, reply, observation_tokens)
        whose = f"{longest}'s " if len(names) > 1 else ""
        note = (f"response budget {response} tokens: {whose}{turns} turns x ({reply} reply + {observation_tokens} "
                f"observation tokens)")
        if context is not None and response + int(prompt) > context:
            response = context - int(prompt)
            note += f", cut to {response} by the model's context of {context}"
        changed[RESPONSE_KEY] = response
        notes.append(note)
    sequence = int(prompt) + int(response)
    for key in TOKEN_LEN_KEYS:
        if int(overrides.get(key) or VERL_TOKEN_LEN) < sequence:
            changed[key] = sequence  # a token-budget micro-batch must hold one whole sequence
    return changed, notes


def turn_limits_of(infos: Mapping[str, Any]) -> dict[str, int]:
    """``max_turns`` of each environment's ``/info`` (or class)."""
    return {env: int(info.max_turns) for env, info in infos.items() if getattr(info, "max_turns", None)}


def agent_turn_cap(max_turns: Any) -> int | None:
    """The largest limit of ``agent.max_turns`` (an int, a ``[[step, limit], ...]`` schedule, or None)."""
    if max_turns is None:
        return None
    if isinstance(max_turns, int):
        return max_turns
    limits: Sequence[Any] = [pair[1] for pair in max_turns]
    return max(int(x) for x in limits)
