"""Where a program stops scaling: per call path shares now and at a target scale, growth classes, rankings.

This is the analysis behind ``pmkit show``: it evaluates each call path's model at the largest
measured point and at a target scale, classifies how the model grows (constant, logarithmic,
polynomial degree), and ranks the call paths that grow fastest.  It works on any
:class:`~pmkit.models.ModelSet`, whichever modeler made it; rendering lives in :mod:`pmkit.ui`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from pmkit.constraints import Constraint
from pmkit.errors import UsageError
from pmkit.experiment import Experiment
from pmkit.models import Model, ModelSet
from pmkit.pmnf import Function, Term

DEFAULT_SCALE_UP = 4.0
"""Without ``--at``, the target is this many times the largest measured value of each parameter."""

SORT_KEYS = ("share", "growth", "name")

RANKING_SHARE = 0.1
"""The ranking lists growing call paths down to this fraction of the tree's ``min_share``: a call path
too small to show in the tree may still be the one that grows (the example study's MPI_Allreduce
takes 1 % at the target)."""


@dataclass(frozen=True)
class Growth:
    """How a model grows asymptotically: the dominant term's exponents, as a class and a label.

    ``kind`` is ``constant``, ``decreasing``, ``logarithmic`` or ``polynomial``; ``level`` orders
    the classes by how badly they scale (0 constant or decreasing, 1 logarithmic, 2 sub-linear,
    3 linear, 4 super-linear); ``label`` reads like ``p^1.5`` or ``p·log p``.
    """

    kind: str
    label: str
    level: int
    exponents: tuple[tuple[str, Fraction, Fraction], ...] = ()

    @property
    def order(self) -> tuple[float, float, float]:
        """A key that sorts classes from slowest to fastest growth."""
        poly = [float(e) for _, e, _ in self.exponents]
        logs = [float(j) for _, _, j in self.exponents]
        if self.kind == "decreasing":
            return (-1.0, 0.0, 0.0)
        return (max(poly, default=0.0), sum(poly), sum(logs))

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "label": self.label, "level": self.level,
                "exponents": [{"parameter": p, "exponent": _fraction(e), "log_exponent": _fraction(j)}
                              for p, e, j in self.exponents]}


def _fraction(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _term_order(term: Term) -> tuple[Fraction, Fraction]:
    return (sum((f.exponent for f in term.factors), Fraction(0)),
            sum((f.log_exponent for f in term.factors), Fraction(0)))


def _exponent_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    if value.denominator in (2, 4, 5, 8):
        return f"{float(value):g}"
    return f"({value.numerator}/{value.denominator})"


def _factor_label(parameter: str, exponent: Fraction, log_exponent: Fraction) -> str:
    parts = []
    if exponent == 1:
        parts.append(parameter)
    elif exponent != 0:
        parts.append(f"{parameter}^{_exponent_text(exponent)}")
    if log_exponent == 1:
        parts.append(f"log {parameter}")
    elif log_exponent != 0:
        parts.append(f"log^{_exponent_text(log_exponent)} {parameter}")
    return "·".join(parts)


CONSTANT = Growth("constant", "constant", 0)
DECREASING = Growth("decreasing", "decreasing", 0)


def growth_of(function: Function | None) -> Growth | None:
    """The growth class of ``function``: its fastest-growing term with a positive coefficient.

    A function whose fastest-growing term has a negative coefficient, or whose terms all have
    negative exponents, is ``decreasing``; one without terms is ``constant``.  None for no function.
    """
    if function is None:
        return None
    terms = [t for t in function.terms if t.coefficient != 0 and t.factors]
    if not terms:
        return CONSTANT
    top = max(terms, key=_term_order)
    if top.coefficient < 0 or _term_order(top) <= (0, 0):
        growing = [t for t in terms if t.coefficient > 0 and _term_order(t) > (0, 0)]
        if not growing or max(_term_order(t) for t in growing) < _term_order(top):
            return DECREASING
        top = max(growing, key=_term_order)
    exponents = tuple((f.parameter, f.exponent, f.log_exponent) for f in top.factors)
    label = "·".join(_factor_label(p, e, j) for p, e, j in exponents)
    highest = max(e for _, e, _ in exponents)
    has_log = any(j > 0 for _, _, j in exponents)
    if highest <= 0:
        return Growth("logarithmic", label, 1, exponents)
    if highest < 1:
        level = 2
    elif highest == 1 and not has_log:
        level = 3
    else:
        level = 4
    return Growth("polynomial", label, level, exponents)


def parse_target(text: str | None, parameters: Sequence[str]) -> dict[str, float]:
    """``"p=65536,size=100"`` → ``{"p": 65536.0, "size": 100.0}``; UsageError naming a bad item."""
    target: dict[str, float] = {}
    if not text:
        return target
    for item in text.replace(";", ",").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise UsageError(f"--at expects name=value items like p=65536, got {item.strip()!r}")
        if name not in parameters:
            raise UsageError(f"--at names parameter {name!r}; the experiment has {', '.join(parameters)}")
        if name in target:
            raise UsageError(f"--at gives {name} twice")
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"--at {name}: {value.strip()!r} is not a number") from None
        if not math.isfinite(number) or number <= 0:
            raise UsageError(f"--at {name}: {value.strip()!r} must be a positive number")
        target[name] = number
    return target


def reference_index(experiment: Experiment) -> int:
    """The index of the largest measured point: highest rank summed over parameters, then largest values."""
    points = experiment.points
    score = np.zeros(len(points))
    for column in range(points.shape[1]):
        distinct = np.unique(points[:, column])
        if len(distinct) > 1:
            score += np.searchsorted(distinct, points[:, column]) / (len(distinct) - 1)
    order = sorted(range(len(points)), key=lambda i: (score[i], tuple(points[i])))
    return order[-1]


def default_target(experiment: Experiment, scale: float = DEFAULT_SCALE_UP) -> dict[str, float]:
    """``scale`` × the largest measured value of each parameter."""
    return {name: float(experiment.points[:, i].max()) * scale for i, name in enumerate(experiment.parameters)}


def resolve_target(experiment: Experiment, given: Mapping[str, float] | None) -> dict[str, float]:
    """The target point: the default when nothing is given; parameters not given keep their largest value."""
    if not given:
        return default_target(experiment)
    largest = default_target(experiment, 1.0)
    unknown = [name for name in given if name not in experiment.parameters]
    if unknown:
        raise UsageError(f"target names parameter {unknown[0]!r}; the experiment has "
                         f"{', '.join(experiment.parameters)}")
    return {name: float(given.get(name, largest[name])) for name in experiment.parameters}


def default_metric(experiment: Experiment) -> str:
    """``time`` when the experiment has it, else its first metric."""
    return "time" if "time" in experiment.measurements else experiment.metric_names[0]


@dataclass(frozen=True)
class CallpathScaling:
    """One call path at the largest measured point and at the target.

    ``measured`` is the reduced measurement at the reference point (NaN if not measured there),
    ``share`` its part of the measured total; ``fitted`` and ``predicted`` are the model's values at
    the reference point and the target, ``predicted_share`` the part of the predicted total, and
    ``growth`` the factor ``predicted / fitted``.  ``branch_share`` and ``branch_predicted_share``
    count the call path with everything below it (for an inclusive metric, the same as its own).
    ``measured_points`` is the number of points with at least one value (0: a node of the tree only).
    """

    index: int
    callpath: str
    name: str
    depth: int
    model: Model | None
    measured: float
    share: float
    fitted: float
    predicted: float
    predicted_share: float
    growth: float
    growth_class: Growth | None
    prior_note: str | None = None
    branch_share: float = math.nan
    branch_predicted_share: float = math.nan
    branch_predicted: float = math.nan
    measured_points: int = -1

    @property
    def has_model(self) -> bool:
        return self.model is not None and self.model.function is not None

    def to_json(self) -> dict[str, object]:
        return {"callpath": self.callpath, "measured": _finite(self.measured), "share": _finite(self.share),
                "fitted": _finite(self.fitted), "predicted": _finite(self.predicted),
                "predicted_share": _finite(self.predicted_share), "growth": _finite(self.growth),
                "growth_class": None if self.growth_class is None else self.growth_class.to_json(),
                "prior_note": self.prior_note}


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


@dataclass
class ScalingReport:
    """The scaling analysis of one metric of an experiment: a row per call path, in call-tree order."""

    experiment: Experiment
    metric: str
    unit: str
    inclusive: bool
    measure: str
    reference: dict[str, float]
    reference_index: int
    target: dict[str, float]
    total_measured: float
    total_predicted: float
    rows: list[CallpathScaling]

    def row(self, callpath: str) -> CallpathScaling:
        """The row of ``callpath``: a full path, or the end of one (``solve->MPI_Allreduce``, a region
        name) when only one call path ends so.  UsageError listing candidates otherwise."""
        if callpath in self.experiment.callpaths:
            return self.rows[self.experiment.callpaths.index(callpath)]
        ending = [r for r in self.rows if r.callpath.endswith("->" + callpath)]
        if len(ending) == 1:
            return ending[0]
        if ending:
            listed = ", ".join(r.callpath for r in ending[:5])
            raise UsageError(f"call path {callpath!r} is ambiguous: {listed}" + (", ..." if len(ending) > 5 else ""))
        leaf = callpath.split("->")[-1]
        near = [r.callpath for r in self.rows if leaf and leaf.lower() in r.name.lower()][:5]
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise UsageError(f"no call path {callpath!r} in the experiment{hint}")

    def children(self, index: int) -> list[CallpathScaling]:
        return [self.rows[i] for i in self.experiment.callpaths.children(index)]

    def roots(self) -> list[CallpathScaling]:
        return [self.rows[i] for i in self.experiment.callpaths.roots()]

    def branch(self, index: int) -> list[CallpathScaling]:
        """The row at ``index`` and every row below it."""
        out, stack = [], [index]
        while stack:
            i = stack.pop()
            out.append(self.rows[i])
            stack.extend(self.experiment.callpaths.children(i))
        return out

    def branch_growth(self, index: int, min_share: float = 0.0) -> CallpathScaling | None:
        """The fastest-growing row in the branch at ``index`` taking at least ``min_share`` at the target.

        Lets a collapsed call path show that something below it grows; None when nothing has a model.
        """
        rows = [r for r in self.branch(index) if r.has_model and r.growth_class is not None
                and (r.index == index or (math.isfinite(r.predicted_share) and r.predicted_share >= min_share))]
        if not rows:
            return None
        return max(rows, key=lambda r: (r.growth_class.order, _or_zero(r.growth), r.index == index))

    def ranking(self, min_share: float = 0.0, limit: int | None = None) -> list[CallpathScaling]:
        """Call paths whose model grows towards the target, fastest first.

        Only call paths taking at least ``min_share`` (a fraction) of the predicted total are
        ranked, so that a negligible call path growing fast does not hide the ones that matter.
        """
        rows = [r for r in self.rows if r.has_model and math.isfinite(r.growth) and r.growth > 1.0 + 1e-9
                and r.growth_class is not None and r.growth_class.level > 0
                and (not math.isfinite(r.predicted_share) or r.predicted_share >= min_share)]
        rows.sort(key=lambda r: (-r.growth, -_or_zero(r.predicted_share), r.callpath))
        return rows if limit is None else rows[:limit]

    def sort_key(self, sort: str):
        """A key ordering siblings by ``share`` (of their branch at the target), ``growth`` or ``name``."""
        if sort not in SORT_KEYS:
            raise UsageError(f"unknown sort {sort!r}; choose one of {', '.join(SORT_KEYS)}")
        if sort == "name":
            return lambda r: r.name
        if sort == "growth":
            return lambda r: (-(r.growth if math.isfinite(r.growth) else -math.inf),
                              -_or_zero(r.predicted_share), r.name)
        return lambda r: (-_or_zero(r.branch_predicted_share), -_or_zero(r.branch_share), r.name)

    def prediction_document(self) -> dict[str, object]:
        """The analysis as JSON: metric, reference and target points, totals (rows are per model)."""
        return {"metric": self.metric, "unit": self.unit, "measure": self.measure,
                "reference_point": self.reference, "target": self.target,
                "total_measured": _finite(self.total_measured), "total_predicted": _finite(self.total_predicted)}


def _or_zero(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def _evaluate(function: Function | None, point: Mapping[str, float]) -> float:
    if function is None:
        return math.nan
    with np.errstate(all="ignore"):
        value = function.evaluate({name: point[name] for name in function.parameters})
    return float(value)


def analyse(experiment: Experiment, models: ModelSet | Sequence[Model], metric: str | None = None,
            target: Mapping[str, float] | None = None, measure: str = "mean",
            constraints: Mapping[str, Constraint] | None = None) -> ScalingReport:
    """Evaluate every call path's model of ``metric`` at the largest measured point and at ``target``.

    Shares are of the total of the metric: the sum over root call paths for an inclusive metric,
    over all call paths for an exclusive one.  Call paths without a model keep NaN predictions.
    ``constraints`` (from a prior) mark the rows whose model the prior restricted.
    """
    metric = metric or default_metric(experiment)
    if metric not in experiment.measurements:
        raise UsageError(f"no metric {metric!r}; the experiment has {', '.join(experiment.metric_names)}")
    info = experiment.metric(metric)
    by_path = {m.callpath: m for m in models if m.metric == metric}
    ref = reference_index(experiment)
    reference = {name: float(v) for name, v in zip(experiment.parameters, experiment.points[ref], strict=True)}
    goal = resolve_target(experiment, target)
    measured = experiment.values(metric, measure)[:, ref]
    measured_at = np.isfinite(experiment.measurements[metric]).any(axis=2).sum(axis=1)
    fitted = np.full(len(experiment.callpaths), np.nan)
    predicted = np.full(len(experiment.callpaths), np.nan)
    for cp in experiment.callpaths:
        model = by_path.get(cp.path)
        if model is not None and model.function is not None:
            fitted[cp.index] = _evaluate(model.function, reference)
            predicted[cp.index] = _evaluate(model.function, goal)
    counted = experiment.callpaths.roots() if info.inclusive else list(range(len(experiment.callpaths)))
    # shares are of non-negative parts, now and then alike (a negative value or prediction counts 0)
    measured_part = np.clip(measured, 0.0, None)
    clipped = np.clip(predicted, 0.0, None)
    total_measured = (float(np.nansum(measured_part[counted])) if np.isfinite(measured_part[counted]).any()
                      else math.nan)
    total_predicted = float(np.nansum(clipped[counted])) if np.isfinite(clipped[counted]).any() else math.nan
    branch_measured, branch_predicted = measured_part.copy(), clipped.copy()
    if not info.inclusive:
        branch_measured = _branch_sums(experiment, measured_part)
        branch_predicted = _branch_sums(experiment, clipped)
    rows = []
    for cp in experiment.callpaths:
        i = cp.index
        model = by_path.get(cp.path)
        growth = predicted[i] / fitted[i] if fitted[i] > 0 else math.nan
        rows.append(CallpathScaling(i, cp.path, cp.name, cp.depth, model, float(measured[i]),
                                    _part(measured_part[i], total_measured), float(fitted[i]), float(predicted[i]),
                                    _part(clipped[i], total_predicted), float(growth),
                                    growth_of(model.function) if model is not None else None,
                                    prior_note(model, (constraints or {}).get(cp.path), experiment.parameters),
                                    _part(branch_measured[i], total_measured),
                                    _part(branch_predicted[i], total_predicted), float(branch_predicted[i]),
                                    int(measured_at[i])))
    return ScalingReport(experiment, metric, info.unit, info.inclusive, measure, reference, ref, goal,
                         total_measured, total_predicted, rows)


PRIOR_WORDS = ("prior", "taint")
"""Without the constraints at hand, a model note with one of these words is taken to come from a prior."""


def prior_note(model: Model | None, constraint: Constraint | None, parameters: Sequence[str]) -> str | None:
    """What a prior did to a model, when it restricted it: the model's note about it, or the constraint's.

    A constraint that allows every parameter to appear and multiply changes nothing and gives None.
    Without a constraint, a model note mentioning a prior (``PRIOR_WORDS``) is returned.
    """
    notes = model.notes if model is not None else ()
    if constraint is None:
        return next((n for n in notes if any(w in n.lower() for w in PRIOR_WORDS)), None)
    restricts = constraint.constant or any(not constraint.allows(p) for p in parameters) or any(
        not constraint.may_multiply(a, b) for a in parameters for b in parameters if a < b)
    if not restricts:
        return None
    own = constraint.note()
    source = constraint.source or "prior"
    return next((n for n in notes if n == own), None) or next((n for n in notes if source in n), None) or own


def _part(value: float, total: float) -> float:
    if not (math.isfinite(value) and math.isfinite(total)) or total <= 0:
        return math.nan
    return float(value / total)


def _branch_sums(experiment: Experiment, values: np.ndarray) -> np.ndarray:
    """Each call path's value plus all its descendants' (NaN counted as 0 unless all are NaN)."""
    sums = np.where(np.isfinite(values), values, 0.0)
    seen = np.isfinite(values)
    for cp in sorted(experiment.callpaths, key=lambda c: -c.depth):
        if cp.parent is not None:
            sums[cp.parent] += sums[cp.index]
            seen[cp.parent] |= seen[cp.index]
    return np.where(seen, sums, np.nan)


@dataclass(frozen=True)
class PointStats:
    """The repetitions of one call path at one point: count, mean, spread, and the model's value there."""

    coordinates: dict[str, float]
    label: str
    repetitions: int
    mean: float
    minimum: float
    maximum: float
    std: float
    fitted: float

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


LOG_AXIS_RATIO = 32.0
"""A plot's parameter axis is logarithmic from this ratio of its largest to smallest value on: on a
linear axis from 8 to 32768 every measured point would crowd into the first column."""


@dataclass(frozen=True)
class PlotData:
    """Measurements and model along one parameter, the others fixed, for a plot.

    ``curve_x``/``curve_y`` sample the model from the smallest measured value to the target;
    ``log_x`` is set when the measured values are powers of two or the axis spans a factor of
    :data:`LOG_AXIS_RATIO` or more; ``log_y`` when the values span more than two decades, or more
    than one on a log ``x`` axis (a power law is then a straight line).
    """

    parameter: str
    fixed: dict[str, float]
    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    curve_x: np.ndarray
    curve_y: np.ndarray
    measured_until: float
    log_x: bool
    log_y: bool


@dataclass(frozen=True)
class CallpathDetail:
    """Everything ``pmkit show --callpath`` says about one call path."""

    row: CallpathScaling
    metric: str
    unit: str
    reference: dict[str, float]
    target: dict[str, float]
    points: list[PointStats]
    predictions: list[tuple[dict[str, float], float]]
    plot: PlotData | None
    stored: list[StoredModel] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"callpath": self.row.callpath,
                "points": [{"point": p.coordinates, "repetitions": p.repetitions, "mean": _finite(p.mean),
                            "min": _finite(p.minimum), "max": _finite(p.maximum), "std": _finite(p.std),
                            "fitted": _finite(p.fitted)} for p in self.points],
                "predictions": [{"point": point, "value": _finite(v)} for point, v in self.predictions],
                "stored_models": [{"set": s.name, "modeler": s.model.modeler, **s.model.to_json(),
                                   "prediction_at_target": _finite(s.at_target)} for s in self.stored]}


@dataclass
class StoredModel:
    """A model that came with the input (an ``.extra-p`` file's model set), for comparison."""

    name: str
    model: Model
    at_target: float


def stored_models(report: ScalingReport, callpath: str) -> list[StoredModel]:
    """The input's own models of ``callpath`` and the report's metric, with their value at the target."""
    out = []
    for name, models in report.experiment.stored_models.items():
        found = models.get(callpath, report.metric)
        if found is not None:
            at = _evaluate(found.function, report.target) if found.function is not None else math.nan
            out.append(StoredModel(name, found, at))
    return out


def _powers_of_two(values: np.ndarray) -> bool:
    values = values[values > 0]
    if len(values) < 2:
        return False
    logs = np.log2(values)
    return bool(np.allclose(logs, np.round(logs)))


def detail(report: ScalingReport, callpath: str) -> CallpathDetail:
    """Measured points (mean and spread), predictions up to the target, and plot data for ``callpath``."""
    row = report.row(callpath)
    experiment = report.experiment
    raw = experiment.measurements[report.metric][row.index]
    function = row.model.function if row.model is not None else None
    points = []
    for i in range(len(experiment.points)):
        reps = raw[i][np.isfinite(raw[i])]
        coords = {name: float(v) for name, v in zip(experiment.parameters, experiment.points[i], strict=True)}
        if len(reps):
            stats = (float(np.mean(reps)), float(np.min(reps)), float(np.max(reps)), float(np.std(reps)))
        else:
            stats = (math.nan,) * 4
        points.append(PointStats(coords, experiment.point_label(i), len(reps), *stats, _evaluate(function, coords)))
    points.sort(key=lambda s: tuple(s.coordinates.values()))
    predictions = []
    if function is not None:
        changing = [k for k in report.reference if report.target[k] > report.reference[k]]
        for factor in (2.0, 4.0, 8.0, 16.0):
            point = {k: v * factor if k in changing else v for k, v in report.reference.items()}
            if changing and all(point[k] < report.target[k] for k in changing):
                predictions.append((point, _evaluate(function, point)))
        predictions.append((dict(report.target), _evaluate(function, report.target)))
    return CallpathDetail(row, report.metric, report.unit, dict(report.reference), dict(report.target), points,
                          predictions, _plot_data(report, row, points), stored_models(report, row.callpath))


def _plot_data(report: ScalingReport, row: CallpathScaling, points: list[PointStats]) -> PlotData | None:
    experiment = report.experiment
    params = experiment.parameters
    spans = {name: len(np.unique(experiment.points[:, i])) for i, name in enumerate(params)}
    changing = [name for name in params if report.target[name] != report.reference[name]]
    candidates = changing or list(params)
    parameter = max(candidates, key=lambda name: (spans[name], -params.index(name)))
    fixed = {name: report.reference[name] for name in params if name != parameter}
    line = [p for p in points if all(p.coordinates[k] == v for k, v in fixed.items()) and math.isfinite(p.mean)]
    if len(line) < 1:
        return None
    x = np.array([p.coordinates[parameter] for p in line])
    mean = np.array([p.mean for p in line])
    low = np.array([p.minimum for p in line])
    high = np.array([p.maximum for p in line])
    lo_x = float(x.min())
    hi_x = max(float(x.max()), report.target[parameter])
    log_x = _powers_of_two(x) or (lo_x > 0 and hi_x / lo_x >= LOG_AXIS_RATIO)
    function = row.model.function if row.model is not None else None
    if log_x and lo_x > 0:
        curve_x = np.geomspace(lo_x, hi_x, 256)
    else:
        curve_x = np.linspace(lo_x, hi_x, 256)
    if function is not None:
        columns = {name: np.full(len(curve_x), fixed[name]) for name in fixed}
        columns[parameter] = curve_x
        with np.errstate(all="ignore"):
            curve_y = np.asarray(function.evaluate({n: columns[n] for n in function.parameters}), dtype=float)
        curve_y = np.broadcast_to(curve_y, curve_x.shape).copy()
    else:
        curve_y = np.full(len(curve_x), np.nan)
    values = np.concatenate([low, high, curve_y[np.isfinite(curve_y)]])
    positive = values[values > 0]
    ratio = positive.max() / positive.min() if len(positive) > 1 else 1.0
    log_y = bool(len(positive) == len(values) and (ratio > 100 or (log_x and ratio > 10)))
    return PlotData(parameter, fixed, x, mean, low, high, curve_x, curve_y, float(x.max()), log_x, log_y)
