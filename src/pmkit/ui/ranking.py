"""The ranking view: call paths whose models grow fastest towards the target — the likely scalability bugs."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.names import display_names, display_path
from pmkit.scaling import ScalingReport
from pmkit.ui.call_tree import growth_text, model_pieces, value_text
from pmkit.ui.layout import Column, break_text, longest_element, longest_token, one_line, widest, wrap
from pmkit.ui.layout import table as layout_table
from pmkit.ui.quantities import format_growth_factor, format_point, format_share


class RankingView:
    """Top ``limit`` growing call paths taking at least ``min_share`` of the predicted total, fastest first.

    A renderable laid out for the width it is printed at: call paths (in short names unless
    ``full_names``) break between their elements, models between their terms.  When the columns do
    not fit they are given up in this order: the model, the value at the target, the growth factor.
    """

    def __init__(self, report: ScalingReport, *, limit: int = 10, min_share: float = 0.01,
                 title: str | None = None, full_names: bool = False) -> None:
        self.report = report
        self.rows = report.ranking(min_share=min_share, limit=limit)
        self.min_share = min_share
        self.full_names = full_names
        self.title = title or (f"Fastest growing towards {format_point(report.target)} "
                               f"(from {format_point(report.reference)})")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def table(self, width: int | None = None) -> Table | Text:
        """The ranking laid out for ``width`` columns (None: as wide as the content)."""
        if not self.rows:
            return Text(f"{self.title}: no call path taking ≥{format_share(self.min_share)} of the predicted "
                        "total grows.", style="green")
        tree = self.report.experiment.callpaths
        names = display_names(tree, full=self.full_names)
        paths = [display_path(tree, row.index, names) for row in self.rows]
        rows, unit = self.rows, self.report.unit
        models = [model_pieces(row) for row in rows]
        columns = [
            fixed_column("#", [Text(str(n)) for n in range(1, len(rows) + 1)]),
            path_column(paths, width, grow=1),
            Column("model", lambda w: [wrap(m, w) for m in models], max(map(one_line, models), default=5),
                   minimum=max(map(widest, models), default=5), want=0, drop=1, grow=2),
            fixed_column("growth", [growth_text(row) for row in rows], justify="left"),
            fixed_column("×", [Text(format_growth_factor(row.growth)) for row in rows], drop=3),
            fixed_column("then", [value_text(row.predicted, unit) for row in rows], drop=2),
            fixed_column("share\nthen", [Text(format_share(row.predicted_share)) for row in rows]),
        ]
        caption = "×: predicted ÷ fitted at the largest measured point; then: predicted at the target; " \
                  "share then: of the predicted total"
        return layout_table(columns, width, title=self.title, caption=caption)


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
                 title: str | None = None, full_names: bool = False) -> RankingView:
    """The ranking renderable; see :class:`RankingView`."""
    return RankingView(report, limit=limit, min_share=min_share, title=title, full_names=full_names)
