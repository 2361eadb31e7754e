"""Modeling a batch in chunks of series, one task each, on an executor that runs tasks elsewhere.

A modeler that declares ``independent_series = True`` (the built-in ``refining`` and ``multiparam``
do) models each series from its own values, points and constraint alone, so a batch split into
chunks gives the same models as the whole: each task runs the modeler's own batched kernels on a
chunk and sends back :func:`chunk_result`; the SDK joins them with :func:`combine_chunks`.  Those
two functions are the only places that know what a ModelSet is made of.

Batches smaller than :data:`MIN_SERIES` are modeled in-process: shipping them would cost more
than modeling them (the refining search fits ~100,000 series/s on one core).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pmkit.errors import PluginError
from pmkit.executors import Executor
from pmkit.intervals import Uncertainty
from pmkit.models import ModelSet
from pmkit.plugins import Registration, call, returned
from pmkit.series import SeriesBatch

if TYPE_CHECKING:
    from pmkit.intervals import AlternativeTable
    from pmkit.modelcolumns import ModelColumns

MIN_SERIES = 10_000
"""Smallest batch sent out in chunks; equal to the refining search's ``NUMBA_MIN_SERIES``, from which
on an in-process run uses the compiled kernels too, as every worker does."""

CHUNK_SERIES = 5_000
"""Fewest series per chunk: enough that a task's work outweighs its scheduling and transfer."""

TASKS_PER_WORKER = 4
"""Chunks per worker, so that a slow worker or a retried task delays the end by a fraction only."""


def independent_series(entry: Registration) -> bool:
    """Whether the modeler declares that each series' model depends on that series alone."""
    return getattr(entry.obj, "independent_series", False) is True


def chunk_bounds(count: int, workers: int) -> list[tuple[int, int]]:
    """(start, stop) of each chunk of a batch of ``count`` series for ``workers`` workers."""
    size = max(CHUNK_SERIES, math.ceil(count / (workers * TASKS_PER_WORKER)))
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def chunk_of(batch: SeriesBatch, start: int, stop: int) -> SeriesBatch:
    """Series ``start:stop`` of ``batch``: the same points, without the experiment (it stays here)."""
    constraints = None if batch.constraints is None else batch.constraints[start:stop]
    return SeriesBatch(batch.parameters, batch.points, batch.values[start:stop], batch.callpaths[start:stop],
                       batch.metrics[start:stop], constraints, None)


def model_chunk(entry: Registration, options: Mapping[str, Any], chunk: SeriesBatch) -> Any:
    """One task: the modeler's models of a chunk, as :func:`chunk_result`; checked as the SDK checks
    a whole batch's."""
    _compiled_kernels()
    models = returned(entry, "model", call(entry, "model", chunk, **options), ModelSet, "a ModelSet")
    if len(models) != len(chunk):
        raise PluginError(entry.label, f"model() returned {len(models)} models for {len(chunk)} series")
    return chunk_result(models)


def chunk_result(models: ModelSet) -> tuple[str, ModelColumns]:
    """What a task sends back for its chunk: the set's modeler and its models as columns (a few arrays,
    not an object per model), without the closure that builds their alternatives on first use (it holds
    the chunk's fits; :func:`model_batch` refits the alternatives a view asks for)."""
    import copy

    columns = copy.copy(models.columns)
    columns.uncertainty = None
    return models.modeler, columns


def combine_chunks(parameters: Sequence[str], parts: Sequence[tuple[str, ModelColumns]]) -> ModelSet:
    """The ModelSet of a whole batch from its chunks' :func:`chunk_result`, in series order: the columns
    put end to end, term offsets and the series of functions of their own and of segmented models
    shifted, and notes, modeler names and outliers interned again."""
    from pmkit.modelcolumns import ModelColumns

    columns = [part for _, part in parts]
    sizes = np.array([len(part) for part in columns], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    term_offsets = np.concatenate([[0], np.cumsum([len(part.coefficient) for part in columns])[:-1]])
    term_start = np.concatenate([[0], *(part.term_start[1:] + offset for part, offset in zip(columns, term_offsets,
                                                                                            strict=True))])
    note_groups, note_group = _interned([(part.note_groups, part.note_group) for part in columns], tuple)
    modelers, modeler_of = _interned([(part.modeler_names, part.modeler_of) for part in columns], str)
    outliers, outlier_group = _interned([(part.outlier_groups, part.outlier_group) for part in columns],
                                        lambda points: tuple(tuple(sorted(point.items())) for point in points))

    def joined(name: str) -> np.ndarray:
        return np.concatenate([getattr(part, name) for part in columns])

    whole = ModelColumns(parameters, [c for part in columns for c in part.callpaths],
                         [m for part in columns for m in part.metrics], has_function=joined("has_function"),
                         c0=joined("c0"), term_start=term_start, coefficient=joined("coefficient"),
                         exponent=joined("exponent"), log_exponent=joined("log_exponent"), quality=joined("quality"),
                         points=joined("points"), note_group=note_group, note_groups=note_groups,
                         options=columns[0].options, modeler_of=(modelers, modeler_of),
                         outliers=(outlier_group, outliers))
    whole.own_functions = {int(start) + i: function for part, start in zip(columns, starts, strict=True)
                           for i, function in part.own_functions.items()}
    whole.segments = {int(start) + i: segmented for part, start in zip(columns, starts, strict=True)
                      for i, segmented in part.segments.items()}
    return ModelSet(parameters, columns=whole, modeler=parts[0][0])


def _interned(parts: Sequence[tuple[Sequence[Any], np.ndarray]], key: Any) -> tuple[list[Any], np.ndarray]:
    """Distinct values of several (values, per-series index) pairs as one list, and each series' index into it."""
    index: dict[Any, int] = {}
    values: list[Any] = []
    codes = []
    for distinct, code in parts:
        remap = np.empty(len(distinct), dtype=np.int64)
        for k, value in enumerate(distinct):
            found = index.setdefault(key(value), len(values))
            if found == len(values):
                values.append(value)
            remap[k] = found
        codes.append(remap[code])
    return values, np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)


def model_batch(entry: Registration, options: Mapping[str, Any], batch: SeriesBatch, executor: Executor) -> ModelSet:
    """The modeler's models of ``batch``: in chunks on ``executor`` when it runs tasks elsewhere, the
    batch is large enough and the modeler allows it; in one call here otherwise."""
    if not (executor.remote and len(batch) >= MIN_SERIES and independent_series(entry)):
        return returned(entry, "model", call(entry, "model", batch, **options), ModelSet, "a ModelSet")
    bounds = chunk_bounds(len(batch), executor.workers)
    tasks = [(entry, dict(options), chunk_of(batch, start, stop)) for start, stop in bounds]
    parts = executor.map(model_chunk, tasks, description=f"modeling {len(batch):,} series in {len(tasks)} chunks "
                                                         f"on {executor.name}")
    models = combine_chunks(batch.parameters, parts)
    models.columns.uncertainty = Uncertainty(functools.partial(refitted_alternatives, entry, dict(options), batch),
                                             len(batch))
    return models


def refitted_alternatives(entry: Registration, options: Mapping[str, Any], batch: SeriesBatch,
                          wanted: np.ndarray) -> AlternativeTable:
    """The alternatives (prediction intervals) of the series ``wanted`` of a batch modeled in chunks (a table
    of those series alone, in order): those series modeled again here, which gives their models to the last bit
    (the modeler declares ``independent_series``), and their set's alternatives. Only the series a view asks
    for are refitted; a table without rows has no interval."""
    from pmkit.intervals import AlternativeTable

    rows = np.flatnonzero(wanted)
    if rows.size:
        some = returned(entry, "model", call(entry, "model", rows_of(batch, rows), **options), ModelSet, "a ModelSet")
        if some.uncertainty is not None:
            return some.uncertainty.table()
    return AlternativeTable.empty(batch.parameters, rows.size)


def rows_of(batch: SeriesBatch, rows: np.ndarray) -> SeriesBatch:
    """The series ``rows`` of ``batch`` (a sorted index), with the same points."""
    constraints = None if batch.constraints is None else [batch.constraints[i] for i in rows]
    return SeriesBatch(batch.parameters, batch.points, batch.values[rows], [batch.callpaths[i] for i in rows],
                       [batch.metrics[i] for i in rows], constraints, batch.experiment)


def _compiled_kernels() -> None:
    """Load numba in the worker (once per process), so that every chunk takes the compiled kernels
    whatever its size — as the whole batch does in-process from :data:`MIN_SERIES` series on."""
    from pmkit.fitting.kernels import numba_enabled

    if numba_enabled():
        import numba  # noqa: F401
