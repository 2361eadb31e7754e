"""Segmented models from change points: the one-parameter modeler's hook into :mod:`pmkit.fitting.segments`.

:class:`SegmentCollector` tests each group of series (those sharing their points) for a change of
law, keeps what it finds, and turns a series' one-law :class:`~pmkit.models.Model` into a segmented
one when the model is built.  The test, its thresholds and their figures are described in
:mod:`pmkit.modelers.segmented`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from pmkit.fitting.leastsquares import adjusted_r2
from pmkit.fitting.refinement import RefineSettings, SingleFits
from pmkit.fitting.segments import MIN_POINTS, ChangePoints, find_change_points
from pmkit.models import ChangePoint, Quality, Segment
from pmkit.pmnf import Function


class SegmentCollector:
    """The change points of one batch's series, gathered group by group (series sharing their points)
    and handed to the model columns (:meth:`take_right`).

    ``function_of(fits, row, parameter)`` builds a row's PMNF function from search results (the
    one-parameter modeler's own builder, so both segments are written as its models are).
    """

    def __init__(self, count: int, parameter: str, mode: str,
                 function_of: Callable[[SingleFits, int, str], Function]) -> None:
        self.count = count
        self.parameter = parameter
        self.mode = mode
        self.function_of = function_of
        self.found: ChangePoints | None = None  # allocated at the first change found

    def add(self, rows: np.ndarray, x: np.ndarray, Y: np.ndarray, one_law: SingleFits,
            settings: RefineSettings) -> np.ndarray:
        """Test the ``rows`` (values ``Y`` at ``x``, their one-law fits ``one_law``); which were split."""
        if self.mode == "off" or rows.size == 0 or x.size < MIN_POINTS:
            return np.zeros(rows.size, dtype=bool)
        found = find_change_points(x, Y, one_law, settings, self.mode)
        hit = np.flatnonzero(found.segmented)
        if hit.size == 0:
            return found.segmented
        if self.found is None:
            self.found = ChangePoints.none(self.count)
            self.points = np.zeros((self.count, 2), dtype=np.int64)
            self.ranges = np.full((self.count, 4), np.nan)
            self.tss = np.full(self.count, np.nan)
        target = rows[hit]
        for name in ("segmented", "right_from", "change", "low", "high", "one_law_error", "segment_error",
                     "smooth_error"):
            getattr(self.found, name)[target] = getattr(found, name)[hit]
        self.found.left.take(target, found.left, hit)
        self.found.right.take(target, found.right, hit)
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

    def take_right(self, fits: SingleFits) -> dict[int, tuple[tuple[Segment, ...], ChangePoint]]:
        """Put each split series' segment beyond the change into ``fits`` (the model's function) with the
        quality over both segments, and return per split series its segments and change point."""
        f = self.found
        if f is None:
            return {}
        rows = np.flatnonzero(f.segmented)
        out = {}
        for i in rows.tolist():
            lo0, hi0, lo1, hi1 = (float(v) for v in self.ranges[i])
            change = float(f.change[i])
            segments = (Segment(self.function_of(f.left, i, self.parameter), -np.inf, change, (lo0, hi0),
                                _quality(f.left, i)),
                        Segment(self.function_of(f.right, i, self.parameter), change, np.inf, (lo1, hi1),
                                _quality(f.right, i)))
            out[i] = (segments, ChangePoint(self.parameter, change, float(f.low[i]), float(f.high[i])))
        fits.take(rows, f.right, rows)
        n_left, n_right = self.points[rows, 0], self.points[rows, 1]
        n = n_left + n_right
        fits.rss[rows] = f.left.rss[rows] + f.right.rss[rows]
        fits.smape[rows] = (f.left.smape[rows] * n_left + f.right.smape[rows] * n_right) / n
        fits.loo_smape[rows] = (f.left.loo_smape[rows] * n_left + f.right.loo_smape[rows] * n_right) / n
        for size in np.unique(n).tolist():
            same = rows[n == size]
            fits.adjusted_r2[same] = adjusted_r2(fits.rss[same], self.tss[same], size, 4)
        return out


def _quality(fits: SingleFits, i: int) -> Quality:
    return Quality(float(fits.rss[i]), float(fits.smape[i]), float(fits.adjusted_r2[i]), float(fits.loo_smape[i]))


def combined_quality(segments: Sequence[Segment], n_left: int, n_right: int, tss: float, coefficients: int) -> Quality:
    """The quality of a two-segment model over all its points: RSS summed, SMAPE and cross-validated
    SMAPE weighted by the segments' points, adjusted R² for ``coefficients`` coefficients in all."""
    left, right = segments[0].quality, segments[1].quality
    n = n_left + n_right
    rss = left.rss + right.rss
    smape = (left.smape * n_left + right.smape * n_right) / n
    cv = None
    if left.cv_smape is not None and right.cv_smape is not None:
        cv = (left.cv_smape * n_left + right.cv_smape * n_right) / n
    r2 = float(adjusted_r2(np.array([rss]), np.array([tss]), n, coefficients)[0])
    return Quality(rss, smape, r2, cv)
