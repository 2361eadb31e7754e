"""An example for per-process models: a 3-D stencil code's Cube studies, balanced and imbalanced.

``python -m pmkit.testing.imbalance_study DIR`` writes what ``docs/perprocess.md`` walks through:

* ``DIR/stencil.toml`` — the per-process model (the documented example);
* ``DIR/balanced/stencil.p{P}.n{N}.r{R}/profile.cubex`` with ``DIR/balanced/pmkit-parameters.csv`` —
  calibration runs where every process has the same subdomain;
* ``DIR/half3x/…`` with ``DIR/half3x.csv`` — the paper's imbalanced scenario: half the processes
  hold 75% of the domain (three times the work of the others), measured;
* ``DIR/hotspot.csv`` — a scenario nobody measured: the first eighth of the processes carry all
  the particles.

Each process's time follows known laws (:data:`LAWS`) with ±2% noise; in a time step every
process waits in ``MPI_Allreduce`` for the slowest, as a real code does.  Tests use it with small
sizes; the files are the same for the same seed.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pmkit.testing.cubewriter import TIME, VISITS, write_cube

PROCESSES = (2, 4, 8, 16, 32)
SIZES = (16, 24, 32)
REPETITIONS = 2
NOISE = 0.02
SEED = 20250317
ITERATIONS = 50

CALLPATHS = ("main", "main->setup", "main->step", "main->step->compute", "main->step->halo",
             "main->step->halo->MPI_Waitall", "main->step->particles", "main->step->MPI_Allreduce")

LAWS = {
    "compute": "4e-8·volume + 2e-4 (per step)",
    "halo": "neighbours/6 × (1.5e-7·surface + 5e-5) (per step)",
    "particles": "6e-6·particles (per step)",
    "MPI_Allreduce": "2e-5·log2(p) per step, plus the wait for the slowest process",
}
"""The laws behind the times, as the model file states them."""

MODEL = '''\
# Per-process model of a 3-D stencil code with particles (see docs/perprocess.md).
[model]
name = "stencil"
metric = "time"             # the Cube metric holding each process's time per call path

[parameters]
per_process = ["nx", "ny", "nz", "particles", "neighbours"]   # columns of the parameter table
global = ["iterations"]                                       # one value per run; p is always there

[derived]
volume = "nx * ny * nz"
surface = "2 * (nx*ny + nx*nz + ny*nz)"
cr = "neighbours / 6"       # the paper's communication ratio: neighbours / max neighbours

[sections.compute]
callpaths = ["main->step->compute"]
terms = ["iterations * volume", "iterations"]   # a·iterations·volume + b·iterations
intercept = false

[sections.halo]
callpaths = ["main->step->halo"]
inclusive = true            # the halo exchange with the MPI calls inside it
terms = ["iterations * surface", "iterations"]
intercept = false
factor = "cr"               # fewer neighbours at the domain's edge, less to exchange

[sections.push]
callpaths = ["main->step->particles"]
terms = ["iterations * particles"]
intercept = false

[sections.sync]
callpaths = ["MPI_Allreduce"]   # every call path ending in MPI_Allreduce
predictor = "pmnf"              # a law in p found by the refining modeler
parameter = "p"

[total]
process = "compute + halo + push + sync"
expression = "max(process)"     # processes run concurrently: the slowest one decides
'''


def grid(p: int) -> tuple[int, int, int]:
    """A px × py × pz process grid for p processes (powers of two), as MPI_Dims_create gives."""
    dims = [1, 1, 1]
    for k in range(int(np.log2(p))):
        dims[k % 3] *= 2
    return dims[2], dims[1], dims[0]


def layout(p: int, n: int, scenario: str, density: float = 0.002) -> dict[str, np.ndarray]:
    """Per-process subdomain sizes, particles and neighbour counts of one run.

    ``balanced``: every process n³; ``half3x``: the processes in the lower half along z hold three
    times the cells of the others (the mean stays n³); ``hotspot``: balanced cells, all particles
    (eight times the usual density) on the first eighth of the processes.
    """
    px, py, pz = grid(p)
    ranks = np.arange(p)
    ix, iy, iz = ranks % px, (ranks // px) % py, ranks // (px * py)
    nx = np.full(p, float(n))
    ny = np.full(p, float(n))
    nz = np.full(p, float(n))
    if scenario == "half3x":
        lower = iz < max(pz // 2, 1) if pz > 1 else ranks < p // 2
        nz = np.where(lower, 1.5 * n, 0.5 * n)
    particles = np.rint(density * nx * ny * nz)
    if scenario == "hotspot":
        hot = ranks < max(p // 8, 1)
        particles = np.where(hot, np.rint(8 * density * n**3 * p / hot.sum() / 8), 0.0)
    neighbours = ((ix > 0).astype(float) + (ix < px - 1) + (iy > 0) + (iy < py - 1) + (iz > 0) + (iz < pz - 1))
    return {"nx": nx, "ny": ny, "nz": nz, "particles": particles, "neighbours": neighbours}


def run_times(p: int, params: dict[str, np.ndarray], rng: np.random.Generator,
              iterations: int = ITERATIONS) -> np.ndarray:
    """Exclusive seconds per call path (rows in CALLPATHS order) and process, following :data:`LAWS`."""
    volume = params["nx"] * params["ny"] * params["nz"]
    surface = 2 * (params["nx"] * params["ny"] + params["nx"] * params["nz"] + params["ny"] * params["nz"])
    noise = rng.uniform(1 - NOISE, 1 + NOISE, size=(len(CALLPATHS), p))
    compute = iterations * (4e-8 * volume + 2e-4) * noise[3]
    halo = params["neighbours"] / 6 * iterations * (1.5e-7 * surface + 5e-5) * noise[4]
    particles = iterations * 6e-6 * params["particles"] * noise[6]
    work = compute + halo + particles
    sync = iterations * 2e-5 * np.log2(p) * noise[7] + (work.max() - work)
    times = np.zeros((len(CALLPATHS), p))
    times[0] = 1e-3
    times[1] = 0.05 * noise[1]
    times[2] = 1e-4 * iterations
    times[3] = compute
    times[4] = 0.3 * halo
    times[5] = 0.7 * halo
    times[6] = particles
    times[7] = sync
    return times


def write_study(directory: Path, scenario: str, processes: Sequence[int], sizes: Sequence[int], repetitions: int,
                rng: np.random.Generator, table: Path | None = None) -> list[Path]:
    """Cube files of one scenario's runs, and their parameter table at ``table``."""
    files = []
    lines = ["run,rank,nx,ny,nz,particles,neighbours,iterations"]
    for p in processes:
        for n in sizes:
            params = layout(p, n, scenario)
            base = f"stencil.p{p}.n{n}"
            for rank in range(p):
                lines.append(f"{base},{rank}," + ",".join(f"{params[k][rank]:g}" for k in
                                                          ("nx", "ny", "nz", "particles", "neighbours"))
                             + f",{ITERATIONS}")
            for rep in range(1, repetitions + 1):
                times = run_times(p, params, rng)
                visits = np.ones_like(times) * ITERATIONS
                path = directory / f"{base}.r{rep}" / "profile.cubex"
                files.append(write_cube(path, CALLPATHS, (TIME, VISITS), {"time": times, "visits": visits},
                                        processes=p, creator="pmkit imbalance example (Score-P style)"))
    if table is not None:
        table.parent.mkdir(parents=True, exist_ok=True)
        table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files


def generate(directory: str | Path, processes: Sequence[int] = PROCESSES, sizes: Sequence[int] = SIZES,
             repetitions: int = REPETITIONS, seed: int = SEED) -> Path:
    """Write the example into ``directory``; returns the model file's path."""
    directory = Path(directory)
    rng = np.random.default_rng(seed)
    write_study(directory / "balanced", "balanced", processes, sizes, repetitions, rng,
                directory / "balanced" / "pmkit-parameters.csv")
    imbalanced = [p for p in processes if p >= 4] or list(processes)
    write_study(directory / "half3x", "half3x", imbalanced, sizes[-1:], repetitions, rng, directory / "half3x.csv")
    lines = ["run,rank,nx,ny,nz,particles,neighbours,iterations"]
    for p in imbalanced:
        params = layout(p, sizes[-1], "hotspot")
        lines += [f"stencil.p{p}.n{sizes[-1]}.hotspot,{rank}," + ",".join(
            f"{params[k][rank]:g}" for k in ("nx", "ny", "nz", "particles", "neighbours")) + f",{ITERATIONS}"
            for rank in range(p)]
    (directory / "hotspot.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    model = directory / "stencil.toml"
    model.write_text(MODEL, encoding="utf-8")
    return model


def main(argv: Sequence[str] | None = None) -> int:
    from pmkit.testing.generator_cli import parse

    parsed = parse(argv, "pmkit.testing.imbalance_study", "DIR", __doc__)
    if isinstance(parsed, int):
        return parsed
    model = generate(parsed[0])
    folder = Path(parsed[0])
    print(f"wrote {model} (the model)\n      {folder / 'balanced'} (the balanced study)\n"
          f"      {folder / 'half3x'} (the measured imbalanced study)\n"
          f"      {folder / 'half3x.csv'}, {folder / 'hotspot.csv'} (the scenarios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
