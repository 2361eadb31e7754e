"""One-parameter models from the refining search, for a whole batch at once.

:func:`model_single` groups the batch's series by their missing points, runs
:func:`pmkit.fitting.refinement.refine_series` on each group (a prior's "constant" series with an
infinite non-constancy threshold), and returns a :class:`~pmkit.models.ModelSet` that builds each
:class:`~pmkit.models.Model` from the result arrays when it is asked for.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from pmkit.fitting.maskgroups import group_by_mask
from pmkit.fitting.refinement import RefineSettings, SingleFits, refine_series
from pmkit.modelers.search_inputs import SeriesData, constraint_of, settings_from
from pmkit.models import Model, ModelSet, Quality
from pmkit.pmnf import Factor, Function, Term, simple_function
from pmkit.series import SeriesBatch


def model_single(batch: SeriesBatch, options: dict[str, Any], modeler: str = "refining") -> ModelSet:
    """Refining models of a one-parameter batch, built lazily from per-series result arrays."""
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
    for group in group_by_mask(data.values):
        if group.columns.size == 0:
            continue
        rows = group.rows[~forced[group.rows]]
        result = refine_series(x[group.columns], data.values[np.ix_(rows, group.columns)], settings)
        fits.take(rows, result)
        if result.outlier is not None:
            left_out = result.outlier >= 0
            outlier_x[rows[left_out]] = x[group.columns][result.outlier[left_out]]
        const_rows = group.rows[forced[group.rows]]
        if const_rows.size:
            const = refine_series(x[group.columns], data.values[np.ix_(const_rows, group.columns)],
                                  RefineSettings(nonconstancy=np.inf, use_numba=settings.use_numba))
            fits.take(const_rows, const)
        note_texts.append(result.notes)
        group_notes[group.rows] = len(note_texts) - 1
    present = data.points_present

    def make(i: int) -> Model:
        notes = data.notes(i)
        constraint = constraint_of(batch, i)
        if constraint is not None:
            notes.append(constraint.note())
        if present[i] == 0:
            return Model(batch.callpaths[i], batch.metrics[i], None, Quality(), modeler, options, tuple(notes), 0)
        if group_notes[i] >= 0:
            notes = list(note_texts[group_notes[i]]) + notes
        if np.isfinite(outlier_x[i]):
            notes.append(f"the point {parameter}={outlier_x[i]:g} was left out as an outlier: the model of the "
                         "other points misses it by far more than their own scatter (quality figures are "
                         "over the other points)")
        function = single_function(fits, i, parameter)
        quality = Quality(float(fits.rss[i]), float(fits.smape[i]), float(fits.adjusted_r2[i]),
                          float(fits.loo_smape[i]))
        outliers = ({parameter: float(outlier_x[i])},) if np.isfinite(outlier_x[i]) else ()
        return Model(batch.callpaths[i], batch.metrics[i], function, quality, modeler, options, tuple(notes),
                     int(present[i]), outliers)

    return ModelSet(batch.parameters, count=count, make=make, modeler=modeler)


def single_function(fits: SingleFits, i: int, parameter: str) -> Function:
    """Series ``i``'s law from search results: ``c0 + c1·x^α·log2^β(x)``, plus ``c2·x^α2·log2^β2(x)`` for
    a two-term (falling + growing) law, with the falling term first."""
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
