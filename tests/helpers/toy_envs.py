"""Small environments for testing the runtime itself (not registered)."""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from agentenv import Environment, StepResult, processes


class EchoEnv(Environment):
    """Remembers its task and every action, so cross-talk between sessions shows."""

    name = "echo"
    max_turns = 5
    action_hint = "any text"

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


# -- environments for the runtime's features (tests/core/test_runtime.py) ----------------------------------------------


class MetaOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    size: int = 3
    label: str = "plain"


class MetaEnv(EchoEnv):
    """Declares every piece of metadata /info serves, a third split and options."""

    name = "meta"
    version = "3"
    splits = ("train", "test", "valid")
    max_turns = 7
    success_threshold = 0.5
    action_format = "code"
    action_hint = "one SQL query"
    code_language = "sql"
    instruction = "Answer with SQL."
    max_sessions = 2
    step_timeout = 5.0
    Options = MetaOptions

    @classmethod
    def num_tasks(cls, split):
        return {"train": 6, "test": 4, "valid": 2}[split]


class ToolMetaEnv(MetaEnv):
    """A tool environment: its tools come from describe()."""

    name = "toolmeta"
    action_format = "tool"
    code_language = None

    @classmethod
    def describe(cls):
        return {**super().describe(), "tools": [{"name": "lookup", "description": "look a word up",
                                                 "parameters": {"type": "object",
                                                                "properties": {"word": {"type": "string"}}}}]}


class SharedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    n_train: int = 5
    greeting: str = "hello"


class SharedEnv(EchoEnv):
    """Counts load_shared/release_shared calls; its task counts and observations come from the shared data."""

    name = "shared"
    Options = SharedOptions
    load_delay = 0.3
    loads = 0
    releases: ClassVar[list] = []
    _count_lock = threading.Lock()

    @classmethod
    def load_shared(cls, options):
        with cls._count_lock:
            SharedEnv.loads += 1
        time.sleep(cls.load_delay)  # slow, so concurrent first requests would overlap
        return {"greeting": options.greeting, "n_train": options.n_train, "loaded_at": time.monotonic()}

    @classmethod
    def release_shared(cls, shared):
        SharedEnv.releases.append(shared)

    @classmethod
    def task_counts(cls, shared=None):
        return {"train": shared["n_train"], "test": 2}

    @classmethod
    def num_tasks(cls, split):
        raise AssertionError("task_counts(shared) is used instead")

    def reset(self, task_id, split, seed=None):
        assert isinstance(self.options, SharedOptions) and self.shared is not None, "reset before shared/options"
        obs, info = super().reset(task_id, split, seed)
        self._obs = f"{self.shared['greeting']} {obs}"
        return self._obs, {**info, "shared_id": id(self.shared), "options": self.options.model_dump()}


class CountingEnv(EchoEnv):
    """Counts resets and closes (per class); no cheap initial observation."""

    name = "counting"
    resets = 0
    closes = 0
    _count_lock = threading.Lock()

    def reset(self, task_id, split, seed=None):
        with self._count_lock:
            type(self).resets += 1
        return super().reset(task_id, split, seed)

    def close(self):
        with self._count_lock:
            type(self).closes += 1


class InitialObsEnv(CountingEnv):
    """States its first observations without a reset."""

    name = "initialobs"
    resets = 0
    closes = 0

    def initial_observation(self, task_id, split):
        return f"task {split}/{task_id} seed None: say 'finish' to win"


class SpawnEnv(EchoEnv):
    """Starts a child process per episode; "hang" blocks the step until that child dies."""

    name = "spawn"
    closes = 0
    _count_lock = threading.Lock()

    def reset(self, task_id, split, seed=None):
        obs, info = super().reset(task_id, split, seed)
        self.child = self._start_children()
        return obs, {**info, "pids": [p.pid for p in processes.children(self)]}

    def _start_children(self):
        return processes.spawn(self, ["sleep", "1000"])

    def step(self, action):
        if action == "hang":
            self.child.wait(20)  # unblocked when the runtime kills the child
            return StepResult("the child is gone")
        return super().step(action)

    def close(self):
        with self._count_lock:
            type(self).closes += 1


class SpawnTreeEnv(SpawnEnv):
    """Its child has a child of its own (a shell running sleep)."""

    name = "spawntree"
    closes = 0

    def _start_children(self):
        processes.spawn(self, ["sh", "-c", "sleep 1000 & wait"])
        return processes.spawn(self, ["sleep", "1000"])


class ThreadSpawnEnv(SpawnEnv):
    """Spawns from a helper thread of its own that ends right after (e.g. starting simulators in parallel)."""

    name = "threadspawn"
    closes = 0

    def _start_children(self):
        box = []
        helper = threading.Thread(target=lambda: box.append(processes.spawn(self, ["sleep", "1000"])))
        helper.start()
        helper.join()
        return box[0]


class SlowStepEnv(SpawnEnv):
    """A step limit of half a second, and a step ("hang") that would take far longer."""

    name = "slowstep"
    step_timeout = 0.5
    closes = 0

    def step(self, action):
        if action == "nap":  # slow, and nothing the runtime kills makes it return sooner
            time.sleep(2.0)
            return StepResult("woke up")
        return super().step(action)


class CappedEnv(EchoEnv):
    """Heavy sessions: at most two per server."""

    name = "capped"
    max_sessions = 2


# -- a two-step choice for the learning test (tests/training/test_learning.py) -------------------------------------


class ForkEnv(Environment):
    """Two doors, then two more: every ``left`` earns +0.5, ``right`` 0, and a reply that is neither costs
    0.5 (so that noise never pays better than a choice). The reward comes at the end of the second turn,
    after a long observation (mask 0) between the two replies."""

    name = "fork"
    max_turns = 2
    success_threshold = 1.0
    action_hint = "left or right"
    instruction = "Choose a door: answer left or right."
    left_pays: ClassVar[float] = 0.5
    CORRIDOR = ("You walk through the {door} door into a long corridor. The walls are bare stone, the floor is "
                "dusty and a cold draught comes from the far end. Torches burn in iron rings along the walls, "
                "every few steps, and their smoke hangs under the low ceiling. Somewhere water drips into a "
                "puddle. The corridor turns left, then right, then runs straight for a long way past old "
                "wooden benches, empty shelves and a rusty suit of armour that stands in a niche. The air "
                "grows colder as you go on, and your steps echo back from the stone. At last the corridor "
                "widens into a small round room with a worn mosaic floor, and on its far side there is a "
                "second pair of doors, one on the left and one on the right, both shut. Choose again: left "
                "or right.")

    @classmethod
    def num_tasks(cls, split):
        return {"train": 64, "test": 8}[split]

    def reset(self, task_id, split, seed=None):
        self.reward, self.turn = 0.0, 0
        self._obs = "You stand before two doors: left and right. Choose one."
        return self._obs, {}

    def step(self, action):
        door = action.strip().lower()
        valid = door in ("left", "right")
        self.reward += self.left_pays if door == "left" else 0.0 if valid else -0.5
        self.turn += 1
        if self.turn == 1:
            self._obs = self.CORRIDOR.format(door=door if valid else "wrong")
            return StepResult(self._obs, valid=valid)
        self._obs = "You are through."
        return StepResult(self._obs, reward=self.reward, done=True, valid=valid, success=self.reward >= 1.0)

    def observation(self):
        return self._obs

    def available_actions(self):
        return ["left", "right"]

    def expert_action(self):
        return "left" if self.left_pays > 0 else "right"


class FlippedForkEnv(ForkEnv):
    """The same doors with the reward's sign flipped: every ``left`` costs 0.5."""

    name = "fork_flipped"
    left_pays: ClassVar[float] = -0.5
