"""The SDK's verbs: read inputs, model them, detect problems, analyse where they stop scaling.

``exp = pmkit.read(path)``, ``models = pmkit.model(exp)``, ``findings = pmkit.detect(exp, models)``,
and all of it at once: ``analysis = pmkit.analyse(path, target={"p": 65536})``.  Each looks its
plugin up in the registry, so third-party readers, modelers, priors and detectors are used exactly
like the built-ins.  Plugin options are resolved here, once (:func:`pmkit.options.resolve_options`),
and every plugin receives them parsed, checked and complete.  Plugins are called through
:func:`pmkit.plugins.call`: one that raises or returns the wrong type fails as a
:class:`~pmkit.errors.PluginError` naming it and its package (a detector is skipped with a warning
instead).  ``executor=`` (``"local"``, the default; ``"processes"``; ``"dask"`` or
``"dask:tcp://host:8786"``; an open :class:`~pmkit.executors.Executor` or a ``distributed.Client``)
chooses where reading and modeling tasks run (:mod:`pmkit.executors`); the results are the same.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pmkit import executors, progress
from pmkit.analysis import Analysis, InputAnalysis, Inputs, LoadedPrior, PredictedTotal, PriorOutcome
from pmkit.constraints import Constraint
from pmkit.errors import InputError, PluginError, UsageError, excerpt, input_problem, path_text
from pmkit.experiment import MEASURES, Experiment
from pmkit.findings import Finding
from pmkit.hookspecs import ContributesToAnalysis
from pmkit.models import NOT_POSITIVE, ModelSet, parameter_value
from pmkit.options import resolve_options, route_options
from pmkit.plugins import Guarded, PluginWarning, Registration, Registry, call, get_registry, returned, sniff
from pmkit.series import SeriesBatch

DEFAULT_MODELER = "refining"


def find_reader(path: str | os.PathLike, registry: Registry | None = None) -> Any:
    """The first reader, in :meth:`Registry.sniff_order`, whose ``sniff`` recognises ``path``; InputError if none.

    A sniff that fails, answers wrongly or takes too long counts as no (see :func:`pmkit.plugins.sniff`).
    """
    registry = registry or get_registry()
    p = Path(path)
    problem = input_problem(p)
    if problem:
        raise InputError(p, problem)
    for entry in registry.sniff_order():
        if sniff(registry, entry, p):
            return entry.obj
    known = _emptiness(p) or _known_but_unread(p)
    if known:
        raise InputError(p, known)
    names = ", ".join(registry.names("reader")) or "none"
    raise InputError(p, f"no reader recognises this input (readers: {names}); choose one with --reader"
                        f" (reader= in pmkit.read){_inputs_inside(p, registry)}")


def _emptiness(path: Path) -> str | None:
    """Why no reader recognises ``path`` when the answer is simply that it holds nothing — an empty
    file (``perf stat`` without ``-o`` leaves its output file empty, a run that crashed too) or an
    empty folder — or None.  Asked only after every reader said no, so a reader that accepts empty
    inputs still gets them; naming the readers and ``--reader`` would send the user the wrong way."""
    try:
        if path.is_dir():
            return None if any(path.iterdir()) else "is an empty folder: there is nothing to read"
        return "is empty (0 bytes): there is nothing to read" if path.stat().st_size == 0 else None
    except OSError:
        return None


_EXTRAP3_MAGIC = b"EXTRAP_EXPERIMENT"
"""What an Extra-P 3 (legacy, binary) experiment file holds at byte 6, after its version fields."""
_ZIP_MAGIC = b"PK\x03\x04"
"""How a zip archive (an ``.extra-p`` experiment) begins."""


def _known_but_unread(path: Path) -> str | None:
    """What a file no reader takes is, where its first bytes tell, or None: an Extra-P 3 (legacy)
    experiment — Extra-P's test data holds them beside the text inputs; Extra-P 4 converts them — or
    a zip archive that is cut short or damaged (an ``.extra-p`` experiment copied half-way), whose
    readers' sniffs cannot open it and so say no."""
    import zipfile

    try:
        with path.open("rb") as f:
            head = f.read(64)
        if head.startswith(_ZIP_MAGIC) and not zipfile.is_zipfile(path):
            return ("is a damaged or truncated zip archive (an .extra-p experiment is one): its table of contents "
                    "is missing; copy or write it again")
    except OSError:
        return None
    if _EXTRAP3_MAGIC in head[:32]:
        return ("is an Extra-P 3 (legacy) experiment, which pmkit does not read; Extra-P 4 converts it: "
                f"extrap --extra-p-3 {path} --save-experiment {path.name}.extra-p, then pmkit reads the .extra-p file")
    return None


def _inputs_inside(folder: Path, registry: Registry, limit: int = 20) -> str:
    """A hint for a folder no reader takes whole but whose files are inputs of their own (a folder of
    Extra-P text files, say): name them one by one.  Empty otherwise; at most ``limit`` files are sniffed."""
    if not folder.is_dir():
        return ""
    try:
        files = sorted(f for f in folder.iterdir() if f.is_file())[:limit]
    except OSError:
        return ""
    readers = {entry.name for f in files for entry in registry.sniff_order() if sniff(registry, entry, f)}
    if not readers:
        return ""
    return (f"; its files are inputs of their own ({', '.join(sorted(readers))}): give them one by one, "
            f"e.g. {folder / '*'}")


Engine = str | executors.Executor | Any
"""``executor=``: a name (``local``, ``processes[:N]``, ``dask``, ``dask:ADDRESS``), an open
:class:`~pmkit.executors.Executor` or a ``distributed.Client``; None keeps the current one (local)."""


def read(path: str | os.PathLike, reader: str | None = None, *, registry: Registry | None = None,
         executor: Engine | None = None, **options: Any) -> Experiment:
    """Read ``path`` — a file or a folder of runs — with the named reader, or the one that recognises it.

    ``options`` are the reader's declared options (``pmkit plugins --options`` lists them; a string is
    parsed as on the command line).  ``executor`` runs the reader's tasks (one per Cube file, per OTF2
    location chunk).  A file that is missing, unreadable or not understood raises
    :class:`~pmkit.errors.InputError` naming it (and the line, where there is one); an unknown reader or
    option :class:`~pmkit.errors.UsageError`.
    """
    with executors.using(executor):
        return _read(path, reader, registry, options)


def _read(path: str | os.PathLike, reader: str | None, registry: Registry | None, options: Mapping[str, Any]
          ) -> Experiment:
    registry = registry or get_registry()
    p = Path(path)
    if reader is None:
        reader = find_reader(p, registry).name
    else:
        problem = input_problem(p)
        if problem:
            raise InputError(p, problem)
    entry = registry.entry("reader", reader)
    values = resolve_options(entry.obj.options, options, f"reader {entry.name}")
    try:
        experiment = returned(entry, "read", call(entry, "read", p, **values), Experiment, "an Experiment")
    except PluginError as exc:
        raise PluginError(exc.plugin, exc.problem, path=p) from exc.__cause__
    if not experiment.provenance.reader:
        experiment.provenance.reader = entry.name
    return experiment


def read_inputs(paths: Sequence[str | os.PathLike], reader: str | None = None, *, registry: Registry | None = None,
                options: Mapping[str, Any] | Callable[[Any, Path], Mapping[str, Any]] | None = None,
                executor: Engine | None = None) -> Inputs:
    """Read every path; one that fails (an InputError, or a reader's PluginError) is recorded in
    ``failed``, not raised.

    ``options`` are the reader options, or a function of (reader, path) giving them, for options
    that only some readers take.  Usage errors (an unknown reader or option) are raised.
    """
    with executors.using(executor):
        return _read_inputs(paths, reader, registry, options)


def _read_inputs(paths: Sequence[str | os.PathLike], reader: str | None, registry: Registry | None,
                 options: Mapping[str, Any] | Callable[[Any, Path], Mapping[str, Any]] | None) -> Inputs:
    registry = registry or get_registry()
    inputs = Inputs()
    for path in paths:
        try:
            obj = registry.get("reader", reader) if reader else find_reader(path, registry)
            given = options(obj, Path(path)) if callable(options) else (options or {})
            inputs.read.append((path_text(path), read(path, obj.name, registry=registry, **given)))
        except (InputError, PluginError) as exc:
            inputs.failed.append((path_text(path), exc))
    return inputs


def model(experiment: Experiment, modeler: str = DEFAULT_MODELER, *, metrics: Sequence[str] | None = None,
          callpaths: Sequence[str] | None = None, measure: str = "mean",
          constraints: Mapping[str, Constraint] | None = None, registry: Registry | None = None,
          executor: Engine | None = None, **options: Any) -> ModelSet:
    """Model every (call path, metric) series of ``experiment`` — or the chosen ones — at once.

    ``measure`` reduces repetitions (mean, median, min, max); ``constraints`` restrict each call
    path's search space (see :func:`model_with_prior` to take them from a prior); ``executor`` models
    large batches in chunks on other processes or a cluster (:mod:`pmkit.modelchunks`); other keyword
    arguments are the modeler's declared options — ``refining``'s include ``hedge`` (several parameters),
    ``segments`` and ``falling``; ``pmkit plugins --options`` lists every modeler's, and
    ``pmkit.plugins.get_registry().get("modeler", name).options`` gives them in Python.  A string value
    is parsed as on the command line (``hedge="true"``; ``hedge`` takes ``"auto"``, its default, ``"true"``
    or ``True`` and ``"false"`` or ``False``).  An unknown modeler, option, metric or call
    path, or a value of another type than the option's, raises :class:`~pmkit.errors.UsageError`.

    The result holds one model per series: ``models.get(callpath, metric)`` (None where there is
    none), ``model.predict(point)`` with its interval, ``models.predict(point)`` every one as arrays.
    """
    _expect(experiment, Experiment, "model", "an Experiment: pmkit.read(path) gives one")
    if isinstance(metrics, str):
        metrics = [metrics]
    if isinstance(callpaths, str):
        callpaths = [callpaths]
    entry, values = _modeler(modeler, measure, registry, options)
    with executors.using(executor):
        return _fit(entry, values, experiment, metrics, callpaths, constraints)


def _modeler(modeler: str, measure: str, registry: Registry | None,
             options: Mapping[str, Any]) -> tuple[Registration, dict[str, Any]]:
    """The modeler's registration and its options, resolved (the user's ``measure`` for a modeler declaring one)."""
    entry = (registry or get_registry()).entry("modeler", modeler)
    obj = entry.obj
    if measure not in MEASURES:
        raise UsageError(f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}")
    given = dict(options)
    if any(o.name == "measure" for o in obj.options):
        given.setdefault("measure", measure)
    return entry, resolve_options(obj.options, given, f"modeler {obj.name}")


def _fit(entry: Registration, values: Mapping[str, Any], experiment: Experiment, metrics: Sequence[str] | None,
         callpaths: Sequence[str] | None, constraints: Mapping[str, Constraint] | None) -> ModelSet:
    """The modeler's models of the chosen series, after checking that the experiment has them."""
    if metrics:
        missing = [m for m in metrics if m not in experiment.measurements]
        if missing:
            raise UsageError(f"no metric {', '.join(map(repr, missing))}; the experiment has "
                             f"{', '.join(experiment.metric_names)}")
    if callpaths:
        missing = [c for c in callpaths if c not in experiment.callpaths]
        if missing:
            raise UsageError(f"no call path {', '.join(map(repr, missing))} in the experiment")
    from pmkit.modelchunks import model_batch

    batch = SeriesBatch.from_experiment(experiment, metrics, callpaths, dict(constraints) if constraints else None)
    models = model_batch(entry, values, batch, executors.current())
    if len(models) != len(batch):
        raise PluginError(entry.label, f"model() returned {len(models)} models for {len(batch)} series")
    return models


def load_prior(paths: str | os.PathLike | Sequence[str | os.PathLike], prior: str | None = None, *,
               registry: Registry | None = None, **options: Any) -> LoadedPrior:
    """Load prior knowledge from ``paths`` (a file, or several) with the named prior plugin.

    Without a name: ``taint``, or the only prior registered.  Pass the result once, as ``prior=``,
    to :func:`analyse` or :func:`model_with_prior`.
    """
    registry = registry or get_registry()
    names = registry.names("prior")
    if prior is None:
        prior = names[0] if len(names) == 1 and "taint" not in names else "taint"
    entry = registry.entry("prior", prior)
    many = not isinstance(paths, str | os.PathLike)
    files = [Path(p) for p in paths] if many else [Path(paths)]  # type: ignore[union-attr]
    values = resolve_options(entry.obj.options, options, f"prior {entry.name}")
    knowledge = call(entry, "load", files if many else files[0], **values)
    if not callable(getattr(knowledge, "constraints", None)):
        raise PluginError(entry.label, f"load() returned {type(knowledge).__name__}, which has no constraints() "
                                       "method", path=files[0])
    guarded = Guarded(knowledge, entry, {"constraints": (dict, "a dict of call path → Constraint"),
                                         "contradictions": ((list, tuple), "a list of Findings")})
    return LoadedPrior(entry.name, tuple(map(str, files)), guarded)


def model_with_prior(experiment: Experiment, prior: LoadedPrior | None, modeler: str = DEFAULT_MODELER, *,
                     metrics: Sequence[str] | None = None, measure: str = "mean", registry: Registry | None = None,
                     executor: Engine | None = None, **options: Any) -> tuple[ModelSet, PriorOutcome | None]:
    """Models of ``experiment`` under ``prior``'s constraints, and what the prior did.

    When the prior can tell where the data contradicts it, the same series are modeled once more
    without constraints and compared; the contradictions are findings.  Without a prior this is
    :func:`model`.
    """
    entry, values = _modeler(modeler, measure, registry, options)
    with executors.using(executor):
        return _fit_with_prior(entry, values, experiment, prior, metrics)


def _fit_with_prior(entry: Registration, values: Mapping[str, Any], experiment: Experiment, prior: LoadedPrior | None,
                    metrics: Sequence[str] | None) -> tuple[ModelSet, PriorOutcome | None]:
    if prior is None:
        return _fit(entry, values, experiment, metrics, None, None), None
    constraints = prior.constraints(experiment)
    models = _fit(entry, values, experiment, metrics, None, constraints)
    contradictions: list[Finding] = []
    if constraints and prior.checks_contradictions:
        free = _fit(entry, values, experiment, metrics, None, None)
        contradictions = prior.contradictions(experiment, models, free, constraints)
    return models, PriorOutcome(prior.name, constraints, tuple(contradictions))


def detect(experiment: Experiment, models: ModelSet, detectors: str | Sequence[str] | None = None, *,
           registry: Registry | None = None, **options: Any) -> list[Finding]:
    """Run the named detector or detectors (default: all registered) and return their findings, worst first.

    ``name=value`` options reach every selected detector that declares ``name``; ``detector.name``
    (``**{"kluge.reference": "ref.json"}``) reaches that detector only.  An option none of them
    declares is a UsageError.  A detector that raises or returns anything but a list of findings
    is skipped with a :class:`~pmkit.plugins.PluginWarning` naming it and its package; the others
    still run.
    """
    _expect(experiment, Experiment, "detect", "an Experiment: pmkit.read(path) gives one")
    _expect(models, ModelSet, "detect", "its models: pmkit.model(experiment) gives them")
    return _run_detectors(_detectors(detectors, registry, options), experiment, models)


def _expect(value: Any, kind: type, verb: str, what: str) -> None:
    """A TypeError naming what ``verb`` takes, for a path or anything else given where ``kind`` belongs —
    rather than an AttributeError from deep inside the modeling or a detector skipped with a warning."""
    if not isinstance(value, kind):
        raise TypeError(f"pmkit.{verb}() takes {what}; got {type(value).__name__} {excerpt(value)}")


def _detectors(detectors: str | Sequence[str] | None, registry: Registry | None,
               options: Mapping[str, Any]) -> list[tuple[Registration, dict[str, Any]]]:
    """The selected detectors (default: all registered), each with its options routed and resolved."""
    registry = registry or get_registry()
    if isinstance(detectors, str):  # one name, not its letters
        detectors = [detectors]
    names = list(detectors) if detectors is not None else registry.names("detector")
    entries = {name: registry.entry("detector", name) for name in names}
    given = route_options({name: entry.obj.options for name, entry in entries.items()}, options, "detector")
    return [(entry, resolve_options(entry.obj.options, given[name], f"detector {name}"))
            for name, entry in entries.items()]


def _run_detectors(detectors: list[tuple[Registration, dict[str, Any]]], experiment: Experiment,
                   models: ModelSet) -> list[Finding]:
    findings: list[Finding] = []
    for entry, values in detectors:
        try:
            found = returned(entry, "detect", call(entry, "detect", experiment, models, **values), (list, tuple),
                             "a list of Findings")
            wrong = [type(f).__name__ for f in found if not isinstance(f, Finding)]
            if wrong:
                raise PluginError(entry.label, f"detect() returned {wrong[0]} among its findings, not a Finding")
        except PluginError as exc:
            warnings.warn(f"{exc}; skipped", PluginWarning, stacklevel=2)
            continue
        findings.extend(found)
    return sorted(findings, key=lambda f: -f.severity)


def analyse(inputs: str | os.PathLike | Experiment | Inputs | Sequence[str | os.PathLike | Experiment], *,
            metric: str | None = None, target: Mapping[str, float] | None = None, measure: str = "mean",
            modeler: str = DEFAULT_MODELER, modeler_options: Mapping[str, Any] | None = None,
            models: ModelSet | None = None, prior: LoadedPrior | None = None,
            detectors: str | Sequence[str] | None = None, detector_options: Mapping[str, Any] | None = None,
            callpath: str | None = None, registry: Registry | None = None,
            executor: Engine | None = None) -> Analysis:
    """Model one metric of every input, run the detectors, and find where it stops scaling — once.

    ``inputs`` are paths (read with the reader that recognises each), experiments, or the
    :class:`~pmkit.analysis.Inputs` of :func:`read_inputs`.  ``metric`` defaults to ``time`` (or the
    first metric); ``target`` to 4× the largest measured value of each parameter — of a strong-scaling
    study's process counts only (:mod:`pmkit.strong_scaling`) — and parameters left out keep their
    largest value.  ``models`` skips modeling for a single experiment whose models
    you already have.  ``prior`` (from :func:`load_prior`) restricts the models and checks the data;
    ``detectors`` defaults to every registered one (``[]`` runs none), with ``detector_options`` as
    in :func:`detect`.  ``callpath`` adds that call path's detail.  ``executor`` runs the reading and
    modeling tasks (see the module docstring).

    The :class:`~pmkit.analysis.Analysis` holds everything every view shows; see :mod:`pmkit.analysis`.
    """
    with executors.using(executor):
        return _analyse(inputs, metric, _positive_target(target), measure, modeler, modeler_options, models, prior,
                        detectors, detector_options, callpath, registry)


def _positive_target(target: Mapping[str, float] | None) -> dict[str, float] | None:
    """``target`` with every value a positive number, as ``--at`` requires: a law in performance model normal
    form holds for positive parameters only (``log2(0)``, ``(-8)^(2/3)``), so 0, a negative value, NaN or
    infinity is a UsageError rather than a prediction of -inf or NaN."""
    if target is None:
        return None
    checked = {}
    for name, value in target.items():
        try:
            checked[name] = parameter_value(value)
        except ValueError:
            raise UsageError(f"target {name}: {excerpt(value)} {NOT_POSITIVE}") from None
    return checked


def _analyse(inputs: Any, metric: str | None, target: Mapping[str, float] | None, measure: str, modeler: str,
             modeler_options: Mapping[str, Any] | None, models: ModelSet | None, prior: LoadedPrior | None,
             detectors: str | Sequence[str] | None, detector_options: Mapping[str, Any] | None, callpath: str | None,
             registry: Registry | None) -> Analysis:
    from pmkit.detail import detail
    from pmkit.scaling import analyse as scaling_report
    from pmkit.scaling import default_metric

    registry = registry or get_registry()
    read = _inputs(inputs, registry)
    if not read.read:
        if read.failed:
            raise read.failed[-1][1]
        raise UsageError("nothing to analyse: no input given")
    if models is not None and (len(read.read) != 1 or prior is not None):
        raise UsageError("models= can be given for one experiment only, and without prior=")
    fitter = _modeler(modeler, measure, registry, modeler_options or {}) if models is None else None
    running = _detectors(detectors, registry, detector_options or {})
    results = []
    for source, experiment in read.read:
        chosen = metric or default_metric(experiment)
        if fitter is None:
            fitted, outcome = models, None
        else:
            with progress.task(f"modeling {chosen} of {len(experiment.callpaths)} call paths in {source}"):
                fitted, outcome = _fit_with_prior(*fitter, experiment, prior, [chosen])
        findings = None
        if running or (outcome is not None and outcome.constraints):
            with progress.task("running detectors"):
                found = _run_detectors(running, experiment, fitted)
            findings = sorted([*found, *(outcome.contradictions if outcome else ())], key=lambda f: -f.severity)
        report = scaling_report(experiment, fitted, chosen, target, measure,
                                outcome.constraints if outcome is not None else None)
        focus = detail(report, callpath) if callpath else None
        result = InputAnalysis(source, experiment, fitted, report, findings, focus, outcome)
        if isinstance(fitted, ContributesToAnalysis):
            result.tables = list(fitted.analysis_tables(chosen, report.target))
            total = fitted.predicted_total(chosen, report.target) if report.no_target is None else None
            result.total = PredictedTotal(*total) if total is not None else None
        results.append(result)
    return Analysis(results, read.skipped)


def _inputs(inputs: Any, registry: Registry) -> Inputs:
    """``analyse``'s inputs as :class:`Inputs`: paths are read, experiments taken as they are."""
    if isinstance(inputs, Inputs):
        return inputs
    items = [inputs] if isinstance(inputs, str | os.PathLike | Experiment) else list(inputs)
    out = Inputs()
    for n, item in enumerate(items):
        if isinstance(item, Experiment):
            out.read.append((item.provenance.sources[0] if item.provenance.sources else f"experiment {n + 1}", item))
        else:
            one = read_inputs([item], registry=registry)
            out.read += one.read
            out.failed += one.failed
    return out
