"""Write a part of this package's generated catalogue in WebShop's data files, for the agentgym profile.

WebShop's own product files are a download outside its repository, so the agentgym profile is checked against
AgentGym's server on this stand-in: ``python -m agentenv_webshop.webshop_export DIR`` writes the files WebShop
reads (``items_shuffle_1000.json``, ``items_ins_v2_1000.json``, ``items_human_ins.json``) for 60 generated
products, varied where WebShop's loading and goals branch:

- pricing: one price (most), a range within one or across two of the price ladder's steps (``i % 10`` 3 and 7),
  an empty one (upstream's $100.0, ``i == 11``), none (``i == 23``) and one above the ladder (``$1,249.99``, no
  price bound in the goal, ``i == 31``);
- options: none, one group, two groups, every group of the product's type (``i % 6``); values capitalised as
  scraped, one ``X/Y`` value (shown ``x | y``), a group whose contents are null (``i == 13``);
- features as a plain string (``i % 9 == 4``), attributes without an instruction (``i % 8 == 5``, no goal), an
  empty attribute list (``i == 17``), and three entries WebShop skips (``nan`` and too long ids, a repeat).

Everything is a pure function of the generated catalogue and string-seeded generators: the same files on every
machine, which is what lets a recording of AgentGym's server on them be replayed.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from pathlib import Path

from agentenv_webshop.generate import brands, make_product

N = 60

SHORT_CATEGORY = {  # upstream's `category` field is a short word ("beauty", "fashion", "grocery", ...)
    "Clothing, Shoes & Jewelry": "fashion", "Electronics": "electronics", "Home & Kitchen": "garden",
    "Beauty & Personal Care": "beauty", "Grocery & Gourmet Food": "grocery", "Sports & Outdoors": "sports",
    "Pet Supplies": "pets", "Office Products": "office", "Toys & Games": "toys", "Health & Household": "health",
}
TEMPLATES = ("Find me {attrs} {query}", "Find me {query} with {attrs}", "Find me {query} with {attrs}")


def rng(*parts: object) -> random.Random:
    return random.Random("/".join(["up-webshop-fixture", *map(str, parts)]))


def scraped(value: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in value.split(" "))


def pricing(i: int, price: float):
    if i == 11:
        return ""
    if i == 23:
        return None  # key left out
    if i == 31:
        return "$1,249.99"
    if i % 10 == 3:
        k = max(1, int(price // 10))
        return f"${10 * k:.2f} - ${10 * (k + 1):.2f}"
    if i % 10 == 7:
        k = int(price // 10)
        return f"${10 * k + 2.99:.2f} - ${10 * k + 7.49:.2f}"
    return f"${price:.2f}"


def options(i: int, product) -> dict:
    groups = list(product.options)
    if i % 6 == 0 or not groups:
        chosen = []
    elif i % 6 == 1:
        chosen = [(name, values[:3]) for name, values in groups[:1]]
    elif i % 6 == 5:
        chosen = [(name, values[:2]) for name, values in groups]
    else:
        chosen = [(name, values[:3]) for name, values in groups[:2]]
    out = {}
    for n, (name, values) in enumerate(chosen):
        vals = [scraped(v) for v in values]
        if i % 4 == 2 and n == 0 and len(vals) >= 2:
            vals[1] = f"{vals[1]}/{vals[0]}"
        out[scraped(name)] = [{"value": v, "image": f"https://example.invalid/{product.asin}/{k}.jpg" if n == 0
                               else None} for k, v in enumerate(vals)]
    if i == 13:
        out["Style"] = None
    return out


def raw_product(i: int, product) -> dict:
    raw = {
        "asin": product.asin,
        "name": product.title,
        "category": SHORT_CATEGORY.get(product.category, product.category.lower()),
        "query": product.query,
        "product_category": product.product_category,
        "full_description": product.description,
        "small_description": list(product.features) if i % 9 != 4 else " ".join(product.features),
        "customization_options": options(i, product),
        "images": [f"https://example.invalid/{product.asin}.jpg"],
        # keys upstream's clean_product_keys() pops
        "brand": product.title.split(" ")[0], "list_price": "", "seller_name": "fixture",
    }
    p = pricing(i, product.price)
    if p is not None:
        raw["pricing"] = p
    return raw


def attributes_entry(i: int, product) -> dict:
    if i == 17:
        return {"attributes": []}
    entry = {"attributes": list(product.attributes)}
    if i % 8 == 5:
        return entry
    r = rng("ins", i)
    k = min(len(product.attributes), r.choice((1, 2, 2, 3)))
    attrs = r.sample(list(product.attributes), k)
    entry["instruction"] = r.choice(TEMPLATES).format(attrs=", ".join(attrs), query=product.query)
    entry["instruction_attributes"] = attrs
    return entry


def human_entries(i: int, product, raw: dict) -> list[dict]:
    r = rng("human", i)
    attrs = r.sample(list(product.attributes), min(2, len(product.attributes)))
    opts = [c[0]["value"].lower() for c in (raw["customization_options"] or {}).values() if c]
    out = [{"asin": product.asin, "instruction": f"i am looking for a {product.query} that is {' and '.join(attrs)}.",
            "instruction_attributes": attrs, "instruction_options": opts}]
    if i % 3 == 0:
        out.append({"asin": product.asin, "instruction": f"i want a {product.query}", "instruction_attributes": [],
                    "instruction_options": []})
    return out


def export(out: str | Path) -> Path:
    """Write the three files into ``out``; returns it."""
    out = Path(out)
    names = brands()
    products = [make_product(i, names) for i in range(N)]
    raws, attributes, human = [], {}, {}
    for i, product in enumerate(products):
        raw = raw_product(i, product)
        raws.append(raw)
        attributes[product.asin] = attributes_entry(i, product)
        if i % 5 == 0:
            human[product.asin] = human_entries(i, product, raw)
        if i == 5:
            raws.append(dict(raw_product(i, product), asin="nan", name="Product with nan asin (skipped)"))
        if i == 20:
            raws.append(dict(raw_product(i, product), asin="B0TOOLONGID1", name="Product with long asin (skipped)"))
        if i == 40:
            raws.append(dict(raw_product(0, products[0]), name="Duplicate of product 0 (skipped)"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "items_shuffle_1000.json").write_text(json.dumps(raws, indent=1))
    (out / "items_ins_v2_1000.json").write_text(json.dumps(attributes, indent=1))
    (out / "items_human_ins.json").write_text(json.dumps(human, indent=1))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="the directory to write WebShop's three data files into")
    print(f"wrote WebShop's data files for {N} generated products in {export(p.parse_args(argv).out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
