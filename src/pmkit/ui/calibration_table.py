"""A rich view of a calibration reference: one row per (operation, processes, bytes) group."""

from __future__ import annotations

import math

from rich.console import Group as RenderGroup
from rich.console import RenderableType
from rich.text import Text

from pmkit.calibration.reference import Reference
from pmkit.ui.layout import plain_table
from pmkit.ui.quantities import format_figure, format_value

MODEL_STYLES = {"poisson": "green", "exponential": "green", "constant": "cyan", "empirical": "yellow"}


def _bytes(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def calibration_table(reference: Reference, *, title: str | None = None) -> RenderableType:
    """The groups of ``reference`` (op, P, bytes, n, model, χ², t_max), its changes of law in bytes
    (the eager/rendezvous switch) and the notes below them.

    The χ² column is the kept model's statistic (or the better of two rejected ones) against its
    critical value.  A group whose models were both rejected shows ``empirical`` in yellow with a
    star, and the notes below say why, once per distinct reason.
    """
    table = plain_table(title=Text(title) if title else None)
    table.add_column("operation", overflow="fold")
    table.add_column("P", justify="right")
    table.add_column("bytes", justify="right")
    table.add_column("n", justify="right")
    table.add_column("model")
    table.add_column("χ²", justify="right")
    table.add_column("t_max", justify="right")
    for group in reference.groups:
        fits = [f for f in group.fit.fits if math.isfinite(f.chi2)]
        best = group.fit.chosen or (min(fits, key=lambda f: f.chi2) if fits else None)
        chi2 = "–" if best is None else format_figure(best.chi2)
        if best is not None and math.isfinite(best.critical):
            chi2 += f" {'≤' if best.accepted else '>'} {format_figure(best.critical)}"
        model = Text(group.fit.model, style=MODEL_STYLES.get(group.fit.model, ""))
        if group.fit.notes:
            model.append(" *", style="yellow")
        table.add_row(Text(group.op), str(group.nprocs), _bytes(group.nbytes), str(group.fit.n), model, chi2,
                      format_value(group.t_max, "s"))
    lines: list[RenderableType] = [table]
    for (op, nprocs), switch in sorted(reference.protocol_switches().items()):
        lines.append(Text(f"{op} P={nprocs}: {switch.text()}", style="cyan"))
    settings = reference.settings
    window = settings.get("window")
    lines.append(Text(f"q_max {settings.get('q_max')} · α {settings.get('alpha')} · window "
                      f"{window if window == 'auto' else format_value(float(window), 's')} · critical values "
                      f"{settings.get('critical')} · segments {settings.get('segments', 'auto')}", style="dim"))
    for note in reference.notes:
        lines.append(Text(f"note: {note}", style="yellow"))
    by_note: dict[str, list[str]] = {}
    for group in reference.groups:
        for note in group.fit.notes:
            by_note.setdefault(note, []).append(f"{group.op} P={group.nprocs} bytes={_bytes(group.nbytes)}")
    for note, groups in by_note.items():
        where = ", ".join(groups[:3]) + (f" and {len(groups) - 3} more" if len(groups) > 3 else "")
        lines.append(Text(f"* {note} — {len(groups)} group{'s' if len(groups) > 1 else ''}: {where}",
                          style="yellow"))
    return RenderGroup(*lines)
