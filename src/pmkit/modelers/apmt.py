"""The ``apmt`` modeler: hardware-counter-assisted performance models (APMT, paper 001).

For studies whose call paths carry counters — Score-P PAPI metrics in Cube files, or ``perf stat``
per run — it finds the critical kernels, models each from its counters (CPI, memory blocking
factor), models MPI communication with Hockney's and the log P collective model, and predicts
``T_app`` with a breakdown per kernel (:mod:`pmkit.modelers.apmt_model`).  The machine profile
(:mod:`pmkit.modelers.apmt_profile`) says which metric is which counter, the latencies and the
clock; missing counters degrade the model with a note.

It returns an :class:`ApmtModelSet`: one model per series of the batch, as every modeler does —
a kernel's or a communication call path's time is its APMT law, every other series its best
predefined law — plus ``models.apmt``, the :class:`~pmkit.modelers.apmt_result.ApmtResult` with the
per-kernel table, ``t_app(target)``, the closed-loop validation and ``to_json()``.

Measured choices: the guards against extrapolating noise (:data:`MIN_R2`, :data:`FLAT`,
:data:`MARGIN`) and relative least squares were chosen with ``python bench/apmt_accuracy.py --apps 40
--seed 1 --noise N -O ...`` (40 generated strong-scaling applications fitted at p=4..32, mean error
at p=64, 128, 256 in percent, for ±2% / ±5% / ±10% run-to-run noise; seed 1 only for tuning):

    no guard (flat=0 margin=1)              11.1 / 24.5 / 52.7
    flat=0.05                                4.7 / 10.3 / 36.3
    flat=0.05 margin=4 (default guards)      2.5 /  4.5 /  8.3
    flat=0.05 margin=2                       3.4 /  8.3 / 10.8
    flat=0.05 margin=8                       2.6 /  4.5 /  8.2
    flat=0.05 margin=4 min_r2=0.99           2.5 /  4.8 / 35.3
    defaults with relative=false             3.3 /  7.1 / 12.1

``threshold`` (5%, the paper's) and ``nonscalable_share`` (1%) moved it by at most 0.2 points.
The rows above used ``memory=stalls``: the exposed memory time is BF_mem(p)·T_mem(p) = T_stall(p),
the stall-cycle law, as §3.3 composes BF_mem from five laws.  ``memory=hits`` (the default) takes
BF_mem averaged over the runs, as the paper averages CPI, times T_mem(p) from the hit laws, as in
its Eq. 5: 1.9 / 2.7 / 4.2 against 2.5 / 4.5 / 8.3 (same protocol) — hit counts repeat from run to
run, stall cycles vary like time.  On 200 other applications (seed 20170621), with every default,
APMT's mean error is 2.0% / 2.7% / 4.9% against pmkit-amdahl's 4.2% / 6.3% / 11.1% (52–57% lower;
the paper: up to 52%); see bench/README.md §10.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pmkit.errors import UsageError
from pmkit.experiment import MEASURES, CallTree, Experiment, Metric
from pmkit.fitting.laws import LawFits, fit_laws
from pmkit.hookspecs import hookimpl
from pmkit.modelers.apmt_data import StudyData, study_data
from pmkit.modelers.apmt_laws import Combination, law
from pmkit.modelers.apmt_model import ApmtFit, Settings, fit_model
from pmkit.modelers.apmt_profile import MachineProfile, load_profile
from pmkit.modelers.apmt_result import ApmtResult, HeldOut, Validation
from pmkit.models import ChangePoint, Model, ModelSet, Quality, Segment
from pmkit.options import Option
from pmkit.series import SeriesBatch

NAME = "apmt"

MIN_R2 = 0.9
"""Adjusted R² a predefined law needs to replace the constant (see :mod:`pmkit.fitting.laws`); 0.99
lost at ±10% noise (35.3% against 8.3%, module docstring), 0.5–0.95 changed nothing."""
FLAT = 0.05
"""Relative spread (std/mean) below which a series is taken as constant: 4.7% against 11.1% mean error
at ±2% noise without it (module docstring)."""
MARGIN = 4.0
"""Per level of a law (faster growth, a free exponent, a third coefficient), how many times less
variance it must leave unexplained to replace a simpler one: 4.5% against 10.3% at ±5% noise with 1."""

OPTIONS: tuple[Option, ...] = (
    Option("parameter", str, "", "the scaling parameter (default: p if present, else the first)"),
    Option("frequency_parameter", str, "", "parameter holding each run's CPU clock, for the two-frequency refinement "
           "(default: one named f, freq, frequency, mhz or ghz)"),
    Option("profile", str, "", "machine profile: a TOML file merged into the shipped default, or a shipped name"),
    Option("frequency_ghz", float, 0.0, "CPU clock in GHz (0: the frequency parameter, else cycles/time, else the "
           "profile's)"),
    Option("threshold", float, 0.05, "a call path is a critical kernel when its share of the cycles exceeds this in "
           "some run (the default 5% is APMT's)"),
    Option("nonscalable_share", float, 0.01, "call paths whose time does not fall with the scale are kernels from "
           "this share on"),
    Option("min_r2", float, MIN_R2, "adjusted R² a predefined law needs to replace the constant"),
    Option("relative", bool, True, "fit laws by relative residuals (noise is a share of the value)"),
    Option("flat", float, FLAT, "a series whose relative spread is below this stays constant (noise alone)"),
    Option("margin", float, MARGIN, "per level of assumption (faster growth, a free exponent, a third coefficient), "
           "how many times less variance a law must leave unexplained to replace a simpler one"),
    Option("bf_comm", float, 1.0, "communication blocking factor BF_comm (1: communication does not overlap)"),
    Option("memory", str, "hits", "exposed memory time: BF_mem averaged over the runs times T_mem(p) from the hit "
           "laws (hits), or the stall-cycle law, BF_mem(p)·T_mem(p) = T_stall(p) (stalls)", choices=("hits", "stalls")),
    Option("refine", bool, True, "use a run at a second clock to refine CPI_core and BF_mem (CPI = CPI_core + "
           "BF_mem·T_mem at two clocks)"),
    Option("segments", str, "auto", "test point-to-point Hockney fits of 8+ runs for a change of law in bytes (the "
           "eager/rendezvous switch) and predict from the side that holds (auto), or fit one line (off)",
           choices=("auto", "off")),
    Option("holdout", int, 1, "largest scales left out of a second fit to validate the model (closed loop)"),
    Option("accuracy", float, 15.0, "target mean error (%) of the closed-loop validation"),
    Option("totals", bool, False, "counters and time are totals over all processes (perf stat of mpirun): "
           "divide by the scale"),
    Option("measure", str, "mean", "how repetitions are reduced", choices=MEASURES),
)


@dataclass(frozen=True)
class ApmtOptions:
    """The modeler's options, as resolved by the SDK."""

    parameter: str = ""
    frequency_parameter: str = ""
    profile: str = ""
    frequency_ghz: float = 0.0
    threshold: float = 0.05
    nonscalable_share: float = 0.01
    min_r2: float = MIN_R2
    relative: bool = True
    flat: float = FLAT
    margin: float = MARGIN
    bf_comm: float = 1.0
    refine: bool = True
    memory: str = "hits"
    holdout: int = 1
    accuracy: float = 15.0
    totals: bool = False
    measure: str = "mean"
    segments: str = "auto"

    def settings(self) -> Settings:
        return Settings(self.threshold, self.nonscalable_share, self.min_r2, self.relative, self.flat, self.margin,
                        self.bf_comm, self.refine, self.memory, self.segments)


class ApmtModelSet(ModelSet):
    """The models of a batch, plus ``apmt``: the study's APMT model (None when it could not be built).

    It follows :class:`pmkit.hookspecs.ContributesToAnalysis`: ``pmkit show`` renders its tables
    and takes ``T_app`` as the predicted total of the time metric.
    """

    def __init__(self, parameters: Sequence[str], *, count: int, make: Any, apmt: ApmtResult | None,
                 notes: Sequence[str] = (), time_metric: str | None = None, time_factor: float = 1.0,
                 totals: bool = False) -> None:
        super().__init__(parameters, count=count, make=make, modeler=NAME)
        self.apmt = apmt
        self.notes = tuple(notes)
        self._time = (time_metric, time_factor, totals)

    def analysis_tables(self, metric: str, target: Mapping[str, float]) -> list[Any]:
        """APMT's per-kernel table and validation at ``target`` (or why there is no APMT model)."""
        from pmkit.analysis import ContributedTable
        from pmkit.modelers.apmt_result import contributed_tables

        if self.apmt is None:
            return [ContributedTable("APMT", ("note",), tuple((n,) for n in self.notes) or (("no model",),))]
        return contributed_tables(self.apmt, target)

    def predicted_total(self, metric: str, target: Mapping[str, float]) -> tuple[float, str] | None:
        """T_app at ``target`` in the unit of the time metric, when ``metric`` is that metric."""
        time_metric, factor, totals = self._time
        if self.apmt is None or metric != time_metric:
            return None
        value = self.apmt.t_app(target) / factor
        if totals:
            return value * self.apmt.scale_of(target), "APMT T_app × processes (totals)"
        return value, "APMT T_app"


class ApmtModeler:
    """APMT of paper 001: critical kernels, CPI and BF_mem from counters, Hockney and log P communication."""

    name = NAME
    description = "APMT: hardware-counter kernel models (CPI, memory blocking), Hockney and log P communication"
    options: Sequence[Option] = OPTIONS

    def model(self, batch: SeriesBatch, **options: Any) -> ApmtModelSet:
        """Model every series of ``batch`` and the study behind it (see the module docstring)."""
        return model_apmt(batch, ApmtOptions(**options))


def model_apmt(batch: SeriesBatch, options: ApmtOptions) -> ApmtModelSet:
    """The APMT models of ``batch`` (its ``experiment`` supplies the counters)."""
    if options.holdout < 0 or not 0 < options.threshold < 1 or options.bf_comm < 0:
        raise UsageError("modeler apmt: holdout must be 0 or more, threshold between 0 and 1, bf_comm 0 or more")
    profile = load_profile(options.profile)
    experiment = batch.experiment if batch.experiment is not None else _experiment_of(batch)
    data = study_data(experiment, profile, parameter=options.parameter, frequency_parameter=options.frequency_parameter,
                      measure=options.measure, frequency_ghz=options.frequency_ghz, totals=options.totals)
    notes: list[str] = list(data.notes)
    result = _study_model(data, profile, options, notes)
    return _model_set(batch, experiment, data, result, options, notes)


def _study_model(data: StudyData, profile: MachineProfile, options: ApmtOptions,
                 notes: list[str]) -> ApmtResult | None:
    """The APMT model of all runs, validated against the largest ones left out of a second fit."""
    try:
        data.seconds()
    except UsageError as exc:
        notes.append(f"no APMT model: {exc}")
        return None
    n = len(data.x)
    if n < 3:
        notes.append(f"only {n} run{'' if n == 1 else 's'} at the nominal clock: laws need 3 (the paper profiles "
                     "at least three scales); every law is constant")
    settings = options.settings()
    fit = fit_model(data, np.arange(n), settings, profile)
    notes.extend(fit.notes)
    validation = None
    if options.holdout > 0:
        if n >= 3 + options.holdout:
            validation = _validate(data, settings, profile, options)
        else:
            notes.append(f"closed-loop validation needs {3 + options.holdout} runs (3 to fit, {options.holdout} "
                         f"held out); there {'is' if n == 1 else 'are'} {n}")
    return ApmtResult(fit, profile, validation, notes)


def _validate(data: StudyData, settings: Settings, profile: MachineProfile, options: ApmtOptions) -> Validation:
    n = len(data.x)
    kept = np.arange(n - options.holdout)
    fit = fit_model(data, kept, settings, profile)
    seconds = data.seconds()
    held: list[HeldOut] = []
    for column in range(n - options.holdout, n):
        x = float(data.x[column])
        measured = _parts_measured(fit, seconds[:, column])
        predicted = _parts_predicted(fit, x)
        held.append(HeldOut(x, measured["total"], predicted["total"], measured, predicted))
    validation = Validation(data.parameter, tuple(held), options.accuracy, "")
    return Validation(data.parameter, tuple(held), options.accuracy, _advice(validation))


def _parts_measured(fit: ApmtFit, seconds: np.ndarray) -> dict[str, float]:
    total = float(np.nansum(seconds))
    comp = float(sum(np.nansum(seconds[k.rows]) for k in fit.kernels))
    comm = float(sum(np.nansum(seconds[m.row]) for m in fit.comm))
    return {"computation": comp, "communication": comm, "others": total - comp - comm, "total": total}


def _parts_predicted(fit: ApmtFit, x: float) -> dict[str, float]:
    comp = float(sum(fit.evaluate(k.total, x)[0] for k in fit.kernels))
    comm = float(fit.evaluate(fit.t_comm(), x)[0]) * fit.bf_comm
    others = float(fit.evaluate(fit.others, x)[0]) if not fit.others.empty else 0.0
    return {"computation": comp, "communication": comm, "others": others, "total": float(fit.evaluate(fit.t_app(),
                                                                                                       x)[0])}


def _advice(validation: Validation) -> str:
    """The paper's closed loop (§3.4): where the error comes from, and which runs would refine it."""
    if not validation.held_out or not math.isfinite(validation.mean_error):
        return "no finite measured total at the held-out runs"
    if validation.meets:
        return f"mean error {validation.mean_error:.1f}% is within the target {validation.accuracy:g}%"
    last = validation.held_out[-1]
    misses = {part: abs(last.predicted_parts[part] - last.measured_parts[part])
              for part in ("computation", "communication", "others")}
    worst = max(misses, key=lambda k: misses[k])
    what = {
        "communication": "profile two more runs at other scales (one to refit the communication volume, one to "
                         "validate), as the paper's closed loop does",
        "computation": "rerun one profiled scale at a second CPU clock (e.g. runs named app.p8.f2000.r1) to refine "
                       "CPI_core and BF_mem (Eq. 5), or profile more scales",
        "others": "look at the time outside kernels and MPI (set-up, I/O); it is modeled as one law",
    }[worst]
    return (f"mean error {validation.mean_error:.1f}% misses the target {validation.accuracy:g}%; most of it comes "
            f"from {worst}: {what}")


def _experiment_of(batch: SeriesBatch) -> Experiment:
    """An experiment holding just the batch's series, for batches made without one."""
    tree = CallTree()
    for path in batch.callpaths:
        tree.add(path)
    metrics = list(dict.fromkeys(batch.metrics))
    measurements = {m: np.full((len(tree), len(batch.points), batch.values.shape[2]), np.nan) for m in metrics}
    for i, (path, metric) in enumerate(zip(batch.callpaths, batch.metrics, strict=True)):
        measurements[metric][tree.index(path)] = batch.values[i]
    return Experiment(batch.parameters, batch.points, tree, tuple(Metric(m) for m in metrics), measurements)


def _model_set(batch: SeriesBatch, experiment: Experiment, data: StudyData, result: ApmtResult | None,
               options: ApmtOptions, notes: list[str]) -> ApmtModelSet:
    """One model per series: APMT's time law for kernels and communication, else the series' best law."""
    columns = _nominal_columns(batch, data)
    values = batch.reduced(options.measure)[:, columns]
    own = fit_laws(data.x, values, **options.settings().law_options())
    parameter = data.parameter
    composite = _composites(result, data) if result is not None and not options.totals else {}
    series_notes = ([f"runs at another clock (the refinement run) are not among the {len(data.x)} points fitted"]
                    if data.refinement is not None else [])

    def make(i: int) -> Model:
        callpath, metric = batch.callpaths[i], batch.metrics[i]
        measured = values[i]
        found = composite.get(callpath) if metric == data.time_metric else None
        if found is not None and result is not None:
            combination, note = found
            combination = combination.scaled(1.0 / data.time_factor)
            fits = result.fit.fits
            segments, change = _segments_in_scale(combination, fits, data.x, parameter, batch.parameters)
            function = (segments[-1].function if segments else
                        combination.function(fits, parameter, batch.parameters))
            fitted = np.asarray(combination.evaluate(fits, data.x), dtype=float)
            return Model(callpath, metric, function, _quality(measured, fitted, None), NAME, _options(options),
                         tuple([note, *series_notes, *_exponential_note(function)]), int(np.isfinite(measured).sum()),
                         segments=segments, change_point=change)
        if own.points[i] == 0:
            return Model(callpath, metric, None, Quality(), NAME, _options(options), ("no measured values: no model",),
                         0)
        function = law(i).function(own, parameter, batch.parameters)
        fitted = own.evaluate(data.x)[i]
        law_note = _own_note(own, i)
        return Model(callpath, metric, function, _quality(measured, fitted, own.adjusted_r2[i]), NAME,
                     _options(options), tuple([law_note, *series_notes, *_exponential_note(function)]),
                     int(own.points[i]))

    return ApmtModelSet(batch.parameters, count=len(batch), make=make, apmt=result, notes=notes,
                        time_metric=data.time_metric, time_factor=data.time_factor, totals=options.totals)


def _segments_in_scale(combination: Combination, fits: LawFits, x: np.ndarray, parameter: str,
                       parameters: Sequence[str]) -> tuple[tuple[Segment, ...], ChangePoint | None]:
    """A combination with a switch in bytes as a segmented model of the scale: where its bytes law
    crosses the switch (:meth:`~pmkit.modelers.apmt_laws.Switch.in_scale`), and the law of each side."""
    found = combination.switches[0].in_scale(fits, x) if combination.switches else None
    if found is None:
        return (), None
    change, low, high = found
    sides = ((x.min(), -math.inf, change, x[x < change]), (x.max(), change, math.inf, x[x >= change]))
    segments = tuple(Segment(combination.function(fits, parameter, parameters, at=float(at)), start, end,
                             (float(side.min()), float(side.max())) if side.size else (math.nan, math.nan))
                     for at, start, end, side in sides)
    return segments, ChangePoint(parameter, change, low, high)


def _nominal_columns(batch: SeriesBatch, data: StudyData) -> np.ndarray:
    """Indices of the batch's points that are the study's nominal runs, in the study's order."""
    index = {tuple(p): i for i, p in enumerate(batch.points.tolist())}
    return np.array([index[tuple(p)] for p in data.points.tolist()], dtype=np.int64)


def _composites(result: ApmtResult, data: StudyData) -> dict[str, tuple[Combination, str]]:
    """APMT's time law (seconds) of each call path that is a kernel on its own or communicates."""
    out: dict[str, tuple[Combination, str]] = {}
    for kernel in result.fit.kernels:
        if len(kernel.rows) == 1 and not kernel.total.empty:
            how = f"BF_mem from {kernel.bf_source}" if kernel.bf_source else "; ".join(kernel.notes) or "from counters"
            out[data.callpaths[int(kernel.rows[0])]] = (kernel.total, f"APMT kernel ({kernel.kind}): T_comp + "
                                                        f"BF_mem·T_mem ({how})")
    for model in result.fit.comm:
        if not model.time.empty:
            out[data.callpaths[model.row]] = (model.time.scaled(result.fit.bf_comm),
                                              f"APMT {'point-to-point' if model.kind == 'p2p' else 'collective'}: "
                                              + "; ".join(model.notes))
    return out


def _own_note(fits: LawFits, i: int) -> str:
    from pmkit.fitting.laws import SHAPES

    shape = SHAPES[int(fits.shape[i])]
    if shape.family == "constant":
        return "APMT predefined law: constant (no law reached the R² threshold, or fewer than 3 points)"
    return f"APMT predefined law: {shape.family} ({shape.name}), R² {fits.r2[i]:.3f}"


def _exponential_note(function: Any) -> list[str]:
    if getattr(function, "exponentials", ()):
        return ["an exponential law: pmkit's growth classes see only its polynomial part"]
    return []


def _quality(measured: np.ndarray, fitted: np.ndarray, adjusted: float | None) -> Quality:
    ok = np.isfinite(measured) & np.isfinite(fitted)
    if not ok.any():
        return Quality()
    y, f = measured[ok], fitted[ok]
    rss = float(np.sum((f - y) ** 2))
    denominator = np.abs(f) + np.abs(y)
    with np.errstate(all="ignore"):
        smape = float(100 * np.mean(np.where(denominator > 0, 2 * np.abs(f - y) / denominator, 0.0)))
    if adjusted is None:
        tss = float(np.sum((y - y.mean()) ** 2))
        adjusted = 1 - rss / tss if tss > 0 else math.nan
    return Quality(rss, smape, float(adjusted) if adjusted is not None else math.nan)


def _options(options: ApmtOptions) -> Mapping[str, Any]:
    return dict(options.__dict__)


@hookimpl(trylast=True)
def pmkit_register_modelers(register: Any) -> None:
    register(ApmtModeler())
