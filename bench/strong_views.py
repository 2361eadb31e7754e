"""What the strong-scaling views cost: describing every call path's law (pmkit.trend over pmkit.behaviour)
and the JSON document that carries it, on a generated strong-scaling study of many call paths.

The study is an Extra-P text file of ``N`` call paths ``main->k{i}`` at p = 2..32, two repetitions, ±2%
noise; the laws cycle through ``a/p + c`` (one falling term: the closed form of
:func:`pmkit.behaviour.describe`), ``a/p + c·log2 p`` (a turning point: the grid search), ``c`` and
``a/p^(1/2)``.  Timed, best of ``--rounds``: the analysis (reading and modeling included, once), every
row's :meth:`~pmkit.scaling.ScalingReport.trend` on a fresh report (what ``show --json`` pays on top of
the rest), the document ``pmkit show --json`` writes (:func:`pmkit.writers.jsonfiles.write_show_document`,
streamed from the report's columns, each row's trend described once before), and the terminal screen at
80 columns.

    python bench/strong_views.py                    # 1,000 and 10,000 call paths
    python bench/strong_views.py --sizes 100000 --rounds 1
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from rich.console import Console

import pmkit
from pmkit.scaling import analyse as scaling_report
from pmkit.ui.show import render_show
from pmkit.writers.jsonfiles import write_show_document

POINTS = (2, 4, 8, 16, 32)


def write_study(path: Path, n: int, seed: int = 0) -> Path:
    """The Extra-P text study of ``n`` call paths described in the module's documentation."""
    rng = np.random.default_rng(seed)
    p = np.array(POINTS, dtype=float)
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {x} )" for x in POINTS), "METRIC time"]
    for i in range(n):
        a, c = rng.uniform(0.1, 10), rng.uniform(0.001, 0.1)
        values = [a / p + c, a / p + c * np.log2(p), c + 0 * p, a / np.sqrt(p)][i % 4]
        noisy = values[:, None] * (1 + 0.02 * rng.uniform(-1, 1, (len(p), 2)))
        lines.append(f"REGION main->k{i}")
        lines += ["DATA " + " ".join(f"{v!r}" for v in row) for row in noisy.tolist()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def best(function: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(n: int, rounds: int, folder: Path) -> dict[str, float]:
    study = write_study(folder / f"strong{n}.txt", n)
    start = time.perf_counter()
    analysis = pmkit.analyse(study, detectors=[])
    analysed = time.perf_counter() - start
    result = analysis.inputs[0]

    def trends() -> None:
        report = scaling_report(result.experiment, result.models)
        for i in range(len(report.rows)):
            report.trend(i)

    def screen() -> None:
        render_show(Console(file=io.StringIO(), width=80, color_system=None), analysis)

    def document() -> None:
        write_show_document(io.BytesIO(), analysis)

    document()  # every row described once, as a first run of show --json would
    return {"call paths": n, "analyse": analysed, "trends": best(trends, rounds),
            "json": best(document, rounds), "terminal": best(screen, rounds)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'call paths':>10} {'analyse s':>10} {'trends s':>9} {'per row ms':>10} {'json s':>7} {'terminal s':>10}")
    with tempfile.TemporaryDirectory() as folder:
        for n in args.sizes:
            r = measure(n, args.rounds, Path(folder))
            print(f"{n:>10} {r['analyse']:>10.2f} {r['trends']:>9.2f} {r['trends'] / n * 1e3:>10.3f} "
                  f"{r['json']:>7.2f} {r['terminal']:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
