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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from pmkit.constraints import Constraint
from pmkit.errors import UsageError
from pmkit.experiment import Experiment, near_paths, paths_ending
from pmkit.growth import Growth
from pmkit.intervals import DEFAULT_LEVEL, Interval
from pmkit.models import Model, ModelSet
from pmkit.names import display_names, display_path
from pmkit.pmnf import Function
from pmkit.strong_scaling import StrongScaling, lost_shares, strong_parameters, strong_scaling
from pmkit.trend import Trend, closed_form_json, trend_of, trend_parameter

DEFAULT_SCALE_UP = 4.0
"""Without a target, it is this many times the largest measured value of each parameter."""

SORT_KEYS = ("share", "growth", "name")
RANK_KEYS = ("growth", "low")
"""How the ranking orders call paths: by the predicted growth, or by its interval's low end (the growth the
measurements are sure of)."""
INTERVAL_LEVEL = DEFAULT_LEVEL
"""The level of the prediction intervals the report gives at the target."""

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


ONE_RUN = "one run: nothing to extrapolate; give a folder of runs at several scales"
"""Why an experiment of a single measured point has no target (see :func:`no_target`)."""


def no_target(experiment: Experiment) -> str | None:
    """Why the experiment has no target to predict at, or None when it has one.

    A single measured point — one perf stat file, one trace, one profile, whose only parameter is often
    the ``run=1`` a reader made up for it — holds no growth: every model of it is a constant, and 4× a
    parameter that is not a scale (or was never measured at a second value) is no prediction.  The
    analysis then reports the measured values alone, and every view says this reason once."""
    return ONE_RUN if len(experiment.points) == 1 else None


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
    ``law`` is, for a segmented model, the segment's function that holds at the target (which
    ``predicted`` and ``growth_class`` come from); None otherwise (the law is ``model.function``).
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
    law: Function | None = None
    low: float = math.nan
    """The low end of the prediction's interval at the target (NaN: the modeler gives none)."""
    high: float = math.nan
    """The high end of the prediction's interval at the target."""

    @property
    def has_model(self) -> bool:
        return self.model is not None and self.model.function is not None

    @property
    def negative(self) -> bool:
        """Whether the model predicts a value below zero at the target (left out of the predicted total)."""
        return bool(self.predicted < 0)

    @property
    def growth_low(self) -> float:
        """The growth factor at the interval's low end: the growth the data are sure of."""
        return self.low / self.fitted if self.fitted > 0 else math.nan

    @property
    def growth_high(self) -> float:
        return self.high / self.fitted if self.fitted > 0 else math.nan

    @property
    def interval(self) -> Interval:
        return Interval(self.predicted, self.low, self.high, INTERVAL_LEVEL)

    def to_json(self) -> dict[str, object]:
        return {"callpath": self.callpath, "measured": self.measured, "share": self.share,
                "fitted": self.fitted, "predicted": self.predicted, "low": self.low, "high": self.high,
                "level": INTERVAL_LEVEL, "predicted_share": self.predicted_share, "growth": self.growth,
                "growth_class": None if self.growth_class is None else self.growth_class.to_json(),
                "prior_note": self.prior_note, "negative": self.negative, "lost": self.lost}


@dataclass(frozen=True)
class ScalingColumns:
    """The numbers of every :class:`CallpathScaling` row as arrays, one entry per call path in tree order.

    ``model`` is the position of the row's model in the report's ModelSet (-1: none);
    ``growth_code`` indexes ``growth_classes`` (-1: none); ``prior_notes`` holds the rows a prior
    restricted; ``parent`` (-1 for a root) and ``depth`` are the call tree's; ``negative`` marks the
    models below zero at the target (left out of the predicted total), ``lost`` and ``branch_negative``
    are :class:`CallpathScaling`'s.  The views filter, sort and fold the tree on these and build row
    objects only for what they show.
    """

    model: np.ndarray
    has_function: np.ndarray
    measured: np.ndarray
    share: np.ndarray
    fitted: np.ndarray
    predicted: np.ndarray
    predicted_share: np.ndarray
    growth: np.ndarray
    growth_code: np.ndarray
    growth_classes: list[Growth]
    prior_notes: dict[int, str]
    branch_share: np.ndarray
    branch_predicted_share: np.ndarray
    branch_predicted: np.ndarray
    measured_points: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    negative: np.ndarray
    lost: np.ndarray
    branch_negative: np.ndarray
    intervals: TargetIntervals | None = None
    """Each prediction's interval at the target, computed for the rows a view asks for (None: none at all)."""

    @property
    def low(self) -> np.ndarray:
        """The low end of each prediction's interval at the target (NaN: none); every row's, computed now."""
        return self._bounds()[0]

    @property
    def high(self) -> np.ndarray:
        """The high end of each prediction's interval at the target (NaN: none)."""
        return self._bounds()[1]

    def _bounds(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        if self.intervals is None:
            nothing = np.full(len(self.model), np.nan)
            return nothing, nothing.copy()
        return self.intervals.fill(rows)

    def interval(self, index: int) -> tuple[float, float]:
        """Row ``index``'s interval at the target (low, high), computed for that row alone if not yet."""
        low, high = self._bounds(np.array([index]))
        return float(low[index]), float(high[index])

    def growth_class(self, index: int) -> Growth | None:
        code = int(self.growth_code[index])
        return None if code < 0 else self.growth_classes[code]


class _Rows(Sequence[CallpathScaling]):
    """A report's rows, each built (once) when it is first asked for."""

    def __init__(self, report: ScalingReport) -> None:
        self._report = report
        self._built: list[CallpathScaling | None] = [None] * len(report.columns.model)

    def __len__(self) -> int:
        return len(self._built)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        row = self._built[i]
        if row is None:
            row = self._built[i] = self._report.build_row(i)
        return row


class _RowsAt(Sequence[CallpathScaling | None]):
    """``rows[indices[i]]`` (None where the index is -1), each built when asked for."""

    def __init__(self, rows: Sequence[CallpathScaling], indices: np.ndarray) -> None:
        self._rows, self._indices = rows, indices

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        index = int(self._indices[i])
        return None if index < 0 else self._rows[index]


@dataclass
class ScalingReport:
    """The scaling analysis of one metric of an experiment: a row per call path, in call-tree order.

    The numbers live in :attr:`columns`; :attr:`rows` builds a :class:`CallpathScaling` (with its
    Model) only for the rows asked for, so a view of 100,000 call paths builds the few it shows.

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
    models: ModelSet
    columns: ScalingColumns
    strong_parameters: tuple[str, ...] = ()
    strong: StrongScaling | None = None
    trend_parameter: str | None = None
    trend_start: float = math.nan
    no_target: str | None = None
    """Why there is no target (:func:`no_target`): the report's ``target`` is then the reference point, and
    the views show no prediction, growth or share then; None when there is a target."""

    def __post_init__(self) -> None:
        self.rows: Sequence[CallpathScaling] = _Rows(self)
        self._trends: dict[int, Trend | None] = {}

    def build_row(self, i: int) -> CallpathScaling:
        """Row ``i`` as an object (see :attr:`rows`, which keeps it)."""
        c = self.columns
        node = self.experiment.callpaths[i]
        position = int(c.model[i])
        model = self.models[position] if position >= 0 else None
        law = model.function_at(self.target) if model is not None and model.segmented else None
        return CallpathScaling(i, node.path, node.name, node.depth, model, float(c.measured[i]), float(c.share[i]),
                               float(c.fitted[i]), float(c.predicted[i]), float(c.predicted_share[i]),
                               float(c.growth[i]), c.growth_class(i), c.prior_notes.get(i),
                               float(c.branch_share[i]), float(c.branch_predicted_share[i]),
                               float(c.branch_predicted[i]), int(c.measured_points[i]), float(c.lost[i]),
                               int(c.branch_negative[i]), law, *c.interval(i))

    def trend(self, index: int) -> Trend | None:
        """How row ``index``'s law behaves towards the target (:func:`pmkit.trend.trend_of`), described
        on first use (from the model columns' function, without building the row); None without a model
        or a parameter to describe it along."""
        if index not in self._trends:
            c = self.columns
            position = int(c.model[index])
            function = self.models.columns.function(position) if c.has_function[index] else None
            if function is not None and position in self.models.columns.segments:  # the segment at the target
                function = self.models.columns.model(position).function_at(self.target)
            predicted = float(c.predicted[index])
            self._trends[index] = trend_of(function, self.trend_parameter, self.trend_start, self.target,
                                           self.reference, predicted if math.isfinite(predicted) else None)
        return self._trends[index]

    def trends_json(self, indices: Sequence[int], value_text: Callable[[float], str]) -> list[dict[str, object] | None]:
        """``trend(i).to_json(value_text)`` (None without a trend) for each of ``indices``: the laws with a closed
        form described at once from the model columns (:func:`pmkit.trend.closed_form_json`), the rest row by row."""
        c = self.columns
        index = np.asarray(indices, dtype=np.int64)
        positions = c.model[index]
        described = np.flatnonzero((positions >= 0) & c.has_function[index])
        done = closed_form_json(self.models.columns, positions[described], c.predicted[index[described]],
                                self.trend_parameter, self.trend_start, self.target, value_text)
        out: list[dict[str, object] | None] = [None] * len(index)
        for k, document in done.items():
            out[int(described[k])] = document
        for k in np.setdiff1d(np.arange(len(index)), described[list(done)]).tolist():
            trend = self.trend(int(index[k]))
            out[k] = None if trend is None else trend.to_json(value_text)
        return out

    def default_target(self) -> dict[str, float]:
        """The target this analysis has when none is given (see :func:`default_target`)."""
        return default_target(self.experiment, strong=self.strong_parameters)

    def negative_rows(self, limit: int | None = None) -> list[CallpathScaling]:
        """The call paths whose model is below zero at the target, in tree order — the first ``limit`` of them
        (:meth:`negative_count` says how many there are); rows are built for those only."""
        c = self.columns
        return [self.rows[i] for i in np.flatnonzero(c.has_function & c.negative)[:limit].tolist()]

    def negative_count(self) -> int:
        """How many call paths have a model below zero at the target (see :meth:`negative_rows`)."""
        c = self.columns
        return int((c.has_function & c.negative).sum())

    @property
    def left_out(self) -> int:
        """How many call paths counted in the total were left out of the predicted total: their model is
        negative at the target (the predicted total is then a lower bound)."""
        negative = self.columns.negative
        return int(negative[self.experiment.callpaths.roots()].sum() if self.inclusive else negative.sum())

    def row(self, callpath: str) -> CallpathScaling:
        """The row of ``callpath``: a full path, or the end of one (``solve->MPI_Allreduce``, a region
        name) when only one call path ends so; region names may be short ones as the views show them
        (``CalcForceForNodes`` for ``void CalcForceForNodes(Domain&)``).  UsageError listing candidates
        otherwise."""
        tree = self.experiment.callpaths
        if callpath in tree:
            return self.rows[tree.index(callpath)]
        paths = tree.paths()
        ending = paths_ending(paths, callpath)
        if not ending:
            names = display_names(tree)
            shown = (display_path(tree, i, names) for i in range(len(paths)))
            ending = [i for i, path in enumerate(shown) if path == callpath or path.endswith("->" + callpath)]
        if len(ending) == 1:
            return self.rows[ending[0]]
        if ending:
            listed = ", ".join(paths[i] for i in ending[:5])
            raise UsageError(f"call path {callpath!r} is ambiguous: {listed}" + (", ..." if len(ending) > 5 else ""))
        near = near_paths(paths, callpath)[:5]
        hint = f"; did you mean {', '.join(near)}?" if near else ""
        raise UsageError(f"no call path {callpath!r} in the experiment{hint}")

    def children(self, index: int) -> list[CallpathScaling]:
        return [self.rows[i] for i in self.experiment.callpaths.children(index)]

    def roots(self) -> list[CallpathScaling]:
        return [self.rows[i] for i in self.experiment.callpaths.roots()]

    @cached_property
    def _preorder(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The call paths in the order :meth:`branch` visits them (each node, then its children's
        branches, last child first), each node's place in that order, and its branch's size."""
        tree = self.experiment.callpaths
        order: list[int] = []
        for root in reversed(tree.roots()):
            stack = [root]
            while stack:
                i = stack.pop()
                order.append(i)
                stack.extend(tree.children(i))
        order_arr = np.array(order, dtype=np.int64)
        place = np.empty(len(order_arr), dtype=np.int64)
        place[order_arr] = np.arange(len(order_arr))
        return order_arr, place, self.descendants() + 1

    def branch(self, index: int) -> list[CallpathScaling]:
        """The row at ``index`` and every row below it."""
        return [self.rows[i] for i in self._branch_indices(index).tolist()]

    def _branch_indices(self, index: int) -> np.ndarray:
        order, place, size = self._preorder
        return order[place[index]:place[index] + size[index]]

    def descendants(self) -> np.ndarray:
        """Per call path, the number of call paths below it."""
        c = self.columns
        count = np.zeros(len(c.parent), dtype=np.int64)
        for level in range(int(c.depth.max()) if len(c.depth) else 0, 0, -1):
            at = np.flatnonzero(c.depth == level)
            np.add.at(count, c.parent[at], count[at] + 1)
        return count

    def shown(self, depth: int | None = None, min_share: float = 0.0) -> np.ndarray:
        """Which call paths a tree view keeps: within ``depth`` levels, and taking at least ``min_share``
        now or at the target, on its own or with its branch — or with a kept call path below it.  Where no
        call path has a share (a metric that is zero or negative everywhere, so both totals are 0), every
        call path within ``depth`` is kept: folding them all into "… N more" would hide the whole tree."""
        c = self.columns
        keep = np.zeros(len(c.depth), dtype=bool)
        every = (c.share, c.predicted_share, c.branch_share, c.branch_predicted_share)
        for shares in every:
            keep |= _zeroed(shares, -math.inf) >= min_share
        if not any(np.isfinite(shares).any() for shares in every):
            keep[:] = True
        if depth is not None:
            keep &= c.depth < depth
        for level in range(int(c.depth.max()) if len(c.depth) else 0, 0, -1):
            at = np.flatnonzero((c.depth == level) & keep)
            keep[c.parent[at]] = True
        return keep

    def branch_growth(self, index: int, min_share: float = 0.0) -> CallpathScaling | None:
        """The fastest-growing row in the branch at ``index`` taking at least ``min_share`` at the target.

        Lets a collapsed call path show that something below it grows; None when nothing has a model.
        """
        c = self.columns
        rows = self._branch_indices(index)
        with np.errstate(invalid="ignore"):
            ok = (c.has_function[rows] & (c.growth_code[rows] >= 0)
                  & ((rows == index) | (c.predicted_share[rows] >= min_share)))
        rows = rows[ok]
        if rows.size == 0:
            return None
        order = np.array([g.order for g in c.growth_classes] or [(0.0, 0.0, 0.0)])[c.growth_code[rows]]
        growth = _zeroed(c.growth[rows])
        # the largest (class order, growth, is the row itself); of equals, the first in branch order
        best = np.lexsort((-np.arange(rows.size), rows == index, growth, order[:, 2], order[:, 1], order[:, 0]))[-1]
        return self.rows[int(rows[best])]

    def ranking(self, min_share: float = 0.0, limit: int | None = None, by: str = "growth") -> list[CallpathScaling]:
        """Call paths whose model grows towards the target, fastest first.

        Only call paths taking at least ``min_share`` (a fraction) of the predicted total are
        ranked, so that a negligible call path growing fast does not hide the ones that matter.
        ``by="low"`` orders them by the low end of their prediction's interval (the growth the
        measurements are sure of; rows without an interval count their prediction).
        """
        if by not in RANK_KEYS:
            raise UsageError(f"unknown ranking order {by!r}; choose one of {', '.join(RANK_KEYS)}")
        c = self.columns
        levels = np.array([g.level for g in c.growth_classes] + [0])[c.growth_code]
        with np.errstate(invalid="ignore"):
            ok = (c.has_function & np.isfinite(c.growth) & (c.growth > 1.0 + 1e-9) & (levels > 0)
                  & (~np.isfinite(c.predicted_share) | (c.predicted_share >= min_share)))
        key = c.growth
        if by == "low":
            with np.errstate(all="ignore"):
                low = np.where(c.fitted > 0, c.low / np.where(c.fitted > 0, c.fitted, 1.0), np.nan)
            key = np.where(np.isfinite(low), low, c.growth)
        order = _top(np.flatnonzero(ok), -key, -c.growth, -_zeroed(c.predicted_share), limit=limit)
        rows = [self.rows[i] for i in order.tolist()]

        def sort_key(r: CallpathScaling) -> tuple:
            first = r.growth_low if by == "low" and math.isfinite(r.growth_low) else r.growth
            return (-first, -r.growth, -_or_zero(r.predicted_share), r.callpath)

        rows.sort(key=sort_key)
        return rows if limit is None else rows[:limit]

    def limiting(self, min_share: float = 0.0, limit: int | None = None) -> list[CallpathScaling]:
        """In a strong-scaling analysis, the call paths that limit the speed-up: those losing at least
        ``min_share`` of the predicted total to less than ideal scaling (:attr:`CallpathScaling.lost`),
        the largest loss first (of equals, by call path); empty without a strong-scaling view.  For an
        inclusive metric a loss holds the callees' and a root with callees is left out: its loss is the
        whole run's, 1 − efficiency.  Chosen on the arrays; rows are built for the ranked ones only."""
        c = self.columns
        with np.errstate(invalid="ignore"):
            ok = c.has_function & np.isfinite(c.lost) & (c.lost > 0) & (c.lost >= min_share)
        if self.inclusive:
            tree = self.experiment.callpaths
            ok[[i for i in tree.roots() if tree.children(i)]] = False
        order = _top(np.flatnonzero(ok), -c.lost, limit=limit)
        rows = [self.rows[i] for i in order.tolist()]
        rows.sort(key=lambda r: (-r.lost, r.callpath))
        return rows if limit is None else rows[:limit]

    def modelers(self) -> list[str]:
        """The modelers of the rows' models, sorted."""
        position = self.columns.model
        return self.models.columns.modelers(position[position >= 0])

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

    def branch_growths(self, min_share: float = 0.0) -> Sequence[CallpathScaling | None]:
        """Per call path, the fastest-growing row of its branch: its own model, or one below taking at
        least ``min_share`` at the target (of equals, the first in the tree's order); rows built on access.

        Computed on the arrays in one pass up the tree: each row's key (growth class order, growth)
        becomes a rank, ties broken by the place in the tree, and each level hands its best up.
        """
        c = self.columns
        n = len(c.parent)
        modeled = c.has_function & (c.growth_code >= 0)
        large = modeled & (_zeroed(c.predicted_share, -math.inf) >= min_share)
        order = np.array([g.order for g in c.growth_classes] or [(0.0, 0.0, 0.0)])[np.maximum(c.growth_code, 0)]
        keys = np.column_stack([order, _zeroed(c.growth)])
        by_key = np.lexsort(keys.T[::-1])
        distinct = np.r_[True, (keys[by_key][1:] != keys[by_key][:-1]).any(axis=1)]
        rank = np.empty(n, dtype=np.int64)
        rank[by_key] = np.cumsum(distinct)
        nodes, place = self._tree_order
        score = rank * n + (n - 1 - place)  # the higher rank, then the earlier place
        best, below = np.where(modeled, score, -1), np.where(large, score, -1)
        for level in range(int(c.depth.max()) if n else 0, 0, -1):
            at = np.flatnonzero(c.depth == level)
            np.maximum.at(best, c.parent[at], below[at])
            np.maximum.at(below, c.parent[at], below[at])
        winner = np.where(best >= 0, nodes[n - 1 - best % n], -1)
        return _RowsAt(self.rows, winner)

    @cached_property
    def _tree_order(self) -> tuple[np.ndarray, np.ndarray]:
        """The call paths in tree order (each before its children, children in order) and each one's place."""
        tree = self.experiment.callpaths
        nodes: list[int] = []
        stack = list(reversed(tree.roots()))
        while stack:
            i = stack.pop()
            nodes.append(i)
            stack.extend(reversed(tree.children(i)))
        order = np.array(nodes, dtype=np.int64)
        place = np.empty(len(order), dtype=np.int64)
        place[order] = np.arange(len(order))
        return order, place

    def rows_json(self, indices: Sequence[int]) -> list[dict[str, object]]:
        """``rows[i].to_json()`` for each of ``indices``, from the arrays (no row object); NaN stays NaN."""
        c = self.columns
        classes = [g.to_json() for g in c.growth_classes]
        paths = self.experiment.callpaths.paths()
        values = [c.measured, c.share, c.fitted, c.predicted, c.low, c.high, c.predicted_share, c.growth, c.negative,
                  c.lost]
        index = np.asarray(indices, dtype=np.int64)
        measured, share, fitted, predicted, low, high, predicted_share, growth, negative, lost = (
            v[index].tolist() for v in values)
        codes = c.growth_code[index].tolist()
        return [{"callpath": paths[i], "measured": measured[k], "share": share[k], "fitted": fitted[k],
                 "predicted": predicted[k], "low": low[k], "high": high[k], "level": INTERVAL_LEVEL,
                 "predicted_share": predicted_share[k], "growth": growth[k],
                 "growth_class": None if codes[k] < 0 else classes[codes[k]], "prior_note": c.prior_notes.get(i),
                 "negative": negative[k], "lost": lost[k]}
                for k, i in enumerate(index.tolist())]

    def prediction_document(self) -> dict[str, object]:
        """The analysis as JSON: metric, reference and target points, totals (rows are per model), the
        strong-scaling parameters and view, and the call paths left out of the predicted total."""
        return {"metric": self.metric, "unit": self.unit, "measure": self.measure,
                "reference_point": self.reference, "target": None if self.no_target else self.target,
                "no_target": self.no_target, "total_measured": self.total_measured,
                "total_predicted": self.total_predicted,
                "strong_parameters": list(self.strong_parameters),
                "strong_scaling": None if self.strong is None else self.strong.to_json(),
                "negative": [{"callpath": r.callpath, "predicted": r.predicted,
                              "negative_from": _negative_from(self.trend(r.index))} for r in self.negative_rows()]}


def _or_zero(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def _negative_from(trend: Trend | None) -> float | None:
    return None if trend is None else trend.behaviour.negative_from


def _zeroed(values: np.ndarray, instead: float = 0.0) -> np.ndarray:
    """``values`` with every non-finite entry replaced by ``instead`` (:func:`_or_zero` for arrays)."""
    return np.where(np.isfinite(values), values, instead)


def _top(candidates: np.ndarray, *keys: np.ndarray, limit: int | None = None) -> np.ndarray:
    """``candidates`` ordered by ``keys`` (the first the primary, smallest first): with a ``limit``, the
    first ``limit`` and every one that ties with the last on all keys (a final order by name, which the
    arrays do not hold, may then pick among them)."""
    order = candidates[np.lexsort(tuple(key[candidates] for key in reversed(keys)))]
    if limit is not None and len(order) > limit:
        last = order[limit - 1]
        tied = np.logical_and.reduce([key[order] == key[last] for key in keys])
        order = order[:int(np.flatnonzero(tied).max()) + 1]
    return order


def evaluate(function: Function | None, point: Mapping[str, float]) -> float:
    """``function`` at one ``point`` (NaN without a function); overflow gives inf, not a warning."""
    if function is None:
        return math.nan
    with np.errstate(all="ignore"):
        value = function.evaluate({name: point[name] for name in function.parameters})
    return float(value)


def model_positions(models: ModelSet, metric: str, paths: Sequence[str]) -> np.ndarray:
    """Per call path (``paths``, in tree order) the position of its model of ``metric`` in ``models``
    (the last one when a call path has several), -1 where it has none."""
    columns = models.columns
    rows = columns.rows_of_metric(metric)
    if len(rows) == len(paths) and [columns.callpaths[r] for r in rows.tolist()] == list(paths):
        return rows
    position = {columns.callpaths[r]: r for r in rows.tolist()}
    return np.fromiter((position.get(path, -1) for path in paths), dtype=np.int64, count=len(paths))


def analyse(experiment: Experiment, models: ModelSet | Sequence[Model], metric: str | None = None,
            target: Mapping[str, float] | None = None, measure: str = "mean",
            constraints: Mapping[str, Constraint] | None = None) -> ScalingReport:
    """Evaluate every call path's model of ``metric`` at the largest measured point and at ``target``.

    Shares are of the total of the metric: the sum over root call paths for an inclusive metric,
    over all call paths for an exclusive one; a call path whose model is negative at the target is left
    out of the predicted total (see the module's documentation).  Call paths without a model keep NaN
    predictions.  ``constraints`` (from a prior) mark the rows whose model the prior restricted.
    Without a ``target``, a strong-scaling study's is 4× its process counts, any other's 4× every
    parameter (:func:`default_target`); an experiment of one measured point has none (:func:`no_target`:
    the report is at the reference point alone, and a ``target`` other than that point is a UsageError).  Every model is
    evaluated at once from the model columns (:meth:`pmkit.modelcolumns.ModelColumns.evaluate`, the values
    :func:`evaluate` gives one function), and every per-row quantity is an array: nothing here loops over
    the call paths in Python.
    """
    metric = metric or default_metric(experiment)
    if metric not in experiment.measurements:
        raise UsageError(f"no metric {metric!r}; the experiment has {', '.join(experiment.metric_names)}")
    if not isinstance(models, ModelSet):
        models = ModelSet(experiment.parameters, list(models))
    info = experiment.metric(metric)
    tree = experiment.callpaths
    parent, depth = tree.parents(), tree.depths()
    ref = reference_index(experiment)
    reference = {name: float(v) for name, v in zip(experiment.parameters, experiment.points[ref], strict=True)}
    without = no_target(experiment)
    if without is not None and target:
        if resolve_target(experiment, target) != reference:
            given = ", ".join(f"{name}={value:g}" for name, value in target.items())
            raise UsageError(f"cannot predict at {given}: {without}")
        without = None  # the one measured point itself (two runs compared there): nothing is extrapolated
    strong = strong_parameters(experiment, metric, measure) if without is None else ()
    goal = dict(reference) if without is not None else resolve_target(experiment, target, strong)
    measured = experiment.values(metric, measure)[:, ref]
    measured_at = np.isfinite(experiment.measurements[metric]).any(axis=2).sum(axis=1)
    columns = models.columns
    position = model_positions(models, metric, tree.paths())
    has = position >= 0
    with_function = has & columns.has_function[np.where(has, position, 0)]
    fitted = np.full(len(tree), np.nan)
    predicted = np.full(len(tree), np.nan)
    if with_function.any():
        fitted[with_function] = columns.evaluate(reference)[position[with_function]]
        if without is None:  # one run: nothing predicted, so no prediction, growth or share then (NaN)
            predicted[with_function] = columns.evaluate(goal)[position[with_function]]
    intervals = TargetIntervals(models, position, with_function & (without is None), goal)
    codes, classes = columns.growth(goal)  # a segmented model grows as its segment at the target
    growth_code = np.where(has, codes[np.where(has, position, 0)], -1)
    counted = tree.roots() if info.inclusive else list(range(len(tree)))
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
        branch_measured = _branch_sums(parent, depth, measured_part)
        branch_predicted = _branch_sums(parent, depth, clipped)
    branch_negative = _branch_sums(parent, depth, branch_negative).astype(np.int64)
    predicted_share = np.where(negative, np.nan, clipped)
    view = strong_scaling(experiment, metric, measure, ref, goal, strong) if strong else None
    lost = lost_shares(view, fitted, predicted, total_predicted)
    along = trend_parameter(experiment.parameters, reference, goal, strong)
    start = float(experiment.points[:, experiment.parameters.index(along)].min()) if along else math.nan
    with np.errstate(all="ignore"):
        growth = np.where(fitted > 0, predicted / np.where(fitted > 0, fitted, 1.0), np.nan)
    notes = {}
    for path, constraint in (constraints or {}).items():
        note = prior_note(constraint, experiment.parameters)
        if note is not None and path in tree:
            notes[tree.index(path)] = note
    rows = ScalingColumns(position, with_function, measured, _part(measured_part, total_measured), fitted, predicted,
                          _part(predicted_share, total_predicted), growth, growth_code, classes, notes,
                          _part(branch_measured, total_measured), _part(branch_predicted, total_predicted),
                          branch_predicted, measured_at.astype(np.int64), parent, depth, negative, lost,
                          branch_negative, intervals)
    return ScalingReport(experiment, metric, info.unit, info.inclusive, measure, reference, ref, goal,
                         total_measured, total_predicted, models, rows, strong, view, along, start, without)


class TargetIntervals:
    """Per call path, the interval of its model's prediction at ``target`` (NaN where there is none),
    computed for the rows asked for and kept (:meth:`ModelSet.predict` on those rows: the models'
    alternatives are built for them alone, so a terminal view of 20 rows out of 100,000 pays for 20)."""

    def __init__(self, models: ModelSet, position: np.ndarray, with_function: np.ndarray,
                 target: Mapping[str, float]) -> None:
        self.models, self.position, self.with_function, self.target = models, position, with_function, target
        self.low, self.high = np.full(len(position), np.nan), np.full(len(position), np.nan)
        self.done = ~with_function

    def fill(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The bounds of every row, those of ``rows`` (or all) computed if not yet.  Every row's (``pmkit show
        --json``, ``--rank-by low``) are predicted once, their alternatives built a chunk of series at a time and
        dropped (``keep=False``, :data:`pmkit.intervals.STREAM_ROWS`): ``pmkit show --json`` on 100,000
        two-parameter series held every series' table, 2.97 GB at its peak, and holds a chunk's this way, the
        bounds the same to the last bit (``bench/README.md`` §15, "Every interval without the whole table")."""
        index = np.flatnonzero(~self.done) if rows is None else rows[~self.done[rows]]
        if index.size:
            with np.errstate(all="ignore"):
                _, self.low[index], self.high[index] = self.models.predict(dict(self.target), INTERVAL_LEVEL,
                                                                           self.position[index], keep=rows is not None)
            self.done[index] = True
        return self.low, self.high


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


def _part(values: np.ndarray, total: float) -> np.ndarray:
    """``values / total`` where both are finite and the total positive, else NaN."""
    if not (math.isfinite(total) and total > 0):
        return np.full(len(values), np.nan)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(values), values / total, np.nan)


def _branch_sums(parent: np.ndarray, depth: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each call path's value plus all its descendants' (NaN counted as 0 unless all are NaN)."""
    sums = np.where(np.isfinite(values), values, 0.0)
    seen = np.isfinite(values)
    for level in range(int(depth.max()) if len(depth) else 0, 0, -1):
        at = np.flatnonzero(depth == level)
        np.add.at(sums, parent[at], sums[at])
        np.logical_or.at(seen, parent[at], seen[at])
    return np.where(seen, sums, np.nan)
