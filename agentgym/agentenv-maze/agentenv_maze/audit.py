"""Check a policy's maze replies against the observations they answer: does it read what it is told?

``python -m agentenv_maze.audit FILE.jsonl [FILE.jsonl ...]`` reads AgentTraj episodes (rollout, validation
or evaluation files) and prints, per file, the share of turns whose thought states the goal's direction
wrongly, lists the open moves wrongly (a copy of the observation's last sentence), or whose action walks
into a wall, and the share of each move. A run whose success drops while these rise has stopped reading
its observations; one whose success drops while they hold has chosen worse among the moves it saw.

It also counts dead ends (one open move) and how often the reply there takes another way. The expert walks
a shortest path and never enters a dead end, so a cloned policy has never seen one; walking into a wall
there until the turns run out is behaviour cloning's blind spot, which only on-policy experience (RL,
AgentEvol's exploration) can show it. Whether the thought there lists the one open move tells where the
fault lies: a reply stuck after a wrong list ("I can move down or right") is a misreading, which training
only the action line (``agent.train_on=action``) cannot reach; one stuck after a right list chose badly.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from agentenv_maze.env import goal_directions, parse_action
from agentenv_maze.generator import MOVES

_POS = re.compile(r"You are at \((\d+), (\d+)\)\. The goal is at \((\d+), (\d+)\)\.")
_OPEN = re.compile(r"You can move ([a-z ,]+)\.")
_SAID_GOAL = re.compile(r"The goal is ([a-z ]+)\.")
_SAID_OPEN = re.compile(r"I can move ([a-z ,]+)\.")
_ACTION = re.compile(r"Action:\s*(.+)")
_DIRECTION = re.compile("|".join(MOVES))


@dataclass
class Audit:
    episodes: int = 0
    successes: int = 0
    turns: int = 0
    goal_wrong: int = 0
    open_wrong: int = 0
    into_wall: int = 0
    dead_ends: int = 0  # turns at a dead end: one open move
    dead_end_stuck: int = 0  # of those, replies that do not take it
    dead_end_misread: int = 0  # dead-end turns whose thought lists the open moves wrongly
    dead_end_misread_stuck: int = 0  # of those, replies that do not take the open move
    moves: Counter = field(default_factory=Counter)

    def row(self, name: str) -> dict[str, object]:
        n = max(self.turns, 1)
        moved = max(sum(self.moves.values()), 1)
        return {"file": name, "episodes": self.episodes, "success": self.successes / max(self.episodes, 1),
                "turns": self.turns, "goal_wrong": self.goal_wrong / n, "open_wrong": self.open_wrong / n,
                "into_wall": self.into_wall / n, "dead_ends": self.dead_ends / n,
                "dead_end_stuck": self.dead_end_stuck / max(self.dead_ends, 1),
                "dead_end_misread": self.dead_end_misread / max(self.dead_ends, 1),
                "stuck_if_misread": self.dead_end_misread_stuck / max(self.dead_end_misread, 1),
                "stuck_if_read": (self.dead_end_stuck - self.dead_end_misread_stuck)
                / max(self.dead_ends - self.dead_end_misread, 1),
                **{f"move_{d}": self.moves[d] / moved for d in MOVES}}


def _directions(text: str) -> list[str]:
    return sorted(_DIRECTION.findall(text))


def audit_turn(observation: str, reply: str, audit: Audit) -> None:
    """Count one reply against the observation it answers (turns without a position are skipped)."""
    where, open_ = _POS.search(observation), _OPEN.search(observation)
    if where is None or open_ is None:
        return
    r, c, gr, gc = map(int, where.groups())
    toward = sorted(goal_directions((r, c), (gr, gc)))
    free = _directions(open_.group(1))
    audit.turns += 1
    said = _SAID_GOAL.search(reply)
    audit.goal_wrong += said is None or _directions(said.group(1)) != toward
    said = _SAID_OPEN.search(reply)
    misread = said is None or _directions(said.group(1)) != free
    audit.open_wrong += misread
    action = _ACTION.search(reply)
    move = parse_action(action.group(1)) if action else None
    if move is not None:
        audit.moves[move] += 1
    audit.into_wall += move is not None and move not in free
    if len(free) == 1:
        audit.dead_ends += 1
        audit.dead_end_stuck += move not in free
        audit.dead_end_misread += misread
        audit.dead_end_misread_stuck += misread and move not in free


def audit_episode(conversations: list[dict], audit: Audit) -> None:
    for asked, answered in itertools.pairwise(conversations):
        if asked.get("from") == "human" and answered.get("from") == "gpt":
            audit_turn(asked["value"], answered["value"], audit)


def audit_file(path: str | Path) -> Audit:
    audit = Audit()
    with open(path) as f:
        for line in f:
            if line.strip():
                episode = json.loads(line)
                audit.episodes += 1
                audit.successes += bool(episode.get("success"))
                audit_episode(episode["conversations"], audit)
    return audit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentenv_maze.audit", description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="AgentTraj JSONL files of maze episodes")
    args = parser.parse_args(argv)
    print("| file | episodes | success | turns | goal wrong | open moves wrong | into a wall | at a dead end | "
          "stuck there | misread there | stuck if misread | stuck if read right | " + " | ".join(MOVES) + " |")
    print("| --- " * (12 + len(MOVES)) + "|")
    for path in args.files:
        row = audit_file(path).row(path)
        print(f"| {path} | {row['episodes']} | {row['success']:.2f} | {row['turns']} | {row['goal_wrong']:.3f} | "
              f"{row['open_wrong']:.3f} | {row['into_wall']:.3f} | {row['dead_ends']:.3f} | "
              f"{row['dead_end_stuck']:.3f} | {row['dead_end_misread']:.3f} | {row['stuck_if_misread']:.3f} | "
              f"{row['stuck_if_read']:.3f} | "
              + " | ".join(f"{row[f'move_{d}']:.2f}" for d in MOVES) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
