"""Grading a finished answer against the task's: the share of the answer's checks that hold.

AgentGym compares the finish answer with its ground truth exactly (lists sorted first). Agents
write the same answer in many harmless ways ("4", 4, "4 collaborators"; "yes." for "Yes"; a list
as a JSON array or as the string "['a', 'b']"), so answers are normalised before they are compared
(:func:`agentenv.answers.exact_score`):

- a number: the first number in the answer must equal it (one check);
- a text (a title, a name, a venue, Yes/No): equal after case folding, trimming quotes, spaces and a
  final full stop (one check); a one-element list is read as its element;
- a list: order does not matter; each expected item present is a check and each extra item a failed
  check, so the reward is |given ∩ expected| / |given ∪ expected| (1.0 only for the exact set).
"""

from __future__ import annotations

from typing import Any

from agentenv.answers import exact_score


def grade(given: Any, expected: str | int | list[str]) -> float:
    """The reward in [0, 1] of answer ``given`` for the expected answer."""
    return exact_score(given, expected)
