"""ScienceWorld (the real simulator of the ``scienceworld`` package) as an agentenv environment.

A session owns one simulator JVM (``simulator.Simulator``), started at its first reset and reused by
its later resets (loading another task takes ~0.1 s, starting a JVM 1.5-4 s). A task is one
variation of one of the 30 task types (``tasks``); reward and success come from the simulator's
score (``reward``); the expert follows the simulator's gold action sequence (``expert``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

from py4j.protocol import Py4JError
from pydantic import BaseModel, ConfigDict, Field

from agentenv import processes
from agentenv.env import Environment, Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_sciworld import expert, reward, tasks
from agentenv_sciworld.simulator import DEFAULT_JAVA_OPTS, UNKNOWN_ACTION_PREFIXES, Simulator

#: ScienceWorld's simplifications ("easy" = all of them); the bundled jar's list
SIMPLIFICATIONS: tuple[str, ...] = ("teleportAction", "selfWateringFlowerPots", "openContainers", "openDoors",
                                    "noElectricalAction", "easy")
#: task types that need electrical actions (ScienceWorld refuses them with noElectricalAction)
ELECTRICAL = ("power-component", "conductivity")
#: always-available actions that the simulator's list of valid actions leaves out
BASIC_ACTIONS: tuple[str, ...] = ("look around", "inventory", "task", "wait", "wait1")
#: simulator commands that would step outside the episode (restart it), refused
BLOCKED_ACTIONS: frozenset[str] = frozenset({"reset task", "reset"})

INSTRUCTION = (
    "You are an agent in ScienceWorld, a text simulation of a house and its surroundings (kitchen, bathroom, "
    "workshop, greenhouse, art studio, foundry, outside, ...) where you carry out elementary-school science "
    "experiments: changing states of matter, measuring temperatures, building electrical circuits, testing "
    "conductivity, finding and classifying living things, growing plants, mixing chemicals and paints, "
    "studying life stages, lifespans, inclined planes and Mendelian genetics. Each turn you give one action "
    "and the simulator answers with what happens. OBJ and LOC stand for names as they appear in the "
    "observations.\n"
    "Actions: look around (describe the room) | look at OBJ | look in OBJ | read OBJ | inventory | "
    "task (repeat the task) | go to LOC (through an open door) | open OBJ | close OBJ | pick up OBJ | "
    "put down OBJ | move OBJ to OBJ | pour OBJ in OBJ | dunk OBJ in OBJ | mix OBJ | activate OBJ | "
    "deactivate OBJ | use OBJ on OBJ (e.g. a thermometer on a substance) | connect OBJ to OBJ | "
    "disconnect OBJ | eat OBJ | flush OBJ | focus on OBJ | wait (10 time steps) | wait1 (one time step).\n"
    "\"focus on OBJ\" declares the object the task is about: focusing on a wrong object fails the task, so "
    "focus only when the task tells you to and you are sure. When the simulator asks which of several objects "
    "you mean, answer with the number of the option. The score grows as you reach the task's subgoals; "
    "the task is solved at 100."
)


class SciWorldOptions(BaseModel):
    """Server options (``agentenv serve sciworld --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: ScienceWorld simplifications, comma-separated ("easy" = all), e.g. "teleportAction,openDoors"
    simplifications: str = ""
    #: another ScienceWorld jar (a build of the upstream repository); its task table is read from it
    jar_path: str | None = None
    #: the java executable
    java: str = "java"
    #: JVM options of each session's simulator
    java_opts: str = Field(default=" ".join(DEFAULT_JAVA_OPTS))


@dataclass(frozen=True)
class Shared:
    """What every session of a server reads: the task table and the options it was built with."""

    table: tasks.TaskTable
    simplifications: str


def _check_simplifications(value: str) -> None:
    unknown = [s for s in value.split(",") if s and s not in SIMPLIFICATIONS]
    if unknown:
        raise ValueError(f"unknown simplification(s) {unknown}; known: {', '.join(SIMPLIFICATIONS)}")


def _without_electrical(types: list[tasks.TaskType], simplifications: str) -> list[tasks.TaskType]:
    if "noElectricalAction" not in simplifications.split(","):
        return types
    return [t for t in types if not any(word in t.name for word in ELECTRICAL)]


def read_table(options: SciWorldOptions) -> dict[str, tuple[int, int, int]]:
    """The variation table of the jar ``options.jar_path``, asked of a simulator started for it."""
    owner = type("TableReader", (), {})()
    sim = Simulator(owner, options.jar_path, options.java, shlex.split(options.java_opts))
    try:
        out = {}
        for name in sim.get_task_names():
            sim.load(name, 0, "")
            train, dev, test = sim.get_variations_train(), sim.get_variations_dev(), sim.get_variations_test()
            out[str(name)] = (int(sim.get_max_variations(name)), int(min(dev)), int(min(test)))
            if list(train) != list(range(0, min(dev))):
                raise ValueError(f"task {name}: train variations are not 0..{min(dev) - 1}")
        return out
    finally:
        sim.close()
        processes.kill_children(owner)


class SciWorldEnv(Environment):
    """One ScienceWorld episode at a time, on a simulator JVM kept for the whole session."""

    name: ClassVar[str] = "sciworld"
    version: ClassVar[str] = "1"
    # The expert (gold sequence) needs a median 30 turns on the test split, but 143-149 on both Mendelian
    # genetics types and up to ~190 on boiling and inclined planes: at 200 it solves 197 of the 200 test
    # tasks, at 150 191, at 100 166. A trainer holds an LLM to fewer turns with its own agent.max_turns.
    max_turns: ClassVar[int] = 200
    success_threshold: ClassVar[float] = 1.0
    action_hint: ClassVar[str] = "one ScienceWorld command, e.g. look around, go to kitchen, pick up thermometer"
    instruction: ClassVar[str] = INSTRUCTION
    # a session holds a JVM of ~0.5 GB resident (bounded heap, see simulator.DEFAULT_JAVA_OPTS)
    max_sessions: ClassVar[int | None] = 16
    # what a replica reserves on a Ray node (env_servers.backend=ray): measured 3,082 MiB for the whole
    # server tree at 16 sessions after one step each (58 MiB idle)
    server_memory_mb: ClassVar[int | None] = 3200
    # a step is 1-20 ms of simulation ("wait" runs 10 time steps); a minute means the JVM is stuck
    step_timeout: ClassVar[float | None] = 60.0
    Options: ClassVar[type[BaseModel]] = SciWorldOptions
    # AgentGym's server: {"id"} handles, /reset {"data_idx"} with the task description apart (its client
    # shows it before the look), 0-100 scores read as the reward; its index space is every variation of
    # 23 task types (all but grow-plant/fruit, inclined planes and genetics), 4,639 in all
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        reset_key="data_idx", score_scale=100.0, first_observation="task_description",
        hello="This is environment ScienceWorld.", upstream_splits={"train": (0, 4639), "test": (0, 4639)},
        options={"profile": "agentgym"})
    profiles: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"agentgym": "agentenv_sciworld.agentgym_profile:AgentGymSciWorldEnv"})

    def __init__(self) -> None:
        self._sim: Simulator | None = None
        self._task: tasks.Task | None = None
        self._description = ""
        self._obs = ""
        self._score = 0  # clamped score so far (the reward baseline)
        self._native = 0  # the simulator's own score after the last step
        self._done = False
        self._history: list[str] = []  # actions sent to the simulator this episode
        self._gold: expert.GoldPath | None = None
        self._actions: list[str] | None = None  # valid actions of the current state, once asked

    # -- tasks -----------------------------------------------------------------------------------
    @classmethod
    def num_tasks(cls, split: Split) -> int:
        return len(tasks.default_table().splits[split])

    @classmethod
    def load_shared(cls, options: SciWorldOptions) -> Shared:
        """The task table: the embedded one of the bundled jar, or the one read from ``jar_path``."""
        _check_simplifications(options.simplifications)
        variations = read_table(options) if options.jar_path else tasks.VARIATIONS
        types = _without_electrical(tasks.task_types(variations), options.simplifications)
        return Shared(tasks.TaskTable(types), options.simplifications)

    @classmethod
    def task_counts(cls, shared: Shared | None = None) -> dict[str, int]:
        return shared.table.counts() if shared is not None else tasks.default_table().counts()

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        """Name, version, counts and what changes the tasks (simplifications, jar), not the JVM's options."""
        opts = options.model_dump(mode="json")
        blob = json.dumps([cls.name, cls.version, counts, opts.get("simplifications"), opts.get("jar_path")],
                          sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def _options(self) -> SciWorldOptions:
        return self.options if isinstance(self.options, SciWorldOptions) else SciWorldOptions()

    def _shared(self) -> Shared:
        """The server's shared table; built here for an instance used without a server (tests, scripts)."""
        if self.shared is None:
            self.shared = self.load_shared(self._options())
        return self.shared

    def task(self, split: Split, task_id: int) -> tasks.Task:
        return self._shared().table.task(split, task_id)

    # -- the simulator ------------------------------------------------------------------------------
    def _new_simulator(self) -> Simulator:
        """A simulator JVM owned by this session, started as the options say."""
        opts = self._options()
        return Simulator(self, opts.jar_path, opts.java, shlex.split(opts.java_opts))

    def _simulator(self) -> Simulator:
        if self._sim is None or not self._sim.alive():
            self._close_simulator()
            self._sim = self._new_simulator()
        return self._sim

    def _close_simulator(self) -> None:
        sim, self._sim = self._sim, None
        if sim is not None:
            sim.close()

    def _load(self, task: tasks.Task, gold: bool) -> Simulator:
        """Load ``task`` into this session's simulator; a JVM that died is replaced once."""
        for attempt in (0, 1):
            sim = self._simulator()
            try:
                sim.load(task.name, task.variation, self._shared().simplifications, generateGoldPath=gold)
                return sim
            except Py4JError:
                self._close_simulator()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    # -- an episode ---------------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Load the task's variation. ``seed`` is ignored: the variation fixes the world."""
        task = self.task(split, task_id)
        sim = self._load(task, gold=False)
        self._task = task
        self._description = str(sim.get_task_description()).strip()
        # the look is ScienceWorld's free action: no time passes before the agent's first step
        self._obs = f"{self._description}\n\n{str(sim.look()).strip()}"
        self._score, self._native, self._done = 0, 0, False
        self._history = []
        self._gold = None
        self._actions = None
        return self._obs, self._info()

    def _info(self) -> dict[str, Any]:
        task = self._task
        assert task is not None
        return {"task_type": task.name, "task_type_id": task.task_id, "variation": task.variation,
                "task_description": self._description, "raw_score": self._native}

    def observation(self) -> str:
        return self._obs

    def step(self, action: str) -> StepResult:
        if self._task is None or self._sim is None:
            return StepResult("Call reset before step.", valid=False)
        if self._done:
            return StepResult("The episode has ended.", done=True, valid=False, score=float(self._score))
        text = " ".join(action.split()) if isinstance(action, str) else ""
        if not text:
            return self._refuse("Empty action: write one command, e.g. look around.")
        if text.lower() in BLOCKED_ACTIONS:
            return self._refuse(f"{text!r} is not available: an episode is a single attempt at its task.")

        obs, native, completed = self._sim.act(text)
        self._history.append(text)
        self._actions = None
        if self._gold is not None:
            self._gold.observe(text)
        valid = not obs.startswith(UNKNOWN_ACTION_PREFIXES)
        if not valid:
            obs += (" Use one of the commands of the instructions with names from the observations, "
                    "e.g. look around, go to kitchen, pick up thermometer.")
        out = reward.outcome(self._score, native, completed)
        self._score, self._native, self._done = out.score, native, out.done
        if out.failed:
            obs += "\nThe task has failed (score -100): the episode is over."
        elif out.success:
            obs += "\nYou completed the task (score 100)."
        self._obs = obs.strip()
        return StepResult(self._obs, reward=out.reward, done=out.done, success=out.success,
                          score=float(out.score), valid=valid, info=self._info())

    def _refuse(self, message: str) -> StepResult:
        """An action that never reaches the simulator: nothing changes, no time passes."""
        self._obs = message
        return StepResult(message, valid=False, score=float(self._score), info=self._info())

    def available_actions(self) -> list[str]:
        """The simulator's valid action-object combinations now (plus the always-valid basics). The
        simulator enumerates them on request (0.1-0.5 s, ~1,500 in a furnished room, most of them
        ``connect`` pairs), so the list is kept until the next step."""
        if self._sim is None or self._task is None or self._done:
            return []
        if self._actions is None:
            actions = {str(a) for a in self._sim.get_valid_action_object_combinations()}
            actions.update(BASIC_ACTIONS)
            actions.difference_update(BLOCKED_ACTIONS)
            self._actions = sorted(actions)
        return list(self._actions)

    def random_action(self, rng: random.Random) -> str:
        actions = self.available_actions()
        return rng.choice(actions) if actions else "look around"

    # -- the expert -------------------------------------------------------------------------------
    def gold_path(self) -> expert.GoldPath:
        """This episode's gold sequence. The first call reloads the variation with gold-path generation
        and replays the episode's actions on it (the world is the same variation, the state the same as
        far as the simulator is deterministic)."""
        if self._gold is None:
            assert self._task is not None
            sim = self._load(self._task, gold=True)
            for action in self._history:
                sim.act(action)
            gold = expert.GoldPath([str(a) for a in sim.get_gold_action_sequence()])
            for action in self._history:
                gold.observe(action)
            self._gold, self._actions = gold, None
        return self._gold

    def expert_action(self) -> str:
        if self._task is None or self._sim is None or self._done:
            return "look around"
        return self.gold_path().next() or expert.FALLBACK_ACTION

    def expert_thought(self) -> str | None:
        if self._task is None or self._sim is None or self._done:
            return None
        return expert.thought(self.expert_action(), self._description, first=not self._history)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._close_simulator()
        self._task = None
