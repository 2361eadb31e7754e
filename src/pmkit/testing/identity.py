"""Are two experiments, or two model sets, the same to the last bit?  What differs, in words.

pmkit promises that where the work runs does not change what comes out: an experiment read or a
batch modeled on worker processes or a Dask cluster equals the one made in-process.  These checks
say so (an empty list) or name the first differences, for tests and benchmarks — and for plugin
authors whose modeler declares ``independent_series``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from pmkit.experiment import Experiment
from pmkit.models import Model, ModelSet

SHOWN = 5
"""Differences named at most; the count of the rest follows."""


def experiment_differences(a: Experiment, b: Experiment) -> list[str]:
    """What differs between two experiments: parameters, points, call paths, metrics, every value (NaN
    equal to NaN), the per-location values, the provenance and the event table."""
    out: list[str] = []
    _same(out, "parameters", a.parameters, b.parameters)
    _arrays(out, "points", a.points, b.points)
    _same(out, "call paths", a.callpaths.paths(), b.callpaths.paths())
    _same(out, "metrics", a.metrics, b.metrics)
    _same(out, "measured metrics", sorted(a.measurements), sorted(b.measurements))
    for name in sorted(set(a.measurements) & set(b.measurements)):
        _arrays(out, f"values of {name}", a.measurements[name], b.measurements[name])
    _same(out, "per-location values kept", a.locations is None, b.locations is None)
    if a.locations is not None and b.locations is not None:
        for name in sorted(set(a.locations) & set(b.locations)):
            _same(out, f"points with per-location {name}", len(a.locations[name]), len(b.locations[name]))
            for point, (x, y) in enumerate(zip(a.locations[name], b.locations[name], strict=False)):
                _arrays(out, f"per-location {name} at point {point}", x, y)
    for field in ("sources", "reader", "aggregation", "skipped", "notes", "warnings"):
        _same(out, f"provenance.{field}", getattr(a.provenance, field), getattr(b.provenance, field))
    _same(out, "event table", a.events is None, b.events is None)
    if a.events is not None and b.events is not None:
        _same(out, "event columns", sorted(a.events.columns), sorted(b.events.columns))
        for name in sorted(set(a.events.columns) & set(b.events.columns)):
            _arrays(out, f"event column {name}", a.events.columns[name], b.events.columns[name])
        for name in sorted(set(a.events.messages or {}) & set(b.events.messages or {})):
            _arrays(out, f"message column {name}", a.events.messages[name], b.events.messages[name])  # type: ignore[index]
        _same(out, "event regions", a.events.regions, b.events.regions)
        _same(out, "event call paths", a.events.callpaths.paths(), b.events.callpaths.paths())
        _same(out, "event runs", a.events.runs, b.events.runs)
    return _cut(out)


def model_differences(a: ModelSet | Sequence[Model], b: ModelSet | Sequence[Model]) -> list[str]:
    """What differs between two model sets, model by model: call path, metric, modeler, the function
    (every coefficient and exponent), quality figures, notes, points and outliers."""
    out: list[str] = []
    if isinstance(a, ModelSet) and isinstance(b, ModelSet):
        _same(out, "parameters", a.parameters, b.parameters)
        _same(out, "modeler", a.modeler, b.modeler)
    _same(out, "number of models", len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        left, right = _exact(x), _exact(y)
        if left != right:
            fields = [key for key in left if left[key] != right.get(key)]
            out.append(f"model {i} ({x.callpath}, {x.metric}) differs in {', '.join(fields)}: "
                       f"{_shown(left, fields)} against {_shown(right, fields)}")
    return _cut(out)


def _exact(model: Model) -> dict[str, str]:
    """A model's fields as text that keeps every bit (floats by repr, NaN as NaN)."""
    document = model.to_json()
    return {key: json.dumps(value, sort_keys=True, default=str) for key, value in document.items()}


def _shown(fields: dict[str, str], names: list[str]) -> str:
    return "; ".join(f"{name}={fields[name][:200]}" for name in names)


def _same(out: list[str], what: str, x: Any, y: Any) -> None:
    if x != y:
        out.append(f"{what}: {_short(x)} against {_short(y)}")


def _arrays(out: list[str], what: str, x: np.ndarray | None, y: np.ndarray | None) -> None:
    if x is None or y is None:
        _same(out, what, x is None, y is None)
        return
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype != y.dtype:
        out.append(f"{what}: shape {x.shape} {x.dtype} against {y.shape} {y.dtype}")
    elif not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
        differ = np.argwhere(~((x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind in "fc" else x == y))
        first = tuple(int(i) for i in differ[0])
        out.append(f"{what}: {len(differ)} values differ, first at {first}: {x[first]!r} against {y[first]!r}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"


def _cut(out: list[str]) -> list[str]:
    return out if len(out) <= SHOWN else [*out[:SHOWN], f"and {len(out) - SHOWN} more differences"]
