"""What the growth column says about a call path, in the call tree, the ranking, the detail and Markdown.

One function, :func:`growth_words`, decides it for every view (:func:`growth_cell` for a report's
row): a law that grows towards the target reads as its growth class along the parameter that
changes (``p``, ``log p``, ``p^1.5``, coloured by :attr:`~pmkit.growth.Growth.level`); any other law
as its :class:`~pmkit.trend.Trend` along that parameter — "falls as 1/p", "flattens at 2.0 s", "grows
again beyond p ≈ 900", "negative beyond p ≈ 34" — and a law with no such parameter (several change
at once) as its growth class.  :func:`growth_pieces` says where a long text may break.
"""

from __future__ import annotations

import math
import re

from rich.text import Text

from pmkit.growth import growth_of
from pmkit.names import printable
from pmkit.scaling import CallpathScaling, ScalingReport
from pmkit.trend import Trend, about
from pmkit.ui.quantities import format_number, format_value, growth_style

STATE_STYLES = {"falls": "green", "turns": "yellow", "flattens": "green", "constant": "green",
                "grows again": "dark_orange", "peaks": "cyan", "negative": "bold red"}
"""Colour of a trend by its state; in a strong-scaling analysis a law that stopped falling is yellow
(:data:`STOPPED_STYLES`): it limits the speed-up."""
STOPPED_STYLES = {"flattens": "yellow", "constant": "yellow"}
TREND_VERBS = ("falls", "flattens", "grows", "negative", "constant")
"""The first words of a trend's text (:meth:`pmkit.trend.Trend.words`); a growth class begins otherwise."""


def growth_cell(row: CallpathScaling, report: ScalingReport) -> Text:
    """:func:`growth_words` for a row of ``report``."""
    strong = report.strong is not None and not report.strong.summed
    return growth_words(row, report.trend(row.index), report.unit, strong)


def growth_words(row: CallpathScaling, trend: Trend | None, unit: str, strong: bool = False) -> Text:
    """The growth column's text for ``row`` in its colour, given its law's ``trend`` towards the target; ``–``
    without a model (see the module's documentation).  ``unit`` writes the value a law flattens at;
    ``strong`` (a strong-scaling analysis of values per process) colours a law that stopped falling
    yellow (summed over processes, a constant is ideal).  Outside a
    strong-scaling analysis a law that already grows again at the largest measured point reads as its
    growth class: where it turned is a detail of the smallest runs there, not a limit."""
    if row.growth_class is None or not row.has_model:
        return Text("–", style="dim")
    if trend is None:
        return Text(printable(row.growth_class.label), style=growth_style(row.growth_class.level))
    if trend.state == "grows" or (trend.state == "grows again" and trend.turned_before and not strong):
        along = growth_of(trend.behaviour.function) or row.growth_class  # the class along the parameter
        return Text(printable(along.label), style=growth_style(along.level))
    state = trend.state
    style = (STOPPED_STYLES.get(state) if strong else None) or STATE_STYLES[state]
    return Text(printable(trend.words(lambda v: format_value(v, unit))), style=style)


def growth_pieces(text: str) -> list[str]:
    """Where a growth text may break: after ``·`` in a growth class (``p·log p`` → ``p``, ``·log p``), between
    words in a trend's words, keeping ``p ≈ 900`` and ``2.0 s`` whole; each piece after the first keeps its
    separator."""
    if text.split(" ", 1)[0] not in TREND_VERBS:
        return [part if n == 0 else "·" + part for n, part in enumerate(text.split("·"))]
    return [piece if n == 0 else " " + piece for n, piece in enumerate(re.split(r"(?<![\d≈]) (?!≈)", text))]


def wrap_growth(text: Text, width: int) -> Text:
    """A growth text broken into lines of at most ``width`` between its :func:`growth_pieces`."""
    if text.cell_len <= width:
        return text
    out = Text(style=text.style)
    used = 0
    for piece in growth_pieces(text.plain):
        if used and used + len(piece) > width:
            out.append("\n")
            used = 0
            piece = piece[1:]
        out.append(piece)
        used += len(piece)
    for span in text.spans:
        out.stylize(span.style)
    return out


def widest_piece(text: str) -> int:
    """The narrowest width :func:`wrap_growth` lays ``text`` out at without folding a piece."""
    return max((len(piece.lstrip(" ·")) for piece in growth_pieces(text)), default=1)


def trend_summary(trend: Trend, unit: str) -> str:
    """The detail view's line on a law's behaviour: ``falls as 1/p, grows again beyond p ≈ 45 · ∝ p^-0.98 at
    p=128 · minimum 12.6 ms at p ≈ 45``, with the value it flattens at and where it turns negative."""
    b = trend.behaviour
    p = trend.parameter
    parts = [b.text()]
    exponent = trend.local_exponent
    if math.isfinite(exponent) and not trend.negative:
        parts.append(f"∝ {p}^{exponent:.2f} at {p}={format_number(trend.at)}")
    if b.limit is not None and b.kind != "constant":
        parts.append(f"flattens at {format_value(b.limit, unit)}")
    if b.turning_point is not None and b.minimum is not None:
        parts.append(f"minimum {format_value(b.minimum, unit)} at {p} ≈ {about(b.turning_point)}")
    if b.negative_from is not None and "negative" not in parts[0]:
        parts.append(f"negative beyond {p} ≈ {about(b.negative_from)}")
    return printable(" · ".join(parts))
