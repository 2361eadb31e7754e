"""PMNF functions: exact exponents, vectorized evaluation, lead-order terms, text forms, JSON."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pmkit.pmnf import Factor, Function, Term, as_fraction, simple_function


def test_exponents_stay_exact_fractions():
    f = simple_function("x", 1.0, 2.0, "2/3", 1)
    (term,) = f.terms
    assert term.factors[0].exponent == Fraction(2, 3)
    assert isinstance(term.factors[0].exponent, Fraction)
    assert f.to_json()["terms"][0]["factors"][0]["exponent"] == "2/3"


def test_inexact_float_exponent_is_refused():
    assert as_fraction(0.25) == Fraction(1, 4)
    with pytest.raises(ValueError, match="exact fraction"):
        as_fraction(0.6667)


def test_evaluate_vectorized_matches_formula():
    f = Function(("p",), 3.1, (Term(0.02, (Factor("p", 1, 1),)),))
    p = np.array([2.0, 8.0, 1024.0])
    np.testing.assert_allclose(f.evaluate(p), 3.1 + 0.02 * p * np.log2(p))
    assert f.evaluate(8.0) == pytest.approx(3.1 + 0.02 * 8 * 3)


def test_evaluate_two_parameters_by_array_and_mapping():
    f = Function(("p", "n"), 1.0, (Term(2.0, (Factor("p", 1), Factor("n", Fraction(1, 2)))),
                                   Term(3.0, (Factor("n", 0, 1),))))
    pts = np.array([[4.0, 16.0], [8.0, 64.0]])
    expected = 1 + 2 * pts[:, 0] * np.sqrt(pts[:, 1]) + 3 * np.log2(pts[:, 1])
    np.testing.assert_allclose(f.evaluate(pts), expected)
    np.testing.assert_allclose(f.evaluate({"p": pts[:, 0], "n": pts[:, 1]}), expected)
    assert f.evaluate([4.0, 16.0]) == pytest.approx(expected[0])


def test_wrong_point_width_is_an_error():
    f = simple_function("p", 1, 1, 1, 0)
    with pytest.raises(ValueError, match="coordinates"):
        f.evaluate(np.ones((3, 2)))


def test_lead_order_term_depends_on_point():
    small_log = Term(100.0, (Factor("p", 0, 1),))
    linear = Term(1.0, (Factor("p", 1),))
    f = Function(("p",), 0.0, (small_log, linear))
    assert f.lead_order_term(4.0) is small_log
    assert f.lead_order_term(10_000.0) is linear
    assert simple_function("p", 5, 0, 0, 0).lead_order_term(4.0) is None


def test_text_forms():
    f = Function(("x",), 1.5, (Term(-0.25, (Factor("x", Fraction(2, 3), 2),)),))
    assert f.extrap_text() == "1.5 - 0.25 * x^(2/3) * log2(x)^(2)"
    assert f.pretty_text() == "1.5 - 0.25·x^(2/3)·log2(x)^2"
    g = Function(("p",), 3.1, (Term(0.02, (Factor("p", 1, 1),)),))
    assert g.pretty_text() == "3.1 + 0.02·p·log2(p)"
    assert str(simple_function("p", 4.0, 0, 0, 0)) == "4"


def test_trivial_factors_are_dropped_and_duplicates_rejected():
    t = Term(2.0, (Factor("p", 0, 0), Factor("n", 1, 0)))
    assert [f.parameter for f in t.factors] == ["n"]
    with pytest.raises(ValueError, match="more than one factor"):
        Term(1.0, (Factor("p", 1), Factor("p", 0, 1)))
    with pytest.raises(ValueError, match="not one of"):
        Function(("p",), 0, (Term(1.0, (Factor("n", 1),)),))


fractions = st.fractions(min_value=-6, max_value=6, max_denominator=12)


@given(c0=st.floats(-1e6, 1e6), c1=st.floats(-1e6, 1e6), e=fractions, log_e=fractions)
def test_json_round_trip(c0, c1, e, log_e):
    f = Function(("p", "n"), c0, (Term(c1, (Factor("p", e, log_e), Factor("n", 1, 0))),))
    again = Function.from_json(json.loads(json.dumps(f.to_json())), ("p", "n"))
    assert again == f
