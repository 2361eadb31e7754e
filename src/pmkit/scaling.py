"""Where a program stops scaling: per call path shares now and at a target scale, and rankings.

The scaling report behind ``pmkit show``: it evaluates each call path's model at the largest
measured point and at a target scale, classifies how the model grows (:mod:`pmkit.growth`) and
behaves towards the target (:mod:`pmkit.trend`), and ranks the call paths that grow fastest — or, for
a strong-scaling study (:mod:`pmkit.strong_scaling`), those that limit the speed-up.  It works on any
:class:`~pmkit.models.ModelSet`, whichever modeler made it.

**A negative prediction is never counted silently.**  A model of a non-negative metric that is below
zero at the target does not hold that far; its value there is unknown.  Such a call path is left out
of the predicted total and of the basis of every share at the target: its own share then is NaN (not
0), the total is the sum of the others — a lower bound, since the left-out time is not negative — and
the views name it, with where its model turns negative (:meth:`ScalingReport.negative_rows`).  A
negative measured value (a defect of the input) still counts 0 in the measured total.

:func:`pmkit.sdk.analyse` builds it once, with the models, findings and one call
path's detail (:mod:`pmkit.detail`), into a :class:`pmkit.analysis.Analysis`; :mod:`pmkit.ui` renders it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pmkit.constraints import Constraint
from pmkit.errors import UsageError
from pmkit.experiment import Experiment
from pmkit.growth import Growth, growth_of
from pmkit.models import Model, ModelSet
from pmkit.names import display_names, display_path
from pmkit.pmnf import Function
from pmkit.strong_scaling import StrongScaling, lost_shares, strong_parameters, strong_scaling
from pmkit.trend import Trend, trend_of, trend_parameter

DEFAULT_SCALE_UP = 4.0
"""Without a target, it is this many times the largest measured value of each parameter."""

SORT_KEYS = ("share", "growth", "name")

RANKING_SHARE = 0.1
"""The ranking lists growing call paths down to this fraction of the tree's ``min_share``: a call path
too small to show in the tree may still be the one that grows (the example study's MPI_Allreduce
takes 1 % at the target)."""


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


def default_target(experiment: Experiment, scale: float = DEFAULT_SCALE_UP,
                   strong: Sequence[str] = ()) -> dict[str, float]:
    """``scale`` × the largest measured value of each parameter; for a strong-scaling study (``strong``
    names the parameters it scales strongly, :func:`pmkit.strong_scaling.strong_parameters`) of those
    parameters only, the others at their largest measured value."""
    return {name: float(experiment.points[:, i].max()) * (scale if not strong or name in strong else 1.0)
            for i, name in enumerate(experiment.parameters)}


def resolve_target(experiment: Experiment, given: Mapping[str, float] | None,
                   strong: Sequence[str] = ()) -> dict[str, float]:
    """The target point: the default (see :func:`default_target`) when nothing is given; parameters not
    given keep their largest value."""
    if not given:
        return default_target(experiment, strong=strong)
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
    ``lost`` is, in a strong-scaling analysis, the share of the predicted total the call path loses to
    less than ideal scaling (:func:`pmkit.strong_scaling.lost_shares`), else NaN.  ``branch_negative``
    counts the call paths in its branch (itself included) whose model is negative at the target.
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
    lost: float = math.nan
    branch_negative: int = 0

    @property
    def has_model(self) -> bool:
        return self.model is not None and self.model.function is not None

    @property
    def negative(self) -> bool:
        """Whether the model predicts a value below zero at the target (left out of the predicted total)."""
        return bool(self.predicted < 0)

    def to_json(self) -> dict[str, object]:
        return {"callpath": self.callpath, "measured": self.measured, "share": self.share,
                "fitted": self.fitted, "predicted": self.predicted,
                "predicted_share": self.predicted_share, "growth": self.growth,
                "growth_class": None if self.growth_class is None else self.growth_class.to_json(),
                "prior_note": self.prior_note, "negative": self.negative, "lost": self.lost}


@dataclass
class ScalingReport:
    """The scaling analysis of one metric of an experiment: a row per call path, in call-tree order.

    ``strong_parameters`` are the parameters the study scales strongly (empty for a weak-scaling
    study); ``strong`` its strong-scaling view when the target adds processes to the same problem
    (speed-ups, the ideal factor), else None.  ``trend_parameter`` is the parameter the rows' laws are
    described along (:meth:`trend`), from ``trend_start`` on.
    """

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
    strong_parameters: tuple[str, ...] = ()
    strong: StrongScaling | None = None
    trend_parameter: str | None = None
    trend_start: float = math.nan

    def __post_init__(self) -> None:
        self._trends: dict[int, Trend | None] = {}

    def trend(self, index: int) -> Trend | None:
        """How row ``index``'s law behaves towards the target (:func:`pmkit.trend.trend_of`), described
        on first use; None without a model or a parameter to describe it along."""
        if index not in self._trends:
            row = self.rows[index]
            function = row.model.function if row.has_model else None  # type: ignore[union-attr]
            self._trends[index] = trend_of(function, self.trend_parameter, self.trend_start, self.target,
                                           self.reference, row.predicted if math.isfinite(row.predicted) else None)
        return self._trends[index]

    def default_target(self) -> dict[str, float]:
        """The target this analysis has when none is given (see :func:`default_target`)."""
        return default_target(self.experiment, strong=self.strong_parameters)

    def negative_rows(self) -> list[CallpathScaling]:
        """The call paths whose model is below zero at the target, in tree order."""
        return [r for r in self.rows if r.has_model and r.negative]

    @property
    def left_out(self) -> int:
        """How many call paths counted in the total were left out of the predicted total: their model is
        negative at the target (the predicted total is then a lower bound)."""
        counted = self.experiment.callpaths.roots() if self.inclusive else range(len(self.rows))
        return sum(1 for i in counted if self.rows[i].negative)

    def row(self, callpath: str) -> CallpathScaling:
        """The row of ``callpath``: a full path, or the end of one (``solve->MPI_Allreduce``, a region
        name) when only one call path ends so; region names may be short ones as the views show them
        (``CalcForceForNodes`` for ``void CalcForceForNodes(Domain&)``).  UsageError listing candidates
        otherwise."""
        if callpath in self.experiment.callpaths:
            return self.rows[self.experiment.callpaths.index(callpath)]
        ending = [r for r in self.rows if r.callpath.endswith("->" + callpath)]
        if not ending:
            tree = self.experiment.callpaths
            names = display_names(tree)
            shown = [display_path(tree, r.index, names) for r in self.rows]
            ending = [r for r, path in zip(self.rows, shown, strict=True)
                      if path == callpath or path.endswith("->" + callpath)]
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

    def limiting(self, min_share: float = 0.0, limit: int | None = None) -> list[CallpathScaling]:
        """In a strong-scaling analysis, the call paths that limit the speed-up: those losing at least
        ``min_share`` of the predicted total to less than ideal scaling (:attr:`CallpathScaling.lost`),
        the largest loss first; empty without a strong-scaling view.  For an inclusive metric a loss
        holds the callees' and a root with callees is left out: its loss is the whole run's, 1 − efficiency."""
        tree = self.experiment.callpaths
        whole = {i for i in tree.roots() if tree.children(i)} if self.inclusive else set()
        rows = [r for r in self.rows if r.has_model and math.isfinite(r.lost) and r.lost > 0 and r.lost >= min_share
                and r.index not in whole]
        rows.sort(key=lambda r: (-r.lost, r.callpath))
        return rows if limit is None else rows[:limit]

    def sort_key(self, sort: str, min_share: float = 0.0):
        """A key ordering siblings by ``share`` (of their branch at the target), ``growth`` or ``name``.

        ``growth`` orders by the fastest growth in each sibling's branch — the growth a collapsed
        row shows — among call paths taking at least ``min_share`` at the target (for an inclusive
        metric a call path's own model already holds its callees), then by the branch's share then.
        """
        if sort not in SORT_KEYS:
            raise UsageError(f"unknown sort {sort!r}; choose one of {', '.join(SORT_KEYS)}")
        if sort == "name":
            return lambda r: r.name
        share = lambda r: (-_or_zero(r.branch_predicted_share), -_or_zero(r.branch_share), r.name)  # noqa: E731
        if sort == "growth":
            fastest = (self.rows if self.inclusive else self.branch_growths(min_share))

            def by_growth(r: CallpathScaling):
                top = fastest[r.index]
                if top is None or top.growth_class is None or not top.has_model:
                    return (1, (0.0, 0.0, 0.0), 0.0, *share(r))
                return (0, tuple(-x for x in top.growth_class.order), -_or_zero(top.growth), *share(r))
            return by_growth
        return share

    def branch_growths(self, min_share: float = 0.0) -> list[CallpathScaling | None]:
        """Per call path, :meth:`branch_growth` of its branch, for all of them in one pass up the tree."""
        def key(r: CallpathScaling) -> tuple:
            return (r.growth_class.order, _or_zero(r.growth))  # type: ignore[union-attr]

        def better(a: CallpathScaling | None, b: CallpathScaling | None) -> CallpathScaling | None:
            if a is None or b is None:
                return a or b
            return b if key(b) > key(a) else a

        modeled = [r if r.has_model and r.growth_class is not None else None for r in self.rows]
        large = [r if r is not None and math.isfinite(r.predicted_share) and r.predicted_share >= min_share
                 else None for r in modeled]
        best: list[CallpathScaling | None] = list(modeled)
        below: list[CallpathScaling | None] = list(large)
        for cp in sorted(self.experiment.callpaths, key=lambda c: -c.depth):
            if cp.parent is not None:
                best[cp.parent] = better(best[cp.parent], below[cp.index])
                below[cp.parent] = better(below[cp.parent], below[cp.index])
        return best

    def prediction_document(self) -> dict[str, object]:
        """The analysis as JSON: metric, reference and target points, totals (rows are per model), the
        strong-scaling parameters and view, and the call paths left out of the predicted total."""
        return {"metric": self.metric, "unit": self.unit, "measure": self.measure,
                "reference_point": self.reference, "target": self.target,
                "total_measured": self.total_measured, "total_predicted": self.total_predicted,
                "strong_parameters": list(self.strong_parameters),
                "strong_scaling": None if self.strong is None else self.strong.to_json(),
                "negative": [{"callpath": r.callpath, "predicted": r.predicted,
                              "negative_from": _negative_from(self.trend(r.index))} for r in self.negative_rows()]}


def _or_zero(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def _negative_from(trend: Trend | None) -> float | None:
    return None if trend is None else trend.behaviour.negative_from


def evaluate(function: Function | None, point: Mapping[str, float]) -> float:
    """``function`` at one ``point`` (NaN without a function); overflow gives inf, not a warning."""
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
    over all call paths for an exclusive one; a call path whose model is negative at the target is left
    out of the predicted total (see the module's documentation).  Call paths without a model keep NaN
    predictions.  ``constraints`` (from a prior) mark the rows whose model the prior restricted.
    Without a ``target``, a strong-scaling study's is 4× its process counts, any other's 4× every
    parameter (:func:`default_target`).
    """
    metric = metric or default_metric(experiment)
    if metric not in experiment.measurements:
        raise UsageError(f"no metric {metric!r}; the experiment has {', '.join(experiment.metric_names)}")
    info = experiment.metric(metric)
    by_path = {m.callpath: m for m in models if m.metric == metric}
    ref = reference_index(experiment)
    reference = {name: float(v) for name, v in zip(experiment.parameters, experiment.points[ref], strict=True)}
    strong = strong_parameters(experiment, metric, measure)
    goal = resolve_target(experiment, target, strong)
    measured = experiment.values(metric, measure)[:, ref]
    measured_at = np.isfinite(experiment.measurements[metric]).any(axis=2).sum(axis=1)
    fitted = np.full(len(experiment.callpaths), np.nan)
    predicted = np.full(len(experiment.callpaths), np.nan)
    for cp in experiment.callpaths:
        model = by_path.get(cp.path)
        if model is not None and model.function is not None:
            fitted[cp.index] = evaluate(model.function, reference)
            predicted[cp.index] = evaluate(model.function, goal)
    counted = experiment.callpaths.roots() if info.inclusive else list(range(len(experiment.callpaths)))
    # shares are of non-negative parts: a negative measured value counts 0; a negative prediction is left
    # out of the predicted total (the same sum as counting it 0) and gets no share (NaN), and the views say so
    measured_part = np.clip(measured, 0.0, None)
    clipped = np.clip(predicted, 0.0, None)
    negative = predicted < 0
    total_measured = (float(np.nansum(measured_part[counted])) if np.isfinite(measured_part[counted]).any()
                      else math.nan)
    total_predicted = float(np.nansum(clipped[counted])) if np.isfinite(clipped[counted]).any() else math.nan
    branch_measured, branch_predicted = measured_part.copy(), clipped.copy()
    branch_negative = negative.astype(float)
    if not info.inclusive:
        branch_measured = _branch_sums(experiment, measured_part)
        branch_predicted = _branch_sums(experiment, clipped)
    branch_negative = _branch_sums(experiment, branch_negative)
    predicted_share = np.where(negative, np.nan, clipped)
    view = strong_scaling(experiment, metric, measure, ref, goal, strong) if strong else None
    lost = lost_shares(view, fitted, predicted, total_predicted)
    along = trend_parameter(experiment.parameters, reference, goal, strong)
    start = float(experiment.points[:, experiment.parameters.index(along)].min()) if along else math.nan
    rows = []
    for cp in experiment.callpaths:
        i = cp.index
        model = by_path.get(cp.path)
        growth = predicted[i] / fitted[i] if fitted[i] > 0 else math.nan
        rows.append(CallpathScaling(i, cp.path, cp.name, cp.depth, model, float(measured[i]),
                                    _part(measured_part[i], total_measured), float(fitted[i]), float(predicted[i]),
                                    _part(predicted_share[i], total_predicted), float(growth),
                                    growth_of(model.function) if model is not None else None,
                                    prior_note((constraints or {}).get(cp.path), experiment.parameters),
                                    _part(branch_measured[i], total_measured),
                                    _part(branch_predicted[i], total_predicted), float(branch_predicted[i]),
                                    int(measured_at[i]), float(lost[i]), int(branch_negative[i])))
    return ScalingReport(experiment, metric, info.unit, info.inclusive, measure, reference, ref, goal,
                         total_measured, total_predicted, rows, strong, view, along, start)


def prior_note(constraint: Constraint | None, parameters: Sequence[str]) -> str | None:
    """What a prior's ``constraint`` did to a call path's model (its :meth:`~Constraint.note`), or None.

    None without a constraint, and for one that allows every parameter to appear and multiply: it
    changes nothing.
    """
    if constraint is None:
        return None
    restricts = constraint.constant or any(not constraint.allows(p) for p in parameters) or any(
        not constraint.may_multiply(a, b) for a in parameters for b in parameters if a < b)
    return constraint.note() if restricts else None


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
