"""verl's multi-turn SFT dataset, honouring AgentTraj's per-turn ``loss`` flags.

verl 0.9.1's ``MultiTurnSFTDataset`` trains on every assistant message (minus the generation prompt) and on
nothing else. AgentTraj items may switch the loss off for single agent turns (``"loss": false`` on a gpt
turn, e.g. the acknowledgement turns of the published sets). Messages written by ``openmanus_rl.sft`` carry
that flag as ``loss``; this subclass zeroes the loss mask of a message whose ``loss`` is false and otherwise
keeps verl's behaviour. Selected through verl's public hook ``data.custom_cls.path/name``.
"""

from __future__ import annotations

from typing import Any

from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset


class AgentTrajSFTDataset(MultiTurnSFTDataset):
    def _process_single_message(self, index: int, message: dict[str, Any], *args: Any, **kwargs: Any):
        flag = message.get("loss") if isinstance(message, dict) else None
        plain = {k: v for k, v in message.items() if k != "loss"} if isinstance(message, dict) else message
        input_ids, loss_mask, attention_mask, inputs = super()._process_single_message(index, plain, *args, **kwargs)
        if flag is not None and not flag:
            loss_mask = loss_mask * 0
        return input_ids, loss_mask, attention_mask, inputs
