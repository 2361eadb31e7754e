"""Pool a multi-parameter protocol's runs at several seeds, and check issue 18's targets on the pool.

At 300 laws per case a (case, score) pair can fall behind Extra-P by a series or two, and a case's
coverage leave 85–95%, by sampling alone.  Runs at other seeds draw other laws of the same cases; pooled,
each case has 600–900 laws, the sampling error shrinks by √2–√3, and what stays behind (or outside) is
more than chance.  Pooling is exact for every rate (each is a count over series: weighted by the series
each run scored), for the series only one tool got right (summed, then McNemar's exact test) and for the
coverage (then its Clopper–Pearson interval); the median interval width is not poolable from the runs'
medians, so the pool shows their mean.

    cd bench
    python weak_scaling.py --per-case 300 --json weak.json                       # and --seed 7, --seed 8
    python pool_seeds.py weak.json weak7.json weak8.json --off2-at ±5%
    python pool_seeds.py multi.json multi7.json multi8.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence

from multistudy import report, targets
from rich.console import Console

COUNTED = ("params", "lead", "within", "off2")
"""Rates over every series of a case (weighed by the run's laws per case)."""


def _weighted(pairs: list[tuple[float, float]]) -> float:
    """The mean of finite rates weighed by their series counts; NaN when none is finite."""
    kept = [(value, weight) for value, weight in pairs if math.isfinite(value) and weight > 0]
    total = sum(weight for _, weight in kept)
    return sum(value * weight for value, weight in kept) / total if total else math.nan


def pool_rates(runs: Sequence[dict]) -> dict:
    """One tool's rates per (grid, case) over ``runs`` (``--json`` documents of one protocol): exact
    counts pooled, the width the runs' mean."""
    pooled: dict = {}
    first = runs[0]["rates"]
    for grid, cases in first.items():
        for case, tools in cases.items():
            for tool in tools:
                per = [(run["rates"][grid][case][tool], run["per_case"]) for run in runs]
                out = {key: _weighted([(r[key], n) for r, n in per]) for key in COUNTED}
                if "intervals" in per[0][0]:
                    out["intervals"] = float(sum(r["intervals"] for r, _ in per))
                    out["covered"] = _weighted([(r["covered"], r["intervals"]) for r, _ in per])
                    widths = [r["width"] for r, _ in per if math.isfinite(r["width"])]
                    out["width"] = sum(widths) / len(widths) if widths else math.nan
                if "n_off2" in per[0][0]:
                    out["n_off2"] = float(sum(r.get("n_off2", 0.0) for r, _ in per))
                    out["warned_off2"] = _weighted([(r.get("warned_off2", math.nan), r.get("n_off2", 0.0))
                                                    for r, _ in per])
                    out["warned_fine"] = _weighted([(r.get("warned_fine", math.nan),
                                                     r["intervals"] - r.get("n_off2", 0.0)) for r, _ in per])
                pooled.setdefault(grid, {}).setdefault(case, {})[tool] = out
    return pooled


def pool_discordant(runs: Sequence[dict]) -> dict:
    """Per (grid, case, rival, score), the series only pmkit and only the rival got right, summed."""
    pooled: dict = {}
    for run in runs:
        for grid, cases in run.get("discordant", {}).items():
            for case, rivals in cases.items():
                for rival, scores in rivals.items():
                    slot = pooled.setdefault(grid, {}).setdefault(case, {}).setdefault(rival, {})
                    for key, (mine, theirs) in scores.items():
                        had = slot.get(key, (0, 0))
                        slot[key] = (had[0] + mine, had[1] + theirs)
    return pooled


def check(runs: Sequence[dict]) -> str | None:
    """Why ``runs`` cannot be pooled (another protocol, the same seed twice, other options), or None."""
    shapes = {json.dumps({g: sorted(c) for g, c in run["rates"].items()}, sort_keys=True) for run in runs}
    if len(shapes) > 1:
        return "the runs are of different protocols (their grids and cases differ)"
    seeds = [run["seed"] for run in runs]
    if len(set(seeds)) < len(seeds):
        return f"a seed appears twice ({', '.join(map(str, seeds))}): the same laws would count twice"
    if len({json.dumps(run["options"], sort_keys=True) for run in runs}) > 1:
        return "the runs used different pmkit options"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="--json files of one protocol at different seeds")
    parser.add_argument("--off2-at", help="noise label whose off-by-2× rate is a target (weak_scaling.py: ±5%%)")
    args = parser.parse_args(argv)
    try:
        runs = []
        for path in args.runs:
            with open(path) as file:
                runs.append(json.load(file))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problem = check(runs)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    console = Console()
    rates = pool_rates(runs)
    tools = list(next(iter(next(iter(rates.values())).values())))
    laws = sum(run["per_case"] for run in runs)
    seeds = ", ".join(str(run["seed"]) for run in runs)
    console.print(f"pooled: {len(runs)} runs, seeds {seeds}, {laws} laws per case "
                  "(the width column: the mean of the runs' medians)")
    report(console, tools, rates, laws)
    targets(console, tools, rates, off2_at=args.off2_at, discord=pool_discordant(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
