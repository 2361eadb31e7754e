"""What the executor tests share: generated experiments of random laws, for tests that compare models
made two ways (in one batch and in chunks on an executor) — many series, varied enough that any
difference would show — and the line a command prints on reaching a Dask scheduler."""

from __future__ import annotations

import re

import numpy as np

from pmkit.experiment import CallTree, Experiment, Metric


def experiment(n: int, parameters: int, seed: int = 3, missing: float = 0.04) -> Experiment:
    """``n`` call paths of random laws — falling, flat or growing, half of them with a second, growing
    term — with ±3% noise, two repetitions, some values missing, some points far off."""
    rng = np.random.default_rng(seed)
    grid = [2.0, 4, 8, 16, 32, 64, 128] if parameters == 1 else [4.0, 8, 16, 32, 64]
    points = np.array(np.meshgrid(*[grid] * parameters)).reshape(parameters, -1).T
    tree = CallTree()
    for i in range(n):
        tree.add(["main", f"kernel_{i}"])
    first = rng.choice([-2, -1, -0.5, 0, 0.5, 1, 2], size=(len(tree), parameters))
    second = rng.choice([0, 0.5, 1, 1.5], size=(len(tree), parameters))
    c = 10 ** rng.uniform(-2, 3, size=(len(tree), 3))
    law = (c[:, :1] + c[:, 1:2] * np.prod(points[None] ** first[:, None, :], axis=2)
           + c[:, 2:] * (rng.uniform(size=(len(tree), 1)) < 0.5) * np.prod(points[None] ** second[:, None, :], axis=2))
    values = law[:, :, None] * rng.uniform(0.97, 1.03, size=(len(tree), len(points), 2))
    values[rng.uniform(size=len(tree)) < 0.15, 2] *= 3  # a point far off: left out as an outlier
    values[rng.uniform(size=values.shape[:2]) < missing] = np.nan
    metrics = (Metric("time", "s"), Metric("visits", "occ"))
    return Experiment(("p", "q")[:parameters], points, tree, metrics, {"time": values, "visits": values[::-1] * 7})


def changing(n: int, parameters: int, seed: int = 5) -> Experiment:
    """``n`` call paths whose laws change at a threshold of p (log p, linear or flat, then a steeper line)
    or never, on 11 values of p (one parameter) or 9 of p × 4 of q, three repetitions with ±2% noise, some
    values missing: what the segmented search splits."""
    rng = np.random.default_rng(seed)
    grid_p = [2.0 ** k for k in range(1, 12 if parameters == 1 else 10)]
    points = np.array(np.meshgrid(grid_p, [4.0, 8, 16, 32][:4 if parameters == 2 else 1])).reshape(2, -1).T
    points = points[:, :parameters]
    tree = CallTree()
    for i in range(n):
        tree.add(["main", f"kernel_{i}"])
    count, p = len(tree), points[:, 0]
    kind = rng.integers(0, 4, size=count)[:, None]
    a, b = 10 ** rng.uniform(-1, 1, size=(count, 1)), 10 ** rng.uniform(-3, -1, size=(count, 1))
    law = np.where(kind == 0, a * np.log2(p), np.where(kind == 1, a + b * p, a))
    law = law + (p >= rng.choice(p[2:-2], size=(count, 1))) * (kind != 3) * (5 * a + 0.05 * a * p)
    if parameters == 2:
        law = law * (1 + 0.1 * points[:, 1])
    values = law[:, :, None] * rng.uniform(0.98, 1.02, size=(count, len(points), 3))
    values[rng.uniform(size=values.shape[:2]) < 0.02] = np.nan
    return Experiment(("p", "q")[:parameters], points, tree, (Metric("time", "s"),), {"time": values})


def reached_line(address: str) -> re.Pattern:
    """The line a command prints on stderr after reaching the scheduler at ``address`` with two workers; its
    dashboard part depends on whether bokeh is installed (the link names the host as the client saw it)."""
    return re.compile(rf"executor: dask — {re.escape(address)}, 2 workers; "
                      r"(no dashboard \(install bokeh for one\)|dashboard http://\S+)")
