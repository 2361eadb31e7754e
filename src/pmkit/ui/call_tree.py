"""The call tree view: per call path its model, growth class, share now, and prediction at the target.

A tree-shaped table (guides ``├``/``└`` in the first column) so that the numbers line up in
columns.  Deep or wide trees collapse: ``depth`` cuts levels (a ``+N`` marks hidden children) and
call paths below ``min_share`` both now and at the target fold into one ``… N more`` line.
"""

from __future__ import annotations

import math

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.models import Model
from pmkit.scaling import RANKING_SHARE, CallpathScaling, ScalingReport
from pmkit.ui.quantities import format_change_point, format_point, format_share, format_value, growth_style


def prior_notes(row: CallpathScaling) -> list[str]:
    """What a prior did to the row's model, when it restricted it (see :func:`pmkit.scaling.prior_note`).

    The tree marks the model with a footnote holding the note up to its parenthesised reason; the
    detail view and reports show it whole.
    """
    return [row.prior_note] if row.prior_note else []


def _short(note: str) -> str:
    return note.split(" (")[0]


def _superscript(number: int) -> str:
    return str(number).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


def model_text(row: CallpathScaling, digits: int = 3) -> Text:
    """The model's function in pretty notation, or why there is none, dimmed."""
    if row.measured_points == 0 and (row.model is None or row.model.function is None):
        return Text("not measured", style="dim")
    if row.model is None:
        return Text("not modeled", style="dim")
    if row.model.function is None:
        note = row.model.notes[0] if row.model.notes else "no reason given"
        return Text(note if "model" in note else f"no model: {note}", style="dim yellow")
    text = Text((row.law or row.model.function).pretty_text(digits))
    marker = change_marker(row.model)
    if marker:  # on a line of its own, so that a narrow column does not break it
        text.append(f"\n{marker}", style="magenta")
    return text


def change_marker(model: Model | None) -> str:
    """``changes at p ≈ 128`` for a segmented model, else empty."""
    if model is None or not model.segmented or model.change_point is None:
        return ""
    return f"changes at {model.change_point.parameter} ≈ {format_change_point(model.change_point.value)}"


def growth_text(row: CallpathScaling) -> Text:
    """The growth class label in its colour; ``–`` without a model."""
    if row.growth_class is None or not row.has_model:
        return Text("–", style="dim")
    return Text(row.growth_class.label, style=growth_style(row.growth_class.level))


def path_text(path: str, width: int | None = None) -> Text:
    """A call path with its leaf in bold, broken after ``->`` (not inside a name) to fit ``width``."""
    parts = path.split("->")
    pieces = [p + "->" for p in parts[:-1]] + [parts[-1]]
    text = Text()
    used = 0
    for n, piece in enumerate(pieces):
        if width is not None and used and used + len(piece) > width:
            text.append("\n")
            used = 0
        text.append(piece, style="bold" if n == len(pieces) - 1 else "")
        used += len(piece)
    return text


def _significant(row: CallpathScaling, min_share: float) -> bool:
    shares = (row.share, row.predicted_share, row.branch_share, row.branch_predicted_share)
    return any(math.isfinite(s) and s >= min_share for s in shares)


def visible_rows(report: ScalingReport, *, depth: int | None = None, min_share: float = 0.0,
                 sort: str = "share") -> list[tuple[CallpathScaling | None, str, int, int]]:
    """The tree in display order as (row, guide prefix, hidden deeper, folded count) tuples.

    A row of None is a ``… N more`` line for ``folded`` siblings below ``min_share``; ``hidden``
    counts descendants cut by ``depth``.
    """
    key = report.sort_key(sort)
    tree = report.experiment.callpaths
    keep: dict[int, bool] = {}

    def visit(index: int) -> bool:
        row = report.rows[index]
        inside = depth is None or row.depth < depth
        below = [visit(child) for child in tree.children(index)]
        keep[index] = inside and (_significant(row, min_share) or any(below))
        return keep[index]

    for root in tree.roots():
        visit(root)

    def count(index: int) -> int:
        return sum(1 + count(c) for c in tree.children(index))

    out: list[tuple[CallpathScaling | None, str, int, int]] = []

    def emit(indices: list[int], prefix: str, top: bool) -> None:
        shown = sorted((report.rows[i] for i in indices if keep[i]), key=key)
        folded = len(indices) - len(shown)
        for n, row in enumerate(shown):
            last = n == len(shown) - 1 and not folded
            guide = "" if top else prefix + ("└ " if last else "├ ")
            children = tree.children(row.index)
            expand = any(keep[c] for c in children)
            out.append((row, guide, 0 if expand else count(row.index), 0))
            if expand:
                emit(children, "" if top else prefix + ("  " if last else "│ "), False)
        if folded:
            out.append((None, "" if top else prefix + "└ ", 0, folded))

    emit(tree.roots(), "", True)
    return out


class CallTreeView:
    """The call tree as a table: model, growth, share now, prediction and share at the target.

    A renderable: the call path column gets the width its deepest names need (up to 45 % of the
    width it is printed at), so that names fold only when they must and the model folds instead.
    """

    def __init__(self, report: ScalingReport, *, depth: int | None = None, min_share: float = 0.01,
                 sort: str = "share", title: str | None = None) -> None:
        self.report = report
        self.rows = visible_rows(report, depth=depth, min_share=min_share, sort=sort)
        self.min_share = min_share
        self.sort = sort
        self.title = title
        notes = dict.fromkeys(_short(n) for row, *_ in self.rows if row is not None for n in prior_notes(row))
        self.markers = {note: _superscript(n + 1) for n, note in enumerate(notes)}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def _labels(self, width: int | None) -> list[Text]:
        labels = []
        for row, guide, hidden, folded in self.rows:
            if row is None:
                name, style, suffix = f"… {folded} more <{format_share(self.min_share)}", "dim italic", ""
            else:
                name, style, suffix = row.name, "bold" if row.depth == 0 else "", f" +{hidden}" if hidden else ""
            labels.append(_wrapped_label(guide, name, style, suffix, width))
        return labels

    def _cells(self, row: CallpathScaling, hidden: int) -> tuple[Text, Text, Text, Text, Text]:
        """Model, growth, share now, value and share at the target; a collapsed row counts its callees."""
        report = self.report
        model = model_text(row)
        for note in prior_notes(row):
            model.append(f" {self.markers[_short(note)]}", style="dim")
        branch = bool(hidden) and not report.inclusive
        now, then = (row.branch_share, row.branch_predicted_share) if branch else (row.share, row.predicted_share)
        value = row.branch_predicted if branch else row.predicted
        share_then = Text(format_share(then))
        if math.isfinite(then) and math.isfinite(now) and then > 1.5 * now and then >= 0.05:
            share_then.stylize("bold red")
        numbers = [Text(format_share(now)), value_text(value, report.unit), share_then]
        growth = growth_text(row)
        if branch:
            for cell in numbers:
                cell.stylize("italic")
            fastest = report.branch_growth(row.index, self.min_share * RANKING_SHARE)
            if fastest is not None and fastest.index != row.index:
                growth = growth_text(fastest)
                growth.stylize("italic")
        return model, growth, *numbers

    def table(self, width: int | None = None) -> Table:
        """The tree laid out for ``width`` columns (None: as wide as the content)."""
        report = self.report
        kind = "inclusive (with callees)" if report.inclusive else "exclusive (without callees)"
        order = {"share": "their branch's share then" if not report.inclusive else "share then",
                 "growth": "growth", "name": "name"}[self.sort]
        caption = f"{report.metric} is {kind}; siblings sorted by {order}"
        if any(r is not None and r.predicted < 0 for r, *_ in self.rows):
            caption += "; ! the model is negative at the target: it does not hold that far"
        if not report.inclusive and any(hidden for _, _, hidden, _ in self.rows):
            caption += "; a row marked +N counts its N hidden callees (growth: the fastest of them)"
        for note, marker in self.markers.items():
            caption += f"\n{marker} {note}"
        cells = [None if row is None else self._cells(row, hidden) for row, _, hidden, _ in self.rows]
        needed = max((_label_width(guide, row, hidden, folded, self.min_share)
                      for row, guide, hidden, folded in self.rows), default=12)
        header = target_header(report)
        gap = _gap(width)
        columns = list(zip(*(c for c in cells if c is not None), strict=True)) or [()] * 5
        model_w = min(max([5, *(t.cell_len for t in columns[0])]), 8)
        growth_w = max([6, *(t.cell_len for t in columns[1])])
        now_w = max([5, *(t.cell_len for t in columns[2])])
        value_w = max([max(map(len, header.split())), *(t.cell_len for t in columns[3])])
        then_w = max([5, *(t.cell_len for t in columns[4])])
        path_width = needed
        if width is not None:
            others = model_w + growth_w + now_w + value_w + then_w + 5 * gap + SLACK
            path_width = max(12, min(needed, width - others))
        labels = self._labels(path_width if width is not None else None)
        table = Table(box=box.SIMPLE_HEAD, title=self.title, title_justify="left", pad_edge=False, show_edge=False,
                      collapse_padding=True, caption=caption, caption_justify="left", caption_style="dim",
                      padding=(0, 1) if gap == 2 else (0, 0))
        table.add_column("call path", overflow="fold", width=path_width)
        table.add_column("model", overflow="fold", min_width=model_w)
        table.add_column("growth", overflow="fold", min_width=growth_w)
        table.add_column("share\nnow", justify="right", no_wrap=True)
        table.add_column(header, justify="right", no_wrap=False, min_width=value_w)
        table.add_column("share\nthen", justify="right", no_wrap=True)
        for label, row_cells in zip(labels, cells, strict=True):
            table.add_row(label, *(row_cells or ("",) * 5))
        return table


NARROW = 100
"""Below this many columns the tree and the ranking separate their columns by one space, not two."""


SLACK = 2
"""Columns rich may widen by a cell beyond their content (a wrapped header); kept free so nothing spills."""


def _gap(width: int | None) -> int:
    return 1 if width is not None and width < NARROW else 2


def target_header(report: ScalingReport) -> str:
    """``at p=2048`` for the prediction column; ``at target`` when the point is too long for a header."""
    text = f"at {format_point(report.target)}"
    return text if len(text) <= 16 else "at target"


def value_text(value: float, unit: str) -> Text:
    """A predicted value; a negative one is flagged (``!``, yellow), since no time or count is negative."""
    if value < 0:
        return Text(format_value(value, unit) + "!", style="yellow")
    return Text(format_value(value, unit))


def _label_width(guide: str, row: CallpathScaling | None, hidden: int, folded: int, min_share: float) -> int:
    if row is None:
        return len(guide) + len(f"… {folded} more <{format_share(min_share)}")
    return len(guide) + len(row.name) + (len(f" +{hidden}") if hidden else 0)


def _wrapped_label(guide: str, name: str, style: str, suffix: str, width: int | None) -> Text:
    """Guide and name; a name too long for ``width`` continues on lines indented under the guide."""
    text = Text(guide, style="dim")
    room = None if width is None else width - len(guide)
    if room is None or len(name) + len(suffix) <= room or room < 6:
        return text.append(name, style=style).append(suffix, style="dim")
    continuation = guide.replace("├ ", "│ ").replace("└ ", "  ")
    pieces = [name[i:i + room] for i in range(0, len(name), room)]
    for n, piece in enumerate(pieces):
        if n:
            text.append("\n" + continuation, style="dim")
        text.append(piece, style=style)
    if len(pieces[-1]) + len(suffix) <= room:
        return text.append(suffix, style="dim")
    return text.append("\n" + continuation, style="dim").append(suffix.strip(), style="dim")


def call_tree_view(report: ScalingReport, *, depth: int | None = None, min_share: float = 0.01,
                   sort: str = "share", title: str | None = None) -> CallTreeView:
    """The call tree renderable; see :class:`CallTreeView`."""
    return CallTreeView(report, depth=depth, min_share=min_share, sort=sort, title=title)
