"""Describing every call path's law for ``pmkit show --json``: at once from the model columns
(:meth:`pmkit.scaling.ScalingReport.trends_json`: the closed forms of :func:`pmkit.trend.closed_form_json`, the
rest row by row) against row by row (``trend(i).to_json``, on a fresh report), and whether the two documents
are identical (compared by ``repr``: every float to its last bit).

The inputs are :mod:`end_to_end`'s Extra-P text files (kept in bench/.cache): ``N`` one-parameter series of
5 points, target 4× the largest point; and two-parameter series (5×5 points) with the target ``p=128``
(one parameter changes, so every law is described along it).  CPU seconds of this process.

    python bench/trend_columns.py                     # 10,000 and 100,000 one-parameter, 20,000 two-parameter
    python bench/trend_columns.py --sizes 10000 --two 0
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

from end_to_end import CACHE, input_file

from pmkit.sdk import analyse
from pmkit.ui.quantities import format_value


def measure(path: Path, target: dict[str, float] | None) -> tuple[int, int, float, float, bool]:
    """Rows, rows in closed form, seconds at once, seconds row by row, and whether the documents are identical."""
    from pmkit.trend import closed_form_json

    report = analyse(path, target=target, detectors=[]).inputs[0].report
    indices = list(range(len(report.experiment.callpaths)))

    def text(value: float) -> str:
        return format_value(value, report.unit)

    start = time.process_time()
    at_once = report.trends_json(indices, text)
    fast = time.process_time() - start
    report._trends.clear()
    start = time.process_time()
    by_row = [None if (trend := report.trend(i)) is None else trend.to_json(text) for i in indices]
    slow = time.process_time() - start
    c = report.columns
    described = (c.model >= 0) & c.has_function
    closed = closed_form_json(report.models.columns, c.model[described], c.predicted[described],
                              report.trend_parameter, report.trend_start, report.target, text)
    return len(indices), len(closed), fast, slow, repr(at_once) == repr(by_row)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="one-parameter series")
    parser.add_argument("--two", type=int, default=20_000, help="two-parameter series (0: none)")
    args = parser.parse_args(argv)
    CACHE.mkdir(exist_ok=True)
    runs = [(input_file(CACHE, n, 1), None) for n in args.sizes]
    if args.two:
        runs.append((input_file(CACHE, args.two, 2), {"p": 128.0}))
    print(f"{'input':<18} {'rows':>7} {'closed':>7} {'at once s':>10} {'by row s':>9} {'x':>6}  identical")
    for path, target in runs:
        rows, closed, fast, slow, same = measure(path, target)
        print(f"{path.name:<18} {rows:>7} {closed:>7} {fast:>10.2f} {slow:>9.2f} {slow / fast:>6.1f}  {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
