"""Leave-last-out prediction on real measurements (paper 000, §4.2): pmkit against Extra-P.

For every single-parameter series of each input, the largest measured point is held back, the rest
is modeled by pmkit and by Extra-P's Refining and Basic modelers, and each model predicts the held
back value.  The score is the paper's *mean relative prediction error*: the SMAPE formula averaged
over the held-back points of all series, ``|y - f| / ((|y| + |f|) / 2)`` (0 where both are 0).

    python bench/leave_last_out.py                                    # the Score-P study mm-single
    python bench/leave_last_out.py ../shared/data/extrap-formats/text/one_parameter_*.txt
    python bench/leave_last_out.py --no-extrap                        # pmkit only

Each input is read by pmkit when a pmkit reader recognises it (all repetitions are then given to
both tools), otherwise by Extra-P's own reader (one mean value per point); ``--source`` forces one.
Extra-P is found as every benchmark finds it (:func:`extrap_env.extrap_python`, once: ``PMKIT_EXTRAP_PYTHON``
or ``bench/.extrap-venv``, which it announces before creating); ``--no-extrap`` never looks for it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from extrap_env import (
    EXTRAP_MODELERS,
    extrap_python,
    extrap_version,
    load_with_extrap,
    model_with_extrap,
    run_main,
)
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import pmkit
from pmkit.errors import InputError, PmkitError
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.options import parse_assignments

DEFAULT_INPUT = Path(__file__).resolve().parents[2] / "shared" / "data" / "cube" / "extrap-mm-single"


@dataclass
class SeriesSet:
    """Single-parameter series of one input: x values (sorted), values (series × points × reps)."""

    source: str
    reader: str
    x: np.ndarray
    values: np.ndarray
    labels: list[str]


def read_with_pmkit(path: Path) -> SeriesSet:
    """Every (call path, metric) series of ``path`` as read by pmkit, with all repetitions."""
    experiment = pmkit.read(path)
    if len(experiment.parameters) != 1:
        raise ValueError(f"{path}: {len(experiment.parameters)} parameters; leave-last-out needs one")
    order = np.argsort(experiment.points[:, 0])
    blocks, labels = [], []
    reps = max(v.shape[2] for v in experiment.measurements.values())
    for metric in experiment.metric_names:
        arr = experiment.measurements[metric][:, order, :]
        if arr.shape[2] < reps:
            arr = np.concatenate([arr, np.full((*arr.shape[:2], reps - arr.shape[2]), np.nan)], axis=2)
        blocks.append(arr)
        labels += [f"{cp.path} [{metric}]" for cp in experiment.callpaths]
    return SeriesSet(str(path), f"pmkit {experiment.provenance.reader}", experiment.points[order, 0],
                     np.concatenate(blocks), labels)


def read_with_extrap(path: Path, python: Path) -> SeriesSet:
    """Every series of ``path`` as read by Extra-P's own reader (under ``python``): one mean value per point."""
    data = load_with_extrap(path, python=python)
    if len(data["parameters"]) != 1:
        raise ValueError(f"{path}: {len(data['parameters'])} parameters; leave-last-out needs one")
    x = np.array([p[0] for p in data["points"]], dtype=float)
    order = np.argsort(x)
    values = np.array([[np.nan if v is None else v for v in s["values"]] for s in data["series"]], dtype=float)
    labels = [f"{s['callpath']} [{s['metric']}]" for s in data["series"]]
    return SeriesSet(str(path), "Extra-P", x[order], values[:, order, None], labels)


def load(path: Path, source: str, console: Console, python: Path | None) -> SeriesSet:
    """Read ``path`` with pmkit, Extra-P, or (``auto``) pmkit and else Extra-P (not without ``python``)."""
    if not path.exists():
        raise InputError(path, "no such file or directory")
    if source in ("pmkit", "auto"):
        try:
            return read_with_pmkit(path)
        except (PmkitError, ValueError) as exc:
            if source == "pmkit" or python is None:
                raise
            console.print(f"[yellow]pmkit cannot read {path} ({exc}); using Extra-P's reader[/yellow]")
    assert python is not None  # --source extrap with --no-extrap is refused by main
    return read_with_extrap(path, python)


def smape(truth: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per element ``|y - f| / ((|y| + |f|) / 2)`` in percent; 0 where both are 0, 200 where f is NaN."""
    denominator = (np.abs(truth) + np.abs(predicted)) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(denominator > 0, np.abs(truth - predicted) / denominator * 100, 0.0)
    return np.where(np.isfinite(predicted), out, 200.0)


def model_pmkit(x: np.ndarray, values: np.ndarray, modeler: str, options: dict[str, str]) -> tuple[list, float]:
    """pmkit's models of every series (series × points × repetitions) and the seconds they took."""
    tree = CallTree()
    for i in range(values.shape[0]):
        tree.add(f"s{i}")
    experiment = Experiment(("x",), x[:, None], tree, (Metric("value"),), {"value": values})
    start = time.perf_counter()
    functions = [m.function for m in pmkit.model(experiment, modeler=modeler, **options)]
    return functions, time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", type=Path, default=[DEFAULT_INPUT],
                        help="inputs pmkit or Extra-P can read (default: the Score-P study mm-single)")
    parser.add_argument("--source", choices=("auto", "pmkit", "extrap"), default="auto",
                        help="which tool reads the inputs (default: pmkit if it can, else Extra-P)")
    parser.add_argument("--pmkit-modeler", default="refining")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an option of the pmkit modeler (repeatable)")
    parser.add_argument("--min-points", type=int, default=4,
                        help="series need at least this many measured points besides the held-back one")
    parser.add_argument("--show", type=int, default=10, help="list the series where the tools differ most")
    parser.add_argument("--no-extrap", action="store_true", help="pmkit only")
    args = parser.parse_args(argv)
    if args.no_extrap and args.source == "extrap":
        parser.error("--source extrap needs Extra-P: drop --no-extrap")
    console = Console(width=None if sys.stdout.isatty() else 110)
    python = None if args.no_extrap else extrap_python()
    console.print(f"leave-last-out on {len(args.paths)} input(s)"
                  + ("" if python is None else f"; Extra-P {extrap_version(python)}"))

    tools = [" ".join([f"pmkit {args.pmkit_modeler}", *args.option]),
             *(f"Extra-P {m}" for m in (EXTRAP_MODELERS if python is not None else ()))]
    errors: dict[str, list[np.ndarray]] = {t: [] for t in tools}
    constants: dict[str, int] = dict.fromkeys(tools, 0)
    rows: list[tuple[str, float, dict[str, str], dict[str, float]]] = []
    n_used = 0
    for path in args.paths:
        data = load(path, args.source, console, python)
        held = data.values[:, -1, :]
        truth = np.array([np.nanmean(r) if np.isfinite(r).any() else np.nan for r in held])
        train = data.values[:, :-1, :]
        enough = (np.isfinite(train).any(axis=2).sum(axis=1) >= args.min_points) & np.isfinite(truth)
        keep = np.flatnonzero(enough)
        console.print(f"{path} (read by {data.reader}): {len(data.labels)} series, x = "
                      f"{', '.join(f'{v:g}' for v in data.x)}; holding back x = {data.x[-1]:g}; "
                      f"{len(keep)} series with ≥ {args.min_points} points and a held-back value")
        if not len(keep):
            continue
        n_used += len(keep)
        x_train, x_last = data.x[:-1], float(data.x[-1])
        predictions: dict[str, np.ndarray] = {}
        texts: dict[str, list[str]] = {}
        functions, _ = model_pmkit(x_train, train[keep], args.pmkit_modeler, parse_assignments(args.option))
        predictions[tools[0]] = np.array([np.nan if f is None else float(f.evaluate(x_last)) for f in functions])
        texts[tools[0]] = ["no model" if f is None else f.pretty_text() for f in functions]
        constants[tools[0]] += sum(1 for f in functions if f is not None and f.is_constant)
        extrap = {} if python is None else model_with_extrap(["x"], x_train, train[keep], predict_at=[[x_last]],
                                                             python=python)
        for name in extrap:
            tool = f"Extra-P {name}"
            predictions[tool] = extrap[name].predictions[:, 0]
            texts[tool] = [f.pretty_text() for f in extrap[name].functions]
            constants[tool] += sum(1 for f in extrap[name].functions if f.is_constant)
        per_tool = {t: smape(truth[keep], predictions[t]) for t in tools}
        for t in tools:
            errors[t].append(per_tool[t])
        for j, i in enumerate(keep):
            # alone, pmkit's largest errors come first; beside Extra-P, where the tools differ most
            spread = max(per_tool[t][j] for t in tools) - (min(per_tool[t][j] for t in tools) if extrap else 0.0)
            rows.append((f"{Path(data.source).name}: {data.labels[i]}", spread, {t: texts[t][j] for t in tools},
                         {t: float(per_tool[t][j]) for t in tools}))

    if not n_used:
        console.print("[red]no series to evaluate[/red]")
        return 1
    report(console, tools, errors, constants, n_used, rows, args.show)
    return 0


def report(console: Console, tools: list[str], errors: dict[str, list[np.ndarray]], constants: dict[str, int],
           n: int, rows: list, show: int) -> None:
    """Mean relative prediction error per tool, head-to-head counts, and the most divergent series."""
    all_errors = {t: np.concatenate(errors[t]) for t in tools}
    table = Table(title=f"prediction of the held-back largest point, {n} series")
    for col in ("modeler", "mean rel. error %", "median %", "constant models", *(f"pmkit better / worse than {t}"
                                                                                 for t in tools[1:])):
        table.add_column(col, justify="left" if col == "modeler" else "right")
    pm = all_errors[tools[0]]
    for t in tools:
        head = []
        for other in tools[1:]:
            if t == tools[0]:
                better = int((pm < all_errors[other] - 1e-9).sum())
                worse = int((pm > all_errors[other] + 1e-9).sum())
                head.append(f"{better} / {worse}")
            else:
                head.append("")
        table.add_row(t, f"{all_errors[t].mean():.2f}", f"{np.median(all_errors[t]):.2f}", str(constants[t]), *head)
    console.print(table)
    if show and rows:
        detail = Table(title=f"the {min(show, len(rows))} series where the modelers' predictions differ most"
                       if len(tools) > 1 else f"the {min(show, len(rows))} series {tools[0]} predicts worst")
        detail.add_column("series")
        for t in tools:
            detail.add_column(f"{t}\n(error %)")
        for label, _, texts, errs in sorted(rows, key=lambda r: -r[1])[:show]:
            detail.add_row(escape(label), *(f"{texts[t]}\n({errs[t]:.1f})" for t in tools))
        console.print(detail)


if __name__ == "__main__":
    run_main(main)
