"""Change points: does a series follow one law up to a threshold and another beyond it?

Run for many series at once, on top of the refining search (:func:`refine_series`, used as it is on
subsets of the points).  For series sharing their points ``x`` (sorted here), with their one-law
fits from the search:

1. every split into a left part (the ``k`` smallest points) and a right part (the rest), each with at
   least :data:`MIN_SIDE` points, is searched on both sides with the same search; the split whose two
   laws miss the values least (RMS relative error of relative least-squares refits, over all points)
   is the candidate;
2. the law changes when no single law comes close: the one-law model must miss the values
   :data:`ONE_LAW_RATIO` times more than the two segments do (and by at least
   :data:`MATERIAL_ERROR`), and every smooth two-term law ``c0 + a·t1(x) + b·t2(x)`` with
   ``a, b > 0`` :data:`SMOOTH_RATIO` times more (terms from :func:`smooth_terms`) — a sum of two
   positive costs, which the one-term search cannot express, bends smoothly where segments break.
   Errors are compared per degree of freedom (:data:`PARAMETERS`), so that few points, which
   flexible models fit closely, do not favour the segments;
3. the change point is where the two laws meet between the last point of the left part and the first
   of the right one (or half way between them, on the points' scale, where they do not meet); its
   interval spans the splits whose error is within :data:`INTERVAL_FACTOR` of the best one.

The thresholds and their figures are in :mod:`pmkit.modelers.segmented`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache

import numpy as np

from pmkit.fitting.kernels import numba_enabled, pair_search, relative_weights
from pmkit.fitting.refinement import (
    NUMBA_MIN_SERIES,
    RefineSettings,
    SingleFits,
    _relative_deviations,
    refine_series,
)

MIN_SIDE = 4
"""Points each segment needs: two coefficients and an exponent fitted, and points left to judge them."""
MIN_POINTS = 2 * MIN_SIDE
"""Series with fewer points are never split: both segments need :data:`MIN_SIDE` points."""
ONE_LAW_RATIO = 2.0
"""The one-law model's error per degree of freedom must be this many times the two segments'."""
SMOOTH_RATIO = 1.75
"""...and the best smooth two-term law's (positive coefficients, see :func:`smooth_terms`) this many times."""
PARAMETERS = {"one law": 3, "segments": 6, "smooth": 5}
"""What each model fits, for its error per degree of freedom (``RSS / (n - p)``): coefficients and
exponents — the one law 2 + 1, two segments 4 + 2, a two-term law 3 + 2."""
MATERIAL_ERROR = 0.01
"""A one-law model that misses the values by less than this (RMS relative error) is kept."""
INTERVAL_FACTOR = 1.5
"""Splits whose RMS relative error is within this factor of the best split's bound the change point."""
SCAN_DENOMINATOR = 3
"""The scan over splits searches each side's start table of growing laws only, with exponents of
denominator up to this (the chosen split's two sides then get the full search, falling laws
included): a falling + growing sum fitted to a side that holds the change would pass it for a law."""
MODES = ("auto", "off", "always")
"""``auto``: split where the test finds a change; ``off``: never; ``always``: every series with
enough points is split at its best change point."""


@dataclass
class ChangePoints:
    """Per-series result of :func:`find_change_points` (rows follow the input's).

    ``segmented[i]``: the series is split; ``right_from[i]`` is then the smallest ``x`` of the right
    part (the points ``x >= right_from`` follow the right law), ``change`` the estimated change point
    and ``low``/``high`` its interval.  ``left``/``right`` hold the two laws (meaningful where
    segmented).  ``one_law_error``, ``segment_error`` and ``smooth_error`` are the RMS relative
    errors the test compared (NaN where not computed).
    """

    segmented: np.ndarray
    right_from: np.ndarray
    change: np.ndarray
    low: np.ndarray
    high: np.ndarray
    left: SingleFits
    right: SingleFits
    one_law_error: np.ndarray
    segment_error: np.ndarray
    smooth_error: np.ndarray

    @classmethod
    def none(cls, count: int) -> ChangePoints:
        nan = np.full(count, np.nan)
        return cls(np.zeros(count, dtype=bool), nan.copy(), nan.copy(), nan.copy(), nan.copy(),
                   SingleFits.empty(count), SingleFits.empty(count), nan.copy(), nan.copy(), nan.copy())


def relative_error(x: np.ndarray, Y: np.ndarray, fits: SingleFits, left_out: np.ndarray | None = None) -> np.ndarray:
    """Per series, the RMS relative error of its law refitted by relative least squares on ``x``; where
    ``left_out[i] >= 0`` (a point the search left out as an outlier) over the other points."""
    out = np.empty(len(Y))
    left_out = np.full(len(Y), -1) if left_out is None else np.asarray(left_out)
    for point in np.unique(left_out).tolist():
        rows = np.flatnonzero(left_out == point)
        keep = np.ones(x.size, dtype=bool)
        if point >= 0:
            keep[point] = False
        sub = SingleFits.empty(rows.size)
        sub.take(np.arange(rows.size), fits, rows)
        deviations = _relative_deviations(x, Y[rows], sub, keep)[:, keep]
        out[rows] = np.sqrt((deviations * deviations).mean(axis=1))
    return out


@lru_cache(maxsize=8)
def smooth_terms(domain: str) -> tuple[tuple[float, float], ...]:
    """The terms ``(α, β)`` of ``x^α·log2^β(x)`` the smooth two-term laws are made of, for parameter
    values that are all ``"≥1"``: α ≤ 3 with denominator ≤ 3, β ≤ 2, and the falling ``x^(-γ)`` of
    strong scaling; all ``">0"``: no log terms (as the search); otherwise the integer powers 1..3."""
    alphas = sorted({Fraction(n, d) for d in (1, 2, 3) for n in range(0, 3 * d + 1)})
    if domain not in ("≥1", ">0"):
        return tuple((float(a), 0.0) for a in alphas if a.denominator == 1 and a > 0)
    logs = (0, 1, 2) if domain == "≥1" else (0,)
    grow = [(float(a), float(b)) for a in alphas for b in logs if (a, b) != (0, 0)]
    fall = [(-g, 0.0) for g in (1 / 3, 1 / 2, 2 / 3, 1.0, 3 / 2, 2.0, 3.0)]
    return tuple(grow + fall)


def smooth_error(x: np.ndarray, Y: np.ndarray, use_numba: bool | None = None) -> np.ndarray:
    """Per series, the RMS relative error of the best ``c0 + a·t1 + b·t2`` with ``a, b > 0`` over every
    pair of terms of :func:`smooth_terms`, fitted by relative least squares (the two-term kernel of the
    refining search, :func:`pmkit.fitting.kernels.pair_search`); inf where no pair has positive
    coefficients."""
    count = len(Y)
    if count == 0:
        return np.zeros(0)
    largest = np.abs(Y).max(axis=1, keepdims=True)
    Ys = Y / np.where(largest > 0, largest, 1.0)
    domain = "≥1" if (x >= 1).all() else ">0" if (x > 0).all() else "any"
    with np.errstate(all="ignore"):
        logs = np.log2(np.where(x > 0, x, 1.0))
        basis = np.stack([np.power(x, a) * (logs ** b if b else 1.0) for a, b in smooth_terms(domain)])
    valid = np.isfinite(basis).all(axis=1)
    first, second = np.triu_indices(len(basis), k=1)
    if use_numba is None:
        use_numba = (count >= NUMBA_MIN_SERIES or "numba" in sys.modules) and numba_enabled()
    found = pair_search(Ys, relative_weights(Ys), np.where(np.isfinite(basis), basis, 0.0), valid, first, second,
                        np.ones(first.size), use_numba=use_numba)
    return found["err"]


def _meeting_points(x: np.ndarray, k: int, left: SingleFits, right: SingleFits, log_scale: bool,
                    steps: int = 64) -> np.ndarray:
    """Where each row's two laws meet between ``x[k-1]`` and ``x[k]``; half way (on the points' scale)
    for rows whose laws do not meet there."""
    lo, hi = x[k - 1], x[k]
    if log_scale:
        grid = np.exp(np.linspace(np.log(lo), np.log(hi), steps + 1))
        half = float(np.sqrt(lo * hi))
    else:
        grid = np.linspace(lo, hi, steps + 1)
        half = (lo + hi) / 2
    scale = np.log(grid) if log_scale else grid
    with np.errstate(all="ignore"):
        gap = left.evaluate(grid) - right.evaluate(grid)
    sign = np.sign(gap)
    crosses = sign[:, :-1] * sign[:, 1:] <= 0
    found = crosses.any(axis=1)
    first = np.argmax(crosses, axis=1)
    rows = np.arange(len(gap))
    g0, g1 = gap[rows, first], gap[rows, first + 1]
    with np.errstate(all="ignore"):
        share = np.where(g0 != g1, g0 / (g0 - g1), 0.5)
        meet = scale[first] + share * (scale[first + 1] - scale[first])
        meet = np.exp(meet) if log_scale else meet
    return np.where(found & np.isfinite(meet), meet, half)


def find_change_points(x: np.ndarray, Y: np.ndarray, one_law: SingleFits, settings: RefineSettings,
                       mode: str = "auto") -> ChangePoints:
    """Test every row of ``Y`` (series × points, finite, measured at ``x``) for a change of law.

    ``one_law`` holds the rows' fits over all points (the search's result).  ``mode`` is one of
    :data:`MODES`.  Rows whose one-law model is constant by a prior (``nonconstancy`` infinite) are
    never split.
    """
    x = np.asarray(x, dtype=float).reshape(-1)
    Y = np.asarray(Y, dtype=float).reshape(-1, x.size)
    count, n = Y.shape
    out = ChangePoints.none(count)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "off" or n < MIN_POINTS or count == 0 or not np.isfinite(settings.nonconstancy):
        return out
    order = np.argsort(x, kind="stable")
    xs, Ys = x[order], Y[:, order]
    if np.unique(xs).size < n:
        return out  # repeated parameter values: no order to split along
    # a point the search left out as an outlier stays out of the one law's error: one law and one
    # outlier explain the series (and its rule was measured); the segments must beat that
    left_out = np.full(count, -1) if one_law.outlier is None else one_law.outlier
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    out.one_law_error[:] = relative_error(xs, Ys, one_law, np.where(left_out >= 0, rank[np.maximum(left_out, 0)], -1))
    rows = np.arange(count) if mode == "always" else np.flatnonzero(out.one_law_error >= MATERIAL_ERROR)
    if rows.size == 0:
        return out
    scan = replace(settings, outlier_factor=0.0, table_denominator=min(settings.table_denominator, SCAN_DENOMINATOR),
                   max_iterations=0, falling=False)
    splits = np.arange(MIN_SIDE, n - MIN_SIDE + 1)
    errors = np.empty((rows.size, splits.size))
    for j, k in enumerate(splits):
        left = refine_series(xs[:k], Ys[rows, :k], scan)
        right = refine_series(xs[k:], Ys[rows, k:], scan)
        dl = _relative_deviations(xs[:k], Ys[rows, :k], left, np.ones(k, dtype=bool))
        dr = _relative_deviations(xs[k:], Ys[rows, k:], right, np.ones(n - k, dtype=bool))
        errors[:, j] = np.sqrt(((dl * dl).sum(axis=1) + (dr * dr).sum(axis=1)) / n)
    best = np.argmin(errors, axis=1)
    best_error = errors[np.arange(rows.size), best]
    out.segment_error[rows] = best_error
    if mode == "always":
        chosen = np.arange(rows.size)
    else:
        per_dof = {name: np.sqrt(n / (n - p)) for name, p in PARAMETERS.items()}
        segmented = best_error * per_dof["segments"]
        chosen = np.flatnonzero(out.one_law_error[rows] * per_dof["one law"] >= ONE_LAW_RATIO * segmented)
        if chosen.size:
            smooth = smooth_error(xs, Ys[rows[chosen]], settings.use_numba)
            out.smooth_error[rows[chosen]] = smooth
            chosen = chosen[smooth * per_dof["smooth"] >= SMOOTH_RATIO * segmented[chosen]]
    if chosen.size == 0:
        return out
    split_of = splits[best[chosen]]
    log_scale = bool((xs > 0).all())
    for k in np.unique(split_of):
        members = chosen[split_of == k]
        target = rows[members]
        left = refine_series(xs[:k], Ys[target, :k], settings)
        right = refine_series(xs[k:], Ys[target, k:], settings)
        out.left.take(target, left)
        out.right.take(target, right)
        out.change[target] = _meeting_points(xs, int(k), left, right, log_scale)
        # the interval: the run of splits around the best whose error is within the factor
        near = errors[members] <= INTERVAL_FACTOR * best_error[members, None]
        j = int(np.flatnonzero(splits == k)[0])
        first = np.full(target.size, j)
        last = np.full(target.size, j)
        for step in range(j - 1, -1, -1):
            extend = (first == step + 1) & near[:, step]
            first[extend] = step
        for step in range(j + 1, splits.size):
            extend = (last == step - 1) & near[:, step]
            last[extend] = step
        # at the edge of the splits the change may lie beyond them: one more step of room
        out.low[target] = xs[splits[first] - 1 - (first == 0)]
        out.high[target] = xs[splits[last] + (last == splits.size - 1)]
        out.right_from[target] = xs[k]
        out.segmented[target] = True
    return out
