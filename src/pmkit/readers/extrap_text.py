"""Reader ``extrap-text``: Extra-P's line-based text input format.

The format, as Extra-P's own text reader accepts it::

    # comment
    PARAMETER p                     (one line per parameter, or several names on one line)
    PARAMETER n
    POINTS ( 32 1000 ) ( 64 1000 )  (one or more points per line; for one parameter also
    POINTS ( 128 1000 )              ``POINTS 32 64 128`` or ``POINTS (32) (64)``)
    METRIC time                     (optional; DATA before any METRIC belong to the unnamed metric "")
    REGION main->solve              (a call path)
    DATA 4.1 3.9 4.0                (repetitions at the first point, then the next point, ...)

METRIC and REGION lines restart the DATA sequence at the first point.  Like Extra-P, points
listed twice are kept once and every (REGION, METRIC) with DATA must cover every point.  Unlike
Extra-P, more than four parameters are accepted, keywords may be indented, and a malformed
line is reported with its (1-based) line number instead of being half-read.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pmkit.errors import InputError
from pmkit.experiment import Experiment
from pmkit.hookspecs import hookimpl
from pmkit.readers.extrap_records import ALLOW_MISSING_OPTION, Point, RecordTable, check_callpath
from pmkit.readers.parsing import first_content_line, parse_float, read_head, read_text

KEYWORDS = ("PARAMETER", "POINTS", "METRIC", "REGION", "DATA")
_POINT_GROUP = re.compile(r"\(([^()]*)\)")


class ExtrapTextReader:
    """Reads Extra-P text input files (PARAMETER / POINTS / METRIC / REGION / DATA lines)."""

    name = "extrap-text"
    description = "Extra-P text input: PARAMETER, POINTS, METRIC, REGION and DATA lines"
    options = (ALLOW_MISSING_OPTION,)

    def sniff(self, path: Path) -> bool:
        """True if the first line that is not blank or a comment starts with an Extra-P keyword."""
        head = read_head(Path(path))
        if head is None:
            return False
        first = first_content_line(head)
        return first is not None and first.split(maxsplit=1)[0] in KEYWORDS

    def read(self, path: Path, **options: Any) -> Experiment:
        path = Path(path)
        return _TextParser(path).parse(read_text(path), bool(options.get(ALLOW_MISSING_OPTION.name, False)))


class _TextParser:
    """One pass over the lines, keeping Extra-P's state: current metric, region and point index."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parameters: list[str] = []
        self.points: dict[Point, int] = {}
        self.point_list: list[Point] = []
        self.metric: str | None = None
        self.callpath: str | None = None
        self.next_point = 0
        self.first_values: dict[tuple[str, str, Point], int] = {}
        self.table = RecordTable(path, ExtrapTextReader.name)
        self.notes: list[str] = []

    def parse(self, text: str, allow_missing: bool) -> Experiment:
        for number, raw in enumerate(text.split("\n"), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(maxsplit=1)
            keyword = parts[0]
            rest = parts[1] if len(parts) > 1 else ""
            handler = {"PARAMETER": self._parameter, "POINTS": self._points, "METRIC": self._metric,
                       "REGION": self._region, "DATA": self._data}.get(keyword)
            if handler is None:
                hint = f" (keywords are upper case: {keyword.upper()})" if keyword.upper() in KEYWORDS else ""
                raise InputError(self.path, f"unknown keyword {keyword!r}; expected one of "
                                 f"{', '.join(KEYWORDS)}{hint}", line=number)
            handler(rest, number)
        if not self.parameters:
            raise InputError(self.path, "no PARAMETER line: the file defines no parameters")
        if not self.points:
            raise InputError(self.path, "no POINTS line: the file defines no measurement points")
        if not len(self.table):
            raise InputError(self.path, "no DATA lines: the file holds no measured values")
        experiment = self.table.build(self.parameters, self.point_list, allow_missing=allow_missing)
        experiment.provenance.notes.extend(self.notes)
        return experiment

    def _parameter(self, rest: str, line: int) -> None:
        names = rest.split()
        if not names:
            raise InputError(self.path, "PARAMETER line names no parameter", line=line)
        if self.points:
            raise InputError(self.path, "PARAMETER after POINTS: declare every parameter before the points",
                             line=line)
        for name in names:
            if name in self.parameters:
                raise InputError(self.path, f"parameter {name!r} is declared twice", line=line)
            self.parameters.append(name)

    def _points(self, rest: str, line: int) -> None:
        if not self.parameters:
            raise InputError(self.path, "POINTS before any PARAMETER line", line=line)
        n = len(self.parameters)
        if "(" in rest or ")" in rest:
            groups = _POINT_GROUP.findall(rest)
            if not groups or _POINT_GROUP.sub(" ", rest).strip():
                raise InputError(self.path, f"malformed POINTS line {rest!r}: write each point as ( v1 v2 ... )",
                                 line=line)
            coordinates = [group.split() for group in groups]
        else:
            tokens = rest.split()
            if not tokens:
                raise InputError(self.path, "POINTS line lists no points", line=line)
            if n != 1:
                raise InputError(self.path, f"POINTS without parentheses lists one-parameter points, but there "
                                 f"are {n} parameters {self.parameters}; write each point as ( v1 v2 ... )",
                                 line=line)
            coordinates = [[token] for token in tokens]
        for tokens in coordinates:
            if len(tokens) != n:
                raise InputError(self.path, f"point ({' '.join(tokens)}) has {len(tokens)} coordinates but there "
                                 f"are {n} parameters {self.parameters}", line=line)
            point = tuple(parse_float(t, self.path, "point coordinate", line=line) for t in tokens)
            if point in self.points:
                self.notes.append(f"line {line}: point ({' '.join(tokens)}) is listed twice; kept once, as "
                                  "Extra-P does")
                continue
            self.points[point] = line
            self.point_list.append(point)

    def _metric(self, rest: str, line: int) -> None:
        self.metric = " ".join(rest.split())
        self.table.declare_metric(self.metric)
        self.next_point = 0

    def _region(self, rest: str, line: int) -> None:
        name = " ".join(rest.split())
        self.callpath = check_callpath(name, self.path, line=line)
        self.table.declare_callpath(self.callpath)
        self.next_point = 0

    def _data(self, rest: str, line: int) -> None:
        if not self.parameters:
            raise InputError(self.path, "DATA before any PARAMETER line: the file has no parameters", line=line)
        if self.callpath is None:
            raise InputError(self.path, "DATA before any REGION line: the values belong to no call path", line=line)
        tokens = rest.split()
        if not tokens:
            raise InputError(self.path, "DATA line has no values", line=line)
        values = [parse_float(t, self.path, "DATA value", line=line) for t in tokens]
        metric = self.metric if self.metric is not None else ""
        points = self.point_list
        if self.next_point >= len(points):
            raise InputError(self.path, f"too many DATA lines for region {self.callpath!r}, metric {metric!r}: "
                             f"there are {len(points)} POINTS", line=line)
        point = points[self.next_point]
        key = (self.callpath, metric, point)
        if key in self.first_values:
            raise InputError(self.path, f"region {self.callpath!r}, metric {metric!r} already has DATA for point "
                             f"{self.next_point + 1} (line {self.first_values[key]}); a region may appear only "
                             "once per metric", line=line)
        self.first_values[key] = line
        self.next_point += 1
        self.table.add(self.callpath, metric, point, values, line=line)


@hookimpl(trylast=True)
def pmkit_register_readers(register) -> None:
    register(ExtrapTextReader())
