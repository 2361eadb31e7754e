"""Small MPI programs written as OTF2 traces by simulation, with known answers, for tests and examples.

* :func:`calibration_trace`: a benchmark sample — ping-pongs (``main->calib_pingpong``) and
  allreduces (``main->calib_allreduce``) repeated at several message sizes, each call's time
  ``t_min + window·K`` with ``K`` Poisson (or geometric, for ``errors="exponential"``), as the
  error model of Kluge et al. assumes.
* :func:`late_sender_trace`: an iterative application — every iteration each rank computes, sends
  to the next rank of a ring and receives from the previous one
  (``main->iterate->exchange->MPI_Send`` / ``MPI_Recv``), optionally with an ``MPI_Allreduce``
  every few iterations; one rank computes ``delay`` longer in chosen iterations, so the next rank
  waits in ``MPI_Recv`` (a late sender), is late itself, and the wait travels around the ring.
  :class:`Injected` says where.
* :func:`late_sender_study`: that application at several process counts, repetitions included,
  in Extra-P's folder naming (``app.p4.r1/traces.otf2``).

The simulation is deterministic for a seed: blocking sends return after a small fixed cost
(eager protocol), a receive completes ``latency`` after the later of its start and the send's
start, collectives complete ``latency·log2(P)`` after the last process arrives.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pmkit.testing.otf2writer import TraceWriter

EXCHANGE = "main->iterate->exchange"
RECV_CALLPATH = f"{EXCHANGE}->MPI_Recv"
SEND_CALLPATH = f"{EXCHANGE}->MPI_Send"
LATE_PHASE = 5
"""The late rank is late in iterations k with k mod late_every = LATE_PHASE."""
ALLREDUCE_CALLPATH = "main->iterate->check->MPI_Allreduce"


@dataclass
class Injected:
    """Where the delay was planted and whom it made wait.

    ``late_rank`` computes ``delay`` longer in ``iterations`` (0-based); ``waits`` lists the
    (rank, iteration) of every ``MPI_Recv`` that waits because of it — the wave of late senders
    around the ring — and ``recv_starts`` their (rank, start in seconds).
    """

    late_rank: int
    iterations: list[int]
    delay: float
    waits: list[tuple[int, int]] = field(default_factory=list)
    recv_starts: list[tuple[int, float]] = field(default_factory=list)
    callpath: str = RECV_CALLPATH


def _latency(nbytes: float) -> float:
    return 2e-6 + nbytes / 2e9


def calibration_trace(folder: str | Path, sizes: Sequence[int] = (8, 1024, 65536), repetitions: int = 300,
                      ranks: int = 2, window: float = 1e-7, mean_error: float = 4.0, errors: str = "poisson",
                      seed: int = 7) -> Path:
    """A benchmark trace of repeated ping-pongs and allreduces (see the module); returns its folder."""
    rng = np.random.default_rng(seed)
    draw = (lambda n: rng.poisson(mean_error, n)) if errors == "poisson" else \
        (lambda n: rng.geometric(1 / (1 + mean_error), n) - 1)
    folder = Path(folder)
    with TraceWriter(folder, ranks=ranks) as trace:
        writers = [trace.rank(r) for r in range(ranks)]
        t = 1e-4
        for w in writers:
            w.enter(0.0, "main")
        for w in writers:
            w.enter(t, "calib_pingpong")
        for nbytes in sizes:
            send = _latency(nbytes) * 0.2 + window * draw(repetitions)
            recv = _latency(nbytes) + window * draw(repetitions)
            for i in range(repetitions):
                writers[0].send(t, t + send[i], dest=1, nbytes=nbytes, tag=1)
                writers[1].recv(t, t + recv[i], source=0, nbytes=nbytes, tag=1)
                for idle in writers[2:]:
                    idle.region(t, t + 1e-7, "idle")
                t += max(send[i], recv[i]) + 5e-6
        for w in writers:
            w.leave(t, "calib_pingpong")
        t += 1e-5
        for w in writers:
            w.enter(t, "calib_allreduce")
        for nbytes in sizes:
            base = _latency(nbytes) * max(1.0, math.log2(ranks))
            for _ in range(repetitions):
                times = base + window * draw(ranks)
                for w, spent in zip(writers, times, strict=True):
                    w.collective(t, t + spent, "MPI_Allreduce", nbytes=nbytes)
                t += float(times.max()) + 5e-6
        for w in writers:
            w.leave(t, "calib_allreduce")
            w.leave(t + 1e-5, "main")
    return folder


def late_sender_trace(folder: str | Path, ranks: int = 4, iterations: int = 200, late_rank: int = 0,
                      late_every: int = 20, delay: float = 5e-4, nbytes: int = 1024, compute: float = 1e-4,
                      allreduce_every: int = 0, seed: int = 11) -> Injected:
    """The iterative ring application with one late rank (see the module); returns where it waits."""
    if ranks < 2:
        raise ValueError("the application needs at least 2 ranks")
    rng = np.random.default_rng(seed)
    late_iterations = [k for k in range(iterations) if late_every and k % late_every == LATE_PHASE]
    waits = sorted({((late_rank + j) % ranks, k + j - 1) for k in late_iterations for j in range(1, ranks)})
    injected = Injected(late_rank, late_iterations, delay, waits)
    wanted = set(waits)
    latency, send_cost = _latency(nbytes), 1e-6
    with TraceWriter(folder, ranks=ranks) as trace:
        writers = [trace.rank(r) for r in range(ranks)]
        now = np.full(ranks, 1e-4)
        for r, w in enumerate(writers):
            w.enter(0.0, "main")
            w.enter(now[r], "iterate")
        for k in range(iterations):
            work = compute * (1 + 0.01 * rng.random(ranks))
            if k in late_iterations:
                work[late_rank] += delay
            sent = now + work  # every rank sends right after computing (eager: returns at once)
            for r, w in enumerate(writers):
                w.region(now[r], sent[r], "compute")
                w.enter(sent[r], "exchange")
                noise = 2e-7 * rng.exponential(1.0, 2)
                w.send(sent[r], sent[r] + send_cost + noise[0], dest=(r + 1) % ranks, nbytes=nbytes, tag=k % 32768)
                start = sent[r] + send_cost + noise[0]
                end = max(start, sent[(r - 1) % ranks]) + latency + noise[1]
                w.recv(start, end, source=(r - 1) % ranks, nbytes=nbytes, tag=k % 32768)
                if (r, k) in wanted:
                    injected.recv_starts.append((r, start))
                w.leave(end, "exchange")
                now[r] = end
            if allreduce_every and (k + 1) % allreduce_every == 0:
                last = float(now.max())
                for r, w in enumerate(writers):
                    w.enter(now[r], "check")
                    done = last + _latency(8) * max(1.0, math.log2(ranks)) + 2e-7 * rng.exponential()
                    w.collective(now[r], done, "MPI_Allreduce", nbytes=8)
                    w.leave(done, "check")
                    now[r] = done
        end = float(now.max()) + 1e-5
        for w in writers:
            w.leave(end, "iterate")
            w.leave(end + 1e-6, "main")
    return injected


def late_sender_study(folder: str | Path, processes: Sequence[int] = (2, 4, 8), repetitions: int = 2,
                      iterations: int = 60, **options: float) -> list[Path]:
    """The application at several process counts in Extra-P's naming; returns the run folders."""
    folder = Path(folder)
    runs = []
    for p in processes:
        for rep in range(1, repetitions + 1):
            run = folder / f"app.p{p}.r{rep}"
            late_sender_trace(run, ranks=p, iterations=iterations, seed=1000 * p + rep, **options)  # type: ignore[arg-type]
            runs.append(run)
    return runs


_COMMAND = """Simulated MPI traces for pmkit's examples.

``python -m pmkit.testing.trace_programs DIR`` writes DIR/study, a late-sender application traced at
p = 2, 4 and 8 with 2 repetitions each (``app.p4.r1/traces.otf2``), and DIR/calibration, a benchmark
sample of ping-pongs and allreduces for ``pmkit calibrate``; DIR must not hold them already.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pmkit.testing.trace_programs DIR``: an example trace study and a calibration trace."""
    from pmkit.testing.generator_cli import parse

    parsed = parse(argv, "pmkit.testing.trace_programs", "DIR", _COMMAND)
    if isinstance(parsed, int):
        return parsed
    try:
        import otf2  # noqa: F401  (TraceWriter needs it; say so in one line rather than a traceback)
    except ImportError:
        print("error: writing OTF2 traces needs the otf2 package: pip install 'pmkit-hpc[otf2]' (or pip install otf2)",
              file=sys.stderr)
        return 1
    target = Path(parsed[0])
    written = [folder for folder in (target / "study", target / "calibration") if folder.exists()]
    if written:  # OTF2 writes a new archive only, and would fail half-way with a traceback
        print(f"error: {written[0]} exists and OTF2 does not overwrite traces: remove it, or give another folder "
              "than " + str(target), file=sys.stderr)
        return 1
    late_sender_study(target / "study")
    calibration_trace(target / "calibration")
    print(f"wrote {target / 'study'} (app.p2..p8, 2 repetitions) and {target / 'calibration'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
