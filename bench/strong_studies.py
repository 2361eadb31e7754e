"""Generated Score-P strong-scaling studies: the run's time per rank at a left-out larger p, pmkit against
Extra-P with and without negative exponents.

Each study is :func:`pmkit.testing.example_study.generate_strong` (a Jacobi-like solver: compute kernels
falling as 1/p, a halo exchange as p^(-2/3), an ``MPI_Allreduce`` growing with log2 p, ``MPI_Init``
with p, constant input reading) written as Cube files with pmkit's Cube writer, with every call
path's law multiplied by a random factor 10^U[-0.5, 0.5) per study (so the balance between falling
and growing parts, and the turning point of the whole run, differ), ±2% noise per rank and three
repetitions.  pmkit reads the study (Cube reader: exclusive time, mean over ranks); every tool models
the same values; the prediction is the sum of the call paths' models at the left-out p, compared with
the sum of the exact laws there (:func:`~pmkit.testing.example_study.strong_times`).

Two shapes: five runs p = 2..32 predicting p = 64 and 128, and six runs p = 4..128 (two-term laws need
six points) predicting p = 256 and 512.

    python bench/strong_studies.py                 # 20 studies per shape, Extra-P included
    python bench/strong_studies.py --studies 5 --no-extrap
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from extrap_env import extrap_version, model_with_extrap, run_main
from rich.console import Console
from rich.table import Table
from strong_scaling import TOOLS_EXTRAP

import pmkit
from pmkit.testing import example_study

SHAPES = {"p = 2..32": ((2, 4, 8, 16, 32), (64.0, 128.0)), "p = 4..128": ((4, 8, 16, 32, 64, 128), (256.0, 512.0))}
TOLERANCE = 0.15


def run_study(directory: Path, processes: Sequence[int], targets: Sequence[float], seed: int, with_extrap: bool
              ) -> tuple[dict[str, list[float]], list[float]]:
    """Write one study, model it with every tool; per tool the predicted totals at ``targets``, and the truths."""
    rng = np.random.default_rng(seed)
    scales = {cp: float(10 ** rng.uniform(-0.5, 0.5)) for cp in example_study.STRONG_CALLPATHS}
    example_study.generate_strong(directory, processes=processes, seed=seed, scales=scales)
    exp = pmkit.read(directory, metrics="time")
    truth = [sum(example_study.strong_times(p, scales).values()) for p in targets]
    predicted: dict[str, list[float]] = {}
    for label, options in (("pmkit", {}), ("pmkit falling=false", {"falling": False})):
        models = pmkit.model(exp, **options)
        predicted[label] = [float(sum(m.function.evaluate(p) for m in models.for_metric("time"))) for p in targets]
    if with_extrap:
        values = exp.measurements["time"]
        points = exp.points
        result = model_with_extrap(exp.parameters, points, values, modelers=TOOLS_EXTRAP)
        for spec in TOOLS_EXTRAP:
            name = spec if isinstance(spec, str) else spec["label"]
            predicted[f"Extra-P {name}"] = [float(sum(f.evaluate(p) for f in result[name].functions))
                                            for p in targets]
    return predicted, truth


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--studies", type=int, default=20, help="studies per shape (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first study")
    parser.add_argument("--no-extrap", action="store_true", help="pmkit only")
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 120)
    header = f"strong-scaling Cube studies: {args.studies} per shape, ±2% noise per rank, 3 repetitions"
    if not args.no_extrap:
        header += f"; Extra-P {extrap_version()}"
    console.print(header)
    table = Table(title=f"total time per rank at the left-out p: median error % / worst % / studies within "
                        f"{TOLERANCE:.0%}")
    table.add_column("study → target")
    rows: dict[str, dict[str, list[float]]] = {}
    for shape, (processes, targets) in SHAPES.items():
        errors: dict[str, list[list[float]]] = {}
        for k in range(args.studies):
            with tempfile.TemporaryDirectory() as tmp:
                predicted, truth = run_study(Path(tmp) / "study", processes, targets, args.seed + k,
                                             not args.no_extrap)
            for tool, values in predicted.items():
                errors.setdefault(tool, []).append([abs(v / t - 1) for v, t in zip(values, truth, strict=True)])
        console.log(f"{shape}: {args.studies} studies done")
        for j, target in enumerate(targets):
            rows[f"{shape} → p = {target:g}"] = {tool: [e[j] for e in per] for tool, per in errors.items()}
    tools = list(next(iter(rows.values())))
    for tool in tools:
        table.add_column(tool.replace("Extra-P ", "Extra-P\n"), justify="right")
    for label, per in rows.items():
        cells = []
        for tool in tools:
            e = np.array(per[tool])
            cells.append(f"{100 * np.median(e):.2f} / {100 * e.max():.1f} / {np.sum(e <= TOLERANCE)}/{e.size}")
        table.add_row(label, *cells)
    console.print(table)
    mine = np.concatenate([per["pmkit"] for per in rows.values()])
    console.print(f"pmkit within {TOLERANCE:.0%} of the true total at every left-out p: "
                  f"{'yes' if (mine <= TOLERANCE).all() else 'NO'} (worst {100 * mine.max():.1f}%)")
    return 0


if __name__ == "__main__":
    run_main(main)
