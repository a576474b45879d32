"""The agent-loop tests' stand-ins (tests/training/test_agent_loop.py, test_tool_episodes.py): the tiny
model's tokenizer, a scripted model in place of the LLM server, and one ``run`` of the loop as verl builds it."""

from __future__ import annotations

import asyncio

from omegaconf import OmegaConf
from transformers import AutoTokenizer
from verl.experimental.agent_loop.agent_loop import DictConfigWrap
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from openmanus_rl.agent_loop import OpenManusAgentLoop
from openmanus_rl.tiny_model import build_tiny_model

ASSISTANT = "<|im_start|>assistant"


def build_tokenizer(where, corpus):
    """The tiny model's tokenizer (a byte-level BPE learnt from ``corpus``), built in code."""
    return AutoTokenizer.from_pretrained(build_tiny_model(where / "m", corpus=corpus))


def maze_tokenizer(where):
    """The tiny model's tokenizer learnt from maze's prompt, a reply and an observation."""
    from openmanus_rl import prompts

    corpus = [prompts.system_prompt("maze"), prompts.format_reply("move up"), "You are at (3, 2). walls above"]
    return build_tokenizer(where, corpus)


class ScriptedModel:
    """Stands in for the LLM server: the k-th assistant turn of a chat gets ``script[k]``.

    Stateless (it counts assistant turns in the prompt), so a replayed episode gets the same replies.
    """

    def __init__(self, tokenizer, script, version=3, on_call=None):
        self.tok, self.script, self.version, self.on_call = tokenizer, script, version, on_call
        self.calls = []

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        turn = self.tok.decode(prompt_ids).count(ASSISTANT) - 1
        self.calls.append((turn, sampling_params))
        if self.on_call:
            self.on_call(len(self.calls))
        ids = self.tok.encode(self.script[min(turn, len(self.script) - 1)], add_special_tokens=False)
        ids = (ids + [self.tok.eos_token_id])[: sampling_params["max_tokens"]]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids), extra_fields={"global_steps": self.version})


def play(tokenizer, model, settings, sampling_params, kwargs, response_length=6000):
    """One ``run`` of a loop built the way verl builds it (inside the worker's event loop)."""
    config = OmegaConf.create({"actor_rollout_ref": {"rollout": {"response_length": response_length,
                                                                 "prompt_length": 1024}}, "data": {}})

    async def go():
        loop = OpenManusAgentLoop(DictConfigWrap(config), model, tokenizer, None, RLHFDataset,
                                  DictConfigWrap(config.data), hf_model_type="qwen2", **settings)
        return await loop.run(sampling_params, **kwargs)

    return asyncio.run(go())
