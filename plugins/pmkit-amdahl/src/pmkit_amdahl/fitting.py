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
