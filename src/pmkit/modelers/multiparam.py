"""Multi-parameter modeling (2–4 parameters) by combining single-parameter models, as Extra-P does.

Papers 002 (§4.5) and 000 (§3): the search space of multi-parameter PMNF functions is far too large
to search directly, so (1) for each parameter, the best single-parameter model is found on the
lines of the measurement grid along that parameter (the longest lines, averaged where several have
the same length; sparse grids work as long as one line per parameter has 3 or more points) with the
refining search of :mod:`pmkit.fitting.refinement`; parameters whose model is constant leave the
search; (2) the non-constant terms ``f_l(x_l)`` are combined additively and multiplicatively —
``Π f``, ``Σ f`` and, for two and three parameters, the mixed sums of products Extra-P tries
(``a·b + a``, ``a·b·c + a·b + c``, ...) — each fitted by least squares to all points, shared by
every series with the same single-parameter terms; (3) the combination with the smallest
leave-one-out SMAPE wins (more terms only if they cut it 1.5-fold, see below), skipping
combinations where a term contributes less than 0.05% of every value (Extra-P's rule).

Falling laws (strong scaling): a line's law may fall (``c0 + c·p^(-γ)``) or be a falling + growing
two-term law (see :mod:`pmkit.fitting.refinement`); the building blocks of the combinations are the
lines' *terms*, so ``n/p`` is the product of a falling p term and a growing n term, and a two-term
line enters each product whole or split (:func:`term_combinations`: ``n·(a/p + b·log2 p)``,
``a·n/p + b·log2 p``).  Combinations with a falling term are fitted by relative least squares
(weights ``1/y²``), as one-term falling laws are: on p = 1..64 × n = 10..160 (±2%, 300 laws per form,
seed 5; scratch) the prediction at p = 256, n = 160 was within 5% for ``c0 + a·n/p`` in 66% of laws
with ordinary least squares and 100% with relative ones (``c0 + a/p + b·n`` 83% → 85%,
``c0 + a·n/p + b·n·p`` 97% → 99%, a growing ``c0 + a·n·p`` 100% either way).  Reported by
``python bench/strong_scaling.py`` (its two-parameter table).

Per-series constraints (:class:`pmkit.constraints.Constraint`, from a prior) are honoured: a
constant constraint gives the constant model; parameters not allowed leave the search; parameters
multiply only within a constraint group.  The constraint is stated in the model's notes.

A law that changes along one parameter (:mod:`pmkit.modelers.segmented`) is found on that
parameter's grid line with the one-parameter test (option ``segments``); each side of the change
is then modeled as a grid of its own, and the model's function is the side beyond the change — the
segment that holds towards larger values, which predictions use (``Model.function_at`` gives the
other side's below the change).

Choices measured here (2 parameters, 5×5 grid {4..64}², 2,000 random functions — half
``c0 + c1·f(p)·g(q)``, half ``c0 + c1·f(p) + c2·g(q)``, f, g common or rare, ±2% noise, seed 2;
exact structure and exponents / prediction at (256, 256) within 2%), with the single-parameter
search of the time (integer start; the widened start table and relative-error search of
:mod:`pmkit.fitting.refinement` raised the chosen settings' figures to 31.7% / 81.6%):

* **Parsimony** (pmkit's addition, not Extra-P's): a combination with more terms must cut the
  error of the best combination with fewer terms by the acceptance factor (1.5), as a refined
  exponent must in the single-parameter search.  Without it, ``a·b + b`` beats a true ``a·b`` on
  noise alone: 24.5% / 72.6% with it against 12.3% / 72.4% without (now 31.7% / 81.6% against
  15.1% / 81.4%).
* **Leave-one-out SMAPE picks the combination** (24.5% / 72.6%) rather than in-sample SMAPE as in
  Extra-P (23.7% / 72.6%): combinations differ in their number of coefficients (now 31.7% / 81.6%
  against 30.7% / 81.6%).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from pmkit.constraints import Constraint
from pmkit.fitting.leastsquares import (
    DesignFit,
    adjusted_r2,
    fit_design,
    left_inverses,
    loo_predictions,
    rowwise,
    smape,
)
from pmkit.fitting.maskgroups import group_by_mask
from pmkit.fitting.refinement import (
    MIN_POINTS,
    RefineSettings,
    SingleFits,
    refine_series,
    relative_design_fit,
    shape_basis,
)
from pmkit.fitting.segments import MIN_POINTS as SEGMENT_MIN_POINTS
from pmkit.fitting.segments import find_change_points
from pmkit.hookspecs import hookimpl
from pmkit.modelcolumns import ModelColumns, Terms, codes_of, intern_notes
from pmkit.modelers.search_inputs import OPTIONS, SeriesData, constraint_of, settings_from
from pmkit.modelers.segment_models import combined_quality
from pmkit.modelers.single import model_single
from pmkit.models import ChangePoint, ModelSet, Quality, Segment
from pmkit.options import Option, with_defaults
from pmkit.pmnf import Factor, Function, Term
from pmkit.series import SeriesBatch

NAME = "multiparam"
MAX_PARAMETERS = 4
MIN_CONTRIBUTION = 5e-4
"""A term contributing less than this share of every value makes its combination ineligible."""

FIT_CHUNK = 20_000
"""Series per chunk when each row has its own design (bounds the gathered designs' memory)."""


Combination = tuple[frozenset[int], ...]
"""A sum of products: each term is the set of (non-constant) parameter positions it multiplies."""


def _terms(*groups: str) -> Combination:
    return tuple(frozenset(int(c) for c in g) for g in groups)


COMBINATIONS: dict[int, tuple[Combination, ...]] = {
    1: (_terms("0"),),
    2: (_terms("01"), _terms("0", "1"), _terms("0", "01"), _terms("1", "01")),
    3: (_terms("012"), _terms("0", "1", "2"),
        _terms("012", "0"), _terms("012", "1"), _terms("012", "2"),
        _terms("012", "01"), _terms("012", "12"), _terms("012", "02"),
        _terms("012", "01", "2"), _terms("012", "12", "0"), _terms("012", "02", "1"),
        _terms("012", "0", "1"), _terms("012", "0", "2"), _terms("012", "1", "2"),
        _terms("01", "2"), _terms("01", "2", "1"), _terms("01", "2", "0"),
        _terms("02", "1"), _terms("02", "1", "0"), _terms("02", "1", "2"),
        _terms("12", "0"), _terms("12", "0", "1"), _terms("12", "0", "2")),
    4: (_terms("0123"), _terms("0", "1", "2", "3")),
}
"""Extra-P's hypotheses per number of non-constant parameters (positions into those parameters)."""


@dataclass(frozen=True)
class Line:
    """How to read one parameter's single-parameter series off a grid: values and averaging matrix."""

    values: np.ndarray
    average: np.ndarray
    lines: int


def grid_line(points: np.ndarray, parameter: int) -> Line | None:
    """The longest lines of ``points`` along ``parameter`` (averaged if several), or None if < 3 values.

    ``average`` (values × points) turns a (series × points) matrix into the series along the line.
    """
    others = np.delete(points, parameter, axis=1)
    _, line_id, counts = np.unique(others, axis=0, return_inverse=True, return_counts=True)
    line_id = line_id.reshape(-1)
    longest = np.flatnonzero(counts == counts.max())
    common: set[float] | None = None
    for line in longest:
        coords = set(points[line_id == line, parameter].tolist())
        common = coords if common is None else common & coords
    values = np.array(sorted(common or ()), dtype=float)
    if values.size < MIN_POINTS:
        return None
    average = np.zeros((values.size, len(points)))
    chosen = np.isin(line_id, longest)
    for k, v in enumerate(values):
        members = np.flatnonzero(chosen & (points[:, parameter] == v))
        average[k, members] = 1.0 / members.size
    return Line(values, average, int(longest.size))


Shape = tuple[int, Fraction, Fraction]
"""One term of a line's law: (parameter position, α, β) of ``x^α·log2^β(x)``."""


def term_combinations(shapes: Sequence[Shape]) -> list[Combination]:
    """The candidate combinations of the line laws' terms ``shapes`` (positions index into them).

    One term per parameter: :data:`COMBINATIONS` of the parameters, as Extra-P.  A parameter whose
    line law has two terms (a falling and a growing one, ``a/p + b·log2 p``) makes each product it
    is in either two products (``n·(a/p + b·log2 p)`` → ``a·n/p + b·n·log2 p``) or one product with
    one of its terms and the other term alone (``a·n/p + b·log2 p``, ``a/p + b·n·log2 p``); two terms
    of one parameter never multiply each other.
    """
    params = list(dict.fromkeys(p for p, _, _ in shapes))
    positions = {p: [k for k, s in enumerate(shapes) if s[0] == p] for p in params}
    out: dict[frozenset[frozenset[int]], Combination] = {}
    for combination in COMBINATIONS[len(params)]:
        variants: list[list[frozenset[int]]] = [[]]
        for product in combination:
            members = [params[m] for m in sorted(product)]
            doubles = [p for p in members if len(positions[p]) == 2]
            modes = ("both", "first", "second") if len(members) > 1 else ("both",)
            products = []
            for chosen in itertools.product(modes, repeat=len(doubles)):
                mode = dict(zip(doubles, chosen, strict=True))
                parts, alone = [frozenset()], []
                for p in members:
                    terms = positions[p]
                    if len(terms) == 1:
                        parts = [part | {terms[0]} for part in parts]
                    elif mode[p] == "both":
                        parts = [part | {t} for part in parts for t in terms]
                    else:
                        kept, other = terms if mode[p] == "first" else terms[::-1]
                        parts = [part | {kept} for part in parts]
                        alone.append(frozenset({other}))
                products.append(parts + alone)
            variants = [v + extra for v in variants for extra in products]
        for v in variants:
            out.setdefault(frozenset(v), tuple(dict.fromkeys(v)))
    return list(out.values())


@dataclass
class _Group:
    """Series sharing points, constraint and single-parameter terms: one design per combination."""

    parameters: tuple[str, ...]
    shapes: tuple[Shape, ...]
    combination: Combination | None
    coefficients: np.ndarray
    notes: tuple[str, ...]

    def term_factors(self) -> list[tuple[Factor, ...]]:
        """The factors of each term of the combination; term ``k``'s coefficients are column ``k + 1``
        (column 0 is c0)."""
        if self.combination is None:
            return []
        return [tuple(Factor(self.parameters[self.shapes[m][0]], self.shapes[m][1], self.shapes[m][2])
                      for m in sorted(members)) for members in self.combination]


def _allowed(combination: Combination, shapes: Sequence[Shape],
             parameters: Sequence[str], constraint: Constraint | None) -> bool:
    if constraint is None or constraint.groups is None:
        return True
    for members in combination:
        names = [parameters[shapes[m][0]] for m in members]
        if any(not constraint.may_multiply(a, b) for i, a in enumerate(names) for b in names[i + 1:]):
            return False
    return True


def _design(points: np.ndarray, shapes: Sequence[Shape],
            combination: Combination, columns: dict | None = None) -> np.ndarray:
    """The design matrix (points × 1 + terms) of a combination; ``columns`` memoises factor columns."""
    cols = [np.ones(len(points))]
    for members in combination:
        col = np.ones(len(points))
        for m in members:
            col = col * _factor_column(points, shapes[m], columns)
        cols.append(col)
    return np.column_stack(cols)


def _factor_column(points: np.ndarray, shape: Shape, columns: dict | None) -> np.ndarray:
    if columns is not None and shape in columns:
        return columns[shape]
    param, alpha, beta = shape
    col = shape_basis(points[:, param], alpha, beta)
    if columns is not None:
        columns[shape] = col
    return col


def _line_shapes(fits: SingleFits, row: int, param: int) -> list[Shape]:
    """The terms of a line's law (none for a constant one): (param, α, β) for each."""
    if fits.constant[row]:
        return []
    out = [(param, Fraction(int(fits.alpha[row, 0]), int(fits.alpha[row, 1])),
            Fraction(int(fits.beta[row, 0]), int(fits.beta[row, 1])))]
    if fits.two_term[row]:
        out.append((param, Fraction(int(fits.alpha2[row, 0]), int(fits.alpha2[row, 1])),
                    Fraction(int(fits.beta2[row, 0]), int(fits.beta2[row, 1]))))
    return out


def model_multiparameter(batch: SeriesBatch, options: dict[str, Any], modeler: str = NAME) -> ModelSet:
    """Models of a batch with 2–4 parameters (more are refused with a note, never an exception)."""
    parameters = batch.parameters
    points = batch.points
    data = SeriesData(batch, options["measure"])
    count = len(batch)
    settings = settings_from(options, count)
    results = _Results(count)
    changes = _Changes(count)
    too_many = len(parameters) > MAX_PARAMETERS

    constraints = [constraint_of(batch, i) for i in range(count)]
    kinds = {c: k for k, c in enumerate(dict.fromkeys(constraints))}
    constraint_id = np.array([kinds[c] for c in constraints], dtype=np.int64)
    for mask in ([] if too_many else group_by_mask(data.values)):
        cols = mask.columns
        if cols.size == 0:
            continue
        pts = points[cols]
        lines = [grid_line(pts, p) for p in range(len(parameters))]
        for kind, constraint in enumerate(kinds):
            rows = mask.rows[constraint_id[mask.rows] == kind]
            if rows.size:
                search = _Search(pts, parameters, constraint, settings)
                values = data.values[np.ix_(rows, cols)]
                search.model_rows(values, rows, lines, results)
                search.split_rows(values, rows, lines, results, changes, options.get("segments", "auto"))

    def notes_of(i: int) -> list[str]:
        notes = data.notes(i)
        constraint = constraints[i]
        if constraint is not None:
            notes.append(constraint.note())
        if too_many:
            notes.insert(0, f"{len(parameters)} parameters: multi-parameter modeling supports at most "
                         f"{MAX_PARAMETERS}; no model")
        if results.group_of[i] < 0:
            return notes
        return list(results.groups[results.group_of[i]].notes) + notes

    group_notes = np.append(codes_of([g.notes for g in results.groups]), -1)[results.group_of]
    notes = intern_notes([*data.note_keys(), constraint_id, group_notes], notes_of)
    segments = changes.entries(parameters, results)
    columns = multiparam_columns(batch, results, data.points_present, notes, modeler, options)
    for i, (pieces, _) in segments.items():  # quality over both segments' points
        q = combined_quality(pieces, *(int(v) for v in changes.sizes[i]), float(changes.tss[i]),
                             2 + sum(len(piece.function.terms) for piece in pieces))
        columns.quality[i] = [q.rss, q.smape, q.adjusted_r2, np.nan if q.cv_smape is None else q.cv_smape]
    columns.segments = segments
    return ModelSet(parameters, columns=columns)


def multiparam_columns(batch: SeriesBatch, results: _Results, present: np.ndarray, notes: tuple[np.ndarray, list],
                       modeler: str, options: dict[str, Any]) -> ModelColumns:
    """The search results as model columns: per group of series its combination's terms, with each
    series' coefficients; no function for series no group holds."""
    count = len(batch)
    has = results.group_of >= 0
    c0 = np.full(count, np.nan)
    terms = Terms(count, len(batch.parameters))
    for g, group in enumerate(results.groups):
        rows = results.rows[g]
        held = results.group_of[rows] == g
        rows, coefficients = rows[held], group.coefficients[held]
        c0[rows] = coefficients[:, 0]
        for k, factors in enumerate(group.term_factors()):
            terms.add_factors(rows, coefficients[:, k + 1], factors, batch.parameters)
    term_start, coefficient, exponent, log_exponent = terms.build()
    return ModelColumns(batch.parameters, batch.callpaths, batch.metrics, has_function=has, c0=c0,
                        term_start=term_start, coefficient=coefficient, exponent=exponent,
                        log_exponent=log_exponent, quality=np.where(has[:, None], results.quality, np.nan),
                        points=np.where(has, present, 0), note_group=notes[0], note_groups=notes[1],
                        modeler=modeler, options=options)


class _Results:
    """Per series of the batch: which :class:`_Group` holds its model and its quality (RSS, SMAPE,
    adjusted R², leave-one-out SMAPE); per group the batch rows it was recorded for (its coefficients'
    rows)."""

    def __init__(self, count: int) -> None:
        self.groups: list[_Group] = []
        self.rows: list[np.ndarray] = []
        self.group_of = np.full(count, -1, dtype=np.int64)
        self.quality = np.full((count, 4), np.nan)

    def record(self, group: _Group, rows: np.ndarray, fit: DesignFit, tss: np.ndarray, n: int,
               coefficients: int) -> None:
        """Store ``group`` as the models of batch rows ``rows``, fitted by ``fit`` on ``n`` points."""
        self.groups.append(group)
        self.rows.append(rows)
        self.group_of[rows] = len(self.groups) - 1
        self.quality[rows, 0] = fit.rss
        self.quality[rows, 1] = fit.smape
        self.quality[rows, 2] = adjusted_r2(fit.rss, tss, n, coefficients)
        self.quality[rows, 3] = fit.loo_smape if n > coefficients else np.nan

    def function(self, i: int, parameters: tuple[str, ...]) -> Function | None:
        """Batch row ``i``'s function (None where no group holds it)."""
        g = int(self.group_of[i])
        if g < 0:
            return None
        coefficients = self.groups[g].coefficients[int(np.flatnonzero(self.rows[g] == i)[-1])]
        factors = self.groups[g].term_factors()
        terms = tuple(Term(float(coefficients[k + 1]), f) for k, f in enumerate(factors))
        return Function(parameters, float(coefficients[0]), terms)

    def quality_of(self, i: int) -> Quality:
        q = self.quality[i]
        return Quality(float(q[0]), float(q[1]), float(q[2]), float(q[3]))


class _Changes:
    """Per series, the change of law found along one parameter (position ``parameter``, -1: none):
    the change point, the left side's models (``left``), and each side's number of points and range."""

    def __init__(self, count: int) -> None:
        self.parameter = np.full(count, -1, dtype=np.int64)
        self.value = np.full((count, 3), np.nan)
        self.left = _Results(count)
        self.sizes = np.zeros((count, 2), dtype=np.int64)
        self.ranges = np.full((count, 4), np.nan)
        self.tss = np.full(count, np.nan)

    def entries(self, parameters: tuple[str, ...],
                right: _Results) -> dict[int, tuple[tuple[Segment, ...], ChangePoint]]:
        """Per series that changes law: its two segments (the side below the change from ``left``, the
        side beyond it from ``right``, the model's function) and its change point."""
        out = {}
        for i in np.flatnonzero(self.parameter >= 0).tolist():
            below, beyond = self.left.function(i, parameters), right.function(i, parameters)
            if below is None or beyond is None:
                continue
            change, low, high = (float(v) for v in self.value[i])
            lo0, hi0, lo1, hi1 = (float(v) for v in self.ranges[i])
            segments = (Segment(below, -np.inf, change, (lo0, hi0), self.left.quality_of(i)),
                        Segment(beyond, change, np.inf, (lo1, hi1), right.quality_of(i)))
            out[i] = (segments, ChangePoint(parameters[int(self.parameter[i])], change, low, high))
        return out


@dataclass
class _Search:
    """The multi-parameter search for series sharing their points and their constraint."""

    pts: np.ndarray
    parameters: tuple[str, ...]
    constraint: Constraint | None
    settings: RefineSettings
    notes: tuple[str, ...] = ()
    columns: dict = field(default_factory=dict)

    def model_rows(self, Y: np.ndarray, rows: np.ndarray, lines: list[Line | None], results: _Results) -> None:
        """Model the series ``Y`` (batch rows ``rows``) and record them in ``results``.

        (1) the best single-parameter model per parameter on the grid's lines; (2) series whose
        parameters grow alike share their candidate combinations; (3) each gets the combination
        :func:`_parsimonious_choice` picks, or the constant model when nothing grows.
        """
        singles = self.single_fits(Y, lines)
        order, bounds, first = _shape_groups(singles, len(rows))
        shapes_of = [self.shapes(singles, int(row)) for row in first]
        tss = ((Y - Y.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
        # groups with the same growing parameters share their candidate combinations: fit them together
        by_growing: dict[tuple[int, ...], list[int]] = {}
        constant_groups = []
        for g, shapes in enumerate(shapes_of):
            if not shapes or (self.constraint is not None and self.constraint.constant):
                constant_groups.append(g)
            else:
                by_growing.setdefault(tuple(p for p, _, _ in shapes), []).append(g)
        if constant_groups:
            members = np.concatenate([order[bounds[g]:bounds[g + 1]] for g in constant_groups])
            fit = fit_design(Y[members], np.ones((len(self.pts), 1)))
            results.record(_Group(self.parameters, (), None, fit.coefficients, self.notes), rows[members], fit,
                           tss[members], len(self.pts), 1)
        for gs in by_growing.values():
            members = np.concatenate([order[bounds[g]:bounds[g + 1]] for g in gs])
            local = np.repeat(np.arange(len(gs)), [bounds[g + 1] - bounds[g] for g in gs])
            self.combine(Y[members], rows[members], tss[members], [shapes_of[g] for g in gs], local, results)

    def split_rows(self, Y: np.ndarray, rows: np.ndarray, lines: list[Line | None], results: _Results,
                   changes: _Changes, mode: str) -> None:
        """Series whose law changes along one parameter: test each parameter's grid line (8 values or
        more) for a change, keep per series the parameter where the one law misses most against the two
        segments, and model each side of that change as a grid of its own — the side beyond it into
        ``results`` (the model's function), the other into ``changes``."""
        if mode == "off" or (self.constraint is not None and self.constraint.constant):
            return
        where = np.full(len(rows), -1, dtype=np.int64)
        strongest = np.zeros(len(rows))
        found = {}
        for p, line in enumerate(lines):
            if line is None or line.values.size < SEGMENT_MIN_POINTS or (
                    self.constraint is not None and not self.constraint.allows(self.parameters[p])):
                continue
            along = rowwise(Y, line.average)
            cp = find_change_points(line.values, along, refine_series(line.values, along, self.settings),
                                    self.settings, mode)
            with np.errstate(all="ignore"):
                ratio = np.where(cp.segmented, np.nan_to_num(cp.one_law_error / cp.segment_error, nan=np.inf), 0.0)
            better = cp.segmented & (ratio > strongest)
            where[better], strongest[better] = p, ratio[better]
            found[p] = cp
        names = range(len(self.parameters))
        for p, cp in found.items():
            mine = np.flatnonzero(where == p)
            for start in np.unique(cp.right_from[mine]):
                sel = mine[cp.right_from[mine] == start]
                right = self.pts[:, p] >= start
                for side, into in ((~right, changes.left), (right, results)):
                    pts = self.pts[side]
                    sub = _Search(pts, self.parameters, self.constraint, self.settings, self.notes)
                    sub.model_rows(Y[np.ix_(sel, side)], rows[sel], [grid_line(pts, q) for q in names], into)
                target = rows[sel]
                changes.parameter[target] = p
                changes.value[target] = np.stack([cp.change[sel], cp.low[sel], cp.high[sel]], axis=1)
                changes.sizes[target] = [int((~right).sum()), int(right.sum())]
                along = self.pts[:, p]
                changes.ranges[target] = [along[~right].min(), along[~right].max(), along[right].min(),
                                          along[right].max()]
                changes.tss[target] = ((Y[sel] - Y[sel].mean(axis=1, keepdims=True)) ** 2).sum(axis=1)

    def single_fits(self, Y: np.ndarray, lines: list[Line | None]) -> list[SingleFits | None]:
        """Per parameter the refining search on its grid line, None where it is not allowed or has too
        few values (then noted)."""
        notes = list(self.notes)
        singles: list[SingleFits | None] = []
        for p, line in enumerate(lines):
            name = self.parameters[p]
            if self.constraint is not None and not self.constraint.allows(name):
                singles.append(None)
            elif line is None:
                notes.append(f"parameter {name}: fewer than {MIN_POINTS} values on a line of the grid, "
                             "treated as constant")
                singles.append(None)
            else:
                singles.append(refine_series(line.values, rowwise(Y, line.average), self.settings))
        self.notes = tuple(notes)
        return singles

    def shapes(self, singles: list[SingleFits | None], row: int) -> tuple[Shape, ...]:
        """The terms (parameter position, α, β) of each parameter's line law of ``row`` that is not constant."""
        return tuple(shape for p, fits in enumerate(singles) if fits is not None
                     for shape in _line_shapes(fits, row, p))

    def combine(self, Y: np.ndarray, rows: np.ndarray, tss: np.ndarray,
                shapes: list[tuple[Shape, ...]], local: np.ndarray,
                results: _Results) -> None:
        """Fit every allowed combination to series ``Y`` (row ``i`` has the shapes ``shapes[local[i]]``)
        and record each series' parsimonious choice."""
        candidates = [c for c in term_combinations(shapes[0])
                      if _allowed(c, shapes[0], self.parameters, self.constraint)]
        fits, errors, eligible = [], [], []
        falls = np.array([any(alpha < 0 for _, alpha, _ in s) for s in shapes])
        for c in candidates:
            designs = np.stack([_design(self.pts, s, c, self.columns) for s in shapes])
            fit = _fit_stacked(Y, designs, local, falls)
            fits.append(fit)
            errors.append(fit.loo_smape)
            eligible.append(_contributes(Y, fit, designs, local))
        errors_arr, eligible_arr = np.stack(errors, axis=1), np.stack(eligible, axis=1)
        ranked = np.where(eligible_arr, errors_arr, np.inf)
        ranked = np.where(np.isfinite(ranked).any(axis=1, keepdims=True), ranked, errors_arr)
        choice = _parsimonious_choice(ranked, [len(c) for c in candidates], self.settings.acceptance)
        pair = local * len(candidates) + choice
        pair_order = np.argsort(pair, kind="stable")
        pairs, starts = np.unique(pair[pair_order], return_index=True)
        for k, key in enumerate(pairs):
            picked = pair_order[starts[k]:starts[k + 1] if k + 1 < len(starts) else len(pair)]
            c_index = int(key % len(candidates))
            fit = fits[c_index]
            sub = DesignFit(fit.coefficients[picked], fit.predicted[picked], fit.rss[picked],
                            smape(Y[picked], fit.predicted[picked]), fit.loo_smape[picked])
            group = _Group(self.parameters, shapes[int(key // len(candidates))], candidates[c_index],
                           sub.coefficients, self.notes)
            results.record(group, rows[picked], sub, tss[picked], len(self.pts), 1 + len(candidates[c_index]))


def _shape_groups(singles: list[SingleFits | None], count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Series grouped by which parameters change and how (one or two terms each): the order that sorts
    them by group, each group's bounds in that order, and each group's first series."""
    keys = np.full((count, len(singles), 8), -1, dtype=np.int64)
    for p, fits in enumerate(singles):
        if fits is not None:
            grows, two = ~fits.constant, fits.two_term
            for k, (array, where) in enumerate(((fits.alpha, grows), (fits.beta, grows), (fits.alpha2, two),
                                                (fits.beta2, two))):
                keys[:, p, 2 * k] = np.where(where, array[:, 0], -1)
                keys[:, p, 2 * k + 1] = np.where(where, array[:, 1], -1)
    uniq, first, inverse = np.unique(keys.reshape(count, -1), axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    return order, bounds, first


def _fit_stacked(Y: np.ndarray, designs: np.ndarray, local: np.ndarray, relative: np.ndarray | None = None
                 ) -> DesignFit:
    """Least squares of each row of ``Y`` on its own design ``designs[local[row]]``, in chunks; rows whose
    design has ``relative[local[row]]`` (a falling term) by relative least squares (weights ``1/y²``).

    The in-sample SMAPE is left NaN: the leave-one-out SMAPE picks the combination, and the chosen
    rows' in-sample SMAPE is computed afterwards.
    """
    fit = _fit_ordinary(Y, designs, local)
    if relative is None or not relative.any():
        return fit
    rows = np.flatnonzero(relative[local])
    for start in range(0, rows.size, FIT_CHUNK):
        part = rows[start:start + FIT_CHUNK]
        coefficients, loo = relative_design_fit(Y[part], designs[local[part]])
        fit.coefficients[part] = coefficients
        fit.predicted[part] = np.einsum("sk,snk->sn", coefficients, designs[local[part]])
        residual = Y[part] - fit.predicted[part]
        fit.rss[part] = (residual * residual).sum(axis=1)
        fit.loo_smape[part] = loo
    return fit


def _fit_ordinary(Y: np.ndarray, designs: np.ndarray, local: np.ndarray) -> DesignFit:
    """Ordinary least squares of each row of ``Y`` on its own design ``designs[local[row]]``, in chunks."""
    inverses = left_inverses(designs)
    leverage = np.einsum("gnk,gkn->gn", designs, inverses)
    count, k = len(Y), designs.shape[2]
    coefficients = np.empty((count, k))
    predicted = np.empty_like(Y)
    for start in range(0, count, FIT_CHUNK):
        part = slice(start, start + FIT_CHUNK)
        coefficients[part] = np.einsum("sn,skn->sk", Y[part], inverses[local[part]])
        predicted[part] = np.einsum("sk,snk->sn", coefficients[part], designs[local[part]])
    residual = Y - predicted
    loo = loo_predictions(Y, predicted, leverage[local])
    in_sample = np.full(count, np.nan)
    return DesignFit(coefficients, predicted, (residual * residual).sum(axis=1), in_sample, smape(Y, loo))


def _parsimonious_choice(errors: np.ndarray, sizes: list[int], factor: float) -> np.ndarray:
    """Per row, the best combination with the fewest terms, unless more terms cut the error ``factor``-fold."""
    sizes_arr = np.array(sizes)
    choice = np.full(errors.shape[0], -1, dtype=np.int64)
    best = np.full(errors.shape[0], np.inf)
    for size in sorted(set(sizes)):
        cols = np.flatnonzero(sizes_arr == size)
        pick = cols[np.argmin(errors[:, cols], axis=1)]
        err = errors[np.arange(errors.shape[0]), pick]
        better = (choice < 0) & np.isfinite(err) | (err * factor < best)
        choice = np.where(better, pick, choice)
        best = np.where(better, err, best)
    return np.where(choice < 0, np.argmin(errors, axis=1), choice)


def _contributes(Y: np.ndarray, fit: DesignFit, designs: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Whether every term of the fit contributes at least MIN_CONTRIBUTION of some value.

    Row ``i`` of ``Y`` was fitted on ``designs[local[i]]`` (designs × points × columns).
    """
    out = np.empty(len(Y), dtype=bool)
    for start in range(0, len(Y), FIT_CHUNK):
        part = slice(start, start + FIT_CHUNK)
        coefs = fit.coefficients[part, 1:]
        with np.errstate(all="ignore"):
            terms = np.swapaxes(designs[local[part]], 1, 2)[:, 1:, :]
            share = np.abs(coefs[:, :, None] * terms) / np.abs(Y[part])[:, None, :]
            share = np.where(np.isfinite(share), share, 0.0)
        out[part] = ((share.max(axis=2) >= MIN_CONTRIBUTION) & (coefs != 0)).all(axis=1)
    return out


class MultiParameterModeler:
    """Extra-P-style multi-parameter modeling on top of the refining search (also used by ``refining``)."""

    name = NAME
    description = "2–4 parameters: best single-parameter models combined additively and multiplicatively"
    options: Sequence[Option] = OPTIONS
    independent_series = True  # a series' model depends on that series alone: batches may be split

    def model(self, batch: SeriesBatch, **options: Any) -> ModelSet:
        """Model every series of ``batch``; one-parameter batches get the refining modeler's models.

        ``options`` come resolved from the SDK; undeclared ones a direct caller leaves out get their defaults.
        """
        values = with_defaults(self.options, options, f"modeler {self.name}")
        if len(batch.parameters) == 1:
            return model_single(batch, values, modeler=self.name)
        return model_multiparameter(batch, values, modeler=self.name)


@hookimpl(trylast=True)
def pmkit_register_modelers(register: Any) -> None:
    register(MultiParameterModeler())
