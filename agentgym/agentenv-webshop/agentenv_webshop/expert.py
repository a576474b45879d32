"""The expert: a planner that shops like a careful person who can check every requirement.

It searches with the goal's key words (its attributes and product type); on the results it opens
the first product that can meet the whole goal (right type, every attribute, every option
available, price under the bound: the target itself or an equally good product); if none is on
the first ``MAX_PAGES`` pages it goes back and searches the name of a product that fits (the
target's title, found first by BM25); on the item page it selects the goal's options one by one
and buys. Off its path (an agent took over) it goes back one page at a time, so it can finish any
episode. It checks a product with the reward itself, which is what "can meet the whole goal"
means here, and reasons aloud only with what the pages and the instruction show.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentenv_webshop import reward
from agentenv_webshop.browser import BACK_TO_SEARCH, BUY_NOW, ITEM, NEXT_PAGE, PREV_PAGE, RESULTS, SEARCH, SUB, Browser
from agentenv_webshop.catalogue import NO_PRICE_BOUND, Goal, Product

MAX_PAGES = 2  # result pages the expert reads before it searches again with a product's name


@dataclass(frozen=True)
class Plan:
    action: str
    thought: str


def fits(product: Product, goal: Goal) -> bool:
    """Whether buying ``product`` with the right options earns the full reward."""
    return reward.score(product, goal, reward.best_selection(product, goal).values()).reward >= 1.0


def _click(label: str) -> str:
    return f"click[{label.lower()}]"


def _limit(goal: Goal) -> str:
    return "with no price limit" if goal.price_upper >= NO_PRICE_BOUND else f"under {goal.price_upper:.2f} dollars"


def _wants(goal: Goal) -> str:
    """The goal in a shopper's words: "dog treats (soft chewy, high protein) in flavor: chicken"."""
    text = goal.query
    if goal.attributes:
        text += f" ({', '.join(goal.attributes)})"
    if goal.options:
        text += " in " + ", ".join(f"{g}: {v}" if g else v for g, v in goal.options)
    return text


def plan(b: Browser) -> Plan:
    """The next action and why, from the session's page."""
    goal = b.goal
    if b.page == SEARCH:
        if b.searches == 0:
            return Plan(f"search[{goal.search_query}]",
                        f"I need {_wants(goal)}, {_limit(goal)}. I'll search for the product type and "
                        "its attributes.")
        target = b.catalogue.by_asin[goal.asin]
        return Plan(f"search[{target.title.lower()}]",
                    "The first results had nothing that fits; I'll search for a specific product name instead.")
    if b.page == RESULTS:
        for p in b.page_results():
            if fits(p, goal):
                return Plan(_click(p.asin), f"{p.asin} ({p.title}, {p.price_text}) looks like the {goal.query} "
                                            f"I need and is {_limit(goal)}; I'll open it to check its options.")
        if b.has_next() and b.page_no < MAX_PAGES:
            return Plan(_click(NEXT_PAGE), "Nothing on this page fits everything the instruction asks for; "
                                           "I'll look at the next page.")
        return Plan(_click(BACK_TO_SEARCH), "None of these results fits; I'll go back and search again.")
    if b.page == ITEM and b.product is not None:
        product = b.product
        if not fits(product, goal):
            return Plan(_click(PREV_PAGE), "This item does not have everything the instruction asks for; "
                                           "I'll go back to the results.")
        for group, value in reward.best_selection(product, goal).items():
            if b.options.get(group) != value:
                return Plan(_click(value), f"The instruction asks for {group}: {value} and this item offers it; "
                                           f"I'll select it.")
        attrs = f" It has what was asked: {', '.join(goal.attributes)}." if goal.attributes else ""
        chosen = " The requested options are selected." if goal.options else ""
        return Plan(_click(BUY_NOW), f"This is the {goal.query} I need.{attrs}{chosen} "
                                     f"Its price {product.price_text} is {_limit(goal)}, so I'll buy it.")
    if b.page == SUB:
        return Plan(_click(PREV_PAGE), "I have read this page; back to the item.")
    return Plan(_click(BUY_NOW), "The purchase is done.")

