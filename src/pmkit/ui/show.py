"""The whole ``pmkit show`` screen: a header, the call tree, the ranking, findings — or one call path's detail.

It renders an :class:`~pmkit.analysis.Analysis` and computes nothing: ``render_show(console,
pmkit.analyse(path))`` prints it to any rich Console (a terminal, a notebook, a recording console);
``show_view`` returns one input's screen as one renderable.
"""

from __future__ import annotations

import numpy as np
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from pmkit.analysis import Analysis, ContributedTable, InputAnalysis
from pmkit.experiment import Experiment
from pmkit.names import metric_name, printable
from pmkit.scaling import DEFAULT_SCALE_UP, RANKING_SHARE, ScalingReport
from pmkit.strong_scaling import target_rule, values_summed
from pmkit.ui.call_tree import HEDGE_PREFIX, call_tree_view
from pmkit.ui.detail import detail_view
from pmkit.ui.findings_panel import findings_panel
from pmkit.ui.layout import plain_table
from pmkit.ui.quantities import format_cell, format_count, format_number, format_point, format_speedups, format_value
from pmkit.ui.ranking import ranking_view


def _ranges(experiment: Experiment) -> str:
    parts = []
    for i, name in enumerate(experiment.parameters):
        values = np.unique(experiment.points[:, i])
        name = printable(name)
        parts.append(f"{name}={format_number(values[0])}…{format_number(values[-1])}" if len(values) > 1
                     else f"{name}={format_number(values[0])}")
    return ", ".join(parts)


def data_summary(experiment: Experiment) -> str:
    """``7 points p=8…512``: how many points, and the range of each parameter."""
    return f"{format_count(len(experiment.points), 'point')} {_ranges(experiment)}"


MIN_VALUES = 5
"""Extra-P's guidance: five values per parameter for a model to be trusted (three at the very least)."""


def data_warnings(experiment: Experiment) -> list[str]:
    """What in the measurement design limits the models: too few values of a parameter."""
    out = []
    for i, name in enumerate(experiment.parameters):
        count = len(np.unique(experiment.points[:, i]))
        if count < 3:
            out.append(f"{name} has {format_count(count, 'measured value')}: growth in {name} cannot be modeled, "
                       f"predictions are constant; measure at least {MIN_VALUES} values")
        elif count < MIN_VALUES:
            out.append(f"{name} has {count} measured values; models and predictions are unreliable below "
                       f"{MIN_VALUES}")
    return out


def header_view(result: InputAnalysis) -> Table:
    """What was read and modeled, and which two points the view compares."""
    report = result.report
    experiment = result.experiment
    values = experiment.measurements[report.metric]
    reps = format_count(values.shape[2], "repetition")
    if np.isnan(values).any(axis=(0, 1)).any() and values.shape[2] > 1:
        reps = "≤" + reps
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    reader = experiment.provenance.reader
    grid.add_row("input", Text(printable(f"{result.source or ', '.join(experiment.provenance.sources) or '–'}"
                                         + (f" ({reader})" if reader else ""))))
    grid.add_row("data", Text(f"{data_summary(experiment)} · {reps} · "
                              f"{format_count(len(experiment.callpaths), 'call path')}"))
    kind = "inclusive" if report.inclusive else "exclusive"
    modelers = result.models.modelers(report.metric)
    unit = f"{report.unit}, " if report.unit else ""
    grid.add_row("metric", Text(printable(f"{metric_name(report.metric)} ({unit}{kind}), {report.measure} of "
                                          f"repetitions · modeler {', '.join(modelers) or '–'}")))
    others = other_metrics_text(experiment)
    if others:
        grid.add_row("also", Text(others, style="dim"))
    hedged = hedged_text(result)
    if hedged:
        grid.add_row("hedged", Text(hedged, style="dim"))
    if report.no_target is not None:  # one run: the measured values, and why nothing is predicted (said once)
        grid.add_row("now", f"{format_point(report.reference)} (the one measured point)")
        grid.add_row("target", Text(f"none — {report.no_target}", style="yellow"))
        grid.add_row("total", measured_text(result))
    else:
        grid.add_row("now", f"{format_point(report.reference)} (largest measured)")
        grid.add_row("target", target_text(report))
        grid.add_row("total", total_text(result))
    if result.speedups:
        grid.add_row("speed-up", format_speedups(result.speedups))
    for warning in data_warnings(experiment) if report.no_target is None else ():
        grid.add_row(Text("warning", style="yellow"), Text(warning, style="yellow"))
    for path, problem in experiment.provenance.skipped:
        grid.add_row(Text("skipped", style="yellow"), Text(printable(f"{path}: {problem}"), style="yellow"))
    return grid


def hedged_text(result: InputAnalysis) -> str:
    """``102 models: …`` — how many of the shown metric's laws the modeler option ``hedge`` chose, which the
    tables show only for the rows they show (their footnote); empty where none."""
    count = result.models.count_noted(HEDGE_PREFIX, result.report.metric)
    if not count:
        return ""
    return (f"{format_count(count, 'model')}: a law between the best-fitting one and a rival the points cannot "
            "reject ('hedge:' in their notes; -O hedge=false: the best-fitting)")


def other_metrics_text(experiment: Experiment) -> str:
    """``6 other metrics (--metric NAME; pmkit model for all)``: the view shows one metric, so say that the
    input has more and how to see them; empty when it has only the one shown."""
    others = len(experiment.metrics) - 1
    if others < 1:
        return ""
    return f"{format_count(others, 'other metric')} (--metric NAME; pmkit model for all)"


def target_text(report: ScalingReport) -> str:
    """The target and, when it is the default, the rule that chose it: ``p=128 (4× the largest p: the total
    falls with p (strong scaling); choose with --at)``."""
    text = format_point(report.target)
    if report.target != report.default_target():
        return text
    if report.strong_parameters:
        others = len(report.strong_parameters) < len(report.experiment.parameters)
        rule = target_rule(report.strong_parameters, values_summed(report.experiment), others)
        return f"{text} ({rule}; choose with --at)"
    return f"{text} ({DEFAULT_SCALE_UP:g}× the largest; choose with --at)"


def measured_text(result: InputAnalysis, now: str = "") -> str:
    """``578 ms (measured)``, or ``1350 s now (measured, summed over processes)`` where the values are summed
    over each run's processes — a total that stays constant, not one that falls, under ideal strong scaling."""
    summed = ", summed over processes" if result.summed_over_processes else ""
    return f"{format_value(result.report.total_measured, result.report.unit)}{now} (measured{summed})"


def total_text(result: InputAnalysis) -> str:
    """``578 ms now (measured) → 285 ms at the target (sum of the call paths)``; a sum that leaves out call
    paths whose model is negative there is a lower bound, ``≥285 ms``, and says how many."""
    report = result.report
    predicted, by = result.predicted_total
    left_out = report.left_out if result.total is None else 0
    bound = "≥" if left_out else ""
    missing = f"; {left_out:,} left out: negative there" if left_out else ""
    return (f"{measured_text(result, ' now')} → "
            f"{bound}{format_value(predicted, report.unit)} at the target ({by}{missing})")


def contributed_table_view(table: ContributedTable) -> RenderableType:
    """A table a plugin contributed to the analysis, numbers with their column's unit, its notes under it."""
    view = plain_table(title=table.title)
    for n, column in enumerate(table.columns):
        numeric = any(isinstance(row[n], int | float) for row in table.rows)
        view.add_column(column, justify="right" if numeric else "left", overflow="fold")
    for row in table.rows:
        view.add_row(*(Text(format_cell(cell, table.unit(n))) for n, cell in enumerate(row)))
    if not table.notes:
        return view
    return Group(view, *(Text(note, style="dim") for note in table.notes))


def show_view(result: InputAnalysis, *, depth: int | None = None, min_share: float = 0.01, sort: str = "share",
              top: int = 10, full_names: bool = False, rank_by: str = "growth") -> Group:
    """One input's screen of ``pmkit show``, as one renderable.

    Without a detail in ``result``: header, call tree, ranking, contributed tables and (when there
    are findings, even none) the findings panel.  With one: header, that call path's detail, and the
    findings about it.  ``depth``, ``min_share``, ``sort``, ``top`` and ``rank_by`` shape the tree and ranking.
    """
    parts: list[RenderableType] = [header_view(result), Text("")]
    tree = result.experiment.callpaths
    if result.detail is not None:
        parts.append(detail_view(result.detail))
        if result.findings is not None:
            own = [f for f in result.findings if f.callpath == result.detail.row.callpath]
            parts += [Text(""), findings_panel(own, tree=tree, full_names=full_names)]
        return Group(*parts)
    report = result.report
    parts.append(call_tree_view(report, depth=depth, min_share=min_share, sort=sort, title="Call tree",
                                full_names=full_names))
    if report.no_target is None:  # one run: nothing grows towards a target, so no ranking
        parts += [Text(""), ranking_view(report, limit=top, min_share=min_share * RANKING_SHARE,
                                         full_names=full_names, rank_by=rank_by)]
    for table in result.tables:
        parts += [Text(""), contributed_table_view(table)]
    if result.findings is not None:
        parts += [Text(""), findings_panel(result.findings, tree=tree, full_names=full_names)]
    return Group(*parts)


def render_show(console: Console, analysis: Analysis, **options: object) -> None:
    """Print every input's :func:`show_view` to ``console``, separated by rules; ``options`` are its options."""
    for n, result in enumerate(analysis.inputs):
        if n:
            console.rule()
        console.print(show_view(result, **options))  # type: ignore[arg-type]
