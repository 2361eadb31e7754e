"""Figures for reports: one call path's measurements and model — or two of them compared — drawn with
matplotlib to SVG, PNG or PDF.

The terminal plot (:mod:`pmkit.ui.plot`) and these figures share one layout, :func:`pmkit.ui.plot.plot_data`:
the same parameter, the same points, the model sampled up to the target, the same choice of log
axes.  Measured means are markers with their min–max range as error bars, the model a solid line
where it is measured and a dashed one where it extrapolates, the target a dotted vertical line.
matplotlib is an optional extra (``pip install 'pmkit-hpc[plot]'``), imported only when a figure is drawn.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from pmkit.detail import CallpathDetail
from pmkit.errors import UsageError
from pmkit.names import metric_name, printable, short_name
from pmkit.ui.plot import plot_data, powers_of_two
from pmkit.ui.quantities import format_point

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}
"""Figure formats by file suffix."""

MISSING = "plotting needs matplotlib, which is not installed: pip install 'pmkit-hpc[plot]'"


def figure_format(path: str | os.PathLike) -> str:
    """The format ``path``'s suffix names; a UsageError for any other suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise UsageError(f"{path}: a figure is written as .svg, .png or .pdf, not {suffix or 'without a suffix'!r}")
    return FORMATS[suffix]


def require_matplotlib() -> None:
    """A UsageError naming the extra to install where matplotlib is missing — checked before the work
    starts, so that a long analysis does not print its whole view and only then fail on its figure."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise UsageError(MISSING)


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError(MISSING) from None
    return Figure


def detail_figure(details: Sequence[tuple[str, CallpathDetail | None]], *, title: str | None = None) -> Any:
    """A matplotlib Figure of each labelled detail's measurements and model (None: that side lacks the call path).

    One detail draws one call path; two (``[("before", a), ("after", b)]``) compare it, in two colours
    on shared axes.  The title defaults to the call path's short name and metric.
    """
    Figure = _figure_class()
    shown = [(label, d, plot_data(d)) for label, d in details if d is not None]
    shown = [(label, d, data) for label, d, data in shown if data is not None]
    if not shown:
        raise UsageError("nothing to plot: the call path has no measured point")
    figure = Figure(figsize=(7.0, 4.4), layout="constrained")
    axes = figure.add_subplot()
    several = len(details) > 1
    first_detail, first = shown[0][1], shown[0][2]
    for n, (label, detail, data) in enumerate(shown):
        colour = f"C{n}"
        prefix = f"{printable(label)}: " if several else ""
        below = np.clip(data.mean - data.low, 0, None)
        above = np.clip(data.high - data.mean, 0, None)
        axes.errorbar(data.x, data.mean, yerr=[below, above], fmt="o", color=colour, capsize=3, markersize=5,
                      label=f"{prefix}measured (mean, min–max)")
        function = detail.row.model.function if detail.row.model is not None else None
        if function is not None and np.isfinite(data.curve_y).any():
            inside = data.curve_x <= data.measured_until * (1 + 1e-9)
            axes.plot(data.curve_x[inside], data.curve_y[inside], color=colour,
                      label=f"{prefix}model {printable(function.pretty_text(3))}")
            beyond = np.flatnonzero(~inside)
            if beyond.size:
                start = max(beyond[0] - 1, 0)
                axes.plot(data.curve_x[start:], data.curve_y[start:], color=colour, linestyle="--",
                          label=f"{prefix}extrapolated")
    target = first_detail.target[first.parameter]
    axes.axvline(target, color="0.5", linestyle=":", linewidth=1, label=f"target {format_point(first_detail.target)}")
    if any(data.log_x for _, _, data in shown):
        base = 2 if all(powers_of_two(data.x) for _, _, data in shown) else 10
        axes.set_xscale("log", base=base)
    if any(data.log_y for _, _, data in shown):
        axes.set_yscale("log")
    fixed = f" (at {format_point(first.fixed)})" if first.fixed else ""
    axes.set_xlabel(printable(first.parameter) + fixed)
    unit = printable(first_detail.unit)
    axes.set_ylabel(metric_name(first_detail.metric) + (f" [{unit}]" if unit else ""))
    axes.set_title(printable(title or f"{short_name(first_detail.row.name)} — {metric_name(first_detail.metric)}"))
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(fontsize="small")
    return figure


def save_figure(figure: Any, stream: IO[bytes], path: str | os.PathLike) -> None:
    """Write ``figure`` to ``stream`` in the format ``path``'s suffix names, without a creation date (so
    the same figure gives the same bytes)."""
    fmt = figure_format(path)
    metadata = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(fmt)
    figure.savefig(stream, format=fmt, metadata=metadata)
