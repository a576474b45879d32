"""The Wordle of AgentGym (``--option profile=agentgym``): LMRL-Gym's game as AgentGym's server plays it.

LMRL-Gym's Wordle is not the newspaper game: no word is hidden at the start. Each valid guess is answered
as if the hidden word were one drawn at random (Python's ``random`` seeded with the task index) from the
words that still fit everything said so far, and the game is won once exactly one word fits and it has
been guessed. What is reproduced, from the public code of AgentGym (``agentenv-lmrlgym``) and LMRL-Gym
(``llm_rl_scripts/wordle``), read, not copied:

- the words: LMRL-Gym's ``tweet_words.txt`` as AgentGym's server loads it, 40 words in its order (the order
  decides which word a seeded draw picks);
- what the game knows: per letter and position "not here", "possible" or "here", updated letter by letter
  as LMRL-Gym does, and the feedback read back from that knowledge (``b y g g b`` and a newline; ``g`` the
  letter is here, ``b`` it is nowhere, ``y`` it is elsewhere);
- a guess is the action with its spaces removed (``s h i r e`` and ``shire`` are one guess); not five
  lower-case letters, or not one of the 40 words, answers ``invalid word`` and still uses one of the 6 tries;
- the reward: 1 on the winning guess, 0 otherwise (LMRL-Gym's -1 per guess and 0 on the win, which
  AgentGym's server shifts up by 1); the episode ends on the win or after 6 tries;
- the turn limit: AgentGym evaluates wordle for 8 rounds (its ``max_round``); its server ends the game
  itself after 6 tries;
- tasks: the index is the seed. AgentEval's items are seeds 0..24 (the ``test`` split); AgentTraj's
  training items span seeds 0..1450 (the ``train`` split, which upstream lets overlap the test seeds: 21
  of AgentEval's 25 are in it).

The rules the model reads before the first observation (``Let's start Wordle!``, as upstream's server says)
are this project's words for the game, with the word list; under ``--compat agentgym`` the server answers
without them, as upstream's does, and AgentGym's client adds its own text.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from agentenv import Environment, Split, StepResult
from agentenv_wordle.env import WordleEnv

#: LMRL-Gym's ``llm_rl_scripts/wordle/vocab/tweet_words.txt``, in its order (the words AgentGym's server plays)
WORDS: tuple[str, ...] = (
    "panic", "solar", "shire", "proxy", "point", "robot", "prick", "wince", "crimp", "knoll", "sugar", "whack",
    "mount", "perky", "could", "wrung", "light", "those", "moist", "shard", "pleat", "aloft", "skill", "elder",
    "frame", "humor", "pause", "ulcer", "ultra", "robin", "cynic", "aroma", "caulk", "shake", "dodge", "swill",
    "tacit", "other", "thorn", "trove",
)
TRIES = 6
LETTERS = "abcdefghijklmnopqrstuvwxyz"
NOT_HERE, POSSIBLE, HERE = 0, 1, 2
#: letter -> what is known of it at each of the five positions
Knowledge = dict[str, tuple[int, ...]]
NUM_TASKS = {"test": 25, "train": 1451}
START = "Let's start Wordle!"
INVALID = "invalid word"

RULES = (
    "Play Wordle: find a five-letter word in at most 6 tries. Write each guess as its five letters separated by "
    'spaces, for example "s h i r e". After a guess you get one letter per position: "g" means that letter '
    'is in the word at that position, "y" that it is in the word at another position, and "b" that it is not '
    'in the word. A guess that is not five letters or not in the word list is answered "invalid word" and '
    "still uses a try. The word list:\n" + "\n".join(WORDS) + "\n"
    "Answer in this form:\nThought:\n<what you think>\n\nAction:\n<the letters of your guess>"
)


@lru_cache(maxsize=4096)
def _best_cached(known: tuple[tuple[str, tuple[int, ...]], ...], fitting: tuple[str, ...]) -> str:
    return best_guess(dict(known), fitting)


def _best(knowledge: Knowledge, fitting: tuple[str, ...]) -> str:
    return _best_cached(tuple(sorted(knowledge.items())), fitting)


def spaced(word: str) -> str:
    return " ".join(word)


def fits(knowledge: Knowledge, word: str) -> bool:
    """Whether ``word`` agrees with everything known (LMRL-Gym's test, letter by letter)."""
    for letter, known in knowledge.items():
        if all(k == POSSIBLE for k in known):
            continue
        if all(k == NOT_HERE for k in known):
            if letter in word:
                return False
            continue
        for pos, k in enumerate(known):
            if (k == HERE and word[pos] != letter) or (k == NOT_HERE and word[pos] == letter):
                return False
        if letter not in word:
            return False
    return True


def learn(knowledge: Knowledge, guess: str, hidden: str) -> Knowledge:
    """What is known after ``guess`` against ``hidden``, position by position (a later position of a repeated
    letter works on what the earlier one set, as in LMRL-Gym)."""
    out = dict(knowledge)
    for pos, letter in enumerate(guess):
        known = list(out[letter])
        if hidden[pos] == letter:
            known[pos] = HERE
        elif letter in hidden:
            known[pos] = NOT_HERE
        else:
            known = [NOT_HERE] * 5
        out[letter] = tuple(known)
    return out


def marks(knowledge: Knowledge, guess: str) -> list[str]:
    """The feedback of ``guess``, read back from the knowledge (a position whose letter is only "possible"
    there gives no mark, as upstream's reading gives none)."""
    out = []
    for pos, letter in enumerate(guess):
        known = knowledge[letter]
        if known[pos] == HERE:
            out.append("g")
        elif all(k == NOT_HERE for k in known):
            out.append("b")
        elif known[pos] == NOT_HERE:
            out.append("y")
    return out


@dataclass
class Game:
    """One game: what is known, the words that fit, every try (valid or not), the seeded draw."""

    seed: int
    knowledge: Knowledge = field(default_factory=lambda: {c: (POSSIBLE,) * 5 for c in LETTERS})
    fitting: tuple[str, ...] = WORDS
    tries: list[str] = field(default_factory=list)
    won: bool = False
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    @property
    def over(self) -> bool:
        return self.won or len(self.tries) >= TRIES

    def play(self, action: str) -> str:
        """One try; the server's observation of it."""
        guess = action.strip().replace(" ", "")
        self.tries.append(guess)
        if len(guess) != 5 or any(c not in LETTERS for c in guess) or guess not in WORDS:
            return INVALID
        hidden = self.rng.choice(self.fitting)
        self.knowledge = learn(self.knowledge, guess, hidden)
        self.fitting = tuple(w for w in WORDS if fits(self.knowledge, w))
        self.won = len(self.fitting) == 1 and self.fitting[0] in self.tries
        feedback = marks(self.knowledge, guess)
        return " ".join(feedback) + "\n" if feedback else INVALID

    def copy(self) -> Game:
        twin = dataclasses.replace(self, tries=list(self.tries))
        twin.rng.setstate(self.rng.getstate())
        return twin


def best_guess(knowledge: Knowledge, fitting: tuple[str, ...]) -> str:
    """The guess that leaves the fewest fitting words on average, a word that could win first on ties.

    Drawing the answer afresh from the fitting words at every guess is, for a player who only reads the
    feedback, the same as one word drawn at the start, so this is an ordinary Wordle solver over 40 words: it
    reads the feedback, never the seeded draw."""
    if len(fitting) == 1:
        return fitting[0]
    return min(WORDS, key=lambda guess: (_left_after(knowledge, fitting, guess), guess not in fitting))


def _left_after(knowledge: Knowledge, fitting: tuple[str, ...], guess: str) -> float:
    """The mean number of words still fitting after ``guess`` (0 where it wins), over the fitting answers."""
    left = 0
    for hidden in fitting:
        if hidden != guess:
            after = learn(knowledge, guess, hidden)
            left += sum(fits(after, w) for w in fitting)
    return left / len(fitting)


class AgentGymWordleEnv(Environment):
    """LMRL-Gym's Wordle, task N played with seed N as AgentGym's server plays it (module docstring)."""

    name = "wordle"
    profile = "agentgym"
    version = "agentgym-1"
    #: AgentGym evaluates wordle for 8 rounds (its max_round); its server ends the game after 6 tries
    max_turns = 8
    instruction = "You are an expert wordle player."
    action_hint = 'a word from the list, its letters separated by spaces, e.g. "s h i r e"'
    agentgym = dataclasses.replace(WordleEnv.agentgym, index_order=("train",), options={}, rules=RULES,
                                   server_truncates=False, check_tasks=(1, 2, 3))

    def __init__(self) -> None:
        self._game = Game(0)
        self._obs = ""

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in NUM_TASKS:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(NUM_TASKS)}")
        return NUM_TASKS[split]

    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        if not 0 <= task_id < self.num_tasks(split):
            raise IndexError(f"wordle (agentgym) {split} has seeds 0..{self.num_tasks(split) - 1}, not {task_id}")
        self._game = Game(task_id)
        self._obs = self.agentgym.with_rules(START)
        return self._obs, {"task_id": task_id, "split": split, "agentgym_index": task_id, "tries": TRIES}

    def step(self, action: str) -> StepResult:
        if self._game.over:
            return StepResult("The game is over.", done=True, valid=False)
        self._obs = self._game.play(action)
        won = self._game.won
        info = {"tries": len(self._game.tries), "agentgym_reward": float(won)}
        return StepResult(self._obs, reward=float(won), done=self._game.over, success=won, score=float(won),
                          valid=self._obs != INVALID, info=info)

    def observation(self) -> str:
        return self._obs

    def vocabulary(self) -> list[str]:
        """The words that still fit (AgentGym's ``/filtered_vocab``; all 40 before the first guess)."""
        return list(self._game.fitting)

    def available_actions(self) -> list[str]:
        return [spaced(w) for w in self._game.fitting]

    def random_action(self, rng: random.Random) -> str:
        """Any of the 40 words (the random baseline does not read the feedback)."""
        return spaced(rng.choice(WORDS))

    def expert_action(self) -> str:
        """The guess that narrows the fitting words most (:func:`best_guess`); it reads only the feedback."""
        return spaced(_best(self._game.knowledge, self._game.fitting))

    def expert_thought(self) -> str:
        fitting = self._game.fitting
        if not self._game.tries:
            head = "Nothing is known yet."
        elif len(fitting) == 1:
            head = f"Only {fitting[0]} fits the feedback so far."
        else:
            head = f"{len(fitting)} words fit the feedback so far: {', '.join(fitting)}."
        return f"{head} I will guess {self.expert_action()}."
