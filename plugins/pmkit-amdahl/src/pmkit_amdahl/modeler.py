"""The ``amdahl`` modeler: pmkit's Modeler protocol around the Amdahl-style fit of each series.

T(p) = a/p + b·p^c + d (Worley et al. 2011, the empirical baseline of the APMT paper, section 5):
a/p is the perfectly parallel part, b·p^c a partially parallel one (communication,
synchronisation), d the serial part.  The result is a PMNF :class:`pmkit.Function`; the fitted real
exponent c is written as a fraction with a bounded denominator and a, b, d are refitted for it, so
the function pmkit prints is exactly the one whose quality it reports.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from pmkit import Factor, Function, Model, ModelSet, Option, Quality, SeriesBatch, Term, UsageError
from pmkit.experiment import MEASURES
from pmkit.options import with_defaults
from pmkit_amdahl.fitting import (
    N_COEFFICIENTS,
    fit_amdahl,
    free_coefficients,
    linear_coefficients,
    select_columns,
)

SNAP_TOLERANCE = 0.5
"""Default of option ``snap_tolerance``, chosen by ``bench/snap_tolerance.py`` (600 noisy synthetic series,
p = 2..128, predicting p = 1024): 0 recovers the true exponent in 15% of series with a median prediction
error of 13.3%; 0.5 recovers it in 53% with a median error of 5.6% (90th percentile 101% against 83%);
larger tolerances gain little and worsen the tail."""

SIGNIFICANCE = 0.05
"""Default of option ``significance``: a term is dropped while an F test finds the fit without it not
significantly worse at this level (backward elimination from the whole law).  Chosen with
``bench/term_selection.py 200`` (1,000 synthetic series, p = 2..128, noise 0–5%, prediction at p = 1024) among
keeping the whole law, AIC, AICc, BIC and F tests (forward, against the whole law, backward at 0.01 and 0.05).
Against keeping the whole law: a constant is modelled as a constant in 98% of series instead of 43% (90th
percentile of the prediction error 0.8% instead of 415%), a/p + d in 98% instead of 71% (2.7% instead of 766%),
b·p^c + d in 85% instead of 37%; the whole law keeps its terms and exponent as often (66%, U-shaped 80%), median
error 2.7% (2.6%), 90th percentile 64.5% (77.4%).  Forward selection loses U-shaped laws (27%), whose terms each
explain little alone; AICc and backward at 0.01 do as well at 7 points but drop the U-shaped law's p^c term at 5
points (p = 2..32)."""

NEGLIGIBLE = 1e-9
"""A term whose largest value is below this share of the largest |T| is round-off and is dropped."""


def choose_parameter(parameters: tuple[str, ...], requested: str) -> str:
    """The parameter the law is fitted over: ``requested``, else ``p`` if present, else the first."""
    if requested:
        if requested not in parameters:
            raise UsageError(f"modeler amdahl: no parameter {requested!r}; the experiment has "
                             f"{', '.join(parameters)}")
        return requested
    return "p" if "p" in parameters else parameters[0]


def smape(y: np.ndarray, fitted: np.ndarray) -> float:
    """Symmetric mean absolute percentage error of ``fitted`` against ``y`` (0/0 counts as 0)."""
    denominator = np.abs(fitted) + np.abs(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        shares = np.where(denominator > 0, 2 * np.abs(fitted - y) / denominator, 0.0)
    return float(100 * np.mean(shares))


def simplest_exponent(p: np.ndarray, y: np.ndarray, c: float, best_smape: float, values: dict[str, Any]) -> Fraction:
    """The fraction with the smallest denominator whose refitted law is almost as good as exponent ``c``.

    "Almost as good": SMAPE at most ``(1 + snap_tolerance)`` times the continuous fit's (plus 1e-9
    percentage points for round-off), so noise-free data keeps its exact exponent while noisy data
    gets 3/2 rather than 119/78.  Falls back to ``Fraction(c).limit_denominator(max_denominator)``.
    """
    limit = best_smape * (1 + values["snap_tolerance"]) + 1e-9
    for q in range(1, values["max_denominator"] + 1):
        candidate = Fraction(round(c * q), q)
        if candidate.denominator != q or not values["c_min"] <= candidate <= values["c_max"]:
            continue
        x = float(candidate)
        columns = (0, 2) if candidate in (-1, 0) else (0, 1, 2)
        a, b, d = linear_coefficients(p, y, x, nonnegative=values["nonnegative"], columns=columns)
        if smape(y, d + a / p + b * np.power(p, x)) <= limit:
            return candidate
    return Fraction(c).limit_denominator(values["max_denominator"])


def quality(y: np.ndarray, fitted: np.ndarray, fitted_coefficients: int) -> Quality:
    """RSS, SMAPE (percent) and adjusted R² of ``fitted`` against ``y``."""
    rss = float(np.sum((fitted - y) ** 2))
    n = len(y)
    tss = float(np.sum((y - np.mean(y)) ** 2))
    dof = n - fitted_coefficients
    if dof <= 0 or tss == 0:
        adjusted = float("nan") if tss == 0 or dof <= 0 else 1.0
    else:
        adjusted = 1 - (rss / dof) / (tss / (n - 1))
    return Quality(rss=rss, smape=smape(y, fitted), adjusted_r2=adjusted)


class AmdahlModeler:
    """Fits T(p) = a/p + b·p^c + d to every series of a batch by nonlinear least squares."""

    name = "amdahl"
    description = "Amdahl-style law a/p + b·p^c + d (Worley et al. 2011), nonlinear least squares"
    options = (
        Option("parameter", str, "", "parameter the law is fitted over (default: p if present, else the first); "
               "the other parameters must be constant across the points"),
        Option("measure", str, "mean", "how repetitions are reduced", choices=MEASURES),
        Option("c_min", float, -1.0, "lower bound of the exponent c"),
        Option("c_max", float, 3.0, "upper bound of the exponent c"),
        Option("nonnegative", bool, True, "keep a, b and d at or above zero (times are not negative)"),
        Option("starts", int, 6, "starting exponents of the nonlinear search, spread over (c_min, c_max)"),
        Option("max_evaluations", int, 2000, "evaluations of the law allowed per start before giving up"),
        Option("max_denominator", int, 100, "largest denominator of the fraction that writes the fitted c"),
        Option("snap_tolerance", float, SNAP_TOLERANCE, "c is written as the simplest fraction whose SMAPE is at "
               "most this share above the best fit's (0: the closest fraction that fits as well)"),
        Option("significance", float, SIGNIFICANCE, "a/p and b·p^c are kept only where an F test of the nested "
               "least-squares fits finds them significant at this level, so a constant stays a constant "
               "(1: keep every term that lowers the error)"),
    )

    def model(self, batch: SeriesBatch, **options: Any) -> ModelSet:
        """One model per series of ``batch``, in its order; never raises on a degenerate series."""
        values = with_defaults(self.options, options, f"modeler {self.name}")
        if values["c_min"] >= values["c_max"]:
            raise UsageError(f"modeler amdahl: c_min ({values['c_min']}) must be below c_max ({values['c_max']})")
        if values["starts"] < 1 or values["max_evaluations"] < 1 or values["max_denominator"] < 1:
            raise UsageError("modeler amdahl: starts, max_evaluations and max_denominator must be at least 1")
        if not 0 < values["significance"] <= 1:
            raise UsageError(f"modeler amdahl: significance must be in (0, 1], got {values['significance']}")
        parameter = choose_parameter(batch.parameters, values["parameter"])
        column = batch.parameters.index(parameter)
        fixed = self._fixed_parameters(batch, column)
        reduced = batch.reduced(values["measure"])
        models = []
        for i in range(len(batch)):
            constraint = batch.constraints[i] if batch.constraints else None
            notes = list(fixed)
            if constraint is not None and not constraint.allows(parameter):
                model = self._constant_model(batch, i, reduced[i], values, [*notes, constraint.note()])
            else:
                model = self._fit_series(batch, i, parameter, batch.points[:, column], reduced[i], values, notes)
            models.append(model)
        return ModelSet(batch.parameters, models, modeler=self.name)

    @staticmethod
    def _fixed_parameters(batch: SeriesBatch, column: int) -> list[str]:
        notes = []
        varying = []
        for k, name in enumerate(batch.parameters):
            if k == column:
                continue
            distinct = np.unique(batch.points[:, k])
            if len(distinct) > 1:
                varying.append(name)
            else:
                notes.append(f"{name} is constant ({distinct[0]:g}) at every point")
        if varying:
            raise UsageError(f"modeler amdahl fits T({batch.parameters[column]}) of one parameter, but the points "
                             f"also vary in {', '.join(varying)}; choose the parameter with -O parameter=NAME and "
                             f"give an experiment where the other parameters are fixed")
        return notes

    def _base(self, batch: SeriesBatch, i: int, function: Function | None, q: Quality, values: dict[str, Any],
              notes: list[str], n_points: int) -> Model:
        return Model(batch.callpaths[i], batch.metrics[i], function, q, self.name, dict(values), tuple(notes),
                     n_points)

    def _constant_model(self, batch: SeriesBatch, i: int, y: np.ndarray, values: dict[str, Any],
                        notes: list[str]) -> Model:
        keep = np.isfinite(y)
        if not keep.any():
            return self._base(batch, i, None, Quality(), values, [*notes, "no finite values"], 0)
        d = float(np.mean(y[keep]))
        fitted = np.full(int(keep.sum()), d)
        return self._base(batch, i, Function(batch.parameters, d), quality(y[keep], fitted, 1), values, notes,
                          int(keep.sum()))

    def _fit_series(self, batch: SeriesBatch, i: int, parameter: str, p: np.ndarray, y: np.ndarray,
                    values: dict[str, Any], notes: list[str]) -> Model:
        keep = np.isfinite(y) & np.isfinite(p) & (p > 0)
        dropped_p = int(np.sum(np.isfinite(y) & ~(np.isfinite(p) & (p > 0))))
        if dropped_p:
            notes.append(f"{dropped_p} points with {parameter} <= 0 left out (a/{parameter} is undefined there)")
        missing = int(np.sum(~np.isfinite(y)))
        if missing:
            notes.append(f"{missing} of {len(y)} points have no value")
        p, y = p[keep], y[keep]
        n = len(y)
        if n and np.all(y == 0):
            return self._base(batch, i, Function(batch.parameters, 0.0), quality(y, np.zeros(n), 1), values,
                              [*notes, "every value is zero"], n)
        distinct = len(np.unique(p))
        if distinct < N_COEFFICIENTS:
            return self._base(batch, i, None, Quality(), values,
                              [*notes, f"too few points: the law has {N_COEFFICIENTS} coefficients and the series has "
                                       f"values at {distinct} distinct {parameter}"], n)
        if values["nonnegative"] and np.any(y < 0):
            notes.append("some values are negative but a, b, d are kept >= 0 (-O nonnegative=false lifts this)")
        fit = fit_amdahl(p, y, c_min=values["c_min"], c_max=values["c_max"], nonnegative=values["nonnegative"],
                         starts=values["starts"], max_evaluations=values["max_evaluations"])
        if not fit.converged:
            return self._base(batch, i, None, Quality(), values,
                              [*notes, f"the Amdahl fit did not converge: {fit.message}"], n)
        continuous = fit.d + fit.a / p + fit.b * np.power(p, fit.c)
        exponent = simplest_exponent(p, y, fit.c, smape(y, continuous), values)
        return self._exact_model(batch, i, parameter, p, y, fit.c, exponent, values, notes)

    def _exact_model(self, batch: SeriesBatch, i: int, parameter: str, p: np.ndarray, y: np.ndarray, c: float,
                     exponent: Fraction, values: dict[str, Any], notes: list[str]) -> Model:
        columns = select_columns(p, y, float(exponent), nonnegative=values["nonnegative"],
                                 significance=values["significance"])
        a, b, d = linear_coefficients(p, y, float(exponent), nonnegative=values["nonnegative"], columns=columns)
        scale = float(np.max(np.abs(y)))
        a = 0.0 if np.max(np.abs(a / p)) <= NEGLIGIBLE * scale else a
        b = 0.0 if np.max(np.abs(b * np.power(p, float(exponent)))) <= NEGLIGIBLE * scale else b
        dropped = [term for column, term in ((0, f"a/{parameter}"), (1, f"b·{parameter}^c")) if column not in columns]
        if exponent in (-1, 0):
            merged = "a" if exponent == -1 else "d"
            notes.append(f"c written as {exponent} (fitted {c:.6g}): b·{parameter}^c merged into {merged}")
            dropped = [term for term in dropped if not term.startswith("b")]
        elif 1 in columns and b == 0:
            notes.append(f"b = 0: no {parameter}^c term (c is undetermined)")
        elif 1 in columns:
            notes.append(f"fitted c = {c:.6g}, written as {exponent} (see snap_tolerance); a, b, d refitted for it")
        if dropped:
            notes.append(f"{' and '.join(dropped)} dropped: not significant at {values['significance']:g} (F test; "
                         f"see significance)")
        terms = []
        if a != 0:
            terms.append(Term(a, (Factor(parameter, Fraction(-1)),)))
        if b != 0:
            terms.append(Term(b, (Factor(parameter, exponent),)))
        function = Function(batch.parameters, d, tuple(terms))
        fitted = d + a / p + b * np.power(p, float(exponent))
        return self._base(batch, i, function, quality(y, fitted, free_coefficients(columns)), values, notes, len(y))
