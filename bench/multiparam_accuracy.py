"""Multi-parameter accuracy: 2 and 3 parameters, full and sparse grids, additive, multiplicative and mixed
laws of common and rare exponents, ±2% noise — pmkit against Extra-P on the same values.

Cases (``--per-case`` laws each): parameters x, y (and z) on {4, 8, 16, 32, 64}; the *full* grid has
every combination (25 or 125 points), the *sparse* one the line of each parameter through the
smallest point plus three points on the diagonal (12 or 16 points, what Extra-P's sparse modeling
needs).  Forms: *additive* ``c0 + Σ a_l·f_l(x_l)``, *multiplicative* ``c0 + a·Π f_l(x_l)``, *mixed*
``c0 + a·f(x)·g(y) + b·f(x)`` (or ``+ b·g(y)``; with three parameters ``c0 + a·f·g + b·h``), *partial*
``c0 + a·Π f_l(x_l)`` over a random proper subset of the parameters (the others have no effect), each f
drawn from the *common* (x, x², x³, log2 x) or the *rare* (x^(i/2), x^(i/3), log2² x) terms of paper
000 §4.1.  Coefficients: see :func:`multistudy.scaled_laws` (each term's largest value on the grid
between 1% and 100% of the level, so a weak parameter is there but small).  One value per point, ±2%
uniform noise.  Scores at (256, 256[, 256]): see ``multistudy.py``.

    python bench/multiparam_accuracy.py                    # 100 per case, Extra-P included
    python bench/multiparam_accuracy.py --per-case 300     # the reported size
    python bench/multiparam_accuracy.py --no-extrap --option acceptance=2
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from multistudy import Run, TermSpec, noisy, report, run_main, scaled_laws, targets
from synthetic import COMMON, RARE

VALUES = (4.0, 8.0, 16.0, 32.0, 64.0)
NOISE = 0.02
NAMES = ("x", "y", "z")
FORMS = ("additive", "multiplicative", "mixed", "partial")
CLASSES = {"common": COMMON, "rare": RARE}


def grid(n_params: int, sparse: bool) -> np.ndarray:
    """The measurement points (see the module docstring)."""
    full = np.array(np.meshgrid(*[VALUES] * n_params, indexing="ij")).reshape(n_params, -1).T
    if not sparse:
        return full
    lowest = min(VALUES)
    on_line = (full == lowest).sum(axis=1) >= n_params - 1
    diagonal = (full == full[:, :1]).all(axis=1) & np.isin(full[:, 0], VALUES[1:4])
    return full[on_line | diagonal]


def draw_terms(form: str, n_params: int, shapes: Sequence, n: int, rng: np.random.Generator) -> list[list[TermSpec]]:
    """``n`` random term lists of one form, each parameter's factor drawn from ``shapes``."""
    out = []
    for _ in range(n):
        f = [shapes[k] for k in rng.integers(0, len(shapes), n_params)]
        if form == "additive":
            terms = [{p: f[p]} for p in range(n_params)]
        elif form == "multiplicative":
            terms = [{p: f[p] for p in range(n_params)}]
        elif form == "partial":
            used = sorted(rng.choice(n_params, int(rng.integers(1, n_params)), replace=False).tolist())
            terms = [{p: f[p] for p in used}]
        elif n_params == 2:
            alone = int(rng.integers(0, 2))
            terms = [{0: f[0], 1: f[1]}, {alone: f[alone]}]
        else:
            pair = sorted(rng.choice(3, 2, replace=False).tolist())
            rest = ({0, 1, 2} - set(pair)).pop()
            terms = [{p: f[p] for p in pair}, {rest: f[rest]}]
        out.append(terms)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    run = Run.start(__doc__, argv, per_case=100, seed=20261124, chunk=100)
    n = run.args.per_case
    run.header(f"multi-parameter accuracy: 2 and 3 parameters × full and sparse grids × {len(FORMS)} forms × "
               f"{len(CLASSES)} classes, {n} laws each, ±{NOISE:.0%} noise, seed {run.args.seed}")
    rng = np.random.default_rng(run.args.seed)
    rates: dict = {}
    for n_params in (2, 3):
        params = NAMES[:n_params]
        target = [4 * max(VALUES)] * n_params
        for sparse in (False, True):
            points = grid(n_params, sparse)
            cases = [scaled_laws(f"{form} {cls}", params, draw_terms(form, n_params, shapes, n, rng), points, rng,
                                 share=(-2.0, 0.0)) for form in FORMS for cls, shapes in CLASSES.items()]
            values = noisy(np.concatenate([c.evaluate(points) for c in cases]), NOISE, 1, rng)
            label = f"{n_params}p {'sparse' if sparse else 'full'} ({len(points)} points)"
            run.console.log(f"{label}: {values.shape[0]} series")
            run.score(run.model(params, points, values, target), cases, target, rates, label)
    report(run.console, run.tools, rates, n)
    targets(run.console, run.tools, rates, discord=run.discord)
    run.finish(rates)
    return 0


if __name__ == "__main__":
    run_main(main)
