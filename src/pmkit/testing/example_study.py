"""The project's example studies: Score-P-style weak- and strong-scaling studies of MPI codes.

``python -m pmkit.testing.example_study DIR`` writes the weak-scaling study
``DIR/lulesh.p{8..512}.r{1..3}/profile.cubex``: 7 process counts (the cubes LULESH needs), 3
repetitions, one location per MPI rank, metrics ``time``, ``visits`` and ``bytes_sent``, and a call
tree with initialisation, the time-step loop (nodal and element kernels, halo exchanges with
MPI_Isend/MPI_Irecv/MPI_Waitall), a global MPI_Allreduce for the time constraint, a gather of results
to rank 0 and output I/O.  Each value carries ±2 % uniform noise from a fixed seed.  Planted
scalability problems (see :data:`PLANTED`):

* the time-step ``MPI_Allreduce`` grows with log2(p) per rank;
* the final ``MPI_Gather`` is a linear gather: rank i waits for the root to take i messages, so
  the mean time per rank grows linearly with p;
* ``CalcVolumeForceForElems`` is load-imbalanced: every fourth rank does 60 % more work,
  and the halo ``MPI_Waitall`` absorbs the difference as waiting time on the other ranks.

Everything else is flat per rank, as weak scaling should be.

``python -m pmkit.testing.example_study --optimised DIR`` writes the same program after an
optimisation, for ``pmkit compare``: a tree gather (``MPI_Gather`` grows with log2(p)), the
imbalance fixed (every rank does the mean work, and the halo ``MPI_Waitall`` no longer waits for
it), and a regression: ``EvalEOSForElems`` 15 % slower.

``python -m pmkit.testing.example_study --strong DIR`` writes the strong-scaling study
``DIR/jacobi.p{2..32}.r{1..3}/profile.cubex`` of :func:`generate_strong`: one global problem on
p = 2, 4, 8, 16, 32 ranks (five runs, as users bring them), where the compute kernels fall as 1/p,
the halo exchange as p^(-2/3) (a subdomain's surface), the dot products' ``MPI_Allreduce`` grows
with log2(p), ``MPI_Init`` with p, and reading the input stays constant — so the run stops
speeding up (see :data:`STRONG_LAWS`; :func:`strong_times` gives the exact time per rank at any p,
so a prediction at a left-out larger p can be checked).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from pmkit.testing.cubewriter import BYTES_SENT, TIME, VISITS, write_cube

PROCESSES = (8, 27, 64, 125, 216, 343, 512)
REPETITIONS = 3
ITERATIONS = 100
NOISE = 0.02
SEED = 20240607

LOOP = "main->lulesh_loop"
NODAL = f"{LOOP}->LagrangeLeapFrog->LagrangeNodal"
ELEMENTS = f"{LOOP}->LagrangeLeapFrog->LagrangeElements"
ALLREDUCE = f"{LOOP}->TimeIncrement->MPI_Allreduce"
GATHER = "main->VerifyAndWriteFinalOutput->MPI_Gather"
IMBALANCED = f"{NODAL}->CalcForceForNodes->CalcVolumeForceForElems"
HALO_WAIT = f"{NODAL}->CalcForceForNodes->CommSBN->MPI_Waitall"

PLANTED = {
    ALLREDUCE: "grows with log2(p) per rank (mean over ranks ∝ log2 p)",
    GATHER: "linear gather to rank 0: mean time per rank ∝ p",
    IMBALANCED: "load imbalance: every fourth rank does 60% more work (max/mean ≈ 1.39 at every p)",
    HALO_WAIT: "absorbs the imbalance as waiting time on interior ranks",
}
"""The planted problems by call path, for tests and the README."""

# exclusive seconds per rank and time step (or per run where marked), and MPI bytes per call
_KERNELS = {
    "main": 2e-4,
    "main->MPI_Init": 0.05,
    "main->InitMeshDecomp": 0.002,
    "main->Domain::Domain": 0.08,
    "main->Domain::Domain->BuildMesh": 0.12,
    "main->Domain::Domain->SetupCommBuffers": 0.004,
    LOOP: 1e-5,
    f"{LOOP}->TimeIncrement": 2e-6,
    f"{LOOP}->LagrangeLeapFrog": 5e-6,
    NODAL: 3e-6,
    f"{NODAL}->CalcForceForNodes": 2e-6,
    f"{NODAL}->CalcForceForNodes->CommRecv": 1e-6,
    f"{NODAL}->CalcForceForNodes->CommRecv->MPI_Irecv": 4e-6,
    f"{NODAL}->CalcForceForNodes->CommSend": 2e-5,
    f"{NODAL}->CalcForceForNodes->CommSend->MPI_Isend": 6e-6,
    IMBALANCED: 2.4e-3,
    f"{IMBALANCED}->IntegrateStressForElems": 1.1e-3,
    f"{IMBALANCED}->CalcHourglassControlForElems": 1.6e-3,
    f"{NODAL}->CalcForceForNodes->CommSBN": 1.5e-5,
    HALO_WAIT: 3e-5,
    f"{NODAL}->CalcAccelerationForNodes": 1.2e-4,
    f"{NODAL}->CalcVelocityForNodes": 1.5e-4,
    f"{NODAL}->CalcPositionForNodes": 1.1e-4,
    ELEMENTS: 3e-6,
    f"{ELEMENTS}->CalcLagrangeElements": 6e-4,
    f"{ELEMENTS}->CalcQForElems": 4e-4,
    f"{ELEMENTS}->CalcQForElems->CommSend": 1.5e-5,
    f"{ELEMENTS}->CalcQForElems->CommSend->MPI_Isend": 5e-6,
    f"{ELEMENTS}->CalcQForElems->CommMonoQ": 1e-5,
    f"{ELEMENTS}->CalcQForElems->CommMonoQ->MPI_Waitall": 2.5e-5,
    f"{ELEMENTS}->ApplyMaterialPropertiesForElems": 9e-4,
    f"{ELEMENTS}->ApplyMaterialPropertiesForElems->EvalEOSForElems": 1.3e-3,
    f"{LOOP}->LagrangeLeapFrog->CalcTimeConstraintsForElems": 1.4e-4,
    ALLREDUCE: 0.0,  # planted below
    "main->VerifyAndWriteFinalOutput": 3e-4,
    GATHER: 0.0,  # planted below
    "main->VerifyAndWriteFinalOutput->write_output": 0.0,  # rank 0 only, below
    "main->MPI_Barrier": 1e-4,
    "main->MPI_Finalize": 0.02,
}
_PER_RUN = {"main", "main->MPI_Init", "main->InitMeshDecomp", "main->Domain::Domain", "main->Domain::Domain->BuildMesh",
            "main->Domain::Domain->SetupCommBuffers", "main->VerifyAndWriteFinalOutput", GATHER,
            "main->VerifyAndWriteFinalOutput->write_output", "main->MPI_Barrier", "main->MPI_Finalize"}
_BYTES = {"MPI_Isend": 3 * 8 * 45 * 45, "MPI_Allreduce": 8, "MPI_Gather": 8 * 30 * 30 * 30}
CALLPATHS = tuple(_KERNELS)


EOS = f"{ELEMENTS}->ApplyMaterialPropertiesForElems->EvalEOSForElems"


def run_values(p: int, rng: np.random.Generator, optimised: bool = False) -> dict[str, np.ndarray]:
    """Exclusive time, visits and bytes sent per call path (rows, in CALLPATHS order) and rank;
    ``optimised``: after the optimisation described in the module's documentation."""
    n = len(CALLPATHS)
    row = {cp: i for i, cp in enumerate(CALLPATHS)}
    time = np.zeros((n, p))
    visits = np.zeros((n, p))
    sent = np.zeros((n, p))
    for cp, seconds in _KERNELS.items():
        calls = 1 if cp in _PER_RUN else ITERATIONS
        time[row[cp]] = seconds * calls
        visits[row[cp]] = calls
    ranks = np.arange(p)
    time[row[IMBALANCED]] *= 1.15 if optimised else np.where(ranks % 4 == 0, 1.6, 1.0)
    time[row[HALO_WAIT]] += time[row[IMBALANCED]].max() - time[row[IMBALANCED]]
    time[row[ALLREDUCE]] = ITERATIONS * (4e-6 + 1.2e-5 * np.log2(p))
    time[row[GATHER]] = 5e-5 + (4e-4 * np.log2(p) * np.ones(p) if optimised else 4e-5 * ranks)
    if optimised:
        time[row[EOS]] *= 1.15
    time[row["main->VerifyAndWriteFinalOutput->write_output"], 0] = 0.35
    visits[row["main->VerifyAndWriteFinalOutput->write_output"]] = ranks == 0
    for cp in CALLPATHS:
        name = cp.rsplit("->", 1)[-1]
        if name in _BYTES:
            per_call = _BYTES[name] if name != "MPI_Gather" else np.where(ranks == 0, 0, _BYTES[name])
            sent[row[cp]] = per_call * visits[row[cp]] * (6 if name == "MPI_Isend" else 1)
    time *= rng.uniform(1 - NOISE, 1 + NOISE, size=time.shape)
    return {"time": time, "visits": visits, "bytes_sent": sent}


def generate(directory: str | Path, processes: Sequence[int] = PROCESSES, repetitions: int = REPETITIONS,
             seed: int = SEED, optimised: bool = False) -> list[Path]:
    """Write the study into ``directory``; returns the files written (the same bytes for the same seed).
    ``optimised`` writes the program after the optimisation (see the module's documentation)."""
    return write_runs(directory, CALLPATHS, functools.partial(run_values, optimised=optimised), processes,
                      repetitions, seed, "pmkit example study (Score-P style)")


def write_runs(directory: str | Path, callpaths: Sequence[str | Sequence[str]],
               values: Callable[[int, np.random.Generator], dict[str, np.ndarray]], processes: Sequence[int],
               repetitions: int, seed: int, creator: str) -> list[Path]:
    """Write ``DIR/lulesh.p{p}.r{rep}/profile.cubex`` for every process count and repetition, each run's
    values from ``values(p, rng)``; returns the files written."""
    rng = np.random.default_rng(seed)
    files = []
    for p in processes:
        for rep in range(1, repetitions + 1):
            target = Path(directory) / f"lulesh.p{p}.r{rep}" / "profile.cubex"
            files.append(write_cube(target, callpaths, (TIME, VISITS, BYTES_SENT), values(p, rng), processes=p,
                                    creator=creator))
    return files


STRONG_PROCESSES = (2, 4, 8, 16, 32)
STRONG_SEED = 20261124
STRONG_LOOP = "main->solve"
STENCIL = f"{STRONG_LOOP}->apply_stencil"
HALO = f"{STRONG_LOOP}->halo_exchange->MPI_Waitall"
DOT_ALLREDUCE = f"{STRONG_LOOP}->dot_product->MPI_Allreduce"
MPI_INIT = "main->MPI_Init"
READ_INPUT = "main->read_input"

STRONG_LAWS: dict[str, tuple[str, object]] = {
    "main": ("constant", lambda p: 1e-3 + 0 * p),
    MPI_INIT: ("grows with p (start-up)", lambda p: 0.02 + 4e-4 * p),
    READ_INPUT: ("constant: every rank reads the input", lambda p: 0.04 + 0 * p),
    "main->setup": ("falls as 1/p", lambda p: 0.6 / p),
    STRONG_LOOP: ("constant", lambda p: 1e-4 + 0 * p),
    STENCIL: ("falls as 1/p (the compute kernel)", lambda p: 9.0 / p),
    f"{STRONG_LOOP}->update": ("falls as 1/p", lambda p: 2.4 / p),
    f"{STRONG_LOOP}->halo_exchange": ("falls as 1/p^(2/3) (packing a subdomain's surface)",
                                      lambda p: 0.1 * p ** (-2 / 3)),
    HALO: ("latency plus a subdomain's surface: 0.02 + 0.3·p^(-2/3)", lambda p: 0.02 + 0.3 * p ** (-2 / 3)),
    f"{STRONG_LOOP}->dot_product": ("falls as 1/p", lambda p: 1.2 / p),
    DOT_ALLREDUCE: ("grows with log2(p): 200 reductions", lambda p: 200 * (3e-6 + 1.5e-5 * np.log2(p))),
    "main->write_output": ("rank 0 writes: the mean over ranks falls as 1/p", lambda p: 0.2 / p),
    "main->MPI_Finalize": ("constant", lambda p: 0.01 + 0 * p),
}
"""Per call path of the strong-scaling study: the law of its exclusive time per rank (mean over ranks, in
seconds, for the whole run) in words and as a function of p."""
STRONG_CALLPATHS = tuple(STRONG_LAWS)


def strong_times(p: float, scales: Mapping[str, float] | None = None) -> dict[str, float]:
    """The exact exclusive time per rank (mean over ranks) of every call path of the strong study at ``p``,
    each law multiplied by its factor in ``scales`` (default 1)."""
    scales = scales or {}
    return {cp: float(law(float(p))) * scales.get(cp, 1.0)  # type: ignore[operator]
            for cp, (_, law) in STRONG_LAWS.items()}


def strong_run_values(p: int, rng: np.random.Generator, scales: Mapping[str, float] | None = None
                      ) -> dict[str, np.ndarray]:
    """Exclusive time, visits and bytes sent per call path (rows, in STRONG_CALLPATHS order) and rank."""
    times = strong_times(p, scales)
    time = np.array([[times[cp]] * p for cp in STRONG_CALLPATHS])
    if p > 1:  # only rank 0 writes: the same mean over ranks
        row = STRONG_CALLPATHS.index("main->write_output")
        time[row] = np.where(np.arange(p) == 0, times["main->write_output"] * p, 0.0)
    time *= rng.uniform(1 - NOISE, 1 + NOISE, size=time.shape)
    visits = np.ones_like(time)
    for cp in STRONG_CALLPATHS:
        if cp.startswith(STRONG_LOOP + "->"):
            visits[STRONG_CALLPATHS.index(cp)] = 200
    sent = np.zeros_like(time)
    sent[STRONG_CALLPATHS.index(HALO)] = 200 * 6 * 8 * (256 ** 3 / p) ** (2 / 3)
    sent[STRONG_CALLPATHS.index(DOT_ALLREDUCE)] = 200 * 8
    return {"time": time, "visits": visits, "bytes_sent": sent}


def generate_strong(directory: str | Path, processes: Sequence[int] = STRONG_PROCESSES,
                    repetitions: int = REPETITIONS, seed: int = STRONG_SEED,
                    scales: Mapping[str, float] | None = None) -> list[Path]:
    """Write the strong-scaling study into ``directory``; returns the files written (same bytes for the same
    seed).  ``scales`` multiplies the laws of the call paths it names (benchmarks vary the study with it)."""
    rng = np.random.default_rng(seed)
    files = []
    for p in processes:
        for rep in range(1, repetitions + 1):
            target = Path(directory) / f"jacobi.p{p}.r{rep}" / "profile.cubex"
            files.append(write_cube(target, STRONG_CALLPATHS, (TIME, VISITS, BYTES_SENT),
                                    strong_run_values(p, rng, scales), processes=p,
                                    creator="pmkit example study, strong scaling (Score-P style)"))
    return files


def command(argv: Sequence[str] | None, module: str, doc: str | None, write: Callable[..., list[Path]],
            flags: Sequence[str] = ()) -> int:
    """``python -m MODULE [--FLAG] DIR``: write a study with ``write(DIR, flag=True, ...)`` and say so; help
    on ``-h`` (:mod:`pmkit.testing.generator_cli`)."""
    from pmkit.testing.generator_cli import parse

    parsed = parse(argv, module, "DIR", doc, flags)
    if isinstance(parsed, int):
        return parsed
    target, given = parsed
    files = write(target, **given)
    counts = len({f.parent.name.split(".r")[0] for f in files})
    print(f"wrote {len(files)} Cube files ({counts} process counts × {len(files) // max(counts, 1)} repetitions) "
          f"to {target}")
    return 0


def _write(directory: str | Path, optimised: bool = False, strong: bool = False) -> list[Path]:
    if strong and optimised:
        raise SystemExit("--strong and --optimised are two different studies: give one")
    return generate_strong(directory) if strong else generate(directory, optimised=optimised)


def main(argv: Sequence[str] | None = None) -> int:
    return command(argv, "pmkit.testing.example_study", __doc__, _write, flags=("optimised", "strong"))


if __name__ == "__main__":
    sys.exit(main())
