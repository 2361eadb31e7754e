"""Prediction of scenarios: per-process section times, the run's total, its balanced total, the
imbalance overhead, and — where the scenario was measured — the error per run.

For each run of a scenario table, every section's calibrated predictor gives a time per process;
``[total] process`` adds them up per process and ``[total] expression`` aggregates over processes
(``max(process)`` for concurrent work).  The *balanced* total evaluates the same expressions with
every section's time replaced by its mean over the run's processes — the same work spread evenly —
so the *imbalance overhead* is what the uneven spread costs.  A predicted time below zero (a
negative intercept far from the calibration data) is set to 0 and noted.  The total's standard
error combines, in quadrature, what each section contributes when shifted by one standard error of
its calibrated coefficients, and when shifted by its scatter around the predictor (the RMS relative
residual of its calibration): how far a measured run may fall from the prediction by chance.

Validation, as in the paper: ``e = |predicted − measured| / measured × 100`` per run, where a
measured run's total is ``[validation]``'s call path (its inclusive value aggregated over
processes) or else the total expression over the measured section times; repetitions of a run are
averaged.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pmkit.errors import InputError
from pmkit.perprocess.calibration import Calibration
from pmkit.perprocess.environment import RunSet, scenario_runs
from pmkit.perprocess.expressions import Env
from pmkit.perprocess.measured import (
    MeasuredRun,
    Measurements,
    load_studies,
    match_callpaths,
    section_values,
    study_paths,
)
from pmkit.perprocess.modelfile import PROCESS, ModelSpec
from pmkit.perprocess.tables import ParameterTable, read_table, run_coordinates, strip_repetition


@dataclass
class MeasuredTotal:
    """What the measurements of one scenario run say: the runs (repetitions) and their totals."""

    runs: list[str]
    totals: np.ndarray
    process_total: np.ndarray | None
    sections: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return float(np.mean(self.totals))

    @property
    def spread(self) -> float:
        """Standard deviation of the repetitions' totals (0 for one repetition)."""
        return float(np.std(self.totals, ddof=1)) if len(self.totals) > 1 else 0.0


@dataclass
class RunPrediction:
    """One scenario run: per-process predictions, the aggregated total and the imbalance it costs."""

    name: str
    processes: int
    parameters: dict[str, np.ndarray]
    sections: dict[str, np.ndarray]
    stderr: dict[str, np.ndarray]
    process_total: np.ndarray
    total: float
    total_stderr: float
    balanced: float
    measured: MeasuredTotal | None = None

    @property
    def overhead(self) -> float:
        """The time the imbalance costs: total minus balanced total."""
        return self.total - self.balanced

    @property
    def overhead_share(self) -> float:
        return self.overhead / self.total if self.total else float("nan")

    @property
    def error(self) -> float | None:
        """The paper's prediction error in percent, when the run was measured."""
        if self.measured is None or not self.measured.total:
            return None
        return abs(self.total - self.measured.total) / abs(self.measured.total) * 100

    def slowest(self, count: int) -> np.ndarray:
        """Ranks of the ``count`` processes with the largest predicted time, slowest first."""
        return np.argsort(-self.process_total, kind="stable")[:count]

    def to_json(self) -> dict[str, Any]:
        measured = self.measured
        return {
            "run": self.name, "processes": self.processes, "total": self.total, "total_stderr": self.total_stderr,
            "balanced": self.balanced, "overhead": self.overhead, "overhead_share": self.overhead_share,
            "measured": None if measured is None else {
                "runs": measured.runs, "total": measured.total, "spread": measured.spread,
                "totals": measured.totals.tolist()},
            "error": self.error,
            "sections": {name: {"max": float(np.max(v)), "mean": float(np.mean(v)),
                                "measured_max": None if measured is None or name not in measured.sections
                                else float(np.max(measured.sections[name])),
                                "measured_mean": None if measured is None or name not in measured.sections
                                else float(np.mean(measured.sections[name]))}
                         for name, v in self.sections.items()},
            "ranks": [{"rank": rank, "total": float(self.process_total[rank]),
                       "measured": None if measured is None or measured.process_total is None
                       else float(measured.process_total[rank]),
                       "sections": {name: float(v[rank]) for name, v in self.sections.items()},
                       "stderr": {name: float(v[rank]) for name, v in self.stderr.items()},
                       "parameters": {name: float(v[rank]) for name, v in self.parameters.items()}}
                      for rank in range(self.processes)],
        }


@dataclass
class Prediction:
    """The predicted scenario: one :class:`RunPrediction` per run, and the calibration behind it."""

    calibration: Calibration
    scenario: str
    runs: list[RunPrediction]
    unit: str
    measured_sources: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[float]:
        return [r.error for r in self.runs if r.error is not None]

    @property
    def mean_error(self) -> float | None:
        return float(np.mean(self.errors)) if self.errors else None

    @property
    def max_error(self) -> float | None:
        return float(np.max(self.errors)) if self.errors else None

    def run(self, name: str) -> RunPrediction:
        for run in self.runs:
            if run.name == name:
                return run
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "unit": self.unit, "measured_sources": self.measured_sources,
                "runs": [r.to_json() for r in self.runs], "mean_error": self.mean_error,
                "max_error": self.max_error, "skipped": [{"source": s, "problem": p} for s, p in self.skipped],
                "notes": list(self.notes)}


def totals(spec: ModelSpec, runs: RunSet, sections: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per-process totals (runs × processes) and run totals (runs) of the given section times."""
    mask = runs.mask
    values = dict(runs.env.values)
    values.update(sections)
    process = np.where(mask, np.broadcast_to(np.asarray(spec.process.evaluate(Env(values, mask)), dtype=float),
                                             mask.shape), np.nan)
    values[PROCESS] = process
    total = np.broadcast_to(np.asarray(spec.total.evaluate(Env(values, mask)), dtype=float), (len(mask), 1))
    return process, total[:, 0].copy()


def predict(calibration: Calibration, scenario: str | os.PathLike | ParameterTable,
            measured: str | os.PathLike | Sequence[str | os.PathLike] | Measurements | None = None) -> Prediction:
    """Predict every run of the ``scenario`` table; validate against ``measured`` runs (Cube studies) that match."""
    spec = calibration.spec
    table = scenario if isinstance(scenario, ParameterTable) else read_table(scenario)
    if measured is not None and not isinstance(measured, Measurements):
        measured = load_studies(study_paths(measured), spec.metrics)
    runs = scenario_runs(spec, table)
    notes: list[str] = []
    sections: dict[str, np.ndarray] = {}
    stderr: dict[str, np.ndarray] = {}
    for fit in calibration.sections:
        values, error = fit.predict(runs)
        negative = runs.mask & (values < 0)
        if negative.any():
            notes.append(f"section {fit.name}: {int(negative.sum())} processes were predicted a negative time, set "
                         "to 0 (the scenario lies outside the calibration data)")
            values = np.where(negative, 0.0, values)
        sections[fit.name], stderr[fit.name] = values, error
    process, total = totals(spec, runs, sections)
    means = {name: _masked_mean(v, runs.mask) for name, v in sections.items()}
    _, balanced = totals(spec, runs, means)
    spread = np.zeros(len(runs.names))
    for fit in calibration.sections:
        scatter = sections[fit.name] * (np.nan_to_num(fit.quality.rms_relative) / 100)
        for shift in (np.nan_to_num(stderr[fit.name]), scatter):
            shifted = dict(sections)
            shifted[fit.name] = sections[fit.name] + shift
            spread += (totals(spec, runs, shifted)[1] - total) ** 2
    per_process, _ = spec.parameters_used()
    predictions = []
    for r, name in enumerate(runs.names):
        n = int(runs.processes[r])
        params = {p: np.broadcast_to(np.asarray(runs.env.values[p]), runs.mask.shape)[r, :n]
                  for p in (*per_process, *spec.derived_used()) if spec.varies(p)}
        predictions.append(RunPrediction(name, n, params, {k: v[r, :n] for k, v in sections.items()},
                                         {k: v[r, :n] for k, v in stderr.items()}, process[r, :n], float(total[r]),
                                         float(np.sqrt(spread[r])), float(balanced[r])))
    prediction = Prediction(calibration, table.path, predictions, calibration.unit, notes=notes)
    if measured is not None:
        _validate(prediction, runs, measured)
    return prediction


def _masked_mean(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    mean = np.where(mask, values, 0.0).sum(axis=1, keepdims=True) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
    return np.where(mask, np.broadcast_to(mean, mask.shape), np.nan)


def _measured_for(key: str, runs: Sequence[MeasuredRun]) -> list[MeasuredRun]:
    """The measured runs (repetitions) a scenario run names: by name, name without ``.rN``, or coordinates."""
    exact = [r for r in runs if r.label == key or strip_repetition(r.label) == key]
    if exact:
        return exact
    parsed = run_coordinates(key)
    if parsed is None:
        return []
    coords, repetition = parsed
    return [r for r in runs if r.coordinates and all(coords.get(k) == v for k, v in r.coordinates.items())
            and (repetition is None or repetition == r.repetition)]


def _validate(prediction: Prediction, runs: RunSet, measured: Measurements) -> None:
    """Attach the measured totals to the runs they describe, and note the rest."""
    spec = prediction.calibration.spec
    prediction.measured_sources = sorted({r.source for r in measured.runs})
    prediction.skipped.extend(measured.skipped)
    rows: dict[str, list[int]] = {}
    unmatched = []
    for fit in prediction.calibration.sections:
        found, _ = match_callpaths(spec.section(fit.name).callpaths, measured.tree,
                                   inclusive=spec.section(fit.name).inclusive)
        rows[fit.name] = found
        if not found:
            unmatched.append(fit.name)
    if spec.validation is not None:
        target, _ = match_callpaths([spec.validation.callpath], measured.tree, inclusive=True)
        if not target:
            raise InputError(spec.path, f"[validation] call path {spec.validation.callpath!r} is not in the measured "
                             f"runs (they have {', '.join(measured.callpaths[:4])}, …)")
    elif unmatched:
        prediction.notes.append(f"the measured runs lack the call paths of section(s) {', '.join(unmatched)}; "
                                "no validation")
        return
    used: set[str] = set()
    for r, run in enumerate(prediction.runs):
        found = [m for m in _measured_for(run.name, measured.runs) if m.processes == run.processes]
        others = [m for m in _measured_for(run.name, measured.runs) if m.processes != run.processes]
        for m in others:
            prediction.skipped.append((m.source, f"run {m.label!r} has {m.processes} processes, the scenario's "
                                      f"{run.name!r} has {run.processes}"))
        if not found:
            continue
        used.update(m.label for m in found)
        width = runs.mask.shape[1]
        sub = runs.subset([r] * len(found), [m.label for m in found])
        measured_sections = {} if unmatched else {
            name: section_values(found, spec.metric, rows[name], width) for name in rows}
        process = None
        if measured_sections:
            per_process, totals_ = totals(spec, sub, measured_sections)
            process = per_process[:, : run.processes].mean(axis=0)
        if spec.validation is not None:
            values = section_values(found, spec.validation.metric, target, width)
            reduce = {"max": np.nanmax, "min": np.nanmin, "sum": np.nansum, "mean": np.nanmean}
            totals_ = reduce[spec.validation.aggregate](values, axis=1)
        run.measured = MeasuredTotal([m.label for m in found], np.asarray(totals_, dtype=float), process,
                                     {k: v[:, : run.processes].mean(axis=0) for k, v in measured_sections.items()})
    left = [m.label for m in measured.runs if m.label not in used]
    if left:
        prediction.notes.append(f"{len(left)} measured runs are not in the scenario table: "
                                f"{', '.join(left[:3])}{', …' if len(left) > 3 else ''}")


SCHEMA = "pmkit.perprocess/1"
"""The JSON document ``pmkit predict --json`` prints; documented in docs/perprocess.md."""


def document(calibration: Calibration, prediction: Prediction | None = None) -> dict[str, Any]:
    """The versioned JSON document of a calibration and (optionally) the scenario predicted with it."""
    return {"schema": SCHEMA, "calibration": calibration.to_json(),
            "prediction": None if prediction is None else prediction.to_json()}
