"""What :func:`pmkit.analyse` returns: everything ``pmkit show`` shows, computed once.

An :class:`Analysis` holds, per input read, an :class:`InputAnalysis` — the experiment, its models,
the scaling report, findings, what a prior did, one call path's detail when asked, and tables a
plugin contributes — plus the inputs that were skipped.  Every view renders it and none computes
anything of its own: the terminal (:func:`pmkit.ui.show.show_view`), Markdown
(:func:`pmkit.ui.markdown_report.markdown_report`) and JSON (:func:`pmkit.schema.show_document`).

A new result (a summary line, a per-row figure, a modeler's table) is a field here, filled by
:func:`pmkit.sdk.analyse` and rendered by those three views.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pmkit.constraints import Constraint
from pmkit.detail import CallpathDetail
from pmkit.errors import InputError, UsageError
from pmkit.experiment import Experiment
from pmkit.findings import Finding
from pmkit.hookspecs import ChecksContradictions
from pmkit.models import ModelSet
from pmkit.scaling import ScalingReport
from pmkit.strong_scaling import Speedup, values_summed


@dataclass(frozen=True)
class Skipped:
    """An input, or a run inside one, that could not be read: where, and the problem in words."""

    source: str
    problem: str

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "problem": self.problem}


@dataclass
class Inputs:
    """What was read: each input's name and experiment, and the inputs that failed (with their error)."""

    read: list[tuple[str, Experiment]] = field(default_factory=list)
    failed: list[tuple[str, InputError]] = field(default_factory=list)

    @property
    def skipped(self) -> list[Skipped]:
        """The inputs that failed, then the runs each reader skipped inside an input."""
        out = [Skipped(source, str(error)) for source, error in self.failed]
        for _, experiment in self.read:
            out += [Skipped(source, problem) for source, problem in experiment.provenance.skipped]
        return out

    @property
    def files(self) -> list[str]:
        """Every input and every file the readers read from them (a study's runs)."""
        return [*(source for source, _ in self.read), *(s for _, e in self.read for s in e.provenance.sources)]

    def parameters(self, verb: str = "analyse") -> tuple[str, ...]:
        """The parameters every input shares; a UsageError naming two inputs that differ."""
        return common_parameters(self.read, verb)


def common_parameters(named: Sequence[tuple[str, Experiment]], verb: str) -> tuple[str, ...]:
    """The parameters every named experiment shares; a UsageError naming two that differ (``verb`` them
    in separate runs)."""
    first_source, first = named[0]
    for source, experiment in named[1:]:
        if experiment.parameters != first.parameters:
            raise UsageError(f"{source} has parameters {list(experiment.parameters)}, but {first_source} has "
                             f"{list(first.parameters)}; {verb} them in separate runs")
    return first.parameters


@dataclass(frozen=True)
class LoadedPrior:
    """A prior read from a file by the prior plugin ``name``: what :func:`pmkit.sdk.load_prior` returns.

    Passed once to :func:`pmkit.sdk.analyse` (or :func:`pmkit.sdk.model_with_prior`), which asks it
    for each experiment's constraints and, when the knowledge can, for contradictions.
    ``knowledge`` is the plugin's own object (see :class:`pmkit.hookspecs.PriorKnowledge` and
    :class:`pmkit.hookspecs.ChecksContradictions`).
    """

    name: str
    sources: tuple[str, ...]
    knowledge: Any

    def constraints(self, experiment: Experiment) -> dict[str, Constraint]:
        """A constraint per call path the prior restricts."""
        return dict(self.knowledge.constraints(experiment))

    @property
    def checks_contradictions(self) -> bool:
        """Whether the knowledge can find contradictions (needs the models fitted once more, unconstrained)."""
        return isinstance(self.knowledge, ChecksContradictions)

    def contradictions(self, experiment: Experiment, constrained: ModelSet, unconstrained: ModelSet,
                       constraints: Mapping[str, Constraint]) -> list[Finding]:
        """Where the data supports what the prior rules out, worst first; none when the knowledge cannot tell."""
        if not self.checks_contradictions or not constraints:
            return []
        found = self.knowledge.contradictions(experiment, constrained, unconstrained, constraints)
        return sorted(found, key=lambda f: -f.severity)


@dataclass(frozen=True)
class PriorOutcome:
    """What a prior did to one experiment's models: its constraints and the contradictions found."""

    name: str
    constraints: Mapping[str, Constraint]
    contradictions: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class ContributedTable:
    """A table a plugin contributes to the analysis (a modeler's per-kernel figures, say).

    ``rows`` hold text or numbers; a number in a column with a ``units`` entry is shown with that
    unit.  Every view renders it after the ranking, and the JSON document lists it under ``tables``.
    ``keys`` name the columns for scripts (the JSON then also has ``records``, one object per row
    keyed by them); ``notes`` are lines shown under the table; ``data`` is the plugin's own JSON
    document behind the table, copied to the JSON output as it is.
    """

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str | float, ...], ...]
    units: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    data: Mapping[str, Any] | None = None

    def unit(self, column: int) -> str:
        return self.units[column] if column < len(self.units) else ""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"title": self.title, "columns": list(self.columns), "units": list(self.units),
                                  "rows": [list(row) for row in self.rows]}
        if self.keys:
            out["records"] = [dict(zip(self.keys, row, strict=False)) for row in self.rows]
        if self.notes:
            out["notes"] = list(self.notes)
        if self.data is not None:
            out["data"] = dict(self.data)
        return out


@dataclass(frozen=True)
class PredictedTotal:
    """The predicted total of the analysed metric at the target, from a modeler that predicts the
    whole program (APMT's ``T_app``) rather than the sum of the call paths' models; ``by`` says how."""

    value: float
    by: str

    def to_json(self) -> dict[str, object]:
        return {"value": self.value, "by": self.by}


@dataclass
class InputAnalysis:
    """Everything computed for one input.

    ``findings`` are the detectors' and the prior's, worst first; None when no detector ran and no
    prior checked the data (the views then show no findings panel).  ``detail`` is the call path
    asked for, if any.  ``tables`` and ``total`` come from a model set that follows
    :class:`pmkit.hookspecs.ContributesToAnalysis` (``total`` None: the views show the sum of the
    call paths' predictions).
    """

    source: str
    experiment: Experiment
    models: ModelSet
    report: ScalingReport
    findings: list[Finding] | None = None
    detail: CallpathDetail | None = None
    prior: PriorOutcome | None = None
    tables: list[ContributedTable] = field(default_factory=list)
    total: PredictedTotal | None = None

    @property
    def predicted_total(self) -> tuple[float, str]:
        """The total the header shows at the target, and where it comes from."""
        if self.total is not None:
            return self.total.value, self.total.by
        return self.report.total_predicted, "sum of the call paths"

    @property
    def summed_over_processes(self) -> bool:
        """Whether the totals are summed over each run's processes (perf stat of ``mpirun``, ``--aggregation
        sum``): CPU time that stays constant under ideal strong scaling, not the time of a run."""
        return values_summed(self.experiment)

    @property
    def speedups(self) -> list[Speedup]:
        """In a strong-scaling analysis, the predicted speed-up and efficiency at the target over the largest
        measured point and the smallest (see :mod:`pmkit.strong_scaling`), from the header's totals; upper
        bounds when call paths with a negative prediction were left out.  Empty otherwise."""
        if self.report.strong is None:
            return []
        left_out = self.report.left_out if self.total is None else 0
        return self.report.strong.speedups(self.predicted_total[0], left_out)

    @property
    def metric(self) -> str:
        return self.report.metric


@dataclass
class Analysis:
    """The result of :func:`pmkit.analyse`: one :class:`InputAnalysis` per input read, and what was skipped."""

    inputs: list[InputAnalysis]
    skipped: list[Skipped] = field(default_factory=list)
