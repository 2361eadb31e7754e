"""The ranking view: call paths whose models grow fastest towards the target — the likely scalability bugs."""

from __future__ import annotations

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.scaling import ScalingReport
from pmkit.ui.call_tree import SLACK, _gap, growth_text, model_text, path_text, value_text
from pmkit.ui.quantities import format_growth_factor, format_point, format_share


class RankingView:
    """Top ``limit`` growing call paths taking at least ``min_share`` of the predicted total, fastest first.

    A renderable: it breaks long call paths after ``->`` to fit the width it is printed at.
    """

    def __init__(self, report: ScalingReport, *, limit: int = 10, min_share: float = 0.01,
                 title: str | None = None) -> None:
        self.report = report
        self.rows = report.ranking(min_share=min_share, limit=limit)
        self.min_share = min_share
        self.title = title or (f"Fastest growing towards {format_point(report.target)} "
                               f"(from {format_point(report.reference)})")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def table(self, width: int | None = None) -> Table | Text:
        """The ranking as a table laid out for ``width`` columns (None: no breaking of call paths)."""
        return _table(self.report, self.rows, self.title, self.min_share, width)


def ranking_view(report: ScalingReport, *, limit: int = 10, min_share: float = 0.01,
                 title: str | None = None) -> RankingView:
    """The ranking renderable; see :class:`RankingView`."""
    return RankingView(report, limit=limit, min_share=min_share, title=title)


def _table(report: ScalingReport, rows: list, heading: str, min_share: float, width: int | None) -> Table | Text:
    if not rows:
        return Text(f"{heading}: no call path taking ≥{format_share(min_share)} of the predicted total grows.",
                    style="green")
    cells = [(str(rank), model_text(row), growth_text(row), Text(format_growth_factor(row.growth)),
              value_text(row.predicted, report.unit), Text(format_share(row.predicted_share)))
             for rank, row in enumerate(rows, 1)]
    gap = _gap(width)
    model_w = min(max(c[1].cell_len for c in cells), 14)
    growth_w = max(6, *(c[2].cell_len for c in cells))
    factor_w = max(1, *(c[3].cell_len for c in cells))
    value_w = max(4, *(c[4].cell_len for c in cells))
    share_w = max(5, *(c[5].cell_len for c in cells))
    path_width = None
    if width is not None:
        longest = max(len(r.callpath) for r in rows)
        others = len(cells[-1][0]) + model_w + growth_w + factor_w + value_w + share_w + 6 * gap + SLACK
        path_width = max(12, min(longest, width - others, max(int(width * 0.45), 24)))
    table = Table(box=box.SIMPLE_HEAD, title=heading, title_justify="left", pad_edge=False, show_edge=False,
                  collapse_padding=True, padding=(0, 1) if gap == 2 else (0, 0))
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("call path", overflow="fold", width=path_width)
    table.add_column("model", overflow="fold", min_width=model_w)
    table.add_column("growth", overflow="fold", min_width=growth_w)
    table.add_column("×", justify="right", no_wrap=True)
    table.add_column("then", justify="right", min_width=value_w)
    table.add_column("share\nthen", justify="right", no_wrap=True)
    for row, (rank, *rest) in zip(rows, cells, strict=True):
        table.add_row(rank, path_text(row.callpath, path_width), *rest)
    return table
