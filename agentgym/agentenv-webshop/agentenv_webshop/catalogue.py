"""The shop's data: products, goals (the tasks) and the search index over the products.

One :class:`Catalogue` is built per server (``WebShopEnv.load_shared``) and only read afterwards,
so every session shares it; a session keeps just its page state (``browser.Browser``).
Products and goals come either from the generator (``generate``) or from the published WebShop
files (``upstream``); both produce the same types, so the site, the reward and the expert do not
care which.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentenv_webshop.search import SearchIndex

#: upstream's bound when a product is too expensive for the price ladder: no price constraint
NO_PRICE_BOUND = 1_000_000.0


@dataclass(frozen=True)
class Review:
    title: str
    score: int  # 1..5 stars
    body: str


@dataclass(frozen=True, eq=False)
class Product:
    """A product page's content. ``options`` keeps the page's group order: ``((name, values), ...)``."""

    asin: str
    title: str
    category: str  # top-level category
    product_category: str  # breadcrumb joined with " › " (upstream's field of that name)
    query: str  # the product type a shopper searched for (upstream's ``query``)
    price: float  # what the reward compares with the goal's bound
    price_text: str  # as the page shows it: "$23.99" or "$10.0 to $20.0"
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    description: str
    features: tuple[str, ...]
    reviews: tuple[Review, ...] = ()
    rating: str = "N.A."
    #: words that name the product's type (the reward's title check); see ``reward.type_reward``
    type_words: frozenset[str] = field(default_factory=frozenset)

    def search_text(self) -> str:
        """What the search engine indexes: upstream indexes title, description, the first bullet
        and the option values; all bullets are used here (they are short)."""
        opts = " ".join(f"{name} {' '.join(values)}" for name, values in self.options)
        return " ".join([self.title, self.description, *self.features, opts])


@dataclass(frozen=True)
class Goal:
    """One task: buy a product like ``asin`` with these attributes and options, under a price."""

    asin: str  # the product the goal was written from
    instruction: str  # what the shopper is told (the first observation shows it)
    attributes: tuple[str, ...]
    options: tuple[tuple[str, str], ...]  # (group name, or "" when the source does not say, value)
    price_upper: float  # NO_PRICE_BOUND when the instruction states no price
    query: str  # the target's product type
    product_category: str  # the target's breadcrumb
    type_words: frozenset[str]  # words naming the target's type (the reward's title check)
    search_query: str  # the key words the expert searches with first


@dataclass
class Catalogue:
    """Products, goals per split and the search index; read-only once built."""

    products: list[Product]
    goals: dict[str, list[Goal]]
    source: str  # "generated" or the data directory
    by_asin: dict[str, Product] = field(init=False)
    index: SearchIndex = field(init=False)

    def __post_init__(self) -> None:
        self.by_asin = {p.asin: p for p in self.products}
        self.index = SearchIndex([p.search_text() for p in self.products])

    def search(self, keywords: str, k: int) -> list[Product]:
        """The top ``k`` products for ``keywords`` (BM25), best first."""
        return [self.products[i] for i in self.index.search(keywords, k)]

    def counts(self) -> dict[str, int]:
        return {split: len(goals) for split, goals in self.goals.items()}


def price_bound(price: float, rng: random.Random) -> float:
    """Upstream's price bound: of the first four multiples of 10 above the price, the larger of
    two drawn at random (so the bound is 2-4 steps above the price); none when fewer than two exist."""
    ladder = [10.0 * i for i in range(1, 100) if 10.0 * i > price][:4]
    if len(ladder) < 2:
        return NO_PRICE_BOUND
    return sorted(rng.sample(ladder, 2))[1]


def price_phrase(bound: float) -> str:
    return "" if bound >= NO_PRICE_BOUND else f", and price lower than {bound:.2f} dollars"


def split_goals(goals: Sequence[Goal], test_size: int) -> dict[str, list[Goal]]:
    """``test`` is the first ``test_size`` goals, ``train`` the rest (goals arrive shuffled)."""
    return {"train": list(goals[test_size:]), "test": list(goals[:test_size])}
