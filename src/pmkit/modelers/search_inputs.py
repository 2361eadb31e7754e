"""What the PMNF search modelers (``refining``, ``multiparam``) share: their options, the search
settings those options give, and the batch reduced to one value per point with the facts a model's
notes state.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pmkit.constraints import Constraint
from pmkit.experiment import MEASURES, reduce_repetitions
from pmkit.fitting.hedging import DISTANCE, GATE, HEDGE_MODES, NARROW_SPAN
from pmkit.fitting.refinement import MIN_POINTS, RefineSettings, compiled_kernels
from pmkit.fitting.segments import MIN_POINTS as SEGMENT_MIN_POINTS
from pmkit.fitting.segments import MODES as SEGMENT_MODES
from pmkit.modelcolumns import codes_of
from pmkit.models import few_points_note
from pmkit.options import Option
from pmkit.series import SeriesBatch

CLEAN_CONSTANT = 1e-9
"""A fitted ``|c0|`` below this share of the smallest ``|y|`` is set to 0 and ``c1`` refitted."""

OPTIONS: tuple[Option, ...] = (
    Option("acceptance", float, 1.5, "price of complexity: a law one step more complex must be this many times "
           "more accurate to be chosen (a step: an exponent's denominator one larger, or a log factor on a "
           "power; with several parameters, one more term in the combination)", minimum=1.0),
    Option("termination", float, 2.0, "the refinement of exponents stops when no slice gets this many times "
           "more accurate (relative error) in one iteration", minimum=1.0),
    Option("nonconstancy", float, 2.0, "a growing law replaces the constant model only if its leave-one-out "
           "SMAPE is this many times smaller than the constant model's", minimum=1.0),
    Option("measure", str, "mean", "how repetitions are reduced to one value per point", choices=MEASURES),
    Option("segments", str, "auto", f"series with {SEGMENT_MIN_POINTS} or more points: test for a change of law at "
           "a threshold and fit each side (auto), never (off), or always split at the best change point (always)",
           choices=SEGMENT_MODES),
    Option("falling", bool, True, "search falling laws too: c0 + c·p^(-γ) (strong scaling) and, from 6 points "
           "on, a·p^(-γ) + b·g(p) with a turning point; false: the growing laws of the original refining search only"),
    Option("hedge", str, "auto", "with several parameters: where the points cannot reject a rival law (same "
           f"parameters) that predicts more than {GATE:g}× apart from the best-fitting one at {DISTANCE:g}× the "
           "largest values, take a "
           "law between the two instead, and say so in its notes ('hedge: …'); on a narrow span, fewer predictions "
           f"off by 2×, fewer exact exponents.  auto: on series whose points span a parameter {NARROW_SPAN:g}× or "
           "less (largest ÷ smallest); true: every series; false: never", choices=HEDGE_MODES),
)
"""The options of the PMNF search modelers.

``acceptance`` has one meaning in both: the factor by which a more complex law must beat a simpler
one.  The one-parameter search multiplies a hypothesis's RMS relative error by ``acceptance`` per
level of complexity (:mod:`pmkit.fitting.refinement`); the multi-parameter combination takes more
terms only when they cut the leave-one-out SMAPE by ``acceptance`` (:mod:`pmkit.modelers.multiparam`).
"""


def settings_from(options: dict[str, Any], series: int | None = None) -> RefineSettings:
    """The search settings for resolved modeler options.  Given the batch's number of ``series``, its
    kernels (numba or numpy) are chosen once for the whole batch, so that a series' model does not
    depend on the order in which the batch's groups are searched (without it, each search chooses)."""
    return RefineSettings(acceptance=float(options["acceptance"]), termination=float(options["termination"]),
                          nonconstancy=float(options["nonconstancy"]), clean_constant=CLEAN_CONSTANT,
                          falling=bool(options.get("falling", True)),
                          use_numba=None if series is None else compiled_kernels(series))


class SeriesData:
    """A batch's values reduced to one per point, with the facts about them a model's notes state.

    Non-finite repetitions (NaN, ±inf) are ignored; ``values`` is NaN where a point has none left.
    """

    def __init__(self, batch: SeriesBatch, measure: str) -> None:
        raw = np.asarray(batch.values, dtype=float)
        finite = np.isfinite(raw)
        self.infinite = np.isinf(raw).sum(axis=(1, 2))
        clean = np.where(finite, raw, np.nan)
        self.values = reduce_repetitions(clean, measure)
        has_point = finite.any(axis=2)
        self.points_present = has_point.sum(axis=1)
        self.n_points = raw.shape[1]
        self.missing_reps = (has_point[:, :, None] & np.isnan(raw)).sum(axis=(1, 2))
        with np.errstate(invalid="ignore"):
            self.negative = (self.values < 0).sum(axis=1)
            self.zero = (self.values == 0).sum(axis=1)
            low = np.nanmin(np.where(has_point, self.values, np.inf), axis=1)
            high = np.nanmax(np.where(has_point, self.values, -np.inf), axis=1)
        self.all_equal = (self.points_present > 1) & (low == high)

    def note_keys(self) -> list[np.ndarray]:
        """Per series the facts :meth:`notes` states (one array each): equal keys, equal notes."""
        return [self.points_present, self.missing_reps, self.infinite, self.all_equal,
                self.zero == self.points_present, self.negative]

    def notes(self, i: int) -> list[str]:
        """What was odd about series ``i``'s data, in words."""
        out: list[str] = []
        present = int(self.points_present[i])
        if present == 0:
            return ["no measured values: no model"]
        if present < self.n_points:
            out.append(f"{self.n_points - present} of {self.n_points} points have no value and were left out")
        if self.missing_reps[i]:
            out.append(f"{int(self.missing_reps[i])} missing (NaN) repetition value(s) ignored")
        if self.infinite[i]:
            out.append(f"{int(self.infinite[i])} infinite value(s) ignored")
        if self.all_equal[i]:
            out.append("all values are equal: constant model")
        elif self.zero[i] == present:
            out.append("all values are zero: constant model")
        if self.negative[i]:
            out.append(f"{int(self.negative[i])} of {present} values are negative: SMAPE-based decisions "
                       "are less reliable")
        few = few_points_note(present, constant=present < MIN_POINTS)
        return out if few is None else [*out, few]


def constraint_of(batch: SeriesBatch, i: int) -> Constraint | None:
    return None if batch.constraints is None else batch.constraints[i]


def constraint_codes(batch: SeriesBatch) -> np.ndarray:
    """Per series an index that is equal for equal constraints (all 0 without constraints)."""
    return np.zeros(len(batch), dtype=np.int64) if batch.constraints is None else codes_of(batch.constraints)
