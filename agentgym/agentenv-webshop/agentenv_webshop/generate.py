"""The generated catalogue: products over the types of ``taxonomy`` and goals written from them.

Everything is drawn from ``random.Random`` seeded with strings (SHA-512 of the string, so the same
on every machine and independent of ``PYTHONHASHSEED``), one seed per product and per goal, so a
catalogue of N products is the same whatever else changes.

- Product ``i`` is of type ``TYPES[i % len(TYPES)]``; it gets a brand, 3-5 of the type's
  attributes (at most one of each tuple of alternatives), for each option group 3 or more of its
  values, a price in the type's range, a title naming 0-2 of its attributes, features (one per
  attribute), a description and reviews. Only its own attributes are written into its text, so
  the reward's text fallback never credits an attribute the product lacks.
- Goals: the products are shuffled once; the first ``test_size`` become the targets of the test
  goals, the rest those of the train goals (one goal each, so test and train targets are disjoint).
  A goal asks for 1-3 of the target's attributes, one value of each of its option groups and a
  price bound above its price (upstream's rule, ``catalogue.price_bound``).
"""

from __future__ import annotations

import hashlib
import random

from agentenv_webshop.catalogue import Catalogue, Goal, Product, Review, price_bound, price_phrase, split_goals
from agentenv_webshop.taxonomy import TYPES, ProductType
from agentenv_webshop.text import tokens

SEED = "agentenv-webshop/v1"
NUM_PRODUCTS = 6000
TEST_GOALS = 200

_UPPER = {"usb", "gps", "spf", "hd", "led", "rgb", "dpi", "bpa", "upf", "pfoa", "hepa", "gmo", "usda", "ipx7",
          "1080p", "pbt", "usa", "d3"}
_ONSETS = ("b", "br", "c", "cl", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "pr", "qu",
           "r", "s", "st", "t", "tr", "v", "w", "z")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io", "ou")
_CODAS = ("", "n", "r", "l", "x", "th", "nd", "rk", "ss", "m")
_ENDINGS = ("a", "o", "ix", "ly", "io", "on", "er", "us", "ra", "ex")

_BLURBS = (
    "made to hold up to everyday use",
    "checked by our team for quality and comfort",
    "a detail our customers ask for again and again",
    "so it simply does what you expect",
    "one of the reasons shoppers choose this model",
    "built with care and attention to detail",
)
_SENTENCES = (
    "Designed for everyday use and built to last.",
    "A thoughtful present for family and friends.",
    "Backed by our friendly customer service team.",
    "Every unit is inspected before it ships.",
    "Simple to care for and made to be used every day.",
    "Trusted by thousands of happy customers.",
)
_REVIEW_TITLES = {
    5: ("Love it", "Exactly as described", "Would buy again", "Great value"),
    4: ("Very good", "Does the job", "Happy with it"),
    3: ("It is okay", "Average", "Good but not perfect"),
    2: ("Not great", "Expected more"),
    1: ("Disappointed", "Not for me"),
}
_REVIEW_BODIES = {
    5: ("The {n} arrived quickly and is even better than the pictures.", "Great quality {n}, I use it every day."),
    4: ("Nice {n} for the price; shipping took a little long.", "The {n} works well, would recommend."),
    3: ("The {n} is fine, nothing special.", "Decent {n} but the packaging was damaged."),
    2: ("The {n} looked different from the photos.", "Quality of the {n} could be better."),
    1: ("The {n} stopped working after a week.", "Returned the {n}, it was not what I needed."),
}
_TEMPLATES = (
    "i am looking for {type} with {attrs}",
    "i need {type} that is {attrs}",
    "find me {attrs} {type}",
    "i want to buy {type}, {attrs}",
    "i'm looking for {attrs} {type}",
    "show me {type} featuring {attrs}",
)


def _rng(*parts: object) -> random.Random:
    return random.Random("/".join([SEED, *map(str, parts)]))


def _title_case(phrase: str) -> str:
    return " ".join(w.upper() if w in _UPPER else w[:1].upper() + w[1:] for w in phrase.split())


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def brands(n: int = 400) -> list[str]:
    """Invented brand names: pronounceable, unique, sorted (so independent of generation order)."""
    rng, names = _rng("brands"), set()
    while len(names) < n:
        word = rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) + rng.choice(_ENDINGS)
        if 5 <= len(word) <= 9:
            names.add(word.capitalize())
    return sorted(names)


def asin_of(i: int) -> str:
    """A 10-character Amazon-style id (``B0`` + 8 base-36 digits) derived from the product number."""
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    v = int.from_bytes(hashlib.sha256(f"{SEED}/asin/{i}".encode()).digest()[:8], "big")
    out = []
    for _ in range(8):
        v, r = divmod(v, 36)
        out.append(digits[r])
    return "B0" + "".join(out)


def _pick_attributes(ptype: ProductType, rng: random.Random) -> tuple[str, ...]:
    groups = list(ptype.attributes)
    rng.shuffle(groups)
    k = min(len(groups), rng.randint(3, 5))
    chosen = [g if isinstance(g, str) else rng.choice(g) for g in groups[:k]]
    order = {a: i for i, g in enumerate(ptype.attributes) for a in ((g,) if isinstance(g, str) else g)}
    return tuple(sorted(chosen, key=order.__getitem__))


def _pick_options(ptype: ProductType, rng: random.Random) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for name, pool in ptype.options:
        k = rng.randint(min(3, len(pool)), len(pool))
        keep = set(rng.sample(range(len(pool)), k))
        out.append((name, tuple(v for i, v in enumerate(pool) if i in keep)))
    return tuple(out)


def make_product(i: int, brand_names: list[str]) -> Product:
    ptype = TYPES[i % len(TYPES)]
    rng = _rng("product", i)
    brand = rng.choice(brand_names)
    attributes = _pick_attributes(ptype, rng)
    options = _pick_options(ptype, rng)
    low, high = ptype.price
    price = round(max(low, rng.randint(low, high) - rng.choice((0.01, 0.05, 0.51))), 2)
    in_title = rng.sample(attributes, rng.randint(0, min(2, len(attributes))))
    words = [brand, ptype.audience, *(_title_case(a) for a in in_title), ptype.noun]
    title = " ".join(w for w in words if w)
    noun = ptype.noun.lower()
    features = tuple(f"{a.upper()}: {rng.choice(_BLURBS)}." for a in attributes)
    extra = rng.sample(_SENTENCES, 2)
    description = (f"{title}. Our {noun} from {brand} brings together {_join(list(attributes))}. "
                   f"{extra[0]} {extra[1]}")
    reviews = []
    for _ in range(rng.randint(1, 3)):
        stars = rng.choices((5, 4, 3, 2, 1), weights=(40, 30, 15, 10, 5))[0]
        reviews.append(Review(rng.choice(_REVIEW_TITLES[stars]), stars,
                              rng.choice(_REVIEW_BODIES[stars]).format(n=noun)))
    rating = f"{sum(r.score for r in reviews) / len(reviews):.1f}"
    return Product(
        asin=asin_of(i), title=title, category=ptype.category, product_category=" › ".join(ptype.path),
        query=ptype.key, price=price, price_text=f"${price:.2f}", attributes=attributes, options=options,
        description=description, features=features, reviews=tuple(reviews), rating=rating,
        type_words=frozenset(tokens(" ".join(ptype.type_words))),
    )


def make_goal(product: Product, rng: random.Random) -> Goal:
    """A shopping instruction for ``product``: some of its attributes, one value per option group,
    and a price bound above its price."""
    k = min(len(product.attributes), rng.choice((1, 2, 2, 3, 3)))
    attrs = tuple(sorted(rng.sample(product.attributes, k), key=product.attributes.index))
    options = tuple((name, rng.choice(values)) for name, values in product.options)
    bound = price_bound(product.price, rng)
    text = rng.choice(_TEMPLATES).format(type=product.query, attrs=_join(list(attrs)))
    if options:
        text += " with " + ", and ".join(f"{name}: {value}" for name, value in options)
    text += price_phrase(bound)
    return Goal(
        asin=product.asin, instruction=text, attributes=attrs, options=options, price_upper=bound,
        query=product.query, product_category=product.product_category, type_words=product.type_words,
        search_query=" ".join([*attrs, product.query]),
    )


def generate(num_products: int = NUM_PRODUCTS, test_size: int | None = None) -> Catalogue:
    """The catalogue of ``num_products`` products and one goal per product, split into test
    (``test_size``, by default 200, or a fifth of a small catalogue) and train."""
    names = brands()
    products = [make_product(i, names) for i in range(num_products)]
    if len({p.asin for p in products}) != len(products):  # 8 base-36 digits: never seen, but never silent
        raise RuntimeError("asin collision in the generated catalogue")
    order = list(range(num_products))
    _rng("goal-order").shuffle(order)
    if test_size is None:
        test_size = min(TEST_GOALS, max(1, num_products // 5))
    goals = []
    for n, i in enumerate(order):
        split, task = ("test", n) if n < test_size else ("train", n - test_size)
        goals.append(make_goal(products[i], _rng("goal", split, task)))
    return Catalogue(products, split_goals(goals, test_size), source="generated")
