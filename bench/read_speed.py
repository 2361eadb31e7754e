"""Reading alone: pmkit's bulk readers vs the per-value readers they replaced vs Extra-P's readers.

Usage::

    python bench/read_speed.py                                  # text, 10k and 100k series
    python bench/read_speed.py --sizes 10000 100000 1000000 --formats text jsonl talpas json
    python bench/read_speed.py --old-max 100000 --extrap-max 10000

Each file holds one-parameter series at 5 points (p = 4..64), one repetition, call paths
``main->k{i % 100}->f{i}`` under one metric — the shape of issue 14's 100,000-call-path text file.
Every reading runs in a fresh process: the times are those of the read call alone (imports
excluded), wall and CPU (the CPU time is the steadier figure on a shared machine; series/s is
computed from it), the peak memory is the process's peak resident set size after it (``VmHWM``)
minus the resident size before reading (``VmRSS``).  ``old`` is ``tests/reference_readers.py`` (the readers before bulk
parsing: a Python call per value); ``Extra-P`` is Extra-P 4.2.5's own reader in its own interpreter
(``$PMKIT_EXTRAP_PYTHON``), timed the same way.  The readers' results are checked equal (pmkit's
bulk vs old) before timing is reported.  Timings on a shared machine are provisional.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
POINTS = (4, 8, 16, 32, 64)

CHILD = r"""
import json, sys, time
from pathlib import Path

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")

kind, fmt, path = sys.argv[1], sys.argv[2], Path(sys.argv[3])
if kind == "pmkit":
    import pmkit
    from pmkit.plugins import get_registry
    get_registry()  # plugin loading is start-up, not reading
    reader = {"text": "extrap-text", "jsonl": "extrap-jsonl", "talpas": "talpas", "json": "extrap-json"}[fmt]
    read = lambda: pmkit.read(path, reader)
elif kind == "old":
    sys.path.insert(0, sys.argv[4])
    import reference_readers as old
    from pmkit.readers.record_lines import JSONL_FORMAT, TALPAS_FORMAT
    def read():
        with open(path, encoding="utf-8-sig", newline=None) as f:
            text = f.read()
        if fmt == "text":
            return old.read_text(path, text)
        if fmt == "json":
            return old.read_json(path, json.loads(text))
        return old.read_record_lines(path, text, JSONL_FORMAT if fmt == "jsonl" else TALPAS_FORMAT, False)
else:
    import warnings
    warnings.simplefilter("ignore")
    from extrap.fileio.file_reader import all_readers
    reader = all_readers[{"text": "text", "jsonl": "json", "json": "json", "talpas": "talpas"}[fmt]]()
    read = lambda: reader.read_experiment(str(path))
before = status("VmRSS")
start, cpu = time.perf_counter(), time.process_time()
experiment = read()
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
out = {"seconds": seconds, "cpu": cpu, "peak_mb": status("VmHWM") - before}
if kind != "extrap":
    import hashlib
    digest = hashlib.sha256()
    digest.update(json.dumps([experiment.parameters, experiment.callpaths.paths(), experiment.metric_names]).encode())
    digest.update(experiment.points.tobytes())
    for name in experiment.metric_names:
        digest.update(experiment.measurements[name].tobytes())
    out["digest"] = digest.hexdigest()
print(json.dumps(out))
"""


def write_file(fmt: str, path: Path, n: int, seed: int = 14) -> None:
    """``n`` one-parameter series at 5 points in format ``fmt`` (see the module docstring)."""
    rng = np.random.default_rng(seed)
    values = rng.uniform(0.1, 10, size=(n, len(POINTS)))
    names = [f"main->k{i % 100}->f{i}" for i in range(n)]
    with open(path, "w", encoding="utf-8") as out:
        if fmt == "text":
            out.write("PARAMETER p\nPOINTS " + " ".join(f"( {p} )" for p in POINTS) + "\nMETRIC time\n")
            for name, row in zip(names, values.tolist(), strict=True):
                out.write(f"REGION {name}\n" + "".join(f"DATA {v:.9g}\n" for v in row))
        elif fmt in ("jsonl", "talpas"):
            sep = ", " if fmt == "jsonl" else ";"
            for name, row in zip(names, values.tolist(), strict=True):
                for p, v in zip(POINTS, row, strict=True):
                    params = f'"params": {{"p": {p}}}' if fmt == "jsonl" else f'"parameters":{{"p":{p}}}'
                    out.write("{" + sep.join([params, f'"callpath": "{name}"', '"metric": "time"',
                                             f'"value": {v:.9g}']) + "}\n")
        else:
            measurements = {name: {"time": [{"point": [p], "values": [float(f"{v:.9g}")]}
                                            for p, v in zip(POINTS, row, strict=True)]}
                            for name, row in zip(names, values.tolist(), strict=True)}
            json.dump({"parameters": ["p"], "measurements": measurements}, out)


def run(kind: str, fmt: str, path: Path) -> dict:
    env = {**os.environ, "PMKIT_DISABLE_PLUGIN_AUTOLOAD": "1"}
    if kind == "extrap":
        python = os.environ.get("PMKIT_EXTRAP_PYTHON", "/tmp/extrap-venv/bin/python")
        if not Path(python).exists():
            return {"error": "Extra-P not found (set PMKIT_EXTRAP_PYTHON)"}
    else:
        python = sys.executable
    done = subprocess.run([python, "-c", CHILD, kind, fmt, str(path), str(ROOT / "tests")], capture_output=True,
                          text=True, env=env, check=False)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--formats", nargs="+", choices=("text", "jsonl", "talpas", "json"), default=["text"])
    parser.add_argument("--old-max", type=int, default=100_000, help="largest size the old readers read")
    parser.add_argument("--extrap-max", type=int, default=10_000, help="largest size Extra-P's readers read")
    args = parser.parse_args()
    print(f"{'format':7} {'series':>9} {'MB':>6} | {'pmkit s':>7} {'cpu s':>7} {'series/s':>10} {'peak MB':>7} | "
          f"{'old cpu s':>9} {'peak MB':>7} {'old/pmkit':>9} | {'Extra-P cpu s':>13} {'X/pmkit':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in args.formats:
            for n in args.sizes:
                path = Path(tmp) / f"series{n}.{fmt}"
                write_file(fmt, path, n)
                new = run("pmkit", fmt, path)
                old = run("old", fmt, path) if n <= args.old_max else {}
                extrap = run("extrap", fmt, path) if n <= args.extrap_max else {}
                if "digest" in old and old["digest"] != new.get("digest"):
                    raise SystemExit(f"{fmt} {n}: pmkit's bulk reader and the old reader read different experiments")
                size = path.stat().st_size / 1e6
                path.unlink()
                if "error" in new:
                    print(f"{fmt:7} {n:>9,} {size:6.1f} | pmkit failed: {new['error']}")
                    continue
                line = (f"{fmt:7} {n:>9,} {size:6.1f} | {new['seconds']:7.3f} {new['cpu']:7.3f} "
                        f"{n / new['cpu']:10,.0f} {new['peak_mb']:7.0f} | ")
                line += (f"{old['cpu']:9.2f} {old['peak_mb']:7.0f} {old['cpu'] / new['cpu']:8.1f}× | "
                         if "cpu" in old else f"{'—':>9} {'—':>7} {'—':>9} | ")
                line += (f"{extrap['cpu']:13.2f} {extrap['cpu'] / new['cpu']:7.0f}×"
                         if "cpu" in extrap else f"{extrap.get('error', '—'):>13}")
                print(line, flush=True)


if __name__ == "__main__":
    main()
