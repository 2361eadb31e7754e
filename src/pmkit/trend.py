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
from typing import TYPE_CHECKING

import numpy as np

from pmkit.behaviour import (
    FLAT_ELASTICITY,
    HORIZON_DOUBLINGS,
    Behaviour,
    Shape,
    _grid,
    _root,
    _term_value,
    describe,
    shape_text,
)
from pmkit.pmnf import Factor, Function, Term, _factor_derivative

if TYPE_CHECKING:
    from pmkit.modelcolumns import ModelColumns

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
        return _state(b.kind, self.at, b.turning_point, b.limit, self.local_exponent if b.kind == "falls" else 0.0)

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
        return _words(self.state, self.parameter, b.falling, b.growing, b.limit, b.turning_point, b.peak,
                      b.negative_from, value_text)

    def to_json(self, value_text: Callable[[float], str] = lambda v: f"{v:.3g}") -> dict[str, object]:
        """``parameter``, ``kind``, ``state``, ``text`` (the growth column's words), ``limit``,
        ``turning_point``, ``minimum``, ``peak``, ``negative_from``, and ``local_exponent`` at the target."""
        b = self.behaviour
        return _document(self.parameter, b.kind, self.state, self.words(value_text), b.limit, b.turning_point,
                         b.minimum, b.peak, b.negative_from, self.local_exponent)


def _state(kind: str, at: float, turning_point: float | None, limit: float | None, local_exponent: float) -> str:
    """:attr:`Trend.state` of a law not below zero at the target ``at``."""
    if kind == "constant":
        return "constant"
    if kind == "grows":
        return "grows"
    if kind == "grows then falls":
        return "peaks"
    if kind == "falls then grows":
        return "grows again" if at >= (turning_point or math.inf) else "turns"
    flat = not math.isfinite(local_exponent) or abs(local_exponent) < FLAT_ELASTICITY
    if limit is not None and limit > 0 and flat:  # Behaviour.phase_at, from the cached exponent
        return "flattens"
    return "falls"


def _words(state: str, p: str, falling: Shape | None, growing: Shape | None, limit: float | None,
           turning_point: float | None, peak: float | None, negative_from: float | None,
           value_text: Callable[[float], str]) -> str:
    """:meth:`Trend.words` of a law in ``state`` along parameter ``p``."""
    falls = f"falls as {shape_text(falling, p)}" if falling else "falls"
    if state == "negative":
        return f"negative beyond {p} ≈ {about(negative_from)}"
    if state == "grows again":
        return f"grows again beyond {p} ≈ {about(turning_point)}"
    if state == "turns":
        return f"{falls}, grows again beyond {p} ≈ {about(turning_point)}"
    if state == "flattens":
        return f"flattens at {value_text(limit)}"  # type: ignore[arg-type]
    if state == "peaks":
        return f"grows, then falls beyond {p} ≈ {about(peak)}"
    if state == "grows":
        return f"grows as {shape_text(growing, p)}" if growing else "grows"
    if state == "constant":
        return "constant"
    return falls


def _document(parameter: str, kind: str, state: str, text: str, limit: float | None, turning_point: float | None,
              minimum: float | None, peak: float | None, negative_from: float | None,
              local_exponent: float) -> dict[str, object]:
    return {"parameter": parameter, "kind": kind, "state": state, "text": text, "limit": limit,
            "turning_point": turning_point, "minimum": minimum, "peak": peak, "negative_from": negative_from,
            "local_exponent": local_exponent}


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


def closed_form_json(columns: ModelColumns, positions: np.ndarray, values: np.ndarray, parameter: str | None,
                     start: float, target: Mapping[str, float],
                     value_text: Callable[[float], str] = lambda v: f"{v:.3g}") -> dict[int, dict[str, object]]:
    """``trend_of(...).to_json(value_text)`` for many series of ``columns`` at once, for those whose law along
    ``parameter`` (the other parameters at the target, :meth:`Function.along`) has a closed form: constants, and
    one term ``c·p^α`` or ``c·log2(p)^β`` (:func:`pmkit.behaviour._monotone`) from ``start`` ≥ 1 on.
    ``positions`` are the series, ``values`` their predictions at the target; returns {k: document} for the k-th
    series so described — the rest (segmented models, several terms in ``parameter``, ``p^α·log2(p)^β``,
    non-finite numbers) is left to :func:`trend_of`.

    Identical to the per-row documents, not only close: whatever is a power or a logarithm is computed per
    distinct shape by the same scalar code, and per series only products, sums and comparisons, which numpy
    rounds as Python does (``tests/test_trend_columns.py`` compares them field by field).
    """
    if parameter is None or parameter not in columns.parameters or not start > 0:
        return {}
    at = float(target[parameter])
    start = min(start, at) if at > 0 else start
    horizon = max(start * 2.0 ** HORIZON_DOUBLINGS, at * 2.0)
    if not (start >= 1 and horizon > start):
        return {}
    end = float(_grid(start, horizon)[-1])
    positions = np.asarray(positions, dtype=np.int64)
    values = np.asarray(values, dtype=float)
    first, count = columns.term_start[positions], np.diff(columns.term_start)[positions]
    ok = columns.has_function[positions] & np.isfinite(values)
    if columns.segments:
        ok &= ~np.isin(positions, np.fromiter(columns.segments, dtype=np.int64))
    parts = _closed_shapes(columns, parameter, start, end, at, target)
    table = [part.info for part in parts]
    width = max((len(part.folds) for part in parts), default=0)
    folds = np.ones((len(parts), width))  # c·1.0 is c: the rows of shapes with fewer factors
    for k, part in enumerate(parts):
        folds[k, :len(part.folds)] = part.folds
    along = np.array([part.along for part in parts], dtype=bool)
    closed = np.array([part.info is not None for part in parts], dtype=bool)
    constant = columns.c0[positions].copy()
    coefficient, shape, terms = (np.zeros(len(positions)), np.zeros(len(positions), dtype=np.int64),
                                 np.zeros(len(positions), dtype=np.int64))
    for rank in range(int(count.max()) if count.size else 0):  # Function.along, term by term
        has = count > rank
        term = np.where(has, first + rank, 0)
        of = columns.shape_of_term[term]
        c = columns.coefficient[term]
        for j in range(width):  # the other parameters' factors at the target, in the term's order
            c = c * folds[of, j]
        own = has & along[of]
        constant = np.where(has & ~along[of], constant + c, constant)  # terms without the parameter
        ok &= ~own | closed[of]
        terms = terms + own
        coefficient, shape = np.where(own, c, coefficient), np.where(own, of, shape)
    constant = constant + 0.0  # describe(): the constant part, line.constant + 0
    one = terms == 1
    ok &= (terms <= 1) & np.isfinite(constant) & (~one | (np.isfinite(coefficient) & (coefficient != 0)))
    out: dict[int, dict[str, object]] = {}
    for k in np.flatnonzero(ok & ~one).tolist():
        out[k] = _constant_json(parameter, float(constant[k]), float(values[k]), start, value_text)
    rows = np.flatnonzero(ok & one)
    if not rows.size:
        return out
    coefficient, shape, constant, value = coefficient[rows], shape[rows], constant[rows], values[rows]
    pick = {name: np.array([getattr(info, name) if info else 0.0 for info in table])[shape]
            for name in ("at_start", "at_end", "slope_factor", "slope_basis")}
    rising = np.array([bool(info and info.rising) for info in table])[shape]
    logarithmic = np.array([bool(info and info.logarithmic) for info in table])[shape]
    grows = (coefficient > 0) == rising
    negative_start = constant + coefficient * pick["at_start"] < 0
    crosses = ~negative_start & ~grows & (constant + coefficient * pick["at_end"] < 0)
    with np.errstate(all="ignore"):
        slope = coefficient * pick["slope_factor"]  # Function.derivative's coefficient: c·α, or c·β / ln 2
        slope = np.where(logarithmic, slope / math.log(2.0), slope)
        slope = 0.0 + slope * pick["slope_basis"]  # ... evaluated at the target, as Function.evaluate adds it up
        exponent = np.where((value == 0) | ~np.isfinite(value) | ~np.isfinite(slope), np.nan, at * slope / value)
    for k, c, s, b, g, neg, cross, e, v in zip(rows.tolist(), coefficient.tolist(), shape.tolist(),
                                               constant.tolist(), grows.tolist(), negative_start.tolist(),
                                               crosses.tolist(), exponent.tolist(), value.tolist(), strict=True):
        info = table[s]
        negative_from = start if neg else (_root(c, info.alpha, info.beta, b) if cross else None)
        out[k] = _one_term_json(parameter, info, "grows" if g else "falls", b, c > 0, negative_from, e, v, value_text)
    return out


@dataclass(frozen=True)
class _Shape:
    """What :func:`closed_form_json` needs of one term shape ``p^α`` or ``log2(p)^β``: the term at the search's
    start and end, and its derivative's factor and basis at the target, computed by the per-row code."""

    shape: tuple
    alpha: float
    beta: float
    rising: bool
    at_start: float
    at_end: float
    slope_factor: float
    logarithmic: bool
    slope_basis: float
    below: bool
    """Whether the shape is below ``(0, 0)`` (falls for a positive coefficient), as describe() compares it."""
    above: bool


@dataclass(frozen=True)
class _Part:
    """A term shape of the columns as :func:`closed_form_json` reads it along the parameter: the other
    parameters' factors at the target (``folds``, in the term's order), whether it has a factor of the
    parameter (``along``; else it adds to the constant), and that factor's closed form, if it has one."""

    folds: tuple[float, ...]
    along: bool
    info: _Shape | None


def _closed_shapes(columns: ModelColumns, parameter: str, start: float, end: float, at: float,
                   target: Mapping[str, float]) -> list[_Part]:
    """Each shape of ``columns`` as a :class:`_Part`; the factor of ``parameter`` has a closed form when α = 0
    or β = 0 (and the term is defined at ``start``)."""
    point, _, _ = Function((parameter,))._columns(at)
    infos: dict[Factor, _Shape | None] = {}
    out = []
    for factors in columns.shapes:
        own = [f for f in factors if f.parameter == parameter]
        folds = tuple(float(f.evaluate(np.array([float(target[f.parameter])], dtype=float))[0])
                      for f in factors if f.parameter != parameter)
        if own and own[0] not in infos:
            infos[own[0]] = _closed_shape(own[0], start, end, point)
        out.append(_Part(folds, bool(own), infos[own[0]] if own else None))
    return out


def _closed_shape(factor: Factor, start: float, end: float, point: Mapping[str, np.ndarray]) -> _Shape | None:
    shape = (factor.exponent, factor.log_exponent)
    if 0 not in shape:
        return None
    alpha, beta = float(shape[0]), float(shape[1])
    power, log = _factor_derivative(factor)
    part = power if power is not None else log
    assert part is not None
    basis = float(Term(1.0, (part[1],)).basis(point, 1)[0])
    try:
        ends = _term_value(alpha, beta, start), _term_value(alpha, beta, end)
    except (ZeroDivisionError, OverflowError):  # log2(1)^-1: the per-row path says what it says
        return None
    return _Shape(shape, alpha, beta, alpha > 0 or beta > 0, *ends, part[0], power is None, basis,
                  shape < (0, 0), shape > (0, 0))


def _constant_json(parameter: str, constant: float, value: float, start: float,
                   value_text: Callable[[float], str]) -> dict[str, object]:
    """:meth:`Trend.to_json` of the constant law ``constant`` whose value at the target is ``value``."""
    negative_from = start if constant < 0 else None
    state = "negative" if value < 0 else "constant"
    return _document(parameter, "constant", state, _words(state, parameter, None, None, constant, None, None,
                                                           negative_from, value_text),
                     constant, None, None, None, negative_from, 0.0 if value != 0 else math.nan)


def _one_term_json(parameter: str, info: _Shape, kind: str, constant: float, positive: bool,
                   negative_from: float | None, local_exponent: float, value: float,
                   value_text: Callable[[float], str]) -> dict[str, object]:
    """:meth:`Trend.to_json` of ``constant + c·term`` (term of shape ``info``, ``c`` positive or not)."""
    falling = info.shape if positive and info.below else None
    growing = info.shape if positive and info.above else None
    limit = constant if info.below else None
    state = "negative" if value < 0 else _state(kind, math.nan, None, limit, local_exponent)
    return _document(parameter, kind, state, _words(state, parameter, falling, growing, limit, None, None,
                                                    negative_from, value_text),
                     limit, None, None, None, negative_from, local_exponent)
