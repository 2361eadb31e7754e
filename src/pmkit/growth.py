"""Growth classes: how a model grows asymptotically — constant, logarithmic, polynomial of some degree.

A call path's growth class is its model's fastest-growing term with a positive coefficient, written
the way people write an order of growth (``p^1.5``, ``p·log p``; see
:meth:`pmkit.pmnf.Factor.order_text`).  The scaling analysis ranks call paths by it; the views colour
it by :attr:`Growth.level`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from pmkit.pmnf import Factor, Function, Term, fraction_text


@dataclass(frozen=True)
class Growth:
    """How a model grows asymptotically: the dominant term's factors, as a class and a label.

    ``kind`` is ``constant``, ``decreasing``, ``logarithmic`` or ``polynomial``; ``level`` orders
    the classes by how badly they scale (0 constant or decreasing, 1 logarithmic, 2 sub-linear,
    3 linear, 4 super-linear); ``label`` reads like ``p^1.5`` or ``p·log p``.
    """

    kind: str
    label: str
    level: int
    factors: tuple[Factor, ...] = ()

    @property
    def order(self) -> tuple[float, float, float]:
        """A key that sorts classes from slowest to fastest growth."""
        poly = [float(f.exponent) for f in self.factors]
        logs = [float(f.log_exponent) for f in self.factors]
        if self.kind == "decreasing":
            return (-1.0, 0.0, 0.0)
        return (max(poly, default=0.0), sum(poly), sum(logs))

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "label": self.label, "level": self.level,
                "exponents": [{"parameter": f.parameter, "exponent": fraction_text(f.exponent),
                               "log_exponent": fraction_text(f.log_exponent)} for f in self.factors]}


CONSTANT = Growth("constant", "constant", 0)
DECREASING = Growth("decreasing", "decreasing", 0)


def _term_order(term: Term) -> tuple[Fraction, Fraction]:
    return (sum((f.exponent for f in term.factors), Fraction(0)),
            sum((f.log_exponent for f in term.factors), Fraction(0)))


def growth_of(function: Function | None) -> Growth | None:
    """The growth class of ``function``: its fastest-growing term with a positive coefficient.

    A function whose fastest-growing term has a negative coefficient, or whose terms all have
    negative exponents, is ``decreasing``; one without terms is ``constant``.  None for no function.
    """
    if function is None:
        return None
    terms = [t for t in function.terms if t.coefficient != 0 and t.factors]
    if not terms:
        return CONSTANT
    top = max(terms, key=_term_order)
    if top.coefficient < 0 or _term_order(top) <= (0, 0):
        growing = [t for t in terms if t.coefficient > 0 and _term_order(t) > (0, 0)]
        if not growing or max(_term_order(t) for t in growing) < _term_order(top):
            return DECREASING
        top = max(growing, key=_term_order)
    label = "·".join(f.order_text() for f in top.factors)
    highest = max(f.exponent for f in top.factors)
    has_log = any(f.log_exponent > 0 for f in top.factors)
    if highest <= 0:
        return Growth("logarithmic", label, 1, top.factors)
    if highest < 1:
        level = 2
    elif highest == 1 and not has_log:
        level = 3
    else:
        level = 4
    return Growth("polynomial", label, level, top.factors)
