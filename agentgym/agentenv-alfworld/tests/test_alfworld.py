"""Tests of the alfworld environment: the SDK's contract (check_environment: the expert on half the test
tasks, the protocol and AgentGym's routes over HTTP), tasks and splits, ALFWorld's rules and wording, the
reward, invalid actions, the reference policies and the real-data option's errors."""

from __future__ import annotations

import collections
import importlib.util
import json
import random

import pytest

from agentenv.server import ServerConfig, serve
from agentenv.testing import check_environment, checks_for, play_in_process
from agentenv_alfworld.catalogue import ROOMS
from agentenv_alfworld.env import NOT_A_COMMAND, AlfWorldEnv, AlfWorldOptions
from agentenv_alfworld.reward import TASK_TYPES, Goal, goal_met, reward
from agentenv_alfworld.tasks import NUM_TASKS, ROOMS_FOR, TEMPLATES, generate
from agentenv_alfworld.world import BANNER, NOTHING_HAPPENS, Obj, Receptacle, World, parse_command


def fingerprint(task):
    return task.room, task.layout, task.goal, task.goal_text


def run(env, task_id, split, policy):
    """One episode under the runtime's rules: (reward sum, success, turns)."""
    total, results = play_in_process(env, task_id, split, policy)
    assert all(0.0 <= r.reward <= 1.0 for r in results) and 0.0 <= total <= 1.0
    return total, results[-1].success, len(results)


def kitchen() -> World:
    """A small hand-built kitchen: countertop 1 (apple 1, knife 2), closed fridge 1 (egg 1), closed
    microwave 1, sinkbasin 1, diningtable 1, garbagecan 1."""
    receptacles = [
        Receptacle("countertop 1", "countertop", False, contents=["apple 1", "knife 2"]),
        Receptacle("diningtable 1", "diningtable", False),
        Receptacle("fridge 1", "fridge", True, contents=["egg 1"]),
        Receptacle("garbagecan 1", "garbagecan", False),
        Receptacle("microwave 1", "microwave", True),
        Receptacle("sinkbasin 1", "sinkbasin", False),
    ]
    objects = [Obj("apple 1", "apple"), Obj("knife 2", "knife"), Obj("egg 1", "egg")]
    return World(ROOMS["kitchen"], receptacles, objects)


def bedroom() -> World:
    """A hand-built bedroom: bed 1 (book 1, book 2), sidetable 1 (desklamp 1), desk 1."""
    receptacles = [
        Receptacle("bed 1", "bed", False, contents=["book 1", "book 2"]),
        Receptacle("desk 1", "desk", False),
        Receptacle("sidetable 1", "sidetable", False, contents=["desklamp 1"]),
    ]
    objects = [Obj("book 1", "book"), Obj("book 2", "book"), Obj("desklamp 1", "desklamp")]
    return World(ROOMS["bedroom"], receptacles, objects)


def do(world: World, text: str) -> str:
    cmd = parse_command(text)
    assert cmd is not None, text
    if not world.applies(cmd):
        return NOTHING_HAPPENS
    return world.apply(cmd)


# -- the SDK's contract ---------------------------------------------------------------------------
@pytest.mark.parametrize("part", checks_for(AlfWorldEnv))
def test_check_environment(part):
    """The contract; the expert solves every second test task with a return of 1 in fewer than 30 turns, a
    thought at every turn; tasks 3 and 4 are played over HTTP and through AgentGym's routes (AgentGym's
    ALFWorld client: POST /create -> {"id"}, /reset with "game" and "world_type" -> the observation and its
    admissible commands, /step -> observation, reward, done, available_actions)."""
    # the generated tasks under AgentGym's routes too (they serve the agentgym profile, which needs ALFWorld's data)
    report = check_environment(AlfWorldEnv, checks=(part,), thoughts=True, served=(3, 4),
                               splits={"test": range(0, 200, 2)}, options={"profile": "native"})
    for episode in report.episodes:
        assert all(0.0 <= r.reward <= 1.0 for r in episode.results) and episode.total == 1.0, episode.task_id
    assert max((e.turns for e in report.episodes), default=0) < AlfWorldEnv.max_turns // 2 + 5
    if report.info is not None:
        assert report.info["splits"] == {"train": NUM_TASKS["train"], "test": 200} and report.info["max_turns"] == 50


# -- metadata, splits ------------------------------------------------------------------------------
def test_metadata():
    assert AlfWorldEnv.name == "alfworld" and AlfWorldEnv.max_turns == 50 and AlfWorldEnv.success_threshold == 1.0
    for words in ("go to", "take", "put", "in/on", "heat", "cool", "clean", "use", "examine", "inventory", "look",
                  "Nothing happens."):
        assert words in AlfWorldEnv.instruction
    assert AlfWorldEnv.num_tasks("test") == 200 and AlfWorldEnv.num_tasks("train") >= 5000
    assert AlfWorldEnv.task_counts() == {"train": NUM_TASKS["train"], "test": 200}
    with pytest.raises(ValueError):
        AlfWorldEnv.num_tasks("dev")
    with pytest.raises(ValueError):
        AlfWorldOptions(bogus=1)


def test_splits_are_deterministic_balanced_and_disjoint():
    test = [generate("test", i) for i in range(200)]
    assert [fingerprint(t) for t in test[:20]] == [fingerprint(generate.__wrapped__("test", i)) for i in range(20)]
    counts = collections.Counter(t.goal.task_type for t in test)
    assert set(counts) == set(TASK_TYPES) and min(counts.values()) >= 33
    assert len({fingerprint(t) for t in test}) == 200
    # generate.__wrapped__: a train sample without churning the cache (all of train: README)
    train = {fingerprint(generate.__wrapped__("train", i)) for i in range(0, NUM_TASKS["train"], 5)}
    assert not train & {fingerprint(t) for t in test}
    assert len({t.room for t in test}) == 4


@pytest.mark.parametrize("task_id", range(0, 200, 3))
def test_generated_tasks_are_well_formed(task_id):
    task = generate("test", task_id)
    goal, room = task.goal, ROOMS[task.room]
    assert task.room in ROOMS_FOR[goal.task_type]
    assert task.goal_text in {t.format(obj=goal.otype, recep=goal.rtype, light=goal.light)
                              for t in TEMPLATES[goal.task_type]}
    world = task.new_world()
    assert not goal_met(world, goal) and world.at is None and world.holding is None
    targets = [o for o in world.objects.values() if o.otype == goal.otype]
    assert len(targets) >= goal.count
    for name, contents in task.layout:  # everything is somewhere that can hold it; all closed at first
        r = world.receptacles[name]
        assert not r.opened
        for obj in contents:
            assert obj.rsplit(" ", 1)[0] == "desklamp" or r.rtype in room.objects[obj.rsplit(" ", 1)[0]]
    if goal.rtype is not None:
        assert world.of_type(goal.rtype)
        if goal.state is None:  # placing tasks: no target object starts in a target receptacle
            assert all(world.receptacles[world.location_of(o.name)].rtype != goal.rtype for o in targets)
    else:
        assert any(o.otype == "desklamp" for o in world.objects.values())


def test_first_observation_holds_instruction_and_equals_initial_observation():
    env = AlfWorldEnv()
    for task_id in (0, 1, 5, 77):
        obs, info = env.reset(task_id, "test")
        task = generate("test", task_id)
        assert obs.startswith(BANNER + "\n\nYou are in the middle of a room. Looking quickly around you, you see a ")
        assert obs.endswith(f"\n\nYour task is to: {task.goal_text}.") and info["goal"] == task.goal_text
        for name, _ in task.layout:
            assert f"a {name}" in obs
        assert obs == env.observation() == AlfWorldEnv().initial_observation(task_id, "test")
        assert info["task_type"] == task.goal.task_type
    env.reset(4, "test")  # the first commands of a task: going somewhere, then what is there
    assert env.available_actions()[0] == "go to cabinet 1"
    env.reset(3, "test")
    assert "go to microwave 1" in env.available_actions()
    step = env.step("go to microwave 1")
    assert step.observation.startswith("You arrive at microwave 1.") and step.reward == 0.0 and not step.done
    assert "open microwave 1" in env.available_actions()


def test_list_actions_option_appends_the_admissible_commands():
    env = AlfWorldEnv()
    env.options = AlfWorldOptions(list_actions=True)
    obs, _ = env.reset(3, "test")
    text, listed = obs.split("\nAVAILABLE ACTIONS: ")
    assert listed.split(",") == env.available_actions() and text == generate("test", 3).intro()
    assert obs == env.initial_observation(3, "test")
    step = env.step(env.available_actions()[-1])
    assert step.observation.split("\nAVAILABLE ACTIONS: ")[1].split(",") == env.available_actions()


# -- rules and wording ------------------------------------------------------------------------------
def test_alfworld_wording_on_a_hand_built_kitchen():
    w = kitchen()
    assert w.overview() == ("You are in the middle of a room. Looking quickly around you, you see a countertop 1, "
                            "a diningtable 1, a fridge 1, a garbagecan 1, a microwave 1, and a sinkbasin 1.")
    assert do(w, "go to countertop 1") == ("You arrive at countertop 1. On the countertop 1, you see a apple 1, "
                                           "and a knife 2.")
    assert do(w, "go to countertop 1") == NOTHING_HAPPENS  # already there
    assert do(w, "look") == "You are facing the countertop 1. Next to it, you see nothing."
    assert do(w, "examine knife 2") == "There's nothing special about knife 2."
    assert do(w, "take apple 1 from countertop 1") == "You pick up the apple 1 from the countertop 1."
    assert do(w, "take knife 2 from countertop 1") == NOTHING_HAPPENS  # one thing at a time
    assert do(w, "inventory") == "You are carrying: a apple 1."
    assert do(w, "go to fridge 1") == "You arrive at fridge 1. The fridge 1 is closed."
    assert do(w, "put apple 1 in/on fridge 1") == NOTHING_HAPPENS  # closed
    assert do(w, "cool apple 1 with fridge 1") == "You cool the apple 1 using the fridge 1."  # closed or not
    assert do(w, "examine apple 1") == "This is a cold apple 1."
    assert do(w, "open fridge 1") == "You open the fridge 1. The fridge 1 is open. In it, you see a egg 1."
    assert do(w, "open fridge 1") == NOTHING_HAPPENS
    assert do(w, "go to microwave 1") == "You arrive at microwave 1. The microwave 1 is closed."
    assert do(w, "heat apple 1 with microwave 1") == "You heat the apple 1 using the microwave 1."
    assert w.objects["apple 1"].hot and not w.objects["apple 1"].cool  # heating undoes cooling
    assert do(w, "go to sinkbasin 1") == "You arrive at sinkbasin 1. On the sinkbasin 1, you see nothing."
    assert do(w, "heat apple 1 with sinkbasin 1") == NOTHING_HAPPENS
    assert do(w, "clean apple 1 with sinkbasin 1") == "You clean the apple 1 using the sinkbasin 1."
    assert do(w, "examine apple 1") == "This is a hot and clean apple 1."
    assert do(w, "go to fridge 1") == "You arrive at fridge 1. The fridge 1 is open. In it, you see a egg 1."
    assert do(w, "put apple 1 in fridge 1") == "You put the apple 1 in/on the fridge 1."
    assert do(w, "inventory") == "You are not carrying anything."
    assert do(w, "examine fridge 1") == "The fridge 1 is open. In it, you see a egg 1, and a apple 1."
    assert do(w, "close fridge 1") == "You close the fridge 1."
    assert do(w, "take egg 1 from fridge 1") == NOTHING_HAPPENS  # closed again
    assert do(w, "examine egg 1") == NOTHING_HAPPENS
    assert do(w, "help").startswith("Available commands:\n  look:")


def test_lamps_are_used_not_taken():
    w = bedroom()
    do(w, "go to sidetable 1")
    assert do(w, "take desklamp 1 from sidetable 1") == NOTHING_HAPPENS
    assert "take desklamp 1 from sidetable 1" not in w.admissible() and "use desklamp 1" in w.admissible()
    assert do(w, "examine desklamp 1") == "This desklamp 1 is off."
    assert do(w, "use desklamp 1") == "You turn on the desklamp 1."
    assert do(w, "examine desklamp 1") == "This desklamp 1 is on."
    do(w, "go to bed 1")
    assert do(w, "use desklamp 1") == NOTHING_HAPPENS  # not here


def test_admissible_commands_are_exactly_the_valid_ones():
    """Along random walks, every listed command is valid, and commands not listed are not."""
    env, rng = AlfWorldEnv(), random.Random(3)
    for task_id in (0, 2, 3, 5, 10):
        env.reset(task_id, "test")
        for _ in range(25):
            actions = env.available_actions()
            assert actions == sorted(actions) and "look" in actions and "inventory" in actions
            world = env._world
            probe = parse_command("take egg 1 from fridge 1")
            assert world.applies(probe) == ("take egg 1 from fridge 1" in actions)
            for name in list(world.receptacles)[:3] + list(world.objects)[:3]:
                for text in (f"go to {name}", f"open {name}", f"examine {name}", f"use {name}"):
                    assert world.applies(parse_command(text)) == (text in actions), text
            result = env.step(rng.choice(actions))
            assert result.valid
            if result.done:
                break


@pytest.mark.parametrize("text, expected", [
    ("go to countertop 1", "go to countertop 1"),
    ("Go to the CounterTop 1.", "go to countertop 1"),
    ("Action: go to fridge 1", "go to fridge 1"),
    ("take apple 1 from countertop 1", "take apple 1 from countertop 1"),
    ("put apple 1 in/on fridge 1", "put apple 1 in/on fridge 1"),
    ("put apple 1 in fridge 1", "put apple 1 in/on fridge 1"),
    ("put apple 1 on the diningtable 1", "put apple 1 in/on diningtable 1"),
    ("move apple 1 to fridge 1", "put apple 1 in/on fridge 1"),
    ("heat apple 1 with microwave 1", "heat apple 1 with microwave 1"),
    ("cool apple 1 with fridge 1", "cool apple 1 with fridge 1"),
    ("clean apple 1 with sinkbasin 1", "clean apple 1 with sinkbasin 1"),
    ("use desklamp 1", "use desklamp 1"),
    ("examine apple 1", "examine apple 1"),
    ("inventory", "inventory"),
    ("look", "look"),
    ("go to countertop", None),
    ("take apple from countertop 1", None),
    ("dance", None),
    ("", None),
])
def test_parse_command(text, expected):
    cmd = parse_command(text)
    assert (cmd.text() if cmd else None) == expected


# -- reward -----------------------------------------------------------------------------------------
def test_reward_of_placing_tasks_including_partial_states():
    w = kitchen()
    simple = Goal("pick_and_place_simple", "apple", rtype="diningtable")
    hot = Goal("pick_heat_then_place_in_recep", "apple", rtype="diningtable")
    clean = Goal("pick_clean_then_place_in_recep", "apple", rtype="diningtable")
    cool = Goal("pick_cool_then_place_in_recep", "apple", rtype="diningtable")
    assert reward(w, simple) == 0.0
    for text in ("go to countertop 1", "take apple 1 from countertop 1", "go to diningtable 1"):
        do(w, text)
    assert reward(w, simple) == 0.0  # held at the target is not in it
    do(w, "put apple 1 in/on diningtable 1")
    assert reward(w, simple) == 1.0
    assert reward(w, hot) == reward(w, clean) == reward(w, cool) == 0.0  # placed without the state: no credit
    w.objects["apple 1"].hot = True
    assert reward(w, hot) == 1.0 and reward(w, cool) == 0.0
    w.objects["apple 1"].hot, w.objects["apple 1"].cool, w.objects["apple 1"].clean = False, True, True
    assert reward(w, cool) == reward(w, clean) == 1.0 and reward(w, hot) == 0.0
    assert reward(w, Goal("pick_and_place_simple", "apple", rtype="fridge")) == 0.0  # wrong receptacle type


def test_reward_of_two_objects_needs_both_in_one_receptacle():
    receptacles = [Receptacle("bed 1", "bed", False, contents=["book 1"]),
                   Receptacle("desk 1", "desk", False, contents=["book 2"]),
                   Receptacle("desk 2", "desk", False, contents=["book 3"])]
    w = World(ROOMS["bedroom"], receptacles, [Obj("book 1", "book"), Obj("book 2", "book"), Obj("book 3", "book")])
    two = Goal("pick_two_obj_and_place", "book", rtype="desk")
    assert reward(w, Goal("pick_and_place_simple", "book", rtype="desk")) == 1.0
    assert reward(w, two) == 0.0  # one book in each of two desks
    for text in ("go to desk 2", "take book 3 from desk 2", "go to desk 1", "put book 3 in/on desk 1"):
        do(w, text)
    assert reward(w, two) == 1.0


def test_reward_of_looking_under_the_lamp():
    w = bedroom()
    look = Goal("look_at_obj_in_light", "book", light="desklamp")
    do(w, "go to sidetable 1")
    do(w, "use desklamp 1")
    assert reward(w, look) == 0.0  # lamp on, hands empty
    do(w, "go to bed 1")
    do(w, "take book 1 from bed 1")
    assert reward(w, look) == 0.0  # holding the book away from the lamp
    do(w, "go to sidetable 1")
    assert reward(w, look) == 1.0  # back at the lamp, which was switched on
    assert reward(w, Goal("look_at_obj_in_light", "cd", light="desklamp")) == 0.0
    w2 = bedroom()
    for text in ("go to bed 1", "take book 2 from bed 1", "go to sidetable 1"):
        do(w2, text)
    assert reward(w2, look) == 0.0  # at the lamp, still off
    do(w2, "use desklamp 1")
    assert reward(w2, look) == 1.0


def test_reward_is_paid_once_when_the_goal_first_holds():
    env = AlfWorldEnv()
    env.reset(0, "test")
    rewards = []
    while True:
        result = env.step(env.expert_action())
        rewards.append(result.reward)
        if result.done:
            break
    assert rewards[-1] == 1.0 and sum(rewards) == 1.0 and result.success and result.score == 1.0
    after = env.step("look")
    assert after.done and not after.valid and after.reward == 0.0
    assert env.available_actions() == []


# -- invalid actions --------------------------------------------------------------------------------
def test_invalid_actions_are_flagged_and_change_nothing():
    env = AlfWorldEnv()
    env.reset(1, "test")
    before = env._world.copy()
    text = env.step("jump over the moon")
    assert not text.valid and not text.done and text.observation == NOT_A_COMMAND
    assert "put (object) in/on (receptacle)" in text.observation
    impossible = env.step("take apple 1 from countertop 9")
    assert not impossible.valid and impossible.observation == NOTHING_HAPPENS and impossible.reward == 0.0
    assert env.step("close fridge 1").observation == NOTHING_HAPPENS
    assert env._world.__dict__.keys() == before.__dict__.keys()
    assert env._world.at == before.at and env._world.receptacles == before.receptacles
    assert env.step("look").valid


# -- policies ---------------------------------------------------------------------------------------
def test_expert_states_why():
    env = AlfWorldEnv()
    env.reset(3, "test")  # put a hot apple in garbagecan
    thought = env.expert_thought()
    assert thought.startswith("To put a hot apple in the garbagecan, I first need an apple.")
    assert env.expert_action() in env.available_actions()


def test_expert_takes_over_after_random_actions():
    env, rng = AlfWorldEnv(), random.Random(7)
    for task_id in range(1, 200, 9):
        env.reset(task_id, "test")
        for _ in range(12):
            if env.step(env.random_action(rng)).done:
                break
        else:
            for _ in range(AlfWorldEnv.max_turns):
                result = env.step(env.expert_action())
                if result.done:
                    break
            assert result.success, task_id


def test_random_policy_mostly_fails():
    env, rng = AlfWorldEnv(), random.Random(0)
    wins = [run(env, i, "test", lambda e: e.random_action(rng))[1] for i in range(0, 200, 2)]
    assert sum(wins) / len(wins) < 0.05


def test_instances_are_independent():
    a, b = AlfWorldEnv(), AlfWorldEnv()
    a.reset(0, "test")
    b.reset(0, "test")
    a.step(a.expert_action())
    assert b._world.at is None  # observations: test_check_environment


# -- the real-data option ---------------------------------------------------------------------------
def _fake_data(root, solvable=True):
    """ALFWorld's json_2.1.1 layout with one (unplayable) game per split."""
    for split in ("train", "valid_unseen"):
        trial = root / "json_2.1.1" / split / "pick_and_place_simple-Apple-None-Fridge-1" / "trial_T0"
        trial.mkdir(parents=True)
        (trial / "traj_data.json").write_text(json.dumps({"task_type": "pick_and_place_simple"}))
        (trial / "game.tw-pddl").write_text(json.dumps({"solvable": solvable}))


def test_data_path_errors_are_clear(tmp_path):
    missing = tmp_path / "nowhere"
    with pytest.raises(ValueError, match="is not a directory; point it at \\$ALFWORLD_DATA"):
        AlfWorldEnv.load_shared(AlfWorldOptions(data_path=str(missing)))
    (tmp_path / "empty" / "json_2.1.1").mkdir(parents=True)
    with pytest.raises(ValueError, match="no 'train' directory"):
        AlfWorldEnv.load_shared(AlfWorldOptions(data_path=str(tmp_path / "empty")))
    _fake_data(tmp_path / "unsolvable", solvable=False)
    with pytest.raises(ValueError, match="no playable game"):
        AlfWorldEnv.load_shared(AlfWorldOptions(data_path=str(tmp_path / "unsolvable")))
    # the server refuses to start, in one line, before it listens
    with pytest.raises(ValueError) as caught:
        serve(AlfWorldEnv, port=0, config=ServerConfig(options={"data_path": str(missing)}))
    assert "\n" not in str(caught.value) and "cannot start alfworld" in str(caught.value)
    assert AlfWorldEnv.load_shared(AlfWorldOptions()) is None  # no option: the generated tasks


@pytest.mark.skipif(importlib.util.find_spec("alfworld") is not None, reason="alfworld is installed")
def test_data_path_without_the_alfworld_package_says_how_to_install(tmp_path):
    _fake_data(tmp_path)
    with pytest.raises(RuntimeError, match=r"pip install 'agentenv-alfworld\[upstream\]'"):
        AlfWorldEnv.load_shared(AlfWorldOptions(data_path=str(tmp_path)))

