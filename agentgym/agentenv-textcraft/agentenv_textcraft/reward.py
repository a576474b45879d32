"""Reward and success: TextCraft scores only the goal.

An episode succeeds, and earns reward 1.0, on the step that puts the goal item into the
inventory; every other step earns 0. Intermediate items earn nothing (no partial credit), as in
TextCraft, so an episode's rewards sum to 1 or 0 and the native score equals the reward.
"""

from __future__ import annotations

from collections.abc import Mapping

SUCCESS_REWARD = 1.0


def goal_reached(inventory: Mapping[str, int], goal: str) -> bool:
    """Whether the inventory holds at least one of the goal item."""
    return inventory.get(goal, 0) >= 1


def reward(inventory: Mapping[str, int], goal: str) -> float:
    """1.0 when the goal item is in the inventory, else 0.0 (however close the rest of it is)."""
    return SUCCESS_REWARD if goal_reached(inventory, goal) else 0.0
