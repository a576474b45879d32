"""What a generated database is: its tables, how questions name their columns, how tables relate.

The same description writes the database (``CREATE TABLE`` statements) and drives the question
templates (``questions``), so a question never names a column the schema does not have, and every
phrase a question uses for a table or a column is declared here once, next to the column.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column. ``role`` tells the question templates what the column is good for:

    ``key`` (the primary key), ``label`` (a unique name or title that identifies a row to a person),
    ``category`` (few distinct values: filters and GROUP BY), ``number`` (a measure: thresholds,
    aggregates, ordering), ``date`` (ISO ``YYYY-MM-DD`` text), ``fk`` (a foreign key), ``attr`` (shown, not asked).
    """

    name: str
    sql_type: str
    role: str = "attr"
    phrase: str = ""
    references: str | None = None  # "table(column)" for a foreign key
    null_phrase: str = ""  # what rows where this column is NULL are, e.g. "have not been returned"
    additive: bool = False  # a total (SUM) of it means something: fares, stock; not years, ratings or grades

    @property
    def words(self) -> str:
        return self.phrase or self.name.replace("_", " ")

    @property
    def numeric(self) -> bool:
        return self.sql_type in ("INTEGER", "REAL")


@dataclass(frozen=True)
class Table:
    name: str
    singular: str
    plural: str
    columns: tuple[Column, ...]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"{self.name} has no column {name!r}")

    @property
    def pk(self) -> Column:
        return next(c for c in self.columns if c.role == "key")

    @property
    def label(self) -> Column | None:
        return next((c for c in self.columns if c.role == "label"), None)

    def of_role(self, role: str) -> list[Column]:
        return [c for c in self.columns if c.role == role]

    def create_sql(self) -> str:
        """The ``CREATE TABLE`` statement, one column a line (what the agent reads in the schema)."""
        lines = []
        for c in self.columns:
            line = f"  {c.name} {c.sql_type}"
            if c.role == "key":
                line += " PRIMARY KEY"
            elif not c.null_phrase:
                line += " NOT NULL"
            lines.append(line)
        for c in self.columns:
            if c.references:
                lines.append(f"  FOREIGN KEY ({c.name}) REFERENCES {c.references}")
        return f"CREATE TABLE {self.name} (\n" + ",\n".join(lines) + "\n)"

    def index_sql(self) -> list[str]:
        """An index on each foreign key (joins stay fast, as in any real schema)."""
        return [f"CREATE INDEX idx_{self.name}_{c.name} ON {self.name} ({c.name})" for c in self.columns
                if c.role == "fk"]


@dataclass(frozen=True)
class Link:
    """A foreign key ``child.fk -> parent`` and how questions say it: a parent's ``children``
    ("orders", "departing flights"), and the child's ``parent_role`` ("customer", "origin airport")."""

    child: str
    fk: str
    parent: str
    children: str
    parent_role: str


@dataclass(frozen=True)
class Bridge:
    """A many-to-many relation "A ``verb`` B" through one or more tables. ``joins`` is the FROM
    clause, with A aliased ``A`` and B aliased ``B`` (e.g. customers bought products through
    orders and order items)."""

    a: str
    b: str
    verb: str
    joins: str


@dataclass(frozen=True)
class DatabaseSpec:
    name: str
    tables: tuple[Table, ...]
    links: tuple[Link, ...] = ()
    bridges: tuple[Bridge, ...] = ()

    def table(self, name: str) -> Table:
        for t in self.tables:
            if t.name == name:
                return t
        raise KeyError(f"{self.name} has no table {name!r}")
