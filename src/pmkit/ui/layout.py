"""Column layout for pmkit's tables: numbers whole, models broken between terms, columns given up in order.

A table is a list of :class:`Column` s.  Each knows its natural width (everything on one line), the
width it wants at least before another column is given up for it, and the narrowest it can be laid
out at: a number column is never narrower than its widest number; a model column is as narrow as
its widest term (a model breaks only between terms, :func:`term_pieces`); a name column breaks
between call path elements and words (:func:`break_text`) and folds a single name only when nothing
else is left to give.  :func:`fit` chooses the widths for the width a table is printed at: all at
their natural width when they fit; else every column at what it wants, giving up columns one by one
in their stated ``drop`` order until they do; else narrower than wanted, down to the minimum.
:func:`table` builds the rich table, and says in its note (under it, wrapped at the console's width
rather than the table's, so a narrow table does not squeeze its legend) which columns were left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.ui.table_rows import covered, render_rows

Piece = tuple[str, str]
"""A piece of text that is never broken, and its style."""


@dataclass
class Column:
    """A column: its header, and its cells laid out for a width (``cells(width)``).

    ``natural`` is the width of the widest cell on one line; ``minimum`` the narrowest it can be
    laid out at (default: ``natural``, a column that never narrows); ``want`` the width below which
    a column with a ``drop`` rank is given up first (default: ``natural``).  ``drop`` ranks the
    columns given up when the table does not fit (1 first; 0 never); ``grow`` orders who gets
    spare width first (lower first).  ``continued(row)``, where given, is the text of the lines a
    cell of row ``row`` gets below its own when another cell of the row takes more: a call tree's
    guides, so that its lines do not break where a model wraps onto a second line.
    """

    header: str
    cells: Callable[[int], list[Text]]
    natural: int
    minimum: int | None = None
    want: int | None = None
    drop: int = 0
    grow: int = 9
    justify: str = "left"
    name: str = ""
    style: str = ""
    continued: Callable[[int], str] | None = None
    width: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        header = max((len(word) for word in self.header.split()), default=0)
        self.natural = max(self.natural, max((len(line) for line in self.header.splitlines()), default=0))
        self.minimum = max(header, min(self.natural, self.natural if self.minimum is None else self.minimum))
        self.want = max(self.minimum, min(self.natural, self.natural if self.want is None else self.want))
        self.name = self.name or " ".join(self.header.split())


NARROW = 100
"""Below this many columns the tables separate their columns by one space, not two."""


def gap_for(width: int | None) -> int:
    """Spaces between columns: two, one below :data:`NARROW` columns."""
    return 1 if width is not None and width < NARROW else 2


def fit(columns: Sequence[Column], width: int | None, gap: int) -> tuple[list[Column], list[Column]]:
    """Set each kept column's ``width`` for a table ``width`` wide; returns (kept, given up).

    Without a width every column has its natural width.  Otherwise, in this order: natural widths
    if they fit; every column at its ``want`` (spare width to the lowest ``grow`` first), after
    giving up columns in their ``drop`` order as far as needed; then narrower than wanted, columns
    that can narrow in their ``grow`` order from the last, down to their minimum.
    """
    kept = list(columns)
    dropped: list[Column] = []
    if width is None:
        for column in kept:
            column.width = column.natural
        return kept, dropped
    while True:
        room = width - gap * (len(kept) - 1)
        if sum(c.natural for c in kept) <= room:
            for column in kept:
                column.width = column.natural
            return kept, dropped
        if sum(c.want for c in kept) <= room:  # type: ignore[misc]
            _spread(kept, room)
            return kept, dropped
        droppable = [c for c in kept if c.drop]
        if not droppable:
            break
        gone = min(droppable, key=lambda c: c.drop)
        kept.remove(gone)
        dropped.append(gone)
    room = width - gap * (len(kept) - 1)
    for column in kept:
        column.width = column.want  # type: ignore[assignment]
    excess = sum(c.width for c in kept) - room
    for column in sorted(kept, key=lambda c: -c.grow):
        if excess <= 0:
            break
        give = min(excess, column.width - column.minimum)  # type: ignore[operator]
        column.width -= give
        excess -= give
    return kept, dropped


def _spread(columns: list[Column], room: int) -> None:
    for column in columns:
        column.width = column.want  # type: ignore[assignment]
    spare = room - sum(c.width for c in columns)
    for column in sorted(columns, key=lambda c: c.grow):
        give = min(spare, column.natural - column.width)
        column.width += give
        spare -= give


def table(columns: Sequence[Column], width: int | None, *, title: str | Text | None = None,
          caption: str = "") -> Table:
    """The columns laid out for ``width`` (see :func:`fit`) as a rich table; given-up columns are named
    in the note under it."""
    gap = gap_for(width)
    kept, dropped = fit(columns, width, gap)
    if dropped:
        caption = (caption + "\n" if caption else "") + f"left out at this width: {', '.join(c.name for c in dropped)}"
    view = plain_table(title=title, padding=(0, 1) if gap == 2 else (0, 0))
    view.note = caption
    laid_out = []
    for column in kept:
        view.add_column(column.header, justify=column.justify, width=column.width,  # type: ignore[arg-type]
                        overflow="fold", style=column.style or None)
        laid_out.append(column.cells(column.width))
    for n, row in enumerate(zip(*laid_out, strict=True)):
        height = max((cell.plain.count("\n") + 1 for cell in row), default=1)
        for column, cell in zip(kept, row, strict=True):
            lines = cell.plain.count("\n") + 1
            if column.continued is not None and lines < height:
                cell.append("".join("\n" + column.continued(n) for _ in range(height - lines)), style="dim")
        view.add_row(*row)
    return view


class NotedTable(Table):
    """A table with a dim note under it that wraps at the console's width, where a rich caption would
    wrap at the table's: the legend of a two-column table stays a few lines, not a narrow column."""

    note: str = ""

    def _render(self, console: Console, options: ConsoleOptions, widths: list[int]) -> RenderResult:
        """The header and rows as rich lays them out, without its per-cell machinery where the layout is
        pmkit's own (:func:`pmkit.ui.table_rows.covered`): the same segments, several times faster."""
        if covered(self):
            yield from render_rows(self, console, options, widths)
        else:
            yield from super()._render(console, options, widths)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from super().__rich_console__(console, options)
        if self.note:
            yield Text(self.note, style="dim", justify="left")


def plain_table(*, title: str | Text | None = None, **options: object) -> NotedTable:
    """An empty rich table in the style of every pmkit view: a rule under the header, no outer edge.

    ``options`` go to :class:`rich.table.Table` (a caption, padding)."""
    return NotedTable(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False, show_edge=False,
                 collapse_padding=True, **options)  # type: ignore[arg-type]


_TERMS = re.compile(r" (?=[+-] )")


def term_pieces(model: str) -> list[str]:
    """A model's text split between its terms: ``"2.9e-5 + 2e-5·p"`` → ``["2.9e-5", "+ 2e-5·p"]``."""
    return _TERMS.split(model)


def word_pieces(text: str) -> list[str]:
    """Text split between words."""
    return text.split()


_NUMBER = re.compile(r"[-+]?[\d.,]*\d(?:e[-+]?\d+)?")
UNIT_WORDS = frozenset({"s", "sec", "ms", "msec", "µs", "us", "usec", "ns", "nsec", "B", "KiB", "MiB", "GiB", "TiB",
                        "kB", "MB", "GB", "TB", "bytes", "Hz", "kHz", "MHz", "GHz"})
"""Units a number before them is never parted from when text is broken into lines (``3.31 µs``)."""


def quantity_pieces(text: str) -> list[str]:
    """Text split between words, but a number and the unit after it kept as one piece: ``"took 3.31 µs,
    t_max 4.04 µs"`` → ``["took", "3.31 µs,", "t_max", "4.04 µs"]``, so no line ends in a number whose
    unit starts the next (rich's own wrap breaks at a non-breaking space too, so one cannot hold them)."""
    words = text.split()
    out: list[str] = []
    for word in words:
        if out and _NUMBER.fullmatch(out[-1]) and word.rstrip(",;:.)") in UNIT_WORDS:
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def wrap(paragraphs: Sequence[Sequence[Piece]], width: int) -> Text:
    """Pieces joined by spaces into lines of at most ``width``, each paragraph on a new line; a piece
    longer than the width is folded (the caller keeps the width at least its longest piece)."""
    out = Text()
    for n, pieces in enumerate(paragraphs):
        if n:
            out.append("\n")
        used = 0
        for text, style in pieces:
            if used and used + 1 + len(text) > width:
                out.append("\n")
                used = 0
            elif used:
                out.append(" ")
                used += 1
            while len(text) > width > 0 and used == 0:
                out.append(text[:width] + "\n", style=style)
                text = text[width:]
            out.append(text, style=style)
            used += len(text)
    return out


def widest(paragraphs: Sequence[Sequence[Piece]]) -> int:
    """The longest piece: the narrowest width :func:`wrap` lays the pieces out at without folding one."""
    return max((len(text) for pieces in paragraphs for text, _ in pieces), default=0)


def one_line(paragraphs: Sequence[Sequence[Piece]]) -> int:
    """The width of the longest paragraph on one line."""
    return max((sum(len(t) for t, _ in pieces) + max(len(pieces) - 1, 0) for pieces in paragraphs), default=0)


_ELEMENTS = re.compile(r"(?<=->)")
_BREAKS = re.compile(r"(?<=->)|(?<=::)|(?<=, )|(?<= )|(?<=\()")


def break_text(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``: broken after ``->`` between call path elements, an element
    wider than a line after ``::``, a space or ``(``, and folded inside a word only where a word is wider
    than ``width``."""
    lines: list[str] = []
    line = ""
    for element in (e for e in _ELEMENTS.split(text) if e):
        if line and len(line) + len(element.rstrip()) > width:
            lines.append(line.rstrip())
            line = ""
        if not line and len(element.rstrip()) > width:
            *full, line = _pack(_BREAKS.split(element), width)
            lines += full
        else:
            line += element
    if line or not lines:
        lines.append(line.rstrip())
    return lines


def _pack(tokens: list[str], width: int) -> list[str]:
    """Tokens packed greedily into lines of at most ``width``, a token wider than that folded."""
    lines: list[str] = []
    line = ""
    for token in (t for t in tokens if t):
        stripped = token.rstrip()
        if line and len(line) + len(stripped) > width:
            lines.append(line.rstrip())
            line = ""
        if not line and width > 0:
            while len(stripped) > width:
                lines.append(stripped[:width])
                stripped = stripped[width:]
            token = stripped + token[len(token.rstrip()):]
        line += token
    return [*lines, line]


def longest_token(text: str) -> int:
    """The widest piece :func:`break_text` keeps whole however narrow the line."""
    return max((len(t.rstrip()) for t in _BREAKS.split(text) if t), default=0)


_WORDS = re.compile(r"(?<=, )|(?<= )|(?<=\()")


def longest_word(text: str) -> int:
    """The widest piece of ``text`` between spaces and after ``(``: a C++ name with its scope stays whole."""
    return max((len(t.rstrip()) for t in _WORDS.split(text) if t), default=0)


def longest_element(text: str) -> int:
    """The widest call path element of ``text`` (between ``->``), one with spaces (a signature) by its widest word."""
    return max((longest_word(e) for e in _ELEMENTS.split(text) if e), default=0)
