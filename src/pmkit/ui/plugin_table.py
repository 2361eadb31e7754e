"""A rich table of installed plugins: what each registers, from which package, and any failure."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from pmkit.plugins import PluginFailure, Registration, Registry


def plugin_table(registry: Registry) -> Table:
    """Every reader, modeler, prior and detector, then every plugin that failed to load."""
    table = Table(title="pmkit plugins", title_justify="left")
    for name in ("name", "kind", "plugin", "version", "status", "description / error"):
        table.add_column(name, overflow="fold")
    for row in registry.rows():
        if isinstance(row, PluginFailure):
            table.add_row("–", "–", row.plugin, row.version, Text(f"failed ({row.stage})", style="red"),
                          Text(row.error, style="red"))
        elif isinstance(row, Registration):
            style = "green" if row.status == "ok" else "yellow"
            detail = row.error or row.description
            table.add_row(row.name, row.kind, row.plugin, row.version, Text(row.status, style=style), detail)
    return table
