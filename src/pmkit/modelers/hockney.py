"""Hockney's ``α + β·bytes`` in one or two segments: MPI's eager/rendezvous switch in message size.

An MPI library sends small messages eagerly and large ones after a handshake (rendezvous): the
transfer time over bytes follows one line up to the eager limit and another, with a larger latency
and often another slope, beyond it.  :func:`fit_switch` finds that change with
:func:`~pmkit.modelers.segmented.fit_segmented` (the segment test of the refining modeler, each side
refitted as a line ``α + β·bytes``) and returns the two lines and the change point with its
interval, or None when the series follows one law (the test's false-segment rate, measured in
:mod:`pmkit.modelers.segmented`, is 0.73 % of one-law series) or has fewer than
:data:`~pmkit.fitting.segments.MIN_POINTS` distinct sizes.  The Kluge calibration's ``T_f(p, bytes)``
(:mod:`pmkit.calibration.reference`) and APMT's point-to-point model
(:mod:`pmkit.modelers.apmt_model`) use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pmkit.models import Segment


@dataclass(frozen=True)
class HockneyLine:
    """``latency + per_byte · bytes`` (seconds), fitted on the sizes ``measured`` (smallest, largest)."""

    latency: float
    per_byte: float
    measured: tuple[float, float]

    def __call__(self, nbytes: Any) -> np.ndarray:
        return self.latency + self.per_byte * np.asarray(nbytes, dtype=float)

    def to_json(self) -> dict[str, Any]:
        return {"latency": self.latency, "per_byte": self.per_byte, "measured": list(self.measured)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HockneyLine:
        low, high = data["measured"]
        return cls(float(data["latency"]), float(data["per_byte"]), (float(low), float(high)))

    def text(self) -> str:
        """``2.00 µs + 0.2 ns/B``."""
        from pmkit.ui.quantities import format_value

        sign = "−" if self.per_byte < 0 else "+"
        return f"{format_value(self.latency, 's')} {sign} {format_value(abs(self.per_byte), 's')}/B"


@dataclass(frozen=True)
class ProtocolSwitch:
    """Two Hockney lines, ``below`` and ``above`` the change in bytes (``change`` within [``low``, ``high``])."""

    change: float
    low: float
    high: float
    below: HockneyLine
    above: HockneyLine

    def evaluate(self, nbytes: Any) -> np.ndarray:
        """The time at each size from the line that holds there."""
        nbytes = np.asarray(nbytes, dtype=float)
        return np.where(nbytes < self.change, self.below(nbytes), self.above(nbytes))

    def line_at(self, nbytes: float) -> HockneyLine:
        return self.below if nbytes < self.change else self.above

    @property
    def gap(self) -> tuple[float, float]:
        """The sizes between the two segments' measured points: the only sizes whose law the switch
        decides and that no pair of same-side base points brackets."""
        return self.below.measured[1], self.above.measured[0]

    def where(self) -> str:
        """``≈ 45.3 KiB (32 KiB … 64 KiB)``."""
        return f"≈ {size_text(self.change)} ({size_text(self.low)} … {size_text(self.high)})"

    def text(self) -> str:
        """``law changes at ≈ 45.3 KiB (32 KiB … 64 KiB; eager → rendezvous?): 2.00 µs + 200 ps/B below, …``."""
        return (f"law changes at {self.where()[:-1]}; eager → rendezvous?): {self.below.text()} below, "
                f"{self.above.text()} above")

    def to_json(self) -> dict[str, Any]:
        return {"change": self.change, "low": self.low, "high": self.high, "below": self.below.to_json(),
                "above": self.above.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProtocolSwitch:
        return cls(float(data["change"]), float(data["low"]), float(data["high"]),
                   HockneyLine.from_json(data["below"]), HockneyLine.from_json(data["above"]))


def size_text(nbytes: float) -> str:
    """A message size in binary units, as MPI's eager limits are given: ``64 KiB``, ``45.3 KiB``, ``8 B``."""
    if not math.isfinite(nbytes):
        return str(nbytes)
    for unit, scale in (("GiB", 2.0 ** 30), ("MiB", 2.0 ** 20), ("KiB", 2.0 ** 10)):
        if abs(nbytes) >= scale:
            return f"{float(f'{nbytes / scale:.3g}'):g} {unit}"
    return f"{float(f'{nbytes:.3g}'):g} B"


def fit_switch(nbytes: Any, seconds: Any, *, segments: str = "auto") -> ProtocolSwitch | None:
    """Two Hockney lines and where they change, when ``seconds(nbytes)`` changes law; None otherwise.

    ``nbytes`` and ``seconds`` are one value per measurement (a size given more than once is a
    repetition); non-finite values are ignored.  ``segments`` is the refining modeler's option
    (``auto`` tests, ``always`` splits at the best change, ``off`` returns None).
    """
    from pmkit.fitting.segments import MIN_POINTS
    from pmkit.modelers.segmented import fit_segmented

    x = np.asarray(nbytes, dtype=float).reshape(-1)
    y = np.asarray(seconds, dtype=float).reshape(-1)
    keep = np.isfinite(x) & np.isfinite(y) & (x >= 0)
    if segments == "off" or np.unique(x[keep]).size < MIN_POINTS:
        return None
    model = fit_segmented(x[keep], y[keep], "bytes", law="linear", segments=segments)
    if not model.segmented or model.change_point is None or len(model.segments) != 2:
        return None
    below, above = (_line(s) for s in model.segments)
    point = model.change_point
    return ProtocolSwitch(float(point.value), float(point.low), float(point.high), below, above)


def _line(segment: Segment) -> HockneyLine:
    function = segment.function
    slope = sum(term.coefficient for term in function.terms)
    low, high = segment.measured
    return HockneyLine(float(function.constant), float(slope) if math.isfinite(slope) else 0.0,
                       (float(low), float(high)))
