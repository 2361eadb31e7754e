"""Closed-form least squares shared by many series, and the error figures modelers compare.

Every series of a batch (call paths × metrics) is measured at the same points, so a hypothesis's
design matrix is shared: fitting it to all series is a matrix product, and the leave-one-out
residuals follow from the hat matrix without refitting (``r_i / (1 - h_ii)``).  For the
two-coefficient model ``c0 + c1·f(x)`` everything is closed form in the centred basis.  Rows of
``Y`` are series, columns are points; NaN is not allowed here (callers group series by their
missing-value pattern first, see :mod:`pmkit.fitting.maskgroups`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEGENERATE = 1e-12
"""Relative size below which a centred basis column (or ``1 - h_ii``) counts as zero."""


@dataclass(frozen=True)
class BasisStats:
    """What fitting ``c0 + c1·b`` needs from basis rows ``b`` (hypotheses × points).

    ``weights = (b - mean(b)) / Σ(b - mean(b))²`` so that ``c1 = Y @ weights``; ``leverage`` is the
    hat-matrix diagonal; ``valid`` is False where the column is (numerically) constant or not finite.
    """

    basis: np.ndarray
    mean: np.ndarray
    weights: np.ndarray
    leverage: np.ndarray
    valid: np.ndarray


def basis_stats(basis: np.ndarray) -> BasisStats:
    """Centred weights and leverages of each basis row, for the closed-form two-coefficient fit."""
    basis = np.atleast_2d(np.asarray(basis, dtype=float))
    n = basis.shape[1]
    with np.errstate(all="ignore"):
        finite = np.isfinite(basis).all(axis=1)
        safe = np.where(finite[:, None], basis, 0.0)
        mean = safe.mean(axis=1)
        centred = safe - mean[:, None]
        sbb = (centred * centred).sum(axis=1)
        scale = np.maximum(np.abs(safe).max(axis=1), 1e-300)
        valid = finite & (sbb > (DEGENERATE * scale) ** 2 * n)
        denom = np.where(valid, sbb, 1.0)
        weights = centred / denom[:, None]
        leverage = 1.0 / n + centred * centred / denom[:, None]
    weights[~valid] = 0.0
    leverage[~valid] = 1.0
    return BasisStats(safe, mean, weights, leverage, valid)


def fit_line(Y: np.ndarray, basis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares ``c0, c1`` of ``c0 + c1·basis`` for every row of ``Y`` (one shared column)."""
    stats = basis_stats(basis)
    c1 = Y @ stats.weights[0]
    c0 = Y.mean(axis=1) - c1 * stats.mean[0]
    return c0, c1


def smape(Y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Symmetric mean absolute percentage error per row, in percent (0–200).

    A point where both value and prediction are 0 counts 0; a non-finite prediction counts 200.
    """
    Y = np.asarray(Y, dtype=float)
    with np.errstate(all="ignore"):
        total = np.abs(Y) + np.abs(predicted)
        ratio = np.where(total > 0, 2.0 * np.abs(Y - predicted) / np.where(total > 0, total, 1.0), 0.0)
        ratio = np.where(np.isfinite(predicted), ratio, 2.0)
    # C order: numpy sums a contiguous row pairwise but a strided one (a column subset of several rows
    # comes back in Fortran order) term by term, so a row's SMAPE would depend on the rows beside it
    return 100.0 * np.ascontiguousarray(ratio).mean(axis=-1)


def relative_rss(Y: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per row, the sum of squared relative residuals ``((y - ŷ) / y)²`` (``y = 0`` divides by 1).  Each row is
    summed on its own (a contiguous row, numpy's pairwise order), so rows computed together or apart agree."""
    with np.errstate(all="ignore"):
        relative = (Y - predicted) / np.where(Y != 0, Y, 1.0)
    return (relative * relative).sum(axis=1)


def loo_predictions(Y: np.ndarray, predicted: np.ndarray, leverage: np.ndarray) -> np.ndarray:
    """Leave-one-out predictions ``y - r / (1 - h)`` from in-sample residuals; inf where ``h ≈ 1``."""
    with np.errstate(all="ignore"):
        room = 1.0 - leverage
        return np.where(room > DEGENERATE, Y - (Y - predicted) / np.where(room > DEGENERATE, room, 1.0), np.inf)


def constant_loo_predictions(Y: np.ndarray) -> np.ndarray:
    """Leave-one-out predictions of the constant (mean) model: the mean of the other points."""
    n = Y.shape[-1]
    if n < 2:
        return np.full_like(Y, np.inf)
    return (Y.sum(axis=-1, keepdims=True) - Y) / (n - 1)


def adjusted_r2(rss: np.ndarray, tss: np.ndarray, n: int, coefficients: int) -> np.ndarray:
    """Adjusted R² of a model with ``coefficients`` fitted values (constant included); NaN if undefined."""
    rss = np.asarray(rss, dtype=float)
    tss = np.asarray(tss, dtype=float)
    dof = n - coefficients
    with np.errstate(all="ignore"):
        r2 = np.where(tss > 0, 1.0 - rss / np.where(tss > 0, tss, 1.0), np.where(rss <= 0, 1.0, 0.0))
        if dof <= 0:
            return np.full(np.shape(rss), np.nan)
        return 1.0 - (1.0 - r2) * (n - 1) / dof


def f_critical(level: float, d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """The F distribution's upper ``level`` point for each pair of degrees of freedom, computed once per
    distinct pair (a batch has a handful; scipy's per-element inverse was a tenth of two-parameter modeling).

    ``scipy.special.fdtri(d1, d2, 1 - level)`` is what ``scipy.stats.f.isf(level, d1, d2)`` computes (the F
    distribution has no upper inverse of its own; scipy's generic one is the quantile of ``1 - level``), equal
    to the last bit for every ``d1`` < 60, ``d2`` < 3,000 at levels 0.001–0.1 (scipy 1.17) — without importing
    ``scipy.stats``, 0.3–0.5 s of CPU in every process that models two parameters (the multi-parameter search's
    tests, and the ``hedge`` option's, :mod:`pmkit.fitting.hedging`)."""
    from scipy.special import fdtri

    d1, d2 = np.broadcast_arrays(np.asarray(d1, dtype=np.int64), np.asarray(d2, dtype=np.int64))
    if d1.size == 0:
        return np.zeros(d1.shape)
    width = int(d2.max()) + 1
    key = d1 * width + d2  # degrees of freedom are small non-negative integers: a lookup table, no sort
    present = np.flatnonzero(np.bincount(key.ravel()))
    table = np.zeros(int(present[-1]) + 1)
    table[present] = fdtri(present // width, present % width, 1.0 - level)
    return table[key]


WELL_CONDITIONED = 1e8
"""Normal equations are solved directly below this condition number of the (scaled) design."""


def _left_inverse(design: np.ndarray) -> np.ndarray:
    """``(DᵀD)⁻¹Dᵀ`` for a well-conditioned design (columns scaled to unit norm first), else ``pinv(D)``."""
    norms = np.sqrt((design * design).sum(axis=0))
    if design.shape[0] >= design.shape[1] and (norms > 0).all() and np.isfinite(norms).all():
        scaled = design / norms
        gram = scaled.T @ scaled
        with np.errstate(all="ignore"):
            condition = np.linalg.cond(gram)
        if condition < WELL_CONDITIONED ** 2:
            return np.linalg.solve(gram, scaled.T) / norms[:, None]
    return np.linalg.pinv(design)


def left_inverses(designs: np.ndarray) -> np.ndarray:
    """:func:`_left_inverse` of each design of a stack (designs × points × columns), batched."""
    designs = np.asarray(designs, dtype=float)
    out = np.empty((designs.shape[0], designs.shape[2], designs.shape[1]))
    norms = np.sqrt((designs * designs).sum(axis=1))
    usable = (norms > 0).all(axis=1) & np.isfinite(norms).all(axis=1) & (designs.shape[1] >= designs.shape[2])
    well = np.zeros(len(designs), dtype=bool)
    if usable.any():
        scaled = designs[usable] / norms[usable][:, None, :]
        gram = np.einsum("gnk,gnj->gkj", scaled, scaled)
        with np.errstate(all="ignore"):
            condition = np.linalg.cond(gram)
        ok = condition < WELL_CONDITIONED ** 2
        idx = np.flatnonzero(usable)[ok]
        if idx.size:
            solved = np.linalg.solve(gram[ok], np.swapaxes(scaled[ok], 1, 2))
            out[idx] = solved / norms[idx][:, :, None]
        well[idx] = True
    for g in np.flatnonzero(~well):
        out[g] = np.linalg.pinv(designs[g])
    return out


@dataclass(frozen=True)
class DesignFit:
    """A shared-design least-squares fit of many series: coefficients (series × columns) and errors."""

    coefficients: np.ndarray
    predicted: np.ndarray
    rss: np.ndarray
    smape: np.ndarray
    loo_smape: np.ndarray


def rowwise(Y: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``Y @ M.T``, each row of the result computed from that row of ``Y`` alone, always the same way.

    BLAS sums a row's products in an order that depends on the row's position and on how many rows
    the matrix has (OpenBLAS 0.3, numpy 2: 1 row in 5,000 differs in its last bit when three rows
    are dropped from the top), so a series' model would change with the series modeled beside it —
    in a batch, a mask group, or a chunk on a cluster (:mod:`pmkit.modelchunks`).  numpy's einsum
    on C-ordered rows does not (checked from 1 to 3,000 rows at any offset); it is slower than
    BLAS, which does not matter for a batch's few small products.
    """
    return np.einsum("sn,kn->sk", np.ascontiguousarray(Y, dtype=float), np.ascontiguousarray(M, dtype=float))


def fit_design(Y: np.ndarray, design: np.ndarray, *, insample: bool = True) -> DesignFit:
    """Least squares of every row of ``Y`` on the shared ``design`` (points × columns).

    Solves the normal equations once for all rows (the pseudo-inverse where they are ill-conditioned,
    so rank-deficient designs get the minimum-norm solution); leave-one-out errors come from the hat
    matrix.  ``insample=False`` skips the in-sample SMAPE (NaN) for callers that rank by
    leave-one-out error and need it only for the winner.
    """
    design = np.asarray(design, dtype=float)
    pinv = _left_inverse(design)
    coefficients = rowwise(Y, pinv)
    predicted = rowwise(coefficients, design)
    residual = Y - predicted
    rss = (residual * residual).sum(axis=1)
    leverage = np.einsum("ij,ji->i", design, pinv)
    loo = loo_predictions(Y, predicted, leverage[None, :])
    in_sample = smape(Y, predicted) if insample else np.full(len(Y), np.nan)
    return DesignFit(coefficients, predicted, rss, in_sample, smape(Y, loo))


@dataclass
class RelativeFits:
    """Relative least-squares fits of hypotheses (two columns: 1 and a basis) to series, scaled back."""

    coef: np.ndarray
    cov_unit: np.ndarray | None
    rss: np.ndarray


def relative_line_fits(Ys: np.ndarray, w: np.ndarray, basis: np.ndarray, *, covariance: bool = True
                       ) -> RelativeFits:
    """Relative least squares of ``c0 + c1·b`` for every series (rows of ``Ys``, weights ``w``) and basis
    row ``b``; a basis of zeros is the constant model (``c1 = 0``).  Closed form.  ``covariance=False``: no
    unit covariance (``None``), for callers that read only the coefficients and RSS (the same bits)."""
    from pmkit.fitting.kernels import line_fits

    with np.errstate(all="ignore"):
        sw = w.sum(axis=1)
        swb = w @ basis.T
        swbb = w @ (basis * basis).T
        swy = (w * Ys).sum(axis=1)
        swby = (w * Ys) @ basis.T
    return RelativeFits(*line_fits(Ys, basis, sw, swy, swb, swbb, swby, covariance=covariance))
