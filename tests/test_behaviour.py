"""How laws behave along a parameter: falling, flattening, turning points, negative values; derivatives."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from pmkit.behaviour import Behaviour, describe, shape_text
from pmkit.pmnf import Factor, Function, Term


def law(constant: float, *terms: tuple[float, F | int, F | int], parameter: str = "p") -> Function:
    return Function((parameter,), constant, tuple(Term(c, (Factor(parameter, a, b),)) for c, a, b in terms))


def test_derivative_matches_finite_differences() -> None:
    f = Function(("p", "n"), 2.0, (Term(3.0, (Factor("p", 1), Factor("n", 1))), Term(5.0, (Factor("p", -1),)),
                                   Term(0.5, (Factor("p", F(3, 2), 2),)), Term(7.0, (Factor("n", 2),))))
    d = f.derivative("p")
    points = np.array([[3.0, 10.0], [17.0, 2.0], [1000.0, 5.0]])
    h = 1e-6 * points[:, 0]
    shifted = points.copy()
    shifted[:, 0] += h
    back = points.copy()
    back[:, 0] -= h
    np.testing.assert_allclose(d.evaluate(points), (f.evaluate(shifted) - f.evaluate(back)) / (2 * h), rtol=1e-6)
    assert all(t.factors for t in d.terms)  # constants and terms without p vanish


def test_along_fixes_the_other_parameters() -> None:
    f = Function(("p", "n"), 2.0, (Term(3.0, (Factor("p", 1), Factor("n", 1))), Term(7.0, (Factor("n", 2),))))
    g = f.along("p", {"n": 10.0})
    assert g.parameters == ("p",)
    assert g.evaluate(4.0) == pytest.approx(f.evaluate([4.0, 10.0]))
    assert g.constant == pytest.approx(702.0)
    with pytest.raises(ValueError, match="needs values"):
        f.along("p")


def test_falling_law_flattens_at_its_constant() -> None:
    b = describe(law(2.0, (100.0, -1, 0)))
    assert b.kind == "falls" and b.falling == (F(-1), F(0)) and b.growing is None
    assert b.limit == pytest.approx(2.0) and b.turning_point is None and b.negative_from is None
    assert b.phase_at(2.0) == "falling" and b.phase_at(1e5) == "flat"
    assert b.local_exponent(1.0) == pytest.approx(-100 / 102)
    assert b.text() == "falls as 1/p"
    assert b.text(at=1e5, value_text=lambda v: f"{v:.1f} s") == "flattens at 2.0 s"
    assert sum(b.parts(4.0)) == pytest.approx(b.value(4.0))


def test_falling_then_growing_law_has_a_turning_point() -> None:
    b = describe(law(0.1, (100.0, -1, 0), (0.05, 1, 0)))
    assert b.kind == "falls then grows"
    assert b.turning_point == pytest.approx(np.sqrt(100 / 0.05), rel=1e-9)
    assert b.minimum == pytest.approx(0.1 + 2 * np.sqrt(100 * 0.05), rel=1e-9)
    assert b.growing == (F(1), F(0)) and b.limit is None
    assert b.text() == "falls as 1/p, grows again beyond p ≈ 45"
    c = describe(law(0.0, (100.0, -1, 0), (3.0, 0, 1)))
    assert c.turning_point == pytest.approx(100 * np.log(2) / 3, rel=1e-9)  # a/p² = b/(p ln 2)
    assert c.phase_at(1e4) == "growing"


def test_negative_predictions_are_found() -> None:
    # what the growing-only search made of 2 + 100/p: it turns negative at p ≈ 34
    b = describe(law(73.66, (-14.47, 0, 1)))
    assert b.kind == "falls" and b.falling is None
    assert b.negative_from == pytest.approx(2 ** (73.66 / 14.47), rel=1e-9)
    assert b.negative_at(64.0) and not b.negative_at(16.0) and b.phase_at(64.0) == "negative"
    assert describe(law(-0.5, (100.0, -1, 0))).negative_from == pytest.approx(200.0)
    assert describe(law(-3.0, (2.0, 1, 0))).negative_from == 1.0  # already negative at the start
    assert describe(law(3.0, (2.0, 2, 0))).negative_from is None


def test_constant_growing_and_peaking_laws() -> None:
    assert describe(Function(("p",), 4.0)).kind == "constant"
    assert describe(Function(("p",), -4.0)).negative_from == 1.0
    g = describe(law(3.0, (1.0, 2, 0)))
    assert g.kind == "grows" and g.growing == (F(2), F(0)) and g.text() == "grows as p^2"
    peak = describe(law(1.0, (1.0, -1, 1)), start=1.0)  # log2(p)/p rises until p = e, then falls
    assert peak.kind == "grows then falls" and peak.peak == pytest.approx(np.e, rel=1e-9)


def test_multi_parameter_functions_are_read_along_one_parameter() -> None:
    f = Function(("p", "n"), 1.0, (Term(50.0, (Factor("p", -1), Factor("n", 1))), Term(0.01, (Factor("p", 1),))))
    b = describe(f, "p", start=2.0, fixed={"n": 8.0})
    assert isinstance(b, Behaviour) and b.kind == "falls then grows"
    assert b.turning_point == pytest.approx(np.sqrt(400 / 0.01), rel=1e-9)
    with pytest.raises(ValueError, match="name the parameter"):
        describe(f)
    with pytest.raises(ValueError, match="positive"):
        describe(law(1.0, (1.0, -1, 0)), start=0.0)
    with pytest.raises(ValueError, match="horizon"):
        describe(law(1.0, (1.0, -1, 0)), start=8.0, horizon=4.0)


def test_shape_text() -> None:
    assert shape_text((F(-1), F(0)), "p") == "1/p"
    assert shape_text((F(-1, 2), F(0)), "p") == "1/p^(1/2)"
    assert shape_text((F(-2), F(0)), "p") == "1/p^2"
    assert shape_text((F(1), F(1)), "p") == "p·log2(p)"
    assert shape_text((F(0), F(2)), "n") == "log2(n)^2"
    assert shape_text(None, "p") == "1"


def test_order_sorts_from_falling_fastest_to_growing_fastest() -> None:
    laws = [law(0.0, (1.0, -2, 0)), law(0.0, (1.0, -1, 0)), law(2.0, (100.0, -1, 0)), law(1.0, (1.0, 0, 1)),
            law(0.1, (100.0, -1, 0), (0.05, 1, 0)), law(1.0, (1.0, 2, 0))]
    orders = [describe(f).order for f in laws]
    assert orders == [(F(-2), F(0)), (F(-1), F(0)), (F(0), F(0)), (F(0), F(1)), (F(1), F(0)), (F(2), F(0))]
    assert orders == sorted(orders)


def test_one_term_laws_in_closed_form_match_the_function() -> None:
    """``c0 + c·p^α`` and ``c0 + c·log2(p)^β`` are described in closed form: the kind agrees with the law's
    values on a fine grid, and ``negative_from`` is its root (the first point below zero)."""
    rng = np.random.default_rng(7)
    shapes = [(F(-2), 0), (F(-1), 0), (F(-1, 3), 0), (F(1, 2), 0), (F(2), 0), (F(0), F(1)), (F(0), F(2)),
              (F(0), F(1, 2))]
    grid = 2.0 ** np.linspace(0, 40, 4001)
    for _ in range(300):
        alpha, beta = shapes[rng.integers(len(shapes))]
        f = law(float(rng.normal() * 10), (float(rng.normal() * 10), alpha, beta))
        b = describe(f, start=1.0)
        values = np.asarray(f.evaluate(grid), dtype=float)
        steps = np.diff(values)
        assert b.kind == ("grows" if steps[np.abs(steps) > 0][0] > 0 else "falls"), f
        assert b.turning_point is None and b.peak is None
        below = np.flatnonzero(values < 0)
        if values[0] < 0:
            assert b.negative_from == 1.0, f
        elif below.size:
            assert grid[below[0] - 1] <= b.negative_from <= grid[below[0]], f
            assert f.evaluate(b.negative_from) == pytest.approx(0.0, abs=1e-9 * max(1.0, abs(f.constant)))
        else:
            assert b.negative_from is None, f


def test_a_slope_of_zero_at_the_start_does_not_decide_the_direction() -> None:
    # d/dp log2(p)^2 is 0 at p = 1: the law still falls from there on
    assert describe(law(3.0, (-0.5, 0, 2)), start=1.0).kind == "falls"
    assert describe(law(3.0, (-0.5, 0, 2), (-0.1, 0, 3)), start=1.0).kind == "falls"  # the grid search


def test_a_negative_log_power_from_p_1_is_described_not_raised():
    """log2(p)^-1 is infinite at p = 1: the closed form (which would divide by zero there) gives way to
    the grid, which says the law falls towards its constant."""
    law = Function(("p",), 2.0, (Term(3.0, (Factor("p", F(0), F(-1)),)),))
    found = describe(law, "p", start=1.0)
    assert found.kind == "falls" and found.limit == 2.0 and found.negative_from is None
    assert describe(law, "p", start=2.0).kind == "falls"
