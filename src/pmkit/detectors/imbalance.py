"""Load-imbalance detector: call paths whose time differs widely between processes.

Uses the per-location values readers keep (Cube: one per process or thread).  For each call path
and point, the repetition-averaged value per location gives ``imbalance = max / mean − 1`` and the
time the others wait for the slowest, ``(max − mean)``, in the metric's unit — the time a perfectly
balanced run would save per location.  A call path is reported where the imbalance at the largest
measured point reaches ``threshold`` and its waiting time is at least ``min_share`` of the mean
run time per location there; findings are ranked by that waiting time.  Its models say whether it
grows with scale, so the finding also gives the imbalance at every measured point.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pmkit.experiment import Experiment
from pmkit.findings import Finding
from pmkit.hookspecs import hookimpl
from pmkit.models import ModelSet
from pmkit.options import Option, with_defaults

NAME = "imbalance"


class ImbalanceDetector:
    """Finds load imbalance across processes/threads from per-location measurements."""

    name = NAME
    description = "Load imbalance: call paths whose per-process time spreads widely (max/mean − 1)"
    options: Sequence[Option] = (
        Option("threshold", float, 0.2, "report imbalance (max/mean − 1) of at least this at the largest point",
               minimum=0.0),
        Option("min_share", float, 0.01, "and waiting time (max − mean) of at least this share of the mean "
                                         "run time per location", minimum=0.0, maximum=1.0),
        Option("imbalance_metric", str, "time", "metric to examine (needs per-location values)"),
    )

    def detect(self, experiment: Experiment, models: ModelSet, **options: Any) -> list[Finding]:
        """One finding per imbalanced call path; none when the input has no per-location values."""
        from pmkit.ui.quantities import format_value  # the wait as the severity column writes it (rich: lazily)

        values = with_defaults(self.options, options, f"detector {self.name}")
        threshold, min_share, metric = values["threshold"], values["min_share"], values["imbalance_metric"]
        per_point = (experiment.locations or {}).get(metric)
        if not per_point or all(a is None for a in per_point):
            return []
        measured = [i for i, a in enumerate(per_point) if a is not None and a.shape[2] > 1]
        if not measured:
            return []
        last = max(measured, key=lambda i: tuple(experiment.points[i]))
        means = {i: _location_means(per_point[i]) for i in measured}
        unit = experiment.metric(metric).unit
        total = np.nansum(np.nanmean(means[last], axis=1))
        findings = []
        for cp in experiment.callpaths:
            row = means[last][cp.index]
            if not np.isfinite(row).any():
                continue
            mean, peak = float(np.nanmean(row)), float(np.nanmax(row))
            if mean <= 0:
                continue
            imbalance, waiting = peak / mean - 1, peak - mean
            if imbalance < threshold or waiting < min_share * total:
                continue
            slowest = np.argsort(np.nan_to_num(row, nan=-np.inf))[::-1][:5]
            by_point = {experiment.point_label(i): _imbalance(means[i][cp.index]) for i in sorted(measured)}
            model = models.get(cp.path, metric)
            spread = [v for v in by_point.values() if np.isfinite(v)]
            trend = (f"{min(spread) + 1:.3g}–{max(spread) + 1:.3g} over {len(spread)} points"
                     if len(spread) > 1 else "at one point")
            findings.append(Finding(
                detector=NAME,
                title=f"load imbalance: slowest location at {imbalance + 1:.3g}× the mean",
                callpath=cp.path,
                metric=metric,
                location=", ".join(f"#{int(k)}" for k in slowest[:3]),
                severity=waiting,
                unit=unit,
                message=(f"others wait {format_value(waiting, unit)} at {experiment.point_label(last)} "
                         f"({waiting / total:.1%} of the run); max/mean {trend}"),
                evidence={"imbalance": imbalance, "waiting": waiting, "mean": mean, "max": peak,
                          "slowest_locations": [int(k) for k in slowest], "imbalance_by_point": by_point,
                          "model": model.function.extrap_text() if model is not None and model.ok else None},
            ))
        return sorted(findings, key=lambda f: -f.severity)


def _location_means(values: np.ndarray) -> np.ndarray:
    """(call paths, repetitions, locations) → (call paths, locations), averaging repetitions."""
    with np.errstate(all="ignore"):
        valid = np.isfinite(values)
        counts = valid.sum(axis=1)
        sums = np.where(valid, values, 0.0).sum(axis=1)
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _imbalance(row: np.ndarray) -> float:
    mean = float(np.nanmean(row)) if np.isfinite(row).any() else float("nan")
    return float(np.nanmax(row)) / mean - 1 if mean > 0 else float("nan")


@hookimpl(trylast=True)
def pmkit_register_detectors(register: Any) -> None:
    register(ImbalanceDetector())
