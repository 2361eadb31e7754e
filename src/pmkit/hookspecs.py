"""The whole plugin contract of pmkit: its hooks and the objects they register.

A plugin is a module (or object) with functions marked ``@pmkit.hookimpl``, found through an
entry point in group ``pmkit`` of an installed distribution::

    # pyproject.toml of a plugin package
    [project.entry-points.pmkit]
    mymodeler = "pmkit_mymodeler"

    # pmkit_mymodeler.py
    import pmkit

    @pmkit.hookimpl
    def pmkit_register_modelers(register):
        register(MyModeler())

Each hook receives a ``register`` callback and calls it once per object it provides.  Every
registered object has a unique ``name``, a one-line ``description`` and a tuple of declared
``options`` (:class:`pmkit.options.Option`), and follows one of the protocols below.  pmkit's
built-in readers, modelers, priors and detectors are registered through these same hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pluggy

if TYPE_CHECKING:
    from pmkit.analysis import ContributedTable
    from pmkit.constraints import Constraint
    from pmkit.experiment import Experiment
    from pmkit.findings import Finding
    from pmkit.models import ModelSet
    from pmkit.options import Option
    from pmkit.series import SeriesBatch

hookspec = pluggy.HookspecMarker("pmkit")
"""Marks the hook specifications below (pmkit's own use)."""

hookimpl = pluggy.HookimplMarker("pmkit")
"""Marks a plugin's hook functions: ``@pmkit.hookimpl`` above ``def pmkit_register_modelers(register)``."""


@runtime_checkable
class Reader(Protocol):
    """Reads one input (a file or a folder) into an :class:`~pmkit.experiment.Experiment`.

    ``sniff(path)`` answers, cheaply and without raising, whether this reader recognises the
    input; ``read(path, **options)`` reads it, raising :class:`~pmkit.errors.InputError` naming the
    file and the problem when it cannot.
    """

    name: str
    description: str
    options: Sequence[Option]

    def sniff(self, path: Path) -> bool: ...

    def read(self, path: Path, **options: Any) -> Experiment: ...


@runtime_checkable
class Modeler(Protocol):
    """Fits a model to every series of a :class:`~pmkit.series.SeriesBatch` at once.

    ``model(batch, **options)`` returns a :class:`~pmkit.models.ModelSet` in the batch's series
    order.  It must not raise on degenerate series (NaN, zeros, one point): such a series gets a
    model with a note, or ``function=None`` and a note saying why.  Constraints in
    ``batch.constraints`` must be honoured or reported in the model's notes.

    Optional: ``independent_series = True`` declares that each series' model depends on that
    series alone (its values, the points and its constraint), so that with an executor running
    tasks elsewhere (``--executor processes|dask``) the SDK may model a large batch in chunks, one
    task each; a chunk's batch has ``experiment`` None.  Without it the whole batch is modeled in one
    call in the calling process.
    """

    name: str
    description: str
    options: Sequence[Option]

    def model(self, batch: SeriesBatch, **options: Any) -> ModelSet: ...


class PriorKnowledge(Protocol):
    """What a prior loaded from a file knows: a :class:`~pmkit.constraints.Constraint` per call path.

    It may also follow :class:`ChecksContradictions`.
    """

    def constraints(self, experiment: Experiment) -> dict[str, Constraint]:
        """Constraints keyed by call path string; call paths without one are left to the data."""
        ...


@runtime_checkable
class ChecksContradictions(Protocol):
    """Prior knowledge that can also say where the data supports what it rules out (optional).

    ``contradictions(experiment, constrained, unconstrained, constraints)`` gets the models fitted
    under the prior's constraints and without them, and returns :class:`~pmkit.findings.Finding`
    objects; :func:`pmkit.sdk.analyse` and :func:`pmkit.sdk.model_with_prior` call it when the
    knowledge has it, and report the findings beside the detectors'.
    """

    def contradictions(self, experiment: Experiment, constrained: ModelSet, unconstrained: ModelSet,
                       constraints: Mapping[str, Constraint]) -> list[Finding]: ...


@runtime_checkable
class ContributesToAnalysis(Protocol):
    """A model set that has more to show than its models (optional for a modeler's :class:`ModelSet`).

    ``analysis_tables(metric, target)`` returns :class:`~pmkit.analysis.ContributedTable` objects
    that every view of :func:`pmkit.sdk.analyse` renders after the ranking and the JSON output lists
    under ``tables``; ``predicted_total(metric, target)`` returns the modeler's own prediction of
    the metric's total at ``target`` (in the metric's unit) with a short text saying how, or None
    — the header then shows it instead of the sum of the call paths' models (APMT's ``T_app``).
    ``target`` maps every parameter to its value.
    """

    def analysis_tables(self, metric: str, target: Mapping[str, float]) -> Sequence[ContributedTable]: ...

    def predicted_total(self, metric: str, target: Mapping[str, float]) -> tuple[float, str] | None: ...


@runtime_checkable
class Prior(Protocol):
    """Loads prior knowledge (e.g. a taint analysis) that restricts models' search spaces.

    ``load(path, **options)`` returns a :class:`PriorKnowledge`.
    """

    name: str
    description: str
    options: Sequence[Option]

    def load(self, path: Path, **options: Any) -> PriorKnowledge: ...


@runtime_checkable
class Detector(Protocol):
    """Finds problems (scalability bugs, communication overhead) in an experiment and its models.

    ``detect(experiment, models, **options)`` returns a list of :class:`~pmkit.findings.Finding`.
    """

    name: str
    description: str
    options: Sequence[Option]

    def detect(self, experiment: Experiment, models: ModelSet, **options: Any) -> list[Finding]: ...


Register = Callable[[Any], None]


@hookspec
def pmkit_register_readers(register: Register) -> None:
    """Call ``register(reader)`` for each :class:`Reader` this plugin provides.

    Runs once, when the plugin registry is first built.  Returns nothing.
    """


@hookspec
def pmkit_register_modelers(register: Register) -> None:
    """Call ``register(modeler)`` for each :class:`Modeler` this plugin provides.

    Runs once, when the plugin registry is first built.  Returns nothing.
    """


@hookspec
def pmkit_register_priors(register: Register) -> None:
    """Call ``register(prior)`` for each :class:`Prior` this plugin provides.

    Runs once, when the plugin registry is first built.  Returns nothing.
    """


@hookspec
def pmkit_register_detectors(register: Register) -> None:
    """Call ``register(detector)`` for each :class:`Detector` this plugin provides.

    Runs once, when the plugin registry is first built.  Returns nothing.
    """


KINDS: dict[str, tuple[str, type]] = {
    "reader": ("pmkit_register_readers", Reader),
    "modeler": ("pmkit_register_modelers", Modeler),
    "prior": ("pmkit_register_priors", Prior),
    "detector": ("pmkit_register_detectors", Detector),
}
"""Plugin kinds: the hook that registers them and the protocol they follow."""
