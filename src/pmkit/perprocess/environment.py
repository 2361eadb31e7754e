"""The values a model is evaluated over: for a set of runs, every parameter per process and per run.

Per-process parameters come from a parameter table (one row per run and rank); global ones are
``p`` (the run's number of processes), a table column with one value per run, or a coordinate of
the run's name (``stencil.p8.n32`` gives ``n = 32``).  Derived parameters are evaluated in
dependency order; a value that is not a finite number (a division by zero, the log of a negative)
is an :class:`~pmkit.errors.InputError` naming the table, the line, the run and the rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pmkit.errors import InputError
from pmkit.perprocess.expressions import Env, Expression
from pmkit.perprocess.measured import MeasuredRun
from pmkit.perprocess.modelfile import ModelSpec, P
from pmkit.perprocess.tables import ParameterTable, run_coordinates, strip_repetition


@dataclass
class RunSet:
    """Runs (by name) with their processes and parameter values, ready for expressions."""

    names: list[str]
    table_keys: list[str]
    processes: np.ndarray
    env: Env
    table: ParameterTable

    @property
    def mask(self) -> np.ndarray:
        return self.env.mask

    def line(self, run: int, rank: int) -> int | None:
        entry = self.table.runs[self.table_keys[run]].rows.get(rank)
        return None if entry is None else entry[0]

    def subset(self, rows: Sequence[int], names: Sequence[str] | None = None) -> RunSet:
        """The runs at ``rows`` (repeats allowed), optionally renamed."""
        index = np.asarray(rows, dtype=np.int64)
        values = {k: (v[index] if np.ndim(v) == 2 else v) for k, v in self.env.values.items()}
        return RunSet(list(names) if names is not None else [self.names[i] for i in index],
                      [self.table_keys[i] for i in index], self.processes[index], Env(values, self.mask[index]),
                      self.table)


def build_runs(spec: ModelSpec, table: ParameterTable, keys: Sequence[str], processes: Sequence[int],
               coordinates: Sequence[Mapping[str, float]], names: Sequence[str] | None = None) -> RunSet:
    """Parameter values of the runs ``keys`` of ``table`` with ``processes`` each, derived ones included.

    ``coordinates`` give global parameters the table lacks (from the runs' folder names).
    """
    per_process, global_names = spec.parameters_used()
    counts = np.asarray(processes, dtype=np.int64)
    width = int(counts.max()) if counts.size else 0
    mask = np.arange(width)[None, :] < counts[:, None]
    values: dict[str, np.ndarray | float] = {}
    for name in per_process:
        if name not in table.columns:
            raise InputError(table.path, f"has no column {name!r}, a per-process parameter of the model "
                             f"{spec.path} (columns: {', '.join(table.columns) or 'none'})", line=1)
        array = np.full((len(keys), width), np.nan)
        for r, key in enumerate(keys):
            array[r, : counts[r]] = table.values(key, name, int(counts[r]))
        values[name] = array
    for name in global_names:
        column = np.empty((len(keys), 1))
        for r, key in enumerate(keys):
            column[r, 0] = _global(name, table, key, int(counts[r]), coordinates[r], spec)
        values[name] = column
    runs = RunSet(list(names) if names is not None else list(keys), list(keys), counts, Env(values, mask), table)
    for name in spec.derived_used():
        expression = spec.derived[name]
        values[name] = evaluate_checked(expression, runs, f"derived parameter {name} = {expression.text}")
    return runs


def _global(name: str, table: ParameterTable, key: str, processes: int, coordinates: Mapping[str, float],
            spec: ModelSpec) -> float:
    if name == P:
        return float(processes)
    if name in table.columns:
        return table.global_value(key, name)
    if name in coordinates:
        return float(coordinates[name])
    parsed = run_coordinates(key)
    if parsed is not None and name in parsed[0]:
        return parsed[0][name]
    raise InputError(table.path, f"run {key!r} has no value of the global parameter {name!r} of {spec.path}: add "
                     f"a column {name} or name the run with it (e.g. app.{name}8.r1)",
                     line=table.runs[key].first_line())


def evaluate_checked(expression: Expression, runs: RunSet, what: str) -> np.ndarray:
    """``expression`` over ``runs``, broadcast to runs × processes; InputError where a value is not finite."""
    result = np.asarray(expression.evaluate(runs.env), dtype=float)
    varies = result.ndim == 2 and result.shape[1] > 1
    full = np.broadcast_to(result, runs.mask.shape)
    bad = runs.mask & ~np.isfinite(full)
    if bad.any():
        r, rank = (int(i) for i in np.argwhere(bad)[0])
        where = f"run {runs.names[r]!r} rank {rank}" if varies else f"run {runs.names[r]!r}"
        raise InputError(runs.table.path, f"{what} is {full[r, rank]} for {where} (division by zero, or log2/sqrt/"
                         f"^ of a negative number?)", line=runs.line(r, rank))
    return result if varies else (result.reshape(-1, 1) if result.ndim == 2 else np.full((len(runs.names), 1),
                                                                                            float(result)))


@dataclass
class Matched:
    """Measured runs paired with the table runs that give their parameters."""

    runs: list[MeasuredRun]
    keys: list[str]
    unmatched: list[tuple[str, str]]


def match_runs(table: ParameterTable, measured: Sequence[MeasuredRun]) -> Matched:
    """Pair each measured run with a table run: the same name, the name without ``.rN``, or the same coordinates.

    Runs without rows, or with another number of ranks than processes, are returned in
    ``unmatched`` with the reason.
    """
    by_coordinates = [(key, run_coordinates(key)) for key in table.runs]
    runs, keys, unmatched = [], [], []
    for run in measured:
        key = _find(run, table, by_coordinates)
        if key is None:
            unmatched.append((run.source, f"run {run.label!r} has no rows in {table.path}"))
            continue
        rows = table.runs[key]
        if rows.processes != run.processes or not rows.complete():
            listed = _ranks_text(sorted(rows.rows))
            unmatched.append((run.source, f"run {run.label!r} has {run.processes} processes but {table.path} lists "
                              f"ranks {listed} for {key!r}"))
            continue
        runs.append(run)
        keys.append(key)
    return Matched(runs, keys, unmatched)


def _find(run: MeasuredRun, table: ParameterTable,
          by_coordinates: list[tuple[str, tuple[dict[str, float], int | None] | None]]) -> str | None:
    if run.label in table.runs:
        return run.label
    base = strip_repetition(run.label)
    if base in table.runs:
        return base
    hits = []
    for key, parsed in by_coordinates:
        if parsed is None or not run.coordinates:
            continue
        coords, repetition = parsed
        if all(coords.get(name) == value for name, value in run.coordinates.items()) and (
                repetition is None or repetition == run.repetition):
            hits.append((repetition is None, key))
    if not hits:
        return None
    hits.sort()
    if len(hits) > 1 and hits[0][0] == hits[1][0]:
        raise InputError(table.path, f"runs {hits[0][1]!r} and {hits[1][1]!r} both describe the measured run "
                         f"{run.label!r}; give each run one name")
    return hits[0][1]


def _ranks_text(ranks: list[int]) -> str:
    if ranks and ranks == list(range(ranks[0], ranks[-1] + 1)):
        return f"{ranks[0]}–{ranks[-1]}" if len(ranks) > 1 else str(ranks[0])
    shown = ", ".join(map(str, ranks[:8]))
    return shown + (", …" if len(ranks) > 8 else "")


def scenario_runs(spec: ModelSpec, table: ParameterTable) -> RunSet:
    """Every run of a scenario table; each must list ranks 0 … n-1 exactly once."""
    keys = list(table.runs)
    for key in keys:
        rows = table.runs[key]
        if not rows.complete():
            missing = sorted(set(range(max(rows.rows) + 1)) - set(rows.rows))
            raise InputError(table.path, f"run {key!r} lists ranks {_ranks_text(sorted(rows.rows))}: rank "
                             f"{missing[0]} is missing (a run's ranks are 0 … n-1)", line=rows.first_line())
    coordinates = [(run_coordinates(k) or ({}, None))[0] for k in keys]
    return build_runs(spec, table, keys, [table.runs[k].processes for k in keys], coordinates)
