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
:func:`openmanus_rl.trainer.place_rewards_per_turn`).
It matters to a critic: verl's GAE discounts per model token, so a reward summed at the end of a
500-token maze episode reaches its first turns multiplied by 0.99 ** 500 (< 0.01), and a turn's own
progress (the maze's ``progress_reward``) is mixed into the whole episode's. Outcome estimators
(GRPO, GiGPO) read only the episode's sum, which stays as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass


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
