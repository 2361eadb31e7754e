"""Stern–Brocot refinement of one exponent: mediants and the search-interval update of the paper.

The refining modeler (paper 000, section 3.3) searches an exponent between a lower bound, the best
exponent so far and an upper bound.  Each step looks at the two mediants ``(n1+n2)/(d1+d2)`` between
the best exponent and each bound and moves or narrows the interval.  Because the bounds start as
Farey neighbours (consecutive integers in the paper; neighbours in pmkit's start table of
denominators ≤ 5), every mediant is the next node on a Stern–Brocot path, so no simpler fraction
in between is ever skipped.  This module is the exact, scalar statement of those rules; the batched
kernels in :mod:`pmkit.fitting.kernels` apply the same rules to integer (numerator, denominator)
arrays and the tests hold them to this reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

LEFT, CENTER, RIGHT = -1, 0, 1
"""Which hypothesis of a step fitted best: the left mediant, the current best, the right mediant."""


def mediant(a: Fraction, b: Fraction) -> Fraction:
    """``(a.num + b.num) / (a.den + b.den)``: lies strictly between ``a`` and ``b`` when they differ."""
    return Fraction(a.numerator + b.numerator, a.denominator + b.denominator)


@dataclass(frozen=True)
class Interval:
    """Search state of one slice: ``lower ≤ best ≤ upper``; ``lower == best`` means no left side."""

    lower: Fraction
    best: Fraction
    upper: Fraction

    @classmethod
    def around_integer(cls, best: int, minimum: int = 0) -> Interval:
        """Initial state after the integer start: predecessor and successor, clamped at ``minimum``."""
        return cls(Fraction(max(best - 1, minimum)), Fraction(best), Fraction(best + 1))

    def candidates(self) -> tuple[Fraction | None, Fraction]:
        """The left mediant (None when there is no room on the left) and the right mediant."""
        left = None if self.lower == self.best else mediant(self.lower, self.best)
        return left, mediant(self.best, self.upper)

    def step(self, winner: int) -> Interval:
        """The state after a step whose best-fitting hypothesis was ``winner`` (LEFT, CENTER, RIGHT).

        The left mediant winning cuts the right part off (the old best becomes the upper bound), the
        right mediant winning cuts the left part off; if neither beats the best, the mediants become
        the new bounds.
        """
        left, right = self.candidates()
        if winner == LEFT:
            if left is None:
                raise ValueError("no left mediant to win: the lower bound equals the best exponent")
            return Interval(self.lower, left, self.best)
        if winner == RIGHT:
            return Interval(self.best, right, self.upper)
        return Interval(self.lower if left is None else left, self.best, right)


def refinement_path(interval: Interval, winners: list[int]) -> list[Interval]:
    """The states visited from ``interval`` when the steps are won by ``winners`` in turn."""
    states = [interval]
    for winner in winners:
        states.append(states[-1].step(winner))
    return states
