"""The safe expression language of per-process model files, parsed by hand and compiled to numpy.

Grammar (whitelisted; nothing else is accepted, and nothing is ever passed to ``eval``)::

    expression := term (("+" | "-") term)*
    term       := factor (("*" | "/") factor)*
    factor     := ("+" | "-") factor | power
    power      := atom (("^" | "**") factor)?          right-associative: 2^3^2 = 2^(3^2)
    atom       := NUMBER | NAME | NAME "(" expression ("," expression)* ")" | "(" expression ")"

``−``, ``×``, ``÷`` and ``·`` are accepted for ``-``, ``*``, ``/`` and ``*``.  Unary minus binds
looser than ``^`` (``-x^2`` is ``-(x^2)``), as in mathematics.  Functions: ``log2``, ``sqrt``,
``min`` and ``max`` of two or more arguments (element-wise), and the aggregations over the
processes of a run — ``sum(x)``, ``mean(x)``, ``max(x)``, ``min(x)`` with one argument, as numpy's
``max`` of one array and ``maximum`` of two differ.

A parsed expression is a tree of frozen nodes; :func:`compile_expression` turns it into nested
numpy calls over an :class:`Env` of arrays shaped runs × processes (per-process values) or
runs × 1 (one value per run).  Errors are :class:`ExpressionError` with the column and token.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

MAX_LENGTH = 10_000
"""Longest expression accepted, in characters."""

MAX_DEPTH = 100
"""Deepest nesting accepted (parentheses, unary signs, function calls)."""

ELEMENTWISE = {"log2": np.log2, "sqrt": np.sqrt}
"""One-argument functions applied to each value."""

REDUCTIONS = ("sum", "mean", "max", "min")
"""Functions that, with one argument, aggregate over the processes of a run."""

FUNCTIONS = frozenset(ELEMENTWISE) | frozenset(REDUCTIONS)
"""Every function name; none of them can name a parameter or section."""

_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "neg": 3, "pos": 3, "^": 4}
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|[-+*/^(),−×÷·])
""", re.VERBOSE)
_ALIASES = {"−": "-", "×": "*", "÷": "/", "·": "*", "**": "^"}


class ExpressionError(ValueError):
    """An expression that is not in the grammar; ``column`` (1-based) and ``token`` say where."""

    def __init__(self, message: str, column: int, token: str) -> None:
        self.column = column
        self.token = token
        super().__init__(message)


@dataclass(frozen=True)
class Number:
    value: float
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Name:
    name: str
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Unary:
    op: str  # "neg" or "pos"
    operand: Node
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Binary:
    op: str  # + - * / ^
    left: Node
    right: Node
    column: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple[Node, ...]
    column: int = field(default=0, compare=False)


Node = Number | Name | Unary | Binary | Call


@dataclass(frozen=True)
class _Token:
    kind: str  # number, name, op, end
    text: str
    column: int


def tokenize(text: str) -> list[_Token]:
    """The tokens of ``text``, ending with an ``end`` token; ExpressionError on any other character."""
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is longer than {MAX_LENGTH} characters", 1, text[:10])
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            char = text[pos]
            raise ExpressionError(f"unexpected character {char!r} at column {pos + 1}", pos + 1, char)
        kind = match.lastgroup or ""
        if kind != "space":
            value = match.group()
            tokens.append(_Token(kind, _ALIASES.get(value, value), pos + 1))
        pos = match.end()
    tokens.append(_Token("end", "", len(text) + 1))
    return tokens


class _Parser:
    """Recursive descent over the token list; every rule of the module docstring is one method."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0
        self.depth = 0

    @property
    def current(self) -> _Token:
        return self.tokens[self.pos]

    def advance(self) -> _Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def fail(self, token: _Token, expected: str) -> ExpressionError:
        if token.kind == "end":
            return ExpressionError(f"expression ends where {expected} was expected", token.column, "")
        previous = self.tokens[self.pos - 1] if self.pos > 0 else None
        if previous is not None and previous.kind in ("number", "name") and token.kind in ("number", "name", "op") \
                and token.text not in ("+", "-", "*", "/", "^", ")", ","):
            return ExpressionError(f"missing operator between {previous.text!r} and {token.text!r} at column "
                                   f"{token.column} (write * to multiply)", token.column, token.text)
        return ExpressionError(f"unexpected {token.text!r} at column {token.column}; {expected} was expected",
                               token.column, token.text)

    def nest(self, token: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"expression nests deeper than {MAX_DEPTH} levels at column {token.column}",
                                  token.column, token.text)

    def parse(self) -> Node:
        node = self.expression()
        if self.current.kind != "end":
            raise self.fail(self.current, "an operator or the end")
        return node

    def expression(self) -> Node:
        node = self.term()
        while self.current.text in ("+", "-") and self.current.kind == "op":
            op = self.advance()
            node = Binary(op.text, node, self.term(), op.column)
        return node

    def term(self) -> Node:
        node = self.factor()
        while self.current.text in ("*", "/") and self.current.kind == "op":
            op = self.advance()
            node = Binary(op.text, node, self.factor(), op.column)
        return node

    def factor(self) -> Node:
        token = self.current
        if token.kind == "op" and token.text in ("+", "-"):
            self.advance()
            self.nest(token)
            operand = self.factor()
            self.depth -= 1
            return Unary("neg" if token.text == "-" else "pos", operand, token.column)
        return self.power()

    def power(self) -> Node:
        base = self.atom()
        if self.current.kind == "op" and self.current.text == "^":
            op = self.advance()
            self.nest(op)
            exponent = self.factor()
            self.depth -= 1
            return Binary("^", base, exponent, op.column)
        return base

    def atom(self) -> Node:
        token = self.current
        if token.kind == "number":
            self.advance()
            value = float(token.text)
            if not math.isfinite(value):
                raise ExpressionError(f"number {token.text} at column {token.column} is too large", token.column,
                                      token.text)
            return Number(value, token.column)
        if token.kind == "name":
            self.advance()
            if self.current.kind == "op" and self.current.text == "(":
                return self.call(token)
            if token.text in FUNCTIONS:
                raise ExpressionError(f"{token.text} at column {token.column} is a function: write "
                                      f"{token.text}(...)", token.column, token.text)
            return Name(token.text, token.column)
        if token.kind == "op" and token.text == "(":
            self.advance()
            self.nest(token)
            node = self.expression()
            self.depth -= 1
            self.expect(")", token)
            return node
        raise self.fail(token, "a number, a name or '('")

    def call(self, name: _Token) -> Node:
        if name.text not in FUNCTIONS:
            known = ", ".join(sorted(FUNCTIONS))
            raise ExpressionError(f"unknown function {name.text!r} at column {name.column}; the functions are "
                                  f"{known}", name.column, name.text)
        opening = self.advance()
        self.nest(opening)
        args = [self.expression()]
        while self.current.kind == "op" and self.current.text == ",":
            self.advance()
            args.append(self.expression())
        self.depth -= 1
        self.expect(")", opening)
        if name.text in ELEMENTWISE and len(args) != 1:
            raise ExpressionError(f"{name.text}() at column {name.column} takes one argument, got {len(args)}",
                                  name.column, name.text)
        if name.text in ("sum", "mean") and len(args) != 1:
            raise ExpressionError(f"{name.text}() at column {name.column} aggregates one value over the processes; "
                                  f"got {len(args)} arguments", name.column, name.text)
        return Call(name.text, tuple(args), name.column)

    def expect(self, text: str, opening: _Token) -> None:
        if self.current.kind == "op" and self.current.text == text:
            self.advance()
            return
        if self.current.kind == "end":
            raise ExpressionError(f"'{opening.text}' at column {opening.column} is never closed", opening.column,
                                  opening.text)
        raise self.fail(self.current, f"'{text}'")


def parse(text: str) -> Node:
    """The expression tree of ``text``; ExpressionError (with column and token) if it is not in the grammar."""
    if not isinstance(text, str):
        raise ExpressionError(f"expected an expression in quotes, got {text!r}", 1, str(text))
    if not text.strip():
        raise ExpressionError("the expression is empty", 1, "")
    return _Parser(text).parse()


def names(node: Node) -> set[str]:
    """Every parameter or section name the expression refers to."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Name):
            found.add(item.name)
        elif isinstance(item, Unary):
            stack.append(item.operand)
        elif isinstance(item, Binary):
            stack.extend((item.left, item.right))
        elif isinstance(item, Call):
            stack.extend(item.args)
    return found


def first_use(node: Node, name: str) -> Name | None:
    """The first (leftmost) occurrence of ``name``, for error messages that point at it."""
    found = [n for n in _walk(node) if isinstance(n, Name) and n.name == name]
    return min(found, key=lambda n: n.column) if found else None


def _walk(node: Node) -> list[Node]:
    out = [node]
    if isinstance(node, Unary):
        out += _walk(node.operand)
    elif isinstance(node, Binary):
        out += _walk(node.left) + _walk(node.right)
    elif isinstance(node, Call):
        for arg in node.args:
            out += _walk(arg)
    return out


def is_reduction(node: Node) -> bool:
    """Whether ``node`` aggregates over the processes of a run (``sum(x)``, ``max(x)``, ...)."""
    return isinstance(node, Call) and node.function in REDUCTIONS and len(node.args) == 1


def per_process(node: Node, varying: Callable[[str], bool]) -> bool:
    """Whether the value of ``node`` differs between the processes of a run.

    ``varying(name)`` says it of each name; an aggregation over processes is one value per run.
    """
    if isinstance(node, Number):
        return False
    if isinstance(node, Name):
        return varying(node.name)
    if is_reduction(node):
        return False
    if isinstance(node, Unary):
        return per_process(node.operand, varying)
    if isinstance(node, Binary):
        return per_process(node.left, varying) or per_process(node.right, varying)
    assert isinstance(node, Call)
    return any(per_process(arg, varying) for arg in node.args)


def to_text(node: Node) -> str:
    """Canonical text of ``node`` with only the parentheses it needs; ``parse(to_text(n)) == n``."""
    if isinstance(node, Number):
        value = node.value
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Call):
        return f"{node.function}({', '.join(to_text(a) for a in node.args)})"
    if isinstance(node, Unary):
        sign = "-" if node.op == "neg" else "+"
        inner = to_text(node.operand)
        if _precedence(node.operand) < _PRECEDENCE[node.op]:
            inner = f"({inner})"
        return sign + inner
    assert isinstance(node, Binary)
    mine = _PRECEDENCE[node.op]
    left, right = to_text(node.left), to_text(node.right)
    if node.op == "^":
        # right-associative; a signed base needs parentheses because -x^2 is -(x^2)
        if _precedence(node.left) <= mine:
            left = f"({left})"
        if _precedence(node.right) < _PRECEDENCE["neg"]:
            right = f"({right})"
        return f"{left}^{right}"
    if _precedence(node.left) < mine:
        left = f"({left})"
    if _precedence(node.right) <= mine and not isinstance(node.right, Unary):
        right = f"({right})"
    spaced = f" {node.op} " if node.op in ("+", "-") else node.op
    return f"{left}{spaced}{right}"


def _precedence(node: Node) -> int:
    if isinstance(node, Binary):
        return _PRECEDENCE[node.op]
    if isinstance(node, Unary):
        return _PRECEDENCE[node.op]
    return 99


@dataclass
class Env:
    """Values to evaluate expressions over: arrays runs × processes, or runs × 1 for one value per run.

    ``mask`` (runs × processes) marks the processes that exist (runs have different numbers of
    processes); aggregations ignore the others.
    """

    values: Mapping[str, np.ndarray | float]
    mask: np.ndarray


Compiled = Callable[[Env], np.ndarray]


def compile_expression(node: Node) -> Compiled:
    """A function of an :class:`Env` evaluating ``node`` with numpy; names must be in the env's values.

    Results are float arrays (or scalars) that broadcast against runs × processes; invalid
    operations (division by zero, log of a negative) give inf or NaN rather than raising, so the
    caller can name the run and process where a value is not finite.
    """
    if isinstance(node, Number):
        value = float(node.value)
        return lambda env: np.float64(value)
    if isinstance(node, Name):
        key = node.name
        return lambda env: np.asarray(env.values[key], dtype=float)
    if isinstance(node, Unary):
        inner = compile_expression(node.operand)
        if node.op == "pos":
            return inner
        return lambda env: np.negative(inner(env))
    if isinstance(node, Binary):
        left, right = compile_expression(node.left), compile_expression(node.right)
        ufunc = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "^": np.power}[node.op]

        def binary(env: Env) -> np.ndarray:
            with np.errstate(all="ignore"):
                return ufunc(left(env), right(env))

        return binary
    assert isinstance(node, Call)
    args = [compile_expression(a) for a in node.args]
    if node.function in ELEMENTWISE:
        ufunc = ELEMENTWISE[node.function]
        only = args[0]

        def elementwise(env: Env) -> np.ndarray:
            with np.errstate(all="ignore"):
                return ufunc(only(env))

        return elementwise
    if len(args) == 1:
        return _reduction(node.function, args[0])
    combine = np.maximum if node.function == "max" else np.minimum

    def extreme(env: Env) -> np.ndarray:
        result = args[0](env)
        for arg in args[1:]:
            result = combine(result, arg(env))
        return result

    return extreme


def _reduction(function: str, inner: Compiled) -> Compiled:
    """Aggregate over the existing processes of each run; the result is runs × 1."""

    def reduce(env: Env) -> np.ndarray:
        values = np.broadcast_to(inner(env), env.mask.shape)
        mask = env.mask
        with np.errstate(all="ignore"):
            if function == "max":
                out = np.where(mask, values, -np.inf).max(axis=1, keepdims=True)
            elif function == "min":
                out = np.where(mask, values, np.inf).min(axis=1, keepdims=True)
            else:
                out = np.where(mask, values, 0.0).sum(axis=1, keepdims=True)
                if function == "mean":
                    out = out / np.maximum(mask.sum(axis=1, keepdims=True), 1)
        return out

    return reduce


@dataclass(frozen=True)
class Expression:
    """An expression as written, its tree, and its compiled numpy form."""

    text: str
    node: Node
    evaluate: Compiled = field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: str) -> Expression:
        node = parse(text)
        return cls(text, node, compile_expression(node))

    @property
    def names(self) -> set[str]:
        return names(self.node)

    def __str__(self) -> str:
        return to_text(self.node)
