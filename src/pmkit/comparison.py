"""Two studies side by side: before and after an optimisation, two machines, or two metrics of one study.

``pmkit.compare(a, b)`` analyses both the same way (:func:`pmkit.analyse`: same modeler, measure and
target) and pairs their call paths: per call path the model, growth class and prediction at the
target of each side, whether the growth class changed, and the change at the target.  A
:class:`Comparison` is what ``pmkit compare`` renders in the terminal, as Markdown and as JSON.

What "change" means depends on whether the two sides can be subtracted: with the same unit (the
same metric on two runs, say) it is the difference of the predictions at the target, B − A, in that
unit; with different units (time against a counter) it is the difference of the shares of the
predicted total.  Wins are the largest decreases, losses the largest increases.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pmkit.analysis import InputAnalysis, Inputs, LoadedPrior, common_parameters
from pmkit.detail import CallpathDetail, detail
from pmkit.errors import UsageError
from pmkit.experiment import Experiment
from pmkit.scaling import DEFAULT_SCALE_UP, CallpathScaling, no_target

if TYPE_CHECKING:
    from pmkit.plugins import Registry

Input = str | os.PathLike | Experiment | tuple[str, Experiment]
"""One side: a path, an experiment, or an experiment with the name to show for it."""


@dataclass(frozen=True)
class CallpathComparison:
    """One call path on both sides; ``a`` or ``b`` is None where that side has no such call path."""

    callpath: str
    a: CallpathScaling | None
    b: CallpathScaling | None

    @property
    def difference(self) -> float:
        """B's prediction at the target minus A's (NaN where a side has none)."""
        if self.a is None or self.b is None:
            return math.nan
        return self.b.predicted - self.a.predicted

    @property
    def ratio(self) -> float:
        """B's prediction at the target over A's (NaN where it is not defined)."""
        if self.a is None or self.b is None or not self.a.predicted > 0:
            return math.nan
        return self.b.predicted / self.a.predicted

    @property
    def share_change(self) -> float:
        """B's share of its predicted total minus A's."""
        if self.a is None or self.b is None:
            return math.nan
        return self.b.predicted_share - self.a.predicted_share

    @property
    def class_change(self) -> int | None:
        """+1 when B's growth class is faster than A's, -1 when slower, 0 when the same; None without two models."""
        classes = [s.growth_class if s is not None and s.has_model else None for s in (self.a, self.b)]
        if classes[0] is None or classes[1] is None:
            return None
        if classes[0].label == classes[1].label:
            return 0
        return 1 if classes[1].order > classes[0].order else -1

    def to_json(self) -> dict[str, Any]:
        change = {None: None, 0: "same", 1: "faster", -1: "slower"}[self.class_change]
        return {"callpath": self.callpath, "a": _side_json(self.a), "b": _side_json(self.b),
                "growth_change": change, "difference": self.difference, "ratio": self.ratio,
                "share_change": self.share_change}


def _side_json(row: CallpathScaling | None) -> dict[str, Any] | None:
    if row is None:
        return None
    model = row.model
    return {"model": None if model is None or model.function is None else model.to_json(), **row.to_json()}


@dataclass
class Comparison:
    """Two analyses at one target, call path by call path (A's order, then call paths only B has)."""

    a: InputAnalysis
    b: InputAnalysis
    target: dict[str, float]
    rows: list[CallpathComparison]
    details: tuple[CallpathDetail | None, CallpathDetail | None] = (None, None)
    default_target: bool = field(default=False)

    @property
    def comparable(self) -> bool:
        """Whether the predictions can be subtracted: both sides have the same unit."""
        return self.a.report.unit == self.b.report.unit

    @property
    def one_point(self) -> bool:
        """Whether both sides are one run compared at their one measured point: nothing is extrapolated."""
        return all(len(side.experiment.points) == 1 and side.report.reference == self.target
                   for side in (self.a, self.b))

    def change(self, row: CallpathComparison) -> float:
        """The change at the target: the difference of predictions if :attr:`comparable`, else of shares."""
        return row.difference if self.comparable else row.share_change

    @property
    def total_change(self) -> float:
        """B's predicted total over A's, minus one (NaN when the units differ)."""
        a, b = self.a.report.total_predicted, self.b.report.total_predicted
        return b / a - 1 if self.comparable and a > 0 else math.nan

    def significant(self, min_share: float = 0.0) -> tuple[list[CallpathComparison], int]:
        """Call paths taking at least ``min_share`` of the predicted total on either side that changed — by
        at least :meth:`threshold`, in growth class, or by being on one side only — the largest changes
        first; and how many call paths of that size did not change."""
        def large(row: CallpathScaling | None) -> bool:
            return row is not None and math.isfinite(row.predicted_share) and row.predicted_share >= min_share

        least = self.threshold(min_share)
        rows = [r for r in self.rows if large(r.a) or large(r.b) or r.class_change]
        changed = [r for r in rows
                   if r.class_change or r.a is None or r.b is None or _magnitude(self.change(r)) >= least]
        changed.sort(key=lambda r: (-_magnitude(self.change(r)), r.callpath))
        return changed, len(rows) - len(changed)

    def changed_class(self) -> list[CallpathComparison]:
        """Call paths whose growth class differs, those that now grow faster first, then by the change."""
        rows = [r for r in self.rows if r.class_change]
        return sorted(rows, key=lambda r: (-(r.class_change or 0), -_magnitude(self.change(r)), r.callpath))

    def threshold(self, min_share: float) -> float:
        """The smallest change that counts: ``min_share`` of A's predicted total (a share when not comparable)."""
        total = self.a.report.total_predicted
        return min_share * total if self.comparable and math.isfinite(total) else min_share

    def wins(self, limit: int | None = 5, min_share: float = 0.0) -> list[CallpathComparison]:
        """The largest decreases at the target, largest first; none smaller than :meth:`threshold`."""
        least = self.threshold(min_share)
        rows = sorted((r for r in self.rows if self.change(r) < 0 and -self.change(r) >= least),
                      key=lambda r: (self.change(r), r.callpath))
        return rows if limit is None else rows[:limit]

    def losses(self, limit: int | None = 5, min_share: float = 0.0) -> list[CallpathComparison]:
        """The largest increases at the target, largest first; none smaller than :meth:`threshold`."""
        least = self.threshold(min_share)
        rows = sorted((r for r in self.rows if self.change(r) > 0 and self.change(r) >= least),
                      key=lambda r: (-self.change(r), r.callpath))
        return rows if limit is None else rows[:limit]


def _magnitude(value: float) -> float:
    return abs(value) if math.isfinite(value) else -1.0


def compare(a: Input, b: Input, *, metric: str | None = None, metric_b: str | None = None,
            target: Mapping[str, float] | None = None, measure: str = "mean", modeler: str | None = None,
            modeler_options: Mapping[str, Any] | None = None, prior: LoadedPrior | None = None,
            callpath: str | None = None, registry: Registry | None = None, executor: Any = None) -> Comparison:
    """Analyse ``a`` and ``b`` alike and pair their call paths; see :class:`Comparison`.

    ``metric`` is the metric of both sides (default: ``time``, else the first), ``metric_b`` B's when
    it differs.  ``target`` defaults to 4× the largest measured value of each parameter over both
    sides, so that both are predicted at the same scale — or, when both are one run at the same point
    (two perf stat files, before and after), to that point: nothing is extrapolated.  ``callpath``
    adds that call path's detail on each side that has it.  Both sides must have the same parameters.
    ``executor`` runs the reading and modeling tasks, as in :func:`pmkit.analyse`.
    """
    from pmkit import executors

    with executors.using(executor):
        return _compare(a, b, metric, metric_b, target, measure, modeler, modeler_options, prior, callpath, registry)


def _compare(a: Input, b: Input, metric: str | None, metric_b: str | None, target: Mapping[str, float] | None,
             measure: str, modeler: str | None, modeler_options: Mapping[str, Any] | None, prior: LoadedPrior | None,
             callpath: str | None, registry: Registry | None) -> Comparison:
    from pmkit.sdk import DEFAULT_MODELER, analyse

    named = [_named(side, n) for n, side in enumerate((a, b))]
    common_parameters(named, "compare")
    given = dict(target or {})
    goal = _target(named, given)
    analyses = []
    for (source, experiment), chosen in zip(named, (metric, metric_b or metric), strict=True):
        analyses.append(analyse(Inputs(read=[(source, experiment)]), metric=chosen, target=goal, measure=measure,
                                modeler=modeler or DEFAULT_MODELER, modeler_options=modeler_options, prior=prior,
                                detectors=[], registry=registry).inputs[0])
    first, second = analyses
    rows = _pair(first, second)
    details = _details(first, second, callpath) if callpath else (None, None)
    return Comparison(first, second, goal, rows, details, not given and not _one_point(named))


def _named(side: Input, n: int) -> tuple[str, Experiment]:
    from pmkit.sdk import read

    if isinstance(side, tuple):
        return side
    if isinstance(side, Experiment):
        return (side.provenance.sources[0] if side.provenance.sources else "AB"[n], side)
    return (str(side), read(side))


def _target(named: Sequence[tuple[str, Experiment]], given: Mapping[str, float]) -> dict[str, float]:
    """``given`` completed with each parameter's largest value over both sides (×4 when nothing is given)."""
    experiment = named[0][1]
    largest = {name: max(float(e.points[:, i].max()) for _, e in named) for i, name in enumerate(experiment.parameters)}
    unknown = [name for name in given if name not in largest]
    if unknown:
        raise UsageError(f"target names parameter {unknown[0]!r}; the studies have {', '.join(largest)}")
    if not given and _one_point(named):  # one run each, at the same point: compared there, not extrapolated
        return largest
    if not given:
        return {name: value * DEFAULT_SCALE_UP for name, value in largest.items()}
    return {name: float(given.get(name, value)) for name, value in largest.items()}


def _one_point(named: Sequence[tuple[str, Experiment]]) -> bool:
    """Whether every side is one run (:func:`pmkit.scaling.no_target`), all at the same point."""
    return all(no_target(e) for _, e in named) and len({tuple(e.points[0]) for _, e in named}) == 1


def _pair(a: InputAnalysis, b: InputAnalysis) -> list[CallpathComparison]:
    by_path = {row.callpath: row for row in b.report.rows}
    rows = [CallpathComparison(row.callpath, row, by_path.pop(row.callpath, None)) for row in a.report.rows]
    rows += [CallpathComparison(path, None, row) for path, row in by_path.items()]
    return rows


def _details(a: InputAnalysis, b: InputAnalysis,
             callpath: str) -> tuple[CallpathDetail | None, CallpathDetail | None]:
    """The detail of ``callpath`` on each side that has it; a UsageError when neither has it."""
    found: list[CallpathDetail | None] = []
    errors = []
    for side in (a, b):
        try:
            found.append(detail(side.report, callpath))
        except UsageError as exc:
            found.append(None)
            errors.append(exc)
    if len(errors) == 2:
        raise errors[0]
    return found[0], found[1]
