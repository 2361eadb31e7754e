"""The hot loops of the refining search, compiled with numba and mirrored in plain numpy.

``relative_search`` fits hypotheses by relative (``1/y²``-weighted) least squares and keeps, per series
and slice, the one with the smallest penalised error — over the shared start table or over each series'
own mediants. ``pair_search`` does the same for two-term hypotheses ``c0 + a·f + b·g`` (a falling and a
growing term, both coefficients positive). ``fit_table`` fits, for every series, the hypotheses named in
its row of an index table by ordinary least squares (shared basis rows, closed form) and returns RSS,
SMAPE and leave-one-out SMAPE tables: the final coefficients and the non-constancy test. ``refine_step``
takes one Stern–Brocot step for every active series and slice and applies the termination threshold of
paper 000 §3.3 (rules stated in :mod:`pmkit.fitting.sternbrocot`). For the prediction intervals
(:mod:`pmkit.fitting.alternatives`, :mod:`pmkit.intervals`): ``line_fits`` solves the relative line fits of
every series and hypothesis from their weighted sums, ``earlier_repeats`` finds alternatives that repeat
an earlier one, ``multi_fits`` refits every multi-parameter alternative (around numpy's own ``pinv``),
``mixture_terms`` evaluates the mixture's distribution function, ``single_ratios`` weighs the
one-parameter hypotheses and ``smallest`` picks the few kept per series — each equal to its numpy
version to the last bit (numpy's summation order and scipy's own ``stdtr`` kept). All exist twice: a numba loop
(``cache=True``, compiled on first use, numba imported lazily so ``pmkit --help`` stays light) and a
numpy version that is the reference and the fallback. ``PMKIT_NO_NUMBA=1`` forces the numpy path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import numpy as np

from pmkit.fitting.leastsquares import DEGENERATE, loo_predictions, relative_rss, rowwise, smape

NO_NUMBA_ENV = "PMKIT_NO_NUMBA"
SLICES = 5
"""Slices of the (α, β) plane: β = 0, 1, 2 (α varies), α = 0 (β varies) and β = 0 with α < 0 (falling laws,
searched by the magnitude of α)."""
FLAT_BASIS = 1e-20
"""A basis whose weighted spread is below this share of its weighted square is (numerically) constant."""
PAIR_DEGENERATE = 1e-10
"""Two basis rows whose weighted correlation leaves less than this share of ``Σf²·Σg²`` are collinear."""
RELATIVE_FLOOR = 1e-6
"""Relative weights treat ``|y|`` below this share of the series' largest ``|y|`` as that share (zeros)."""

PARALLEL_MIN_SERIES = 20_000
"""From this many series on, a per-series kernel runs on several threads, each on a block of rows (the
kernels release the GIL; every series is independent, so the results are the same).  Measured on 2
CPUs, one of them busy with another process: the relative search of 100,000 five-point series over 200
hypotheses took 0.21 s of wall-clock time on two threads against 0.26 s on one (best of 8 each; the
same 0.25 s of CPU)."""

_compiled: dict[str, Callable[..., Any]] = {}


def numba_enabled() -> bool:
    """Whether the compiled kernels are used: numba importable and ``PMKIT_NO_NUMBA`` not set."""
    if os.environ.get(NO_NUMBA_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def _jit(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    compiled = _compiled.get(name)
    if compiled is None:
        import numba

        compiled = _compiled[name] = numba.njit(cache=True, nogil=True)(func)
    return compiled


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


_pools: dict[int, Any] = {}
"""The kernel threads, one pool per count of helper threads, made on first use and kept for the process
(dropped in a forked child, whose copy of the pool has no threads)."""
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pools.clear)


def _pool(helpers: int) -> Any:
    pool = _pools.get(helpers)
    if pool is None:
        from concurrent.futures import ThreadPoolExecutor

        pool = _pools.setdefault(helpers, ThreadPoolExecutor(max_workers=helpers, thread_name_prefix="pmkit-kernel"))
    return pool


def run_rows(kernel: Callable[..., Any], count: int, args: tuple, rows: tuple[bool, ...]) -> None:
    """``kernel(*args)`` over ``count`` series, in blocks of rows on several threads when there are many:
    ``rows[a]`` says whether argument ``a`` has a row per series (sliced per block) or is shared.

    The first block runs on the calling thread and the others on threads kept for the process, rather
    than on a pool made and shut down per call: the two-parameter model stage makes ~185 such calls, and
    starting their ~350 threads took ~0.75 s of its wall time (cProfile, in ``Thread.start``).  Measured by
    ``pmkit.model`` on bench/end_to_end.py's 100,000 two-parameter series, one process, 5 alternations on
    the quiet machine (2026-11-28 08:04 UTC): wall best 5.69 → 5.34 s, median 6.17 → 5.61 s; CPU best 7.69
    → 7.46 s, median 8.30 → 7.80 s.  The blocks and the kernel are the same, so are the results to the
    last bit."""
    workers = min(_cpus(), 8) if count >= PARALLEL_MIN_SERIES else 1
    if workers == 1:
        kernel(*args)
        return
    bounds = [count * w // workers for w in range(workers + 1)]
    blocks = [tuple(a[lo:hi] if per_row else a for a, per_row in zip(args, rows, strict=True))
              for lo, hi in pairwise(bounds)]
    pool = _pool(workers - 1)
    others = [pool.submit(kernel, *block) for block in blocks[1:]]
    try:
        kernel(*blocks[0])
    finally:
        for done in others:
            done.result()


# ---------------------------------------------------------------------------------------------
# fit_table


def _fit_table_loop(Y, B, W, L, M, V, idx, rss, sm, loo, c0, c1, want_loo):
    n_series, n = Y.shape
    k_cols = idx.shape[1]
    for i in range(n_series):
        ymean = 0.0
        for j in range(n):
            ymean += Y[i, j]
        ymean /= n
        for k in range(k_cols):
            h = idx[i, k]
            if h < 0 or not V[h]:
                rss[i, k] = np.inf
                sm[i, k] = np.inf
                loo[i, k] = np.inf
                c0[i, k] = np.nan
                c1[i, k] = np.nan
                continue
            a = 0.0
            for j in range(n):
                a += W[h, j] * Y[i, j]
            b = ymean - a * M[h]
            r2 = 0.0
            s1 = 0.0
            s2 = 0.0
            for j in range(n):
                y = Y[i, j]
                p = b + a * B[h, j]
                r = y - p
                r2 += r * r
                if np.isfinite(p):
                    t = abs(y) + abs(p)
                    if t > 0.0:
                        s1 += 2.0 * abs(r) / t
                else:
                    s1 += 2.0
                if not want_loo:
                    continue
                room = 1.0 - L[h, j]
                if room > DEGENERATE:
                    q = y - r / room
                    if np.isfinite(q):
                        t = abs(y) + abs(q)
                        if t > 0.0:
                            s2 += 2.0 * abs(y - q) / t
                    else:
                        s2 += 2.0
                else:
                    s2 += 2.0
            rss[i, k] = r2
            sm[i, k] = 100.0 * s1 / n
            loo[i, k] = 100.0 * s2 / n if want_loo else np.nan
            c0[i, k] = b
            c1[i, k] = a


def _fit_table_numpy(Y, B, W, L, M, V, idx, rss, sm, loo, c0, c1, want_loo):
    ymean = Y.mean(axis=1)
    for k in range(idx.shape[1]):
        h = idx[:, k]
        ok = (h >= 0) & V[np.maximum(h, 0)]
        hh = np.where(ok, h, 0)
        a = (W[hh] * Y).sum(axis=1)
        b = ymean - a * M[hh]
        with np.errstate(all="ignore"):
            predicted = b[:, None] + a[:, None] * B[hh]
            residual = Y - predicted
            rss[:, k] = np.where(ok, (residual * residual).sum(axis=1), np.inf)
            sm[:, k] = np.where(ok, smape(Y, predicted), np.inf)
            if want_loo:
                loo[:, k] = np.where(ok, smape(Y, loo_predictions(Y, predicted, L[hh])), np.inf)
            else:
                loo[:, k] = np.where(ok, np.nan, np.inf)
        c0[:, k] = np.where(ok, b, np.nan)
        c1[:, k] = np.where(ok, a, np.nan)


def fit_table(Y: np.ndarray, basis: np.ndarray, weights: np.ndarray, leverage: np.ndarray, mean: np.ndarray,
              valid: np.ndarray, idx: np.ndarray, *, loo: bool = True,
              use_numba: bool | None = None) -> dict[str, np.ndarray]:
    """Fit ``c0 + c1·basis[idx[i, k]]`` to row ``i`` of ``Y`` for every (i, k).

    ``basis``, ``weights``, ``leverage`` (hypotheses × points), ``mean`` and ``valid`` (hypotheses)
    come from :func:`pmkit.fitting.leastsquares.basis_stats`; ``idx`` is (series × K), -1 for "no
    hypothesis" (its errors are inf).  Returns tables ``rss``, ``smape``, ``loo_smape``, ``c0``, ``c1``;
    with ``loo=False`` the leave-one-out SMAPE is skipped (NaN, inf for absent hypotheses).
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    shape = idx.shape
    out = {name: np.empty(shape) for name in ("rss", "smape", "loo_smape", "c0", "c1")}
    args = (Y, np.ascontiguousarray(basis, dtype=np.float64), np.ascontiguousarray(weights, dtype=np.float64),
            np.ascontiguousarray(leverage, dtype=np.float64), np.ascontiguousarray(mean, dtype=np.float64),
            np.ascontiguousarray(valid, dtype=np.bool_), idx,
            out["rss"], out["smape"], out["loo_smape"], out["c0"], out["c1"], bool(loo))
    if use_numba is None:
        use_numba = numba_enabled()
    if use_numba and shape[0] > 0:
        _jit("fit_table", _fit_table_loop)(*args)
    else:
        _fit_table_numpy(*args)
    return out


# ---------------------------------------------------------------------------------------------
# relative_search


def _relative_search_loop(Y, W, B, valid, positive, rising, pen2, idx, shared, slot_of, best_k, best_crit,
                          best_err, raw_k, raw_rel):
    n_series, n = Y.shape
    k_cols = idx.shape[1]
    for i in range(n_series):
        sw = 0.0
        swy = 0.0
        for j in range(n):
            sw += W[i, j]
            swy += W[i, j] * Y[i, j]
        ybar = swy / sw
        row = 0 if shared else i
        for k in range(k_cols):
            h = idx[row, k]
            if h < 0 or not valid[h]:
                continue
            swb = 0.0
            for j in range(n):
                swb += W[i, j] * B[h, j]
            bbar = swb / sw
            sbb = 0.0
            sby = 0.0
            for j in range(n):
                d = B[h, j] - bbar
                sbb += W[i, j] * d * d
                sby += W[i, j] * d * (Y[i, j] - ybar)
            # Σ w·b² = Σ w·(b - b̄)² + Σw·b̄²: the spread must be a visible share of it
            if not sbb > FLAT_BASIS * (sbb + sw * bbar * bbar):
                continue
            c1 = sby / sbb
            if (positive[h] or rising[i]) and not c1 > 0.0:
                continue
            c0 = ybar - c1 * bbar
            rel = 0.0
            for j in range(n):
                r = Y[i, j] - c0 - c1 * B[h, j]
                rel += W[i, j] * r * r
            if not np.isfinite(rel):
                continue
            crit = np.inf if pen2[h] == np.inf else rel * pen2[h]
            s = slot_of[k]
            if crit < best_crit[i, s]:
                best_crit[i, s] = crit
                best_err[i, s] = np.sqrt(rel / n)
                best_k[i, s] = k
            if rel < raw_rel[i, s]:
                raw_rel[i, s] = rel
                raw_k[i, s] = k


def _relative_search_numpy(Y, W, B, valid, positive, rising, pen2, idx, shared, slot_of, best_k, best_crit,
                           best_err, raw_k, raw_rel):
    n = Y.shape[1]
    sw = W.sum(axis=1)
    ybar = (W * Y).sum(axis=1) / sw
    for k in range(idx.shape[1]):
        h = np.broadcast_to(idx[0, k], (Y.shape[0],)) if shared else idx[:, k]
        ok = (h >= 0) & valid[np.maximum(h, 0)]
        hh = np.where(ok, h, 0)
        b = B[hh]
        with np.errstate(all="ignore"):
            bbar = (W * b).sum(axis=1) / sw
            d = b - bbar[:, None]
            sbb = (W * d * d).sum(axis=1)
            sby = (W * d * (Y - ybar[:, None])).sum(axis=1)
            ok &= sbb > FLAT_BASIS * (sbb + sw * bbar * bbar)
            c1 = sby / np.where(ok, sbb, 1.0)
            ok &= ~(positive[hh] | rising) | (c1 > 0)
            c0 = ybar - c1 * bbar
            r = Y - c0[:, None] - c1[:, None] * b
            rel = (W * r * r).sum(axis=1)
            ok &= np.isfinite(rel)
            p = pen2[hh]
            crit = np.where(p == np.inf, np.inf, rel * p)
        s = slot_of[k]
        better = ok & (crit < best_crit[:, s])
        best_crit[better, s] = crit[better]
        best_err[better, s] = np.sqrt(rel[better] / n)
        best_k[better, s] = k
        closer = ok & (rel < raw_rel[:, s])
        raw_rel[closer, s] = rel[closer]
        raw_k[closer, s] = k


def relative_weights(Y: np.ndarray) -> np.ndarray:
    """``1 / y²`` per value, with ``|y|`` floored at 10⁻⁶ of the series' largest ``|y|`` (zeros)."""
    scale = np.abs(Y)
    floor = RELATIVE_FLOOR * scale.max(axis=1, keepdims=True)
    scale = np.maximum(scale, np.where(floor > 0, floor, 1.0))
    return 1.0 / (scale * scale)


def relative_search(Y: np.ndarray, weights: np.ndarray, basis: np.ndarray, valid: np.ndarray, pen2: np.ndarray,
                    idx: np.ndarray, slot_of: np.ndarray, slots: int, *, positive: np.ndarray | None = None,
                    rising: np.ndarray | None = None, use_numba: bool | None = None) -> dict[str, np.ndarray]:
    """Fit ``c0 + c1·basis[h]`` to every row of ``Y`` by relative least squares; keep the best per slot.

    Each hypothesis ``h`` is fitted with weights ``1/y²`` (``weights``, from
    :func:`relative_weights`), so its error ``rel = Σ ((y - p) / y)²`` is the sum of squared
    relative residuals; its criterion is ``rel · pen2[h]``. Where ``positive[h]`` (default: nowhere)
    the fit counts only with ``c1 > 0`` (a falling term ``c1·x^(-γ)`` must fall). ``idx`` is (1 × K)
    for hypotheses shared by every series or (series × K), -1 for none; column ``k`` competes in
    slot ``slot_of[k]``. Returns (series × slots) arrays: ``k``, ``crit`` and ``err`` (RMS relative
    error ``sqrt(rel / n)``) of the column with the smallest criterion, and ``raw_k``, ``raw_err``
    of the column with the smallest error; -1 and inf where a slot has no valid hypothesis.
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    count = Y.shape[0]
    out = {"k": np.full((count, slots), -1, dtype=np.int64), "crit": np.full((count, slots), np.inf),
           "err": np.full((count, slots), np.inf), "raw_k": np.full((count, slots), -1, dtype=np.int64),
           "raw_err": np.full((count, slots), np.inf)}
    if positive is None:
        positive = np.zeros(len(valid), dtype=bool)
    if rising is None:
        rising = np.zeros(count, dtype=bool)
    args = (Y, np.ascontiguousarray(weights, dtype=np.float64), np.ascontiguousarray(basis, dtype=np.float64),
            np.ascontiguousarray(valid, dtype=np.bool_), np.ascontiguousarray(positive, dtype=np.bool_),
            np.ascontiguousarray(rising, dtype=np.bool_), np.ascontiguousarray(pen2, dtype=np.float64), idx,
            bool(idx.shape[0] == 1 and count != 1), np.ascontiguousarray(slot_of, dtype=np.int64),
            out["k"], out["crit"], out["err"], out["raw_k"], out["raw_err"])
    if use_numba is None:
        use_numba = numba_enabled()
    if use_numba and count > 0:
        shared = args[8]
        rows = (True, True, False, False, False, True, False, not shared, False, False, True, True, True, True, True)
        run_rows(_jit("relative_search", _relative_search_loop), count, args, rows)
    else:
        _relative_search_numpy(*args)
    out["raw_err"] = np.sqrt(out["raw_err"] / max(Y.shape[1], 1))
    return out


# ---------------------------------------------------------------------------------------------
# pair_search


def _pair_search_loop(Y, W, B, valid, first, second, pen2, best_k, best_crit, best_err):
    n_series, n = Y.shape
    rows = B.shape[0]
    mean = np.empty(rows)
    srr = np.empty(rows)
    sry = np.empty(rows)
    for i in range(n_series):
        sw = 0.0
        swy = 0.0
        for j in range(n):
            sw += W[i, j]
            swy += W[i, j] * Y[i, j]
        ybar = swy / sw
        syy = 0.0
        for j in range(n):
            dy = Y[i, j] - ybar
            syy += W[i, j] * dy * dy
        # per basis row once: weighted mean, spread and covariance with y
        for r in range(rows):
            if not valid[r]:
                continue
            m = 0.0
            for j in range(n):
                m += W[i, j] * B[r, j]
            m /= sw
            a = 0.0
            c = 0.0
            for j in range(n):
                d = B[r, j] - m
                a += W[i, j] * d * d
                c += W[i, j] * d * (Y[i, j] - ybar)
            mean[r] = m
            srr[r] = a
            sry[r] = c
        for k in range(first.shape[0]):
            f = first[k]
            g = second[k]
            if not (valid[f] and valid[g]):
                continue
            sfg = 0.0
            for j in range(n):
                sfg += W[i, j] * (B[f, j] - mean[f]) * (B[g, j] - mean[g])
            sff = srr[f]
            sgg = srr[g]
            det = sff * sgg - sfg * sfg
            if not det > PAIR_DEGENERATE * sff * sgg:
                continue
            a = (sgg * sry[f] - sfg * sry[g]) / det
            b = (sff * sry[g] - sfg * sry[f]) / det
            if not (a > 0.0 and b > 0.0):
                continue
            # the fit's weighted residual sum of squares, Σw·dy² - a·Σw·df·dy - b·Σw·dg·dy (rounding
            # can take it below 0 for an exact fit; the winner's is recomputed from its residuals)
            rel = max(syy - a * sry[f] - b * sry[g], 0.0)
            crit = rel * pen2[k]
            if crit < best_crit[i]:
                best_crit[i] = crit
                best_err[i] = rel
                best_k[i] = k
        k = best_k[i]
        if k >= 0:
            f = first[k]
            g = second[k]
            sfg = 0.0
            for j in range(n):
                sfg += W[i, j] * (B[f, j] - mean[f]) * (B[g, j] - mean[g])
            det = srr[f] * srr[g] - sfg * sfg
            a = (srr[g] * sry[f] - sfg * sry[g]) / det
            b = (srr[f] * sry[g] - sfg * sry[f]) / det
            c0 = ybar - a * mean[f] - b * mean[g]
            rel = 0.0
            for j in range(n):
                r = Y[i, j] - c0 - a * B[f, j] - b * B[g, j]
                rel += W[i, j] * r * r
            best_crit[i] = rel * pen2[k]
            best_err[i] = np.sqrt(rel / n)


def _pair_search_numpy(Y, W, B, valid, first, second, pen2, best_k, best_crit, best_err):
    n = Y.shape[1]
    sw = W.sum(axis=1)
    ybar = (W * Y).sum(axis=1) / sw
    dy = Y - ybar[:, None]
    syy = (W * dy * dy).sum(axis=1)
    mean = rowwise(W, B) / sw[:, None]                              # series × rows (per row: see rowwise)
    centred = B[None, :, :] - mean[:, :, None]                     # series × rows × points
    srr = np.einsum("sn,srn,srn->sr", W, centred, centred)
    sry = np.einsum("sn,srn,sn->sr", W, centred, dy)
    for k in range(first.shape[0]):
        f, g = first[k], second[k]
        if not (valid[f] and valid[g]):
            continue
        with np.errstate(all="ignore"):
            sfg = (W * centred[:, f] * centred[:, g]).sum(axis=1)
            sff, sgg = srr[:, f], srr[:, g]
            det = sff * sgg - sfg * sfg
            ok = det > PAIR_DEGENERATE * sff * sgg
            safe = np.where(ok, det, 1.0)
            a = (sgg * sry[:, f] - sfg * sry[:, g]) / safe
            b = (sff * sry[:, g] - sfg * sry[:, f]) / safe
            ok &= (a > 0) & (b > 0)
            rel = np.maximum(syy - a * sry[:, f] - b * sry[:, g], 0.0)
            crit = rel * pen2[k]
        better = ok & (crit < best_crit)
        best_crit[better] = crit[better]
        best_k[better] = k
    rows = np.flatnonzero(best_k >= 0)
    if rows.size:
        k = best_k[rows]
        f, g = first[k], second[k]
        cf, cg = centred[rows, f], centred[rows, g]
        w = W[rows]
        sfg = (w * cf * cg).sum(axis=1)
        sff, sgg = srr[rows, f], srr[rows, g]
        det = sff * sgg - sfg * sfg
        a = (sgg * sry[rows, f] - sfg * sry[rows, g]) / det
        b = (sff * sry[rows, g] - sfg * sry[rows, f]) / det
        r = dy[rows] - a[:, None] * cf - b[:, None] * cg
        rel = (w * r * r).sum(axis=1)
        best_crit[rows] = rel * pen2[k]
        best_err[rows] = np.sqrt(rel / n)


def pair_search(Y: np.ndarray, weights: np.ndarray, basis: np.ndarray, valid: np.ndarray, first: np.ndarray,
                second: np.ndarray, pen2: np.ndarray, *, use_numba: bool | None = None) -> dict[str, np.ndarray]:
    """Fit ``c0 + a·basis[first[k]] + b·basis[second[k]]`` to every row of ``Y`` for each pair ``k``, by
    relative least squares, and keep per row the pair with the smallest ``rel · pen2[k]``.

    Only fits with ``a > 0`` and ``b > 0`` count: a falling term that falls and a growing term that
    grows (the two-term strong-scaling laws).  Each basis row's weighted mean, spread and covariance
    with ``y`` are computed once per series, so a pair costs one pass over the points (its
    cross-product) and its error follows in closed form; the winner's error is recomputed from its
    residuals.  Returns per row ``k`` (-1 where no pair counts),
    ``crit`` and ``err`` (RMS relative error), as :func:`relative_search` does per slot.
    """
    Y = np.ascontiguousarray(Y, dtype=np.float64)
    count = Y.shape[0]
    out = {"k": np.full(count, -1, dtype=np.int64), "crit": np.full(count, np.inf), "err": np.full(count, np.inf)}
    args = (Y, np.ascontiguousarray(weights, dtype=np.float64), np.ascontiguousarray(basis, dtype=np.float64),
            np.ascontiguousarray(valid, dtype=np.bool_), np.ascontiguousarray(first, dtype=np.int64),
            np.ascontiguousarray(second, dtype=np.int64), np.ascontiguousarray(pen2, dtype=np.float64),
            out["k"], out["crit"], out["err"])
    if use_numba is None:
        use_numba = numba_enabled()
    if use_numba and count > 0:
        _jit("pair_search", _pair_search_loop)(*args)
    else:
        _pair_search_numpy(*args)
    return out


# ---------------------------------------------------------------------------------------------
# refine_step


def _refine_step_loop(active, cand_err, state, cen_err, termination):
    n_series = active.shape[0]
    for i in range(n_series):
        if not active[i]:
            continue
        most = 0.0
        for s in range(state.shape[1]):
            lo_n, lo_d, be_n, be_d, up_n, up_d = (state[i, s, 0], state[i, s, 1], state[i, s, 2],
                                                  state[i, s, 3], state[i, s, 4], state[i, s, 5])
            cl = cand_err[i, s, 0]
            cr = cand_err[i, s, 1]
            before = cen_err[i, s]
            if cl < before and cl <= cr:
                state[i, s, 2] = lo_n + be_n
                state[i, s, 3] = lo_d + be_d
                state[i, s, 4] = be_n
                state[i, s, 5] = be_d
                cen_err[i, s] = cl
            elif cr < before:
                state[i, s, 0] = be_n
                state[i, s, 1] = be_d
                state[i, s, 2] = be_n + up_n
                state[i, s, 3] = be_d + up_d
                cen_err[i, s] = cr
            else:
                if not (lo_n == be_n and lo_d == be_d):
                    state[i, s, 0] = lo_n + be_n
                    state[i, s, 1] = lo_d + be_d
                state[i, s, 4] = be_n + up_n
                state[i, s, 5] = be_d + up_d
            after = cen_err[i, s]
            # gain = before / after, how many times better the slice got (0/0 and inf/inf are 1)
            if after <= 0.0:
                gain = np.inf if before > 0.0 else 1.0
            elif before == np.inf:
                gain = 1.0 if after == np.inf else np.inf
            else:
                gain = before / after
            if gain > most:
                most = gain
        if most < termination:
            active[i] = False


def _ratio_numpy(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """How many times better ``new`` is than ``old`` (smaller is better); 0/0 and inf/inf are 1."""
    with np.errstate(all="ignore"):
        plain = old / np.where(new > 0, new, 1.0)
    out = np.where(new <= 0, np.where(old > 0, np.inf, 1.0), plain)
    return np.where((new > 0) & np.isinf(old), np.where(np.isinf(new), 1.0, np.inf), out)


def _refine_step_numpy(active, cand_err, state, cen_err, termination):
    rows = np.flatnonzero(active)
    if rows.size == 0:
        return
    st = state[rows]
    cl, cr = cand_err[rows, :, 0], cand_err[rows, :, 1]
    before = cen_err[rows].copy()
    lo_n, lo_d, be_n, be_d, up_n, up_d = (st[..., j].copy() for j in range(6))
    left = (cl < before) & (cl <= cr)
    right = ~left & (cr < before)
    stay = ~left & ~right
    has_left = ~((lo_n == be_n) & (lo_d == be_d))
    new = st.copy()
    new[..., 2] = np.where(left, lo_n + be_n, np.where(right, be_n + up_n, be_n))
    new[..., 3] = np.where(left, lo_d + be_d, np.where(right, be_d + up_d, be_d))
    new[..., 0] = np.where(right, be_n, np.where(stay & has_left, lo_n + be_n, lo_n))
    new[..., 1] = np.where(right, be_d, np.where(stay & has_left, lo_d + be_d, lo_d))
    new[..., 4] = np.where(left, be_n, np.where(stay, be_n + up_n, up_n))
    new[..., 5] = np.where(left, be_d, np.where(stay, be_d + up_d, up_d))
    err = np.where(left, cl, np.where(right, cr, before))
    state[rows] = new
    cen_err[rows] = err
    most = np.max(np.maximum(_ratio_numpy(before, err), 0.0), axis=1)
    active[rows] = most >= termination


def refine_step(active: np.ndarray, cand_err: np.ndarray, state: np.ndarray, cen_err: np.ndarray,
                termination: float, *, use_numba: bool | None = None) -> None:
    """One refinement iteration for every active series, in place.

    Shapes (S series, k slices): ``cand_err`` (S, k, 2) the RMS relative error of the left and right
    mediants (inf where absent); ``state`` (S, k, 6) int64 ``lower, best, upper`` as
    numerator/denominator pairs; ``cen_err`` (S, k) that of each slice's best.  A mediant more
    accurate than the slice's best replaces it (the Stern–Brocot rules of
    :mod:`pmkit.fitting.sternbrocot`); the slices move by plain error, not by the simplicity-penalised
    criterion that decides acceptance, so each slice homes in on its most accurate exponent.
    ``active`` (S) is cleared when no slice's best got ``termination`` times more accurate in this
    iteration (paper 000 §3.3).
    """
    args = (active, cand_err, state, cen_err, float(termination))
    if use_numba is None:
        use_numba = numba_enabled()
    if use_numba and active.shape[0] > 0:
        _jit("refine_step", _refine_step_loop)(*args)
    else:
        _refine_step_numpy(*args)


# ---------------------------------------------------------------------------------------------
# mixture_terms: the prediction intervals' mixture distribution function (pmkit.intervals)

_STDTR_SYMBOL = "pmkit_scipy_stdtr"
_STDTR: Any = None
"""scipy's ``stdtr`` as a numba external function, bound before :func:`_mixture_terms_loop` is compiled."""


def _stdtr_function() -> Any:
    """scipy's Student t distribution function (the compiled routine behind ``scipy.special.stdtr``, so
    values are the ufunc's to the last bit) as a numba external function, its symbol registered for the
    linker (also when a kernel comes from numba's cache)."""
    import llvmlite.binding as ll
    from numba import types
    from numba.extending import get_cython_function_address

    ll.add_symbol(_STDTR_SYMBOL, get_cython_function_address("scipy.special.cython_special", "__pyx_fuse_0stdtr"))
    return types.ExternalFunction(_STDTR_SYMBOL, types.float64(types.float64, types.float64, types.intc))


def _bind_stdtr() -> bool:
    """Bind :data:`_STDTR` once; False where this scipy does not export ``stdtr`` to compiled code (the numpy
    path is used then)."""
    global _STDTR
    if _STDTR is None:
        try:
            _STDTR = _stdtr_function()
        except (ImportError, KeyError, ValueError, AttributeError):
            _STDTR = False
    return _STDTR is not False


def _mixture_terms_loop(weight, positive, center, spread, df, rows, q, log_q, out):
    for i in range(rows.size):
        r = rows[i]
        at_log = log_q[i] if q[i] > 0 else -np.inf
        for k in range(weight.shape[1]):
            if weight[r, k] == 0:  # no part in the mixture (pruned, or no alternative)
                out[i, k] = 0.0
                continue
            at = at_log if positive[r, k] else q[i]
            if spread[r, k] > 0:
                z = (at - center[r, k]) / spread[r, k]
            else:
                z = np.inf if at >= center[r, k] else -np.inf
            out[i, k] = weight[r, k] * _STDTR(df[r, k], z, 0)


def _mixture_terms_numpy(weight, positive, center, spread, df, rows, q, log_q, out):
    from scipy.special import stdtr

    positive, center, spread = positive[rows], center[rows], spread[rows]
    q, log_q = q[:, None], log_q[:, None]
    with np.errstate(all="ignore"):
        at = np.where(positive, np.where(q > 0, log_q, -np.inf), q)
        z = (at - center) / np.where(spread > 0, spread, 1.0)
        z = np.where(spread > 0, z, np.where(at >= center, np.inf, -np.inf))
    out[:] = np.where(weight[rows] == 0, 0.0, weight[rows] * stdtr(df[rows], z))


def mixture_terms(weight: np.ndarray, positive: np.ndarray, center: np.ndarray, spread: np.ndarray,
                  df: np.ndarray, rows: np.ndarray, q: np.ndarray, *, use_numba: bool | None = None) -> np.ndarray:
    """``weight · P(X_k ≤ q)`` for the components ``k`` (columns) of the rows ``rows``, ``q`` one per row:
    Student t with ``df`` on ``log q`` where ``positive`` (relative noise), on ``q`` elsewhere, located at
    ``center`` with scale ``spread`` (a point mass where ``spread`` is 0).  Summing a row gives the mixture's
    distribution function, which the Illinois search of :func:`pmkit.intervals._mixture_quantile` evaluates
    some fifteen times per row: the loop fuses the array operations around scipy's ``stdtr``.  ``log q`` is
    taken by numpy on both paths (numpy's SIMD logarithm and libm's differ in the last bit)."""
    with np.errstate(all="ignore"):
        log_q = np.log(np.where(q > 0, q, 1.0))
    out = np.empty((rows.size, weight.shape[1]))
    args = (weight, positive, center, spread, df, rows, q, log_q, out)
    if (numba_enabled() if use_numba is None else use_numba) and _bind_stdtr():
        _jit("mixture_terms", _mixture_terms_loop)(*args)
    else:
        _mixture_terms_numpy(*args)
    return out


# ---------------------------------------------------------------------------------------------
# line_fits: closed-form relative least squares of c0 + c1·b for every series and basis row
# (pmkit.fitting.leastsquares.relative_line_fits: the alternatives' refits and the search's mediants)


_PAIRWISE: Any = None
""":func:`_pairwise_sum` compiled, bound before the kernels that call it are compiled."""


def _pairwise_sum(a, start, n, stack):
    """numpy's summation order along a contiguous axis (blocks of eight accumulators, halves above 128), so
    the loop's sums equal ``ndarray.sum`` to the last bit.  numpy recurses into the halves; here an explicit
    ``stack`` walks the same tree (numba's cache does not keep recursive functions): four arrays of 64 levels,
    start and size (int64), whether the left half is summed (bool) and its sum, allocated once by the caller."""
    lo, size, left_done, left = stack
    top = 0
    lo[0], size[0], left_done[0] = start, n, False
    while True:
        first, m = lo[top], size[top]
        if m > 128:
            half = m // 2
            half -= half % 8
            top += 1
            lo[top], size[top], left_done[top] = first, half, False
            continue
        if m < 8:
            value = 0.0
            for i in range(m):
                value += a[first + i]
        else:
            r0, r1, r2, r3 = a[first], a[first + 1], a[first + 2], a[first + 3]
            r4, r5, r6, r7 = a[first + 4], a[first + 5], a[first + 6], a[first + 7]
            i = 8
            while i < m - m % 8:
                r0 += a[first + i]
                r1 += a[first + i + 1]
                r2 += a[first + i + 2]
                r3 += a[first + i + 3]
                r4 += a[first + i + 4]
                r5 += a[first + i + 5]
                r6 += a[first + i + 6]
                r7 += a[first + i + 7]
                i += 8
            value = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            while i < m:
                value += a[first + i]
                i += 1
        # hand the value up: a left half waits for its right half, a right half completes its parent
        while True:
            if top == 0:
                return value
            top -= 1
            if not left_done[top]:
                left_done[top], left[top] = True, value
                half = size[top] // 2
                half -= half % 8
                lo[top + 1], size[top + 1], left_done[top + 1] = lo[top] + half, size[top] - half, False
                top += 1
                break
            value = left[top] + value


def _line_fits_loop(Ys, basis, sw, swy, swb, swbb, swby, coef, inv, rss, covariance):
    count, n = Ys.shape
    relative = np.empty(n)
    stack = (np.empty(64, np.int64), np.empty(64, np.int64), np.zeros(64, np.bool_), np.empty(64))
    for s in range(count):
        w0, wy = sw[s], swy[s]
        for h in range(basis.shape[0]):
            b, bb, by = swb[s, h], swbb[s, h], swby[s, h]
            det = w0 * bb - b * b
            scale = w0 * bb
            if not (scale != scale or scale >= 1e-300):
                scale = 1e-300
            flat = not (det > 1e-12 * scale)
            if flat:
                c1 = 0.0
                c0 = wy / w0
                if covariance:
                    inv[s, h, 0, 0] = 1.0 / w0
                    inv[s, h, 1, 1] = 0.0
                    inv[s, h, 0, 1] = inv[s, h, 1, 0] = 0.0
            else:
                c1 = (w0 * by - b * wy) / det
                c0 = (wy - c1 * b) / w0
                if covariance:
                    inv[s, h, 0, 0] = bb / det
                    inv[s, h, 1, 1] = w0 / det
                    inv[s, h, 0, 1] = inv[s, h, 1, 0] = -b / det
            coef[s, h, 0] = c0
            coef[s, h, 1] = c1
            for j in range(n):
                y = Ys[s, j]
                r = (y - (c0 + c1 * basis[h, j])) / (y if y != 0 else 1.0)
                relative[j] = r * r
            rss[s, h] = _PAIRWISE(relative, 0, n, stack)


def _line_fits_numpy(Ys, basis, sw, swy, swb, swbb, swby, coef, inv, rss, covariance):
    sw, swy = sw[:, None], swy[:, None]
    with np.errstate(all="ignore"):
        det = sw * swbb - swb * swb
        flat = ~(det > 1e-12 * np.maximum(sw * swbb, 1e-300))
        c1 = np.where(flat, 0.0, (sw * swby - swb * swy) / np.where(flat, 1.0, det))
        c0 = np.where(flat, swy / sw, (swy - c1 * swb) / sw)
        predicted = c0[:, :, None] + c1[:, :, None] * basis[None, :, :]
        relative = (Ys[:, None, :] - predicted) / np.where(Ys != 0, Ys, 1.0)[:, None, :]
        rss[:] = (relative * relative).sum(axis=2)
        if not covariance:
            coef[..., 0], coef[..., 1] = c0, c1
            return
        inv[..., 0, 0] = np.where(flat, 1.0 / sw, swbb / np.where(flat, 1.0, det))
        inv[..., 1, 1] = np.where(flat, 0.0, sw / np.where(flat, 1.0, det))
        inv[..., 0, 1] = inv[..., 1, 0] = np.where(flat, 0.0, -swb / np.where(flat, 1.0, det))
    coef[..., 0], coef[..., 1] = c0, c1


def line_fits(Ys: np.ndarray, basis: np.ndarray, sw: np.ndarray, swy: np.ndarray, swb: np.ndarray,
              swbb: np.ndarray, swby: np.ndarray, *, covariance: bool = True, use_numba: bool | None = None
              ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """From the weighted sums of every series (rows of ``Ys``) and basis row (``sw``, ``swy`` per series;
    ``swb``, ``swbb``, ``swby`` per series and row), the coefficients ``(c0, c1)``, the unit covariance
    ``(XᵀWX)⁻¹`` and the relative RSS of ``c0 + c1·b`` (``c1 = 0`` where the weighted spread of ``b`` is
    below 10⁻¹² of its square: the constant model).  The loop spares the series × rows × points temporaries
    of the numpy version, which is the reference and equal to the last bit; it runs on threads from
    :data:`PARALLEL_MIN_SERIES` series on (0.66 s of ``pmkit model --json`` on 100,000 two-parameter series ran on
    one core, ``bench/README.md`` §12).

    ``covariance=False``: no covariance (``None`` in its place; the coefficients and RSS are the same bits), for
    the callers that rank by the criterion alone (``ranked_shapes`` and the line-law search's noise check), which
    wrote series × rows × 4 floats and dropped them (``bench/README.md`` §12, "Two parameters, discarded work")."""
    count, rows = swb.shape
    coef, rss = np.empty((count, rows, 2)), np.empty((count, rows))
    inv = np.empty((count, rows if covariance else 0, 2, 2))
    args = (np.ascontiguousarray(Ys, dtype=float), np.ascontiguousarray(basis, dtype=float), sw, swy, swb, swbb,
            swby, coef, inv, rss, covariance)
    if numba_enabled() if use_numba is None else use_numba:
        global _PAIRWISE
        if _PAIRWISE is None:
            _PAIRWISE = _jit("pairwise_sum", _pairwise_sum)
        run_rows(_jit("line_fits", _line_fits_loop), count, args, (True, False, *(True,) * 8, False))
    else:
        _line_fits_numpy(*args)
    return coef, inv if covariance else None, rss


# ---------------------------------------------------------------------------------------------
# earlier_repeats: which alternatives of a multi-parameter law repeat an earlier one


def _repeated_loop(A, B, out):
    count, k, t, p = A.shape
    for s in range(count):
        for i in range(k):
            out[s, i] = -1
            for j in range(i):
                equal = True
                for a in range(t):
                    for b in range(p):
                        if A[s, i, a, b] != A[s, j, a, b] or B[s, i, a, b] != B[s, j, a, b]:
                            equal = False
                            break
                    if not equal:
                        break
                if equal:
                    out[s, i] = j
                    break


def _repeated_numpy(A, B, out):
    equal = (A[:, :, None] == A[:, None, :]).all(axis=(3, 4)) & (B[:, :, None] == B[:, None, :]).all(axis=(3, 4))
    earlier = np.tril(equal, k=-1)
    out[:] = np.where(earlier.any(axis=2), earlier.argmax(axis=2), -1)


def earlier_repeats(A: np.ndarray, B: np.ndarray, *, use_numba: bool | None = None) -> np.ndarray:
    """Per row (series × hypotheses × terms × parameters exponents ``A``, log exponents ``B``) and hypothesis, the
    first earlier hypothesis of its row equal to it in every exponent, -1 where none is: the loop stops at the
    first difference, where the numpy version compares every pair in full (hypotheses² × terms × parameters per
    series).  A repeat's refit is its first's (:func:`multi_fits` solves it once)."""
    out = np.empty(A.shape[:2], dtype=np.int64)
    args = (np.ascontiguousarray(A, dtype=float), np.ascontiguousarray(B, dtype=float), out)
    if numba_enabled() if use_numba is None else use_numba:
        _jit("earlier_repeats", _repeated_loop)(*args)
    else:
        _repeated_numpy(*args)
    return out


# ---------------------------------------------------------------------------------------------
# design_errors and contributions: the multi-parameter combination step (pmkit.modelers.multiparam), where
# each series is fitted on its own design of a stack (designs × points × columns; row i on designs[local[i]])


def _design_errors_loop(Y, predicted, leverage, local, degenerate, rss, loo_smape):
    count, n = Y.shape
    squares = np.empty(n)
    ratio = np.empty(n)
    stack = (np.empty(64, np.int64), np.empty(64, np.int64), np.zeros(64, np.bool_), np.empty(64))
    for s in range(count):
        g = local[s]
        for j in range(n):
            y, p = Y[s, j], predicted[s, j]
            r = y - p
            squares[j] = r * r
            room = 1.0 - leverage[g, j]
            loo = y - r / room if room > degenerate else np.inf
            total = abs(y) + abs(loo)
            value = 2.0 * abs(y - loo) / total if total > 0 else 0.0
            ratio[j] = value if np.isfinite(loo) else 2.0
        rss[s] = _PAIRWISE(squares, 0, n, stack)
        loo_smape[s] = 100.0 * (_PAIRWISE(ratio, 0, n, stack) / n)


def _design_errors_numpy(Y, predicted, leverage, local, degenerate, rss, loo_smape):
    residual = Y - predicted
    rss[:] = (residual * residual).sum(axis=1)
    loo_smape[:] = smape(Y, loo_predictions(Y, predicted, leverage[local]))


def _numba_loaded() -> bool:
    """Whether the combination step's loops run compiled: where numba is already imported (the refining search
    loads it for large batches, :func:`pmkit.fitting.refinement.compiled_kernels`) and not disabled.  Their
    twins are equal to the last bit, so this only moves time: a small batch does not pay numba's import."""
    return "numba" in sys.modules and numba_enabled()


def design_errors(Y: np.ndarray, predicted: np.ndarray, leverage: np.ndarray, local: np.ndarray, *,
                  use_numba: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The residual sum of squares and the leave-one-out SMAPE of every row of ``Y`` fitted as ``predicted`` on
    the design ``local[row]`` of a stack whose hat-matrix diagonals are ``leverage`` (designs × points).

    One pass per row, without the rows × points temporaries of the numpy version (the leverages gathered per
    row, ``1 - h``, the leave-one-out predictions, the SMAPE's ratios), which is the reference and equal to the
    last bit (:func:`_pairwise_sum` sums as numpy does): the numpy version was a third of the two-parameter
    combination step's fits (``bench/README.md`` §12)."""
    count = len(Y)
    rss, loo_smape = np.empty(count), np.empty(count)
    args = (np.ascontiguousarray(Y, dtype=float), np.ascontiguousarray(predicted, dtype=float),
            np.ascontiguousarray(leverage, dtype=float), np.ascontiguousarray(local, dtype=np.int64), DEGENERATE,
            rss, loo_smape)
    if _numba_loaded() if use_numba is None else use_numba:
        global _PAIRWISE
        if _PAIRWISE is None:
            _PAIRWISE = _jit("pairwise_sum", _pairwise_sum)
        run_rows(_jit("design_errors", _design_errors_loop), count, args,
                 (True, True, False, True, False, True, True))
    else:
        _design_errors_numpy(*args)
    return rss, loo_smape


DESIGN_CHUNK = 20_000
"""Rows per chunk of the numpy :func:`design_fits` (bounds the gathered designs' memory)."""

_EINSUM_DOT: Any = None
""":func:`_einsum_dot` compiled, bound before :func:`_design_fits_loop` is compiled."""

_EINSUM_ORDER: bool | None = None
"""Whether :func:`_einsum_dot` sums as this platform's ``np.einsum`` does (probed once, :func:`_einsum_order`)."""


def _einsum_dot(a, b):
    """``np.einsum``'s sum of products of two contiguous vectors, in its order: numpy's baseline x86-64 loop
    (``sum_of_products_contig_contig_outstride0_two``) keeps two lanes, takes the products in blocks of eight
    (each lane adds its four last-first onto its running sum), then the rest a pair at a time (a missing
    partner adds 0·0), and returns ``0 + (lane 0 + lane 1)``; multiply and add are not fused."""
    n = a.shape[0]
    even = 0.0
    odd = 0.0
    i = 0
    while i + 8 <= n:
        even = a[i] * b[i] + (a[i + 2] * b[i + 2] + (a[i + 4] * b[i + 4] + (a[i + 6] * b[i + 6] + even)))
        odd = a[i + 1] * b[i + 1] + (a[i + 3] * b[i + 3] + (a[i + 5] * b[i + 5] + (a[i + 7] * b[i + 7] + odd)))
        i += 8
    while i < n:
        even = a[i] * b[i] + even
        odd = (a[i + 1] * b[i + 1] if i + 1 < n else 0.0) + odd
        i += 2
    return 0.0 + (even + odd)


def _design_fits_loop(Y, inverses, designs, local, coefficients, predicted):
    count, n = Y.shape
    k = designs.shape[2]
    for s in range(count):
        g = local[s]
        for c in range(k):
            coefficients[s, c] = _EINSUM_DOT(Y[s], inverses[g, c])
        for j in range(n):
            predicted[s, j] = _EINSUM_DOT(coefficients[s], designs[g, j])


def _design_fits_numpy(Y, inverses, designs, local, coefficients, predicted):
    for start in range(0, len(Y), DESIGN_CHUNK):
        part = slice(start, start + DESIGN_CHUNK)
        coefficients[part] = np.einsum("sn,skn->sk", Y[part], inverses[local[part]])
        predicted[part] = np.einsum("sk,snk->sn", coefficients[part], designs[local[part]])


def _einsum_order() -> bool:
    """Whether the compiled :func:`_design_fits_loop` gives ``np.einsum``'s bits on this platform, probed once on
    random rows of every length up to 40 points and 9 columns (blocks of eight and every remainder).  Where
    numpy's loop sums otherwise (a fused multiply-add, wider lanes: other builds, other CPUs) the numpy
    version runs, so the models never depend on which path ran."""
    global _EINSUM_DOT, _EINSUM_ORDER
    if _EINSUM_ORDER is None:
        _EINSUM_DOT = _jit("einsum_dot", _einsum_dot)
        rng = np.random.default_rng(20261128)
        same = True
        for n in range(1, 41):
            k = n % 9 + 1
            Y = rng.standard_normal((6, n)) * 10.0 ** rng.integers(-8, 9, (6, n))
            inverses, designs = rng.standard_normal((2, k, n)), rng.standard_normal((2, n, k))
            local = np.arange(6, dtype=np.int64) % 2
            fast = (np.empty((6, k)), np.empty((6, n)))
            slow = (np.empty((6, k)), np.empty((6, n)))
            _jit("design_fits", _design_fits_loop)(Y, inverses, designs, local, *fast)
            _design_fits_numpy(Y, inverses, designs, local, *slow)
            same &= all(a.tobytes() == b.tobytes() for a, b in zip(fast, slow, strict=True))
        _EINSUM_ORDER = bool(same)
    return _EINSUM_ORDER


def design_fits(Y: np.ndarray, inverses: np.ndarray, designs: np.ndarray, local: np.ndarray, *,
                use_numba: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The least-squares coefficients and fitted values of every row of ``Y`` on its design ``designs[local[row]]``
    (designs × points × columns) whose left inverse is ``inverses[local[row]]`` (designs × columns × points).

    The numpy version (the reference) gathers each chunk's inverses and designs and contracts them with
    ``np.einsum``, whose loop for the fitted values runs once per point over two to five columns: 15% of
    ``pmkit model --json`` on 100,000 two-parameter series (``bench/README.md`` §12).  The loop reads the designs
    in place and sums in ``np.einsum``'s order (:func:`_einsum_dot`), equal to the last bit; it runs only where a
    probe shows this platform's ``np.einsum`` sums that way (:func:`_einsum_order`)."""
    count, k = len(Y), designs.shape[2]
    coefficients, predicted = np.empty((count, k)), np.empty((count, Y.shape[1]))
    args = (np.ascontiguousarray(Y, dtype=float), np.ascontiguousarray(inverses, dtype=float),
            np.ascontiguousarray(designs, dtype=float), np.ascontiguousarray(local, dtype=np.int64), coefficients,
            predicted)
    if (_numba_loaded() if use_numba is None else use_numba) and _einsum_order():
        run_rows(_jit("design_fits", _design_fits_loop), count, args, (True, False, False, True, True, True))
    else:
        _design_fits_numpy(*args)
    return coefficients, predicted


def _fit_errors_loop(Y, predicted, in_sample, relative):
    count, n = Y.shape
    ratio = np.empty(n)
    squares = np.empty(n)
    stack = (np.empty(64, np.int64), np.empty(64, np.int64), np.zeros(64, np.bool_), np.empty(64))
    for s in range(count):
        for j in range(n):
            y, p = Y[s, j], predicted[s, j]
            total = abs(y) + abs(p)
            value = 2.0 * abs(y - p) / total if total > 0 else 0.0
            ratio[j] = value if np.isfinite(p) else 2.0
            r = (y - p) / (y if y != 0 else 1.0)
            squares[j] = r * r
        in_sample[s] = 100.0 * (_PAIRWISE(ratio, 0, n, stack) / n)
        relative[s] = _PAIRWISE(squares, 0, n, stack)


def _fit_errors_numpy(Y, predicted, in_sample, relative):
    in_sample[:] = smape(Y, predicted)
    relative[:] = relative_rss(Y, predicted)


def fit_errors(Y: np.ndarray, predicted: np.ndarray, *, use_numba: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The in-sample SMAPE (:func:`~pmkit.fitting.leastsquares.smape`) and the relative residual sum of squares
    (:func:`~pmkit.fitting.leastsquares.relative_rss`) of every row of ``Y`` fitted as ``predicted``: one pass
    per row instead of numpy's five rows × points temporaries, equal to the last bit."""
    count = len(Y)
    in_sample, relative = np.empty(count), np.empty(count)
    args = (np.ascontiguousarray(Y, dtype=float), np.ascontiguousarray(predicted, dtype=float), in_sample, relative)
    if _numba_loaded() if use_numba is None else use_numba:
        global _PAIRWISE
        if _PAIRWISE is None:
            _PAIRWISE = _jit("pairwise_sum", _pairwise_sum)
        run_rows(_jit("fit_errors", _fit_errors_loop), count, args, (True, True, True, True))
    else:
        _fit_errors_numpy(*args)
    return in_sample, relative


def _contributions_loop(Y, coefficients, designs, local, minimum, out):
    count, n = Y.shape
    terms = coefficients.shape[1] - 1
    for s in range(count):
        g = local[s]
        every = True
        for k in range(terms):
            c = coefficients[s, k + 1]
            if c == 0:
                every = False
                break
            largest = 0.0
            for j in range(n):
                value = abs(Y[s, j])
                if value == 0:  # the share is inf or NaN: counts 0 (numba's division by zero would raise)
                    continue
                share = abs(c * designs[g, j, k + 1]) / value
                if np.isfinite(share) and share > largest:
                    largest = share
            if not largest >= minimum:
                every = False
                break
        out[s] = every


def _contributions_numpy(Y, coefficients, designs, local, minimum, out):
    for start in range(0, len(Y), CONTRIBUTION_CHUNK):
        part = slice(start, start + CONTRIBUTION_CHUNK)
        coefs = coefficients[part, 1:]
        with np.errstate(all="ignore"):
            terms = designs[local[part]][:, :, 1:]  # chunk × points × terms, in memory order
            share = np.abs(coefs[:, None, :] * terms)
            share /= np.abs(Y[part])[:, :, None]
            share[~np.isfinite(share)] = 0.0
        out[part] = ((share.max(axis=1) >= minimum) & (coefs != 0)).all(axis=1)


CONTRIBUTION_CHUNK = 20_000
"""Rows per chunk of the numpy :func:`contributions` (bounds the gathered designs' memory)."""


def contributions(Y: np.ndarray, coefficients: np.ndarray, designs: np.ndarray, local: np.ndarray, minimum: float,
                  *, use_numba: bool | None = None) -> np.ndarray:
    """Per row of ``Y`` (fitted with ``coefficients`` on the design ``local[row]`` of ``designs``, designs ×
    points × columns, the constant first), whether every term's coefficient is non-zero and the term makes
    at least ``minimum`` of ``|y|`` at some point (non-finite shares count 0).

    The loop reads each design in place and stops at the first term that fails, where the numpy version (the
    reference, equal in every row) gathers a rows × points × terms block: it was a fifth of the two-parameter
    modeling, on threads (``bench/README.md`` §12)."""
    out = np.empty(len(Y), dtype=bool)
    args = (np.ascontiguousarray(Y, dtype=float), np.ascontiguousarray(coefficients, dtype=float),
            np.ascontiguousarray(designs, dtype=float), np.ascontiguousarray(local, dtype=np.int64), float(minimum),
            out)
    if _numba_loaded() if use_numba is None else use_numba:
        run_rows(_jit("contributions", _contributions_loop), len(Y), args, (True, True, False, True, False, True))
    else:
        run_rows(_contributions_numpy, len(Y), args, (True, True, False, True, False, True))
    return out


# ---------------------------------------------------------------------------------------------
# smallest and single_ratios: which of a series' start-table hypotheses become its alternatives
# (pmkit.fitting.alternatives: the one-parameter alternatives weigh ~257 hypotheses per series and keep 11)


def _smallest_loop(values, order):
    rows, width = values.shape
    count = order.shape[1]
    kept = np.empty(count)
    for s in range(rows):
        n = 0
        for j in range(width):
            v = values[s, j]
            if n == count:
                last = kept[count - 1]
                if not (v < last or (last != last and v == v)):  # NaN last, ties in index order
                    continue
                i = count - 1
            else:
                i = n
                n += 1
            while i > 0:
                before = kept[i - 1]
                if not (v < before or (before != before and v == v)):
                    break
                kept[i] = before
                order[s, i] = order[s, i - 1]
                i -= 1
            kept[i] = v
            order[s, i] = j


def _smallest_numpy(values, order):
    count = order.shape[1]
    bound = np.partition(values, count - 1, axis=1)[:, count - 1 : count]
    below = values < bound
    tied = values == bound
    # the ties at the bound taken in index order, as many as the places left
    chosen = below | (tied & (np.cumsum(tied, axis=1) <= count - below.sum(axis=1, keepdims=True)))
    clean = chosen.sum(axis=1) == count  # False where NaN (no bound or unordered)
    if clean.any():
        index = np.nonzero(chosen[clean])[1].reshape(-1, count)
        picked = np.take_along_axis(values[clean], index, axis=1)
        order[clean] = np.take_along_axis(index, np.argsort(picked, axis=1, kind="stable"), axis=1)
    if not clean.all():
        order[~clean] = np.argsort(values[~clean], axis=1, kind="stable")[:, :count]


def smallest(values: np.ndarray, count: int, *, use_numba: bool | None = None) -> np.ndarray:
    """Per row, the indices of the ``count`` smallest values in order, ties in index order, NaN last:
    ``np.argsort(values, axis=1, kind="stable")[:, :count]`` without sorting the whole row (a row holds hundreds
    of hypotheses, a dozen are kept).  The numpy version partitions and sorts the few chosen (some fifteen passes
    over the rows × hypotheses array); the loop inserts each value into the row's sorted few, one pass.  Both
    equal the stable argsort (``tests/test_intervals.py``).  The one-parameter alternatives of 100,000 series
    (``bench/interval_speed.py``'s stage, 32 calls of ~3,100 rows × 257): 0.45–0.63 s in numpy, cProfile."""
    values = np.asarray(values, dtype=float)
    rows, width = values.shape
    if count >= width or rows == 0:
        return np.argsort(values, axis=1, kind="stable")[:, :count]
    if count <= 0:
        return np.zeros((rows, 0), dtype=np.int64)
    order = np.empty((rows, count), dtype=np.int64)
    if numba_enabled() if use_numba is None else use_numba:
        _jit("smallest", _smallest_loop)(values, order)
    else:
        _smallest_numpy(values, order)
    return order


def _single_ratios_loop(rss, slope, penalty, positive, nonneg, cand_alpha, cand_beta, alpha, beta, two_term,
                        constant, chosen_crit, price, ratio, best):
    rows, width = rss.shape
    for s in range(rows):
        low = np.inf
        nan = False
        for h in range(width):
            r = rss[s, h]
            ok = h == 0 or not (positive[h] or nonneg[s]) or slope[s, h] > 0
            crit = r * penalty[h] if ok and np.isfinite(r) else np.inf
            same = constant[s] if h == 0 else (cand_alpha[h] == alpha[s] and cand_beta[h] == beta[s]
                                                and not two_term[s])
            if same:
                crit = np.inf
            if h > 0:
                crit *= price
            ratio[s, h] = crit
            if crit != crit:
                nan = True
            elif crit < low:
                low = crit
        if nan:
            low = np.nan
        chosen = chosen_crit[s]
        b = chosen if low != low else (low if chosen != chosen or low <= chosen else chosen)
        best[s] = b
        floor = b if b != b or b >= 1e-300 else 1e-300
        for h in range(width):
            crit = ratio[s, h]
            ratio[s, h] = (np.nan if crit != crit or floor != floor else max(crit, floor)) / floor


def sign_criteria(rss: np.ndarray, slope: np.ndarray, penalty: np.ndarray, positive: np.ndarray,
                  nonneg: np.ndarray) -> np.ndarray:
    """Per series and start-table hypothesis, the penalised criterion ``rss · penalty``, inf where the fit breaks the
    search's sign rules (``slope`` ≤ 0 where the hypothesis is ``positive`` or the series ``nonneg``; never for
    hypothesis 0, the constant) or ``rss`` is not finite: what :func:`single_ratios` weighs, and
    :func:`pmkit.fitting.alternatives.candidate_criteria` ranks by."""
    sign_ok = np.where(positive[None, :] | nonneg[:, None], slope > 0, True)
    sign_ok[:, 0] = True
    return np.where(sign_ok & np.isfinite(rss), rss * penalty[None, :], np.inf)


def _single_ratios_numpy(rss, slope, penalty, positive, nonneg, cand_alpha, cand_beta, alpha, beta, two_term,
                         constant, chosen_crit, price, ratio, best):
    with np.errstate(all="ignore"):
        crit = sign_criteria(rss, slope, penalty, positive, nonneg)
        same = (cand_alpha[None, :] == alpha[:, None]) & (cand_beta[None, :] == beta[:, None]) & ~two_term[:, None]
        same[:, 0] = constant
        crit = np.where(same, np.inf, crit)
        crit[:, 1:] *= price
        best[:] = np.fmin(crit.min(axis=1), chosen_crit)
        floor = np.maximum(best, 1e-300)
        ratio[:] = np.maximum(crit, floor[:, None]) / floor[:, None]


def single_ratios(rss: np.ndarray, slope: np.ndarray, penalty: np.ndarray, positive: np.ndarray, nonneg: np.ndarray,
                  cand_alpha: np.ndarray, cand_beta: np.ndarray, alpha: np.ndarray, beta: np.ndarray,
                  two_term: np.ndarray, constant: np.ndarray, chosen_crit: np.ndarray, price: float, *,
                  use_numba: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The one-parameter alternatives' weighing before its logarithm: per series (rows of ``rss``, the relative
    RSS of its fit to each start-table hypothesis, ``slope`` their ``c1``) and hypothesis, the criterion ``rss ·
    penalty`` — inf where the fit breaks the search's sign rules (``c1 > 0`` where the hypothesis is ``positive``
    or the series' values ``nonneg``; never for hypothesis 0, the constant), where the hypothesis is the series'
    chosen law (exponents ``alpha``, ``beta``, unless ``two_term``; the constant where ``constant``), and times
    ``price`` beyond the constant; the best criterion of each series (those and ``chosen_crit``, NaN ignored as
    ``np.fmin`` does) and each criterion's ratio to it, ``max(crit, best) / best`` (``best`` floored at 1e-300).
    The loop makes in one pass what the numpy version (the reference, equal to the last bit) makes in some fifteen
    over the series × hypotheses arrays.  With :func:`smallest`'s loop, ``bench/interval_speed.py``'s alternatives
    stage on 100,000 one-parameter series went from 2.54–2.80 s to 2.09–2.52 s (CPU, one process each, on a
    machine at load 3–4; bounds identical)."""
    rows, width = rss.shape
    ratio, best = np.empty((rows, width)), np.empty(rows)
    args = (rss, slope, penalty, positive, nonneg, cand_alpha, cand_beta, alpha, beta, two_term, constant,
            chosen_crit, float(price), ratio, best)
    if numba_enabled() if use_numba is None else use_numba:
        _jit("single_ratios", _single_ratios_loop)(*args)
    else:
        _single_ratios_numpy(*args)
    return ratio, best


# ---------------------------------------------------------------------------------------------
# multi_fits: the multi-parameter alternatives' refits (pmkit.fitting.alternatives.multi_alternatives), every
# series × hypothesis by relative least squares on its own design


def multi_factor_tables(points: np.ndarray, A: np.ndarray, B: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The factors a multi-parameter design is made of, each computed once: the distinct exponents ``exps`` of
    ``A`` and ``log_exps`` of ``B`` (sorted), and per parameter, exponent and point ``x^a`` (1 where ``a = 0``) and
    ``max(log2 x, 0)^b`` (1 where ``b = 0``; ``log2`` of a non-positive ``x`` read as 0), by the same numpy calls
    as :func:`_multi_fits_numpy` makes per series, hypothesis and term (``np.power`` gives the same bits for a
    value wherever it sits in an array: checked on 200,000 random pairs, contiguous, strided and broadcast)."""
    exps, log_exps = np.unique(A), np.unique(B)
    with np.errstate(all="ignore"):
        logs = np.log2(np.where(points > 0, points, 1.0))
        powers = np.where(exps[None, :, None] == 0, 1.0, np.power(points.T[:, None, :], exps[None, :, None]))
        log_powers = np.where(log_exps[None, :, None] == 0, 1.0,
                              np.power(np.maximum(logs, 0.0).T[:, None, :], log_exps[None, :, None]))
    return exps, log_exps, np.ascontiguousarray(powers), np.ascontiguousarray(log_powers)


def _find_sorted(values, v):
    lo, hi = 0, values.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _multi_grams_loop(Ys, w, A, B, exps, log_exps, powers, log_powers, design, norms, gram, rhs):
    count, width, terms, params = A.shape
    n = Ys.shape[1]
    columns = terms + 1
    squares = np.empty(n)
    scaled = np.empty((columns, n))
    for s in range(count):
        for k in range(width):
            for j in range(n):
                design[s, k, 0, j] = 1.0
            for t in range(terms):
                real = False
                for p in range(params):
                    if A[s, k, t, p] != 0 or B[s, k, t, p] != 0:
                        real = True
                for j in range(n):
                    design[s, k, t + 1, j] = 1.0 if real else 0.0
                if not real:
                    continue
                for p in range(params):
                    i = _FIND_SORTED(exps, A[s, k, t, p])
                    m = _FIND_SORTED(log_exps, B[s, k, t, p])
                    for j in range(n):
                        design[s, k, t + 1, j] *= powers[p, i, j] * log_powers[p, m, j]
            for c in range(columns):
                for j in range(n):
                    value = design[s, k, c, j]
                    squares[j] = value * value
                norm = np.sqrt(_EINSUM_DOT(w[s], squares))
                if not (norm > 0 and np.isfinite(norm)):
                    norm = 1.0
                norms[s, k, c] = norm
                for j in range(n):
                    scaled[c, j] = design[s, k, c, j] / norm
            for c in range(columns):
                for d in range(columns):
                    acc = 0.0
                    for j in range(n):
                        acc += w[s, j] * scaled[c, j] * scaled[d, j]
                    acc = acc + 0.0
                    gram[s, k, c, d] = acc if np.isfinite(acc) else 0.0
                acc = 0.0
                for j in range(n):
                    acc += w[s, j] * scaled[c, j] * Ys[s, j]
                rhs[s, k, c] = acc + 0.0


def _multi_rss_loop(Ys, design, fitted, inverse, norms, rss, cov_unit):
    count, width, columns, n = design.shape
    relative = np.empty(n)
    stack = (np.empty(64, np.int64), np.empty(64, np.int64), np.zeros(64, np.bool_), np.empty(64))
    for s in range(count):
        for k in range(width):
            for c in range(columns):
                for d in range(columns):
                    cov_unit[s, k, c, d] = inverse[s, k, c, d] / norms[s, k, c] / norms[s, k, d]
            for j in range(n):
                predicted = 0.0
                for c in range(columns):
                    predicted = design[s, k, c, j] * fitted[s, k, c] + predicted
                y = Ys[s, j]
                r = (y - predicted) / (y if y != 0 else 1.0)
                relative[j] = r * r
            rss[s, k] = _PAIRWISE(relative, 0, n, stack)


def _multi_fits_numpy(points, A, B, Ys, w, first, rhs_out=None):
    """The refits as :func:`pmkit.fitting.alternatives.multi_alternatives` made them in numpy (the reference);
    ``rhs_out``, a list: the right-hand sides are appended to it (their layout is what :func:`_rhs_layout` reads)."""
    count, width = A.shape[:2]
    n = points.shape[0]
    with np.errstate(all="ignore"):
        logs = np.log2(np.where(points > 0, points, 1.0))
        power = np.where(A[:, :, :, None, :] == 0, 1.0, np.power(points[None, None, None], A[:, :, :, None, :]))
        log_part = np.where(B[:, :, :, None, :] == 0, 1.0,
                            np.power(np.maximum(logs, 0.0)[None, None, None], B[:, :, :, None, :]))
        # a term with no factor pads a law to the table's width: its column is 0 (no coefficient), not a
        # second constant that would split the constant's coefficient and pay the coefficient price
        real = ((A != 0) | (B != 0)).any(axis=3)  # rows × K × T
        columns = np.where(real[..., None], (power * log_part).prod(axis=4), 0.0)  # rows × K × T × N
    design = np.concatenate([np.ones((count, width, 1, n)), columns], axis=2).transpose(0, 1, 3, 2)
    norms = np.sqrt(np.einsum("sn,sknc->skc", w, design * design))
    norms = np.where((norms > 0) & np.isfinite(norms), norms, 1.0)
    scaled = design / norms[:, :, None, :]
    gram = np.einsum("sn,sknc,sknd->skcd", w, scaled, scaled)
    rhs = np.einsum("sn,sknc,sn->skc", w, scaled, Ys)
    if rhs_out is not None:
        rhs_out.append(rhs)
    with np.errstate(all="ignore"):
        inverse = np.linalg.pinv(np.where(np.isfinite(gram), gram, 0.0))
        fitted = np.einsum("skcd,skd->skc", inverse, rhs) / norms
        fitted[:, 0] = first
        predicted = np.einsum("sknc,skc->skn", design, fitted)
        relative = (Ys[:, None, :] - predicted) / np.where(Ys != 0, Ys, 1.0)[:, None, :]
        rss = (relative * relative).sum(axis=2)
        cov_unit = inverse / norms[:, :, :, None] / norms[:, :, None, :]
    return fitted, rss, cov_unit, real


def _multi_fits_loops(points, A, B, Ys, w, first, rhs_axes, earlier):
    """:func:`_multi_fits_numpy` by the loops, the right-hand sides laid out with their axes ``rhs_axes``
    (outermost first) as the numpy version lays them out; their product with the inverses is numpy's.  A
    hypothesis repeating an earlier one of its row (``earlier`` ≥ 0, :func:`earlier_repeats`) has its design, so
    its gram and inverse: ``np.linalg.pinv`` (one SVD per matrix, each on its own) runs on the others alone."""
    count, width, terms, _ = A.shape
    n, columns = points.shape[0], terms + 1
    design = np.empty((count, width, columns, n))
    norms, gram = np.empty((count, width, columns)), np.empty((count, width, columns, columns))
    shape = (count, width, columns)
    rhs = np.empty([shape[a] for a in rhs_axes]).transpose(np.argsort(rhs_axes))
    dense_a, dense_b = np.ascontiguousarray(A), np.ascontiguousarray(B)
    _jit("multi_grams", _multi_grams_loop)(Ys, w, dense_a, dense_b, *multi_factor_tables(points, dense_a, dense_b),
                                           design, norms, gram, rhs)
    with np.errstate(all="ignore"):
        repeats = earlier >= 0
        inverse = np.empty_like(gram)
        inverse[~repeats] = np.linalg.pinv(gram[~repeats])
        rows, hyps = np.nonzero(repeats)
        inverse[rows, hyps] = inverse[rows, earlier[rows, hyps]]
        fitted = np.einsum("skcd,skd->skc", inverse, rhs) / norms
    fitted[:, 0] = first
    rss, cov_unit = np.empty((count, width)), np.empty((count, width, columns, columns))
    _jit("multi_rss", _multi_rss_loop)(Ys, design, fitted, inverse, norms, rss, cov_unit)
    return fitted, rss, cov_unit, ((A != 0) | (B != 0)).any(axis=3)


_FIND_SORTED: Any = None
""":func:`_find_sorted` compiled, bound before :func:`_multi_grams_loop` is compiled."""

_RHS_LAYOUTS: dict[tuple, tuple[int, ...] | None] = {}
"""Per layout of :func:`multi_fits`' inputs (:func:`_layout_key`), the axes of the numpy version's right-hand
sides, outermost first — or ``None`` where the loops did not give the numpy version's bits (the numpy version
runs there)."""


def _layout_key(arrays: tuple[np.ndarray, ...]) -> tuple:
    """What numpy's choice of layouts and loops for :func:`_multi_fits_numpy` depends on: per input its axes in
    the order of their strides, which of its axes have one entry, and the sizes of those that do not hold series
    or hypotheses (numpy orders a result's axes by the inputs' strides, ``order="K"``)."""
    key = []
    for place, a in enumerate(arrays):
        key.append((tuple(sorted(range(a.ndim), key=lambda i, a=a: -abs(a.strides[i]))), tuple(d == 1 for d in a.shape),
                    a.shape[2:] if place in (1, 2) else a.shape[1:]))
    return tuple(key)


def _rhs_layout(points, A, B, Ys, w, first) -> tuple[int, ...] | None:
    """The axes of the numpy version's right-hand sides for inputs laid out as these, found once per layout
    (:func:`_layout_key`) by the numpy version on two series × two hypotheses of them (their strides unchanged:
    numpy lays the results out the same way), and the loops checked against it on those to the last bit."""
    key = _layout_key((points, A, B, Ys, w, first))
    if key not in _RHS_LAYOUTS:
        rows, hyps = slice(0, min(2, A.shape[0])), slice(0, min(2, A.shape[1]))
        part = (points, A[rows, hyps], B[rows, hyps], Ys[rows], w[rows], first[rows])
        found: list[np.ndarray] = []
        with np.errstate(all="ignore"):
            slow = _multi_fits_numpy(*part, rhs_out=found)
            axes = tuple(int(a) for a in np.argsort([-abs(v) for v in found[0].strides], kind="stable"))
            fast = _multi_fits_loops(*part, axes, earlier_repeats(part[1], part[2]))
        same = all(a.tobytes() == b.tobytes() for a, b in zip(fast, slow, strict=True))
        _RHS_LAYOUTS[key] = axes if same else None
    return _RHS_LAYOUTS[key]


def multi_fits(points: np.ndarray, A: np.ndarray, B: np.ndarray, Ys: np.ndarray, w: np.ndarray, first: np.ndarray,
               earlier: np.ndarray | None = None, *, use_numba: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every series (rows of ``Ys``, scaled to largest 1, relative weights ``w``; measured at ``points``, points ×
    parameters) refitted on every hypothesis (exponents ``A``, log exponents ``B``: series × hypotheses × terms ×
    parameters) by relative least squares: its coefficients (series × hypotheses × 1 + terms; hypothesis 0 keeps
    ``first``, the law's own), relative RSS, unit covariance ``(XᵀWX)⁺`` (by ``np.linalg.pinv`` of the gram of the
    columns scaled to unit weighted norm) and which terms are real (a term with no factor pads a law to the
    table's width: its column is 0).  ``earlier``: per series and hypothesis the first earlier one it repeats, -1
    where none (:func:`earlier_repeats`; by default found here).

    The numpy version (the reference) makes the design's powers per series × hypothesis × term × point ×
    parameter and contracts them with ``np.einsum``: ~12.7 s of a 66 s cProfile of ``pmkit show --json`` on
    ``bench/end_to_end.py``'s 100,000 two-parameter series, beside the batched ``pinv`` (10.8 s).  The loops take
    each factor from tables made once per call (:func:`multi_factor_tables`) and sum as ``np.einsum`` does
    (:func:`_einsum_dot` where it reads two contiguous operands, one running sum where it reads three); the same
    batched ``pinv`` and the same ``np.einsum`` of the inverses and right-hand sides run between them.  Where
    ``np.einsum`` sums depends on how its operands lie in memory, which follows the layout of ``A`` (``np.stack``
    of the hypotheses): the right-hand sides are laid out as the numpy version lays them out, found once per
    layout of the inputs, where the loops are also checked against the numpy version to the last bit
    (:func:`_rhs_layout`; a layout where they differ runs the numpy version), so every output is the same to the
    last bit either way.  A first version that laid every operand out densely passed a probe on random inputs and
    still moved the bounds' last bits on the benchmark's file: ``A`` arrives with its terms and parameters
    outermost, and there the numpy version's product of inverses and right-hand sides sums in a running sum, not
    in :func:`_einsum_dot`'s two lanes.  A hypothesis that repeats an earlier one of its row (18% of them on that
    file) shares its first's inverse: ``pinv`` runs once per distinct hypothesis.

    ``bench/interval_speed.py --reference-rev fa41c2e --parameters 2`` (100,000 series; with
    :func:`pmkit.fitting.alternatives._variants`; CPU seconds, four runs, load 1–3.5): alternatives stage 20.7–25.8
    → 16.3–20.5 s, ``pmkit show --json`` 38.4–48.7 → 34.5–39.3 s, documents byte-identical in every run
    (``bench/README.md`` §15, "Two-parameter intervals, faster")."""
    if not (numba_enabled() if use_numba is None else use_numba) or A.size == 0 \
            or not (np.isfinite(A).all() and np.isfinite(B).all()):
        return _multi_fits_numpy(points, A, B, Ys, w, first)
    global _PAIRWISE, _EINSUM_DOT, _FIND_SORTED
    if _PAIRWISE is None:
        _PAIRWISE = _jit("pairwise_sum", _pairwise_sum)
    if _EINSUM_DOT is None:
        _EINSUM_DOT = _jit("einsum_dot", _einsum_dot)
    if _FIND_SORTED is None:
        _FIND_SORTED = _jit("find_sorted", _find_sorted)
    axes = _rhs_layout(points, A, B, Ys, w, first)
    if axes is None:
        return _multi_fits_numpy(points, A, B, Ys, w, first)
    return _multi_fits_loops(points, A, B, Ys, w, first, axes, earlier_repeats(A, B) if earlier is None else earlier)
