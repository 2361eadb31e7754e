"""Multi-parameter modeling: additive and multiplicative recovery, constraints, sparse grids, degenerate input."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

import pmkit
from pmkit.constraints import Constraint
from pmkit.experiment import ExperimentBuilder
from pmkit.modelers.multiparam import COMBINATIONS, MultiParameterModeler, grid_line, term_combinations
from pmkit.modelers.refining import RefiningModeler
from pmkit.pmnf import Function
from pmkit.series import SeriesBatch

P_VALUES = [4.0, 8, 16, 32, 64]
Q_VALUES = [10.0, 20, 30, 40, 50]
GRID = np.array([(p, q) for p in P_VALUES for q in Q_VALUES])


def batch(points: np.ndarray, values: np.ndarray, constraints=None, parameters=("p", "q")) -> SeriesBatch:
    values = np.atleast_2d(np.asarray(values, dtype=float))
    n = len(values)
    return SeriesBatch(parameters, points, values, [f"cp{i}" for i in range(n)], ["time"] * n, constraints)


def structure(function: Function) -> set[tuple[tuple[str, F, F], ...]]:
    return {tuple((f.parameter, f.exponent, f.log_exponent) for f in t.factors) for t in function.terms}


def test_multiplicative_and_additive_recovery() -> None:
    p, q = GRID[:, 0], GRID[:, 1]
    values = np.array([
        3 + 2 * p * q,
        3 + 2 * p ** 1.5 + 0.5 * q * np.log2(q),
        1 + 0.25 * p ** 2 * np.log2(q),
        5 + 0.1 * p * q + 4 * p,
    ])
    models = RefiningModeler().model(batch(GRID, values))
    mult, add, mult_log, mixed = (m.function for m in models)
    assert structure(mult) == {(("p", F(1), F(0)), ("q", F(1), F(0)))}
    assert mult.terms[0].coefficient == pytest.approx(2) and mult.constant == pytest.approx(3)
    assert structure(add) == {(("p", F(3, 2), F(0)),), (("q", F(1), F(1)),)}
    assert structure(mult_log) == {(("p", F(2), F(0)), ("q", F(0), F(1)))}
    assert structure(mixed) == {(("p", F(1), F(0)),), (("p", F(1), F(0)), ("q", F(1), F(0)))}
    for m, v in zip(models, values, strict=True):
        np.testing.assert_allclose(m.function.evaluate(GRID), v, rtol=1e-8)
        assert m.modeler == "refining" and m.n_points == 25


def test_a_constant_at_rounding_level_is_stored_and_printed_as_zero() -> None:
    """Exact laws without a constant (Extra-P's extended1.jsonl is x² + y) keep no 1e-16 constant, as in the
    single-parameter search; a small but real constant (1e-6 of the smallest value) stays."""
    p, q = GRID[:, 0], GRID[:, 1]
    values = np.array([p ** 2 + q, 2 * p * q, 0.5 * p ** 1.5 + 3 * q * np.log2(q), 1e-6 * 14 + p ** 2 + q,
                       (4 + p ** 2 + q) * (1 + 1e-15 * np.cos(p + q))])
    functions = [m.function for m in RefiningModeler().model(batch(GRID, values))]
    for function in functions[:3]:
        assert function.constant == 0.0 and "e-" not in function.pretty_text(4), function.pretty_text(4)
    assert functions[0].pretty_text(4) == "1·p^2 + 1·q"
    assert functions[3].constant == pytest.approx(1.4e-5, rel=1e-3)
    assert functions[4].constant == pytest.approx(4)
    for function, v in zip(functions, values, strict=True):
        np.testing.assert_allclose(function.evaluate(GRID), v, rtol=1e-9)


def test_one_growing_parameter_and_constant() -> None:
    p = GRID[:, 0]
    models = RefiningModeler().model(batch(GRID, np.array([2 + 3 * p ** 2, 7 + 0 * p])))
    assert structure(models[0].function) == {(("p", F(2), F(0)),)}
    assert models[1].function.is_constant and models[1].function.constant == pytest.approx(7)


def test_three_parameters_with_sdk() -> None:
    b = ExperimentBuilder(["p", "n", "t"])
    for p in [2.0, 4, 8, 16, 32]:
        for n in [10.0, 20, 30, 40]:
            for t in [1.0, 2, 3, 4]:
                b.add_values("main", "time", [p, n, t], [1 + 0.5 * p * n + 2 * t])
    models = pmkit.model(b.build())
    f = models.get("main", "time").function
    assert structure(f) == {(("n", F(1), F(0)), ("p", F(1), F(0))), (("t", F(1), F(0)),)}
    assert f.evaluate([8.0, 20.0, 3.0]) == pytest.approx(1 + 0.5 * 160 + 6)


def test_multiplicative_noisy_recovery_rate() -> None:
    rng = np.random.default_rng(11)
    p, q = GRID[:, 0], GRID[:, 1]
    exact = 3 + 2 * p * q ** 2
    values = exact * (1 + rng.uniform(-0.02, 0.02, (100, 25)))
    models = RefiningModeler().model(batch(GRID, values))
    hits = [structure(m.function) == {(("p", F(1), F(0)), ("q", F(2), F(0)))} for m in models]
    products = [any(len(t.factors) == 2 for t in m.function.terms) for m in models]
    assert np.mean(hits) > 0.6
    assert np.mean(products) > 0.9


def test_constraints_are_honoured_and_noted() -> None:
    p, q = GRID[:, 0], GRID[:, 1]
    truth = 3 + 2 * p * q
    constraints = [
        Constraint(constant=True, source="taint", reason="no parameter reaches it"),
        Constraint(allowed=frozenset({"p"}), source="taint"),
        Constraint(groups=(frozenset({"p"}), frozenset({"q"})), source="taint"),
        None,
    ]
    models = RefiningModeler().model(batch(GRID, np.tile(truth, (4, 1)), constraints))
    const, only_p, separate, free = models
    assert const.function.is_constant and "constant by taint (no parameter reaches it)" in const.notes
    assert {f.parameter for t in only_p.function.terms for f in t.factors} == {"p"}
    assert any("parameters {p}" in n for n in only_p.notes)
    assert all(len(t.factors) == 1 for t in separate.function.terms)  # p and q may not multiply
    assert any("combined as p + q" in n for n in separate.notes)
    assert structure(free.function) == {(("p", F(1), F(0)), ("q", F(1), F(0)))}


def test_sparse_cross_grid() -> None:
    points = [(p, 10.0) for p in P_VALUES] + [(4.0, q) for q in Q_VALUES[1:]] + [(64.0, 50.0), (16.0, 30.0)]
    pts = np.array(points)
    values = 3 + 2 * pts[:, 0] * pts[:, 1]
    m = MultiParameterModeler().model(batch(pts, values))[0]
    assert structure(m.function) == {(("p", F(1), F(0)), ("q", F(1), F(0)))}
    assert m.modeler == "multiparam"


def test_grid_line_picks_longest_lines() -> None:
    points = np.array([(p, 10.0) for p in P_VALUES] + [(4.0, 20.0), (8.0, 20.0)])
    line = grid_line(points, 0)
    assert line is not None and line.values.tolist() == P_VALUES and line.lines == 1
    assert grid_line(points, 1) is None  # q has at most 2 values on any line
    full = grid_line(GRID, 1)
    assert full is not None and full.lines == 5
    np.testing.assert_allclose(full.average.sum(axis=1), 1.0)


def test_parameter_with_too_few_values_is_constant_with_a_note() -> None:
    pts = np.array([(p, q) for p in P_VALUES for q in (1.0, 2.0)])
    m = RefiningModeler().model(batch(pts, 1 + pts[:, 0] ** 2))[0]
    assert structure(m.function) == {(("p", F(2), F(0)),)}
    assert any("parameter q: fewer than 3 values" in n for n in m.notes)


def test_degenerate_multiparameter_series() -> None:
    nan = np.nan
    p, q = GRID[:, 0], GRID[:, 1]
    holed = 3 + 2 * p * q
    holed[[3, 11, 17]] = nan
    rows = np.array([np.full(25, nan), np.zeros(25), holed, -(1 + p + q)])
    empty, zeros, with_holes, negative = RefiningModeler().model(batch(GRID, rows))
    assert empty.function is None and any("no measured values" in n for n in empty.notes)
    assert zeros.function.is_constant and zeros.function.constant == 0
    assert structure(with_holes.function) == {(("p", F(1), F(0)), ("q", F(1), F(0)))}
    assert with_holes.n_points == 22
    assert negative.function.evaluate([8.0, 20.0]) == pytest.approx(-29)
    assert any("negative" in n for n in negative.notes)


def test_five_parameters_are_refused_with_a_note() -> None:
    pts = np.array([[a, 1.0, 1.0, 1.0, 1.0] for a in (1.0, 2.0, 3.0)])
    m = RefiningModeler().model(batch(pts, [1.0, 2.0, 3.0], parameters=("a", "b", "c", "d", "e")))[0]
    assert m.function is None and "at most 4" in m.notes[0]


def test_combination_lists_match_extrap() -> None:
    assert len(COMBINATIONS[2]) == 4 and len(COMBINATIONS[3]) == 23 and len(COMBINATIONS[4]) == 2
    for k, combos in COMBINATIONS.items():
        assert len(set(combos)) == len(combos)
        assert all(set().union(*c) == set(range(k)) for c in combos)


def test_constraints_given_as_plain_sets_and_lists():
    b = ExperimentBuilder(["x", "y"])
    for x in (1, 2, 3, 4, 5):
        for y in (1, 2, 3, 4, 5):
            b.add_values("main", "time", [x, y], [1 + x * y])
    exp = b.build()
    only_x = pmkit.model(exp, constraints={"main": Constraint(allowed={"x"})})[0].function
    assert {f.parameter for t in only_x.terms for f in t.factors} == {"x"}
    additive = pmkit.model(exp, constraints={"main": Constraint(groups=[{"x"}, {"y"}])})[0].function
    assert all(len(t.factors) == 1 for t in additive.terms) and len(additive.terms) == 2


# ---------------------------------------------------------------- strong scaling: falling laws on the lines

STRONG_GRID = np.array([(p, n) for p in 2.0 ** np.arange(0, 7) for n in (10.0, 20, 40, 80, 160)])


def test_falling_laws_combine_with_growing_ones() -> None:
    p, n = STRONG_GRID[:, 0], STRONG_GRID[:, 1]
    values = np.array([
        2 + 3 * n / p,                       # work n spread over p
        3 * n / p + 5 * np.log2(p),          # ... plus a log p collective (a two-term line in p)
        1 + 50 / p + 0.2 * n,                # additive
        n * (2 / p + 0.1 * np.log2(p)),      # both terms of the p line multiply n
        0.1 + 3 * n / p + 0.02 * n * p,      # falling and growing with n
    ])
    models = RefiningModeler().model(batch(STRONG_GRID, values, parameters=("p", "n")))
    expected = [
        {(("n", F(1), F(0)), ("p", F(-1), F(0)))},
        {(("n", F(1), F(0)), ("p", F(-1), F(0))), (("p", F(0), F(1)),)},
        {(("p", F(-1), F(0)),), (("n", F(1), F(0)),)},
        {(("n", F(1), F(0)), ("p", F(-1), F(0))), (("n", F(1), F(0)), ("p", F(0), F(1)))},
        {(("n", F(1), F(0)), ("p", F(-1), F(0))), (("n", F(1), F(0)), ("p", F(1), F(0)))},
    ]
    for m, v, want in zip(models, values, expected, strict=True):
        assert structure(m.function) == want, str(m.function)
        np.testing.assert_allclose(m.function.evaluate(STRONG_GRID), v, rtol=1e-8)


def test_falling_multiparameter_laws_under_noise_predict_well() -> None:
    rng = np.random.default_rng(5)
    p, n = STRONG_GRID[:, 0], STRONG_GRID[:, 1]
    a, c = 10 ** rng.uniform(-1, 1, (2, 200, 1))
    values = (0.3 * c + a * n / p) * (1 + rng.uniform(-0.02, 0.02, (200, len(p))))
    models = RefiningModeler().model(batch(STRONG_GRID, values, parameters=("p", "n")))
    predicted = np.array([m.function.evaluate([256.0, 160.0]) for m in models])
    truth = 0.3 * c[:, 0] + a[:, 0] * 160 / 256
    assert np.mean(np.abs(predicted / truth - 1) < 0.05) > 0.95


def test_term_combinations_expand_two_term_lines() -> None:
    one = tuple((i, F(1), F(0)) for i in range(3))
    assert term_combinations(one) == list(COMBINATIONS[3])
    two = ((0, F(-1), F(0)), (0, F(0), F(1)), (1, F(1), F(0)))  # a/p + b·log2 p along p, n along n
    combos = {frozenset(c) for c in term_combinations(two)}
    both = frozenset({frozenset({0, 2}), frozenset({1, 2})})       # n·(a/p + b·log2 p)
    split = frozenset({frozenset({0, 2}), frozenset({1})})         # a·n/p + b·log2 p
    additive = frozenset({frozenset({0}), frozenset({1}), frozenset({2})})
    assert {both, split, additive} <= combos
    assert all(not {0, 1} <= term for c in combos for term in c)  # terms of one parameter never multiply


def test_a_weaker_additive_parameter_is_kept() -> None:
    # issue 18: on lines averaged over x, 9.24·x swamps 1.85·log2(y); read on its lowest line y is kept
    values = np.array([4.0, 8, 16, 32, 64])
    grid = np.array([(a, b) for a in values for b in values])
    rng = np.random.default_rng(3)
    exact = 0.067 + 9.24 * grid[:, 0] + 1.85 * np.log2(grid[:, 1])
    noisy = exact * (1 + rng.uniform(-0.02, 0.02, (40, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y")))
    both = [{f.parameter for t in m.function.terms for f in t.factors} == {"x", "y"} for m in models]
    assert np.mean(both) > 0.8
    # a parameter without effect still leaves the model
    only_x = (2 + 3 * grid[:, 0]) * (1 + rng.uniform(-0.02, 0.02, (40, 25)))
    models = RefiningModeler().model(batch(grid, only_x, parameters=("x", "y")))
    assert np.mean([{f.parameter for t in m.function.terms for f in t.factors} == {"x"} for m in models]) > 0.9


def parameters_of(function: Function) -> set[str]:
    return {f.parameter for t in function.terms if t.coefficient != 0 for f in t.factors if not f.is_trivial}


def test_a_weak_additive_parameter_on_a_narrow_span_is_kept_as_a_sum() -> None:
    # issue 18 (weak scaling): within the weak variant parsimony took size³·log2 p (one term) over the true
    # size³ + log2 p, which lost to size³ alone; the sum is now a variant of its own (before: 62% both here)
    grid = np.array([(p, s) for p in (27.0, 64, 125, 216, 343) for s in (25.0, 30, 35, 40, 45)])
    rng = np.random.default_rng(5)
    exact = 1.0 + 0.8 * grid[:, 1] ** 3 / 45**3 + 0.15 * np.log2(grid[:, 0]) / np.log2(343)
    noisy = exact * (1 + rng.uniform(-0.05, 0.05, (60, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("p", "size")))
    assert np.mean([parameters_of(m.function) == {"p", "size"} for m in models]) >= 0.75
    only_size = (1.0 + 0.8 * grid[:, 1] ** 3 / 45**3) * (1 + rng.uniform(-0.05, 0.05, (60, 25)))
    models = RefiningModeler().model(batch(grid, only_size, parameters=("p", "size")))
    assert np.mean([parameters_of(m.function) == {"size"} for m in models]) >= 0.85


def test_a_weak_factor_is_kept_when_the_f_test_says_so() -> None:
    # issue 18: x³·y²·log2 z read as x³·y² when the factor had to cut the leave-one-out SMAPE 1.5-fold (before:
    # 68% of these); the F-test now judges it too
    values = np.array([4.0, 8, 16, 32, 64])
    grid = np.array([(a, b, c) for a in values for b in values for c in values])
    rng = np.random.default_rng(7)
    exact = 3.26 + 1.245e-10 * grid[:, 0] ** 3 * grid[:, 1] ** 2 * np.log2(grid[:, 2])
    noisy = exact * (1 + rng.uniform(-0.02, 0.02, (40, len(grid))))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y", "z")))
    assert np.mean([parameters_of(m.function) == {"x", "y", "z"} for m in models]) >= 0.75


def test_lowest_line() -> None:
    from pmkit.modelers.multiparam import lowest_line

    line = lowest_line(GRID, 1)
    assert line is not None and list(line.values) == Q_VALUES
    np.testing.assert_allclose(line.average @ GRID[:, 0], 4.0)
    assert lowest_line(GRID[:2], 1) is None


@pytest.mark.parametrize("value", [1.0, 1e-9])
def test_equal_values_on_three_parameter_lines_give_the_constant_model(value: float) -> None:
    """Extra-P's matrix_3p.jsonl: all values 1 on three lines through (1, 1, 1).  Terms that fit "better" by
    floating-point rounding (coefficients 0 and 1e-18) once replaced the constant its note announced."""
    line = [1.0, 2, 3, 4, 5]
    points = np.array([(v, 1, 1) for v in line] + [(1, v, 1) for v in line[1:]] + [(1, 1, v) for v in line[1:]])
    model = RefiningModeler().model(batch(points, np.full(len(points), value), parameters=("x", "y", "z")))[0]
    assert model.function.is_constant and model.function.constant == pytest.approx(value)
    assert "all values are equal: constant model" in model.notes


def test_a_product_on_a_narrow_span_is_read_with_common_shapes() -> None:
    # issue 18 (weak scaling): log2 p in size²·log2 p is read on lines averaged over size, where the constant
    # mixes with the term; its line law replaced by x, x², x³ or log2 x and judged on all the points reads the
    # lead term's exponents right in 90% of these (before: 69%)
    grid = np.array([(p, s) for p in (27.0, 64, 125, 216, 343) for s in (25.0, 30, 35, 40, 45)])
    rng = np.random.default_rng(5)
    exact = 0.3 + grid[:, 1] ** 2 * np.log2(grid[:, 0]) / (45**2 * np.log2(343))
    noisy = exact * (1 + rng.uniform(-0.05, 0.05, (80, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("p", "size")))
    target = {"p": 1372.0, "size": 180.0}

    def lead(function: Function) -> set[tuple[str, F, F]]:
        def size(term) -> float:
            return term.coefficient * np.prod([target[f.parameter] ** float(f.exponent)
                                               * np.log2(target[f.parameter]) ** float(f.log_exponent)
                                               for f in term.factors])
        return {(f.parameter, f.exponent, f.log_exponent) for f in max(function.terms, key=size).factors
                if not f.is_trivial}

    right = {("p", F(0), F(1)), ("size", F(2), F(0))}
    assert np.mean([lead(m.function) == right for m in models]) >= 0.8


def test_a_choice_among_more_than_32_outcomes() -> None:
    # np.choose stops at 32 arrays; four parameters' weak and common-shape variants can pass that
    from pmkit.modelers.multiparam import _chosen

    arrays = [np.full(5, float(k)) for k in range(40)]
    winner = np.array([0, 39, 7, 32, 12])
    assert _chosen(winner, arrays).tolist() == [0.0, 39.0, 7.0, 32.0, 12.0]


def halo_models(noise: float, count: int) -> tuple[list, float]:
    """Models of ``count`` noisy copies of the halo sum ``0.2 + size³ + p^(1/3)·size²`` (scaled) on the weak-scaling
    grid, and its true value at 4× both parameters."""
    grid = np.array([(p, s) for p in (27.0, 64, 125, 216, 343) for s in (25.0, 30, 35, 40, 45)])

    def law(points: np.ndarray) -> np.ndarray:
        return 0.2 + 0.6 * points[:, 1] ** 3 / 45**3 + 0.4 * np.cbrt(points[:, 0]) * points[:, 1] ** 2 / (7 * 45**2)

    noisy = law(grid) * (1 + np.random.default_rng(5).uniform(-noise, noise, (count, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("p", "size")))
    return list(models), law(np.array([[1372.0, 180.0]]))[0]


def within_5_percent(models: list, truth: float) -> float:
    return float(np.mean([abs(m.function.evaluate([1372.0, 180.0]) / truth - 1) <= 0.05 for m in models]))


def test_a_halo_sum_gets_a_factor_of_size_per_term() -> None:
    # issue 18 (weak scaling): size³ + p^(1/3)·size² had come back as c0 + a·size^β + b·p^γ·size^β (one factor
    # per parameter), whose prediction at 4× both parameters is off by the β it shares; the split factors of
    # size (size³ in the lone term, size² in the product) predict it within 5% in 97% of these and write its terms
    # in 93% (before: 38%, never its terms)
    models, truth = halo_models(0.01, 60)
    assert within_5_percent(models, truth) >= 0.8
    assert np.mean([structure(m.function) == {(("size", F(3), F(0)),), (("p", F(1, 3), F(0)), ("size", F(2), F(0)))}
                    for m in models]) >= 0.6


def test_a_halo_sum_reads_the_weaker_factor_among_its_lines_best() -> None:
    # p multiplies the weaker term of size³ + p^(1/3)·size², so its line law is the least sure: at ±3% the split
    # with p's line law alone predicted 20% of these within 5% at 4× both parameters, with its line's five best
    # growing shapes tried too 45% (SPLIT_RANKED)
    models, truth = halo_models(0.03, 100)
    assert within_5_percent(models, truth) >= 0.35


def test_a_sparse_grid_keeps_one_factor_per_parameter() -> None:
    # the split factors of a halo sum are offered on full grids only: on a sparse one (lines and three diagonal
    # points) the product is read on the diagonal alone, and x^(5/2)·y^(4/3) (±2%) had come back with two factors
    # of one parameter in 14 of these, off by more than 2× at (256, 256) in 42% (now 33%)
    values = np.array([4.0, 8, 16, 32, 64])
    full = np.array([(a, b) for a in values for b in values])
    grid = full[(full == 4).any(axis=1) | ((full[:, 0] == full[:, 1]) & np.isin(full[:, 0], values[1:4]))]
    rng = np.random.default_rng(3)

    def law(points: np.ndarray) -> np.ndarray:
        return 0.5 + points[:, 0] ** 2.5 * points[:, 1] ** (4 / 3) / 64 ** (2.5 + 4 / 3)

    noisy = law(grid) * (1 + rng.uniform(-0.02, 0.02, (100, len(grid))))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y")))

    def factors_of(function: Function, name: str) -> set[tuple[F, F]]:
        return {(f.exponent, f.log_exponent) for t in function.terms for f in t.factors
                if f.parameter == name and not f.is_trivial}

    assert len(grid) == 12
    assert all(len(factors_of(m.function, name)) <= 1 for m in models for name in ("x", "y"))
    truth = law(np.array([[256.0, 256.0]]))[0]
    assert np.mean([not 0.5 <= m.function.evaluate([256.0, 256.0]) / truth <= 2 for m in models]) <= 0.38


def test_a_mixed_line_law_is_read_again_as_a_power() -> None:
    # issue 18: on lines averaged over y, x^(4/3) fits like x·log2 x, which costs a level less than a third;
    # read again without that discount and judged on all the points, x^(4/3) in 95% of these and a mixed
    # x-law in 4% (before: 85% and 14%)
    values = np.array([4.0, 8, 16, 32, 64])
    grid = np.array([(a, b) for a in values for b in values])
    rng = np.random.default_rng(11)
    exact = 1.0 + 10 * grid[:, 1] ** 0.5 / 8 + 10 * grid[:, 0] ** (4 / 3) / 64 ** (4 / 3)
    noisy = exact * (1 + rng.uniform(-0.02, 0.02, (80, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y")))
    x_laws = [{(f.exponent, f.log_exponent) for t in m.function.terms for f in t.factors if f.parameter == "x"}
              for m in models]
    assert np.mean([law == {(F(4, 3), F(0))} for law in x_laws]) >= 0.9
    assert np.mean([any(a > 0 and b > 0 for a, b in law) for law in x_laws]) <= 0.08


def test_a_third_read_again_on_a_wide_line_needs_no_margin() -> None:
    # issue 18: a weak x^(8/3) beside y^(1/2) (±2%, x and y 4..64) fits like x³ on the lines; read again, x^(8/3)
    # fitted all the points a little better than x³ but not 1.5× better (THIRDS_MARGIN), the margin the 1.8× lines
    # of weak scaling need; on a line spanning a decade or more no margin: the law in 39% of these (before: 21%)
    values = np.array([4.0, 8, 16, 32, 64])
    grid = np.array([(a, b) for a in values for b in values])
    rng = np.random.default_rng(11)
    exact = 0.8 + grid[:, 0] ** (8 / 3) / 64 ** (8 / 3) + 1.5 * grid[:, 1] ** 0.5 / 8
    noisy = exact * (1 + rng.uniform(-0.02, 0.02, (100, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y")))
    laws = [{(f.parameter, f.exponent, f.log_exponent) for t in m.function.terms for f in t.factors} for m in models]
    assert np.mean([law == {("x", F(8, 3), F(0)), ("y", F(1, 2), F(0))} for law in laws]) >= 0.33


def test_a_true_log_factor_is_not_read_again_as_a_quarter_power_or_an_extra_term() -> None:
    # issue 18: read again without its log factor's discount, y^(1/2)·log2 y (in x²·log2 x·y^(1/2)·log2 y, ±2%)
    # came out as y^(3/4), or as a product with an opposite-signed copy of x's factor alone; the re-read power must
    # be a whole, a half or a third and may not add a term: the law in 91% of these (before: 76%)
    values = np.array([4.0, 8, 16, 32, 64])
    grid = np.array([(a, b) for a in values for b in values])
    rng = np.random.default_rng(11)
    exact = 2e-4 + 8.9e-9 * grid[:, 0] ** 2 * np.log2(grid[:, 0]) * grid[:, 1] ** 0.5 * np.log2(grid[:, 1])
    noisy = exact * (1 + rng.uniform(-0.02, 0.02, (100, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y")))
    laws = [{(f.parameter, f.exponent, f.log_exponent) for t in m.function.terms for f in t.factors} for m in models]
    assert np.mean([law == {("x", F(2), F(1)), ("y", F(1, 2), F(1))} for law in laws]) >= 0.85


def test_a_third_on_a_narrow_span_is_read_again_with_thirds_priced_as_halves() -> None:
    # issue 18: p^(1/3) in p^(1/3)·size² (±5%, p = 27..343) fits like p^(1/2) on the lines, and a third paid two
    # levels to a half's one; read again with thirds at one level and judged on all the points, p^(1/3) in 51%
    # of these (before: 26%)
    grid = np.array([(p, s) for p in (27.0, 64, 125, 216, 343) for s in (25.0, 30, 35, 40, 45)])
    rng = np.random.default_rng(5)
    exact = 0.3 + grid[:, 0] ** (1 / 3) * grid[:, 1] ** 2 / (343 ** (1 / 3) * 45**2)
    noisy = exact * (1 + rng.uniform(-0.05, 0.05, (80, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("p", "size")))
    p_laws = [{(f.exponent, f.log_exponent) for t in m.function.terms for f in t.factors if f.parameter == "p"}
              for m in models]
    assert np.mean([law == {(F(1, 3), F(0))} for law in p_laws]) >= 0.45


@pytest.mark.parametrize("rule", [True, False])
def test_a_collective_log2_p_keeps_its_whole_log_power(rule: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 18: c0 + c·log2 p (±1%, p = 27..343: log2 p spans 1.77×, so the power and c0 are confounded) was read on
    # its line as log2(p)^(4/3), ^(5/4), ^(1/2) ... where Extra-P, whose log powers are whole, has log2 p; the whole
    # power stays unless an F-test on all the points rejects it: a fractional log power in none of these (without
    # the rule: 9%)
    import pmkit.modelers.multiparam as multiparam

    if not rule:
        monkeypatch.setattr(multiparam._Search, "whole_logs", lambda self, Y, singles, tss: singles)
    grid = np.array([(p, s) for p in (27.0, 64, 125, 216, 343) for s in (25.0, 30, 35, 40, 45)])
    exact = 8.6 + np.log2(grid[:, 0])
    noisy = exact * (1 + np.random.default_rng(4).uniform(-0.01, 0.01, (100, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("p", "size")))
    laws = [{(f.parameter, f.exponent, f.log_exponent) for t in m.function.terms for f in t.factors} for m in models]
    fractional = np.mean([any(log.denominator > 1 for _, _, log in law) for law in laws])
    if rule:
        assert fractional <= 0.02
        assert np.mean([law == {("p", F(0), F(1))} for law in laws]) >= 0.95
    else:
        assert fractional >= 0.06


def _additive_laws(exponents: tuple[float, float], weak_share: float, rule: bool,
                   monkeypatch: pytest.MonkeyPatch, sparse: bool = False, count: int = 100) -> list[set]:
    """The laws pmkit reads for ``count`` noisy copies (±2%, seed 3) of ``1 + 100·(x/64)^a + 100·share·(y/64)^b`` on
    the 5×5 grid 4..64 (or its sparse design: the lines through (4, 4) and the diagonal 8..32), with the re-reading
    on all points (:meth:`_Search.all_points`) or without it."""
    import pmkit.modelers.multiparam as multiparam

    if not rule:
        monkeypatch.setattr(multiparam, "ALL_POINTS_SIGNIFICANCE", 0.0)  # no statistic exceeds the upper 0% point
    values = np.array([4.0, 8, 16, 32, 64])
    grid = np.array([(a, b) for a in values for b in values])
    if sparse:
        grid = grid[(grid == 4).any(axis=1) | ((grid[:, 0] == grid[:, 1]) & np.isin(grid[:, 0], values[1:4]))]
    a, b = exponents
    exact = 1 + 100 * (grid[:, 0] / 64) ** a + 100 * weak_share * (grid[:, 1] / 64) ** b
    noisy = exact * (1 + np.random.default_rng(3).uniform(-0.02, 0.02, (count, len(grid))))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y")))
    return [{(f.parameter, f.exponent, f.log_exponent) for t in m.function.terms for f in t.factors} for m in models]


@pytest.mark.parametrize("rule", [True, False])
def test_an_additive_law_is_read_on_all_points_of_a_sparse_grid_too(rule: bool,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # x^(1/2) + y^(4/3) (y's term a tenth of x's) on the 12 points of the sparse design: the law in 17% of these
    # with the re-reading, 6% without (products are not re-read there: a sparse grid shows them on its diagonal)
    laws = _additive_laws((1 / 2, 4 / 3), 0.1, rule, monkeypatch, sparse=True, count=300)
    rate = np.mean([law == {("x", F(1, 2), F(0)), ("y", F(4, 3), F(0))} for law in laws])
    assert (rate >= 0.13) if rule else (rate <= 0.09)


@pytest.mark.parametrize("rule", [True, False])
def test_weak_thirds_of_an_additive_law_are_read_on_all_points(rule: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 18: x^(5/3) + y^(1/3), y's term a tenth of x's: on the averaged lines the thirds come back as wholes or
    # halves; read again together on all the points of the full grid, the law in 54% of these (without: 18%)
    laws = _additive_laws((5 / 3, 1 / 3), 0.1, rule, monkeypatch)
    rate = np.mean([law == {("x", F(5, 3), F(0)), ("y", F(1, 3), F(0))} for law in laws])
    assert (rate >= 0.45) if rule else (rate <= 0.3)


def test_common_exponents_of_an_additive_law_stay_when_read_on_all_points(monkeypatch: pytest.MonkeyPatch) -> None:
    # the re-reading offers thirds at a half's price, but must pass an F-test: x + y² (y's term 5% of x's) keeps
    # its law in 86% of these (73% without the re-reading, which found y² where the line had read y^(5/3))
    laws = _additive_laws((1, 2), 0.05, True, monkeypatch)
    assert np.mean([law == {("x", F(1), F(0)), ("y", F(2), F(0))} for law in laws]) >= 0.8


@pytest.mark.parametrize("rule", [True, False])
def test_a_halo_product_is_read_on_all_points_of_a_narrow_span(rule: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 18: 10 + 10·(p/343)^(1/3)·(size/45)² on the weak-scaling grid (size spans 1.8×), ±5%: the lines read
    # log2(p)·size and the like; the pair of factors read together on all the points, whole powers of size only,
    # finds the law in 42% of these, 9.5% without (:meth:`_Search.all_points_pairs`)
    import pmkit.modelers.multiparam as multiparam

    if not rule:
        monkeypatch.setattr(multiparam, "ALL_POINTS_SIGNIFICANCE", 0.0)
    grid = np.array([(p, s) for p in (27.0, 64, 125, 216, 343) for s in (25.0, 30, 35, 40, 45)])
    exact = 10 + 10 * (grid[:, 0] / 343) ** (1 / 3) * (grid[:, 1] / 45) ** 2
    noisy = exact * (1 + np.random.default_rng(5).uniform(-0.05, 0.05, (200, 25)))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("p", "size")))
    laws = [{(f.parameter, f.exponent, f.log_exponent) for t in m.function.terms for f in t.factors} for m in models]
    rate = np.mean([law == {("p", F(1, 3), F(0)), ("size", F(2), F(0))} for law in laws])
    assert (rate >= 0.3) if rule else (rate <= 0.15)


def test_a_narrow_line_offers_whole_powers_only_when_read_on_all_points() -> None:
    from pmkit.modelers.multiparam import _narrow_shape

    alpha = np.array([1.0, 2.0, 2.5, 1 / 3, 0.0, 3.0, 2.0])
    beta = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0])
    assert _narrow_shape(alpha, beta).tolist() == [True, True, False, False, False, True, False]


def test_a_law_is_read_again_on_all_points_with_one_factor_for_each_of_two_parameters_or_more() -> None:
    from pmkit.modelers.multiparam import _Group, _one_shape_law

    x, y = (0, F(2), F(0)), (1, F(1, 3), F(0))

    def group(shapes: tuple, combination: tuple) -> _Group:
        return _Group(("x", "y"), shapes, combination, np.zeros((1, 3)), ())

    additive, mixed = (frozenset({0}), frozenset({1})), (frozenset({0, 1}), frozenset({0}))
    assert _one_shape_law(group((x, y), additive)) == ((x, y), additive)
    assert _one_shape_law(group((x, y), mixed)) == ((x, y), mixed)
    assert _one_shape_law(group((x, y), (frozenset({0, 1}),))) is not None  # a product
    assert _one_shape_law(group((x,), (frozenset({0}),))) is None  # one parameter: its line reads it alone
    assert _one_shape_law(group((x, (0, F(1), F(0))), additive)) is None  # a two-term line law of x
    assert _one_shape_law(group((x, (1, F(-1), F(0))), additive)) is None  # a falling factor


@pytest.mark.parametrize("rule", [True, False])
def test_a_parameter_the_law_left_out_comes_back_where_all_points_show_it(rule: bool,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 18: 1 + 0.01·log2(z)/6 (z's term 1% of the constant at z = 64) under ±2% noise on the full 5×5×5 grid:
    # offered back on all 125 points (_Search.dropped), z is found in 47% of these; without the rule in 43%
    import pmkit.modelers.multiparam as multiparam

    if not rule:
        monkeypatch.setattr(multiparam, "DROPPED_SIGNIFICANCE", 0.0)  # no statistic exceeds the upper 0% point
    values = np.array([4.0, 8, 16, 32, 64])
    grid = np.array([(a, b, c) for a in values for b in values for c in values])
    exact = 1 + 0.01 * np.log2(grid[:, 2]) / 6
    noisy = exact * (1 + np.random.default_rng(5).uniform(-0.02, 0.02, (300, len(grid))))
    models = RefiningModeler().model(batch(grid, noisy, parameters=("x", "y", "z")))
    rate = np.mean([{f.parameter for t in m.function.terms for f in t.factors} == {"z"} for m in models])
    assert (rate >= 0.46) if rule else (rate <= 0.44)


def _mixed_laws(terms: np.ndarray, rule: bool, monkeypatch: pytest.MonkeyPatch, count: int = 300) -> list[set[str]]:
    """The parameters of the laws pmkit reads for ``count`` noisy copies (±2%, seed 3) of ``1 + terms`` on the full
    5×5 grid 4..64 of x, y, with the copied term (:meth:`_Search.copied`) or without it."""
    import pmkit.modelers.multiparam as multiparam

    if not rule:
        monkeypatch.setattr(multiparam, "COPIED_SIGNIFICANCE", 0.0)  # no statistic exceeds the upper 0% point
    noisy = (1 + terms) * (1 + np.random.default_rng(3).uniform(-0.02, 0.02, (count, len(terms))))
    models = RefiningModeler().model(batch(_FULL_XY, noisy, parameters=("x", "y")))
    return [{f.parameter for t in m.function.terms for f in t.factors} for m in models]


_FULL_XY = np.array([(a, b) for a in P_VALUES for b in P_VALUES])


@pytest.mark.parametrize("rule", [True, False])
def test_a_weak_product_of_a_mixed_law_is_found_as_a_copy_of_its_term(rule: bool,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 18: 1 + 100·x/64 + 2·(x/64)·(y/64) (the product 2% of the lone term): y's line is flat, the law dropped y;
    # offered as a copy of x's term times y (_Search.copied), both parameters in 46% of these, without it in 38%
    x, y = _FULL_XY[:, 0] / 64, _FULL_XY[:, 1] / 64
    laws = _mixed_laws(100 * x + 2 * x * y, rule, monkeypatch)
    rate = np.mean([law == {"x", "y"} for law in laws])
    assert (rate >= 0.44) if rule else (rate <= 0.40)


def test_a_copied_term_seldom_brings_a_parameter_without_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    # the other side of the copy's F-test: 1 + 100·(x/64)³ (y without effect) gains y in 4.7% of these, with the
    # copied term as without it (one-sided at 1%, a copy that falls refused)
    terms = 100 * (_FULL_XY[:, 0] / 64) ** 3
    with_rule = np.mean([law == {"x", "y"} for law in _mixed_laws(terms, True, monkeypatch)])
    without = np.mean([law == {"x", "y"} for law in _mixed_laws(terms, False, monkeypatch)])
    assert with_rule <= 0.06 and with_rule - without <= 0.01


def test_a_copied_term_wins_by_a_one_sided_test_shared_among_the_left_out_parameters() -> None:
    from pmkit.fitting.leastsquares import DesignFit, f_critical
    from pmkit.modelers.multiparam import COPIED_SIGNIFICANCE, _copied_wins, _Group, _Outcome

    n, rows = 25, np.arange(4)
    base = _Outcome(np.full(4, 2.0), np.ones(4, dtype=np.int64), [], np.full(4, 1.0))
    dof = n - 1 - 1 - 1
    # a statistic between the upper points at the level and at half of it, for rows 0-1, and above both for 2-3
    between = 0.5 * (f_critical(COPIED_SIGNIFICANCE, np.array([1]), np.array([dof]))[0]
                     + f_critical(COPIED_SIGNIFICANCE / 2, np.array([1]), np.array([dof]))[0])
    above = 2 * f_critical(COPIED_SIGNIFICANCE / 2, np.array([1]), np.array([dof]))[0]
    statistic = np.array([between, between, above, above])
    variant_rss = 1.0 / (1 + statistic / dof)  # (1 − v) / (v / dof) = statistic
    coefficients = np.array([[1.0, 2.0, 0.1], [1.0, 2.0, 0.1], [1.0, 2.0, 0.1], [1.0, 2.0, -0.1]])
    fit = DesignFit(coefficients, np.zeros((4, n)), np.zeros(4), np.zeros(4), np.full(4, 1.5))
    group = _Group(("x", "y"), ((0, F(1), F(0)), (1, F(1), F(0))), (frozenset({0}), frozenset({0, 1})),
                   coefficients, ())
    variant = _Outcome(np.full(4, 1.5), np.full(4, 2, dtype=np.int64), [(group, rows, fit, 3)], variant_rss)
    one = _copied_wins(base, variant, n, np.ones(4))
    two = _copied_wins(base, variant, n, np.full(4, 2.0))
    assert one.tolist() == [True, True, True, False]  # a copy whose coefficient is negative never wins
    assert two.tolist() == [False, False, True, False]  # two left-out parameters: the level halved


def test_f_critical_equals_scipy_stats_upper_point() -> None:
    from scipy.stats import f

    from pmkit.fitting.leastsquares import f_critical

    d1, d2 = np.meshgrid(np.arange(1, 8), np.arange(1, 400))
    for level in (0.01, 0.05):
        np.testing.assert_array_equal(f_critical(level, d1, d2), f.isf(level, d1, d2))
    assert f_critical(0.05, np.array([1]), np.array([20]))[0] > f_critical(0.05, np.array([1]), np.array([200]))[0]


def test_all_points_ranks_its_offered_shapes_among_themselves():
    """The shapes all_points offers are growing powers or log powers of denominator ≤ 3, ranked on the line
    among those alone: the same order as ranking every candidate and keeping the offered ones."""
    from pmkit.fitting.alternatives import candidates, ranked_shapes
    from pmkit.fitting.refinement import RefineSettings
    from pmkit.modelers.multiparam import _all_points_shape

    x = np.array([60.0, 120.0, 180.0, 240.0, 300.0])
    settings = RefineSettings()
    cands = candidates(x, settings)
    offered = _all_points_shape(cands.alpha, cands.beta)
    assert 0 < offered.sum() < cands.alpha.size
    for alpha, beta in zip(cands.alpha[offered], cands.beta[offered], strict=True):
        assert (alpha > 0 or beta > 0) and (alpha == 0 or beta == 0)
        assert F(alpha).limit_denominator(100).denominator <= 3
    Y = np.vstack([2 + 0.5 * x ** (4 / 3), 1 + np.log2(x) ** 2, 3 + x ** 0.5 * np.log2(x)])
    Y = Y * (1 + np.random.default_rng(3).uniform(-0.01, 0.01, Y.shape))
    whole = ranked_shapes(x, Y, settings, cands.alpha.size)
    among = ranked_shapes(x, Y, settings, 5, among=_all_points_shape)
    assert among.shape == (3, 5, 2)
    for row in range(3):
        kept = [tuple(s) for s in whole[row] if _all_points_shape(np.array([s[0]]), np.array([s[1]]))[0]]
        assert [tuple(s) for s in among[row]] == kept[:5]
    assert tuple(among[0, 0]) == (4 / 3, 0.0)  # the true shape ranks first


@pytest.mark.parametrize("among", [False, True])
def test_ranked_distinct_numbers_the_ranked_shapes_as_np_unique(among):
    """ranked_distinct gives np.unique(ranked_shapes(...).reshape(-1, 2), axis=0, return_inverse=True): the same
    distinct shapes in the same order and the same number per row and rank, on noisy series of many laws."""
    from pmkit.fitting.alternatives import ranked_distinct, ranked_shapes
    from pmkit.fitting.refinement import RefineSettings
    from pmkit.modelers.multiparam import _all_points_shape

    rng = np.random.default_rng(11)
    x = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    settings = RefineSettings()
    exponents = rng.choice([0.0, 0.5, 1.0, 4 / 3, 2.0, 3.0], size=400)
    logs = rng.choice([0.0, 1.0, 2.0], size=400)
    Y = 1 + rng.uniform(0.1, 5, (400, 1)) * x ** exponents[:, None] * np.log2(x) ** logs[:, None]
    Y *= 1 + rng.uniform(-0.05, 0.05, Y.shape)
    Y[:3] = 7.0  # constant rows too
    mask = _all_points_shape if among else None
    for count in (1, 5, 6):
        ranked = ranked_shapes(x, Y, settings, count, among=mask)
        pairs, inverse = ranked_distinct(x, Y, settings, count, among=mask)
        want, want_inverse = np.unique(ranked.reshape(-1, 2), axis=0, return_inverse=True)
        assert len(pairs) > 1 and inverse.shape == (len(Y), count)
        np.testing.assert_array_equal(pairs, want)
        np.testing.assert_array_equal(inverse.reshape(-1), want_inverse.reshape(-1))
        np.testing.assert_array_equal(pairs[inverse], ranked)


def test_relative_residuals_are_the_ordinary_fits_to_the_bit():
    """_relative_residuals (fitted values alone) gives the relative residuals of _fit_ordinary's fitted values, bit
    for bit, on rows with their own designs, a zero value (inf) and a rank-deficient design."""
    from pmkit.modelers.multiparam import _designs, _fit_ordinary, _relative_residuals

    rng = np.random.default_rng(5)
    points = rng.choice([4.0, 8.0, 16.0, 32.0, 64.0], size=(25, 2))
    factors = np.stack([np.stack([points[:, 0] ** a, np.log2(points[:, 1]) ** b])
                        for a, b in ((1, 1), (2, 1), (0.5, 2), (3, 0))])  # the last: a constant column
    designs = _designs(factors, (frozenset({0}), frozenset({0, 1})))
    local = rng.integers(0, len(designs), 3000)
    Y = 3 + rng.uniform(0.5, 2, (3000, 1)) * designs[local, :, 1] * rng.uniform(0.9, 1.1, (3000, 25))
    Y[7, 3] = 0.0
    got = _relative_residuals(Y, designs, local)
    with np.errstate(all="ignore"):
        want = (((Y - _fit_ordinary(Y, designs, local).predicted) / Y) ** 2).sum(axis=1)
    assert got.tobytes() == want.tobytes()
    assert np.isinf(got[7]) and np.isfinite(np.delete(got, 7)).all() and (got < 1).sum() > 1500


def test_laws_fitted_together_are_each_law_fitted_alone():
    """_laws_fits (the laws of as many columns stacked into one pass) gives each law's _fit_stacked on its own design,
    bit for bit: laws of two and three columns interleaved, one of them large enough to run on threads, a
    rank-deficient design and a zero value."""
    from pmkit.fitting.kernels import PARALLEL_MIN_SERIES
    from pmkit.fitting.leastsquares import relative_rss, smape
    from pmkit.modelers.multiparam import _designs, _fit_stacked, _laws_fits

    rng = np.random.default_rng(11)
    points = rng.choice([4.0, 8.0, 16.0, 32.0, 64.0], size=(25, 2))
    laws = [((1, 1), (frozenset({0}), frozenset({0, 1}))), ((2, 0), (frozenset({0, 1}),)),
            ((0.5, 2), (frozenset({0}), frozenset({1}))), ((3, 1), (frozenset({1}),)),
            ((1, 0), (frozenset({1}),))]  # the last: a constant column, rank-deficient
    sizes = [40, PARALLEL_MIN_SERIES + 7, 1, 300, 2]
    designs = [_designs(np.stack([points[:, 0] ** a, np.log2(points[:, 1]) ** b])[None], combination)
               for (a, b), combination in laws]
    Ys = [3 + rng.uniform(0.5, 2, (n, 1)) * d[0, :, 1] * rng.uniform(0.9, 1.1, (n, 25))
          for n, d in zip(sizes, designs, strict=True)]
    Ys[0][5, 2] = 0.0
    got = _laws_fits(Ys, designs)
    assert [len(fit.predicted) for fit, _ in got] == sizes
    assert {d.shape[2] for d in designs} == {2, 3}
    for Y, design, (fit, relative) in zip(Ys, designs, got, strict=True):
        alone = _fit_stacked(Y, design, np.zeros(len(Y), dtype=np.int64))
        for name in ("coefficients", "predicted", "rss", "loo_smape"):
            assert getattr(fit, name).tobytes() == getattr(alone, name).tobytes(), name
        assert fit.smape.tobytes() == smape(Y, alone.predicted).tobytes()
        assert relative.tobytes() == relative_rss(Y, alone.predicted).tobytes()
    assert np.isfinite(got[1][0].loo_smape).all() and (got[1][0].rss > 0).all() and (got[1][0].smape > 0).all()
