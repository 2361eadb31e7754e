"""The table of ``pmkit model``: one row per call path and metric, with the function and its quality."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.experiment import CallTree
from pmkit.models import Model
from pmkit.names import display_names, display_path, metric_name, printable
from pmkit.ui.call_tree import superscript
from pmkit.ui.layout import Column, Piece, one_line, term_pieces, widest, word_pieces, wrap
from pmkit.ui.layout import table as layout_table
from pmkit.ui.quantities import format_change_point, format_figure, format_r2
from pmkit.ui.ranking import fixed_column, path_column


class ModelTable:
    """Models laid out for the width they are printed at.

    Call paths are shown in short names when the experiment's ``tree`` is given (whole with
    ``full_names``) and break between their elements; a model breaks between its terms, its notes
    between words; the quality figures are never cut.  When the columns do not fit they are given
    up in this order: adjusted R², SMAPE.
    """

    def __init__(self, models: Iterable[Model], *, title: str | None = None, show_metric: bool = True,
                 tree: CallTree | None = None, full_names: bool = False) -> None:
        self.models = list(models)
        self.title = title
        self.show_metric = show_metric
        self.tree = tree
        self.full_names = full_names

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.title is not None:  # above the table, not its title: a long path would fold at the table's width
            yield title_text(printable(self.title), options.max_width)
        yield self.table(options.max_width)

    def _paths(self) -> list[str]:
        tree = self.tree
        if tree is None:
            return [printable(m.callpath) for m in self.models]
        names = display_names(tree, full=self.full_names)
        return [display_path(tree, tree.index(m.callpath), names) if m.callpath in tree else printable(m.callpath)
                for m in self.models]

    def footnotes(self) -> dict[str, str]:
        """The notes that more than one model carries (the ``hedge`` option's, on a hundred laws of a narrow
        study) and their marks, ``¹`` first: said once under the table, not on every row."""
        counts = Counter(note for model in self.models if model.function is not None for note in model.notes)
        shared = [note for note, count in counts.items() if count > 1]
        return {note: superscript(n + 1) for n, note in enumerate(shared)}

    def table(self, width: int | None = None) -> Table:
        """The table for ``width`` columns (None: as wide as the content), without the title."""
        texts: list[list[list[Piece]]] = []
        marks = self.footnotes()
        for model in self.models:
            if model.function is None:
                reason = printable("; ".join(model.notes) or "unknown reason")
                said = reason if "no model" in reason else f"no model: {reason}"  # the note may say it already
                texts.append([[(word, "yellow") for word in said.split()]])
            else:
                paragraphs = _segment_paragraphs(model) or [
                    [(term, "") for term in term_pieces(printable(model.function.pretty_text()))]]
                marked = "".join(marks[note] for note in model.notes if note in marks)
                if marked:  # a piece of its own: the law's longest term sets how narrow the column can be
                    paragraphs[0].append((marked, ""))
                paragraphs += [[(word, "dim") for word in printable(note).split()] for note in model.notes
                               if note not in marks]
                texts.append(paragraphs)
        columns = [path_column(self._paths(), width, grow=1)]
        if self.show_metric:
            columns.append(fixed_column("metric", [Text(metric_name(m.metric)) for m in self.models], justify="left"))
        columns += [
            # as wide as the widest law or note on one line where there is room: a short law ("1") with notes
            # would otherwise get a column so narrow that the notes' words fold
            Column("model", lambda w: [wrap(t, w) for t in texts], max(map(one_line, texts), default=5),
                   minimum=max(map(widest, texts), default=5), want=0, grow=2),
            fixed_column("SMAPE %", [Text(format_figure(m.quality.smape)) for m in self.models], drop=2),
            fixed_column("adj. R²", [Text(format_r2(m.quality.adjusted_r2)) for m in self.models], drop=1),
        ]
        caption = "\n".join(f"{mark} {printable(note)}" for note, mark in marks.items())
        return layout_table(columns, width, caption=caption)


def title_text(title: str, width: int) -> Text:
    """The title broken between words at ``width``, what follows its last `` — `` (``12 models, parameters
    x, y``) kept on one line where it fits: rich alone broke between "parameters" and the names."""
    subject, dash, summary = title.rpartition(" — ")
    if not dash or len(summary) > width:
        pieces = word_pieces(title)
    else:
        pieces = [*word_pieces(subject), "—", summary]
    return wrap([[(piece, "table.title") for piece in pieces]], width)


def _segment_paragraphs(model: Model) -> list[list[Piece]]:
    """A segmented model's laws, one paragraph each, with the range where each holds (``(p < 90.5)``)."""
    if not model.segmented or model.change_point is None:
        return []
    change = model.change_point
    value = format_change_point(change.value)
    out = []
    for k, segment in enumerate(model.segments):
        where = f"({change.parameter} < {value})" if k == 0 else f"({change.parameter} ≥ {value})"
        out.append([(term, "") for term in term_pieces(printable(segment.function.pretty_text()))]
                   + [(where, "magenta")])
    return out


def model_table(models: Iterable[Model], *, title: str | None = None, show_metric: bool = True,
                tree: CallTree | None = None, full_names: bool = False) -> ModelTable:
    """The models as a table; models that could not be made show their note instead (see :class:`ModelTable`)."""
    return ModelTable(models, title=title, show_metric=show_metric, tree=tree, full_names=full_names)
