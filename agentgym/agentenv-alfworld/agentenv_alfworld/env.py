"""The ``alfworld`` environment: ALFWorld's household tasks in its text interface.

By default every task is a generated household (``tasks``) played by this package's rules
(``world``), which follow ALFWorld's PDDL domain and wording; with ``--option data_path=...`` the
server plays the user's real ALFWorld games instead (``upstream``). Either way the agent reads
ALFWorld's text and writes ALFWorld's commands, the reward is ALFWorld's ``won`` (1.0 on the step
the goal first holds; see ``reward``) and the episode ends there.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from agentenv import Environment, Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_alfworld import expert, upstream
from agentenv_alfworld.reward import goal_met
from agentenv_alfworld.tasks import NUM_TASKS, Task, check_task_id, generate
from agentenv_alfworld.world import NOTHING_HAPPENS, World, parse_command

COMMANDS = ("go to (receptacle), open (receptacle), close (receptacle), take (object) from (receptacle), "
            "put (object) in/on (receptacle), heat (object) with (receptacle), cool (object) with (receptacle), "
            "clean (object) with (receptacle), use (object), examine (something), look, inventory")

INSTRUCTION = (
    "You are in a household (a kitchen, living room, bedroom or bathroom) from ALFWorld, played as text. "
    "The first observation lists the numbered receptacles around you (countertop 1, fridge 1, drawer 2, ...) "
    "and states your task. Objects lie in or on receptacles; you see what a receptacle holds when you go to it, "
    "and a closed one (fridge, cabinet, drawer, microwave, safe) must be opened first. You can carry one "
    "object at a time. Objects are heated with a microwave, cooled with a fridge and cleaned with a sink basin, "
    "and you look at something under a lamp by holding it next to the lamp and using the lamp.\n"
    f"Each turn, write exactly one command, with the names exactly as the observations write them: {COMMANDS}. "
    'For example: go to countertop 1, take apple 1 from countertop 1, put apple 1 in/on fridge 1. '
    '"Nothing happens." means the command was not possible at that moment.'
)

NOT_A_COMMAND = f"{NOTHING_HAPPENS} That is not a command. The commands are: {COMMANDS}."


class AlfWorldOptions(BaseModel):
    """Server options. Without ``data_path`` the embedded generated tasks are served."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: real ALFWorld data: $ALFWORLD_DATA (filled by alfworld-download) or its json_2.1.1 directory
    data_path: str | None = None
    #: the json_2.1.1 subdirectories that make the train and test splits of the real data
    train_dir: str = "train"
    test_dir: str = "valid_unseen"
    #: append "AVAILABLE ACTIONS: a,b,..." (the admissible commands) to every observation, as AgentGym's client does
    list_actions: bool = False


class AlfWorldEnv(Environment):
    """One ALFWorld episode: reach the goal of a household task with ALFWorld's text commands.

    Reward 1.0 (``success``, ``score`` 1.0, ``done``) on the step at which the goal condition first
    holds, 0.0 on every other step, so an episode sums to 0 or 1. A command that is not possible now
    (ALFWorld: not admissible) is answered "Nothing happens.", changes nothing and is ``valid=False``;
    so is text that is no command at all (the observation then lists the commands). ``seed`` is
    ignored: a task id fixes the household and goal.
    """

    name: ClassVar[str] = "alfworld"
    version: ClassVar[str] = "1"
    # ALFWorld's own episode limit; the expert needs at most 29 turns on any generated task
    # (README), searching like an agent that does not know where things are.
    max_turns: ClassVar[int] = 50
    success_threshold: ClassVar[float] = 1.0
    action_hint: ClassVar[str] = (
        "one ALFWorld command, e.g. go to countertop 1, open fridge 1, take apple 1 from countertop 1, "
        "heat apple 1 with microwave 1, put apple 1 in/on fridge 1, use desklamp 1"
    )
    instruction: ClassVar[str] = INSTRUCTION
    Options: ClassVar[type[BaseModel]] = AlfWorldOptions
    #: AgentGym's ALFWorld server: {"id": n} handles, the task index is the "game" (with "world_type"),
    #: answers carry the admissible commands, which its client appends to the first observation; no
    #: /close route; games 0..2419 are train, 2420..2619 its 200 test games. What these routes serve is the
    #: agentgym profile (AgentGym's game N on the user's ALFWorld data); with --option profile=native, the
    #: generated tasks
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        reset_key="game", reset_extra={"world_type": "Text"}, first_observation="available_actions",
        upstream_splits={"train": (0, 2420), "test": (2420, 2620)}, has_close=False,
        hello="This is environment AlfWorld.", options={"profile": "agentgym"})
    #: ``--option profile=agentgym``: AgentGym's ALFWorld games, read from the user's data and AgentGym's mappings
    profiles = MappingProxyType({"agentgym": "agentenv_alfworld.agentgym_profile:AgentGymAlfWorldEnv"})

    def __init__(self) -> None:
        self._task: Task | None = None
        self._world: World | None = None
        self._game: upstream.UpstreamGame | None = None
        self._done = False
        self._won = False
        self._obs = ""

    # -- tasks -------------------------------------------------------------------------------------
    @classmethod
    def num_tasks(cls, split: Split) -> int:
        check_task_id(0, split)  # validates the split name
        return NUM_TASKS[split]

    @classmethod
    def load_shared(cls, options: Any) -> upstream.GameSet | None:
        """The real games' file lists when ``data_path`` is given (checked here, so a wrong path or a
        missing ``alfworld`` package stops the server at start-up with one line); else nothing."""
        if options is None or not options.data_path:
            return None
        return upstream.GameSet.load(options.data_path, options.train_dir, options.test_dir)

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        if isinstance(shared, upstream.GameSet):
            return shared.counts()
        return dict(NUM_TASKS)

    def initial_observation(self, task_id: int, split: Split) -> str | None:
        if self.shared is not None:
            return None  # a real game must be started to be described
        task = generate(split, task_id)
        return self._decorate(task.intro(), task.new_world().admissible())

    # -- episode -----------------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        self.close()
        self._done = self._won = False
        if self.shared is not None:
            game_file = self.shared.game(split, task_id)
            self._game = upstream.UpstreamGame(game_file)
            first = self._game.reset().strip()
            self._obs = self._decorate(first, self._game.admissible())
            return self._obs, {"task_id": task_id, "split": split, "task_type": upstream.task_type_of(game_file),
                               "game_file": game_file}
        task = generate(split, task_id)  # IndexError for an out-of-range id
        self._task, self._world = task, task.new_world()
        self._obs = self._decorate(task.intro(), self._world.admissible())
        info = {"task_id": task_id, "split": split, "task_type": task.goal.task_type, "room": task.room,
                "goal": task.goal_text}
        return self._obs, info

    def step(self, action: str) -> StepResult:
        if self._done:
            return StepResult("The episode is over.", done=True, success=self._won, score=float(self._won),
                              valid=False)
        if self._game is not None:
            return self._step_upstream(action)
        world, task = self._require()
        cmd = parse_command(action) if isinstance(action, str) else None
        if cmd is None:
            return self._result(NOT_A_COMMAND, valid=False)
        if not world.applies(cmd):
            return self._result(NOTHING_HAPPENS, valid=False, command=cmd.text())
        feedback = world.apply(cmd)
        won = goal_met(world, task.goal)
        return self._result(feedback, valid=True, won=won, command=cmd.text())

    def _step_upstream(self, action: str) -> StepResult:
        game = self._game
        assert game is not None
        command = game.resolve(action) if isinstance(action, str) else None
        if command is None:
            known = isinstance(action, str) and parse_command(action) is not None
            return self._result(NOTHING_HAPPENS if known else NOT_A_COMMAND, valid=False)
        feedback, won = game.step(command)
        return self._result(upstream.name_arrival(command, feedback.strip()), valid=True, won=won, command=command)

    def _result(self, feedback: str, valid: bool, won: bool = False, command: str | None = None) -> StepResult:
        if won:
            self._done = self._won = True
        self._obs = self._decorate(feedback, [] if won else self.available_actions())
        reward = 1.0 if won else 0.0
        return StepResult(self._obs, reward=reward, done=won, success=won, score=reward, valid=valid,
                          info={"command": command, "won": won})

    def observation(self) -> str:
        return self._obs

    def available_actions(self) -> list[str]:
        """The admissible commands now (ALFWorld's list, sorted); empty once the episode is over."""
        if self._done:
            return []
        if self._game is not None:
            return self._game.admissible()
        return self._world.admissible() if self._world is not None else []

    def expert_action(self) -> str:
        if self._game is not None:
            return self._game.expert_action()
        if self._done or self._world is None:
            return "look"
        world, task = self._require()
        return expert.next_step(world, task.goal)[0]

    def expert_thought(self) -> str | None:
        if self._game is not None or self._done or self._world is None:
            return None
        world, task = self._require()
        return expert.next_step(world, task.goal)[1]

    def close(self) -> None:
        if self._game is not None:
            self._game.close()
        self._game = self._task = self._world = None

    # -- helpers -----------------------------------------------------------------------------------
    def _decorate(self, text: str, actions: list[str]) -> str:
        """Append the admissible commands when the server was asked to (AgentGym's client format)."""
        if self.options is not None and getattr(self.options, "list_actions", False) and actions:
            return f"{text}\nAVAILABLE ACTIONS: {','.join(actions)}"
        return text

    def _require(self) -> tuple[World, Task]:
        if self._world is None or self._task is None:
            raise RuntimeError("call reset() before step()")
        return self._world, self._task
