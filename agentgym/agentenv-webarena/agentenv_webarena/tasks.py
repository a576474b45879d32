"""Tasks in WebArena's config format: the embedded sites' task set (generated from their data, each with the plan
the expert follows), and WebArena's own configs read from a user's file for the user's sites.

A config is what WebArena's ``config_files/N.json`` holds: ``sites``, ``task_id``, ``start_url`` (with the sites'
placeholders, ``__SHOPPING__`` ...), ``intent`` (the objective the agent reads) with its template and
instantiation, ``require_login``/``storage_state``, ``require_reset`` and ``eval`` (``eval_types``,
``reference_answers``, ``reference_url``, ``program_html``, ``string_note``). The embedded set's templates cover
WebArena's kinds of task: information seeking (prices, reviews, SKUs, orders; authors, comment counts, top posts),
navigation (a category, a search, a board, a post: graded by URL) and content changes through forms (cart, checkout,
shipping address; comments, new posts, votes: graded by reading the pages afterwards), several of them over many pages
(search, product, cart, checkout, order).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentenv_webarena.world import World, address, build, slug

#: WebArena's site placeholders
PLACEHOLDERS = ("__SHOPPING_ADMIN__", "__SHOPPING__", "__REDDIT__", "__GITLAB__", "__MAP__", "__WIKIPEDIA__",
                "__HOMEPAGE__", "__MINIWOB__")
SITE_OF_PLACEHOLDER = {p: p.strip("_").lower() for p in PLACEHOLDERS}
SPLIT_SEED = {"test": 1, "train": 2}

#: one expert step: ("click", role, name) | ("type", role, name, text, enter) | ("stop", answer) | ("goto", url)
Step = tuple


@dataclass(frozen=True)
class Task:
    config: dict[str, Any]
    plan: tuple[Step, ...] = ()  # the expert's steps (empty: no expert, e.g. WebArena's own tasks)


def fill(value: Any, urls: Mapping[str, str]) -> Any:
    """``value`` (a config, a plan) with each site placeholder replaced by the site's base URL."""
    text = json.dumps(value)
    for placeholder in PLACEHOLDERS:
        site = SITE_OF_PLACEHOLDER[placeholder]
        if placeholder in text and site in urls:
            text = text.replace(placeholder, urls[site].rstrip("/"))
    return json.loads(text)


# -- the embedded task set ---------------------------------------------------------------------------------------------
def _config(site: str, template: str, values: dict[str, Any], template_id: int, eval_: dict[str, Any]) -> dict:
    start = {"shopping": "__SHOPPING__", "reddit": "__REDDIT__"}[site]
    return {"sites": [site], "task_id": 0, "require_login": True, "storage_state": None, "start_url": start,
            "geolocation": None, "intent_template": re.sub(r"\{(\w+)\}", r"{{\1}}", template),
            "instantiation_dict": values, "intent": template.format(**values), "require_reset": False,
            "eval": {"eval_types": [], "reference_answers": None, "reference_url": "", "program_html": [],
                     "string_note": "", "reference_answer_raw_annotation": "", **eval_},
            "intent_template_id": template_id}


def _answer(kind: str, value: Any) -> dict:
    return {"eval_types": ["string_match"], "reference_answers": {kind: value},
            "reference_answer_raw_annotation": value if isinstance(value, str) else ", ".join(value)}


def _url(url: str) -> dict:
    return {"eval_types": ["url_match"], "reference_url": url, "url_note": "GOLD in PRED"}


def _html(*targets: tuple[str, str, str, Any]) -> dict:
    return {"eval_types": ["program_html"],
            "program_html": [{"url": url, "locator": locator, "required_contents": {kind: value}}
                             for url, locator, kind, value in targets]}


def _search(name: str) -> list[Step]:
    return [("type", "textbox", "Search", name, True), ("click", "link", name)]


def _open_post(forum: str, title: str) -> list[Step]:
    return [("click", "link", f"f/{forum}"), ("click", "link", title)]


_REPLIES = ["Thanks, this helped me a lot.", "I will try that this weekend.", "Bookmarked for later reading.",
            "Good point about the details.", "Following this thread.", "Mine turned out the same way.",
            "Could you share where you found it?", "Welcome to the forum!"]
_NEW_TITLES = ["Weekly check-in", "Beginner question", "Show and tell", "Looking for recommendations",
               "Small win today", "A tip that saved me time", "Poll: favourite tools", "Lessons from last month"]
_BODIES = ["Share what you are working on.", "Any advice is welcome.", "Here is what worked for me.",
           "Let me know what you think.", "Details in the comments below."]


def _templates(world: World) -> list[tuple[int, int, int, Callable[[random.Random], Iterator[Task]]]]:
    """(template id, test count, train count, generator of distinct instantiations)."""
    products = sorted(world.products.values(), key=lambda p: p.id)
    posts = sorted(world.posts.values(), key=lambda p: p.id)

    def each(items: list, rng: random.Random) -> list:
        items = list(items)
        rng.shuffle(items)
        return items

    def price(rng):
        for p in each(products, rng):
            yield Task(_config("shopping", "What is the price of {product}?", {"product": p.name}, 1,
                               _answer("must_include", [f"{p.price:.2f}"])),
                       (*_search(p.name), ("stop", p.price_text)))

    def reviews(rng):
        for p in each(products, rng):
            yield Task(_config("shopping", "How many reviews does {product} have?", {"product": p.name}, 2,
                               _answer("must_include", [str(len(p.reviews))])),
                       (*_search(p.name), ("stop", str(len(p.reviews)))))

    def sku(rng):
        for p in each(products, rng):
            yield Task(_config("shopping", "What is the SKU of {product}?", {"product": p.name}, 3,
                               _answer("exact_match", p.sku)), (*_search(p.name), ("stop", p.sku)))

    def order_total(rng):
        for o in each(list(world.orders), rng):
            total = f"{o.total(world.products):,.2f}"
            yield Task(_config("shopping", "What is the grand total of my order number {number}?",
                               {"number": o.number}, 4, _answer("must_include", [total])),
                       (("click", "link", "My Orders"), ("click", "link", f"View Order {o.number}"),
                        ("stop", f"${total}")))

    def order_size(rng):
        for o in each(list(world.orders), rng):
            n = str(len(o.items))
            yield Task(_config("shopping", "How many different products did I buy in order {number}?",
                               {"number": o.number}, 5, _answer("must_include", [n])),
                       (("click", "link", "My Orders"), ("click", "link", f"View Order {o.number}"), ("stop", n)))

    def category(rng):
        for c in each(list(world.categories), rng):
            yield Task(_config("shopping", "Show me the products of the {category} category.", {"category": c}, 6,
                               _url(f"__SHOPPING__/category/{slug(c)}")), (("click", "link", c), ("stop", "")))

    def search_for(rng):
        words = sorted({w for p in products for w in p.name.split()[1:]} - {"Iron"})
        seen: set[str] = set()
        while True:
            query = f"{rng.choice(words)} {rng.choice(words)}".lower()
            if query in seen or len(set(query.split())) < 2:
                continue
            seen.add(query)
            yield Task(_config("shopping", "Search the store for \"{query}\".", {"query": query}, 7,
                               _url(f"__SHOPPING__/search?q={query.replace(' ', '+')}")),
                       (("type", "textbox", "Search", query, True), ("stop", "")))

    def add_to_cart(rng):
        for p in each(products, rng):
            qty = rng.randint(1, 4)
            steps = [*_search(p.name)] + ([("type", "textbox", "Qty", str(qty), False)] if qty > 1 else [])
            yield Task(_config("shopping", "Add {quantity} of {product} to my cart.",
                               {"quantity": qty, "product": p.name}, 8,
                               _html(("__SHOPPING__/cart", "document.querySelector('#cart').outerText",
                                      "must_include", [f"{p.name} (quantity {qty})"]))),
                       (*steps, ("click", "button", "Add to Cart"), ("stop", "")))

    def buy(rng):
        names = ["Jordan Lee", "Sam Rivera", "Priya Shah", "Chris Novak", "Mia Chen", "Omar Haddad"]
        for p in each(products, rng):
            who = rng.choice(names)
            street, city, post = address(rng)
            values = {"product": p.name, "name": who, "address": f"{street}, {city} {post}"}
            steps = [*_search(p.name), ("click", "button", "Add to Cart"), ("click", "link", "Proceed to Checkout"),
                     ("type", "textbox", "Full name", who, False), ("type", "textbox", "Street address", street, False),
                     ("type", "textbox", "City", city, False), ("type", "textbox", "Postcode", post, False),
                     ("click", "button", "Place Order"), ("stop", "")]
            yield Task(_config("shopping", "Buy {product} and ship it to {name}, {address}.", values, 9,
                               _html(("func:shopping_get_latest_order_url()",
                                      "document.querySelector('#order').outerText", "must_include",
                                      [p.name, who, street, f"{city} {post}"]))), tuple(steps))

    def change_address(rng):
        seen: set[str] = set()
        while True:
            street, city, post = address(rng)
            if street in seen:
                continue
            seen.add(street)
            yield Task(_config("shopping", "Change my default shipping address to {address}.",
                               {"address": f"{street}, {city} {post}"}, 10,
                               _html(("__SHOPPING__/account", "document.querySelector('#address').outerText",
                                      "must_include", [street, f"{city} {post}"]))),
                       (("click", "link", "My Account"), ("click", "link", "Change Shipping Address"),
                        ("type", "textbox", "Street address", street, False), ("type", "textbox", "City", city, False),
                        ("type", "textbox", "Postcode", post, False), ("click", "button", "Save Address"),
                        ("stop", "")))

    def author(rng):
        for p in each(posts, rng):
            yield Task(_config("reddit", "Who submitted the post \"{title}\" in f/{forum}?",
                               {"title": p.title, "forum": p.forum}, 11, _answer("must_include", [p.author])),
                       (*_open_post(p.forum, p.title), ("stop", p.author)))

    def comment_count(rng):
        for p in each(posts, rng):
            n = str(len(p.comments))
            yield Task(_config("reddit", "How many comments does the post \"{title}\" in f/{forum} have?",
                               {"title": p.title, "forum": p.forum}, 12, _answer("must_include", [n])),
                       (*_open_post(p.forum, p.title), ("stop", n)))

    def top_post(rng):
        for f in each(list(world.forums), rng):
            best = max(world.forum_posts(f), key=lambda p: p.score)
            yield Task(_config("reddit", "What is the title of the highest-scoring post in f/{forum}?", {"forum": f},
                               13, _answer("exact_match", best.title)),
                       (("click", "link", f"f/{f}"), ("click", "link", "Top"), ("stop", best.title)))

    def open_board(rng):
        for f in each(list(world.forums), rng):
            yield Task(_config("reddit", "Open the forum f/{forum}.", {"forum": f}, 14, _url(f"__REDDIT__/f/{f}")),
                       (("click", "link", f"f/{f}"), ("stop", "")))

    def open_post(rng):
        for p in each(posts, rng):
            yield Task(_config("reddit", "Open the post \"{title}\" in f/{forum}.",
                               {"title": p.title, "forum": p.forum}, 15, _url(f"__REDDIT__{p.path}")),
                       (*_open_post(p.forum, p.title), ("stop", "")))

    def reply(rng):
        for p in each(posts, rng):
            text = rng.choice(_REPLIES)
            yield Task(_config("reddit", "Reply to the post \"{title}\" in f/{forum} with the comment \"{text}\".",
                               {"title": p.title, "forum": p.forum, "text": text}, 16,
                               _html(("func:reddit_get_post_url('__last_url__')",
                                      "document.querySelector('.comments').outerText", "must_include", [text]))),
                       (*_open_post(p.forum, p.title), ("type", "textbox", "Comment", text, False),
                        ("click", "button", "Post comment"), ("stop", "")))

    def new_post(rng):
        seen: set[tuple[str, str, str]] = set()
        while True:
            f, title, body = rng.choice(world.forums), rng.choice(_NEW_TITLES), rng.choice(_BODIES)
            if (f, title, body) in seen:
                continue
            seen.add((f, title, body))
            yield Task(_config("reddit", "Create a post in f/{forum} titled \"{title}\" with the body \"{body}\".",
                               {"forum": f, "title": title, "body": body}, 17,
                               _html(("func:reddit_get_post_url('__last_url__')",
                                      "document.querySelector('.submission__title').outerText", "exact_match", title),
                                     ("func:reddit_get_post_url('__last_url__')",
                                      "document.querySelector('.submission__body').outerText", "must_include",
                                      [body]))),
                       (("click", "link", f"f/{f}"), ("click", "link", "Submit a new post"),
                        ("type", "textbox", "Title", title, False), ("type", "textbox", "Body", body, False),
                        ("click", "button", "Create submission"), ("stop", "")))

    def upvote(rng):
        for p in each(posts, rng):
            yield Task(_config("reddit", "Upvote the post \"{title}\" in f/{forum}.",
                               {"title": p.title, "forum": p.forum}, 18,
                               _html((f"__REDDIT__{p.path}", "document.querySelector('.vote-count').outerText",
                                      "exact_match", str(p.score + 1)))),
                       (*_open_post(p.forum, p.title), ("click", "button", "Upvote"), ("stop", "")))

    return [(1, 20, 100, price), (2, 15, 80, reviews), (3, 10, 60, sku), (4, 10, 20, order_total),
            (5, 10, 20, order_size), (6, 4, 4, category), (7, 15, 80, search_for), (8, 20, 110, add_to_cart),
            (9, 20, 100, buy), (10, 15, 70, change_address), (11, 20, 100, author), (12, 15, 80, comment_count),
            (13, 4, 8, top_post), (14, 4, 8, open_board), (15, 15, 80, open_post), (16, 20, 110, reply),
            (17, 15, 100, new_post), (18, 20, 100, upvote)]


def embedded_tasks(world: World | None = None) -> dict[str, list[Task]]:
    """The embedded task set: per template, distinct instantiations, the first ones to test, the next to train;
    each split in a fixed shuffled order, ``task_id`` its index."""
    world = world or build()
    splits: dict[str, list[Task]] = {"test": [], "train": []}
    for template_id, n_test, n_train, make in _templates(world):
        made = make(random.Random(1000 + template_id))
        chosen = [next(made) for _ in range(n_test + n_train)]
        splits["test"] += chosen[:n_test]
        splits["train"] += chosen[n_test:]
    for split, tasks in splits.items():
        random.Random(SPLIT_SEED[split]).shuffle(tasks)
        for i, task in enumerate(tasks):
            task.config["task_id"] = i
    return splits


# -- WebArena's own configs -------------------------------------------------------------------------------------------
def read_configs(path: str | Path) -> list[Task]:
    """WebArena task configs from a JSON file holding a list of them (``test.raw.json``) or one of them, or from a
    directory of ``N.json`` files (WebArena's ``config_files``), in task-id order."""
    path = Path(path).expanduser()
    if path.is_dir():
        files = sorted((p for p in path.glob("*.json") if p.stem.isdigit()), key=lambda p: int(p.stem))
        if not files:
            raise ValueError(f"{path} holds no WebArena task configs (N.json)")
        configs = [json.loads(p.read_text()) for p in files]
    elif path.is_file():
        loaded = json.loads(path.read_text())
        configs = loaded if isinstance(loaded, list) else [loaded]
    else:
        raise ValueError(f"no WebArena task configs at {path}")
    for i, config in enumerate(configs):
        missing = {"intent", "start_url", "eval"} - set(config)
        if missing:
            raise ValueError(f"{path}: config {i} is not a WebArena task config (missing {sorted(missing)})")
    return [Task(config) for config in configs]


def parse_sites(text: str) -> dict[str, str]:
    """``shopping=http://host:7770,reddit=http://host:9999`` -> {site: URL}."""
    urls = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, url = part.partition("=")
        if not sep or not url.startswith(("http://", "https://")):
            raise ValueError(f"sites: {part!r} is not NAME=http://...")
        if f"__{name.upper()}__" not in PLACEHOLDERS:
            raise ValueError(f"sites: unknown site {name!r} (WebArena's: "
                             f"{', '.join(sorted(SITE_OF_PLACEHOLDER.values()))})")
        urls[name] = url.rstrip("/")
    return urls


def export(directory: str | Path, split: str = "test") -> int:
    """Write a split of the embedded set as WebArena's ``config_files/N.json`` (placeholders kept)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tasks = embedded_tasks()[split]
    for task in tasks:
        (out / f"{task.config['task_id']}.json").write_text(json.dumps(task.config, indent=2))
    return len(tasks)


if __name__ == "__main__":
    import sys

    if len(sys.argv) not in (2, 3):
        sys.exit("usage: python -m agentenv_webarena.tasks DIR [train|test]")
    print(f"wrote {export(*sys.argv[1:])} task configs to {sys.argv[1]}")
