"""Calibration on real MPI timings: t_max against sample size, model acceptance, T_f interpolation.

    python bench/calibration.py [--data bench/.kluge] [--repetitions 3000] [--processes 8]

1. **Stability** (paper 004 §9, Fig. 3): the paper fits subsets of 50, 60, … calls of a sample of
   3000 ``MPI_Allreduce`` calls (one number, 8 processes) and finds t_max stable from about 200
   calls.  This runs the same measurement (``bench/mpi_kluge_app.py --sizes 8 --repetitions N``
   under mpirun, unless ``--sample FILE.csv`` is given) and prints t_max of the first n calls for
   n = 50, 60, …, N, as the spread of t_max over n < 200 and over n ≥ 200 relative to t_max(N) —
   for the calls in the order measured (as the paper), in random order (sampling alone, without a
   shared machine's drifting load), and for a synthetic Poisson sample (the paper's model).
2. **Model acceptance** on the calibration traces of ``bench/kluge_traces.py`` (``DATA/calibration``):
   how many (op, P, bytes) groups keep a Poisson or exponential model at each histogram window.
3. **T_f interpolation**: leave one message size out of every (op, P) series and predict its t_max
   from its neighbours, linearly in bytes and in log2(1 + bytes); the median relative error decides
   :data:`pmkit.calibration.reference.BYTES_SCALE`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def sample_from_mpi(processes: int, repetitions: int, out: Path) -> np.ndarray:
    """Allreduce times of one double on ``processes`` ranks, measured by the benchmark program."""
    import json

    sys.path.insert(0, str(HERE))
    from kluge_traces import run_mpi

    timings = run_mpi(processes, out, ["--sizes", "8", "--repetitions", str(repetitions), "--iterations", "0"])
    times = []
    for f in sorted(timings.glob("rank*.json")):
        calls = json.loads(f.read_text())["calls"]
        times += [(c["end"] - c["start"]) / 1e9 for c in calls if c["op"] == "MPI_Allreduce"]
    return np.array(times)


def stability(sample: np.ndarray, label: str, window: float | None, resolution: float) -> None:
    from pmkit.calibration.distributions import fit_sample

    sizes = np.arange(50, len(sample) + 1, 10)
    fits = [fit_sample(sample[:n], window=window, resolution=resolution) for n in sizes]
    final = fits[-1].t_max
    t_max = np.array([f.t_max for f in fits])
    deviation = np.abs(t_max - final) / final
    models = {}
    for f in fits:
        models[f.model] = models.get(f.model, 0) + 1
    small, large = deviation[sizes < 200], deviation[sizes >= 200]
    print(f"{label}: N={len(sample)}, t_max(N) = {final * 1e6:.3g} µs ({fits[-1].model}); "
          f"max |t_max(n) − t_max(N)| / t_max(N): n < 200: {small.max():.1%}, n ≥ 200: {large.max():.1%}, "
          f"n ≥ 500: {deviation[sizes >= 500].max():.1%}; models over n: {models}")
    marks = [n for n in (50, 100, 150, 200, 300, 500, 1000, 2000, 3000) if n <= len(sample)]
    print("    n:     " + " ".join(f"{n:>7}" for n in marks))
    print("    t_max: " + " ".join(f"{t_max[list(sizes).index(n)] * 1e6:>6.3g}µ" for n in marks if n in sizes))


def acceptance(data: Path) -> None:
    import pmkit
    from pmkit.calibration.reference import calibrate
    from pmkit.calibration.samples import trace_samples

    folder = data / "calibration"
    if not folder.is_dir():
        print(f"(no {folder}: run bench/kluge_traces.py first)")
        return
    samples = trace_samples(pmkit.read(folder).events, callpath_prefix="calib_")
    print(f"{len(samples)} (op, P, bytes) groups of {folder}")
    print(f"{'window':>10} {'poisson':>8} {'exponential':>12} {'untested':>9} {'empirical':>10}")
    for window in (None, 1e-9, 1e-7, 1e-6, 1e-5):
        reference = calibrate(samples, window=window, resolution=1e-9)
        counts = {m: sum(g.fit.model == m for g in reference.groups) for m in ("poisson", "exponential", "empirical")}
        untested = sum(any("too few classes" in n for n in g.fit.notes) for g in reference.groups)
        print(f"{'auto' if window is None else f'{window:g} s':>10} {counts['poisson']:>8} {counts['exponential']:>12} "
              f"{untested:>9} {counts['empirical']:>10}")


def interpolation(data: Path) -> None:
    import pmkit
    from pmkit.calibration.reference import calibrate, interpolate
    from pmkit.calibration.samples import trace_samples

    folder = data / "calibration"
    if not folder.is_dir():
        return
    reference = calibrate(trace_samples(pmkit.read(folder).events, callpath_prefix="calib_"), resolution=1e-9)
    errors: dict[str, list[float]] = {"linear": [], "log": []}
    for op in reference.ops():
        p, b, t = reference.base_points(op)
        for level in np.unique(p):
            rows = np.nonzero(p == level)[0]
            rows = rows[np.argsort(b[rows])]
            for i in rows[1:-1]:  # interior sizes only: the ends would be clamped
                keep = rows[rows != i]
                for scale in errors:
                    predicted, _ = interpolate(p[keep], b[keep], t[keep], np.array([level]), np.array([b[i]]), scale)
                    errors[scale].append(abs(predicted[0] - t[i]) / t[i])
    for scale, values in errors.items():
        values_array = np.array(values)
        print(f"{scale:>6} in bytes: median relative error {np.median(values_array):.1%}, mean "
              f"{values_array.mean():.1%}, over {len(values_array)} held-out base points")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / ".kluge")
    parser.add_argument("--repetitions", type=int, default=3000)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--sample", type=Path, help="a CSV op,nprocs,bytes,duration to use instead of measuring")
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n1. t_max against sample size (paper §9: stable from about 200 calls)")
    if args.sample:
        from pmkit.calibration.samples import csv_samples

        sample = max(csv_samples(args.sample), key=lambda s: len(s[3]))[3]
    else:
        sample = sample_from_mpi(args.processes, args.repetitions, args.data / "timings" / "stability")
        sample = sample[: args.repetitions]  # the calls of rank 0, in order
    stability(sample, f"real MPI_Allreduce, 8 bytes, {args.processes} processes, first n calls", None, 1e-9)
    shuffled = np.random.default_rng(0).permutation(sample)
    stability(shuffled, "the same calls in random order (sampling alone, without the machine's drift)", None, 1e-9)
    rng = np.random.default_rng(2005)
    synthetic = 5e-6 + 1e-7 * rng.poisson(4.0, args.repetitions)
    stability(synthetic, "synthetic Poisson sample (the paper's model)", 1e-7, 1e-9)
    print("\n2. models kept per histogram window (real calibration traces)")
    acceptance(args.data)
    print("\n3. T_f: interpolating a held-out message size from its neighbours")
    interpolation(args.data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
