"""grpo_positive: GRPO's advantage without its negative half, found by name through verl's own path."""

import numpy as np
import pytest
import torch

pytest.importorskip("verl")

from verl import DataProto
from verl.trainer.ppo import core_algos
from verl.trainer.ppo.ray_trainer import compute_advantage

from openmanus_rl import advantages


def outcome_batch(rewards: list[float], length: int = 6) -> tuple[torch.Tensor, torch.Tensor]:
    """Token rewards with each episode's outcome on its last model token, and a response mask
    with an observation gap (mask 0) in the middle, as multi-turn episodes have."""
    mask = torch.ones(len(rewards), length)
    mask[:, 2:4] = 0  # an environment turn
    token_rewards = torch.zeros(len(rewards), length)
    token_rewards[:, -1] = torch.tensor(rewards)
    return token_rewards, mask


def test_grpo_positive_keeps_only_what_beat_its_group_and_is_found_by_verl():
    advantages.register()
    advantages.register()  # idempotent: every Ray worker's setup hook calls it
    rewards, groups = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0], ["a", "a", "a", "a", "b", "b", "c", "c"]
    token_rewards, mask = outcome_batch(rewards)
    index = np.array(groups, dtype=object)

    grpo, _ = core_algos.compute_grpo_outcome_advantage(token_rewards, mask, index)
    data = DataProto.from_dict(tensors={"token_level_rewards": token_rewards, "response_mask": mask},
                               non_tensors={"uid": index})
    out = compute_advantage(data, adv_estimator=advantages.POSITIVE_GRPO)  # verl's own dispatch by name
    adv = out.batch["advantages"]

    assert adv.shape == mask.shape
    assert (adv >= 0).all()
    first = adv[:, 0]
    # group a: the two successes get GRPO's positive advantage, the two failures nothing (GRPO: negative)
    assert torch.allclose(first[[0, 3]], grpo[[0, 3], 0]) and (first[[0, 3]] > 0.5).all()
    assert (grpo[[1, 2], 0] < -0.5).all() and (first[[1, 2]] == 0).all()
    # groups where every episode did the same carry no signal, as in GRPO
    assert (first[4:] == 0).all()
    # the advantage covers the model's tokens only, never the environment turn
    assert (adv[:, 2:4] == 0).all() and torch.equal(adv[0, [0, 1, 4, 5]], first[0].repeat(4))
    assert torch.equal(out.batch["returns"], adv)
