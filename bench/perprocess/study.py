"""Run the MPI stencil benchmark (stencil.c) in balanced and imbalanced layouts; write Cube studies.

    python bench/perprocess/study.py [--out bench/perprocess/data] [--quick]

Compiles ``stencil.c`` with ``mpicc``, runs it under ``mpirun --oversubscribe`` for every
configuration below, and writes each run as ``OUT/SCENARIO/stencil.p{P}.n{N}.h{H}.g{G}.r{R}/profile.cubex``
with pmkit's Cube writer — metrics ``time`` (wall clock) and ``cpu_time`` (thread CPU time), one
location per rank, exclusive per call path — plus ``OUT/SCENARIO/pmkit-parameters.csv`` (run,
rank, nx, ny, nz, particles, neighbours, iterations, cores).  ``H`` is the particle density in
particles per thousand cells (the paper's hematocrit), ``G`` the grid: 3 for a 3-D process grid,
1 for a line of processes.

Scenarios (paper 003 §4):

* ``balanced`` — calibration: every rank the same box, n = 48, 64, 96; densities 0, 2, 5 ‰;
* ``balanced-test`` — the paper's balanced scenario: n = 80, never calibrated on;
* ``half3x`` — imbalanced subdomains: half the ranks hold 75% of the domain (three times the cells);
* ``hot`` — imbalanced hematocrit: half the ranks at 2 or 5 ‰ particles, the other half none;
* ``edge`` / ``center`` — imbalanced communication: on a line of ranks, the two ranks at the ends
  (one neighbour) or the two in the middle (two neighbours) hold all particles.

Generated data is not committed (``bench/perprocess/data`` is git-ignored).
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))

from pmkit.testing.cubewriter import TIME, VISITS, CubeMetric, write_cube  # noqa: E402

CPU_TIME = CubeMetric("cpu_time", "sec", "DOUBLE", "INCLUSIVE", "Thread CPU time")
ITERATIONS = 100
CORES = os.cpu_count() or 2
CALLPATHS = ("main", "main->setup", "main->timestep", "main->timestep->stencil", "main->timestep->halo",
             "main->timestep->halo->MPI_Waitall", "main->timestep->particles", "main->timestep->particle_sync",
             "main->timestep->particle_sync->MPI_Waitall", "main->timestep->MPI_Allreduce")
SECTIONS = {"main->setup": "setup", "main->timestep->stencil": "stencil", "main->timestep->halo": "halo",
            "main->timestep->halo->MPI_Waitall": "halo_wait", "main->timestep->particles": "particles",
            "main->timestep->particle_sync": "particle_sync",
            "main->timestep->particle_sync->MPI_Waitall": "particle_sync_wait",
            "main->timestep->MPI_Allreduce": "allreduce"}


@dataclass(frozen=True)
class Config:
    scenario: str
    processes: int
    n: int
    density: int          # particles per thousand cells
    grid: int = 3         # 3: 3-D process grid; 1: a line of processes

    @property
    def name(self) -> str:
        return f"stencil.p{self.processes}.n{self.n}.h{self.density}.g{self.grid}"

    def dims(self) -> tuple[int, int, int]:
        if self.grid == 1:
            return (self.processes, 1, 1)
        dims = [1, 1, 1]
        for k in range(int(np.log2(self.processes))):
            dims[k % 3] *= 2
        return (dims[0], dims[1], dims[2])

    def layout(self) -> np.ndarray:
        """Per rank: nx, ny, nz, particles (rank = ix + px·(iy + py·iz))."""
        px, py, pz = self.dims()
        p = self.processes
        ranks = np.arange(p)
        coords = np.stack([ranks % px, (ranks // px) % py, ranks // (px * py)])
        box = np.full((3, p), float(self.n))
        density = np.full(p, self.density / 1000)
        if self.scenario == "half3x":
            axis = max(a for a in range(3) if (px, py, pz)[a] > 1)
            lower = coords[axis] < (px, py, pz)[axis] // 2
            box[axis] = np.where(lower, 1.5 * self.n, 0.5 * self.n)
        elif self.scenario == "hot":
            axis = max(a for a in range(3) if (px, py, pz)[a] > 1)
            density = np.where(coords[axis] < (px, py, pz)[axis] // 2, self.density / 1000, 0.0)
        elif self.scenario in ("edge", "center"):
            hot = {0, p - 1} if self.scenario == "edge" else {p // 2 - 1, p // 2}
            density = np.where(np.isin(ranks, list(hot)), self.density / 1000, 0.0)
        particles = np.rint(density * box.prod(axis=0))
        return np.column_stack([box.T, particles])


def configurations(quick: bool) -> list[Config]:
    sizes, densities = ((48, 64), (0, 5)) if quick else ((48, 64, 96), (0, 2, 5))
    processes = (2, 4) if quick else (2, 4, 8)
    out = [Config("balanced", p, n, h) for p in processes for n in sizes for h in densities]
    out += [Config("balanced", p, n, h, grid=1) for p in processes if p > 2 for n in sizes[:2] for h in densities[1:]]
    out += [Config("balanced-test", p, 80, h) for p in processes for h in densities[1:]]
    out += [Config("half3x", p, n, h) for p in processes for n in (64, 80) for h in (0, 5)]
    out += [Config("hot", p, 64, h) for p in processes for h in (2, 5)]
    line = [p for p in processes if p >= 4]
    out += [Config(s, p, 64, h, grid=1) for s in ("edge", "center") for p in line for h in (5, 10)]
    return out


def build(out: Path) -> Path:
    binary = out / "stencil"
    source = HERE / "stencil.c"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mpicc", "-O2", "-march=native", "-std=c99", "-Wall", "-o", str(binary), str(source), "-lm"],
                       check=True)
    return binary


def run(binary: Path, config: Config, work: Path) -> list[dict[str, float]]:
    """One mpirun of the configuration; the per-rank records it prints."""
    layout = work / f"{config.name}.layout"
    np.savetxt(layout, config.layout(), fmt="%d")
    px, py, pz = config.dims()
    command = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(config.processes), str(binary),
               str(layout), str(ITERATIONS), str(px), str(py), str(pz)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr}")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    return [{k: float(v) for k, v in row.items()} for row in rows]


def write_run(records: list[dict[str, float]], config: Config, repetition: int, folder: Path) -> list[str]:
    """The run's Cube file; returns its parameter-table lines."""
    p = len(records)
    values = {}
    for metric, suffix in (("time", "wall"), ("cpu_time", "cpu")):
        matrix = np.zeros((len(CALLPATHS), p))
        for path, section in SECTIONS.items():
            matrix[CALLPATHS.index(path)] = [r[f"{section}_{suffix}"] for r in records]
        inside = sum(matrix[CALLPATHS.index(path)] for path in SECTIONS if path.startswith("main->timestep->"))
        matrix[CALLPATHS.index("main->timestep")] = np.maximum(
            np.array([r[f"loop_{suffix}"] for r in records]) - inside, 0.0)
        values[metric] = matrix
    values["visits"] = np.full((len(CALLPATHS), p), float(ITERATIONS))
    label = f"{config.name}.r{repetition}"
    write_cube(folder / label / "profile.cubex", CALLPATHS, (TIME, CPU_TIME, VISITS), values, processes=p,
               creator="pmkit bench/perprocess/study.py (MPI stencil)")
    return [f"{config.name},{int(r['rank'])},{r['nx']:g},{r['ny']:g},{r['nz']:g},{r['particles']:g},"
            f"{r['neighbours']:g},{ITERATIONS},{CORES}" for r in records]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "data", help="where the studies go (default: %(default)s)")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="fewer sizes and process counts (a smoke test)")
    parser.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    args = parser.parse_args(argv)
    binary = build(args.out / "build")
    configs = [c for c in configurations(args.quick) if not args.only or c.scenario in args.only]
    tables: dict[str, list[str]] = {}
    for scenario in sorted({c.scenario for c in configs}):
        shutil.rmtree(args.out / scenario, ignore_errors=True)
    started = time.time()
    for i, config in enumerate(configs, 1):
        folder = args.out / config.scenario
        lines = tables.setdefault(config.scenario, ["run,rank,nx,ny,nz,particles,neighbours,iterations,cores"])
        for repetition in range(1, args.repetitions + 1):
            records = run(binary, config, args.out / "build")
            rows = write_run(records, config, repetition, folder)
        lines += rows
        print(f"[{i}/{len(configs)} {time.time() - started:5.0f} s] {config.scenario}/{config.name}", flush=True)
    for scenario, lines in tables.items():
        (args.out / scenario / "pmkit-parameters.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(configs) * args.repetitions} runs to {args.out} in {time.time() - started:.0f} s "
          f"(load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
