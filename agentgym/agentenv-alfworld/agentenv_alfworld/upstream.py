"""Real ALFWorld games, for users who have ALFWorld's data (``alfworld-download``).

With ``--option data_path=$ALFWORLD_DATA`` the server plays the ``game.tw-pddl`` files of
``json_2.1.1/<train_dir>`` (train) and ``json_2.1.1/<test_dir>`` (test) through ``textworld``'s PDDL
engine with ``alfworld``'s wrappers (object names demangled to "apple 1", its hand-coded expert),
the way ALFWorld's own text environment does, one game per session. Games are selected as
ALFWorld selects them: the six task types, no movable-receptacle or sliced variants, marked
solvable; sorted by path, so task ids are stable for a given copy of the data.

``alfworld`` and ``textworld`` are imported only here and only when the option is given: they are
an optional extra of this package (``pip install 'agentenv-alfworld[upstream]'``), not needed for
the generated tasks.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv_alfworld.reward import TASK_TYPES
from agentenv_alfworld.world import parse_command

INSTALL_HINT = "pip install 'agentenv-alfworld[upstream]' (alfworld==0.4.2 with textworld[pddl]==1.7.0)"
_LOC = re.compile(r"^You arrive at loc \d+\. ")


def require_upstream() -> None:
    """Fail early, in one sentence, when the optional packages are missing."""
    try:
        import alfworld.agents.environment.alfred_tw_env  # noqa: F401
        import textworld.envs.pddl.pddl  # noqa: F401
    except ImportError as e:
        raise RuntimeError(f"the data_path option plays real ALFWorld games through the alfworld package, which "
                           f"cannot be imported here ({e}); install it with: {INSTALL_HINT}") from None


def resolve_root(data_path: str) -> Path:
    """The ``json_2.1.1`` directory: ``data_path`` itself or its child (``$ALFWORLD_DATA``)."""
    path = Path(os.path.expandvars(data_path)).expanduser()
    if not path.is_dir():
        raise ValueError(f"alfworld data_path {data_path!r} is not a directory; point it at $ALFWORLD_DATA "
                         "(what alfworld-download fills) or at its json_2.1.1 directory")
    if (path / "json_2.1.1").is_dir():
        return path / "json_2.1.1"
    return path


def find_games(directory: Path) -> list[str]:
    """Playable game files under ``directory``, sorted: ALFWorld's own selection rules."""
    games = []
    for traj in sorted(directory.rglob("traj_data.json")):
        folder = traj.parent
        game = folder / "game.tw-pddl"
        if "movable" in str(folder) or "Sliced" in str(folder) or not game.is_file():
            continue
        try:
            task_type = json.loads(traj.read_text()).get("task_type")
            solvable = json.loads(game.read_text()).get("solvable")
        except (OSError, ValueError):
            continue
        if task_type in TASK_TYPES and solvable:
            games.append(str(game))
    return games


@dataclass(frozen=True)
class GameSet:
    """The game files of each split (what ``load_shared`` builds once per server)."""

    root: str
    games: dict[str, tuple[str, ...]]

    @classmethod
    def load(cls, data_path: str, train_dir: str, test_dir: str) -> GameSet:
        root = resolve_root(data_path)
        games: dict[str, tuple[str, ...]] = {}
        for split, sub in (("train", train_dir), ("test", test_dir)):
            folder = root / sub
            if not folder.is_dir():
                raise ValueError(f"alfworld data_path: no {sub!r} directory in {root} (the {split} split); "
                                 f"expected ALFWorld's json_2.1.1 layout")
            games[split] = tuple(find_games(folder))
            if not games[split]:
                raise ValueError(f"alfworld data_path: no playable game (traj_data.json with a solvable "
                                 f"game.tw-pddl) under {folder}")
        require_upstream()
        return cls(str(root), games)

    def counts(self) -> dict[str, int]:
        return {split: len(files) for split, files in self.games.items()}

    def game(self, split: str, task_id: int) -> str:
        if split not in self.games:
            raise ValueError(f"unknown split {split!r}; alfworld has {', '.join(self.games)}")
        files = self.games[split]
        if not 0 <= task_id < len(files):
            raise IndexError(f"task_id {task_id} out of range for split {split!r} (0..{len(files) - 1})")
        return files[task_id]


def name_arrival(command: str, feedback: str) -> str:
    """ALFWorld 0.3's grammar says "You arrive at loc 12." after ``go to X``; name the place instead."""
    return _LOC.sub(f"You arrive at {command[6:]}. ", feedback) if command.startswith("go to ") else feedback


def task_type_of(game_file: str) -> str:
    """The task type, read from the trial folder's name (``pick_heat_then_place_in_recep-Apple-...``)."""
    return Path(game_file).parent.parent.name.split("-")[0]


class UpstreamGame:
    """One real ALFWorld game in textworld, with ALFWorld's demangled names and hand-coded expert."""

    def __init__(self, game_file: str) -> None:
        import textworld
        from alfworld.agents.environment.alfred_tw_env import AlfredDemangler, AlfredExpert, AlfredInfos
        from textworld.envs import PddlEnv

        infos = textworld.EnvInfos(won=True, admissible_commands=True, facts=True, extras=["gamefile", "expert_plan"])
        env: Any = PddlEnv(infos)
        env = AlfredInfos(AlfredDemangler(env, shuffle=False))
        env = AlfredExpert(env, expert_type="handcoded")
        env.load(game_file)
        self.env = env
        self.game_file = game_file
        self.state: Any = None

    def reset(self) -> str:
        """The game's first feedback as textworld gives it (ALFWorld's banner and blank lines included)."""
        self.state = self.env.reset()
        return str(self.state.feedback)

    def admissible(self) -> list[str]:
        return list(self.state["admissible_commands"]) if self.state is not None else []

    def resolve(self, action: str) -> str | None:
        """The admissible command an action means (the same wording rules as the generated rooms: "put
        X in/on Y" and "move X to Y" are one command, whichever the game's grammar uses); None if none."""
        admissible = self.admissible()
        text = " ".join(action.lower().split()).strip(" .")
        if text in admissible:
            return text
        cmd = parse_command(action)
        if cmd is None:
            return None
        forms = [cmd.text()]
        if cmd.verb == "put":
            forms += [f"move {cmd.obj} to {cmd.recep}", f"put {cmd.obj} in {cmd.recep}"]
        return next((f for f in forms if f in admissible), None)

    def step(self, command: str) -> tuple[str, bool]:
        """Play a command as given: the game's feedback as textworld gives it (``Nothing happens.`` where the
        command is not exactly an admissible one) and whether the game is won."""
        self.state, _, _ = self.env.step(command)
        return str(self.state.feedback), bool(self.state["won"])

    def expert_action(self) -> str:
        plan = self.state.get("extra.expert_plan") if self.state is not None else None
        return plan[0] if plan else "look"

    def close(self) -> None:
        try:
            self.env.close()
        except Exception:
            pass
