"""The ``maze`` environment: LMRL-Gym-style navigation of a grid maze seen one cell at a time.

The agent is told its position, the goal and which of the four neighbouring cells are walls,
never the whole map, so it must remember where it has been (partial observability is the point
of the LMRL-Gym maze task).
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentenv import Environment, Split, StepResult
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_maze.generator import MAX_DIST, MOVES, NUM_TASKS, Cell, MazeTask, check_task_id, generate

ACTIONS = [f"move {d}" for d in MOVES]
# "move up", "Up.", "go left", "Action: move right", "`down`" ...
_ACTION_RE = re.compile(r"^(?:action\s*:\s*)?(?:(?:move|go)\s+)?(up|down|left|right)$")
_STRIP = " \t\r\n\"'`*.!?,;:()[]{}<>"
_WALL_WORDS = {"up": "above you", "down": "below you", "left": "to your left", "right": "to your right"}
#: where a move came from, for the expert's thought: after "move down" you came from above
_CAME_FROM = {"up": "below", "down": "above", "left": "the right", "right": "the left"}


def parse_action(action: str) -> str | None:
    """The direction an action names, or None; tolerant of case, spacing and punctuation."""
    text = " ".join(action.lower().split()).strip(_STRIP)
    m = _ACTION_RE.match(text)
    return m.group(1) if m else None


def goal_directions(pos: Cell, goal: Cell) -> list[str]:
    """Where ``goal`` lies seen from ``pos``: the vertical then the horizontal direction, each only when
    the goal is off that axis ([] at the goal). The expert's thought states it; the audit checks it."""
    (r, c), (gr, gc) = pos, goal
    return [w for w in ("down" if gr > r else "up" if gr < r else "", "right" if gc > c else "left" if gc < c else "")
            if w]


def _join(words: list[str], conj: str) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" {conj} " + words[-1]


class MazeOptions(BaseModel):
    """Server options (``agentenv serve maze --option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: a dense training signal: each move also pays this times the shortest-path distance it gained
    #: (negative when it lost ground, 0 into a wall). Potential-based shaping (Ng et al., 1999): an
    #: episode's extra reward is ``progress_reward * (start distance - end distance)``, so the best
    #: policy is unchanged; success and score stay 1/0.
    progress_reward: float = Field(default=0.0, ge=0.0, le=1.0)


class MazeEnv(Environment):
    """Reach the goal cell of a maze with ``move up/down/left/right``.

    Reward 1.0 (and ``success``, ``score`` 1.0) on the step that reaches the goal, 0 otherwise,
    so an episode sums to 0 or 1 (plus the ``progress_reward`` option's shaping). Walking into a
    wall is a *valid* move that costs a turn and
    leaves the position unchanged (the observation says so): it is a legal move in the game,
    not a malformed action. Only text that names no direction is ``valid=False``.
    ``max_turns`` is twice the longest shortest path of any task, so the expert always has room.
    ``seed`` is ignored: a task id fixes the maze, start and goal.
    """

    name = "maze"
    Options = MazeOptions
    max_turns = 2 * MAX_DIST
    #: AgentGym's LMRL-Gym server: /maze/..., the task index is the "game" (26 start positions upstream)
    #: (its 26th index, the goal cell, fails to reset upstream); ``--compat agentgym`` serves the agentgym profile
    agentgym = AgentGymRoutes(
        item_prefix="lmrlgym_maze", prefix="/maze", reset_key="game",
        upstream_splits={"train": (0, 25), "test": (0, 25)}, options={"profile": "agentgym"},
        has_close=False, hello="This is environment LMRL-Gym.")
    profiles = MappingProxyType({"agentgym": "agentenv_maze.agentgym_profile:AgentGymMazeEnv"})
    action_hint = "one of: move up, move down, move left, move right"

    def __init__(self) -> None:
        self._task: MazeTask | None = None
        self._pos: Cell = (0, 0)
        self._done = False
        self._last_move: str | None = None  # direction of the last move that changed the position
        self._obs = ""

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        check_task_id(0, split)  # validates the split name
        return NUM_TASKS[split]

    # -- episode ---------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split = "train", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        task = generate(split, task_id)  # IndexError for an out-of-range id
        self._task, self._pos, self._done, self._last_move = task, task.start, False, None
        self._obs = self._instruction(task) + "\n\n" + self._where()
        info = {
            "task_id": task_id,
            "split": split,
            "size": [task.height, task.width],
            "start": list(task.start),
            "goal": list(task.goal),
            "shortest_path": task.dist_to_goal[task.start],
        }
        return self._obs, info

    def step(self, action: str) -> StepResult:
        task = self._require_task()
        if self._done:
            return StepResult(
                "The episode is over: you already reached the goal.", valid=False, done=True, success=True, score=1.0
            )
        direction = parse_action(action)
        if direction is None:
            self._obs = (
                f"Invalid action {action.strip()[:60]!r}. Reply with exactly one of: {', '.join(ACTIONS)}.\n"
                + self._where()
            )
            return StepResult(self._obs, valid=False, info={"position": list(self._pos)})
        dr, dc = MOVES[direction]
        nxt = (self._pos[0] + dr, self._pos[1] + dc)
        hit_wall = nxt not in task.open_cells
        if hit_wall:
            self._obs = f"You hit a wall moving {direction} and did not move. " + self._where()
        else:
            progress = self._progress_reward() * (task.dist_to_goal[self._pos] - task.dist_to_goal[nxt])
            self._pos, self._last_move = nxt, direction
            if nxt == task.goal:
                self._done = True
                self._obs = f"You moved {direction} and reached the goal at {nxt}. Well done!"
                return StepResult(
                    self._obs,
                    reward=1.0 + progress,
                    done=True,
                    success=True,
                    score=1.0,
                    info={"position": list(nxt), "hit_wall": False},
                )
            self._obs = f"You moved {direction}. " + self._where()
            return StepResult(self._obs, reward=progress, info={"position": list(self._pos), "hit_wall": False})
        return StepResult(self._obs, info={"position": list(self._pos), "hit_wall": hit_wall})

    def _progress_reward(self) -> float:
        return self.options.progress_reward if self.options is not None else 0.0

    def observation(self) -> str:
        return self._obs

    def available_actions(self) -> list[str]:
        return list(ACTIONS)

    def expert_action(self) -> str:
        """A step along a shortest path: the first neighbour (up, down, left, right order) that is
        one step closer to the goal, read from the task's BFS distance map."""
        task = self._require_task()
        here = task.dist_to_goal[self._pos]
        for direction, (dr, dc) in MOVES.items():
            if task.dist_to_goal.get((self._pos[0] + dr, self._pos[1] + dc), here) == here - 1:
                return f"move {direction}"
        return ACTIONS[0]  # at the goal: the episode is over, any action will do

    def expert_thought(self) -> str:
        """What the expert can say without the map: where the goal lies, which ways are open and
        where it came from. These are the facts a memoryless agent needs (a policy of them alone
        solves most mazes), so a small model cloning the expert learns to state them, then act."""
        towards = goal_directions(self._pos, self._require_task().goal)
        thought = f"The goal is {' and '.join(towards) or 'here'}. I can move {_join(self._free(), 'or')}."
        if self._last_move is not None:
            thought += f" I came from {_CAME_FROM[self._last_move]}."
        return thought

    # -- text ------------------------------------------------------------------------------
    @staticmethod
    def _instruction(task: MazeTask) -> str:
        return (
            f"You are in a maze on a grid of {task.height} rows and {task.width} columns. Positions are "
            f"(row, column), counted from (0, 0) at the top-left corner to ({task.height - 1}, {task.width - 1}) "
            "at the bottom-right; moving up decreases the row, down increases it, left decreases the column "
            "and right increases it. The grid is surrounded by walls and has walls inside it. You cannot see "
            "the map: after every move you are told where you are and which directions are blocked by walls "
            "(moving into a wall wastes a turn). Your task is to reach the goal in as few moves as possible.\n"
            "Each turn, reply with exactly one action: move up, move down, move left, or move right."
        )

    def _where(self) -> str:
        task = self._require_task()
        r, c = self._pos
        free = self._free()
        blocked = [d for d in MOVES if d not in free]
        text = f"You are at ({r}, {c}). The goal is at ({task.goal[0]}, {task.goal[1]})."
        if blocked:
            text += f" There {'is a wall' if len(blocked) == 1 else 'are walls'} "
            text += _join([_WALL_WORDS[d] for d in blocked], "and") + "."
        if free:
            text += f" You can move {_join(free, 'or')}."
        return text

    def _free(self) -> list[str]:
        task = self._require_task()
        r, c = self._pos
        return [d for d, (dr, dc) in MOVES.items() if (r + dr, c + dc) in task.open_cells]

    def _require_task(self) -> MazeTask:
        if self._task is None:
            raise RuntimeError("call reset() before step()")
        return self._task
