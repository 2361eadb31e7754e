"""Calibration samples: the times of repeated MPI calls, grouped by (operation, processes, bytes).

From a trace's :class:`~pmkit.experiment.EventTable` — the calls below a region whose name starts
with a prefix (``--callpath-prefix calib_``), the calls of one MPI function, or every
communication call — or from a CSV file with the columns ``op,nprocs,bytes,duration`` (seconds).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pmkit.errors import InputError
from pmkit.experiment import CALL_KINDS, EventTable

Sample = tuple[str, int, float, np.ndarray]
"""(operation, processes, bytes, times in seconds)."""

CSV_COLUMNS = ("op", "nprocs", "bytes", "duration")


def communication_rows(events: EventTable) -> np.ndarray:
    """Rows of calls that communicate (sends, receives, completions, collectives; not MPI_Comm_rank)."""
    return events["kind"] != CALL_KINDS.index("other")


def select_rows(events: EventTable, *, callpath_prefix: str | None = None, region: str | None = None) -> np.ndarray:
    """A mask of the communication calls below a region starting with ``callpath_prefix`` (or whose call
    path starts with it) and of the function ``region``, when given."""
    keep = communication_rows(events)
    if callpath_prefix:
        wanted = np.array([cp.path.startswith(callpath_prefix) or f"->{callpath_prefix}" in cp.path
                           for cp in events.callpaths] + [False], dtype=bool)
        keep &= wanted[events["callpath"]]
    if region:
        keep &= events.region_names() == region
    return keep


def group_rows(events: EventTable, rows: np.ndarray) -> Iterator[tuple[str, int, float, np.ndarray]]:
    """(operation, processes, bytes, row indices) of every group among ``rows``; NaN bytes count as 0."""
    index = np.nonzero(rows)[0]
    if not len(index):
        return
    names = events.region_names()[index]
    sizes = np.nan_to_num(events["bytes"][index], nan=0.0)
    procs = events["comm_size"][index]
    codes, inverse = np.unique(names.astype(str), return_inverse=True)
    keys = np.stack([inverse.reshape(-1).astype(float), procs.astype(float), sizes], axis=1)
    unique, group = np.unique(keys, axis=0, return_inverse=True)
    group = group.reshape(-1)
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(len(unique) + 1))
    for g, (code, p, b) in enumerate(unique):
        yield str(codes[int(code)]), int(p), float(b), index[order[bounds[g]:bounds[g + 1]]]


def trace_samples(events: EventTable, *, callpath_prefix: str | None = None, region: str | None = None
                  ) -> list[Sample]:
    """The samples of the selected calls of a trace (see :func:`select_rows`)."""
    durations = events["duration"]
    return [(op, p, b, durations[rows]) for op, p, b, rows in
            group_rows(events, select_rows(events, callpath_prefix=callpath_prefix, region=region))]


def csv_samples(path: str | Path) -> list[Sample]:
    """Samples from a CSV file ``op,nprocs,bytes,duration`` (a header line, durations in seconds)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, f"cannot be read: {exc}") from None
    reader = csv.reader(text.splitlines())
    header = [h.strip().lower() for h in next(reader, [])]
    if tuple(header) != CSV_COLUMNS:
        raise InputError(path, f"the header must be {','.join(CSV_COLUMNS)}, got {','.join(header) or 'nothing'}",
                         line=1)
    groups: dict[tuple[str, int, float], list[float]] = {}
    for row in reader:
        line = reader.line_num
        if not row or not "".join(row).strip():
            continue
        if len(row) != 4:
            raise InputError(path, f"expected 4 fields, got {len(row)}", line=line)
        op = row[0].strip()
        try:
            p, b, t = int(row[1]), float(row[2]), float(row[3])
        except ValueError:
            raise InputError(path, "nprocs must be an integer, bytes and duration numbers", line=line) from None
        if not op or p < 1 or not (math.isfinite(b) and b >= 0) or not (math.isfinite(t) and t >= 0):
            raise InputError(path, "needs an operation, nprocs ≥ 1, bytes ≥ 0 and a duration ≥ 0 seconds", line=line)
        groups.setdefault((op, p, b), []).append(t)
    if not groups:
        raise InputError(path, "has no samples")
    return [(op, p, b, np.array(times)) for (op, p, b), times in sorted(groups.items())]
