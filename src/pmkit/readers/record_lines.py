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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmkit.errors import InputError
from pmkit.experiment import Experiment
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
    # a first line longer than the head cannot be parsed; judge it by its key alone
    if len(head) >= HEAD_BYTES // 4 and "\n" not in head.strip():
        return f'"{params_key}"' in first
    try:
        data = json.loads(prepare(first))
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and isinstance(data.get(params_key), dict)
