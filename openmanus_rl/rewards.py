"""From an episode's outcome to the training reward.

The dataset's ``reward_model.style`` picks the shaping per row, so one run can mix
environments whose native rewards differ:

- ``env_reward``: the environment's own reward, summed over the episode (dense or partial
  credit where the environment gives it);
- ``success``: 1 for a successful episode, 0 otherwise.

The agent loop places the reward on the last model token of the episode (verl's
``reward_score``), so a reward never lands on environment text.
"""

from __future__ import annotations

from collections.abc import Callable
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
