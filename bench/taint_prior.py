"""Accuracy protocol for the Perf-Taint prior: false dependencies with and without it, and contention.

A generated Score-P-style Cube study (written with pmkit's Cube writer, read by the Cube reader) of
a program with noisy constant helpers, kernels that depend on one of two
parameters (``size`` or ``p``) and one constant kernel with a planted contention effect (it slows
down by 25 % from the smallest to the largest ``p``, which its code cannot cause).  Beside it, a raw
Perf-Taint JSON file describing that program.  Per seed, the study is modeled without and with the
prior; a *false dependency* is a parameter in a model that the true law does not contain.  The
contention kernel must come back as a contradiction finding, and nothing else may.

    python bench/taint_prior.py                # 20 seeds, both the p-only and the (p, size) study
    python bench/taint_prior.py --seeds 5 --noise 0.05

The two-parameter study needs the multi-parameter modeler; without it only the p study runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
from pathlib import Path

import numpy as np

import pmkit
from pmkit.priors.taint import contradictions, load
from pmkit.testing.cubewriter import TIME, write_cube

P_VALUES = (2, 4, 8, 16, 32)
SIZE_VALUES = (10, 20, 30, 40, 50)
REPETITIONS = 5

# name → (true parameters, law); laws take (p, size) arrays
HELPERS = {f"helper_{k}": ((), lambda p, s, c=10.0 ** (-4 + k / 3): c + 0 * p) for k in range(12)}
SIZE_KERNELS = {
    "stencil": (("size",), lambda p, s: 2e-3 * s ** 1.5),
    "copy": (("size",), lambda p, s: 1e-3 * s),
    "sort": (("size",), lambda p, s: 5e-4 * s * np.log2(s)),
    "dense": (("size",), lambda p, s: 2e-5 * s ** 2),
}
P_KERNELS = {
    "MPI_Allreduce": (("p",), lambda p, s: 1e-3 * np.log2(p)),
    "MPI_Bcast": (("p",), lambda p, s: 5e-4 * np.log2(p)),
    "MPI_Alltoall": (("p",), lambda p, s: 1e-4 * p),
    "halo": (("p",), lambda p, s: 3e-3 * p ** 0.5),
}
CONTENTION = ("contended",
              lambda p, s: 0.05 * (1 + 0.25 * np.log2(p / P_VALUES[0]) / np.log2(P_VALUES[-1] / P_VALUES[0])))


def taint_json() -> dict:
    """A raw Perf-Taint file for the program: size kernels loop over size, MPI calls depend on p."""
    names = ["main", *HELPERS, *SIZE_KERNELS, *P_KERNELS, CONTENTION[0]]
    index = {n: i for i, n in enumerate(names)}
    functions = {}
    for name, (params, _) in {**SIZE_KERNELS, **P_KERNELS}.items():
        instance = {"0": {"level": 0, "params": [list(params)]}}
        entry = {"func_idx": index[name], "loops": [{"callstacks": [[0]], "instance": instance}]}
        if not name.startswith("MPI_"):
            entry["file"], entry["line"] = "app.cpp", 10 + index[name]
        functions[name] = entry
    return {"functions": functions, "functions_names": names, "functions_mangled_names": names,
            "functions_demangled_names": names, "parameters": ["size", "p"]}


def study(seed: int, params: tuple[str, ...], noise: float, folder: Path) -> pmkit.Experiment:
    """Write the study as Score-P-style Cube files (``app.p8.size30.r2/profile.cubex``) and read it back."""
    rng = np.random.default_rng(seed)
    grids = {"p": P_VALUES, "size": SIZE_VALUES}
    laws = {**HELPERS, **SIZE_KERNELS, **P_KERNELS, CONTENTION[0]: ((), CONTENTION[1])}
    callpaths = ["main", *(f"main->{name}" for name in laws)]
    root = folder / f"seed{seed}"
    for point in itertools.product(*(grids[n] for n in params)):
        coords = dict(zip(params, point, strict=True))
        p, s = coords.get("p", 8), coords.get("size", 30)
        ranks = int(coords.get("p", 1))
        label = ".".join(f"{n}{v}" for n, v in coords.items())
        means = np.array([0.0, *(float(law(np.float64(p), np.float64(s))) for _, law in laws.values())])
        for rep in range(1, REPETITIONS + 1):
            per_run = means * (1 + noise * rng.standard_normal(len(means)))
            write_cube(root / f"app.{label}.r{rep}" / "profile.cubex", callpaths, (TIME,),
                       {"time": np.repeat(per_run[:, None], ranks, axis=1)}, processes=ranks)
    return pmkit.read(root, "cube")


def true_params(name: str) -> set[str]:
    for table in (HELPERS, SIZE_KERNELS, P_KERNELS):
        if name in table:
            return set(table[name][0])
    return set()


def used(model: pmkit.Model) -> set[str]:
    if model.function is None:
        return set()
    return {f.parameter for t in model.function.terms if t.coefficient != 0 for f in t.factors}


def run(params: tuple[str, ...], seeds: int, noise: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "app_0.json"
        path.write_text(json.dumps(taint_json()))
        knowledge = load(path)
        totals = {"free": 0, "prior": 0, "found": 0, "false_findings": 0, "missed_kernels": 0}
        example = None
        for seed in range(seeds):
            exp = study(seed, params, noise, Path(tmp))
            constraints = knowledge.constraints(exp)
            free = pmkit.model(exp)
            shaped = pmkit.model(exp, constraints=constraints)
            for cp in exp.callpaths:
                if cp.parent is None or cp.name == CONTENTION[0]:
                    continue
                truth = true_params(cp.name) & set(params)
                totals["free"] += len(used(free.get(cp.path, "time")) - truth)
                totals["prior"] += len(used(shaped.get(cp.path, "time")) - truth)
                totals["missed_kernels"] += len(truth - used(shaped.get(cp.path, "time")))
            findings = contradictions(exp, shaped, free, constraints)
            hits = [f for f in findings if f.callpath == f"main->{CONTENTION[0]}"]
            totals["found"] += bool(hits)
            totals["false_findings"] += len(findings) - len(hits)
            if hits and example is None:
                example = hits[0]
        n_series = seeds * (len(HELPERS) + len(SIZE_KERNELS) + len(P_KERNELS))
        print(f"study over {', '.join(params)}: {seeds} seeds × {n_series // seeds} series, noise {noise:.0%}, "
              f"{REPETITIONS} repetitions")
        print(f"  false dependencies without the prior: {totals['free']}")
        print(f"  false dependencies with the prior:    {totals['prior']}")
        print(f"  true dependencies lost with the prior: {totals['missed_kernels']}")
        print(f"  contention found in {totals['found']} of {seeds} seeds; findings elsewhere: "
              f"{totals['false_findings']}")
        if example is not None:
            print(f"  e.g. {example.callpath}: {example.title}")
            print(f"       {example.message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--noise", type=float, default=0.05, help="relative noise per repetition (default 0.05)")
    args = parser.parse_args()
    run(("p",), args.seeds, args.noise)
    try:
        import pmkit.modelers.multiparam  # noqa: F401
    except ImportError:
        print("study over p, size: skipped (pmkit.modelers.multiparam is not available yet)")
        return
    run(("p", "size"), args.seeds, args.noise)


if __name__ == "__main__":
    main()
