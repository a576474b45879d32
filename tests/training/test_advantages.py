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


def test_gigpo_credits_each_turn_against_turns_taken_in_the_same_state():
    """Two groups. Group a: one success in 2 turns and one failure in 3, both starting in state s0.
    Group b: two successes, one faster; they share state t1 after different first moves."""
    mask = torch.ones(4, 12)
    mask[:, 3] = 0  # an observation between turns (or an untrained thought): never credited
    spans = [[[0, 3], [4, 6]], [[0, 3], [4, 6], [6, 9]], [[0, 3], [4, 6]], [[0, 3], [4, 6], [6, 9], [9, 12]]]
    states = [["s0", "s1"], ["s0", "s2", "s3"], ["t0", "t1"], ["t0", "t2", "t1", "t3"]]
    adv, found = advantages.gigpo_advantages([1.0, 0.0, 1.0, 1.0], ["a", "a", "b", "b"], spans, states, mask,
                                             gamma=0.5, step_weight=1.0)
    half = 2 ** -0.5  # (1 - 0.5) / std([1, 0]) for a group of two
    # group a: the outcome's advantage on every turn, plus the step advantage of s0 (return 0.5 vs 0)
    assert torch.allclose(adv[0, :3], torch.full((3,), 2 * half), atol=1e-5)
    assert torch.allclose(adv[0, 4:6], torch.full((2,), half), atol=1e-5)
    assert torch.allclose(adv[1, :3], torch.full((3,), -2 * half), atol=1e-5)
    assert torch.allclose(adv[1, 4:9], torch.full((5,), -half), atol=1e-5)
    # group b: equal outcomes give no episode advantage, but from t1 the first episode finishes at once
    # (return 1) and the second two turns later (0.25): the faster move gains, the slower loses
    assert torch.all(adv[2, 4:6] > 0) and torch.all(adv[3, 6:9] < 0)
    assert torch.allclose(adv[2, 4:6], -adv[3, 6:9][:2])
    assert torch.all(adv[2, :3] > 0) and torch.all(adv[3, :3] < 0)  # from t0 too (return 0.5 vs 0.125)
    assert torch.all(adv[3, 4:6] == 0) and torch.all(adv[3, 9:] == 0)  # states no other turn visited
    assert torch.all(adv[:, 3] == 0)
    assert found["gigpo/anchored_turn_share"] == 6 / 11  # s0 twice, t0 twice, t1 twice


def test_gigpo_needs_the_trainer_mode():
    advantages.register()
    with pytest.raises(RuntimeError, match="openmanus_sync"):
        core_algos.get_adv_estimator_fn(advantages.GIGPO)(token_level_rewards=None, response_mask=None)


def test_gigpo_turn_returns_sum_the_environments_per_turn_rewards():
    """With per-turn rewards (maze's progress_reward), a turn's return is its discounted reward-to-go: from the
    shared state s0, a step closer (+0.1) beats a step away (-0.1), though both episodes end where they began."""
    mask = torch.ones(2, 4)
    spans, states = [[[0, 2], [2, 4]], [[0, 2], [2, 4]]], [["s0", "s1"], ["s0", "s2"]]
    adv, _ = advantages.gigpo_advantages([0.0, 0.0], ["g", "g"], spans, states, mask, gamma=0.5,
                                         turn_rewards=[[0.1, -0.1], [-0.1, 0.1]])
    assert torch.all(adv[0, :2] > 0) and torch.all(adv[1, :2] < 0)  # returns 0.05 and -0.05 from s0
    assert torch.all(adv[:, 2:] == 0)  # equal outcomes, states no other turn visited
    only_end, _ = advantages.gigpo_advantages([0.0, 0.0], ["g", "g"], spans, states, mask, gamma=0.5)
    assert torch.all(only_end == 0)  # without them only the (equal) outcomes count
