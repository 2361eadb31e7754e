"""Narrow-span weak scaling (issue 18): LULESH-like laws of p and the per-process size, pmkit against
Extra-P on the same values.

A real weak-scaling study varies the per-process size over a narrow span while p spans an order of
magnitude, with one repetition and noise of several percent.  Grid: p ∈ {27, 64, 125, 216, 343}
(cubes of 3..7 ranks a side) × size ∈ {25, 30, 35, 40, 45} (a 1.8× span), 25 points.  Laws (``c0``
plus): volume ``size³``, surface ``size²``, collectives ``log2 p``, halo ``p^(1/3)·size²``, their sums
``size³ + log2 p``, ``size³ + p^(1/3)·size²``, ``size² + log2 p`` and products ``size³·log2 p``,
``size²·log2 p``.  Coefficients: every term's largest value on the grid is the level (10^U[-2, 3))
times 10^U[-1, 0), the constant the level times 10^U[-3, 0).  Noise ±1%, ±5%, ±10% (uniform), one
and three repetitions.  Scores at 4× both parameters (p = 1372, size = 180): see ``multistudy.py``;
the issue's targets are checked at the end.

    python bench/weak_scaling.py                      # 100 per case, Extra-P included
    python bench/weak_scaling.py --per-case 300       # the reported size
    python bench/weak_scaling.py --no-extrap --option acceptance=2
    python bench/weak_scaling.py --no-extrap --sizes 25,50,75,100,125,150,175,200   # other sizes (an 8× span)

``--sizes`` and ``--p-values`` measure how the parameters' spans change the scores (the ``hedge`` option's
gate, issue 18): the grid is those p × those sizes, the target 4× the largest of each.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from fractions import Fraction as F

import numpy as np
from multistudy import Run, TermSpec, noisy, report, run_main, scaled_laws, targets

PARAMETERS = ("p", "size")
P_VALUES = (27.0, 64.0, 125.0, 216.0, 343.0)
SIZES = (25.0, 30.0, 35.0, 40.0, 45.0)
GRID = np.array([(p, s) for p in P_VALUES for s in SIZES])
TARGET = (4 * max(P_VALUES), 4 * max(SIZES))
NOISES = (0.01, 0.05, 0.10)
REPETITIONS = (1, 3)

VOLUME: TermSpec = {1: (F(3), F(0))}
SURFACE: TermSpec = {1: (F(2), F(0))}
COLLECTIVE: TermSpec = {0: (F(0), F(1))}
HALO: TermSpec = {0: (F(1, 3), F(0)), 1: (F(2), F(0))}
LAWS: dict[str, list[TermSpec]] = {
    "size³": [VOLUME],
    "size²": [SURFACE],
    "log2 p": [COLLECTIVE],
    "p^(1/3)·size²": [HALO],
    "size³ + log2 p": [VOLUME, COLLECTIVE],
    "size³ + p^(1/3)·size²": [VOLUME, HALO],
    "size² + log2 p": [SURFACE, COLLECTIVE],
    "size³·log2 p": [{**VOLUME, **COLLECTIVE}],
    "size²·log2 p": [{**SURFACE, **COLLECTIVE}],
}


def grid_arguments(parser: argparse.ArgumentParser) -> None:
    """``--sizes`` and ``--p-values``: the values of the grid (default :data:`SIZES` and :data:`P_VALUES`)."""
    parser.add_argument("--sizes", type=_values, default=SIZES, metavar="S1,S2,...",
                        help=f"the size values measured (default {','.join(f'{s:g}' for s in SIZES)}); the target "
                             "is 4× the largest")
    parser.add_argument("--p-values", type=_values, default=P_VALUES, metavar="P1,P2,...",
                        help=f"the p values measured (default {','.join(f'{p:g}' for p in P_VALUES)}); the target "
                             "is 4× the largest")


def _values(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of numbers separated by commas") from None
    if len(values) < 2 or len(set(values)) != len(values) or min(values) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give two or more distinct positive values")
    return tuple(sorted(values))


def main(argv: Sequence[str] | None = None) -> int:
    run = Run.start(__doc__, argv, per_case=100, seed=20261125, chunk=150, arguments=grid_arguments)
    n = run.args.per_case
    sizes, ps = run.args.sizes, run.args.p_values
    grid = np.array([(p, s) for p in ps for s in sizes])
    target = (4 * max(ps), 4 * max(sizes))
    run.header(f"narrow-span weak scaling: p = {min(ps):g}..{max(ps):g} × size = {min(sizes):g}..{max(sizes):g}, "
               f"{len(LAWS)} laws × {n} × noise {', '.join(f'±{v:.0%}' for v in NOISES)} × "
               f"{' and '.join(map(str, REPETITIONS))} repetition(s), target p = {target[0]:g}, "
               f"size = {target[1]:g}, seed {run.args.seed}")
    rng = np.random.default_rng(run.args.seed)
    rates: dict = {}
    for noise in NOISES:
        for repetitions in REPETITIONS:
            cases = [scaled_laws(label, PARAMETERS, [terms] * n, grid, rng) for label, terms in LAWS.items()]
            values = noisy(np.concatenate([c.evaluate(grid) for c in cases]), noise, repetitions, rng)
            label = f"±{noise:.0%}, {repetitions} rep."
            run.console.log(f"{label}: {values.shape[0]} series")
            run.score(run.model(PARAMETERS, grid, values, target), cases, target, rates, label)
    report(run.console, run.tools, rates, n)
    targets(run.console, run.tools, rates, off2_at="±5%", discord=run.discord)
    run.finish(rates)
    return 0


if __name__ == "__main__":
    run_main(main)
