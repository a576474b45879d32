"""The sheet's formulas: a small evaluator for what the tasks and the formula tools need.

A formula is ``=`` followed by an expression of numbers, "strings", cell references (``B7``),
ranges (``B2:B9``, inside functions), ``+ - * /``, parentheses and the functions in
:data:`FUNCTIONS` (the seven operators of AgentGym's formula tools, plus COUNTIF and SUMIF). As in
Google Sheets, aggregates skip text and empty cells of a range; arithmetic on text is an error.
Formulas are computed when written: the cell keeps the result (a paste of values), so later
structural edits (sorting, deleting rows) never leave a formula pointing at the wrong rows.
"""

from __future__ import annotations

import math
import operator as op
import re
from collections.abc import Callable

from agentenv_sheet.a1 import A1Error, parse_a1

Value = str | float | None
Lookup = Callable[[int, int], Value]

#: the operators of AgentGym's update_cell_by_formula / get_value_by_formula tools
OPERATORS = ("SUM", "AVERAGE", "COUNT", "MAX", "MIN", "MINUS", "PRODUCT")

_TOKEN = re.compile(r"""\s*(?:
    (?P<number>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)
  | (?P<string>"[^"]*")
  | (?P<range>[A-Z]{1,2}[1-9]\d*:[A-Z]{1,2}[1-9]\d*)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>[-+*/(),])
)""", re.VERBOSE)


class FormulaError(ValueError):
    """A formula that cannot be read or computed (Google Sheets would show #ERROR!, #VALUE!, ...)."""


def to_number(value: Value) -> float | None:
    """The number a cell holds, or None for text and empty cells."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _numbers(values: list[Value]) -> list[float]:
    return [n for n in (to_number(v) for v in values) if n is not None]


def _criterion(crit: Value) -> Callable[[Value], bool]:
    """COUNTIF's criterion: a number, text, or a comparison such as ">80" or "<>Completed"."""
    if isinstance(crit, (int, float)):
        return lambda v: to_number(v) == float(crit)
    text = "" if crit is None else str(crit)
    m = re.match(r"^(<=|>=|<>|<|>|=)?(.*)$", text, re.DOTALL)
    assert m
    cmp_text, target = m.group(1) or "=", m.group(2)
    try:
        number: float | None = float(target)
    except ValueError:
        number = None
    ops = {"=": op.eq, "<>": op.ne, "<": op.lt, ">": op.gt, "<=": op.le, ">=": op.ge}
    fn = ops[cmp_text]
    if number is not None:
        def numeric(v: Value) -> bool:
            n = to_number(v)
            return fn(n, number) if n is not None else cmp_text == "<>"
        return numeric
    if cmp_text not in ("=", "<>"):
        return lambda v: isinstance(v, str) and fn(v.lower(), target.lower())
    return lambda v: fn(("" if v is None else str(v)).lower(), target.lower())


def _aggregate(name: str, args: list[list[Value]]) -> float:
    flat = [v for arg in args for v in arg]
    nums = _numbers(flat)
    if name == "SUM":
        return math.fsum(nums)
    if name == "AVERAGE":
        if not nums:
            raise FormulaError("#DIV/0! (AVERAGE of no numbers)")
        return math.fsum(nums) / len(nums)
    if name == "COUNT":
        return float(len(nums))
    if name == "MAX":
        return max(nums) if nums else 0.0
    if name == "MIN":
        return min(nums) if nums else 0.0
    if name == "PRODUCT":
        return math.prod(nums) if nums else 0.0
    if name == "MINUS":
        if len(args) != 2 or len(args[0]) != 1 or len(args[1]) != 1:
            raise FormulaError("MINUS takes exactly two values (MINUS(a, b) = a - b)")
        a, b = (to_number(args[0][0]) or 0.0), (to_number(args[1][0]) or 0.0)
        return a - b
    if name == "COUNTIF":
        if len(args) != 2 or len(args[1]) != 1:
            raise FormulaError("COUNTIF takes a range and one criterion")
        test = _criterion(args[1][0])
        return float(sum(1 for v in args[0] if test(v)))
    if name == "SUMIF":
        if len(args) not in (2, 3) or len(args[1]) != 1:
            raise FormulaError("SUMIF takes a range, one criterion and an optional sum range")
        test = _criterion(args[1][0])
        target = args[2] if len(args) == 3 else args[0]
        if len(target) != len(args[0]):
            raise FormulaError("SUMIF's sum range must have the size of its range")
        return math.fsum(n for v, t in zip(args[0], target, strict=True) if test(v) and (n := to_number(t)) is not None)
    raise FormulaError(f"unknown function {name}")


FUNCTIONS = (*OPERATORS, "COUNTIF", "SUMIF")


class _Parser:
    """Recursive descent over the tokens; ranges are lists of values, everything else a scalar."""

    def __init__(self, text: str, lookup: Lookup) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.rstrip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise FormulaError(f"cannot read the formula at {text[pos:pos + 12]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0
        self.lookup = lookup

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise FormulaError("the formula ends too early")
        self.i += 1
        return tok

    def expect(self, text: str) -> None:
        tok = self.take()
        if tok[1] != text:
            raise FormulaError(f"expected {text!r}, found {tok[1]!r}")

    def parse(self) -> Value:
        value = self.expr()
        if self.peek() is not None:
            raise FormulaError(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return value

    def expr(self) -> Value:
        left = self.term()
        while (tok := self.peek()) and tok[1] in "+-" and tok[0] == "op":
            self.take()
            right = self.term()
            left = self.arith(tok[1], left, right)
        return left

    def term(self) -> Value:
        left = self.unary()
        while (tok := self.peek()) and tok[1] in "*/" and tok[0] == "op":
            self.take()
            right = self.unary()
            left = self.arith(tok[1], left, right)
        return left

    def unary(self) -> Value:
        tok = self.peek()
        if tok and tok == ("op", "-"):
            self.take()
            return self.arith("*", -1.0, self.unary())
        if tok and tok == ("op", "+"):
            self.take()
            return self.unary()
        return self.primary()

    @staticmethod
    def arith(sign: str, a: Value, b: Value) -> float:
        x = 0.0 if a is None else to_number(a)
        y = 0.0 if b is None else to_number(b)
        if x is None or y is None:
            raise FormulaError("#VALUE! (arithmetic on text)")
        if sign == "/" and y == 0:
            raise FormulaError("#DIV/0! (division by zero)")
        return {"+": op.add, "-": op.sub, "*": op.mul, "/": op.truediv}[sign](x, y)

    def primary(self) -> Value:
        kind, text = self.take()
        if kind == "number":
            return float(text)
        if kind == "string":
            return text[1:-1]
        if kind == "range":
            raise FormulaError(f"a range ({text}) can only be an argument of a function")
        if kind == "op" and text == "(":
            value = self.expr()
            self.expect(")")
            return value
        if kind == "name":
            nxt = self.peek()
            if nxt == ("op", "("):
                return self.call(text.upper())
            try:
                r, c = parse_a1(text)
            except A1Error:
                raise FormulaError(f"unknown name {text!r}") from None
            return self.lookup(r, c)
        raise FormulaError(f"unexpected {text!r}")

    def call(self, name: str) -> float:
        if name not in FUNCTIONS:
            raise FormulaError(f"unknown function {name} (known: {', '.join(FUNCTIONS)})")
        self.expect("(")
        args: list[list[Value]] = []
        if self.peek() != ("op", ")"):
            while True:
                args.append(self.argument())
                if self.peek() == ("op", ","):
                    self.take()
                    continue
                break
        self.expect(")")
        return _aggregate(name, args)

    def argument(self) -> list[Value]:
        tok = self.peek()
        if tok and tok[0] == "range":
            self.take()
            start, end = tok[1].split(":")
            (r1, c1), (r2, c2) = parse_a1(start), parse_a1(end)
            return [self.lookup(r, c) for r in range(min(r1, r2), max(r1, r2) + 1)
                    for c in range(min(c1, c2), max(c1, c2) + 1)]
        return [self.expr()]


def evaluate(formula: str, lookup: Lookup) -> Value:
    """The value of ``formula`` (with or without its leading ``=``); :class:`FormulaError` if it has none."""
    text = formula[1:] if formula.startswith("=") else formula
    if not text.strip():
        raise FormulaError("the formula is empty")
    value = _Parser(text, lookup).parse()
    if isinstance(value, float) and not math.isfinite(value):
        raise FormulaError("#NUM! (the result is not a finite number)")
    return value
