"""The ``wordle`` environment: guess a five-letter English word in six tries from letter feedback."""

from __future__ import annotations

import random
import re
from types import MappingProxyType
from typing import Any

from agentenv import Environment, Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_wordle import solver
from agentenv_wordle.feedback import GREEN, GREY, SYMBOL, YELLOW, feedback, pattern_code
from agentenv_wordle.words import NUM_TASKS, allowed_set, allowed_words, answer

MAX_GUESSES = 6
#: the unsolved-episode credit per unit of progress; kept small so that partial credit never
#: competes with solving (it is at most 0.08: four greens)
PARTIAL_WEIGHT = 0.1
# "crane", "CRANE", "guess crane", "Guess: 'crane'.", "Action: guess crane", "`crane`", "guess[crane]"
_SPELLED = re.compile(r"[a-z]( [a-z]){4}")
_ACTION_RE = re.compile(r"(?:action\s*:\s*)?(?:guess\b\s*[:=]?\s*)?[^a-z0-9]*([a-z]+)[^a-z0-9]*")
_MEANING = {GREEN: "correct spot", YELLOW: "in the word, wrong spot", GREY: "not in the word"}

INSTRUCTION = (
    "Let's play Wordle. Guess the secret five-letter English word in at most 6 guesses. Each turn, "
    'reply with one five-letter English word, for example: crane ("guess crane" works too). '
    "After each guess you get one mark per letter: G = the letter is in the word and in the correct "
    "spot; Y = the letter is in the word but in a different spot; B = the letter is not in the word "
    "(or not as many times as you used it: with repeated letters, greens are matched first, then "
    "yellows from left to right). Guesses that are not five letters or not in the word list do not "
    "use up a guess."
)


def parse_guess(action: str) -> str | None:
    """The word an action proposes (lower case, any length), or None if it is not one word. Letters
    written apart ("c r a n e", as AgentGym's Wordle prompt asks for) are one word."""
    text = " ".join(action.lower().split())
    if _SPELLED.fullmatch(text):
        text = text.replace(" ", "")
    m = _ACTION_RE.fullmatch(text)
    return m.group(1) if m else None


def partial_credit(marks_history: list[tuple[int, ...]]) -> float:
    """Credit for an unsolved game: PARTIAL_WEIGHT x the best guess's (greens + yellows / 2) / 5."""
    best = max(
        (sum(m == GREEN for m in marks) + 0.5 * sum(m == YELLOW for m in marks) for marks in marks_history), default=0.0
    )
    return PARTIAL_WEIGHT * best / 5


class WordleEnv(Environment):
    """Wordle with wordfreq's English words (see :mod:`agentenv_wordle.words`).

    Reward: 1.0 on the guess that solves the word; if the sixth valid guess misses, that step
    gets :func:`partial_credit` (< 0.1) instead, so an episode sums to at most 1 and solving is
    always worth far more than progress. ``score`` is the same number and ``success`` means solved.
    Invalid guesses (not one word, not five letters, not in the allowed list) return
    ``valid=False`` and cost no guess; ``max_turns`` (12) leaves room for six of them. An episode
    the runtime truncates before six valid guesses earns nothing. ``seed`` is ignored: a task id
    fixes the secret word.
    """

    name = "wordle"
    max_turns = 12
    #: AgentGym's LMRL-Gym server: /wordle/..., the task index is the "seed" (AgentEval's are 0..24, AgentTraj's
    #: span 0..1450); its client asks for the vocabulary; ``--compat agentgym`` serves the agentgym profile
    agentgym = AgentGymRoutes(
        item_prefix="lmrlgym_wordle", prefix="/wordle", reset_key="seed", extras={"/filtered_vocab": "vocabulary"},
        upstream_splits={"train": (0, 1451), "test": (0, 25)}, options={"profile": "agentgym"}, has_close=False,
        hello="This is environment LMRL-Gym.")
    profiles = MappingProxyType({"agentgym": "agentenv_wordle.agentgym_profile:AgentGymWordleEnv"})
    action_hint = "a five-letter English word, e.g. crane"

    def __init__(self) -> None:
        self._answer = ""
        self._guesses: list[tuple[str, tuple[int, ...]]] = []
        self._done = False
        self._obs = ""

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in NUM_TASKS:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(NUM_TASKS)}")
        return NUM_TASKS[split]

    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        self._answer = answer(split, task_id)  # IndexError for an out-of-range id
        self._guesses, self._done = [], False
        self._obs = f"{INSTRUCTION}\n\nYou have {MAX_GUESSES} guesses left. What is your first guess?"
        return self._obs, {"task_id": task_id, "split": split, "max_guesses": MAX_GUESSES}

    def step(self, action: str) -> StepResult:
        if not self._answer:
            raise RuntimeError("call reset() before step()")
        if self._done:
            return StepResult("The game is over.", done=True, valid=False)
        word = parse_guess(action)
        if word is None or len(word) != 5 or word not in allowed_set():
            if word is None:
                problem = f"{action.strip()[:40]!r} is not a single word"
            elif len(word) != 5:
                problem = f"{word!r} has {len(word)} letters, not 5"
            else:
                problem = f"{word!r} is not in the word list"
            self._obs = (
                f"Invalid guess: {problem}. Reply with one five-letter English word, e.g. crane. "
                f"This did not use up a guess.\n{self._board()}"
            )
            return StepResult(self._obs, valid=False, info={"guesses": len(self._guesses)})

        marks = feedback(word, self._answer)
        self._guesses.append((word, marks))
        n = len(self._guesses)
        letters = ", ".join(f"{ch}: {_MEANING[m]}" for ch, m in zip(word, marks, strict=True))
        head = f"Guess {n} of {MAX_GUESSES}: {word} -> {' '.join(SYMBOL[m] for m in marks)} ({letters})."
        info: dict[str, Any] = {"guesses": n}
        if word == self._answer:
            self._done = True
            self._obs = f"{head}\nYou solved it in {n} guess{'es' if n > 1 else ''}: the word is {word}."
            info["answer"] = self._answer
            return StepResult(self._obs, reward=1.0, done=True, success=True, score=1.0, info=info)
        if n == MAX_GUESSES:
            self._done = True
            credit = partial_credit([m for _, m in self._guesses])
            self._obs = f"{head}\nOut of guesses: the word was {self._answer}."
            info["answer"] = self._answer
            return StepResult(self._obs, reward=credit, done=True, score=credit, info=info)
        self._obs = f"{head}\n{self._board()}"
        return StepResult(self._obs, info=info)

    def observation(self) -> str:
        return self._obs

    def vocabulary(self) -> list[str]:
        """Every word a guess may be (AgentGym's Wordle client lists them in its prompt)."""
        return list(allowed_words())

    def expert_action(self) -> str:
        return solver.best_guess(tuple((w, pattern_code(m)) for w, m in self._guesses))

    def random_action(self, rng: random.Random) -> str:
        """A uniformly random allowed word (the action space is open, so the base class cannot)."""
        words = allowed_words()
        return words[rng.randrange(len(words))]

    def _board(self) -> str:
        """Every guess so far with its marks, and the guesses left: the state in one place."""
        lines = [f"{i}. {w} {''.join(SYMBOL[m] for m in marks)}" for i, (w, marks) in enumerate(self._guesses, 1)]
        left = MAX_GUESSES - len(self._guesses)
        head = "Your guesses so far:\n" + "\n".join(lines) + "\n" if lines else ""
        return f"{head}You have {left} guess{'es' if left != 1 else ''} left."
