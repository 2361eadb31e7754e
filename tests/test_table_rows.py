"""pmkit's own layout of table rows (:mod:`pmkit.ui.table_rows`) against rich's, on many generated tables.

Each table is rendered twice: by :class:`~pmkit.ui.layout.NotedTable` (the fast rows where they apply)
and by the same table with rich's ``Table._render``; the segments, the text written to a file and the
text written to a truecolor terminal must be the same, at several console widths.
"""

from __future__ import annotations

import copy
import io
import random

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pmkit.ui.layout import Column, NotedTable, plain_table, table
from pmkit.ui.table_rows import covered

WORDS = ["a", "bc", "def", "model", "2.9e-5", "+", "p²", "·", "log₂(p)", "漢字", "表格", "データ", "😀", "🚀x",
         "é", "straße", "-1.5",
         "a\tb", "\x00", "\x1b[1m", "e\u0301", "1234567", "x" * 13, "全角全角全角全角", "  ", "", "[b]markup[/b]"]
STYLES = ["", "bold", "dim", "yellow", "magenta on blue", "italic red"]


class RichRows(NotedTable):
    """The same table, its rows laid out by rich."""

    def _render(self, console, options, widths):  # type: ignore[no-untyped-def]
        yield from Table._render(self, console, options, widths)


def random_text(rng: random.Random) -> Text | str:
    lines = ["".join(rng.choice(WORDS) + rng.choice([" ", "", "  "]) for _ in range(rng.randrange(0, 6)))
             for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    plain = "\n".join(lines)
    kind = rng.random()
    if kind < 0.1:
        return plain
    text = Text(plain, style=rng.choice(STYLES) if kind < 0.3 else "",
                justify=rng.choice(["left", "right", "center", "full"]) if rng.random() < 0.1 else None)
    if rng.random() < 0.2 and plain:
        start = rng.randrange(len(plain))
        text.stylize(rng.choice(STYLES[1:]), start, rng.randrange(start, len(plain) + 1))
    return text


def random_table(rng: random.Random) -> NotedTable:
    view = plain_table(title=rng.choice([None, "a title", Text("styled title", style="bold")]),
                       padding=rng.choice([(0, 1), (0, 0)]))
    view.note = rng.choice(["", "a note under the table that is long enough to wrap at a narrow width"])
    for _ in range(rng.randrange(1, 6)):
        view.add_column(rng.choice(["h", "adj. R²", "SMAPE %", "two\nlines", "列名", "[i]x[/i]"]),
                        justify=rng.choice(["left", "right", "center"]), width=rng.choice([None, 1, 3, 6, 10, 20]),
                        overflow=rng.choice(["fold", "fold", "crop", "ellipsis"]),
                        style=rng.choice(["", "", "cyan"]), vertical=rng.choice(["top", "top", "middle", "bottom"]))
    for _ in range(rng.choice([0, 1, 3, 8])):
        view.add_row(*(random_text(rng) for _ in view.columns),
                     style=rng.choice([None, None, None, "on red"]))
    return view


def renders(view: NotedTable, width: int) -> tuple[list, str, str]:
    plain = Console(file=io.StringIO(), width=width, highlight=False)
    colour = Console(file=io.StringIO(), width=width, force_terminal=True, color_system="truecolor", highlight=False)
    segments = list(plain.render(view, plain.options))
    plain.print(view)
    colour.print(view)
    return segments, plain.file.getvalue(), colour.file.getvalue()  # type: ignore[attr-defined]


def reference(view: NotedTable) -> NotedTable:
    twin = copy.copy(view)
    twin.__class__ = RichRows
    return twin


@pytest.mark.parametrize("seed", range(15))
def test_generated_tables_render_as_rich_renders_them(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(10):
        view = random_table(rng)
        assert covered(view)
        for width in (12, 40, 80, 200):
            assert renders(view, width) == renders(reference(view), width)


@pytest.mark.parametrize("seed", range(10))
def test_laid_out_tables_render_as_rich_renders_them(seed: int) -> None:
    rng = random.Random(seed)
    cells = [[Text(" ".join(rng.choice(WORDS[:12]) for _ in range(rng.randrange(1, 4)))) for _ in range(20)]
             for _ in range(3)]
    columns = [Column(f"column {n}", lambda w, n=n: cells[n], max(len(t) for t in cells[n]), drop=n,
                      justify=rng.choice(["left", "right"])) for n in range(3)]
    for width in (None, 15, 30, 60, 120):
        view = table(columns, width, title="laid out", caption="a caption")
        for console_width in (20, 80, 160):
            assert renders(view, console_width) == renders(reference(view), console_width)


def test_layouts_it_does_not_cover_are_left_to_rich() -> None:
    view = plain_table()
    view.add_column("x")
    view.add_row("1")
    assert covered(view)
    for change in ({"show_edge": True}, {"show_lines": True}, {"show_footer": True}, {"padding": (1, 1, 1, 1)},
                   {"pad_edge": True}):
        other = copy.copy(view)
        for name, value in change.items():
            setattr(other, name, value)
        assert not covered(other), change
