"""Reading and modeling a large Cube study in-process and on a Dask LocalCluster of 1 and 2 workers (issue 20).

Usage::

    nice -n 10 python bench/dask_scaling.py                   # the issue's study (generated once, ~4 GB)
    python bench/dask_scaling.py --runs 20 --callpaths 200    # a small study, for a quick look
    python bench/dask_scaling.py --workers 1 2 4              # more cluster sizes

The study: ``--runs`` runs (20 values of p × repetitions) × ``--callpaths`` call paths × ``--metrics``
metrics × ``--locations`` locations, written with :mod:`pmkit.testing.cubewriter` into
``bench/.dask-study/`` (git-ignored; a folder per size, generated once and reused).  Per-location values
are not kept (``locations=False``), so every task reduces its run's values over the locations before
it sends them back.  For each engine it prints the wall time and throughput of reading (runs/s, MB of
Cube files/s) and of modeling every call path × metric (series/s), and checks that the experiment and
every model equal the in-process ones.  For each cluster size also: the cluster's start, the
per-task costs from Dask's task stream (decode time; what a result weighs pickled, against the file it
came from), the overhead against in-process, and each worker's peak memory (``ru_maxrss``).  Last, a
model of the wall time on N workers built from those per-task costs (see bench/README.md §16).

Every file is read once before timing, so all engines read from the page cache.
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "bench" / ".dask-study"

COUNTERS = ("PAPI_TOT_INS", "PAPI_TOT_CYC", "PAPI_FP_OPS", "PAPI_L1_DCM", "PAPI_L2_TCM", "PAPI_L3_TCM",
            "PAPI_BR_MSP", "PAPI_BR_INS", "PAPI_LD_INS", "PAPI_SR_INS", "PAPI_TLB_DM", "PAPI_RES_STL",
            "PAPI_VEC_DP", "PAPI_STL_ICY")
BASE = (("time", "sec", "DOUBLE", "INCLUSIVE"), ("visits", "occ", "UINT64", "EXCLUSIVE"),
        ("min_time", "sec", "MINDOUBLE", "EXCLUSIVE"), ("max_time", "sec", "MAXDOUBLE", "EXCLUSIVE"),
        ("bytes_sent", "bytes", "UINT64", "EXCLUSIVE"), ("bytes_received", "bytes", "UINT64", "EXCLUSIVE"))


def study_folder(runs: int, callpaths: int, metrics: int, locations: int) -> Path:
    return CACHE / f"r{runs}-c{callpaths}-m{metrics}-l{locations}"


def generate(folder: Path, runs: int, callpaths: int, metrics: int, locations: int, seed: int = 20) -> None:
    """``bench.p{p}.r{rep}/profile.cubex`` for 20 values of p (4, 8, ..., 80) and runs/20 repetitions: per call
    path a law ``b·p^e`` (e from 0, 1/2, 1, 3/2, 2), ±2% noise per location, ranks ≡ 0 mod 8 10% slower."""
    from pmkit.testing.cubewriter import CubeMetric, write_cube

    rng = np.random.default_rng(seed)
    kinds = [*BASE, *((name, "#", "UINT64", "INCLUSIVE") for name in COUNTERS)][:metrics]
    kinds += [(f"PAPI_EXTRA_{i}", "#", "UINT64", "INCLUSIVE") for i in range(metrics - len(kinds))]
    cube_metrics = [CubeMetric(*kind) for kind in kinds]
    regions = [f"solver_{i}" for i in range(150)] + ["MPI_Allreduce", "MPI_Isend", "MPI_Irecv", "MPI_Waitall"]
    paths, seen = ["main"], {"main"}
    while len(paths) < callpaths:
        parent = paths[int(rng.integers(len(paths)))]
        child = f"{parent}->{regions[int(rng.integers(len(regions)))]}"
        if parent.count("->") < 8 and child not in seen:
            paths.append(child)
            seen.add(child)
    exponent = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], size=len(paths))
    base = rng.uniform(1e-5, 1e-3, size=len(paths))
    slow = np.where(np.arange(locations) % 8 == 0, 1.1, 1.0)
    scale = {"visits": 1e2, "bytes_sent": 1e6, "bytes_received": 1e6}
    repetitions = max(1, runs // 20)
    start = time.perf_counter()
    written = 0
    for p in range(4, 4 * 20 + 1, 4):
        law = base * p ** exponent
        for rep in range(1, repetitions + 1):
            values = {}
            for name, *_ in kinds:
                noise = rng.uniform(0.98, 1.02, size=(len(paths), locations)) * slow
                values[name] = law[:, None] * noise * (1e9 if name.startswith("PAPI") else scale.get(name, 1.0))
            write_cube(folder / f"bench.p{p}.r{rep}" / "profile.cubex", paths, cube_metrics, values,
                       processes=locations)
            written += 1
            if written % 10 == 0:
                print(f"  generated {written}/{20 * repetitions} runs ({time.perf_counter() - start:.0f} s)",
                      file=sys.stderr, flush=True)
    (folder / "complete").write_text("")


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def warm_page_cache(folder: Path) -> int:
    """Read every file once (the timings then read from memory); their total size in bytes."""
    total = 0
    for file in sorted(folder.glob("*/profile.cubex")):
        with file.open("rb") as handle:
            while chunk := handle.read(1 << 24):
                total += len(chunk)
    return total


def peak_mb() -> float:
    """This process's peak resident memory (VmHWM: since its program started; ``ru_maxrss`` would count
    the parent's peak too, for a worker spawned from a large process)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tasks_of(folder: Path) -> list[tuple]:
    """The reader's tasks for the study, as ``read_cube`` makes them (one per file, reduced over locations)."""
    from pmkit.readers.cube_study import discover
    from pmkit.readers.limits import Limits

    return [(run.file, None, False, Limits(), "mean") for run in discover(folder).runs]


def computes(stream) -> list[float]:
    """Compute seconds of each task in a Dask task stream."""
    return [sum(s["stop"] - s["start"] for s in record["startstops"] if s["action"] == "compute")
            for record in stream.data]


def cluster_run(folder: Path, workers: int, experiment, models, dask_malloc: bool = False) -> dict:
    """Everything measured on a LocalCluster of ``workers`` single-threaded worker processes, started as
    ``--executor dask`` starts it (``dask_malloc``: with Dask's MALLOC_TRIM_THRESHOLD_ instead)."""
    import distributed

    import pmkit
    from pmkit import progress
    from pmkit.executors import DaskExecutor
    from pmkit.readers.cube import load_run
    from pmkit.testing.identity import experiment_differences, model_differences

    out: dict = {"workers": workers, "dask_malloc": dask_malloc}
    # the machine's load drifts from minute to minute: in-process, serially, just before, for the comparison
    _, out["serial_now"] = timed(pmkit.read, folder, locations=False, jobs=1)
    start = time.perf_counter()
    engine = DaskExecutor(workers=workers, keep_malloc=not dask_malloc)
    client = engine.client
    out["start"] = time.perf_counter() - start
    try:
        engine.map(load_run, tasks_of(folder)[:workers], description="warm-up")  # imports in every worker
        moments: list[float] = []

        def tasks_running(event: progress.ProgressEvent) -> None:
            if event.description == "reading Cube files" and (not moments or event.finished):
                moments.append(time.perf_counter())

        cpu = time.process_time()
        with distributed.get_task_stream(client) as stream, progress.listening(tasks_running):
            read, out["read"] = timed(pmkit.read, folder, locations=False, executor=engine)
        out["client_cpu"] = time.process_time() - cpu
        out["map"] = moments[-1] - moments[0]
        out["tasks"] = computes(stream)
        out["same_experiment"] = experiment_differences(experiment, read) == []
        pmkit.model(read, executor=engine)  # warm-up: numba's cached kernels load once per worker
        cpu = time.process_time()
        with distributed.get_task_stream(client) as stream:
            modeled, out["model"] = timed(pmkit.model, read, executor=engine)
        out["model_client_cpu"] = time.process_time() - cpu
        out["chunks"] = computes(stream)
        out["same_models"] = model_differences(models, modeled) == []
        out["worker_mb"] = max(client.run(peak_mb).values())
    finally:
        engine.close()
        if dask_malloc:  # Dask's nannies wrote it into this process's environment, where later workers inherit it
            os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    return out


def transfer_sizes(folder: Path, experiment, workers: int) -> dict:
    """Bytes a reading task and a modeling chunk send each way, pickled as Dask pickles them."""
    from pmkit.modelchunks import chunk_bounds, chunk_of, model_chunk
    from pmkit.readers.cube import load_run
    from pmkit.sdk import DEFAULT_MODELER, _modeler
    from pmkit.series import SeriesBatch

    tasks = tasks_of(folder)[:3]
    reduced = [len(pickle.dumps(load_run(*task), protocol=5)) for task in tasks]
    kept = len(pickle.dumps(load_run(*tasks[0][:4]), protocol=5))
    batch = SeriesBatch.from_experiment(experiment)
    first, stop = chunk_bounds(len(batch), workers)[0]
    chunk = chunk_of(batch, first, stop)
    entry, options = _modeler(DEFAULT_MODELER, "mean", None, {})
    return {"task_in": len(pickle.dumps(tasks[0], protocol=5)), "task_out": statistics.median(reduced),
            "task_out_kept": kept, "file": tasks[0][0].stat().st_size, "chunk_series": stop - first,
            "chunk_in": len(pickle.dumps((entry, options, chunk), protocol=5)),
            "chunk_out": len(pickle.dumps(model_chunk(entry, options, chunk), protocol=5))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--callpaths", type=int, default=2000)
    parser.add_argument("--metrics", type=int, default=20)
    parser.add_argument("--locations", type=int, default=64)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--dask-malloc", action="store_true", help="also run each cluster size with Dask's "
                        "MALLOC_TRIM_THRESHOLD_=65536 in the workers, which pmkit's LocalCluster leaves out")
    args = parser.parse_args()

    import numba  # noqa: F401  every run takes the compiled kernels, as batches of 10,000 series and more do

    import pmkit

    folder = study_folder(args.runs, args.callpaths, args.metrics, args.locations)
    if not (folder / "complete").exists():
        print(f"generating {folder} (once)", file=sys.stderr)
        generate(folder, args.runs, args.callpaths, args.metrics, args.locations)
    file_bytes = warm_page_cache(folder)
    runs = len(tasks_of(folder))
    print(f"study {folder.relative_to(ROOT)}: {runs} runs × {args.callpaths} call paths × {args.metrics} metrics × "
          f"{args.locations} locations, {file_bytes / 2**20:,.0f} MB of Cube files; per-location values not kept")

    experiment, serial = timed(pmkit.read, folder, locations=False, jobs=1)
    _, threads = timed(pmkit.read, folder, locations=False, jobs=2)
    series = len(experiment.callpaths) * len(experiment.metrics)
    pmkit.model(experiment)  # warm-up: numba's cached kernels load once
    models, modeled = timed(pmkit.model, experiment)
    print(f"in-process: read {serial:.2f} s serial, {threads:.2f} s on 2 threads; model {modeled:.2f} s for "
          f"{series:,} series; peak memory of this process {peak_mb():,.0f} MB")
    sizes = transfer_sizes(folder, experiment, 1)

    rows = [("in-process, 1 thread", serial, modeled, None), ("in-process, 2 threads (read)", threads, modeled, None)]
    measured = []
    for workers in args.workers:
        for dask_malloc in (False, True) if args.dask_malloc else (False,):
            result = cluster_run(folder, workers, experiment, models, dask_malloc)
            measured.append(result)
            label = f"dask, {workers} worker{'s' if workers > 1 else ''}" + (", Dask's malloc trim" if dask_malloc
                                                                              else "")
            rows.append((label, result["read"], result["model"], result))

    print()
    print("| engine | read s | runs/s | MB/s | in-process read just before s | model s | series/s | "
          "cluster start s | worker peak MB | identical |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for label, read, model, result in rows:
        same = "—" if result is None else ("yes" if result["same_experiment"] and result["same_models"] else "NO")
        start = "—" if result is None else f"{result['start']:.1f}"
        memory = "—" if result is None else f"{result['worker_mb']:,.0f}"
        before = "—" if result is None else f"{result['serial_now']:.2f}"
        print(f"| {label} | {read:.2f} | {runs / read:.1f} | {file_bytes / 2**20 / read:,.0f} | {before} | "
              f"{model:.2f} | {series / model:,.0f} | {start} | {memory} | {same} |")

    print()
    print("| workers | malloc trim | read: tasks, median s | Σ tasks s | tasks' wall s | client CPU s | "
          "client only s | model: chunks × median s | Σ chunks s | client CPU s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in measured:
        trim = "Dask's 65536" if r["dask_malloc"] else "glibc's"
        chunks = f"{len(r['chunks'])} × {statistics.median(r['chunks']):.2f}" if r["chunks"] else "in-process"
        print(f"| {r['workers']} | {trim} | {statistics.median(r['tasks']):.3f} | {sum(r['tasks']):.1f} | "
              f"{r['map']:.2f} | {r['client_cpu']:.2f} | {r['read'] - r['map']:.2f} | {chunks} | "
              f"{sum(r['chunks']):.2f} | {r['model_client_cpu']:.2f} |")

    print()
    print(f"bytes per reading task: {sizes['task_in']:,} sent, {sizes['task_out']:,} back (per-location values "
          f"reduced; {sizes['task_out_kept']:,} when they are kept) for a {sizes['file']:,}-byte file; per modeling "
          f"chunk of {sizes['chunk_series']:,} series: {sizes['chunk_in']:,} sent, {sizes['chunk_out']:,} back")
    one = next((r for r in measured if r["workers"] == 1 and not r["dask_malloc"]), None)
    if one is not None:
        n = len(one["tasks"])
        mean = sum(one["tasks"]) / n
        alone = one["read"] - one["map"]
        client = max(0.0, one["client_cpu"] - alone) / n
        chunk_sum, rest = sum(one["chunks"]), one["model"] - sum(one["chunks"])
        print()
        print(f"model of N workers, from the 1-worker run: T_read(N) ≈ {alone:.2f} s (this process alone: finding "
              f"the runs, assembling) + max({n} × {mean:.3f} s / N (decoding), {n} × {client * 1e3:.1f} ms "
              f"(this process and the scheduler per task, serial)); T_model(N) ≈ {rest:.2f} s (batch, chunks, "
              f"joining, here) + {chunk_sum:.2f} s / N")
        for workers in (1, 2, 4, 8, 16, 32, 64):
            read = alone + max(n * mean / workers, n * client)
            model = rest + chunk_sum / workers
            print(f"  N = {workers:>2}: read {read:6.2f} s ({n / read:6.1f} runs/s), model {model:5.2f} s "
                  f"({series / model:9,.0f} series/s)")


if __name__ == "__main__":
    main()
