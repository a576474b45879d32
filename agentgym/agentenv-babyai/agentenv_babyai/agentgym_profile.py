"""The BabyAI of AgentGym (``--option profile=agentgym``): upstream index N played as AgentGym's server plays it.

AgentGym's BabyAI server (``agentenv-babyai``, minigrid 2.3 under ``minigrid<2.5``) serves 40 BabyAI levels;
index N is level ``N % 40`` of its list with seed ``N // 40``. What is reproduced, from its public code (read,
not copied; this module is written from those facts), on the project's minigrid 3.2:

- **the levels**: its 40 gym ids, built from minigrid's classes with the keyword arguments those ids had in
  minigrid 2.3 (``GoToObjS6-v0`` was a 4-cell room there; minigrid 3 renamed the id and made the room 6);
- **the layout and mission of a seed**: upstream builds a fresh level for every reset and resets it twice with
  the seed (once in its wrapper's constructor, once in the server's reset). Minigrid 2.3's level generator
  keeps the ``locked_room`` of an earlier attempt when the next attempt adds none, and for the levels without
  implicit unlocking (Synth, SynthLoc, SynthSeq) the missions it accepts depend on that stale room; minigrid
  3.2 forgets it before every attempt. The levels here keep it as 2.3 does (:class:`_KeepsLockedRoom`), so
  grid, agent and mission agree with minigrid 2.3 (checked on all 40 levels, seeds 0..99, and every
  AgentEval and AgentTraj item); the mission then reads "and" for "then" and "after you", as upstream's does;
- **the observation** (:func:`look`): objects read from minigrid's encoded 7x7 image (walls included in the
  scan, out-of-grid cells as walls, negative coordinates skipped), sorted by Manhattan distance, numbered
  per name in that order, the nearest wall or box straight ahead, what is carried;
- **the actions and their primitives**: upstream's breadth-first search, quirks included (a closed or locked
  door is no obstacle, balls, keys, boxes and walls in view are, the search stays in a window around the
  view, a state's parent is the last one that queued it), and its numbering (an unreachable object leaves
  no number for pickup and go to), its refusals word for word;
- **a step**: ``lower()`` and ``strip()`` of the action, any text containing ``check`` lists the actions, an
  action not offered answers its refusal (or ``The action is not recognized. Please check valid actions.``);
  an offered one runs its primitives until one changes nothing in the image; the reward is minigrid's
  ``1 - 0.9 * steps / max_steps`` of the last primitive, kept until the next offered action (upstream
  repeats it); the episode ends when minigrid says the mission is done with a reward above 0.5 (a later
  success is "The task is completed." and goes on); minigrid's own step limit is ignored, as upstream's does;
- **the turn limit**: AgentGym evaluates babyai for 20 rounds (its ``max_round``); its server has none.

Tasks: both splits are upstream's index space (AgentEval's 90 items lie in 1804..12875, AgentTraj's 810 in
0..11155, disjoint): ``test`` indices 0..12879 (seeds 0..321 of each level), ``train`` 0..11159 (seeds
0..278); task N is upstream index N in either.
"""

from __future__ import annotations

import dataclasses
import random
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from minigrid.core.constants import DIR_TO_VEC, IDX_TO_COLOR, IDX_TO_OBJECT
from minigrid.envs import babyai
from minigrid.envs.babyai.core.verifier import AfterInstr, AndInstr, BeforeInstr
from minigrid.minigrid_env import MiniGridEnv

from agentenv import Environment, Split, StepResult
from agentenv_babyai import levels
from agentenv_babyai.env import BabyAIEnv
from agentenv_babyai.expert import Advice, Expert, HighLevelExpert
from agentenv_babyai.highlevel import Seen

#: upstream's level list, in its order (index N plays entry N % 40): gym id, minigrid class, its kwargs in
#: minigrid 2.3
LEVELS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("BabyAI-GoToRedBallGrey-v0", "GoToRedBallGrey", {}),
    ("BabyAI-GoToRedBall-v0", "GoToRedBall", {}),
    ("BabyAI-GoToRedBallNoDists-v0", "GoToRedBallNoDists", {}),
    ("BabyAI-GoToObjS6-v0", "GoToObj", {"room_size": 4}),
    ("BabyAI-GoToLocalS8N7-v0", "GoToLocal", {"room_size": 8, "num_dists": 7}),
    ("BabyAI-GoToObjMazeS7-v0", "GoTo", {"num_dists": 1, "room_size": 7}),
    ("BabyAI-GoToImpUnlock-v0", "GoToImpUnlock", {}),
    ("BabyAI-GoToSeqS5R2-v0", "GoToSeq", {"room_size": 5, "num_rows": 2, "num_cols": 2, "num_dists": 4}),
    ("BabyAI-GoToRedBlueBall-v0", "GoToRedBlueBall", {}),
    ("BabyAI-GoToDoor-v0", "GoToDoor", {}),
    ("BabyAI-GoToObjDoor-v0", "GoToObjDoor", {}),
    ("BabyAI-Open-v0", "Open", {}),
    ("BabyAI-OpenRedDoor-v0", "OpenRedDoor", {}),
    ("BabyAI-OpenDoorLoc-v0", "OpenDoor", {"select_by": "loc"}),
    ("BabyAI-OpenRedBlueDoorsDebug-v0", "OpenTwoDoors", {"first_color": "red", "second_color": "blue", "strict": True}),
    ("BabyAI-OpenDoorsOrderN4Debug-v0", "OpenDoorsOrder", {"debug": True, "num_doors": 4}),
    ("BabyAI-Pickup-v0", "Pickup", {}),
    ("BabyAI-UnblockPickup-v0", "UnblockPickup", {}),
    ("BabyAI-PickupLoc-v0", "PickupLoc", {}),
    ("BabyAI-PickupDistDebug-v0", "PickupDist", {"debug": True}),
    ("BabyAI-PickupAbove-v0", "PickupAbove", {}),
    ("BabyAI-PutNextLocalS6N4-v0", "PutNextLocal", {"room_size": 6, "num_objs": 4}),
    ("BabyAI-PutNextS7N4Carrying-v0", "PutNext", {"room_size": 7, "objs_per_room": 4, "start_carrying": True}),
    ("BabyAI-Unlock-v0", "Unlock", {}),
    ("BabyAI-UnlockLocalDist-v0", "UnlockLocal", {"distractors": True}),
    ("BabyAI-KeyInBox-v0", "KeyInBox", {}),
    ("BabyAI-UnlockPickupDist-v0", "UnlockPickup", {"distractors": True}),
    ("BabyAI-BlockedUnlockPickup-v0", "BlockedUnlockPickup", {}),
    ("BabyAI-UnlockToUnlock-v0", "UnlockToUnlock", {}),
    ("BabyAI-ActionObjDoor-v0", "ActionObjDoor", {}),
    ("BabyAI-FindObjS7-v0", "FindObjS5", {"room_size": 7}),
    ("BabyAI-KeyCorridorS6R3-v0", "KeyCorridor", {"room_size": 6, "num_rows": 3}),
    ("BabyAI-OneRoomS20-v0", "OneRoomS8", {"room_size": 20}),
    ("BabyAI-MoveTwoAcrossS8N9-v0", "MoveTwoAcross", {"room_size": 8, "objs_per_room": 9}),
    ("BabyAI-SynthS5R2-v0", "Synth", {"room_size": 5, "num_rows": 2}),
    ("BabyAI-SynthLoc-v0", "SynthLoc", {}),
    ("BabyAI-SynthSeq-v0", "SynthSeq", {}),
    ("BabyAI-MiniBossLevel-v0", "MiniBossLevel", {}),
    ("BabyAI-BossLevel-v0", "BossLevel", {}),
    ("BabyAI-BossLevelNoUnlock-v0", "BossLevelNoUnlock", {}),
)
#: seeds per level of each split (task N: level N % 40, seed N // 40)
SEEDS = {"test": 322, "train": 279}
MAX_TURNS = 20
LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE = 0, 1, 2, 3, 4, 5
CHECK = "check available actions"
NOT_RECOGNIZED = "The action is not recognized. Please check valid actions."
NO_CHANGE = "No change in state."
COMPLETED = "\n The task is completed."
#: names whose cell a route may not enter (upstream tests the object's name for these words)
_BLOCKING = ("wall", "box", "lava", "ball", "key")
_SEEN_TYPES = ("door", "key", "ball", "box", "goal", "lava", "wall")
_STATES = {0: "open", 1: "closed", 2: "locked"}

RULES = (
    "You are in a BabyAI grid world and must accomplish the goal you are given. Each turn you see the objects in "
    "front of you (numbered per name, nearest first) and the actions you can take now. The actions are: turn "
    "left, turn right, move forward, go to <object> <n>, pickup <object> <n>, drop, go through <open door> <n>, "
    "toggle and go through <closed or locked door> <n> (a locked door opens only while you carry a key of its "
    "color), toggle (a door right in front of you), check available actions. Answer in this form:\n"
    "Thought:\n<what you think>\n\nAction:\n<one action from the list>"
)


class _KeepsLockedRoom:
    """Mixin before a minigrid level class: minigrid 2.3's level generation, which keeps ``locked_room`` from
    an earlier attempt (minigrid 3.2 sets it to None before each one; that assignment is ignored here), and
    no print on a rejected sample."""

    @property
    def locked_room(self):
        return self.__dict__.get("_kept_locked_room")

    @locked_room.setter
    def locked_room(self, room) -> None:
        if room is not None:
            self.__dict__["_kept_locked_room"] = room

    _gen_grid = levels._Fast._gen_grid
    gen_obs = MiniGridEnv.gen_obs  # upstream reads minigrid's image


_CLASSES = {cls: type(cls, (_KeepsLockedRoom, getattr(babyai, cls)), {}) for _, cls, _ in LEVELS}


def build_level(index: int):
    """The level of upstream index ``index`` as upstream's reset leaves it: a fresh object reset twice with the
    seed; with the observation of the second reset."""
    _, cls, kwargs = LEVELS[index % len(LEVELS)]
    level = _CLASSES[cls](**kwargs)
    level.reset(seed=index // len(LEVELS))
    obs, _ = level.reset(seed=index // len(LEVELS))
    return level, obs["image"]


def mission_text(mission: str) -> str:
    """The goal as upstream's server words it."""
    return mission.replace("then", "and").replace("after you", "and")


# -- upstream's reading of a state ------------------------------------------------------------------------------


@dataclasses.dataclass
class View:
    """One state as upstream's server reads it: its paragraph, its actions (text -> minigrid primitives, in
    upstream's order), the refusals of actions it names but does not offer, and the objects it describes."""

    description: str
    plans: dict[str, list[int]]
    refusals: dict[str, str]
    seen: list[Seen]
    #: (verb, cell) -> the offered action doing that verb on the object at the cell (for the expert)
    targets: dict[tuple[str, tuple[int, int]], str]

    @property
    def actions(self) -> list[str]:
        return list(self.plans)

    def listing(self) -> str:
        return "\nAvailable actions: [" + ", ".join(f'"{a}"' for a in self.plans) + "]"

    def action_for(self, verb: str, seen: Seen) -> str | None:
        return self.targets.get((verb, seen.pos))


def _window(pos: np.ndarray, f: np.ndarray, r: np.ndarray, size: int) -> tuple[range, range]:
    """The cells upstream's route search may enter: a window computed from the view's corner (it reaches
    one cell behind the agent in some headings)."""
    corner = pos + f * (size - 1) - r * (size // 2)
    far = corner + size * (r - f)
    return tuple(range(far[k], corner[k] + 1) if far[k] < corner[k] else range(corner[k], far[k])  # type: ignore
                 for k in (0, 1))


def find_path(start: tuple, heading: int, goal: tuple, blocking: list[tuple], window: tuple[range, range],
              arrive: bool) -> list[int] | None:
    """Upstream's breadth-first search over (cell, heading): forward, then left, then right; a state is marked
    when taken from the queue (so the queue may hold it twice, and its parent is the last state that queued
    it); a cell is refused if outside ``window`` or holding a blocking object, tested only against the list of
    things in view (``blocking`` holds, per thing, its cell and whether it blocks). ``arrive``: stand on
    ``goal``; otherwise face it."""
    start = (int(start[0]), int(start[1]))
    goal = (int(goal[0]), int(goal[1]))
    xs, ys = window
    parent: dict[tuple, tuple] = {}
    taken: set[tuple] = set()
    queue = deque([(start, heading)])
    while queue:
        state = queue.popleft()
        taken.add(state)
        (x, y), d = state
        dx, dy = DIR_TO_VEC[d]
        if (x, y) == goal if arrive else (goal[0] - x, goal[1] - y) == (dx, dy):
            path = []
            while state != (start, heading):
                state, act = parent[state]
                path.append(act)
            return path[::-1]
        for act in (FORWARD, LEFT, RIGHT):
            nxt = ((x + int(dx), y + int(dy)), d) if act == FORWARD else ((x, y), (d + (1 if act == RIGHT else -1)) % 4)
            if blocking and (nxt[0][0] not in xs or nxt[0][1] not in ys or nxt in taken
                             or any(cell == nxt[0] and blocks for cell, blocks in blocking)):
                continue
            queue.append(nxt)
            parent[nxt] = (state, act)
    return None


def look(level, image: np.ndarray) -> View:
    """Upstream's paragraph and action table for the level's state (``image``: minigrid's encoded view)."""
    pos = np.array(level.agent_pos)
    d = int(level.agent_dir)
    f, r = DIR_TO_VEC[d], DIR_TO_VEC[(d + 1) % 4]
    size = level.agent_view_size
    corner = pos + f * (size - 1) - r * (size // 2)
    things, barriers = [], []  # things: (name, cell, distance); barriers: (type, distance ahead, cell)
    for j in range(size):
        for i in range(size):
            cell = corner - f * j + r * i
            cx, cy = int(cell[0]), int(cell[1])
            dist = abs(int(pos[0]) - cx) + abs(int(pos[1]) - cy)
            if cx < 0 or cy < 0 or dist == 0:
                continue
            kind = IDX_TO_OBJECT[int(image[i, j, 0])]
            if kind in _SEEN_TYPES:
                color = IDX_TO_COLOR[int(image[i, j, 1])]
                name = f"{color} {_STATES[int(image[i, j, 2])]} door" if kind == "door" else f"{color} {kind}"
                things.append((name, (cx, cy), dist))
            if kind in ("box", "wall"):
                rel = (cx - int(pos[0]), cy - int(pos[1]))
                if f[0] * rel[1] - f[1] * rel[0] == 0:
                    barriers.append((kind, int(f[0] * rel[0] + f[1] * rel[1]), (cx, cy)))
    things.sort(key=lambda t: t[2])
    barriers.sort(key=lambda b: b[1])

    seen: list[Seen] = []
    if things:
        text = "In front of you in this room, you can see several objects: "
        counts: dict[str, int] = {}
        for name, (cx, cy), _ in things:
            if "wall" in name:
                continue
            rel = (cx - int(pos[0]), cy - int(pos[1]))
            ahead, right = int(f[0] * rel[0] + f[1] * rel[1]), int(r[0] * rel[0] + r[1] * rel[1])
            if right == 0:
                where = f"right in front of you {ahead} steps away. "
            else:
                side = "right" if right > 0 else "left"
                where = f"{ahead} steps in front of you and {abs(right)} steps to your {side}. "
            counts[name] = counts.get(name, 0) + 1
            text += f"There is a {name} {counts[name]} {where} "
            seen.append(Seen(level.grid.get(cx, cy), name, f"{name} {counts[name]}", (cx, cy), ahead, right))
    else:
        text = "You cannot see any objects within sight."
    text += "The room has walls around you. "
    if barriers:
        text += f"You are facing a {barriers[0][0]} {barriers[0][1]} steps away. "
    carrying = level.carrying
    text += f"You are carrying a {carrying.color} {carrying.type}." if carrying else "You are not carrying anything."

    plans: dict[str, list[int]] = {"turn left": [LEFT], "turn right": [RIGHT]}
    refusals: dict[str, str] = {}
    targets: dict[tuple[str, tuple[int, int]], str] = {}
    start = (int(pos[0]), int(pos[1]))
    window = _window(pos, f, r, size)
    blocking = [(cell, any(w in name for w in _BLOCKING)) for name, cell, _ in things]
    blocking += [(cell, True) for _, _, cell in barriers]  # upstream searches both lists

    def route(cell: tuple[int, int], arrive: bool = False) -> list[int] | None:
        return find_path(start, d, cell, blocking, window, arrive)

    def numbered(verb: str, counts: dict[str, int], name: str) -> str:
        """The next number of ``name`` for ``verb``, counting only the offered ones (upstream's rule)."""
        if f"{verb}{name} 1" not in plans:
            counts[name] = 1
        else:
            counts[name] += 1
        return f"{verb}{name} {counts[name]}"

    def unnumbered(verb: str, counts: dict[str, int], name: str) -> str:
        return f"{verb}{name} 1" if f"{verb}{name} 1" not in plans else f"{verb}{name} {counts[name] + 1}"

    if not barriers or barriers[0][1] > 1:
        plans["move forward"] = [FORWARD]
    else:
        refusals["move forward"] = "There is a barrier in front of you, you can't move forward."

    if carrying is None:
        counts = {}
        for name, cell, _ in things:
            if "wall" in name or "door" in name or "goal" in name:
                continue
            path = route(cell)
            if path is not None:
                action = numbered("pickup ", counts, name)
                plans[action] = path + [PICKUP]
                targets.setdefault(("pickup ", cell), action)
            else:
                action = unnumbered("pickup ", counts, name)
                refusals[action] = f"You cannot pickup {action[len('pickup '):]}, as there is no path leading to it."

    if carrying is not None:
        front = (start[0] + int(f[0]), start[1] + int(f[1]))
        if any(cell == front and any(w in name for w in _BLOCKING) for name, cell, _ in things):
            refusals["drop"] = "You cannot drop the object, as there is already an object in front of you."
        else:
            plans["drop"] = [DROP]
    else:
        refusals["drop"] = "You cannot drop the object, as you are not carrying anything."

    doors: dict[str, int] = {}
    for name, cell, _ in things:
        if "door" in name:
            doors[name] = doors.get(name, 0) + 1
        label = f"{name} {doors.get(name, 0)}"
        if "open door" in name:
            path = route(cell, arrive=True)
            if path is not None:
                plans[f"go through {label}"] = path
                targets[("go through ", cell)] = f"go through {label}"
            else:
                refusals[f"go through {label}"] = f"You cannot go through {label}, as there is no path leading to it."
        locked = "locked door" in name
        if locked and (carrying is None or carrying.type != "key"):
            refusals[f"toggle and go through {label}"] = \
                f"You cannot toggle and go through {label}, as you are not carrying a key."
            continue
        if locked and carrying.color != name.split(" ")[0]:
            refusals[f"toggle and go through {label}"] = (
                f"You cannot toggle and go through {label}, as the color of the key you are carrying does not "
                "match the color of door.")
            continue
        if "closed door" in name or locked:
            path = route(cell)
            if path is not None:
                plans[f"toggle and go through {label}"] = path + [TOGGLE, FORWARD]
                targets[("toggle and go through ", cell)] = f"toggle and go through {label}"
            else:  # upstream writes its whole count of doors here
                refusals[f"toggle and go through {label}"] = \
                    f"You cannot toggle and go through {name} {doors}, as there is no path leading to it."
            if path == []:
                plans["toggle"] = [TOGGLE]
            if not locked:
                refusals[f"go through {label}"] = \
                    f"You cannot go through {label}, as it is closed. You should toggle it first."

    for name, cell, _ in things:
        if "goal" in name:
            path = route(cell, arrive=True)
            if path is not None:
                plans["go to goal"] = path
            else:
                refusals["go to goal"] = "You cannot go to the goal, as there is no path leading to it."

    counts = {}
    for name, cell, _ in things:
        if "wall" in name or "goal" in name:
            continue
        path = route(cell)
        if path is not None:
            action = numbered("go to ", counts, name)
            plans[action] = path
            targets.setdefault(("go to ", cell), action)
        else:
            action = unnumbered("go to ", counts, name)
            refusals[action] = f"You cannot go to {action[len('go to '):]}, as there is no path leading to it."

    plans[CHECK] = []
    return View(text, plans, refusals, seen, targets)


# -- the environment ----------------------------------------------------------------------------------------------


class _Focus:
    """The level as the expert should read it: its current part of a sequenced mission as ``instrs``."""

    def __init__(self, level, instr) -> None:
        self._level, self.instrs = level, instr

    def __getattr__(self, name: str) -> Any:
        return getattr(self._level, name)


def current_part(instr):
    """The part of a mission still to do: the first unfinished action of an and / then / after you."""
    while isinstance(instr, (AndInstr, BeforeInstr, AfterInstr)):
        first, second = (instr.instr_b, instr.instr_a) if isinstance(instr, AfterInstr) else \
            (instr.instr_a, instr.instr_b)
        done_first = (instr.b_done if isinstance(instr, AfterInstr) else instr.a_done) == "success"
        instr = second if done_first else first
    return instr


class _Explorer(HighLevelExpert):
    """The native agentgym expert, exploring with upstream's actions: where nothing the goal needs is in sight,
    the offered action that takes the most of the BabyAI bot's own next moves at once."""

    def _explore(self, table: View, bot: Callable[[], str | None]) -> Advice:  # type: ignore[override]
        return Advice(bot() or "turn left", "What my goal needs is not in sight or not reachable yet, so I go on "
                                            "searching for it.")


LOOKAHEAD = 40  # the bot's moves an exploring action is matched against


class AgentGymBabyAIEnv(Environment):
    """AgentGym's BabyAI: upstream index N, level N % 40 with seed N // 40, as its server plays it (module
    docstring)."""

    name = "babyai"
    profile = "agentgym"
    version = "agentgym-1"
    #: AgentGym evaluates babyai for 20 rounds (its max_round); its server has no limit of its own
    max_turns = MAX_TURNS
    #: upstream ends the episode only on a success whose reward is above 0.5
    success_threshold = 0.5
    instruction = "You are an exploration master that wants to finish every goal you are given."
    action_hint = "one of the available actions listed in the observation, e.g. go to red ball 1"
    agentgym = dataclasses.replace(BabyAIEnv.agentgym, index_order=("test",), options={}, rules=RULES,
                                   server_truncates=False, check_tasks=(0, 89))

    def __init__(self) -> None:
        self._level = None
        self._view: View | None = None
        self._image: np.ndarray | None = None
        self._obs = ""
        self._reward = 0.0
        self._done = False
        self._history: list[int] = []
        self._index = 0
        self._bot = Expert()
        self._planner = _Explorer()
        self._sighted: set[int] = set()

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in SEEDS:
            raise ValueError(f"unknown split {split!r}; expected one of {sorted(SEEDS)}")
        return SEEDS[split] * len(LEVELS)

    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        n = self.num_tasks(split)
        if not isinstance(task_id, int) or isinstance(task_id, bool) or not 0 <= task_id < n:
            raise IndexError(f"babyai (agentgym) {split} has indices 0..{n - 1}, not {task_id!r}")
        self._level, self._image = build_level(task_id)
        self._index, self._reward, self._done, self._history = task_id, 0.0, False, []
        self._bot.start(levels.LevelSpec(LEVELS[task_id % len(LEVELS)][0], type(self._level)), task_id // len(LEVELS),
                        build=lambda: build_level(task_id)[0])
        self._sighted = set()
        self._see()
        self._obs = self.agentgym.with_rules(
            f"Your goal: {mission_text(self._level.mission)}\n{self._view.description}{self._view.listing()}")
        gym_id = LEVELS[task_id % len(LEVELS)][0]
        return self._obs, {"task_id": task_id, "split": split, "agentgym_index": task_id, "level": gym_id,
                           "seed": task_id // len(LEVELS), "mission": self._level.mission,
                           "max_steps": int(self._level.max_steps)}

    def _see(self) -> None:
        self._view = look(self._level, self._image)
        self._sighted.update(id(s.obj) for s in self._view.seen)

    def step(self, action: str) -> StepResult:
        if self._level is None:
            return StepResult("Call reset before step.", valid=False)
        if self._done:
            return StepResult("The task is over.", done=True, valid=False)
        view, level = self._view, self._level
        text = str(action).lower().strip()
        info: dict[str, Any] = {"level": LEVELS[self._index % len(LEVELS)][0]}
        valid = True
        if "check" in text:
            state = "You can take the following actions: " + ", ".join(view.plans)
        elif text not in view.plans or not view.plans[text]:
            valid = text in view.plans
            state = NO_CHANGE if text == "" or valid else view.refusals.get(text, NOT_RECOGNIZED)
        else:
            reward, terminated = 0.0, False
            for act in view.plans[text]:
                obs, reward, terminated, _, _ = level.step(act)
                self._history.append(act)
                changed = bool((obs["image"] != self._image).any())
                if not changed:
                    break
                self._image = obs["image"]
            self._reward = float(reward)
            self._done = bool(terminated) and self._reward > 0.5
            self._see()
            state = self._view.description + (COMPLETED if terminated else "")
        self._obs = state + self._view.listing()
        info.update(steps=int(level.step_count), max_steps=int(level.max_steps), agentgym_reward=self._reward)
        return StepResult(self._obs, reward=self._reward, done=self._done, success=self._done,
                          score=self._reward, valid=valid, info=info)

    def observation(self) -> str:
        return self._obs

    def available_actions(self) -> list[str]:
        return [] if self._view is None or self._done else self._view.actions

    def random_action(self, rng: random.Random) -> str:
        """Any listed action but the free ``check available actions``."""
        return rng.choice([a for a in self._view.actions if a != CHECK])

    def _advice(self) -> Advice:
        focus = _Focus(self._level, current_part(self._level.instrs))
        return self._planner.action(focus, self._view, self._explore, self._sighted)

    def _explore(self) -> str | None:
        """The offered action whose primitives are the longest start of the bot's next moves."""
        ahead = self._bot.lookahead(self._level, self._history, LOOKAHEAD)
        fits = [(len(p), text) for text, p in self._view.plans.items() if p and p == ahead[:len(p)]]
        return max(fits, key=lambda f: f[0])[1] if fits else None

    def expert_action(self) -> str:
        """The native agentgym expert's plan (what the goal names, in sight: go to / pickup / open / put next;
        otherwise the BabyAI bot's move), on upstream's actions, one part of a sequenced goal at a time."""
        if self._level is None or self._done:
            return "turn left"
        return self._advice().text

    def expert_thought(self) -> str | None:
        if self._level is None or self._done:
            return None
        return self._advice().thought
