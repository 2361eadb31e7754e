"""Every prediction interval of a large study, fast and unchanged (issues 14 and 18): what the views that
need all of them cost — ``pmkit show FILE --json`` and ``pmkit show FILE --rank-by low`` — beside
``pmkit show FILE``, for the code at a reference revision and this code, in the same run.

Usage::

    nice -n 10 python bench/interval_speed.py                        # 100,000 series, 1 and 2 parameters
    python bench/interval_speed.py --quick                           # 10,000 series
    python bench/interval_speed.py --reference-rev 5fcddd2           # the code to compare with
    nice -n 10 python bench/interval_speed.py --hedge --reference-rev 3572526   # the hedge's cost (below)

Inputs are :mod:`end_to_end`'s Extra-P text files (one parameter at x = 2..32, two on the 5×5 grid).
Per file and code:

* **commands**: CPU seconds (user + system, what the lead compares on a quiet machine), wall seconds
  and peak memory of each command in a fresh process;
* **stages**: in one fresh process after reading and modeling, CPU seconds of building every
  series' alternatives (``Uncertainty.table()``) and of their 90% intervals at 4× the largest point;
* **unchanged**: the ``--json`` documents of both codes compared byte for byte (every row's
  ``prediction.low``/``high`` is in them), and the stage's bounds compared as arrays.

``--hedge``: the ``hedge`` modeler option's cost instead, on two files of 20,000 two-parameter series
(``--hedge-series``): *narrow*, :func:`narrow_file` (``weak_scaling.py``'s laws on its 5×5 narrow grid, ±5% noise,
one repetition), and *p2 head*, the first 20,000 series of :mod:`end_to_end`'s two-parameter file.  Per file and
code, ``--rounds`` rounds alternating the codes: ``pmkit model FILE --json --out X`` and ``pmkit show FILE --json
--out X``, each with and without ``-O hedge=true``; the ``-O hedge=true`` documents of both codes compared byte for
byte.

OpenBLAS threads spin while waiting, which the CPU seconds count: ``OPENBLAS_NUM_THREADS=1`` in the
environment shows what the work alone costs.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from end_to_end import CACHE, ENV, ROOT, input_file, reference_rev, reference_source, run

NARROW_SEED = 20261128
"""The seed of :func:`narrow_file`'s laws and noise."""

STAGES = r"""
import json, sys, time
import numpy as np
import pmkit
experiment = pmkit.read(sys.argv[1])
models = pmkit.model(experiment)
uncertainty = models.uncertainty
start = time.process_time()
uncertainty.table()
built = time.process_time()
point = {p: 4 * float(experiment.points[:, i].max()) for i, p in enumerate(experiment.parameters)}
value, low, high = uncertainty.predict(point)
done = time.process_time()
np.save(sys.argv[2], np.stack([value, low, high]))
print(json.dumps({"alternatives": built - start, "intervals": done - built}))
"""


def stage_times(path: Path, env: dict, out: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", STAGES, str(path), str(out)], capture_output=True, text=True,
                          env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"stage run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def narrow_file(folder: Path, n: int) -> Path:
    """``n`` two-parameter series drawn as ``weak_scaling.py`` draws its laws (its nine laws in turn, on its 5×5
    grid p = 27..343 × size = 25..45), ±5% uniform noise, one repetition, as an Extra-P text file (values to 9
    digits; written once, kept in ``folder``)."""
    path = folder / f"narrow_{n}.txt"
    if path.exists():
        return path
    from multistudy import noisy, scaled_laws
    from weak_scaling import GRID, LAWS, PARAMETERS

    rng = np.random.default_rng(NARROW_SEED)
    share = [n // len(LAWS) + (k < n % len(LAWS)) for k in range(len(LAWS))]
    cases = [scaled_laws(label, PARAMETERS, [terms] * m, GRID, rng) for (label, terms), m in zip(LAWS.items(), share,
                                                                                                   strict=True)]
    values = noisy(np.concatenate([c.evaluate(GRID) for c in cases]), 0.05, 1, rng)[:, :, 0]
    with open(path, "w", encoding="utf-8") as out:
        out.write("".join(f"PARAMETER {p}\n" for p in PARAMETERS))
        out.write("POINTS " + " ".join("( " + " ".join(f"{c:g}" for c in pt) + " )" for pt in GRID) + "\n")
        out.write("METRIC time\n")
        for i, row in enumerate(values.tolist()):
            out.write(f"REGION main->k{i % 100}->f{i}\n" + "".join(f"DATA {v:.9g}\n" for v in row))
    return path


def head_file(folder: Path, n: int) -> Path:
    """The first ``n`` series of :mod:`end_to_end`'s file of 100,000 two-parameter series (kept in ``folder``)."""
    path = folder / f"p2_100000_head{n}.txt"
    if path.exists():
        return path
    regions = 0
    with open(input_file(folder, 100_000, 2), encoding="utf-8") as source, open(path, "w", encoding="utf-8") as out:
        for line in source:
            if line.startswith("REGION"):
                regions += 1
                if regions > n:
                    break
            out.write(line)
    return path


def hedge_costs(codes: dict[str, dict], folder: Path, n: int, rounds: int, scratch: Path) -> None:
    """The ``--hedge`` measurements (module docstring), after one run of each code on 500 narrow series (a code's
    first run compiles its numba kernels into its cache, seconds that no later run pays)."""
    warm = narrow_file(folder, 500)
    for env in codes.values():
        run([sys.executable, "-m", "pmkit.cli", "show", str(warm), "--json", "--out", str(scratch / "warm.json"),
             "-O", "hedge=true"], env=env)
    for name, path in (("narrow", narrow_file(folder, n)), ("p2 head", head_file(folder, n))):
        print(f"\n{n:,} two-parameter series, {name} ({path.name}); each run CPU s (wall s, peak MB)")
        runs: dict[tuple[str, str], list[str]] = {}
        outputs: dict[tuple[str, str], Path] = {}
        for _ in range(rounds):
            for command in ("model", "show"):
                for hedge in (True, False):
                    label = f"{command} --json" + " -O hedge=true" * hedge
                    for code, env in codes.items():
                        out = scratch / f"{code}-{command}-{hedge}.json"
                        result = run([sys.executable, "-m", "pmkit.cli", command, str(path), "--json", "--out",
                                      str(out), *(["-O", "hedge=true"] if hedge else [])], env=env)
                        runs.setdefault((label, code), []).append(
                            f"{result['cpu']:.1f} ({result['wall']:.1f}, {result['peak_mb']:.0f})")
                        if hedge:
                            outputs[(command, code)] = out
        for (label, code), cells in runs.items():
            print(f"  {label:30} {code:>8}: {'  '.join(cells)}", flush=True)
        for command in ("model", "show"):
            same = filecmp.cmp(*(outputs[(command, code)] for code in codes), shallow=False)
            print(f"  {command} --json -O hedge=true byte-identical: {same}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 series instead of 100,000")
    parser.add_argument("--reference-rev", help="the code to compare with (default: the merge base with main)")
    parser.add_argument("--parameters", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    parser.add_argument("--folder", type=Path, default=CACHE / "inputs", help="where the inputs are kept")
    parser.add_argument("--hedge", action="store_true", help="the hedge option's cost instead (module docstring)")
    parser.add_argument("--hedge-series", type=int, default=20_000, help="series per --hedge file")
    parser.add_argument("--rounds", type=int, default=2, help="--hedge runs per command and code, alternated")
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    rev = reference_rev(args.reference_rev)
    codes = {rev: {**ENV, "PYTHONPATH": str(reference_source(rev) / "src")}, "this": {**ENV}}
    codes["this"].pop("PYTHONPATH", None)
    n = 10_000 if args.quick else 100_000
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    print(f"CPU s (wall s, peak MB) per fresh process; reference {rev}, this code at {head.strip()} (+ worktree)")
    with tempfile.TemporaryDirectory() as scratch:
        if args.hedge:
            hedge_costs(codes, args.folder, args.hedge_series, args.rounds, Path(scratch))
            return 0
        for parameters in args.parameters:
            path = input_file(args.folder, n, parameters)
            print(f"\n{n:,} series, {parameters} parameter{'s' * (parameters > 1)} ({path.name})")
            print(f"  {'':32}" + "".join(f"{code:>26}" for code in codes))
            outputs = {}
            for label, extra in (("pmkit show FILE", []), ("pmkit show FILE --json", ["--json"]),
                                 ("pmkit show FILE --rank-by low", ["--rank-by", "low"])):
                cells = []
                for code, env in codes.items():
                    out = Path(scratch) / f"{code}-{parameters}.json"
                    command = [sys.executable, "-m", "pmkit.cli", "show", str(path), *extra]
                    if extra == ["--json"]:
                        command += ["--out", str(out)]
                        outputs[code] = out
                    result = run(command, env=env)
                    cells.append(f"{result['cpu']:.1f} s ({result['wall']:.1f} s, {result['peak_mb']:.0f} MB)")
                print(f"  {label:32}" + "".join(f"{c:>26}" for c in cells), flush=True)
            bounds, cells = {}, {"alternatives": [], "intervals": []}
            for code, env in codes.items():
                bounds[code] = Path(scratch) / f"{code}-{parameters}.npy"
                found = stage_times(path, env, bounds[code])
                for key in cells:
                    cells[key].append(f"{found[key]:.2f} s")
            for key, values in cells.items():
                print(f"  {'  stage: ' + key:32}" + "".join(f"{c:>26}" for c in values))
            same_json = filecmp.cmp(*outputs.values(), shallow=False)
            arrays = [np.load(p) for p in bounds.values()]
            same_bounds = np.array_equal(*arrays, equal_nan=True)
            print(f"  --json documents byte-identical: {same_json}; bounds identical to the last bit: {same_bounds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
