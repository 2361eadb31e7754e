"""Performance Model Normal Form (PMNF) functions with exact rational exponents.

A PMNF function is ``c0 + Σ_k c_k · Π_l x_l^(i_kl) · log2(x_l)^(j_kl)``.  Exponents are kept as
:class:`fractions.Fraction` so that ``2/3`` stays ``2/3`` through fitting, printing and JSON.
Functions evaluate vectorized over many points, print in Extra-P's style and in a pretty style,
know their lead-order term at a point, and round-trip through JSON.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

ExponentLike = Fraction | int | str | float


def as_fraction(value: ExponentLike) -> Fraction:
    """Turn an exponent given as Fraction, int or ``"2/3"`` string into an exact Fraction.

    Floats are accepted only when they are exact binary fractions with a small denominator
    (``0.5``, ``0.25``): a float like ``0.6667`` is refused rather than silently approximated.
    """
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool):
        raise TypeError("an exponent cannot be a bool")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):
        return Fraction(value.strip())
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"exponent {value!r} is not finite")
        exact = Fraction(value)
        if exact.denominator > 1024:
            raise ValueError(f"exponent {value!r} is not an exact fraction; pass it as a string like '2/3'")
        return exact
    raise TypeError(f"cannot use {type(value).__name__} as an exponent")


def fraction_text(value: Fraction) -> str:
    """``Fraction(2, 3)`` → ``"2/3"``, ``Fraction(1)`` → ``"1"``."""
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _number_text(value: float, digits: int) -> str:
    return number_texts([value], digits)[0]


def number_texts(values: Iterable[float], digits: int) -> list[str]:
    """Numbers as the notations write them: ``digits`` significant digits, exponents without a leading
    zero (``1e+5``); many at once, as the model writers need them."""
    texts = ["%.*g" % (digits, v) for v in values]  # noqa: UP031 -- as f"{v:.{digits}g}", twice as fast
    return [t.replace("e+0", "e+").replace("e-0", "e-") if "e" in t else t for t in texts]


def _extrap_term(coefficient: str, body: str) -> str:
    return f"{coefficient} * {body}" if body else coefficient


def _pretty_term(magnitude: str, body: str) -> str:
    return f"{magnitude}·{body}" if body else magnitude


def extrap_notation(constant: str, terms: Sequence[tuple[str, str]]) -> str:
    """Extra-P's notation of ``constant + Σ coefficient · body`` from the texts of the constant and of each
    term's coefficient (:func:`number_texts`) and body (:meth:`Term.extrap_body`): the one place that
    notation is written, for a :class:`Function` and for the columns of many models."""
    text = constant
    for coefficient, body in terms:
        text += f" + {_extrap_term(coefficient, body)}"
    return text.replace("+ -", "- ")


def pretty_notation(constant: str | None, terms: Sequence[tuple[bool, str, str]]) -> str:
    """The compact notation from the constant's text (None: left out) and each term's sign (negative or
    not), magnitude text and body (:meth:`Term.pretty_body`)."""
    parts = [] if constant is None else [constant]
    for negative, magnitude, body in terms:
        text = _pretty_term(magnitude, body)
        parts.append((f"- {text}" if negative else f"+ {text}") if parts else (f"-{text}" if negative else text))
    return " ".join(parts)


def shows_constant(constant: float, terms: int) -> bool:
    """Whether the compact notation writes the constant: when it is not 0, or there are no terms."""
    return constant != 0 or not terms


@dataclass(frozen=True, order=True)
class Factor:
    """``x^exponent · log2(x)^log_exponent`` for one parameter ``x``."""

    parameter: str
    exponent: Fraction = Fraction(0)
    log_exponent: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "exponent", as_fraction(self.exponent))
        object.__setattr__(self, "log_exponent", as_fraction(self.log_exponent))

    @property
    def is_trivial(self) -> bool:
        """True when both exponents are zero, i.e. the factor is the constant 1."""
        return self.exponent == 0 and self.log_exponent == 0

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Value of the factor at each value of ``x`` (float array)."""
        x = np.asarray(x, dtype=float)
        out = np.ones_like(x)
        if self.exponent != 0:
            out = out * np.power(x, float(self.exponent))
        if self.log_exponent != 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                out = out * np.power(np.log2(x), float(self.log_exponent))
        return out

    def extrap_text(self) -> str:
        parts = []
        if self.exponent != 0:
            parts.append(f"{self.parameter}^({fraction_text(self.exponent)})")
        if self.log_exponent != 0:
            parts.append(f"log2({self.parameter})^({fraction_text(self.log_exponent)})")
        return " * ".join(parts)

    def pretty_text(self) -> str:
        """Compact notation: ``p^(3/2)·log2(p)^2``."""
        return self._text(_pretty_exponent, "{p}^{e}", "log2({p})", "log2({p})^{e}")

    def order_text(self) -> str:
        """The factor as an order of growth is written: ``p^1.5``, ``p^(2/3)``, ``p·log p``, ``log^2 p``."""
        return self._text(_order_exponent, "{p}^{e}", "log {p}", "log^{e} {p}")

    def _text(self, exponent: Callable[[Fraction], str], power: str, log: str, log_power: str) -> str:
        parts = []
        if self.exponent == 1:
            parts.append(self.parameter)
        elif self.exponent != 0:
            parts.append(power.format(p=self.parameter, e=exponent(self.exponent)))
        if self.log_exponent == 1:
            parts.append(log.format(p=self.parameter))
        elif self.log_exponent != 0:
            parts.append(log_power.format(p=self.parameter, e=exponent(self.log_exponent)))
        return "·".join(parts)

    def to_json(self) -> dict[str, str]:
        return {
            "parameter": self.parameter,
            "exponent": fraction_text(self.exponent),
            "log_exponent": fraction_text(self.log_exponent),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Factor:
        return cls(str(data["parameter"]), as_fraction(data.get("exponent", 0)),
                   as_fraction(data.get("log_exponent", 0)))


def _pretty_exponent(value: Fraction) -> str:
    text = fraction_text(value)
    return text if value.denominator == 1 and value > 0 else f"({text})"


DECIMAL_DENOMINATORS = (2, 4, 5, 8)
"""Exponents with these denominators read better as decimals in an order of growth (``p^1.5``)."""


def _order_exponent(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    if value.denominator in DECIMAL_DENOMINATORS:
        return f"{float(value):g}"
    return f"({fraction_text(value)})"


@dataclass(frozen=True)
class Term:
    """``coefficient · Π factors``; factors are kept sorted by parameter, trivial ones dropped."""

    coefficient: float
    factors: tuple[Factor, ...] = ()

    def __post_init__(self) -> None:
        factors = self.factors
        if len(factors) == 1 and type(factors) is tuple:  # most terms: nothing to sort or to compare
            kept = () if factors[0].is_trivial else factors
        else:
            kept = tuple(sorted(f for f in factors if not f.is_trivial))
            names = [f.parameter for f in kept]
            if len(set(names)) != len(names):
                raise ValueError(f"a term has more than one factor for the same parameter: {names}")
        object.__setattr__(self, "coefficient", float(self.coefficient))
        object.__setattr__(self, "factors", kept)

    def shape(self) -> tuple[Factor, ...]:
        """The term without its coefficient: what a hypothesis is made of."""
        return self.factors

    def basis(self, columns: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        """The term's value with coefficient 1 at ``n`` points, given one column per parameter."""
        out = np.ones(n)
        for factor in self.factors:
            out = out * factor.evaluate(columns[factor.parameter])
        return out

    def exponent_of(self, parameter: str) -> tuple[Fraction, Fraction]:
        """(polynomial, logarithmic) exponent of ``parameter`` in this term; zeros if absent."""
        for factor in self.factors:
            if factor.parameter == parameter:
                return factor.exponent, factor.log_exponent
        return Fraction(0), Fraction(0)

    def extrap_body(self) -> str:
        """The factors in Extra-P's notation, ``p^(1) * log2(p)^(1)`` (empty for a constant term)."""
        return " * ".join(f.extrap_text() for f in self.factors)

    def pretty_body(self) -> str:
        """The factors in compact notation, ``p·log2(p)`` (empty for a constant term)."""
        return "·".join(f.pretty_text() for f in self.factors)

    def extrap_text(self, digits: int = 10) -> str:
        return _extrap_term(_number_text(self.coefficient, digits), self.extrap_body())

    def pretty_text(self, digits: int = 4) -> str:
        """The term without its sign: ``0.02·p·log2(p)``."""
        return _pretty_term(_number_text(abs(self.coefficient), digits), self.pretty_body())

    def to_json(self) -> dict[str, Any]:
        return {"coefficient": self.coefficient, "factors": [f.to_json() for f in self.factors]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Term:
        return cls(float(data["coefficient"]), tuple(Factor.from_json(f) for f in data.get("factors", ())))


@lru_cache(maxsize=4096)
def _factor_derivative(factor: Factor) -> tuple[tuple[float, Factor] | None, tuple[float, Factor] | None]:
    """The two parts of ``d(x^a·log2(x)^b)/dx``: ``(a, x^(a-1)·log2(x)^b)`` and ``(b, x^(a-1)·log2(x)^(b-1))``
    (None where ``a`` or ``b`` is 0), made once per factor — the exponents' fractions are slow to redo."""
    a, b = factor.exponent, factor.log_exponent
    return ((float(a), Factor(factor.parameter, a - 1, b)) if a != 0 else None,
            (float(b), Factor(factor.parameter, a - 1, b - 1)) if b != 0 else None)


@dataclass(frozen=True)
class Function:
    """A PMNF function of named parameters: ``constant + Σ terms``."""

    parameters: tuple[str, ...]
    constant: float = 0.0
    terms: tuple[Term, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parameters", tuple(self.parameters))
        object.__setattr__(self, "constant", float(self.constant))
        object.__setattr__(self, "terms", tuple(self.terms))
        for term in self.terms:
            for factor in term.factors:
                if factor.parameter not in self.parameters:
                    raise ValueError(f"term uses parameter {factor.parameter!r}, "
                                     f"not one of {list(self.parameters)}")

    @property
    def is_constant(self) -> bool:
        """Whether no term depends on a parameter (every term has a zero coefficient or no factor)."""
        return all(t.coefficient == 0 or not t.factors for t in self.terms)

    def _columns(self, points: Any) -> tuple[dict[str, np.ndarray], int, bool]:
        if isinstance(points, Mapping):
            cols = {name: np.atleast_1d(np.asarray(points[name], dtype=float)) for name in self.parameters}
            sizes = {c.shape[0] for c in cols.values()} or {1}
            n = max(sizes)
            cols = {k: np.broadcast_to(v, (n,)) for k, v in cols.items()}
            scalar = all(np.ndim(points[name]) == 0 for name in self.parameters)
            return cols, n, scalar
        arr = np.asarray(points, dtype=float)
        scalar = arr.ndim == 0 or (arr.ndim == 1 and len(self.parameters) > 1)
        if arr.ndim == 0:
            arr = arr.reshape(1, 1)
        elif arr.ndim == 1:
            arr = arr.reshape(1, -1) if len(self.parameters) > 1 else arr.reshape(-1, 1)
        if arr.shape[1] != len(self.parameters):
            raise ValueError(f"points have {arr.shape[1]} coordinates, the function has "
                             f"{len(self.parameters)} parameters {list(self.parameters)}")
        return {name: arr[:, i] for i, name in enumerate(self.parameters)}, arr.shape[0], scalar

    def evaluate(self, points: Any) -> np.ndarray | float:
        """Value at each point.

        ``points`` is an array of shape (n, parameters), a 1-D array of values for a
        one-parameter function, a single point, or a mapping ``{name: values}``.  A single point
        gives a float.
        """
        cols, n, scalar = self._columns(points)
        out = np.full(n, self.constant)
        for term in self.terms:
            out = out + term.coefficient * term.basis(cols, n)
        return float(out[0]) if scalar else out

    __call__ = evaluate

    def term_values(self, point: Any) -> list[float]:
        """Value of each term at one point, in term order."""
        cols, n, _ = self._columns(point)
        return [float((t.coefficient * t.basis(cols, n))[0]) for t in self.terms]

    def lead_order_term(self, point: Any) -> Term | None:
        """The term with the largest magnitude at ``point``; None for a constant function."""
        if not self.terms:
            return None
        values = self.term_values(point)
        best = max(range(len(values)), key=lambda k: (abs(values[k]) if math.isfinite(values[k]) else -1.0))
        return self.terms[best]

    def along(self, parameter: str, fixed: Mapping[str, float] | None = None) -> Function:
        """The one-parameter function of ``parameter`` with every other parameter fixed at ``fixed``.

        Factors of the other parameters are evaluated into the coefficients, terms without
        ``parameter`` into the constant, so ``(2 + 3·p·n).along("p", {"n": 10})`` is ``2 + 30·p``.
        """
        if parameter not in self.parameters:
            raise ValueError(f"no parameter {parameter!r}; the function has {list(self.parameters)}")
        fixed = dict(fixed or {})
        missing = [p for p in self.parameters if p != parameter and p not in fixed]
        if missing and any(f.parameter in missing for t in self.terms for f in t.factors):
            raise ValueError(f"along({parameter!r}) needs values for {missing}")
        constant = self.constant
        terms = []
        for term in self.terms:
            coefficient = term.coefficient
            kept = []
            for factor in term.factors:
                if factor.parameter == parameter:
                    kept.append(factor)
                else:
                    coefficient *= float(factor.evaluate(np.array([fixed[factor.parameter]], dtype=float))[0])
            if kept:
                terms.append(Term(coefficient, tuple(kept)))
            else:
                constant += coefficient
        return Function((parameter,), constant, tuple(terms))

    def derivative(self, parameter: str) -> Function:
        """``∂f/∂parameter`` as a PMNF function (over the same parameters).

        ``d(x^a·log2(x)^b)/dx = a·x^(a-1)·log2(x)^b + (b / ln 2)·x^(a-1)·log2(x)^(b-1)``.
        """
        if parameter not in self.parameters:
            raise ValueError(f"no parameter {parameter!r}; the function has {list(self.parameters)}")
        terms = []
        for term in self.terms:
            own = [f for f in term.factors if f.parameter == parameter]
            if not own or term.coefficient == 0:
                continue
            (factor,) = own
            others = tuple(f for f in term.factors if f.parameter != parameter)
            power, log = _factor_derivative(factor)
            if power is not None:
                terms.append(Term(term.coefficient * power[0], (*others, power[1])))
            if log is not None:
                terms.append(Term(term.coefficient * log[0] / math.log(2.0), (*others, log[1])))
        return Function(self.parameters, 0.0, tuple(terms))

    def extrap_text(self, digits: int = 10) -> str:
        """Extra-P's notation: ``3.1 + 0.02 * p^(1) * log2(p)^(1)``."""
        return extrap_notation(_number_text(self.constant, digits),
                               [(_number_text(t.coefficient, digits), t.extrap_body()) for t in self.terms])

    def pretty_text(self, digits: int = 4) -> str:
        """Compact notation for people: ``3.1 + 0.02·p·log2(p)``."""
        constant = _number_text(self.constant, digits) if shows_constant(self.constant, len(self.terms)) else None
        return pretty_notation(constant, [(t.coefficient < 0, _number_text(abs(t.coefficient), digits), t.pretty_body())
                                          for t in self.terms])

    def __str__(self) -> str:
        return self.pretty_text()

    def to_json(self) -> dict[str, Any]:
        """The function as the JSON object of pmkit's output schema."""
        return {"constant": self.constant, "terms": [t.to_json() for t in self.terms]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], parameters: Sequence[str] | None = None) -> Function:
        """Inverse of :meth:`to_json`; parameters default to those the terms mention, sorted."""
        terms = tuple(Term.from_json(t) for t in data.get("terms", ()))
        if parameters is None:
            parameters = sorted({f.parameter for t in terms for f in t.factors})
        return cls(tuple(parameters), float(data.get("constant", 0.0)), terms)


def simple_function(parameter: str, constant: float, coefficient: float, exponent: ExponentLike,
                    log_exponent: ExponentLike, parameters: Iterable[str] | None = None) -> Function:
    """``constant + coefficient · x^exponent · log2(x)^log_exponent``: the one-term PMNF."""
    factor = Factor(parameter, as_fraction(exponent), as_fraction(log_exponent))
    terms = () if factor.is_trivial or coefficient == 0 else (Term(coefficient, (factor,)),)
    params = tuple(parameters) if parameters is not None else (parameter,)
    return Function(params, constant, terms)
