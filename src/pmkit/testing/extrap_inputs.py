"""Extra-P input files written from a small declarative description, for tests, examples and plugins.

A :class:`Measurements` says what was measured: parameters, points and, per (call path, metric),
the repetition values at each point (``None`` where a point was not measured).  The writers lay it
out in every format Extra-P reads, in the layouts its own example files use:

* :func:`write_text` — ``PARAMETER``/``POINTS``/``METRIC``/``REGION``/``DATA`` lines: parameters on
  one line or one per line, points one per line, all on one line or without parentheses, METRIC
  before or after REGION, or no METRIC at all (the unnamed metric ``""``), tabs, comments;
* :func:`write_json` — JSON, the new layout (``parameters`` and ``measurements`` by call path and
  metric) or the old one (id tables of parameters, call paths, metrics and coordinates);
* :func:`write_jsonl` — JSON Lines, with or without ``callpath``/``metric`` keys, one record per
  repetition or a list of them;
* :func:`write_talpas` — Talpas lines (``;`` between the fields);
* :func:`write_extrap_experiment` — an ``.extra-p`` archive as Extra-P saves one: ``experiment.json``
  with the statistics of each measurement, its repetition values in the value chunks (4.2 and
  later) or only the statistics (4.0), and model sets of PMNF functions.

A point left out (``None``) is written the way each format expresses it, so the files Extra-P
rejects for a missing point come from the same description.  Nothing here is committed as a
file: tests write what they need into a temporary folder::

    m = Measurements.from_laws(("p",), [(2,), (4,), (8,), (16,)],
                               {("main->solve", "time"): lambda p: 1 + 0.5 * p}, repetitions=3)
    write_text(tmp_path / "study.txt", m)            # pmkit show study.txt
    write_jsonl(tmp_path / "study.jsonl", m.without(("main->solve", "time"), 2))   # rejected
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.pmnf import Function

Key = tuple[str, str]
"""(call path, metric)."""


@dataclass
class Measurements:
    """What was measured: ``values[(callpath, metric)][i]`` are the repetitions at ``points[i]`` (None: not measured).

    Call paths and metrics keep the order in which ``values`` first names them.
    """

    parameters: tuple[str, ...]
    points: list[tuple[float, ...]]
    values: dict[Key, list[list[float] | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.parameters = tuple(self.parameters)
        self.points = [tuple(float(c) for c in p) for p in self.points]
        for point in self.points:
            if len(point) != len(self.parameters):
                raise ValueError(f"point {point} has {len(point)} coordinates for parameters {self.parameters}")
        for key, per_point in self.values.items():
            if len(per_point) != len(self.points):
                raise ValueError(f"{key} has values for {len(per_point)} of {len(self.points)} points")

    @classmethod
    def from_laws(cls, parameters: Sequence[str], points: Sequence[Sequence[float]],
                  laws: Mapping[Key, Callable[..., float]], *, repetitions: int | Sequence[int] = 5,
                  noise: float = 0.01, seed: int = 0) -> Measurements:
        """Values of ``laws[(callpath, metric)](*point)`` with ±``noise`` relative normal noise.

        ``repetitions`` is a count for every point or one count per point (Extra-P's examples have
        fewer repetitions at some points).  The noise comes from a fixed ``seed``.
        """
        rng = np.random.default_rng(seed)
        counts = [repetitions] * len(points) if isinstance(repetitions, int) else list(repetitions)
        values: dict[Key, list[list[float] | None]] = {}
        for key, law in laws.items():
            values[key] = [[float(law(*point) * (1 + noise * rng.standard_normal())) for _ in range(count)]
                           for point, count in zip(points, counts, strict=True)]
        return cls(tuple(parameters), [tuple(p) for p in points], values)

    @property
    def callpaths(self) -> list[str]:
        """The call paths, in the order ``values`` first names them."""
        return list(dict.fromkeys(callpath for callpath, _ in self.values))

    @property
    def metrics(self) -> list[str]:
        """The metrics, in the order ``values`` first names them."""
        return list(dict.fromkeys(metric for _, metric in self.values))

    def without(self, key: Key, point: int) -> Measurements:
        """A copy in which ``key`` has no values at point number ``point`` (what Extra-P rejects)."""
        values = {k: list(v) for k, v in self.values.items()}
        values[key][point] = None
        return Measurements(self.parameters, list(self.points), values)

    def table(self, key: Key) -> np.ndarray:
        """The values of ``key`` as pmkit lays them out: points × repetitions, NaN-padded."""
        per_point = self.values[key]
        width = max((len(v) for v in per_point if v), default=0)
        out = np.full((len(self.points), width), np.nan)
        for i, reps in enumerate(per_point):
            if reps:
                out[i, :len(reps)] = reps
        return out


def _number(value: float) -> str:
    """A value as it round-trips exactly (integers without a fraction, as Extra-P's examples write them)."""
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _measured(m: Measurements, key: Key) -> list[tuple[int, list[float]]]:
    return [(i, reps) for i, reps in enumerate(m.values[key]) if reps is not None]


def write_text(path: str | Path, m: Measurements, *, parameter_lines: str = "one", points: str = "each",
               order: str = "metric-first", separator: str = " ", comment: str | None = None,
               region_padding: str = "") -> Path:
    """The text format.

    ``parameter_lines``: ``"one"`` (``PARAMETER p n``) or ``"each"`` (one line per parameter).
    ``points``: ``"each"`` (``POINTS ( 2 10 )`` per line), ``"line"`` (``POINTS (2 10) (4 10)``) or
    ``"plain"`` (``POINTS 2 4 8``, one parameter only).  ``order``: ``"metric-first"`` (``METRIC``
    then its regions) or ``"region-first"`` (``REGION`` then its metrics).  The metric ``""`` is
    written without a METRIC line, so it must come first.  ``separator`` goes between DATA values;
    ``comment`` is written after each REGION line; ``region_padding`` after each region name (Extra-P
    strips it).  A point left out can only be one of the last: DATA lines are positional, so the
    file then has fewer DATA lines than points (Extra-P rejects it).
    """
    lines = []
    if parameter_lines == "one":
        lines.append("PARAMETER " + " ".join(m.parameters))
    elif parameter_lines == "each":
        lines += [f"PARAMETER {p}" for p in m.parameters]
    else:
        raise ValueError(f"parameter_lines must be 'one' or 'each', not {parameter_lines!r}")
    lines.append("")
    groups = ["( " + " ".join(_number(c) for c in point) + " )" for point in m.points]
    if points == "each":
        lines += [f"POINTS {g}" for g in groups]
    elif points == "line":
        lines.append("POINTS " + " ".join(g.replace("( ", "(").replace(" )", ")") for g in groups))
    elif points == "plain":
        if len(m.parameters) != 1:
            raise ValueError("points='plain' lists one-parameter points only")
        lines.append("POINTS " + " ".join(_number(p[0]) for p in m.points))
    else:
        raise ValueError(f"points must be 'each', 'line' or 'plain', not {points!r}")
    metrics, callpaths = m.metrics, m.callpaths
    if "" in metrics and (metrics[0] != "" or order != "metric-first"):
        raise ValueError("the unnamed metric '' has no METRIC line: it must be the first, written metric-first")

    def block(callpath: str, metric: str) -> list[str]:
        key = (callpath, metric)
        if key not in m.values:
            return []
        per_point = m.values[key]
        measured = [reps for reps in per_point if reps is not None]
        if any(reps is None for reps in per_point[:len(measured)]):
            raise ValueError(f"{key}: the text format can leave out only the last points")
        return ["DATA " + separator.join(_number(v) for v in reps) for reps in measured]

    def region(callpath: str) -> list[str]:
        return [f"REGION {callpath}{region_padding}"] + ([f"# {comment}"] if comment else [])

    lines.append("")
    if order == "metric-first":
        for metric in metrics:
            if metric:
                lines.append(f"METRIC {metric}")
            for callpath in callpaths:
                data = block(callpath, metric)
                if data:
                    lines += region(callpath) + data + [""]
    elif order == "region-first":
        for callpath in callpaths:
            lines += region(callpath)
            for metric in metrics:
                data = block(callpath, metric)
                if data:
                    lines += [f"METRIC {metric}", *data]
            lines.append("")
    else:
        raise ValueError(f"order must be 'metric-first' or 'region-first', not {order!r}")
    return _write(path, "\n".join(lines) + "\n")


def write_json(path: str | Path, m: Measurements, *, layout: str = "new", indent: int | None = 2) -> Path:
    """Extra-P's JSON input: ``layout="new"`` or ``"old"`` (id tables, one measurement per repetition)."""
    if layout == "new":
        measurements: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for (callpath, metric) in m.values:
            measurements.setdefault(callpath, {})[metric] = [
                {"point": [_plain(c) for c in m.points[i]], "values": [_plain(v) for v in reps]}
                for i, reps in _measured(m, (callpath, metric))]
        document: dict[str, Any] = {"parameters": list(m.parameters), "measurements": measurements}
    elif layout == "old":
        callpaths, metrics = m.callpaths, m.metrics
        rows = []
        for (callpath, metric) in m.values:
            for i, reps in _measured(m, (callpath, metric)):
                rows += [{"callpath_id": callpaths.index(callpath) + 1, "coordinate_id": i + 1,
                          "id": len(rows) + k + 1, "metric_id": metrics.index(metric) + 1, "value": _plain(v)}
                         for k, v in enumerate(reps)]
        document = {
            "callpaths": [{"id": i + 1, "name": name} for i, name in enumerate(callpaths)],
            "coordinates": [{"id": i + 1, "parameter_value_pairs": [
                {"parameter_id": k + 1, "parameter_value": _plain(c)} for k, c in enumerate(point)]}
                for i, point in enumerate(m.points)],
            "measurements": rows,
            "metrics": [{"id": i + 1, "name": name} for i, name in enumerate(metrics)],
            "parameters": [{"id": i + 1, "name": name} for i, name in enumerate(m.parameters)],
        }
    else:
        raise ValueError(f"layout must be 'new' or 'old', not {layout!r}")
    return _write(path, json.dumps(document, indent=indent) + "\n")


def _records(m: Measurements, params_key: str, keys: Sequence[str], lists: bool) -> list[dict[str, Any]]:
    for key, names in (("metric", m.metrics), ("callpath", m.callpaths)):
        if key not in keys and len(names) != 1:
            raise ValueError(f"without a {key!r} key a file holds one {key}, not {len(names)}")
    out = []
    for (callpath, metric) in m.values:
        for i, reps in _measured(m, (callpath, metric)):
            record: dict[str, Any] = {params_key: dict(zip(m.parameters, map(_plain, m.points[i]), strict=True))}
            if "metric" in keys:
                record["metric"] = metric
            if "callpath" in keys:
                record["callpath"] = callpath
            values = [_plain(v) for v in reps]
            out += [{**record, "value": values}] if lists else [{**record, "value": v} for v in values]
    return out


def write_jsonl(path: str | Path, m: Measurements, *, keys: Sequence[str] = ("metric", "callpath"),
                lists: bool = False, blank_lines: bool = False) -> Path:
    """JSON Lines: one ``{"params": ..., "metric": ..., "callpath": ..., "value": ...}`` record per line.

    ``keys`` are the optional keys written: without ``callpath`` (as most of Extra-P's examples)
    the file holds one call path, which Extra-P names ``<root>``; without ``metric`` one metric,
    named ``<default>``.  ``lists`` writes each point's repetitions as one list-valued record;
    ``blank_lines`` puts an empty line between records, as some of Extra-P's examples have.
    """
    lines = [json.dumps(r, separators=(",", ":")) for r in _records(m, "params", keys, lists)]
    return _write(path, ("\n\n" if blank_lines else "\n").join(lines) + "\n")


def write_talpas(path: str | Path, m: Measurements, *, lists: bool = False) -> Path:
    """Talpas: ``{"parameters":{...};"metric":...;"callpath":...;"value":...}`` per line."""
    lines = [json.dumps(r, separators=(",", ":")).replace(',"metric"', ';"metric"')
             .replace(',"callpath"', ';"callpath"').replace(',"value"', ';"value"')
             for r in _records(m, "parameters", ("metric", "callpath"), lists)]
    return _write(path, "\n".join(lines) + "\n")


def function_json(function: Function) -> dict[str, Any]:
    """A PMNF function in the JSON Extra-P's ``FunctionSchema`` writes (``MultiParameterFunction``)."""
    parameters = list(function.parameters)
    terms = []
    for term in function.terms:
        pairs = {}
        for factor in term.factors:
            simple = [{"term_type": "polynomial", "exponent": _exponent(factor.exponent)}] if factor.exponent else []
            if factor.log_exponent:
                simple.append({"term_type": "logarithm", "exponent": float(factor.log_exponent)})
            pairs[str(parameters.index(factor.parameter))] = {"coefficient": 1.0, "simple_terms": simple}
        terms.append({"coefficient": term.coefficient, "parameter_term_pairs": pairs})
    return {"constant_coefficient": function.constant, "compound_terms": terms, "$type": "MultiParameterFunction"}


def _exponent(value: Any) -> str | float:
    """Extra-P writes whole exponents as numbers and others as ``"p/q"`` text."""
    return float(value) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


@dataclass
class StoredModel:
    """A model saved in an ``.extra-p`` file's model set, with the quality figures Extra-P stores.

    ``measure`` is what Extra-P modeled (``"mean"`` or ``"median"`` of the repetitions); Extra-P
    4.0 records it as ``_use_median``, 4.2 also as ``_use_measure``.
    """

    callpath: str
    metric: str
    function: Function
    rss: float = 0.0
    smape: float = 0.0
    ar2: float = 1.0
    measure: str = "mean"


def write_extrap_experiment(path: str | Path, m: Measurements, *, keep_values: bool = True,
                            version: str = "4.2.5", model_sets: Mapping[str, Sequence[StoredModel]] | None = None,
                            modeler: str = "MultiParameterModeler") -> Path:
    """An ``.extra-p`` archive: ``experiment.json`` and, with ``keep_values``, the value chunk 0.

    Each measurement stores coordinate, mean, median, minimum, maximum and std; with
    ``keep_values`` also a ``[chunk, index]`` reference to its repetitions in ``values/0.vals``
    (numpy arrays after a header) indexed by ``values/0.indx``, as Extra-P 4.2 saves them.  Without
    it only the statistics are kept, as Extra-P 4.0 and ``keep_values=False`` save experiments.
    """
    arrays: list[np.ndarray] = []
    measurements: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for (callpath, metric) in m.values:
        items = []
        for i, reps in _measured(m, (callpath, metric)):
            values = np.asarray(reps, dtype=float)
            item = {"coordinate": list(m.points[i]), "median": float(np.median(values)), "mean": float(values.mean()),
                    "minimum": float(values.min()), "maximum": float(values.max()), "std": float(values.std())}
            if keep_values:
                item["values"] = [0, len(arrays)]
                arrays.append(values)
            items.append(item)
        measurements.setdefault(callpath, {})[metric] = items
    modelers = []
    for name, models in (model_sets or {}).items():
        stored: dict[str, dict[str, Any]] = {}
        for model in models:
            hypothesis = {"function": function_json(model.function), "RSS": model.rss, "rRSS": 0.0,
                          "SMAPE": model.smape, "AR2": model.ar2, "RE": 0.0, "_use_median": model.measure == "median",
                          "_costs_are_calculated": True, "$type": "MultiParameterHypothesis"}
            if not version.startswith("4.0"):
                hypothesis["_use_measure"] = model.measure.upper()
            stored.setdefault(model.callpath, {})[model.metric] = {"hypothesis": hypothesis}
        modelers.append({"name": name, "modeler": {"use_median": False, "$type": modeler}, "models": stored})
    document = {"Extra-P": version, "scaling": None, "parameters": list(m.parameters),
                "measurements": measurements, "modelers": modelers}
    return write_extrap_archive(path, document, arrays)


def write_extrap_archive(path: str | Path, document: Any, arrays: Sequence[np.ndarray] = (), *,
                         raw_json: str | None = None) -> Path:
    """An archive laid out like Extra-P's ``write_experiment``: ``experiment.json`` plus value chunk 0.

    ``arrays`` are stored in order (``values`` reference ``[0, k]``); ``raw_json`` replaces the
    JSON text, for damaged files.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        if len(arrays):
            vals, offsets = io.BytesIO(), []
            vals.write(b"Extra-P VALUES\0\0")
            for array in arrays:
                offsets.append(vals.tell())
                np.lib.format.write_array(vals, array, allow_pickle=True)
            archive.writestr("values/0.vals", vals.getvalue())
            index = b"Extra-P INDEX\0\0\0" + struct.pack("<Q", len(offsets)) + b"".join(
                struct.pack("<Q", o) for o in offsets)
            archive.writestr("values/0.indx", index)
        archive.writestr("experiment.json", raw_json if raw_json is not None else json.dumps(document))
    return path


def _plain(value: float) -> int | float:
    """An integral value as a JSON integer (as Extra-P's examples write coordinates), others as floats."""
    value = float(value)
    return int(value) if value.is_integer() and abs(value) < 1e15 else value


def _write(path: str | Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
