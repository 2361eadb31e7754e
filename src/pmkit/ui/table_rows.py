"""The rows of pmkit's tables laid out without rich's per-cell machinery, to the same segments rich makes.

rich renders every cell of a :class:`rich.table.Table` through a ``Padding``, a word wrap, a justify
and two rounds of line splitting and cropping: for a ``pmkit model`` table of 100,000 series that is
most of the time the command spends after modeling.  pmkit's cells are mostly texts that
:mod:`pmkit.ui.layout` has already wrapped to their column's width, so rich's wrap finds nothing to
break and only the justify is left: :func:`render_rows` lays such a cell out directly (each of its
lines justified, the padding after it) and gives the cells it cannot vouch for (a str, a line wider
than its column, a tab, a span of style inside the text, a justify other than left, right, center)
to rich one by one, so a table is the same segment for segment — hence the same text, and the same
colour codes — whichever way each cell went.  Tables in a layout it does not cover (an outer edge,
lines between rows, a footer, padding other than pmkit's) are left to rich whole: it returns None.

Measured (``bench/README.md`` §12, 2 shared cores): ``pmkit model p2_100k.txt --out t.txt`` (100,000
two-parameter series, 100,104 lines) user CPU 57.0 / 52.8 s → 28.2 s (two runs of rich's rows against
one of these; ``--json`` 18.8 s), wall 90.8 / 66.2 → 33.0 s; the outputs are identical (``cmp``), and so
are ``pmkit show`` on the same file (19.1 → 19.9 s, its tables are small) and both commands' colour
output (``FORCE_COLOR=1``, 10,000 series).  A line of ASCII printable characters is measured by its
length, not rich's ``cell_len``: 33.1 → 28.2 s of the above.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from rich._loop import loop_first_last, loop_last
from rich.cells import cell_len
from rich.control import strip_control_codes
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions
    from rich.table import Column, Table

_JUSTIFIED = frozenset({"left", "right", "center"})
_OVERFLOW = frozenset({"fold", "crop", "ellipsis"})
_ALIGN = {"top": Segment.align_top, "middle": Segment.align_middle, "bottom": Segment.align_bottom}


def covered(table: Table) -> bool:
    """Whether :func:`render_rows` lays out ``table``: pmkit's layout (a header and a rule, no edge, no
    footer, no lines between rows, padding only to the right of a column or none)."""
    return (table.box is not None and table.show_header and not table.show_footer and not table.show_edge
            and not table.show_lines and not table.leading and not table.pad_edge and table.collapse_padding
            and tuple(table.padding) in ((0, 1, 0, 1), (0, 0, 0, 0))
            and not any(row.end_section for row in table.rows)
            and all(not c.no_wrap and c.overflow in _OVERFLOW and c.vertical in _ALIGN for c in table.columns))


def render_rows(table: Table, console: Console, options: ConsoleOptions, widths: list[int]) -> Iterator[Segment]:
    """The header, its rule and the rows of a :func:`covered` table at column ``widths`` (padding
    included), as rich's ``Table._render`` yields them."""
    columns = table.columns
    get_style = console.get_style
    padded = any(table.padding)
    rights = [1 if padded and n < len(columns) - 1 else 0 for n in range(len(columns))]
    pad_style = get_style("none")
    box = table.box.substitute(options, safe=table.safe_box if table.safe_box is not None else console.safe_box)  # type: ignore[union-attr]
    border_style = get_style(table.style or "") + get_style(table.border_style or "")
    dividers = [Segment(box.head_vertical, border_style), Segment(box.mid_vertical, border_style),
                Segment(box.foot_vertical, border_style)]
    header_style = get_style(table.header_style or "")
    cell_styles = [get_style(column.style or "") for column in columns]
    header = [(header_style + get_style(column.header_style), column.header, "bottom") for column in columns]
    rows = [[(cell_styles[n], cell, getattr(cell, "vertical", None) or column.vertical)
             for n, (cell, column) in enumerate(zip(column_cells, columns, strict=True))]
            for column_cells in zip(*(column.cells for column in columns), strict=True)]
    new_line = Segment.line()
    for index, (first, last, row) in enumerate(loop_first_last([header, *rows])):
        row_style = Style.null() if first else get_style(table.get_row_style(console, index - 1))
        cells = []
        for width, right, column, (style, renderable, _) in zip(widths, rights, columns, row, strict=True):
            lines = None
            if not first and not row_style:
                lines = _text_lines(console, renderable, width, right, column, style, pad_style)
            if lines is None:
                lines = _rich_lines(console, options, renderable, width, right, column, style + row_style, padded)
            cells.append(lines)
        height = max(len(lines) for lines in cells)
        cells = [lines if len(lines) == height else
                 _ALIGN[vertical](lines, width, height, get_style(style) + row_style)
                 for lines, width, (style, _, vertical) in zip(cells, widths, row, strict=True)]
        divider = dividers[0 if first else (2 if last else 1)]
        if not divider.text.strip():
            divider = Segment(divider.text, row_style.background_style + divider.style)
        for line_no in range(height):
            for last_cell, lines in loop_last(cells):
                yield from lines[line_no]
                if not last_cell:
                    yield divider
            yield new_line
        if first:
            yield Segment(box.get_row(widths, "head", edge=False), border_style)
            yield new_line


def _rich_lines(console: Console, options: ConsoleOptions, renderable: object, width: int, right: int,
                column: Column, style: Style, padded: bool) -> list[list[Segment]]:
    """A cell's lines as rich's table renders them."""
    render_options = options.update(width=width, justify=column.justify, no_wrap=column.no_wrap,
                                    overflow=column.overflow, height=None, highlight=column.highlight)
    cell = Padding(renderable, (0, right, 0, 0)) if padded else renderable  # type: ignore[arg-type]
    return console.render_lines(cell, render_options, style=style)


def _text_lines(console: Console, cell: object, width: int, right: int, column: Column, style: Style,
                pad_style: Style) -> list[list[Segment]] | None:
    """A text cell's lines when rich's wrap would leave it as it is (every line fits its column), else None.

    Each line is justified in the column (right and center after stripping its trailing spaces, as rich
    does) and is one segment: the text's own style when it has one, no style (rich's segment for text
    without spans) when not; then the padding, in the style of rich's ``Padding``."""
    if type(cell) is not Text or cell._spans or pad_style or cell.no_wrap or cell.overflow or cell.end != "\n":
        return None
    justify = cell.justify or column.justify
    inner = width - right
    plain = cell.plain
    if justify not in _JUSTIFIED or inner < 1:
        return None
    text_style = None
    if cell.style:  # rich renders the text's own style as a span over each line, on a null base
        text_style = Style.combine([Style.null(), console.get_style(cell.style, default=Style.null())])
    if style:
        text_style = style + text_style
        pad = Segment(" " * right, style + pad_style) if right else None
    else:
        pad = Segment(" " * right, pad_style) if right else None
    out = []
    for line in plain.split("\n"):
        simple = line.isascii() and line.isprintable()  # one cell a character: its width is its length
        if not simple and ("\t" in line or strip_control_codes(line) != line):
            return None
        size = len(line) if simple else cell_len(line)
        if size > inner or len(line) > inner:
            return None
        if justify == "left":
            line = line + " " * (inner - size)
        elif justify == "right":
            line = line.rstrip()
            line = " " * (inner - (len(line) if simple else cell_len(line))) + line
        else:
            line = line.rstrip()
            line = " " * ((inner - (len(line) if simple else cell_len(line))) // 2) + line
            line = line + " " * (inner - (len(line) if simple else cell_len(line)))
        out.append([Segment(line, text_style), pad] if pad else [Segment(line, text_style)])
    return out
