"""How a call path's law behaves towards the target: :mod:`pmkit.behaviour` along the parameter that
changes, and where the target lies on it — what the growth column of ``pmkit show`` says.

:func:`trend_parameter` chooses the parameter (the one the target changes; of several, the one the
study scales strongly); :func:`trend_of` describes one law along it, from the smallest measured value
on, the other parameters at the target's values.  A :class:`Trend`'s :attr:`~Trend.state` and
:meth:`~Trend.words` are the view's text: "falls as 1/p", "flattens at 2.0 s", "grows again beyond
p ≈ 900", "negative beyond p ≈ 34".  One law is described at a time (about 0.2–1.5 ms each), so the
report describes a row when a view first asks for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from pmkit.behaviour import FLAT_ELASTICITY, Behaviour, describe, shape_text
from pmkit.pmnf import Function

STATES = ("falls", "turns", "flattens", "constant", "grows", "grows again", "peaks", "negative")
"""What :attr:`Trend.state` can be: the law at the target falls; falls but turns up again later; has
flattened at its limit; is constant; grows; has passed its turning point and grows again; grows but
falls later; is below zero."""


def about(value: float | None) -> str:
    """A turning point or crossing in two significant digits, as the views write it: ``45``, ``900``, ``3.4``."""
    if value is None or not math.isfinite(value):
        return "?"
    rounded = float(f"{value:.2g}")
    return f"{rounded:.0f}" if abs(rounded) >= 10 else f"{rounded:g}"


@dataclass(frozen=True)
class Trend:
    """One law's :class:`~pmkit.behaviour.Behaviour` along the parameter that changes towards the target,
    with the target's value ``at`` of that parameter and the largest measured point's, ``now``."""

    behaviour: Behaviour
    at: float
    now: float = math.nan
    known: float | None = None
    """The law's value at the target when the caller has it already (the report's prediction)."""

    @property
    def turned_before(self) -> bool:
        """Whether the law already grows again at the largest measured point (its turning point is not ahead)."""
        turning = self.behaviour.turning_point
        return turning is not None and turning <= self.now

    @property
    def parameter(self) -> str:
        return self.behaviour.parameter

    @cached_property
    def value(self) -> float:
        """The law's value at the target."""
        return self.behaviour.value(self.at) if self.known is None else self.known

    @property
    def negative(self) -> bool:
        """Whether the law is below zero at the target."""
        return bool(self.value < 0)

    @cached_property
    def local_exponent(self) -> float:
        """``d ln f / d ln x`` at the target (see :meth:`pmkit.behaviour.Behaviour.local_exponent`)."""
        b = self.behaviour
        if b.kind == "constant":
            return 0.0 if self.value != 0 else math.nan
        slope = float(b.function.derivative(b.parameter).evaluate(self.at))
        if self.value == 0 or not (math.isfinite(self.value) and math.isfinite(slope)):
            return math.nan
        return self.at * slope / self.value

    @cached_property
    def state(self) -> str:
        """One of :data:`STATES`: how the law behaves at the target."""
        b = self.behaviour
        if self.negative:
            return "negative"
        if b.kind == "constant":
            return "constant"
        if b.kind == "grows":
            return "grows"
        if b.kind == "grows then falls":
            return "peaks"
        if b.kind == "falls then grows":
            return "grows again" if self.at >= (b.turning_point or math.inf) else "turns"
        flat = not math.isfinite(self.local_exponent) or abs(self.local_exponent) < FLAT_ELASTICITY
        if b.limit is not None and b.limit > 0 and flat:  # Behaviour.phase_at, from the cached exponent
            return "flattens"
        return "falls"

    @property
    def stopped_falling(self) -> bool:
        """Whether the law no longer falls at the target: constant, flattened, growing (again), or negative."""
        return self.state not in ("falls", "turns")

    def words(self, value_text: Callable[[float], str] = lambda v: f"{v:.3g}") -> str:
        """The growth column's text: what holds at the target — ``falls as 1/p``, ``falls as 1/p, grows again
        beyond p ≈ 900`` (before the turning point), ``grows again beyond p ≈ 900`` (after it), ``flattens at
        2.0 s``, ``negative beyond p ≈ 34`` (below zero at the target; a law that turns negative only beyond
        it says so in :attr:`behaviour`, not here), ``constant``, ``grows as p``; ``value_text`` writes values
        (a view passes its units)."""
        b = self.behaviour
        p = self.parameter
        falls = f"falls as {shape_text(b.falling, p)}" if b.falling else "falls"
        state = self.state
        if state == "negative":
            return f"negative beyond {p} ≈ {about(b.negative_from)}"
        if state == "grows again":
            return f"grows again beyond {p} ≈ {about(b.turning_point)}"
        if state == "turns":
            return f"{falls}, grows again beyond {p} ≈ {about(b.turning_point)}"
        if state == "flattens":
            return f"flattens at {value_text(b.limit)}"  # type: ignore[arg-type]
        if state == "peaks":
            return f"grows, then falls beyond {p} ≈ {about(b.peak)}"
        if state == "grows":
            return f"grows as {shape_text(b.growing, p)}" if b.growing else "grows"
        if state == "constant":
            return "constant"
        return falls

    def to_json(self, value_text: Callable[[float], str] = lambda v: f"{v:.3g}") -> dict[str, object]:
        """``parameter``, ``kind``, ``state``, ``text`` (the growth column's words), ``limit``,
        ``turning_point``, ``minimum``, ``peak``, ``negative_from``, and ``local_exponent`` at the target."""
        b = self.behaviour
        return {"parameter": self.parameter, "kind": b.kind, "state": self.state, "text": self.words(value_text),
                "limit": b.limit, "turning_point": b.turning_point, "minimum": b.minimum, "peak": b.peak,
                "negative_from": b.negative_from, "local_exponent": self.local_exponent}


def trend_parameter(parameters: Sequence[str], reference: Mapping[str, float], target: Mapping[str, float],
                    strong: Sequence[str] = ()) -> str | None:
    """The parameter a law is described along: the only one ``target`` changes from ``reference``; of
    several, the only strong one among them; else None (the growth class describes the law)."""
    changed = [name for name in parameters if not math.isclose(target[name], reference[name])]
    if len(changed) == 1:
        return changed[0]
    falling = [name for name in changed if name in strong]
    return falling[0] if len(falling) == 1 else None


def trend_of(function: Function | None, parameter: str | None, start: float,
             target: Mapping[str, float], reference: Mapping[str, float] | None = None,
             value: float | None = None) -> Trend | None:
    """``function`` described along ``parameter`` from ``start`` (> 0; the target's value when that is
    smaller) on, the other parameters at ``target``'s values; ``reference`` is the largest measured point,
    ``value`` the function's value at the target where known.  None without a function or parameter, or
    where the function has no such parameter."""
    if function is None or parameter is None or parameter not in function.parameters or not start > 0:
        return None
    at = float(target[parameter])
    start = min(start, at) if at > 0 else start
    fixed = {name: float(target[name]) for name in function.parameters if name != parameter}
    horizon = max(start * 2.0 ** 40, at * 2.0)
    now = float(reference[parameter]) if reference is not None else math.nan
    return Trend(describe(function, parameter, start=start, fixed=fixed, horizon=horizon), at, now, value)
