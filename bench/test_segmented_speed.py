"""What change-point detection costs: one-parameter models/s of 9, 11 and 15 points, segments on and off.

    pytest bench/test_segmented_speed.py --benchmark-enable

Series of 5 points are never tested (detection needs 8, see :mod:`pmkit.modelers.segmented`), so
``bench/test_speed.py``'s 5-point figures measure the default modeler as it is.  Here 100,000 noisy
series at x = 2..2^n (n = 9, 11, 15): 45% common and 45% rare one-term laws (as the speed benchmark),
10% segmented (a slope change in the middle).  Each configuration is modeled once untimed (numba
compiles or loads its cache), then timed over 3 rounds.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from synthetic import add_noise, generate

from pmkit.plugins import get_registry
from pmkit.series import SeriesBatch

COUNT = 100_000
LENGTHS = (9, 11, 15)
SEGMENTED_SHARE = 0.1


@lru_cache(maxsize=4)
def segmented_batch(points: int, count: int = COUNT, seed: int = 3) -> tuple[SeriesBatch, int]:
    """``count`` noisy series at x = 2..2^points; the last tenth changes slope at the middle point."""
    rng = np.random.default_rng(seed)
    x = 2.0 ** np.arange(1, points + 1)
    split = int(count * SEGMENTED_SHARE)
    half = (count - split) // 2
    change = x[points // 2]
    a = 10.0 ** rng.uniform(-1, 2, split)[:, None]
    b = a * 10.0 ** rng.uniform(-0.5, 1, split)[:, None] / change
    kinked = np.where(x < change, a + b * x, a + b * change + 10 * b * (x - change))
    exact = np.concatenate([generate("common, 1 term", half, rng).evaluate(x),
                            generate("rare, 1 term", count - split - half, rng).evaluate(x), kinked])
    values = add_noise(exact, rng)
    return SeriesBatch(("x",), x[:, None], values, [f"s{i}" for i in range(count)], ["time"] * count), split


@pytest.mark.parametrize("mode", ("off", "auto"))
@pytest.mark.parametrize("points", LENGTHS, ids=lambda n: f"{n}points")
def test_detection_cost(benchmark, figures, points: int, mode: str) -> None:
    modeler = get_registry().get("modeler", "refining")
    batch, planted = segmented_batch(points)
    modeler.model(batch, segments=mode)  # untimed: numba compiles or loads its cache
    models = benchmark.pedantic(modeler.model, args=(batch,), kwargs={"segments": mode}, rounds=3, iterations=1)
    found = sum(models[i].segmented for i in range(COUNT - planted, COUNT))
    false = sum(models[i].segmented for i in range(0, COUNT - planted, 10)) * 10
    if mode == "auto":
        assert found >= 0.9 * planted, f"only {found} of {planted} planted changes found"
    label = f"{points:>2} points, {COUNT:,} series, segments={mode}"
    if benchmark.stats is None:
        figures.append((label, "benchmarks disabled (add --benchmark-enable)"))
        return
    figures.append((label, f"{COUNT / benchmark.stats.stats.min:,.0f} models/s (mean "
                           f"{COUNT / benchmark.stats.stats.mean:,.0f}); {found:,} of {planted:,} planted changes "
                           f"found, ~{false:,} of {COUNT - planted:,} one-law series split (1 in 10 checked)"))
