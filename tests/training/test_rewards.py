"""Where a reward sits in the response: per turn (``+algorithm.reward_per_turn=true``) or at the end."""

import pytest
import torch

from openmanus_rl import rewards


def test_per_turn_puts_each_turns_reward_on_its_last_trained_token_and_keeps_the_sum():
    # three turns: tokens 0-3, 6-9 (its last token, the closing EOS, is not trained), 12-13; the budget cut a
    # fourth turn whose reward (+0.1) is in the total but has no span
    mask = [1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1]
    spans, turn_rewards = [[0, 4], [6, 10], [12, 14]], [0.1, -0.1, 1.0]
    total = 0.1 - 0.1 + 1.0 + 0.1
    row = rewards.per_turn(total, mask, spans, turn_rewards)
    assert row[3] == pytest.approx(0.1) and row[8] == pytest.approx(-0.1)  # not 9: mask 0 there
    assert row[13] == pytest.approx(1.0 + 0.1)  # the last turn's reward and the cut turn's
    assert sum(row) == pytest.approx(total)
    assert [i for i, r in enumerate(row) if r] == [3, 8, 13]


def test_a_turn_without_trained_tokens_leaves_its_reward_at_the_end():
    mask = [0, 0, 1, 1]
    row = rewards.per_turn(0.5, mask, [[0, 2], [2, 4]], [0.2, 0.3])
    assert row == pytest.approx([0.0, 0.0, 0.0, 0.5])
    assert rewards.per_turn(0.0, [], [], []) == []


def test_gae_sees_a_turns_own_reward_only_when_it_is_placed_on_that_turn():
    """Why the option exists: verl's GAE discounts per model token, so over a long episode an end reward
    barely reaches the first turn. Two episodes differ only in their first move (+0.1 toward the goal,
    -0.1 away) and end the same. With a critic that knows nothing yet (values 0) the first token's return
    is the rewards discounted by (0.99 x 0.95) per model token: the 0.2 they differ by counts as
    0.2 x 0.94 ** 19 = 0.06 on the first turn's last token, and as 0.2 x 0.94 ** 299 (1e-9) at the end."""
    pytest.importorskip("verl")
    from verl.trainer.ppo.core_algos import compute_gae_advantage_return

    turns, reply, obs = 15, 20, 10  # 15 turns of 20 model tokens, each followed by 10 observation tokens
    mask = torch.tensor(([1] * reply + [0] * obs) * turns, dtype=torch.float32)[:-obs]
    spans = [[k * (reply + obs), k * (reply + obs) + reply] for k in range(turns)]
    firsts = (0.1, -0.1)
    ends, placed = [], []
    for first in firsts:
        turn_rewards = [first] + [0.0] * (turns - 2) + [1.0]
        end = torch.zeros_like(mask)
        end[-1] = sum(turn_rewards)
        ends.append(end)
        placed.append(torch.tensor(rewards.per_turn(sum(turn_rewards), mask.tolist(), spans, turn_rewards)))
    mask2 = mask.repeat(2, 1)
    gamma, lam = torch.tensor(0.99), torch.tensor(0.95)
    _, end_returns = compute_gae_advantage_return(torch.stack(ends), torch.zeros_like(mask2), mask2, gamma, lam)
    _, turn_returns = compute_gae_advantage_return(torch.stack(placed), torch.zeros_like(mask2), mask2, gamma, lam)
    end_gap = float(end_returns[0, 0] - end_returns[1, 0])
    turn_gap = float(turn_returns[0, 0] - turn_returns[1, 0])
    assert 0 <= end_gap < 1e-6
    assert turn_gap == pytest.approx(0.2 * (0.99 * 0.95) ** (reply - 1), rel=1e-4)
    # the episode's sum is the same either way
    assert torch.allclose(torch.stack(placed).sum(-1), torch.stack(ends).sum(-1))
