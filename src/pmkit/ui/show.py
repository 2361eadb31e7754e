"""The whole ``pmkit show`` screen: a header, the call tree, the ranking, findings — or one call path's detail.

``render_show(console, experiment, models)`` prints it to any rich Console (a terminal, a notebook,
a recording console); ``show_view`` returns the same screen as one renderable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from pmkit.constraints import Constraint
from pmkit.experiment import Experiment
from pmkit.findings import Finding
from pmkit.models import Model, ModelSet
from pmkit.scaling import DEFAULT_SCALE_UP, RANKING_SHARE, ScalingReport, analyse, default_target, detail
from pmkit.ui.call_tree import call_tree_view
from pmkit.ui.detail import detail_view
from pmkit.ui.findings_panel import findings_panel
from pmkit.ui.quantities import format_number, format_point
from pmkit.ui.ranking import ranking_view


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _ranges(experiment: Experiment) -> str:
    parts = []
    for i, name in enumerate(experiment.parameters):
        values = np.unique(experiment.points[:, i])
        parts.append(f"{name}={format_number(values[0])}…{format_number(values[-1])}" if len(values) > 1
                     else f"{name}={format_number(values[0])}")
    return ", ".join(parts)


MIN_VALUES = 5
"""Extra-P's guidance: five values per parameter for a model to be trusted (three at the very least)."""


def data_warnings(experiment: Experiment) -> list[str]:
    """What in the measurement design limits the models: too few values of a parameter."""
    out = []
    for i, name in enumerate(experiment.parameters):
        count = len(np.unique(experiment.points[:, i]))
        if count < 3:
            out.append(f"{name} has {_plural(count, 'measured value')}: growth in {name} cannot be modeled, "
                       f"predictions are constant; measure at least {MIN_VALUES} values")
        elif count < MIN_VALUES:
            out.append(f"{name} has {count} measured values; models and predictions are unreliable below "
                       f"{MIN_VALUES}")
    return out


def header_view(report: ScalingReport, models: Sequence[Model], *, source: str | None = None) -> Table:
    """What was read and modeled, and which two points the view compares."""
    experiment = report.experiment
    values = experiment.measurements[report.metric]
    reps = _plural(values.shape[2], "repetition")
    if np.isnan(values).any(axis=(0, 1)).any() and values.shape[2] > 1:
        reps = "≤" + reps
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    reader = experiment.provenance.reader
    grid.add_row("input", Text(f"{source or ', '.join(experiment.provenance.sources) or '–'}"
                               + (f" ({reader})" if reader else "")))
    grid.add_row("data", f"{_plural(len(experiment.points), 'point')} {_ranges(experiment)} · {reps} · "
                         f"{_plural(len(experiment.callpaths), 'call path')}")
    kind = "inclusive" if report.inclusive else "exclusive"
    modelers = sorted({m.modeler for m in models if m.metric == report.metric and m.modeler})
    unit = f"{report.unit}, " if report.unit else ""
    grid.add_row("metric", f"{report.metric} ({unit}{kind}), {report.measure} of repetitions · modeler "
                           f"{', '.join(modelers) or '–'}")
    is_default = report.target == default_target(experiment)
    grid.add_row("now", f"{format_point(report.reference)} (largest measured)")
    grid.add_row("target", f"{format_point(report.target)}"
                           + (f" ({DEFAULT_SCALE_UP:g}× the largest; choose with --at)" if is_default else ""))
    for warning in data_warnings(experiment):
        grid.add_row(Text("warning", style="yellow"), Text(warning, style="yellow"))
    for path, problem in experiment.provenance.skipped:
        grid.add_row(Text("skipped", style="yellow"), Text(f"{path}: {problem}", style="yellow"))
    return grid


def show_view(experiment: Experiment, models: ModelSet | Sequence[Model], *, metric: str | None = None,
              target: Mapping[str, float] | None = None, depth: int | None = None, min_share: float = 0.01,
              sort: str = "share", top: int = 10, callpath: str | None = None,
              findings: Sequence[Finding] | None = None, measure: str = "mean",
              source: str | None = None, constraints: Mapping[str, Constraint] | None = None) -> Group:
    """The screen ``pmkit show`` prints, as one renderable.

    Without ``callpath``: header, call tree, ranking and (when ``findings`` is not None) the findings
    panel.  With it: header, that call path's detail, and the findings about it.  ``constraints``
    (from a prior) show, per call path, how the prior restricted the model.
    """
    report = analyse(experiment, models, metric, target, measure, constraints)
    parts: list[RenderableType] = [header_view(report, list(models), source=source), Text("")]
    if callpath is not None:
        parts.append(detail_view(detail(report, callpath)))
        if findings is not None:
            own = [f for f in findings if f.callpath == report.row(callpath).callpath]
            parts += [Text(""), findings_panel(own)]
        return Group(*parts)
    parts.append(call_tree_view(report, depth=depth, min_share=min_share, sort=sort, title="Call tree"))
    parts += [Text(""), ranking_view(report, limit=top, min_share=min_share * RANKING_SHARE)]
    if findings is not None:
        parts += [Text(""), findings_panel(findings)]
    return Group(*parts)


def render_show(console: Console, experiment: Experiment, models: ModelSet | Sequence[Model],
                **options: object) -> None:
    """Print :func:`show_view` to ``console``; ``options`` are those of :func:`show_view`."""
    console.print(show_view(experiment, models, **options))  # type: ignore[arg-type]
