"""Reader for Extra-P experiment files (``.extra-p``): measurements and the models stored with them.

An ``.extra-p`` file is a zip archive holding ``experiment.json`` (parameters, call paths, metrics,
per (call path, metric) a list of measurements with their coordinate and mean, median, minimum,
maximum and standard deviation, and the model sets Extra-P made) and, when Extra-P kept the
repetition values, ``values/N.vals`` / ``values/N.indx`` chunks of numpy arrays that the JSON
points at with ``[chunk, index]``.  This module reads that format without Extra-P: the JSON is
parsed as data and checked field by field, the arrays are read with pickling disabled, and
nothing from the file is evaluated.

Repetition values, when stored, become pmkit's repetitions; a 2-D array (repetitions ×
locations, as Extra-P's Cube reader keeps for weak scaling) also fills ``locations``, and each
repetition's value is the mean over locations, so that the mean over repetitions is Extra-P's mean.
Where the file keeps only the summary statistics, the one chosen with the ``measure`` option
becomes a single repetition and the provenance notes say so.  Extra-P's models (its function and
term JSON) become :class:`~pmkit.pmnf.Function` objects with exact fraction exponents in
``experiment.stored_models``, keyed by model-set name.
"""

from __future__ import annotations

import io
import json
import math
import re
import struct
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.errors import InputError, UsageError
from pmkit.experiment import CALLPATH_SEPARATOR, Experiment, ExperimentBuilder
from pmkit.hookspecs import hookimpl
from pmkit.models import Model, ModelSet, Quality
from pmkit.options import Option
from pmkit.pmnf import Factor, Function, Term
from pmkit.readers.limits import (
    MAX_INFLATED_MB,
    MAX_INFLATED_OPTION,
    MAX_RATIO,
    MAX_RATIO_OPTION,
    MIB,
    LimitError,
    Limits,
    read_inflating,
)

EXPERIMENT_MEMBER = "experiment.json"
VALUES_MAGIC = b"Extra-P VALUES\0\0"
INDEX_MAGIC = b"Extra-P INDEX\0\0\0"
STATISTICS = ("mean", "median", "minimum", "maximum")
"""Summary statistics Extra-P stores per measurement, in the names of its JSON (and of ``measure``)."""

VALUES_TOLERANCE = 1e-9
"""Relative difference above which stored repetition values are taken to disagree with the stored
mean.  Extra-P updates a measurement's statistics but not its values when it merges call paths,
so values that disagree are stale and the statistics are used instead."""

TAG_PREFIX = "pmkit__"
METRIC_TAGS = {"unit": str, "inclusive": bool, "description": str}
"""pmkit's metric fields, stored by pmkit-extrap as Extra-P metric tags ``pmkit__<field>``."""

_FRACTION_TEXT = re.compile(r"\s*[+-]?\d+\s*/\s*[+-]?\d+\s*")


class ExtrapFormatError(ValueError):
    """A part of Extra-P's function or measurement JSON that pmkit cannot use; says which and why."""


def exponent_from_json(value: Any) -> Fraction:
    """An exponent as Extra-P's ``NumberField`` writes it (``"3/4"``, ``2.0``, ``1``) as an exact Fraction.

    Floats are turned into the fraction with the smallest denominator (up to 10,000) that equals
    them to 1e-12, e.g. ``0.3333333333333333`` → ``1/3``; other floats are kept exactly.
    """
    if isinstance(value, bool):
        raise ExtrapFormatError(f"exponent {value!r} is a boolean, not a number")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        if _FRACTION_TEXT.fullmatch(text):
            numerator, denominator = (int(part) for part in text.split("/"))
            if denominator == 0:
                raise ExtrapFormatError(f"exponent {value!r} divides by zero")
            return Fraction(numerator, denominator)
        try:
            value = float(text)
        except ValueError:
            raise ExtrapFormatError(f"exponent {value!r} is not a number or fraction") from None
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ExtrapFormatError(f"exponent {value!r} is not finite")
        close = Fraction(value).limit_denominator(10_000)
        if abs(float(close) - value) <= 1e-12 * max(1.0, abs(value)):
            return close
        return Fraction(value)
    raise ExtrapFormatError(f"exponent {value!r} is not a number")


def number_from_json(value: Any, what: str) -> float:
    """A coefficient or statistic as Extra-P writes it: a number, ``"nan"``/``"inf"`` or ``"a/b"``."""
    if isinstance(value, bool) or value is None:
        raise ExtrapFormatError(f"{what} is {json.dumps(value)}, not a number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if _FRACTION_TEXT.fullmatch(text):
            return float(exponent_from_json(text))
        if text.lower() in ("nan", "inf", "-inf", "+inf"):
            return float(text)
        try:
            return float(text)
        except ValueError:
            pass
    raise ExtrapFormatError(f"{what} is {json.dumps(value)[:60]}, not a number")


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ExtrapFormatError(f"{what} must be a JSON object, got {_kind(value)}")
    return value


def _sequence(value: Any, what: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise ExtrapFormatError(f"{what} must be a JSON list, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(type(value), "a number")


def _simple_terms(compound: Mapping[str, Any], what: str) -> tuple[Fraction, Fraction]:
    """Sum of polynomial and of logarithm exponents of a compound term's simple terms."""
    poly, log = Fraction(0), Fraction(0)
    for k, simple in enumerate(_sequence(compound.get("simple_terms", []), f"{what} simple_terms")):
        simple = _mapping(simple, f"{what} simple term {k}")
        kind = simple.get("term_type")
        exponent = exponent_from_json(simple.get("exponent"))
        if kind == "polynomial":
            poly += exponent
        elif kind == "logarithm":
            log += exponent
        else:
            raise ExtrapFormatError(f"{what} simple term {k} has term_type {kind!r}; "
                                    "Extra-P knows 'polynomial' and 'logarithm'")
    return poly, log


def _compound_coefficient(compound: Mapping[str, Any], what: str) -> float:
    return number_from_json(compound.get("coefficient", 1.0), f"{what} coefficient")


def function_from_json(data: Any, parameters: Sequence[str]) -> Function:
    """Extra-P's function JSON (as ``FunctionSchema`` writes it) as a pmkit PMNF function.

    Handles ``ConstantFunction``, ``SingleParameterFunction`` (terms in the first parameter) and
    ``MultiParameterFunction``; raises :class:`ExtrapFormatError` for what PMNF cannot express
    (segmented functions) or what is malformed.
    """
    data = _mapping(data, "function")
    kind = data.get("$type", "Function")
    if kind == "SegmentedFunction":
        raise ExtrapFormatError("a segmented function (two PMNF pieces split at a change point) is not one "
                                "PMNF function")
    if kind not in ("Function", "ConstantFunction", "SingleParameterFunction", "MultiParameterFunction"):
        raise ExtrapFormatError(f"unknown function type {kind!r}")
    if not parameters:
        raise ExtrapFormatError("the experiment has no parameters")
    constant = number_from_json(data.get("constant_coefficient", 0.0), "constant_coefficient")
    terms: list[Term] = []
    compounds = [] if kind == "ConstantFunction" else data.get("compound_terms", [])
    for t, compound in enumerate(_sequence(compounds, "compound_terms")):
        what = f"term {t}"
        compound = _mapping(compound, what)
        coefficient = _compound_coefficient(compound, what)
        if "parameter_term_pairs" in compound:
            factors = []
            pairs = _mapping(compound["parameter_term_pairs"], f"{what} parameter_term_pairs")
            for key, inner in pairs.items():
                try:
                    index = int(key)
                except (TypeError, ValueError):
                    raise ExtrapFormatError(f"{what} names parameter {key!r}, not a parameter index") from None
                if not 0 <= index < len(parameters):
                    raise ExtrapFormatError(f"{what} uses parameter index {index}, but the experiment has "
                                            f"{len(parameters)} parameters {list(parameters)}")
                inner = _mapping(inner, f"{what} parameter {index}")
                if inner.get("$variant", "CompoundTerm") != "CompoundTerm":
                    raise ExtrapFormatError(f"{what} has a {inner['$variant']} for parameter "
                                            f"{parameters[index]!r}, which is not PMNF")
                coefficient *= _compound_coefficient(inner, f"{what} parameter {index}")
                poly, log = _simple_terms(inner, f"{what} parameter {index}")
                factors.append(Factor(parameters[index], poly, log))
            names = [f.parameter for f in factors]
            if len(set(names)) != len(names):
                raise ExtrapFormatError(f"{what} names a parameter twice")
            terms.append(Term(coefficient, tuple(factors)))
        else:
            poly, log = _simple_terms(compound, what)
            terms.append(Term(coefficient, (Factor(parameters[0], poly, log),)))
    return Function(tuple(parameters), constant, tuple(terms))


def repetitions_from_values(values: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Extra-P's kept values as (repetitions, per-location values or None).

    A 0-D or 1-D array holds repetitions.  A 2-D array holds repetitions × locations; each
    repetition's value is the mean over its locations (NaN ignored).  Other shapes are refused.
    """
    if isinstance(values, np.ma.MaskedArray):
        values = np.ma.filled(values.astype(float), np.nan)
    else:
        values = np.asarray(values, dtype=float)
    if values.ndim <= 1:
        return values.reshape(-1), None
    if values.ndim == 2:
        counts = np.sum(~np.isnan(values), axis=1)
        sums = np.nansum(values, axis=1)
        per_rep = np.divide(sums, counts, out=np.full(len(counts), np.nan), where=counts > 0)
        return per_rep, values
    raise ExtrapFormatError(f"repetition values of shape {values.shape} have more than two axes "
                            "(repetitions × locations)")


def choose_repetitions(values: np.ndarray | None, statistics: Mapping[str, float],
                       measure: str) -> tuple[np.ndarray, np.ndarray | None, str]:
    """(repetitions, per-location values or None, what was done) for one Extra-P measurement.

    Kept ``values`` are used when their mean agrees with the stored ``mean`` (what is ``""``);
    otherwise the ``measure`` statistic becomes a single repetition (what is ``"stale"`` when
    values disagreed, ``"summary"`` when there were none).  Raises :class:`ExtrapFormatError`
    when neither is usable.
    """
    kind = "summary"
    if values is not None:
        reps, locations = repetitions_from_values(values)
        flat = reps if locations is None else locations
        finite = flat[~np.isnan(flat)]
        mean = statistics.get("mean")
        if mean is None or finite.size == 0 or _close(float(np.mean(finite)), mean):
            return reps, locations, ""
        kind = "stale"
    if measure not in statistics:
        raise ExtrapFormatError(f"has no repetition values and no {measure}")
    return np.array([float(statistics[measure])]), None, kind


def metric_from_tags(tags: Mapping[str, Any]) -> dict[str, Any]:
    """pmkit's metric fields kept in Extra-P metric tags (``pmkit__unit`` ...) as Metric keyword arguments."""
    out: dict[str, Any] = {}
    for field_name, kind in METRIC_TAGS.items():
        value = tags.get(f"{TAG_PREFIX}{field_name}")
        if isinstance(value, kind):
            out[field_name] = value
    return out


_NPY_HEADER = re.compile(
    r"\{'descr': '([<>|=]?[fiub][1248])', 'fortran_order': (True|False), 'shape': \(((?:\d+, ?)*\d*)\), \}\s*")


def _plain_npy(data: bytes, offset: int) -> np.ndarray | None:
    """The numeric array of a standard ``.npy`` header at ``offset``; None when the header is anything
    else (numpy's own reader, pickling disabled, then decides).  Saves numpy's general header parse,
    which dominates reading files with many small arrays."""
    if data[offset:offset + 6] != b"\x93NUMPY" or len(data) < offset + 10:
        return None
    major = data[offset + 6]
    if major == 1:
        (size,) = struct.unpack_from("<H", data, offset + 8)
        start = offset + 10
    elif major in (2, 3):
        (size,) = struct.unpack_from("<I", data, offset + 8)
        start = offset + 12
    else:
        return None
    match = _NPY_HEADER.fullmatch(data[start:start + size].decode("latin-1"))
    if match is None:
        return None
    dtype = np.dtype(match.group(1))
    shape = tuple(int(n) for n in match.group(3).replace(" ", "").split(",") if n)
    count = int(np.prod(shape)) if shape else 1
    body = start + size
    if len(data) < body + count * dtype.itemsize:
        return None
    array = np.frombuffer(data, dtype=dtype, count=count, offset=body)
    return array.reshape(shape, order="F" if match.group(2) == "True" else "C").copy()


def read_member(archive: zipfile.ZipFile, path: Path, name: str, limits: Limits) -> bytes:
    """A zip member inflated as a stream within ``limits``; KeyError if the archive lacks it,
    InputError naming the member if it is damaged or beyond a limit."""
    info = archive.getinfo(name)
    try:
        with archive.open(info) as stream:
            return read_inflating(stream.read, lambda: _consumed(stream, info), limits)
    except LimitError as exc:
        raise InputError(path, str(exc), member=name) from None
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise InputError(path, f"cannot be extracted: {_first_line(exc)}", member=name) from None


def _consumed(stream: Any, info: zipfile.ZipInfo) -> int:
    """Compressed bytes a zip member's stream has inflated so far: from CPython's ZipExtFile counters
    where they exist (read ahead, less the decompressor's unused tail), else the whole member (so
    the ratio is never overstated)."""
    left = getattr(stream, "_compress_left", None)
    tail = getattr(getattr(stream, "_decompressor", None), "unconsumed_tail", b"")
    if not isinstance(left, int) or not isinstance(tail, bytes):
        return info.compress_size
    return info.compress_size - left - len(tail)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _ValueChunks:
    """Reads the numpy arrays of ``values/N.vals`` through the offsets in ``values/N.indx``."""

    def __init__(self, archive: zipfile.ZipFile, path: Path, limits: Limits) -> None:
        self.archive = archive
        self.path = path
        self.limits = limits
        self._chunks: dict[int, tuple[bytes, list[int]]] = {}

    def _member(self, name: str) -> bytes:
        try:
            return read_member(self.archive, self.path, name, self.limits)
        except KeyError:
            raise InputError(self.path, "is referenced by a measurement but missing from the archive",
                             member=name) from None

    def _chunk(self, chunk: int) -> tuple[bytes, list[int]]:
        if chunk not in self._chunks:
            index_name, values_name = f"values/{chunk}.indx", f"values/{chunk}.vals"
            index = self._member(index_name)
            if not index.startswith(INDEX_MAGIC) or len(index) < 24:
                raise InputError(self.path, "is not an Extra-P value index (bad header)", member=index_name)
            (count,) = struct.unpack_from("<Q", index, 16)
            if len(index) < 24 + 8 * count:
                raise InputError(self.path, f"announces {count} arrays but holds fewer offsets", member=index_name)
            offsets = list(struct.unpack_from(f"<{count}Q", index, 24))
            data = self._member(values_name)
            if not data.startswith(VALUES_MAGIC):
                raise InputError(self.path, "is not an Extra-P value file (bad header)", member=values_name)
            self._chunks[chunk] = (data, offsets)
        return self._chunks[chunk]

    def read(self, chunk: int, index: int) -> np.ndarray:
        data, offsets = self._chunk(chunk)
        name = f"values/{chunk}.vals"
        if not 0 <= index < len(offsets):
            raise InputError(self.path, f"has no array {index} (it holds {len(offsets)})", member=name)
        array = _plain_npy(data, offsets[index])
        if array is not None:
            return array
        stream = io.BytesIO(data)
        stream.seek(offsets[index])
        try:
            array = np.lib.format.read_array(stream, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            raise InputError(self.path, f"array {index} cannot be read: {exc}", member=name) from None
        if array.dtype.kind not in "biuf":
            raise InputError(self.path, f"array {index} holds {array.dtype} values, not numbers", member=name)
        return array


class ExtrapExperimentReader:
    """Reads ``.extra-p`` experiment files, including the model sets Extra-P stored in them."""

    name = "extrap-experiment"
    description = "Extra-P experiment files (.extra-p): measurements, repetitions and Extra-P's stored models"
    options = (
        Option("measure", str, "mean",
               "statistic used as the value where the file keeps no repetition values",
               choices=STATISTICS),
        Option("models", bool, True, "read the model sets stored in the file into experiment.stored_models"),
        MAX_INFLATED_OPTION,
        MAX_RATIO_OPTION,
    )

    def sniff(self, path: Path) -> bool:
        """True for a zip archive that holds ``experiment.json``."""
        try:
            if not path.is_file() or not zipfile.is_zipfile(path):
                return False
            with zipfile.ZipFile(path) as archive:
                return EXPERIMENT_MEMBER in archive.namelist()
        except (OSError, zipfile.BadZipFile, ValueError):
            return False

    def read(self, path: Path, measure: str = "mean", models: bool = True, max_inflated_mb: int = MAX_INFLATED_MB,
             max_ratio: float = MAX_RATIO) -> Experiment:
        path = Path(path)
        if measure not in STATISTICS:
            raise UsageError(f"option measure: {measure!r} is not one of {', '.join(STATISTICS)}")
        limits = Limits(inflated_bytes=max_inflated_mb * MIB, ratio=max_ratio)
        if path.exists() and not path.is_file() and not path.is_dir():
            raise InputError(path, "is not a regular file: an .extra-p experiment is a zip archive, read from a file "
                             "(not a device or a pipe)")
        try:
            with zipfile.ZipFile(path) as archive:
                data = self._load_json(archive, path, limits)
                return _ExperimentJson(path, data, _ValueChunks(archive, path, limits), measure, models).build()
        except zipfile.BadZipFile as exc:
            raise InputError(path, f"is not an Extra-P experiment (.extra-p files are zip archives): {exc}") from None
        except IsADirectoryError:
            raise InputError(path, "is a directory, not an .extra-p file") from None
        except OSError as exc:
            raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None

    @staticmethod
    def _load_json(archive: zipfile.ZipFile, path: Path, limits: Limits) -> Mapping[str, Any]:
        try:
            raw = read_member(archive, path, EXPERIMENT_MEMBER, limits)
        except KeyError:
            raise InputError(path, f"is a zip archive without {EXPERIMENT_MEMBER}, so not an Extra-P "
                             "experiment") from None
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(path, f"is not UTF-8 text (byte {exc.start})", member=EXPERIMENT_MEMBER) from None
        except json.JSONDecodeError as exc:
            raise InputError(path, f"is not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno,
                             member=EXPERIMENT_MEMBER) from None
        except RecursionError:
            raise InputError(path, "is not usable JSON: it is nested too deeply", member=EXPERIMENT_MEMBER) from None
        except ValueError:  # Python refuses integers of more than 4,300 digits
            raise InputError(path, "is not usable JSON: it holds a number of more than 4,300 digits",
                             member=EXPERIMENT_MEMBER) from None
        if not isinstance(data, dict):
            raise InputError(path, f"must hold a JSON object, got {_kind(data)}", member=EXPERIMENT_MEMBER)
        return data


class _ExperimentJson:
    """One parse of ``experiment.json``: every error names the file, the member and the JSON path."""

    def __init__(self, path: Path, data: Mapping[str, Any], values: _ValueChunks, measure: str,
                 models: bool) -> None:
        self.path = path
        self.data = data
        self.values = values
        self.measure = measure
        self.read_models = models
        self.version = str(data.get("Extra-P", "unknown"))

    def fail(self, where: str, problem: str) -> InputError:
        return InputError(self.path, f"{where}: {problem}" if where else problem, member=EXPERIMENT_MEMBER)

    def build(self) -> Experiment:
        parameters = self._parameters()
        builder = ExperimentBuilder(parameters, str(self.path))
        for name in self._names("callpaths"):
            self._add_callpath(builder, name, f"callpaths → {name!r}")
        for name in self._names("metrics"):
            tags = self.data["metrics"][name].get("tags") if isinstance(self.data["metrics"][name], dict) else None
            builder.add_metric(name, **metric_from_tags(tags if isinstance(tags, dict) else {}))
        counts = self._measurements(builder, parameters)
        experiment = builder.build()
        prov = experiment.provenance
        prov.reader = ExtrapExperimentReader.name
        scaling = self.data.get("scaling")
        prov.aggregation = f"Extra-P scaling: {scaling}" if isinstance(scaling, str) else ""
        prov.notes.append(f"written by Extra-P {self.version}")
        if counts["summary"]:
            prov.notes.append(f"{counts['summary']} of {counts['total']} measurements keep no repetition values; "
                              f"their {self.measure} is used as a single repetition")
        if counts["stale"]:
            prov.notes.append(f"{counts['stale']} measurements keep repetition values that disagree with their "
                              f"stored mean (Extra-P merged call paths after reading); their {self.measure} "
                              "is used instead")
        if counts["locations"]:
            prov.notes.append(f"{counts['locations']} measurements keep per-location values; each repetition's "
                              "value is the mean over locations")
        if self.read_models:
            experiment.stored_models = self._model_sets(experiment)
        return experiment

    def _parameters(self) -> tuple[str, ...]:
        raw = self.data.get("parameters")
        if raw is None:
            raise self.fail("parameters", "missing; an Extra-P experiment names its parameters")
        if not isinstance(raw, list) or not raw:
            raise self.fail("parameters", f"must be a non-empty list of names, got {_kind(raw)}")
        names = []
        for k, item in enumerate(raw):
            name = item.get("name") if isinstance(item, dict) else item
            if not isinstance(name, str) or not name.strip():
                raise self.fail(f"parameters → item {k}", f"{json.dumps(item)[:60]} is not a parameter name")
            names.append(name)
        if len(set(names)) != len(names):
            raise self.fail("parameters", f"names repeat: {names}")
        return tuple(names)

    def _names(self, key: str) -> list[str]:
        raw = self.data.get(key)
        if raw is None:
            return []
        if not isinstance(raw, dict):
            raise self.fail(key, f"must be an object keyed by name, got {_kind(raw)}")
        return list(raw)

    def _add_callpath(self, builder: ExperimentBuilder, name: str, where: str) -> None:
        if not name or any(part == "" for part in name.split(CALLPATH_SEPARATOR)):
            raise self.fail(where, f"call path {name!r} has an empty region name")
        builder.callpaths.add(name)

    def _measurements(self, builder: ExperimentBuilder, parameters: tuple[str, ...]) -> dict[str, int]:
        raw = self.data.get("measurements")
        if not isinstance(raw, dict) or not raw:
            raise self.fail("measurements", "missing or empty; the experiment holds no measured values")
        counts = {"total": 0, "summary": 0, "stale": 0, "locations": 0}
        per_location: list[tuple[str, str, int, np.ndarray]] = []
        for callpath, by_metric in raw.items():
            self._add_callpath(builder, callpath, f"measurements → {callpath!r}")
            if not isinstance(by_metric, dict):
                raise self.fail(f"measurements → {callpath!r}", f"must be an object keyed by metric, got "
                                f"{_kind(by_metric)}")
            for metric, items in by_metric.items():
                where = f"measurements → {callpath!r} → {metric!r}"
                if not isinstance(items, list):
                    raise self.fail(where, f"must be a list of measurements, got {_kind(items)}")
                builder.add_metric(metric)
                seen: set[int] = set()
                for k, item in enumerate(items):
                    counts["total"] += 1
                    point, reps, locations, kind = self._measurement(item, parameters, builder, f"{where} → item {k}")
                    if point in seen:
                        raise self.fail(f"{where} → item {k}", f"a second measurement at coordinate "
                                        f"{item['coordinate']}")
                    seen.add(point)
                    if kind:
                        counts[kind] += 1
                    builder.add_values(callpath, metric, point, reps)
                    if locations is not None:
                        counts["locations"] += 1
                        per_location.append((callpath, metric, point, locations))
        for callpath, metric, point, locations in per_location:
            for repetition in locations:
                builder.add_locations(callpath, metric, point, repetition)
        return counts

    def _measurement(self, item: Any, parameters: tuple[str, ...], builder: ExperimentBuilder,
                     where: str) -> tuple[int, np.ndarray, np.ndarray | None, str]:
        if not isinstance(item, dict):
            raise self.fail(where, f"must be an object, got {_kind(item)}")
        coordinate = item.get("coordinate")
        if not isinstance(coordinate, list):
            raise self.fail(where, f"coordinate must be a list of numbers, got {_kind(coordinate)}")
        if len(coordinate) != len(parameters):
            raise self.fail(where, f"coordinate {coordinate} has {len(coordinate)} values but there are "
                            f"{len(parameters)} parameters {list(parameters)}")
        try:
            coords = [number_from_json(c, "coordinate value") for c in coordinate]
            stats = {s: number_from_json(item[s], s) for s in STATISTICS if s in item}
        except ExtrapFormatError as exc:
            raise self.fail(where, str(exc)) from None
        if not all(math.isfinite(c) for c in coords):
            raise self.fail(where, f"coordinate {coordinate} is not made of finite numbers")
        point = builder.add_point(coords)
        reference = item.get("values")
        values = None
        if reference is not None:
            if (not isinstance(reference, list) or len(reference) != 2
                    or not all(isinstance(r, int) and not isinstance(r, bool) for r in reference)):
                raise self.fail(where, f"values must be a [chunk, index] pair, got {json.dumps(reference)[:60]}")
            values = self.values.read(*reference)
        try:
            reps, locations, kind = choose_repetitions(values, stats, self.measure)
        except ExtrapFormatError as exc:
            raise self.fail(where, str(exc)) from None
        return point, reps, locations, kind

    def _model_sets(self, experiment: Experiment) -> dict[str, ModelSet]:
        raw = self.data.get("modelers", [])
        if not isinstance(raw, list):
            raise self.fail("modelers", f"must be a list of model sets, got {_kind(raw)}")
        out: dict[str, ModelSet] = {}
        for k, generator in enumerate(raw):
            where = f"modelers → item {k}"
            if not isinstance(generator, dict):
                raise self.fail(where, f"must be an object, got {_kind(generator)}")
            name = generator.get("name")
            name = name if isinstance(name, str) and name else f"model set {k + 1}"
            unique, n = name, 2
            while unique in out:
                unique, n = f"{name} ({n})", n + 1
            out[unique] = self._model_set(experiment, generator, unique, where)
        return out

    def _model_set(self, experiment: Experiment, generator: Mapping[str, Any], name: str, where: str) -> ModelSet:
        settings = generator.get("modeler", {})
        if not isinstance(settings, dict):
            raise self.fail(f"{where} → modeler", f"must be an object, got {_kind(settings)}")
        modeler = f"extrap:{settings.get('$type', 'unknown')}"
        options = {k: v for k, v in settings.items() if k != "$type"}
        models_raw = generator.get("models", {})
        if not isinstance(models_raw, dict):
            raise self.fail(f"{where} → models", f"must be an object keyed by call path, got {_kind(models_raw)}")
        models = []
        for callpath, by_metric in models_raw.items():
            if not isinstance(by_metric, dict):
                raise self.fail(f"{where} → models → {callpath!r}", "must be an object keyed by metric")
            for metric, entry in by_metric.items():
                models.append(self._model(experiment, callpath, metric, entry, modeler, options, name,
                                          f"{where} → models → {callpath!r} → {metric!r}"))
        return ModelSet(experiment.parameters, models, modeler=modeler)

    def _model(self, experiment: Experiment, callpath: str, metric: str, entry: Any, modeler: str,
               options: Mapping[str, Any], set_name: str, where: str) -> Model:
        if not isinstance(entry, dict) or not isinstance(entry.get("hypothesis"), dict):
            raise self.fail(where, "must be an object with a hypothesis")
        hypothesis = entry["hypothesis"]
        notes = [f"stored by Extra-P {self.version} in model set {set_name!r}"]
        measure = hypothesis.get("_use_measure")
        if isinstance(measure, str):
            notes.append(f"Extra-P modeled the {measure.lower()} of the repetitions")
        elif hypothesis.get("_use_median") is True:
            notes.append("Extra-P modeled the median of the repetitions")
        try:
            function: Function | None = function_from_json(hypothesis.get("function"), experiment.parameters)
        except ExtrapFormatError as exc:
            if "segmented" not in str(exc) and "SegmentedTerm" not in str(exc):
                raise self.fail(f"{where} → hypothesis → function", str(exc)) from None
            function = None
            notes.append(f"not PMNF: {exc}")
        try:
            quality = Quality(rss=_optional(hypothesis, "RSS"), smape=_optional(hypothesis, "SMAPE"),
                              adjusted_r2=_optional(hypothesis, "AR2"))
        except ExtrapFormatError as exc:
            raise self.fail(f"{where} → hypothesis", str(exc)) from None
        n_points = 0
        if callpath in experiment.callpaths and metric in experiment.measurements:
            row = experiment.measurements[metric][experiment.callpaths.index(callpath)]
            n_points = int(np.sum(~np.all(np.isnan(row), axis=-1)))
        return Model(callpath, metric, function, quality, modeler, dict(options), tuple(notes), n_points)


def _optional(hypothesis: Mapping[str, Any], key: str) -> float:
    value = hypothesis.get(key)
    return float("nan") if value is None else number_from_json(value, key)


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= VALUES_TOLERANCE * max(abs(a), abs(b), 1e-300)


@hookimpl(trylast=True)
def pmkit_register_readers(register: Any) -> None:
    register(ExtrapExperimentReader())
