"""Many models as columns: the PMNF functions, quality figures and notes of a batch in a few arrays.

A batched modeler fits 100,000 series as arrays; a :class:`~pmkit.models.Model` and a
:class:`~pmkit.pmnf.Function` per series would cost more than the fit.  :class:`ModelColumns` keeps
the result as columns, and whatever needs every series reads them: the scaling analysis evaluates
all models at a point (:meth:`ModelColumns.evaluate`) and classifies their growth
(:meth:`ModelColumns.growth`), the writers of JSON, JSON Lines and Parquet stream from them
(:mod:`pmkit.writers`).  A ``Model`` is built only when one is asked for (:meth:`ModelColumns.model`,
``ModelSet[i]``).

Layout — a term table in compressed-row form, the layout of Arrow's list arrays::

    per series (n)   callpaths, metrics, has_function, c0, quality (n × 4: RSS, SMAPE,
                     adjusted R², cross-validated SMAPE), points, note_group, outlier_group,
                     term_start (n + 1)
    per term (T)     coefficient; exponent and log_exponent (T × parameters × 2: numerator and
                     denominator of the exact fraction; 0/1 where the parameter is absent)
    shared           parameters, note_groups (each a tuple of notes), outlier_groups (each a tuple of
                     points left out as outliers), modeler names (per series an index), options

The terms of series ``i`` are rows ``term_start[i]:term_start[i + 1]``, in the function's order.
Why this layout: the number of terms differs between series (none for a constant, one for a
refining law, two for a falling and a growing term, up to seven in a three-parameter combination),
so a padded matrix would waste space and need a sentinel; offsets cost 8 bytes a series, slicing
stays a view, and Arrow builds its list columns from the same offsets without copying.  Notes and
outliers are interned: a batch has few distinct note lists and left-out points, so each series
holds an index.

A model whose law changes at a threshold (:mod:`pmkit.modelers.segmented`) keeps, as
``Model.function`` does, the segment that holds beyond the measured range in ``c0``/``term_start``;
its segments and change point are kept beside the columns (``segments``: series index →
(segments, change point)) — few series change law, so a map costs less than another level of
columns, and whatever evaluates every series (:meth:`ModelColumns.evaluate`,
:meth:`ModelColumns.growth` at a point) takes each such series' segment at the point.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from pmkit.fitting.distinct import distinct
from pmkit.growth import Growth, growth_of
from pmkit.intervals import Uncertainty
from pmkit.models import ChangePoint, Model, Quality, Segment
from pmkit.pmnf import Factor, Function, Term, extrap_notation, number_texts, pretty_notation, shows_constant

QUALITY_FIELDS = ("rss", "smape", "adjusted_r2", "cv_smape")
"""The columns of :attr:`ModelColumns.quality`, in order (the keys of :meth:`Quality.to_json`)."""


NAN_SIGN = 2
SIGNS = {-1: -1.0, 0: 0.0, 1: 1.0, NAN_SIGN: math.nan}
"""Coefficient signs as :meth:`ModelColumns.growth` keys them, and a coefficient of each sign."""


@lru_cache(maxsize=4096)
def fraction(numerator: int, denominator: int) -> Fraction:
    """The exact exponent ``numerator/denominator`` (one shared object per value)."""
    return Fraction(numerator, denominator)


def exponent_pairs(value: Fraction) -> tuple[int, int]:
    """A Fraction as the (numerator, denominator) pair the columns hold."""
    return value.numerator, value.denominator


class Terms:
    """Collects the terms of many series in any order and lays them out by series (term_start).

    ``add(rows, coefficients, exponent, log_exponent)`` gives one term to each of ``rows``; the
    terms of a series keep the order of the ``add`` calls.  Exponents are (…, parameters, 2)
    integer arrays (numerator, denominator), one per row or one for all.
    """

    def __init__(self, count: int, parameters: int) -> None:
        self.count = count
        self.parameters = parameters
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, rows: np.ndarray, coefficients: np.ndarray, exponent: np.ndarray, log_exponent: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if rows.size == 0:
            return
        shape = (rows.size, self.parameters, 2)
        self._parts.append((rows, np.broadcast_to(np.asarray(coefficients, dtype=float), rows.shape),
                            np.broadcast_to(np.asarray(exponent, dtype=np.int64), shape),
                            np.broadcast_to(np.asarray(log_exponent, dtype=np.int64), shape)))

    def add_factors(self, rows: np.ndarray, coefficients: np.ndarray, factors: Sequence[Factor],
                    parameters: Sequence[str]) -> None:
        """One term ``coefficient · Π factors`` (the same factors for every row) for each of ``rows``."""
        exponent = np.zeros((len(parameters), 2), dtype=np.int64)
        exponent[:, 1] = 1
        log_exponent = exponent.copy()
        for factor in factors:
            p = parameters.index(factor.parameter)
            exponent[p] = exponent_pairs(factor.exponent)
            log_exponent[p] = exponent_pairs(factor.log_exponent)
        self.add(rows, coefficients, exponent, log_exponent)

    def build(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``term_start`` (count + 1), coefficient (T), exponent and log_exponent (T × parameters × 2)."""
        if not self._parts:
            empty = np.zeros((0, self.parameters, 2), dtype=np.int64)
            return np.zeros(self.count + 1, dtype=np.int64), np.zeros(0), empty, empty.copy()
        rows = np.concatenate([p[0] for p in self._parts])
        order = np.argsort(rows, kind="stable")
        counts = np.bincount(rows, minlength=self.count)
        start = np.zeros(self.count + 1, dtype=np.int64)
        np.cumsum(counts, out=start[1:])
        return (start, np.concatenate([p[1] for p in self._parts])[order],
                np.concatenate([p[2] for p in self._parts])[order], np.concatenate([p[3] for p in self._parts])[order])


def unique_rows(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct row of the integer matrix ``keys``, and per row the index of its
    distinct row (numbered in order of the rows' values, as ``np.unique(axis=0)`` numbers them).

    Each column is coded by its distinct values and the codes combined into one integer where they
    fit, so the rows are sorted as single numbers (``np.unique(axis=0)`` sorts them as records, several
    times slower for 100,000 rows).
    """
    keys = np.asarray(keys, dtype=np.int64).reshape(len(keys), -1)
    combined = np.zeros(len(keys), dtype=np.int64)
    room = 1
    for column in keys.T:
        values, _, codes = distinct(column)
        room *= len(values)
        if room >= 2 ** 62:
            _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
            return first, inverse.reshape(-1)
        combined = combined * len(values) + codes
    _, first, inverse = distinct(combined)
    return first, inverse


def intern_notes(codes: Sequence[np.ndarray], notes_of: Callable[[int], Sequence[str]]) -> tuple[np.ndarray, list]:
    """Per series the index of its notes in a list of distinct note tuples.

    ``codes`` are integer arrays (one value per series) that together decide a series' notes;
    ``notes_of(i)`` gives the notes of series ``i`` and is called once per distinct combination.
    """
    keys = np.stack([np.asarray(c, dtype=np.int64) for c in codes], axis=1)
    first, inverse = unique_rows(keys)
    return inverse, [tuple(notes_of(int(i))) for i in first]


def codes_of(values: Sequence[Any]) -> np.ndarray:
    """Per value the index of its first equal value's kind (values must be hashable)."""
    kinds: dict[Any, int] = {}
    return np.fromiter((kinds.setdefault(v, len(kinds)) for v in values), dtype=np.int64, count=len(values))


class ModelColumns:
    """The models of many series as columns; see the module docstring for the layout.

    Built by a modeler from its result arrays (``refining`` and ``multiparam`` do), or from Model
    objects with :meth:`from_models`.  ``options`` are shared by every series, and so is ``modeler``
    unless ``modeler_of`` gives the names and each series' index into them; ``outliers`` likewise
    gives each series' index into distinct tuples of left-out points (default: none).
    """

    def __init__(self, parameters: Sequence[str], callpaths: Sequence[str], metrics: Sequence[str], *,
                 has_function: np.ndarray, c0: np.ndarray, term_start: np.ndarray, coefficient: np.ndarray,
                 exponent: np.ndarray, log_exponent: np.ndarray, quality: np.ndarray, points: np.ndarray,
                 note_group: np.ndarray, note_groups: Sequence[tuple[str, ...]], modeler: str = "",
                 options: Mapping[str, Any] | None = None,
                 modeler_of: tuple[Sequence[str], np.ndarray] | None = None,
                 outliers: tuple[np.ndarray, Sequence[tuple[Mapping[str, float], ...]]] | None = None,
                 segments: Mapping[int, tuple[tuple[Segment, ...], ChangePoint]] | None = None,
                 uncertainty: Uncertainty | None = None) -> None:
        self.parameters = tuple(parameters)
        self.uncertainty = uncertainty
        """Every series' alternatives, behind the prediction intervals (:mod:`pmkit.intervals`), or None."""
        self.callpaths = callpaths
        self.metrics = metrics
        self.has_function = np.asarray(has_function, dtype=bool)
        self.c0 = np.asarray(c0, dtype=float)
        self.term_start = np.asarray(term_start, dtype=np.int64)
        self.coefficient = np.asarray(coefficient, dtype=float)
        self.exponent = np.asarray(exponent, dtype=np.int64)
        self.log_exponent = np.asarray(log_exponent, dtype=np.int64)
        self.quality = np.asarray(quality, dtype=float)
        self.points = np.asarray(points, dtype=np.int64)
        self.note_group = np.asarray(note_group, dtype=np.int64)
        self.note_groups = list(note_groups)
        self.options: Mapping[str, Any] = options if options is not None else {}
        n, terms = len(self.c0), len(self.coefficient)
        names, codes = modeler_of if modeler_of is not None else ([modeler], np.zeros(n, dtype=np.int64))
        self.modeler_names = list(names)
        self.modeler_of = np.asarray(codes, dtype=np.int64)
        self.own_functions: dict[int, Function] = {}
        """Series whose function is of a subclass of Function (a plugin's), which may evaluate or print
        itself its own way: they are evaluated, classified and printed through the object."""
        self.segments: dict[int, tuple[tuple[Segment, ...], ChangePoint]] = dict(segments or {})
        """Series whose law changes at a threshold: their segments and change point (see the module)."""
        group, groups = outliers if outliers is not None else (np.zeros(n, dtype=np.int64), [()])
        self.outlier_group = np.asarray(group, dtype=np.int64)
        self.outlier_groups = [tuple(points) for points in groups]
        if not (len(callpaths) == len(metrics) == len(self.has_function) == len(self.points) == n
                and len(self.note_group) == n and self.quality.shape == (n, len(QUALITY_FIELDS))
                and self.term_start.shape == (n + 1,) and self.term_start[-1] == terms
                and self.exponent.shape == self.log_exponent.shape == (terms, len(self.parameters), 2)):
            raise ValueError("model columns have inconsistent lengths")

    @classmethod
    def from_models(cls, parameters: Sequence[str], models: Sequence[Model]) -> ModelColumns:
        """The columns of Model objects (a third-party modeler's list, say).

        Each model keeps its modeler's name; the columns hold one set of options, the first model's
        (options are no part of the written forms; a ModelSet of objects returns the objects themselves).
        """
        parameters = tuple(parameters)
        n = len(models)
        has_function = np.zeros(n, dtype=bool)
        c0 = np.full(n, np.nan)
        quality = np.full((n, len(QUALITY_FIELDS)), np.nan)
        points = np.zeros(n, dtype=np.int64)
        notes: dict[tuple[str, ...], int] = {}
        note_group = np.zeros(n, dtype=np.int64)
        modelers: dict[str, int] = {}
        modeler_of = np.zeros(n, dtype=np.int64)
        outliers: dict[tuple, tuple[int, tuple[Mapping[str, float], ...]]] = {(): (0, ())}
        outlier_group = np.zeros(n, dtype=np.int64)
        rows: list[int] = []
        coefficients: list[float] = []
        exponents: list[list[int]] = []
        position = {name: p for p, name in enumerate(parameters)}
        for i, model in enumerate(models):
            q = model.quality
            quality[i] = (q.rss, q.smape, q.adjusted_r2, math.nan if q.cv_smape is None else q.cv_smape)
            points[i] = model.n_points
            note_group[i] = notes.setdefault(tuple(model.notes), len(notes))
            modeler_of[i] = modelers.setdefault(model.modeler, len(modelers))
            key = tuple(tuple(sorted(point.items())) for point in model.outliers)
            outlier_group[i] = outliers.setdefault(key, (len(outliers), tuple(model.outliers)))[0]
            if model.function is None:
                continue
            has_function[i] = True
            c0[i] = model.function.constant
            for term in model.function.terms:
                pairs = [0, 1] * (2 * len(parameters))
                for factor in term.factors:
                    if factor.parameter not in position:
                        raise ValueError(f"the model of {model.callpath} uses parameter {factor.parameter!r}, "
                                         f"not one of {list(parameters)}")
                    at = 2 * position[factor.parameter]
                    pairs[at:at + 2] = exponent_pairs(factor.exponent)
                    at += 2 * len(parameters)
                    pairs[at:at + 2] = exponent_pairs(factor.log_exponent)
                rows.append(i)
                coefficients.append(term.coefficient)
                exponents.append(pairs)
        terms = Terms(n, len(parameters))
        if rows:
            both = np.array(exponents, dtype=np.int64).reshape(len(rows), 2, len(parameters), 2)
            terms.add(np.array(rows), np.array(coefficients), both[:, 0], both[:, 1])
        term_start, coefficient, exponent, log_exponent = terms.build()
        first = models[0] if models else None
        columns = cls(parameters, [m.callpath for m in models], [m.metric for m in models], has_function=has_function,
                   c0=c0, term_start=term_start, coefficient=coefficient, exponent=exponent,
                   log_exponent=log_exponent, quality=quality, points=points, note_group=note_group,
                   note_groups=list(notes), options=first.options if first else {},
                   modeler_of=(list(modelers) or [""], modeler_of),
                   outliers=(outlier_group, [points for _, points in outliers.values()]))
        columns.own_functions = {i: m.function for i, m in enumerate(models)
                                 if m.function is not None and type(m.function) is not Function}
        columns.segments = {i: (m.segments, m.change_point) for i, m in enumerate(models)
                            if m.segmented and m.change_point is not None}
        return columns

    def __len__(self) -> int:
        return len(self.c0)

    # ------------------------------------------------------------------ shapes: distinct factor lists

    @cached_property
    def _shapes(self) -> tuple[np.ndarray, list[tuple[Factor, ...]]]:
        """Per term the index of its shape (its factors without the coefficient), and each shape's factors
        in :class:`Term`'s order."""
        terms = len(self.coefficient)
        if terms == 0:
            return np.zeros(0, dtype=np.int64), []
        keys = np.concatenate([self.exponent.reshape(terms, -1), self.log_exponent.reshape(terms, -1)], axis=1)
        first, inverse = unique_rows(keys)
        half = keys.shape[1] // 2
        shapes = []
        for key in keys[first].tolist():
            factors = []
            for p, name in enumerate(self.parameters):
                exponent = fraction(key[2 * p], key[2 * p + 1])
                log_exponent = fraction(key[half + 2 * p], key[half + 2 * p + 1])
                factors.append(Factor(name, exponent, log_exponent))
            shapes.append(Term(1.0, tuple(factors)).factors)
        return inverse, shapes

    @property
    def shape_of_term(self) -> np.ndarray:
        """Per term, the index of its shape in :attr:`shapes`."""
        return self._shapes[0]

    @property
    def shapes(self) -> list[tuple[Factor, ...]]:
        """The distinct factor lists of the terms (sorted and without trivial factors, as in :class:`Term`)."""
        return self._shapes[1]

    @cached_property
    def _bodies(self) -> tuple[list[str], list[str], list[list[dict[str, Any]]]]:
        """Each shape's body in Extra-P's and the compact notation (:meth:`Term.extrap_body`,
        :meth:`Term.pretty_body`) and its factors as JSON: made once, not for every chunk a writer asks for."""
        terms = [Term(1.0, f) for f in self.shapes]
        return ([t.extrap_body() for t in terms], [t.pretty_body() for t in terms],
                [[f.to_json() for f in shape] for shape in self.shapes])

    def shape_json(self) -> list[list[dict[str, Any]]]:
        """Each shape's factors as JSON (:meth:`Factor.to_json`), one list per shape, shared: not to be changed."""
        return self._bodies[2]

    @cached_property
    def series_of_term(self) -> np.ndarray:
        """Per term, the series it belongs to."""
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.term_start))

    @cached_property
    def rank_of_term(self) -> np.ndarray:
        """Per term, its position in its series' function (0 for the first term)."""
        return np.arange(len(self.coefficient), dtype=np.int64) - self.term_start[self.series_of_term]

    # ------------------------------------------------------------------ objects on demand

    @cached_property
    def _term_factors(self) -> list[tuple[Factor, ...]]:
        shapes, of = self.shapes, self.shape_of_term
        return [shapes[s] for s in of.tolist()]

    def function(self, i: int) -> Function | None:
        """Series ``i``'s function (None where it has none)."""
        if not self.has_function[i]:
            return None
        start, stop = int(self.term_start[i]), int(self.term_start[i + 1])
        factors, coefficients = self._term_factors, self.coefficient
        terms = tuple(Term(float(coefficients[t]), factors[t]) for t in range(start, stop))
        return Function(self.parameters, float(self.c0[i]), terms)

    def model(self, i: int) -> Model:
        """Series ``i`` as a :class:`Model` object."""
        q = self.quality[i].tolist()
        function = self.function(i)
        if function is None and math.isnan(q[3]):
            q[3] = None  # as Quality() states it: no function, no cross-validation
        segments, change = self.segments.get(i, ((), None))
        return Model(self.callpaths[i], self.metrics[i], function, Quality(*q),
                     self.modeler_names[self.modeler_of[i]], self.options, self.note_groups[self.note_group[i]],
                     int(self.points[i]), self.outlier_groups[self.outlier_group[i]], segments, change,
                     uncertainty=self.uncertainty, row=i)

    # ------------------------------------------------------------------ all series at once

    def evaluate(self, point: Mapping[str, Any]) -> np.ndarray:
        """Every series' model at ``point`` (``{name: value}``, or ``{name: array of k values}``): an
        array of n values (n × k for arrays), NaN where a series has no function.

        The same arithmetic as :meth:`Function.evaluate` (each term's basis, times its coefficient,
        added to c0 term by term), so the values are identical to evaluating each Function.
        """
        used = {f.parameter for factors in self.shapes for f in factors}
        given = [name for name in self.parameters if name in point or name in used]
        many = any(np.ndim(point[name]) > 0 for name in given)
        columns = {name: np.atleast_1d(np.asarray(point[name], dtype=float)) for name in given}
        size = max((len(c) for c in columns.values()), default=1)
        columns = {name: np.broadcast_to(c, (size,)) for name, c in columns.items()}
        with np.errstate(all="ignore"):
            basis = np.array([Term(1.0, factors).basis(columns, size) for factors in self.shapes]).reshape(-1, size)
            values = self.coefficient[:, None] * basis[self.shape_of_term]
            out = np.repeat(self.c0[:, None], size, axis=1)
            rank = self.rank_of_term
            for r in range(int(rank.max()) + 1 if rank.size else 0):
                at = rank == r
                series = self.series_of_term[at]
                out[series] = out[series] + values[at]
            for i, function in self.own_functions.items():
                out[i] = function.evaluate({name: point[name] for name in function.parameters})
            for i in self.segments:  # each point by the segment that holds there
                out[i] = self.model(i).evaluate({name: np.broadcast_to(np.asarray(point[name], dtype=float), (size,))
                                                 for name in self.parameters if name in point})
        out[~self.has_function] = np.nan
        return out if many else out[:, 0]

    def growth(self, point: Mapping[str, float] | None = None) -> tuple[np.ndarray, list[Growth]]:
        """Each series' growth class (:func:`pmkit.growth.growth_of`) as an index into a list of classes; -1
        where a series has no function.  With ``point``, a segmented model's class is that of the segment
        that holds there (else of its function, the last segment).

        A growth class depends on the terms' factors and the signs of their coefficients only, so it
        is computed once per distinct (shapes, signs) combination.
        """
        n = len(self)
        width = int(np.diff(self.term_start).max()) if n else 0
        keys = np.full((n, 2 * width), -2, dtype=np.int64)
        rank, series = self.rank_of_term, self.series_of_term
        keys[series, 2 * rank] = self.shape_of_term
        keys[series, 2 * rank + 1] = np.where(np.isnan(self.coefficient), NAN_SIGN, np.sign(self.coefficient))
        keys = np.concatenate([self.has_function[:, None].astype(np.int64), keys], axis=1)
        first, inverse = unique_rows(keys)
        classes: list[Growth] = []
        codes = np.full(len(first), -1, dtype=np.int64)
        for u, key in enumerate(keys[first].tolist()):
            if not key[0]:
                continue
            terms = tuple(Term(SIGNS[key[2 + 2 * k]], self.shapes[key[1 + 2 * k]])
                          for k in range(width) if key[1 + 2 * k] >= 0)
            growth = growth_of(Function(self.parameters, 0.0, terms))
            assert growth is not None
            codes[u] = len(classes)
            classes.append(growth)
        codes = codes[inverse]
        for i, function in self.own_functions.items():
            codes[i] = len(classes)
            classes.append(growth_of(function))  # type: ignore[arg-type]
        if point is not None:
            for i in self.segments:
                codes[i] = len(classes)
                classes.append(growth_of(self.model(i).function_at(point)))  # type: ignore[arg-type]
        return codes, classes

    def extrap_texts(self, start: int = 0, stop: int | None = None) -> list[str | None]:
        """Series ``start:stop``'s functions in Extra-P's notation (:meth:`Function.extrap_text`), None without one."""
        stop = len(self) if stop is None else stop
        bounds, has, shapes = self._text_rows(start, stop)
        first = bounds[0]
        constants = number_texts(self.c0[start:stop].tolist(), 10)
        coefficients = number_texts(self.coefficient[first:bounds[-1]].tolist(), 10)
        bodies = self._bodies[0]
        terms = list(zip(coefficients, [bodies[s] for s in shapes], strict=True))
        out = [extrap_notation(constants[k], terms[bounds[k] - first:bounds[k + 1] - first]) if has[k] else None
               for k in range(stop - start)]
        return self._own_texts(out, start, stop, Function.extrap_text)

    def pretty_texts(self, start: int = 0, stop: int | None = None) -> list[str | None]:
        """Series ``start:stop``'s functions in compact notation (:meth:`Function.pretty_text`), None without one."""
        stop = len(self) if stop is None else stop
        bounds, has, shapes = self._text_rows(start, stop)
        first = bounds[0]
        c0 = self.c0[start:stop].tolist()
        constants = number_texts(c0, 4)
        coefficients = self.coefficient[first:bounds[-1]]
        magnitudes = number_texts(np.abs(coefficients).tolist(), 4)
        bodies = self._bodies[1]
        terms = list(zip((coefficients < 0).tolist(), magnitudes, [bodies[s] for s in shapes], strict=True))
        out: list[str | None] = []
        for k in range(stop - start):
            if not has[k]:
                out.append(None)
                continue
            a, b = bounds[k] - first, bounds[k + 1] - first
            out.append(pretty_notation(constants[k] if shows_constant(c0[k], b - a) else None, terms[a:b]))
        return self._own_texts(out, start, stop, Function.pretty_text)

    def _text_rows(self, start: int, stop: int) -> tuple[list[int], list[bool], list[int]]:
        """The term bounds, which series have a function, and the terms' shapes, of series ``start:stop``."""
        bounds = self.term_start[start:stop + 1].tolist()
        return bounds, self.has_function[start:stop].tolist(), self.shape_of_term[bounds[0]:bounds[-1]].tolist()

    def _own_texts(self, out: list[str | None], start: int, stop: int,
                   method: Callable[[Function], str]) -> list[str | None]:
        for i, function in self.own_functions.items():
            if start <= i < stop:
                out[i - start] = getattr(function, method.__name__)()
        return out

    def rows_of_metric(self, metric: str) -> np.ndarray:
        """The series of ``metric``, in order."""
        return np.flatnonzero(np.fromiter((m == metric for m in self.metrics), dtype=bool, count=len(self)))

    @property
    def modeler(self) -> str:
        """The modeler's name when one modeler made every model, else ""."""
        return self.modeler_names[0] if len(self.modeler_names) == 1 else ""

    def modelers(self, rows: np.ndarray | None = None) -> list[str]:
        """The names of the modelers that made the series ``rows`` (default: all), sorted, without ""."""
        codes = self.modeler_of if rows is None else self.modeler_of[rows]
        return sorted({self.modeler_names[c] for c in np.unique(codes).tolist()} - {""})
