"""Advantage estimators this project adds to verl's registry (``algorithm.adv_estimator=NAME``).

``grpo_positive``: GRPO's group-relative advantage with its negative half dropped, so an update only
raises the likelihood of the episodes that did better than their group (a filtered, on-policy
policy gradient, as in RAFT / ReST), without pushing down the sampled tokens of failed episodes, most
of them the same moves a success makes. On the tiny CPU model it did not keep a behaviour-cloned
policy intact at lr 3e-4 either (33% -> 8% in five steps; README, "RL from behaviour cloning").

verl looks estimators up by name in the process that computes advantages, so :func:`register` runs
in every Ray worker (the setup hook ``openmanus_rl.worker_setup.setup``).
"""

from __future__ import annotations

POSITIVE_GRPO = "grpo_positive"


def register() -> None:
    """Add the estimators to verl's registry (idempotent)."""
    from verl.trainer.ppo import core_algos

    if POSITIVE_GRPO in core_algos.ADV_ESTIMATOR_REGISTRY:
        return

    @core_algos.register_adv_est(POSITIVE_GRPO)
    def grpo_positive(token_level_rewards, response_mask, index, epsilon: float = 1e-6, config=None, **_):
        norm = True if config is None else bool(config.get("norm_adv_by_std_in_grpo", True))
        advantages, _returns = core_algos.compute_grpo_outcome_advantage(
            token_level_rewards=token_level_rewards, response_mask=response_mask, index=index,
            epsilon=epsilon, norm_adv_by_std_in_grpo=norm, config=config)
        advantages = advantages.clamp(min=0.0)
        return advantages, advantages
