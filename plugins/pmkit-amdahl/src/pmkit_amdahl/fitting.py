"""Nonlinear least-squares fit of the Amdahl-style law T(p) = a/p + b·p^c + d to one series.

The fit works on p scaled by its largest value and T scaled by its largest magnitude, so that the
four coefficients are of order one, and minimises relative residuals (T_fit - T)/T when every value
is positive: run-to-run noise is a share of the value, so no single large point should decide the
fit.  For a fixed c the law is linear in a, b and d, which gives each start of the nonlinear search
a good initial a, b, d (non-negative least squares when the coefficients are bounded at zero).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_COEFFICIENTS = 4


@dataclass(frozen=True)
class AmdahlFit:
    """The outcome of one fit, in the units of the data.

    ``converged`` is False when no start of the nonlinear search reached a solution; ``message``
    then says why (scipy's status text, or the reason no fit was tried).
    """

    a: float
    b: float
    c: float
    d: float
    converged: bool
    message: str
    evaluations: int


def design(p: np.ndarray, c: float) -> np.ndarray:
    """Columns 1/p, p^c and 1: the law's basis for a fixed exponent c."""
    return np.column_stack([1.0 / p, np.power(p, c), np.ones_like(p)])


def residual_weights(y: np.ndarray) -> np.ndarray:
    """1/|T| per point when every value is positive (relative error), else one common scale."""
    if np.all(y > 0):
        return 1.0 / y
    scale = float(np.mean(np.abs(y)))
    return np.full_like(y, 1.0 / scale if scale > 0 else 1.0)


def linear_coefficients(p: np.ndarray, y: np.ndarray, c: float, *, nonnegative: bool,
                        columns: tuple[int, ...] = (0, 1, 2)) -> np.ndarray:
    """a, b, d minimising the weighted residuals for a fixed c, using only the chosen ``columns``.

    Columns left out get coefficient 0 (used when the exponent c makes p^c collide with 1/p or 1).
    """
    from scipy.optimize import nnls

    w = residual_weights(y)
    full = design(p, c)[:, columns] * w[:, None]
    rhs = y * w
    if nonnegative:
        solution, _ = nnls(full, rhs)
    else:
        solution = np.linalg.lstsq(full, rhs, rcond=None)[0]
    out = np.zeros(3)
    out[list(columns)] = solution
    return out


def weighted_rss(p: np.ndarray, y: np.ndarray, c: float, columns: tuple[int, ...], *,
                 nonnegative: bool) -> tuple[np.ndarray, float]:
    """a, b, d of the law restricted to ``columns`` at exponent ``c``, and its weighted residual sum of squares."""
    coefficients = linear_coefficients(p, y, c, nonnegative=nonnegative, columns=columns)
    residuals = (design(p, c) @ coefficients - y) * residual_weights(y)
    return coefficients, float(np.sum(residuals**2))


def candidate_columns(c: float) -> list[tuple[int, ...]]:
    """The nested laws worth trying at exponent ``c``: d, a/p + d, b·p^c + d and the whole law.

    When c is -1 or 0 the p^c column repeats 1/p or 1, so only d and a/p + d remain.
    """
    if c in (-1.0, 0.0):
        return [(2,), (0, 2)]
    return [(2,), (0, 2), (1, 2), (0, 1, 2)]


def free_coefficients(columns: tuple[int, ...]) -> int:
    """Coefficients a law with ``columns`` fits: one per column, plus the exponent c with the p^c column."""
    return len(columns) + (1 in columns)


EXACT = 1e-20
"""Mean squared weighted residual below which a law fits exactly: round-off, not evidence for more terms."""


def f_test_pvalue(rss_small: float, k_small: int, rss_large: float, k_large: int, n: int) -> float:
    """p-value of the F test that the larger of two nested least-squares fits lowers the error only by chance.

    1.0 when the larger law leaves no degrees of freedom to judge it.
    """
    from scipy.stats import f as f_distribution

    if n - k_large <= 0 or k_large <= k_small:
        return 1.0
    rss_small, rss_large = max(rss_small, EXACT * n), max(rss_large, EXACT * n)
    statistic = ((rss_small - rss_large) / (k_large - k_small)) / (rss_large / (n - k_large))
    return float(f_distribution.sf(max(statistic, 0.0), k_large - k_small, n - k_large))


def select_columns(p: np.ndarray, y: np.ndarray, c: float, *, nonnegative: bool,
                   significance: float) -> tuple[int, ...]:
    """The nested law (see :func:`candidate_columns`) the data supports, by backward elimination.

    Starting from the whole law, the term whose removal raises the weighted residuals least is
    dropped while the F test of the two fits finds the difference not significant at
    ``significance``; so a constant series ends as a constant, and a/p + b·p^c + d, whose terms may
    each explain little alone (a U-shaped run time), keeps both.
    """
    fits = {columns: weighted_rss(p, y, c, columns, nonnegative=nonnegative)[1] for columns in candidate_columns(c)}
    current = max(fits, key=len)
    while True:
        smaller = [cols for cols in fits if set(cols) < set(current) and len(cols) == len(current) - 1]
        if not smaller:
            return current
        best = min(smaller, key=lambda cols: fits[cols])
        pvalue = f_test_pvalue(fits[best], free_coefficients(best), fits[current], free_coefficients(current), len(y))
        if pvalue < significance:
            return current
        current = best


def start_exponents(c_min: float, c_max: float, starts: int) -> np.ndarray:
    """``starts`` exponents spread inside (c_min, c_max), avoiding the bounds themselves."""
    if starts <= 1:
        return np.array([0.5 * (c_min + c_max)])
    return np.linspace(c_min, c_max, starts + 2)[1:-1]


def fit_amdahl(p: np.ndarray, y: np.ndarray, *, c_min: float = -1.0, c_max: float = 3.0,
               nonnegative: bool = True, starts: int = 6, max_evaluations: int = 2000) -> AmdahlFit:
    """Fit T(p) = a/p + b·p^c + d to the points (p, y) from several starts; keep the best.

    ``p`` must be positive and finite and ``y`` finite (the caller drops other points); at least
    four distinct p are needed.  Bounds: c in [c_min, c_max]; a, b, d >= 0 when ``nonnegative``.
    """
    from scipy.optimize import least_squares

    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    if len(np.unique(p)) < N_COEFFICIENTS:
        return AmdahlFit(*[float("nan")] * 4, False, f"needs at least {N_COEFFICIENTS} distinct values of the "
                         f"parameter, has {len(np.unique(p))}", 0)
    p_ref = float(np.max(p))
    y_ref = float(np.max(np.abs(y))) or 1.0
    q = p / p_ref
    t = y / y_ref
    w = residual_weights(t)

    def residuals(x: np.ndarray) -> np.ndarray:
        a, b, c, d = x
        return (a / q + b * np.power(q, c) + d - t) * w

    log_q = np.log(q)

    def jacobian(x: np.ndarray) -> np.ndarray:
        _, b, c, _ = x
        power = np.power(q, c)
        return np.column_stack([w / q, w * power, w * b * power * log_q, w])

    low = 0.0 if nonnegative else -np.inf
    bounds = ([low, low, c_min, low], [np.inf, np.inf, c_max, np.inf])
    best = None
    evaluations = 0
    failures: list[str] = []
    for c0 in start_exponents(c_min, c_max, starts):
        a0, b0, d0 = linear_coefficients(q, t, float(c0), nonnegative=nonnegative)
        x0 = np.clip([a0, b0, c0, d0], bounds[0], bounds[1])
        with np.errstate(all="ignore"):
            result = least_squares(residuals, x0, jac=jacobian, bounds=bounds, method="trf", x_scale="jac",
                                   ftol=1e-12, xtol=1e-12, gtol=1e-12, max_nfev=max_evaluations)
        evaluations += int(result.nfev)
        if result.status <= 0 or not np.all(np.isfinite(result.x)) or not np.isfinite(result.cost):
            failures.append(str(result.message))
            continue
        if best is None or result.cost < best.cost:
            best = result
    if best is None:
        reason = failures[0] if failures else "no start was tried"
        return AmdahlFit(*[float("nan")] * 4, False, f"no start converged: {reason}", evaluations)
    a, b, c, d = (float(v) for v in best.x)
    return AmdahlFit(a * y_ref * p_ref, b * y_ref / p_ref**c, c, d * y_ref, True, str(best.message), evaluations)
