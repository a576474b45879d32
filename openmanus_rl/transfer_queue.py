"""A step's batch in verl's TransferQueue: read fields, write per-token fields back.

verl 0.9.1's v1 trainer keeps the batch in TransferQueue between its stages, so whatever the trainer
mode adds (reward placement, GiGPO's advantage, per-episode metrics) reads the fields it needs there and
writes its results back. Imported only inside verl's trainer process (it needs ``transfer_queue``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import transfer_queue as tq
from tensordict import TensorDict
from verl.workers.utils.padding import response_to_nested


def as_list(values: Any) -> list[Any]:
    """Non-tensor fields come back from TransferQueue as numpy arrays or plain lists."""
    return values.tolist() if hasattr(values, "tolist") else list(values)


def padding_rows(batch: Any) -> list[bool]:
    """Which rows are copies that fill the batch up (they join no group and get no credit)."""
    return [bool(tag.get("is_padding", False)) for tag in batch.tags]


def get(batch: Any, fields: Sequence[str]) -> Any:
    return tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id, select_fields=list(fields))


@dataclass
class Responses:
    """The batch's per-token fields, padded to one width, with what writing them back needs."""

    nested_mask: Any  # response_mask as TransferQueue holds it (a nested tensor)
    mask: torch.Tensor  # (batch, width)
    scores: torch.Tensor  # rm_scores, (batch, width)
    lengths: list[int]  # each row's response length
    fields: Any  # the whole read, for non-tensor fields (extra_fields, uid, ...)


def get_responses(batch: Any, *more_fields: str) -> Responses:
    data = get(batch, ["response_mask", "rm_scores", *more_fields])
    padded = data.to_padded_tensor()
    nested = data["response_mask"]
    return Responses(nested, padded["response_mask"], padded["rm_scores"], nested.offsets().diff().tolist(), data)


def put_responses(batch: Any, responses: Responses, **tensors: torch.Tensor) -> Any:
    """Write padded per-token tensors back, each cut to its row's response as TransferQueue keeps it."""
    fields = TensorDict({k: response_to_nested(v, responses.nested_mask) for k, v in tensors.items()},
                        batch_size=len(batch))
    return tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id, fields=fields)
