"""Tests of the webshop environment: the SDK's contract (check_environment: the expert on every test task,
the protocol and AgentGym's routes over HTTP), catalogue and splits, the site's rules, the reward on
hand-built cases, the random policy, a real HTTP server's flat memory over create/close cycles and loading
data in upstream WebShop's file format."""

from __future__ import annotations

import gc
import itertools
import json
import random

import psutil
import pytest

from agentenv.client import EnvClient
from agentenv.server import ServerConfig
from agentenv.testing import check_environment, checks_for, play_in_process, serve_in_thread
from agentenv_webshop import generate, lucene, reward, upstream, webshop_export
from agentenv_webshop.agentgym_profile import DATA_VAR
from agentenv_webshop.browser import ITEM, RESULTS, SEARCH, SUB
from agentenv_webshop.catalogue import NO_PRICE_BOUND, Goal, Product
from agentenv_webshop.env import WebShopEnv, WebShopOptions
from agentenv_webshop.taxonomy import TYPES
from agentenv_webshop.text import phrase_in_words, phrase_match, tokenize, tokens, word_set


@pytest.fixture(scope="module")
def cat():
    return WebShopEnv.load_shared(WebShopOptions())  # the server's catalogue (cached per process)


@pytest.fixture()
def env(cat):
    e = WebShopEnv()
    e.shared, e.options = cat, WebShopOptions()
    return e


def expert_episode(env: WebShopEnv, task_id: int, split: str = "test"):
    return play_in_process(env, task_id, split, lambda e: e.expert_action())


# -- the SDK's contract ------------------------------------------------------------------------------
@pytest.mark.parametrize("part", checks_for(WebShopEnv))
def test_check_environment(part, monkeypatch, tmp_path):
    """The contract; the expert solves every test task (a return and score of 1) within 10 turns, with a
    thought at every turn: what it needs first, buying at the end; tasks 2 and 199 are played over HTTP.
    AgentGym's routes (an env_idx server: reset by session_id -> a pair, the observation under "state") serve
    the agentgym profile, which plays WebShop's data files: here this package's products written in them
    (``$AGENTENV_WEBSHOP_DATA``), searched by Lucene (Anserini's jar, which setup.sh fetches)."""
    if part == "agentgym":
        try:
            lucene.jar_path()
        except lucene.LuceneError as e:
            pytest.skip(str(e))
        monkeypatch.setenv(DATA_VAR, str(webshop_export.export(tmp_path)))
        report = check_environment(WebShopEnv, checks=(part,), thoughts=True)
        assert all(episode.total == 1.0 for episode in report.episodes)
        return
    report = check_environment(WebShopEnv, checks=(part,), thoughts=True, served=(2, 199))
    for episode in report.episodes:
        assert episode.total == 1.0 and episode.results[-1].score == 1.0 and episode.turns <= 10, episode.task_id
        assert episode.thoughts[0].startswith("I need ") and "buy it" in episode.thoughts[-1], episode.task_id
    if report.info is not None:
        assert report.info["splits"] == {"train": 5800, "test": 200}


# -- metadata, catalogue, splits ---------------------------------------------------------------------
def test_metadata():
    assert WebShopEnv.name == "webshop" and WebShopEnv.success_threshold == 1.0
    assert "search[" in WebShopEnv.instruction and "click[" in WebShopEnv.instruction
    assert WebShopEnv.num_tasks("test") == 200 and WebShopEnv.num_tasks("train") >= 5000
    with pytest.raises(ValueError):
        WebShopEnv.num_tasks("dev")
    with pytest.raises(Exception):  # noqa: B017 - pydantic's ValidationError: unknown options are errors
        WebShopOptions(colour="red")


def test_catalogue_is_large_varied_and_matches_the_declared_counts(cat):
    assert len(cat.products) >= 5000 and len(cat.by_asin) == len(cat.products)
    assert len({p.category for p in cat.products}) >= 8 and len({p.query for p in cat.products}) >= 50
    assert cat.counts() == WebShopEnv.task_counts(None) == WebShopEnv.task_counts(cat)
    p = cat.products[0]
    assert p.title and p.description and p.features and p.reviews and p.options and p.attributes and p.price > 0
    test_targets = {g.asin for g in cat.goals["test"]}
    assert len(test_targets) == 200 and not test_targets & {g.asin for g in cat.goals["train"]}


def test_generation_is_deterministic():
    small = generate.generate(120)
    again = generate.generate(120)
    assert [(p.asin, p.title, p.price, p.options) for p in small.products] == \
           [(p.asin, p.title, p.price, p.options) for p in again.products]
    assert [g.instruction for g in small.goals["test"]] == [g.instruction for g in again.goals["test"]]
    # product i does not depend on the catalogue's size
    names = generate.brands()
    assert generate.make_product(7, names).title == small.products[7].title


def test_goals_state_attributes_options_and_a_price_above_the_target(cat):
    for g in cat.goals["test"][:50]:
        target = cat.by_asin[g.asin]
        assert set(g.attributes) <= set(target.attributes) and 1 <= len(g.attributes) <= 3
        assert [name for name, _ in g.options] == [name for name, _ in target.options]
        assert all(v in dict(target.options)[name] for name, v in g.options)
        assert target.price < g.price_upper < NO_PRICE_BOUND and g.price_upper % 10 == 0
        assert f"price lower than {g.price_upper:.2f} dollars" in g.instruction
        assert all(a in g.instruction for a in g.attributes) and g.query in g.instruction
        assert reward.score(target, g, [v for _, v in g.options]).reward == 1.0


def test_vocabulary_keeps_the_reward_honest(cat):
    """Type words occur only in their own type's titles; no attribute or option value matches
    another of its type; a product's text credits exactly its own attributes."""
    type_words = {t.key: frozenset(tokens(" ".join(t.type_words))) for t in TYPES}
    pools = {t.key: [a for g in t.attributes for a in ((g,) if isinstance(g, str) else g)] for t in TYPES}
    for t in TYPES:
        assert not any(phrase_match(a, b) for a, b in itertools.combinations(pools[t.key], 2)), t.key
        values = [v for _, vs in t.options for v in vs]
        assert not any(phrase_match(a, b) for a, b in itertools.combinations(values, 2)), t.key
    for p in cat.products:
        title = word_set(p.title)
        assert p.type_words <= title
        assert not any(words & title for key, words in type_words.items() if key != p.query), p.title
    for p in cat.products[::7]:
        for a in pools[p.query]:
            assert reward.attributes_met(p, [a]) == (a in p.attributes), (p.asin, a)


# -- observations -------------------------------------------------------------------------------------
def test_first_observation_holds_the_instruction_and_equals_initial_observation(cat, env):
    for split, task_id in [("test", 0), ("test", 199), ("train", 0), ("train", 4321)]:
        obs, info = env.reset(task_id, split)
        goal = cat.goals[split][task_id]
        assert obs == f"WebShop [SEP] Instruction: [SEP] {goal.instruction} [SEP] Search"
        assert obs == env.initial_observation(task_id, split) == env.observation()
        assert info["asin"] == goal.asin and info["price_upper"] == goal.price_upper


def test_rich_text_mode_marks_buttons_and_selections(cat):
    env = WebShopEnv()
    env.shared, env.options = cat, WebShopOptions(observation_mode="text_rich")
    obs, _ = env.reset(0, "test")
    assert obs == env.initial_observation(0, "test") and obs.endswith("[button] Search [button_]")
    env.step(env.expert_action())
    first = env.expert_action()
    env.step(first)
    asin = env._browser.asin
    env.step(env.expert_action())  # selects the first option
    value = next(iter(env._browser.options.values()))
    obs = env.observation()
    assert obs.startswith(f"You have clicked {value}.") and f"[clicked button] {value} [clicked button_]" in obs
    assert "[button] Buy Now [button_]" in obs
    env.step("click[< prev]")
    assert f"[clicked button] {asin} [clicked button_]" in env.observation()


# -- the site -----------------------------------------------------------------------------------------
def test_navigation_follows_upstream(env):
    env.reset(5, "test")
    assert env.available_actions() == ["search[<query>]"]
    r = env.step("search[cotton]")
    b = env._browser
    assert r.valid and b.page == RESULTS and len(b.results) == 50 and "Page 1 (Total results: 50)" in r.observation
    assert "click[next >]" in env.available_actions() and "click[< prev]" not in env.available_actions()
    page1 = [p.asin for p in b.page_results()]
    assert env.available_actions()[2:] == [f"click[{a.lower()}]" for a in page1]
    env.step("click[Next >]")
    assert b.page_no == 2 and "Page 2" in env.observation() and page1[0] not in env.observation()
    env.step("click[< prev]")
    assert b.page_no == 1
    for _ in range(4):
        env.step("click[next >]")
    assert b.page_no == 5 and "click[next >]" not in env.available_actions()  # 50 results, 10 a page
    product = b.page_results()[0]
    env.step(f"click[{product.title.upper()}]")  # a result's title is a link too; case does not matter
    assert b.page == ITEM and b.asin == product.asin
    group, values = product.options[0]
    env.step(f"click[{values[-1]}]")
    assert b.options == {group: values[-1]}
    r = env.step("click[Features]")
    assert b.page == SUB and all(f in r.observation for f in product.features)
    env.step("click[reviews]")  # not on a sub-page
    assert b.page == SUB
    env.step("click[< prev]")
    assert b.page == ITEM and b.options == {group: values[-1]}  # options survive a sub-page
    env.step("click[< prev]")
    assert b.page == RESULTS and b.page_no == 5 and b.options == {}
    env.step("click[back to search]")
    assert b.page == SEARCH and env.observation() == env.initial_observation(5, "test")


def test_item_page_shows_title_price_options_and_buttons(cat, env):
    env.reset(0, "test")
    env.step(env.expert_action())
    env.step(env.expert_action())
    p = env._browser.product
    obs = env.observation()
    for text in [p.title, f"Price: {p.price_text}", f"Rating: {p.rating}", "Description", "Features", "Reviews",
                 "Buy Now", "< Prev", "Back to Search", *(v for _, vs in p.options for v in vs)]:
        assert f" [SEP] {text}" in obs
    actions = env.available_actions()
    assert actions[:2] == ["click[back to search]", "click[< prev]"] and actions[-1] == "click[buy now]"
    assert {f"click[{v}]" for _, vs in p.options for v in vs} <= set(actions)


@pytest.mark.parametrize("action,why", [
    ("buy it", "Invalid action"),
    ("click[buy now]", "not clickable"),  # no item open yet
    ("click[search]", "type search[keywords]"),
    ("search[]", "needs keywords"),
    ("search red shirt", "Invalid action"),
])
def test_invalid_actions_on_the_search_page_change_nothing(env, action, why):
    first, _ = env.reset(2, "test")
    r = env.step(action)
    assert not r.valid and not r.done and r.reward == 0.0 and why in r.observation
    assert r.observation.endswith(first) and env._browser.page == SEARCH and env._browser.searches == 0


def test_invalid_actions_elsewhere_and_after_the_end(env):
    env.reset(2, "test")
    env.step(env.expert_action())
    r = env.step("search[another thing]")
    assert not r.valid and "no search box" in r.observation and env._browser.page == RESULTS
    r = env.step("click[B0NOTHERE1]")
    assert not r.valid and "not clickable" in r.observation
    while not (r := env.step(env.expert_action())).done:
        pass
    assert r.success and env.available_actions() == []
    after = env.step("click[buy now]")
    assert after.done and not after.valid and after.reward == 0.0 and after.score == 1.0


# -- reward -------------------------------------------------------------------------------------------
def _product(**kw) -> Product:
    base = dict(asin="B000000001", title="Acme Men's Long Sleeve Running Shoes", category="Clothing",
                product_category="Clothing › Men › Shoes › Running", query="men's running shoes", price=40.0,
                price_text="$40.00", attributes=("long sleeve", "non slip"),
                options=(("color", ("black", "navy")), ("size", ("x-large", "xx-large"))),
                description="Made with breathable mesh.", features=("Rubber sole for grip.",),
                type_words=frozenset(tokens("running shoes")))
    base.update(kw)
    return Product(**base)


def _goal(**kw) -> Goal:
    base = dict(asin="B000000001", instruction="...", attributes=("non slip", "breathable mesh", "rubber sole"),
                options=(("color", "navy"), ("size", "x-large")), price_upper=50.0, query="men's running shoes",
                product_category="Clothing › Men › Shoes › Running", type_words=frozenset(tokens("running shoes")),
                search_query="non slip running shoes")
    base.update(kw)
    return Goal(**base)


def test_reward_full_match_and_partial_credit():
    p, g = _product(), _goal()
    full = reward.score(p, g, ["navy", "x-large"])
    assert full.reward == 1.0 and full.attributes_met == 3 and full.options_met == 2 and full.price_ok
    # 3 attributes + 2 options + price = 6 parts
    assert reward.score(p, g, ["navy", "xx-large"]).reward == pytest.approx(5 / 6)  # xx-large is not x-large
    assert reward.score(p, g, []).reward == pytest.approx(4 / 6)  # nothing selected
    assert reward.score(_product(price=55.0), g, ["navy", "x-large"]).reward == pytest.approx(5 / 6)
    assert reward.score(_product(description="", features=()), g, ["navy", "x-large"]).reward == pytest.approx(4 / 6)
    assert reward.score(p, _goal(price_upper=NO_PRICE_BOUND), []).reward == pytest.approx(4 / 6)


def test_reward_type_factor_follows_upstreams_cascade():
    g = _goal()
    other = dict(query="dog bed", product_category="Pet Supplies › Dogs › Beds")
    wrong = reward.score(_product(title="Acme Non Slip Dog Bed", **other), g, ["navy", "x-large"])
    assert wrong.r_type == 0.0 and wrong.reward == 0.0  # none of the type words: nothing, however well it reads
    half = reward.score(_product(title="Acme Trail Shoes", **other), g, ["navy", "x-large"])
    assert half.title_score == 0.5 and half.r_type == 1.0  # title_score > 0.2 counts as a type match
    six = _goal(type_words=frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}))
    assert reward.type_reward(_product(title="alpha", **other), six)[0] == 0.5  # 1/6: no signal holds
    twelve = _goal(type_words=frozenset(f"w{i}" for i in range(12)))
    assert reward.type_reward(_product(title="w1", **other), twelve)[0] == 0.1  # 1/12 < 0.1
    same_category = reward.type_reward(_product(title="w1 w2", query="x",
                                                product_category="Clothing › Men › Socks"), twelve)
    assert same_category[0] == 1.0 and same_category[2]  # categories share two levels


def test_phrase_matching_rules():
    assert phrase_match("essential oils", "essential oil") and phrase_match("powder snow", "cool powder snow")
    assert not phrase_match("x-large", "xx-large") and not phrase_match("large", "x-large")
    assert not phrase_match("long sleeve", "short sleeve") and not phrase_match("7", "7.5")
    assert phrase_in_words("slip on", tokenize("an easy Slip-On? no: slip on shoe"))
    assert not phrase_in_words("slip on", tokenize("non slip online shop"))
    assert tokens("Men's Shoes, 7.5 / T-Shirts") == ("men", "shoe", "7.5", "t-shirt")


def test_best_selection_picks_the_goals_values():
    assert reward.best_selection(_product(), _goal()) == {"color": "navy", "size": "x-large"}
    assert reward.best_selection(_product(), _goal(options=(("", "black"),))) == {"color": "black"}


# -- policies -----------------------------------------------------------------------------------------
def test_expert_recovers_after_an_agent_wanders(env):
    rng = random.Random(3)
    for task_id in range(10):
        env.reset(task_id, "test")
        for _ in range(3):
            if env.step(env.random_action(rng)).done:
                break
        if env._browser.page == "done":
            continue
        for _ in range(env.max_turns):
            r = env.step(env.expert_action())
            if r.done:
                break
        assert r.done and r.success


def test_random_policy_is_far_worse(env):
    rng = random.Random(0)
    results = [play_in_process(env, i, "test", lambda e: e.random_action(rng)) for i in range(100)]
    wins = sum(res[-1].success for _, res in results)
    assert wins <= 8 and sum(total for total, _ in results) / 100 < 0.4
    assert all(0.0 <= total <= 1.0 for total, _ in results)


def test_random_search_uses_instruction_words(env):
    env.reset(0, "test")
    action = env.random_action(random.Random(1))
    assert action.startswith("search[") and env.step(action).valid


# -- HTTP ---------------------------------------------------------------------------------------------
def test_server_memory_stays_flat_over_create_close_cycles():
    with serve_in_thread(WebShopEnv) as url, EnvClient(url) as client:
        proc = psutil.Process()

        def cycles(n: int) -> None:
            for i in range(n):
                s = client.create(task_id=i % 200, split="test")
                client.step(s.env_id, client.policy_action(s.env_id, "expert"))  # a search
                client.close(s.env_id)

        cycles(50)
        gc.collect()
        before = proc.memory_info().rss
        cycles(200)
        gc.collect()
        grown = proc.memory_info().rss - before
        assert grown < 16 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 200 sessions"
        assert client.health()["sessions"] == 0


# -- upstream data ------------------------------------------------------------------------------------
def _raw(asin: str, name: str, query: str, pricing: object, options: dict | None) -> dict:
    custom = {k: [{"value": v, "image": None} for v in vs] for k, vs in (options or {}).items()}
    return {"asin": asin, "name": name, "category": "fashion", "query": query,
            "product_category": "Clothing, Shoes & Jewelry › Men › Clothing › Shirts",
            "full_description": f"{name}. Soft fabric for every day.", "small_description": ["Machine wash cold"],
            "pricing": pricing, "images": ["https://example.invalid/a.jpg"],
            "customization_options": custom}


def write_upstream_fixture(directory) -> None:
    """A tiny data set in the published files' formats (items_shuffle / items_ins_v2 / items_human_ins)."""
    products = [
        _raw("B0SHIRT001", "Acme Men's Cotton T-Shirt", "men's t-shirts", "$12.99",
             {"Color": ["Black", "Navy/Blue"], "Size": ["Small", "Large"]}),
        _raw("B0SHIRT002", "Bolt Men's Polo Shirt", "men's polo shirts", "$20.00 - $30.00", {"Size": ["Medium"]}),
        _raw("B0MUG00003", "Crane Ceramic Coffee Mug", "coffee mugs", "$8.50", None),
        _raw("B0SHIRT001", "duplicate, dropped", "x", "$1.00", None),
        _raw("nan", "no id, dropped", "x", "$1.00", None),
        _raw("B0TOOLONGID99", "id too long, dropped", "x", "$1.00", None),
    ]
    attributes = {
        "B0SHIRT001": {"attributes": ["cotton", "machine wash"], "instruction": "Find me cotton men's t-shirts",
                       "instruction_attributes": ["cotton"]},
        "B0SHIRT002": {"attributes": ["short sleeve"]},
        "B0MUG00003": {"attributes": ["dishwasher safe"], "instruction": "Find me dishwasher safe coffee mugs",
                       "instruction_attributes": ["dishwasher safe"]},
    }
    human = {
        "B0SHIRT001": [{"asin": "B0SHIRT001", "instruction": "i want a navy cotton t-shirt in large.",
                        "instruction_attributes": ["cotton"], "instruction_options": ["navy | blue", "large"]},
                       {"asin": "B0SHIRT001", "instruction": "no attributes: skipped",
                        "instruction_attributes": [], "instruction_options": []}],
        "B0SHIRT002": [{"asin": "B0SHIRT002", "instruction": "i need a short sleeve polo shirt",
                        "instruction_attributes": ["short sleeve"], "instruction_options": ["medium"]}],
        "B0MUG00003": [{"asin": "B0MUG00003", "instruction": "a coffee mug that is dishwasher safe",
                        "instruction_attributes": ["dishwasher safe"], "instruction_options": []}] * 3,
    }
    (directory / "items_shuffle_1000.json").write_text(json.dumps(products))
    (directory / "items_ins_v2_1000.json").write_text(json.dumps(attributes))
    (directory / "items_human_ins.json").write_text(json.dumps(human))


def test_upstream_files_load_like_upstream(tmp_path):
    write_upstream_fixture(tmp_path)
    human = upstream.load(tmp_path)
    assert [p.asin for p in human.products] == ["B0SHIRT001", "B0SHIRT002", "B0MUG00003"]
    shirt, polo, mug = human.products
    assert shirt.options == (("color", ("black", "navy | blue")), ("size", ("small", "large")))
    assert (polo.price, polo.price_text) == (20.0, "$20.0 to $30.0") and mug.options == ()
    assert sum(human.counts().values()) == 5 and human.counts()["test"] == 1
    goal = next(g for split in human.goals.values() for g in split if g.asin == "B0SHIRT001")
    assert goal.options == (("", "navy | blue"), ("", "large")) and goal.attributes == ("cotton",)
    assert goal.instruction.startswith("i want a navy cotton t-shirt in large, and price lower than")
    synthetic = upstream.load(tmp_path, human=False)
    assert sum(synthetic.counts().values()) == 2 * 2 + 1  # shirt: every color x size; mug: one
    assert upstream.load(tmp_path, num_products=1).products[0].asin == "B0SHIRT001"
    with pytest.raises(FileNotFoundError):
        upstream.load(tmp_path / "missing")


def test_server_with_upstream_data_path(tmp_path):
    write_upstream_fixture(tmp_path)
    config = ServerConfig(options={"data_path": str(tmp_path), "observation_mode": "text_rich"})
    with serve_in_thread(WebShopEnv, config) as url, EnvClient(url) as client:
        info = client.info()
        assert info["splits"] == {"train": 4, "test": 1} and info["options"]["data_path"] == str(tmp_path)
        for split, n in info["splits"].items():
            for task_id in range(n):
                s = client.create(task_id=task_id, split=split)
                assert "Instruction:" in s.observation and "[button] Search [button_]" in s.observation
                while True:
                    step = client.step(s.env_id, client.policy_action(s.env_id, "expert"))
                    if step.done:
                        break
                assert step.success, (split, task_id, step.info)
                client.close(s.env_id)
