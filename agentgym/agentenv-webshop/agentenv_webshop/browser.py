"""The site's rules: which page a session is on, what can be clicked there, and where a click leads.

It follows upstream's ``SimServer``: a search shows up to 50 results, 10 per page; a result opens
its item page with no option selected; an option click selects that value for its group; the
item page's *Description*, *Features* and *Reviews* open sub-pages whose *< Prev* returns to the
item (options kept); the item's *< Prev* returns to the results (options cleared, as upstream
re-renders the results); *Back to Search* returns to the search page; *Buy Now* ends the episode
and computes the reward. Where upstream would accept a search on any page, this site accepts it
only on the search page, the one with a search box; and *Next >* is offered only when there is a
next page. A session's state is a few strings and a tuple of result ids: the catalogue is shared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentenv_webshop import reward
from agentenv_webshop.catalogue import Catalogue, Goal, Product

SEARCH, RESULTS, ITEM, SUB, DONE = "search", "results", "item", "sub", "done"
SEARCH_RETURN_N = 50  # upstream's SEARCH_RETURN_N
PAGE_SIZE = 10  # upstream's PRODUCT_WINDOW
BACK_TO_SEARCH, NEXT_PAGE, PREV_PAGE, BUY_NOW = "Back to Search", "Next >", "< Prev", "Buy Now"
SUB_PAGES = ("Description", "Features", "Reviews")
#: other spellings of the navigation buttons an agent may write
ALIASES = {"next": NEXT_PAGE, "next page": NEXT_PAGE, "next>": NEXT_PAGE, "prev": PREV_PAGE,
           "previous": PREV_PAGE, "<prev": PREV_PAGE, "< previous": PREV_PAGE, "back": PREV_PAGE,
           "buy": BUY_NOW, "buy it now": BUY_NOW, "back to search page": BACK_TO_SEARCH}


@dataclass(frozen=True)
class Clickable:
    kind: str  # "button", "product" or "option"
    label: str  # the text on the page (a button's text, an asin, an option value)
    group: str = ""  # an option's group


def normalize(arg: str) -> str:
    """How a click argument is compared: case and spacing do not matter (upstream lower-cases)."""
    return " ".join(arg.lower().split())


@dataclass
class Browser:
    """One session's place on the site."""

    catalogue: Catalogue
    goal: Goal
    page: str = SEARCH
    keywords: str = ""
    results: tuple[str, ...] = ()  # asins of the last search, best first
    page_no: int = 1
    asin: str | None = None  # the item open (item and sub-pages)
    options: dict[str, str] = field(default_factory=dict)  # group -> selected value
    sub: str = ""  # which sub-page
    visited: set[str] = field(default_factory=set)  # asins opened this episode (rich observations mark them)
    searches: int = 0
    outcome: reward.RewardBreakdown | None = None

    # -- what is on the page ---------------------------------------------------------------------
    @property
    def product(self) -> Product | None:
        return self.catalogue.by_asin.get(self.asin) if self.asin else None

    def page_results(self) -> list[Product]:
        start = (self.page_no - 1) * PAGE_SIZE
        return [self.catalogue.by_asin[a] for a in self.results[start : start + PAGE_SIZE]]

    def has_next(self) -> bool:
        return self.page_no * PAGE_SIZE < len(self.results)

    def clickables(self) -> dict[str, Clickable]:
        """What can be clicked now, keyed by :func:`normalize` of its label, in page order."""
        out: dict[str, Clickable] = {}

        def button(label: str) -> None:
            out[normalize(label)] = Clickable("button", label)

        if self.page == RESULTS:
            button(BACK_TO_SEARCH)
            if self.page_no > 1:
                button(PREV_PAGE)
            if self.has_next():
                button(NEXT_PAGE)
            for p in self.page_results():
                out[normalize(p.asin)] = Clickable("product", p.asin)
        elif self.page == ITEM and self.product is not None:
            button(BACK_TO_SEARCH)
            button(PREV_PAGE)
            for group, values in self.product.options:
                for v in values:
                    out.setdefault(normalize(v), Clickable("option", v, group))
            for label in SUB_PAGES:
                button(label)
            button(BUY_NOW)
        elif self.page == SUB:
            button(BACK_TO_SEARCH)
            button(PREV_PAGE)
        return out

    def resolve(self, arg: str) -> Clickable | None:
        """The clickable ``arg`` names: its label, a navigation alias, or on the results page a
        product's title (the site links both the id and the title)."""
        key = normalize(arg).strip("[]'\"` ")
        found = self.clickables()
        hit = found.get(key) or found.get(normalize(ALIASES.get(key, key)))
        if hit is None and self.page == RESULTS:
            hit = next((Clickable("product", p.asin) for p in self.page_results() if normalize(p.title) == key), None)
        return hit

    # -- actions ---------------------------------------------------------------------------------
    def search(self, keywords: str) -> None:
        self.keywords = " ".join(keywords.split())
        self.results = tuple(p.asin for p in self.catalogue.search(self.keywords, SEARCH_RETURN_N))
        self.page, self.page_no, self.asin, self.options, self.sub = RESULTS, 1, None, {}, ""
        self.searches += 1

    def click(self, target: Clickable) -> reward.RewardBreakdown | None:
        """Follow a clickable of the current page; returns the reward breakdown on *Buy Now*."""
        if target.kind == "product":
            self.page, self.asin, self.options, self.sub = ITEM, target.label, {}, ""
            self.visited.add(target.label)
        elif target.kind == "option":
            self.options[target.group] = target.label
        elif target.label == BACK_TO_SEARCH:
            self.page, self.asin, self.options, self.sub = SEARCH, None, {}, ""
        elif target.label == NEXT_PAGE:
            self.page_no += 1
        elif target.label == PREV_PAGE:
            if self.page == RESULTS:
                self.page_no -= 1
            elif self.page == ITEM:
                self.page, self.asin, self.options = RESULTS, None, {}
            else:  # a sub-page
                self.page, self.sub = ITEM, ""
        elif target.label in SUB_PAGES:
            self.page, self.sub = SUB, target.label
        elif target.label == BUY_NOW:
            product = self.product
            assert product is not None  # Buy Now is only on an item page
            self.outcome = reward.score(product, self.goal, self.options.values())
            self.page = DONE
            return self.outcome
        return None
