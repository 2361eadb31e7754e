"""The refinement search of paper 000 (§3.3), widened and noise-aware, run for many series at once.

For series sharing their points ``x`` (a matrix ``Y``: series × points, all finite), find per
series the simplified PMNF ``c0 + c1·x^α·log2^β(x)`` on the paper's four slices (β = 0, 1, 2 with
α < 6; α = 0 with β < 3):

1. start table: on each slice every exponent with denominator up to ``table_denominator`` (5: the
   integers, halves, thirds, quarters and fifths — a superset of Extra-P's ``Basic`` search space
   and of the paper's integer start); shared by every series, so one kernel call covers them all;
2. refinement: per slice, the Stern–Brocot mediants between its most accurate exponent and that
   exponent's neighbours (bounds) in the table, then between the best and the new bounds (paper
   Fig. 2), until in one iteration no slice gets ``termination`` times more accurate (the paper's
   termination rule); every mediant visited is a candidate for acceptance (below);
3. non-constancy: the accepted hypothesis replaces the constant model only if it is
   ``nonconstancy`` times more accurate (SMAPE) and the values show a monotone trend (see
   :func:`_final_fit`);
4. from 6 points on, one point that no law fits together with the others is left out (see
   :func:`_leave_out_outlier`).

Hypotheses are fitted by relative least squares (weights ``1/y²``: run-to-run noise is a share of
the value) and compared by their RMS relative error times ``acceptance`` to the power of their
*level*: denominator of α minus 1, plus that of β, plus ``mixed_level`` for a product
``x^α·log2^β(x)`` with α, β > 0.  So an exponent one denominator finer, or a log factor on a power,
must be ``acceptance`` (1.5) times more accurate to be chosen — the paper's acceptance threshold,
applied to exponent simplicity instead of to iterations.  The choices and their figures are in
:mod:`pmkit.modelers.refining`.  The accepted hypothesis is refitted by
ordinary least squares (RSS, as the paper fits) for its coefficients.  Mediants differ between
series after the start, so each iteration fits the distinct candidates (few) with one gathered call.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

import numpy as np

from pmkit.fitting.kernels import SLICES, fit_table, numba_enabled, refine_step, relative_search, relative_weights
from pmkit.fitting.leastsquares import adjusted_r2, basis_stats, constant_loo_predictions, smape
from pmkit.fitting.trend import kendall_s, smallest_pvalue, trend_pvalue

MAX_ALPHA = 6
"""Exponents α stay below this (paper: α < 6)."""
MAX_BETA = 3
"""Exponents β stay below this (paper: β < 3)."""
MIN_POINTS = 3
"""Fewer points than this cannot tell a growth law from noise: the model is the constant."""
NUMBA_MIN_SERIES = 10_000
"""Batches smaller than this run the numpy kernels unless numba is already loaded in the process:
importing numba and loading its cached code costs more than the numpy path needs for them
(one-parameter series, 5 points, whole fresh process: 0.26 s numpy vs 0.9 s numba at 1,000
series, 0.64 s vs 0.74 s at 10,000, 4.8 s vs 1.6 s at 100,000)."""

FLAT = 1e-12
"""Series whose values differ by less than this share of their size are constant (rounding only)."""
TREND_BORDERLINE = 2.0
"""Growth that beats the constant model by less than this multiple of the non-constancy threshold
must also pass the trend test; clearer growth need not (noise can swap the flat first points of
``c0 + c1·x³``, which then fails a 5-point trend test although it triples)."""
STRONG_TREND = 1e-3
"""A Mann–Kendall p-value at or below this (reachable from 7 points on) shows growth on its own: the
hypothesis then only has to beat the constant model's SMAPE at all, not by the non-constancy factor."""
OUTLIER_MIN_POINTS = 6
"""Series with at least this many points are checked for one outlier: without it 5 are left, the
refinement's reliable minimum; with 5 points a deviating point cannot be told from the law."""
OUTLIER_FACTOR = 10.0
"""A point is an outlier when the model of the other points misses it by this many times their RMS
relative error (and by at least :data:`OUTLIER_LEAST`)."""
OUTLIER_LEAST = 0.2
"""The smallest relative deviation (symmetric, as in SMAPE) that can make a point an outlier."""
OUTLIER_CANDIDATES = 2
"""Per series, only the points the law of all points misses most (this many, by relative
deviation) are tried as the outlier — a point far off the law of the others is, as a rule, among
them — so the check costs this many searches per series instead of one per point."""
OUTLIER_DISTORTION = 3.0
"""...and when the model of all points is this many times less accurate (RMS relative error over
all points) than the model of the others is on them: no law fits the point together with the rest."""


@dataclass(frozen=True)
class RefineSettings:
    """Thresholds and choices of the search (defaults: the paper's thresholds; others measured)."""

    acceptance: float = 1.5
    termination: float = 2.0
    nonconstancy: float = 2.0
    max_iterations: int = 10
    clean_constant: float = 0.0
    table_denominator: int = 5
    mixed_level: int = 1
    trend_alpha: float = 0.05
    strong_trend: float = STRONG_TREND
    relative_judge: bool = True
    outlier_factor: float = OUTLIER_FACTOR
    use_numba: bool | None = None

    def __post_init__(self) -> None:
        if self.table_denominator < 1:
            raise ValueError(f"table_denominator must be at least 1, got {self.table_denominator}")


@dataclass
class SingleFits:
    """Per-series result arrays; ``constant[i]`` rows have ``c1 = 0`` and no exponents.

    Exponents are exact fractions as (numerator, denominator) integer pairs.  ``notes`` apply to
    every series of the call (they describe the shared points).
    """

    constant: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    c0: np.ndarray
    c1: np.ndarray
    rss: np.ndarray
    smape: np.ndarray
    loo_smape: np.ndarray
    adjusted_r2: np.ndarray
    notes: list[str] = field(default_factory=list)
    outlier: np.ndarray | None = None
    """Per series, the index (into the points) of the one point left out as an outlier, or -1."""

    @classmethod
    def empty(cls, count: int) -> SingleFits:
        zeros = np.zeros((count, 2), dtype=np.int64)
        zeros[:, 1] = 1
        nan = np.full(count, np.nan)
        return cls(np.ones(count, dtype=bool), zeros.copy(), zeros.copy(), nan.copy(), np.zeros(count),
                   nan.copy(), nan.copy(), nan.copy(), nan.copy(), outlier=np.full(count, -1, dtype=np.int64))

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Every series' model at the points ``x`` (series × points)."""
        x = np.asarray(x, dtype=float)
        alpha = self.alpha[:, 0] / self.alpha[:, 1]
        beta = self.beta[:, 0] / self.beta[:, 1]
        with np.errstate(all="ignore"):
            logs = np.log2(np.where(x > 0, x, 1.0))[None, :]
            log_part = np.where(beta[:, None] == 0, 1.0, np.power(np.maximum(logs, 0.0), beta[:, None]))
            term = np.power(x[None, :], alpha[:, None]) * log_part
        term = np.where(self.constant[:, None], 0.0, term)
        return self.c0[:, None] + np.where(self.constant, 0.0, self.c1)[:, None] * term

    def __len__(self) -> int:
        return len(self.constant)


def exponents(slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(α, β) as floats for hypotheses given as slice and exponent fraction."""
    value = num / den
    on_alpha_slice = slices < 3
    alpha = np.where(on_alpha_slice, value, 0.0)
    beta = np.where(on_alpha_slice, slices.astype(float), value)
    return alpha, beta


def basis_rows(x: np.ndarray, slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``x^α · log2(x)^β`` (hypotheses × points) for hypotheses given as slice and fraction."""
    alpha, beta = exponents(np.asarray(slices), np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    with np.errstate(all="ignore"):
        power = np.power(x[None, :], alpha[:, None])
        logs = np.log2(np.where(x > 0, x, 1.0))[None, :]
        log_part = np.where(beta[:, None] == 0, 1.0, np.power(np.maximum(logs, 0.0), beta[:, None]))
    return power * log_part


@dataclass(frozen=True)
class StartTable:
    """The start hypotheses of every slice with their neighbours (refinement bounds) and levels.

    Arrays have one entry per hypothesis, ordered by level so that of equally good hypotheses the
    simpler one wins.  ``lower == value`` means there is no room on the left (α = 0 on a log slice).
    """

    slices: np.ndarray
    num: np.ndarray
    den: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: np.ndarray


def level_of(slices: np.ndarray, num: np.ndarray, den: np.ndarray, mixed_level: int) -> np.ndarray:
    """How complex each hypothesis is: denominator minus 1, plus ``mixed_level`` for ``x^α·log2^β(x)``."""
    slices, num, den = np.asarray(slices), np.asarray(num), np.asarray(den)
    mixed = (slices == 1) | (slices == 2)
    return (den - 1) + np.where(mixed & (num > 0), mixed_level, 0)


@lru_cache(maxsize=32)
def start_table(order: int, log_terms: bool, mixed_level: int) -> StartTable:
    """Every exponent with denominator ≤ ``order`` on each slice (only β = 0 without ``log_terms``)."""
    rows = []
    for s in range(SLICES if log_terms else 1):
        top = MAX_ALPHA if s < 3 else MAX_BETA
        seq = sorted({Fraction(n, d) for d in range(1, order + 1) for n in range(0, top * d + 1)})
        for k, value in enumerate(seq[:-1]):
            if value == 0 and s in (0, 3):
                continue  # α = β = 0 is the constant model, decided separately
            lower = value if k == 0 else seq[k - 1]
            rows.append((s, value, lower, seq[k + 1]))
    slices = np.array([r[0] for r in rows], dtype=np.int64)
    num = np.array([r[1].numerator for r in rows], dtype=np.int64)
    den = np.array([r[1].denominator for r in rows], dtype=np.int64)
    level = level_of(slices, num, den, mixed_level)
    order_by = np.argsort(level, kind="stable")
    lower = np.array([[r[2].numerator, r[2].denominator] for r in rows], dtype=np.int64).reshape(-1, 2)
    upper = np.array([[r[3].numerator, r[3].denominator] for r in rows], dtype=np.int64).reshape(-1, 2)
    return StartTable(slices[order_by], num[order_by], den[order_by], lower[order_by], upper[order_by],
                      level[order_by])


def _key(slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return (slices.astype(np.int64) << 42) | (num.astype(np.int64) << 21) | den.astype(np.int64)


def _unkey(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mask = (1 << 21) - 1
    return keys >> 42, (keys >> 21) & mask, keys & mask


def _penalty(level: np.ndarray, acceptance: float) -> np.ndarray:
    """The factor on the squared relative error: ``acceptance`` per level on the RMS error."""
    with np.errstate(over="ignore"):
        return np.power(float(acceptance), 2.0 * np.asarray(level, dtype=float))


def compiled_kernels(count: int) -> bool:
    """Whether a batch of ``count`` series runs the numba kernels (see :data:`NUMBA_MIN_SERIES`).

    Modelers decide it once per batch (``RefineSettings.use_numba``), so that every group of a batch
    runs the same kernels whatever order the groups are searched in; the numba and numpy twins agree
    to about 1e-12, not to the last bit.
    """
    return (count >= NUMBA_MIN_SERIES or "numba" in sys.modules) and numba_enabled()


def refine_series(x: np.ndarray, Y: np.ndarray, settings: RefineSettings | None = None) -> SingleFits:
    """Search the best simplified-PMNF model of every row of ``Y`` measured at points ``x``.

    ``Y`` must be finite (group rows by their missing points first).  Fewer than
    :data:`MIN_POINTS` points give the constant model; parameter values below 1 rule out log
    terms; negative values leave only integer exponents.  Each row is divided by the power of two
    nearest its largest magnitude first (exact in floating point, so results do not change) and
    the coefficients and RSS scaled back, so squares of huge or tiny values cannot overflow.
    """
    x = np.asarray(x, dtype=float).reshape(-1)
    Y = np.ascontiguousarray(Y, dtype=float).reshape(-1, x.size)
    largest = np.abs(Y).max(axis=1) if Y.size else np.zeros(Y.shape[0])
    usable = np.isfinite(largest) & (largest > 0)
    scale = np.where(usable, np.ldexp(1.0, np.frexp(np.where(usable, largest, 1.0))[1] - 1), 1.0)
    out = _refine_unit(x, Y / scale[:, None], settings)
    out.c0 *= scale
    out.c1 *= scale
    with np.errstate(over="ignore"):
        out.rss *= scale * scale
    return out


def _refine_unit(x: np.ndarray, Y: np.ndarray, settings: RefineSettings | None) -> SingleFits:
    """:func:`refine_series` on rows whose largest magnitude lies in [1, 2)."""
    settings = settings or RefineSettings()
    count, n = Y.shape
    if settings.use_numba is None:
        settings = replace(settings, use_numba=compiled_kernels(count))
    out = SingleFits.empty(count)
    if n == 0 or count == 0:
        return out
    mean = Y.mean(axis=1)
    centred = Y - mean[:, None]
    tss = (centred * centred).sum(axis=1)
    const_in = smape(Y, mean[:, None])
    const_loo = smape(Y, constant_loo_predictions(Y))
    out.c0[:] = mean
    out.rss[:] = tss
    out.smape[:] = const_in
    out.loo_smape[:] = const_loo if n > 1 else np.nan
    out.adjusted_r2[:] = adjusted_r2(tss, tss, n, 1)
    flat = np.ptp(Y, axis=1) <= FLAT * np.abs(Y).max(axis=1)
    if flat.all() or n < MIN_POINTS:
        if n < MIN_POINTS:
            out.notes.append(f"only {n} point{'s' if n != 1 else ''}: too few to tell growth from noise, "
                             "constant model (mean)")
        return out

    log_terms = bool((x >= 1).all())
    negative = bool((x < 0).any())
    if negative:
        out.notes.append("parameter values below 0: integer exponents only, no log terms")
    elif not log_terms:
        out.notes.append("parameter values below 1: no log terms")

    # start table: shared hypotheses, one kernel call for all series
    table = start_table(1 if negative else settings.table_denominator, log_terms, settings.mixed_level)
    stats = basis_stats(basis_rows(x, table.slices, table.num, table.den))
    # relative errors do not depend on the scale: search on values scaled to a largest |y| of 1, so
    # weights 1/y² neither overflow nor underflow whatever the unit
    largest = np.abs(Y).max(axis=1, keepdims=True)
    Ys = Y / np.where(largest > 0, largest, 1.0)
    weights = relative_weights(Ys)
    found = relative_search(Ys, weights, stats.basis, stats.valid, _penalty(table.level, settings.acceptance),
                            np.arange(len(table.slices), dtype=np.int64)[None, :], table.slices, SLICES,
                            use_numba=settings.use_numba)
    rows = np.arange(count)
    first = np.argmin(found["crit"], axis=1)
    pick = np.maximum(found["k"][rows, first], 0)
    acc = np.stack([table.slices[pick], table.num[pick], table.den[pick]], axis=1).astype(np.int64)
    acc_crit = found["crit"][rows, first]
    # each slice's refinement starts at its most accurate start exponent, between its table neighbours
    enabled = found["raw_k"] >= 0
    k = np.maximum(found["raw_k"], 0)
    state = np.zeros((count, SLICES, 6), dtype=np.int64)
    state[..., 0], state[..., 1] = table.lower[k, 0], table.lower[k, 1]
    state[..., 2], state[..., 3] = table.num[k], table.den[k]
    state[..., 4], state[..., 5] = table.upper[k, 0], table.upper[k, 1]
    cen_err = found["raw_err"]
    active = enabled.any(axis=1)

    iterations = 0 if negative else settings.max_iterations
    slot_of = np.arange(SLICES * 2, dtype=np.int64)
    for _ in range(iterations):
        live = np.flatnonzero(active)
        if live.size == 0:
            break
        st = state[live]
        slice_ids = np.broadcast_to(np.arange(SLICES)[None, :, None], (live.size, SLICES, 2))
        num = np.stack([st[..., 0] + st[..., 2], st[..., 2] + st[..., 4]], axis=2)
        den = np.stack([st[..., 1] + st[..., 3], st[..., 3] + st[..., 5]], axis=2)
        has = np.stack([~((st[..., 0] == st[..., 2]) & (st[..., 1] == st[..., 3])),
                        np.ones(st.shape[:2], dtype=bool)], axis=2) & enabled[live][:, :, None]
        keys = _key(slice_ids, num, den)
        uniq, inverse = np.unique(keys[has], return_inverse=True)
        u_slices, u_num, u_den = _unkey(uniq)
        u_stats = basis_stats(basis_rows(x, u_slices, u_num, u_den))
        u_pen = _penalty(level_of(u_slices, u_num, u_den, settings.mixed_level), settings.acceptance)
        table_idx = np.full(keys.shape, -1, dtype=np.int64)
        table_idx[has] = inverse.reshape(-1)
        cand = relative_search(Ys[live], weights[live], u_stats.basis, u_stats.valid, u_pen,
                               table_idx.reshape(live.size, -1), slot_of, SLICES * 2, use_numba=settings.use_numba)
        # a mediant is accepted when its penalised error beats the accepted hypothesis's
        best = np.argmin(cand["crit"], axis=1)
        lrows = np.arange(live.size)
        better = cand["crit"][lrows, best] < acc_crit[live]
        won = live[better]
        acc[won, 0] = best[better] // 2
        acc[won, 1] = num.reshape(live.size, -1)[lrows, best][better]
        acc[won, 2] = den.reshape(live.size, -1)[lrows, best][better]
        acc_crit[won] = cand["crit"][lrows, best][better]
        # the slices move towards their most accurate exponent (paper: Stern–Brocot steps by error)
        err = cand["err"].reshape(live.size, SLICES, 2)
        sub = (active[live].copy(), err, err, st, cen_err[live].copy(), cen_err[live].copy())
        refine_step(*sub, settings.termination, use_numba=settings.use_numba)
        active[live], state[live], cen_err[live] = sub[0], sub[3], sub[5]

    _final_fit(x, Y, acc, np.isfinite(acc_crit) & ~flat, tss, const_in, settings, out)
    if settings.outlier_factor > 0 and n >= OUTLIER_MIN_POINTS:
        _leave_out_outlier(x, Y, settings, out)
    return out


def _relative_deviation(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``|y - f| / ((|y| + |f|) / 2)`` elementwise (SMAPE's term), 0 where both are 0."""
    scale = (np.abs(y) + np.abs(f)) / 2
    with np.errstate(all="ignore"):
        return np.where(scale > 0, np.abs(y - f) / np.where(scale > 0, scale, 1.0), 0.0)


def _relative_deviations(x: np.ndarray, Y: np.ndarray, fits: SingleFits, keep: np.ndarray) -> np.ndarray:
    """Deviations (SMAPE's term) of every point from each series' law, refitted by relative least squares
    on the points ``keep``.

    The laws' own coefficients are ordinary least squares, dominated by the largest values, so
    they may miss a small value by far more than its noise; refitted with weights ``1/y²`` a law
    meets every point it explains within that point's noise.
    """
    largest = np.abs(Y).max(axis=1, keepdims=True)
    Ys = Y / np.where(largest > 0, largest, 1.0)
    unit = SingleFits(fits.constant, fits.alpha, fits.beta, np.zeros(len(fits)), np.ones(len(fits)),
                      fits.rss, fits.smape, fits.loo_smape, fits.adjusted_r2)
    t = unit.evaluate(x)
    with np.errstate(all="ignore"):
        w = np.where(Ys != 0, 1.0 / (Ys * Ys), 0.0) * keep[None, :]
        sw, swt, swtt = w.sum(axis=1), (w * t).sum(axis=1), (w * t * t).sum(axis=1)
        swy, swty = (w * Ys).sum(axis=1), (w * t * Ys).sum(axis=1)
        det = sw * swtt - swt * swt
        solvable = ~fits.constant & (np.abs(det) > 1e-12 * np.maximum(sw * swtt, 1e-300))
        c1 = np.where(solvable, (sw * swty - swt * swy) / np.where(solvable, det, 1.0), 0.0)
        c0 = np.where(sw > 0, (swy - c1 * swt) / np.where(sw > 0, sw, 1.0), 0.0)
    return _relative_deviation(Ys, c0[:, None] + c1[:, None] * t)


def _leave_out_outlier(x: np.ndarray, Y: np.ndarray, settings: RefineSettings, out: SingleFits) -> None:
    """Replace a series' model by the model of its other points where one point is an outlier.

    A point other than the largest ``x`` is an outlier when the law found without it misses it by
    :data:`OUTLIER_LEAST` and by ``outlier_factor`` times its RMS relative error on the other
    points, while the law found with it is :data:`OUTLIER_DISTORTION` times less accurate over all
    points: no law fits the point together with the rest (deviations from relative least-squares
    fits, see :func:`_relative_deviations`).  One point is taken out at most: the one missed most,
    relative to the others' error.  The largest ``x`` stays: a law's growth shows most there, so a
    deviating last point may be the law.
    """
    count, n = Y.shape
    inner = replace(settings, outlier_factor=0.0)
    best_ratio = np.zeros(count)
    everything = np.ones(n, dtype=bool)
    deviations = _relative_deviations(x, Y, out, everything)
    full = np.sqrt((deviations ** 2).mean(axis=1))
    # only the points the law of all points misses most can be outliers: search without those
    order = np.argsort(-deviations[:, : n - 1], axis=1, kind="stable")[:, :OUTLIER_CANDIDATES]
    for j in range(n - 1):
        candidates = np.flatnonzero((order == j).any(axis=1) & (full > 0))
        if candidates.size == 0:
            continue
        keep = everything.copy()
        keep[j] = False
        Yc = Y[candidates]
        sub = refine_series(x[keep], Yc[:, keep], inner)
        dev = _relative_deviations(x, Yc, sub, keep)
        spread = np.sqrt((dev[:, keep] ** 2).mean(axis=1))
        with np.errstate(all="ignore"):
            ratio = np.where(spread > 0, dev[:, j] / np.where(spread > 0, spread, 1.0), np.inf)
        distorts = full[candidates] >= OUTLIER_DISTORTION * spread
        hit = ((dev[:, j] >= OUTLIER_LEAST) & (ratio >= settings.outlier_factor) & distorts
               & (ratio > best_ratio[candidates]))
        if not hit.any():
            continue
        rows = candidates[hit]
        best_ratio[rows] = ratio[hit]
        for name in ("constant", "alpha", "beta", "c0", "c1", "rss", "smape", "loo_smape", "adjusted_r2"):
            getattr(out, name)[rows] = getattr(sub, name)[hit]
        out.outlier[rows] = j


def _final_fit(x: np.ndarray, Y: np.ndarray, acc: np.ndarray, found: np.ndarray, tss: np.ndarray,
               const_in: np.ndarray, settings: RefineSettings, out: SingleFits) -> None:
    """Refit the accepted hypotheses by least squares and keep those that pass the non-constancy test.

    The test compares the constant model's in-sample SMAPE with the hypothesis's leave-one-out
    SMAPE (a two-coefficient fit always beats the mean in-sample, so the hypothesis is charged for
    its extra coefficient), the better of its ordinary and its relative least-squares fit (the
    ordinary fit, which the model keeps, can miss the small values of a wide range by far more
    than their noise).  A strong trend (Mann–Kendall p ≤ ``strong_trend``, from 7 points on)
    needs only a gain above 1.  Where the points allow it (``x ≥ 0``, enough points to reach
    ``trend_alpha``), borderline growth (below :data:`TREND_BORDERLINE` times the threshold) must
    also show a monotone trend (Mann–Kendall, :mod:`pmkit.fitting.trend`), since every hypothesis
    is monotone.
    """
    rows = np.flatnonzero(found)
    if rows.size == 0:
        return
    n = x.size
    keys = _key(acc[rows, 0], acc[rows, 1], acc[rows, 2])
    uniq, inverse = np.unique(keys, return_inverse=True)
    inverse = inverse.reshape(-1)
    u_slices, u_num, u_den = _unkey(uniq)
    basis = basis_rows(x, u_slices, u_num, u_den)
    stats = basis_stats(basis)
    fit = fit_table(Y[rows], stats.basis, stats.weights, stats.leverage, stats.mean, stats.valid,
                    inverse.reshape(-1, 1).astype(np.int64), use_numba=settings.use_numba)
    c0, c1 = fit["c0"][:, 0], fit["c1"][:, 0]
    rss, sm, loo = fit["rss"][:, 0], fit["smape"][:, 0], fit["loo_smape"][:, 0]
    if settings.clean_constant > 0:
        c0, c1, rss, sm, loo = _clean_constant(Y[rows], basis[inverse], c0, c1, rss, sm, loo,
                                               settings.clean_constant)
    # non-constancy: keep the hypothesis only if it beats the constant model's SMAPE clearly
    before, after = const_in[rows], loo
    if settings.relative_judge:
        after = np.fmin(loo, _relative_loo_smape(basis[inverse], Y[rows]))
    with np.errstate(all="ignore"):
        gain = np.where(after <= 0, np.where(before > 0, np.inf, 1.0), before / np.where(after > 0, after, 1.0))
    ok = np.isfinite(c1) & (c1 != 0) & np.isfinite(rss) & (gain >= settings.nonconstancy)
    if settings.trend_alpha > 0 and (x >= 0).all() and smallest_pvalue(n) <= settings.trend_alpha:
        # every hypothesis is monotone in x ≥ 0: borderline growth must show a monotone trend
        borderline = gain < TREND_BORDERLINE * settings.nonconstancy
        pvalue = trend_pvalue(kendall_s(x, Y[rows]), n)
        ok &= ~borderline | (pvalue <= settings.trend_alpha)
        strong_possible = smallest_pvalue(n) <= settings.strong_trend
        if settings.strong_trend > 0 and strong_possible and np.isfinite(settings.nonconstancy):
            # a trend noise would produce once in a thousand shows growth by itself: the
            # hypothesis then needs only to beat the constant model (an infinite threshold
            # still means "constant")
            strong = np.isfinite(c1) & (c1 != 0) & np.isfinite(rss) & (gain > 1) & (pvalue <= settings.strong_trend)
            ok |= strong
    if not np.isfinite(settings.nonconstancy):
        ok[:] = False  # an infinite threshold means "constant", even for an exact fit (gain = inf)
    rows, inv = rows[ok], inverse[ok]
    out.constant[rows] = False
    alpha, beta = _fraction_pairs(u_slices[inv], u_num[inv], u_den[inv])
    out.alpha[rows], out.beta[rows] = alpha, beta
    out.c0[rows], out.c1[rows] = c0[ok], c1[ok]
    out.rss[rows], out.smape[rows], out.loo_smape[rows] = rss[ok], sm[ok], loo[ok]
    out.adjusted_r2[rows] = adjusted_r2(rss[ok], tss[rows], n, 2)


def _relative_loo_smape(B: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Leave-one-out SMAPE of ``c0 + c1·b`` fitted by relative least squares (weights ``1/y²``), per row.

    Closed form: the deleted residual is the residual over ``1 - h`` with the weighted hat matrix's
    diagonal ``h``; rows of ``B`` are each series' basis values at its points.
    """
    largest = np.abs(Y).max(axis=1, keepdims=True)
    Ys = Y / np.where(largest > 0, largest, 1.0)
    with np.errstate(all="ignore"):
        w = np.where(Ys != 0, 1.0 / (Ys * Ys), 0.0)
        sw, swb, swbb = w.sum(axis=1), (w * B).sum(axis=1), (w * B * B).sum(axis=1)
        swy, swby = (w * Ys).sum(axis=1), (w * B * Ys).sum(axis=1)
        det = sw * swbb - swb * swb
        c1 = (sw * swby - swb * swy) / det
        c0 = (swy - c1 * swb) / sw
        residual = Ys - c0[:, None] - c1[:, None] * B
        h = w * (swbb[:, None] - 2 * B * swb[:, None] + B * B * sw[:, None]) / det[:, None]
        predicted = np.where(1 - h > 1e-12, Ys - residual / (1 - h), np.inf)
    return np.where(np.isfinite(det) & (det > 0), smape(Ys, predicted), np.inf)


def _fraction_pairs(slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    on_alpha = slices < 3
    alpha = np.stack([np.where(on_alpha, num, 0), np.where(on_alpha, den, 1)], axis=1)
    beta = np.stack([np.where(on_alpha, slices, num), np.where(on_alpha, 1, den)], axis=1)
    return alpha.astype(np.int64), beta.astype(np.int64)


def _clean_constant(Y: np.ndarray, basis: np.ndarray, c0: np.ndarray, c1: np.ndarray, rss: np.ndarray,
                    sm: np.ndarray, loo: np.ndarray, relative: float) -> tuple[np.ndarray, ...]:
    """Refit through the origin where ``|c0|`` is below ``relative`` × the smallest ``|y|``."""
    small = np.abs(c0) < relative * np.abs(Y).min(axis=1)
    if not small.any():
        return c0, c1, rss, sm, loo
    b, y = basis[small], Y[small]
    bb = (b * b).sum(axis=1)
    k = (b * y).sum(axis=1) / bb
    predicted = k[:, None] * b
    residual = y - predicted
    leverage = b * b / bb[:, None]
    with np.errstate(all="ignore"):
        loo_pred = np.where(1 - leverage > 1e-12, y - residual / (1 - leverage), np.inf)
    c0, c1, rss, sm, loo = c0.copy(), c1.copy(), rss.copy(), sm.copy(), loo.copy()
    c0[small], c1[small] = 0.0, k
    rss[small] = (residual * residual).sum(axis=1)
    sm[small] = smape(y, predicted)
    loo[small] = smape(y, loo_pred)
    return c0, c1, rss, sm, loo
