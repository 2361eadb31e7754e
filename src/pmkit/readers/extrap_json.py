"""Readers ``extrap-json`` and ``extrap-jsonl``: Extra-P's JSON and JSON Lines input formats.

JSON comes in two flavours, told apart as Extra-P does (a top-level ``callpaths`` key means the
old one):

* old: ``parameters``, ``callpaths``, ``metrics`` and ``coordinates`` are lists of objects with an
  ``id``; ``measurements`` is a list of ``{coordinate_id, callpath_id, metric_id, value}``, one
  repetition each.  Extra-P sorts each list by ``id`` and then treats a measurement's id as a
  1-based position in that sorted list; pmkit looks ids up as ids, which is the same for the ids
  1..n every Extra-P file uses and stays right for other numberings.
* new: ``{"parameters": [names], "measurements": {callpath: {metric: [{"point": [...],
  "values": [...]}]}}}``.

JSON Lines (reader ``extrap-jsonl``, parsed in :mod:`pmkit.readers.record_lines`) has one record
per line: ``{"params": {name: value}, "callpath"?, "metric"?, "value": number or list}``; a
missing call path is ``<root>`` and a missing metric ``<default>``, as in Extra-P.  The JSON
reader, like Extra-P's, falls back to JSON Lines when the file is not one JSON document but every
line is an object.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pmkit.errors import InputError
from pmkit.experiment import Experiment
from pmkit.hookspecs import hookimpl
from pmkit.options import Option
from pmkit.readers.extrap_records import ALLOW_MISSING_OPTION, Point, RecordTable, check_callpath
from pmkit.readers.limits import MAX_INPUT_OPTION, MIB, Limits
from pmkit.readers.parsing import json_number, read_head, read_text, text_chunks
from pmkit.readers.record_lines import (
    JSONL_FORMAT,
    bulk_points,
    bulk_values,
    looks_like_record,
    numbered_lines,
    read_record_lines,
    record_values,
    semicolons_to_commas,
    usable_callpath,
)

MAX_JSON_MB = 1024
"""Largest JSON document read (MiB): it is parsed whole, into Python objects ~10× its size."""


class ExtrapJsonLinesReader:
    """Reads Extra-P JSON Lines input: one ``{"params": ..., "value": ...}`` record per line."""

    name = "extrap-jsonl"
    description = "Extra-P JSON Lines input: one {params, callpath, metric, value} record per line"
    options = (ALLOW_MISSING_OPTION, MAX_INPUT_OPTION)

    def sniff(self, path: Path) -> bool:
        head = read_head(Path(path))
        return head is not None and looks_like_record(head, JSONL_FORMAT.params_key)

    def read(self, path: Path, **options: Any) -> Experiment:
        path = Path(path)
        return read_record_lines(path, numbered_lines(text_chunks(path, Limits.from_options(options))), JSONL_FORMAT,
                                 bool(options.get(ALLOW_MISSING_OPTION.name, False)))


class ExtrapJsonReader:
    """Reads Extra-P JSON input, old (ids) and new (nested measurements) flavours."""

    name = "extrap-json"
    description = "Extra-P JSON input, old (callpaths/coordinates with ids) and new (nested) flavours"
    options = (ALLOW_MISSING_OPTION, Option(MAX_INPUT_OPTION.name, int, MAX_JSON_MB, "largest input read, in "
                                            "MiB; a JSON document is parsed whole, so the limit is lower than for "
                                            "line formats", minimum=1))

    def sniff(self, path: Path) -> bool:
        """A JSON object whose head names Extra-P's ``callpaths`` or ``measurements`` and is no line record."""
        head = read_head(Path(path))
        if head is None or not head.lstrip().startswith("{"):
            return False
        if looks_like_record(head, "params") or looks_like_record(head, "parameters", semicolons_to_commas):
            return False
        return '"callpaths"' in head or '"measurements"' in head

    def read(self, path: Path, **options: Any) -> Experiment:
        path = Path(path)
        allow_missing = bool(options.get(ALLOW_MISSING_OPTION.name, False))
        text = read_text(path, Limits(input_bytes=int(options.get(MAX_INPUT_OPTION.name, MAX_JSON_MB)) * MIB))
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            lines = [line.strip() for line in text.split("\n") if line.strip()]
            if len(lines) > 1 and all(line.startswith("{") for line in lines):
                return read_record_lines(path, [(1, text.split("\n"))], JSONL_FORMAT, allow_missing)
            raise InputError(path, f"is not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
        except RecursionError:
            raise InputError(path, "is not usable JSON: it is nested too deeply") from None
        except ValueError:  # Python refuses integers of more than 4,300 digits
            raise InputError(path, "is not usable JSON: it holds a number of more than 4,300 digits") from None
        if not isinstance(data, dict):
            raise InputError(path, "the top level is not a JSON object")
        if "callpaths" in data:
            return _read_old(path, data, allow_missing)
        return _read_new(path, data, allow_missing)


def _read_new(path: Path, data: dict, allow_missing: bool) -> Experiment:
    parameters = data.get("parameters")
    if not isinstance(parameters, list) or not parameters or not all(isinstance(p, str) for p in parameters):
        raise InputError(path, "'parameters' must be a non-empty list of parameter names", member="parameters")
    measurements = data.get("measurements")
    if not isinstance(measurements, dict):
        raise InputError(path, "'measurements' must be an object {callpath: {metric: [...]}}",
                         member="measurements")
    table = RecordTable(path, ExtrapJsonReader.name)
    if not _new_in_bulk(table, parameters, measurements):
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


def _new_in_bulk(table: RecordTable, parameters: list[str], measurements: dict) -> bool:
    """Add every measurement of the new flavour as one block if all are plainly fine; False (nothing
    added) if any is not — the one-by-one reading then reports it."""
    callpaths: list[str] = []
    metrics: list[str] = []
    entries: list[Any] = []
    for callpath, per_metric in measurements.items():
        if not usable_callpath(callpath) or type(per_metric) is not dict:
            return False
        for metric, items in per_metric.items():
            if type(items) is not list:
                return False
            callpaths += [callpath] * len(items)
            metrics += [metric] * len(items)
            entries += items
    if not all(type(e) is dict and "point" in e and "values" in e for e in entries):
        return False
    rows = [e["point"] if type(e["point"]) is list else [e["point"]] for e in entries]
    if not all(len(row) == len(parameters) for row in rows):
        return False
    points = bulk_points([v for row in rows for v in row], len(rows), len(parameters))
    measured = bulk_values([e["values"] for e in entries])
    if points is None or measured is None:
        return False
    table.add_block(callpaths, metrics, points, *measured)
    return True


def _read_old(path: Path, data: dict, allow_missing: bool) -> Experiment:
    parameters = _id_list(path, data, "parameters")
    callpaths = _id_list(path, data, "callpaths")
    metrics = _id_list(path, data, "metrics")
    coordinates = _id_list(path, data, "coordinates")
    parameter_ids = {pid: i for i, (pid, _) in enumerate(parameters)}
    names = [_text(path, entry, "name", f"parameters[id={pid}]") for pid, entry in parameters]
    table = RecordTable(path, ExtrapJsonReader.name)
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
    if not _old_in_bulk(table, measurements, point_by_id, callpath_by_id, metric_by_id, len(names)):
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


def _old_in_bulk(table: RecordTable, measurements: list, point_by_id: dict[int, Point],
                 callpath_by_id: dict[int, str], metric_by_id: dict[int, str], width: int) -> bool:
    """Add every measurement of the old flavour as one block if all are plainly fine (integer ids
    that exist, numeric values, finite coordinates); False (nothing added) otherwise."""
    if not all(type(e) is dict for e in measurements):
        return False
    keys = ("coordinate_id", "callpath_id", "metric_id")
    ids = [[e.get(key) for e in measurements] for key in keys]
    if not all(type(i) is int for column in ids for i in column):
        return False
    points = [point_by_id.get(i) for i in ids[0]]
    callpaths = [callpath_by_id.get(i) for i in ids[1]]
    metrics = [metric_by_id.get(i) for i in ids[2]]
    if None in points or None in callpaths or None in metrics:
        return False
    rows = bulk_points([v for p in points for v in p], len(points), width)  # type: ignore[union-attr]
    measured = bulk_values([e.get("value", []) for e in measurements])
    if rows is None or measured is None or not (measured[1] == 1).all():
        return False
    table.add_block(callpaths, metrics, rows, *measured)  # type: ignore[arg-type]
    return True


def _id_list(path: Path, data: dict, key: str) -> list[tuple[int, dict]]:
    """``data[key]`` as (id, entry) pairs sorted by id, as Extra-P sorts them; ids must be unique."""
    entries = data.get(key)
    if not isinstance(entries, list):
        raise InputError(path, f"{key!r} must be a list of objects with an 'id'", member=key)
    out: list[tuple[int, dict]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "id" not in entry:
            raise InputError(path, "expected an object with an 'id'", member=f"{key}[{i}]")
        out.append((_as_id(path, entry["id"], f"{key}[{i}].id"), entry))
    ids = [i for i, _ in out]
    if len(set(ids)) != len(ids):
        duplicate = next(i for i in ids if ids.count(i) > 1)
        raise InputError(path, f"id {duplicate} is used twice", member=key)
    return sorted(out, key=lambda pair: pair[0])


def _as_id(path: Path, value: Any, member: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise InputError(path, f"an id must be an integer, got {json.dumps(value)[:40]}", member=member)
    if isinstance(value, str):
        text = value.strip()
        if not text.lstrip("-").isdigit():
            raise InputError(path, f"an id must be an integer, got {value!r}", member=member)
        return int(text)
    return value


def _ref(path: Path, entry: dict, key: str, known: dict[int, Any], member: str) -> int:
    if key not in entry:
        raise InputError(path, f"measurement lacks {key!r}", member=member)
    ref = _as_id(path, entry[key], f"{member}.{key}")
    if ref not in known:
        raise InputError(path, f"{key} {ref} refers to no entry (ids: {_id_range(known)})", member=member)
    return ref


def _id_range(known: dict[int, Any]) -> str:
    if not known:
        return "none"
    return f"{min(known)}..{max(known)}" if len(known) > 1 else str(next(iter(known)))


def _text(path: Path, entry: dict, key: str, member: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str):
        raise InputError(path, f"{key!r} must be a string", member=member)
    return value


def _old_point(path: Path, entry: dict, parameter_ids: dict[int, int], member: str) -> Point:
    pairs = entry.get("parameter_value_pairs")
    if not isinstance(pairs, list):
        raise InputError(path, "'parameter_value_pairs' must be a list", member=member)
    values: dict[int, float] = {}
    for pair in pairs:
        if not isinstance(pair, dict) or "parameter_id" not in pair or "parameter_value" not in pair:
            raise InputError(path, "expected {parameter_id, parameter_value} pairs", member=member)
        pid = _as_id(path, pair["parameter_id"], f"{member}.parameter_id")
        if pid not in parameter_ids:
            raise InputError(path, f"parameter_id {pid} refers to no parameter", member=member)
        if parameter_ids[pid] in values:
            raise InputError(path, f"parameter_id {pid} is given twice", member=member)
        values[parameter_ids[pid]] = json_number(pair["parameter_value"], path, "parameter value", member=member,
                                                 allow_strings=True)
    if len(values) != len(parameter_ids):
        raise InputError(path, f"coordinate gives {len(values)} of {len(parameter_ids)} parameter values",
                         member=member)
    return tuple(values[i] for i in range(len(parameter_ids)))


@hookimpl(trylast=True)
def pmkit_register_readers(register) -> None:
    register(ExtrapJsonReader())
    register(ExtrapJsonLinesReader())
