"""APMT's fitted laws as functions: sums of scaled counter laws, evaluated and written as PMNF.

An APMT quantity is a sum of fitted counter laws, each scaled by a model parameter: a kernel's
compute time is ``CPI/f · instructions(p)``, its exposed memory time ``stall_cycles(p)/f``, a
collective's time ``a·visits(p)·log2(p) + b·bytes(p) + c·visits(p)``.  :class:`Combination` holds
such a sum over the rows of a :class:`~pmkit.fitting.laws.LawFits`, evaluates it, and writes it as
a :class:`~pmkit.pmnf.Function` for pmkit's views.  The paper's exponential law is not PMNF:
functions that contain one are :class:`ExponentialFunction`, a PMNF part plus ``a·e^(b·x)·log2(x)^j``
terms; pmkit's growth classes see only the PMNF part (the notes of such a model say so).
A :class:`Switch` is a sum that changes at a threshold of another law: Hockney's model of a
point-to-point call path whose bytes cross MPI's eager limit (below it one line, above it another).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from pmkit.fitting.laws import POWER_STEP, SHAPES, LawFits
from pmkit.pmnf import Factor, Function, Term


def _number_text(value: float, digits: int) -> str:
    return f"{value:.{digits}g}".replace("e+0", "e+").replace("e-0", "e-")


@dataclass(frozen=True)
class ExponentialFunction(Function):
    """A PMNF function plus exponential terms ``a · e^(b·x) · log2(x)^j`` of one parameter ``x``."""

    exponentials: tuple[tuple[float, float, int], ...] = ()
    exponential_parameter: str = ""

    def evaluate(self, points: Any) -> np.ndarray | float:  # type: ignore[override]
        base = super().evaluate(points)
        cols, n, scalar = self._columns(points)
        x = cols[self.exponential_parameter]
        extra = np.zeros(n)
        with np.errstate(all="ignore"):
            for a, b, j in self.exponentials:
                extra = extra + a * np.exp(b * x) * (np.log2(x) ** j if j else 1.0)
        total = np.asarray(base, dtype=float) + extra
        return float(total[0]) if scalar else total

    __call__ = evaluate

    @property
    def is_constant(self) -> bool:
        return super().is_constant and not self.exponentials

    def _exp_text(self, digits: int, pretty: bool) -> str:
        x = self.exponential_parameter
        parts = []
        for a, b, j in self.exponentials:
            log = (f"·log2({x})" if j == 1 else f"·log2({x})^{j}" if j else "") if pretty else \
                (f" * log2({x})^({j})" if j else "")
            body = f"e^({_number_text(b, digits)}·{x})" if pretty else f"exp({_number_text(b, digits)} * {x})"
            sign = "-" if a < 0 else "+"
            coefficient = _number_text(abs(a), digits)
            parts.append(f" {sign} {coefficient}{'·' if pretty else ' * '}{body}{log}")
        return "".join(parts)

    def extrap_text(self, digits: int = 10) -> str:
        return super().extrap_text(digits) + self._exp_text(digits, pretty=False)

    def pretty_text(self, digits: int = 4) -> str:
        return super().pretty_text(digits) + self._exp_text(digits, pretty=True)

    def __str__(self) -> str:
        return self.pretty_text()

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        out["exponentials"] = [{"coefficient": a, "rate": b, "log_exponent": j, "parameter": self.exponential_parameter}
                               for a, b, j in self.exponentials]
        return out


@dataclass(frozen=True)
class Piece:
    """``coefficient · law(x) · log2(x)^log`` for one row ``law`` of a :class:`LawFits`."""

    coefficient: float
    law: int
    log: int = 0


@dataclass(frozen=True)
class Switch:
    """``below`` where the law ``regressor`` is under ``at``, ``above`` elsewhere; ``low`` … ``high``
    bound the values of ``regressor`` the change may lie at."""

    regressor: int
    at: float
    below: Combination
    above: Combination
    low: float = math.nan
    high: float = math.nan

    def holds(self, fits: LawFits, x: np.ndarray | float) -> np.ndarray:
        """Whether ``above`` holds at each ``x``."""
        return np.atleast_1d(fits.evaluate(x)[self.regressor] >= self.at)

    def in_scale(self, fits: LawFits, x: np.ndarray) -> tuple[float, float, float] | None:
        """Where (and within which bounds) the law ``regressor`` crosses ``at`` (``low``, ``high``)
        between the smallest and the largest ``x``: the scale at which the switch happens; None when
        it does not cross there.  Bounds it does not cross in that range are clamped to it."""
        x = np.asarray(x, dtype=float)
        if x.size < 2 or not np.isfinite(x).all():
            return None
        grid = np.geomspace(x.min(), x.max(), 1024) if x.min() > 0 else np.linspace(x.min(), x.max(), 1024)
        regressor = fits.evaluate(grid)[self.regressor]

        def crossing(threshold: float) -> float | None:
            above = regressor >= threshold
            flips = np.flatnonzero(above[1:] != above[:-1])
            if flips.size == 0:
                return None
            i = int(flips[0])
            return float(np.sqrt(grid[i] * grid[i + 1])) if grid[i] > 0 else float((grid[i] + grid[i + 1]) / 2)

        change = crossing(self.at)
        if change is None:
            return None
        bounds = [change]
        for threshold in (self.low, self.high):
            if math.isfinite(threshold):
                found = crossing(threshold)
                nearer_start = abs(regressor[0] - threshold) < abs(regressor[-1] - threshold)
                bounds.append(found if found is not None else float(grid[0] if nearer_start else grid[-1]))
        return change, min(bounds), max(bounds)

    def scaled(self, factor: float) -> Switch:
        return Switch(self.regressor, self.at, self.below.scaled(factor), self.above.scaled(factor), self.low,
                      self.high)


@dataclass(frozen=True)
class Combination:
    """``constant + Σ pieces + Σ switches``: a sum of scaled laws (all rows of one :class:`LawFits`)."""

    constant: float = 0.0
    pieces: tuple[Piece, ...] = field(default_factory=tuple)
    switches: tuple[Switch, ...] = field(default_factory=tuple)

    def evaluate(self, fits: LawFits, x: np.ndarray | float) -> np.ndarray:
        x = np.atleast_1d(np.asarray(x, dtype=float))
        out = np.full(len(x), float(self.constant))
        for switch in self.switches:
            out = out + np.where(switch.holds(fits, x), switch.above.evaluate(fits, x), switch.below.evaluate(fits, x))
        if not self.pieces:
            return out
        values = fits.evaluate(x)
        with np.errstate(all="ignore"):
            for piece in self.pieces:
                part = piece.coefficient * values[piece.law]
                if piece.log:
                    part = part * np.log2(x) ** piece.log
                out = out + part
        return out

    def scaled(self, factor: float) -> Combination:
        return Combination(self.constant * factor,
                           tuple(Piece(p.coefficient * factor, p.law, p.log) for p in self.pieces),
                           tuple(s.scaled(factor) for s in self.switches))

    def __add__(self, other: Combination) -> Combination:
        return Combination(self.constant + other.constant, self.pieces + other.pieces, self.switches + other.switches)

    @property
    def empty(self) -> bool:
        return self.constant == 0 and not self.pieces and not self.switches

    def at(self, fits: LawFits, x: float) -> Combination:
        """The sum without switches: each switch replaced by the side that holds at ``x``."""
        out = Combination(self.constant, self.pieces)
        for switch in self.switches:
            out = out + (switch.above if bool(switch.holds(fits, x)[0]) else switch.below)
        return out

    def function(self, fits: LawFits, parameter: str, parameters: Sequence[str], at: float | None = None) -> Function:
        """The sum as one function of ``parameters`` (terms in ``parameter`` only), like terms merged;
        each switch contributes the side that holds at ``parameter`` = ``at`` (required with switches)."""
        if self.switches:
            if at is None:
                raise ValueError("a combination with switches needs the point where its function holds (at=)")
            return self.at(fits, at).function(fits, parameter, parameters)
        constant = float(self.constant)
        terms: dict[tuple[Fraction, Fraction], float] = {}
        exponentials: list[tuple[float, float, int]] = []
        for piece in self.pieces:
            shape = SHAPES[int(fits.shape[piece.law])]
            coefficients = fits.coefficients[piece.law]
            if fits.points[piece.law] == 0:
                continue
            if shape.exponential:
                exponentials.append((piece.coefficient * coefficients[0], float(coefficients[1]), piece.log))
                continue
            if shape.kind == "power":
                key = (Fraction(round(float(coefficients[1]) * POWER_STEP), POWER_STEP), Fraction(piece.log))
                terms[key] = terms.get(key, 0.0) + piece.coefficient * coefficients[0]
                continue
            base = piece.coefficient * coefficients[0]
            if piece.log:
                key = (Fraction(0), Fraction(piece.log))
                terms[key] = terms.get(key, 0.0) + base
            else:
                constant += base
            for k, (exponent, log_exponent) in enumerate(shape.terms):
                key = (exponent, log_exponent + piece.log)
                terms[key] = terms.get(key, 0.0) + piece.coefficient * coefficients[k + 1]
        built = tuple(Term(c, (Factor(parameter, e, j),)) for (e, j), c in sorted(terms.items())
                      if c != 0 and math.isfinite(c))
        if exponentials:
            return ExponentialFunction(tuple(parameters), constant, built, tuple(exponentials), parameter)
        return Function(tuple(parameters), constant, built)


def law(row: int, coefficient: float = 1.0) -> Combination:
    """One law, scaled."""
    return Combination(0.0, (Piece(coefficient, row),))


def law_text(fits: LawFits, row: int, parameter: str) -> str:
    """A law as people read it, e.g. ``3.1e+09 + 2.4e+10/p`` — the shape's terms in ``parameter``."""
    return law(row).function(fits, parameter, (parameter,)).pretty_text(3)
