"""The batched fitting engine: closed forms against references, numba against numpy, mediants by hand."""

from __future__ import annotations

import platform
from fractions import Fraction as F

import numpy as np
import pytest

from pmkit.fitting import kernels
from pmkit.fitting.leastsquares import (
    adjusted_r2,
    basis_stats,
    constant_loo_predictions,
    fit_design,
    fit_line,
    loo_predictions,
    smape,
)
from pmkit.fitting.maskgroups import group_by_mask
from pmkit.fitting.refinement import RefineSettings, basis_rows, refine_series, start_table
from pmkit.fitting.refinement import exponents as refinement_exponents
from pmkit.fitting.sternbrocot import CENTER, LEFT, RIGHT, Interval, mediant, refinement_path
from pmkit.fitting.trend import kendall_s, smallest_pvalue, trend_pvalue

numba = pytest.importorskip("numba")

X = np.array([2.0, 4, 8, 16, 32])


def _noisy(rng: np.random.Generator, n: int = 400) -> np.ndarray:
    alpha = rng.choice([0.0, 0.5, 1.0, 4 / 3, 2.0, 2.5], n)
    beta = rng.choice([0.0, 1.0, 2.0], n)
    c0 = 10 ** rng.uniform(-2, 3, n)
    c1 = 10 ** rng.uniform(-2, 3, n)
    y = c0[:, None] + c1[:, None] * X ** alpha[:, None] * np.log2(X) ** beta[:, None]
    return y * (1 + rng.uniform(-0.02, 0.02, y.shape))


# ---------------------------------------------------------------- least squares against references


def test_fit_line_matches_lstsq() -> None:
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(7, 5)) * 10 + 50
    b = X ** 1.5 * np.log2(X)
    c0, c1 = fit_line(Y, b)
    for i in range(len(Y)):
        ref, *_ = np.linalg.lstsq(np.column_stack([np.ones(5), b]), Y[i], rcond=None)
        assert c0[i] == pytest.approx(ref[0], rel=1e-10)
        assert c1[i] == pytest.approx(ref[1], rel=1e-10)


def test_loo_from_hat_matrix_equals_refitting() -> None:
    rng = np.random.default_rng(1)
    y = rng.uniform(1, 5, 5)
    b = X ** (2 / 3)
    stats = basis_stats(b)
    c0, c1 = fit_line(y[None], b)
    loo = loo_predictions(y[None], c0[:, None] + c1[:, None] * b, stats.leverage)[0]
    for j in range(5):
        keep = np.arange(5) != j
        ref, *_ = np.linalg.lstsq(np.column_stack([np.ones(4), b[keep]]), y[keep], rcond=None)
        assert loo[j] == pytest.approx(ref[0] + ref[1] * b[j], rel=1e-10)
    const = constant_loo_predictions(y[None])[0]
    assert const[2] == pytest.approx(np.delete(y, 2).mean())


def test_fit_design_matches_per_series_lstsq_and_refit_loo() -> None:
    rng = np.random.default_rng(2)
    A = np.column_stack([np.ones(6), rng.uniform(1, 9, 6), rng.uniform(1, 9, 6)])
    Y = rng.uniform(1, 9, (3, 6))
    fit = fit_design(Y, A)
    for i in range(3):
        ref, *_ = np.linalg.lstsq(A, Y[i], rcond=None)
        np.testing.assert_allclose(fit.coefficients[i], ref, rtol=1e-9)
        loo = []
        for j in range(6):
            keep = np.arange(6) != j
            c, *_ = np.linalg.lstsq(A[keep], Y[i, keep], rcond=None)
            loo.append(A[j] @ c)
        assert fit.loo_smape[i] == pytest.approx(smape(Y[i], np.array(loo)), rel=1e-9)


def test_smape_and_adjusted_r2_by_hand() -> None:
    assert smape(np.array([1.0, 2.0]), np.array([1.0, 1.0])) == pytest.approx(100 * (0 + 2 * 1 / 3) / 2)
    assert smape(np.array([0.0, 0.0]), np.array([0.0, 0.0])) == 0.0
    assert smape(np.array([1.0]), np.array([np.inf])) == 200.0
    # R² = 1 - 2/10 = 0.8; adjusted with n=5, 2 coefficients: 1 - 0.2 * 4 / 3
    assert adjusted_r2(np.array(2.0), np.array(10.0), 5, 2) == pytest.approx(1 - 0.2 * 4 / 3)


def test_constant_basis_is_invalid() -> None:
    stats = basis_stats(np.ones((1, 5)))
    assert not stats.valid[0]


# ---------------------------------------------------------------- numba kernels against numpy


def test_fit_table_numba_equals_numpy() -> None:
    rng = np.random.default_rng(3)
    Y = _noisy(rng)
    basis = np.array([X, X ** 2, X ** 0.5 * np.log2(X), np.ones(5), np.log2(X) ** 1.5])
    stats = basis_stats(basis)
    idx = rng.integers(-1, len(basis), (len(Y), 6))
    args = (Y, stats.basis, stats.weights, stats.leverage, stats.mean, stats.valid, idx)
    fast = kernels.fit_table(*args, use_numba=True)
    slow = kernels.fit_table(*args, use_numba=False)
    for name in fast:
        np.testing.assert_allclose(fast[name], slow[name], rtol=1e-9, atol=1e-12, equal_nan=True)
    assert np.isinf(fast["rss"][idx == 3]).all() and np.isinf(fast["rss"][idx == -1]).all()


def test_refine_step_numba_equals_numpy() -> None:
    rng = np.random.default_rng(4)
    n = 500
    state = np.zeros((n, 4, 6), dtype=np.int64)
    best = rng.integers(0, 6, (n, 4))
    state[..., 0], state[..., 1] = np.maximum(best - 1, 0), 1
    state[..., 2], state[..., 3] = best, 1
    state[..., 4], state[..., 5] = best + 1, 1
    cand_err = rng.uniform(0, 2, (n, 4, 2))
    cand_err[rng.uniform(size=cand_err.shape) < 0.1] = np.inf
    cen_err = rng.uniform(0, 2, (n, 4))
    active = rng.uniform(size=n) < 0.9
    arrays = (active, cand_err, state, cen_err)
    fast = [a.copy() for a in arrays]
    slow = [a.copy() for a in arrays]
    kernels.refine_step(*fast, 2.0, use_numba=True)
    kernels.refine_step(*slow, 2.0, use_numba=False)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(fast[2], state)  # something moved
    assert 0 < fast[0].sum() < active.sum()  # some series stopped, some go on


def test_relative_search_numba_equals_numpy_and_lstsq() -> None:
    rng = np.random.default_rng(6)
    Y = _noisy(rng, 300)
    Y[0, 2] = 0.0  # a zero value: its weight is floored, not infinite
    basis = np.array([X, X ** 2, X ** 0.5 * np.log2(X), np.ones(5), np.log2(X) ** 1.5, X ** (4 / 3)])
    stats = basis_stats(basis)
    pen2 = np.array([1.0, 1.0, 4.0, 1.0, 2.0, 3.0])
    weights = kernels.relative_weights(Y)
    assert np.isfinite(weights).all()
    for idx, slot_of, slots in ((np.arange(6)[None, :], np.array([0, 0, 1, 1, 1, 2]), 3),
                                (rng.integers(-1, 6, (len(Y), 4)), np.arange(4), 4)):
        fast = kernels.relative_search(Y, weights, stats.basis, stats.valid, pen2, idx, slot_of, slots,
                                       use_numba=True)
        slow = kernels.relative_search(Y, weights, stats.basis, stats.valid, pen2, idx, slot_of, slots,
                                       use_numba=False)
        for name in fast:
            np.testing.assert_allclose(fast[name], slow[name], rtol=1e-9, equal_nan=True)
        # the constant basis (hypothesis 3) is invalid: it never wins, and a slot holding only it is empty
        holds = np.broadcast_to(idx, fast["k"].shape) if slots == 4 else None
        if holds is not None:
            assert (fast["k"][(holds == 3) | (holds == -1)] == -1).all()
            assert np.isinf(fast["crit"][holds == 3]).all()
        else:
            assert not (fast["k"] == 3).any() and not (fast["raw_k"] == 3).any()
    # a row by hand: weighted least squares with weights 1/y² on hypothesis x², slot 0 of the table
    y, h = Y[5], 1
    w = np.sqrt(weights[5])
    coef, *_ = np.linalg.lstsq(np.column_stack([np.ones(5), basis[h]]) * w[:, None], y * w, rcond=None)
    rel = (((y - coef[0] - coef[1] * basis[h]) / y) ** 2).sum()
    one = kernels.relative_search(Y[5:6], weights[5:6], stats.basis, stats.valid, pen2,
                                  np.array([[h]]), np.array([0]), 1, use_numba=True)
    assert one["err"][0, 0] == pytest.approx(np.sqrt(rel / 5), rel=1e-9)
    assert one["crit"][0, 0] == pytest.approx(rel * pen2[h], rel=1e-9)


def test_relative_search_on_threads_equals_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many series run in blocks of rows on several threads: shared and per-series tables, and a
    ``rising`` mask, come out bit for bit as on one thread."""
    rng = np.random.default_rng(8)
    Y = _noisy(rng, 301)
    basis = np.array([X, X ** 2, X ** 0.5 * np.log2(X), X ** -1.0, np.log2(X) ** 1.5])
    stats = basis_stats(basis)
    pen2 = np.array([1.0, 1.0, 4.0, 2.0, 3.0])
    weights = kernels.relative_weights(Y)
    positive, rising = np.array([False, False, False, True, False]), rng.random(len(Y)) < 0.3
    monkeypatch.setattr(kernels, "_cpus", lambda: 3)
    for idx, slot_of, slots in ((np.arange(5)[None, :], np.array([0, 0, 1, 1, 2]), 3),
                                (rng.integers(-1, 5, (len(Y), 4)), np.arange(4), 4)):
        results = []
        for smallest in (10**9, 10):
            monkeypatch.setattr(kernels, "PARALLEL_MIN_SERIES", smallest)
            results.append(kernels.relative_search(Y, weights, stats.basis, stats.valid, pen2, idx, slot_of, slots,
                                                   positive=positive, rising=rising))
        for name in results[0]:
            np.testing.assert_array_equal(results[0][name], results[1][name])
        assert (results[1]["k"] >= 0).any()


def _double_rows(source: np.ndarray, target: np.ndarray, offset: float) -> None:
    target[:] = 2.0 * source + offset


def test_run_rows_keeps_its_threads_and_a_forked_child_makes_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of rows run on the calling thread and on threads kept across calls (not one pool per call),
    every row written once; a child forked after such a call, whose copy of the pool has no threads, runs
    its blocks on threads of its own."""
    import multiprocessing
    import threading

    monkeypatch.setattr(kernels, "_cpus", lambda: 3)
    monkeypatch.setattr(kernels, "PARALLEL_MIN_SERIES", 10)
    source = np.arange(1000.0).reshape(100, 10)
    for offset in (1.0, 5.0):
        target = np.zeros_like(source)
        kernels.run_rows(_double_rows, len(source), (source, target, offset), (True, True, False))
        np.testing.assert_array_equal(target, 2.0 * source + offset)
    named = [t for t in threading.enumerate() if t.name.startswith("pmkit-kernel")]
    assert 1 <= len(named) <= 2
    if "fork" in multiprocessing.get_all_start_methods():
        child = multiprocessing.get_context("fork").Process(target=_run_rows_in_child)
        child.start()
        child.join(60)
        hung = child.is_alive()
        if hung:
            child.kill()
        assert not hung and child.exitcode == 0


def _run_rows_in_child() -> None:
    source = np.arange(600.0).reshape(60, 10)
    target = np.zeros_like(source)
    kernels.run_rows(_double_rows, len(source), (source, target, 3.0), (True, True, False))
    if not np.array_equal(target, 2.0 * source + 3.0):
        raise SystemExit(1)


def test_start_table_is_a_farey_sequence_covering_extrap_basic() -> None:
    table = start_table(5, True, 1)
    alphas = {F(int(n), int(d)) for s, n, d in zip(table.slices, table.num, table.den, strict=True) if s == 0}
    # Extra-P Basic's polynomial exponents (quarters, thirds, 4/5 up to 3) and the paper's integer start
    basic = {F(1, 4), F(1, 3), F(1, 2), F(2, 3), F(3, 4), F(4, 5), F(1), F(5, 4), F(4, 3), F(3, 2), F(5, 3),
             F(7, 4), F(2), F(9, 4), F(7, 3), F(5, 2), F(8, 3), F(11, 4), F(3)}
    assert basic | {F(4), F(5)} <= alphas
    assert max(alphas) == F(29, 5) and min(alphas) == F(1, 5)
    logs = {F(int(n), int(d)) for s, n, d in zip(table.slices, table.num, table.den, strict=True) if s == 3}
    assert {F(1, 2), F(1), F(3, 2), F(2)} <= logs and max(logs) < 3
    # neighbours are Farey neighbours: the first mediants are the simplest fractions in between
    for n, d, lo, up in zip(table.num, table.den, table.lower, table.upper, strict=True):
        assert up[0] * d - n * up[1] == 1
        assert (lo[0] == n and lo[1] == d) or n * lo[1] - lo[0] * d == 1
    # simpler hypotheses come first, so ties go to them
    assert (np.diff(table.level) >= 0).all()
    mixed = (table.slices == 1) & (table.num == 1) & (table.den == 1)
    assert table.level[mixed][0] == 1  # x·log2(x) pays one level for its log factor
    assert set(start_table(5, False, 1).slices.tolist()) == {0}
    assert start_table(1, True, 1).den.max() == 1


def test_refinement_numba_equals_numpy_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    Y = _noisy(np.random.default_rng(5))
    fast = refine_series(X, Y, RefineSettings(use_numba=True))
    monkeypatch.setenv(kernels.NO_NUMBA_ENV, "1")
    assert not kernels.numba_enabled()
    slow = refine_series(X, Y, RefineSettings())
    np.testing.assert_array_equal(fast.constant, slow.constant)
    np.testing.assert_array_equal(fast.alpha, slow.alpha)
    np.testing.assert_array_equal(fast.beta, slow.beta)
    np.testing.assert_allclose(fast.c1, slow.c1, rtol=1e-9)


# ---------------------------------------------------------------- Stern–Brocot mediants by hand


def test_mediant() -> None:
    assert mediant(F(1, 2), F(1)) == F(2, 3)
    assert mediant(F(0), F(1)) == F(1, 2)
    assert mediant(F(4, 3), F(3, 2)) == F(7, 5)


def test_mediant_path_left_then_right_then_center() -> None:
    # best integer 1, bounds 0 and 2 (paper Fig. 2 style)
    states = refinement_path(Interval.around_integer(1), [LEFT, RIGHT, CENTER])
    assert states[0].candidates() == (F(1, 2), F(3, 2))
    assert (states[1].lower, states[1].best, states[1].upper) == (F(0), F(1, 2), F(1))
    assert states[1].candidates() == (F(1, 3), F(2, 3))
    assert (states[2].lower, states[2].best, states[2].upper) == (F(1, 2), F(2, 3), F(1))
    assert states[2].candidates() == (F(3, 5), F(3, 4))
    assert (states[3].lower, states[3].best, states[3].upper) == (F(3, 5), F(2, 3), F(3, 4))


def test_mediant_path_at_zero_has_no_left_side() -> None:
    start = Interval.around_integer(0)
    assert start.candidates() == (None, F(1, 2))
    assert start.step(CENTER) == Interval(F(0), F(0), F(1, 2))
    with pytest.raises(ValueError):
        start.step(LEFT)
    # right from 2: 5/2, then 7/3 ... every fraction is a Stern–Brocot node (reduced, no skipped one)
    states = refinement_path(Interval.around_integer(2), [RIGHT, LEFT, LEFT])
    assert [s.best for s in states] == [F(2), F(5, 2), F(7, 3), F(9, 4)]


def test_kernel_follows_sternbrocot_reference() -> None:
    """The batched step moves bounds exactly as Interval.step does, for each winner."""
    for use in (True, False):
        for winner, crit in ((LEFT, (0.1, 0.5)), (RIGHT, (0.5, 0.1)), (CENTER, (0.9, 0.8))):
            interval = Interval(F(1, 2), F(2, 3), F(1))
            state = np.array([[[1, 2, 2, 3, 1, 1]] + [[0, 1, 1, 1, 2, 1]] * 3], dtype=np.int64)
            cand = np.full((1, 4, 2), np.inf)
            cand[0, 0] = crit
            active = np.array([True])
            args = [active, cand, state, np.array([[0.7, np.inf, np.inf, np.inf]])]
            kernels.refine_step(*args, 2.0, use_numba=use)
            expect = interval.step(winner)
            got = state[0, 0]
            assert (F(int(got[0]), int(got[1])), F(int(got[2]), int(got[3])), F(int(got[4]), int(got[5]))) == (
                expect.lower, expect.best, expect.upper)
            # 0.7 → 0.1 is 7 times better: go on; 0.7 → 0.7 (no winner) is not twice better: stop
            assert active[0] == (winner != CENTER)


# ---------------------------------------------------------------- trend test


def test_kendall_s_and_exact_pvalues_by_hand() -> None:
    x = np.array([1.0, 2, 3, 4, 5])
    Y = np.array([[1.0, 2, 3, 4, 5], [5.0, 4, 3, 2, 1], [1.0, 3, 2, 4, 5], [3.0, 1, 4, 5, 2]])
    s = kendall_s(x, Y)
    assert s.tolist() == [10, -10, 8, 2]
    assert kendall_s(x[::-1], Y[:1]).tolist() == [-10]  # unsorted points are fine
    p = trend_pvalue(s, 5)
    # 120 orderings: 1 with no inversion, 4 with one, 9 with two, ...; two-sided
    np.testing.assert_allclose(p[:3], [2 / 120, 2 / 120, 2 * 5 / 120])
    assert p[3] > 0.5
    assert smallest_pvalue(5) == pytest.approx(2 / 120)
    assert smallest_pvalue(4) == pytest.approx(2 / 24)
    assert smallest_pvalue(3) == pytest.approx(2 / 6)
    # the normal approximation above EXACT_UP_TO points agrees with the exact tail near it
    big = np.array([200.0])
    assert trend_pvalue(big, 41)[0] == pytest.approx(trend_pvalue(big, 40)[0], rel=0.5)


def test_trend_condition_keeps_noise_constant() -> None:
    rng = np.random.default_rng(12)
    level = 10 ** rng.uniform(-2, 3, 3000)
    Y = level[:, None] * (1 + rng.uniform(-0.02, 0.02, (3000, 5)))
    with_trend = refine_series(X, Y, RefineSettings()).constant.mean()
    without = refine_series(X, Y, RefineSettings(trend_alpha=0.0)).constant.mean()
    assert with_trend > without and with_trend >= 0.98
    # four points cannot reach 5%: the condition is not applied there
    four = refine_series(X[:4], 1 + X[:4] ** 2, RefineSettings())
    assert not four.constant[0]
    # clear growth whose flat start noise swapped (not monotone) still grows; borderline growth that
    # is not monotone stays constant
    swapped = np.array([[100.0, 99.9, 111.6, 152.5, 311.2], [100.0, 100.8, 100.3, 105.7, 117.2]])
    fits = refine_series(X, swapped, RefineSettings())
    assert not fits.constant[0] and fits.constant[1]
    assert not refine_series(X, swapped, RefineSettings(trend_alpha=0.0)).constant[1]


# ---------------------------------------------------------------- basis and mask groups


def test_basis_rows_slices() -> None:
    rows = basis_rows(X, np.array([0, 1, 3]), np.array([3, 1, 3]), np.array([2, 2, 2]))
    np.testing.assert_allclose(rows[0], X ** 1.5)
    np.testing.assert_allclose(rows[1], X ** 0.5 * np.log2(X))
    np.testing.assert_allclose(rows[2], np.log2(X) ** 1.5)


def test_group_by_mask() -> None:
    Y = np.array([[1, 2, 3.0], [1, np.nan, 3], [4, 5, 6], [np.nan, np.nan, np.nan], [7, np.nan, 9]])
    groups = group_by_mask(Y)
    by_cols = {tuple(g.columns.tolist()): sorted(g.rows.tolist()) for g in groups}
    assert by_cols == {(0, 1, 2): [0, 2], (0, 2): [1, 4], (): [3]}
    assert len(groups[0].rows) == 2


# ---------------------------------------------------------------- outliers and strong trends (≥ 6 points)

X8 = np.array([1.0, 10, 25, 50, 100, 250, 500, 1000])


def test_one_outlier_is_left_out_from_six_points() -> None:
    law = 17.0 + 0.0144 * X8
    wiggle = 1 + 0.01 * np.array([0.3, -0.5, 0.8, -0.2, 0.4, -0.7, 0.1, -0.3])
    first = law * wiggle
    first[0] = 38.2                    # a cold start at x = 1, twice the law
    middle = law * wiggle
    middle[3] *= 1.8                   # one bad run inside
    last = law * wiggle
    last[-1] *= 1.8                    # the largest x may be the law: never taken out
    fits = refine_series(X8, np.array([first, middle, last, law * wiggle]), RefineSettings())
    assert fits.outlier.tolist() == [0, 3, -1, -1]
    for row in (0, 1):
        assert not fits.constant[row] and fits.alpha[row].tolist() == [1, 1] and fits.beta[row].tolist() == [0, 1]
        assert fits.c1[row] == pytest.approx(0.0144, rel=0.05)
    without = refine_series(X8, first[None], RefineSettings(outlier_factor=0.0))
    assert without.outlier[0] == -1 and without.constant[0]
    # five points cannot tell an outlier from the law: the check needs six
    assert refine_series(X8[1:6], first[None, 1:6] * [[2.0, 1, 1, 1, 1]], RefineSettings()).outlier[0] == -1


def test_no_outliers_in_clean_noisy_laws() -> None:
    rng = np.random.default_rng(5)
    n = 600
    alpha = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], n)
    beta = rng.choice([0.0, 1.0], n)
    x = 2.0 ** np.arange(1, 10)
    y = 10 ** rng.uniform(-2, 3, n)[:, None] + 10 ** rng.uniform(-2, 3, n)[:, None] * x ** alpha[:, None] \
        * np.log2(x) ** beta[:, None]
    fits = refine_series(x, y * (1 + rng.uniform(-0.02, 0.02, y.shape)), RefineSettings())
    assert (fits.outlier >= 0).sum() == 0


def test_strong_trend_overrides_the_nonconstancy_factor() -> None:
    # strictly monotone over nine points and 650-fold, but no law fits the jump: growth beats the
    # constant model by less than 2 in SMAPE, yet noise would order nine values like this once in 180,000
    x = np.arange(4.0, 37, 4)
    y = np.array([[2.0, 3.0, 3.58, 4.0, 4.32, 576, 784, 1024, 1296]])
    assert not refine_series(x, y, RefineSettings()).constant[0]
    assert refine_series(x, y, RefineSettings(strong_trend=0.0)).constant[0]
    assert refine_series(x, y, RefineSettings(nonconstancy=np.inf)).constant[0]
    # constants with noise stay constant: a strong trend is rare without growth
    rng = np.random.default_rng(8)
    level = 10 ** rng.uniform(-2, 3, 3000)
    noisy = level[:, None] * (1 + rng.uniform(-0.02, 0.02, (3000, 9)))
    assert refine_series(x, noisy, RefineSettings()).constant.mean() >= 0.98


def test_growth_is_judged_by_its_relative_fit() -> None:
    # 9.45 + 721·x + 11.1·x³ with 2% noise grows 250-fold; refitted by ordinary least squares the
    # law misses the small values by far more than their noise, so its SMAPE alone called it constant
    y = np.array([[1562.7656, 3660.0637, 11336.2532, 58227.313, 388523.2769]])
    fits = refine_series(X, y, RefineSettings())
    assert not fits.constant[0] and fits.alpha[0, 0] / fits.alpha[0, 1] >= 2
    assert refine_series(X, y, RefineSettings(relative_judge=False, slice_fallback=False)).constant[0]


def _relative_refits(designs: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relative least squares by lstsq per row, and its leave-one-out SMAPE by refitting per point."""
    coefficients, loo = [], []
    for design, y in zip(designs, Y, strict=True):
        c, *_ = np.linalg.lstsq(design / y[:, None], np.ones(len(y)), rcond=None)
        coefficients.append(c)
        errors = []
        for i in range(len(y)):
            keep = np.arange(len(y)) != i
            c, *_ = np.linalg.lstsq(design[keep] / y[keep, None], np.ones(len(y) - 1), rcond=None)
            f = design[i] @ c
            errors.append(2 * abs(y[i] - f) / (abs(y[i]) + abs(f)))
        loo.append(100 * np.mean(errors))
    return np.array(coefficients), np.array(loo)


def test_relative_fits_match_refits() -> None:
    from pmkit.fitting.refinement import _relative_line, relative_design_fit

    rng = np.random.default_rng(4)
    B = np.stack([X, X ** 2, np.log2(X)])
    Y = (rng.uniform(1, 10, (3, 1)) + rng.uniform(0.1, 2, (3, 1)) * B) * (1 + rng.uniform(-0.05, 0.05, (3, 5)))
    designs = np.stack([np.stack([np.ones(5), b], axis=1) for b in B])
    coefficients, loo = _relative_refits(designs, Y)
    c0, c1, got = _relative_line(B, Y)
    np.testing.assert_allclose(got, loo, rtol=1e-9)
    np.testing.assert_allclose(np.stack([c0, c1], axis=1), coefficients, rtol=1e-9)
    # three columns (a two-term law), one shared design
    x = np.array([1.0, 2, 4, 8, 16, 32, 64])
    design = np.stack([np.ones(7), 1 / x, np.log2(x)], axis=1)
    Y = (np.array([[0.5], [3.0]]) + np.array([[100.0], [7.0]]) / x + np.array([[2.0], [0.1]]) * np.log2(x)) * (
        1 + rng.uniform(-0.05, 0.05, (2, 7)))
    coefficients, loo = _relative_refits(np.stack([design, design]), Y)
    got_c, got_loo = relative_design_fit(Y, design)
    np.testing.assert_allclose(got_c, coefficients, rtol=1e-8)
    np.testing.assert_allclose(got_loo, loo, rtol=1e-8)


def test_pair_search_numba_equals_numpy_and_lstsq() -> None:
    rng = np.random.default_rng(8)
    x = 2.0 ** np.arange(0, 7)
    a, b, c0 = 10 ** rng.uniform(0, 2, (3, 200))
    Y = (c0[:, None] + a[:, None] / x + b[:, None] * np.log2(x)) * (1 + rng.uniform(-0.05, 0.05, (200, 7)))
    Y[:20] = Y[:20, ::-1]  # growing series: no pair with both coefficients positive fits them best
    basis = np.array([1 / x, x ** -0.5, x ** -2, np.log2(x), x, np.ones(7)])
    first, second = np.array([0, 1, 2, 0, 1, 0]), np.array([3, 3, 4, 4, 4, 5])
    valid = np.array([True] * 5 + [False])
    pen2 = np.array([1.0, 2.0, 1.0, 1.0, 2.0, 1.0])
    weights = kernels.relative_weights(Y)
    fast = kernels.pair_search(Y, weights, basis, valid, first, second, pen2, use_numba=True)
    slow = kernels.pair_search(Y, weights, basis, valid, first, second, pen2, use_numba=False)
    for name in fast:
        np.testing.assert_allclose(fast[name], slow[name], rtol=1e-9)
    assert (fast["k"] != 5).all()  # the constant basis row is invalid
    assert (fast["k"][20:] == 0).mean() > 0.9  # 1/p + log2 p, the true pair
    # one row by hand: weighted least squares on [1, 1/x, log2 x] with weights 1/y²
    i = 30
    design = np.column_stack([np.ones(7), basis[0], basis[3]])
    coef, *_ = np.linalg.lstsq(design / Y[i][:, None], np.ones(7), rcond=None)
    rel = (((Y[i] - design @ coef) / Y[i]) ** 2).sum()
    assert fast["err"][i] == pytest.approx(np.sqrt(rel / 7), rel=1e-9)


def test_relative_search_positive_coefficients_only() -> None:
    x = 2.0 ** np.arange(0, 7)
    Y = np.array([3 + 5 / x, 9 - 5 / x])  # falls; rises towards a ceiling
    basis = np.array([1 / x])
    stats = basis_stats(basis)
    weights = kernels.relative_weights(Y)
    for use in (True, False):
        free = kernels.relative_search(Y, weights, stats.basis, stats.valid, np.ones(1), np.zeros((1, 1), dtype=int),
                                       np.zeros(1, dtype=int), 1, use_numba=use)
        signed = kernels.relative_search(Y, weights, stats.basis, stats.valid, np.ones(1),
                                         np.zeros((1, 1), dtype=int), np.zeros(1, dtype=int), 1,
                                         positive=np.array([True]), use_numba=use)
        by_row = kernels.relative_search(Y, weights, stats.basis, stats.valid, np.ones(1),
                                         np.zeros((1, 1), dtype=int), np.zeros(1, dtype=int), 1,
                                         rising=np.array([False, True]), use_numba=use)
        assert (free["k"][:, 0] == 0).all()
        assert signed["k"][0, 0] == 0 and signed["k"][1, 0] == -1
        assert by_row["k"][0, 0] == 0 and by_row["k"][1, 0] == -1  # per series: the second must rise


def test_start_table_falling_slice() -> None:
    table = start_table(5, True, 1, (4,))
    magnitudes = {F(int(n), int(d)) for n, d in zip(table.num, table.den, strict=True)}
    assert {F(1, 4), F(1, 3), F(1, 2), F(2, 3), F(1), F(3, 2), F(2), F(3)} <= magnitudes
    assert max(magnitudes) < 4 and min(magnitudes) == F(1, 5)
    assert set(table.slices.tolist()) == {4}
    alpha, beta = refinement_exponents(table.slices, table.num, table.den)
    assert (alpha < 0).all() and (beta == 0).all()


def test_refinement_numba_equals_numpy_on_strong_scaling(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(9)
    x = 2.0 ** np.arange(0, 7)
    a, b, c = 10 ** rng.uniform(-1, 2, (3, 300, 1))
    gamma = rng.choice([0.5, 1.0, 2.0], (300, 1))
    Y = (c + a * x ** -gamma + np.where(rng.uniform(size=(300, 1)) < 0.5, 0.0, 0.01 * b * x)) * (
        1 + rng.uniform(-0.02, 0.02, (300, 7)))
    fast = refine_series(x, Y, RefineSettings(use_numba=True))
    monkeypatch.setenv(kernels.NO_NUMBA_ENV, "1")
    slow = refine_series(x, Y, RefineSettings())
    assert fast.two_term.sum() > 50 and (fast.alpha[:, 0] < 0).sum() > 200
    for name in ("constant", "alpha", "beta", "alpha2", "beta2"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    np.testing.assert_allclose(fast.c1, slow.c1, rtol=1e-9)
    np.testing.assert_allclose(fast.c2, slow.c2, rtol=1e-9)



def _awkward_values(points: int) -> tuple[np.random.Generator, np.ndarray]:
    """Positive values spread over decades, with a row of zeros, a NaN, a row zero but for one point and a
    negative row: the cases the kernels of the combination step must treat as numpy does."""
    rng = np.random.default_rng(points)
    Y = np.exp(rng.normal(0, 2, (400, points)))
    Y[0], Y[1, 0], Y[2, 1:], Y[3] = 0.0, np.nan, 0.0, -Y[3]
    return rng, Y


@pytest.mark.parametrize("points", [5, 25, 150])
def test_design_errors_kernel_equals_numpy(points) -> None:
    rng, Y = _awkward_values(points)
    predicted = Y * rng.normal(1, 0.1, Y.shape)
    predicted[5, 2], predicted[6, 3] = np.inf, np.nan
    leverage = rng.uniform(0, 1, (7, points))
    leverage[3, 0] = 1.0  # leave-one-out undefined at that point
    leverage[4] = 1 - 1e-13
    local = rng.integers(0, 7, len(Y))
    fast = kernels.design_errors(Y, predicted, leverage, local, use_numba=True)
    slow = kernels.design_errors(Y, predicted, leverage, local, use_numba=False)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(slow[1]).mean() > 0.5 and (slow[1][local == 4] == 200.0).all()


@pytest.mark.parametrize("points", [5, 25, 150])
def test_design_fits_kernel_equals_numpy(points) -> None:
    rng, Y = _awkward_values(points)
    for columns in (1, 2, 3, 5, 9):
        designs = np.exp(rng.normal(0, 1, (7, points, columns)))
        designs[:, :, 0] = 1.0
        designs[2, -1, -1] = np.inf
        inverses = np.swapaxes(designs, 1, 2) * rng.normal(0, 1, (7, columns, points))
        inverses[3, 0, 0] = -0.0
        local = rng.integers(0, 7, len(Y))
        fast = kernels.design_fits(Y, inverses, designs, local, use_numba=True)
        slow = kernels.design_fits(Y, inverses, designs, local, use_numba=False)
        for a, b in zip(fast, slow, strict=True):
            assert a.tobytes() == b.tobytes()  # to the last bit, the signs of zeros and NaNs' places included
        assert np.isfinite(slow[1][local != 2]).mean() > 0.9 and not np.isfinite(slow[1][local == 2]).all()


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="numpy's x86-64 einsum loop")
def test_design_fits_loop_sums_as_einsum_on_x86_64() -> None:
    # the probe that lets the loop run: on x86-64 numpy's baseline einsum loop is the one it mirrors
    assert kernels._einsum_order()
    assert kernels.numba_enabled()


@pytest.mark.parametrize("points", [5, 25, 150])
def test_fit_errors_kernel_equals_numpy(points) -> None:
    rng, Y = _awkward_values(points)
    predicted = Y * rng.normal(1, 0.1, Y.shape)
    predicted[5, 2], predicted[6, 3], predicted[0, 1] = np.inf, np.nan, 1.0
    fast = kernels.fit_errors(Y, predicted, use_numba=True)
    slow = kernels.fit_errors(Y, predicted, use_numba=False)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(slow[1][7:]).all() and slow[0][5] >= 200 / points  # the infinite prediction counts 200


@pytest.mark.parametrize("points", [5, 25])
def test_contributions_kernel_equals_numpy(points) -> None:
    rng, Y = _awkward_values(points)
    designs = np.exp(rng.normal(0, 1, (7, points, 3)))
    designs[:, :, 0] = 1.0
    designs[1, :, 2] = 0.0  # a term that is zero everywhere contributes nothing
    designs[2, -1, 1] = np.inf
    coefficients = rng.normal(0, 1, (len(Y), 3))
    coefficients[::5, 1] = 0.0
    coefficients[7, 2] = np.nan
    coefficients[::3] *= 1e-4
    local = rng.integers(0, 7, len(Y))
    fast = kernels.contributions(Y, coefficients, designs, local, 5e-4, use_numba=True)
    slow = kernels.contributions(Y, coefficients, designs, local, 5e-4, use_numba=False)
    np.testing.assert_array_equal(fast, slow)
    assert 0.2 < slow.mean() < 0.9 and not slow[local == 1].any() and not slow[::5].any()


@pytest.mark.parametrize("count, largest", [(0, 5), (1, 5), (5000, 40), (300, 2**20)])
def test_distinct_mediants_equal_numpy_unique(count, largest) -> None:
    from pmkit.fitting.refinement import _distinct, _key, _unkey

    rng = np.random.default_rng(count)
    slices, num, den = rng.integers(0, 5, count), rng.integers(0, largest, count), rng.integers(1, largest, count)
    uniq, inverse = np.unique(_key(slices, num, den), return_inverse=True)
    got = _distinct(slices, num, den)
    for a, b in zip(got, (*_unkey(uniq), inverse.reshape(-1)), strict=True):
        np.testing.assert_array_equal(a, b)
    assert len(got[0]) <= count and (count == 0 or got[3].max() == len(got[0]) - 1)


@pytest.mark.parametrize("count, low, high", [(0, 0, 5), (1, 3, 4), (30_000, -3, 12), (50, 0, 2**40), (5000, 0, 2**17)])
def test_distinct_equals_numpy_unique(count, low, high) -> None:
    from pmkit.fitting.distinct import distinct

    values = np.random.default_rng(count).integers(low, high, count)
    got = distinct(values)
    for a, b in zip(got, np.unique(values, return_index=True, return_inverse=True), strict=True):
        np.testing.assert_array_equal(a, b.reshape(-1))
    assert count == 0 or ((values[got[1]] == got[0]).all() and got[2].max() == len(got[0]) - 1)


@pytest.mark.parametrize("shape, high, dtype", [((0, 2), 5, np.int64), ((1, 3), 4, np.int64),
                                                ((30_000, 2), 40, np.int64), ((5000, 3), 300, np.int32),
                                                ((2000, 4), 2**20, np.int64), ((100, 2), 7, np.float64)])
def test_distinct_rows_equal_numpy_unique_of_rows(shape, high, dtype) -> None:
    from pmkit.fitting.distinct import distinct_rows

    rows = np.random.default_rng(shape[0]).integers(0, high, shape).astype(dtype)
    keys, inverse = distinct_rows(rows)
    want_keys, want_inverse = np.unique(rows, axis=0, return_inverse=True)
    np.testing.assert_array_equal(keys, want_keys)
    np.testing.assert_array_equal(inverse, want_inverse.reshape(-1))
    assert keys.dtype == rows.dtype and inverse.shape == (shape[0],)
    assert shape[0] == 0 or (keys[inverse] == rows).all()


def test_distinct_rows_survive_a_hash_that_tells_nothing_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    import pmkit.fitting.distinct

    rows = np.array([[0.0, 2.0], [-2.0, 0.0], [0.0, 2.0], [np.nan, 1.0], [-2.0, 0.0]])
    for patched in (False, True):
        if patched:  # every row the same hash: the rows themselves decide
            monkeypatch.setattr(pmkit.fitting.distinct, "_mixed", lambda z: np.zeros_like(z))
        distinct, inverse = pmkit.fitting.distinct.distinct_float_rows(rows)
        assert len(distinct) == 3
        assert np.array_equal(distinct[inverse], rows, equal_nan=True)
