"""The readers as they were before bulk parsing: one Python call per value, kept as the reference.

``tests/test_readers_bulk.py`` reads generated files with these and with pmkit's readers and
checks that both give the same Experiment (call paths, order, points, values, NaN placement) or
the same error.  Copied from pmkit at commit 4400e70; only names and imports were adapted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from pmkit.errors import InputError
from pmkit.experiment import Experiment, ExperimentBuilder
from pmkit.readers.extrap_json import _id_list, _old_point, _ref, _text
from pmkit.readers.extrap_records import ALLOW_MISSING_OPTION, Point, _point_text, check_callpath
from pmkit.readers.extrap_text import _POINT_GROUP, KEYWORDS
from pmkit.readers.parsing import json_number, load_json, parse_float
from pmkit.readers.record_lines import RecordFormat, record_values


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
                shown = ", ".join(_point_text(p, parameters) for p in missing[:3])
                more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
                raise InputError(self.path, f"call path {callpath!r}, metric {metric!r} has values at "
                                 f"{len(per_point)} of {len(points)} points; none at {shown}{more} (Extra-P "
                                 f"rejects such files; --reader-option {ALLOW_MISSING_OPTION.name}=true "
                                 "reads them with NaN there)", line=self._where[(callpath, metric)])

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
        self.table = RecordTable(path, "extrap-text")
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



def read_record_lines(path: Path, text: str, fmt: RecordFormat, allow_missing: bool) -> Experiment:
    """Parse line records of ``fmt`` into an Experiment, with Extra-P's ordering and checks."""
    table = RecordTable(path, fmt.reader)
    parameters: list[str] | None = None
    first_line = 0
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        data = load_json(fmt.prepare(raw), path, line=number)
        if not isinstance(data, dict):
            raise InputError(path, "record is not a JSON object", line=number)
        callpath = _name(data, "callpath", fmt.default_callpath, path, number)
        check_callpath(callpath, path, line=number)
        metric = _name(data, "metric", fmt.default_metric, path, number)
        params = data.get(fmt.params_key)
        if not isinstance(params, dict):
            problem = "lacks" if params is None else "has a non-object"
            raise InputError(path, f"record {problem} {fmt.params_key!r} (an object of parameter values)",
                             line=number)
        if parameters is None:
            if not params:
                raise InputError(path, f"record has no parameters in {fmt.params_key!r}", line=number)
            parameters, first_line = list(params), number
        elif params.keys() != set(parameters):
            missing = [p for p in parameters if p not in params]
            extra = [p for p in params if p not in parameters]
            problem = (f"lacks parameter {missing[0]!r}" if missing else
                       f"has parameter {extra[0]!r} that the first record (line {first_line}) does not have")
            raise InputError(path, f"record {problem}; every record must give the parameters {parameters}",
                             line=number)
        point = tuple(json_number(params[p], path, f"value of parameter {p!r}", line=number) for p in parameters)
        if "value" not in data:
            hint = " (Extra-P reads 'value', which may hold a list of repetitions)" if "values" in data else ""
            raise InputError(path, f"record lacks 'value'{hint}", line=number)
        table.add(callpath, metric, point, record_values(data["value"], path, line=number), line=number)
    if parameters is None:
        raise InputError(path, "holds no records")
    return table.build(parameters, allow_missing=allow_missing)


def _name(data: dict, key: str, default: str | None, path: Path, line: int) -> str:
    if key not in data:
        if default is None:
            raise InputError(path, f"record lacks {key!r}", line=line)
        return default
    value = data[key]
    if not isinstance(value, str):
        raise InputError(path, f"{key!r} must be a string, got {json.dumps(value)[:40]}", line=line)
    return value



def _read_new(path: Path, data: dict, allow_missing: bool) -> Experiment:
    parameters = data.get("parameters")
    if not isinstance(parameters, list) or not parameters or not all(isinstance(p, str) for p in parameters):
        raise InputError(path, "'parameters' must be a non-empty list of parameter names", member="parameters")
    measurements = data.get("measurements")
    if not isinstance(measurements, dict):
        raise InputError(path, "'measurements' must be an object {callpath: {metric: [...]}}",
                         member="measurements")
    table = RecordTable(path, "extrap-json")
    for callpath, per_metric in measurements.items():
        check_callpath(callpath, path, member=f"measurements/{callpath}")
        if not isinstance(per_metric, dict):
            raise InputError(path, "expected an object {metric: [...]}", member=f"measurements/{callpath}")
        for metric, entries in per_metric.items():
            member = f"measurements/{callpath}/{metric}"
            if not isinstance(entries, list):
                raise InputError(path, "expected a list of {point, values} objects", member=member)
            for i, entry in enumerate(entries):
                where = f"{member}[{i}]"
                if not isinstance(entry, dict) or "point" not in entry or "values" not in entry:
                    raise InputError(path, "expected an object with 'point' and 'values'", member=where)
                raw_point = entry["point"] if isinstance(entry["point"], list) else [entry["point"]]
                if len(raw_point) != len(parameters):
                    raise InputError(path, f"point has {len(raw_point)} coordinates but there are "
                                     f"{len(parameters)} parameters {parameters}", member=where)
                point = tuple(json_number(v, path, "point coordinate", member=where) for v in raw_point)
                table.add(callpath, metric, point, record_values(entry["values"], path, member=where))
    return table.build(parameters, allow_missing=allow_missing)


def _read_old(path: Path, data: dict, allow_missing: bool) -> Experiment:
    parameters = _id_list(path, data, "parameters")
    callpaths = _id_list(path, data, "callpaths")
    metrics = _id_list(path, data, "metrics")
    coordinates = _id_list(path, data, "coordinates")
    parameter_ids = {pid: i for i, (pid, _) in enumerate(parameters)}
    names = [_text(path, entry, "name", f"parameters[id={pid}]") for pid, entry in parameters]
    table = RecordTable(path, "extrap-json")
    callpath_by_id: dict[int, str] = {}
    for cid, entry in callpaths:
        member = f"callpaths[id={cid}]"
        callpath_by_id[cid] = check_callpath(_text(path, entry, "name", member), path, member=member)
        table.declare_callpath(callpath_by_id[cid])
    metric_by_id: dict[int, str] = {}
    for mid, entry in metrics:
        metric_by_id[mid] = _text(path, entry, "name", f"metrics[id={mid}]")
        table.declare_metric(metric_by_id[mid])
    point_by_id: dict[int, Point] = {}
    for cid, entry in coordinates:
        point_by_id[cid] = _old_point(path, entry, parameter_ids, f"coordinates[id={cid}]")
    measurements = data.get("measurements")
    if not isinstance(measurements, list):
        raise InputError(path, "'measurements' must be a list", member="measurements")
    for i, entry in enumerate(measurements):
        member = f"measurements[{i}]"
        if not isinstance(entry, dict):
            raise InputError(path, "expected an object", member=member)
        point = point_by_id[_ref(path, entry, "coordinate_id", point_by_id, member)]
        callpath = callpath_by_id[_ref(path, entry, "callpath_id", callpath_by_id, member)]
        metric = metric_by_id[_ref(path, entry, "metric_id", metric_by_id, member)]
        if "value" not in entry:
            raise InputError(path, "measurement lacks 'value'", member=member)
        table.add(callpath, metric, point, [json_number(entry["value"], path, "measured value", member=member,
                                                        allow_strings=True)])
    points = list(dict.fromkeys(point_by_id[cid] for cid, _ in coordinates))
    return table.build(names, points, allow_missing=allow_missing)




def read_text(path: Path, text: str, allow_missing: bool = False) -> Experiment:
    return _TextParser(path).parse(text, allow_missing)


def read_json(path: Path, data: dict, allow_missing: bool = False) -> Experiment:
    if "callpaths" in data:
        return _read_old(path, data, allow_missing)
    return _read_new(path, data, allow_missing)
