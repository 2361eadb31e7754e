"""The findings panel: what the registered detectors found, worst first, in a panel of its own."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from pmkit.findings import Finding
from pmkit.ui.quantities import format_severity


def _where(finding: Finding) -> str:
    parts = [p for p in (finding.callpath, finding.location) if p]
    return " @ ".join(parts) or "–"


def findings_panel(findings: Sequence[Finding], *, limit: int | None = 20) -> Panel:
    """A panel listing findings (severity, what, where, detector); says so when there are none."""
    if not findings:
        return Panel(Text("No findings.", style="green"), title="Findings", title_align="left", box=box.ROUNDED)
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=False)
    table.add_column("severity", justify="right", no_wrap=True)
    table.add_column("finding", overflow="fold", ratio=3)
    table.add_column("where", overflow="fold", ratio=2)
    table.add_column("by", overflow="fold")
    shown = list(findings) if limit is None else list(findings)[:limit]
    for finding in shown:
        what = Text(finding.title, style="bold")
        if finding.message:
            what.append(f"\n{finding.message}", style="")
        table.add_row(Text(format_severity(finding.severity, finding.unit), style="red"), what, _where(finding),
                      Text(finding.detector, style="dim"))
    more = len(findings) - len(shown)
    subtitle = f"{more} more — see --json" if more > 0 else None
    return Panel(table, title=f"Findings ({len(findings)})", title_align="left", subtitle=subtitle,
                 subtitle_align="left", box=box.ROUNDED)
