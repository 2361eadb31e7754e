"""Segmented models: a law that changes at a threshold (issue 21).

Real performance often follows one law up to a threshold and another beyond it: a message crosses
MPI's eager limit (a steeper line in bytes), a working set stops fitting in cache (flat, then
growing), a library switches algorithm at some process count (log p, then p).  One PMNF function
over the whole span fits neither side, and extrapolates wrongly.  The ``refining`` and
``multiparam`` modelers therefore test every series with enough points for such a change — by
default, since a user does not know in advance that the law changes — and fit each side with the
same search (exact exponents, same simplicity rules).  The option ``segments`` turns it ``off`` or
forces a split (``always``); the modeler ``segmented`` is ``refining`` with ``segments=always``.
:func:`fit_segmented` is the small API for code that holds plain arrays.

The test (:mod:`pmkit.fitting.segments`): every split into two parts of at least 4 points is
searched on both sides (start table, denominators ≤ 3); the best split wins when the one-law model
misses the values 2 times more than the two segments (RMS relative error of relative
least-squares refits, per degree of freedom) and every smooth two-term law ``c0 + a·t1 + b·t2``
with ``a, b > 0`` 1.75 times more.  The change point is where the two laws meet between the
measured points that separate them; its interval spans the splits within 1.5 times the best one's
error.  A segmented :class:`~pmkit.models.Model` keeps both segments (each fitted by the full
search) and the change point; its ``function`` is the last segment's (the law beyond the largest
measured values, which extrapolation uses) and :meth:`~pmkit.models.Model.function_at` gives the
law at any point.

Chosen on ``bench/segmented.py``'s protocol (seven segmented cases: slope change, flat then
growing, log then linear, growing then flat, jump, and changes near the start and near the end of
the span; the seven one-law cases of paper 000 §4.1 as controls; x = 2..512 (9 points),
2..2048 (11), 4..48 step 4 (12), 2..32768 (15); ±1/±2/±5% noise), tuned on seed 1 and checked on
seed 2, 100 functions per case, x-set and noise level (scratch scripts over the same generator).
Figures are ``% predictions at 4·x_max within 5% / % change points within one measurement step``
over all segmented cases, and the share of the worst control case split (false segments):

* **The one-law test alone splits two-term laws.**  One-law model 3× worse than the segments (and
  ≥ 1% RMS): 83.7/92.9, but 33.5% of a two-term control case split (13.2% of all controls) — a sum
  of two laws bends where one term cannot follow.
* **A smooth two-term law with positive coefficients is the null a change must beat.**  Any
  two-term law (coefficients of either sign, α ≤ 3 with denominators ≤ 2) as the null: 77.5/84.6,
  worst control 5.5%, the 5%-noise cases losing most.  With ``a, b > 0`` — a sum of two costs —
  saturation and kinks stay out of the null's reach: 82.8/90.5, worst control 4.8%; with
  denominators ≤ 3: 82.8/90.3, 1.8%; adding the falling ``x^(-γ)`` of strong scaling and scanning
  with the start table only (below): thresholds 3/2.5 give 82.0/89.8 and 0.7%.
* **Thresholds.**  One-law ratio / two-term ratio 2/2: 83.8/92.7, worst control 1.2%; 2/1.5:
  84.6/94.4, 3.2%; 1.5/1.25: 85.0/95.1, 9.6%.  Compared per degree of freedom (``RSS/(n − p)``,
  p = 3, 6, 5 for the one law, the segments and the two-term law), the false segments no longer
  gather at 9 points: the worst x-set and noise level drops from 2.9% to 1.4% of its controls at
  the same detection.  Chosen 2/1.75 per degree of freedom: 83.7/92.8, worst control case 1.0%, all
  controls 0.56% (seed 2: 83.8/92.3, 1.1%, 0.60%).  Re-checked after the search gained falling
  laws (the ``strong`` merge): 83.5/92.4, 1.0%, 0.56% (seed 2: 83.7/92.1, 1.1%, 0.60%).  A
  one-law model within 1% RMS is kept, and so is one with a point the search left out as an
  outlier, judged over its other points (a two-term law with one outlier is not two segments).
* **Segments of at least 4 points** (:data:`~pmkit.fitting.segments.MIN_SIDE`): with 3 allowed
  on either side, worst control 3.5% against 1.8% (at 3/3 against 3/2.5) for +0.5 points of
  predictions, and changes near the start placed worse.  So detection needs 8 points: two
  segments of 4 (two coefficients and an exponent fitted on each side, two points left to judge
  them); 5-point series, the paper's protocol, are never tested and keep their models exactly.
  Extra-P's Segmented needs 9 (2·5 − 1).
* **The scan over splits uses the start table of growing laws only** (denominators ≤ 3, no
  mediant refinement, no falling laws); the chosen split's two sides then get the full search.
  Same figures (83.1/90.0 against 83.2/90.0 on a 50-per-case run), fewer false splits (14 against
  23 of 20,000 one-law 11-point series), 1.7× faster; with falling + growing sums in the scan a
  side that holds the change passes for a law (the split moved a point early in 2 of 20 slope
  changes).  The two-term null is the search's own two-term kernel
  (:func:`~pmkit.fitting.kernels.pair_search`) over 990 pairs of terms.
* **The interval**: splits within 1.5× the best one's error, widened by one step at the edge of
  the splits (the change may lie beyond the last split a segment of 4 points allows): the true
  change point inside 98.6% of found changes (factor 1.0: 89.3%; without the edge rule 85.8%),
  2.0 measurement steps wide on average (measured at thresholds 2/2).

Report, ``python bench/segmented.py --per-case 100 --jobs 2`` (seed 20210521, never used for
tuning; 100 functions per case, x-set and noise level, 16,800 series; Extra-P 4.2.5 in the same
run; ``pmkit / Extra-P Segmented`` predictions within 5% at 4·x_max, then change points within one
step; bench/README.md §14):

    slope change               93.0 / 60.2     98.2 / 77.7
    flat, then growing         79.8 / 50.7     89.1 / 69.1
    log, then linear           86.4 / 44.2     85.3 / 35.7
    growing, then flat         98.7 / 59.2     97.9 / 63.8
    jump                       81.7 / 56.3     98.3 / 82.5
    near the start             93.6 / 47.3     86.1 / 32.5
    near the end               52.0 / 33.8     89.4 / 78.5
    all segmented              83.6 / 50.2     92.1 / 62.8

One-law controls: 98.2–99.9% of each case's models identical to ``segments=off`` (0.73% of all
split; Extra-P Segmented splits 6–42% of them); the true change point lies in the reported
interval for 93.3% of the segmented series.  Series of 5 points are never tested: the paper's
protocol (``bench/accuracy.py --per-case 1000``) gives identical rates and misses with and without
segments.  Cost (``pytest bench/test_segmented_speed.py --benchmark-enable``, 100,000 series, 10%
with a change; provisional, shared machine): 9 points 43.5k → 26.9k models/s, 11 points 37.1k →
19.4k, 15 points 25.8k → 10.9k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from pmkit.fitting.leastsquares import adjusted_r2, smape
from pmkit.hookspecs import hookimpl
from pmkit.modelers.multiparam import model_multiparameter
from pmkit.modelers.search_inputs import OPTIONS
from pmkit.modelers.single import model_single
from pmkit.models import Model, ModelSet, Quality, Segment
from pmkit.options import Option, resolve_options, with_defaults
from pmkit.pmnf import Function, simple_function
from pmkit.series import SeriesBatch

NAME = "segmented"
LAWS = ("pmnf", "linear")


class SegmentedModeler:
    """The refining search with every series of 8 or more points split at its best change point."""

    name = NAME
    description = "refining, with every series of 8+ points split at its best change point (refining detects)"
    options: Sequence[Option] = tuple(Option(o.name, o.type, "always", o.help, o.choices) if o.name == "segments"
                                      else o for o in OPTIONS)

    def model(self, batch: SeriesBatch, **options: Any) -> ModelSet:
        """Model every series of ``batch`` (``segments=always`` unless given)."""
        values = with_defaults(self.options, options, f"modeler {self.name}")
        if len(batch.parameters) > 1:
            return model_multiparameter(batch, values, modeler=self.name)
        return model_single(batch, values, modeler=self.name)


def fit_segmented(x: Any, y: Any, parameter: str = "x", *, law: str = "pmnf", **options: Any) -> Model:
    """Model ``y(x)`` — one series — and find where its law changes, if it does.

    ``x`` holds the parameter's values (any order; a value given more than once is a repetition);
    ``y`` the measured values, one per ``x`` (or ``len(x)`` × repetitions), NaN where missing.
    ``options`` are the refining modeler's (``segments="auto"`` tests for a change, ``"always"``
    splits at the best change point, ``"off"`` never; ``measure``, ``acceptance``, ...).  With
    ``law="linear"`` each segment is refitted as a straight line ``c0 + c1·x`` by relative least
    squares over its measured points (Hockney's ``latency + bytes/bandwidth``); the change point is
    the one the PMNF test found.

    The result is a :class:`~pmkit.models.Model`: ``model.segmented``, ``model.change_point``
    (``value``, ``low``, ``high``), ``model.segments`` (each ``function``, ``start``, ``end``,
    ``measured``), ``model.function_at(x)`` and ``model.evaluate(x)``.
    """
    if law not in LAWS:
        raise ValueError(f"law must be one of {', '.join(LAWS)}, got {law!r}")
    points, values = _repetitions(x, y)
    batch = SeriesBatch((parameter,), points[:, None], values[None, :, :], [parameter], ["value"])
    resolved = resolve_options(OPTIONS, options, "fit_segmented")
    model = model_single(batch, resolved, modeler="refining")[0]
    return _linear(model, points, values) if law == "linear" and model.function is not None else model


def _repetitions(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray]:
    """Distinct sorted ``x`` and its values as points × repetitions (NaN padded)."""
    x = np.asarray(x, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float)
    if y.shape[0] != x.size:
        raise ValueError(f"x has {x.size} values, y has {y.shape[0]} rows")
    y = y.reshape(x.size, -1)
    points, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    width = int(counts.max()) * y.shape[1] if x.size else 1
    values = np.full((points.size, width), np.nan)
    filled = np.zeros(points.size, dtype=np.int64)
    for row, p in enumerate(inverse.reshape(-1)):
        values[p, filled[p]:filled[p] + y.shape[1]] = y[row]
        filled[p] += y.shape[1]
    return points, values


def _linear(model: Model, points: np.ndarray, values: np.ndarray) -> Model:
    """``model`` with each segment (or the whole model) refitted as ``c0 + c1·x`` by relative least
    squares over the mean values of its measured points, with the quality of that fit."""
    assert model.function is not None
    parameter = model.function.parameters[0]
    with np.errstate(all="ignore"):
        means = np.nanmean(values, axis=1)

    def line(low: float, high: float) -> tuple[Function, Quality]:
        keep = (points >= low) & (points <= high) & np.isfinite(means) & (means != 0)
        xs, ys = points[keep], means[keep]
        root_w = 1.0 / np.abs(ys)
        design = np.stack([np.ones_like(xs), xs], axis=1)
        if xs.size < 2:
            return simple_function(parameter, float(np.mean(ys)) if ys.size else np.nan, 0.0, 0, 0), Quality()
        (c0, c1), *_ = np.linalg.lstsq(design * root_w[:, None], ys * root_w, rcond=None)
        fitted = c0 + c1 * xs
        rss = float(((ys - fitted) ** 2).sum())
        tss = float(((ys - ys.mean()) ** 2).sum())
        quality = Quality(rss, float(smape(ys[None, :], fitted[None, :])[0]),
                          float(adjusted_r2(np.array([rss]), np.array([tss]), xs.size, 2)[0]))
        return simple_function(parameter, float(c0), float(c1), 1, 0), quality

    if not model.segmented:
        function, quality = line(-np.inf, np.inf)
        return replace(model, function=function, quality=quality)
    lines = [line(*s.measured) for s in model.segments]
    segments = tuple(Segment(f, s.start, s.end, s.measured, q) for (f, q), s in zip(lines, model.segments,
                                                                                   strict=True))
    return replace(model, function=segments[-1].function, segments=segments)


@hookimpl(trylast=True)
def pmkit_register_modelers(register: Any) -> None:
    register(SegmentedModeler())
