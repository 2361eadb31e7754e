"""Calibration: one least-squares fit per code section over every (run, process) sample.

A section's samples are its measured time on each process of each calibration run, with that
process's parameter values.  A linear section fits ``factor × (Σ c_k·term_k + c0)``; a PMNF
section first lets the refining modeler find the law ``x^α·log2(x)^β`` of its parameter (on the
mean time per distinct value), then fits ``factor × (c0 + c1·x^α·log2(x)^β)`` the same way, so
both kinds get the same quality figures and uncertainties.

The fit weights each sample by 1/time (``fit = "relative"``, the default: run-to-run noise is a
share of the value, so a small subdomain's time counts as much as a large one's) or not at all
(``fit = "ordinary"``).  Chosen by ``bench/perprocess/accuracy.py`` on the MPI stencil benchmark
(bench/README.md §6), calibrated on 105 balanced runs: over the 26 imbalanced runs the relative fit
errs by 10.1% on average (31.9% at most) against 14.1% (37.2%) for the ordinary one; the ordinary
fit does better on balanced runs of an unseen size (8.0% against 11.1%) but misses the small
sections (leave-one-out RMS relative error of the particle section 3,880%).

Quality per section: samples, adjusted R², SMAPE and its leave-one-out value (closed form from the
hat matrix), and the RMS relative residual; the coefficients' covariance gives every prediction a
standard error.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from pmkit.errors import InputError
from pmkit.fitting.leastsquares import adjusted_r2, left_inverses, loo_predictions, smape
from pmkit.perprocess.environment import RunSet, build_runs, evaluate_checked, match_runs
from pmkit.perprocess.expressions import Env, Expression
from pmkit.perprocess.measured import Measurements, match_callpaths, section_values
from pmkit.perprocess.modelfile import ModelSpec
from pmkit.perprocess.tables import ParameterTable
from pmkit.pmnf import Factor, Function, simple_function

if TYPE_CHECKING:
    from pmkit.perprocess.prediction import Prediction

TINY = 1e-6
"""Relative fits weight a sample by 1/max(|t|, TINY·max|t|), so a time of exactly 0 does not divide by zero."""

Column = Callable[[Env], np.ndarray]


@dataclass(frozen=True)
class SectionQuality:
    """How well a section's predictor fits its samples (percentages are of the measured time)."""

    samples: int
    runs: int
    adjusted_r2: float
    smape: float
    loo_smape: float
    rms_relative: float
    loo_rms_relative: float

    def to_json(self) -> dict[str, Any]:
        return {"samples": self.samples, "runs": self.runs, "adjusted_r2": self.adjusted_r2, "smape": self.smape,
                "loo_smape": self.loo_smape, "rms_relative": self.rms_relative,
                "loo_rms_relative": self.loo_rms_relative}


@dataclass
class SectionFit:
    """A calibrated section: its call paths, design columns, coefficients with covariance, and quality."""

    name: str
    callpaths: list[str]
    labels: list[str]
    columns: list[Column] = field(repr=False)
    factor: Expression | None
    coefficients: np.ndarray
    covariance: np.ndarray
    quality: SectionQuality
    fit: str
    predictor: str
    function: Function | None = None
    notes: list[str] = field(default_factory=list)

    def design(self, runs: RunSet) -> np.ndarray:
        """Runs × processes × columns: each column's value (times the factor) on each process."""
        shape = runs.mask.shape
        columns = [np.broadcast_to(np.asarray(c(runs.env), dtype=float), shape) for c in self.columns]
        design = np.stack(columns, axis=-1) if columns else np.zeros((*shape, 0))
        if self.factor is not None:
            factor = evaluate_checked(self.factor, runs, f"factor {self.factor.text} of section {self.name}")
            design = design * np.broadcast_to(factor, shape)[..., None]
        return design

    def predict(self, runs: RunSet) -> tuple[np.ndarray, np.ndarray]:
        """Predicted time and its standard error per process (runs × processes, NaN beyond a run's processes)."""
        design = self.design(runs)
        with np.errstate(all="ignore"):
            values = design @ self.coefficients
            variance = np.einsum("rpi,ij,rpj->rp", design, self.covariance, design)
        values = np.where(runs.mask, values, np.nan)
        stderr = np.where(runs.mask, np.sqrt(np.maximum(variance, 0.0)), np.nan)
        return values, stderr

    def formula(self, digits: int = 4) -> str:
        """The calibrated predictor as text: ``2.1e-06·volume + 0.0031``, ``× cr`` when there is a factor."""
        parts = []
        for label, c in zip(self.labels, self.coefficients, strict=True):
            if label == "1":
                parts.append(_number(c, digits))
            else:
                parts.append(f"{_number(c, digits)}·{_wrap(label)}")
        text = " + ".join(parts).replace("+ -", "- ") if parts else "0"
        if self.factor is not None:
            text = f"{_wrap(str(self.factor))} × ({text})" if len(parts) > 1 else f"{_wrap(str(self.factor))} × {text}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "callpaths": self.callpaths, "predictor": self.predictor, "fit": self.fit,
                "formula": self.formula(),
                "coefficients": [{"term": label, "value": float(c), "stderr": float(np.sqrt(max(v, 0.0)))}
                                 for label, c, v in zip(self.labels, self.coefficients, np.diag(self.covariance),
                                                        strict=True)],
                "factor": None if self.factor is None else str(self.factor),
                "function": None if self.function is None else self.function.to_json(),
                "quality": self.quality.to_json(), "notes": list(self.notes)}


def _number(value: float, digits: int) -> str:
    if value == 0 or not np.isfinite(value):
        return str(value) if not np.isfinite(value) else "0"
    return f"{value:.{digits}g}"


def _wrap(text: str) -> str:
    """Parenthesise a sum or difference (the only operators written with spaces) before multiplying it."""
    return f"({text})" if " " in text else text


def fit_section(name: str, callpaths: list[str], times: np.ndarray, runs: RunSet, labels: list[str],
                columns: list[Column], factor: Expression | None, fit: str, predictor: str,
                function: Function | None = None, notes: Sequence[str] = ()) -> SectionFit:
    """Least squares of the section's measured ``times`` (runs × processes) on the design columns."""
    probe = SectionFit(name, callpaths, labels, columns, factor, np.zeros(len(columns)),
                       np.zeros((len(columns), len(columns))), _no_quality(), fit, predictor, function, list(notes))
    design = probe.design(runs)
    valid = runs.mask & np.isfinite(times) & np.isfinite(design).all(axis=-1)
    y = times[valid]
    X = design[valid]
    n, k = X.shape
    if n == 0:
        raise InputError(runs.table.path, f"section {name} has no calibration samples: no run with parameter "
                         "values measured it")
    scale = np.max(np.abs(y)) if n else 1.0
    weights = 1.0 / np.maximum(np.abs(y), TINY * scale) if fit == "relative" and scale > 0 else np.ones(n)
    Xw, yw = X * weights[:, None], y * weights
    rank = np.linalg.matrix_rank(Xw) if n else 0
    if rank < k:
        probe.notes.append(_collinear_note(Xw, labels, n))
    pinv = left_inverses(Xw[None])[0]
    coefficients = pinv @ yw
    predicted = X @ coefficients
    residual_w = yw - Xw @ coefficients
    dof = n - k
    variance = float(residual_w @ residual_w) / dof if dof > 0 else np.nan
    covariance = (pinv @ pinv.T) * variance if dof > 0 else np.full((k, k), np.nan)
    if dof <= 0:
        probe.notes.append(f"{n} samples for {k} coefficients: the fit is exact and its uncertainty unknown; "
                           "calibrate on more runs")
    leverage = np.einsum("ij,ji->i", Xw, pinv)
    loo = loo_predictions(y[None], predicted[None], leverage[None])[0]
    with np.errstate(all="ignore"):
        relative = (y - predicted) / y
        loo_relative = (y - loo) / y
        positive = y > 0
        rms = float(np.sqrt(np.mean(relative[positive] ** 2))) * 100 if positive.any() else np.nan
        loo_rms = float(np.sqrt(np.mean(loo_relative[positive] ** 2))) * 100 if positive.any() else np.nan
    rss = float(np.sum((y - predicted) ** 2))
    tss = float(np.sum((y - y.mean()) ** 2))
    quality = SectionQuality(n, int(valid.any(axis=1).sum()), float(adjusted_r2(np.array(rss), np.array(tss), n, k)),
                             float(smape(y, predicted)), float(smape(y, loo)), rms, loo_rms)
    probe.coefficients, probe.covariance, probe.quality = coefficients, covariance, quality
    if function is not None:
        probe.function = _refitted(function, labels, coefficients)
    return probe


def _no_quality() -> SectionQuality:
    nan = float("nan")
    return SectionQuality(0, 0, nan, nan, nan, nan, nan)


def _collinear_note(Xw: np.ndarray, labels: list[str], n: int) -> str:
    constant = [label for j, label in enumerate(labels) if label != "1" and np.ptp(Xw[:, j]) == 0 and n > 1]
    if constant:
        return (f"{', '.join(constant)} has the same value in every sample, so its coefficient cannot be told apart "
                "from the others (the minimum-norm solution is used); calibrate on runs where it varies")
    return (f"the terms {', '.join(labels)} are linearly dependent in the calibration samples (the minimum-norm "
            "solution is used); calibrate on runs where they vary independently")


def linear_columns(terms: Sequence[Expression], intercept: bool) -> tuple[list[str], list[Column]]:
    """Design columns of a linear predictor: its terms, then the intercept."""
    labels = [t.text.strip() for t in terms]
    columns: list[Column] = [t.evaluate for t in terms]
    if intercept:
        labels.append("1")
        columns.append(lambda env: np.float64(1.0))
    return labels, columns


def pmnf_columns(parameter: str, x: np.ndarray, y: np.ndarray) -> tuple[list[str], list[Column], Function, list[str]]:
    """Design columns of the PMNF law the refining modeler finds for times ``y`` at parameter values ``x``.

    Samples are grouped by distinct ``x`` (the refining search models one value per point, the
    mean of that point's samples).
    """
    from pmkit.modelers.search_inputs import OPTIONS
    from pmkit.modelers.single import model_single
    from pmkit.options import with_defaults
    from pmkit.series import SeriesBatch

    distinct, inverse = np.unique(x, return_inverse=True)
    counts = np.bincount(inverse)
    values = np.full((1, len(distinct), int(counts.max())), np.nan)
    filled = np.zeros(len(distinct), dtype=np.int64)
    for sample, point in enumerate(inverse):
        values[0, point, filled[point]] = y[sample]
        filled[point] += 1
    batch = SeriesBatch((parameter,), distinct[:, None], values, [parameter], ["time"])
    model = model_single(batch, with_defaults(OPTIONS, {}, "the pmnf predictor"), modeler="refining")[0]
    function = model.function if model.function is not None else Function((parameter,), float(np.nanmean(y)))
    notes = [f"refining search over {len(distinct)} distinct values of {parameter}: {function.pretty_text()}"]
    notes += [n for n in model.notes if "repetition" not in n]
    labels, columns = [], []
    for term in function.terms:
        factor = term.factors[0]
        labels.append(factor.pretty_text())
        columns.append(_pmnf_column(parameter, factor))
    labels.append("1")
    columns.append(lambda env: np.float64(1.0))
    return labels, columns, function, notes


def _pmnf_column(parameter: str, factor: Factor) -> Column:
    def column(env: Env) -> np.ndarray:
        with np.errstate(all="ignore"):
            return factor.evaluate(np.asarray(env.values[parameter], dtype=float))

    return column


def _refitted(function: Function, labels: list[str], coefficients: np.ndarray) -> Function:
    """The PMNF function with the section's own coefficients."""
    parameter = function.parameters[0]
    if not function.terms:
        return Function((parameter,), float(coefficients[-1]))
    factor = function.terms[0].factors[0]
    return simple_function(parameter, float(coefficients[-1]), float(coefficients[0]),
                           Fraction(factor.exponent), Fraction(factor.log_exponent))


@dataclass
class Calibration:
    """A model calibrated on measured runs: one :class:`SectionFit` per section, and what was left out."""

    spec: ModelSpec
    sections: list[SectionFit]
    runs: list[str]
    sources: list[str]
    unit: str
    parameters: str
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def section(self, name: str) -> SectionFit:
        for fit in self.sections:
            if fit.name == name:
                return fit
        raise KeyError(name)

    @property
    def samples(self) -> int:
        return max((f.quality.samples for f in self.sections), default=0)

    def predict(self, scenario: str | os.PathLike | ParameterTable,
                measured: str | os.PathLike | Sequence[str | os.PathLike] | Measurements | None = None, *,
                executor: Any = None) -> Prediction:
        """Predict the runs of the ``scenario`` table; validate against ``measured`` Cube studies if given
        (read on ``executor``, see :mod:`pmkit.executors`)."""
        from pmkit import executors
        from pmkit.perprocess.prediction import predict

        with executors.using(executor):
            return predict(self, scenario, measured)

    def to_json(self) -> dict[str, Any]:
        return {"model": self.spec.to_json(), "parameters": self.parameters, "sources": self.sources,
                "runs": self.runs, "unit": self.unit, "sections": [f.to_json() for f in self.sections],
                "skipped": [{"source": s, "problem": p} for s, p in self.skipped], "notes": list(self.notes)}


def calibrate(spec: ModelSpec, measurements: Measurements, table: ParameterTable) -> Calibration:
    """Fit every section of ``spec`` to the measured runs that ``table`` gives parameters for.

    Runs the table does not describe are skipped (and listed); InputError when none is left, when a
    section matches no call path, or when two sections claim the same call path.
    """
    matched = match_runs(table, measurements.runs)
    if not matched.runs:
        measured = ", ".join(r.label for r in measurements.runs[:3])
        listed = ", ".join(list(table.runs)[:3])
        raise InputError(table.path, f"describes none of the measured runs (measured: {measured}, …; the table "
                         f"has: {listed}, …); name runs as their folders are named")
    runs = build_runs(spec, table, matched.keys, [r.processes for r in matched.runs],
                      [r.coordinates for r in matched.runs], names=[r.label for r in matched.runs])
    notes: list[str] = []
    owner: dict[int, str] = {}
    fits = []
    width = runs.mask.shape[1]
    for section in spec.sections:
        rows, unmatched = match_callpaths(section.callpaths, measurements.tree, inclusive=section.inclusive)
        if not rows:
            examples = ", ".join(measurements.callpaths[:4])
            raise InputError(spec.path, f"section {section.name}: none of its call paths "
                             f"{', '.join(section.callpaths)} is in the calibration runs (they have {examples}, …)",
                             line=section.line)
        for row in rows:
            if row in owner:
                raise InputError(spec.path, f"call path {measurements.tree[row].path} belongs to sections "
                                 f"{owner[row]} and {section.name}; a call path's time can count once",
                                 line=section.line)
            owner[row] = section.name
        section_notes = [f"pattern {p!r} matches no call path" for p in unmatched]
        times = section_values(matched.runs, spec.metric, rows, width)
        if section.predictor == "pmnf":
            x = np.broadcast_to(np.asarray(runs.env.values[section.parameter], dtype=float), runs.mask.shape)
            scale = np.ones(runs.mask.shape) if section.factor is None else np.broadcast_to(
                evaluate_checked(section.factor, runs, f"factor of section {section.name}"), runs.mask.shape)
            with np.errstate(all="ignore"):
                ratio = times / scale
            valid = runs.mask & np.isfinite(ratio)
            labels, columns, function, found = pmnf_columns(section.parameter, x[valid], ratio[valid])
            section_notes += found
        else:
            labels, columns = linear_columns(section.terms, section.intercept)
            function = None
        paths = [measurements.tree[row].path for row in rows]
        fits.append(fit_section(section.name, paths, times, runs, labels, columns, section.factor, section.fit,
                                section.predictor, function, section_notes))
    unit = measurements.units.get(spec.metric, "")
    return Calibration(spec, fits, [r.label for r in matched.runs], [r.source for r in matched.runs], unit,
                       table.path, list(measurements.skipped) + matched.unmatched, notes + measurements.notes)
