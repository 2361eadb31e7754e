"""Every prediction interval of a large study, fast and unchanged (issues 14 and 18): what the views that
need all of them cost — ``pmkit show FILE --json`` and ``pmkit show FILE --rank-by low`` — beside
``pmkit show FILE``, for the code at a reference revision and this code, in the same run.

Usage::

    nice -n 10 python bench/interval_speed.py                        # 100,000 series, 1 and 2 parameters
    python bench/interval_speed.py --quick                           # 10,000 series
    python bench/interval_speed.py --reference-rev 5fcddd2           # the code to compare with

Inputs are :mod:`end_to_end`'s Extra-P text files (one parameter at x = 2..32, two on the 5×5 grid).
Per file and code:

* **commands**: CPU seconds (user + system, what the lead compares on a quiet machine), wall seconds
  and peak memory of each command in a fresh process;
* **stages**: in one fresh process after reading and modeling, CPU seconds of building every
  series' alternatives (``Uncertainty.table()``) and of their 90% intervals at 4× the largest point;
* **unchanged**: the ``--json`` documents of both codes compared byte for byte (every row's
  ``prediction.low``/``high`` is in them), and the stage's bounds compared as arrays.

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 series instead of 100,000")
    parser.add_argument("--reference-rev", help="the code to compare with (default: the merge base with main)")
    parser.add_argument("--parameters", type=int, nargs="+", default=[1, 2], choices=[1, 2])
    parser.add_argument("--folder", type=Path, default=CACHE / "inputs", help="where the inputs are kept")
    args = parser.parse_args(argv)
    args.folder.mkdir(parents=True, exist_ok=True)
    rev = reference_rev(args.reference_rev)
    codes = {rev: {**ENV, "PYTHONPATH": str(reference_source(rev) / "src")}, "this": {**ENV}}
    codes["this"].pop("PYTHONPATH", None)
    n = 10_000 if args.quick else 100_000
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    print(f"CPU s (wall s, peak MB) per fresh process; reference {rev}, this code at {head.strip()} (+ worktree)")
    with tempfile.TemporaryDirectory() as scratch:
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
