"""The call tree view: per call path its model, growth class, share now, and prediction at the target.

A tree-shaped table (guides ``├``/``└`` in the first column) so that the numbers line up in
columns.  Deep or wide trees collapse: ``depth`` cuts levels (a ``+N`` marks hidden children) and
call paths below ``min_share`` both now and at the target fold into one ``… N more`` line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.models import Model
from pmkit.names import display_names, display_path, metric_name, printable
from pmkit.scaling import RANKING_SHARE, CallpathScaling, ScalingReport
from pmkit.trend import about
from pmkit.ui.growth_column import growth_cell, widest_piece, wrap_growth
from pmkit.ui.interval import WIDE_NOTE, is_wide, mark_wide
from pmkit.ui.layout import (
    Column,
    Piece,
    break_text,
    longest_word,
    one_line,
    term_pieces,
    widest,
    word_pieces,
    wrap,
)
from pmkit.ui.layout import table as layout_table
from pmkit.ui.quantities import format_change_point, format_point, format_share, format_value, growth_style


def prior_notes(row: CallpathScaling) -> list[str]:
    """What a prior did to the row's model, when it restricted it (see :func:`pmkit.scaling.prior_note`).

    The tree marks the model with a footnote holding the note up to its parenthesised reason; the
    detail view and reports show it whole.
    """
    return [row.prior_note] if row.prior_note else []


OUTLIER_NOTE = "one measured point was left out as an outlier (--callpath shows which)"
HEDGE_PREFIX = "hedge:"
"""How the note of a law chosen by the modeler option ``hedge`` begins (``multiparam.HEDGE_NOTE``)."""


def tree_notes(row: CallpathScaling) -> list[str]:
    """The footnotes of a row in the tree: what a prior did (up to its reason), a law the ``hedge`` option chose
    (up to its reason), a point left out as an outlier."""
    notes = [_short(n) for n in prior_notes(row)]
    if row.model is not None:
        notes += [_short(n) for n in row.model.notes if n.startswith(HEDGE_PREFIX)]
    if row.model is not None and row.model.outliers:
        notes.append(OUTLIER_NOTE if len(row.model.outliers) == 1 else OUTLIER_NOTE.replace(
            "one measured point was", "measured points were"))
    return notes


def _short(note: str) -> str:
    return note.split(" (")[0]


def superscript(number: int) -> str:
    """``12`` as ``¹²``: a footnote's mark."""
    return str(number).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


class Footnotes:
    """The footnotes of a table's rows (:func:`tree_notes`) and their marks, ``¹`` first: the tree and the
    ranking mark a model the same way, so a hedged law is told from a fitted one in both."""

    def __init__(self, rows: Sequence[CallpathScaling | None]) -> None:
        notes = dict.fromkeys(n for row in rows if row is not None for n in tree_notes(row))
        self.markers = {note: superscript(n + 1) for n, note in enumerate(notes)}

    def marks(self, row: CallpathScaling | None) -> str:
        """The footnote marks of a row (``¹²``), or empty."""
        return "" if row is None else "".join(self.markers[note] for note in tree_notes(row))

    def mark_model(self, pieces: list[list[Piece]], row: CallpathScaling) -> list[list[Piece]]:
        """A model's pieces (:func:`model_pieces`) with the row's marks after its law."""
        marks = self.marks(row)
        if marks:
            text, style = pieces[0][-1]
            pieces[0][-1] = (f"{text} {marks}", style)
        return pieces

    def caption(self) -> str:
        """The notes under the table, one a line (``¹ hedge: …``), each line led by a newline; empty without."""
        return "".join(f"\n{marker} {note}" for note, marker in self.markers.items())

    def growth_column(self, rows: Sequence[CallpathScaling | None], growths: Sequence[Text], model: Column,
                      **layout: int) -> Column:
        """The growth column of ``rows`` (their cells ``growths``), with the rows' marks where ``model`` — the
        column that carries them — is given up (:func:`pmkit.ui.layout.fit` leaves its width 0): else the
        notes under the table would refer to nothing.  ``layout``: the column's ``want`` and ``grow``."""
        marks = [f" {m}" if (m := self.marks(row)) else "" for row in rows]

        def cells(w: int) -> list[Text]:
            if model.width:
                return [wrap_growth(g, w) for g in growths]
            return [wrap_growth(g, w - len(mark)).append(mark) for g, mark in zip(growths, marks, strict=True)]

        minimum = max((widest_piece(g.plain) + 1 + len(m) for g, m in zip(growths, marks, strict=True)), default=6)
        return Column("growth", cells, max((g.cell_len for g in growths), default=1), minimum=minimum, **layout)


def model_pieces(row: CallpathScaling, digits: int = 3) -> list[list[Piece]]:
    """The model's function in pretty notation, split between terms, or why there is none (dimmed words)."""
    if row.measured_points == 0 and (row.model is None or row.model.function is None):
        return [[(word, "dim") for word in word_pieces("not measured")]]
    if row.model is None:
        return [[(word, "dim") for word in word_pieces("not modeled")]]
    if row.model.function is None:
        note = row.model.notes[0] if row.model.notes else "no reason given"
        return [[(word, "dim yellow") for word in word_pieces(note if "model" in note else f"no model: {note}")]]
    pieces = [[(term, "") for term in term_pieces(printable((row.law or row.model.function).pretty_text(digits)))]]
    marker = change_marker(row.model)
    if marker:  # a segmented model: the law at the target, and where it changes on a line of its own
        head, _, where = marker.partition(" at ")
        pieces.append([(f"{head} at", "magenta"), (where, "magenta")])
    return pieces


def change_marker(model: Model | None) -> str:
    """``changes at p ≈ 128`` for a segmented model, else empty."""
    if model is None or not model.segmented or model.change_point is None:
        return ""
    return f"changes at {model.change_point.parameter} ≈ {format_change_point(model.change_point.value)}"


def model_text(row: CallpathScaling, digits: int = 3) -> Text:
    """The model's function in pretty notation on one line, or why there is none, dimmed; a segmented
    model's law at the target, with where it changes."""
    out = Text()
    for k, paragraph in enumerate(model_pieces(row, digits)):
        if k:
            out.append("  ")
        for n, (text, style) in enumerate(paragraph):
            out.append((" " if n else "") + text, style=style)
    return out


def growth_text(row: CallpathScaling) -> Text:
    """The growth class label in its colour; ``–`` without a model (the views' growth column says more:
    :func:`pmkit.ui.growth_column.growth_cell`)."""
    if row.growth_class is None or not row.has_model:
        return Text("–", style="dim")
    return Text(printable(row.growth_class.label), style=growth_style(row.growth_class.level))


def visible_rows(report: ScalingReport, *, depth: int | None = None, min_share: float = 0.0,
                 sort: str = "share") -> list[tuple[CallpathScaling | None, str, int, int]]:
    """The tree in display order as (row, guide prefix, hidden deeper, folded count) tuples.

    A row of None is a ``… N more`` line for ``folded`` siblings below ``min_share``; ``hidden``
    counts descendants cut by ``depth``.
    """
    key = report.sort_key(sort, min_share * RANKING_SHARE)
    tree = report.experiment.callpaths
    keep = report.shown(depth, min_share).tolist()  # computed on the report's arrays: no row object per call path
    below = report.descendants().tolist()
    out: list[tuple[CallpathScaling | None, str, int, int]] = []

    def emit(indices: list[int], prefix: str, top: bool) -> None:
        shown = sorted((report.rows[i] for i in indices if keep[i]), key=key)
        folded = len(indices) - len(shown)
        for n, row in enumerate(shown):
            last = n == len(shown) - 1 and not folded
            guide = "" if top else prefix + ("└ " if last else "├ ")
            children = tree.children(row.index)
            expand = any(keep[c] for c in children)
            out.append((row, guide, 0 if expand else below[row.index], 0))
            if expand:
                emit(children, "" if top else prefix + ("  " if last else "│ "), False)
        if folded:
            out.append((None, "" if top else prefix + "└ ", 0, folded))

    emit(tree.roots(), "", True)
    return out


class CallTreeView:
    """The call tree as a table: model, growth, share now, prediction and share at the target.

    A renderable laid out for the width it is printed at (:mod:`pmkit.ui.layout`): names are short
    (``full_names`` shows them whole) and get the room their deepest rows need, up to
    :data:`PATH_SHARE` of the width; a model breaks between its terms; numbers are never cut.  When
    the columns do not fit, they are given up in this order: the model, the share now, the value at
    the target (the growth and the share then stay); the caption names what was left out.
    """

    def __init__(self, report: ScalingReport, *, depth: int | None = None, min_share: float = 0.01,
                 sort: str = "share", title: str | None = None, full_names: bool = False) -> None:
        self.report = report
        self.rows = visible_rows(report, depth=depth, min_share=min_share, sort=sort)
        self.min_share = min_share
        self.sort = sort
        self.title = title
        self.full_names = full_names
        self.names = display_names(report.experiment.callpaths, full=full_names)
        self.footnotes = Footnotes([row for row, *_ in self.rows])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)
        warning = negative_note(self.report, self.names)
        if warning:
            yield Text(warning, style="bold red")

    def _label(self, row: CallpathScaling | None, hidden: int, folded: int) -> tuple[str, str, str]:
        """(name, style, suffix) of a row's label."""
        if row is None:
            return f"… {folded} more <{format_share(self.min_share)}", "dim italic", ""
        return self.names[row.index], "bold" if row.depth == 0 else "", f" +{hidden}" if hidden else ""

    def _cells(self, row: CallpathScaling, hidden: int) -> tuple[list[list[Piece]], Text, Text, Text, Text]:
        """Model pieces, growth, share now, value and share at the target; a collapsed row counts its callees."""
        report = self.report
        model = self.footnotes.mark_model(model_pieces(row), row)
        branch = bool(hidden) and not report.inclusive
        now, then = (row.branch_share, row.branch_predicted_share) if branch else (row.share, row.predicted_share)
        value = row.branch_predicted if branch else row.predicted
        share_then = Text(format_share(then))
        if row.negative or (branch and row.branch_negative):
            share_then = Text("!", style="bold red") if row.negative else Text(f"≥{format_share(then)}")
        if math.isfinite(then) and math.isfinite(now) and then > 1.5 * now and then >= 0.05:
            share_then.stylize("bold red")
        predicted = value_text(value, report.unit)
        if branch and row.branch_negative and not row.negative:
            predicted = Text("≥") + predicted
        if not branch:
            mark_wide(predicted, row)
        if report.no_target is not None:  # one run: the measured value instead of a prediction
            predicted = value_text(row.branch_share * report.total_measured if branch else row.measured, report.unit)
        numbers = [Text(format_share(now)), predicted, share_then]
        growth = growth_cell(row, report)
        if branch:
            for cell in numbers:
                cell.stylize("italic")
            fastest = report.branch_growth(row.index, self.min_share * RANKING_SHARE)
            if fastest is not None and fastest.index != row.index:
                growth = growth_cell(fastest, report)
                growth.stylize("italic")
        return model, growth, *numbers

    def caption(self) -> str:
        """What the columns mean, how siblings are ordered, and the footnotes."""
        report = self.report
        kind = "inclusive (with callees)" if report.inclusive else "exclusive (without callees)"
        branch = "their branch's " if not report.inclusive else ""
        order = {"share": f"{branch}share then", "growth": f"{branch}fastest growth", "name": "name"}[self.sort]
        if report.no_target is not None:
            order = order.replace("share then", "share")
            caption = (f"share: of the total at {format_point(report.reference)} · measured: the {report.measure} "
                       f"of repetitions\n{metric_name(report.metric)} is {kind}; siblings sorted by {order}")
        else:
            caption = (f"share now: of the total at {format_point(report.reference)} · {target_header(report)}: "
                       f"predicted · share then: of the predicted total\n"
                       f"{metric_name(report.metric)} is {kind}; siblings sorted by {order}")
        if any(r is not None and r.negative for r, *_ in self.rows):
            caption += "; ! negative at the target (see below)"
        if not report.inclusive and any(r is not None and hidden and r.branch_negative and not r.negative
                                        for r, _, hidden, _ in self.rows):
            caption += "; ≥: a hidden callee is negative at the target and left out"
        if not report.inclusive and any(hidden for _, _, hidden, _ in self.rows):
            caption += "; a row marked +N counts its N hidden callees"
            if report.no_target is None:  # one run's tree has no growth column to speak of
                caption += " (growth: the fastest of them)"
        if not self.full_names and any(row is not None and self.names[row.index] != row.name
                                       for row, *_ in self.rows):
            caption += "; names shortened (--full-names shows them whole)"
        if any(r is not None and not hidden and is_wide(r) for r, _, hidden, _ in self.rows):
            caption += "\n" + WIDE_NOTE  # after the clauses on the columns, which would read as part of it
        return caption + self.footnotes.caption()

    def table(self, width: int | None = None) -> Table:
        """The tree laid out for ``width`` columns (None: as wide as the content)."""
        report = self.report
        labels = [(guide, *self._label(row, hidden, folded)) for row, guide, hidden, folded in self.rows]
        cells = [None if row is None else self._cells(row, hidden) for row, _, hidden, _ in self.rows]
        blank: list[list[Piece]] = []
        models = [c[0] if c is not None else blank for c in cells]
        others = [list(c[1:]) if c is not None else [Text("")] * 4 for c in cells]
        natural = max((len(guide) + len(name) + len(suffix) for guide, name, _, suffix in labels), default=9)
        # a folded row ("… 3 more <1.0%") is one word: broken, its share lands alone on a line under the tree
        whole = max((len(guide) + (len(name) if row is None else longest_word(name)) + len(suffix)
                     for (row, *_), (guide, name, _, suffix) in zip(self.rows, labels, strict=True)), default=9)
        deepest = max((len(guide) for guide, *_ in labels), default=0)
        room = None if width is None else max(int(width * PATH_SHARE), 24)
        path = Column("call path", lambda w: [_label_text(*label, w) for label in labels], natural,
                      minimum=deepest + 8, want=whole if room is None else min(whole, room), grow=2,
                      continued=lambda n: _continuation(labels[n][0]).rstrip())
        model = Column("model", lambda w: [wrap(m, w) for m in models], max(map(one_line, models), default=5),
                       minimum=max(map(widest, models), default=5), want=0, drop=1, grow=1)
        header = target_header(report)

        def numbers(n: int) -> Callable[[int], list[Text]]:
            return lambda w: [row[n] for row in others]

        def width_of(n: int) -> int:
            return max((row[n].cell_len for row in others), default=1)

        clauses = [len(clause) for row in others for clause in row[0].plain.split(", ")]
        columns = [
            path, model,
            self.footnotes.growth_column([row for row, *_ in self.rows], [row[0] for row in others], model,
                                         want=max(clauses, default=6), grow=3),
            Column("share\nnow", numbers(1), width_of(1), drop=2, justify="right", name="share now"),
            Column(header, numbers(2), width_of(2), drop=3, justify="right", name=header),
            Column("share\nthen", numbers(3), width_of(3), justify="right", name="share then"),
        ]
        if report.no_target is not None:  # one run: what was measured, nothing towards a target
            columns = [path, model, Column("share", numbers(1), width_of(1), drop=2, justify="right"),
                       Column("measured", numbers(2), width_of(2), justify="right")]
        return layout_table(columns, width, title=self.title, caption=self.caption())


PATH_SHARE = 0.5
"""The call path column of the tree takes up to this part of the width before the model is given up for it."""


def target_header(report: ScalingReport) -> str:
    """``at p=2048`` for the prediction column; ``at target`` when the point is too long for a header."""
    text = f"at {format_point(report.target)}"
    return text if len(text) <= 16 else "at target"


def value_text(value: float, unit: str) -> Text:
    """A predicted value; a negative one is flagged (``!``, bold red), since no time or count is negative."""
    if value < 0:
        return Text(format_value(value, unit) + "!", style="bold red")
    return Text(format_value(value, unit))


NEGATIVE_NAMED = 10
"""The note under the tree names this many call paths with a negative model at most (the first in tree
order) and counts the rest: a study of 100,000 call paths may have thousands, which ``--json`` lists."""


def negative_note(report: ScalingReport, names: list[str] | None = None) -> str:
    """The line under the tree naming the call paths whose model is negative at the target and where it turns
    negative (paths as ``names`` gives their regions, short by default; the first :data:`NEGATIVE_NAMED`,
    then how many more); empty when there are none."""
    count = report.negative_count()
    if not count:
        return ""
    rows = report.negative_rows(NEGATIVE_NAMED)
    tree = report.experiment.callpaths
    names = names if names is not None else display_names(tree)
    where = []
    for row in rows:
        trend = report.trend(row.index)
        since = f" from {trend.parameter} ≈ {about(trend.behaviour.negative_from)}" if trend is not None else ""
        where.append(printable(display_path(tree, row.index, names)) + since)
    if count > len(rows):
        where.append(f"and {count - len(rows):,} more (pmkit show --json lists them)")
    models = "1 model is" if count == 1 else f"{count:,} models are"
    return (f"! {models} negative at {format_point(report.target)}, left out of the predicted total and the "
            f"shares then (the model does not hold that far): {'; '.join(where)}")


def _continuation(guide: str) -> str:
    """The guide of a row's second and further lines: its siblings' bars go on (``│``), its own branch ends."""
    return guide.replace("├ ", "│ ").replace("└ ", "  ")


def _label_text(guide: str, name: str, style: str, suffix: str, width: int) -> Text:
    """Guide and name; a name too long for ``width`` continues on lines indented under the guide,
    broken between words and scopes where it can (:func:`pmkit.ui.layout.break_text`)."""
    text = Text(guide, style="dim")
    room = width - len(guide)
    if len(name) + len(suffix) <= room or room < 4:
        return text.append(name, style=style).append(suffix, style="dim")
    continuation = _continuation(guide)
    lines = break_text(name, room)
    for n, line in enumerate(lines):
        if n:
            text.append("\n" + continuation, style="dim")
        text.append(line, style=style)
    if len(lines[-1]) + len(suffix) <= room:
        return text.append(suffix, style="dim")
    return text.append("\n" + continuation, style="dim").append(suffix.strip(), style="dim")


def call_tree_view(report: ScalingReport, *, depth: int | None = None, min_share: float = 0.01,
                   sort: str = "share", title: str | None = None, full_names: bool = False) -> CallTreeView:
    """The call tree renderable; see :class:`CallTreeView`."""
    return CallTreeView(report, depth=depth, min_share=min_share, sort=sort, title=title, full_names=full_names)
