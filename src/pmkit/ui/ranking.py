"""The ranking view: call paths whose models grow fastest towards the target — the likely scalability bugs —
or, in a strong-scaling analysis, those that limit the speed-up most (:meth:`ScalingReport.limiting`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.names import display_names, display_path
from pmkit.scaling import CallpathScaling, ScalingReport
from pmkit.ui.call_tree import Footnotes, model_pieces, value_text
from pmkit.ui.growth_column import growth_cell
from pmkit.ui.interval import WIDE_NOTE, growth_interval_text, interval_shown, is_wide, mark_wide
from pmkit.ui.layout import Column, break_text, longest_element, longest_token, one_line, widest, wrap
from pmkit.ui.layout import table as layout_table
from pmkit.ui.quantities import format_point, format_share


class RankingView:
    """Top ``limit`` growing call paths taking at least ``min_share`` of the predicted total, fastest first;
    in a strong-scaling analysis, the top ``limit`` losing at least ``min_share`` of it to less than ideal
    scaling, the largest loss first (:func:`ranking_title` names which).

    A renderable laid out for the width it is printed at: call paths (in short names unless
    ``full_names``) break between their elements, models between their terms.  When the columns do
    not fit they are given up in this order: the model, the value at the target, the growth factor
    (a strong-scaling ranking: its share then).
    """

    def __init__(self, report: ScalingReport, *, limit: int = 10, min_share: float = 0.01,
                 title: str | None = None, full_names: bool = False, rank_by: str = "growth") -> None:
        self.report = report
        self.strong = report.strong is not None
        self.rows = (report.limiting(min_share=min_share, limit=limit) if self.strong
                     else report.ranking(min_share=min_share, limit=limit, by=rank_by))
        self.rank_by = rank_by
        self.min_share = min_share
        self.full_names = full_names
        self.title = title or ranking_title(report)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def table(self, width: int | None = None) -> Table | Text:
        """The ranking laid out for ``width`` columns (None: as wide as the content)."""
        if not self.rows:
            return Text(f"{self.title}: {empty_ranking(self.report, self.min_share)}", style="green")
        tree = self.report.experiment.callpaths
        names = display_names(tree, full=self.full_names)
        paths = [display_path(tree, row.index, names) for row in self.rows]
        rows, unit = self.rows, self.report.unit
        footnotes = Footnotes(rows)  # a hedged law or a prior's, marked as in the tree
        models = [footnotes.mark_model(model_pieces(row), row) for row in rows]
        growths = [growth_cell(row, self.report) for row in rows]
        model = Column("model", lambda w: [wrap(m, w) for m in models], max(map(one_line, models), default=5),
                       minimum=max(map(widest, models), default=5), want=0, drop=1, grow=2)
        columns = [
            fixed_column("#", [Text(str(n)) for n in range(1, len(rows) + 1)]),
            path_column(paths, width, grow=1),
            model,
            footnotes.growth_column(rows, growths, model,
                                    want=max(len(c) for g in growths for c in g.plain.split(", ")), grow=3),
        ]
        if self.strong:
            columns += [
                fixed_column("then", [mark_wide(value_text(row.predicted, unit), row) for row in rows], drop=2),
                fixed_column("share\nthen", [Text(format_share(row.predicted_share)) for row in rows], drop=3),
                fixed_column("lost", [Text(format_share(row.lost), style="bold") for row in rows]),
            ]
        else:
            columns += [
                fixed_column("×", [growth_interval_text(row) for row in rows], drop=3),
                fixed_column("then", [value_text(row.predicted, unit) for row in rows], drop=2),
                fixed_column("share\nthen", [Text(format_share(row.predicted_share)) for row in rows]),
            ]
        caption = ranking_caption(self.report, rows)
        if self.rank_by == "low" and not self.strong:
            caption += "; ranked by the interval's low end"
        if any(is_wide(row) for row in rows):
            caption += "\n" + WIDE_NOTE
        caption += footnotes.caption()
        return layout_table(columns, width, title=self.title, caption=caption)


def ranking_title(report: ScalingReport) -> str:
    """``Fastest growing towards p=2048 (from p=512)``, or in a strong-scaling analysis ``Limiting the
    speed-up towards p=128 (from p=32)``."""
    what = "Limiting the speed-up" if report.strong is not None else "Fastest growing"
    return f"{what} towards {format_point(report.target)} (from {format_point(report.reference)})"


def ranking_caption(report: ScalingReport, rows: Sequence[CallpathScaling] = ()) -> str:
    """What the ranking's columns of ``rows`` mean (the interval in brackets only where one of them shows one)."""
    if report.strong is None:
        interval = ", then its 90% interval in brackets" if any(interval_shown(row) for row in rows) else ""
        return (f"×: predicted ÷ fitted at the largest measured point{interval}; then: predicted at the target; "
                "share then: of the predicted total")
    ideal = "" if report.strong.summed else f" × {format_ratio(report.strong.ideal)}"
    adds = ("with its callees' (inclusive time; the whole run's is 1 − efficiency)" if report.inclusive
            else "together about 1 − efficiency")
    return (f"then: predicted at the target; share then: of the predicted total; lost: what the call path takes "
            f"at the target beyond ideal scaling from {format_point(report.reference)} (its model's value there"
            f"{ideal}), as a share of the predicted total; {adds}")


def empty_ranking(report: ScalingReport, min_share: float) -> str:
    """What an empty ranking says."""
    if report.strong is not None:
        return f"no call path loses ≥{format_share(min_share)} of the predicted total to less than ideal scaling."
    return f"no call path taking ≥{format_share(min_share)} of the predicted total grows."


def format_ratio(value: float) -> str:
    """``0.25`` → ``1/4``, ``0.3`` → ``0.3``: the ideal factor of strong scaling as people write it."""
    inverse = 1 / value if value > 0 else math.nan
    if math.isfinite(inverse) and abs(inverse - round(inverse)) < 1e-9:
        return f"1/{round(inverse)}"
    return f"{value:.3g}"


def path_column(paths: list[str], width: int | None, share: float | None = None, header: str = "call path",
                grow: int = 2) -> Column:
    """A column of call paths that break between their elements; it wants its longest element whole, or
    up to ``share`` of ``width``, before other columns are given up for it."""
    natural = max((len(p) for p in paths), default=9)
    least = max((longest_element(p) for p in paths), default=9)
    want = least if width is None or share is None else min(natural, max(least, int(width * share)))
    shortest = max((longest_token(p) for p in paths), default=9)
    return Column(header, lambda w: [Text("\n".join(break_text(p, w))) for p in paths], natural,
                  minimum=min(shortest, 24), want=want, grow=grow)


def fixed_column(header: str, cells: list[Text], *, drop: int = 0, justify: str = "right") -> Column:
    """A column whose cells are never broken (numbers, growth labels)."""
    return Column(header, lambda w: cells, max((c.cell_len for c in cells), default=1), drop=drop, justify=justify)


def ranking_view(report: ScalingReport, *, limit: int = 10, min_share: float = 0.01,
                 title: str | None = None, full_names: bool = False, rank_by: str = "growth") -> RankingView:
    """The ranking renderable; see :class:`RankingView`."""
    return RankingView(report, limit=limit, min_share=min_share, title=title, full_names=full_names,
                       rank_by=rank_by)
