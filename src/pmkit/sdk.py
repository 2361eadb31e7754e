"""The SDK's verbs: read inputs, model them, detect problems.

``exp = pmkit.read(path)``, ``models = pmkit.model(exp)``, ``findings = pmkit.detect(exp, models)``.
Each looks its plugin up in the registry, so third-party readers, modelers, priors and detectors
are used exactly like the built-ins.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pmkit.constraints import Constraint
from pmkit.errors import InputError, UsageError, input_problem
from pmkit.experiment import MEASURES, Experiment
from pmkit.findings import Finding
from pmkit.models import ModelSet
from pmkit.options import resolve_options
from pmkit.plugins import Registry, get_registry
from pmkit.series import SeriesBatch

DEFAULT_MODELER = "refining"


def find_reader(path: str | os.PathLike, registry: Registry | None = None) -> Any:
    """The first registered reader whose ``sniff`` recognises ``path``; InputError if none does."""
    registry = registry or get_registry()
    p = Path(path)
    problem = input_problem(p)
    if problem:
        raise InputError(p, problem)
    for entry in registry.registrations["reader"].values():
        try:
            if entry.obj.sniff(p):
                return entry.obj
        except Exception:  # a reader's sniff must not stop the others from trying
            continue
    names = ", ".join(registry.names("reader")) or "none"
    raise InputError(p, f"no reader recognises this input (readers: {names}); choose one with --reader")


def read(path: str | os.PathLike, reader: str | None = None, *, registry: Registry | None = None,
         **options: Any) -> Experiment:
    """Read ``path`` with the named reader, or the one that recognises it."""
    registry = registry or get_registry()
    p = Path(path)
    if reader is None:
        obj = find_reader(p, registry)
    else:
        obj = registry.get("reader", reader)
        problem = input_problem(p)
        if problem:
            raise InputError(p, problem)
    values = resolve_options(obj.options, options, f"reader {obj.name}")
    experiment = obj.read(p, **values)
    if not experiment.provenance.reader:
        experiment.provenance.reader = obj.name
    return experiment


def model(experiment: Experiment, modeler: str = DEFAULT_MODELER, *, metrics: Sequence[str] | None = None,
          callpaths: Sequence[str] | None = None, measure: str = "mean",
          constraints: dict[str, Constraint] | None = None, registry: Registry | None = None,
          **options: Any) -> ModelSet:
    """Model every (call path, metric) series of ``experiment`` — or the chosen ones — at once.

    ``measure`` reduces repetitions (mean, median, min, max); ``constraints`` (from a prior) restrict
    each call path's search space; other keyword arguments are the modeler's declared options.
    """
    registry = registry or get_registry()
    obj = registry.get("modeler", modeler)
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(callpaths, str):
        callpaths = [callpaths]
    if measure not in MEASURES:
        raise UsageError(f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}")
    if metrics:
        missing = [m for m in metrics if m not in experiment.measurements]
        if missing:
            raise UsageError(f"no metric {', '.join(map(repr, missing))}; the experiment has "
                             f"{', '.join(experiment.metric_names)}")
    if callpaths:
        missing = [c for c in callpaths if c not in experiment.callpaths]
        if missing:
            raise UsageError(f"no call path {', '.join(map(repr, missing))} in the experiment")
    declared = {o.name for o in obj.options}
    if "measure" in declared:
        options.setdefault("measure", measure)
    values = resolve_options(obj.options, options, f"modeler {obj.name}")
    batch = SeriesBatch.from_experiment(experiment, metrics, callpaths, constraints)
    return obj.model(batch, **values)


def load_prior(path: str | os.PathLike, prior: str | None = None, *, registry: Registry | None = None,
               **options: Any) -> Any:
    """Load prior knowledge from ``path`` with the named prior (default: ``taint``, or the only one).

    The result's ``constraints(experiment)`` gives the per-call-path constraints for :func:`model`.
    """
    registry = registry or get_registry()
    names = registry.names("prior")
    if prior is None:
        if "taint" in names or len(names) != 1:
            prior = "taint"
        else:
            prior = names[0]
    obj = registry.get("prior", prior)
    return obj.load(Path(path), **resolve_options(obj.options, options, f"prior {obj.name}"))


def prior_contradictions(experiment: Experiment, knowledge: Any, models: ModelSet,
                         constraints: dict[str, Constraint], modeler: str = DEFAULT_MODELER, *,
                         metrics: Sequence[str] | None = None, measure: str = "mean",
                         registry: Registry | None = None, **options: Any) -> list[Finding]:
    """Where the data supports what the prior rules out.

    Models the same series again without constraints and lets the prior compare; a prior whose
    knowledge has no ``contradictions`` method gives no findings.
    """
    check = getattr(knowledge, "contradictions", None)
    if check is None or not constraints:
        return []
    free = model(experiment, modeler, metrics=metrics, measure=measure, registry=registry, **options)
    return sorted(check(experiment, models, free, constraints), key=lambda f: -f.severity)


def detect(experiment: Experiment, models: ModelSet, detectors: Sequence[str] | None = None, *,
           registry: Registry | None = None, **options: Any) -> list[Finding]:
    """Run the named detectors (default: all registered) and return their findings, worst first."""
    registry = registry or get_registry()
    names = list(detectors) if detectors is not None else registry.names("detector")
    findings: list[Finding] = []
    for name in names:
        obj = registry.get("detector", name)
        own = {k: v for k, v in options.items() if k in {o.name for o in obj.options}}
        findings.extend(obj.detect(experiment, models, **resolve_options(obj.options, own, f"detector {name}")))
    return sorted(findings, key=lambda f: -f.severity)
