"""Test helpers for plugin authors: an isolated registry, small sample experiments, contract checks.

Also a pytest plugin: enable it with ``pytest_plugins = ["pmkit.testing.plugins"]`` in your
top-level ``conftest.py`` (or ``pytest -p pmkit.testing.plugins``) to get the fixtures
``pmkit_registry``, ``pmkit_sample_experiment`` and ``pmkit_degenerate_experiment``.

An isolated registry is what your users run — pmkit's built-in readers, modelers, priors and
detectors plus your plugin — **without the other installed third-party plugins**: a test of your
plugin should see your plugin, not whatever else happens to be installed.  So a reader plugin's
test can still model with ``refining``, and a plugin that replaces a built-in is tested as it is
used.  Pass ``builtins=False`` for a registry of your plugin alone.
"""

from __future__ import annotations

import math
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pmkit import plugins as plugin_manager
from pmkit.errors import InputError
from pmkit.experiment import Experiment, ExperimentBuilder
from pmkit.hookspecs import Modeler, Reader
from pmkit.models import Model, ModelSet
from pmkit.options import Option, resolve_options
from pmkit.plugins import Registry, build_registry
from pmkit.series import SeriesBatch

Law = Callable[..., float]

SAMPLE_POINTS: dict[str, tuple[float, ...]] = {"p": (2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)}
"""Default points of :func:`sample_experiment`: seven process counts."""

SAMPLE_LAWS: dict[str, Law] = {
    "main": lambda p: 2.0 + 100.0 / p + 0.05 * p**1.5 + 0.01 * math.log2(p),
    "main->compute": lambda p: 100.0 / p + 1.5,
    "main->compute->MPI_Allreduce": lambda p: 0.01 * math.log2(p),
    "main->halo": lambda p: 0.05 * p**1.5 + 0.5,
}
"""Default laws of :func:`sample_experiment`, per call path, as functions of ``p``."""


class PluginCheckError(AssertionError):
    """A plugin broke pmkit's plugin contract; the message lists every problem found."""


def isolated_registry(*plugins: Any, builtins: bool = True, strict: bool = True) -> Registry:
    """pmkit's built-ins plus ``plugins`` (modules or objects with hookimpls), ignoring installed entry points.

    ``builtins=False`` leaves pmkit's own readers, modelers, priors and detectors out, for a
    registry of ``plugins`` alone.  With ``strict``, a plugin that fails to register, or registers
    an object that is not a valid reader/modeler/..., raises :class:`PluginCheckError` instead of
    being skipped with a warning as in normal use.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plugin_manager.PluginWarning)
        registry = build_registry(plugins, builtins=builtins, entry_points=False)
    if strict:
        own = {getattr(p, "__name__", None) or type(p).__name__ for p in plugins}
        problems = [f"{f.plugin} failed to {f.stage}: {f.error}" for f in registry.failures if f.plugin in own]
        problems += [f"{r.kind} {r.name!r} of {r.plugin} {r.status}: {r.error}" for r in registry.rejected
                     if r.plugin in own and r.status == "rejected"]
        if problems:
            raise PluginCheckError("plugin registration failed:\n  " + "\n  ".join(problems))
    return registry


@contextmanager
def using_registry(registry: Registry) -> Iterator[Registry]:
    """Make ``registry`` the process-wide one (used by ``pmkit.read``/``model``/``detect`` and the CLI).

    The previous process-wide registry is restored on exit.
    """
    previous = plugin_manager._REGISTRY
    plugin_manager.reset_registry(registry)
    try:
        yield registry
    finally:
        plugin_manager.reset_registry(previous)


def sample_experiment(laws: Mapping[str, Law] | None = None, *, points: Mapping[str, Sequence[float]] | None = None,
                      metric: str = "time", repetitions: int = 1, noise: float = 0.0, seed: int = 0) -> Experiment:
    """An experiment whose values follow known laws, built with :class:`~pmkit.experiment.ExperimentBuilder`.

    ``points`` gives the values of each parameter; the experiment measures their full grid.
    ``laws`` maps call paths to functions called with the parameters as keyword arguments
    (``law(p=8)``).  ``noise`` is the relative standard deviation of Gaussian noise on every
    repetition (seeded, so the experiment is the same every time).
    """
    points = dict(points or SAMPLE_POINTS)
    laws = dict(laws or SAMPLE_LAWS)
    names = tuple(points)
    builder = ExperimentBuilder(names, source="<pmkit.testing sample>")
    rng = np.random.default_rng(seed)
    for coordinates in product(*(points[n] for n in names)):
        at = dict(zip(names, coordinates, strict=True))
        for callpath, law in laws.items():
            exact = float(law(**at))
            values = exact * (1.0 + noise * rng.standard_normal(repetitions)) if noise else [exact] * repetitions
            builder.add_values(callpath, metric, coordinates, values)
    return builder.build()


DEGENERATE_SERIES: dict[str, str] = {
    "main": "an ordinary growing series",
    "main->gaps": "NaN at two of its points",
    "main->missing": "no value at any point",
    "main->one_point": "a value at one point only",
    "main->zeros": "zero everywhere",
    "main->negative": "negative values",
    "main->constant": "the same value everywhere",
}
"""The call paths of :func:`degenerate_experiment` and what is odd about each."""


def degenerate_experiment(metric: str = "time") -> Experiment:
    """A one-parameter experiment whose series are the hard cases a modeler must survive.

    See :data:`DEGENERATE_SERIES`; a modeler must return a model (or ``function=None`` with a note)
    for each, never raise.
    """
    p_values = (2.0, 4.0, 8.0, 16.0, 32.0)
    nan = float("nan")
    series = {
        "main": [1.0 + 0.5 * p for p in p_values],
        "main->gaps": [3.0, nan, 5.0, nan, 7.0],
        "main->missing": [nan] * 5,
        "main->one_point": [nan, nan, 4.0, nan, nan],
        "main->zeros": [0.0] * 5,
        "main->negative": [-1.0 - p for p in p_values],
        "main->constant": [2.5] * 5,
    }
    builder = ExperimentBuilder(("p",), source="<pmkit.testing degenerate>")
    for callpath, values in series.items():
        for p, value in zip(p_values, values, strict=True):
            builder.add_values(callpath, metric, (p,), [value])
    return builder.build()


def sample_batch(experiment: Experiment | None = None) -> SeriesBatch:
    """Every series of ``experiment`` (default :func:`sample_experiment`) as a modeler's input."""
    return SeriesBatch.from_experiment(experiment if experiment is not None else sample_experiment())


def _declaration_problems(obj: Any, kind: str) -> list[str]:
    problems = []
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        problems.append(f"name must be a non-empty string without spaces, got {name!r}")
    description = getattr(obj, "description", None)
    if not isinstance(description, str) or not description.strip() or "\n" in description.strip():
        problems.append(f"description must be one non-empty line, got {description!r}")
    options = getattr(obj, "options", None)
    if not isinstance(options, Sequence) or not all(isinstance(o, Option) for o in options):
        problems.append("options must be a sequence of pmkit.options.Option")
        return problems
    names = [o.name for o in options]
    if len(set(names)) != len(names):
        problems.append(f"option names repeat: {names}")
    try:
        resolve_options(options, {}, f"{kind} {name}")
        for option in options:
            if not isinstance(option.default, option.type):
                problems.append(f"option {option.name}: default {option.default!r} is not a {option.type.__name__}")
            option.check(option.default)
    except Exception as exc:
        problems.append(f"options' defaults are invalid: {exc}")
    return problems


def _model_set_problems(models: Any, batch: SeriesBatch, label: str) -> list[str]:
    if not isinstance(models, ModelSet):
        return [f"{label}: model() returned {type(models).__name__}, not a pmkit.models.ModelSet"]
    if len(models) != len(batch):
        return [f"{label}: {len(models)} models for {len(batch)} series"]
    problems = []
    for i, model in enumerate(models):
        where = f"{label}: series {i} ({batch.callpaths[i]}, {batch.metrics[i]})"
        if not isinstance(model, Model):
            problems.append(f"{where}: {type(model).__name__} is not a pmkit.models.Model")
            continue
        if (model.callpath, model.metric) != (batch.callpaths[i], batch.metrics[i]):
            problems.append(f"{where}: model is for ({model.callpath}, {model.metric}); keep the batch's order")
        if model.function is None and not model.notes:
            problems.append(f"{where}: no function and no note saying why")
        if model.function is not None and tuple(model.function.parameters) != tuple(batch.parameters):
            problems.append(f"{where}: function parameters {model.function.parameters} are not the batch's "
                            f"{batch.parameters}")
    return problems


def check_modeler(modeler: Any, experiments: Sequence[Experiment] = (), **options: Any) -> None:
    """Check ``modeler`` against the Modeler contract; raise :class:`PluginCheckError` listing every problem.

    It is run on :func:`sample_experiment`, :func:`degenerate_experiment` and ``experiments``, with
    ``options`` (strings are parsed as on the command line): it must not raise, must return a
    :class:`~pmkit.models.ModelSet` with one :class:`~pmkit.models.Model` per series in the batch's
    order, and a model without a function must carry a note saying why.
    """
    problems = _declaration_problems(modeler, "modeler")
    if not isinstance(modeler, Modeler):
        problems.append("does not follow the Modeler protocol (name, description, options, model)")
    if not problems:
        values = resolve_options(modeler.options, options, f"modeler {modeler.name}")
        cases = [("sample experiment", sample_experiment()), ("degenerate experiment", degenerate_experiment())]
        cases += [(f"experiment {i}", e) for i, e in enumerate(experiments)]
        for label, experiment in cases:
            batch = sample_batch(experiment)
            try:
                models = modeler.model(batch, **values)
            except Exception as exc:
                problems.append(f"{label}: model() raised {type(exc).__name__}: {exc}")
                continue
            problems += _model_set_problems(models, batch, label)
    if problems:
        raise PluginCheckError(f"modeler {getattr(modeler, 'name', modeler)!r} breaks the contract:\n  "
                               + "\n  ".join(problems))


def check_reader(reader: Any, good: Path, **options: Any) -> Experiment:
    """Check ``reader`` against the Reader contract; return what it read from ``good``.

    ``sniff`` must recognise ``good`` and answer (without raising) for a missing path, a folder and
    a file of random bytes; ``read`` of the random file must raise :class:`~pmkit.errors.InputError`
    whose message names the file.  Problems raise :class:`PluginCheckError`.
    """
    problems = _declaration_problems(reader, "reader")
    if not isinstance(reader, Reader):
        problems.append("does not follow the Reader protocol (name, description, options, sniff, read)")
    experiment: Experiment | None = None
    if not problems:
        values = resolve_options(reader.options, options, f"reader {reader.name}")
        with tempfile.TemporaryDirectory() as tmp:
            garbage = Path(tmp) / "garbage.bin"
            garbage.write_bytes(np.random.default_rng(0).bytes(512))
            for label, path in [("a missing path", Path(tmp) / "missing"), ("a folder", Path(tmp)),
                                ("random bytes", garbage)]:
                try:
                    answer = reader.sniff(path)
                    if not isinstance(answer, bool):
                        problems.append(f"sniff({label}) returned {answer!r}, not a bool")
                except Exception as exc:
                    problems.append(f"sniff({label}) raised {type(exc).__name__}: {exc}")
            try:
                reader.read(garbage, **values)
                problems.append("read(random bytes) did not raise InputError")
            except InputError as exc:
                if str(garbage) not in str(exc) and garbage.name not in str(exc):
                    problems.append(f"read(random bytes) raised InputError without naming the file: {exc}")
            except Exception as exc:
                problems.append(f"read(random bytes) raised {type(exc).__name__}, not InputError: {exc}")
        try:
            if not reader.sniff(good):
                problems.append(f"sniff({good}) does not recognise the good input")
            experiment = reader.read(good, **values)
            if not isinstance(experiment, Experiment):
                problems.append(f"read({good}) returned {type(experiment).__name__}, not an Experiment")
        except Exception as exc:
            problems.append(f"reading the good input {good} raised {type(exc).__name__}: {exc}")
    if problems:
        raise PluginCheckError(f"reader {getattr(reader, 'name', reader)!r} breaks the contract:\n  "
                               + "\n  ".join(problems))
    assert isinstance(experiment, Experiment)
    return experiment


@pytest.fixture
def pmkit_registry() -> Iterator[Callable[..., Registry]]:
    """Factory: ``pmkit_registry(my_plugin)`` builds an isolated registry — pmkit's built-ins and
    ``my_plugin``, no other installed plugin (``builtins=False``: ``my_plugin`` alone) — and makes it
    the process-wide one until the test ends, so ``pmkit.read``, ``pmkit.model(...)`` and
    ``pmkit.cli.main([...])`` see exactly those plugins."""
    previous = plugin_manager._REGISTRY

    def make(*plugins: Any, builtins: bool = True, strict: bool = True) -> Registry:
        registry = isolated_registry(*plugins, builtins=builtins, strict=strict)
        plugin_manager.reset_registry(registry)
        return registry

    yield make
    plugin_manager.reset_registry(previous)


@pytest.fixture
def pmkit_sample_experiment() -> Experiment:
    """:func:`sample_experiment` with its defaults: four call paths over p = 2 … 128, no noise."""
    return sample_experiment()


@pytest.fixture
def pmkit_degenerate_experiment() -> Experiment:
    """:func:`degenerate_experiment`: the NaN, zero, negative and one-point series a modeler must survive."""
    return degenerate_experiment()
