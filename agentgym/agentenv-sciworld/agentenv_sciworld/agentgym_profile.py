"""ScienceWorld as AgentGym's server plays it (``--option profile=agentgym``): its index space, look and scores.

What is reproduced, from the public code of AgentGym's ``agentenv-sciworld`` server (read, not copied):

- **the index space**: every variation of every task type but the seven AgentGym leaves out (grow plant, grow
  fruit, both inclined-plane types and the three genetics types: ids 5-1, 5-2, 9-1..9-3, 10-1, 10-2), in
  ScienceWorld's own task order (``scienceworld.constants.ID2TASK``), variations in order: 4,639 tasks, index
  N the N-th (AgentEval's 200 items are indices 536-4336);
- **the reset**: the variation loaded without simplifications into a simulator that loaded nothing before (a
  fresh JVM, as upstream's first reset of a handle: a JVM that loaded another task first lists objects in
  another order and drifts temperatures), the task description, then ``look around`` sent as a real step (it
  counts as a move), whose answer is the first observation after the description;
- **a step**: the action goes to the simulator as given (nothing refused, nothing added); reward and score
  are the simulator's raw ones (score 0-100, -100 on a failed task, the reward its change, negative too);
  the episode ends where ScienceWorld's Python API ends it: the task completed or failed, or more than 100
  moves (its default step limit, which AgentGym's server keeps);
- **the turn limit**: AgentGym evaluates ScienceWorld for 30 rounds (its ``max_round``); its server has none.

The simulator is the same one (``scienceworld`` 1.2.3's jar): observations are the simulator's own.
"""

from __future__ import annotations

import dataclasses
import functools
import shlex
from typing import Any, ClassVar

from scienceworld.constants import ID2TASK

from agentenv import Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_sciworld import expert, tasks
from agentenv_sciworld.env import SciWorldEnv
from agentenv_sciworld.simulator import DEFAULT_JAVA_OPTS, Simulator

#: the task types AgentGym's server leaves out
EXCLUDED = frozenset({"5-1", "5-2", "9-1", "9-2", "9-3", "10-1", "10-2"})
STEP_LIMIT = 100  # ScienceWorldEnv's default envStepLimit, which AgentGym's server does not change


@functools.cache
def games() -> tuple[tasks.Task, ...]:
    """AgentGym's index space: (type, variation) for every variation of every kept type, in ScienceWorld's order."""
    return tuple(tasks.Task(task_id, name, v) for task_id, name in ID2TASK.items() if task_id not in EXCLUDED
                 for v in range(tasks.VARIATIONS[name][0]))


class AgentGymSciWorldEnv(SciWorldEnv):
    """ScienceWorld, task N being AgentGym's index N (module docstring)."""

    profile: ClassVar[str] = "agentgym"
    version: ClassVar[str] = "agentgym-1"
    max_turns: ClassVar[int] = 30  # AgentGym's evaluation rounds
    # check_tasks: power-component and find-living-thing, variation 0 (the expert: 8 and 10 steps)
    agentgym: ClassVar[AgentGymRoutes] = dataclasses.replace(
        SciWorldEnv.agentgym, index_order=("test",), options={}, server_truncates=False, check_tasks=(1396, 2936))

    def _new_simulator(self) -> Simulator:
        """A JVM started as ScienceWorldEnv starts it (no extra options, no class archive, a callback server), with
        its default step limit: the simulator's choices that hang on object identities (the order of an
        ambiguity's choices, a thermometer's reading) then come out as on upstream's server. The options'
        ``java_opts`` still apply where given."""
        opts = self._options()
        java_opts = () if opts.java_opts == " ".join(DEFAULT_JAVA_OPTS) else shlex.split(opts.java_opts)
        sim = Simulator(self, opts.jar_path, opts.java, java_opts, callback_server=True, class_archive=False)
        sim.envStepLimit = STEP_LIMIT
        return sim

    def gold_path(self) -> expert.GoldPath:
        """The gold sequence, from a JVM of its own (the native class reloads the session's simulator, whose
        world would then no longer be the one upstream plays)."""
        if self._gold is None:
            assert self._task is not None
            helper = self._new_simulator()
            try:
                helper.load(self._task.name, self._task.variation, "", generateGoldPath=True)
                gold = expert.GoldPath([str(a) for a in helper.get_gold_action_sequence()])
            finally:
                helper.close()
            for action in self._history:
                gold.observe(action)
            self._gold, self._actions = gold, None
        return self._gold

    @staticmethod
    def agentgym_observation_key(observation: str) -> list[str]:
        """What of an observation two runs of ScienceWorld agree on: its lines in any order (the simulator lists
        objects in an order of its own, upstream's server too)."""
        return sorted(observation.splitlines())

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in cls.splits:
            raise ValueError(f"unknown split {split!r}")
        return len(games())

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        return {split: len(games()) for split in cls.splits}

    def task(self, split: Split, task_id: int) -> tasks.Task:
        index = games()
        if split not in self.splits:
            raise ValueError(f"unknown split {split!r}")
        if not 0 <= task_id < len(index):
            raise IndexError(f"sciworld (agentgym) has tasks 0..{len(index) - 1}, not {task_id}")
        return index[task_id]

    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        task = self.task(split, task_id)
        if self._task is not None:  # a world loaded into a JVM that loaded another first is not the same world
            self._close_simulator()
        sim = self._load(task, gold=False)
        self._task, self._gold, self._actions, self._done = task, None, None, False
        self._description = str(sim.get_task_description())
        look, _, _, infos = sim.step("look around")  # a real step upstream
        self._history, self._native = ["look around"], int(infos["score"])
        self._obs = f"{self._description}\n{look}"
        return self._obs, {**self._info(), "agentgym_index": task_id}

    def step(self, action: str) -> StepResult:
        if self._task is None or self._sim is None:
            return StepResult("Call reset before step.", valid=False)
        # ScienceWorldEnv.step itself, as upstream calls it (it also asks the simulator for the look, the
        # inventory and the valid actions, which the native class skips for speed; whether later answers depend on
        # those calls was not isolated, so the profile makes them as upstream does)
        obs, _, done, infos = self._sim.step(action)
        score = int(infos["score"])
        self._history.append(action)
        self._actions = None
        if self._gold is not None:
            self._gold.observe(action)
        change, self._native = score - self._native, score
        self._obs, self._done = obs, done
        # what AgentGym's server answers (its "score", 0-100) and its client reports for the step (score / 100)
        return StepResult(obs, reward=change / 100, done=done, success=done and score >= 100, score=score / 100,
                          info={**self._info(), "agentgym_score": score, "agentgym_reward": score / 100})
