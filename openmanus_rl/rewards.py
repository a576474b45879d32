"""From an episode's outcome to the training reward.

The dataset's ``reward_model.style`` picks the shaping per row, so one run can mix
environments whose native rewards differ:

- ``env_reward``: the environment's own reward, summed over the episode (dense or partial
  credit where the environment gives it);
- ``success``: 1 for a successful episode, 0 otherwise.

The agent loop places the reward on the last model token of the episode (verl's
``reward_score``), so a reward never lands on environment text.

``algorithm.reward_per_turn`` (on for ``--algo ppo`` in configs/ppo.yaml) moves each turn's environment
reward onto that turn's last trained token before the advantage is computed (:func:`per_turn`,
:func:`place_per_turn_in_transfer_queue`).
It matters to a critic: verl's GAE discounts per model token, so a reward summed at the end of a
500-token maze episode reaches its first turns multiplied by 0.99 ** 500 (< 0.01), and a turn's own
progress (the maze's ``progress_reward``) is mixed into the whole episode's. Outcome estimators
(GRPO, GiGPO) read only the episode's sum, which stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Outcome:
    reward: float  # sum of the environment's step rewards
    success: bool
    score: float  # the environment's native score of the last step


_STYLES: dict[str, Callable[[Outcome], float]] = {
    "env_reward": lambda o: float(o.reward),
    "success": lambda o: 1.0 if o.success else 0.0,
}
STYLES = tuple(_STYLES)
DEFAULT_STYLE = "env_reward"


def shape(style: str, outcome: Outcome) -> float:
    try:
        return _STYLES[style](outcome)
    except KeyError:
        raise ValueError(f"unknown reward style {style!r}; choose from {', '.join(STYLES)}") from None


def style_of(reward_model: object) -> str:
    """The style named by a dataset row's ``reward_model`` column (dict or JSON-ish)."""
    if isinstance(reward_model, dict):
        return str(reward_model.get("style") or DEFAULT_STYLE)
    return DEFAULT_STYLE


def per_turn(total: float, mask: Sequence[int], turn_spans: Sequence[Sequence[int]],
             turn_rewards: Sequence[float]) -> list[float]:
    """One episode's token rewards: each turn's reward on the last mask-1 token of its ``[start, end)``
    span (GAE passes over mask-0 tokens, a reward there would be lost), and what is left of ``total``
    (turns the response budget cut, rewards of turns with no trained token) on the last token, where
    verl puts an episode's reward. The tokens sum to ``total``."""
    out = [0.0] * len(mask)
    if not out:
        return out
    placed = 0.0
    for (start, end), reward in zip(turn_spans, turn_rewards, strict=True):
        last = next((t for t in range(min(end, len(mask)) - 1, start - 1, -1) if mask[t]), None)
        if last is not None and reward:
            out[last] += float(reward)
            placed += float(reward)
    out[-1] += float(total) - placed
    return out


def place_per_turn_in_transfer_queue(batch: Any, metrics: dict) -> None:
    """Rewrite the batch's ``rm_scores`` (verl 0.9.1's v1 trainer keeps it in TransferQueue) with
    :func:`per_turn` for every episode whose training reward is its environment reward summed (style
    ``env_reward``); under another style (``success``) the turns' rewards are not what is trained on,
    and the episode's reward stays on its last token."""
    import torch
    import transfer_queue as tq
    from tensordict import TensorDict
    from verl.workers.utils.padding import response_to_nested

    from openmanus_rl.episode_metrics import as_list

    data = tq.kv_batch_get(keys=batch.keys, partition_id=batch.partition_id,
                           select_fields=["response_mask", "rm_scores", "extra_fields"])
    nested_mask = data["response_mask"]
    lengths = nested_mask.offsets().diff().tolist()
    padded = data.to_padded_tensor()
    mask, scores = padded["response_mask"], padded["rm_scores"]
    placed = scores.clone()
    spread = 0
    for i, extra in enumerate(as_list(data["extra_fields"])):
        extra = extra or {}
        total = float(scores[i].sum())
        env_reward = (extra.get("reward_extra_info") or {}).get("env_reward")
        if "turn_spans" not in extra or env_reward is None or abs(total - float(env_reward)) > 1e-6:
            continue
        n = int(lengths[i])
        row = per_turn(total, mask[i, :n].tolist(), extra["turn_spans"], extra["turn_rewards"])
        placed[i] = 0.0
        placed[i, :n] = torch.tensor(row, dtype=placed.dtype)
        spread += 1
    metrics["reward/per_turn_share"] = spread / max(len(lengths), 1)
    metrics["reward/rewarded_tokens_mean"] = float((placed != 0).sum()) / max(len(lengths), 1)
    tq.kv_batch_put(keys=batch.keys, partition_id=batch.partition_id,
                    fields=TensorDict({"rm_scores": response_to_nested(placed, nested_mask)}, batch_size=len(batch)))
