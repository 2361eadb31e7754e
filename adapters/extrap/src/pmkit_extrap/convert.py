"""Experiments both ways between Extra-P and pmkit: parameters, points, call paths, metrics,
repetitions (and per-location values) and model sets.

Extra-P keeps one value array per measurement: 1-D (repetitions) or 2-D (repetitions ×
locations).  pmkit keeps repetitions per call path and point, and per-location values per point.
Per-location values go to Extra-P as the 2-D array when the repetitions are their means over
locations (how pmkit reads them back); otherwise the repetitions go alone.  pmkit's metric unit,
inclusiveness and description travel as Extra-P metric tags ``pmkit__<field>``.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Mapping

import numpy as np
from extrap.entities.callpath import Callpath
from extrap.entities.coordinate import Coordinate
from extrap.entities.experiment import Experiment as ExtrapExperiment
from extrap.entities.functions import SegmentedFunction
from extrap.entities.hypotheses import SingleParameterHypothesis
from extrap.entities.measurement import Measure, Measurement
from extrap.entities.metric import Metric as ExtrapMetric
from extrap.entities.model import Model as ExtrapModel
from extrap.entities.model import SegmentedModel
from extrap.entities.parameter import Parameter
from extrap.fileio import io_helper
from extrap.modelers import multi_parameter, single_parameter
from extrap.modelers.abstract_modeler import EMPTY_MODELER
from extrap.modelers.model_generator import ModelGenerator
from extrap.modelers.modeler_options import modeler_options

from pmkit.errors import InputError
from pmkit.experiment import Experiment, ExperimentBuilder
from pmkit.models import Model, ModelSet
from pmkit.readers.extrap_experiment import (
    METRIC_TAGS,
    TAG_PREFIX,
    ExtrapFormatError,
    choose_repetitions,
    metric_from_tags,
)
from pmkit_extrap.functions import (
    no_model_hypothesis,
    quality_of,
    to_extrap_hypothesis,
    to_extrap_segmented,
    to_pmkit_function,
    to_pmkit_segments,
)

log = logging.getLogger(__name__)

USE_MEASURE = "use_measure"
"""Key of ``Model.options`` that keeps the Extra-P measure a model set was made from."""

MEASURES = {"mean": Measure.MEAN, "median": Measure.MEDIAN, "min": Measure.MINIMUM, "max": Measure.MAXIMUM,
            "minimum": Measure.MINIMUM, "maximum": Measure.MAXIMUM}
_STATISTIC = {Measure.MEAN: "mean", Measure.MEDIAN: "median", Measure.MINIMUM: "minimum",
              Measure.MAXIMUM: "maximum"}


def statistics_of(measurement: Measurement) -> dict[str, float]:
    """The summary statistics Extra-P keeps for a measurement."""
    return {name: float(getattr(measurement, name)) for name in ("mean", "median", "minimum", "maximum")
            if getattr(measurement, name, None) is not None}


def measurement_repetitions(measurement: Measurement, measure: str = "mean"):
    """(repetitions, per-location values or None, what was done) of an Extra-P measurement, as pmkit reads it."""
    return choose_repetitions(measurement.values, statistics_of(measurement), measure)


def to_pmkit(experiment: ExtrapExperiment, measure: str = "mean", *, source: str = "extrap") -> Experiment:
    """Extra-P's ``experiment`` as a pmkit Experiment, its model sets in ``stored_models``.

    Measurements whose repetition values Extra-P did not keep contribute their ``measure``
    statistic as a single repetition (noted in the provenance).
    """
    if measure not in ("mean", "median", "minimum", "maximum"):
        raise ValueError(f"measure must be mean, median, minimum or maximum, not {measure!r}")
    parameters = [p.name for p in experiment.parameters]
    builder = ExperimentBuilder(parameters, source)
    for coordinate in experiment.coordinates:
        builder.add_point(tuple(coordinate))
    for callpath in experiment.callpaths:
        builder.callpaths.add(callpath.name)
    for metric in experiment.metrics:
        builder.add_metric(metric.name, **metric_from_tags(metric.tags or {}))
    summary = 0
    locations = []
    for (callpath, metric), items in experiment.measurements.items():
        for item in items:
            try:
                reps, per_location, kind = measurement_repetitions(item, measure)
            except ExtrapFormatError as exc:
                raise InputError(source, f"{callpath.name} / {metric.name} at {item.coordinate}: {exc}") from None
            summary += kind != ""
            point = builder.add_point(tuple(item.coordinate))
            builder.add_values(callpath.name, metric.name, point, reps)
            if per_location is not None:
                locations.append((callpath.name, metric.name, point, per_location))
    for callpath, metric, point, per_location in locations:
        for repetition in per_location:
            builder.add_locations(callpath, metric, point, repetition)
    out = builder.build()
    out.provenance.reader = "pmkit-extrap"
    if experiment.scaling is not None:
        out.provenance.aggregation = f"Extra-P scaling: {experiment.scaling}"
    if summary:
        out.provenance.notes.append(f"{summary} measurements keep no usable repetition values; their {measure} "
                                    "is used as a single repetition")
    names: dict[str, int] = {}
    for generator in experiment.modelers:
        name = generator.name
        names[name] = names.get(name, 0) + 1
        key = name if names[name] == 1 else f"{name} ({names[name]})"
        out.stored_models[key] = model_set_from_generator(generator, out)
    return out


def modeler_name(modeler) -> str:
    """pmkit's name of the modeler behind an Extra-P model set."""
    pmkit_name = getattr(modeler, "PMKIT_MODELER", None)
    return pmkit_name if pmkit_name else f"extrap:{type(modeler).__name__}"


def modeler_settings(modeler) -> dict[str, object]:
    """An Extra-P modeler's option values and measure, as kept in pmkit's ``Model.options``."""
    settings: dict[str, object] = {o.field: getattr(modeler, o.field) for o in modeler_options.iter(modeler)}
    measure = getattr(modeler, "use_measure", None)
    if isinstance(measure, Measure) and measure is not Measure.UNKNOWN:
        settings[USE_MEASURE] = measure.name
    return settings


def extrap_modeler(model_set: ModelSet, n_parameters: int, default: Measure):
    """The Extra-P modeler object for a model set: pmkit's (through the adapter), Extra-P's own, or a placeholder."""
    from pmkit_extrap.modelers import adapter_instance

    settings = dict(model_set[0].options) if len(model_set) else {}
    measure = Measure[settings.pop(USE_MEASURE)] if settings.get(USE_MEASURE) in Measure.__members__ else default
    modeler = adapter_instance(model_set.modeler, n_parameters, measure)
    if modeler is None and model_set.modeler.startswith("extrap:"):
        registry = multi_parameter.all_modelers if n_parameters > 1 else single_parameter.all_modelers
        wanted = model_set.modeler.removeprefix("extrap:")
        found = [cls for cls in registry.values() if cls.__name__ == wanted]
        if found:
            modeler = found[0]()
            modeler.use_measure = measure
    if modeler is None:
        return EMPTY_MODELER
    known = {o.field for o in modeler_options.iter(modeler)}
    for field, value in settings.items():
        if field in known:
            setattr(modeler, field, value)
    return modeler


def model_set_from_generator(generator: ModelGenerator, experiment: Experiment) -> ModelSet:
    """One Extra-P model set as a pmkit ModelSet; the modeler's options and measure go to ``Model.options``."""
    modeler = modeler_name(generator.modeler)
    settings = modeler_settings(generator.modeler)
    models = []
    for (callpath, metric), model in generator.models.items():
        notes: tuple[str, ...] = ()
        segments: tuple = ()
        change = None
        try:
            if isinstance(model.hypothesis.function, SegmentedFunction):
                segments, change = _segments_of(model, experiment.parameters)
                function = segments[-1].function
            else:
                function = to_pmkit_function(model.hypothesis.function, experiment.parameters)
            if function.constant != function.constant and not function.terms:
                function, notes = None, ("no model",)
        except ExtrapFormatError as exc:
            function, notes = None, (f"not PMNF: {exc}",)
        n_points = len(model.measurements or [])
        models.append(Model(callpath.name, metric.name, function, quality_of(model.hypothesis), modeler,
                            dict(settings), notes, n_points, segments=segments, change_point=change))
    return ModelSet(experiment.parameters, models, modeler=modeler)


def _segments_of(model, parameters: tuple[str, ...]):
    """An Extra-P segmented model's two segments and change point, in pmkit's terms.

    Each segment's measured range runs from the smallest (largest) measured value to the change point
    on its side: Extra-P keeps one point both segments share, or the two around the change.
    """
    function = model.hypothesis.function
    changing = [float(m.coordinate[0]) for m in getattr(model, "changing_points", None) or []]
    if not changing:  # no change point stored: the boundary between the intervals
        changing = [float(function.intervals[0][1]), float(function.intervals[-1][0])]
    values = [float(m.coordinate[0]) for m in model.measurements or []]
    low, high = (min(values), max(values)) if values else (changing[0], changing[-1])
    return to_pmkit_segments(function, parameters, changing, [(low, changing[0]), (changing[-1], high)])


def _segmented_extrap_model(model: Model, parameters: tuple[str, ...], measurements: list[Measurement],
                            measure: Measure) -> ExtrapModel | None:
    """A segmented one-parameter pmkit model as Extra-P's ``SegmentedModel`` (as its Segmented modeler
    makes them: the segments' models and the two measured points around the change), or None when
    the measurements do not hold points on both sides of the change."""
    change = model.change_point.value
    ordered = sorted(measurements, key=lambda m: m.coordinate[0])
    below = [m for m in ordered if m.coordinate[0] < change]
    above = [m for m in ordered if m.coordinate[0] >= change]
    if len(parameters) != 1 or not below or not above:
        return None
    measurements[:] = ordered  # Extra-P hands each segment its slice of the sorted list
    hypothesis = SingleParameterHypothesis(to_extrap_segmented(model, parameters), measure)
    hypothesis._RSS, hypothesis._SMAPE, hypothesis._AR2 = model.quality.rss, model.quality.smape, \
        model.quality.adjusted_r2
    hypothesis._rRSS = hypothesis._nRSS = hypothesis._RE = math.nan
    hypothesis._costs_are_calculated = True
    pieces = [ExtrapModel(to_extrap_hypothesis(s.function, parameters, s.quality, measure)) for s in model.segments]
    return SegmentedModel(hypothesis, pieces, [_without_values(below[-1]), _without_values(above[0])])


def _without_values(measurement: Measurement) -> Measurement:
    """A copy without its repetition values: Extra-P's serializer cannot write the values of a change
    point (it lacks their writer there), and change points are found by coordinate and statistics."""
    out = copy.copy(measurement)
    out.values = None
    return out


def _values_for_extrap(experiment: Experiment, metric: str, cp: int, pt: int) -> np.ndarray | None:
    reps = experiment.measurements[metric][cp, pt]
    if experiment.locations and experiment.locations.get(metric) and experiment.locations[metric][pt] is not None:
        per_location = experiment.locations[metric][pt][cp]
        rows = ~np.all(np.isnan(per_location), axis=1)
        if rows.any():
            per_location = per_location[rows]
            with np.errstate(all="ignore"):
                means = np.nanmean(per_location, axis=1)
            kept = reps[~np.isnan(reps)]
            if kept.shape == means.shape and np.allclose(kept, means, rtol=1e-12, atol=0):
                return per_location
    kept = reps[~np.isnan(reps)]
    return kept if kept.size else None


def to_extrap(experiment: Experiment, models: Mapping[str, ModelSet] | None = None, *,
              include_stored: bool = True, measure: str = "mean") -> ExtrapExperiment:
    """pmkit's ``experiment`` as an Extra-P Experiment with model sets.

    ``models`` maps model-set names to ModelSets; with ``include_stored`` the experiment's
    ``stored_models`` are added too.  Repetition values are kept (``keep_values``), call paths
    without any value are left out (Extra-P has no unmeasured call paths), and each model set's
    modeler is pmkit's (through this adapter) where pmkit has it, else Extra-P's empty placeholder.
    """
    out = ExtrapExperiment()
    for name in experiment.parameters:
        out.add_parameter(Parameter(name))
    coordinates = [Coordinate(tuple(float(v) for v in p)) for p in experiment.points]
    callpaths: dict[int, Callpath] = {}
    metrics = {}
    for metric in experiment.metrics:
        tags = {f"{TAG_PREFIX}{f}": getattr(metric, f) for f in METRIC_TAGS if getattr(metric, f)}
        metrics[metric.name] = ExtrapMetric(metric.name, **tags)
        out.add_metric(metrics[metric.name])
    used_coordinates = set()
    for cp_node in experiment.callpaths:
        for metric in experiment.metrics:
            for pt, coordinate in enumerate(coordinates):
                values = _values_for_extrap(experiment, metric.name, cp_node.index, pt)
                if values is None:
                    continue
                callpath = callpaths.get(cp_node.index)
                if callpath is None:
                    callpath = callpaths[cp_node.index] = Callpath(cp_node.path)
                    out.add_callpath(callpath)
                used_coordinates.add(pt)
                out.add_measurement(Measurement(coordinate, callpath, metrics[metric.name], values, keep_values=True))
    for pt, coordinate in enumerate(coordinates):
        if pt in used_coordinates:
            out.add_coordinate(coordinate)
    out.call_tree = io_helper.create_call_tree(out.callpaths)
    all_sets = dict(experiment.stored_models) if include_stored else {}
    all_sets.update(models or {})
    use_measure = MEASURES[measure]
    for name, model_set in all_sets.items():
        generator = ModelGenerator(out, NotImplemented, name=name)
        generator._modeler = extrap_modeler(model_set, len(experiment.parameters), use_measure)
        for model in model_set:
            key = (Callpath(model.callpath), metrics.get(model.metric))
            if key not in out.measurements:
                log.warning("model of %s / %s has no measurements in the experiment; left out",
                            model.callpath, model.metric)
                continue
            extrap_model = None
            if model.segmented:
                extrap_model = _segmented_extrap_model(model, experiment.parameters, out.measurements[key],
                                                       use_measure)
            if extrap_model is None:
                hypothesis = no_model_hypothesis(use_measure) if model.function is None else to_extrap_hypothesis(
                    model.function, experiment.parameters, model.quality, use_measure)
                extrap_model = ExtrapModel(hypothesis)
            extrap_model.callpath, extrap_model.metric = key
            extrap_model.measurements = out.measurements[key]
            generator.models[key] = extrap_model
        out.add_modeler(generator)
    return out

