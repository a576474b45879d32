"""The maze of AgentGym (``--option profile=agentgym``): LMRL-Gym's double-T maze as AgentGym's server plays it.

AgentGym's LMRL-Gym server has one fixed maze, the "double T" of LMRL-Gym (10 rows, 13 columns), one goal
(row 8, column 6) and a list of start cells; upstream task index N (its ``game``) starts at the N-th. What is
reproduced, from the public code of AgentGym (``agentenv-lmrlgym``) and LMRL-Gym (``llm_rl_scripts/maze``):

- the server's observation: ``The goal is at position 8, 6. Your current position is at position R, C. ``
  followed by the walls around the agent, in the order right, left, above, below (``There is a wall above
  you.``, ``There are walls to your left, below you.``, ``There are no walls near you.``);
- a move is exactly ``move up`` / ``move down`` / ``move left`` / ``move right`` (AgentGym's client sends the
  text after ``Action:``, stripped; this project's agent loop sends the parsed action); into a wall, or any
  other text, the agent stays put and the turn counts;
- reaching the goal answers ``Success\\n`` with reward 1 and ends the episode; every other move pays 0 (the
  server's reward function: no penalty for walls or unknown text); after 50 moves that did not reach the
  goal, the next action answers ``Failure\\n`` with reward -1 and ends it;
- the turn limit: AgentGym's evaluation plays maze for 15 rounds (its ``max_round``), so ``max_turns`` is 15;
  under ``--compat agentgym`` the runtime does not cut episodes (upstream's server does not), and the 51st
  action is the failure;
- tasks: the 25 start cells AgentEval's items ``lmrlgym_maze_0`` .. ``_24`` name. Upstream's list has a
  26th entry, the goal cell itself: its server fails to reset it (LMRL-Gym asserts the start is not the
  goal), so index 25 is not a task here (AgentTraj's training list names it 39 times).

The rules the model reads before the first observation are this project's words for the same game
(AgentGym's client shows its own text, with a worked example); under ``--compat agentgym`` the server
answers with the observation alone, as upstream's does, and AgentGym's client adds its text. Upstream has
no held-out split: both splits are the same 25 games.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from agentenv import Environment, Split, StepResult
from agentenv_maze.env import MazeEnv
from agentenv_maze.generator import Cell, bfs

#: LMRL-Gym's double-T maze: '#' a wall, '.' open
_LAYOUT = (
    "#############",
    "#.....#.....#",
    "###.#####.###",
    "###.#####.###",
    "###.#####.###",
    "###.......###",
    "######.######",
    "######.######",
    "######.######",
    "#############",
)
OPEN: frozenset[Cell] = frozenset((r, c) for r, row in enumerate(_LAYOUT) for c, ch in enumerate(row) if ch == ".")
GOAL: Cell = (8, 6)
#: AgentGym's start cells, by upstream index (its 26th, the goal, cannot be reset upstream and is left out)
STARTS: tuple[Cell, ...] = (
    (1, 1), (1, 2), (1, 3), (1, 4), (1, 5), (1, 7), (1, 8), (1, 9), (1, 10), (1, 11), (2, 3), (3, 3), (4, 3),
    (5, 3), (5, 4), (5, 5), (5, 6), (6, 6), (7, 6), (5, 7), (5, 8), (5, 9), (4, 9), (3, 9), (2, 9),
)
MAX_MOVES = 50  # LMRL-Gym's max_steps as AgentGym sets it
#: in LMRL-Gym's order (its action dictionary), which is also AgentGym's list of available actions
MOVES: dict[str, Cell] = {"move left": (0, -1), "move right": (0, 1), "move up": (-1, 0), "move down": (1, 0)}
#: how the walls are named, in the order LMRL-Gym lists them
_SIDES: tuple[tuple[str, Cell], ...] = (
    ("to your right", (0, 1)), ("to your left", (0, -1)), ("above you", (-1, 0)), ("below you", (1, 0)))

RULES = (
    "Find the way through a maze to its goal, in as few moves as possible. The maze is a grid of cells; a "
    "position is written as two numbers x, y: moving down adds 1 to x, moving up takes 1 from x, moving right "
    "adds 1 to y and moving left takes 1 from y. You never see the map. Every turn you are told where the goal "
    "is, where you are, and on which sides of you there are walls; moving into a wall leaves you where you "
    "were. You have 50 moves.\n"
    'The moves are "move up", "move down", "move left" and "move right". Answer in this form:\n'
    "Thought:\n<what you think>\n\nAction:\n<one move>"
)


#: shortest number of moves from every open cell to the goal
DIST = bfs(OPEN, GOAL)


def describe(pos: Cell) -> str:
    """The server's observation at ``pos`` (AgentGym's describe_observation with the position shown)."""
    walls = [name for name, (dr, dc) in _SIDES if (pos[0] + dr, pos[1] + dc) not in OPEN]
    if not walls:
        wall_text = "There are no walls near you."
    elif len(walls) == 1:
        wall_text = f"There is a wall {walls[0]}."
    else:
        wall_text = f"There are walls {', '.join(walls)}."
    return (f"The goal is at position {GOAL[0]}, {GOAL[1]}. "
            f"Your current position is at position {pos[0]}, {pos[1]}. {wall_text}")


class AgentGymMazeEnv(Environment):
    """LMRL-Gym's double-T maze, task N starting at AgentGym's N-th start cell (module docstring)."""

    name = "maze"
    profile = "agentgym"
    version = "agentgym-1"
    #: AgentGym evaluates maze for 15 rounds (its max_round); its server itself fails the 51st action
    max_turns = 15
    instruction = "You are an expert at finding the way through mazes."
    action_hint = "one of: move up, move down, move left, move right"
    agentgym = dataclasses.replace(MazeEnv.agentgym, index_order=("test",), options={}, rules=RULES,
                                   server_truncates=False)

    def __init__(self) -> None:
        self._pos: Cell = STARTS[0]
        self._moves = 0
        self._obs = ""

    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in cls.splits:
            raise ValueError(f"unknown split {split!r}")
        return len(STARTS)

    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        if not 0 <= task_id < len(STARTS):
            raise IndexError(f"maze (agentgym) has games 0..{len(STARTS) - 1}, not {task_id}")
        self._pos, self._moves = STARTS[task_id], 0
        self._obs = self.agentgym.with_rules(describe(self._pos))
        return self._obs, {"task_id": task_id, "split": split, "agentgym_index": task_id,
                                          "start": list(self._pos), "goal": list(GOAL),
                                          "shortest_path": DIST[self._pos]}

    def step(self, action: str) -> StepResult:
        if self._moves >= MAX_MOVES:
            self._obs = "Failure\n"
            return StepResult(self._obs, reward=-1.0, done=True, info={"agentgym_reward": -1.0})
        delta = MOVES.get(action)  # exactly; AgentGym's client has taken the text after "Action:" and stripped it
        if delta is not None and (self._pos[0] + delta[0], self._pos[1] + delta[1]) in OPEN:
            self._pos = (self._pos[0] + delta[0], self._pos[1] + delta[1])
        if self._pos == GOAL:
            self._obs = "Success\n"
            return StepResult(self._obs, reward=1.0, done=True, success=True, score=1.0,
                              info={"position": list(self._pos), "agentgym_reward": 1.0})
        self._moves += 1
        self._obs = describe(self._pos)
        # agentgym_reward: what AgentGym's client reports for the step (its evaluator averages the last ones)
        return StepResult(self._obs, valid=delta is not None,
                          info={"position": list(self._pos), "agentgym_reward": 0.0})

    def observation(self) -> str:
        return self._obs

    def available_actions(self) -> list[str]:
        return list(MOVES)

    def expert_action(self) -> str:
        """A move along a shortest path (the first of LMRL-Gym's move order that gets one closer)."""
        here = DIST.get(self._pos, 0)
        for move, (dr, dc) in MOVES.items():
            if DIST.get((self._pos[0] + dr, self._pos[1] + dc), here) == here - 1:
                return move
        return "move down"

    def expert_thought(self) -> str:
        return (f"I am at {self._pos[0]}, {self._pos[1]} and the goal is at {GOAL[0]}, {GOAL[1]}; "
                f"{self.expert_action()} brings me closer.")
