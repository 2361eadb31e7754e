"""Cube studies end to end: pmkit vs ``extrap --cube`` on the same folder, in one run.

Usage::

    python bench/cube_load.py                    # both studies below, modeling included if possible
    python bench/cube_load.py --study mm         # only ../shared/data/cube/extrap-mm-single
    python bench/cube_load.py --study generated --keep /tmp/big   # keep the generated study

Studies: the real ``extrap-mm-single`` (9 runs, 4 call paths) and a generated one of 50 runs
(10 points × 5 repetitions) × 500 call paths × 10 metrics × 64 locations written with
:mod:`pmkit.testing.cubewriter`.  For each it prints pmkit's load time (serial and on two
threads), pmkit's model time (warm), then end to end in a new process each — pmkit's
``pmkit.model(pmkit.read(DIR))`` and ``extrap --cube DIR`` (Extra-P's default modeler; a separate
interpreter because Extra-P pins numpy<2) — and their ratio, and checks both read the same call
paths.  ``--breakdown`` adds Extra-P's own load and model times measured inside its process.  Extra-P's interpreter is
``$PMKIT_EXTRAP_PYTHON`` or ``/tmp/extrap-venv/bin/python``.  ``--load-only`` times pmkit's serial load
alone (median and minimum of seven reads after a warm-up, CPU and wall), e.g. to compare two versions
of the reader: ``PYTHONPATH=OLD/src python bench/cube_load.py --study generated --keep DIR --load-only``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MM_SINGLE = Path(os.environ.get("PMKIT_SHARED_DATA", ROOT.parent / "shared" / "data")) / "cube" / "extrap-mm-single"


def generate_study(folder: Path, runs_per_point: int = 5, sizes: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 256, 512,
                   1024), callpaths: int = 500, locations: int = 64, seed: int = 7) -> Path:
    """Write the large benchmark study: ``bench.n{size}.r{rep}/profile.cubex`` with 10 Score-P metrics."""
    from pmkit.testing.cubewriter import CubeMetric, write_cube

    rng = np.random.default_rng(seed)
    names = [f"kernel_{i}" for i in range(120)] + ["MPI_Allreduce", "MPI_Isend", "MPI_Irecv", "MPI_Waitall"]
    paths: list[str] = ["main"]
    while len(paths) < callpaths:
        parent = paths[int(rng.integers(len(paths)))]
        if parent.count("->") >= 7:
            continue
        candidate = f"{parent}->{names[int(rng.integers(len(names)))]}"
        if candidate not in paths:
            paths.append(candidate)
    metrics = [CubeMetric(name, unit, dtype, kind) for name, unit, dtype, kind in (
        ("visits", "occ", "UINT64", "EXCLUSIVE"), ("time", "sec", "DOUBLE", "INCLUSIVE"),
        ("min_time", "sec", "MINDOUBLE", "EXCLUSIVE"), ("max_time", "sec", "MAXDOUBLE", "EXCLUSIVE"),
        ("bytes_sent", "bytes", "UINT64", "EXCLUSIVE"), ("bytes_received", "bytes", "UINT64", "EXCLUSIVE"),
        ("PAPI_TOT_INS", "#", "UINT64", "INCLUSIVE"), ("PAPI_FP_OPS", "#", "UINT64", "INCLUSIVE"),
        ("PAPI_L2_TCM", "#", "UINT64", "INCLUSIVE"), ("PAPI_L3_TCM", "#", "UINT64", "INCLUSIVE"))]
    exponents = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], size=len(paths))
    base = rng.uniform(1e-4, 1e-2, size=len(paths))
    for size in sizes:
        for rep in range(1, runs_per_point + 1):
            scale = base * size ** exponents
            values = {}
            for m in metrics:
                noise = rng.uniform(0.98, 1.02, size=(len(paths), locations))
                factor = {"visits": 100.0, "bytes_sent": 1e6, "bytes_received": 1e6}.get(m.name, 1.0)
                factor = 1e9 if m.name.startswith("PAPI") else factor
                values[m.name] = scale[:, None] * noise * factor
            write_cube(folder / f"bench.n{size}.r{rep}" / "profile.cubex", paths, metrics, values, processes=locations)
    return folder


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def extrap_python() -> Path | None:
    given = os.environ.get("PMKIT_EXTRAP_PYTHON")
    for candidate in ([Path(given)] if given else []) + [Path("/tmp/extrap-venv/bin/python")]:
        if candidate.exists():
            return candidate
    return None


def run_extrap(folder: Path) -> tuple[float, str]:
    """Wall time of ``extrap --cube FOLDER`` (load + default modeler, cold) and its printed call paths."""
    python = extrap_python()
    if python is None:
        return float("nan"), "Extra-P not found (set PMKIT_EXTRAP_PYTHON)"
    cmd = [str(python), "-m", "extrap", "--cube", "--disable-progress", "--print", "callpaths", str(folder)]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        return float("nan"), f"Extra-P failed: {done.stderr.strip()[-500:]}"
    return elapsed, done.stdout


_EXTRAP_BREAKDOWN = """
import sys, time, warnings
warnings.simplefilter("ignore")
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2
from extrap.modelers.model_generator import ModelGenerator
t = time.perf_counter(); e = CubeFileReader2().read_cube_file(sys.argv[1], "weak"); load = time.perf_counter() - t
t = time.perf_counter(); ModelGenerator(e).model_all(); model = time.perf_counter() - t
print(load, model)
"""


def extrap_breakdown(folder: Path) -> tuple[float, float]:
    """Extra-P's own load and model times, measured inside its process (no start-up)."""
    python = extrap_python()
    if python is None:
        return float("nan"), float("nan")
    done = subprocess.run([str(python), "-c", _EXTRAP_BREAKDOWN, str(folder)], capture_output=True, text=True,
                          check=False)
    try:
        load, model = (float(x) for x in done.stdout.split())
    except ValueError:
        return float("nan"), float("nan")
    return load, model


def check_values(folder: Path) -> str:
    """Compare every per-point mean pmkit reads (weak and strong scaling) with what Extra-P reads."""
    import json

    import pmkit

    python = extrap_python()
    if python is None:
        return "Extra-P not found"
    script = ROOT / "tests" / "cube_reference" / "record_extrap.py"
    done = subprocess.run([str(python), str(script), str(folder)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return f"Extra-P failed: {done.stderr.strip()[-300:]}"
    ref = json.loads(done.stdout)
    exp = {scaling: pmkit.read(folder, aggregation=aggregation, locations=False)
           for scaling, aggregation in (("weak", "mean"), ("strong", "sum"))}
    if ref["callpaths"] != exp["weak"].callpaths.paths() or ref["metrics"] != exp["weak"].metric_names:
        return "call paths or metrics differ"
    worst, count = 0.0, 0
    points = exp["weak"].points[:, 0].tolist()
    for scaling, values in ref["scalings"].items():
        for key, stats in values.items():
            callpath, metric, x = key.split("|")
            got = exp[scaling].values(metric)[exp[scaling].callpaths.index(callpath), points.index(float(x))]
            worst = max(worst, abs(got - stats["mean"]) / max(abs(stats["mean"]), 1e-300))
            count += 1
    return f"{count} values compared with Extra-P's, largest relative difference {worst:.1e}"


_PMKIT_COLD = "import sys, pmkit; pmkit.model(pmkit.read(sys.argv[1]))"


def load_only(folder: Path, label: str) -> None:
    """Serial load time alone: median and minimum of seven reads after one warm-up."""
    import statistics

    import pmkit
    from pmkit.readers.cube import read_cube

    read_cube(folder, jobs=1)
    cpu, wall = [], []
    for _ in range(7):
        start, start_cpu = time.perf_counter(), time.process_time()
        read_cube(folder, jobs=1)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(f"{label} ({Path(pmkit.__file__).parents[1]}): serial load cpu median {statistics.median(cpu):.3f} s "
          f"(min {min(cpu):.3f}), wall median {statistics.median(wall):.3f} s (min {min(wall):.3f})")


def bench(folder: Path, label: str, breakdown: bool, check: bool = False) -> None:
    import pmkit
    from pmkit.readers.cube import read_cube

    print(f"== {label}: {folder}")
    exp, t_serial = _timed(read_cube, folder, jobs=1)
    _, t_parallel = _timed(read_cube, folder, jobs=2)
    _, t_auto = _timed(read_cube, folder, jobs=0)
    print(f"   {len(exp.provenance.sources)} files, {len(exp.callpaths)} call paths, {len(exp.metrics)} metrics, "
          f"{len(exp.points)} points, {sum(v.size for v in exp.measurements.values())} values")
    print(f"   pmkit load, in process: serial {t_serial:.3f} s, 2 threads {t_parallel:.3f} s, "
          f"jobs=auto {t_auto:.3f} s")
    try:
        pmkit.model(exp)  # warm-up: numba loads its compiled kernels on first use
        _, t_model = _timed(pmkit.model, exp)
        print(f"   pmkit model, in process (warm) {t_model:.3f} s for {len(exp.callpaths) * len(exp.metrics)} series")
    except Exception as exc:  # the default modeler may be missing in a partial checkout
        print(f"   pmkit model: unavailable ({type(exc).__name__}: {exc})")
        return
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PMKIT_COLD, str(folder)], capture_output=True, text=True,
                          check=False)
    t_pmkit = time.perf_counter() - start
    if done.returncode != 0:
        print(f"   pmkit end to end failed: {done.stderr.strip()[-500:]}")
        return
    print(f"   pmkit end to end (new process: import, read, model)  {t_pmkit:8.3f} s")
    if breakdown:
        load, model = extrap_breakdown(folder)
        print(f"   Extra-P in process: load {load:.3f} s, model {model:.3f} s")
    t_extrap, output = run_extrap(folder)
    if np.isnan(t_extrap):
        print(f"   Extra-P: {output}")
        return
    extrap_paths = [line for line in output.splitlines() if line.strip()]
    same = "same call paths" if len(extrap_paths) == len(exp.callpaths) else "DIFFERENT call path count"
    print(f"   extrap --cube end to end (new process)               {t_extrap:8.3f} s   "
          f"({len(extrap_paths)} call paths: {same})")
    print(f"   Extra-P / pmkit end to end = {t_extrap / t_pmkit:.1f}×")
    if check:
        print(f"   values: {check_values(folder)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--study", choices=("mm", "generated", "both"), default="both")
    parser.add_argument("--keep", type=Path, help="write the generated study here and keep it")
    parser.add_argument("--breakdown", action="store_true", help="also time Extra-P's load and model in process "
                        "(runs Extra-P a second time)")
    parser.add_argument("--check-values", action="store_true", help="compare every per-point value with Extra-P's "
                        "(runs Extra-P's reader twice more)")
    parser.add_argument("--load-only", action="store_true", help="time pmkit's serial load alone")
    args = parser.parse_args()
    run = (lambda folder, label: load_only(folder, label)) if args.load_only else \
        (lambda folder, label: bench(folder, label, args.breakdown, args.check_values))
    if args.study in ("mm", "both"):
        if MM_SINGLE.is_dir():
            run(MM_SINGLE, "extrap-mm-single (real Score-P study)")
        else:
            print(f"skipping extrap-mm-single: {MM_SINGLE} is absent", file=sys.stderr)
    if args.study in ("generated", "both"):
        with tempfile.TemporaryDirectory() as tmp:
            folder = args.keep or Path(tmp) / "study"
            if not any(folder.glob("*/profile.cubex")):
                _, t_gen = _timed(generate_study, folder)
                print(f"(generated 50 runs × 500 call paths × 10 metrics × 64 locations in {t_gen:.1f} s)")
            run(folder, "generated study")


if __name__ == "__main__":
    main()
