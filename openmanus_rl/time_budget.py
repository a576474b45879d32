"""A wall-clock budget for a training run: ``train_ppo.sh --minutes M``.

verl counts training in steps; a user with an hour on a laptop counts minutes. After every step the
trainer asks the budget whether one more step would still fit; when the step after next would not,
the next step becomes verl's last step, so it is checkpointed and validated like any last step
(``trainer.total_training_steps`` stays the upper bound). A run therefore ends at a step boundary
near the budget, never mid-step: it can overrun by the error of the per-step estimate, and it
counts from the trainer's start in this process (a resumed run gets a fresh budget).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class TimeBudget:
    seconds: float
    start: float = field(default_factory=time.monotonic)
    #: when the first training step began and the global step it had (set by ``begin_training``)
    train_start: float | None = None
    first_step: int = 1

    def __post_init__(self) -> None:
        if not self.seconds > 0:
            raise ValueError(f"a time budget must be positive, got {self.seconds} s")

    def begin_training(self, step: int, now: float | None = None) -> None:
        """Mark the start of the training loop (after loading, and any validation before training)."""
        self.train_start = time.monotonic() if now is None else now
        self.first_step = step

    def next_is_last(self, step: int, now: float | None = None) -> bool:
        """After training step ``step`` finished: should step ``step + 1`` be the last one?

        The mean time of this run's steps so far (validations included) estimates the next ones:
        the next step is last when the one after it would end past the budget."""
        now = time.monotonic() if now is None else now
        began = self.start if self.train_start is None else self.train_start
        done = step - self.first_step + 1
        per_step = (now - began) / max(done, 1)
        return now - self.start + 2 * per_step > self.seconds
