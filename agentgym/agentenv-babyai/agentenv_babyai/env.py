"""BabyAI (minigrid's BabyAI levels) as a text environment.

A task is a (level, seed) pair (see ``levels``); the agent acts with primitive text actions
and sees its 7x7 egocentric view described in words (see ``render``). Reward and success are
minigrid's own: ``1 - 0.9 * steps / max_steps`` when the mission is completed, else 0.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from minigrid.core.actions import Actions

from agentenv.env import Environment, Split, StepResult
from agentenv.interop.agentgym import AgentGymRoutes
from agentenv_babyai import levels, render
from agentenv_babyai.actions import CHECK, PRIMITIVES, TEXT_OF, matches, parse
from agentenv_babyai.expert import Expert

ACTION_HELP = (
    'Actions (one per turn): "turn left", "turn right", "move forward", '
    '"pick up" (the object in front of you), "drop" (what you carry, onto the empty cell in front of you), '
    '"toggle" (open or close the door in front of you; a locked door opens only while you carry a key '
    'of its color; toggling a box destroys it), "check available actions". '
    "You see up to 6 steps ahead and 3 steps to each side; walls and closed doors block your sight. "
    "To go to an object, stand next to it and face it."
)


class BabyAIEnv(Environment):
    """One BabyAI episode at a time; level objects are kept and reused across resets."""

    name: ClassVar[str] = "babyai"
    # The bot needs <= 35 steps on every task of both splits; 64 leaves an agent room to explore
    # while bounding an LLM episode. Levels' own max_steps (64..576) still apply beneath it.
    max_turns: ClassVar[int] = 64
    action_hint: ClassVar[str] = "one of: turn left, turn right, move forward, pick up, drop, toggle"
    # Any completed mission earns at least 1 - 0.9 * 64/64 = 0.1; failures earn exactly 0.
    success_threshold: ClassVar[float] = 0.05
    #: AgentGym's BabyAI server: "data_idx" picks level idx % 40 + 1 with seed idx // 40 (810 train, 90 eval
    #: items published); its client reads the running "score" as the reward
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        reset_key="data_idx", score_scale=1.0, upstream_splits={"train": (0, 810), "test": (810, 900)},
        hello="This is environment BabyAI.")

    def __init__(self) -> None:
        self._levels: dict[str, Any] = {}  # level name -> minigrid level object of this session
        self._level = None
        self._spec: levels.LevelSpec | None = None
        self._seed = 0
        self._history: list[int] = []  # minigrid actions actually executed this episode
        self._done = False
        self._obs = ""
        self._expert = Expert()
        self._viewer = render.Viewer()

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        return levels.num_tasks(split)

    def reset(self, task_id: int, split: Split, seed: int | None = None) -> tuple[str, dict[str, Any]]:
        """Build task ``task_id``. ``seed`` is ignored: the task's own seed fixes the layout and
        BabyAI's dynamics are deterministic, so there is nothing left to randomize."""
        spec, level_seed = levels.task(split, task_id)
        level = self._levels.get(spec.name)
        if level is None:
            level = self._levels[spec.name] = levels.make_level(spec)
        level.reset(seed=level_seed)
        self._level, self._spec, self._seed = level, spec, level_seed
        self._history = []
        self._done = False
        self._expert.start(spec, level_seed)
        self._obs = f"Your goal: {level.mission}\n{ACTION_HELP}\n{render.describe(level, self._viewer)}"
        info = {"level": spec.name, "seed": level_seed, "mission": level.mission, "max_steps": level.max_steps}
        return self._obs, info

    def observation(self) -> str:
        return self._obs

    def step(self, action: str) -> StepResult:
        level = self._level
        if level is None:
            return StepResult("Call reset before step.", valid=False)
        if self._done:
            return StepResult("The episode has ended.", done=True, valid=False)
        parsed = parse(action) if isinstance(action, str) else None
        if parsed is None:
            return self._no_step(f"Invalid action {action!r}. Valid actions: {', '.join(self.available_actions())}.")
        act, target = parsed
        if act == CHECK:
            return self._no_step(f"Available actions: {', '.join(self.available_actions())}.", valid=True)

        fx, fy = self._front()
        front = level.grid.get(fx, fy)
        if not matches(front, target):
            what = render.a_name(front) if front is not None else "empty floor"
            return self._no_step(f"That is not in front of you; in front of you is {what}.")
        carried_before, pos_before = level.carrying, tuple(level.agent_pos)
        door_state = (front.is_open, front.is_locked) if front is not None and front.type == "door" else None

        _, reward, terminated, truncated, _ = level.step(act)
        self._history.append(int(act))
        success = bool(terminated and reward > 0)
        self._done = bool(terminated or truncated)
        reward = float(reward) if success else 0.0

        lines = [self._feedback(act, front, carried_before, pos_before, door_state)]
        if success:
            lines.append("You completed the mission!")
        elif self._done:
            lines.append("The episode is over: " + ("you ran out of steps." if truncated else "the mission failed."))
        else:
            lines.append(render.describe(level, self._viewer))
        self._obs = "\n".join(lines)
        info = {"level": self._spec.name, "steps": level.step_count, "max_steps": level.max_steps}
        if truncated and not terminated:
            info["truncated"] = True
        return StepResult(self._obs, reward=reward, done=self._done, success=success, score=reward, info=info)

    def available_actions(self) -> list[str]:
        """Primitive actions that can change something now, plus the help action."""
        level = self._level
        if level is None or self._done:
            return []
        front = level.grid.get(*self._front())
        carrying = level.carrying
        out = ["turn left", "turn right"]
        if front is None or front.can_overlap():
            out.append("move forward")
        if front is not None and front.can_pickup() and carrying is None:
            out.append("pick up")
        if carrying is not None and front is None:
            out.append("drop")
        if front is not None and front.type in ("door", "box"):
            out.append("toggle")
        out.append(CHECK)
        return out

    def expert_action(self) -> str:
        if self._level is None or self._done:
            return "turn left"
        act = self._expert.action(self._level, self._history)
        return TEXT_OF[act] if act is not None else "turn left"

    def random_action(self, rng: random.Random) -> str:
        return rng.choice(PRIMITIVES)

    def close(self) -> None:
        self._levels.clear()
        self._level = None
        self._expert = Expert()

    # -- helpers -------------------------------------------------------------------------

    def _front(self) -> tuple[int, int]:
        ax, ay = self._level.agent_pos
        dx, dy = render.DIR_VEC[self._level.agent_dir]
        return int(ax) + dx, int(ay) + dy

    def _no_step(self, message: str, valid: bool = False) -> StepResult:
        """An action that does not reach minigrid: the world and the step count stay as they were."""
        self._obs = f"{message}\n{render.describe(self._level, self._viewer)}"
        return StepResult(self._obs, valid=valid, info={"level": self._spec.name, "steps": self._level.step_count})

    def _feedback(self, act, front, carried_before, pos_before, door_state) -> str:
        """One sentence on what the action did, so a blocked or useless action is noticed."""
        level = self._level
        if act == Actions.left:
            return "You turned left."
        if act == Actions.right:
            return "You turned right."
        if act == Actions.forward:
            if tuple(level.agent_pos) != pos_before:
                return "You moved forward."
            return f"You cannot move forward: {render.a_name(front)} is in the way."
        if act == Actions.pickup:
            if level.carrying is not None and carried_before is None:
                return f"You picked up the {render.name(level.carrying)}."
            if front is None:
                return "There is nothing in front of you to pick up."
            if carried_before is not None:
                return f"You are already carrying the {render.name(carried_before)}; drop it first."
            return f"You cannot pick up {render.a_name(front)}."
        if act == Actions.drop:
            if carried_before is None:
                return "You are not carrying anything to drop."
            if level.carrying is None:
                return f"You dropped the {render.name(carried_before)}."
            return f"You cannot drop here: {render.a_name(front)} is in front of you."
        # toggle
        if front is None:
            return "There is nothing in front of you to toggle."
        if front.type == "door":
            was_open, was_locked = door_state
            if was_locked:
                if front.is_open:
                    return f"You unlocked and opened the {front.color} door."
                return f"The {front.color} door is locked; you need to carry the {front.color} key to open it."
            return f"You {'closed' if was_open else 'opened'} the {front.color} door."
        if front.type == "box":
            inside = front.contains
            return f"You opened the {front.color} box" + (
                f"; it held {render.a_name(inside)}." if inside is not None else "; it was empty and is gone."
            )
        return "Nothing happens."
