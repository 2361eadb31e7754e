"""APMT's predefined fitting functions, fitted to many series at once and chosen by R².

The APMT paper (papers/001, §3.3) fits every hardware counter of a kernel as a function of the
scale with "a set of linear fitting functions including polynomial, exponential and logarithm",
keeps "the highest rsquare one", and avoids high-degree equations (each extra coefficient needs
one more run).  The set here, in order of simplicity (ties go to the earlier one):

* constant ``c0``;
* linear ``c0 + c1·x`` and, in the work per process the paper plots (``N/x``), ``c0 + c1/x``;
* logarithmic ``c0 + c1·log2(x)`` and ``c0 + c1·x·log2(x)``;
* polynomial ``c0 + c1·x^m`` for m in ±1/2, ±2, 3/2, 3 and, from 4 points on (one coefficient
  more), ``c0 + c1·x + c2·x²`` and ``c0 + c1/x + c2/x²``;
* exponential ``a·e^(b·x)``, fitted as the line ``ln y = ln a + b·x``, and the power law ``a·x^b``,
  fitted as ``ln y = ln a + b·ln x`` with b rounded to twelfths (positive values only).

Laws are compared by adjusted R² (equal to R² among the two-coefficient laws, and fair to the
three-coefficient ones).  Three guards keep noise from being extrapolated, each a measured choice
of the APMT modeler (its docstring gives the figures): a law must reach ``min_r2``; a series whose
relative spread is below ``flat`` stays constant; and a law of a higher ``level`` (it assumes more:
faster growth, a free exponent, a third coefficient) must leave ``margin`` times less variance
unexplained per level than the best of the lower levels.  Fits minimise ordinary squared
residuals, or relative ones (weights 1/y) when ``relative`` is set; R² is taken in the same
weighting.  Everything is vectorised over series:
series with the same missing points share one pass (:mod:`pmkit.fitting.maskgroups`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from pmkit.fitting.maskgroups import group_by_mask


@dataclass(frozen=True)
class LawShape:
    """One predefined function: ``c0 + Σ c_k · x^exponent_k · log2(x)^log_k``, ``a·e^(b·x)``
    (``kind`` exponential) or ``a·x^b`` (``kind`` power, b fitted and written in twelfths).

    ``level`` orders the functions by how much they assume: a law of a higher level must leave
    ``margin`` times less variance unexplained per level to replace one of a lower level.
    """

    name: str
    family: str
    level: int
    terms: tuple[tuple[Fraction, Fraction], ...] = ()
    kind: str = "sum"

    @property
    def coefficients(self) -> int:
        return 2 if self.kind != "sum" else 1 + len(self.terms)

    @property
    def exponential(self) -> bool:
        return self.kind == "exponential"

    def basis(self, x: np.ndarray) -> np.ndarray:
        """Columns (points × terms) of the non-constant terms at ``x``."""
        x = np.asarray(x, dtype=float)
        columns = []
        with np.errstate(all="ignore"):
            for exponent, log_exponent in self.terms:
                column = np.power(x, float(exponent)) if exponent != 0 else np.ones_like(x)
                if log_exponent != 0:
                    column = column * np.power(np.log2(x), float(log_exponent))
                columns.append(column)
        return np.stack(columns, axis=1) if columns else np.zeros((len(x), 0))

    def evaluate(self, coefficients: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Values at ``x`` for coefficient rows (series × 3) → (series × len(x))."""
        coefficients = np.atleast_2d(coefficients)
        x = np.asarray(x, dtype=float)
        with np.errstate(all="ignore"):
            if self.kind == "exponential":
                return coefficients[:, :1] * np.exp(coefficients[:, 1:2] * x[None, :])
            if self.kind == "power":
                return coefficients[:, :1] * np.power(x[None, :], coefficients[:, 1:2])
            out = np.repeat(coefficients[:, :1], len(x), axis=1)
            basis = self.basis(x)
            for k in range(basis.shape[1]):
                out = out + coefficients[:, k + 1:k + 2] * basis[None, :, k]
        return out


def _shape(name: str, family: str, level: int, *terms: tuple[int | str, int]) -> LawShape:
    return LawShape(name, family, level, tuple((Fraction(e), Fraction(j)) for e, j in terms))


SHAPES: tuple[LawShape, ...] = (
    LawShape("constant", "constant", 0),
    _shape("linear", "linear", 1, (1, 0)),
    _shape("work per process", "linear", 1, (-1, 0)),
    _shape("log", "logarithmic", 1, (0, 1)),
    _shape("sqrt", "polynomial", 2, ("1/2", 0)),
    _shape("inverse sqrt", "polynomial", 2, ("-1/2", 0)),
    _shape("cube root", "polynomial", 2, ("1/3", 0)),
    _shape("inverse cube root", "polynomial", 2, ("-1/3", 0)),
    _shape("surface", "polynomial", 2, ("2/3", 0)),
    _shape("surface per process", "polynomial", 2, ("-2/3", 0)),
    LawShape("power law", "polynomial", 2, kind="power"),
    _shape("quadratic term", "polynomial", 3, (2, 0)),
    _shape("inverse square", "polynomial", 3, (-2, 0)),
    _shape("x^3/2", "polynomial", 3, ("3/2", 0)),
    _shape("x log x", "logarithmic", 3, (1, 1)),
    _shape("cubic term", "polynomial", 4, (3, 0)),
    LawShape("exponential", "exponential", 4, kind="exponential"),
    _shape("quadratic", "polynomial", 4, (1, 0), (2, 0)),
    _shape("quadratic in work per process", "polynomial", 4, (-1, 0), (-2, 0)),
)
"""The predefined functions by level, simplest first (ties go to the earlier one)."""

POWER_STEP = 12
"""A power law's fitted exponent is written in twelfths (halves, thirds and quarters stay exact)."""

CONSTANT = 0
MAX_COEFFICIENTS = 3


@dataclass
class LawFits:
    """The chosen law per series: ``shape`` indexes :data:`SHAPES`, ``coefficients`` (series × 3)
    holds c0, c1, c2 (for the exponential: a, b), ``r2`` and ``adjusted_r2`` its figures (NaN for a
    constant or no data), ``points`` how many finite values it was fitted to, ``floor`` the least
    value a law may take (0 for series measured non-negative: counts and times never fall below)."""

    shape: np.ndarray
    coefficients: np.ndarray
    r2: np.ndarray
    adjusted_r2: np.ndarray
    points: np.ndarray
    floor: np.ndarray

    def __len__(self) -> int:
        return len(self.shape)

    def evaluate(self, x: np.ndarray | float) -> np.ndarray:
        """Every series' law at ``x`` → (series × len(x)); NaN for series without data."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        out = np.full((len(self), len(x)), np.nan)
        for s in np.unique(self.shape):
            rows = self.shape == s
            out[rows] = SHAPES[s].evaluate(self.coefficients[rows], x)
        out = np.maximum(out, self.floor[:, None])
        out[self.points == 0] = np.nan
        return out


def fit_laws(x: np.ndarray, values: np.ndarray, *, min_r2: float = 0.0, relative: bool = False, flat: float = 0.0,
             margin: float = 1.0, shapes: tuple[LawShape, ...] = SHAPES) -> LawFits:
    """The best predefined law of each row of ``values`` (series × points) over ``x``.

    NaN values are left out of their series' fit.  A series with fewer than 3 finite values, or
    whose values are all equal, gets the constant (its mean; NaN with no value).  ``min_r2`` is the
    adjusted R² a law needs to replace the constant; ``flat`` the relative spread (standard
    deviation over mean) below which a series stays constant whatever its R² (noise alone);
    ``margin`` how many times less unexplained variance a law needs, per level above the best so
    far, to replace it.
    """
    x = np.asarray(x, dtype=float)
    values = np.atleast_2d(np.asarray(values, dtype=float))
    count = values.shape[0]
    with np.errstate(invalid="ignore"):
        nonnegative = ~(np.where(np.isfinite(values), values, 0.0) < 0).any(axis=1)
    fits = LawFits(np.zeros(count, dtype=np.int64), np.zeros((count, MAX_COEFFICIENTS)),
                   np.full(count, np.nan), np.full(count, np.nan), np.zeros(count, dtype=np.int64),
                   np.where(nonnegative, 0.0, -np.inf))
    if count == 0:
        return fits
    for group in group_by_mask(values):
        cols = group.columns
        rows = group.rows
        fits.points[rows] = len(cols)
        if len(cols) == 0:
            fits.coefficients[rows, 0] = np.nan
            continue
        y = values[np.ix_(rows, cols)]
        _fit_group(x[cols], y, rows, fits, min_r2, relative, flat, margin, shapes)
    return fits


def _weights(y: np.ndarray, relative: bool) -> np.ndarray:
    if not relative:
        return np.ones_like(y)
    magnitude = np.abs(y)
    scale = np.where(magnitude > 0, magnitude, np.nan)
    fallback = _nanmean(np.where(magnitude > 0, magnitude, np.nan))[:, None]
    with np.errstate(all="ignore"):
        return 1.0 / np.where(np.isfinite(scale), scale, np.where(np.isfinite(fallback), fallback, 1.0))


def _fit_group(x: np.ndarray, y: np.ndarray, rows: np.ndarray, fits: LawFits, min_r2: float, relative: bool,
               flat: float, margin: float, shapes: tuple[LawShape, ...]) -> None:
    n = len(x)
    w = _weights(y, relative)
    w2 = w * w
    total = w2.sum(axis=1)
    mean = (w2 * y).sum(axis=1) / total
    tss = (w2 * (y - mean[:, None]) ** 2).sum(axis=1)
    best = np.full(len(rows), -np.inf)
    best_shape = np.zeros(len(rows), dtype=np.int64)
    best_coef = np.zeros((len(rows), MAX_COEFFICIENTS))
    best_coef[:, 0] = mean
    best_r2 = np.full(len(rows), np.nan)
    best_level = np.zeros(len(rows), dtype=np.int64)
    with np.errstate(all="ignore"):
        spread = np.sqrt(tss / total) / np.abs(mean)
    varied = (tss > 1e-24 * np.maximum(total * mean * mean, 1e-300)) & ~(spread < flat)
    for s, shape in enumerate(shapes):
        k = shape.coefficients
        if shape.family == "constant" or n < 3 or n <= k:
            continue
        coef = _solve(shape, x, y, w2)
        if coef is None:
            continue
        fitted = shape.evaluate(coef, x)
        with np.errstate(all="ignore"):
            rss = (w2 * (y - fitted) ** 2).sum(axis=1)
            r2 = 1.0 - rss / np.where(varied, tss, np.nan)
            adjusted = 1.0 - (1.0 - r2) * (n - 1) / (n - k)
        steps = np.maximum(shape.level - best_level, 0)
        bar = np.where(np.isfinite(best), 1.0 - (1.0 - best) / float(margin) ** steps, best)
        better = np.isfinite(adjusted) & varied & (adjusted > bar + 1e-12)
        best = np.where(better, adjusted, best)
        best_level[better] = shape.level
        best_shape[better] = s
        best_coef[better] = coef[better]
        best_r2[better] = r2[better]
    keep = np.isfinite(best) & (best >= min_r2)
    chosen = np.where(keep, best_shape, CONSTANT)
    coefficients = np.where(keep[:, None], best_coef, 0.0)
    coefficients[~keep, 0] = mean[~keep]
    fits.shape[rows] = chosen
    fits.coefficients[rows] = coefficients
    fits.r2[rows] = np.where(keep, best_r2, np.nan)
    fits.adjusted_r2[rows] = np.where(keep, best, np.nan)


def _solve(shape: LawShape, x: np.ndarray, y: np.ndarray, w2: np.ndarray) -> np.ndarray | None:
    """Weighted least-squares coefficients (series × 3) of one law for every row of ``y``."""
    if shape.kind != "sum":
        if not (y > 0).any() or (shape.kind == "power" and not (x > 0).all()):
            return None
        with np.errstate(all="ignore"):
            logy = np.log(np.where(y > 0, y, np.nan))
            regressor = np.log(x) if shape.kind == "power" else x
        line = _linear(np.stack([np.ones_like(x), regressor], axis=1), logy, np.ones_like(y))
        coef = np.zeros((y.shape[0], MAX_COEFFICIENTS))
        if shape.kind == "power":
            exponent = np.round(line[:, 1] * POWER_STEP) / POWER_STEP
            with np.errstate(all="ignore"):
                coef[:, 0] = np.exp(_nanmean(logy - exponent[:, None] * regressor[None, :]))
            coef[:, 1] = exponent
        else:
            coef[:, 0] = np.exp(line[:, 0])
            coef[:, 1] = line[:, 1]
        coef[~np.isfinite(coef).all(axis=1)] = np.nan
        return coef
    basis = shape.basis(x)
    if not np.isfinite(basis).all():
        return None
    design = np.concatenate([np.ones((len(x), 1)), basis], axis=1)
    scale = np.abs(design).max(axis=0)
    if (scale == 0).any():
        return None
    solution = _linear(design / scale, y, w2) / scale
    coef = np.zeros((y.shape[0], MAX_COEFFICIENTS))
    coef[:, : design.shape[1]] = solution
    return coef


def _nanmean(values: np.ndarray) -> np.ndarray:
    """Row means of the finite values, NaN for a row without any (and no warning)."""
    finite = np.isfinite(values)
    count = finite.sum(axis=1)
    total = np.where(finite, values, 0.0).sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _linear(design: np.ndarray, y: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """Per-row weighted least squares with a shared design (points × k): (series × k); NaN if singular."""
    a = np.einsum("sn,nk,nl->skl", w2, design, design)
    b = np.einsum("sn,nk,sn->sk", w2, design, np.nan_to_num(y))
    out = np.full(b.shape, np.nan)
    cond = np.linalg.cond(a)
    ok = np.isfinite(cond) & (cond < 1e12) & np.isfinite(y).all(axis=1)
    if ok.any():
        out[ok] = np.linalg.solve(a[ok], b[ok][..., None])[..., 0]
    return out
