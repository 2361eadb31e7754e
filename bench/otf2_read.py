"""OTF2 reading speed and memory: pmkit's reader against the otf2 package's plain event loop.

    python bench/otf2_read.py [--events 2000000] [--ranks 8] [--keep DIR]

Writes a Score-P-style trace of ``--ranks`` ranks (an iterative code: two compute regions, a ring
exchange and an allreduce per iteration) with about ``--events`` events, then reads it

* with pmkit (``pmkit.read``: profile and event table, end to end) in a fresh process — the
  first read of a process includes loading numba's cached kernels — and again in the same process
  (warm), serially and on threads;
* with the ``otf2`` package's event loop (``pmkit.testing.otf2reference``, the same profile in
  plain Python: the baseline the issue names, ~120,000 events/s);

and prints events/s and peak memory.  A second trace with 4× the events but the same call tree
and the same number of MPI calls (more compute-region visits per iteration) shows whether memory
grows with the events or with the output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SNIPPET = """
import json, sys, time, tracemalloc
t0 = time.perf_counter()
import pmkit
t1 = time.perf_counter()
exp = pmkit.read(sys.argv[1], jobs=int(sys.argv[2]))
t2 = time.perf_counter()
del exp
tracemalloc.start()
t3 = time.perf_counter()
exp = pmkit.read(sys.argv[1], jobs=int(sys.argv[2]))
t4 = time.perf_counter()
held, peak = tracemalloc.get_traced_memory()
print(json.dumps({"cold": t2 - t1, "warm": t4 - t3, "import": t1 - t0, "peak_mb": peak / 2**20,
                  "held_mb": held / 2**20, "calls": len(exp.events), "callpaths": len(exp.callpaths)}))
"""


def per_iteration(inner: int) -> int:
    """Events per rank and iteration: timestep, exchange, the kernels, send/recv, allreduce."""
    return 4 + 2 * inner + 6 + 4


def write_trace(folder: Path, ranks: int, iterations: int, inner: int) -> int:
    """An iterative code with ``inner`` compute-region visits per iteration; returns its event count."""
    from pmkit.testing.otf2writer import TraceWriter

    rng = np.random.default_rng(1)
    with TraceWriter(folder, ranks=ranks) as trace:
        writers = [trace.rank(r) for r in range(ranks)]
        for w in writers:
            w.enter(0.0, "main")
        t = 1e-6
        for k in range(iterations):
            step = 1e-6 * (1 + rng.random(ranks))
            for r, w in enumerate(writers):
                now = t
                w.enter(now, "timestep")
                for _ in range(inner):
                    w.region(now, now + step[r], "kernel")
                    now += step[r]
                w.enter(now, "exchange")
                w.send(now, now + 1e-7, dest=(r + 1) % ranks, nbytes=4096, tag=k % 1000)
                w.recv(now + 1e-7, now + 2e-6, source=(r - 1) % ranks, nbytes=4096, tag=k % 1000)
                w.leave(now + 2e-6, "exchange")
                w.collective(now + 2e-6, t + inner * 2e-6 + 5e-6, "MPI_Allreduce", nbytes=8)
                w.leave(t + inner * 2e-6 + 5e-6, "timestep")
            t += inner * 2e-6 + 6e-6
        for w in writers:
            w.leave(t, "main")
    return iterations * ranks * per_iteration(inner) + 2 * ranks


def pmkit_run(trace: Path, jobs: int) -> dict:
    out = subprocess.run([sys.executable, "-c", SNIPPET, str(trace), str(jobs)], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def reference_run(trace: Path) -> float:
    from pmkit.testing.otf2reference import reference_profile

    t0 = time.perf_counter()
    reference_profile(trace / "traces.otf2")
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--keep", type=Path, help="write the traces here and keep them")
    parser.add_argument("--skip-reference", action="store_true", help="do not time the otf2 event loop")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="pmkit-otf2-bench-"))
    rows = []
    iterations = max(1, args.events // (args.ranks * per_iteration(2)))
    more = (4 * per_iteration(2) - per_iteration(0)) // 2  # kernels per iteration for 4× the events
    for label, inner, factor in (("trace", 2, 1), ("4× events, same output", more, 4)):
        folder = root / f"bench{factor}.p{args.ranks}.r1"
        t0 = time.perf_counter()
        events = write_trace(folder, args.ranks, iterations, inner)
        written = time.perf_counter() - t0
        size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 2**20
        print(f"{label}: {events:,} events, {size:.0f} MB, written in {written:.1f} s", flush=True)
        serial, threads = pmkit_run(folder, 1), pmkit_run(folder, 2)
        reference = None if args.skip_reference or factor > 1 else reference_run(folder)
        rows.append((label, events, serial, threads, reference))
    print()
    header = ("trace", "events", "pmkit cold", "warm 1 thread", "warm 2 threads", "otf2 loop", "peak mem", "kept",
              "MPI calls")
    print("{:<24} {:>11} {:>12} {:>14} {:>15} {:>11} {:>9} {:>8} {:>10}".format(*header))
    for label, events, serial, threads, reference in rows:
        def rate(seconds: float, events: int = events) -> str:
            return f"{events / seconds / 1e6:.2f} M/s"

        loop = f"{events / reference / 1e3:,.0f} k/s" if reference else "–"
        print(f"{label:<24} {events:>11,} {rate(serial['cold']):>12} {rate(serial['warm']):>14} "
              f"{rate(threads['warm']):>15} {loop:>11} {serial['peak_mb']:>6.0f} MB {serial['held_mb']:>5.0f} MB "
              f"{serial['calls']:>10,}")
    print(f"\nimport pmkit: {rows[0][2]['import']:.2f} s; cold = the first read of a fresh process (it loads numba's "
          "cached kernels); warm = the next read; peak mem and kept = Python/numpy allocations during the warm "
          "read (tracemalloc) and what the experiment keeps")
    if not args.keep:
        import shutil

        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
