"""The WebShop reward (Yao et al. 2022, and upstream ``engine/goal.py``), computed on *buy now*.

    r = r_type * (|attributes met| + |options met| + 1[price <= bound]) / (|attributes| + |options| + 1)

- An **attribute** of the goal is met when it matches one of the product's attributes (phrase
  match, :func:`agentenv_webshop.text.phrase_match`) or occurs in its title, features or description.
- An **option** of the goal is met when one of the options selected at purchase matches it (the
  value, whatever its group, as upstream).
- **r_type** is upstream's cascade over three signals: the product type (``query``) is the goal's;
  the category breadcrumbs share at least two levels; ``title_score``, the share of the goal's
  type words found in the bought product's title. ``r_type`` is 1 if any signal holds (type, category,
  or title_score > 0.2), else 0.5; then 0.1 if title_score < 0.1 and 0 if it is 0. Upstream takes
  the type words to be the spaCy nouns of the target's title; here they are the type's own words for
  generated products (so only products of the right kind have them) and the content words of the
  target's title for upstream data. Deterministic, no language model.

The reward is 1.0 exactly when the product is of the right type and everything asked for is met.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from agentenv_webshop.catalogue import NO_PRICE_BOUND, Goal, Product
from agentenv_webshop.text import phrase_in_words, phrase_match, tokenize, word_set

_CATEGORY_SEP = "›"


@dataclass(frozen=True)
class RewardBreakdown:
    reward: float
    r_type: float
    query_match: bool
    category_match: bool
    title_score: float
    attributes_met: int
    attributes_total: int
    options_met: int
    options_total: int
    price_ok: bool

    def as_info(self) -> dict[str, Any]:
        return asdict(self)


def _levels(breadcrumb: str) -> set[str]:
    return {x.strip().lower() for x in breadcrumb.split(_CATEGORY_SEP) if x.strip()}


def title_score(goal: Goal, title: str) -> float:
    if not goal.type_words:
        return 0.2  # upstream's value when the target's title has no nouns
    return len(goal.type_words & word_set(title)) / len(goal.type_words)


def type_reward(product: Product, goal: Goal) -> tuple[float, bool, bool, float]:
    """``(r_type, query_match, category_match, title_score)``, upstream's cascade."""
    query_match = product.query == goal.query
    category_match = len(_levels(product.product_category) & _levels(goal.product_category)) >= 2
    score = title_score(goal, product.title)
    r_type = 1.0 if (query_match or category_match or score > 0.2) else 0.5
    if score < 0.1:
        r_type = 0.1
    if score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, score


def attributes_met(product: Product, wanted: Iterable[str]) -> int:
    words = tokenize(" ".join([product.title, *product.features, product.description]))
    met = 0
    for attr in wanted:
        if any(phrase_match(attr, have) for have in product.attributes) or phrase_in_words(attr, words):
            met += 1
    return met


def options_met(selected: Iterable[str], wanted: Iterable[str]) -> int:
    chosen = list(selected)
    return sum(1 for value in wanted if any(phrase_match(value, c) for c in chosen))


def score(product: Product, goal: Goal, selected: Iterable[str]) -> RewardBreakdown:
    """The reward for buying ``product`` with the option values ``selected``."""
    r_type, query_match, category_match, t_score = type_reward(product, goal)
    n_attr = attributes_met(product, goal.attributes)
    n_opt = options_met(selected, [value for _, value in goal.options])
    price_ok = goal.price_upper >= NO_PRICE_BOUND or product.price <= goal.price_upper
    total = len(goal.attributes) + len(goal.options) + 1
    reward = r_type * (n_attr + n_opt + int(price_ok)) / total
    return RewardBreakdown(
        reward=round(reward, 6), r_type=r_type, query_match=query_match, category_match=category_match,
        title_score=round(t_score, 4), attributes_met=n_attr, attributes_total=len(goal.attributes),
        options_met=n_opt, options_total=len(goal.options), price_ok=price_ok,
    )


def best_selection(product: Product, goal: Goal) -> dict[str, str]:
    """For each option the goal asks for, the product's value that matches it (group -> value),
    where the product has one: what a shopper selects before buying."""
    chosen: dict[str, str] = {}
    for group, value in goal.options:
        for name, values in product.options:
            if group and name != group and any(g == group for g, _ in product.options):
                continue  # the goal names this group and the product has it: look only there
            hit = next((v for v in values if phrase_match(value, v)), None)
            if hit is not None and name not in chosen:
                chosen[name] = hit
                break
    return chosen
