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
        raise InputError(path, f"call path {name!r} has an empty region name between '{CALLPATH_SEPARATOR}'",
                         line=line, member=member)
    return name


class RecordTable:
    """Values per (call path, metric) and point, in Extra-P's order; builds the Experiment."""

    def __init__(self, path: Path, reader: str) -> None:
        self.path = path
        self.reader = reader
        self._records: dict[tuple[str, str], dict[Point, list[float]]] = {}
        self._where: dict[tuple[str, str], int | None] = {}
        self._callpaths: dict[str, None] = {}
        self._metrics: dict[str, None] = {}

    def declare_callpath(self, name: str) -> None:
        """List a call path even if it has no values (Extra-P lists REGIONs without DATA)."""
        self._callpaths.setdefault(name)

    def declare_metric(self, name: str) -> None:
        """List a metric even if it has no values."""
        self._metrics.setdefault(name)

    def has(self, callpath: str, metric: str, point: Point) -> bool:
        return point in self._records.get((callpath, metric), {})

    def add(self, callpath: str, metric: str, point: Point, values: Iterable[float], *,
            line: int | None = None) -> None:
        """Append repetition values of (call path, metric) at ``point``."""
        key = (callpath, metric)
        per_point = self._records.get(key)
        if per_point is None:
            per_point = self._records[key] = {}
            self._where[key] = line
            self.declare_callpath(callpath)
            self.declare_metric(metric)
        per_point.setdefault(point, []).extend(values)

    def __len__(self) -> int:
        return len(self._records)

    def points_in_order(self) -> list[Point]:
        """Points in Extra-P's order when it collects them from records: key by key, first seen first."""
        seen: dict[Point, None] = {}
        for per_point in self._records.values():
            for point in per_point:
                seen.setdefault(point)
        return list(seen)

    def check_complete(self, points: Sequence[Point], parameters: Sequence[str]) -> None:
        """Extra-P's rule: every (call path, metric) with values has values at every point."""
        wanted = set(points)
        for (callpath, metric), per_point in self._records.items():
            missing = [p for p in points if p not in per_point]
            extra = [p for p in per_point if p not in wanted]
            if extra:
                raise InputError(self.path, f"call path {callpath!r}, metric {metric!r} has values at "
                                 f"{_point_text(extra[0], parameters)}, which is not a point of the experiment",
                                 line=self._where[(callpath, metric)])
            if missing:
                raise incomplete_error(self.path, callpath, metric, len(per_point), points, missing, parameters,
                                       self._where[(callpath, metric)])

    def build(self, parameters: Sequence[str], points: Sequence[Point] | None = None, *,
              allow_missing: bool = False) -> Experiment:
        """The Experiment: ``points`` in the given order (default: as collected), Extra-P's checks applied."""
        if not self._records:
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
            for callpath in self._callpaths:
                builder.callpaths.add(callpath)
        except ValueError as exc:
            raise InputError(self.path, str(exc)) from None
        for metric in self._metrics:
            builder.add_metric(metric)
        for (callpath, metric), per_point in self._records.items():
            for point, values in per_point.items():
                builder.add_values(callpath, metric, builder.add_point(point), values)
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
