"""ScienceWorld as AgentGym's server plays it (``--option profile=agentgym``): its index space, look and scores.

What is reproduced, from the public code of AgentGym's ``agentenv-sciworld`` server (read, not copied):

- **the index space**: every variation of every task type but the seven AgentGym leaves out (grow plant, grow
  fruit, both inclined-plane types and the three genetics types: ids 5-1, 5-2, 9-1..9-3, 10-1, 10-2), in
  ScienceWorld's own task order (``scienceworld.constants.ID2TASK``), variations in order: 4,639 tasks, index
  N the N-th (AgentEval's 200 items are indices 536-4336);
- **the reset**: the variation loaded without simplifications, the task description, then ``look around``
  sent as a real step (it counts as a move), whose answer is the first observation after the description;
- **a step**: the action goes to the simulator as given (nothing refused, nothing added); reward and score
  are the simulator's raw ones (score 0-100, -100 on a failed task, the reward its change, negative too);
  the episode ends where ScienceWorld's Python API ends it: the task completed or failed, or more than 100
  moves (its default step limit, which AgentGym's server keeps);
- **the turn limit**: AgentGym evaluates ScienceWorld for 30 rounds (its ``max_round``); its server has none.

The simulator is the same one (``scienceworld`` 1.2.3's jar): observations are the simulator's own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from scienceworld.constants import ID2TASK

from agentenv import Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_sciworld import tasks
from agentenv_sciworld.env import SciWorldEnv

#: the task types AgentGym's server leaves out
EXCLUDED = frozenset({"5-1", "5-2", "9-1", "9-2", "9-3", "10-1", "10-2"})
STEP_LIMIT = 100  # ScienceWorldEnv's default envStepLimit, which AgentGym's server does not change


def games(variations: dict[str, tuple[int, int, int]] | None = None) -> list[tasks.Task]:
    """AgentGym's index space: (type, variation) for every variation of every kept type, in ScienceWorld's order."""
    variations = tasks.VARIATIONS if variations is None else variations
    return [tasks.Task(task_id, name, v) for task_id, name in ID2TASK.items() if task_id not in EXCLUDED
            for v in range(variations[name][0])]


class AgentGymSciWorldEnv(SciWorldEnv):
    """ScienceWorld, task N being AgentGym's index N (module docstring)."""

    profile: ClassVar[str] = "agentgym"
    version: ClassVar[str] = "agentgym-1"
    max_turns: ClassVar[int] = 30  # AgentGym's evaluation rounds
    # check_tasks: power-component and find-living-thing, variation 0 (the expert: 8 and 10 steps)
    agentgym: ClassVar[AgentGymRoutes] = dataclasses.replace(
        SciWorldEnv.agentgym, index_order=("test",), options={}, server_truncates=False, check_tasks=(1396, 2936))

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
        sim = self._load(task, gold=False)
        self._task, self._gold, self._actions, self._done = task, None, None, False
        self._description = str(sim.get_task_description())
        look, score, _ = sim.act("look around")  # a real step upstream
        self._history, self._native = ["look around"], score
        self._obs = f"{self._description}\n{look}"
        return self._obs, {**self._info(), "agentgym_index": task_id}

    def step(self, action: str) -> StepResult:
        if self._task is None or self._sim is None:
            return StepResult("Call reset before step.", valid=False)
        obs, score, completed = self._sim.act(action)
        self._history.append(action)
        self._actions = None
        if self._gold is not None:
            self._gold.observe(action)
        change, self._native = score - self._native, score
        done = completed or score < 0 or self._sim.get_num_moves() > STEP_LIMIT
        self._obs, self._done = obs, done
        # what AgentGym's server answers (its "score", 0-100) and its client reports for the step (score / 100)
        return StepResult(obs, reward=change / 100, done=done, success=done and score >= 100, score=score / 100,
                          info={**self._info(), "agentgym_score": score, "agentgym_reward": score / 100})
