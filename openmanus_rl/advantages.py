"""Advantage estimators this project adds to verl's registry (``algorithm.adv_estimator=NAME``).

``grpo_positive``: GRPO's group-relative advantage with its negative half dropped, so an update only
raises the likelihood of the episodes that did better than their group (a filtered, on-policy
policy gradient, as in RAFT / ReST), without pushing down the sampled tokens of failed episodes, most
of them the same moves a success makes. It did not keep a behaviour-cloned tiny model intact either
(docs/results/maze-rl-from-bc.md).

``gigpo``: group-in-group credit (GiGPO, Feng et al. 2025, the estimator of verl-agent / OpenManus-RL).
An episode's GRPO advantage says how its outcome compares with its group's; it is the same for all of its
turns, so which of twenty moves made a maze succeed is left to the sampling noise. GiGPO adds a step
advantage: turns of the same group (same task) taken in the same state (the same observation text, an
"anchor") are compared by their discounted return (the environment's rewards from that turn on, or
``gamma ** (turns left) * outcome`` when it rewards only the end), so a move that
leads to the goal sooner than another from the same square gains over it. A turn's tokens get
``episode advantage + step_weight * step advantage``. It needs each turn's span and state, which the
agent loop records per episode (``turn_spans``, ``turn_states``) and which verl's estimator interface
does not pass, so the trainer mode (:func:`openmanus_rl.trainer.gigpo_advantage`) computes it with
:func:`gigpo_advantages`; settings ``+algorithm.gigpo_gamma=`` (0.95) and
``+algorithm.gigpo_step_weight=`` (1.0), keys verl's own config does not have (hence the ``+``).

verl looks estimators up by name in the process that computes advantages, so :func:`register` runs
in every Ray worker that imports verl's ``core_algos`` (the setup hook ``openmanus_rl.worker_setup.setup``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import torch

POSITIVE_GRPO = "grpo_positive"
GIGPO = "gigpo"


def _normalized(values: list[float], eps: float) -> list[float]:
    """(v - mean) / (std + eps) over one group; 0 for a group of one or of equal values."""
    if len(values) < 2:
        return [0.0] * len(values)
    t = torch.tensor(values, dtype=torch.float64)
    std = t.std()
    return [0.0] * len(values) if std < eps else ((t - t.mean()) / (std + eps)).tolist()


def gigpo_advantages(outcomes: Sequence[float], groups: Sequence[str], turn_spans: Sequence[Sequence[Sequence[int]]],
                     turn_states: Sequence[Sequence[str]], response_mask: torch.Tensor, *, gamma: float = 0.95,
                     step_weight: float = 1.0, eps: float = 1e-6,
                     turn_rewards: Sequence[Sequence[float]] | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """Token advantages [episodes, response length] and what the step groups looked like.

    ``outcomes``: each episode's total reward; ``groups``: its task group (verl's uid); per episode, each
    turn's ``[start, end)`` response positions and its state digest. Positions with mask 0 get 0.
    ``turn_rewards``: the environment's reward for each turn's action, for turn returns
    ``sum_j gamma ** (j - k) * reward_j``; without them an episode's outcome counts at its last turn.
    """
    if turn_rewards is None:
        turn_rewards = [[0.0] * (len(spans) - 1) + [float(outcome)] if spans else []
                        for spans, outcome in zip(turn_spans, outcomes, strict=True)]
    returns_of = []
    for rewards in turn_rewards:
        acc, back = 0.0, []
        for r in reversed(rewards):
            acc = float(r) + gamma * acc
            back.append(acc)
        returns_of.append(back[::-1])
    by_group: dict[str, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        by_group[g].append(i)
    episode_adv = [0.0] * len(outcomes)
    step_adv = [[0.0] * len(spans) for spans in turn_spans]
    anchored = turns = 0
    for members in by_group.values():
        for i, a in zip(members, _normalized([float(outcomes[i]) for i in members], eps), strict=True):
            episode_adv[i] = a
        anchors: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i in members:
            for k, state in enumerate(turn_states[i]):
                anchors[state].append((i, k))
        for turns_here in anchors.values():
            returns = [returns_of[i][k] for i, k in turns_here]
            for (i, k), a in zip(turns_here, _normalized(returns, eps), strict=True):
                step_adv[i][k] = a
            turns += len(turns_here)
            anchored += len(turns_here) if len(turns_here) > 1 else 0
    advantages = torch.zeros_like(response_mask, dtype=torch.float32)
    for i, spans in enumerate(turn_spans):
        for k, (start, end) in enumerate(spans):
            advantages[i, start:end] = episode_adv[i] + step_weight * step_adv[i][k]
    advantages = advantages * response_mask
    return advantages, {"gigpo/anchored_turn_share": anchored / max(turns, 1),
                        "gigpo/step_adv_abs_mean": float(sum(abs(a) for row in step_adv for a in row)
                                                         / max(turns, 1))}


def register() -> None:
    """Add the estimators to verl's registry (idempotent)."""
    from verl.trainer.ppo import core_algos

    if POSITIVE_GRPO in core_algos.ADV_ESTIMATOR_REGISTRY:
        return

    @core_algos.register_adv_est(GIGPO)
    def gigpo(**_):
        raise RuntimeError("algorithm.adv_estimator=gigpo is computed by the trainer mode openmanus_sync "
                           "(trainer.v1.trainer_mode, set in configs/ppo.yaml), which reads each episode's turns")

    @core_algos.register_adv_est(POSITIVE_GRPO)
    def grpo_positive(token_level_rewards, response_mask, index, epsilon: float = 1e-6, config=None, **_):
        norm = True if config is None else bool(config.get("norm_adv_by_std_in_grpo", True))
        advantages, _returns = core_algos.compute_grpo_outcome_advantage(
            token_level_rewards=token_level_rewards, response_mask=response_mask, index=index,
            epsilon=epsilon, norm_adv_by_std_in_grpo=norm, config=config)
        advantages = advantages.clamp(min=0.0)
        return advantages, advantages
