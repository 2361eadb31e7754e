"""The "usual" time of an MPI call from a sample of its times (Kluge, Knüpfer, Nagel, paper 004 §4–7).

A sample ``S`` of times of one call with the same parameters is modeled as ``t = t_min + t_err``
with ``t_min ≈ min(S)``.  The errors ``t − min(S)`` are sorted into classes of a window ``i`` (at
least the timer resolution, §6); a Poisson distribution (eq. 3) and a discretized exponential
distribution ``p_k = e^(−λki)(1 − e^(−λi))`` (eq. 6) are fitted to the class counts by maximum
likelihood (eq. 7: for these two the maximum has a closed form); the χ² statistic (eq. 8) with
classes pooled until each expects at least :data:`MIN_EXPECTED` calls is compared with the critical
value at significance ``alpha``.  Of the accepted models the one with the lowest χ² gives
``t_max = min(S) + t_err,max`` with ``t_err,max`` its ``q_max`` quantile (eq. 2).  When both are
rejected — the paper's advice is a new sample or a new model — pmkit falls back to the empirical
``q_max`` quantile of ``S`` and says so (``model = "empirical"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MIN_EXPECTED = 5.0
"""Pool histogram classes until each expects at least this many calls (the usual rule for a χ² test)."""

MIN_SAMPLE = 10
"""Smaller samples are not fitted: ``t_max`` is their empirical quantile."""

DEFAULT_Q_MAX = 0.95
"""The quantile of the error distribution taken as usual (the paper: 0.8–1).  Measured with
bench/kluge.py on real MPI timings: at 0.99 a self-calibrated t_max lies above the injected waits
themselves (recall 0.13–0.28), at 0.90 a reference flags more natural waiting (precision 0.03–0.04);
0.95 keeps recall ≥ 0.7 with and without a reference."""

MODELS = ("poisson", "exponential")
CRITICAL_METHODS = ("exact", "paper")


def wilson_hilferty(dof: float, alpha: float) -> float:
    """The paper's approximation (eq. 9) of the χ² critical value: ν(1 − 2/(9ν) + z_α·√(2/(9ν)))³."""
    from scipy.stats import norm

    z = float(norm.ppf(1.0 - alpha))
    return dof * (1.0 - 2.0 / (9.0 * dof) + z * math.sqrt(2.0 / (9.0 * dof))) ** 3


def chi2_critical(dof: int, alpha: float, method: str = "exact") -> float:
    """The χ² critical value at significance ``alpha``: exact (scipy), or as the paper does it —
    a table (exact) up to 30 degrees of freedom and Wilson–Hilferty (eq. 9) above."""
    if method not in CRITICAL_METHODS:
        raise ValueError(f"critical value method {method!r} is not one of {', '.join(CRITICAL_METHODS)}")
    if method == "paper" and dof > 30:
        return wilson_hilferty(dof, alpha)
    from scipy.stats import chi2

    return float(chi2.ppf(1.0 - alpha, dof))


def error_classes(errors: np.ndarray, window: float) -> np.ndarray:
    """The class ``k = floor(error / window)`` of every error (errors are ``t − min(S)`` ≥ 0)."""
    return np.maximum(np.floor(np.asarray(errors, dtype=float) / window + 1e-9), 0).astype(np.int64)


def class_counts(errors: np.ndarray, window: float) -> np.ndarray:
    """Counts of errors per class ``k = floor(error / window)``, k = 0 … max (a histogram)."""
    return np.bincount(error_classes(errors, window))


def auto_window(sample: np.ndarray, resolution: float) -> float:
    """The Freedman–Diaconis width of the errors' histogram, at least the timer resolution (§6).

    The default window.  Measured (bench/calibration.py, 57 real groups on a loaded machine): no
    window keeps a model for most groups there (0 at this width and at 1 ns, 1 at 100 ns, 9 at
    1 µs, 13 at 10 µs — coarse windows hide the tail that rejects them), so the choice cannot rest
    on acceptance; this width follows the spread of the sample, as a histogram should, and keeps
    the Poisson model on samples of the paper's shape (tests/test_calibration.py).
    """
    errors = np.asarray(sample, dtype=float) - np.min(sample)
    q75, q25 = np.percentile(errors, [75, 25])
    width = 2.0 * (q75 - q25) / max(len(errors), 1) ** (1.0 / 3.0)
    return float(max(width, resolution, np.finfo(float).tiny))


@dataclass
class ModelFit:
    """One distribution fitted to the classes of a sample: its parameter, χ² test and error quantile."""

    model: str
    parameter: float
    chi2: float
    dof: int
    critical: float
    accepted: bool | None
    error_quantile: float
    log_likelihood: float

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "parameter": self.parameter, "chi2": self.chi2, "dof": self.dof,
                "critical": self.critical, "accepted": self.accepted, "error_quantile": self.error_quantile,
                "log_likelihood": self.log_likelihood}


def _log_pmf(model: str, parameter: float, k: np.ndarray) -> np.ndarray:
    from scipy.stats import geom, poisson

    if model == "poisson":
        return poisson.logpmf(k, parameter)
    return geom.logpmf(k + 1, 1.0 - parameter)  # geometric classes of the exponential, q = e^(−λi)


def _cdf(model: str, parameter: float, k: np.ndarray) -> np.ndarray:
    from scipy.stats import geom, poisson

    if model == "poisson":
        return poisson.cdf(k, parameter)
    return geom.cdf(k + 1, 1.0 - parameter)


def _pooled(observed: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge neighbouring classes, left to right, until each expects at least MIN_EXPECTED calls; what
    is left at the end joins the last pooled class."""
    cumulative = np.cumsum(expected)
    bounds = []
    start, before = 0, 0.0
    while start < len(expected):
        end = int(np.searchsorted(cumulative, before + MIN_EXPECTED, side="left"))
        if end >= len(expected):
            break
        bounds.append(end + 1)
        before = cumulative[end]
        start = end + 1
    if not bounds or bounds[-1] != len(expected):
        if bounds:
            bounds[-1] = len(expected)
        else:
            bounds = [len(expected)]
    edges = np.array([0, *bounds])
    obs = np.add.reduceat(observed, edges[:-1])
    exp = np.add.reduceat(expected, edges[:-1])
    return obs, exp


def fit_model(model: str, classes: np.ndarray, window: float, q_max: float, alpha: float,
              critical: str = "exact") -> ModelFit:
    """Fit ``model`` to the error ``classes`` of a sample by maximum likelihood and test it (see the module).

    Only the classes that expect calls are histogrammed: beyond the class where fewer than
    MIN_EXPECTED calls remain expected everything is one tail class, so a fine window or a far
    outlier does not make millions of classes.
    """
    from scipy.stats import geom, poisson

    classes = np.asarray(classes, dtype=np.int64)
    n = float(len(classes))
    mean = float(classes.mean())
    if model == "poisson":
        parameter = mean  # the MLE of λ is the mean class
        quantile_class = float(poisson.ppf(q_max, parameter)) if parameter > 0 else 0.0
        error_quantile = (quantile_class + 1.0) * window
        shown = parameter
        last = int(poisson.isf(MIN_EXPECTED / n, parameter)) + 1 if parameter > 0 else 1
    elif model == "exponential":
        parameter = mean / (1.0 + mean)  # MLE of q = e^(−λi) for geometric classes
        rate = -math.log(parameter) / window if parameter > 0 else math.inf
        error_quantile = -math.log(1.0 - q_max) / rate if rate > 0 and math.isfinite(rate) else window
        shown = rate
        last = int(geom.isf(MIN_EXPECTED / n, 1.0 - parameter)) if parameter > 0 else 1
    else:
        raise ValueError(f"unknown model {model!r}; choose one of {', '.join(MODELS)}")
    log_likelihood = float(np.sum(np.maximum(_log_pmf(model, parameter, classes), -700.0)))
    last = max(1, min(last, int(classes.max()) + 1))
    k = np.arange(last)
    cdf = _cdf(model, parameter, k)
    expected = n * np.append(np.diff(cdf, prepend=0.0), max(0.0, 1.0 - float(cdf[-1])))
    observed = np.append(np.bincount(classes[classes < last], minlength=last), (classes >= last).sum()).astype(float)
    observed, expected = _pooled(observed, expected)
    chi2 = float(np.sum((observed - expected) ** 2 / np.maximum(expected, 1e-300)))
    dof = len(observed) - 2  # classes − 1 − one fitted parameter
    if dof < 1:
        return ModelFit(model, shown, chi2, dof, math.nan, None, error_quantile, log_likelihood)
    limit = chi2_critical(dof, alpha, critical)
    return ModelFit(model, shown, chi2, dof, limit, chi2 <= limit, error_quantile, log_likelihood)


@dataclass
class SampleFit:
    """The calibration of one sample: ``t_max`` and how it was found (``model`` poisson, exponential or
    empirical), with both fits and notes saying what was decided."""

    n: int
    t_min: float
    window: float
    model: str
    t_max: float
    fits: list[ModelFit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def chosen(self) -> ModelFit | None:
        return next((f for f in self.fits if f.model == self.model), None)

    def to_json(self) -> dict[str, Any]:
        chosen = self.chosen
        return {"n": self.n, "min": self.t_min, "window": self.window, "model": self.model, "t_max": self.t_max,
                "chi2": None if chosen is None else chosen.chi2, "fits": [f.to_json() for f in self.fits],
                "notes": list(self.notes)}


def fit_sample(sample: np.ndarray, *, q_max: float = DEFAULT_Q_MAX, alpha: float = 0.05, window: float | None = None,
               resolution: float = 1e-9, critical: str = "exact") -> SampleFit:
    """``t_max`` of one sample of call times in seconds (see the module); never raises on odd samples."""
    if not 0.0 < q_max < 1.0:
        raise ValueError(f"q_max must be between 0 and 1 (exclusive), got {q_max}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    values = np.asarray(sample, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return SampleFit(0, math.nan, math.nan, "empirical", math.nan, notes=["no finite times"])
    t_min = float(values.min())
    width = float(window) if window else auto_window(values, resolution)
    notes = []
    if window and window < resolution:
        notes.append(f"the window {window:.3g} s is finer than the timer resolution {resolution:.3g} s")
    empirical = float(np.quantile(values, q_max))
    if values.size < MIN_SAMPLE:
        notes.append(f"only {values.size} calls: t_max is the empirical {q_max:g} quantile, no model was fitted")
        return SampleFit(int(values.size), t_min, width, "empirical", empirical, notes=notes)
    classes = error_classes(values - t_min, width)
    if classes.max() == 0:
        notes.append("every call took the same time (one class): t_max = min(S)")
        return SampleFit(int(values.size), t_min, width, "constant", t_min + width, notes=notes)
    fits = [fit_model(model, classes, width, q_max, alpha, critical) for model in MODELS]
    accepted = [f for f in fits if f.accepted]
    untested = [f for f in fits if f.accepted is None]
    if accepted:
        best = min(accepted, key=lambda f: f.chi2)
    elif untested:
        best = max(untested, key=lambda f: f.log_likelihood)
        notes.append("too few classes for a χ² test; the model with the higher likelihood was kept")
    else:
        notes.append(f"both models rejected by the χ² test (α = {alpha:g}): t_max is the empirical {q_max:g} "
                     "quantile of the sample")
        return SampleFit(int(values.size), t_min, width, "empirical", empirical, fits, notes)
    return SampleFit(int(values.size), t_min, width, best.model, t_min + best.error_quantile, fits, notes)
