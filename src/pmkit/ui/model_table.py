"""A rich table of models: one row per call path and metric, with the function and its quality."""

from __future__ import annotations

from collections.abc import Iterable

from rich.table import Table
from rich.text import Text

from pmkit.models import Model
from pmkit.ui.quantities import format_change_point, format_figure, format_r2


def model_table(models: Iterable[Model], *, title: str | None = None, show_metric: bool = True) -> Table:
    """Render models as a table; models that could not be made show their note instead."""
    table = Table(title=Text(title) if title is not None else None, expand=False, show_lines=False,
                  title_justify="left")
    table.add_column("call path", overflow="fold", ratio=3)
    if show_metric:
        table.add_column("metric", overflow="fold")
    table.add_column("model", overflow="fold", ratio=4)
    table.add_column("SMAPE %", justify="right")
    table.add_column("adj. R²", justify="right")
    for model in models:
        if model.function is None:
            text = Text(f"no model: {'; '.join(model.notes) or 'unknown reason'}", style="yellow")
        elif model.segmented and model.change_point is not None:
            change = model.change_point
            value = format_change_point(change.value)
            text = Text()
            for k, segment in enumerate(model.segments):
                where = f"{change.parameter} < {value}" if k == 0 else f"{change.parameter} ≥ {value}"
                text.append(("\n" if k else "") + segment.function.pretty_text())
                text.append(f"  ({where})", style="magenta")
            if model.notes:
                text.append(f"\n{'; '.join(model.notes)}", style="dim")
        else:
            text = Text(model.function.pretty_text())
            if model.notes:
                text.append(f"\n{'; '.join(model.notes)}", style="dim")
        row: list[Text | str] = [Text(model.callpath)]
        if show_metric:
            row.append(Text(model.metric))
        row += [text, format_figure(model.quality.smape), format_r2(model.quality.adjusted_r2)]
        table.add_row(*row)
    return table
