"""Training attention for packed sequences on CPU: each sequence of the pack attends causally to itself alone.

verl's trainers can feed the model its micro-batch without padding (``model.use_remove_padding``): the sequences
concatenated into one row, told apart by position ids that restart at 0. On a GPU flash-attention's varlen kernel
reads the boundaries from them. On CPU transformers' ``sdpa`` would build a boolean mask over the whole pack
(``find_packed_sequence_indices``: 8,192 x 8,192 for a micro-batch of 8,192 tokens) and attend with it, more work
than the padded batch it replaces; so the CPU preset padded every micro-batch to its longest sequence instead,
and the attention's backward with that padding mask was half of a behaviour-cloning step of the tiny model
(torch profiler: 48% in ``_scaled_dot_product_flash_attention_for_cpu`` and its backward, 32% in matmuls).

``sdpa_packed`` is an attention implementation (transformers' ``AttentionInterface``) that runs
``scaled_dot_product_attention(is_causal=True)`` on each sequence of the pack: no mask, no padding, no attention
across sequences, key/value heads shared by their query group without a copy (``enable_gqa``). Its mask function
builds no mask where there is no padding mask to honour; a padded batch (an attention mask given) or decoding
against a cache goes through transformers' own sdpa mask and attention unchanged, so a model loaded with it
generates exactly as with ``sdpa``.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F
from transformers import AttentionInterface, PretrainedConfig
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

NAME = "sdpa_packed"


def segments(position_ids: torch.Tensor | None, length: int) -> list[tuple[int, int]]:
    """``[start, end)`` of each sequence in a packed row: a new one begins wherever the position does not follow
    the previous one (verl's packed position ids restart at 0)."""
    if position_ids is None:
        return [(0, length)]
    pos = position_ids.reshape(-1, position_ids.shape[-1])[0]  # mrope ids (3, 1, n) and (1, n) alike
    starts = [0, *(torch.nonzero(pos[1:] != pos[:-1] + 1).flatten() + 1).tolist()]
    return list(zip(starts, [*starts[1:], length], strict=True))


def packed_sdpa(module: torch.nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                attention_mask: torch.Tensor | None, dropout: float = 0.0, scaling: float | None = None,
                is_causal: bool | None = None, **kwargs) -> tuple[torch.Tensor, None]:
    """Causal attention within each packed sequence of a one-row batch; anything else is transformers' sdpa."""
    packed = (attention_mask is None and query.shape[0] == 1 and query.shape[2] == key.shape[2] > 1
              and not dropout and not kwargs.get("output_attentions") and getattr(module, "is_causal", True))
    if not packed:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      is_causal=is_causal, **kwargs)
    gqa = query.shape[1] != key.shape[1]
    out = torch.cat([F.scaled_dot_product_attention(query[:, :, s:e], key[:, :, s:e], value[:, :, s:e],
                                                    is_causal=True, scale=scaling, enable_gqa=gqa)
                     for s, e in segments(kwargs.get("position_ids"), query.shape[2])], dim=2)
    return out.transpose(1, 2).contiguous(), None


def packed_mask(batch_size: int, q_length: int, kv_length: int, q_offset: int = 0, kv_offset: int = 0,
                attention_mask: torch.Tensor | None = None, **kwargs) -> torch.Tensor | None:
    """No mask for a pack without padding (:func:`packed_sdpa` keeps sequences apart); sdpa's mask otherwise."""
    if attention_mask is None and q_offset == 0 and kv_offset == 0 and q_length == kv_length:
        return None
    return sdpa_mask(batch_size=batch_size, q_length=q_length, kv_length=kv_length, q_offset=q_offset,
                     kv_offset=kv_offset, attention_mask=attention_mask, **kwargs)


def _saved_as_sdpa(to_dict):
    def to_dict_sdpa(self) -> dict:
        out = to_dict(self)
        if out.get("attn_implementation") == NAME:
            out["attn_implementation"] = "sdpa"
        return out

    to_dict_sdpa.saves_sdpa = True
    return to_dict_sdpa


def register(_module: object = None) -> None:
    """Make ``attn_implementation="sdpa_packed"`` available (idempotent; a post-import hook's signature).

    A model trained with it is saved as an ``sdpa`` model: the packing is how the trainer batches, not part of the
    model, and a checkpoint naming it would not load where this module is not imported (the evaluator, vLLM, a hub).
    """
    AttentionInterface.register(NAME, packed_sdpa)
    ALL_MASK_ATTENTION_FUNCTIONS.register(NAME, packed_mask)
    if not getattr(PretrainedConfig.to_dict, "saves_sdpa", False):
        PretrainedConfig.to_dict = _saved_as_sdpa(PretrainedConfig.to_dict)
