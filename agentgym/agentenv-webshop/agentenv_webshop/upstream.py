"""Loading the published WebShop data (``--option data_path=DIR``).

The directory holds the files as upstream names them (its ``setup.sh`` downloads them):

- ``items_shuffle.json`` (or ``items_shuffle_1000.json``): a list of scraped products with
  ``asin``, ``name``, ``category``, ``query``, ``product_category``, ``full_description``,
  ``small_description`` (list or string), ``pricing`` (``"$12.99"``, ``"$10.00 - $20.00"`` or a
  list), ``customization_options`` (group -> list of ``{"value": ...}``) and ``images``;
- ``items_ins_v2.json`` (or ``items_ins_v2_1000.json``): asin -> ``{"attributes": [...],
  "instruction": ..., "instruction_attributes": [...]}`` (the synthetic goals' source);
- ``items_human_ins.json``: asin -> list of ``{"instruction", "instruction_attributes",
  "instruction_options"}`` written by people (the paper's goals).

Products are read as upstream's ``load_products`` reads them (ids longer than 10 characters or
``nan`` skipped, duplicates dropped, option values lower-cased with ``/`` shown as `` | ``). Goals
are the human ones when ``items_human_ins.json`` is there (unless ``human_goals=false``), else the
synthetic ones (one per combination of option values, as upstream). They are shuffled with seed
233 as upstream does; with more than 1,500 goals the paper's split applies (test = the first 500,
valid = the next 1,000, train = the rest), otherwise a fifth is test and the rest train. Price
bounds follow upstream's rule with a random generator seeded per goal, so they are reproducible.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

from agentenv_webshop.catalogue import Catalogue, Goal, Product, price_bound, price_phrase
from agentenv_webshop.text import content_words

PRODUCT_FILES = ("items_shuffle.json", "items_shuffle_1000.json")
ATTRIBUTE_FILES = ("items_ins_v2.json", "items_ins_v2_1000.json")
HUMAN_FILE = "items_human_ins.json"
SHUFFLE_SEED = 233
PAPER_SPLIT = {"test": (0, 500), "valid": (500, 1500)}


def find(directory: Path, names: tuple[str, ...]) -> Path | None:
    return next((directory / n for n in names if (directory / n).is_file()), None)


def data_files(directory: str | Path) -> list[Path]:
    """The upstream files present in ``directory`` (for the server's fingerprint)."""
    d = Path(directory)
    found = [find(d, PRODUCT_FILES), find(d, ATTRIBUTE_FILES), find(d, (HUMAN_FILE,))]
    return [p for p in found if p is not None]


def _prices(raw: Any) -> list[float]:
    if isinstance(raw, (int, float)):
        return [float(raw)]
    if isinstance(raw, list):
        return [float(re.sub(r"[^\d.]", "", str(x))) for x in raw if re.sub(r"[^\d.]", "", str(x))][:2]
    if isinstance(raw, str) and "$" in raw:
        return [float(num) for part in raw.split("$")[1:] if (num := re.sub(r"[^\d.]", "", part))][:2]
    return []


def _product(raw: dict[str, Any], attributes: dict[str, Any]) -> Product:
    asin = raw["asin"]
    prices = _prices(raw.get("pricing")) or [100.0]
    price_text = f"${prices[0]}" if len(prices) == 1 else f"${prices[0]} to ${prices[1]}"
    options = []
    for name, contents in (raw.get("customization_options") or {}).items():
        if not contents:
            continue
        values = tuple(str(c["value"]).strip().replace("/", " | ").lower() for c in contents)
        options.append((name.lower(), values))
    bullets = raw.get("small_description") or []
    features = tuple(str(b) for b in (bullets if isinstance(bullets, list) else [bullets]))
    title = str(raw.get("name") or "")
    attrs = attributes.get(asin, {}).get("attributes") or ["DUMMY_ATTR"]
    return Product(
        asin=asin, title=title, category=str(raw.get("category") or ""),
        product_category=str(raw.get("product_category") or ""), query=str(raw.get("query") or "").lower().strip(),
        price=prices[0], price_text=price_text, attributes=tuple(attrs), options=tuple(options),
        description=str(raw.get("full_description") or ""), features=features,
        type_words=content_words(title),
    )


def _goal(product: Product, text: str, attrs: list[str], options: tuple[tuple[str, str], ...],
          bound: float) -> Goal:
    return Goal(
        asin=product.asin, instruction=text.strip().rstrip(".") + price_phrase(bound), attributes=tuple(attrs),
        options=options, price_upper=bound, query=product.query, product_category=product.product_category,
        type_words=product.type_words, search_query=" ".join([*attrs, product.query]),
    )


def human_goals(products: list[Product], human: dict[str, Any]) -> list[Goal]:
    goals = []
    for p in products:
        for n, ins in enumerate(human.get(p.asin) or []):
            attrs = list(ins.get("instruction_attributes") or [])
            if not attrs:
                continue  # upstream skips instructions without attributes
            options = tuple(("", str(v).lower()) for v in ins.get("instruction_options") or [])
            bound = price_bound(p.price, random.Random(f"{p.asin}/{n}"))
            goals.append(_goal(p, str(ins["instruction"]), attrs, options, bound))
    return goals


def synthetic_goals(products: list[Product], attributes: dict[str, Any]) -> list[Goal]:
    goals = []
    for p in products:
        info = attributes.get(p.asin) or {}
        if not info.get("instruction") or not info.get("instruction_attributes"):
            continue
        groups = sorted(dict(p.options))
        values = [dict(p.options)[g] for g in groups]
        bound = price_bound(p.price, random.Random(p.asin))  # one bound per product, as upstream
        for combination in itertools.product(*values):
            options = tuple(zip(groups, combination, strict=True))
            text = str(info["instruction"])
            if options:
                text += " with " + ", and ".join(f"{g}: {v}" for g, v in options)
            goals.append(_goal(p, text, list(info["instruction_attributes"]), options, bound))
    return goals


def load(directory: str | Path, num_products: int | None = None, human: bool | None = None) -> Catalogue:
    d = Path(directory)
    product_file, attribute_file = find(d, PRODUCT_FILES), find(d, ATTRIBUTE_FILES)
    if product_file is None or attribute_file is None:
        raise FileNotFoundError(f"{d} needs one of {PRODUCT_FILES} and one of {ATTRIBUTE_FILES} (WebShop's data files)")
    raw_products = json.loads(product_file.read_text())
    attributes = json.loads(attribute_file.read_text())
    if num_products is not None:
        raw_products = raw_products[:num_products]  # upstream: the file is already shuffled
    seen: set[str] = set()
    products = []
    for raw in raw_products:
        asin = str(raw.get("asin"))
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        products.append(_product(raw, attributes))
    human_file = d / HUMAN_FILE
    use_human = human_file.is_file() if human is None else human
    if use_human and not human_file.is_file():
        raise FileNotFoundError(f"human_goals=true needs {human_file}")
    goals = (human_goals(products, json.loads(human_file.read_text())) if use_human
             else synthetic_goals(products, attributes))
    if not goals:
        raise ValueError(f"no goals in {d}: no product has an instruction with attributes")
    random.Random(SHUFFLE_SEED).shuffle(goals)
    return Catalogue(products, split(goals), source=str(d))


def split(goals: list[Goal]) -> dict[str, list[Goal]]:
    if len(goals) > PAPER_SPLIT["valid"][1]:
        out = {name: goals[a:b] for name, (a, b) in PAPER_SPLIT.items()}
        out["train"] = goals[PAPER_SPLIT["valid"][1]:]
        return out
    n_test = max(1, len(goals) // 5)
    return {"train": goals[n_test:], "test": goals[:n_test]}
