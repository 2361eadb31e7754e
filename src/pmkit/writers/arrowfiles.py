"""Models as an Arrow table, written as Parquet or as an Arrow IPC file (pyarrow, the ``parquet`` extra).

One row per model, the keys of a ``pmkit.models/1`` entry as columns, flattened where a dataframe
wants it: ``source``, ``callpath``, ``metric``, ``modeler``, ``constant`` (float), ``terms`` (list of
``{coefficient, factors: list of {parameter, exponent, log_exponent}}``, exponents as exact fraction
strings), ``text``, ``pretty``, ``rss``, ``smape``, ``adjusted_r2``, ``cv_smape``, ``points``,
``notes`` (list of strings), ``outliers`` (list of points, each a map from parameter to value),
``change_point`` (``{parameter, value, low, high}``) and ``segments`` (the JSON text of the
segments list, as in the JSON document), both null unless the law changes at a threshold.
``constant``, ``terms``, ``text`` and ``pretty`` are null where no model could be made; non-finite
quality figures are null.  The rest of the JSON document
(``schema``, ``parameters``, ``sources``, ``skipped``, ``findings``) is the file's metadata under the
key ``pmkit``, as JSON.

The term table's offsets are Arrow's list offsets, so ``terms`` is laid out without a Python object
per model.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from pmkit.modelcolumns import QUALITY_FIELDS, ModelColumns
from pmkit.pmnf import fraction_text
from pmkit.schema import models_document
from pmkit.writers import CHUNK

if TYPE_CHECKING:
    import pyarrow as pa

    from pmkit.analysis import Skipped
    from pmkit.findings import Finding
    from pmkit.models import ModelSet

METADATA_KEY = b"pmkit"


def schema() -> pa.Schema:
    """The columns of a models table (see the module docstring)."""
    import pyarrow as pa

    factor = pa.struct([("parameter", pa.string()), ("exponent", pa.string()), ("log_exponent", pa.string())])
    term = pa.struct([("coefficient", pa.float64()), ("factors", pa.list_(factor))])
    return pa.schema([("source", pa.string()), ("callpath", pa.string()), ("metric", pa.string()),
                      ("modeler", pa.string()), ("constant", pa.float64()), ("terms", pa.list_(term)),
                      ("text", pa.string()), ("pretty", pa.string()),
                      *((name, pa.float64()) for name in QUALITY_FIELDS),
                      ("points", pa.int64()), ("notes", pa.list_(pa.string())),
                      ("outliers", pa.list_(pa.map_(pa.string(), pa.float64()))),
                      ("change_point", pa.struct([("parameter", pa.string()), ("value", pa.float64()),
                                                  ("low", pa.float64()), ("high", pa.float64())])),
                      ("segments", pa.string())])


def _ragged(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """List offsets for items of ``counts`` elements and, per element, its index into a flat table
    where item ``i``'s elements start at ``starts[i]``."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    index = np.repeat(np.asarray(starts, dtype=np.int64) - offsets[:-1], counts) + np.arange(offsets[-1])
    return offsets.astype(np.int32), index


class _Tables:
    """The Arrow pieces shared by every chunk of one :class:`ModelColumns`: each shape's factors and
    each note group's notes as flat tables."""

    def __init__(self, columns: ModelColumns) -> None:
        import pyarrow as pa

        self.columns = columns
        factors = [f for shape in columns.shapes for f in shape]
        self.factor_start = np.cumsum([0] + [len(shape) for shape in columns.shapes])[:-1]
        self.factor_count = np.array([len(shape) for shape in columns.shapes], dtype=np.int64)
        self.factors = pa.StructArray.from_arrays(
            [pa.array([f.parameter for f in factors], pa.string()),
             pa.array([fraction_text(f.exponent) for f in factors], pa.string()),
             pa.array([fraction_text(f.log_exponent) for f in factors], pa.string())],
            names=["parameter", "exponent", "log_exponent"])
        groups = columns.note_groups
        self.note_start = np.cumsum([0] + [len(g) for g in groups])[:-1]
        self.note_count = np.array([len(g) for g in groups], dtype=np.int64)
        self.notes = pa.array([note for group in groups for note in group], pa.string())
        points = [point for group in columns.outlier_groups for point in group]
        self.outlier_start = np.cumsum([0] + [len(g) for g in columns.outlier_groups])[:-1]
        self.outlier_count = np.array([len(g) for g in columns.outlier_groups], dtype=np.int64)
        self.outliers = pa.MapArray.from_arrays(
            pa.array(np.cumsum([0] + [len(p) for p in points]).astype(np.int32)),
            pa.array([k for p in points for k in p], pa.string()), pa.array([v for p in points for v in p.values()],
                                                                             pa.float64()))

    def chunk(self, source: str, start: int, stop: int) -> pa.RecordBatch:
        import pyarrow as pa

        c = self.columns
        rows = slice(start, stop)
        no_function = ~c.has_function[rows]
        first, last = int(c.term_start[start]), int(c.term_start[stop])
        shape = c.shape_of_term[first:last]
        offsets, index = _ragged(self.factor_start[shape], self.factor_count[shape])
        factors = pa.ListArray.from_arrays(pa.array(offsets), self.factors.take(pa.array(index)))
        terms = pa.StructArray.from_arrays([pa.array(c.coefficient[first:last]), factors],
                                           names=["coefficient", "factors"])
        term_offsets = (c.term_start[start:stop + 1] - first).astype(np.int32)
        groups = c.note_group[rows]
        note_offsets, note_index = _ragged(self.note_start[groups], self.note_count[groups])
        outlier_offsets, outlier_index = _ragged(self.outlier_start[c.outlier_group[rows]],
                                                 self.outlier_count[c.outlier_group[rows]])
        quality = c.quality[rows]
        names = np.array(c.modeler_names, dtype=object)[c.modeler_of[rows]]
        data = [pa.array([source] * (stop - start), pa.string()), pa.array(c.callpaths[start:stop], pa.string()),
                pa.array(c.metrics[start:stop], pa.string()), pa.array(names, pa.string()),
                pa.array(c.c0[rows], mask=no_function),
                pa.ListArray.from_arrays(pa.array(term_offsets), terms, mask=pa.array(no_function)),
                pa.array(c.extrap_texts(start, stop), pa.string()), pa.array(c.pretty_texts(start, stop), pa.string()),
                *(pa.array(quality[:, k], mask=~np.isfinite(quality[:, k])) for k in range(len(QUALITY_FIELDS))),
                pa.array(c.points[rows]),
                pa.ListArray.from_arrays(pa.array(note_offsets), self.notes.take(pa.array(note_index))),
                pa.ListArray.from_arrays(pa.array(outlier_offsets), self.outliers.take(pa.array(outlier_index))),
                *self._segments(start, stop)]
        return pa.RecordBatch.from_arrays(data, schema=schema())

    def _segments(self, start: int, stop: int) -> list[pa.Array]:
        """The ``change_point`` and ``segments`` columns of series ``start:stop`` (null where no change)."""
        import pyarrow as pa

        from pmkit.schema import finite_json

        changes: list[dict | None] = [None] * (stop - start)
        texts: list[str | None] = [None] * (stop - start)
        for i, (segments, change) in self.columns.segments.items():
            if start <= i < stop:
                changes[i - start] = change.to_json()
                texts[i - start] = json.dumps(finite_json([s.to_json() for s in segments]), allow_nan=False)
        return [pa.array(changes, schema().field("change_point").type), pa.array(texts, pa.string())]


def _batches(sets: Sequence[tuple[str, ModelSet]], size: int) -> Iterable[pa.RecordBatch]:
    for source, models in sets:
        tables = _Tables(models.columns)
        for start in range(0, len(models), size):
            yield tables.chunk(source, start, min(start + size, len(models)))


def _schema_with(head: dict[str, Any]) -> pa.Schema:
    return schema().with_metadata({METADATA_KEY: json.dumps(head, allow_nan=False).encode()})


def write_parquet(stream: BinaryIO, parameters: Sequence[str], sets: Sequence[tuple[str, ModelSet]], *,
                  sources: Sequence[str] = (), skipped: Iterable[Skipped] = (),
                  findings: Iterable[Finding] = (), chunk: int = CHUNK) -> None:
    """``pmkit model --format parquet``: a row group per chunk of models."""
    import pyarrow.parquet as pq

    head = models_document(parameters, [], sources=sources, skipped=skipped, findings=findings)
    del head["models"]
    with pq.ParquetWriter(stream, _schema_with(head), compression="zstd") as writer:
        for batch in _batches(sets, chunk):
            writer.write_batch(batch)


def write_arrow(stream: BinaryIO, parameters: Sequence[str], sets: Sequence[tuple[str, ModelSet]], *,
                sources: Sequence[str] = (), skipped: Iterable[Skipped] = (),
                findings: Iterable[Finding] = (), chunk: int = CHUNK) -> None:
    """``pmkit model --format arrow``: an Arrow IPC file (Feather 2), a record batch per chunk of models."""
    import pyarrow as pa

    head = models_document(parameters, [], sources=sources, skipped=skipped, findings=findings)
    del head["models"]
    with pa.ipc.new_file(stream, _schema_with(head)) as writer:
        for batch in _batches(sets, chunk):
            writer.write_batch(batch)
