"""Strong scaling: whether a study runs one problem on more processes, and what follows from it — the
default target, the speed-up and parallel efficiency there, and the time each call path loses to
scaling less than ideally.

**A strong-scaling study** (:func:`strong_parameters`): the time of a run falls with a parameter.
The time of a run is the measured total of the metric (the sum over call paths, as the header shows
it); where the study's values are *summed* over processes (Cube or OTF2 read with ``--aggregation
sum``, perf stat's default, Extra-P's ``strong`` scaling type), a run's time is that total divided by
the parameter, since a program that scales perfectly keeps its summed time constant.  The total
falls with ``x`` when its elasticity ``d ln T / d ln x`` over the measured range — the least-squares
slope of ``ln T`` against ``ln x`` among points that differ in ``x`` alone, the median over such
groups — is below ``-FLAT_ELASTICITY`` (-0.1, :mod:`pmkit.behaviour`'s threshold for a flat law:
doubling the parameter changes the time by less than about 7%).  A weak-scaling study (the time per
process flat or growing) is not one.

**Its default target** is 4× the largest measured value of each parameter the study scales strongly
(a process count), every other parameter (a problem size) at its largest measured value — not 4× the
problem size too.

**Speed-up and efficiency** (:meth:`StrongScaling.speedups`) compare a run at the target with a
measured run of the same problem: the largest measured point, and the smallest measured value of the
strong parameters with the same other coordinates where the study has it.  ``S = T(baseline) /
T(target)`` with the measured total at the baseline and the predicted total at the target (the
header's two totals), and efficiency ``E = S / (x_target / x_baseline)``.  They exist only when the
target differs from the largest measured point in strong parameters alone (otherwise the problem
changed).  When call paths whose model is negative at the target are left out of the predicted total
(see :mod:`pmkit.scaling`), that total is a lower bound and both figures are upper bounds.

**Lost time** (:func:`lost_shares`): a call path's predicted value at the target minus its value under
ideal scaling from the largest measured point (the model's value there × ``x_ref / x_target``; × 1
for summed values), as a share of the predicted total.  Summed over the call paths it is about
``1 − E``: the ranking of a strong-scaling study orders call paths by it, so the ones that stop
falling (a serial part, a constant, a term growing again) come first, weighted by how much time they
cost at the target — a call path that still falls as 1/p loses nothing, however large.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pmkit.behaviour import FLAT_ELASTICITY
from pmkit.experiment import Experiment

SUMMED = ("sum over locations", "Extra-P scaling: strong")
"""Provenance aggregations (:attr:`pmkit.experiment.Provenance.aggregation`) whose values are summed
over a run's processes."""


def values_summed(experiment: Experiment) -> bool:
    """Whether the study's values are summed over each run's processes (CPU time, not the time of a run)."""
    aggregation = experiment.provenance.aggregation
    return any(aggregation.endswith(kind) for kind in SUMMED)


def counted_rows(experiment: Experiment, metric: str) -> list[int]:
    """The call paths whose values add up to the metric's total: the roots for an inclusive metric,
    every call path for an exclusive one."""
    tree = experiment.callpaths
    return tree.roots() if experiment.metric(metric).inclusive else list(range(len(tree)))


def run_totals(experiment: Experiment, metric: str, measure: str = "mean") -> np.ndarray:
    """Per point, the measured total of ``metric`` (negative values counted as 0; NaN where nothing
    was measured)."""
    values = np.clip(experiment.values(metric, measure)[counted_rows(experiment, metric)], 0.0, None)
    seen = np.isfinite(values).any(axis=0)
    return np.where(seen, np.nansum(np.where(np.isfinite(values), values, 0.0), axis=0), np.nan)


def elasticity(experiment: Experiment, totals: np.ndarray, column: int, summed: bool = False) -> float:
    """The median over groups of points differing only in parameter ``column`` of the least-squares slope of
    ``ln T`` against ``ln x`` (``T`` the total, divided by ``x`` when ``summed``); NaN without such a group."""
    points = experiment.points
    others = np.delete(points, column, axis=1)
    slopes = []
    for key in np.unique(others, axis=0):
        at = np.flatnonzero((others == key).all(axis=1) & np.isfinite(totals) & (totals > 0) & (points[:, column] > 0))
        x = np.log(points[at, column])
        if len(np.unique(x)) < 2:
            continue
        y = np.log(totals[at]) - (x if summed else 0.0)
        slopes.append(float(np.polyfit(x, y, 1)[0]))
    return float(np.median(slopes)) if slopes else math.nan


def strong_parameters(experiment: Experiment, metric: str, measure: str = "mean") -> tuple[str, ...]:
    """The parameters the study scales strongly: the time of a run falls with them (see the module's
    documentation); empty for a weak-scaling study."""
    totals = run_totals(experiment, metric, measure)
    summed = values_summed(experiment)
    return tuple(name for column, name in enumerate(experiment.parameters)
                 if elasticity(experiment, totals, column, summed) < -FLAT_ELASTICITY)


@dataclass(frozen=True)
class Speedup:
    """The predicted speed-up and parallel efficiency at the target over a measured ``baseline`` point.

    ``measured`` is the total measured there, ``predicted`` the total predicted at the target;
    ``upper_bound`` when call paths were left out of the predicted total (their models are negative
    there), so that both figures can only be lower in truth.
    """

    baseline: dict[str, float]
    measured: float
    predicted: float
    speedup: float
    efficiency: float
    upper_bound: bool = False

    def to_json(self) -> dict[str, object]:
        return {"baseline": self.baseline, "measured": self.measured, "predicted": self.predicted,
                "speedup": self.speedup, "efficiency": self.efficiency, "upper_bound": self.upper_bound}


@dataclass(frozen=True)
class StrongScaling:
    """A strong-scaling study analysed towards a target that adds processes to the same problem.

    ``parameters`` are those the study scales strongly; ``summed`` whether its values are summed over
    processes; ``baselines`` the measured points speed-ups are relative to, with their measured totals
    (the largest measured point first, then the smallest of the same problem where measured);
    ``target`` the target point.
    """

    parameters: tuple[str, ...]
    summed: bool
    baselines: tuple[tuple[dict[str, float], float], ...]
    target: dict[str, float]

    def scale(self, baseline: Mapping[str, float]) -> float:
        """How many times more processes the target has than ``baseline``: the product of the strong
        parameters' ratios."""
        return math.prod(self.target[name] / baseline[name] for name in self.parameters)

    @property
    def ideal(self) -> float:
        """The factor by which a call path's value falls from the largest measured point to the target under
        ideal strong scaling: ``x_ref / x_target`` for values per process, 1 for values summed over them."""
        return 1.0 if self.summed else 1.0 / self.scale(self.baselines[0][0])

    def speedups(self, predicted: float, left_out: int = 0) -> list[Speedup]:
        """Speed-up and efficiency over each baseline, given the predicted total at the target; ``left_out``
        call paths missing from that total make them upper bounds; none without a positive total."""
        if not (math.isfinite(predicted) and predicted > 0):
            return []
        out = []
        for point, measured in self.baselines:
            scale = self.scale(point)
            ratio = measured / predicted
            speedup = ratio * scale if self.summed else ratio
            out.append(Speedup(dict(point), measured, predicted, speedup, speedup / scale, left_out > 0))
        return out

    def to_json(self) -> dict[str, object]:
        return {"parameters": list(self.parameters), "summed": self.summed, "ideal_factor": self.ideal}


def target_rule(parameters: Sequence[str], summed: bool, others: bool) -> str:
    """The default target's rule for a strong-scaling study in words, for the header: ``strong scaling: the
    total falls with p; 4× the largest p``; ``others`` when the study has other parameters (kept)."""
    names = ", ".join(parameters)
    falls = "the time per process falls with" if summed else "the total falls with"
    kept = ", the other parameters kept" if others else ""
    return f"strong scaling: {falls} {names}; 4× the largest {names}{kept}"


def strong_scaling(experiment: Experiment, metric: str, measure: str, reference: int,
                   target: Mapping[str, float], parameters: Sequence[str]) -> StrongScaling | None:
    """The strong-scaling view of an analysis from the point at index ``reference`` to ``target``, or None
    when the target changes anything but the strong ``parameters`` (or none of them): a weak-scaling
    study, or a larger problem."""
    names = experiment.parameters
    start = dict(zip(names, map(float, experiment.points[reference]), strict=True))
    changed = {name for name in names if not math.isclose(target[name], start[name])}
    if not changed or not changed <= set(parameters):
        return None
    totals = run_totals(experiment, metric, measure)
    baselines = [(start, float(totals[reference]))]
    columns = [names.index(name) for name in parameters]
    same = np.ones(len(experiment.points), dtype=bool)
    for column, name in enumerate(names):
        if name not in parameters:
            same &= experiment.points[:, column] == experiment.points[reference, column]
    candidates = np.flatnonzero(same & np.isfinite(totals))
    if len(candidates):
        smallest = min(candidates.tolist(), key=lambda i: tuple(experiment.points[i, columns]))
        below = experiment.points[smallest, columns] < experiment.points[reference, columns]
        if smallest != reference and below.all():
            point = dict(zip(names, map(float, experiment.points[smallest]), strict=True))
            baselines.append((point, float(totals[smallest])))
    return StrongScaling(tuple(parameters), values_summed(experiment), tuple(baselines), dict(target))


def lost_shares(strong: StrongScaling | None, fitted: np.ndarray, predicted: np.ndarray,
                total_predicted: float) -> np.ndarray:
    """Per call path, the time lost to less than ideal scaling at the target as a share of the predicted
    total (see the module's documentation); NaN without a strong-scaling view, a model, or a non-negative
    prediction."""
    if strong is None or not (math.isfinite(total_predicted) and total_predicted > 0):
        return np.full(len(predicted), np.nan)
    with np.errstate(invalid="ignore"):
        lost = (predicted - fitted * strong.ideal) / total_predicted
        return np.where(np.isfinite(lost) & (predicted >= 0), lost, np.nan)
