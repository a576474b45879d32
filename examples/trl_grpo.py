"""GRPO with TRL's trainer on an environment of this project: ``GRPOTrainer(environment_factory=...)``.

    .venv/bin/python examples/trl_grpo.py --env_name maze --steps 3            # tiny model, CPU, a server started here
    .venv/bin/python examples/trl_grpo.py --server http://HOST:PORT --model Qwen/Qwen2.5-0.5B-Instruct

The environment's actions are the model's tools (agentenv.interop.trl_env): TRL makes one instance per rollout,
resets it to the dataset row's task, runs the model's tool calls against the server and takes the episode's return as
the reward. Without ``--model`` the tiny model is built in code with TRL's Qwen2.5 chat template (TRL parses tool
calls of known templates only); it is untrained, so it seldom calls a tool: the run shows the machinery, not learning.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from pathlib import Path


def tiny_model(out: Path, info) -> Path:
    """The tiny Qwen2 model with TRL's Qwen2.5 template (tool calls in ``<tool_call>`` tags)."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    from openmanus_rl.tiny_model import build_tiny_model

    corpus = [info.instruction, '<tool_call>\n{"name": "act", "arguments": {"action": "move up"}}\n</tool_call>',
              "<tools>\n</tools>", "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."]
    path = build_tiny_model(out, corpus=[c for c in corpus if c], cache=None)
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.save_pretrained(path)
    return path


def warm_start(model: Path, factory, episodes: int, steps: int) -> None:
    """Behaviour cloning in plain torch on the server's expert episodes, played through the TRL environment and
    rendered as TRL renders a rollout (the tools in the prompt, tool calls, tool results), the loss on the tool calls
    only: a tiny model that calls the tools, so that the GRPO steps after it see the environment's rewards."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from agentenv.interop.trl_env import expert_tool_call, task_rows, tool_names

    tokenizer = AutoTokenizer.from_pretrained(model)
    rows = []
    for row in task_rows(factory, episodes):
        env = factory()
        messages = [{"role": "user", "content": row["prompt"][0]["content"] + env.reset(**row)}]
        tools = [getattr(env, name) for name in tool_names(factory)]
        while not env.done:
            name, arguments = expert_tool_call(env)
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": name, "arguments": arguments}}]})
            messages.append({"role": "tool", "name": name, "content": getattr(env, name)(**arguments)})
        rows.append(_assistant_labels(tokenizer, messages, tools))
    width = max(len(ids) for ids, _ in rows)
    pad = tokenizer.pad_token_id
    input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in rows])
    labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in rows])
    attention = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in rows])
    lm = AutoModelForCausalLM.from_pretrained(model)
    torch.manual_seed(0)
    opt = torch.optim.AdamW(lm.parameters(), lr=3e-3)
    for _ in range(steps):
        loss = lm(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(f"warm start: {episodes} expert episodes, {steps} steps, loss {loss.item():.3f}", flush=True)
    lm.save_pretrained(model)


def _assistant_labels(tokenizer, messages: list[dict], tools: list) -> tuple[list[int], list[int]]:
    """A rendered episode's token ids, and labels that keep only the assistant's turns (the tool calls): what each
    turn adds to the chat rendered up to it with the generation prompt."""
    def render(chat: list[dict], prompt: bool = False) -> str:
        return tokenizer.apply_chat_template(chat, tools=tools, tokenize=False, add_generation_prompt=prompt)

    text = render(messages)
    spans = [(len(render(messages[:k], True)), len(render(messages[:k + 1])))
             for k, m in enumerate(messages) if m["role"] == "assistant"]
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    labels = [t if any(a <= start < b for a, b in spans) else -100
              for t, (start, _) in zip(enc["input_ids"], enc["offset_mapping"], strict=True)]
    return enc["input_ids"], labels


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env_name", default="maze", help="an installed environment, served here for the run")
    p.add_argument("--server", default=None, help="URL of a running server of the environment instead")
    p.add_argument("--model", default=None, help="a hub name or local model with a tool-calling chat template")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--max_completion_length", type=int, default=1024,
                   help="tokens of a rollout's replies and tool results together")
    p.add_argument("--warm_start", type=int, default=0, metavar="EPISODES",
                   help="tiny model: first clone this many expert episodes (the server's expert policy)")
    p.add_argument("--output_dir", default="outputs/trl_grpo")
    args = p.parse_args(argv)

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from agentenv.interop.trl_env import environment_factory, task_rows
    from agentenv.launcher import env_servers
    from openmanus_rl.verl_args import default_preset

    out = Path(args.output_dir)
    with contextlib.ExitStack() as stack:
        url = args.server or stack.enter_context(env_servers([args.env_name]))[args.env_name][0]
        factory = environment_factory(url)
        model = args.model or str(tiny_model(out / "model", factory.info))
        if args.warm_start and not args.model:
            warm_start(Path(model), factory, args.warm_start, steps=150)
        config = GRPOConfig(
            output_dir=str(out), max_steps=args.steps, per_device_train_batch_size=4, num_generations=4,
            max_completion_length=args.max_completion_length, learning_rate=1e-4, logging_steps=1, report_to="none",
            save_strategy="no", use_cpu=default_preset() == "cpu", bf16=False, max_tool_calling_iterations=4, seed=0)
        trainer = GRPOTrainer(model=model, args=config, environment_factory=factory,
                              train_dataset=Dataset.from_list(task_rows(factory, 4 * args.steps)))
        trainer.train()
    steps = [row for row in trainer.state.log_history if "loss" in row]
    summary = {"env": factory.info.env, "steps": len(steps),
               "reward": [row.get(f"rewards/{factory.__name__}/mean") for row in steps],
               "tool_calls": [row.get("tools/call_frequency") for row in steps]}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
