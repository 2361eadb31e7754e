"""Segmented models: a law that changes at a threshold (issue 21).

Real performance often follows one law up to a threshold and another beyond it: a message crosses
MPI's eager limit (a steeper line in bytes), a working set stops fitting in cache (flat, then
growing), a library switches algorithm at some process count (log p, then p).  The refining and
multi-parameter modelers test every series with enough points for such a change — by default,
since a user does not know in advance that the law changes — with the test of
:mod:`pmkit.fitting.segments`, and fit each side with the same search.  The option ``segments``
(``auto``, ``off``, ``always``) turns it off or forces a split; the modeler ``segmented`` is the
refining modeler with ``segments=always``.  :func:`fit_segmented` is the small API for code that
has plain arrays (the Kluge calibration's ``T_f(p, bytes)``, APMT's Hockney fits).

The model (:class:`pmkit.models.Model`) keeps its segments and the change point; its ``function``
is the last segment's, which extrapolation uses.

Measured choices (FIGURES PENDING).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from pmkit.fitting.leastsquares import adjusted_r2
from pmkit.fitting.refinement import RefineSettings, SingleFits
from pmkit.fitting.segments import ChangePoints, copy_rows, find_change_points
from pmkit.models import ChangePoint, Model, Quality, Segment
from pmkit.pmnf import Function

NAME = "segmented"


class SegmentCollector:
    """The change points of one batch's series, gathered group by group (series sharing their points)
    and turned into segmented models when the models are built.

    ``function_of(fits, row, parameter)`` builds a row's PMNF function from search results (the
    one-parameter modeler's own builder, so both segments are written as its models are).
    """

    def __init__(self, count: int, parameter: str, mode: str,
                 function_of: Callable[[SingleFits, int, str], Function]) -> None:
        self.parameter = parameter
        self.mode = mode
        self.function_of = function_of
        self.found = ChangePoints.none(count)
        self.points = np.zeros((count, 2), dtype=np.int64)
        self.ranges = np.full((count, 4), np.nan)
        self.tss = np.full(count, np.nan)

    def add(self, rows: np.ndarray, x: np.ndarray, Y: np.ndarray, one_law: SingleFits,
            settings: RefineSettings) -> np.ndarray:
        """Test the ``rows`` (values ``Y`` at ``x``, their one-law fits ``one_law``); which were split."""
        if self.mode == "off" or rows.size == 0:
            return np.zeros(rows.size, dtype=bool)
        found = find_change_points(x, Y, one_law, settings, self.mode)
        hit = np.flatnonzero(found.segmented)
        if hit.size == 0:
            return found.segmented
        target = rows[hit]
        for name in ("segmented", "right_from", "change", "low", "high", "one_law_error", "segment_error",
                     "smooth_error"):
            getattr(self.found, name)[target] = getattr(found, name)[hit]
        copy_rows(self.found.left, target, found.left, hit)
        copy_rows(self.found.right, target, found.right, hit)
        right = x[None, :] >= found.right_from[hit, None]
        self.points[target, 1] = right.sum(axis=1)
        self.points[target, 0] = x.size - self.points[target, 1]
        values = Y[hit]
        self.tss[target] = ((values - values.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        xs = np.broadcast_to(x, right.shape)
        self.ranges[target] = np.stack([np.where(right, np.inf, xs).min(axis=1),
                                        np.where(right, -np.inf, xs).max(axis=1),
                                        np.where(right, xs, np.inf).min(axis=1),
                                        np.where(right, xs, -np.inf).max(axis=1)], axis=1)
        return found.segmented

    def apply(self, i: int, model: Model) -> Model:
        """``model`` as a segmented model where series ``i`` was split, else unchanged."""
        if not self.found.segmented[i] or model.function is None:
            return model
        f = self.found
        left_fn = self.function_of(f.left, i, self.parameter)
        right_fn = self.function_of(f.right, i, self.parameter)
        n_left, n_right = (int(v) for v in self.points[i])
        change = float(f.change[i])
        lo0, hi0, lo1, hi1 = (float(v) for v in self.ranges[i])
        segments = (Segment(left_fn, -np.inf, change, (lo0, hi0), _quality(f.left, i, n_left)),
                    Segment(right_fn, change, np.inf, (lo1, hi1), _quality(f.right, i, n_right)))
        point = ChangePoint(self.parameter, change, float(f.low[i]), float(f.high[i]))
        notes = (change_note(point, segments), *model.notes)
        return replace(model, function=right_fn, quality=_combined(segments, n_left, n_right, float(self.tss[i])),
                       notes=notes, segments=segments, change_point=point)


def _quality(fits: SingleFits, i: int, n: int) -> Quality:
    return Quality(float(fits.rss[i]), float(fits.smape[i]), float(fits.adjusted_r2[i]), float(fits.loo_smape[i]))


def _combined(segments: Sequence[Segment], n_left: int, n_right: int, tss: float) -> Quality:
    """The quality of a two-segment model over all its points (4 coefficients)."""
    left, right = segments[0].quality, segments[1].quality
    n = n_left + n_right
    rss = left.rss + right.rss
    smape = (left.smape * n_left + right.smape * n_right) / n
    cv = None
    if left.cv_smape is not None and right.cv_smape is not None:
        cv = (left.cv_smape * n_left + right.cv_smape * n_right) / n
    r2 = float(adjusted_r2(np.array([rss]), np.array([tss]), n, 4)[0])
    return Quality(rss, smape, r2, cv)


def change_note(point: ChangePoint, segments: Sequence[Segment]) -> str:
    """The note a segmented model carries: where the law changes and the two laws."""
    name = point.parameter
    return (f"the law changes at {name} ≈ {point.value:.4g} (between {point.low:g} and {point.high:g}): "
            f"{segments[0].function.pretty_text()} below, {segments[-1].function.pretty_text()} from there on")
