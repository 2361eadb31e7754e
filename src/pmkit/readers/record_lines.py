"""Extra-P's one-record-per-line input formats: JSON Lines and Talpas.

Each non-blank line is one JSON object (Talpas separates its fields with ``;``, which Extra-P
turns into ``,`` before parsing, inside names too).  As in Extra-P, the first record fixes the
parameters and their order, records of the same call path, metric and point add repetitions,
and the experiment's points, call paths and metrics come in order of first appearance, key by
key.  Extra-P silently ignores parameters a later record adds; pmkit rejects such a record,
since it would merge distinct points.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import repeat
from operator import eq, methodcaller
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.errors import InputError, excerpt
from pmkit.experiment import CALLPATH_SEPARATOR, Experiment
from pmkit.readers.extrap_records import RecordTable, check_callpath
from pmkit.readers.parsing import HEAD_BYTES, json_number, load_json


def semicolons_to_commas(line: str) -> str:
    """Talpas to JSON, exactly as Extra-P converts it."""
    return line.replace(";", ",")


@dataclass(frozen=True)
class RecordFormat:
    """Keys and defaults of a one-JSON-object-per-line format (Extra-P JSON Lines, Talpas)."""

    reader: str
    params_key: str
    default_callpath: str | None
    default_metric: str | None
    prepare: Callable[[str], str] = str


JSONL_FORMAT = RecordFormat("extrap-jsonl", "params", "<root>", "<default>")
"""Extra-P JSON Lines: ``{"params": {...}, "callpath"?: ..., "metric"?: ..., "value": ...}``."""

TALPAS_FORMAT = RecordFormat("talpas", "parameters", None, None, semicolons_to_commas)
"""Talpas: ``{"parameters":{...};"metric":...;"callpath":...;"value":...}``, every field required."""


BATCH = 20_000
"""Records parsed and checked together: JSON per line, then every field of the batch at once."""

_NUMBERS = {int, float}
_MISSING = object()
_SCAN = json.JSONDecoder().scan_once


def numbered_lines(pieces: Iterable[tuple[int, bytes]]) -> Iterator[tuple[int, list[str]]]:
    """:func:`~pmkit.readers.parsing.text_chunks` pieces as (number of the first line, lines)."""
    for first, piece in pieces:
        lines = piece.decode("utf-8").split("\n")
        if piece.endswith(b"\n"):
            lines.pop()
        yield first, lines


def read_record_lines(path: Path, pieces: Iterable[tuple[int, list[str]]], fmt: RecordFormat,
                      allow_missing: bool) -> Experiment:
    """Parse line records of ``fmt`` — given as pieces of (number of the first line, lines) — into an
    Experiment, with Extra-P's ordering and checks."""
    reader = _RecordReader(path, fmt)
    for first, lines in pieces:
        kept = [i for i, line in enumerate(lines) if line and not line.isspace()]
        for start in range(0, len(kept), BATCH):
            chosen = kept[start:start + BATCH]
            reader.batch([first + i for i in chosen], [lines[i] for i in chosen])
    if reader.parameters is None:
        raise InputError(path, "holds no records")
    return reader.table.build(reader.parameters, allow_missing=allow_missing)


class _RecordReader:
    """Records of one file, a batch at a time: checked in bulk, or one by one when the bulk checks
    find anything unusual (which then reports the first bad record exactly as it always did)."""

    def __init__(self, path: Path, fmt: RecordFormat) -> None:
        self.path = path
        self.fmt = fmt
        self.table = RecordTable(path, fmt.reader)
        self.parameters: list[str] | None = None
        self.first_line = 0
        self.usable: set[str] = set()

    def batch(self, numbers: list[int], texts: list[str]) -> None:
        if not self._bulk(numbers, texts):
            for number, raw in zip(numbers, texts, strict=True):
                self._one(number, raw)

    def _bulk(self, numbers: list[int], texts: list[str]) -> bool:
        """Add the batch if every record is plainly fine; False (nothing added) if any is not."""
        fmt = self.fmt
        prepared = [fmt.prepare(raw) for raw in texts] if fmt.prepare is not str else texts
        try:  # the C scanner alone: json.loads less its checks for surrounding whitespace, made below
            scanned = [_SCAN(text, 0) for text in prepared]
        except (StopIteration, ValueError, RecursionError):
            return False
        if [end for _, end in scanned] != list(map(len, prepared)):
            return False
        records = [record for record, _ in scanned]
        if _types(records) != {dict}:
            return False
        callpaths = list(map(methodcaller("get", "callpath", fmt.default_callpath), records))
        metrics = list(map(methodcaller("get", "metric", fmt.default_metric), records))
        if _types(callpaths) != {str} or _types(metrics) != {str}:
            return False
        fresh = set(callpaths) - self.usable
        if not all(usable_callpath(name) for name in fresh):
            return False
        self.usable |= fresh
        params = list(map(methodcaller("get", fmt.params_key), records))
        if _types(params) != {dict}:
            return False
        parameters = self.parameters if self.parameters is not None else list(params[0])
        names = set(parameters)
        if not parameters or not all(map(eq, map(dict.keys, params), repeat(names))):
            return False
        points = bulk_points([p[name] for p in params for name in parameters], len(records), len(parameters))
        measured = bulk_values(list(map(methodcaller("get", "value", _MISSING), records)))
        if points is None or measured is None:
            return False
        if self.parameters is None:
            self.parameters, self.first_line = parameters, numbers[0]
        self.table.add_block(callpaths, metrics, points, *measured, numbers)
        return True

    def _one(self, number: int, raw: str) -> None:
        """One record, every check made in turn with its own message (the reading of old)."""
        path, fmt = self.path, self.fmt
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
        if self.parameters is None:
            if not params:
                raise InputError(path, f"record has no parameters in {fmt.params_key!r}", line=number)
            self.parameters, self.first_line = list(params), number
        elif params.keys() != set(self.parameters):
            missing = [p for p in self.parameters if p not in params]
            extra = [p for p in params if p not in self.parameters]
            problem = (f"lacks parameter {excerpt(missing[0])}" if missing else
                       f"has parameter {excerpt(extra[0])} that the first record (line {self.first_line}) does "
                       "not have")
            raise InputError(path, f"record {problem}; every record must give the parameters {self.parameters}",
                             line=number)
        point = tuple(json_number(params[p], path, f"value of parameter {excerpt(p)}", line=number)
                      for p in self.parameters)
        if "value" not in data:
            hint = " (Extra-P reads 'value', which may hold a list of repetitions)" if "values" in data else ""
            raise InputError(path, f"record lacks 'value'{hint}", line=number)
        self.table.add(callpath, metric, point, record_values(data["value"], path, line=number), line=number)


def usable_callpath(name: str) -> bool:
    """What :func:`check_callpath` accepts, as a yes or no."""
    return bool(name.strip()) and "" not in name.split(CALLPATH_SEPARATOR)


def bulk_points(flat: list[Any], rows: int, width: int) -> np.ndarray | None:
    """Coordinates (row by row, flat) as a ``rows`` × ``width`` array; None unless all are finite JSON
    numbers (anything else is left to the one-by-one reading and its messages)."""
    out = _numbers(flat)
    if out is None or len(out) != rows * width or not np.isfinite(out).all():
        return None
    return out.reshape(rows, width)


def bulk_values(values: list[Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """Measured values — each a JSON number or a list of them (repetitions) — as (flat floats, count
    per record); None unless every one is a number, finite or NaN."""
    kinds = _types(values)
    if kinds <= _NUMBERS:
        flat, counts = values, np.ones(len(values), dtype=np.int64)
    elif kinds <= _NUMBERS | {list}:
        flat = [x for v in values for x in (v if type(v) is list else (v,))]
        counts = np.fromiter((len(v) if type(v) is list else 1 for v in values), dtype=np.int64, count=len(values))
    else:
        return None
    out = _numbers(flat)
    if out is None or np.isinf(out).any():
        return None
    return out, counts


def _types(items: list[Any]) -> set[type]:
    return set(map(type, items))


def _numbers(items: list[Any]) -> np.ndarray | None:
    """JSON numbers (never booleans) as floats, converted as ``float`` converts them; None if an item
    is not a number or is too large for a float."""
    if not _types(items) <= _NUMBERS:
        return None
    try:
        return np.fromiter(map(float, items), dtype=float, count=len(items))
    except OverflowError:
        return None


def _name(data: dict, key: str, default: str | None, path: Path, line: int) -> str:
    if key not in data:
        if default is None:
            raise InputError(path, f"record lacks {key!r}", line=line)
        return default
    value = data[key]
    if not isinstance(value, str):
        raise InputError(path, f"{key!r} must be a string, got {excerpt(json.dumps(value), 40, quote=False)}",
                         line=line)
    return value


def record_values(value: Any, path: Path, *, line: int | None = None, member: str | None = None,
                  allow_strings: bool = False) -> list[float]:
    """A measured value or a list of repetitions, as floats; InputError for anything else."""
    items = value if isinstance(value, list) else [value]
    return [json_number(v, path, "measured value", line=line, member=member, allow_strings=allow_strings)
            for v in items]


def looks_like_record(head: str, params_key: str, prepare: Callable[[str], str] = str) -> bool:
    """Whether the first non-blank line of ``head`` is a record with ``params_key``."""
    first = next((line.strip() for line in head.split("\n") if line.strip()), "")
    if not first.startswith("{"):
        return False
    # a first line longer than the head cannot be parsed; judge it by its key, followed by an object
    if len(head) >= HEAD_BYTES // 4 and "\n" not in head.strip():
        return _has_object(first, params_key)
    try:
        data = json.loads(prepare(first))
    except json.JSONDecodeError:
        return False
    except (ValueError, RecursionError):  # valid JSON Python will not take (4,300+ digits, deep nesting):
        return _has_object(first, params_key)  # judge by the key, and let the reader say what is wrong
    return isinstance(data, dict) and isinstance(data.get(params_key), dict)


def _has_object(text: str, key: str) -> bool:
    """Whether ``"key"`` appears in ``text`` followed by ``: {`` (a record's parameters object)."""
    return re.search(rf'"{re.escape(key)}"\s*:\s*\{{', text) is not None
