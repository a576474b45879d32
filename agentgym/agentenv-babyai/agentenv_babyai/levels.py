"""The BabyAI levels we serve and the deterministic (level, seed) task lists of each split.

Levels are minigrid's own classes, run through a thin subclass that (a) skips minigrid's
image observation, which we never read and which costs ~200 us a step, (b) drops the
``print`` minigrid makes on every rejected level sample, which would spam a server's stdout,
and (c) tracks the instruction's objects after a drop from their positions instead of
rescanning the whole grid (~250 us on a 3x3-room level). None of it touches the dynamics or
the random stream, so a (level, seed) pair builds and plays exactly as in minigrid (the
tests compare both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minigrid.core.roomgrid import RoomGrid
from minigrid.envs import babyai
from minigrid.envs.babyai.core.roomgrid_level import RejectSampling, RoomGridLevel
from minigrid.envs.babyai.core.verifier import ObjDesc, SeqInstr


@dataclass(frozen=True)
class LevelSpec:
    """A BabyAI level: minigrid's class plus the kwargs of its registered gym id."""

    name: str
    cls: type[RoomGridLevel]
    kwargs: dict[str, Any] = field(default_factory=dict)


# Chosen because minigrid's BabyAI bot solves every sampled episode and its episodes stay
# short (<= 35 steps on every task of both splits), well inside BabyAIEnv.max_turns.
LEVELS: tuple[LevelSpec, ...] = (
    LevelSpec("GoToRedBallGrey", babyai.GoToRedBallGrey),
    LevelSpec("GoToRedBall", babyai.GoToRedBall),
    LevelSpec("GoToObj", babyai.GoToObj),
    LevelSpec("GoToLocal", babyai.GoToLocal),
    LevelSpec("GoToDoor", babyai.GoToDoor),
    LevelSpec("OpenDoor", babyai.OpenDoor),
    LevelSpec("PickupLoc", babyai.PickupLoc),
    LevelSpec("PutNextLocal", babyai.PutNextLocal),
    LevelSpec("UnlockLocal", babyai.UnlockLocal),
)
LEVEL_BY_NAME = {spec.name: spec for spec in LEVELS}

TRAIN_PER_LEVEL = 500
TEST_PER_LEVEL = 10
# Test seeds live far above the train range, so the splits never share a (level, seed).
TEST_SEED_OFFSET = 1_000_000


def num_tasks(split: str) -> int:
    if split == "train":
        return TRAIN_PER_LEVEL * len(LEVELS)
    if split == "test":
        return TEST_PER_LEVEL * len(LEVELS)
    raise ValueError(f"unknown split {split!r}")


def task(split: str, task_id: int) -> tuple[LevelSpec, int]:
    """(level, seed) of a task. Levels interleave, so any prefix of a split is balanced."""
    n = num_tasks(split)
    if not isinstance(task_id, int) or isinstance(task_id, bool) or not 0 <= task_id < n:
        raise IndexError(f"task_id {task_id!r} out of range for split {split!r} (0..{n - 1})")
    spec = LEVELS[task_id % len(LEVELS)]
    k = task_id // len(LEVELS)
    return spec, (TEST_SEED_OFFSET + k if split == "test" else k)


class _Fast:
    """Mixin placed before the minigrid level class in the MRO."""

    def gen_obs(self) -> None:  # we render text from the grid ourselves
        return None

    def _gen_grid(self, width: int, height: int) -> None:
        # RoomGridLevel._gen_grid verbatim, minus its print() on each rejected sample.
        while True:
            try:
                RoomGrid._gen_grid(self, width, height)
                self.gen_mission()
                self.validate_instrs(self.instrs)
            except (RecursionError, RejectSampling):
                continue
            break
        self.surface = self.instrs.surface(self)
        self.mission = self.surface

    def update_objs_poss(self, instr=None) -> None:
        # Same result as ObjDesc.find_matching_objs(env, use_location=False), which RoomGridLevel
        # calls after every drop: positions of the tracked objects still on the grid, in the
        # grid's column-major scan order (the bot pairs obj_set and obj_poss by index).
        instr = self.instrs if instr is None else instr
        if isinstance(instr, SeqInstr):
            self.update_objs_poss(instr.instr_a)
            self.update_objs_poss(instr.instr_b)
            return
        for attr in ("desc", "desc_move", "desc_fixed"):
            desc = getattr(instr, attr, None)
            if isinstance(desc, ObjDesc):
                desc.obj_poss = _positions_on_grid(self.grid, desc.obj_set)


def _positions_on_grid(grid, objs: list) -> list[tuple[int, int]]:
    out = []
    for obj in objs:
        pos = obj.cur_pos
        if pos is None:
            continue
        x, y = int(pos[0]), int(pos[1])
        if 0 <= x < grid.width and 0 <= y < grid.height and grid.grid[y * grid.width + x] is obj:
            out.append((x, y))
    out.sort()
    return out


_FAST_CLASSES: dict[type, type] = {spec.cls: type(spec.cls.__name__, (_Fast, spec.cls), {}) for spec in LEVELS}


def make_level(spec: LevelSpec) -> RoomGridLevel:
    """A fresh level object; call ``reset(seed=...)`` before use."""
    return _FAST_CLASSES[spec.cls](**spec.kwargs)
