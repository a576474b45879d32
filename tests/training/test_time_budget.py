import pytest

from openmanus_rl.time_budget import TimeBudget


def test_the_next_step_is_last_when_the_one_after_would_not_fit():
    budget = TimeBudget(100.0, start=0.0)
    budget.begin_training(step=1, now=10.0)  # 10 s of loading and validation before step 1
    assert not budget.next_is_last(1, now=20.0)  # 10 s a step: step 3 would end at 40
    assert not budget.next_is_last(7, now=80.0)  # step 9 would end at 100: still inside
    assert budget.next_is_last(8, now=90.0)  # step 10 would end at 110: step 9 is the last


def test_a_resumed_run_counts_its_own_steps():
    budget = TimeBudget(60.0, start=0.0)
    budget.begin_training(step=41, now=0.0)  # resumed after step 40
    assert not budget.next_is_last(41, now=5.0)  # 5 s a step, not 5/41
    assert budget.next_is_last(51, now=55.0)


def test_a_budget_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        TimeBudget(0.0)
