"""Real MPI timings → OTF2 traces in Score-P's conventions: the inputs of the Kluge benchmarks.

    python bench/kluge_traces.py [--out bench/.kluge] [--processes 2,4,8] [--runs 2] [options of mpi_kluge_app.py]

runs ``bench/mpi_kluge_app.py`` under ``mpirun`` — per process count one calibration run and
``--runs`` runs of the application — and turns each run's timings into an OTF2 archive with
pmkit's writer (``pmkit.testing.otf2writer``: the events Score-P records for the same calls).  It
writes two study folders in Extra-P's naming, ``OUT/calibration/calib.p{P}.r1/traces.otf2`` (the
benchmark sample, for ``pmkit calibrate``) and ``OUT/study/app.p{P}.r{R}/traces.otf2`` (the
application), and next to each application trace ``injected.json``: the late rank,
the iterations with the delay, and the (rank, iteration) pairs that wait because of it — rank L+j
in iteration k+j−1 for j = 1 … P−1, the wave around the ring (see ``mpi_kluge_app.py``) — with the
start times (seconds in the trace) of their ``MPI_Send`` and ``MPI_Recv``: the instances a detector
should find.  Where the wait lands depends on the MPI library: with an eager send the receive waits
for the late sender; Open MPI 4.1 with two ranks here blocks the *send* until the late rank
receives (a late receiver), so both calls of a waiting pair count.  ``--from-timings`` rewrites the
traces from timings measured before, without running MPI.  Generated
files stay out of git (``bench/.kluge`` is ignored); the generator is what is committed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
APP = HERE / "mpi_kluge_app.py"
LATE_PHASE = 5
"""As in mpi_kluge_app.py: the late rank is late in iterations k with k mod late_every = 5."""


def run_mpi(processes: int, out: Path, app_args: list[str]) -> Path:
    """Run the MPI program with ``processes`` ranks; returns the folder of its timings."""
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ)
    command = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(processes), sys.executable, str(APP),
               str(out), *app_args]
    subprocess.run(command, check=True, env=env, timeout=3600)
    return out


def write_trace(timings: Path, folder: Path) -> dict:
    """The OTF2 trace of one run's timings; returns the injected instances (see the module)."""
    from pmkit.testing.otf2writer import TraceWriter

    ranks = sorted(timings.glob("rank*.json"), key=lambda f: int(f.stem[4:]))
    documents = [json.loads(f.read_text()) for f in ranks]
    origin = min(min(r[1] for r in d["regions"]) for d in documents)
    settings = documents[0]["settings"]
    late_rank, late_every = int(settings["late_rank"]), int(settings["late_every"])
    size = len(documents)
    late_iterations = [k for k in range(int(settings["iterations"])) if late_every and k % late_every == LATE_PHASE]
    waits = {((late_rank + j) % size, k + j - 1) for k in late_iterations for j in range(1, size)}
    injected = {"late_rank": late_rank, "iterations": late_iterations, "delay": float(settings["delay"]),
                "callpaths": ["main->app->exchange->MPI_Send", "main->app->exchange->MPI_Recv"],
                "waits": sorted(waits), "calls": []}
    if folder.exists():
        shutil.rmtree(folder)
    with TraceWriter(folder, ranks=len(documents), timer_resolution=1_000_000_000, program="mpi_kluge_app") as trace:
        for document in documents:
            writer = trace.rank(document["rank"])
            items = [(start, end, name, None) for name, start, end in document["regions"]]
            items += [(call["start"], call["end"], call["op"], call) for call in document["calls"]]
            items.sort(key=lambda item: (item[0], -item[1]))
            stack: list[tuple[int, str]] = []
            for start, end, name, call in items:
                while stack and stack[-1][0] <= start:
                    done, region = stack.pop()
                    writer.leave((done - origin) / 1e9, region)
                s, e = (start - origin) / 1e9, (end - origin) / 1e9
                if call is None:
                    writer.enter(s, name)
                    stack.append((end, name))
                elif name == "MPI_Send":
                    writer.send(s, e, dest=call["peer"], nbytes=call["nbytes"], tag=call["tag"])
                elif name == "MPI_Recv":
                    writer.recv(s, e, source=call["peer"], nbytes=call["nbytes"], tag=call["tag"])
                else:
                    writer.collective(s, e, name, nbytes=call["nbytes"])
                if call is not None and (document["rank"], call.get("iteration")) in waits and name in ("MPI_Send",
                                                                                                       "MPI_Recv"):
                    injected["calls"].append((document["rank"], call["iteration"], name, s))
            while stack:
                done, region = stack.pop()
                writer.leave((done - origin) / 1e9, region)
    if late_iterations:
        (folder / "injected.json").write_text(json.dumps(injected, indent=1))
    return injected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / ".kluge")
    parser.add_argument("--processes", default="2,4,8")
    parser.add_argument("--runs", type=int, default=2, help="repetitions of each process count")
    parser.add_argument("--from-timings", action="store_true", help="rewrite the traces from OUT/timings only")
    args, app_args = parser.parse_known_args()
    if args.from_timings:
        for timings in sorted((args.out / "timings").glob("*.p*")):
            kind = "calibration" if timings.name.startswith("calib") else "study"
            name = timings.name if kind == "study" else f"{timings.name}.r1"
            write_trace(timings, args.out / kind / name)
            print(f"{timings} → {args.out / kind / name}", flush=True)
        return 0
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for p in [int(x) for x in args.processes.split(",")]:
        timings = run_mpi(p, args.out / "timings" / f"calib.p{p}", [*app_args, "--iterations", "0"])
        write_trace(timings, args.out / "calibration" / f"calib.p{p}.r1")
        print(f"p={p}: calibration → {args.out / 'calibration' / f'calib.p{p}.r1'}", flush=True)
        for rep in range(1, args.runs + 1):
            timings = run_mpi(p, args.out / "timings" / f"app.p{p}.r{rep}", [*app_args, "--repetitions", "0"])
            injected = write_trace(timings, args.out / "study" / f"app.p{p}.r{rep}")
            print(f"p={p} r={rep}: {len(injected['waits'])} calls wait for the injected delay "
                  f"→ {args.out / 'study' / f'app.p{p}.r{rep}'}", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
