"""The ALFWorld of AgentGym (``--option profile=agentgym``): its games by index, played as its server plays them.

AgentGym's ALFWorld server plays ALFWorld's TextWorld games with the ``alfworld`` and ``textworld`` packages. Neither
the games nor AgentGym's list of them ship with this project: the profile reads the user's ALFWorld data
(``--option data_path=DIR`` or ``$ALFWORLD_DATA``: what ``alfworld-download`` fills, ``json_2.1.1`` under it) and
AgentGym's two mapping files (``--option mappings=DIR`` or ``$AGENTENV_ALFWORLD_MAPPINGS``: the ``configs``
directory of AgentGym's ``agentenv-alfworld``), and plays through the ``upstream`` extra of this package. What is
reproduced, from the public code of AgentGym (``agentenv-alfworld``, its client ``AlfWorldEnvClient``); read, not
copied:

- **the tasks**: one index space; item N is entry N of ``mappings_train.json`` followed by ``mappings_test.json``,
  the game ``json_2.1.1/train/<task_type>/<task_id>/game.tw-pddl`` for a train entry and the same under
  ``json_2.1.1/valid_train`` for a test entry, with no other selection (AgentEval's 200 items are the test entries,
  2420-2619 with AgentGym's files; AgentTraj's are train entries). Both splits of this profile are that space;
- **the first observation**: the game's first text without its first paragraph (the ``-= Welcome to TextWorld,
  ALFRED! =-`` banner), the other paragraphs joined by one newline, then ``AVAILABLE ACTIONS:`` and the admissible
  commands joined by commas, as AgentGym's client shows it (its server answers the list apart; later
  observations come without it, as its client shows them);
- **a step**: the action goes to the game as written: only an exact admissible command is played, anything else
  is ALFWorld's ``Nothing happens.``; a leading ``You arrive at loc N.`` sentence is cut from the answer; the reward
  is 1 on the step that wins the game, else 0; the game ends when won or after its 50th step (ALFWorld's limit in
  AgentGym's configuration, invalid steps included);
- **the turn limit**: AgentGym evaluates ALFWorld for 30 rounds (its ``max_round``), so its 50 steps are not reached.

The text depends on the game files the user has: ``alfworld-download`` of alfworld 0.3 (AgentGym's version) fetches
games whose grammar says ``You arrive at loc 3. On the countertop 1, ...`` and ``put X in/on Y``; alfworld 0.4's
games say ``You arrive at countertop 1. ...`` and ``move X to Y``. The profile plays what the files say.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from agentenv import Environment, Split, StepResult
from agentenv.env import file_stamps
from agentenv_alfworld import upstream
from agentenv_alfworld.env import AlfWorldEnv
from agentenv_alfworld.world import NOTHING_HAPPENS

DATA_VAR = "ALFWORLD_DATA"  # alfworld's own variable (AgentGym's server sets it to ~/.cache/alfworld)
MAPPINGS_VAR = "AGENTENV_ALFWORLD_MAPPINGS"
MAPPING_FILES = (("mappings_train.json", "train"), ("mappings_test.json", "valid_train"))
NUM_TASKS = 2620  # entries of AgentGym's two mapping files (2420 + 200)
STEP_LIMIT = 50  # steps of a game (textworld's limit in AgentGym's configuration)
ROUNDS = 30  # AgentGym's max_round for ALFWorld
INSTRUCTION = "You solve household tasks in ALFWorld's text world by choosing one of the available actions a turn."
RULES = (
    "You are an agent in a household. Each turn you see what happened, then you think and choose one action. "
    "The first observation describes the room, your task, and the actions available then; use exactly the "
    'wording of an available action. "Nothing happens." means the action was not possible. Reply in this form:\n'
    "Thought:\n<your thinking>\n\nAction:\n<one action>"
)


class AgentGymAlfWorldOptions(BaseModel):
    """Server options of the agentgym profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: ALFWorld's data ($ALFWORLD_DATA, json_2.1.1 under it, or json_2.1.1 itself); else $ALFWORLD_DATA
    data_path: str | None = None
    #: the directory of AgentGym's mappings_train.json and mappings_test.json; else $AGENTENV_ALFWORLD_MAPPINGS
    mappings: str | None = None


@dataclass(frozen=True)
class GameList:
    """The game file of every upstream index, as AgentGym's server lists them."""

    root: Path  # json_2.1.1
    games: tuple[str, ...]
    sources: tuple[str, ...]  # the mapping files read

    def game(self, index: int) -> str:
        if not 0 <= index < len(self.games):
            raise IndexError(f"alfworld (agentgym) has items 0..{len(self.games) - 1}, not {index}")
        game = self.games[index]
        if not Path(game).is_file():
            raise ValueError(f"alfworld (agentgym) item {index} is the game {game}, which the data at {self.root} "
                             "does not hold (alfworld-download fetches ALFWorld's games)")
        return game


def _given(value: str | None, var: str, what: str) -> Path:
    path = value or os.environ.get(var)
    if not path:
        raise ValueError(f"alfworld's agentgym profile plays AgentGym's ALFWorld games: give --option {what} "
                         f"(or set ${var}); --option profile=native serves this package's generated tasks")
    return Path(os.path.expandvars(path)).expanduser()


@lru_cache(maxsize=4)
def read_games(data_path: Path, mappings: Path) -> GameList:
    """AgentGym's list of games: the train mapping's entries, then the test mapping's, as game file paths."""
    root = upstream.resolve_root(str(data_path))
    games: list[str] = []
    sources = []
    for name, folder in MAPPING_FILES:
        path = mappings / name
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
            games += [str(root / folder / e["task_type"] / e["task_id"] / "game.tw-pddl") for e in entries]
        except FileNotFoundError:
            raise ValueError(f"alfworld's agentgym profile: no {name} in {mappings} (--option mappings names the "
                             "configs directory of AgentGym's agentenv-alfworld)") from None
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"alfworld's agentgym profile cannot read {path}: {e}") from None
        sources.append(str(path))
    return GameList(root, tuple(games), tuple(sources))


def first_text(feedback: str) -> str:
    """What AgentGym's server answers at reset: the first paragraph (the banner) dropped, the rest on lines."""
    return "\n".join(feedback.split("\n\n")[1:])


def step_text(feedback: str) -> str:
    """What AgentGym's server answers at a step: a leading ``You arrive at loc N.`` sentence cut."""
    if feedback.startswith("You arrive at loc "):
        return feedback[feedback.find(". ") + 2:]
    return feedback


class AgentGymAlfWorldEnv(Environment):
    """AgentGym's ALFWorld game N on the user's data, played as its server plays it (module docstring)."""

    name: ClassVar[str] = "alfworld"
    profile: ClassVar[str] = "agentgym"
    version: ClassVar[str] = "agentgym-1"
    max_turns: ClassVar[int] = ROUNDS
    success_threshold: ClassVar[float] = 1.0
    action_hint: ClassVar[str] = "one of the available actions, written exactly as listed, e.g. go to countertop 1"
    instruction: ClassVar[str] = INSTRUCTION
    Options: ClassVar[type[BaseModel]] = AgentGymAlfWorldOptions
    #: the native routes with the profile's rules and one index space (both splits are all of it: AgentTraj's items
    #: are train entries, AgentEval's test ones)
    agentgym = dataclasses.replace(AlfWorldEnv.agentgym, options={}, rules=RULES, index_order=("test",),
                                   server_truncates=False,
                                   upstream_splits={"train": (0, NUM_TASKS), "test": (0, NUM_TASKS)})

    def __init__(self) -> None:
        self._game: upstream.UpstreamGame | None = None
        self._obs = ""
        self._steps = 0
        self._done = False

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        """AgentGym's index space (its mapping files' 2620 entries); a server counts the user's files."""
        if split not in cls.splits:
            raise ValueError(f"unknown split {split!r}; expected one of {list(cls.splits)}")
        return NUM_TASKS

    @classmethod
    def load_shared(cls, options: AgentGymAlfWorldOptions) -> GameList:
        games = read_games(_given(options.data_path, DATA_VAR, "data_path=$ALFWORLD_DATA").resolve(),
                           _given(options.mappings, MAPPINGS_VAR, "mappings=DIR").resolve())
        upstream.require_upstream()
        return games

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        n = len(shared.games) if isinstance(shared, GameList) else NUM_TASKS
        return {split: n for split in cls.splits}

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: AgentGymAlfWorldOptions) -> str:
        """The default hash, plus the mapping files' sizes and times (other files name other games)."""
        mappings = _given(options.mappings, MAPPINGS_VAR, "mappings=DIR")
        return super().fingerprint(counts, options, file_stamps([mappings / name for name, _ in MAPPING_FILES]))

    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        self.close()
        self.num_tasks(split)
        game_file = self.shared.game(int(task_id))
        self._game = upstream.UpstreamGame(game_file)
        self._steps, self._done = 0, False
        observation = first_text(self._game.reset())
        self._obs = self.agentgym.with_rules(self.agentgym.listed(observation, self._game.admissible()))
        parts = Path(game_file).parts
        return self._obs, {"task_id": task_id, "split": split, "agentgym_index": task_id, "game_file": game_file,
                           "task_type": "/".join(parts[-3:-1])}

    def step(self, action: str) -> StepResult:
        if self._game is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            return StepResult("The episode is over.", valid=False, done=True)
        feedback, won = self._game.step(str(action))
        self._steps += 1
        self._obs = step_text(feedback)
        self._done = won or self._steps >= STEP_LIMIT
        reward = 1.0 if won else 0.0
        return StepResult(self._obs, reward=reward, done=self._done, success=won, score=reward,
                          valid=self._obs != NOTHING_HAPPENS, info={"won": won, "steps": self._steps})

    def observation(self) -> str:
        return self._obs

    def available_actions(self) -> list[str]:
        return [] if self._game is None or self._done else self._game.admissible()

    def expert_action(self) -> str:
        return self._game.expert_action() if self._game is not None else "look"

    def close(self) -> None:
        if self._game is not None:
            self._game.close()
        self._game = None
