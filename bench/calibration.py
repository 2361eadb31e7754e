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
4. **T_f across the eager/rendezvous switch** (issue 21; generated, no MPI — alone with
   ``--switch-only``): t_max base points of random Hockney laws ``α + bytes/B`` that change at an
   eager limit (log-uniform 2 KiB … 256 KiB; sizes up to the limit eager, above it α ×2–5 and B
   ×0.7–1.6) and one-law controls, at powers of 2 (8 B … 1 MiB, 18 sizes) and of 4 (16 B … 1 MiB,
   9 sizes), ±1/2/5 % noise; ``T_f`` predicts 40 log-uniform sizes per series inside the range,
   interpolated only (``segments=off``, the paper's rule), with the switch (the default), and as
   the two lines alone.  Printed: share of predictions within 5 % and median error, over all sizes
   and over the sizes between the base points around the eager limit; series with a switch found,
   and the true limit inside the reported interval.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import Any

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


SWITCH_SIZES = {"2^k": 2.0 ** np.arange(3, 21), "4^k": 4.0 ** np.arange(2, 11)}


def switch_series(rng: np.random.Generator, sizes: np.ndarray, switched: bool) -> tuple[Any, float]:
    """A random Hockney law in bytes (seconds), changed at a random eager limit when ``switched``."""
    alpha, bandwidth = rng.uniform(1e-6, 5e-6), rng.uniform(1e9, 1e10)
    if not switched:
        return (lambda b: alpha + b / bandwidth), math.nan
    limit = 2.0 ** rng.uniform(11, 18)
    alpha2, bandwidth2 = alpha * rng.uniform(2, 5), bandwidth * rng.uniform(0.7, 1.6)
    return (lambda b: np.where(b <= limit, alpha + b / bandwidth, alpha2 + b / bandwidth2)), limit


def switch_accuracy(per_case: int, seed: int) -> None:
    from pmkit.calibration.distributions import SampleFit
    from pmkit.calibration.reference import Group, Reference

    rng = np.random.default_rng(seed)
    print(f"{'case':<16} {'sizes':>5} {'noise':>5} {'found':>6} {'in int.':>7}   "
          f"{'within 5% (all / gap)':^38}   {'median error (all / gap)':^38}")
    print(f"{'':<16} {'':>5} {'':>5} {'':>6} {'':>7}   {'interp.':>12} {'switch':>12} {'lines':>12}   "
          f"{'interp.':>12} {'switch':>12} {'lines':>12}")
    for switched in (True, False):
        for name, sizes in SWITCH_SIZES.items():
            for noise in (0.01, 0.02, 0.05):
                errors: dict[str, list[np.ndarray]] = {"interp.": [], "switch": [], "lines": []}
                gaps: list[np.ndarray] = []
                found = inside = 0
                for _ in range(per_case):
                    law, limit = switch_series(rng, sizes, switched)
                    t = law(sizes) * (1 + rng.uniform(-noise, noise, sizes.size))
                    groups = [Group("MPI_Send", 2, float(b), SampleFit(300, math.nan, math.nan, "empirical", float(v)))
                              for b, v in zip(sizes, t, strict=True)]
                    queries = 2.0 ** rng.uniform(np.log2(sizes[0]), np.log2(sizes[-1]), 40)
                    truth = law(queries)
                    plain = Reference(groups, {"segments": "off"})
                    segmented = Reference(groups)
                    switch = segmented.protocol_switches().get(("MPI_Send", 2))
                    predicted = {"interp.": plain.t_max("MPI_Send", 2, queries)[0],
                                 "switch": segmented.t_max("MPI_Send", 2, queries)[0]}
                    predicted["lines"] = switch.evaluate(queries) if switch is not None else predicted["interp."]
                    for method, values in predicted.items():
                        errors[method].append(np.abs(values - truth) / truth)
                    if switched:
                        below, above = sizes[sizes <= limit].max(), sizes[sizes > limit].min()
                        gaps.append((queries > below) & (queries < above))
                    else:
                        gaps.append(np.zeros(queries.size, bool))
                    if switch is not None:
                        found += 1
                        inside += switched and switch.low <= limit <= switch.high
                gap = np.concatenate(gaps)
                print(f"{'eager/rendezvous' if switched else 'one law':<16} {name:>5} {noise:>5.0%} "
                      f"{found / per_case:>6.0%} {(inside / found if found and switched else math.nan):>7.0%}   "
                      + " ".join(f"{_cell(errors[m], gap, True):>12}" for m in errors) + "   "
                      + " ".join(f"{_cell(errors[m], gap, False):>12}" for m in errors), flush=True)


def _cell(errors: list[np.ndarray], gap: np.ndarray, within: bool) -> str:
    """Share within 5 % (or the median error) over all predictions / over those in the switch's gap."""
    e = np.concatenate(errors)
    parts = [e, e[gap]] if gap.any() else [e]
    return " / ".join(f"{(x <= 0.05).mean():.1%}" if within else f"{np.median(x):.2%}" for x in parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / ".kluge")
    parser.add_argument("--repetitions", type=int, default=3000)
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--sample", type=Path, help="a CSV op,nprocs,bytes,duration to use instead of measuring")
    parser.add_argument("--switch-only", action="store_true", help="only section 4 (generated, no MPI)")
    parser.add_argument("--per-case", type=int, default=50, help="series per case of section 4 (default 50)")
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.switch_only:
        print("\n4. T_f across the eager/rendezvous switch (generated t_max base points)")
        switch_accuracy(args.per_case, args.seed)
        return 0
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
    print("\n4. T_f across the eager/rendezvous switch (generated t_max base points)")
    switch_accuracy(args.per_case, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
