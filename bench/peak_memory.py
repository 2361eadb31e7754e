"""Peak memory of modeling many series at once, measured in a fresh process.

Prints one JSON object: the process's peak resident set size after imports and a JIT warm-up
(``baseline_mb``), after modeling (``peak_mb``, from ``getrusage``), and the peak of Python/numpy
allocations during modeling (``traced_mb``, from tracemalloc).  Run alone or from test_speed.py:

    python bench/peak_memory.py --series 100000 --points 5
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tracemalloc

from synthetic import speed_batch

from pmkit.plugins import get_registry


def _maxrss_mb() -> float:
    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 1024 / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=100_000)
    parser.add_argument("--parameters", type=int, choices=(1, 2), default=1)
    parser.add_argument("--modeler", default="refining", help="pmkit modeler")
    args = parser.parse_args(argv)
    name = args.modeler
    modeler = get_registry().get("modeler", name)
    modeler.model(speed_batch(50, args.parameters, seed=1))  # compile and warm up before measuring
    batch = speed_batch(args.series, args.parameters)
    baseline = _maxrss_mb()
    tracemalloc.start()
    models = modeler.model(batch)
    built = sum(1 for m in models if m.function is not None)
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    json.dump({"modeler": name, "series": args.series, "parameters": args.parameters, "models": len(models),
               "with_function": built, "baseline_mb": baseline, "peak_mb": _maxrss_mb(),
               "traced_mb": traced / 2**20}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
