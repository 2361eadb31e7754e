"""Score-P studies with PAPI counters from a known application and machine model, with noise.

``python -m pmkit.testing.papi_study DIR`` writes ``DIR/app.p{4..64}.r1/profile.cubex``: a strong-scaling
MPI code whose every call path carries ``time``, ``visits``, ``bytes_sent``/``bytes_received`` and the
PAPI counters APMT reads (``PAPI_TOT_CYC``, ``PAPI_TOT_INS``, ``PAPI_RES_STL``, ``PAPI_L1_DCH``,
``PAPI_L2_DCH``, ``PAPI_L3_TCH``, ``PAPI_L3_TCM``), one location per rank, written with pmkit's
Cube writer.  ``--second-clock`` adds a run at a lower clock (``app.p8.f2000.r1``; the other runs
are then named ``...f3000...``) for the two-frequency refinement; ``--perf`` writes the same runs as
``perf stat`` CSV totals over all ranks instead.

The model behind the numbers (the truth a benchmark compares with):

* a kernel executes ``I(p) = W/p + h·(W/p)^(2/3)`` instructions per rank (work plus a halo part),
  at ``CPI_core`` cycles per instruction, with ``ρ`` data accesses per instruction served by L1,
  L2, LLC or memory; the share that misses a level falls as the per-rank working set ``S/p``
  shrinks below that level's size (so strong scaling moves accesses up the hierarchy);
* its time is ``I·CPI_core/f + BF_mem·Σ hits·latency`` and its stall cycles ``BF_mem·Σ hits·latency·f``
  plus a few non-memory stalls; cycles are time × f;
* halo exchange by ``MPI_Isend``/``MPI_Irecv``/``MPI_Waitall``: Hockney ``n·α + bytes/B`` with a
  surface of ``(N/p)^(2/3)`` per neighbour; messages larger than ``eager_limit`` (none by default)
  go by rendezvous, with ``rendezvous_alpha`` times the latency and ``rendezvous_bandwidth`` times
  the bandwidth; an ``MPI_Allreduce`` per step costing
  ``a·log2(p) + b·s + c``; an ``MPI_Bcast`` of the input; ``MPI_Init`` growing slowly with p;
* a serial part that does not shrink with p (a non-scalable kernel), and small functions;
* times (and cycles, stalls) of every call path vary from run to run by ±``noise`` (uniform) and
  per rank by a quarter of that; instruction and cache counts by a tenth and a half of it per rank
  (counts are nearly deterministic, times are not); ranks differ by a small imbalance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from pmkit.testing.cubewriter import BYTES_SENT, TIME, VISITS, CubeMetric, write_cube

PROCESSES = (4, 8, 16, 32, 64)
FREQUENCY_GHZ = 3.0
SECOND_CLOCK_GHZ = 2.0
SEED = 20161104

PAPI = ("PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_RES_STL", "PAPI_L1_DCH", "PAPI_L2_DCH", "PAPI_L3_TCH", "PAPI_L3_TCM")
BYTES_RECEIVED = CubeMetric("bytes_received", "bytes", "UINT64", "EXCLUSIVE", "Bytes received in point-to-point "
                            "communication")
METRICS = (TIME, VISITS, BYTES_SENT, BYTES_RECEIVED,
           *(CubeMetric(name, "#", "UINT64", "INCLUSIVE", f"PAPI counter {name}") for name in PAPI))

LATENCY_CYCLES = {"l1": 4.0, "l2": 12.0, "llc": 40.0}
MEMORY_NS = 85.0
CACHE_BYTES = {"l1": 32e3, "l2": 256e3, "llc": 2.5e6}
"""Per-core capacity of each level (LLC: a core's slice)."""
MISS_CEILING = {"l1": 0.08, "l2": 0.4, "llc": 0.5}
"""The share of a level's accesses that miss it when the working set is far larger than the level."""


@dataclass(frozen=True)
class Kernel:
    """A computation: total instructions ``work``, halo factor, CPI_core, accesses per instruction,
    total working set (bytes), BF_mem, and how many times it runs."""

    name: str
    work: float
    halo: float = 0.0
    cpi_core: float = 0.8
    accesses: float = 0.4
    working_set: float = 1e9
    bf_mem: float = 0.4
    serial: bool = False


@dataclass(frozen=True)
class Application:
    """A strong-scaling MPI application: kernels, halo exchange, collectives, set-up."""

    kernels: tuple[Kernel, ...]
    steps: int = 100
    grid: float = 256.0**3
    halo_bytes: float = 80.0
    alpha: float = 4e-6
    bandwidth: float = 5e9
    allreduce: tuple[float, float, float] = (1e-5, 2e-10, 3e-6)
    allreduce_bytes: float = 64.0
    bcast_bytes: float = 4e6
    init: tuple[float, float] = (0.05, 0.002)
    small: int = 6
    imbalance: float = 0.02
    eager_limit: float = math.inf
    rendezvous_alpha: float = 4.0
    rendezvous_bandwidth: float = 1.5

    def callpaths(self) -> list[str]:
        paths = ["main", "main->MPI_Init", "main->read_input", "main->read_input->MPI_Bcast", "main->solve"]
        paths += [f"main->solve->{k.name}" for k in self.kernels]
        paths += [f"main->solve->util_{i}" for i in range(self.small)]
        paths += ["main->solve->exchange_halo", "main->solve->exchange_halo->MPI_Isend",
                  "main->solve->exchange_halo->MPI_Irecv", "main->solve->exchange_halo->MPI_Waitall",
                  "main->solve->MPI_Allreduce", "main->MPI_Finalize"]
        return paths


def default_application() -> Application:
    """The study ``python -m pmkit.testing.papi_study`` writes: a stencil code with four kernels."""
    return Application((
        Kernel("compute_rhs", 6e11, halo=40.0, cpi_core=0.7, accesses=0.45, working_set=8e8, bf_mem=0.45),
        Kernel("x_solve", 3.5e11, halo=20.0, cpi_core=0.9, accesses=0.35, working_set=3e8, bf_mem=0.3),
        Kernel("y_solve", 3.5e11, halo=20.0, cpi_core=0.9, accesses=0.35, working_set=3e8, bf_mem=0.35),
        Kernel("add", 8e10, cpi_core=0.6, accesses=0.6, working_set=6e8, bf_mem=0.6),
        Kernel("global_checksum", 2e9, cpi_core=1.1, accesses=0.2, working_set=1e6, bf_mem=0.2, serial=True),
    ), steps=400)


def random_application(rng: np.random.Generator) -> Application:
    """An application with random kernels, communication and set-up, for benchmarks."""
    count = int(rng.integers(2, 6))
    kernels = []
    for k in range(count):
        kernels.append(Kernel(f"kernel_{k}", 10 ** rng.uniform(10.5, 12), halo=float(rng.uniform(0, 60)),
                              cpi_core=float(rng.uniform(0.4, 1.4)), accesses=float(rng.uniform(0.2, 0.7)),
                              working_set=10 ** rng.uniform(8, 9.5), bf_mem=float(rng.uniform(0.1, 0.8))))
    if rng.random() < 0.7:
        kernels.append(Kernel("serial_part", 10 ** rng.uniform(8.5, 10.5), cpi_core=float(rng.uniform(0.6, 1.5)),
                              accesses=0.3, working_set=1e6, bf_mem=float(rng.uniform(0.1, 0.5)), serial=True))
    return Application(tuple(kernels), steps=int(rng.integers(100, 1000)),
                       grid=float(rng.choice([128, 192, 256, 384])) ** 3, alpha=float(10 ** rng.uniform(-6, -5)),
                       bandwidth=float(10 ** rng.uniform(9.3, 10.3)),
                       allreduce=(float(10 ** rng.uniform(-5.5, -4.5)), 2e-10, float(10 ** rng.uniform(-6, -5))),
                       bcast_bytes=float(10 ** rng.uniform(5, 7.5)), init=(float(rng.uniform(0.01, 0.2)),
                                                                             float(rng.uniform(0, 0.005))),
                       small=int(rng.integers(3, 10)))


@dataclass
class Run:
    """Per call path and rank: every metric of one run (values exclusive, seconds and counts)."""

    callpaths: list[str]
    values: dict[str, np.ndarray] = field(default_factory=dict)

    def total_time(self) -> float:
        """Mean over ranks of the summed exclusive time: what APMT calls the measured T_app."""
        return float(self.values["time"].sum(axis=0).mean())


def _levels(kernel: Kernel, p: int, instructions: float) -> dict[str, float]:
    """Accesses served by each level for one rank: a level catches what fits in it."""
    accesses = kernel.accesses * instructions
    per_rank_set = kernel.working_set / (1 if kernel.serial else p)
    miss = {level: min(1.0, (per_rank_set / size) ** 0.5) * MISS_CEILING[level] for level, size in CACHE_BYTES.items()}
    l1 = accesses * (1 - miss["l1"])
    reach_l2 = accesses * miss["l1"]
    l2 = reach_l2 * (1 - miss["l2"])
    reach_llc = reach_l2 * miss["l2"]
    llc = reach_llc * (1 - miss["llc"])
    return {"l1": l1, "l2": l2, "llc": llc, "memory": reach_llc * miss["llc"]}


def simulate(app: Application, p: int, *, noise: float = 0.02, frequency_ghz: float = FREQUENCY_GHZ,
             rng: np.random.Generator | None = None) -> Run:
    """One run of ``app`` on ``p`` ranks at ``frequency_ghz``: exclusive values per call path and rank."""
    rng = rng or np.random.default_rng(SEED)
    f = frequency_ghz * 1e9
    paths = app.callpaths()
    index = {path: i for i, path in enumerate(paths)}
    shape = (len(paths), p)
    time = np.zeros(shape)
    visits = np.zeros(shape)
    sent = np.zeros(shape)
    received = np.zeros(shape)
    counters = {name: np.zeros(shape) for name in PAPI}
    ranks = 1 + app.imbalance * np.sin(np.arange(p) * 2.399)

    def jitter(size: float = 0.25) -> np.ndarray:
        return 1 + size * noise * rng.uniform(-1, 1, p)

    def run_to_run() -> float:
        return 1 + noise * float(rng.uniform(-1, 1))

    def compute(path: str, kernel: Kernel, calls: float) -> None:
        share = kernel.work if kernel.serial else kernel.work / p
        instructions = share + kernel.halo * share ** (2 / 3)
        levels = _levels(kernel, p, instructions)
        t_mem = sum(levels[lv] * LATENCY_CYCLES[lv] / f for lv in LATENCY_CYCLES) + levels["memory"] * MEMORY_NS * 1e-9
        seconds = instructions * kernel.cpi_core / f + kernel.bf_mem * t_mem
        other_stalls = 0.05 * instructions * kernel.cpi_core
        r = index[path]
        scale = ranks * jitter() * run_to_run()
        time[r] = seconds * scale
        visits[r] = calls
        counters["PAPI_TOT_CYC"][r] = seconds * f * scale
        counters["PAPI_TOT_INS"][r] = instructions * jitter(0.1)
        counters["PAPI_RES_STL"][r] = (kernel.bf_mem * t_mem * f + other_stalls) * scale
        for level, name in (("l1", "PAPI_L1_DCH"), ("l2", "PAPI_L2_DCH"), ("llc", "PAPI_L3_TCH"),
                            ("memory", "PAPI_L3_TCM")):
            counters[name][r] = levels[level] * jitter(0.5)

    def mpi(path: str, seconds: np.ndarray | float, calls: float, out: float = 0.0, into: float = 0.0) -> None:
        r = index[path]
        time[r] = seconds * jitter() * run_to_run()
        visits[r] = calls
        sent[r] = out
        received[r] = into
        counters["PAPI_TOT_CYC"][r] = time[r] * f
        counters["PAPI_TOT_INS"][r] = time[r] * f * 0.9
        counters["PAPI_RES_STL"][r] = time[r] * f * 0.05
        counters["PAPI_L1_DCH"][r] = time[r] * f * 0.3

    for kernel in app.kernels:
        compute(f"main->solve->{kernel.name}", kernel, app.steps)
    for i in range(app.small):
        tiny = Kernel(f"util_{i}", 2e9 * (1 + i), halo=5.0, cpi_core=0.8, accesses=0.3, working_set=5e7, bf_mem=0.3)
        compute(f"main->solve->util_{i}", tiny, app.steps)
    compute("main", Kernel("main", 5e6, serial=True, working_set=1e5), 1)
    compute("main->solve", Kernel("solve", 1e5 * app.steps, serial=True, working_set=1e5), 1)
    compute("main->read_input", Kernel("read_input", 3e9, serial=True, working_set=1e8, bf_mem=0.5), 1)
    compute("main->solve->exchange_halo", Kernel("pack", 1e8, halo=0.0, working_set=1e6), app.steps)
    surface = (app.grid / p) ** (2 / 3) * app.halo_bytes
    messages = 6 * app.steps
    halo_bytes = messages * surface
    rendezvous = surface > app.eager_limit
    alpha = app.alpha * (app.rendezvous_alpha if rendezvous else 1.0)
    bandwidth = app.bandwidth * (app.rendezvous_bandwidth if rendezvous else 1.0)
    wait = halo_bytes / bandwidth * ranks / ranks.mean() + alpha * messages * 0.5
    mpi("main->solve->exchange_halo->MPI_Isend", alpha * messages, messages, out=halo_bytes)
    mpi("main->solve->exchange_halo->MPI_Irecv", 0.2 * alpha * messages, messages, into=halo_bytes)
    mpi("main->solve->exchange_halo->MPI_Waitall", wait, app.steps)
    a, b, c = app.allreduce
    per_call = a * math.log2(p) + b * app.allreduce_bytes + c
    mpi("main->solve->MPI_Allreduce", per_call * app.steps, app.steps, out=app.allreduce_bytes * app.steps,
        into=app.allreduce_bytes * app.steps)
    mpi("main->read_input->MPI_Bcast", a * math.log2(p) + app.bcast_bytes / app.bandwidth * math.log2(p) + c, 1,
        out=app.bcast_bytes, into=app.bcast_bytes)
    mpi("main->MPI_Init", app.init[0] + app.init[1] * p, 1)
    mpi("main->MPI_Finalize", 1e-4 + 1e-5 * p, 1)
    values = {"time": time, "visits": visits, "bytes_sent": sent, "bytes_received": received, **counters}
    return Run(paths, values)


def write_run(path: str | Path, run: Run) -> Path:
    """Write one run as a Score-P profile (one location per rank)."""
    p = run.values["time"].shape[1]
    return write_cube(path, run.callpaths, METRICS, run.values, processes=p)


def write_study(folder: str | Path, app: Application | None = None, *, processes: Sequence[int] = PROCESSES,
                repetitions: int = 1, noise: float = 0.02, seed: int = SEED, second_clock: bool = False,
                perf: bool = False) -> Path:
    """Write a study of ``app`` (default: :func:`default_application`) into ``folder``.

    Runs are named ``app.p{P}.r{R}`` (Extra-P's convention); with ``second_clock`` also
    ``app.p{P0}.f2000.r1`` at the lower clock, and the nominal runs carry ``.f3000``.  With ``perf``
    each run is one ``perf stat -x,`` CSV file of totals over all ranks.
    """
    app = app or default_application()
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    runs: list[tuple[str, Run]] = []
    clock = ".f3000" if second_clock else ""
    for p in processes:
        for r in range(1, repetitions + 1):
            runs.append((f"app.p{p}{clock}.r{r}", simulate(app, p, noise=noise, rng=rng)))
    if second_clock:
        runs.append((f"app.p{processes[1]}.f2000.r1",
                     simulate(replace(app), processes[1], noise=noise, frequency_ghz=SECOND_CLOCK_GHZ, rng=rng)))
    for name, run in runs:
        if perf:
            _write_perf(folder / f"{name}.csv", run)
        else:
            write_run(folder / name / "profile.cubex", run)
    return folder


def _write_perf(path: Path, run: Run) -> Path:
    from pmkit.testing.perfwriter import PerfLine, write_perf_stat

    totals = {name: float(run.values[name].sum()) for name in ("PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_RES_STL")}
    lines = [PerfLine("task-clock", float(run.values["time"].sum()) * 1e3, "msec", metric=(1.0, "CPUs utilized")),
             PerfLine("cycles", totals["PAPI_TOT_CYC"]), PerfLine("instructions", totals["PAPI_TOT_INS"]),
             PerfLine("stalled-cycles-backend", totals["PAPI_RES_STL"], running=66.67),
             PerfLine("mem_load_retired.l1_hit", float(run.values["PAPI_L1_DCH"].sum()), running=66.67),
             PerfLine("mem_load_retired.l2_hit", float(run.values["PAPI_L2_DCH"].sum()), running=66.67),
             PerfLine("mem_load_retired.l3_hit", float(run.values["PAPI_L3_TCH"].sum()), running=66.67),
             PerfLine("mem_load_retired.l3_miss", float(run.values["PAPI_L3_TCM"].sum()), running=66.67)]
    return write_perf_stat(path, lines, command="mpirun ./app")


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pmkit.testing.papi_study", description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--processes", default=",".join(map(str, PROCESSES)), help="comma-separated process counts")
    parser.add_argument("--repetitions", type=int, default=1)
    parser.add_argument("--noise", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--second-clock", action="store_true", help="add a run at 2 GHz for the refinement")
    parser.add_argument("--perf", action="store_true", help="write perf stat CSV totals instead of Cube files")
    args = parser.parse_args(argv)
    processes = [int(p) for p in args.processes.split(",") if p.strip()]
    write_study(args.folder, processes=processes, repetitions=args.repetitions, noise=args.noise, seed=args.seed,
                second_clock=args.second_clock, perf=args.perf)
    print(f"wrote {args.folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
