"""Models per second and peak memory of pmkit's modelers, with Extra-P measured in the same run.

    pytest bench/test_speed.py --benchmark-enable

One parameter (5 points, x = 2..32) and two parameters (5×5 grid) at 1,000 and 100,000 noisy
synthetic series.  Each benchmark first models 10,000 series (so numba's kernels are compiled or
loaded from its cache, and then used for smaller batches too) and runs a warm-up round before
timing, so numba's compile time is not measured.  A fresh process modeling fewer than 10,000
series uses the numpy kernels instead, which is faster there than loading numba.  Extra-P models a subset (a few hundred
single-parameter series take it seconds); its time is taken inside its process around
``modeler.model``, excluding start-up.  The figures and the ratio to the faster Extra-P modeler are
printed at the end; targets: ≥ 100,000 one-parameter and ≥ 10,000 two-parameter models/s,
100,000 × 5 in under 1 GB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from extrap_env import EXTRAP_MODELERS, ExtrapUnavailable, model_with_extrap
from synthetic import speed_batch

from pmkit.fitting.refinement import NUMBA_MIN_SERIES
from pmkit.plugins import get_registry

BENCH_DIR = Path(__file__).resolve().parent
SIZES = (1_000, 100_000)
MODELER = {1: "refining", 2: "refining"}  # refining hands several parameters to multiparam
TARGET = {1: 100_000, 2: 10_000}
EXTRAP_SUBSET = {1: 300, 2: 100}
ROUNDS = {1_000: 20, 100_000: 3}
WARMUP_ROUNDS = {1_000: 1, 100_000: 0}
"""At 100,000 series the explicit 50-series call before timing is the warm-up (JIT compile or cache load)."""


@pytest.fixture(scope="module")
def extrap_rates(figures: list) -> dict[int, dict[str, float]]:
    """Extra-P's models/s per number of parameters and modeler, on a subset of the same kind of data
    (empty, with a note in the summary, where Extra-P cannot be run)."""
    rates: dict[int, dict[str, float]] = {}
    for parameters, n in EXTRAP_SUBSET.items():
        batch = speed_batch(n, parameters)
        try:
            result = model_with_extrap(batch.parameters, batch.points, batch.values, warmup=5)
        except ExtrapUnavailable as exc:
            figures.append(("Extra-P", f"not measured: {str(exc).splitlines()[0]}"))
            return {}
        rates[parameters] = {name: result[name].models_per_second for name in EXTRAP_MODELERS}
    return rates


def _fits(models, batch) -> float:
    """Share of sampled series whose model is within 5% of the measured mean at the series' largest
    value (least squares fits that point best; a model of another series or a constant would miss)."""
    values = batch.reduced()
    step = max(1, len(models) // 500)
    checked = range(0, len(models), step)
    good = 0
    for i in checked:
        f = models[i].function
        if f is not None:
            k = int(np.argmax(np.abs(values[i])))
            predicted = float(np.asarray(f.evaluate(batch.points[k:k + 1]), dtype=float)[0])
            good += abs(predicted - values[i, k]) <= 0.05 * abs(values[i, k])
    return good / len(checked)


@pytest.mark.parametrize("n", SIZES, ids=lambda n: f"{n}series")
@pytest.mark.parametrize("parameters", (1, 2), ids=lambda p: f"{p}param")
def test_models_per_second(benchmark, extrap_rates, figures, parameters: int, n: int) -> None:
    modeler = get_registry().get("modeler", MODELER[parameters])
    # a batch large enough for the compiled kernels: numba compiles (or loads its cache) here, and
    # later smaller batches in this process use them too (see fitting.refinement.NUMBA_MIN_SERIES)
    modeler.model(speed_batch(NUMBA_MIN_SERIES, parameters, seed=1))
    batch = speed_batch(n, parameters)
    models = benchmark.pedantic(modeler.model, args=(batch,), rounds=ROUNDS[n],
                                warmup_rounds=WARMUP_ROUNDS[n], iterations=1)
    assert len(models) == n
    share = _fits(models, batch)
    assert share >= 0.8, f"only {share:.0%} of sampled models fit their largest value within 5%"

    label = f"{parameters} parameter(s), {n:>7,} series"
    extrap = extrap_rates.get(parameters, {})
    extrap_text = ", ".join(f"Extra-P {k} {v:,.0f}/s" for k, v in extrap.items()) or "Extra-P not measured"
    if benchmark.stats is None:
        figures.append((label, f"benchmarks disabled (add --benchmark-enable); {extrap_text}"))
        return
    best = n / benchmark.stats.stats.min
    mean = n / benchmark.stats.stats.mean
    ratio = f"×{best / max(extrap.values()):,.0f} the faster Extra-P" if extrap else "no Extra-P ratio"
    met = "met" if best >= TARGET[parameters] else "NOT met"
    figures.append((label, f"pmkit {MODELER[parameters]} {best:,.0f} models/s (mean {mean:,.0f}); {extrap_text}; "
                           f"{ratio}; target ≥ {TARGET[parameters]:,}/s {met}; "
                           f"{share:.0%} of sampled models within 5% at their largest value"))


@pytest.mark.parametrize("parameters", (1, 2), ids=lambda p: f"{p}param")
def test_peak_memory(figures, parameters: int) -> None:
    n = 100_000
    done = subprocess.run([sys.executable, str(BENCH_DIR / "peak_memory.py"), "--series", str(n),
                           "--parameters", str(parameters)], capture_output=True, text=True, cwd=BENCH_DIR,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["models"] == n
    assert result["with_function"] == n
    target = " (target < 1 GB " + ("met)" if result["peak_mb"] < 1024 else "NOT met)") if parameters == 1 else ""
    what = "peak while modeling" if result["peak_reset"] else "process peak"
    figures.append((f"peak memory, {n:,} × {5 ** parameters} points",
                    f"{what} {result['peak_mb']:.0f} MB{target} ({result['columns_peak_mb']:.0f} MB as columns, "
                    f"before every Model object is built); before modeling (imports, warm-up, data) "
                    f"{result['baseline_mb']:.0f} MB; numpy/Python allocations while modeling "
                    f"{result['traced_mb']:.0f} MB"))
