"""ScienceWorld's score turned into a training reward.

The simulator scores an episode 0..100 by the subgoals reached so far (the score can also fall when
an achieved subgoal is undone), and sets it to -100 when the task is failed for good (focusing on a
wrong object, destroying what the task is about). We clamp it to 0..100 (a failed task scores 0, as
the wrapper's reading of it as "completed" ends the episode), and pay each step the change of the
clamped score divided by 100, counted from 0 at reset. An episode's rewards therefore sum to its
final clamped score / 100, in [0, 1], whatever happened on the way; success is a score of 100.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_SCORE = 100


def clamp(native: int) -> int:
    """The native score (-100..100) as the 0..100 score we report: failures count as 0."""
    return max(0, min(MAX_SCORE, int(native)))


@dataclass(frozen=True)
class Outcome:
    """What one simulator step means for the episode."""

    reward: float  # change of the clamped score / 100
    score: int  # clamped score after the step
    done: bool
    success: bool
    failed: bool  # the simulator's -100: the task can no longer be completed


def outcome(previous_score: int, native: int, completed: bool) -> Outcome:
    """Reward and end of episode after a step that moved the native score to ``native``.
    ``previous_score`` is the clamped score before the step (0 right after reset)."""
    score = clamp(native)
    failed = native < 0
    success = score >= MAX_SCORE
    return Outcome((score - previous_score) / MAX_SCORE, score, bool(completed or failed or success), success, failed)
