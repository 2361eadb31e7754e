"""One call path in detail: its measured points with their spread, predictions up to the target, and
the models that came with the input, for ``pmkit show --callpath``.

Built from a :class:`~pmkit.scaling.ScalingReport` by :func:`detail`; the views (terminal, Markdown,
JSON) render it, and :func:`pmkit.ui.plot.plot_data` lays it out as a plot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pmkit.models import ONE_POINT, Model
from pmkit.scaling import INTERVAL_LEVEL, CallpathScaling, ScalingReport, evaluate
from pmkit.trend import Trend

GROWTH_STEPS = (2.0, 4.0, 8.0, 16.0)
"""Predictions are listed at these multiples of the largest measured point, up to the target."""


@dataclass(frozen=True)
class PointStats:
    """The repetitions of one call path at one point: count, mean, spread, and the model's value there;
    ``left_out`` when the modeler left the point out as an outlier."""

    coordinates: dict[str, float]
    label: str
    repetitions: int
    mean: float
    minimum: float
    maximum: float
    std: float
    fitted: float
    left_out: bool = False

    @property
    def relative_error(self) -> float:
        """(model − mean) / mean; NaN where either is missing or the mean is zero."""
        if not (math.isfinite(self.mean) and math.isfinite(self.fitted)) or self.mean == 0:
            return math.nan
        return (self.fitted - self.mean) / abs(self.mean)

    @property
    def spread(self) -> float:
        """Half the min–max range relative to the mean: ±x of run-to-run variation."""
        if not math.isfinite(self.mean) or self.mean == 0 or self.repetitions < 2:
            return math.nan
        return (self.maximum - self.minimum) / 2 / abs(self.mean)

    def to_json(self) -> dict[str, object]:
        return {"point": self.coordinates, "repetitions": self.repetitions, "mean": self.mean,
                "min": self.minimum, "max": self.maximum, "std": self.std, "fitted": self.fitted,
                "left_out": self.left_out}


@dataclass(frozen=True)
class Prediction:
    """The model's value at one point beyond the measurements, with its 90% interval (NaN bounds where the
    modeler gives none, see :meth:`pmkit.models.Model.predict`)."""

    point: dict[str, float]
    value: float
    low: float = math.nan
    high: float = math.nan

    def to_json(self) -> dict[str, object]:
        return {"point": self.point, "value": self.value, "low": self.low, "high": self.high,
                "level": INTERVAL_LEVEL}


@dataclass
class StoredModel:
    """A model that came with the input (an ``.extra-p`` file's model set), for comparison."""

    name: str
    model: Model
    at_target: float

    def to_json(self) -> dict[str, object]:
        return {"set": self.name, "modeler": self.model.modeler, **self.model.to_json(),
                "prediction_at_target": self.at_target}


@dataclass(frozen=True)
class CallpathDetail:
    """Everything ``pmkit show --callpath`` says about one call path; ``trend`` is how its law behaves
    towards the target (:mod:`pmkit.trend`), ``strong`` whether the analysis is of strong scaling with
    values per process (where a law that stops falling limits the speed-up), ``no_target`` why there is
    no target (one run: :func:`pmkit.scaling.no_target`; ``target`` is then the reference point and there
    are no predictions).  ``notes`` are the model's notes the views list, less what the header says
    already (one run: :data:`pmkit.models.ONE_POINT`)."""

    row: CallpathScaling
    metric: str
    unit: str
    reference: dict[str, float]
    target: dict[str, float]
    points: list[PointStats]
    predictions: list[Prediction]
    stored: list[StoredModel] = field(default_factory=list)
    trend: Trend | None = None
    strong: bool = False
    no_target: str | None = None
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"callpath": self.row.callpath, "points": [p.to_json() for p in self.points],
                "predictions": [p.to_json() for p in self.predictions],
                "stored_models": [s.to_json() for s in self.stored]}


def stored_models(report: ScalingReport, callpath: str) -> list[StoredModel]:
    """The input's own models of ``callpath`` and the report's metric, with their value at the target."""
    out = []
    for name, models in report.experiment.stored_models.items():
        found = models.get(callpath, report.metric)
        if found is not None:
            out.append(StoredModel(name, found, evaluate(found.function_at(report.target), report.target)))
    return out


def detail(report: ScalingReport, callpath: str) -> CallpathDetail:
    """Measured points (mean and spread), predictions up to the target, and stored models for ``callpath``.

    ``callpath`` is a full call path or the unique end of one (see :meth:`ScalingReport.row`).
    """
    row = report.row(callpath)
    said = {ONE_POINT} if report.no_target is not None else set()
    notes = tuple(n for n in row.model.notes if n not in said) if row.model is not None else ()
    return CallpathDetail(row, report.metric, report.unit, dict(report.reference), dict(report.target),
                          _points(report, row), _predictions(report, row.model),
                          stored_models(report, row.callpath), report.trend(row.index),
                          report.strong is not None and not report.strong.summed, report.no_target, notes)


def _points(report: ScalingReport, row: CallpathScaling) -> list[PointStats]:
    experiment = report.experiment
    raw = experiment.measurements[report.metric][row.index]
    outliers = [dict(o) for o in row.model.outliers] if row.model is not None else []
    points = []
    for i in range(len(experiment.points)):
        reps = raw[i][np.isfinite(raw[i])]
        coords = {name: float(v) for name, v in zip(experiment.parameters, experiment.points[i], strict=True)}
        if len(reps):
            stats = (float(np.mean(reps)), float(np.min(reps)), float(np.max(reps)), float(np.std(reps)))
        else:
            stats = (math.nan,) * 4
        left_out = any(all(coords.get(k) == v for k, v in o.items()) for o in outliers)
        points.append(PointStats(coords, experiment.point_label(i), len(reps), *stats, _value(row.model, coords),
                                 left_out))
    return sorted(points, key=lambda s: tuple(s.coordinates.values()))


def _value(model: Model | None, point: dict[str, float]) -> float:
    """The model at ``point``, by the law that holds there (a segmented model's segment); NaN without one."""
    return math.nan if model is None else evaluate(model.function_at(point), point)


def _predictions(report: ScalingReport, model: Model | None) -> list[Prediction]:
    """The model at 2, 4, 8, 16 times the largest point (in the parameters that grow) below the target,
    and at the target."""
    if model is None or model.function is None or report.no_target is not None:
        return []
    changing = [k for k in report.reference if report.target[k] > report.reference[k]]
    out = []
    points = [{k: v * factor if k in changing else v for k, v in report.reference.items()} for factor in GROWTH_STEPS]
    points = [p for p in points if changing and all(p[k] < report.target[k] for k in changing)]
    for point in [*points, dict(report.target)]:
        interval = model.predict(point, INTERVAL_LEVEL)
        out.append(Prediction(point, _value(model, point), interval.low, interval.high))
    return out

