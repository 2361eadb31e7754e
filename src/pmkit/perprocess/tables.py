"""Per-process parameter tables: CSV files with one row per (run, rank).

The header names ``run``, ``rank`` and one column per parameter (``run,rank,cells,neighbours``);
lines starting with ``#`` are comments.  ``run`` names a run as its folder is named in the study
(``stencil.p8.n32.r1``) or a configuration without the repetition (``stencil.p8.n32``, which then
applies to every repetition).  Every value must be a finite number; each problem is an
:class:`~pmkit.errors.InputError` naming the file and the line.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pmkit.errors import InputError
from pmkit.readers.cube_study import parse_run_name
from pmkit.readers.parsing import read_text

RUN, RANK = "run", "rank"


@dataclass
class TableRun:
    """The rows of one run: per rank, its line and its values (column order of the table)."""

    key: str
    rows: dict[int, tuple[int | None, np.ndarray]] = field(default_factory=dict)

    @property
    def processes(self) -> int:
        return len(self.rows)

    def complete(self) -> bool:
        """Whether the ranks are exactly 0 … n-1."""
        return set(self.rows) == set(range(len(self.rows)))

    def first_line(self) -> int | None:
        """The run's first line in the file (None for values that came from elsewhere, e.g. Cube files)."""
        lines = [line for line, _ in self.rows.values() if line is not None]
        return min(lines) if lines else None


@dataclass
class ParameterTable:
    """A parsed parameter table: its columns (besides run and rank) and its runs in file order."""

    path: str
    columns: tuple[str, ...]
    runs: dict[str, TableRun]

    def column(self, name: str) -> int:
        return self.columns.index(name)

    def values(self, key: str, name: str, processes: int) -> np.ndarray:
        """Column ``name`` of run ``key`` for ranks 0 … processes-1 (the run must have them all)."""
        run = self.runs[key]
        col = self.column(name)
        return np.array([run.rows[rank][1][col] for rank in range(processes)])

    def global_value(self, key: str, name: str) -> float:
        """A column that must hold one value for the whole run; InputError naming the line where it differs."""
        run = self.runs[key]
        col = self.column(name)
        ranks = sorted(run.rows)
        first = run.rows[ranks[0]][1][col]
        for rank in ranks[1:]:
            line, values = run.rows[rank]
            if values[col] != first:
                raise InputError(self.path, f"global parameter {name} differs between the ranks of run {key!r} "
                                 f"({first:g} on rank {ranks[0]}, {values[col]:g} on rank {rank}); a per-process "
                                 "quantity belongs in [parameters] per_process", line=line)
        return float(first)


def read_table(path: str | Path) -> ParameterTable:
    """Parse a parameter table; InputError naming the file and line of the first problem."""
    path = Path(path)
    text = read_text(path)
    numbered = [(i, line) for i, line in enumerate(text.splitlines(), start=1)
                if line.strip() and not line.lstrip().startswith("#")]
    if not numbered:
        raise InputError(path, "is empty; expected a header run,rank,PARAMETER,... and one row per process")
    rows = list(csv.reader([line for _, line in numbered]))
    header = [h.strip() for h in rows[0]]
    header_line = numbered[0][0]
    if RUN not in header or RANK not in header:
        raise InputError(path, f"the header must name the columns {RUN} and {RANK} (and one column per "
                         f"parameter), got {','.join(header)}", line=header_line)
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates or "" in header:
        problem = f"column {duplicates[0]!r} appears twice" if duplicates else "a column has no name"
        raise InputError(path, f"{problem} in the header", line=header_line)
    run_col, rank_col = header.index(RUN), header.index(RANK)
    columns = tuple(h for h in header if h not in (RUN, RANK))
    value_cols = [header.index(c) for c in columns]
    runs: dict[str, TableRun] = {}
    for (line, _), fields in zip(numbered[1:], rows[1:], strict=True):
        if len(fields) != len(header):
            raise InputError(path, f"has {len(fields)} fields, the header has {len(header)}", line=line)
        key = fields[run_col].strip()
        if not key:
            raise InputError(path, "the run is empty", line=line)
        try:
            rank = int(fields[rank_col])
        except ValueError:
            raise InputError(path, f"rank {fields[rank_col].strip()!r} is not a whole number", line=line) from None
        if rank < 0:
            raise InputError(path, f"rank {rank} is negative", line=line)
        values = np.empty(len(columns))
        for k, col in enumerate(value_cols):
            text_value = fields[col].strip()
            try:
                number = float(text_value)
            except ValueError:
                raise InputError(path, f"{columns[k]} = {text_value!r} is not a number", line=line) from None
            if not math.isfinite(number):
                raise InputError(path, f"{columns[k]} = {text_value!r} is not a finite number", line=line)
            values[k] = number
        run = runs.setdefault(key, TableRun(key))
        if rank in run.rows:
            raise InputError(path, f"run {key!r} rank {rank} appears twice (also line {run.rows[rank][0]})",
                             line=line)
        run.rows[rank] = (line, values)
    if not runs:
        raise InputError(path, "has a header but no rows", line=header_line)
    return ParameterTable(str(path), columns, runs)


def run_coordinates(key: str) -> tuple[dict[str, float], int | None] | None:
    """Coordinates and repetition in an Extra-P style run name, or None if it has none."""
    try:
        name = parse_run_name(key)
    except ValueError:
        return None
    return name.coordinates, name.repetition


def strip_repetition(label: str) -> str:
    """``stencil.p8.r2`` → ``stencil.p8``: the configuration a repetition belongs to."""
    parsed = run_coordinates(label)
    if parsed is not None and parsed[1] is not None:
        return label[: label.rfind(".r")]
    return label
