"""A terminal plot of measurements against a model, drawn with braille dots and rich styles.

:func:`plot_data` lays one call path's detail out along one parameter (:class:`PlotData`);
:class:`MeasurementPlot` draws it: the model is a braille line (dotted where it extrapolates beyond
the measurements), each measured mean a ``●`` with its min–max range as a vertical bar; a segmented
model's line follows each segment's law and a dim ``┊`` column marks its change point.  Axes are
log-scaled as the layout says; the plot fills the width it is given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from pmkit.detail import CallpathDetail
from pmkit.models import Model
from pmkit.names import printable
from pmkit.ui.quantities import format_change_point, format_number, format_point, format_tick

LOG_AXIS_RATIO = 32.0
"""A plot's parameter axis is logarithmic from this ratio of its largest to smallest value on: on a
linear axis from 8 to 32768 every measured point would crowd into the first column."""

CURVE_SAMPLES = 256
"""Points at which the model's line is sampled."""


@dataclass(frozen=True)
class PlotData:
    """Measurements and model along one parameter, the others fixed, for a plot.

    ``curve_x``/``curve_y`` sample the model from the smallest measured value to the target;
    ``log_x`` is set when the measured values are powers of two or the axis spans a factor of
    :data:`LOG_AXIS_RATIO` or more; ``log_y`` when the values span more than two decades, or more
    than one on a log ``x`` axis (a power law is then a straight line).  ``change_at`` is a segmented
    model's change point when it lies along the plotted parameter (None otherwise).
    """

    parameter: str
    fixed: dict[str, float]
    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    curve_x: np.ndarray
    curve_y: np.ndarray
    measured_until: float
    log_x: bool
    log_y: bool
    change_at: float | None = None


def plot_data(detail: CallpathDetail) -> PlotData | None:
    """The layout of ``detail``'s plot: along the parameter that grows to the target (the one with the
    most measured values among them), the others fixed at the largest point; None without a point to show."""
    parameter = _plotted_parameter(detail)
    fixed = {name: v for name, v in detail.reference.items() if name != parameter}
    line = [p for p in detail.points
            if all(p.coordinates[k] == v for k, v in fixed.items()) and math.isfinite(p.mean)]
    if not line:
        return None
    x = np.array([p.coordinates[parameter] for p in line])
    low = np.array([p.minimum for p in line])
    high = np.array([p.maximum for p in line])
    lo_x, hi_x = float(x.min()), max(float(x.max()), detail.target[parameter])
    log_x = powers_of_two(x) or (lo_x > 0 and hi_x / lo_x >= LOG_AXIS_RATIO)
    curve_x = np.geomspace(lo_x, hi_x, CURVE_SAMPLES) if log_x and lo_x > 0 else np.linspace(lo_x, hi_x, CURVE_SAMPLES)
    model = detail.row.model
    curve_y = _curve(model, parameter, curve_x, fixed)
    change = model.change_point if model is not None and model.segmented else None
    change_at = change.value if change is not None and change.parameter == parameter else None
    return PlotData(parameter, fixed, x, np.array([p.mean for p in line]), low, high, curve_x, curve_y,
                    float(x.max()), log_x, _log_y(low, high, curve_y, log_x), change_at)


def _plotted_parameter(detail: CallpathDetail) -> str:
    """The parameter a plot runs along: of those that change towards the target, one the law grows with (a
    law in ``size`` alone drawn along ``p`` is a flat line while the growth column says ×15), then the one
    measured at the most values, then the first."""
    params = list(detail.reference)
    spans = {name: len({p.coordinates[name] for p in detail.points}) for name in params}
    changing = [name for name in params if detail.target[name] != detail.reference[name]]
    model = detail.row.model
    law = detail.row.law or (model.function if model is not None else None)
    used = {f.parameter for t in getattr(law, "terms", ()) if t.coefficient != 0 for f in t.factors
            if not f.is_trivial}
    return max(changing or params, key=lambda name: (name in used, spans[name], -params.index(name)))


def _curve(model: Model | None, parameter: str, curve_x: np.ndarray, fixed: dict[str, float]) -> np.ndarray:
    """The model along ``curve_x`` (each point by the law that holds there)."""
    if model is None or model.function is None:
        return np.full(len(curve_x), np.nan)
    columns = {name: np.full(len(curve_x), value) for name, value in fixed.items()}
    columns[parameter] = curve_x
    with np.errstate(all="ignore"):
        curve_y = np.asarray(model.evaluate({n: columns[n] for n in model.function.parameters}), dtype=float)
    return np.broadcast_to(curve_y, curve_x.shape).copy()


def _log_y(low: np.ndarray, high: np.ndarray, curve_y: np.ndarray, log_x: bool) -> bool:
    values = np.concatenate([low, high, curve_y[np.isfinite(curve_y)]])
    positive = values[values > 0]
    ratio = positive.max() / positive.min() if len(positive) > 1 else 1.0
    return bool(len(positive) == len(values) and (ratio > 100 or (log_x and ratio > 10)))


def powers_of_two(values: np.ndarray) -> bool:
    """Whether the positive ``values`` (two or more) are all powers of two."""
    values = values[values > 0]
    if len(values) < 2:
        return False
    logs = np.log2(values)
    return bool(np.allclose(logs, np.round(logs)))

_DOTS = ((0x01, 0x02, 0x04, 0x40), (0x08, 0x10, 0x20, 0x80))
"""Braille bit of the dot at (column 0..1, row 0..3) of a cell."""

MEASURED, MODEL, EXTRAPOLATED, RANGE, CHANGE = "measured", "model", "extrapolated", "range", "change"
STYLES = {MEASURED: Style(color="bright_white", bold=True), MODEL: Style(color="cyan"),
          EXTRAPOLATED: Style(color="magenta"), RANGE: Style(color="yellow"), CHANGE: Style(color="magenta", dim=True)}


class _Axis:
    """Maps data values to dot positions, linearly or logarithmically."""

    def __init__(self, low: float, high: float, dots: int, log: bool, flip: bool = False) -> None:
        self.log = log and low > 0 and high > 0
        self.low, self.high = (math.log10(low), math.log10(high)) if self.log else (low, high)
        if self.high - self.low <= 0:
            pad = abs(self.low) * 0.1 or 1.0
            self.low, self.high = self.low - pad, self.high + pad
        self.dots = dots
        self.flip = flip

    def position(self, value: float) -> float:
        v = math.log10(value) if self.log else value
        frac = (v - self.low) / (self.high - self.low)
        pos = frac * (self.dots - 1)
        return (self.dots - 1) - pos if self.flip else pos

    def value(self, position: float) -> float:
        frac = ((self.dots - 1) - position if self.flip else position) / (self.dots - 1)
        v = self.low + frac * (self.high - self.low)
        return 10 ** v if self.log else v


def nice_ticks(low: float, high: float, log: bool, most: int = 5) -> list[float]:
    """Round values to label an axis from ``low`` to ``high``: powers of ten on a log axis spanning two
    or more of them, else 1, 2, 5 times a power of ten; at most ``most``, spread over the range."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    if log and low > 0:
        first, last = math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9)
        if last - first >= 1:
            step = math.ceil((last - first + 1) / most)
            return [10.0 ** k for k in range(first, last + 1, step)]
        ticks = [m * 10.0 ** k for k in range(first - 1, last + 1) for m in (1, 2, 5)]
        ticks = [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]
        if len(ticks) >= 2:
            return ticks[:: math.ceil(len(ticks) / most)]
    raw = (high - low) / (most - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda s: abs(math.log(s / raw)))
    start = math.ceil(low / step - 1e-9)
    return [float(f"{k * step:.12g}") for k in range(start, math.floor(high / step + 1e-9) + 1)]


class MeasurementPlot:
    """A rich renderable: ``console.print(MeasurementPlot(plot_data(detail), unit="s"))``."""

    def __init__(self, data: PlotData, unit: str = "", height: int = 12) -> None:
        self.data = data
        self.unit = unit
        self.height = max(4, height)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(40, options.max_width)

    def _y_range(self) -> tuple[float, float]:
        d = self.data
        values = np.concatenate([d.low, d.high, d.mean, d.curve_y])
        values = values[np.isfinite(values)]
        if d.log_y:
            values = values[values > 0]
        if not len(values):
            return 0.0, 1.0
        low, high = float(values.min()), float(values.max())
        if not d.log_y:
            low = min(low, 0.0) if low >= 0 and low < 0.25 * high else low
        return low, high

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        d = self.data
        y_low, y_high = self._y_range()
        rows = self.height
        y_axis = _Axis(y_low, y_high, rows * 4, d.log_y, flip=True)
        label_rows = {}
        for tick in nice_ticks(y_low, y_high, y_axis.log):
            row = int(y_axis.position(tick) // 4)
            if 0 <= row < rows and all(abs(row - other) >= 2 for other in label_rows):
                label_rows[row] = format_tick(tick, self.unit)
        parameter = printable(d.parameter)
        label_width = max(len(parameter), *(len(t) for t in label_rows.values()))
        cols = max(10, options.max_width - label_width - 2)
        x_low, x_high = float(min(d.x.min(), d.curve_x.min())), float(max(d.x.max(), d.curve_x.max()))
        x_axis = _Axis(x_low, x_high, cols * 2, d.log_x)
        bits = np.zeros((rows, cols), dtype=np.int64)
        kind: list[list[str | None]] = [[None] * cols for _ in range(rows)]
        marks: dict[tuple[int, int], str] = {}

        def dot(x: int, y: int, what: str) -> None:
            if 0 <= x < cols * 2 and 0 <= y < rows * 4:
                bits[y // 4, x // 2] |= _DOTS[x % 2][y % 4]
                current = kind[y // 4][x // 2]
                if current is None or what in (MEASURED, RANGE) or current == EXTRAPOLATED:
                    kind[y // 4][x // 2] = what

        self._draw_curve(x_axis, y_axis, dot)
        for x, mean, low, high in zip(d.x, d.mean, d.low, d.high, strict=True):
            if not math.isfinite(mean) or (d.log_y and mean <= 0):
                continue
            px = round(x_axis.position(x))
            if math.isfinite(low) and math.isfinite(high) and high > low and (not d.log_y or low > 0):
                top, bottom = round(y_axis.position(high)), round(y_axis.position(low))
                for py in range(top, bottom + 1):
                    dot(px, py, RANGE)
            py = round(y_axis.position(mean))
            if 0 <= py < rows * 4 and 0 <= px < cols * 2:
                marks[(py // 4, px // 2)] = "●"

        change_col = None
        if d.change_at is not None and x_low <= d.change_at <= x_high:
            change_col = round(x_axis.position(d.change_at)) // 2
        for r in range(rows):
            label = label_rows.get(r, "")
            yield Segment(label.rjust(label_width) + " ┤" if label else " " * label_width + " │", Style(dim=True))
            for c in range(cols):
                if (r, c) in marks:
                    yield Segment(marks[(r, c)], STYLES[MEASURED])
                elif bits[r, c]:
                    yield Segment(chr(0x2800 + int(bits[r, c])), STYLES[kind[r][c] or MODEL])
                elif c == change_col:
                    yield Segment("┊", STYLES[CHANGE])
                else:
                    yield Segment(" ")
            yield Segment.line()
        yield Segment(" " * label_width + " └" + "─" * cols, Style(dim=True))
        yield Segment.line()
        yield Segment(parameter.rjust(label_width) + "  " + self._x_labels(x_axis, cols), Style(dim=True))
        yield Segment.line()
        yield from console.render(self._legend(label_width + 2), options)

    def _draw_curve(self, x_axis: _Axis, y_axis: _Axis, dot) -> None:
        d = self.data
        finite = np.isfinite(d.curve_y) & ((d.curve_y > 0) if d.log_y else True)
        if finite.sum() < 2:
            return
        cx = np.array([x_axis.position(v) for v in d.curve_x[finite]])
        cy = np.array([y_axis.position(v) for v in d.curve_y[finite]])
        previous = None
        for px in range(math.ceil(cx.min()), math.floor(cx.max()) + 1):
            py = round(float(np.interp(px, cx, cy)))
            py = min(max(py, -1), y_axis.dots)
            beyond = x_axis.value(px) > d.measured_until * (1 + 1e-9)
            if beyond and px % 2:
                previous = None
                continue
            what = EXTRAPOLATED if beyond else MODEL
            if previous is None:
                dot(px, py, what)
            else:
                step = 1 if py >= previous else -1
                for y in range(previous + step if py != previous else py, py + step, step):
                    dot(px, y, what)
            previous = py

    def _x_labels(self, x_axis: _Axis, cols: int) -> str:
        d = self.data
        line = [" "] * cols
        ticks = [*sorted(set(d.x.tolist())), float(d.curve_x.max())]
        placed_until = -1
        for i, value in enumerate(ticks):
            text = format_number(value)
            centre = int(x_axis.position(value)) // 2
            start = min(max(centre - len(text) // 2, 0), cols - len(text))
            last = i == len(ticks) - 1
            if last and start <= placed_until:
                # the target label wins over the measured one it would overlap
                for j in range(max(start - 1, 0), cols):
                    line[j] = " "
            elif start <= placed_until:
                continue
            line[start:start + len(text)] = list(text)
            placed_until = start + len(text)
        return "".join(line).rstrip()

    def _legend(self, indent: int) -> Text:
        d = self.data
        fixed = f" (at {format_point(d.fixed)})" if d.fixed else ""
        axes = [printable(name) for name, on in ((d.parameter, d.log_x), (self.unit or "value", d.log_y)) if on]
        text = Text(" " * indent)
        text.append("●", STYLES[MEASURED]).append(" mean  ")
        text.append("⡇", STYLES[RANGE]).append(" min–max  ")
        text.append("⠤⠤", STYLES[MODEL]).append(" model  ")
        text.append("⠄⠄", STYLES[EXTRAPOLATED]).append(f" extrapolated{fixed}")
        if d.change_at is not None:
            text.append("  ")
            text.append("┊", STYLES[CHANGE]).append(f" change at {d.parameter} ≈ {format_change_point(d.change_at)}")
        if axes:
            text.append(f"  log axes: {', '.join(axes)}", Style(dim=True))
        return text
