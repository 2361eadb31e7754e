"""pmkit's modelers as Extra-P modelers, registered in Extra-P's single- and multi-parameter registries.

Extra-P finds a modeler by name in ``extrap.modelers.single_parameter.all_modelers`` (one-parameter
experiments) or ``multi_parameter.all_modelers`` (several parameters, where it also requires a
``MultiParameterModeler``).  :func:`register` adds, for every modeler in pmkit's registry (built-ins
and plugins alike), a class of each kind named ``pmkit-<name>``; their Extra-P options are the
pmkit modeler's declared options, and Extra-P's ``use_measure`` sets pmkit's ``measure``.  Each
class hands all series of one set of points to the pmkit modeler as one batch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from extrap.entities.measurement import Measure, Measurement
from extrap.entities.model import Model as ExtrapModel
from extrap.entities.terms import DEFAULT_PARAM_NAMES
from extrap.modelers import multi_parameter, single_parameter
from extrap.modelers.abstract_modeler import AbstractModeler, MultiParameterModeler
from extrap.modelers.loader import create_schema
from extrap.modelers.modeler_options import modeler_options
from extrap.util.progress_bar import DUMMY_PROGRESS

from pmkit.models import Model, Quality
from pmkit.options import resolve_options
from pmkit.plugins import Registry, get_registry
from pmkit.series import SeriesBatch
from pmkit_extrap.convert import measurement_repetitions
from pmkit_extrap.functions import no_model_hypothesis, to_extrap_hypothesis

PREFIX = "pmkit-"
_PMKIT_MEASURE = {Measure.MEAN: "mean", Measure.MEDIAN: "median", Measure.MINIMUM: "min", Measure.MAXIMUM: "max"}
_STATISTIC = {"mean": "mean", "median": "median", "min": "minimum", "max": "maximum"}
_CLASSES: dict[str, tuple[type, type]] = {}


def extrap_name(pmkit_name: str) -> str:
    """The name under which pmkit's modeler ``pmkit_name`` appears in Extra-P (``--modeler``)."""
    return f"{PREFIX}{pmkit_name}"


class PmkitModelerBase:
    """What every adapter class shares: turning Extra-P series into pmkit batches and back."""

    PMKIT_MODELER = ""
    PMKIT_OPTIONS: tuple[str, ...] = ()
    registry: Registry | None = None

    def _pmkit_modeler(self) -> Any:
        return (self.registry or get_registry()).get("modeler", self.PMKIT_MODELER)

    def model(self, measurements: Sequence[Sequence[Measurement]], progress_bar=DUMMY_PROGRESS) -> list[ExtrapModel]:
        modeler = self._pmkit_modeler()
        measure = _PMKIT_MEASURE.get(self.use_measure, "mean")
        given = {name: getattr(self, name) for name in self.PMKIT_OPTIONS if getattr(self, name) is not None}
        if any(o.name == "measure" for o in modeler.options):
            given["measure"] = measure
        options = resolve_options(modeler.options, given, f"modeler {self.PMKIT_MODELER}")
        groups: dict[tuple, list[int]] = {}
        for i, series in enumerate(measurements):
            groups.setdefault(tuple(tuple(float(v) for v in m.coordinate) for m in series), []).append(i)
        progress_bar.total += len(measurements)
        out: list[ExtrapModel | None] = [None] * len(measurements)
        for points, members in groups.items():
            n_params = len(points[0]) if points else 1
            parameters = tuple(DEFAULT_PARAM_NAMES[:n_params])
            reps = [[measurement_repetitions(m, _STATISTIC[measure])[0] for m in measurements[i]] for i in members]
            width = max((len(r) for series in reps for r in series), default=1)
            values = np.full((len(members), len(points), width), np.nan)
            for row, series in enumerate(reps):
                for col, r in enumerate(series):
                    values[row, col, : len(r)] = r
            names = [str(measurements[i][0].callpath) if measurements[i] else "" for i in members]
            metrics = [str(measurements[i][0].metric) if measurements[i] else "" for i in members]
            batch = SeriesBatch(parameters, np.array(points).reshape(len(points), n_params), values, names, metrics)
            models = modeler.model(batch, **options)
            for row, i in enumerate(members):
                out[i] = self._extrap_model(models[row], parameters, measurements[i])
                progress_bar.update()
        return out  # type: ignore[return-value]

    def _extrap_model(self, model: Model, parameters: tuple[str, ...],
                      measurements: Sequence[Measurement]) -> ExtrapModel:
        if model.function is None:
            return ExtrapModel(no_model_hypothesis(self.use_measure))
        hypothesis = to_extrap_hypothesis(model.function, parameters, Quality(), self.use_measure)
        hypothesis._RSS = hypothesis._rRSS = hypothesis._nRSS = hypothesis._SMAPE = hypothesis._RE = 0
        try:
            hypothesis.compute_cost(measurements)
        except (ValueError, ZeroDivisionError, FloatingPointError):
            hypothesis._RSS, hypothesis._SMAPE = model.quality.rss, model.quality.smape
        hypothesis._AR2 = model.quality.adjusted_r2 if math.isfinite(model.quality.adjusted_r2) else math.nan
        hypothesis._costs_are_calculated = True
        return ExtrapModel(hypothesis)


def _class_name(pmkit_name: str, multi: bool) -> str:
    words = re.split(r"[^0-9A-Za-z]+", pmkit_name)
    camel = "".join(w[:1].upper() + w[1:] for w in words if w)
    return f"Pmkit{camel}{'MultiParameter' if multi else ''}Modeler"


def _option_attributes(modeler: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
    attrs: dict[str, Any] = {}
    for option in modeler.options:
        if option.name == "measure" or option.type not in (bool, int, float, str):
            continue
        attrs[option.name] = modeler_options.add(option.default, option.type, option.help,
                                                 range=list(option.choices) if option.choices else None)
    return attrs, tuple(attrs)


def adapter_classes(name: str, modeler: Any) -> tuple[type, type]:
    """The single- and multi-parameter Extra-P modeler classes wrapping pmkit's modeler ``name``."""
    if name in _CLASSES:
        return _CLASSES[name]

    def single_init(self) -> None:
        AbstractModeler.__init__(self, Measure.MEAN)

    def multi_init(self) -> None:
        MultiParameterModeler.__init__(self, Measure.MEAN, single())

    classes = []
    for multi in (False, True):
        attrs, option_names = _option_attributes(modeler)
        base = MultiParameterModeler if multi else AbstractModeler
        namespace = {
            "NAME": extrap_name(name), "DESCRIPTION": f"pmkit: {modeler.description}",
            "PMKIT_MODELER": name, "PMKIT_OPTIONS": option_names,
            "__init__": multi_init if multi else single_init, "__module__": __name__, **attrs,
        }
        cls = modeler_options(type(_class_name(name, multi), (PmkitModelerBase, base), namespace))
        if not multi:
            single = cls
        create_schema(cls)
        classes.append(cls)
    _CLASSES[name] = (classes[0], classes[1])
    return _CLASSES[name]


def register(registry: Registry | None = None) -> list[str]:
    """Add every modeler of pmkit's registry to Extra-P's registries; returns their Extra-P names."""
    registry = registry or get_registry()
    names = []
    for name in registry.names("modeler"):
        single, multi = adapter_classes(name, registry.get("modeler", name))
        single.registry = multi.registry = registry
        single_parameter.all_modelers[single.NAME] = single
        multi_parameter.all_modelers[multi.NAME] = multi
        names.append(single.NAME)
    return names


def adapter_instance(pmkit_name: str, n_parameters: int, use_measure: Measure = Measure.MEAN,
                     registry: Registry | None = None) -> AbstractModeler | None:
    """An Extra-P modeler object standing for pmkit's ``pmkit_name``, or None if pmkit has no such modeler."""
    registry = registry or get_registry()
    if pmkit_name not in registry.registrations["modeler"]:
        return None
    single, multi = adapter_classes(pmkit_name, registry.get("modeler", pmkit_name))
    instance = (multi if n_parameters > 1 else single)()
    instance.use_measure = use_measure
    return instance
