"""A toy multi-turn task used only to prove the CPU stack end to end (tests, smoke runs).

* :class:`ToyTwoTurnAgentLoop` (agent name ``toy_two_turn``): generate, append a fixed "observation"
  (loss mask 0), generate again. It shows what a real agent loop must produce for verl 0.9.1.
* :func:`.toy_reward.compute_score`: the custom reward function (``reward.custom_reward_function.path``).
* :func:`make_toy_dataset`: verl-format train/val parquet files.
* :func:`toy_overrides`: the hydra overrides wiring these into ``main_ppo``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register
from verl.utils.profiler import simple_timer

AGENT_NAME = "toy_two_turn"
DATA_SOURCE = "toy"
OBSERVATION = "Observation: you are in a small room. Valid actions: go north, go south."


@register(AGENT_NAME)
class ToyTwoTurnAgentLoop(AgentLoopBase):
    """generate -> fixed observation (masked out of the loss) -> generate."""

    async def run(self, sampling_params: dict[str, Any], **kwargs) -> AgentLoopOutput:
        response_length = self.rollout_config.response_length
        messages = list(kwargs["raw_prompt"])
        prompt_ids = await self.loop.run_in_executor(
            None, lambda: self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                             return_dict=False)
        )
        prompt_ids = self._cap_text_prompt_length(list(prompt_ids))
        im_end = self.tokenizer.convert_tokens_to_ids("<|im_end|>")

        response_ids: list[int] = []
        response_mask: list[int] = []
        response_logprobs: list[float] = []
        extra_fields: dict[str, Any] = {}
        metrics: dict[str, float] = {}
        request_id = uuid4().hex
        num_turns = 1  # the user prompt
        for turn in range(2):
            budget = response_length - len(response_ids)
            if budget <= 0:
                break
            params = dict(sampling_params, max_tokens=min(budget, max(1, response_length // 4)))
            with simple_timer("generate_sequences", metrics):
                out = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=prompt_ids + response_ids, sampling_params=params
                )
            if turn == 0:
                extra_fields["min_global_steps"] = out.extra_fields.get("min_global_steps")
            extra_fields["max_global_steps"] = out.extra_fields.get("max_global_steps")
            extra_fields["global_steps"] = out.extra_fields.get("global_steps")
            response_ids += out.token_ids
            response_mask += [1] * len(out.token_ids)
            response_logprobs += out.log_probs if out.log_probs is not None else [0.0] * len(out.token_ids)
            num_turns += 1
            if turn == 0:
                # environment step: a fixed observation, tokenized as a new user turn, loss mask 0
                closing = "" if response_ids and response_ids[-1] == im_end else "<|im_end|>"
                obs_text = f"{closing}\n<|im_start|>user\n{OBSERVATION}<|im_end|>\n<|im_start|>assistant\n"
                obs_ids = self.tokenizer.encode(obs_text, add_special_tokens=False)
                response_ids += obs_ids
                response_mask += [0] * len(obs_ids)
                response_logprobs += [0.0] * len(obs_ids)
                num_turns += 1

        response_ids = response_ids[:response_length]
        extra_fields.update({"turn_scores": [], "tool_rewards": [], "toy_generated_tokens": sum(response_mask)})
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids,
            response_mask=response_mask[:response_length],
            response_logprobs=response_logprobs[:response_length],
            num_turns=num_turns,
            metrics=AgentLoopMetrics(generate_sequences=metrics.get("generate_sequences", 0.0)),
            extra_fields=extra_fields,
        )


def make_toy_dataset(out_dir: str | os.PathLike, n_train: int = 16, n_val: int = 4) -> tuple[str, str]:
    """Write ``train.parquet`` / ``test.parquet`` in verl's RL format; returns their paths."""
    import pandas as pd

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    letters = "aeiou"

    def rows(split: str, n: int) -> list[dict]:
        result = []
        for i in range(n):
            letter = letters[i % len(letters)]
            result.append(
                {
                    "data_source": DATA_SOURCE,
                    "prompt": [{"role": "user", "content": f"Task {i}: say words with the letter {letter}."}],
                    "ability": "agent",
                    "reward_model": {"style": "rule", "ground_truth": letter},
                    "extra_info": {"env_name": DATA_SOURCE, "split": split, "task_id": i, "index": i},
                    "agent_name": AGENT_NAME,
                }
            )
        return result

    train, val = out / "train.parquet", out / "test.parquet"
    pd.DataFrame(rows("train", n_train)).to_parquet(train)
    pd.DataFrame(rows("test", n_val)).to_parquet(val)
    return str(train), str(val)


def write_agent_loop_config(path: str | os.PathLike) -> str:
    """YAML for ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` registering the toy loop in every
    agent-loop worker process (``@register`` alone only registers in the process importing this module)."""
    # not ToyTwoTurnAgentLoop.__module__: that is "__main__" under `python -m openmanus_rl.verl_cpu.toy`
    Path(path).write_text(f"- name: {AGENT_NAME}\n  _target_: openmanus_rl.verl_cpu.toy.ToyTwoTurnAgentLoop\n")
    return str(path)


def toy_overrides(data_dir: str | os.PathLike, algorithm: str = "grpo") -> dict[str, Any]:
    """Overrides (on top of a preset) that train the toy task with ``grpo`` or ``gae`` (PPO + critic)."""
    train, val = make_toy_dataset(data_dir)
    agent_cfg = write_agent_loop_config(Path(data_dir) / "agent_loops.yaml")
    o: dict[str, Any] = {
        "data.train_files": train,
        "data.val_files": val,
        "actor_rollout_ref.rollout.agent.agent_loop_config_path": agent_cfg,
        "actor_rollout_ref.rollout.agent.default_agent_loop": AGENT_NAME,
        "reward.custom_reward_function.path": str(Path(__file__).with_name("toy_reward.py")),
        "reward.custom_reward_function.name": "compute_score",
        "algorithm.adv_estimator": algorithm,
        "actor_rollout_ref.actor.optim.lr": 1e-3,
        "trainer.project_name": "openmanus_cpu",
        "trainer.experiment_name": f"toy_{algorithm}",
        "trainer.total_epochs": 1,
    }
    if algorithm == "grpo":
        o["actor_rollout_ref.rollout.n"] = 4
        o["actor_rollout_ref.actor.use_kl_loss"] = False
    else:
        o["actor_rollout_ref.rollout.n"] = 1
        o["critic.optim.lr"] = 1e-3
    return o


def main_ppo_command(work_dir: str | os.PathLike, algorithm: str = "grpo", preset: str = "auto",
                     model_dir: str | os.PathLike | None = None, overrides: dict | None = None) -> list[str]:
    """The full ``python -m verl.trainer.main_ppo ...`` command of the toy run (builds model and data)."""
    import sys

    from openmanus_rl.tiny_model import build_tiny_model
    from openmanus_rl.verl_args import verl_overrides

    work = Path(work_dir)
    model = build_tiny_model(model_dir or work / "model")
    o = toy_overrides(work / "data", algorithm)
    o.update({"trainer.default_local_dir": str(work / "checkpoints"), "trainer.save_freq": 1, "trainer.test_freq": 2,
              "trainer.total_training_steps": 2, "trainer.val_before_train": False})
    o.update(overrides or {})
    return [sys.executable, "-m", "verl.trainer.main_ppo", *verl_overrides(preset, model_path=str(model), overrides=o)]


if __name__ == "__main__":  # python -m openmanus_rl.verl_cpu.toy WORK_DIR [grpo|gae] [key=value ...]
    import shlex
    import subprocess
    import sys

    if len(sys.argv) < 2:
        sys.exit("usage: python -m openmanus_rl.verl_cpu.toy WORK_DIR [grpo|gae] [key=value ...]")
    algo = sys.argv[2] if len(sys.argv) > 2 and "=" not in sys.argv[2] else "grpo"
    extra = dict(a.split("=", 1) for a in sys.argv[2:] if "=" in a)
    command = main_ppo_command(sys.argv[1], algo, overrides=extra)
    print(shlex.join(command), flush=True)
    sys.exit(subprocess.call(command, env=dict(os.environ, TOKENIZERS_PARALLELISM="false")))
