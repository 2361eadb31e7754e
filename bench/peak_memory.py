"""Peak memory of modeling many series at once, measured in a fresh process.

Prints one JSON object: the resident set size once imports, JIT warm-up and the synthetic batch
are in memory (``baseline_mb``), the peak resident set size once the models are made (as columns,
``columns_peak_mb``) and once every Model object is built from them too (``peak_mb``; on Linux the
peak is reset before modeling through ``/proc/self/clear_refs``, elsewhere it is the whole process's
``getrusage`` peak), and the peak of Python/numpy allocations while modeling and building
(``traced_mb``, from tracemalloc).  Run alone or from test_speed.py:

    python bench/peak_memory.py --series 100000 --points 5
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tracemalloc
from pathlib import Path

from synthetic import speed_batch

from pmkit.plugins import get_registry

STATUS = Path("/proc/self/status")


def _status_mb(field: str) -> float | None:
    """``VmRSS`` or ``VmHWM`` (peak) of this process in MB from /proc, None where there is no /proc."""
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (Linux ≥ 4.0); False where that is not possible."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


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
    baseline = _status_mb("VmRSS") or _maxrss_mb()
    reset = _reset_peak()
    tracemalloc.start()
    models = modeler.model(batch)
    columns_peak = (_status_mb("VmHWM") if reset else None) or _maxrss_mb()
    built = sum(1 for m in models if m.function is not None)
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak = (_status_mb("VmHWM") if reset else None) or _maxrss_mb()
    json.dump({"modeler": name, "series": args.series, "parameters": args.parameters, "models": len(models),
               "with_function": built, "baseline_mb": baseline, "columns_peak_mb": columns_peak, "peak_mb": peak,
               "peak_reset": reset, "traced_mb": traced / 2**20}, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
