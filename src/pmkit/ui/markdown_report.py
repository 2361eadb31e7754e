"""``pmkit show --markdown`` and ``pmkit compare --markdown``: the same views as a Markdown report to paste
into an issue or a paper.

Tables are GitHub-flavoured Markdown; call paths are written in full (in code spans) so that a
reader can paste one into ``--callpath``; the plot, when a call path is detailed, is a text block.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from pmkit.analysis import Analysis, ContributedTable, InputAnalysis
from pmkit.comparison import CallpathComparison, Comparison
from pmkit.detail import CallpathDetail
from pmkit.experiment import CallTree
from pmkit.findings import Finding
from pmkit.names import display_names, display_path, metric_name, printable
from pmkit.scaling import RANKING_SHARE, ScalingReport
from pmkit.ui.call_tree import change_marker, negative_note, tree_notes, value_text, visible_rows
from pmkit.ui.compare import growth_modeled, side_total, target_note
from pmkit.ui.detail import growth_span, interval_text, negative_line, segment_lines
from pmkit.ui.growth_column import growth_cell, growth_words, trend_summary
from pmkit.ui.interval import WIDE_NOTE, growth_interval_text, is_wide, mark_wide
from pmkit.ui.plot import MeasurementPlot, plot_data
from pmkit.ui.quantities import (
    format_cell,
    format_change,
    format_count,
    format_figure,
    format_number,
    format_point,
    format_r2,
    format_severity,
    format_share,
    format_signed_value,
    format_speedups,
    format_spread,
    format_value,
)
from pmkit.ui.ranking import empty_ranking, ranking_caption, ranking_title
from pmkit.ui.show import hedged_text, measured_text, other_metrics_text, target_text, total_text


def _cell(text: str) -> str:
    return printable(text.replace("\n", " ")).replace("|", "\\|")


def _code(text: str) -> str:
    text = printable(text)
    return f"`{text}`" if "`" not in text else f"``{text}``"


def _model(row) -> str:
    if row.model is None or row.model.function is None:
        return "–"
    marker = change_marker(row.model)
    return _code((row.law or row.model.function).pretty_text(3)) + (f" ({marker})" if marker else "")


def _noted_model(row) -> str:
    """The model with the tree's notes on it (a hedged law, a prior's constraint, an outlier left out)."""
    notes = tree_notes(row)
    return _model(row) + (" — " + "; ".join(notes) if notes else "")


def _trend(row, report: ScalingReport) -> str:
    """The growth column as the terminal writes it (:func:`pmkit.ui.growth_column.growth_cell`)."""
    return growth_cell(row, report).plain


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |",
             "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return lines


def markdown_report(analysis: Analysis, *, depth: int | None = None, min_share: float = 0.01, sort: str = "share",
                    top: int = 10, full_names: bool = False, rank_by: str = "growth") -> str:
    """The analysis as Markdown text, one section per input (see :func:`markdown_section`)."""
    return "\n".join(markdown_section(result, depth=depth, min_share=min_share, sort=sort, top=top,
                                      full_names=full_names, rank_by=rank_by) for result in analysis.inputs)


def markdown_section(result: InputAnalysis, *, depth: int | None = None, min_share: float = 0.01,
                     sort: str = "share", top: int = 10, full_names: bool = False, rank_by: str = "growth") -> str:
    """One input as Markdown: summary, ranking, call tree, contributed tables and findings — or one call
    path's detail and its findings.  Region names are short, as in the terminal, unless ``full_names``;
    the detail names its call path in full."""
    report = result.report
    experiment = report.experiment
    unit = report.unit
    lines = [f"## Scaling of {_code(metric_name(report.metric))}"
             + (f" in {_code(result.source)}" if result.source else ""), ""]
    params = ", ".join(f"{printable(name)} ∈ "
                       f"{{{', '.join(format_number(v) for v in sorted(set(experiment.points[:, i])))}}}"
                       for i, name in enumerate(experiment.parameters))
    modelers = report.modelers()
    lines += [f"- measured: {format_count(len(experiment.points), 'point')} ({params}), "
              f"{format_count(len(experiment.callpaths), 'call path')}",
              f"- metric: {metric_name(report.metric)}" + (f" ({printable(unit)})" if unit else "")
              + f", {'inclusive' if report.inclusive else 'exclusive'}, {report.measure} of repetitions",
              f"- modeler: {printable(', '.join(modelers) or '–')}",
              *([f"- also: {printable(others)}"] if (others := other_metrics_text(experiment)) else []),
              *([f"- hedged: {hedged}"] if (hedged := hedged_text(result)) else []),
              f"- now: {format_point(report.reference)} (largest measured); target: {target_text(report)}",
              f"- total: {total_text(result)}"]
    if report.no_target is not None:  # one run: the measured values, and why nothing is predicted (said once)
        lines[-2:] = [f"- now: {format_point(report.reference)} (the one measured point); target: none — "
                      f"{report.no_target}",
                      f"- total: {measured_text(result)}"]
    if result.speedups:
        lines.append(f"- speed-up: {format_speedups(result.speedups)}")
    lines.append("")
    findings = result.findings
    if result.detail is not None:
        lines += _detail(result.detail)
        if findings is not None:
            findings = [f for f in findings if f.callpath == result.detail.row.callpath]
    else:
        names = display_names(experiment.callpaths, full=full_names)
        lines += _overview(report, names, depth=depth, min_share=min_share, sort=sort, top=top, rank_by=rank_by)
        for table in result.tables:
            lines += ["", *_contributed(table)]
    if findings is not None:
        lines += ["", *_findings(findings, experiment.callpaths, full_names)]
    return "\n".join(lines).rstrip() + "\n"


def _findings(findings: Sequence[Finding], tree: CallTree, full_names: bool) -> list[str]:
    lines = ["### Findings", ""]
    if not findings:
        lines.append("No findings.")
    names = display_names(tree, full=full_names)
    for f in findings:
        path = display_path(tree, tree.index(f.callpath), names) if f.callpath and f.callpath in tree else f.callpath
        where = " @ ".join(p for p in (path, f.location) if p)
        lines.append(f"- **{printable(f.title)}**" + (f" ({_code(where)})" if where else "")
                     + f" — {format_severity(f.severity, f.unit)} [{printable(f.detector)}]"
                     + (f": {printable(' '.join(f.message.split()))}" if f.message else ""))
    return lines


def _overview(report: ScalingReport, names: Sequence[str], *, depth: int | None, min_share: float, sort: str,
              top: int, rank_by: str = "growth") -> list[str]:
    """The ranking and the call tree, region names as ``names`` gives them."""
    tree = report.experiment.callpaths
    unit = report.unit
    lines: list[str] = []
    least = min_share * RANKING_SHARE
    if report.no_target is not None:  # one run: nothing grows towards a target, so no ranking
        return _measured_tree(report, names, depth=depth, min_share=min_share, sort=sort)
    lines += [f"### {ranking_title(report)}", ""]
    if report.strong is not None:
        ranked = report.limiting(min_share=least, limit=top)
        lines += _table(["#", "call path", "model", "growth", "predicted", "share", "lost"],
                        [[str(i), _code(display_path(tree, r.index, names)), _noted_model(r), _trend(r, report),
                          mark_wide(Text(format_value(r.predicted, unit)), r).plain, format_share(r.predicted_share),
                          format_share(r.lost)]
                         for i, r in enumerate(ranked, 1)], right=(0, 4, 5, 6)) if ranked else []
    else:
        ranked = report.ranking(min_share=least, limit=top, by=rank_by)
        lines += _table(["#", "call path", "model", "growth", "×", "predicted", "share"],
                        [[str(i), _code(display_path(tree, r.index, names)), _noted_model(r), _trend(r, report),
                          growth_interval_text(r).plain, format_value(r.predicted, unit),
                          format_share(r.predicted_share)]
                         for i, r in enumerate(ranked, 1)], right=(0, 4, 5, 6)) if ranked else []
    if ranked:
        lines += ["", f"_{ranking_caption(report, ranked)}_"]
        if any(is_wide(r) for r in ranked):
            lines += ["", f"_{WIDE_NOTE}_"]
    else:
        lines.append(empty_ranking(report, least).capitalize())
    lines += ["", "### Call tree", ""]
    rows = []
    visible = visible_rows(report, depth=depth, min_share=min_share, sort=sort)
    for row, _guide, hidden, folded in visible:
        if row is None:
            rows.append([f"… {folded} more <{format_share(min_share)}", "", "", "", "", ""])
            continue
        name = "&nbsp;&nbsp;" * row.depth + _code(names[row.index] if row.depth == 0 else "->" + names[row.index])
        if hidden:
            name += f" (+{hidden})"
        model = _noted_model(row)
        growth = _trend(row, report)
        branch = hidden and not report.inclusive
        if branch:
            numbers = (row.branch_share, row.branch_predicted, row.branch_predicted_share)
            fastest = report.branch_growth(row.index, min_share * RANKING_SHARE)
            growth = _trend(fastest, report) if fastest is not None else growth
        else:
            numbers = (row.share, row.predicted, row.predicted_share)
        value, share = format_value(numbers[1], unit), format_share(numbers[2])
        if row.negative:
            value, share = f"**{value}!**", "!"
        elif branch and row.branch_negative:
            value, share = f"≥{value}", f"≥{share}"
        elif not branch:
            value = mark_wide(Text(value), row).plain  # as the terminal's tree marks it
        rows.append([name, model, growth, format_share(numbers[0]), value, share])
    lines += _table(["call path", "model", "growth", "share now", f"at {format_point(report.target)}",
                     "share then"], rows, right=(3, 4, 5))
    kind = "inclusive (with callees)" if report.inclusive else "exclusive (without callees)"
    any_hidden = any(h for _, _, h, _ in visible)
    lines += ["", f"_share now: of the total at {format_point(report.reference)}; at {format_point(report.target)}: "
              f"predicted; share then: of the predicted total. {metric_name(report.metric)} is {kind}"
              + ("; a row marked (+N) counts its N hidden callees, and its growth is the fastest of them_"
                 if not report.inclusive and any_hidden else "_")]
    if any(row is not None and not (hidden and not report.inclusive) and is_wide(row) for row, _, hidden, _ in visible):
        lines += ["", f"_{WIDE_NOTE}_"]
    warning = negative_note(report, list(names))
    if warning:
        lines += ["", f"**{_cell(warning)}**"]
    return lines


def _measured_tree(report: ScalingReport, names: Sequence[str], *, depth: int | None, min_share: float,
                   sort: str) -> list[str]:
    """The call tree of one run: each call path's model, share and measured value (its branch's, for a row
    with hidden callees of an exclusive metric)."""
    rows = []
    visible = visible_rows(report, depth=depth, min_share=min_share, sort=sort)
    for row, _guide, hidden, folded in visible:
        if row is None:
            rows.append([f"… {folded} more <{format_share(min_share)}", "", "", ""])
            continue
        name = "&nbsp;&nbsp;" * row.depth + _code(names[row.index] if row.depth == 0 else "->" + names[row.index])
        branch = hidden and not report.inclusive
        share = row.branch_share if branch else row.share
        value = share * report.total_measured if branch else row.measured
        rows.append([name + (f" (+{hidden})" if hidden else ""), _noted_model(row),
                     format_share(share), format_value(value, report.unit)])
    kind = "inclusive (with callees)" if report.inclusive else "exclusive (without callees)"
    return ["### Call tree", "", *_table(["call path", "model", "share", "measured"], rows, right=(2, 3)), "",
            f"_share: of the total at {format_point(report.reference)}; measured: the {report.measure} of "
            f"repetitions. {metric_name(report.metric)} is {kind}_"]


def _contributed(table: ContributedTable) -> list[str]:
    numeric = {n for n in range(len(table.columns)) if any(isinstance(r[n], int | float) for r in table.rows)}
    rows = [[format_cell(c, table.unit(n)) for n, c in enumerate(row)] for row in table.rows]
    lines = [f"### {printable(table.title)}", "", *_table(list(table.columns), rows, right=tuple(sorted(numeric)))]
    if table.notes:
        lines += ["", *(f"_{printable(note)}_" for note in table.notes)]
    return lines


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
                  f"- growth: {growth_words(row, detail.trend, unit, detail.strong).plain}"
                  + (growth_span(detail).replace("  ", ", ", 1) if growth_span(detail) else ""),
                  *([f"- along {printable(detail.trend.parameter)}: {trend_summary(detail.trend, unit)}"]
                    if detail.trend is not None else []),
                  f"- quality: SMAPE {format_figure(q.smape, 3, '%')}, adjusted R² {format_r2(q.adjusted_r2)}, "
                  f"RSS {format_figure(q.rss)}"
                  + (f", CV-SMAPE {format_figure(q.cv_smape, 3, '%')}" if q.cv_smape is not None else "")
                  + f" — by {printable(model.modeler or '–')}"]
    else:
        lines.append("- no model" + (f": {printable('; '.join(model.notes))}" if model is not None and model.notes
                                     else ""))
    if model is not None and model.function is not None:
        lines += [f"- note: {printable(n)}" for n in detail.notes]
    lines += [f"- share: {format_share(row.share)} now"
              + (f", {format_share(row.predicted_share)} at the target" if detail.no_target is None else ""), ""]
    if negative_line(detail):
        lines += [f"**{_cell(negative_line(detail))}**", ""]
    lines += _table(["point", "reps", "mean", "±", "min", "max", "model", "error"],
                    [[p.label + (" (outlier, left out)" if p.left_out else ""), str(p.repetitions),
                      format_value(p.mean, unit),
                      format_spread(p.spread),
                      format_value(p.minimum, unit), format_value(p.maximum, unit), format_value(p.fitted, unit),
                      format_change(p.relative_error)]
                     for p in detail.points], right=(1, 2, 3, 4, 5, 6, 7))
    if detail.predictions:
        lines += ["", *_table(["point", "predicted", "90% interval"],
                              [[format_point(p.point), value_text(p.value, unit).plain, interval_text(p, unit) or "–"]
                               for p in detail.predictions], right=(1, 2))]
    plot = plot_data(detail)
    if plot is not None:
        console = Console(width=88, record=True, no_color=True, color_system=None, file=io.StringIO())
        console.print(MeasurementPlot(plot, unit))
        lines += ["", "```text", *console.export_text().rstrip().splitlines(), "```"]
    return lines


def markdown_comparison(comparison: Comparison, *, min_share: float = 0.01, top: int = 5,
                        full_names: bool = False) -> str:
    """``pmkit compare --markdown``: both sides, the call paths side by side at the target, what changed
    growth class, the biggest wins and losses — or each side's detail of one call path."""
    a, b = comparison.a, comparison.b
    target = format_point(comparison.target)
    lines = [f"## {_code(a.source)} and {_code(b.source)} compared at {target}", ""]
    total = "measured total" if comparison.one_point else "predicted total"
    for side, result in (("A", a), ("B", b)):
        report = result.report
        lines.append(f"- {side}: {_code(result.source)}, {metric_name(report.metric)}"
                     + (f" ({printable(report.unit)})" if report.unit else "")
                     + f", {total} {side_total(report)}"
                     + (" (summed over processes)" if result.summed_over_processes else ""))
    lines.append(f"- target: {target}{target_note(comparison)}")
    if comparison.comparable:
        lines.append(f"- change of the {total}: {format_change(comparison.total_change)}")
    else:
        lines.append("- different units: changes are in points of each side's predicted total")
    lines.append("")
    if any(comparison.details):
        for side, focus in zip("AB", comparison.details, strict=True):
            lines += [f"### {side}", ""] + (_detail(focus) if focus is not None else ["No such call path here."])
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"
    names = [display_names(side.experiment.callpaths, full=full_names) for side in (a, b)]

    def rows(selected: Sequence[CallpathComparison], models: bool) -> list[list[str]]:
        out = []
        for row in selected:
            n, side = (0, a) if row.a is not None else (1, b)
            tree = side.experiment.callpaths
            cells = [_code(display_path(tree, tree.index(row.callpath), names[n]))]
            if models:
                cells += [_noted_model(row.a) if row.a is not None else "–",
                          _noted_model(row.b) if row.b is not None else "–"]
            growth = [_trend(s, r.report) if s is not None else "absent" for s, r in ((row.a, a), (row.b, b))]
            change = comparison.change(row)
            if modeled:
                cells.append(growth[0] if growth[0] == growth[1] else f"{growth[0]} → {growth[1]}")
            cells += [format_value(row.a.predicted, a.report.unit) if row.a is not None else "–",
                      format_value(row.b.predicted, b.report.unit) if row.b is not None else "–",
                      format_signed_value(change, a.report.unit) if comparison.comparable
                      else format_change(change), format_change(row.ratio - 1)]
            out.append(cells)
        return out

    modeled = growth_modeled(comparison)
    header = ["call path", *(["growth A → B"] if modeled else []), f"A at {target}", f"B at {target}", "change",
              "B ÷ A"]
    sections = [(f"Side by side at {target}", comparison.significant(min_share)[0], True),
                *([("Growth class changed", comparison.changed_class(), True)] if modeled else []),
                (f"Biggest wins at {target}", comparison.wins(top, min_share), False),
                (f"Biggest losses at {target}", comparison.losses(top, min_share), False)]
    for title, selected, models in sections:
        lines += [f"### {title}", ""]
        if selected:
            columns = [header[0], "model A", "model B", *header[1:]] if models else header
            lines += _table(columns, rows(selected, models), right=tuple(range(len(columns) - 4, len(columns))))
        else:
            lines.append("None.")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
