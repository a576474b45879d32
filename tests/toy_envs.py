"""Small environments for testing the runtime itself (not registered)."""

from __future__ import annotations

import threading
import time

from agentenv import Environment, StepResult


class EchoEnv(Environment):
    """Remembers its task and every action, so cross-talk between sessions shows."""

    name = "echo"
    max_turns = 5
    action_format = "any text"

    @classmethod
    def num_tasks(cls, split):
        return {"train": 100, "test": 10}[split]

    def reset(self, task_id, split, seed=None):
        self.task, self.split, self.seed, self.history = task_id, split, seed, []
        self._obs = f"task {split}/{task_id} seed {seed}: say 'finish' to win"
        return self._obs, {"task_id": task_id}

    def step(self, action):
        if action == "crash":
            raise RuntimeError("boom inside the environment")
        if action == "sleep":
            time.sleep(0.5)
        self.history.append(action)
        self._obs = f"task {self.task} history {'|'.join(self.history)}"
        if action == "finish":
            return StepResult(self._obs, reward=1.0, done=True, success=True, score=7.0)
        return StepResult(self._obs, valid=action != "nonsense")

    def observation(self):
        return self._obs

    def available_actions(self):
        return ["finish", "wait"]

    def expert_action(self):
        return "finish"

    def expert_thought(self):
        return f"{len(self.history)} actions so far; time to finish"


class CloseCounterEnv(EchoEnv):
    """Counts closes, to prove expiry and shutdown free environments."""

    name = "closecounter"
    closed = 0
    _lock = threading.Lock()

    def close(self):
        with CloseCounterEnv._lock:
            CloseCounterEnv.closed += 1
