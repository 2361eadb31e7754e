"""The iterative-refinement search of paper 000 (§3.3), run for many series at once.

For series sharing their points ``x`` (a matrix ``Y``: series × points, all finite), find per
series the simplified PMNF ``c0 + c1·x^α·log2^β(x)``:

1. integer start: on each slice (β = 0, 1, 2 with α = 0..5; α = 0 with β = 1, 2) the best integer
   exponent — these 19 hypotheses are shared by every series, so one table fit covers all of them;
2. refinement: per slice, the Stern–Brocot mediants between the best exponent and its bounds; the
   best hypothesis of an iteration over all slices is accepted if it improves the accepted SMAPE by
   the acceptance threshold (which grows by that factor with each iteration without acceptance); the
   search stops when no slice improved its SMAPE by the termination threshold;
3. non-constancy: the accepted hypothesis replaces the constant model only if it improves the
   constant model's SMAPE by the non-constancy threshold.

Hypotheses are compared by ``selection`` (RSS, as in the paper, or SMAPE); thresholds use the
``decision`` SMAPE (in-sample or leave-one-out).  Mediants differ between series after the first
step, so each iteration fits the distinct candidates (few) with one gathered table fit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pmkit.fitting.kernels import SLICES, fit_table, refine_step
from pmkit.fitting.leastsquares import adjusted_r2, basis_stats, constant_loo_predictions, smape

MAX_ALPHA = 6
"""Exponents α stay below this (paper: α < 6)."""
MAX_BETA = 3
"""Exponents β stay below this (paper: β < 3)."""
MIN_POINTS = 3
"""Fewer points than this cannot tell a growth law from noise: the model is the constant."""

FLAT = 1e-12
"""Series whose values differ by less than this share of their size are constant (rounding only)."""

SELECTIONS = ("rss", "smape", "loo")
DECISIONS = ("insample", "loo")
CONSTANCY = ("insample", "loo", "mixed")


@dataclass(frozen=True)
class RefineSettings:
    """Thresholds and choices of the search (defaults: the paper's thresholds; others measured)."""

    acceptance: float = 1.5
    termination: float = 2.0
    nonconstancy: float = 2.0
    selection: str = "rss"
    decision: str = "insample"
    constancy: str = "loo"
    max_iterations: int = 10
    clean_constant: float = 0.0
    use_numba: bool | None = None

    def __post_init__(self) -> None:
        if self.selection not in SELECTIONS:
            raise ValueError(f"selection must be one of {SELECTIONS}, got {self.selection!r}")
        if self.decision not in DECISIONS:
            raise ValueError(f"decision must be one of {DECISIONS}, got {self.decision!r}")
        if self.constancy not in CONSTANCY:
            raise ValueError(f"constancy must be one of {CONSTANCY}, got {self.constancy!r}")


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

    @classmethod
    def empty(cls, count: int) -> SingleFits:
        zeros = np.zeros((count, 2), dtype=np.int64)
        zeros[:, 1] = 1
        nan = np.full(count, np.nan)
        return cls(np.ones(count, dtype=bool), zeros.copy(), zeros.copy(), nan.copy(), np.zeros(count),
                   nan.copy(), nan.copy(), nan.copy(), nan.copy())

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


def _integer_hypotheses(log_terms: bool) -> tuple[np.ndarray, np.ndarray]:
    slices, values = [], []
    for s in range(3 if log_terms else 1):
        for a in range(0 if s else 1, MAX_ALPHA):
            slices.append(s)
            values.append(a)
    if log_terms:
        for b in range(1, MAX_BETA):
            slices.append(3)
            values.append(b)
    return np.array(slices, dtype=np.int64), np.array(values, dtype=np.int64)


def _key(slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return (slices.astype(np.int64) << 42) | (num.astype(np.int64) << 21) | den.astype(np.int64)


def _unkey(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mask = (1 << 21) - 1
    return keys >> 42, (keys >> 21) & mask, keys & mask


def _tables(fit: dict[str, np.ndarray], settings: RefineSettings) -> tuple[np.ndarray, np.ndarray]:
    crit = fit[{"rss": "rss", "smape": "smape", "loo": "loo_smape"}[settings.selection]]
    err = fit["smape" if settings.decision == "insample" else "loo_smape"]
    return crit, err


def refine_series(x: np.ndarray, Y: np.ndarray, settings: RefineSettings | None = None) -> SingleFits:
    """Search the best simplified-PMNF model of every row of ``Y`` measured at points ``x``.

    ``Y`` must be finite (group rows by their missing points first).  Fewer than
    :data:`MIN_POINTS` points give the constant model; parameter values below 1 rule out log
    terms; negative values leave only integer exponents.
    """
    settings = settings or RefineSettings()
    x = np.asarray(x, dtype=float).reshape(-1)
    Y = np.ascontiguousarray(Y, dtype=float).reshape(-1, x.size)
    count, n = Y.shape
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

    needs_loo = settings.selection == "loo" or settings.decision == "loo"
    # integer start: shared hypotheses, one table fit for all series
    h_slices, h_values = _integer_hypotheses(log_terms)
    ones = np.ones_like(h_values)
    stats = basis_stats(basis_rows(x, h_slices, h_values, ones))
    idx = np.broadcast_to(np.arange(len(h_slices), dtype=np.int64), (count, len(h_slices)))
    fit = fit_table(Y, stats.basis, stats.weights, stats.leverage, stats.mean, stats.valid, idx,
                    loo=needs_loo, use_numba=settings.use_numba)
    crit, err = _tables(fit, settings)

    state = np.zeros((count, SLICES, 6), dtype=np.int64)
    state[:, :, 1::2] = 1
    cen_crit = np.full((count, SLICES), np.inf)
    cen_err = np.full((count, SLICES), np.inf)
    rows = np.arange(count)
    for s in range(SLICES):
        cols = np.flatnonzero(h_slices == s)
        if cols.size == 0:
            continue
        pick = cols[np.argmin(np.where(np.isnan(crit[:, cols]), np.inf, crit[:, cols]), axis=1)]
        best = h_values[pick]
        state[:, s, 0] = np.maximum(best - 1, 0)
        state[:, s, 2] = best
        state[:, s, 4] = best + 1
        cen_crit[:, s] = crit[rows, pick]
        cen_err[:, s] = err[rows, pick]

    first = np.argmin(cen_crit, axis=1)
    acc = np.stack([first, state[rows, first, 2], state[rows, first, 3]], axis=1).astype(np.int64)
    acc_err = cen_err[rows, first].copy()
    thr = np.full(count, settings.acceptance)
    active = np.isfinite(cen_crit[rows, first])
    enabled = np.isfinite(cen_crit)

    iterations = 0 if negative else settings.max_iterations
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
        table_idx = np.full(keys.shape, -1, dtype=np.int64)
        table_idx[has] = inverse.reshape(-1)
        fit = fit_table(Y[live], u_stats.basis, u_stats.weights, u_stats.leverage, u_stats.mean, u_stats.valid,
                        table_idx.reshape(live.size, -1), loo=needs_loo, use_numba=settings.use_numba)
        crit, err = _tables(fit, settings)
        sub = (active[live].copy(), crit.reshape(live.size, SLICES, 2), err.reshape(live.size, SLICES, 2),
               st, cen_crit[live], cen_err[live], acc[live], acc_err[live], thr[live])
        refine_step(*sub, settings.acceptance, settings.termination, use_numba=settings.use_numba)
        active[live], state[live], cen_crit[live], cen_err[live] = sub[0], sub[3], sub[4], sub[5]
        acc[live], acc_err[live], thr[live] = sub[6], sub[7], sub[8]

    _final_fit(x, Y, acc, np.isfinite(acc_err) & ~flat, tss, const_in, const_loo, settings, out)
    return out


def _final_fit(x: np.ndarray, Y: np.ndarray, acc: np.ndarray, found: np.ndarray, tss: np.ndarray,
               const_in: np.ndarray, const_loo: np.ndarray, settings: RefineSettings, out: SingleFits) -> None:
    """Refit the accepted hypotheses and keep those that pass the non-constancy test."""
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
    if settings.constancy == "insample":
        before, after = const_in[rows], sm
    elif settings.constancy == "loo":
        before, after = const_loo[rows], loo
    else:
        before, after = const_in[rows], loo
    with np.errstate(all="ignore"):
        gain = np.where(after <= 0, np.where(before > 0, np.inf, 1.0), before / np.where(after > 0, after, 1.0))
    ok = np.isfinite(c1) & (c1 != 0) & np.isfinite(rss) & (gain >= settings.nonconstancy)
    rows, inv = rows[ok], inverse[ok]
    out.constant[rows] = False
    alpha, beta = _fraction_pairs(u_slices[inv], u_num[inv], u_den[inv])
    out.alpha[rows], out.beta[rows] = alpha, beta
    out.c0[rows], out.c1[rows] = c0[ok], c1[ok]
    out.rss[rows], out.smape[rows], out.loo_smape[rows] = rss[ok], sm[ok], loo[ok]
    out.adjusted_r2[rows] = adjusted_r2(rss[ok], tss[rows], n, 2)


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
