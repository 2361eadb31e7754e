"""How a model behaves along one parameter: falls, flattens, turns, grows — and where it stops being physical.

Strong-scaling laws fall with p (``2 + 100/p``), flatten at their serial part, and may turn up again
(``a/p + b·log2 p``).  :func:`describe` reads a :class:`~pmkit.pmnf.Function` along one parameter
(the others fixed) from ``start`` on and returns a :class:`Behaviour`: its kind, its falling and
growing terms, the value it flattens at, its turning point (minimum) and the point where it turns
negative — what a view needs to write "falls as 1/p", "flattens at 2.0 s", "grows again beyond
p ≈ 900", or to say loudly that a time model predicts a negative value at a target.

The turning point and the first negative value are found numerically (the derivative is exact, a
PMNF function itself): sign changes on a grid of 16 points per doubling of the parameter from
``start`` to ``horizon`` (2⁴⁰ × ``start`` by default, far beyond any process count), refined in log
space (:data:`REFINE_POINTS`).  Changes of sign closer together than the grid are missed; PMNF laws of
one or two terms change direction at most once or twice, far apart on this scale.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from pmkit.pmnf import Function, Term, fraction_text

GRID_PER_DOUBLING = 16
"""Grid points per doubling of the parameter when looking for turning points and negative values."""
HORIZON_DOUBLINGS = 40
"""By default the search stops this many doublings beyond ``start`` (2⁴⁰ ≈ 10¹²)."""
REFINE_POINTS = 32
REFINE_ROUNDS = 10
"""A sign change is refined in log space by evaluating its bracket at ``REFINE_POINTS - 1`` inner points at
once and keeping the sub-bracket holding it, for up to ``REFINE_ROUNDS`` rounds: from a grid step of
1/16 doubling to about 1e-14 in 8 rounds, as exact as 60 bisection steps in an eighth of the
evaluations (a view describes every call path's law, so this is what it costs)."""
FLAT_ELASTICITY = 0.1
"""A law is flat at ``x`` when doubling ``x`` changes its value by less than about 7%
(``|d ln f / d ln x| < 0.1``); it falls or grows there otherwise."""

KINDS = ("constant", "falls", "grows", "falls then grows", "grows then falls")
"""What :attr:`Behaviour.kind` can be: the direction from ``start`` on, and the first change of it."""

Shape = tuple[Fraction, Fraction]
"""Exponents ``(α, β)`` of a term ``x^α·log2(x)^β`` in the parameter."""


@dataclass(frozen=True)
class Behaviour:
    """A law along one parameter, from ``start`` up to ``horizon``.

    ``kind`` is one of :data:`KINDS`.  ``falling`` is the shape of the falling term (negative
    exponent, positive coefficient) that contributes most at ``start`` — ``(-1, 0)`` reads "falls as
    1/p"; ``growing`` the shape of the term that grows fastest for large values (positive order,
    positive coefficient).  ``limit`` is the value the law flattens at for large values (its constant
    part) when every other term vanishes there, else None.  ``turning_point`` is the first minimum
    after ``start`` (where a falling law starts to grow again) and ``minimum`` its value; ``peak`` the
    first maximum.  ``negative_from`` is the smallest value of the parameter at which the law is
    below zero (``start`` itself when it already is), None when it stays non-negative up to
    ``horizon``.
    """

    parameter: str
    function: Function
    start: float
    horizon: float
    kind: str
    falling: Shape | None = None
    growing: Shape | None = None
    limit: float | None = None
    turning_point: float | None = None
    minimum: float | None = None
    peak: float | None = None
    negative_from: float | None = None

    @property
    def order(self) -> Shape:
        """The exponents ``(α, β)`` the law scales with for large values of the parameter: its
        fastest-growing term's, else ``(0, 0)`` when it flattens at a non-zero value, else its slowest
        falling term's — a key that sorts laws from falling fastest to growing fastest."""
        flat = (Fraction(0), Fraction(0))
        shapes = [_shape(t, self.parameter) for t in self.function.terms if t.coefficient != 0 and t.factors]
        top = max(shapes, default=flat)
        return top if top > flat or not self.limit else flat

    @property
    def turns_negative(self) -> bool:
        """Whether the law goes below zero somewhere in ``[start, horizon]``."""
        return self.negative_from is not None

    def negative_at(self, x: float) -> bool:
        """Whether the law's value at ``x`` is below zero (what a view must say loudly for a time)."""
        return bool(self.value(x) < 0)

    def value(self, x: float) -> float:
        return float(self.function.evaluate(float(x)))

    def local_exponent(self, x: float) -> float:
        """``d ln f / d ln x`` at ``x``: about -1 where the law falls as 1/p, 0 where it is flat, 1 where
        it grows linearly (NaN where the value is 0 or not finite)."""
        value = self.value(x)
        slope = float(self.function.derivative(self.parameter).evaluate(float(x)))
        if value == 0 or not (math.isfinite(value) and math.isfinite(slope)):
            return math.nan
        return x * slope / value

    def phase_at(self, x: float) -> str:
        """``"falling"``, ``"flat"`` or ``"growing"`` at ``x`` (see :data:`FLAT_ELASTICITY`); ``"negative"``
        where the value is below zero, ``"constant"`` for a constant law."""
        if self.kind == "constant":
            return "constant"
        if self.negative_at(x):
            return "negative"
        e = self.local_exponent(x)
        if not math.isfinite(e) or abs(e) < FLAT_ELASTICITY:
            return "flat"
        return "falling" if e < 0 else "growing"

    def parts(self, x: float) -> tuple[float, float, float]:
        """The law at ``x`` split into its constant part, its falling terms (negative order) and the
        rest (logarithmic and polynomial terms), so that the three add up to the value."""
        constant, falling, rest = self.function.constant, 0.0, 0.0
        for term in self.function.terms:
            value = term.coefficient * float(term.basis({self.parameter: np.array([float(x)])}, 1)[0])
            alpha, beta = _shape(term, self.parameter)
            if (alpha, beta) == (0, 0):
                constant += value
            elif (alpha, beta) < (0, 0):
                falling += value
            else:
                rest += value
        return constant, falling, rest

    def text(self, at: float | None = None, value_text: Callable[[float], str] = lambda v: f"{v:.3g}") -> str:
        """Plain words for the law, e.g. ``falls as 1/p``, ``flattens at 2``, ``falls as 1/p, grows again
        beyond p ≈ 900``; with ``at`` (a target), what holds there.  ``value_text`` formats values
        (a view passes its unit formatting)."""
        p = self.parameter
        if self.kind == "constant":
            return "constant"
        if self.kind == "grows":
            return f"grows as {shape_text(self.growing, p)}" if self.growing else "grows"
        falls = f"falls as {shape_text(self.falling, p)}" if self.falling else "falls"
        if self.kind == "grows then falls":
            return f"grows, then falls beyond {p} ≈ {_round(self.peak)}"
        if self.kind == "falls then grows":
            return f"{falls}, grows again beyond {p} ≈ {_round(self.turning_point)}"
        if self.limit is not None and self.limit > 0 and at is not None and self.phase_at(at) == "flat":
            return f"flattens at {value_text(self.limit)}"
        if self.negative_from is not None:
            return f"{falls}, negative beyond {p} ≈ {_round(self.negative_from)}"
        return falls


@lru_cache(maxsize=1024)
def shape_text(shape: Shape | None, parameter: str) -> str:
    """``(-1, 0)`` → ``1/p``, ``(-1/2, 0)`` → ``1/p^(1/2)``, ``(1, 1)`` → ``p·log2(p)``, ``(0, 0)`` → ``1``
    (made once per shape: a view writes the same few for every row)."""
    if shape is None or shape == (0, 0):
        return "1"
    alpha, beta = shape
    parts = []
    if alpha:
        magnitude = abs(alpha)
        power = parameter if magnitude == 1 else f"{parameter}^{_exponent(magnitude)}"
        parts.append(power)
    if beta:
        parts.append(f"log2({parameter})" if beta == 1 else f"log2({parameter})^{_exponent(beta)}")
    body = "·".join(parts)
    return f"1/{body}" if alpha < 0 else body


def _exponent(value: Fraction) -> str:
    text = fraction_text(value)
    return text if value.denominator == 1 and value > 0 else f"({text})"


def _round(value: float | None) -> str:
    if value is None:
        return "?"
    return f"{float(f'{value:.2g}'):g}" if value >= 10 else f"{value:.2g}"


def _shape(term: Term, parameter: str) -> Shape:
    return term.exponent_of(parameter)


def describe(function: Function, parameter: str | None = None, start: float = 1.0,
             fixed: Mapping[str, float] | None = None, horizon: float | None = None) -> Behaviour:
    """How ``function`` behaves along ``parameter`` (default: its only one) from ``start`` on.

    ``fixed`` gives the other parameters' values (see :meth:`Function.along`); ``horizon`` bounds the
    search for turning points and negative values (default ``start`` × 2⁴⁰).  ``start`` must be > 0.
    """
    if parameter is None:
        if len(function.parameters) != 1:
            raise ValueError(f"name the parameter: the function has {list(function.parameters)}")
        parameter = function.parameters[0]
    if not start > 0:
        raise ValueError(f"start must be positive, got {start}")
    line = function.along(parameter, fixed)
    horizon = float(horizon) if horizon is not None else start * 2.0 ** HORIZON_DOUBLINGS
    if not horizon > start:
        raise ValueError(f"horizon {horizon} must be above start {start}")
    terms = [t for t in line.terms if t.coefficient != 0 and t.factors]
    constant = line.constant + sum(t.coefficient for t in line.terms if not t.factors)
    if not terms:
        negative = start if constant < 0 else None
        return Behaviour(parameter, line, start, horizon, "constant", limit=constant, negative_from=negative)

    shapes = [_shape(t, parameter) for t in terms]
    falling_terms = [(t, s) for t, s in zip(terms, shapes, strict=True) if s < (0, 0) and t.coefficient > 0]
    falling = None
    if falling_terms:
        at_start = [abs(t.coefficient * float(t.basis({parameter: np.array([start])}, 1)[0])) for t, _ in falling_terms]
        falling = falling_terms[int(np.argmax(at_start))][1]
    rising = [s for t, s in zip(terms, shapes, strict=True) if s > (0, 0) and t.coefficient > 0]
    growing = max(rising) if rising else None
    limit = constant if all(s < (0, 0) for s in shapes) else None

    grid = _grid(start, horizon)
    if len(terms) == 1 and start >= 1 and 0 in shapes[0] and not (shapes[0][1] < 0 and start == 1):
        kind, negative_from = _monotone(terms[0].coefficient, shapes[0], constant, start, float(grid[-1]))
        return Behaviour(parameter, line, start, horizon, kind, falling, growing, limit, negative_from=negative_from)
    slope = line.derivative(parameter)
    slopes = np.asarray(slope.evaluate(grid), dtype=float)
    extrema = _sign_changes(slope, grid, slopes)
    minima = [x for x, rising_after in extrema if rising_after]
    maxima = [x for x, rising_after in extrema if not rising_after]
    first_slope = _first_finite(slopes)
    if not extrema:
        kind = "falls" if first_slope < 0 else "grows"
    elif extrema[0][1]:
        kind = "falls then grows"
    else:
        kind = "grows then falls"
    values = np.asarray(line.evaluate(grid), dtype=float)
    negative_from = None
    if values[0] < 0:
        negative_from = start
    else:
        crossings = [x for x, rising_after in _sign_changes(line, grid, values) if not rising_after]
        negative_from = crossings[0] if crossings else None
    turning = minima[0] if minima else None
    return Behaviour(parameter, line, start, horizon, kind, falling, growing, limit, turning,
                     None if turning is None else float(line.evaluate(turning)),
                     maxima[0] if maxima else None, negative_from)


@lru_cache(maxsize=16)
def _grid(start: float, horizon: float) -> np.ndarray:
    """The search grid from ``start`` to ``horizon``, :data:`GRID_PER_DOUBLING` points per doubling
    (read-only): made once per (start, horizon), which a view's every row shares."""
    grid = start * 2.0 ** (np.arange(int(math.log2(horizon / start) * GRID_PER_DOUBLING) + 1) / GRID_PER_DOUBLING)
    grid.flags.writeable = False
    return grid


def _first_finite(values: np.ndarray) -> float:
    """The first finite, non-zero value (a slope of 0 at the start, as of ``log2(p)^2`` at p = 1, says
    nothing of the direction); 0 when there is none."""
    finite = values[np.isfinite(values) & (values != 0)]
    return float(finite[0]) if finite.size else 0.0


def _monotone(coefficient: float, shape: Shape, constant: float, start: float, end: float
              ) -> tuple[str, float | None]:
    """The kind and first negative value of ``constant + coefficient·x^α`` or ``constant +
    coefficient·log2(x)^β`` from ``start`` ≥ 1 to ``end`` (the grid's last point), in closed form: one such
    term is monotone there, so the grid search would find no turning point, and where the law crosses
    zero is a root.  Most models are of this form; the search costs ten times as much."""
    alpha, beta = float(shape[0]), float(shape[1])
    kind = "grows" if (coefficient > 0) == (alpha > 0 or beta > 0) else "falls"
    if constant + coefficient * _term_value(alpha, beta, start) < 0:
        return kind, start
    if kind == "grows" or not constant + coefficient * _term_value(alpha, beta, end) < 0:
        return kind, None
    return kind, _root(coefficient, alpha, beta, constant)


def _term_value(alpha: float, beta: float, x: float) -> float:
    """``x^α`` (β = 0) or ``log2(x)^β`` (α = 0), as :func:`_monotone` evaluates one term."""
    return x ** alpha if beta == 0 else math.log2(x) ** beta


def _root(coefficient: float, alpha: float, beta: float, constant: float) -> float:
    """Where ``constant + coefficient·x^α`` (β = 0) or ``constant + coefficient·log2(x)^β`` (α = 0) is zero."""
    level = -constant / coefficient  # the term's value at the root, positive between start and end
    return level ** (1 / alpha) if beta == 0 else 2.0 ** (level ** (1 / beta))


def _sign_changes(function: Function, grid: np.ndarray, values: np.ndarray | None = None
                  ) -> list[tuple[float, bool]]:
    """Where ``function`` changes sign on ``grid`` (refined by bisection in log space), and whether it
    is positive after each change."""
    if values is None:
        values = np.asarray(function.evaluate(grid), dtype=float)
    sign = np.sign(np.where(np.isfinite(values), values, 0.0))
    # carry the last non-zero sign over zeros, so a touch of zero is not a change
    nonzero = np.flatnonzero(sign)
    if nonzero.size < 2:
        return []
    changes = nonzero[1:][sign[nonzero[1:]] != sign[nonzero[:-1]]]
    previous = nonzero[np.searchsorted(nonzero, changes) - 1]
    out = []
    for lo_i, hi_i in zip(previous, changes, strict=True):
        lo, hi = math.log(grid[lo_i]), math.log(grid[hi_i])
        lo_sign = sign[lo_i]
        for _ in range(REFINE_ROUNDS):  # each round evaluates the bracket at once and keeps 1/32 of it
            steps = np.linspace(lo, hi, REFINE_POINTS + 1)[1:-1]
            values = np.asarray(function.evaluate(np.exp(steps)), dtype=float)
            same = np.isfinite(values) & (np.sign(values) == lo_sign)
            first = int(np.argmin(same)) if not same.all() else len(steps)
            lo, hi = (steps[first - 1] if first else lo), (steps[first] if first < len(steps) else hi)
            if hi - lo < 1e-14 * max(1.0, abs(lo)):
                break
        out.append((math.exp(0.5 * (lo + hi)), bool(sign[hi_i] > 0)))
    return out
