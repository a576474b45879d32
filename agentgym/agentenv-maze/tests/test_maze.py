"""Tests of the maze environment: the SDK's contract (check_environment), splits, rules, rewards and the two
reference policies."""

import json
import random

import pytest

from agentenv.testing import check_environment, checks_for, play_in_process
from agentenv_maze.env import ACTIONS, MazeEnv, MazeOptions, parse_action
from agentenv_maze.generator import MAX_DIST, MAX_SIDE, MIN_DIST, MIN_SIDE, MOVES, NUM_TASKS, bfs, generate


def fingerprint(task):
    return (task.height, task.width, task.open_cells, task.start, task.goal)


def run_episode(env, task_id, split, policy):
    """One episode under the runtime's rules; return (reward sum, success)."""
    total, results = play_in_process(env, task_id, split, policy)
    assert all(0.0 <= r.reward <= 1.0 for r in results) and 0.0 <= total <= 1.0
    return total, results[-1].done and results[-1].success


@pytest.mark.parametrize("part", checks_for(MazeEnv))
def test_check_environment(part):
    """The contract: declarations, resets, the expert on every test task, HTTP and AgentGym's routes."""
    report = check_environment(MazeEnv, checks=(part,), thoughts=True, served=(0, 99))
    for episode in report.episodes:  # the expert's, under the runtime's rules: rewards in [0, 1]
        assert all(0.0 <= r.reward <= 1.0 for r in episode.results) and 0.0 <= episode.total <= 1.0


def test_sizes():
    assert MazeEnv.num_tasks("test") == 100
    assert MazeEnv.num_tasks("train") >= 1000
    assert MazeEnv.max_turns <= 50
    with pytest.raises(ValueError):
        MazeEnv.num_tasks("dev")


def test_splits_are_deterministic_and_disjoint():
    assert fingerprint(generate.__wrapped__("test", 7)) == fingerprint(generate.__wrapped__("test", 7))
    test = {fingerprint(generate("test", i)) for i in range(NUM_TASKS["test"])}
    assert len(test) == NUM_TASKS["test"]
    # generate.__wrapped__: the whole train split would only churn the task cache
    train = {fingerprint(generate.__wrapped__("train", i)) for i in range(NUM_TASKS["train"])}
    assert len(train) == NUM_TASKS["train"]
    assert not test & train


@pytest.mark.parametrize("task_id", range(NUM_TASKS["test"]))
def test_tasks_are_solvable_within_bounds(task_id):
    task = generate("test", task_id)
    assert MIN_SIDE <= task.height <= MAX_SIDE and MIN_SIDE <= task.width <= MAX_SIDE
    assert all(0 <= r < task.height and 0 <= c < task.width for r, c in task.open_cells)
    dist = bfs(task.open_cells, task.start)
    assert MIN_DIST <= dist[task.goal] <= MAX_DIST
    assert task.dist_to_goal[task.start] == dist[task.goal]


def test_first_observation_has_instruction_and_position():
    env = MazeEnv()
    obs, info = env.reset(0, "test")
    task = generate("test", 0)
    assert "move up" in obs and "move right" in obs and "goal" in obs
    assert f"You are at ({task.start[0]}, {task.start[1]})" in obs
    assert f"The goal is at ({task.goal[0]}, {task.goal[1]})" in obs
    assert env.observation() == obs
    assert info["shortest_path"] == task.dist_to_goal[task.start]
    assert env.available_actions() == ACTIONS


def test_walls_block_and_moves_move():
    env = MazeEnv()
    env.reset(0, "test")
    task = generate("test", 0)
    r, c = task.start
    for direction, (dr, dc) in MOVES.items():
        env.reset(0, "test")
        result = env.step(f"move {direction}")
        assert result.valid
        if (r + dr, c + dc) in task.open_cells:
            assert result.info["position"] == [r + dr, c + dc] and not result.info["hit_wall"]
            assert "hit a wall" not in result.observation
        else:
            assert result.info["position"] == [r, c] and result.info["hit_wall"]
            assert "hit a wall" in result.observation
        assert result.reward == 0.0 and not result.done


def test_observation_names_blocked_directions():
    env = MazeEnv()
    obs, _ = env.reset(3, "test")
    task = generate("test", 3)
    r, c = task.start
    words = {"up": "above you", "down": "below you", "left": "to your left", "right": "to your right"}
    for direction, (dr, dc) in MOVES.items():
        assert (words[direction] in obs) == ((r + dr, c + dc) not in task.open_cells)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("move up", "up"),
        ("UP", "up"),
        ("  Move Left. ", "left"),
        ("`move down`", "down"),
        ("go right!", "right"),
        ("Action: move up", "up"),
        ("move", None),
        ("jump", None),
        ("move upward", None),
        ("", None),
    ],
)
def test_parse_action(text, expected):
    assert parse_action(text) == expected


def test_invalid_action_is_flagged_and_harmless():
    env = MazeEnv()
    env.reset(1, "test")
    start = generate("test", 1).start
    result = env.step("fly to the goal")
    assert not result.valid and not result.done and result.reward == 0.0
    assert "move up" in result.observation and result.info["position"] == list(start)


def expert_rewards(env: MazeEnv):
    """The expert's episode from where ``env`` stands: each step's reward, and the last step's result."""
    rewards = []
    while True:
        result = env.step(env.expert_action())
        rewards.append(result.reward)
        if result.done:
            return rewards, result


def test_expert_reaches_goal_in_shortest_path_and_reward_once():
    env = MazeEnv()
    env.reset(2, "test")
    task = generate("test", 2)
    rewards, result = expert_rewards(env)
    assert len(rewards) == task.dist_to_goal[task.start]
    assert rewards[-1] == 1.0 and sum(rewards) == 1.0 and result.success and result.score == 1.0
    after = env.step("move up")
    assert after.done and not after.valid and after.reward == 0.0


def test_progress_reward_pays_distance_gained_and_keeps_success_and_score():
    """The progress_reward option: +c per step closer, -c per step away, 0 into a wall; the expert's
    episode sums to 1 + c * shortest path; success and score are unchanged."""
    c = 0.1
    env = MazeEnv()
    env.options = MazeOptions(progress_reward=c)
    task = generate("test", 2)
    env.reset(2, "test")
    d0 = task.dist_to_goal[task.start]
    rewards, result = expert_rewards(env)
    assert rewards[:-1] == pytest.approx([c] * (d0 - 1)) and rewards[-1] == pytest.approx(1.0 + c)
    assert sum(rewards) == pytest.approx(1.0 + c * d0) and result.success and result.score == 1.0
    r, col = task.start
    for direction, (dr, dc) in MOVES.items():
        env.reset(2, "test")
        nxt = (r + dr, col + dc)
        got = env.step(f"move {direction}").reward
        if nxt not in task.open_cells:
            assert got == 0.0
        elif nxt != task.goal:
            assert got == pytest.approx(c * (d0 - task.dist_to_goal[nxt]))  # + closer, - farther
    with pytest.raises(ValueError):
        MazeOptions(progress_reward=-0.1)


def test_expert_thought_states_goal_direction_open_ways_and_where_it_came_from():
    env = MazeEnv()
    obs, _ = env.reset(4, "test")
    task = generate("test", 4)
    r, c = task.start
    first = env.expert_thought()
    assert "came from" not in first
    vertical = "down" if task.goal[0] > r else "up" if task.goal[0] < r else None
    horizontal = "right" if task.goal[1] > c else "left" if task.goal[1] < c else None
    assert first.startswith("The goal is " + " and ".join(w for w in (vertical, horizontal) if w) + ".")
    # the open ways are the observation's own words
    assert first.split(". ")[1].rstrip(".") == obs.rsplit(". ", 1)[-1].rstrip(".").replace("You can", "I can")
    came_from = {"up": "below", "down": "above", "left": "the right", "right": "the left"}
    while True:
        action = env.expert_action()
        result = env.step(action)
        if result.done:
            break
        assert env.expert_thought().endswith(f"I came from {came_from[action.split()[1]]}.")
    # a move into a wall leaves the remembered direction as it was
    env.reset(4, "test")
    env.step(env.expert_action())
    before = env.expert_thought()
    wall = next(d for d in MOVES if d not in before.split(". ")[1])
    assert env.step(f"move {wall}").info["hit_wall"]
    assert env.expert_thought() == before


def test_random_policy_mostly_fails():
    env, rng = MazeEnv(), random.Random(0)
    wins = [run_episode(env, i, "test", lambda e: e.random_action(rng))[1] for i in range(NUM_TASKS["test"])]
    assert sum(wins) / len(wins) < 0.3


def _expert_episode(task_id: int) -> list[dict]:
    """An expert episode as AgentTraj turns (the reply format of the agent loop's prompt)."""
    env = MazeEnv()
    obs, _ = env.reset(task_id, "test")
    turns = [{"from": "human", "value": obs}]
    while True:
        thought, action = env.expert_thought(), env.expert_action()
        turns.append({"from": "gpt", "value": f"Thought: {thought}\nAction: {action}"})
        result = env.step(action)
        if result.done:
            return turns
        turns.append({"from": "human", "value": result.observation})


def test_audit_finds_no_fault_in_the_expert_and_each_kind_of_misreading(tmp_path):
    from agentenv_maze.audit import Audit, audit_episode, audit_file, main

    episodes = [_expert_episode(i) for i in range(5)]
    path = tmp_path / "expert.jsonl"
    path.write_text("".join(json.dumps({"conversations": e, "success": True}) + "\n" for e in episodes))
    clean = audit_file(path)
    assert clean.episodes == clean.successes == 5
    assert clean.turns == sum(len(e) // 2 for e in episodes) > 5
    assert clean.goal_wrong == clean.open_wrong == clean.into_wall == clean.dead_end_stuck == 0
    assert sum(clean.moves.values()) == clean.turns

    # one reply of each kind of fault: the goal on the wrong side, an open move left out, a move into a wall
    first = episodes[0]
    obs, reply = first[0]["value"], first[1]["value"]
    free = [d for d in MOVES if d in obs.rsplit("You can move", 1)[1]]
    wall = next(d for d in MOVES if d not in free)
    flip = {"up": "down", "down": "up", "left": "right", "right": "left"}
    goal = reply.split("The goal is ", 1)[1].split(".", 1)[0]
    wrong_goal = " and ".join(flip[w] for w in goal.split(" and "))
    said_open = "I can move " + reply.split("I can move ", 1)[1].split(".", 1)[0] + "."
    faults = [reply.replace(f"The goal is {goal}.", f"The goal is {wrong_goal}."),
              reply.replace(said_open, f"I can move {wall}."),
              reply.rsplit("Action:", 1)[0] + f"Action: move {wall}"]
    counts = []
    for fault in faults:
        audit = Audit()
        audit_episode([{"from": "human", "value": obs}, {"from": "gpt", "value": fault}], audit)
        counts.append((audit.turns, audit.goal_wrong, audit.open_wrong, audit.into_wall))
    assert counts == [(1, 1, 0, 0), (1, 0, 1, 0), (1, 0, 0, 1)]

    # a dead end: the one open move is the way back; a reply that bumps a wall there is stuck
    dead_end = ("You moved up. You are at (0, 0). The goal is at (0, 5). There are walls above you, to your left "
                "and to your right. You can move down.")
    stuck = []
    for said, move in (("down", "down"), ("down", "right"), ("down or right", "right"), ("down or right", "down")):
        audit = Audit()
        reply = f"Thought: The goal is right. I can move {said}. I came from below.\nAction: move {move}"
        audit_episode([{"from": "human", "value": dead_end}, {"from": "gpt", "value": reply}], audit)
        stuck.append((audit.dead_ends, audit.dead_end_stuck, audit.into_wall, audit.dead_end_misread,
                      audit.dead_end_misread_stuck))
    # a right list then the open move; a right list then a wall; a wrong list then a wall; a wrong list, open move
    assert stuck == [(1, 0, 0, 0, 0), (1, 1, 1, 0, 0), (1, 1, 1, 1, 1), (1, 0, 0, 1, 0)]
    assert main([str(path)]) == 0
