"""Repetition values keyed by call path, metric and point, collected the way Extra-P collects them.

Extra-P's readers gather values per (call path, metric) and, inside that, per point in order of
first appearance; its experiment lists call paths, metrics and points in that order, and it rejects
a file where a (call path, metric) pair lacks a value at some point of the experiment.  The
:class:`RecordTable` keeps that order and that rule (the rule can be relaxed, leaving NaN where
values are missing) so that pmkit reads every Extra-P input exactly as Extra-P does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from pmkit.errors import InputError, excerpt
from pmkit.experiment import CALLPATH_SEPARATOR, Experiment, ExperimentBuilder
from pmkit.options import Option

Point = tuple[float, ...]

ALLOW_MISSING_OPTION = Option(
    "allow_missing_points", bool, False,
    "read call paths that lack values at some points (NaN there) instead of rejecting the file as Extra-P does")


def check_callpath(name: str, path: Path, *, line: int | None = None, member: str | None = None) -> str:
    """``name`` if it is a usable call path (``a->b->c`` with no empty region); InputError if not."""
    if not name.strip():
        raise InputError(path, "call path name is empty", line=line, member=member)
    if any(part == "" for part in name.split(CALLPATH_SEPARATOR)):
        raise InputError(path, f"call path {excerpt(name)} has an empty region name between '{CALLPATH_SEPARATOR}'",
                         line=line, member=member)
    return name


class RecordTable:
    """Values per (call path, metric) and point, in Extra-P's order; builds the Experiment.

    Records arrive one at a time (:meth:`add`) or as a block of arrays (:meth:`add_block`, what the
    readers use for whole batches of records); either way the table keeps codes and arrays, not an
    object per value, and :meth:`build` gives the Experiment that adding the records one by one in
    the same order always gave.
    """

    def __init__(self, path: Path, reader: str) -> None:
        self.path = path
        self.reader = reader
        self._callpaths: dict[str, int] = {}
        self._metrics: dict[str, int] = {}
        self._points: dict[Point, int] = {}
        self._pairs: dict[tuple[int, int], int] = {}
        self._pair_line: list[int | None] = []
        self._single: tuple[list[int], list[int], list[int], list[float]] = ([], [], [], [])
        self._blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def declare_callpath(self, name: str) -> None:
        """List a call path even if it has no values (Extra-P lists REGIONs without DATA)."""
        self._callpaths.setdefault(name, len(self._callpaths))

    def declare_metric(self, name: str) -> None:
        """List a metric even if it has no values."""
        self._metrics.setdefault(name, len(self._metrics))

    def _pair(self, callpath: int, metric: int, line: int | None) -> int:
        pair = self._pairs.get((callpath, metric))
        if pair is None:
            pair = self._pairs[(callpath, metric)] = len(self._pair_line)
            self._pair_line.append(line)
        return pair

    def add(self, callpath: str, metric: str, point: Point, values: Iterable[float], *,
            line: int | None = None) -> None:
        """Append repetition values of (call path, metric) at ``point``."""
        self.declare_callpath(callpath)
        self.declare_metric(metric)
        pairs, points, counts, flat = self._single
        pairs.append(self._pair(self._callpaths[callpath], self._metrics[metric], line))
        points.append(self._points.setdefault(point, len(self._points)))
        before = len(flat)
        flat.extend(values)
        counts.append(len(flat) - before)

    def add_block(self, callpaths: Sequence[str], metrics: Sequence[str], points: np.ndarray, values: np.ndarray,
                  counts: np.ndarray, lines: Sequence[int] | None = None) -> None:
        """Append many records at once: record ``k`` is (``callpaths[k]``, ``metrics[k]``) at the point
        ``points[k]`` (a row of finite coordinates) with the next ``counts[k]`` of ``values``."""
        if not len(callpaths):
            return
        self._flush()
        cp_codes, m_codes = self._callpaths, self._metrics
        cps = [cp_codes.setdefault(name, len(cp_codes)) for name in callpaths]
        ms = [m_codes.setdefault(name, len(m_codes)) for name in metrics]
        key = np.asarray(cps, dtype=np.int64) << 32 | np.asarray(ms, dtype=np.int64)
        unique_keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        pair_of = np.empty(len(unique_keys), dtype=np.int64)
        for u in np.argsort(first, kind="stable").tolist():  # new pairs get codes in order of appearance
            k = int(first[u])
            pair_of[u] = self._pair(cps[k], ms[k], None if lines is None else lines[k])
        pairs = pair_of[inverse.reshape(-1)]
        rows = np.asarray(points, dtype=float).reshape(len(pairs), -1)
        unique, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        code = np.empty(len(unique), dtype=np.int64)
        for u in np.argsort(first, kind="stable").tolist():  # new points get codes in order of appearance
            code[u] = self._points.setdefault(tuple(unique[u].tolist()), len(self._points))
        self._blocks.append((pairs, code[inverse.reshape(-1)],
                             np.asarray(counts, dtype=np.int64), np.asarray(values, dtype=float)))

    def _flush(self) -> None:
        pairs, points, counts, flat = self._single
        if pairs:
            self._blocks.append((np.asarray(pairs, dtype=np.int64), np.asarray(points, dtype=np.int64),
                                 np.asarray(counts, dtype=np.int64), np.asarray(flat, dtype=float)))
            self._single = ([], [], [], [])

    def __len__(self) -> int:
        return len(self._pair_line)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        self._flush()
        if not self._blocks:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, np.zeros(0)
        return tuple(np.concatenate([b[i] for b in self._blocks]) for i in range(4))  # type: ignore[return-value]

    def points_in_order(self) -> list[Point]:
        """Points in Extra-P's order when it collects them from records: key by key, first seen first."""
        pairs, points, _, _ = self._arrays()
        order = np.lexsort((np.arange(len(pairs)), pairs))
        ordered = points[order]
        _, first = np.unique(ordered, return_index=True)
        by_code = list(self._points)
        return [by_code[c] for c in ordered[np.sort(first)].tolist()]

    def check_complete(self, points: Sequence[Point], parameters: Sequence[str]) -> None:
        """Extra-P's rule: every (call path, metric) with values has values at every point."""
        pairs, codes, _, _ = self._arrays()
        by_code = list(self._points)
        column = np.full(len(by_code), -1, dtype=np.int64)  # point code → position in ``points``
        for position, point in enumerate(points):
            code = self._points.get(point)
            if code is not None and column[code] < 0:
                column[code] = position
        present = np.zeros((len(self), len(points)), dtype=bool)
        wanted = column[codes] >= 0
        present[pairs[wanted], column[codes[wanted]]] = True
        extra_pairs = np.unique(pairs[~wanted])
        missing_pairs = np.flatnonzero(~present.all(axis=1))
        if not extra_pairs.size and not missing_pairs.size:
            return
        pair = int(min(extra_pairs.min(initial=len(self)), missing_pairs.min(initial=len(self))))
        names = list(self._callpaths)
        metrics = list(self._metrics)
        callpath, metric = next(key for key, p in self._pairs.items() if p == pair)
        callpath_name, metric_name = names[callpath], metrics[metric]
        line = self._pair_line[pair]
        if extra_pairs.size and extra_pairs[0] == pair:
            extra = by_code[int(codes[(pairs == pair) & ~wanted][0])]
            raise InputError(self.path, f"call path {excerpt(callpath_name)}, metric {excerpt(metric_name)} has "
                             f"values at {_point_text(extra, parameters)}, which is not a point of the experiment",
                             line=line)
        row = present[pair]
        raise incomplete_error(self.path, callpath_name, metric_name, int(row.sum()), points,
                               [p for p, have in zip(points, row, strict=True) if not have], parameters, line)

    def build(self, parameters: Sequence[str], points: Sequence[Point] | None = None, *,
              allow_missing: bool = False) -> Experiment:
        """The Experiment: ``points`` in the given order (default: as collected), Extra-P's checks applied."""
        if not len(self):
            raise InputError(self.path, "no measured values were found")
        if points is None:
            points = self.points_in_order()
        if not allow_missing:
            self.check_complete(points, parameters)
        builder = ExperimentBuilder(parameters, source=str(self.path))
        builder.provenance.reader = self.reader
        for point in points:
            builder.add_point(point)
        try:
            tree_index = builder.callpaths.add_many(list(self._callpaths))
        except ValueError as exc:
            raise InputError(self.path, str(exc)) from None
        for metric in self._metrics:
            builder.add_metric(metric)
        pairs, codes, counts, values = self._arrays()
        point_index = np.fromiter((builder.add_point(p) for p in self._points), dtype=np.int64,
                                  count=len(self._points))
        pair_callpath = np.empty(len(self), dtype=np.int64)
        pair_metric = np.empty(len(self), dtype=np.int64)
        for (callpath, metric), pair in self._pairs.items():
            pair_callpath[pair], pair_metric[pair] = callpath, metric
        metric_of = pair_metric[pairs]
        names = list(self._metrics)
        for code in np.unique(metric_of).tolist():
            rows = metric_of == code
            builder.add_block(names[code], tree_index[pair_callpath[pairs[rows]]], point_index[codes[rows]],
                              values[np.repeat(rows, counts)], counts[rows])
        try:
            return builder.build()
        except ValueError as exc:
            raise InputError(self.path, str(exc)) from None


def incomplete_error(path: Path, callpath: str, metric: str, have: int, points: Sequence[Point],
                     missing: Sequence[Point], parameters: Sequence[str], line: int | None) -> InputError:
    """Extra-P's rule broken: (call path, metric) has values at ``have`` of the points, none at ``missing``."""
    shown = ", ".join(_point_text(p, parameters) for p in missing[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return InputError(path, f"call path {excerpt(callpath)}, metric {excerpt(metric)} has values at {have} of "
                      f"{len(points)} points; none at {shown}{more} (Extra-P rejects such files; --reader-option "
                      f"{ALLOW_MISSING_OPTION.name}=true reads them with NaN there)", line=line)


def _point_text(point: Point, parameters: Sequence[str]) -> str:
    if len(point) != len(parameters):
        return "(" + ", ".join(_num(v) for v in point) + ")"
    return "(" + ", ".join(f"{p}={_num(v)}" for p, v in zip(parameters, point, strict=True)) + ")"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
