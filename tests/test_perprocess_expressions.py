"""The expression language of per-process model files: grammar, errors, numpy semantics, fuzzing."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmkit.perprocess.expressions import (
    MAX_DEPTH,
    Binary,
    Call,
    Env,
    Expression,
    ExpressionError,
    Name,
    Number,
    Unary,
    parse,
    per_process,
    to_text,
)

MASK = np.array([[True, True, True], [True, True, False]])
VALUES = {"a": np.array([[1.0, 2.0, 3.0], [4.0, 5.0, np.nan]]), "b": np.array([[2.0], [3.0]]), "c": 0.5}


def value(text: str, values=VALUES, mask=MASK) -> np.ndarray:
    return np.asarray(Expression.parse(text).evaluate(Env(values, mask)))


@pytest.mark.parametrize(("text", "expected"), [
    ("1 + 2 * 3", 7.0), ("(1 + 2) * 3", 9.0), ("2 ^ 3 ^ 2", 512.0), ("-2^2", -4.0), ("(-2)^2", 4.0),
    ("2^-1", 0.5), ("8 / 4 / 2", 1.0), ("1 - 2 - 3", -4.0), ("2 ** 3", 8.0), ("6 ÷ 3 × 2", 4.0), ("3 − 1", 2.0),
    ("2·3", 6.0), ("--3", 3.0), ("+3", 3.0), ("log2(8)", 3.0), ("sqrt(16)", 4.0), ("max(2, 7, 3)", 7.0),
    ("min(2, 7)", 2.0), ("1.5e3", 1500.0), (".5", 0.5), ("1e-3 * 1000", 1.0),
])
def test_arithmetic_follows_mathematics(text: str, expected: float) -> None:
    assert float(value(text)) == pytest.approx(expected)


def test_names_and_aggregations_over_the_processes_of_each_run() -> None:
    assert value("a * b").tolist()[0] == [2.0, 4.0, 6.0]
    assert value("max(a)").ravel().tolist() == [3.0, 5.0]      # the padded NaN of run 2 is not a process
    assert value("sum(a)").ravel().tolist() == [6.0, 9.0]
    assert value("mean(a)").ravel().tolist() == [2.0, 4.5]
    assert value("min(a)").ravel().tolist() == [1.0, 4.0]
    assert value("sum(1)").ravel().tolist() == [3.0, 2.0]      # a constant summed over the processes
    assert value("a / max(a)").tolist()[1][:2] == pytest.approx([0.8, 1.0])
    assert value("max(a, b)").tolist()[0] == [2.0, 2.0, 3.0]   # two arguments: element-wise


def test_invalid_operations_give_non_finite_values_not_exceptions() -> None:
    assert math.isinf(float(value("1 / 0")))
    assert math.isnan(float(value("sqrt(-1)")))
    assert math.isnan(float(value("(-8)^(1/3)")))


@pytest.mark.parametrize(("text", "column", "token", "words"), [
    ("nx * ny)", 8, ")", "unexpected ')'"),
    ("nx * (ny + 1", 6, "(", "never closed"),
    ("2 x", 3, "x", "missing operator"),
    ("nx $ 2", 4, "$", "unexpected character '$'"),
    ("exp(x)", 1, "exp", "unknown function 'exp'"),
    ("log2(a, b)", 1, "log2", "takes one argument"),
    ("sum(a, b)", 1, "sum", "aggregates one value"),
    ("max + 1", 1, "max", "is a function"),
    ("1 +", 4, "", "ends where"),
    ("", 1, "", "empty"),
    ("()", 2, ")", "unexpected ')'"),
    ("1e999", 1, "1e999", "too large"),
])
def test_errors_name_the_column_and_token(text: str, column: int, token: str, words: str) -> None:
    with pytest.raises(ExpressionError, match=re.escape(words)) as caught:
        parse(text)
    assert (caught.value.column, caught.value.token) == (column, token)


def test_nesting_and_length_are_limited() -> None:
    parse("(" * (MAX_DEPTH - 1) + "1" + ")" * (MAX_DEPTH - 1))
    with pytest.raises(ExpressionError, match="deeper than"):
        parse("(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1))
    with pytest.raises(ExpressionError, match="deeper than"):
        parse("-" * (MAX_DEPTH + 5) + "1")
    with pytest.raises(ExpressionError, match="longer than"):
        parse("1+" * 6000 + "1")


def test_nothing_is_evaluated_as_python() -> None:
    for text in ("__import__('os')", "a.b", "x[0]", "lambda: 1", "'text'", "a; b", "a = 1", "a if b else c"):
        with pytest.raises(ExpressionError):
            parse(text)


def test_per_process_analysis() -> None:
    varying = {"cells": True, "p": False}.__getitem__
    assert per_process(parse("cells / p"), varying)
    assert not per_process(parse("max(cells) / p"), varying)
    assert per_process(parse("max(cells, p)"), varying)  # element-wise: still one per process
    assert not per_process(parse("sum(cells * 2) + log2(p)"), varying)


# --- property tests: random trees print, parse back and evaluate like a numpy reference --------------

NAMES = ("a", "b", "c")
numbers = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
leaves = st.one_of(numbers.map(Number), st.sampled_from(NAMES).map(Name))


def _extend(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.builds(Unary, st.sampled_from(("neg", "pos")), children),
        st.builds(Binary, st.sampled_from(("+", "-", "*", "/", "^")), children, children),
        st.builds(lambda f, x: Call(f, (x,)), st.sampled_from(("log2", "sqrt", "sum", "mean", "max", "min")), children),
        st.builds(lambda f, xs: Call(f, tuple(xs)), st.sampled_from(("max", "min")),
                  st.lists(children, min_size=2, max_size=3)),
    )


trees = st.recursive(leaves, _extend, max_leaves=12)


def reference(node, values, mask):
    """A direct numpy evaluation of the tree, written separately from the compiler."""
    with np.errstate(all="ignore"):
        if isinstance(node, Number):
            return np.float64(node.value)
        if isinstance(node, Name):
            return np.asarray(values[node.name], dtype=float)
        if isinstance(node, Unary):
            inner = reference(node.operand, values, mask)
            return -inner if node.op == "neg" else inner
        if isinstance(node, Binary):
            left, right = reference(node.left, values, mask), reference(node.right, values, mask)
            return {"+": left + right, "-": left - right, "*": left * right, "/": left / right,
                    "^": np.power(left, right)}[node.op]
        args = [reference(a, values, mask) for a in node.args]
        if node.function == "log2":
            return np.log2(args[0])
        if node.function == "sqrt":
            return np.sqrt(args[0])
        if len(args) > 1:
            return np.maximum.reduce(np.broadcast_arrays(*args)) if node.function == "max" else \
                np.minimum.reduce(np.broadcast_arrays(*args))
        rows = [np.broadcast_to(args[0], mask.shape)[r][mask[r]] for r in range(mask.shape[0])]
        reduce = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[node.function]
        return np.array([[reduce(row)] for row in rows])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_printed_trees_parse_back_to_the_same_tree(tree) -> None:
    text = to_text(tree)
    assert parse(text) == tree, text
    assert to_text(parse(text)) == text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees, st.lists(st.floats(min_value=-1e3, max_value=1e3, allow_nan=False), min_size=5, max_size=5))
def test_compiled_expressions_agree_with_a_numpy_reference(tree, numbers_) -> None:
    values = {"a": np.array([numbers_[:3], [numbers_[3], numbers_[4], np.nan]]), "b": np.array([[numbers_[0]],
              [numbers_[1]]]), "c": numbers_[2]}
    got = np.broadcast_to(Expression.parse(to_text(tree)).evaluate(Env(values, MASK)), MASK.shape)
    want = np.broadcast_to(reference(tree, values, MASK), MASK.shape)
    np.testing.assert_allclose(got[MASK], want[MASK], rtol=1e-12, equal_nan=True)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from([*"ab1.2e+-*/^(), −×÷·_x$'[]{}", "max", "log2", "**", "sum"]),
                max_size=30).map("".join))
def test_any_text_parses_or_raises_expression_error(text: str) -> None:
    try:
        node = parse(text)
    except ExpressionError as exc:
        assert 1 <= exc.column <= len(text) + 1
        return
    assert parse(to_text(node)) == node
