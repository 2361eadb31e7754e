"""A rich listing of installed plugins: what each registers, from which package, and any failure."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from pmkit.hookspecs import KINDS
from pmkit.plugins import PluginFailure, Registration, Registry


def _options_text(row: Registration) -> Text:
    text = Text()
    for option in row.options:
        choices = f" ({'|'.join(map(str, option.choices))})" if option.choices else ""
        text.append(f"\n• {option.name}={option.text(option.default)}", style="cyan")
        text.append(f"{choices}: {option.help}", style="dim")
    return text


def _table(title: str) -> Table:
    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                  show_edge=False, pad_edge=False, expand=False)
    table.add_column("name", no_wrap=True)
    table.add_column("from", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("description", overflow="fold", ratio=1)
    return table


OPTION_FLAGS = {"reader": "-R", "modeler": "-O", "prior": "-P", "detector": "-D"}
"""The command-line flag that sets an option of each kind of plugin (``-R values=inclusive``)."""


def plugin_table(registry: Registry, *, options: bool = False) -> Group:
    """Readers, modelers, priors and detectors, one table per kind, then plugins that failed to load.

    With ``options`` each object's declared options (name, default, help) follow its description, and
    each table's title names the flag that sets them (``readers — options: -R NAME=VALUE``): the listing
    alone did not say how to give one.
    """
    parts = []
    rows = registry.rows()
    for kind in KINDS:
        flag = OPTION_FLAGS.get(kind)
        table = _table(f"{kind}s — options: {flag} NAME=VALUE" if options and flag else f"{kind}s")
        for row in rows:
            if isinstance(row, Registration) and row.kind == kind:
                style = "green" if row.status == "ok" else "yellow"
                detail = Text(row.error or row.description)
                if options and row.status == "ok":
                    detail.append_text(_options_text(row))
                table.add_row(row.name, f"{row.plugin} {row.version}".strip(), Text(row.status, style=style),
                              detail)
        if table.row_count:
            parts.append(table)
        else:
            parts.append(Text(f"{kind}s: none installed", style="dim"))
        parts.append(Text(""))
    failures = [row for row in rows if isinstance(row, PluginFailure)]
    if failures:
        table = _table("plugins that failed to load (skipped)")
        for row in failures:
            table.add_row(row.name, f"{row.plugin} {row.version}".strip(), Text(f"failed ({row.stage})", style="red"),
                          Text(row.error, style="red"))
        parts.append(table)
    return Group(*parts)
