"""The screen of ``pmkit compare``: two studies side by side at one target, what changed growth class,
and the biggest wins and losses.

It renders a :class:`~pmkit.comparison.Comparison` and computes nothing: ``render_comparison(console,
pmkit.compare(before, after))``.  Tables are laid out for the width they are printed at
(:mod:`pmkit.ui.layout`): the side-by-side table gives up, in this order, the models, the relative
change, A's value, B's value; the call path, the growth classes and the change stay.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.analysis import InputAnalysis
from pmkit.comparison import CallpathComparison, Comparison
from pmkit.names import display_names, display_path, metric_name, printable
from pmkit.scaling import CallpathScaling, ScalingReport, no_target
from pmkit.ui.call_tree import Footnotes, model_pieces, target_header, value_text
from pmkit.ui.detail import detail_view
from pmkit.ui.growth_column import growth_cell, widest_piece, wrap_growth
from pmkit.ui.layout import Column, Piece, fit, gap_for, one_line, widest, wrap
from pmkit.ui.layout import table as layout_table
from pmkit.ui.quantities import format_change, format_point, format_share, format_signed_value, format_value
from pmkit.ui.ranking import fixed_column, path_column
from pmkit.ui.show import data_summary


def side_line(label: str, result: InputAnalysis) -> Text:
    """``A  before (cube) · 7 points p=8…512 · time (sec, exclusive) · refining``."""
    report = result.report
    reader = result.experiment.provenance.reader
    unit = f"{report.unit}, " if report.unit else ""
    modelers = sorted({m.modeler for m in result.models if m.metric == report.metric and m.modeler})
    text = (f"{result.source}" + (f" ({reader})" if reader else "") + f" · {data_summary(result.experiment)} · "
            f"{metric_name(report.metric)} ({unit}{'inclusive' if report.inclusive else 'exclusive'}) · "
            f"{', '.join(modelers) or '–'}")
    return Text(printable(text))


def target_note(comparison: Comparison) -> str:
    """How the target was chosen, when it was not given: 4× the largest measured, or — one run each, at the
    same point — that point, since there is nothing to extrapolate."""
    if comparison.default_target:
        return " (4× the largest measured of both; choose with --at)"
    if comparison.one_point:
        return " (the one measured point of both: one run each, nothing to extrapolate)"
    return ""


def summed_note(comparison: Comparison) -> str:
    """Which sides' totals are summed over each run's processes (perf stat of ``mpirun``, ``--aggregation
    sum``): CPU time, not the time of a run — said once for both, or per side when only one is."""
    summed = [side for side, result in (("A", comparison.a), ("B", comparison.b)) if result.summed_over_processes]
    if not summed:
        return ""
    if len(summed) == 2:
        return "; both summed over processes"
    return f"; {summed[0]} summed over processes, {'B' if summed[0] == 'A' else 'A'} not"


def side_total(report: ScalingReport) -> str:
    """A side's predicted total, ``≥814 k`` where it leaves out call paths negative at the target (a lower bound,
    as ``pmkit show``'s header says)."""
    return ("≥" if report.left_out else "") + format_value(report.total_predicted, report.unit)


def header_view(comparison: Comparison) -> Table:
    """Which two studies, at which target, and how the predicted totals compare."""
    a, b = comparison.a.report, comparison.b.report
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("A", side_line("A", comparison.a))
    grid.add_row("B", side_line("B", comparison.b))
    grid.add_row("target", format_point(comparison.target) + target_note(comparison))
    total = (f"A {side_total(a)} → B {side_total(b)} at "
             f"{format_point(comparison.target)}")
    if comparison.comparable:
        total += f" ({format_change(comparison.total_change)})"
    else:
        total += " (different units: changes are in shares of each side's total)"
    grid.add_row("total", Text(total + summed_note(comparison)))
    return grid


def growth_modeled(comparison: Comparison) -> bool:
    """Whether either side has a model of growth: false when both are one run (their models are the measured
    values), and then the views leave out the growth column and the growth classes that changed."""
    return not (no_target(comparison.a.experiment) and no_target(comparison.b.experiment))


class ComparisonTable:
    """Call paths of a comparison as a table laid out for the width it is printed at.

    ``models`` shows both sides' models (two lines per row); ``title`` heads it.
    """

    def __init__(self, comparison: Comparison, rows: Sequence[CallpathComparison], title: str, *,
                 models: bool = True, full_names: bool = False, legend: bool = False) -> None:
        self.comparison = comparison
        self.rows = list(rows)
        self.title = title
        self.models = models
        self.full_names = full_names
        self.legend = legend

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def _paths(self) -> list[str]:
        trees = [side.experiment.callpaths for side in (self.comparison.a, self.comparison.b)]
        names = [display_names(tree, full=self.full_names) for tree in trees]
        out = []
        for row in self.rows:
            side = 0 if row.a is not None else 1
            tree = trees[side]
            out.append(display_path(tree, tree.index(row.callpath), names[side]))
        return out

    def table(self, width: int | None = None) -> Table | Text:
        """The table for ``width`` columns (None: as wide as the content)."""
        if not self.rows:
            return Text(f"{self.title}: none.", style="green")
        comparison = self.comparison
        a_unit, b_unit = comparison.a.report.unit, comparison.b.report.unit
        header = target_header(comparison.a.report)
        footnotes = Footnotes([side for row in self.rows for side in (row.a, row.b)])  # a hedged law, as in show
        models: list[list[list[Piece]]] = [
            [[("A", "dim"), *_pieces(row.a, footnotes)], [("B", "dim"), *_pieces(row.b, footnotes)]]
            for row in self.rows]
        change = [_change_text(comparison, row) for row in self.rows]
        columns = [path_column(self._paths(), width, grow=2)]
        model_column = Column("models", lambda w: [wrap(m, w) for m in models], max(map(one_line, models)),
                              minimum=max(map(widest, models)), want=0, drop=1, grow=1)
        if self.models:
            columns.append(model_column)
        growth = growth_modeled(comparison)
        if growth:
            columns.append(_growth_column([_growth_change(comparison, row) for row in self.rows]))
        columns += [
            fixed_column(f"A\n{header}", [_value(row.a, a_unit) for row in self.rows], drop=3),
            fixed_column(f"B\n{header}", [_value(row.b, b_unit) for row in self.rows], drop=4),
            fixed_column("change" if comparison.comparable else "share\nchange", change),
            fixed_column("B ÷ A", [Text(format_change(row.ratio - 1)) for row in self.rows], drop=2),
        ]
        caption = ""
        if self.legend:
            caption = ("growth A → B: each side's growth as pmkit show words it, one when the same; " if growth
                       else "") + "change: B − A at the target" \
                + ("" if comparison.comparable else ", in points of each side's predicted total")
        if self.models and model_column in fit(columns, width, gap_for(width))[0]:  # the marks are shown
            caption = (caption + footnotes.caption()).lstrip("\n")
        return layout_table(columns, width, title=self.title, caption=caption)


def _pieces(row: CallpathScaling | None, footnotes: Footnotes) -> list[Piece]:
    if row is None:
        return [("absent", "dim")]
    return footnotes.mark_model([model_pieces(row)[0]], row)[0]


def _value(row: CallpathScaling | None, unit: str) -> Text:
    return Text("–", style="dim") if row is None else value_text(row.predicted, unit)


def _growth_change(comparison: Comparison, row: CallpathComparison) -> tuple[Text, Text | None]:
    """Each side's growth in ``pmkit show``'s words (:func:`~pmkit.ui.growth_column.growth_cell`: a growth
    class, or how a falling law behaves), in their colours; B is None when both sides read the same."""
    sides = [growth_cell(side, result.report) if side is not None else Text("absent", style="dim")
             for side, result in ((row.a, comparison.a), (row.b, comparison.b))]
    if sides[0].plain == sides[1].plain:
        return sides[0], None
    if row.class_change:
        for side in sides:
            side.stylize("bold")
    return sides[0], sides[1]


def _growth_column(cells: list[tuple[Text, Text | None]]) -> Column:
    """``A → B`` on one line where it fits, else A, then ``→ B`` below, each broken between its words."""
    def joined(a: Text, b: Text | None) -> Text:
        return a.copy() if b is None else Text.assemble(a, " → ", b)

    def laid_out(width: int) -> list[Text]:
        out = []
        for a, b in cells:
            line = joined(a, b)
            if line.cell_len <= width or b is None:
                out.append(line if line.cell_len <= width else wrap_growth(a, width))
                continue
            out.append(Text.assemble(wrap_growth(a, width), "\n→ ", wrap_growth(b, max(1, width - 2))))
        return out

    texts = [joined(a, b) for a, b in cells]
    minimum = max((max(widest_piece(a.plain), widest_piece(b.plain) + 2 if b is not None else 0) for a, b in cells),
                  default=1)
    return Column("growth\nA → B", laid_out, max((t.cell_len for t in texts), default=1), minimum=minimum,
                  want=max((t.cell_len for t in texts), default=1), grow=3)


def _change_text(comparison: Comparison, row: CallpathComparison) -> Text:
    """B − A at the target: a signed value, or signed share points; green when it fell, red when it grew."""
    value = comparison.change(row)
    if comparison.comparable:
        text = Text(format_signed_value(value, comparison.a.report.unit))
    else:
        text = Text(format_share_points(value))
    if value < 0:
        text.stylize("green")
    elif value > 0:
        text.stylize("red")
    return text


def format_share_points(value: float) -> str:
    """A change of shares in percentage points: ``+2.1 pp``."""
    text = format_share(abs(value))
    return text if text in ("–", "0%") else ("+" if value > 0 else "-") + text.replace("%", " pp")


def comparison_view(comparison: Comparison, *, min_share: float = 0.01, top: int = 5,
                    full_names: bool = False) -> Group:
    """The whole screen: header, call paths side by side (at least ``min_share`` of a predicted total,
    or a changed growth class), changed growth classes, the ``top`` wins and losses — or, when the
    comparison has details, each side's detail of that call path."""
    parts: list[RenderableType] = [header_view(comparison), Text("")]
    if any(comparison.details):
        for label, result, focus in zip("AB", (comparison.a, comparison.b), comparison.details, strict=True):
            heading = Text(f"{label}: {printable(result.source)}", style="bold underline")
            parts += [heading, detail_view(focus) if focus is not None
                      else Text("no such call path on this side", style="dim"), Text("")]
        return Group(*parts)
    target = format_point(comparison.target)
    section: Callable[..., ComparisonTable] = lambda rows, title, **kw: ComparisonTable(  # noqa: E731
        comparison, rows, title, full_names=full_names, **kw)
    changed, unchanged = comparison.significant(min_share)
    parts.append(section(changed, f"Side by side at {target}", legend=True))
    if unchanged:
        parts.append(Text(f"… {unchanged} more call paths of ≥{format_share(min_share)} changed by less than "
                          f"{_threshold_text(comparison, min_share)}", style="dim italic"))
    parts.append(Text(""))
    if growth_modeled(comparison):
        parts += [section(comparison.changed_class(), "Growth class changed"), Text("")]
    parts += [section(comparison.wins(top, min_share), f"Biggest wins at {target}", models=False), Text(""),
              section(comparison.losses(top, min_share), f"Biggest losses at {target}", models=False)]
    return Group(*parts)


def _threshold_text(comparison: Comparison, min_share: float) -> str:
    least = comparison.threshold(min_share)
    return format_value(least, comparison.a.report.unit) if comparison.comparable else format_share_points(least)


def render_comparison(console: Console, comparison: Comparison, **options: object) -> None:
    """Print :func:`comparison_view` to ``console``; ``options`` are its options."""
    console.print(comparison_view(comparison, **options))  # type: ignore[arg-type]
