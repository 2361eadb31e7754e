"""One-parameter models from the refining search, for a whole batch at once.

:func:`model_single` groups the batch's series by their missing points, runs
:func:`pmkit.fitting.refinement.refine_series` on each group (a prior's "constant" series with an
infinite non-constancy threshold), and returns a :class:`~pmkit.models.ModelSet` of
:class:`~pmkit.modelcolumns.ModelColumns` (:func:`single_columns` turns the result arrays into
them), which builds a :class:`~pmkit.models.Model` only when one is asked for.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from pmkit.collector import collector_paused
from pmkit.fitting.maskgroups import group_by_mask
from pmkit.fitting.refinement import RefineSettings, SingleFits, refine_series
from pmkit.intervals import AlternativeTable, Uncertainty
from pmkit.modelcolumns import ModelColumns, Terms, intern_notes
from pmkit.modelers.search_inputs import SeriesData, constraint_codes, constraint_of, settings_from
from pmkit.modelers.segment_models import SegmentCollector
from pmkit.models import ModelSet
from pmkit.pmnf import Factor, Function, Term, simple_function
from pmkit.series import SeriesBatch


def model_single(batch: SeriesBatch, options: dict[str, Any], modeler: str = "refining") -> ModelSet:
    """Refining models of a one-parameter batch, built lazily from per-series result arrays, with the cycle
    collector paused: the search makes many small acyclic objects (:mod:`pmkit.collector`)."""
    with collector_paused():
        return _model_single(batch, options, modeler)


def _model_single(batch: SeriesBatch, options: dict[str, Any], modeler: str) -> ModelSet:
    parameter = batch.parameters[0]
    x = batch.points[:, 0]
    data = SeriesData(batch, options["measure"])
    count = len(batch)
    fits = SingleFits.empty(count)
    group_notes = np.full(count, -1, dtype=np.int64)
    note_texts: list[list[str]] = []
    forced = np.zeros(count, dtype=bool)
    outlier_x = np.full(count, np.nan)
    if batch.constraints is not None:
        forced = np.array([c is not None and not c.allows(parameter) for c in batch.constraints], dtype=bool)
    settings = settings_from(options, count)
    segments = SegmentCollector(count, parameter, options.get("segments", "auto"), single_function)
    groups = group_by_mask(data.values)
    for group in groups:
        if group.columns.size == 0:
            continue
        rows = group.rows[~forced[group.rows]]
        result = refine_series(x[group.columns], data.values[np.ix_(rows, group.columns)], settings)
        fits.take(rows, result)
        if result.outlier is not None:
            left_out = result.outlier >= 0
            outlier_x[rows[left_out]] = x[group.columns][result.outlier[left_out]]
        split = segments.add(rows, x[group.columns], data.values[np.ix_(rows, group.columns)], result, settings)
        outlier_x[rows[split]] = np.nan  # the segments explain what the one law left out
        const_rows = group.rows[forced[group.rows]]
        if const_rows.size:
            const = refine_series(x[group.columns], data.values[np.ix_(const_rows, group.columns)],
                                  RefineSettings(nonconstancy=np.inf, use_numba=settings.use_numba))
            fits.take(const_rows, const)
        note_texts.append(result.notes)
        group_notes[group.rows] = len(note_texts) - 1
    present = data.points_present

    def notes_of(i: int) -> list[str]:
        notes = data.notes(i)
        constraint = constraint_of(batch, i)
        if constraint is not None:
            notes.append(constraint.note())
        if present[i] == 0:
            return notes
        if group_notes[i] >= 0:
            notes = list(note_texts[group_notes[i]]) + notes
        if np.isfinite(outlier_x[i]):
            notes.append(f"the point {parameter}={outlier_x[i]:g} was left out as an outlier: the model of the "
                         "other points misses it by far more than their own scatter (quality figures are "
                         "over the other points)")
        return notes

    segmented = segments.take_right(fits)  # a segmented series' function is the segment beyond the change
    left_out, outlier = np.unique(np.nan_to_num(outlier_x, nan=np.inf), return_inverse=True)
    outliers = (outlier.reshape(-1), [({parameter: x},) if np.isfinite(x) else () for x in left_out.tolist()])
    notes = intern_notes([*data.note_keys(), group_notes, constraint_codes(batch), outliers[0]], notes_of)
    columns = single_columns(batch, fits, present, notes, outliers, modeler, options)
    columns.segments = segmented

    right_from = {i: float(segments.found.right_from[i]) for i in segmented} if segmented else {}

    def alternatives(wanted: np.ndarray) -> AlternativeTable:
        from pmkit.fitting.alternatives import KEEP, repetition_noise, single_alternatives

        index = np.flatnonzero(wanted)  # the table's rows: these series, in order
        pieces = []
        for group in groups:
            rows = group.rows[wanted[group.rows]]
            if group.columns.size == 0 or rows.size == 0:
                continue
            rep_var, rep_dof = repetition_noise(batch.values[rows])
            own = fits.subset(rows)
            values = data.values[np.ix_(rows, group.columns)].copy()
            left_out = np.flatnonzero(np.isfinite(outlier_x[rows]))
            if left_out.size:
                # a point left out as an outlier takes no part: it stands at the model's own value
                at = np.argmax(x[group.columns][None, :] == outlier_x[rows[left_out], None], axis=1)
                values[left_out, at] = own.evaluate(x[group.columns])[left_out, at]
            # a segmented series' law is its last segment's: its alternatives are fitted on that segment
            starts = np.array([right_from.get(int(r), -np.inf) for r in rows])
            for start in np.unique(starts):
                part = np.flatnonzero(starts == start)
                keep = x[group.columns] >= start
                found = single_alternatives(parameter, x[group.columns][keep], values[np.ix_(part, keep)],
                                            own.subset(part), settings, (rep_var[part], rep_dof[part]))
                pieces.append((np.searchsorted(index, rows[part]), found))
        if len(pieces) == 1 and np.array_equal(pieces[0][0], np.arange(index.size)):
            # one piece holds every row, in order (series that share their points, no change point): it is
            # the table; copying it into an empty one cost 0.27 s and a second table's memory on 100,000 series
            return pieces[0][1]
        table = AlternativeTable.empty((parameter,), index.size, KEEP, 2)
        for place, found in pieces:
            table.put(place, found)  # each row is put once
        return table

    # a group's series are refitted together (one batched solve): a build's blocks are the groups
    blocks = np.full(count, -1, dtype=np.int64)
    for g, group in enumerate(groups):
        blocks[group.rows] = g
    columns.uncertainty = Uncertainty(alternatives, count, blocks=blocks)
    return ModelSet(batch.parameters, columns=columns)


def single_function(fits: SingleFits, i: int, parameter: str) -> Function:
    """Series ``i``'s law from search results: ``c0 + c1·x^α·log2^β(x)``, plus ``c2·x^α2·log2^β2(x)`` for
    a two-term (falling + growing) law, with the falling term first.  One row as an object; a batch
    becomes columns with :func:`single_columns`, which gives the same functions."""
    if fits.constant[i]:
        return Function((parameter,), float(fits.c0[i]))
    alpha = Fraction(int(fits.alpha[i, 0]), int(fits.alpha[i, 1]))
    beta = Fraction(int(fits.beta[i, 0]), int(fits.beta[i, 1]))
    function = simple_function(parameter, float(fits.c0[i]), float(fits.c1[i]), alpha, beta)
    if not fits.two_term[i]:
        return function
    second = Factor(parameter, Fraction(int(fits.alpha2[i, 0]), int(fits.alpha2[i, 1])),
                    Fraction(int(fits.beta2[i, 0]), int(fits.beta2[i, 1])))
    return Function((parameter,), function.constant, (*function.terms, Term(float(fits.c2[i]), (second,))))


def single_columns(batch: SeriesBatch, fits: SingleFits, present: np.ndarray, notes: tuple[np.ndarray, list],
                   outliers: tuple[np.ndarray, list], modeler: str, options: dict[str, Any]) -> ModelColumns:
    """The search results as model columns, the laws of :func:`single_function`: ``c0 + c1·x^α·log2^β(x)``
    (the term left out where it is trivial or its coefficient 0, as :func:`pmkit.pmnf.simple_function`
    does), then ``c2·x^α2·log2^β2(x)`` for two-term laws; no function without points.  ``notes`` and
    ``outliers`` are interned: per series an index, and the distinct values."""
    has = present > 0
    law = has & ~fits.constant
    first = law & ((fits.alpha[:, 0] != 0) | (fits.beta[:, 0] != 0)) & (fits.c1 != 0)
    second = law & fits.two_term
    terms = Terms(len(batch), 1)
    terms.add(np.flatnonzero(first), fits.c1[first], fits.alpha[first][:, None], fits.beta[first][:, None])
    terms.add(np.flatnonzero(second), fits.c2[second], fits.alpha2[second][:, None], fits.beta2[second][:, None])
    term_start, coefficient, exponent, log_exponent = terms.build()
    quality = np.where(has[:, None], np.column_stack([fits.rss, fits.smape, fits.adjusted_r2, fits.loo_smape]),
                       np.nan)
    return ModelColumns(batch.parameters, batch.callpaths, batch.metrics, has_function=has,
                        c0=np.where(has, fits.c0, np.nan), term_start=term_start, coefficient=coefficient,
                        exponent=exponent, log_exponent=log_exponent, quality=quality,
                        points=np.where(has, present, 0), note_group=notes[0], note_groups=notes[1],
                        modeler=modeler, options=options, outliers=outliers)
