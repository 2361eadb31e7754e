"""An MPI program with a calibration sample and an iterative application with a known injected delay.

Run under MPI (``bench/kluge_traces.py`` does it):

    mpirun --oversubscribe --allow-run-as-root -np 4 python bench/mpi_kluge_app.py OUT_DIR [options]

Each rank times every MPI call it makes with ``time.perf_counter_ns`` — CLOCK_MONOTONIC, one
clock for every process of the machine, so times compare across ranks (Open MPI's ``MPI_Wtime``
counts from each process's own start) — and writes ``OUT_DIR/rank<r>.json``: its user regions (enter/leave) and MPI
calls with their arguments — what Score-P would record, turned into OTF2 traces in Score-P's
conventions by ``bench/kluge_traces.py``.

1. Calibration (``calib_pingpong``, ``calib_allreduce``, ``calib_barrier``): ping-pongs between
   ranks 0 and 1 and allreduces/barriers on all ranks, ``--repetitions`` times per message size.
2. Application (``app``): ``--iterations`` iterations of ``compute`` (``--compute`` seconds of
   sleep: on this 2-core machine up to 8 ranks that spin would time-slice each other and bury any
   injected delay in millisecond stalls; ``--spin`` spins instead) and ``exchange`` — a ring:
   every rank sends ``--message`` bytes to the next rank and receives from the previous one — and
   every ``--check-every`` iterations an
   ``MPI_Allreduce`` in ``check``.  Rank ``--late-rank`` (L) computes ``--delay`` seconds longer in
   iterations k ≡ 5 (mod ``--late-every``): rank L+1 waits for it in ``MPI_Recv`` in iteration k, is
   itself late to send, so rank L+2 waits in iteration k+1, and so on around the ring — P−1 late
   senders per injected delay, all at ``main->app->exchange->MPI_Recv``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from mpi4py import MPI

LATE_PHASE = 5
"""The late rank is late in iterations k with k mod late_every = LATE_PHASE."""


class Recorder:
    """Collects this rank's regions and MPI calls with nanosecond timestamps."""

    def __init__(self) -> None:
        self.regions: list[tuple[str, int, int]] = []
        self.calls: list[dict] = []
        self._open: list[tuple[str, int]] = []

    def enter(self, name: str) -> None:
        self._open.append((name, now()))

    def leave(self) -> None:
        name, start = self._open.pop()
        self.regions.append((name, start, now()))

    def call(self, op: str, start: int, end: int, **args: float) -> None:
        self.calls.append({"op": op, "start": start, "end": end, **args})


def now() -> int:
    return time.perf_counter_ns()


def work(seconds: float, spin: bool) -> None:
    """Stand-in for computation: sleep (default), or spin on the CPU with ``--spin``."""
    if not spin:
        time.sleep(seconds)
        return
    end = now() + int(seconds * 1e9)
    while now() < end:
        pass


def send(rec: Recorder, comm: MPI.Comm, buf: np.ndarray, dest: int, tag: int, **extra: float) -> None:
    t0 = now()
    comm.Send(buf, dest=dest, tag=tag)
    rec.call("MPI_Send", t0, now(), peer=dest, tag=tag, nbytes=buf.nbytes, **extra)


def recv(rec: Recorder, comm: MPI.Comm, buf: np.ndarray, source: int, tag: int, **extra: float) -> None:
    t0 = now()
    comm.Recv(buf, source=source, tag=tag)
    rec.call("MPI_Recv", t0, now(), peer=source, tag=tag, nbytes=buf.nbytes, **extra)


def allreduce(rec: Recorder, comm: MPI.Comm, buf: np.ndarray, out: np.ndarray, **extra: float) -> None:
    t0 = now()
    comm.Allreduce(buf, out, op=MPI.SUM)
    rec.call("MPI_Allreduce", t0, now(), nbytes=buf.nbytes, **extra)


def barrier(rec: Recorder, comm: MPI.Comm, **extra: float) -> None:
    t0 = now()
    comm.Barrier()
    rec.call("MPI_Barrier", t0, now(), nbytes=0, **extra)


def calibration(rec: Recorder, comm: MPI.Comm, sizes: list[int], repetitions: int) -> None:
    rank = comm.rank
    rec.enter("calib_pingpong")
    for nbytes in sizes:
        buf = np.zeros(max(nbytes, 1), np.uint8)[:nbytes]
        comm.Barrier()
        for _ in range(repetitions):
            if rank == 0:
                send(rec, comm, buf, 1, 1)
                recv(rec, comm, buf, 1, 2)
            elif rank == 1:
                recv(rec, comm, buf, 0, 1)
                send(rec, comm, buf, 0, 2)
    rec.leave()
    comm.Barrier()
    rec.enter("calib_allreduce")
    for nbytes in sizes:
        data, out = np.zeros(max(nbytes // 8, 1)), np.zeros(max(nbytes // 8, 1))
        comm.Barrier()
        for _ in range(repetitions):
            allreduce(rec, comm, data, out)
    rec.leave()
    rec.enter("calib_barrier")
    for _ in range(repetitions):
        barrier(rec, comm)
    rec.leave()


def application(rec: Recorder, comm: MPI.Comm, args: argparse.Namespace) -> None:
    rank, size = comm.rank, comm.size
    right, left = (rank + 1) % size, (rank - 1) % size
    out_buf, in_buf = np.zeros(args.message, np.uint8), np.zeros(args.message, np.uint8)
    value, total = np.zeros(1), np.zeros(1)
    comm.Barrier()
    rec.enter("app")
    for k in range(args.iterations):
        late = rank == args.late_rank and args.late_every and k % args.late_every == LATE_PHASE
        rec.enter("compute")
        work(args.compute + (args.delay if late else 0.0), args.spin)
        rec.leave()
        rec.enter("exchange")
        send(rec, comm, out_buf, right, k % 32768, iteration=k)  # eager: returns before it is received
        recv(rec, comm, in_buf, left, k % 32768, iteration=k)
        rec.leave()
        if args.check_every and (k + 1) % args.check_every == 0:
            rec.enter("check")
            allreduce(rec, comm, value, total, iteration=k)
            rec.leave()
    rec.leave()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sizes", default="8,64,512,4096,32768,262144", help="calibration message sizes in bytes")
    parser.add_argument("--repetitions", type=int, default=300)
    parser.add_argument("--iterations", type=int, default=400)
    parser.add_argument("--compute", type=float, default=2e-3)
    parser.add_argument("--delay", type=float, default=1e-2)
    parser.add_argument("--spin", action="store_true", help="spin instead of sleeping in compute")
    parser.add_argument("--late-rank", type=int, default=0)
    parser.add_argument("--late-every", type=int, default=20)
    parser.add_argument("--check-every", type=int, default=50)
    parser.add_argument("--message", type=int, default=1024)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rec = Recorder()
    rec.enter("main")
    if args.repetitions:
        calibration(rec, comm, [int(s) for s in args.sizes.split(",")], args.repetitions)
    if args.iterations:
        application(rec, comm, args)
    comm.Barrier()
    rec.leave()
    args.out.mkdir(parents=True, exist_ok=True)
    document = {"rank": comm.rank, "size": comm.size, "resolution": 1_000_000_000, "regions": rec.regions,
                "calls": rec.calls, "settings": {k: str(v) for k, v in vars(args).items()}}
    (args.out / f"rank{comm.rank}.json").write_text(json.dumps(document))
    return 0


if __name__ == "__main__":
    sys.exit(main())
