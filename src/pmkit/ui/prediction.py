"""Views of per-process models (``pmkit predict``): the calibration, the scenario's runs, and the slowest ranks.

They render a :class:`~pmkit.perprocess.Calibration` and :class:`~pmkit.perprocess.Prediction` they
are given; nothing here fits or predicts.  The rank view stacks each section's predicted time in its
own colour and shading (so it reads without colour too), marks the measured time with ``┃`` and
the mean process with ``╎``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from pmkit.perprocess.calibration import Calibration
from pmkit.perprocess.prediction import Prediction, RunPrediction
from pmkit.ui.quantities import format_share, format_value

SHADES = ("█", "▓", "▒", "░")
COLOURS = ("cyan", "magenta", "green", "yellow", "blue", "red")
MEASURED, MEAN = "┃", "╎"


def _figure(value: float | None, digits: int = 3, suffix: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}g}{suffix}"


def _percent(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.2f}%" if value < 10 else f"{value:.1f}%"


def calibration_header(calibration: Calibration) -> Text:
    """Which model, which runs, how many process samples."""
    spec = calibration.spec
    text = Text()
    text.append("model       ", style="dim")
    text.append(f"{spec.name}", style="bold")
    text.append(f" ({spec.path}) · {len(spec.sections)} sections · total {spec.total}\n")
    text.append("calibrated  ", style="dim")
    text.append(f"{len(calibration.runs)} runs, {calibration.samples} process samples of {spec.metric}\n")
    text.append("parameters  ", style="dim")
    text.append(calibration.parameters)
    if calibration.skipped:
        text.append(f"\n            {len(calibration.skipped)} runs left out (see the warnings)", style="yellow")
    return text


def calibration_table(calibration: Calibration) -> Table:
    """One row per section: the calibrated predictor, its call paths and its fit quality."""
    table = Table(box=box.SIMPLE_HEAD, title="Calibration", title_justify="left", pad_edge=False,
                  show_edge=False, collapse_padding=True)
    table.add_column("section", no_wrap=True)
    table.add_column("predictor", overflow="fold", ratio=1)
    table.add_column("samples", justify="right", no_wrap=True)
    table.add_column("adj. R²", justify="right", no_wrap=True)
    table.add_column("error\nin/LOO", justify="right", no_wrap=True)
    for fit in calibration.sections:
        predictor = Text(fit.formula())
        predictor.append("\n" + ", ".join(fit.callpaths[:3]) + (" …" if len(fit.callpaths) > 3 else ""),
                         style="dim")
        quality = fit.quality
        table.add_row(Text(fit.name, style="bold"), predictor, str(quality.samples), _figure(quality.adjusted_r2, 4),
                      f"{_percent(quality.rms_relative)}\n{_percent(quality.loo_rms_relative)}")
    return table


def section_notes(calibration: Calibration) -> Text | None:
    lines = [f"{fit.name}: {note}" for fit in calibration.sections for note in fit.notes]
    return Text("\n".join(lines), style="dim") if lines else None


def scenario_table(prediction: Prediction) -> Table:
    """One row per scenario run: predicted total, balanced total, imbalance overhead, measured, error."""
    unit = prediction.unit
    measured = any(r.measured is not None for r in prediction.runs)
    table = Table(box=box.SIMPLE_HEAD, title=f"Scenario {prediction.scenario} ({len(prediction.runs)} runs)",
                  title_justify="left", pad_edge=False, show_edge=False, collapse_padding=True)
    table.add_column("run", overflow="fold", ratio=1, min_width=10)
    table.add_column("ranks", justify="right", no_wrap=True)
    table.add_column("predicted", justify="right", no_wrap=True)
    table.add_column("balanced", justify="right", no_wrap=True)
    table.add_column("imbalance", justify="right", no_wrap=True)
    if measured:
        table.add_column("measured", justify="right", no_wrap=True)
        table.add_column("error", justify="right", no_wrap=True)
    for run in prediction.runs:
        predicted = Text(format_value(run.total, unit))
        predicted.append(f"\n±{format_value(run.total_stderr, unit)}", style="dim")
        overhead = Text(format_value(run.overhead, unit), style="red" if run.overhead_share > 0.05 else "")
        overhead.append(f"\n{format_share(run.overhead_share)}", style="dim")
        row: list[RenderableType] = [Text(run.name), str(run.processes), predicted, format_value(run.balanced, unit),
                                     overhead]
        if measured:
            if run.measured is None:
                row += ["–", "–"]
            else:
                value = Text(format_value(run.measured.total, unit))
                if len(run.measured.totals) > 1:
                    value.append(f"\n±{format_value(run.measured.spread, unit)}", style="dim")
                error = run.error
                row += [value, Text(_percent(error), style="red" if error and error > 15 else "")]
        table.add_row(*row)
    return table


def error_summary(prediction: Prediction) -> Text | None:
    """Mean and largest prediction error over the measured runs."""
    errors = prediction.errors
    if not errors:
        return None
    return Text(f"prediction error: mean {_percent(prediction.mean_error)}, max {_percent(prediction.max_error)} "
                f"over {len(errors)} measured runs (|predicted − measured| / measured)")


class RankBars:
    """The ``top`` slowest processes of one run as stacked bars of their predicted section times."""

    def __init__(self, run: RunPrediction, unit: str, top: int = 10) -> None:
        self.run = run
        self.unit = unit
        self.top = top

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run = self.run
        ranks = run.slowest(self.top)
        names = list(run.sections)
        measured = run.measured.process_total if run.measured is not None else None
        title = Text(f"Slowest {len(ranks)} of {run.processes} ranks of {run.name}", style="bold")
        title.append(" — predicted per section", style="")
        if measured is not None:
            title.append(f"; {MEASURED} measured", style="")
        title.append(f"; {MEAN} mean process", style="")
        yield title
        legend = Text("  ")
        for k, name in enumerate(names):
            legend.append(SHADES[k % len(SHADES)] * 2, style=COLOURS[k % len(COLOURS)])
            legend.append(f" {name}  ")
        yield legend
        values = [run.process_total[r] for r in ranks]
        if measured is not None:
            values += [measured[r] for r in ranks]
        scale = max([v for v in values if math.isfinite(v)], default=0.0)
        label_w = max(len(f"rank {r}") for r in ranks) if len(ranks) else 6
        value_w = 9 + (10 if measured is not None else 0)
        width = max(10, options.max_width - label_w - value_w - 3)
        mean = float(run.process_total.mean())
        for rank in ranks:
            line = Text(f"rank {rank}".rjust(label_w) + " ")
            line.append_text(self._bar(rank, names, scale, width, mean, None if measured is None else measured[rank]))
            line.append(" " + format_value(float(run.process_total[rank]), self.unit).rjust(8))
            if measured is not None:
                line.append(" " + format_value(float(measured[rank]), self.unit).rjust(9), style="dim")
            yield line

    def _bar(self, rank: int, names: Sequence[str], scale: float, width: int, mean: float,
             measured: float | None) -> Text:
        cells: list[tuple[str, str]] = []
        done = 0.0
        for k, name in enumerate(names):
            value = float(self.run.sections[name][rank])
            start, done = done, done + max(value, 0.0)
            count = _cells(done, scale, width) - _cells(start, scale, width)
            cells += [(SHADES[k % len(SHADES)], COLOURS[k % len(COLOURS)])] * count
        cells += [(" ", "")] * (width - len(cells))
        marks = [(mean, MEAN, "dim")]
        if measured is not None and math.isfinite(measured):
            marks.append((measured, MEASURED, "bold"))
        for value, char, style in marks:
            position = min(max(_cells(value, scale, width) - 1, 0), width - 1)
            cells[position] = (char, style)
        text = Text()
        for char, style in cells[:width]:
            text.append(char, style=style)
        return text


def _cells(value: float, scale: float, width: int) -> int:
    if scale <= 0 or not math.isfinite(value):
        return 0
    return round(min(value / scale, 1.0) * width)


def prediction_view(calibration: Calibration, prediction: Prediction | None = None, *,
                    runs: Sequence[str] = (), top: int = 10) -> Group:
    """The whole ``pmkit predict`` screen: header, calibration, scenario runs, error and rank bars.

    ``runs`` names the runs whose slowest ranks are drawn (default: the one whose imbalance costs most).
    """
    parts: list[RenderableType] = [calibration_header(calibration), Text(""), calibration_table(calibration)]
    notes = section_notes(calibration)
    if notes is not None:
        parts.append(notes)
    if prediction is None:
        return Group(*parts)
    parts += [Text(""), scenario_table(prediction)]
    summary = error_summary(prediction)
    if summary is not None:
        parts.append(summary)
    for note in prediction.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    chosen = [prediction.run(name) for name in runs] if runs else \
        [max(prediction.runs, key=lambda r: (r.overhead, r.total))] if prediction.runs else []
    for run in chosen:
        parts += [Text(""), RankBars(run, prediction.unit, top)]
    return Group(*parts)
