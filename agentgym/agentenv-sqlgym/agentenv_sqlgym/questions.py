"""Questions with gold SQL, from templates over a generated database's schema and rows.

A template picks what to ask from the schema (:mod:`agentenv_sqlgym.schema` declares what each
column is for and how to say it) and its parameters from the rows (a category value that occurs, a
threshold between two real values, a row's name), and writes the question, the gold SQL, the way
results are compared and a one-line plan (the expert's thought). Every candidate is then run on the
real database and kept only when its answer is non-trivial: some rows, not all NULL, a count above
zero, at most 25 rows to list, and no tie where the question asks for "the highest" or "the top k".

Difficulties follow BIRD's names: ``simple`` (one table: filters, counts, aggregates, a lookup),
``moderate`` (top-k with ORDER BY/LIMIT, GROUP BY, one join), ``challenging`` (nested queries,
GROUP BY ... HAVING, NOT IN, joins through two or three tables).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentenv_sqlgym.schema import Bridge, Column, DatabaseSpec, Link, Table

DIFFICULTIES = ("simple", "moderate", "challenging")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
MAX_LIST = 25


@dataclass(frozen=True)
class Candidate:
    """A question before it is checked against the database."""

    template: str
    difficulty: str
    question: str
    sql: str
    comparison: str  # "ordered" or "multiset"
    plan: str  # why the SQL answers the question, as the expert says it
    table: str  # the table the expert looks at first
    min_rows: int = 1
    max_rows: int = MAX_LIST
    positive: bool = False  # a single number that must be above zero (counts)
    tie_sql: str | None = None  # sort keys of the first k+1 rows: must all differ


def lit(value: Any) -> str:
    """``value`` as an SQL literal (strings quoted, numbers as written in the question)."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return num(value)


def num(value: float | int) -> str:
    if isinstance(value, float):
        text = f"{value:.2f}".rstrip("0").rstrip(".")
        return text if text not in ("", "-0") else "0"
    return str(value)


def say(value: Any) -> str:
    """``value`` as a question shows it: strings in single quotes (the exact stored text)."""
    return f"'{value}'" if isinstance(value, str) else num(value)


def article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


class Ctx:
    """A database's spec and rows (as dicts), and the RNG of one attempt."""

    def __init__(self, spec: DatabaseSpec, rows: dict[str, list[tuple]]) -> None:
        self.spec = spec
        self.rows = {t.name: [dict(zip([c.name for c in t.columns], r, strict=True)) for r in rows[t.name]]
                     for t in spec.tables}
        self.rng = random.Random(0)

    def values(self, table: str, column: str) -> list[Any]:
        return [r[column] for r in self.rows[table] if r[column] is not None]

    def pick_table(self, *roles: str) -> Table | None:
        """A random table that has columns of every role in ``roles``."""
        tables = [t for t in self.spec.tables if all(t.of_role(r) for r in roles)]
        return self.rng.choice(tables) if tables else None

    def category_value(self, table: str, column: Column) -> Any:
        return self.rng.choice(sorted(set(self.values(table, column.name)), key=str))

    def threshold(self, table: str, column: str, rows: list[dict] | None = None, most: int = 15) -> tuple[float, str]:
        """A value of the column and "greater"/"less", such that 2..``most`` rows pass the strict test."""
        vals = sorted(r[column] for r in (rows if rows is not None else self.rows[table]) if r[column] is not None)
        if len(vals) < 4:
            return vals[0] if vals else 0, "greater"
        k = self.rng.randrange(2, min(most, len(vals) - 1) + 1)
        if self.rng.random() < 0.5:
            return vals[-k - 1], "greater"
        return vals[k], "less"

    def label(self, table: Table) -> Any:
        return self.rng.choice(self.values(table.name, table.label.name))  # type: ignore[union-attr]


def _cats(t: Table) -> list[Column]:
    return [c for c in t.of_role("category") if not c.null_phrase]


def _plural(c: Column) -> str:
    return c.words + "s"


AGGS = (("AVG", "average"), ("MAX", "highest"), ("MIN", "lowest"), ("SUM", "total"))


def aggregate(x: Ctx, n: Column) -> tuple[str, str]:
    """An aggregate function and its word; SUM only for measures whose total means something."""
    return x.rng.choice(AGGS if n.additive else AGGS[:3])
OPS = {"greater": ">", "less": "<"}


# -- simple -------------------------------------------------------------------------------------------------
def count_where_category(x: Ctx) -> Candidate | None:
    t = x.pick_table("category")
    if t is None or not _cats(t):
        return None
    c = x.rng.choice(_cats(t))
    v = x.category_value(t.name, c)
    return Candidate("count_where_category", "simple", f"How many {t.plural} are there whose {c.words} is {say(v)}?",
                     f"SELECT COUNT(*) FROM {t.name} WHERE {c.name} = {lit(v)}", "multiset",
                     f"I count the rows of {t.name} whose {c.name} is {lit(v)}.", t.name, positive=True)


def list_where_number(x: Ctx) -> Candidate | None:
    t = x.pick_table("label", "number")
    if t is None:
        return None
    n, lab = x.rng.choice(t.of_role("number")), t.label
    v, op = x.threshold(t.name, n.name)
    return Candidate("list_where_number", "simple",
                     f"List the {_plural(lab)} of the {t.plural} whose {n.words} is {op} than {num(v)}.",
                     f"SELECT {lab.name} FROM {t.name} WHERE {n.name} {OPS[op]} {lit(v)}", "multiset",
                     f"I select {lab.name} from {t.name} where {n.name} {OPS[op]} {num(v)}.", t.name, min_rows=2)


def aggregate_where_category(x: Ctx) -> Candidate | None:
    t = x.pick_table("category", "number")
    if t is None or not _cats(t):
        return None
    c, n = x.rng.choice(_cats(t)), x.rng.choice(t.of_role("number"))
    v = x.category_value(t.name, c)
    fn, word = aggregate(x, n)
    return Candidate("aggregate_where_category", "simple",
                     f"What is the {word} {n.words} of the {t.plural} whose {c.words} is {say(v)}?",
                     f"SELECT {fn}({n.name}) FROM {t.name} WHERE {c.name} = {lit(v)}", "multiset",
                     f"I take the {fn} of {n.name} over the rows of {t.name} with {c.name} = {lit(v)}.", t.name)


def count_between(x: Ctx) -> Candidate | None:
    t = x.pick_table("number")
    if t is None:
        return None
    n = x.rng.choice(t.of_role("number"))
    vals = sorted(set(x.values(t.name, n.name)))
    if len(vals) < 6:
        return None
    i = x.rng.randrange(0, len(vals) - 3)
    lo, hi = vals[i], vals[x.rng.randrange(i + 1, min(len(vals), i + len(vals) // 3 + 2))]
    return Candidate("count_between", "simple",
                     f"How many {t.plural} have a {n.words} between {num(lo)} and {num(hi)}, both included?",
                     f"SELECT COUNT(*) FROM {t.name} WHERE {n.name} BETWEEN {lit(lo)} AND {lit(hi)}", "multiset",
                     f"I count the {t.name} rows with {n.name} BETWEEN {num(lo)} AND {num(hi)} (inclusive).", t.name,
                     positive=True)


def list_category_and_number(x: Ctx) -> Candidate | None:
    t = x.pick_table("label", "category", "number")
    if t is None or not _cats(t):
        return None
    c, n, lab = x.rng.choice(_cats(t)), x.rng.choice(t.of_role("number")), t.label
    v = x.category_value(t.name, c)
    subset = [r for r in x.rows[t.name] if r[c.name] == v]
    if len(subset) < 3:
        return None
    th, op = x.threshold(t.name, n.name, subset, most=10)
    return Candidate("list_category_and_number", "simple",
                     f"List the {_plural(lab)} of the {t.plural} whose {c.words} is {say(v)} and whose {n.words} "
                     f"is {op} than {num(th)}.",
                     f"SELECT {lab.name} FROM {t.name} WHERE {c.name} = {lit(v)} AND {n.name} {OPS[op]} {lit(th)}",
                     "multiset", f"I filter {t.name} on both conditions, {c.name} = {lit(v)} and {n.name} "
                     f"{OPS[op]} {num(th)}, and list {lab.name}.", t.name)


def count_in_period(x: Ctx) -> Candidate | None:
    t = x.pick_table("date")
    if t is None:
        return None
    d = x.rng.choice(t.of_role("date"))
    day = str(x.rng.choice(x.values(t.name, d.name)))
    if x.rng.random() < 0.5:
        return Candidate("count_in_period", "simple", f"How many {t.plural} have a {d.words} in {day[:4]}?",
                         f"SELECT COUNT(*) FROM {t.name} WHERE strftime('%Y', {d.name}) = '{day[:4]}'", "multiset",
                         f"Dates are stored as YYYY-MM-DD text, so I count the {t.name} rows whose {d.name} "
                         f"starts with year {day[:4]}.", t.name, positive=True)
    month = f"{MONTHS[int(day[5:7]) - 1]} {day[:4]}"
    return Candidate("count_in_period", "simple", f"How many {t.plural} have a {d.words} in {month}?",
                     f"SELECT COUNT(*) FROM {t.name} WHERE strftime('%Y-%m', {d.name}) = '{day[:7]}'", "multiset",
                     f"Dates are stored as YYYY-MM-DD text, so I count the {t.name} rows whose {d.name} falls in "
                     f"{day[:7]}.", t.name, positive=True)


def lookup(x: Ctx) -> Candidate | None:
    t = x.pick_table("label")
    if t is None:
        return None
    cols = t.of_role("number") + _cats(t) + t.of_role("date")
    if not cols:
        return None
    c, lab = x.rng.choice(cols), t.label
    name = x.label(t)
    return Candidate("lookup", "simple", f"What is the {c.words} of the {t.singular} {say(name)}?",
                     f"SELECT {c.name} FROM {t.name} WHERE {lab.name} = {lit(name)}", "multiset",
                     f"I read {c.name} from the {t.name} row whose {lab.name} is {lit(name)}.", t.name)


def count_null(x: Ctx) -> Candidate | None:
    options = [(t, c) for t in x.spec.tables for c in t.columns if c.null_phrase]
    if not options:
        return None
    t, c = x.rng.choice(options)
    if t.label and x.rng.random() < 0.5:
        fn, word = x.rng.choice(AGGS[1:3])
        nums = [n for n in t.of_role("number") if n is not c]
        if nums:
            n = x.rng.choice(nums)
            return Candidate("count_null", "simple",
                             f"What is the {word} {n.words} of the {t.plural} that {c.null_phrase}?",
                             f"SELECT {fn}({n.name}) FROM {t.name} WHERE {c.name} IS NULL", "multiset",
                             f"Rows that {c.null_phrase} have NULL {c.name}; I take the {fn} of {n.name} over them.",
                             t.name)
    return Candidate("count_null", "simple", f"How many {t.plural} {c.null_phrase}?",
                     f"SELECT COUNT(*) FROM {t.name} WHERE {c.name} IS NULL", "multiset",
                     f"Rows that {c.null_phrase} have NULL in {c.name}; I count them.", t.name, positive=True)


# -- moderate -----------------------------------------------------------------------------------------------
def top_k(x: Ctx) -> Candidate | None:
    t = x.pick_table("label", "number")
    if t is None:
        return None
    n, lab = x.rng.choice(t.of_role("number")), t.label
    k = x.rng.randrange(3, 6)
    high = x.rng.random() < 0.6
    order, word, then = ("DESC", "highest", "from highest to lowest") if high else ("ASC", "lowest",
                                                                                     "from lowest to highest")
    return Candidate("top_k", "moderate",
                     f"List the {_plural(lab)} of the {k} {t.plural} with the {word} {n.words}, {then}.",
                     f"SELECT {lab.name} FROM {t.name} ORDER BY {n.name} {order} LIMIT {k}", "ordered",
                     f"I sort {t.name} by {n.name} {order} and keep the first {k} {lab.name} values, in that order.",
                     t.name, min_rows=k, tie_sql=f"SELECT {n.name} FROM {t.name} WHERE {n.name} IS NOT NULL "
                                                 f"ORDER BY {n.name} {order} LIMIT {k + 1}")


def group_count(x: Ctx) -> Candidate | None:
    t = x.pick_table("category")
    if t is None or not _cats(t):
        return None
    c = x.rng.choice(_cats(t))
    return Candidate("group_count", "moderate",
                     f"For each {c.words}, how many {t.plural} are there? Give the {c.words} and the count.",
                     f"SELECT {c.name}, COUNT(*) FROM {t.name} GROUP BY {c.name}", "multiset",
                     f"I group {t.name} by {c.name} and count the rows of each group.", t.name, min_rows=2)


def group_aggregate(x: Ctx) -> Candidate | None:
    t = x.pick_table("category", "number")
    if t is None or not _cats(t):
        return None
    c, n = x.rng.choice(_cats(t)), x.rng.choice(t.of_role("number"))
    fn, word = aggregate(x, n)
    return Candidate("group_aggregate", "moderate",
                     f"For each {c.words}, what is the {word} {n.words} of the {t.plural}? Give the {c.words} and "
                     f"the {word} {n.words}.",
                     f"SELECT {c.name}, {fn}({n.name}) FROM {t.name} GROUP BY {c.name}", "multiset",
                     f"I group {t.name} by {c.name} and take {fn}({n.name}) in each group.", t.name, min_rows=2)


def argmax(x: Ctx) -> Candidate | None:
    t = x.pick_table("label", "number")
    if t is None:
        return None
    n, lab = x.rng.choice(t.of_role("number")), t.label
    high = x.rng.random() < 0.6
    order, word = ("DESC", "highest") if high else ("ASC", "lowest")
    return Candidate("argmax", "moderate", f"Which {t.singular} has the {word} {n.words}? Give its {lab.words}.",
                     f"SELECT {lab.name} FROM {t.name} ORDER BY {n.name} {order} LIMIT 1", "multiset",
                     f"I sort {t.name} by {n.name} {order} and take the {lab.name} of the first row.", t.name,
                     tie_sql=f"SELECT {n.name} FROM {t.name} WHERE {n.name} IS NOT NULL ORDER BY {n.name} {order} "
                             "LIMIT 2")


def distinct_categories(x: Ctx) -> Candidate | None:
    t = x.pick_table("category", "number")
    if t is None or not _cats(t):
        return None
    c, n = x.rng.choice(_cats(t)), x.rng.choice(t.of_role("number"))
    v, op = x.threshold(t.name, n.name, most=12)
    kinds = len(set(x.values(t.name, c.name)))
    return Candidate("distinct_categories", "moderate",
                     f"Which distinct {_plural(c)} occur among the {t.plural} whose {n.words} is {op} than {num(v)}?",
                     f"SELECT DISTINCT {c.name} FROM {t.name} WHERE {n.name} {OPS[op]} {lit(v)}", "multiset",
                     f"I filter {t.name} on {n.name} {OPS[op]} {num(v)} and list each {c.name} once (DISTINCT).",
                     t.name, min_rows=2, max_rows=max(2, kinds - 1))


def _links(x: Ctx, child_label: bool = False, parent_label: bool = False) -> list[tuple[Link, Table, Table]]:
    out = []
    for link in x.spec.links:
        child, parent = x.spec.table(link.child), x.spec.table(link.parent)
        if (child_label and child.label is None) or (parent_label and parent.label is None):
            continue
        out.append((link, child, parent))
    return out


def _join(link: Link, child: Table, parent: Table) -> str:
    return f"{child.name} AS T1 JOIN {parent.name} AS T2 ON T1.{link.fk} = T2.{parent.pk.name}"


def children_of(x: Ctx) -> Candidate | None:
    links = _links(x, parent_label=True)
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    name = x.label(parent)
    lab = parent.label
    assert lab is not None
    return Candidate("children_of", "moderate",
                     f"How many {link.children} does the {parent.singular} {say(name)} have?",
                     f"SELECT COUNT(*) FROM {_join(link, child, parent)} WHERE T2.{lab.name} = {lit(name)}", "multiset",
                     f"I join {child.name} to {parent.name} on {link.fk} and count the rows of the {parent.singular} "
                     f"whose {lab.name} is {lit(name)}.", parent.name, positive=True)


def children_by_parent_category(x: Ctx) -> Candidate | None:
    links = [(lk, c, p) for lk, c, p in _links(x, child_label=True) if _cats(p)]
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    pc = x.rng.choice(_cats(parent))
    v = x.category_value(parent.name, pc)
    lab = child.label
    assert lab is not None
    return Candidate("children_by_parent_category", "moderate",
                     f"List the {_plural(lab)} of the {child.plural} whose {link.parent_role}'s {pc.words} is "
                     f"{say(v)}.",
                     f"SELECT T1.{lab.name} FROM {_join(link, child, parent)} WHERE T2.{pc.name} = {lit(v)}",
                     "multiset", f"The {pc.name} is in {parent.name}: I join {child.name} to it on {link.fk} and keep "
                     f"the rows with {pc.name} = {lit(v)}.", parent.name)


def count_by_parent_category(x: Ctx) -> Candidate | None:
    links = [(lk, c, p) for lk, c, p in _links(x) if _cats(p)]
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    pc = x.rng.choice(_cats(parent))
    v = x.category_value(parent.name, pc)
    return Candidate("count_by_parent_category", "moderate",
                     f"How many {child.plural} have {article(link.parent_role)} {link.parent_role} whose {pc.words} "
                     f"is {say(v)}?",
                     f"SELECT COUNT(*) FROM {_join(link, child, parent)} WHERE T2.{pc.name} = {lit(v)}", "multiset",
                     f"I join {child.name} to {parent.name} on {link.fk} and count the rows with {pc.name} = {lit(v)}.",
                     parent.name, positive=True)


def average_of_children(x: Ctx) -> Candidate | None:
    links = [(lk, c, p) for lk, c, p in _links(x, parent_label=True) if c.of_role("number")]
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    n = x.rng.choice(child.of_role("number"))
    name = x.label(parent)
    fn, word = aggregate(x, n)
    lab = parent.label
    assert lab is not None
    return Candidate("average_of_children", "moderate",
                     f"What is the {word} {n.words} of the {link.children} of the {parent.singular} {say(name)}?",
                     f"SELECT {fn}(T1.{n.name}) FROM {_join(link, child, parent)} WHERE T2.{lab.name} = {lit(name)}",
                     "multiset", f"I join {child.name} to {parent.name} on {link.fk}, keep the {parent.singular} "
                     f"{lit(name)} and take {fn}({n.name}).", child.name)


# -- challenging --------------------------------------------------------------------------------------------
def above_average(x: Ctx) -> Candidate | None:
    t = x.pick_table("label", "category", "number")
    if t is None or not _cats(t):
        return None
    c, n, lab = x.rng.choice(_cats(t)), x.rng.choice(t.of_role("number")), t.label
    v = x.category_value(t.name, c)
    word = x.rng.choice(("above", "below"))
    op = ">" if word == "above" else "<"
    return Candidate("above_average", "challenging",
                     f"List the {_plural(lab)} of the {t.plural} whose {c.words} is {say(v)} and whose {n.words} is "
                     f"{word} the average {n.words} of all {t.plural}.",
                     f"SELECT {lab.name} FROM {t.name} WHERE {c.name} = {lit(v)} AND {n.name} {op} "
                     f"(SELECT AVG({n.name}) FROM {t.name})", "multiset",
                     f"A subquery gives the average {n.name} of all {t.name}; I keep the rows with {c.name} = {lit(v)} "
                     f"and {n.name} {op} that average.", t.name)


def more_than_children(x: Ctx) -> Candidate | None:
    links = _links(x, parent_label=True)
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    counts: dict[Any, int] = {}
    for r in x.rows[child.name]:
        counts[r[link.fk]] = counts.get(r[link.fk], 0) + 1
    ordered = sorted(counts.values(), reverse=True)
    if len(ordered) < 4:
        return None
    m = ordered[x.rng.randrange(1, min(len(ordered) - 1, 12))]
    lab = parent.label
    assert lab is not None
    return Candidate("more_than_children", "challenging",
                     f"List the {_plural(lab)} of the {parent.plural} that have more than {m} {link.children}.",
                     f"SELECT T2.{lab.name} FROM {_join(link, child, parent)} GROUP BY T2.{parent.pk.name} "
                     f"HAVING COUNT(*) > {m}", "multiset",
                     f"I join {child.name} to {parent.name}, group by the {parent.singular} and keep the groups with "
                     f"COUNT(*) > {m}.", parent.name)


def most_children(x: Ctx) -> Candidate | None:
    links = _links(x, parent_label=True)
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    lab = parent.label
    assert lab is not None
    group = f"FROM {_join(link, child, parent)} GROUP BY T2.{parent.pk.name} ORDER BY COUNT(*) DESC"
    return Candidate("most_children", "challenging",
                     f"Which {parent.singular} has the most {link.children}? Give its {lab.words}.",
                     f"SELECT T2.{lab.name} {group} LIMIT 1", "multiset",
                     f"I join {child.name} to {parent.name}, count the rows per {parent.singular} and take the one "
                     "with the largest count.", parent.name, tie_sql=f"SELECT COUNT(*) {group} LIMIT 2")


def highest_total(x: Ctx) -> Candidate | None:
    links = [(lk, c, p) for lk, c, p in _links(x, parent_label=True) if [n for n in c.of_role("number") if n.additive]]
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    n = x.rng.choice([n for n in child.of_role("number") if n.additive])
    lab = parent.label
    assert lab is not None
    group = f"FROM {_join(link, child, parent)} GROUP BY T2.{parent.pk.name} ORDER BY SUM(T1.{n.name}) DESC"
    return Candidate("highest_total", "challenging",
                     f"Which {parent.singular} has the highest total {n.words} over its {link.children}? "
                     f"Give its {lab.words}.",
                     f"SELECT T2.{lab.name} {group} LIMIT 1", "multiset",
                     f"I join {child.name} to {parent.name}, sum {n.name} per {parent.singular} and take the largest "
                     "sum.", child.name, tie_sql=f"SELECT SUM(T1.{n.name}) {group} LIMIT 2")


def without_children(x: Ctx) -> Candidate | None:
    links = _links(x, parent_label=True)
    if not links:
        return None
    link, child, parent = x.rng.choice(links)
    lab = parent.label
    assert lab is not None
    return Candidate("without_children", "challenging",
                     f"List the {_plural(lab)} of the {parent.plural} that have no {link.children}.",
                     f"SELECT {lab.name} FROM {parent.name} WHERE {parent.pk.name} NOT IN "
                     f"(SELECT {link.fk} FROM {child.name})", "multiset",
                     f"I keep the {parent.name} rows whose {parent.pk.name} does not appear in {child.name}.{link.fk} "
                     "(NOT IN a subquery).", child.name)


def _bridges(x: Ctx) -> list[tuple[Bridge, Table, Table]]:
    return [(b, x.spec.table(b.a), x.spec.table(b.b)) for b in x.spec.bridges]


def bridge_by_category(x: Ctx) -> Candidate | None:
    options = [(b, a, bt) for b, a, bt in _bridges(x) if _cats(bt) and a.label]
    if not options:
        return None
    br, a, b = x.rng.choice(options)
    c = x.rng.choice(_cats(b))
    v = x.category_value(b.name, c)
    lab = a.label
    assert lab is not None
    return Candidate("bridge_by_category", "challenging",
                     f"List the distinct {_plural(lab)} of the {a.plural} who {br.verb} {article(b.singular)} "
                     f"{b.singular} whose {c.words} is {say(v)}.",
                     f"SELECT DISTINCT A.{lab.name} FROM {br.joins} WHERE B.{c.name} = {lit(v)}", "multiset",
                     f"I join {a.name} through to {b.name}, keep {c.name} = {lit(v)} and list each "
                     f"{a.singular}'s {lab.name} once.", b.name)


def bridge_count(x: Ctx) -> Candidate | None:
    options = [(b, a, bt) for b, a, bt in _bridges(x) if bt.label]
    if not options:
        return None
    br, a, b = x.rng.choice(options)
    name = x.label(b)
    lab = b.label
    assert lab is not None
    return Candidate("bridge_count", "challenging",
                     f"How many different {a.plural} {br.verb} the {b.singular} {say(name)}?",
                     f"SELECT COUNT(DISTINCT A.{a.pk.name}) FROM {br.joins} WHERE B.{lab.name} = {lit(name)}",
                     "multiset", f"I join {a.name} through to {b.name}, keep the {b.singular} {lit(name)} and count "
                     f"distinct {a.pk.name} values.", b.name, positive=True)


def bridge_of(x: Ctx) -> Candidate | None:
    options = [(b, a, bt) for b, a, bt in _bridges(x) if bt.label and a.label]
    if not options:
        return None
    br, a, b = x.rng.choice(options)
    name = x.label(a)
    alab, blab = a.label, b.label
    assert alab is not None and blab is not None
    return Candidate("bridge_of", "challenging",
                     f"List the distinct {_plural(blab)} of the {b.plural} that the {a.singular} {say(name)} "
                     f"{br.verb}.",
                     f"SELECT DISTINCT B.{blab.name} FROM {br.joins} WHERE A.{alab.name} = {lit(name)}", "multiset",
                     f"I join {a.name} through to {b.name}, keep the {a.singular} {lit(name)} and list each "
                     f"{b.singular}'s {blab.name} once.", a.name, min_rows=2)


def group_having_average(x: Ctx) -> Candidate | None:
    t = x.pick_table("category", "number")
    if t is None or not _cats(t):
        return None
    c, n = x.rng.choice(_cats(t)), x.rng.choice(t.of_role("number"))
    groups: dict[Any, list[float]] = {}
    for r in x.rows[t.name]:
        if r[n.name] is not None:
            groups.setdefault(r[c.name], []).append(r[n.name])
    avgs = sorted(sum(v) / len(v) for v in groups.values())
    if len(avgs) < 3:
        return None
    i = x.rng.randrange(0, len(avgs) - 1)
    th = round((avgs[i] + avgs[i + 1]) / 2, 1) if avgs[i + 1] - avgs[i] > 0.2 else None
    if th is None:
        return None
    return Candidate("group_having_average", "challenging",
                     f"Which {_plural(c)} have an average {n.words} above {num(th)} among the {t.plural}?",
                     f"SELECT {c.name} FROM {t.name} GROUP BY {c.name} HAVING AVG({n.name}) > {lit(th)}", "multiset",
                     f"I group {t.name} by {c.name} and keep the groups with AVG({n.name}) > {num(th)}.", t.name)


TEMPLATES: dict[str, tuple[Callable[[Ctx], Candidate | None], ...]] = {
    "simple": (count_where_category, list_where_number, aggregate_where_category, count_between,
               list_category_and_number, count_in_period, lookup, count_null),
    "moderate": (top_k, group_count, group_aggregate, argmax, distinct_categories, children_of,
                 children_by_parent_category, count_by_parent_category, average_of_children),
    "challenging": (above_average, more_than_children, most_children, highest_total, without_children,
                    bridge_by_category, bridge_count, bridge_of, group_having_average),
}
