"""The findings panel: what the registered detectors found, worst first, in a panel of its own."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.panel import Panel
from rich.text import Text

from pmkit.experiment import CallTree
from pmkit.findings import Finding
from pmkit.names import display_names, display_path, printable
from pmkit.ui.layout import (
    Column,
    Piece,
    break_text,
    longest_element,
    longest_token,
    one_line,
    quantity_pieces,
    widest,
    wrap,
)
from pmkit.ui.layout import table as layout_table
from pmkit.ui.quantities import format_severity

PANEL_EDGES = 4
"""Columns a panel takes from its content: a border and a space on each side."""

WHERE = 32
"""The call path column widens up to this (or its longest element) before the finding's text gets the rest."""


class FindingsPanel:
    """Findings (severity, what, where, detector) in a panel laid out for the width it is printed at.

    With the experiment's call ``tree``, call paths are shown in short names (whole with
    ``full_names``), as in the call tree; the finding's text wraps between words, the call path
    between its elements; the severity is never cut.
    """

    def __init__(self, findings: Sequence[Finding], *, limit: int | None = 20, tree: CallTree | None = None,
                 full_names: bool = False) -> None:
        self.findings = list(findings)
        self.shown = self.findings if limit is None else self.findings[:limit]
        self.tree = tree
        self.full_names = full_names

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.panel(options.max_width)

    def _where(self, finding: Finding) -> str:
        path = finding.callpath
        if path and self.tree is not None and path in self.tree:
            path = display_path(self.tree, self.tree.index(path), display_names(self.tree, full=self.full_names))
        parts = [printable(p) for p in (path, finding.location) if p]
        return " @ ".join(parts) or "–"

    def panel(self, width: int | None = None) -> Panel:
        """The panel for ``width`` columns (None: as wide as its content)."""
        if not self.findings:
            return Panel(Text("No findings.", style="green"), title="Findings", title_align="left", box=box.ROUNDED)
        texts: list[list[list[Piece]]] = []
        for finding in self.shown:
            what = [[(word, "bold") for word in printable(finding.title).split()]]
            what += [[(word, "") for word in quantity_pieces(printable(line))] for line in finding.message.splitlines()]
            texts.append(what)
        where = [self._where(f) for f in self.shown]
        severity = [Text(format_severity(f.severity, f.unit), style="red") for f in self.shown]
        detector = [Text(printable(f.detector), style="dim") for f in self.shown]
        least = max((longest_element(w) for w in where), default=5)
        columns = [
            Column("severity", lambda w: severity, max(c.cell_len for c in severity), justify="right"),
            Column("finding", lambda w: [wrap(t, w) for t in texts], max(map(one_line, texts)),
                   minimum=max(map(widest, texts)), want=max(24, max(map(widest, texts))), grow=2),
            Column("where", lambda w: [Text("\n".join(break_text(p, w))) for p in where],
                   min(max(len(p) for p in where), max(least, WHERE)),
                   minimum=min(max(longest_token(w) for w in where), 16), want=least, grow=1),
            Column("by", lambda w: detector, max(c.cell_len for c in detector)),
        ]
        view = layout_table(columns, None if width is None else width - PANEL_EDGES)
        more = len(self.findings) - len(self.shown)
        subtitle = f"{more} more — see --json" if more > 0 else None
        return Panel(view, title=f"Findings ({len(self.findings)})", title_align="left", subtitle=subtitle,
                     subtitle_align="left", box=box.ROUNDED, expand=False)


def findings_panel(findings: Sequence[Finding], *, limit: int | None = 20, tree: CallTree | None = None,
                   full_names: bool = False) -> FindingsPanel:
    """A panel listing findings (severity, what, where, detector); says so when there are none."""
    return FindingsPanel(findings, limit=limit, tree=tree, full_names=full_names)
