"""Runs Extra-P's own modelers and readers for pmkit's benchmarks; executed by Extra-P's python.

Extra-P pins numpy < 2, so it lives in its own virtual environment and this script talks to the
benchmarks through JSON on stdin/stdout.  It imports only Extra-P and the standard library (never
pmkit).  Two commands:

``model``  series (points + repetition values) → for each requested Extra-P modeler (a name, or
           ``{"name", "label", "options"}`` with Extra-P modeler options), every series'
           function (constant, terms with exact exponents), its text, its predictions at the
           requested points, and the seconds Extra-P spent modeling (after an optional warm-up).
           A segmented model (Extra-P's ``Segmented`` modeler) also gives its segments (function and
           interval of each) and its change points; its ``function`` is then the last segment's.
``load``   a file or folder Extra-P can read → its parameters, points and per-series mean values, so a
           benchmark can give pmkit and Extra-P the same numbers.
"""

from __future__ import annotations

import json
import logging
import math
import sys
import time
import warnings
from fractions import Fraction


def _fraction_text(value) -> str:
    """An exponent from Extra-P (its Fraction, an int or a float) as exact ``"n/d"`` text."""
    if isinstance(value, float):
        frac = Fraction(value).limit_denominator(1000)
    else:
        frac = Fraction(value)
    return str(frac.numerator) if frac.denominator == 1 else f"{frac.numerator}/{frac.denominator}"


def _compound_factors(compound, parameter: str) -> dict:
    """One parameter's factor (polynomial and log exponents) of an Extra-P CompoundTerm."""
    exponent, log_exponent = "0", "0"
    for simple in compound.simple_terms:
        if simple.term_type == "polynomial":
            exponent = _fraction_text(simple.exponent)
        else:
            log_exponent = _fraction_text(simple.exponent)
    return {"parameter": parameter, "exponent": exponent, "log_exponent": log_exponent}


def _function_json(function, parameters: list[str]) -> dict:
    """An Extra-P function as pmkit's Function JSON: ``{"constant": c0, "terms": [...]}``."""
    from extrap.entities.terms import MultiParameterTerm

    terms = []
    for term in function.compound_terms:
        if isinstance(term, MultiParameterTerm):
            factors = [_compound_factors(t, parameters[p]) for p, t in term.parameter_term_pairs]
        else:
            factors = [_compound_factors(term, parameters[0])]
        factors = [f for f in factors if (f["exponent"], f["log_exponent"]) != ("0", "0")]
        terms.append({"coefficient": float(term.coefficient), "factors": factors})
    return {"constant": float(function.constant_coefficient), "terms": terms}


def _segments_json(model, parameters: list[str]) -> dict:
    """A segmented model's pieces: each segment's function and interval, and the change points
    (Extra-P's measured points where the law changes: one shared point, or the two around it)."""
    function = model.hypothesis.function

    def bound(value: float):
        return None if math.isinf(value) else float(value)

    segments = [{"function": _function_json(segment, parameters), "text": segment.to_string(*parameters),
                 "interval": [bound(lo), bound(hi)]}
                for segment, (lo, hi) in zip(function.segments, function.intervals, strict=True)]
    return {"segments": segments, "change_points": [float(m.coordinate[0]) for m in model.changing_points]}


def _make_modeler(name: str, n_parameters: int, options: dict | None = None):
    """Extra-P's single-parameter modeler ``name`` with its modeler ``options`` set (attribute name →
    value, e.g. ``{"allow_negative_exponents": true}``); for several parameters, its Multi-Parameter
    modeler with that single-parameter modeler (Extra-P's default is Basic)."""
    from extrap.modelers import multi_parameter, single_parameter

    single = single_parameter.all_modelers[name]()
    known = {o.field for o in single.options_iter()} if hasattr(single, "options_iter") else set()
    for option, value in (options or {}).items():
        if option not in known:
            raise ValueError(f"Extra-P modeler {name} has no option {option!r}; it has {sorted(known)}")
        setattr(single, option, value)  # Extra-P's option descriptors run their on_change hooks
    if n_parameters == 1:
        return single
    multi = multi_parameter.all_modelers["Multi-Parameter"]()
    multi.single_parameter_modeler = single
    multi._default_single_parameter_modeler = single
    return multi


def _measurements(points, series):
    """Extra-P Measurement lists, one per series; NaN/None repetitions and empty points are dropped."""
    from extrap.entities.callpath import Callpath
    from extrap.entities.coordinate import Coordinate
    from extrap.entities.measurement import Measurement
    from extrap.entities.metric import Metric

    metric = Metric("value")
    coordinates = [Coordinate(*p) for p in points]
    out = []
    for i, per_point in enumerate(series):
        callpath = Callpath(f"series{i}")
        ms = []
        for k, coordinate in enumerate(coordinates):
            kept = [float(v) for v in per_point[k] if v is not None and not math.isnan(float(v))]
            if kept:
                ms.append(Measurement(coordinate, callpath, metric, kept))
        out.append(ms)
    return out


def command_model(request: dict) -> dict:
    """Model every series with each requested Extra-P modeler; see the module docstring."""
    from extrap.entities.coordinate import Coordinate

    parameters = request["parameters"]
    points = request["points"]
    predict_at = request.get("predict_at", [])
    warmup = int(request.get("warmup", 0))
    measurements = _measurements(points, request["series"])
    results = {}
    for spec in request["modelers"]:
        # a modeler is its name, or {"name", "label", "options"} for one with modeler options set
        if isinstance(spec, str):
            spec = {"name": spec}
        name = spec.get("label", spec["name"])
        modeler = _make_modeler(spec["name"], len(parameters), spec.get("options"))
        if warmup:
            modeler.model(measurements[:warmup])
        start = time.perf_counter()
        models = modeler.model(measurements)
        seconds = time.perf_counter() - start
        out = []
        for model in models:
            function = model.hypothesis.function
            predictions = []
            for point in predict_at:
                value = function.evaluate(point[0] if len(parameters) == 1 else Coordinate(*point))
                predictions.append(float(value))
            entry = {"text": function.to_string(*parameters), "predictions": predictions}
            if hasattr(model, "segment_models"):
                entry.update(_segments_json(model, parameters))
                entry["function"] = entry["segments"][-1]["function"]
            else:
                entry["function"] = _function_json(function, parameters)
            out.append(entry)
        results[name] = {"seconds": seconds, "models": out}
    return {"results": results}


def _reader(name: str | None, path: str):
    """The Extra-P file reader called ``name``, or the one the path's form suggests."""
    from pathlib import Path

    from extrap.fileio.file_reader import all_readers

    if name is None:
        p = Path(path)
        if p.is_dir():
            name = "cube"
        elif p.suffix.lower() == ".json":
            name = "json"
        elif p.suffix.lower() == ".jsonl":
            name = "jsonlines"
        elif p.suffix.lower() == ".extra-p":
            return None
        else:
            name = "text"
    for reader in all_readers.values():
        if reader.NAME == name:
            return reader()
    raise SystemExit(f"Extra-P has no reader named {name!r}")


def command_load(request: dict) -> dict:
    """Read a file with Extra-P and return parameters, points and mean values per series."""
    path = request["path"]
    reader = _reader(request.get("reader"), path)
    if reader is None:
        from extrap.fileio.experiment_io import read_experiment

        experiment = read_experiment(path)
    else:
        experiment = reader.read_experiment(path)
    points = [list(c) if c.dimensions > 1 else [c[0]] for c in experiment.coordinates]
    index = {tuple(p): i for i, p in enumerate(points)}
    series = []
    for (callpath, metric), ms in experiment.measurements.items():
        values = [None] * len(points)
        for m in ms:
            c = m.coordinate
            key = tuple(c[k] for k in range(c.dimensions))
            values[index[key]] = float(m.mean)
        series.append({"callpath": callpath.name, "metric": metric.name, "values": values})
    return {"parameters": [p.name for p in experiment.parameters], "points": points, "series": series}


def main() -> None:
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    request = json.load(sys.stdin)
    import extrap

    commands = {"model": command_model, "load": command_load}
    try:
        result = commands[request["command"]](request)
    except Exception as exc:  # report Extra-P's own complaint in one line, not a traceback
        where = request.get("path", "the series")
        raise SystemExit(f"Extra-P failed on {where}: {type(exc).__name__}: {exc}") from None
    result["extrap_version"] = getattr(extrap, "__version__", "unknown")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
