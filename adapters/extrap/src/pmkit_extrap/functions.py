"""PMNF functions both ways between pmkit and Extra-P, and Extra-P hypotheses for pmkit models.

pmkit → Extra-P uses Extra-P's standard types only (``ConstantFunction``,
``SingleParameterFunction`` of ``CompoundTerm``/``SimpleTerm``, ``MultiParameterFunction`` of
``MultiParameterTerm``, and for a segmented one-parameter model the ``SegmentedFunction`` of
Extra-P's Segmented modeler) with exponents as Extra-P ``Fraction``\\ s, so any Extra-P opens the result.
Extra-P → pmkit goes through Extra-P's own JSON form of the function and pmkit's ``.extra-p``
reader, so that files and in-memory objects are converted by the same code.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from extrap.entities.fraction import Fraction as ExtrapFraction
from extrap.entities.functions import (
    ConstantFunction,
    FunctionSchema,
    MultiParameterFunction,
    SegmentedFunction,
    SingleParameterFunction,
)
from extrap.entities.functions import Function as ExtrapFunction
from extrap.entities.hypotheses import (
    ConstantHypothesis,
    Hypothesis,
    MultiParameterHypothesis,
    SingleParameterHypothesis,
)
from extrap.entities.measurement import Measure
from extrap.entities.terms import CompoundTerm, MultiParameterTerm, SimpleTerm

from pmkit.models import ChangePoint, Model, Quality, Segment
from pmkit.pmnf import Factor, Function
from pmkit.readers.extrap_experiment import function_from_json


def _fraction(value) -> ExtrapFraction:
    return ExtrapFraction(value.numerator, value.denominator)


def _compound(factor: Factor) -> CompoundTerm:
    term = CompoundTerm()
    if factor.exponent != 0:
        term.add_simple_term(SimpleTerm("polynomial", _fraction(factor.exponent)))
    if factor.log_exponent != 0:
        term.add_simple_term(SimpleTerm("logarithm", _fraction(factor.log_exponent)))
    return term


def to_extrap_function(function: Function, parameters: Sequence[str]) -> ExtrapFunction:
    """pmkit's ``function`` as an Extra-P function over the experiment's ``parameters`` (in that order).

    Terms without factors are folded into the constant, as PMNF has one constant.
    """
    index = {name: i for i, name in enumerate(parameters)}
    missing = [p for t in function.terms for f in t.factors if f.parameter not in index for p in [f.parameter]]
    if missing:
        raise ValueError(f"the function uses parameters {sorted(set(missing))} that the experiment "
                         f"{list(parameters)} lacks")
    constant = function.constant + sum(t.coefficient for t in function.terms if not t.factors)
    terms = [t for t in function.terms if t.factors]
    if not terms:
        return ConstantFunction(constant)
    if len(parameters) == 1:
        out: ExtrapFunction = SingleParameterFunction()
        for term in terms:
            compound = _compound(term.factors[0])
            compound.coefficient = term.coefficient
            out.add_compound_term(compound)
    else:
        out = MultiParameterFunction()
        for term in terms:
            multi = MultiParameterTerm()
            multi.coefficient = term.coefficient
            for factor in sorted(term.factors, key=lambda f: index[f.parameter]):
                multi.add_parameter_term_pair((index[factor.parameter], _compound(factor)))
            out.add_compound_term(multi)
    out.constant_coefficient = constant
    return out


def to_pmkit_function(function: ExtrapFunction, parameters: Sequence[str]) -> Function:
    """An Extra-P function as pmkit's; ValueError for what PMNF cannot express (segmented functions:
    see :func:`to_pmkit_segments`)."""
    return function_from_json(FunctionSchema().dump(function), parameters)


def to_extrap_segmented(model: Model, parameters: Sequence[str]) -> SegmentedFunction:
    """A segmented one-parameter pmkit model as Extra-P's ``SegmentedFunction``: its segments'
    functions, each over ``[start, end]`` (the change point belongs to both; Extra-P takes the first)."""
    if len(parameters) != 1:
        raise ValueError("Extra-P's segmented functions have one parameter")
    pieces = []
    for segment in model.segments:
        piece = to_extrap_function(segment.function, parameters)
        if isinstance(piece, ConstantFunction):  # a segment is a SingleParameterFunction in Extra-P's schema
            constant, piece = piece.constant_coefficient, SingleParameterFunction()
            piece.constant_coefficient = constant
        pieces.append(piece)
    return SegmentedFunction(pieces, [(segment.start, segment.end) for segment in model.segments])


def to_pmkit_segments(function: SegmentedFunction, parameters: Sequence[str], change_points: Sequence[float],
                      measured: Sequence[tuple[float, float]]) -> tuple[tuple[Segment, ...], ChangePoint]:
    """Extra-P's segmented function as pmkit segments (``measured``: each one's smallest and largest
    measured value) and change point.

    Extra-P's change points are measured values: one that both segments share, or the two around the
    change; pmkit's estimate is that point, or half way between the two (on a log scale where both
    are positive), and its interval spans them.
    """
    functions = [to_pmkit_function(piece, parameters) for piece in function.segments]
    low, high = min(change_points), max(change_points)
    value = math.sqrt(low * high) if low > 0 else (low + high) / 2
    last = len(functions) - 1
    segments = tuple(Segment(f, -math.inf if k == 0 else value, math.inf if k == last else value, measured[k])
                     for k, f in enumerate(functions))
    return segments, ChangePoint(parameters[0], value, low, high)


def to_extrap_hypothesis(function: Function, parameters: Sequence[str], quality: Quality,
                         measure: Measure = Measure.MEAN) -> Hypothesis:
    """An Extra-P hypothesis holding ``function`` with pmkit's quality figures as its costs."""
    extrap_function = to_extrap_function(function, parameters)
    if isinstance(extrap_function, ConstantFunction):
        hypothesis: Hypothesis = ConstantHypothesis(extrap_function, measure)
    elif len(parameters) == 1:
        hypothesis = SingleParameterHypothesis(extrap_function, measure)
    else:
        hypothesis = MultiParameterHypothesis(extrap_function, measure)
    hypothesis._RSS = quality.rss
    hypothesis._SMAPE = quality.smape
    hypothesis._AR2 = quality.adjusted_r2
    hypothesis._rRSS = hypothesis._nRSS = hypothesis._RE = math.nan
    hypothesis._costs_are_calculated = True
    return hypothesis


def no_model_hypothesis(measure: Measure = Measure.MEAN) -> Hypothesis:
    """What a series without a pmkit model gets in Extra-P: a NaN constant with NaN costs."""
    hypothesis = ConstantHypothesis(ConstantFunction(math.nan), measure)
    hypothesis._RSS = hypothesis._SMAPE = hypothesis._AR2 = math.nan
    hypothesis._rRSS = hypothesis._nRSS = hypothesis._RE = math.nan
    hypothesis._costs_are_calculated = True
    return hypothesis


def quality_of(hypothesis: Hypothesis) -> Quality:
    """pmkit's quality figures from an Extra-P hypothesis (NaN where Extra-P did not compute them)."""
    if not hypothesis._costs_are_calculated:
        return Quality()
    return Quality(rss=float(hypothesis._RSS), smape=float(hypothesis._SMAPE), adjusted_r2=float(hypothesis._AR2))
