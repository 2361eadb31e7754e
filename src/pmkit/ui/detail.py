"""The detail view of one call path: model and quality, measured points with spread, predictions, plot."""

from __future__ import annotations

import math

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from pmkit.detail import CallpathDetail, Prediction
from pmkit.models import Model
from pmkit.names import printable, short_name
from pmkit.trend import about
from pmkit.ui.call_tree import model_text, value_text
from pmkit.ui.growth_column import growth_words, trend_summary
from pmkit.ui.interval import growth_interval_text
from pmkit.ui.plot import MeasurementPlot, plot_data
from pmkit.ui.quantities import (
    format_change,
    format_change_point,
    format_count,
    format_figure,
    format_growth_factor,
    format_number,
    format_point,
    format_r2,
    format_share,
    format_spread,
    format_value,
)


def summary_view(detail: CallpathDetail) -> Table:
    """Key/value lines: the model (pretty and Extra-P notation), growth, quality, modeler and notes."""
    row = detail.row
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("call path", Text(printable(row.callpath), style="bold"))
    short = short_name(row.name)
    if short != row.name:
        grid.add_row("function", Text(printable(short)))
    grid.add_row("model", model_text(row, digits=4))
    model = row.model
    if model is not None and model.function is not None:
        grid.add_row("as text", Text(printable((row.law or model.function).extrap_text(6)), style="dim"))
        for label, text in segment_lines(model):
            grid.add_row(label, text)
        span = growth_span(detail)
        grid.add_row("growth", growth_words(row, detail.trend, detail.unit, detail.strong).append(span, style=""))
        if detail.trend is not None:
            grid.add_row(f"along {printable(detail.trend.parameter)}", trend_summary(detail.trend, detail.unit))
        q = model.quality
        grid.add_row("quality", f"SMAPE {format_figure(q.smape, 3, '%')}  adj. R² {format_r2(q.adjusted_r2)}  "
                                f"RSS {format_figure(q.rss)}  CV-SMAPE {format_figure(q.cv_smape, 3, '%')}")
    if model is not None:
        points = f", {format_count(model.n_points, 'point')}" if model.n_points else ""
        grid.add_row("modeler", Text(printable(model.modeler or "–") + points))
        for note in detail.notes:
            grid.add_row("note", Text(printable(note), style="italic"))
    then = f", {format_share(row.predicted_share)} at the target" if detail.no_target is None else ""
    grid.add_row("share", f"{format_share(row.share)} of the total now{then}")
    for stored in detail.stored:
        function = stored.model.function
        text = Text(f"{printable(stored.name)}: ", style="bold")
        text.append(printable(function.pretty_text()) if function is not None
                    else printable("no model: " + "; ".join(stored.model.notes)))
        if function is not None:
            text.append(f"  ({format_figure(stored.at_target)} at {format_point(detail.target)})", style="dim")
        grid.add_row("stored", text)
    return grid


def segment_lines(model: Model) -> list[tuple[str, str]]:
    """For a segmented model: the change point with its interval, then each segment's range, law and
    the measured values it was fitted on."""
    if not model.segmented or model.change_point is None:
        return []
    change = model.change_point
    name = change.parameter
    value = format_change_point(change.value)
    lines = [("change", f"{name} ≈ {value}, between {format_number(change.low)} and {format_number(change.high)}")]
    for k, segment in enumerate(model.segments):
        where = f"{name} < {value}" if k == 0 else f"{name} ≥ {value}"
        lo, hi = segment.measured
        lines.append(("segment", f"{where}: {segment.function.pretty_text(4)}  (fitted on {name}="
                                 f"{format_number(lo)}…{format_number(hi)})"))
    return lines


def growth_span(detail: CallpathDetail) -> str:
    """``  ×16 from p=512 to p=8192`` after the growth words; empty when there is no factor (a negative
    prediction)."""
    if format_growth_factor(detail.row.growth) == "–":
        return ""
    factor = growth_interval_text(detail.row).plain
    return f"  {factor} from {format_point(detail.reference)} to {format_point(detail.target)}"


def interval_text(prediction: Prediction, unit: str) -> str:
    """A prediction's 90% interval, ``412 ms … 1.30 s``; empty where it has none, and for a negative
    prediction (the model does not hold there, and says so)."""
    if not (math.isfinite(prediction.low) and math.isfinite(prediction.high)) or prediction.value < 0:
        return ""
    return f"{format_value(prediction.low, unit)} … {format_value(prediction.high, unit)}"


def points_view(detail: CallpathDetail) -> Table:
    """Measured points: repetitions, mean, spread, min and max, the model's value and its error."""
    unit = detail.unit
    left_out = any(p.left_out for p in detail.points)
    table = Table(box=box.SIMPLE_HEAD, title="Measured", title_justify="left", pad_edge=False, show_edge=False,
                  collapse_padding=True, caption="* left out as an outlier: the model and its quality figures are "
                  "of the other points" if left_out else None, caption_justify="left", caption_style="dim")
    table.add_column("point", overflow="fold")
    table.add_column("reps", justify="right", no_wrap=True)
    table.add_column("mean", justify="right", no_wrap=True)
    table.add_column("±", justify="right", no_wrap=True)
    table.add_column("min", justify="right", no_wrap=True)
    table.add_column("max", justify="right", no_wrap=True)
    table.add_column("model", justify="right", no_wrap=True)
    table.add_column("error", justify="right", no_wrap=True)
    for p in detail.points:
        error = Text(format_change(p.relative_error))
        if math.isfinite(p.relative_error) and abs(p.relative_error) > max(0.1, 2 * _or_zero(p.spread)):
            error.stylize("yellow")
        table.add_row(printable(p.label) + ("*" if p.left_out else ""), str(p.repetitions), format_value(p.mean, unit),
                      format_spread(p.spread),
                      format_value(p.minimum, unit), format_value(p.maximum, unit),
                      format_value(p.fitted, unit), error)
    return table


def _or_zero(value: float) -> float:
    return value if math.isfinite(value) else 0.0


def predictions_view(detail: CallpathDetail) -> Table:
    """The model's predictions at growing scales up to the target, with the factor over the largest point."""
    table = Table(box=box.SIMPLE_HEAD, title="Predicted", title_justify="left", pad_edge=False, show_edge=False,
                  collapse_padding=True)
    table.add_column("point", overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("× now", justify="right", no_wrap=True)
    intervals = [interval_text(p, detail.unit) for p in detail.predictions]
    if any(intervals):
        table.add_column("90% interval", justify="right", no_wrap=True)
    fitted = detail.row.fitted
    for prediction, interval in zip(detail.predictions, intervals, strict=True):
        value = prediction.value
        factor = value / fitted if math.isfinite(fitted) and fitted > 0 else math.nan
        cells = [format_point(prediction.point), value_text(value, detail.unit), format_growth_factor(factor)]
        table.add_row(*cells, *([interval] if any(intervals) else []))
    return table


def negative_line(detail: CallpathDetail) -> str:
    """The detail's loud line when the model is negative at the target: where it turns negative, and that it
    is left out of the predicted total and the shares; empty otherwise."""
    row = detail.row
    if not (row.has_model and row.negative):
        return ""
    trend = detail.trend
    since = (f" (from {trend.parameter} ≈ {about(trend.behaviour.negative_from)})"
             if trend is not None and trend.behaviour.negative_from is not None else "")
    return (f"! the model is negative at {format_point(detail.target)}{since}: it does not hold that far, and the "
            "call path is left out of the predicted total and the shares then")


def detail_view(detail: CallpathDetail, *, plot_height: int = 12) -> Group:
    """Summary, measured points, predictions and the plot of measurements against the model."""
    parts: list[RenderableType] = [summary_view(detail)]
    warning = negative_line(detail)
    if warning:
        parts.append(Text(warning, style="bold red"))
    parts += [Text(""), points_view(detail)]
    if detail.predictions:
        parts += [Text(""), predictions_view(detail)]
    plot = plot_data(detail)
    if plot is not None:
        parts += [Text(""), MeasurementPlot(plot, detail.unit, height=plot_height)]
    return Group(*parts)
