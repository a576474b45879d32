"""The webshop environment of AgentGym (``--option profile=agentgym``): its 6,910 goals on WebShop's 1,000 products.

AgentGym's WebShop server (``agentenv-webshop``, its copy of WebShop) makes every environment with
``WebAgentTextEnv(observation_mode="text", num_products=1000)`` and resets it with ``session_id=N``. What it then
plays, reproduced here from the public code of AgentGym and WebShop (read, not copied), on WebShop's data files,
which the user gives (``--option data_path=DIR``: ``items_shuffle_1000.json``, ``items_ins_v2_1000.json``,
``items_human_ins.json``, as WebShop's ``setup.sh`` downloads them):

- **the products**: WebShop's ``load_products`` on the first 1,000 entries of the product file (ids longer than
  10 characters or ``nan`` and repeated ids skipped; the price tag ``$A`` or ``$A to $B`` from the pricing text;
  option values lower-cased, ``/`` shown as `` | ``; no reviews; rating ``N.A.``);
- **the prices**: a product priced as a range costs ``random.uniform(A, B)``, drawn in product order after
  AgentGym's ``create`` seeded Python's generator with the time (and drew one ``randint``): upstream's own range
  prices, and so its price bounds for those products, change from server to server. Here the seed is the option
  ``price_seed`` (default 0), with which the draws are those of AgentGym's server that read ``time.time() ==
  price_seed``;
- **the goals**: the synthetic ones (AgentGym does not ask for the human goals): per product with an instruction,
  one goal per combination of its option values (groups in name order), a price bound from one
  ``random.seed(233)`` stream over the products in order (of the first four multiples of 10 above the price, the
  larger of two drawn), then all goals shuffled with seed 233. Goal N is AgentGym's item ``webshop_N`` (AgentEval's
  200 items lie in 26-6904, AgentTraj's in 0-6909); both splits are that one index space;
- **the search**: Lucene's BM25 over WebShop's index of the products (:mod:`agentenv_webshop.lucene`: Anserini's
  own jar), 50 results at most, 10 a page;
- **the pages**: WebShop's templates as its text mode reads them (the visible strings of the HTML joined by
  `` [SEP] ``), and its rules: a search works on every page, ``Next >`` is always offered on the results, ``<
  Prev`` on an item page searches again, a click must name something on the page (lower case), anything else
  changes nothing and earns 0;
- **the reward**: WebShop's ``get_reward`` on Buy Now, with thefuzz 0.19's ``token_set_ratio`` (python-Levenshtein
  behind it) for attributes and options, the purchase price against the goal's bound, and the type factor.

What cannot be reproduced everywhere: the type factor compares the nouns spaCy's ``en_core_web_lg`` finds in the
bought product's name and the target's. That model is not on PyPI; with ``type_nouns=auto`` it is used when it is
installed (then exactly as upstream), else the content words of the names stand in for the nouns
(``type_nouns=words``); ``none`` finds no nouns, as a blank spaCy pipeline (what upstream computes without the
model). It matters only when the product bought is not the target (for the target the factor is 1 whatever the
tagger says). As in AgentGym's evaluation, an episode has 10 rounds (its ``max_round``); the server has no limit.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict
from thefuzz import fuzz

from agentenv import Environment, Split, StepResult
from agentenv.env import file_stamps
from agentenv.interop.agentgym_routes import AgentGymRoutes
from agentenv_webshop import lucene
from agentenv_webshop.env import WebShopEnv
from agentenv_webshop.text import content_words

PRODUCTS, ATTRIBUTES, HUMAN = "items_shuffle_1000.json", "items_ins_v2_1000.json", "items_human_ins.json"
NUM_PRODUCTS = 1000
DATA_VAR = "AGENTENV_WEBSHOP_DATA"  # where WebShop's data files are when no data_path is given
NUM_GOALS = 6910  # on WebShop's published 1,000 products (counted from the files once they are loaded)
MAX_ROUNDS = 10
SEARCH_RETURN_N, PRODUCT_WINDOW = 50, 10
PRICE_RANGE = tuple(10.0 * i for i in range(1, 100))
NO_BOUND = 1000000
SHUFFLE_SEED = 233
END_BUTTON, NEXT_PAGE, PREV_PAGE, BACK_TO_SEARCH = "Buy Now", "Next >", "< Prev", "Back to Search"
SUB_PAGES = ("Description", "Features", "Reviews", "Attributes")
BASE_URL = "http://127.0.0.1:3000"
#: WebShop's colour words: an option is read as the first of them it contains (upstream's normalize_color)
COLOR_SET = (
    "alabaster", "apricot", "aqua", "ash", "asphalt", "azure", "banana", "beige", "black", "blue", "blush",
    "bordeaux", "bronze", "brown", "burgundy", "camel", "camo", "caramel", "champagne", "charcoal", "cheetah",
    "chestnut", "chocolate", "christmas", "coffee", "cognac", "copper", "coral", "cranberry", "cream", "crystal",
    "dark", "denim", "eggplant", "elephant", "espresso", "fuchsia", "gold", "granite", "grape", "graphite", "grass",
    "gray", "green", "grey", "heather", "indigo", "ivory", "ivy", "khaki", "lavender", "lemon", "leopard", "light",
    "lilac", "lime", "magenta", "maroon", "mauve", "merlot", "midnight", "mint", "mocha", "multicolor", "mushroom",
    "mustard", "natural", "navy", "nude", "olive", "orange", "peach", "pewter", "pink", "plum", "purple", "rainbow",
    "red", "rose", "royal", "rust", "sand", "sapphire", "seashell", "silver", "skull", "slate", "steel", "stone",
    "stonewash", "sunflower", "tan", "taupe", "teal", "tiger", "turquoise", "violet", "walnut", "wheat", "white",
    "wine", "yellow")
_ACTION = re.compile(r"(.+)\[(.+)\]")  # upstream's parse_action (matched at the start, greedy)


class AgentGymShopOptions(BaseModel):
    """Server options of the agentgym profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the directory of WebShop's data files (items_shuffle_1000.json, items_ins_v2_1000.json, items_human_ins.json);
    #: else $AGENTENV_WEBSHOP_DATA
    data_path: str | None = None
    #: the seed of the range prices' draws (upstream's is the time its server created the environment)
    price_seed: float = 0
    #: the nouns of the type factor: spaCy's en_core_web_lg (auto: when installed), content words, or none
    type_nouns: Literal["auto", "spacy", "words", "none"] = "auto"
    #: Anserini's jar (else $AGENTENV_ANSERINI_JAR, else the one `python -m agentenv_webshop.lucene fetch` cached)
    anserini_jar: str | None = None


# -- WebShop's data, as its load_products reads it -------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Item:
    """One product as WebShop's ``load_products`` leaves it."""

    asin: str
    name: str  # the Title
    category: str
    query: str
    product_category: str
    description: str
    bullets: tuple[str, ...]
    pricing: tuple[float, ...]
    price_tag: str
    options: tuple[tuple[str, tuple[str, ...]], ...]  # option name -> values, in the file's order
    attributes: tuple[str, ...]
    instruction_text: str | None
    instruction_attributes: tuple[str, ...] | None


@dataclass(frozen=True)
class ShopGoal:
    """One synthetic goal, as WebShop's ``get_synthetic_goals`` writes it."""

    asin: str
    instruction_text: str
    attributes: tuple[str, ...]
    price_upper: float
    goal_options: tuple[tuple[str, str], ...]  # option name -> value, names sorted
    query: str
    product_category: str
    name: str


@dataclass(frozen=True, eq=False)
class ShopData:
    root: Path
    items: tuple[Item, ...]
    by_asin: dict[str, Item]
    prices: dict[str, float]
    goals: tuple[ShopGoal, ...]
    documents: tuple[dict[str, str], ...]  # what WebShop's index holds (id and contents)
    searcher: Any = field(default=None, repr=False)  # a lucene.Searcher, started once per server


def _pricing(raw: Any) -> tuple[list[float], str]:
    if raw is None or not raw:
        return [100.0], "$100.0"
    prices = [float(Decimal(re.sub(r"[^\d.]", "", part))) for part in raw.split("$")[1:]]
    if len(prices) == 1:
        return prices, f"${prices[0]}"
    return prices[:2], f"${prices[0]} to ${prices[1]}"


def read_items(raw_products: list[dict[str, Any]], attributes: dict[str, Any], num_products: int | None,
               synthetic: bool) -> list[Item]:
    """WebShop's ``load_products``: the first ``num_products`` entries, bad and repeated ids skipped."""
    if num_products is not None:
        raw_products = raw_products[:num_products]
    seen: set[str] = set()
    out = []
    for p in raw_products:
        asin = p["asin"]
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        small = p["small_description"]
        pricing, tag = _pricing(p.get("pricing"))
        options = []
        for name, contents in (p["customization_options"] or {}).items():
            if contents is None:
                continue
            options.append((name.lower(), tuple(c["value"].strip().replace("/", " | ").lower() for c in contents)))
        info = attributes.get(asin, {})
        instruction, instruction_attributes = None, None
        if synthetic:  # upstream reads these only for the synthetic goals (a missing entry fails there, as here)
            instruction = attributes[asin].get("instruction", None)
            instruction_attributes = attributes[asin].get("instruction_attributes", None)
        out.append(Item(
            asin=asin, name=p["name"], category=p["category"], query=p["query"].lower().strip(),
            product_category=p["product_category"], description=p["full_description"],
            bullets=tuple(small) if isinstance(small, list) else (small,), pricing=tuple(pricing), price_tag=tag,
            options=tuple(dict(options).items()),
            attributes=tuple(info["attributes"]) if "attributes" in info else ("DUMMY_ATTR",),
            instruction_text=instruction,
            instruction_attributes=tuple(instruction_attributes) if instruction_attributes is not None else None))
    return out


def draw_prices(items: Sequence[Item], seed: float) -> dict[str, float]:
    """The price of every product: its one price, or a draw in its range (AgentGym's create seeds the generator
    with the time, draws an environment id, then WebShop draws the range prices in product order)."""
    rng = random.Random(seed)
    rng.randint(0, 48950076)
    out = {}
    for item in items:
        out[item.asin] = item.pricing[0] if len(item.pricing) == 1 else rng.uniform(*item.pricing[:2])
    return out


def synthetic_goals(items: Sequence[Item], prices: dict[str, float]) -> list[ShopGoal]:
    """WebShop's ``get_synthetic_goals``, then AgentGym's shuffle with seed 233."""
    rng = random.Random(SHUFFLE_SEED)
    goals: list[ShopGoal] = []
    for item in items:
        if item.instruction_text is None:
            continue
        ladder = [p for p in PRICE_RANGE if p > prices[item.asin]][:4]
        if len(ladder) >= 2:
            _, upper = sorted(rng.sample(ladder, 2))
            price_text = f", and price lower than {upper:.2f} dollars"
        else:
            upper, price_text = NO_BOUND, ""
        options = dict(item.options)
        names = sorted(options)
        for combination in itertools.product(*(options[n] for n in names)):
            chosen = tuple(zip(names, combination, strict=True))
            option_text = ", and ".join(f"{k}: {v}" for k, v in chosen)
            option_text = " with " + option_text if option_text else ""
            goals.append(ShopGoal(item.asin, f"{item.instruction_text}{option_text}{price_text}",
                                  tuple(item.instruction_attributes or ()), upper, chosen, item.query,
                                  item.product_category, item.name))
    random.Random(SHUFFLE_SEED).shuffle(goals)
    return goals


def index_documents(items: Sequence[Item]) -> list[dict[str, str]]:
    """What WebShop's ``convert_product_file_format.py`` indexes: per product its id and, lower-cased, its title,
    description, first bullet point and options (``name: v1, v2, and name: ...``); the first 1,000 products."""
    docs = []
    for item in items[:NUM_PRODUCTS]:
        option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in item.options)
        contents = " ".join([item.name, item.description, item.bullets[0], option_text]).lower()
        docs.append({"id": item.asin, "contents": contents})
    return docs


def read_data(root: Path) -> ShopData:
    """The products, prices, goals and index documents from WebShop's files (prices without the seed: see
    :func:`load`)."""
    missing = [n for n in (PRODUCTS, ATTRIBUTES, HUMAN) if not (root / n).is_file()]
    if missing:
        raise ValueError(f"webshop's agentgym profile: {root} holds no {' or '.join(missing)} (--option "
                         "data_path=DIR must name the directory of WebShop's data files, as its setup.sh downloads "
                         "them)")
    raw = json.loads((root / PRODUCTS).read_text())
    attributes = json.loads((root / ATTRIBUTES).read_text())
    items = read_items(raw, attributes, NUM_PRODUCTS, synthetic=True)
    # the index is built from every product of the file (upstream's converter loads them all), the first 1,000 kept
    every = read_items(raw, attributes, None, synthetic=False)
    return ShopData(root, tuple(items), {i.asin: i for i in items}, {}, (), tuple(index_documents(every)))


@lru_cache(maxsize=2)
def load(data_path: str, price_seed: float, jar: str | None) -> ShopData:
    root = Path(data_path).expanduser().resolve()
    try:
        base = read_data(root)
    except (OSError, KeyError, TypeError, AttributeError, json.JSONDecodeError, ArithmeticError) as e:
        raise ValueError(f"webshop's agentgym profile cannot read WebShop's data in {root}: {type(e).__name__}: "
                         f"{e}") from None
    prices = draw_prices(base.items, price_seed)
    goals = synthetic_goals(base.items, prices)
    jar_file = lucene.jar_path(jar)
    searcher = lucene.Searcher(lucene.index(base.documents, jar_file), jar_file)
    return ShopData(root, base.items, base.by_asin, prices, tuple(goals), base.documents, searcher)


# -- the reward (WebShop's goal.py) --------------------------------------------------------------------------


def normalize_color(value: Any) -> Any:
    """The first colour word found in ``value`` (``in``: a substring of a text, an element of a pair)."""
    for color in COLOR_SET:
        if color in value:
            return color
    return value


@lru_cache(maxsize=1)
def _spacy() -> Any:
    try:
        import spacy  # optional: upstream's type factor, when the user installed spaCy and en_core_web_lg

        return spacy.load("en_core_web_lg")
    except (ImportError, OSError):
        return None


def type_nouns(text: str, mode: str) -> list[str]:
    """The nouns of a product name, lower case, in order (repeats kept, as upstream's list keeps them)."""
    nlp = _spacy() if mode in ("auto", "spacy") else None
    if mode == "spacy" and nlp is None:
        raise ValueError("type_nouns=spacy needs spaCy and its en_core_web_lg model installed")
    if nlp is not None:
        return [t.text.lower() for t in nlp(text) if t.pos_ in ("PNOUN", "NOUN", "PROPN")]
    if mode == "none":
        return []
    return sorted(content_words(text), key=text.lower().find)


def reward(item: Item, goal: ShopGoal, price: float, options: dict[str, str], nouns: str) -> tuple[float, dict]:
    """WebShop's ``get_reward``: the type factor times the share of the goal's attributes, options and price met."""
    query_match = item.query == goal.query
    bought_categories = {x.strip() for x in item.product_category.split("›")}
    category_match = len(bought_categories & {x.strip() for x in goal.product_category.split("›")}) >= 2
    bought, desired = type_nouns(item.name, nouns), type_nouns(goal.name, nouns)
    title_score = 0.2 if not desired else len(set(bought) & set(desired)) / len(desired)
    r_type = 1.0 if (query_match or category_match or title_score > 0.2) else 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    r_price = price <= goal.price_upper if goal.price_upper > 0 else None
    attr_matches = 0
    for g_attr in goal.attributes:
        if any(fuzz.token_set_ratio(p_attr, g_attr) > 85 for p_attr in item.attributes) or (
                g_attr in item.name.lower() or g_attr in " ".join(item.bullets).lower()
                or g_attr in item.description.lower()):
            attr_matches += 1
    bought_options = [normalize_color(o) for o in options.values()]
    goal_options = [normalize_color(o) for o in goal.goal_options]  # (name, value) pairs, as upstream passes them
    option_matches = sum(any(fuzz.token_set_ratio(p, g) > 85 for p in bought_options) for g in goal_options)
    total = (attr_matches + option_matches + r_price) / (len(goal.attributes) + len(goal.goal_options) + 1)
    total *= r_type
    info = {"r_type": r_type, "r_att": attr_matches / len(goal.attributes), "query_match": query_match,
            "category_match": category_match, "title_score": title_score, "r_price": r_price}
    if goal.goal_options:
        info["r_option"] = option_matches / len(goal.goal_options)
    return total, info


# -- a session: WebShop's SimServer and its text mode ---------------------------------------------------------


@dataclass
class Session:
    """What upstream's server keeps for a session, and the page its browser shows."""

    goal: ShopGoal
    sid: str  # the session's id (upstream's: the index the client reset to)
    url: str
    page: str = "index"  # index, search_results, item_page, item_sub_page, done
    keywords: list[str] | None = None
    page_no: int | None = None
    asin: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    results: list[Item] = field(default_factory=list)  # the last search's products (up to 50)
    sub_page: str = ""
    reward: float = 0.0

    @classmethod
    def start(cls, goal: ShopGoal, index: int) -> Session:
        """A session as AgentGym's reset with ``session_id=index`` opens it: on the search page."""
        return cls(goal, sid=str(index), url=f"{BASE_URL}/{index}")


def page_name(url: str | None) -> str | None:
    """Upstream's ``get_page_name``: the first page name its URL contains."""
    if url is None:
        return None
    return next((name for name in ("search_results", "item_page", "item_sub_page", "done") if name in url), "")


def page_texts(s: Session, data: ShopData) -> list[str]:
    """The page's visible strings in document order (WebShop's templates as BeautifulSoup reads them)."""
    head = ["Instruction:", s.goal.instruction_text, BACK_TO_SEARCH]
    if s.page == "index":
        return ["WebShop", "Instruction:", s.goal.instruction_text, "Search"]
    if s.page == "search_results":
        assert s.page_no is not None
        out = [*head, f"Page {s.page_no} (Total results: {len(s.results)})"]
        out += [PREV_PAGE, NEXT_PAGE] if s.page_no > 1 else [NEXT_PAGE]
        for item in products_on_page(s):
            out += [item.asin, item.name, item.price_tag]
        return out
    item = data.by_asin[s.asin or ""]
    out = [*head, PREV_PAGE]
    if s.page == "item_page":
        for name, values in item.options:
            out += [name, *values]
        return [*out, item.name, f"Price: {item.price_tag}", "Rating: N.A.", "Description", "Features", "Reviews",
                END_BUTTON]
    if s.page == "item_sub_page":
        if s.sub_page == "Description":
            return [*out, item.description]
        if s.sub_page == "Features":
            return [*out, *item.bullets]
        return out  # Reviews (upstream serves none) and Attributes (not shown without show_attrs)
    return done_texts(s, data)


def done_texts(s: Session, data: ShopData) -> list[str]:
    """The page after Buy Now (its hidden block is visible text to the text mode)."""
    return ["Thank you for shopping with us!", "Your code:", "None", "(Paste it in your MTurk interface.)",
            "Purchased", "asin", s.asin or "", "options", json.dumps(s.options, sort_keys=True), "attrs", "None",
            "category", "None", "query", "None", "product category", "None", "Target", "asin", "options", "attrs",
            "price upper", "instuction text", "category", "product category", "query", "Goal", "None",
            "Reward", "Your score (min 0.0, max 1.0)", str(s.reward), "Reward Details", "None"]


def joined(texts: list[str]) -> str:
    """WebShop's text mode: the visible strings, stripped, the blank ones left out, joined by `` [SEP] ``."""
    return " [SEP] ".join(t.strip() for t in texts if t.strip())


def products_on_page(s: Session) -> list[Item]:
    assert s.page_no is not None
    return s.results[(s.page_no - 1) * PRODUCT_WINDOW:s.page_no * PRODUCT_WINDOW]


def clickables(s: Session, data: ShopData) -> dict[str, tuple[str, str]]:
    """Upstream's ``text_to_clickable``: the page's buttons and product links by their lower-cased text, then its
    option values as they are (an option with the text of a button replaces it): key -> (kind, option name)."""
    out: dict[str, tuple[str, str]] = {}
    if s.page == "index":
        out["search"] = ("button", "")
    elif s.page == "search_results":
        out[BACK_TO_SEARCH.lower()] = ("button", "")
        if s.page_no and s.page_no > 1:
            out[PREV_PAGE.lower()] = ("button", "")
        out[NEXT_PAGE.lower()] = ("button", "")
        for item in products_on_page(s):
            out[item.asin.lower()] = ("product", "")
    elif s.page in ("item_page", "item_sub_page"):
        out[BACK_TO_SEARCH.lower()] = ("button", "")
        out[PREV_PAGE.lower()] = ("button", "")
        if s.page == "item_page":
            for label in ("description", "features", "reviews", "buy now"):
                out[label] = ("button", "")
            for name, values in data.by_asin[s.asin or ""].options:
                for value in values:
                    out[value] = ("option", name)
    return out


class AgentGymWebShopEnv(Environment):
    """AgentGym's WebShop goal N on WebShop's products, played and graded as its server does (module docstring)."""

    name: ClassVar[str] = "webshop"
    profile: ClassVar[str] = "agentgym"
    version: ClassVar[str] = "agentgym-1"
    max_turns: ClassVar[int] = MAX_ROUNDS
    success_threshold: ClassVar[float] = 1.0
    action_format: ClassVar[str] = "text"
    action_hint: ClassVar[str] = "search[keywords] or click[value], e.g. search[long sleeve t-shirt] or click[buy now]"
    instruction: ClassVar[str] = (
        "You are web shopping. The page shows an instruction describing the product to buy. Take one action per "
        "turn: search[keywords] searches the store (on any page); click[value] clicks something the page shows, in "
        "lower case: a product id in the results, next > or < prev, an option value on a product page (it selects "
        "that option), description, features or reviews, back to search, or buy now, which buys the product with "
        "the options selected and ends the episode. The score is 1 when the product is of the requested kind, has "
        "every requested attribute, the requested options are selected and the price is under the limit.")
    Options: ClassVar[type[BaseModel]] = AgentGymShopOptions
    #: the native routes, serving one index space (AgentGym's goals, the test split) with no turn limit of the
    #: server's own (upstream's has none)
    agentgym: ClassVar[AgentGymRoutes] = dataclasses.replace(
        WebShopEnv.agentgym, index_order=("test",), options={}, server_truncates=False, check_tasks=(0, 1, 3),
        extras={"/available_actions": "agentgym_available_actions", "/instruction_text": "agentgym_instruction_text"})

    def __init__(self) -> None:
        self._s: Session | None = None
        self._obs = ""

    # -- tasks and shared data ----------------------------------------------------------------------
    @classmethod
    def num_tasks(cls, split: Split) -> int:
        if split not in ("train", "test"):
            raise ValueError(f"unknown split {split!r}; expected one of test, train")
        return NUM_GOALS

    @classmethod
    def load_shared(cls, options: AgentGymShopOptions) -> ShopData:
        data_path = options.data_path or os.environ.get(DATA_VAR)
        if not data_path:
            raise ValueError(f"webshop's agentgym profile plays WebShop's 1,000 products: give --option "
                             f"data_path=DIR or set ${DATA_VAR} to the directory of items_shuffle_1000.json, "
                             "items_ins_v2_1000.json and items_human_ins.json (WebShop's setup.sh downloads them)")
        return load(data_path, options.price_seed, options.anserini_jar)

    @classmethod
    def task_counts(cls, shared: Any = None) -> dict[str, int]:
        n = len(shared.goals) if isinstance(shared, ShopData) else NUM_GOALS
        return {"train": n, "test": n}

    @classmethod
    def fingerprint(cls, counts: dict[str, int], options: BaseModel) -> str:
        root = Path(getattr(options, "data_path", None) or ".")
        stamps = file_stamps([root / n for n in (PRODUCTS, ATTRIBUTES) if (root / n).is_file()])
        where = {"data_path": None, "anserini_jar": None}  # where the files lie does not change the tasks
        return super().fingerprint(counts, options.model_copy(update=where), stamps)

    def _data(self) -> ShopData:
        if not isinstance(self.shared, ShopData):
            self.options = self.options or AgentGymShopOptions()
            self.shared = self.load_shared(self.options)
        return self.shared

    def _nouns(self) -> str:
        return self.options.type_nouns if self.options is not None else "auto"

    # -- an episode ----------------------------------------------------------------------------------
    def reset(self, task_id: int, split: Split = "test", seed: int | None = None) -> tuple[str, dict[str, Any]]:
        data = self._data()
        if split not in ("train", "test"):
            raise ValueError(f"unknown split {split!r}; expected one of test, train")
        if not 0 <= task_id < len(data.goals):
            raise IndexError(f"webshop (agentgym) has goals 0..{len(data.goals) - 1}, not {task_id}")
        goal = data.goals[task_id]
        self._s = Session.start(goal, task_id)
        self._obs = self._text()
        info = {"task_id": task_id, "split": split, "agentgym_index": task_id, "asin": goal.asin,
                "price_upper": goal.price_upper}
        return self._obs, info

    def _text(self) -> str:
        assert self._s is not None
        return joined(page_texts(self._s, self._data()))

    def step(self, action: str) -> StepResult:
        s, data = self._s, self._data()
        if s is None:
            return StepResult("Call reset before step.", valid=False)
        found = _ACTION.match(action)
        name, arg = (found.group(1), found.group(2).lower()) if found else (action, None)
        table = clickables(s, data)
        valid, bought = True, False
        if name == "search" and arg is not None and arg != "":
            self._search(s, data, arg.split(" "), 1)
        elif name == "click" and arg in table and arg != "search":
            bought = self._click(s, data, arg, table)
        else:  # upstream changes nothing and pays nothing
            valid = False
        self._obs = self._text()
        if bought:
            return StepResult(self._obs, reward=s.reward, done=True, success=s.reward >= 1.0, score=s.reward,
                              info={"asin": s.asin, "options": dict(s.options)})
        return StepResult(self._obs, valid=valid)

    def _search(self, s: Session, data: ShopData, keywords: list[str], page_no: int) -> None:
        s.keywords, s.page_no, s.asin, s.options = keywords, page_no, None, {}
        query = " ".join(keywords)
        s.results = [data.by_asin[a] for a in data.searcher.search(query, SEARCH_RETURN_N) if a in data.by_asin]
        s.page = "search_results"
        s.url = f"{BASE_URL}/search_results/{s.sid}/{'+'.join(keywords)}/{page_no}"

    def _item(self, s: Session, arg: str, table: dict[str, tuple[str, str]]) -> None:
        kind, option_name = table.get(arg, ("button", ""))
        if kind == "product":
            s.asin = arg.upper()
        elif kind == "option":
            s.options[option_name] = arg
        s.page = "item_page"
        s.url = (f"{BASE_URL}/item_page/{s.sid}/{s.asin}/{'+'.join(s.keywords or [])}/{s.page_no}/"
                 f"{json.dumps(s.options)}")

    def _click(self, s: Session, data: ShopData, arg: str, table: dict[str, tuple[str, str]]) -> bool:
        """Upstream's ``receive`` for a click; True when it bought."""
        where = page_name(s.url)
        if arg == END_BUTTON.lower():
            item = data.by_asin[s.asin or ""]
            s.reward, _ = reward(item, s.goal, data.prices[item.asin], s.options, self._nouns())
            s.page = "done"
            s.url = f"{BASE_URL}/done/{s.sid}/{s.asin}/{s.options}"
            return True
        if arg == BACK_TO_SEARCH.lower():
            s.page, s.keywords, s.page_no, s.asin, s.options = "index", None, None, None, {}
            s.url = f"{BASE_URL}/{s.sid}"
        elif arg == NEXT_PAGE.lower() and where == "search_results":
            self._search(s, data, s.keywords or [], (s.page_no or 1) + 1)
        elif arg == PREV_PAGE.lower() and where == "search_results":
            self._search(s, data, s.keywords or [], (s.page_no or 1) - 1)
        elif arg == PREV_PAGE.lower() and where == "item_sub_page":
            self._item(s, arg, table)
        elif arg == PREV_PAGE.lower() and where == "item_page":
            self._search(s, data, s.keywords or [], s.page_no or 1)
        elif arg in [k.lower() for k in SUB_PAGES]:
            s.sub_page = next(k for k in SUB_PAGES if k.lower() == arg)
            s.page = "item_sub_page"
            s.url = (f"{BASE_URL}/item_sub_page/{s.sid}/{s.asin}/{'+'.join(s.keywords or [])}/"
                     f"{s.page_no}/{s.sub_page}/{s.options}")
        else:
            self._item(s, arg, table)
        return False

    def observation(self) -> str:
        return self._obs

    def close(self) -> None:
        self._s = None

    # -- policies ------------------------------------------------------------------------------------
    def available_actions(self) -> list[str]:
        s = self._s
        if s is None:
            return []
        table = clickables(s, self._data())
        return (["search[<query>]"] if s.page == "index" else []) + [f"click[{k}]" for k in table if k != "search"]

    def agentgym_available_actions(self) -> dict[str, Any]:
        """What upstream's ``GET /available_actions`` answers: the search box, and every clickable's key."""
        s = self._s
        if s is None:
            raise ValueError("reset first")
        return {"has_search_bar": s.page == "index", "clickables": list(clickables(s, self._data()))}

    def agentgym_instruction_text(self) -> str:
        """What upstream's ``GET /instruction_text`` answers: the page's instruction heading (its search page puts a
        space after "Instruction:", the others do not; the done page has none)."""
        s = self._s
        if s is None or s.page == "done":
            raise ValueError("this page shows no instruction")
        return ("Instruction: " if s.page == "index" else "Instruction:") + s.goal.instruction_text

    def random_action(self, rng: random.Random) -> str:
        s = self._s
        if s is not None and s.page == "index":
            words = s.goal.instruction_text.lower().split()
            return f"search[{' '.join(rng.sample(words, min(len(words), rng.randint(1, 4))))}]"
        actions = [a for a in self.available_actions() if a.startswith("click[")]
        return rng.choice(actions) if actions else "click[buy now]"

    def expert_action(self) -> str:
        return self._plan()[0]

    def expert_thought(self) -> str:
        return self._plan()[1]

    def _plan(self) -> tuple[str, str]:
        """The target's way: search its name, open it (turning pages while it is not shown), select the goal's
        options, buy; off that way, one step back."""
        s = self._s
        if s is None:
            return "click[buy now]", "There is no episode."
        data, goal = self._data(), s.goal
        target = data.by_asin[goal.asin]
        if s.page == "index":
            return f"search[{target.name.lower()}]", "I search for the product by its name."
        if s.page == "search_results":
            if goal.asin in {i.asin for i in products_on_page(s)}:
                return f"click[{goal.asin.lower()}]", "This result is the product the instruction describes."
            if s.page_no is not None and s.page_no * PRODUCT_WINDOW < len(s.results):
                return f"click[{NEXT_PAGE.lower()}]", "It is not on this page; I look at the next one."
            return f"click[{BACK_TO_SEARCH.lower()}]", "It is not among the results; I search again."
        if s.page == "item_page" and s.asin == goal.asin:
            table = clickables(s, data)
            for name, value in goal.goal_options:
                if s.options.get(name) != value and table.get(value, ("", ""))[0] == "option":
                    return f"click[{value}]", f"The instruction asks for {name}: {value}; I select it."
            return f"click[{END_BUTTON.lower()}]", "Every option asked for is selected; I buy it."
        return f"click[{PREV_PAGE.lower()}]", "This is not the page I need; I go back."

    def initial_observation(self, task_id: int, split: Split) -> str | None:
        data = self._data()
        return joined(page_texts(Session.start(data.goals[task_id], task_id), data))
