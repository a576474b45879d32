"""Pages as text, in the two text modes of upstream's ``WebAgentTextEnv``.

A page is a list of elements ``(kind, text)`` in the order the HTML templates show them; the
modes differ only in how elements are joined:

- ``text`` (what AgentGym serves): the visible strings joined by `` [SEP] ``, e.g.
  ``WebShop [SEP] Instruction: [SEP] i need ... [SEP] Search``;
- ``text_rich``: one element per line, buttons as ``[button] X [button_]``, selected options and
  visited results as ``[clicked button] X [clicked button_]``, and a ``You have clicked X.`` line
  per selected option at the top.
"""

from __future__ import annotations

from agentenv_webshop.browser import (
    BACK_TO_SEARCH,
    BUY_NOW,
    DONE,
    ITEM,
    NEXT_PAGE,
    PREV_PAGE,
    RESULTS,
    SEARCH,
    SUB_PAGES,
    Browser,
)

Element = tuple[str, str]  # (kind, text); kind: text, button, option, product
MODES = ("text", "text_rich")


def search_page(instruction: str) -> list[Element]:
    return [("text", "WebShop"), ("text", "Instruction:"), ("text", instruction), ("button", "Search")]


def elements(b: Browser) -> list[Element]:
    """The page ``b`` is on."""
    instruction = b.goal.instruction
    if b.page == SEARCH:
        return search_page(instruction)
    if b.page == DONE:
        value = b.outcome.reward if b.outcome else 0.0
        return [("text", "Thank you for shopping with us!"), ("text", "Your score (min 0.0, max 1.0)"),
                ("text", f"{round(value, 4)}")]
    out: list[Element] = [("text", "Instruction:"), ("text", instruction), ("button", BACK_TO_SEARCH)]
    if b.page == RESULTS:
        out.append(("text", f"Page {b.page_no} (Total results: {len(b.results)})"))
        if b.page_no > 1:
            out.append(("button", PREV_PAGE))
        if b.has_next():
            out.append(("button", NEXT_PAGE))
        for p in b.page_results():
            out += [("product", p.asin), ("text", p.title), ("text", p.price_text)]
        return out
    product = b.product
    assert product is not None  # item and sub-pages always have one
    out.append(("button", PREV_PAGE))
    if b.page == ITEM:
        for group, values in product.options:
            out.append(("text", group))
            out += [("option", v) for v in values]
        out += [("text", product.title), ("text", f"Price: {product.price_text}"),
                ("text", f"Rating: {product.rating}")]
        out += [("button", label) for label in SUB_PAGES]
        out.append(("button", BUY_NOW))
    elif b.sub == "Description":
        out.append(("text", product.description))
    elif b.sub == "Features":
        out += [("text", f) for f in product.features]
    else:  # Reviews
        for r in product.reviews:
            out += [("text", f'"{r.title}"'), ("text", str(r.score)), ("text", r.body)]
    return out


def render(items: list[Element], mode: str = "text", selected: frozenset[str] | set[str] = frozenset(),
           visited: frozenset[str] | set[str] = frozenset()) -> str:
    """Join a page's elements as the observation mode says (``selected``: option values chosen,
    ``visited``: asins opened; only ``text_rich`` shows them)."""
    items = [(k, t.strip()) for k, t in items if t and t.strip()]
    if mode == "text":
        return " [SEP] ".join(t for _, t in items)
    header, lines = [], []
    for kind, t in items:
        if kind == "button":
            lines.append(f"[button] {t} [button_]")
        elif kind == "option":
            if t in selected:
                header.append(f"You have clicked {t}.")
                lines.append(f"  [clicked button] {t} [clicked button_]")
            else:
                lines.append(f"  [button] {t} [button_]")
        elif kind == "product":
            mark = "clicked button" if t in visited else "button"
            lines.append(f"\n[{mark}] {t} [{mark}_]")
        else:
            lines.append(t)
    return "\n".join([*reversed(header), *lines])


def observation(b: Browser, mode: str = "text") -> str:
    return render(elements(b), mode, set(b.options.values()) if b.page == ITEM else set(), b.visited)
