"""BabyAI (minigrid's BabyAI levels) as a text environment.

A task is a (level, seed) pair (see ``levels``); the agent acts with primitive text actions
and sees its 7x7 egocentric view described in words (see ``render``), or, with the server
option ``action_set=agentgym``, with AgentGym's high-level actions and observations (see
``highlevel``). Reward and success are minigrid's own either way: ``1 - 0.9 * steps / max_steps``
when the mission is completed, else 0, where ``steps`` counts minigrid's primitive steps.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from minigrid.core.actions import Actions
from pydantic import BaseModel, ConfigDict, Field

from agentenv.env import Environment, Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_babyai import highlevel, levels, render
from agentenv_babyai.actions import CHECK, PRIMITIVES, TEXT_OF, matches, parse
from agentenv_babyai.expert import Expert, HighLevelExpert

ACTION_HELP = (
    'Actions (one per turn): "turn left", "turn right", "move forward", '
    '"pick up" (the object in front of you), "drop" (what you carry, onto the empty cell in front of you), '
    '"toggle" (open or close the door in front of you; a locked door opens only while you carry a key '
    'of its color; toggling a box destroys it), "check available actions". '
    "You see up to 6 steps ahead and 3 steps to each side; walls and closed doors block your sight. "
    "To go to an object, stand next to it and face it."
)


class BabyAIOptions(BaseModel):
    """Server options (``agentenv serve babyai --option action_set=agentgym``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: "primitive": minigrid's six actions and this package's view text; "agentgym": AgentGym's
    #: high-level actions (go to / pickup / go through ... <object> <n>), listed in every observation
    action_set: Literal["primitive", "agentgym"] = "primitive"
    #: a dense training signal: each action also pays this times the number of steps it took off the BabyAI
    #: bot's plan from the current state (negative when it added steps). Potential-based shaping (Ng et al.,
    #: 1999), as the maze's option: an episode's extra reward is ``progress_reward * (start plan - end plan)``,
    #: 0 at the end of a completed mission, so the best policy is unchanged; success and score stay
    #: minigrid's. The bot explores what it has not seen, so the plan is over what the episode has shown.
    #: For RL (``env_options.babyai.progress_reward=0.1``); AgentEvol's filter keeps episodes by their reward, so
    #: exploration leaves it off.
    progress_reward: float = Field(default=0.0, ge=0.0, le=1.0)


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
    #: items published, in 0..12879); its client reads the running "score" as the reward. ``--compat agentgym``
    #: serves the agentgym profile (upstream index N is its task N); ``--option action_set=agentgym`` keeps this
    #: environment's own tasks with AgentGym's kind of actions
    agentgym: ClassVar[AgentGymRoutes] = AgentGymRoutes(
        reset_key="data_idx", score_scale=1.0, upstream_splits={"train": (0, 12880), "test": (0, 12880)},
        hello="This is environment BabyAI.", options={"profile": "agentgym"})
    profiles: ClassVar[Mapping[str, str]] = MappingProxyType(
        {"agentgym": "agentenv_babyai.agentgym_profile:AgentGymBabyAIEnv"})
    Options: ClassVar[type[BaseModel]] = BabyAIOptions

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
        self._high = False  # this episode uses the agentgym action set (read from the options at reset)
        self._table: highlevel.Table | None = None  # the agentgym actions of the current state
        self._planner = HighLevelExpert()
        self._sighted: set[int] = set()  # ids of the objects this episode's agentgym observations showed
        self._plan: int | None = None  # the bot's steps to finish from the current state (progress_reward only)

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
        info = {"level": spec.name, "seed": level_seed, "mission": level.mission, "max_steps": level.max_steps}
        self._high = getattr(self.options, "action_set", "primitive") == "agentgym"
        self._plan = self._plan_length()
        if self._high:
            self._sighted = set()
            self._look()
            self._obs = f"Your goal: {level.mission}\n{self._table.description}\n{self._table.listing()}"
            info["action_set"] = "agentgym"
            return self._obs, info
        self._obs = f"Your goal: {level.mission}\n{ACTION_HELP}\n{render.describe(level, self._viewer)}"
        return self._obs, info

    def observation(self) -> str:
        return self._obs

    def step(self, action: str) -> StepResult:
        level = self._level
        if level is None:
            return StepResult("Call reset before step.", valid=False)
        if self._done:
            return StepResult("The episode has ended.", done=True, valid=False)
        if self._high:
            return self._step_high(action)
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
        progress = self._progress(success)

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
        return StepResult(self._obs, reward=reward + progress, done=self._done, success=success, score=reward,
                          info=info)

    def available_actions(self) -> list[str]:
        """Primitive actions that can change something now, plus the help action (agentgym set:
        the actions the observation lists)."""
        level = self._level
        if level is None or self._done:
            return []
        if self._high:
            return self._table.actions
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
        if self._high:
            return self._planner.action(self._level, self._table, self._bot_action, self._sighted).text
        act = self._expert.action(self._level, self._history)
        return TEXT_OF[act] if act is not None else "turn left"

    def expert_thought(self) -> str | None:
        """Agentgym set only: why the expert's next action, from what the observation shows."""
        if not self._high or self._level is None or self._done:
            return None
        return self._planner.action(self._level, self._table, self._bot_action, self._sighted).thought

    def random_action(self, rng: random.Random) -> str:
        """A primitive; with the agentgym set, any listed action but the free ``check available actions``."""
        if self._high and self._table is not None and not self._done:
            return rng.choice([a for a in self._table.actions if a != highlevel.CHECK])
        return rng.choice(PRIMITIVES)

    def close(self) -> None:
        self._levels.clear()
        self._level = None
        self._table = None
        self._expert = Expert()

    # -- the agentgym action set ------------------------------------------------------------

    def _look(self) -> None:
        """Recompute the agentgym description and action table (after anything changes the level)."""
        self._table = highlevel.build(self._level, self._viewer)
        self._sighted.update(id(s.obj) for s in self._table.seen)

    def _bot_action(self) -> int | None:
        """The BabyAI bot's next primitive for the episode so far (the high-level expert's fallback)."""
        return self._expert.action(self._level, self._history)

    def _step_high(self, action: str) -> StepResult:
        """One AgentGym action: its primitives run on the level one by one, each a minigrid step, until
        they are done or the level's episode ends; the reward is minigrid's for the steps taken."""
        level, table = self._level, self._table
        text = highlevel.normalize(action, table) if isinstance(action, str) else ""
        info: dict[str, Any] = {"level": self._spec.name, "max_steps": level.max_steps}
        if text == highlevel.CHECK or text not in table.plans:
            message = ("Actions you can take now: " + ", ".join(table.actions)
                       if text == highlevel.CHECK else table.refusals.get(text, highlevel.NOT_RECOGNIZED))
            self._obs = f"{message}\n{table.description}\n{table.listing()}"
            return StepResult(self._obs, valid=text == highlevel.CHECK,
                              info={**info, "steps": level.step_count, "primitive_steps": 0})
        reward, terminated, truncated, taken = 0.0, False, False, 0
        for act in table.plans[text]:
            pos_before = tuple(level.agent_pos)
            _, reward, terminated, truncated, _ = level.step(act)
            self._history.append(act)
            taken += 1
            if terminated or truncated or (act == highlevel.FORWARD and tuple(level.agent_pos) == pos_before):
                break  # the episode ended, or the route is blocked (it never is: routes come from the grid)
        success = bool(terminated and reward > 0)
        self._done = bool(terminated or truncated)
        reward = float(reward) if success else 0.0
        progress = self._progress(success)
        self._look()
        if success:
            self._obs = f"{self._table.description}\nThe task is completed."
        elif self._done:
            ending = "you ran out of steps." if truncated else "the mission failed."
            self._obs = f"{self._table.description}\nThe episode is over: {ending}"
        else:
            self._obs = f"{self._table.description}\n{self._table.listing()}"
        info.update(steps=level.step_count, primitive_steps=taken)
        if truncated and not terminated:
            info["truncated"] = True
        return StepResult(self._obs, reward=reward + progress, done=self._done, success=success, score=reward,
                          info=info)

    # -- helpers -------------------------------------------------------------------------

    def _progress_reward(self) -> float:
        return getattr(self.options, "progress_reward", 0.0)

    def _plan_length(self) -> int | None:
        """The bot's steps to finish from now, when the progress reward is on (it costs a few ms a step)."""
        if self._progress_reward() <= 0 or self._done:
            return None
        return self._expert.steps_to_finish(self._level, self._history)

    def _progress(self, success: bool) -> float:
        """The progress reward of the step just taken. A completed mission's plan is 0. Where the bot has no
        plan (rare: its plan broke, or the episode ended without success) the last plan length stays the
        potential and the step pays nothing, so no loop through such a state can earn a reward."""
        before = self._plan
        after = 0 if success else self._plan_length()
        if after is None:
            return 0.0
        self._plan = after
        return 0.0 if before is None else self._progress_reward() * (before - after)

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
