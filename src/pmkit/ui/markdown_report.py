"""``pmkit show --markdown``: the same views as a Markdown report to paste into an issue or a paper.

Tables are GitHub-flavoured Markdown; call paths are written in full (in code spans) so that a
reader can paste one into ``--callpath``; the plot, when a call path is detailed, is a text block.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console

from pmkit.analysis import Analysis, ContributedTable, InputAnalysis
from pmkit.detail import CallpathDetail
from pmkit.findings import Finding
from pmkit.scaling import RANKING_SHARE, ScalingReport
from pmkit.ui.call_tree import change_marker, prior_notes, visible_rows
from pmkit.ui.detail import segment_lines
from pmkit.ui.plot import MeasurementPlot, plot_data
from pmkit.ui.quantities import (
    format_cell,
    format_change,
    format_figure,
    format_growth_factor,
    format_number,
    format_point,
    format_r2,
    format_severity,
    format_share,
    format_spread,
    format_value,
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _model(row) -> str:
    if row.model is None or row.model.function is None:
        return "–"
    marker = change_marker(row.model)
    return _code((row.law or row.model.function).pretty_text(3)) + (f" ({marker})" if marker else "")


def _growth(row) -> str:
    return "–" if row.growth_class is None or not row.has_model else row.growth_class.label


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def markdown_report(analysis: Analysis, *, depth: int | None = None, min_share: float = 0.01, sort: str = "share",
                    top: int = 10) -> str:
    """The analysis as Markdown text, one section per input (see :func:`markdown_section`)."""
    return "\n".join(markdown_section(result, depth=depth, min_share=min_share, sort=sort, top=top)
                     for result in analysis.inputs)


def markdown_section(result: InputAnalysis, *, depth: int | None = None, min_share: float = 0.01,
                     sort: str = "share", top: int = 10) -> str:
    """One input as Markdown: summary, ranking, call tree, contributed tables and findings — or one call
    path's detail and its findings."""
    report = result.report
    experiment = report.experiment
    unit = report.unit
    lines = [f"## Scaling of {_code(report.metric)}" + (f" in {_code(result.source)}" if result.source else ""), ""]
    params = ", ".join(f"{name} ∈ {{{', '.join(format_number(v) for v in sorted(set(experiment.points[:, i])))}}}"
                       for i, name in enumerate(experiment.parameters))
    modelers = sorted({r.model.modeler for r in report.rows if r.model is not None and r.model.modeler})
    lines += [f"- measured: {len(experiment.points)} points ({params}), {len(experiment.callpaths)} call paths",
              f"- metric: {report.metric}" + (f" ({unit})" if unit else "")
              + f", {'inclusive' if report.inclusive else 'exclusive'}, {report.measure} of repetitions",
              f"- modeler: {', '.join(modelers) or '–'}",
              f"- now: {format_point(report.reference)} (largest measured); target: {format_point(report.target)}",
              ""]
    findings = result.findings
    if result.detail is not None:
        lines += _detail(result.detail)
        if findings is not None:
            findings = [f for f in findings if f.callpath == result.detail.row.callpath]
    else:
        lines += _overview(report, depth=depth, min_share=min_share, sort=sort, top=top)
        for table in result.tables:
            lines += ["", *_contributed(table)]
    if findings is not None:
        lines += ["", *_findings(findings)]
    return "\n".join(lines).rstrip() + "\n"


def _findings(findings: Sequence[Finding]) -> list[str]:
    lines = ["### Findings", ""]
    if not findings:
        lines.append("No findings.")
    for f in findings:
        where = " @ ".join(p for p in (f.callpath, f.location) if p)
        lines.append(f"- **{f.title}**" + (f" ({_code(where)})" if where else "")
                     + f" — {format_severity(f.severity, f.unit)} [{f.detector}]"
                     + (f": {f.message}" if f.message else ""))
    return lines


def _overview(report: ScalingReport, *, depth: int | None, min_share: float, sort: str, top: int) -> list[str]:
    """The ranking and the call tree."""
    unit = report.unit
    lines: list[str] = []
    ranked = report.ranking(min_share=min_share * RANKING_SHARE, limit=top)
    lines += [f"### Fastest growing towards {format_point(report.target)}", ""]
    if ranked:
        lines += _table(["#", "call path", "model", "growth", "×", "predicted", "share"],
                        [[str(i), _code(r.callpath), _model(r), _growth(r), format_growth_factor(r.growth),
                          format_value(r.predicted, unit), format_share(r.predicted_share)]
                         for i, r in enumerate(ranked, 1)], right=(0, 4, 5, 6))
    else:
        lines.append(f"No call path taking at least {format_share(min_share * RANKING_SHARE)} of the predicted "
                     "total grows.")
    lines += ["", "### Call tree", ""]
    rows = []
    for row, _guide, hidden, folded in visible_rows(report, depth=depth, min_share=min_share, sort=sort):
        if row is None:
            rows.append([f"… {folded} more <{format_share(min_share)}", "", "", "", "", ""])
            continue
        name = "&nbsp;&nbsp;" * row.depth + _code(row.callpath if row.depth == 0 else "->" + row.name)
        if hidden:
            name += f" (+{hidden})"
        model = _model(row)
        notes = prior_notes(row)
        if notes:
            model += " — " + "; ".join(notes)
        growth = _growth(row)
        if hidden and not report.inclusive:
            numbers = (row.branch_share, row.branch_predicted, row.branch_predicted_share)
            fastest = report.branch_growth(row.index, min_share * RANKING_SHARE)
            growth = _growth(fastest) if fastest is not None else growth
        else:
            numbers = (row.share, row.predicted, row.predicted_share)
        rows.append([name, model, growth, format_share(numbers[0]), format_value(numbers[1], unit),
                     format_share(numbers[2])])
    lines += _table(["call path", "model", "growth", "share now", f"at {format_point(report.target)}",
                     "share then"], rows, right=(3, 4, 5))
    kind = "inclusive (with callees)" if report.inclusive else "exclusive (without callees)"
    lines += ["", f"_{report.metric} is {kind}"
              + ("; a row marked (+N) counts its N hidden callees, and its growth is the fastest of them_"
                 if not report.inclusive and any(h for _, _, h, _ in visible_rows(report, depth=depth,
                                                                                    min_share=min_share,
                                                                                    sort=sort)) else "_")]
    return lines


def _contributed(table: ContributedTable) -> list[str]:
    numeric = {n for n in range(len(table.columns)) if any(isinstance(r[n], int | float) for r in table.rows)}
    return [f"### {table.title}", "", *_table(list(table.columns), [[format_cell(c, table.unit(n)) for n, c in
                                                                    enumerate(row)] for row in table.rows],
                                              right=tuple(sorted(numeric)))]


def _detail(detail: CallpathDetail) -> list[str]:
    row = detail.row
    unit = detail.unit
    lines = [f"### {_code(row.callpath)}", ""]
    model = row.model
    if model is not None and model.function is not None:
        q = model.quality
        law = row.law or model.function
        lines += [f"- model: {_code(law.pretty_text(4))} (Extra-P: {_code(law.extrap_text(6))})",
                  *(f"- {label}: {text}" for label, text in segment_lines(model)),
                  f"- growth: {_growth(row)}, {format_growth_factor(row.growth)} from "
                  f"{format_point(detail.reference)} to {format_point(detail.target)}",
                  f"- quality: SMAPE {format_figure(q.smape, 3, '%')}, adjusted R² {format_r2(q.adjusted_r2)}, "
                  f"RSS {format_figure(q.rss)}"
                  + (f", CV-SMAPE {format_figure(q.cv_smape, 3, '%')}" if q.cv_smape is not None else "")
                  + f" — by {model.modeler or '–'}"]
    else:
        lines.append("- no model" + (f": {'; '.join(model.notes)}" if model is not None and model.notes else ""))
    if model is not None and model.notes and model.function is not None:
        lines += [f"- note: {n}" for n in model.notes]
    lines += [f"- share: {format_share(row.share)} now, {format_share(row.predicted_share)} at the target", ""]
    lines += _table(["point", "reps", "mean", "±", "min", "max", "model", "error"],
                    [[p.label, str(p.repetitions), format_value(p.mean, unit),
                      format_spread(p.spread),
                      format_value(p.minimum, unit), format_value(p.maximum, unit), format_value(p.fitted, unit),
                      format_change(p.relative_error)]
                     for p in detail.points], right=(1, 2, 3, 4, 5, 6, 7))
    if detail.predictions:
        lines += ["", *_table(["point", "predicted"], [[format_point(p.point), format_value(p.value, unit)]
                                                      for p in detail.predictions], right=(1,))]
    plot = plot_data(detail)
    if plot is not None:
        console = Console(width=88, record=True, no_color=True, color_system=None, file=io.StringIO())
        console.print(MeasurementPlot(plot, unit))
        lines += ["", "```text", *console.export_text().rstrip().splitlines(), "```"]
    return lines
