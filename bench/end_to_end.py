"""End to end, file to output: ``pmkit model FILE --json`` and ``pmkit show FILE``, stage by stage,
with Extra-P's command line on the same files in the same run (issue 14).

Usage::

    nice -n 10 python bench/end_to_end.py                  # the issue's sizes (several minutes)
    python bench/end_to_end.py --quick                     # 10,000 series instead of 100,000 / 1,000,000
    python bench/end_to_end.py --reference-rev 465a265     # the code whose models must come out unchanged
    python bench/end_to_end.py --before                    # model --json, show, show --json: reference vs HEAD
    python bench/end_to_end.py --before --parameters 2 --only model --rounds 2   # the two-parameter file

Inputs are Extra-P text files written here from :func:`synthetic.speed_batch` (seed 7): one
parameter at x = 2..32 (5 points) and two parameters on the 5×5 grid, call paths
``main->k{i % 100}->f{i}``.  Per case:

* **end to end**: the wall-clock time of the real command in a fresh process (start-up included),
  ``pmkit model FILE --json --out OUT`` (and ``--format jsonl|parquet|arrow``), ``pmkit show FILE``;
  series/s is series over that time.  Peak memory is the process's peak resident set size.
* **stages**: the same work in one instrumented fresh process — start-up (imports), read
  (``pmkit.read``), model (``pmkit.model``), serialise (the writer into memory) and write (the bytes
  to the file) — CPU and wall seconds each.
* **Extra-P 4.2.5** (``$PMKIT_EXTRAP_PYTHON``): ``extrap --text FILE --modeler M --out OUT``
  end to end on a file of 1,000 such series, with its ``default`` and its ``refining`` modeler (the
  faster is compared), and its stages (read, model, format the output, write) in an instrumented
  process.
* **models unchanged**: the ``--json`` output is compared (after parsing) with the output of the
  code at ``--reference-rev`` on the same file (default: the merge base with main, i.e. the code
  before this branch's change; run once per file and kept in ``bench/.cache``).

Targets (issue 14): ≥ 50,000 one-parameter series/s end to end at 100,000 series and ≥ 1,000× Extra-P's
end-to-end series/s on 1,000 of them; ≥ 10,000 two-parameter series/s at 100,000; 1,000,000 series
within 4 GB; ``pmkit show`` on the 100,000-series file under 5 s.  The machine these run on may be
shared: wall-clock figures are then provisional (CPU seconds are printed beside them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from synthetic import speed_batch

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
CACHE = BENCH_DIR / ".cache"
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PMKIT_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "120"}
"""The measured commands' environment: plugins of the machine left out, and bytecode cached as an
installed package has it (``pip install`` compiles it; a shell with ``PYTHONDONTWRITEBYTECODE`` set
would make every run compile pmkit's ~90 modules again, ~0.2 s — :func:`main` compiles them first)."""

STAGE_CLOCK = """\
wall, cpu = time.perf_counter(), time.process_time()
marks = {}
def mark(name):
    global wall, cpu
    w, c = time.perf_counter(), time.process_time()
    marks[name] = {"wall": w - wall, "cpu": c - cpu}
    wall, cpu = w, c
"""
"""The stage clock both measured scripts start with: ``mark(name)`` records the wall and CPU time since
the previous mark in ``marks``, which the script prints as JSON at the end."""

PMKIT_STAGES = r"""
import io, json, sys, time
""" + STAGE_CLOCK + r"""import pmkit
from pmkit.writers import write_models
mark("start-up")
path, out, fmt = sys.argv[1], sys.argv[2], sys.argv[3]
experiment = pmkit.read(path)
mark("read")
models = pmkit.model(experiment)
mark("model")
buffer = io.BytesIO()
write_models(fmt, buffer, experiment.parameters, [(path, models)], sources=[path])
mark("serialise")
with open(out, "wb") as handle:
    handle.write(buffer.getbuffer())
mark("write")
print(json.dumps(marks))
"""

EXTRAP_STAGES = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")
""" + STAGE_CLOCK + r"""from extrap.fileio.file_reader import all_readers
from extrap.fileio.output import format_output
from extrap.modelers.model_generator import ModelGenerator
mark("start-up")
path, out, modeler = sys.argv[1], sys.argv[2], sys.argv[3]
experiment = all_readers["text"]().read_experiment(path)
mark("read")
ModelGenerator(experiment, modeler=modeler).model_all()
mark("model")
text = format_output(experiment, "all")
mark("serialise")
with open(out, "w") as handle:
    handle.write(text)
mark("write")
print(json.dumps(marks))
"""


def write_text(path: Path, n: int, parameters: int) -> None:
    """``n`` series of :func:`synthetic.speed_batch` as an Extra-P text file (values to 9 digits)."""
    batch = speed_batch(n, parameters)
    values = batch.values[:, :, 0]
    with open(path, "w", encoding="utf-8") as out:
        out.write("".join(f"PARAMETER {p}\n" for p in batch.parameters))
        out.write("POINTS " + " ".join("( " + " ".join(f"{c:g}" for c in pt) + " )" for pt in batch.points) + "\n")
        out.write("METRIC time\n")
        block = 10_000
        for start in range(0, n, block):
            rows = values[start:start + block].tolist()
            out.write("".join(f"REGION main->k{(start + k) % 100}->f{start + k}\n"
                              + "".join(f"DATA {v:.9g}\n" for v in row) for k, row in enumerate(rows)))


def input_file(folder: Path, n: int, parameters: int) -> Path:
    path = folder / f"p{parameters}_{n}.txt"
    if not path.exists():
        write_text(path, n, parameters)
    return path


LAUNCH = r"""
import json, os, subprocess, sys, time
with open(sys.argv[1], "wb") as errors:
    start = time.perf_counter()
    proc = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=errors)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "wall": seconds,
                  "cpu": usage.ru_utime + usage.ru_stime, "maxrss": usage.ru_maxrss}))
"""
"""Runs a command and reports its rusage.  A small process of its own: a child's peak resident size
counts the pages of the process it was forked from, so the benchmark (which holds parsed documents)
must not fork the measured command itself."""


def run(command: list[str], env: dict | None = None) -> dict:
    """Wall seconds, CPU seconds and peak resident MB of one fresh process."""
    with tempfile.NamedTemporaryFile(suffix=".err") as errors:
        done = subprocess.run([sys.executable, "-c", LAUNCH, errors.name, *command], capture_output=True, text=True,
                              env=env or ENV, check=False)
        if done.returncode != 0:
            raise SystemExit(f"the launcher failed:\n{done.stderr[-2000:]}")
        result = json.loads(done.stdout)
        if result["code"] != 0:
            raise SystemExit(f"{' '.join(command)} failed ({result['code']}):\n{Path(errors.name).read_text()[-2000:]}")
    scale = 1 / 1024 if sys.platform != "darwin" else 1 / 2**20
    return {"wall": result["wall"], "cpu": result["cpu"], "peak_mb": result["maxrss"] * scale}


def stages(code: str, python: str, *args: str) -> dict:
    done = subprocess.run([python, "-c", code, *args], capture_output=True, text=True, env=ENV, check=False)
    if done.returncode != 0:
        raise SystemExit(f"stage run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def reference_rev(given: str | None) -> str:
    rev = given or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True,
                                  check=True).stdout.strip()
    return subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def reference_source(rev: str) -> Path:
    """The code at ``rev`` (its ``src``), extracted once into bench/.cache."""
    source = CACHE / f"src-{rev}"
    if not source.exists():
        archive = subprocess.run(["git", "archive", rev, "src"], cwd=ROOT, capture_output=True, check=True).stdout
        with tempfile.TemporaryFile() as handle:
            handle.write(archive)
            handle.seek(0)
            with tarfile.open(fileobj=handle) as tar:
                tar.extractall(source, filter="data")
    return source


def reference_models(rev: str, path: Path) -> Path:
    """The ``--json`` output of the code at ``rev`` on ``path`` (computed once, kept in bench/.cache)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    out = CACHE / f"models-{rev}-{digest}.json"
    if out.exists():
        return out
    env = {**ENV, "PYTHONPATH": str(reference_source(rev) / "src")}
    print(f"  reference: models of {path.name} by {rev} (once)", flush=True)
    run([sys.executable, "-m", "pmkit.cli", "model", str(path), "--json", "--out", str(out)], env=env)
    return out


def same_models(ours: Path, reference: Path) -> tuple[bool, str]:
    a, b = json.loads(ours.read_bytes()), json.loads(reference.read_bytes())
    if a["models"] == b["models"]:
        return True, f"{len(a['models']):,} models equal"
    differing = sum(x != y for x, y in zip(a["models"], b["models"], strict=False))
    return False, f"{differing:,} of {len(b['models']):,} models differ"


def extrap_python() -> str | None:
    python = os.environ.get("PMKIT_EXTRAP_PYTHON")
    return python if python and Path(python).exists() else None


def line(label: str, result: dict, series: int | None = None) -> str:
    rate = f"{series / result['wall']:>11,.0f}/s" if series else " " * 13
    peak = f"{result['peak_mb']:7,.0f} MB" if "peak_mb" in result else ""
    return f"  {label:44} {result['wall']:7.2f} s wall {result['cpu']:7.2f} s cpu {rate} {peak}"


def stage_lines(marks: dict) -> list[str]:
    total = {"wall": sum(m["wall"] for m in marks.values()), "cpu": sum(m["cpu"] for m in marks.values())}
    return [line(f"  {name}", m) for name, m in marks.items()] + [line("  sum of stages", total)]


def before_after(rev: str, path: Path, n: int, rounds: int = 3, parameters: int = 1,
                 only: tuple[str, ...] = ("model --json", "show", "show --json")) -> int:
    """``pmkit model --json``, ``pmkit show`` and ``pmkit show --json`` (those named in ``only``) on ``path`` by
    the code at ``rev`` (bytecode compiled, as for HEAD) and by HEAD, alternately; the best wall and CPU seconds
    of ``rounds``, and each run's."""
    reference_models(rev, path)  # unpacks the reference's source
    source = CACHE / f"src-{rev}" / "src"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True, env=ENV,
                   stdout=subprocess.DEVNULL)
    commands = {"model --json": ["model", str(path), "--json", "--out", os.devnull], "show": ["show", str(path)],
                "show --json": ["show", str(path), "--json"]}
    commands = {label: command for label, command in commands.items() if label in only}
    best: dict[tuple[str, str], tuple[float, float]] = {}
    runs: dict[tuple[str, str], list[str]] = {}
    for _ in range(rounds):
        for label, command in commands.items():
            for who, env in ((rev, {**ENV, "PYTHONPATH": str(source)}), ("HEAD", ENV)):
                result = run([sys.executable, "-m", "pmkit.cli", *command], env=env)
                wall, cpu = best.get((label, who), (math.inf, math.inf))
                best[(label, who)] = (min(wall, result["wall"]), min(cpu, result["cpu"]))
                runs.setdefault((label, who), []).append(f"{result['wall']:.2f}/{result['cpu']:.2f}")
    kind = "one-parameter" if parameters == 1 else f"{parameters}-parameter"
    print(f"\n{n:,} {kind} series, best of {rounds}; load {os.getloadavg()[0]:.1f} after the runs")
    for label in commands:
        (bw, bc), (aw, ac) = best[(label, rev)], best[(label, "HEAD")]
        print(f"  {label:14} {rev}: {bw:5.2f} s wall {bc:5.2f} s cpu    HEAD: {aw:5.2f} s wall {ac:5.2f} s cpu"
              f"    (each run, wall/cpu: {' '.join(runs[(label, rev)])} | {' '.join(runs[(label, 'HEAD')])})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10,000 series instead of 100,000 and 1,000,000")
    parser.add_argument("--reference-rev", help="the code whose models must come out unchanged (default: merge "
                        "base with main)")
    parser.add_argument("--extrap-modelers", nargs="+", default=["default", "refining"],
                        help="Extra-P's modelers to run (the faster one is compared; default: default refining)")
    parser.add_argument("--skip-million", action="store_true", help="leave out the 1,000,000-series memory run")
    parser.add_argument("--folder", type=Path, default=CACHE / "inputs", help="where the inputs are kept")
    parser.add_argument("--before", action="store_true", help="only time model --json, show and show --json on "
                        "the file of --parameters with the code at --reference-rev and at HEAD, alternately (best of "
                        "--rounds)")
    parser.add_argument("--parameters", type=int, choices=(1, 2), default=1, help="with --before: the one- or "
                        "two-parameter file (default 1)")
    parser.add_argument("--rounds", type=int, default=3, help="with --before: runs of each command and code")
    parser.add_argument("--only", nargs="+", choices=("model", "show", "show-json"), help="with --before: these "
                        "commands alone (model --json, show, show --json; default all three)")
    args = parser.parse_args(argv)
    large = 10_000 if args.quick else 100_000
    million = 20_000 if args.quick else 1_000_000
    subset = 1_000
    args.folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=True, env=ENV,
                   stdout=subprocess.DEVNULL)
    rev = reference_rev(args.reference_rev)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    print(f"end to end, HEAD {head.strip()}, models compared with {rev}; load {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs (wall figures provisional on a shared machine)", flush=True)
    pmkit = [sys.executable, "-m", "pmkit.cli"]
    if args.before:
        names = {"model": "model --json", "show": "show", "show-json": "show --json"}
        only = tuple(names[o] for o in args.only) if args.only else tuple(names.values())
        return before_after(rev, input_file(args.folder, large, args.parameters), large, args.rounds,
                            args.parameters, only)
    rates: dict[str, tuple[float, float]] = {}
    """Series per second of wall-clock time and per CPU-second, by case."""
    out = args.folder / "out"
    with tempfile.TemporaryDirectory() as tmp:
        for parameters, n in ((1, large), (2, large), (1, subset)):
            path = input_file(args.folder, n, parameters)
            print(f"\n{parameters} parameter(s), {n:,} series, {path.stat().st_size / 1e6:.0f} MB ({path})", flush=True)
            target = Path(tmp) / "models.json"
            result = run([*pmkit, "model", str(path), "--json", "--out", str(target)])
            print(line("pmkit model --json", result, n), flush=True)
            rates[f"model {parameters} {n}"] = (n / result["wall"], n / result["cpu"])
            same, text = same_models(target, reference_models(rev, path))
            print(f"  models unchanged against {rev}: {'yes' if same else 'NO'} ({text})", flush=True)
            for line_text in stage_lines(stages(PMKIT_STAGES, sys.executable, str(path), str(out), "json")):
                print(line_text, flush=True)
            if parameters == 1 and n == large:
                for fmt in ("jsonl", "parquet", "arrow"):
                    result = run([*pmkit, "model", str(path), "--format", fmt, "--out", str(Path(tmp) / f"m.{fmt}")])
                    print(line(f"pmkit model --format {fmt}", result, n), flush=True)
                result = run([*pmkit, "show", str(path)])
                print(line("pmkit show (terminal view, to a pipe)", result), flush=True)
                rates["show"] = (result["wall"], result["cpu"])
            python = extrap_python() if n == subset else None
            if n == subset and python is None:
                print("  Extra-P: not measured (set PMKIT_EXTRAP_PYTHON)")
            for modeler in args.extrap_modelers if python else ():
                extrap = str(Path(python).parent / "extrap")
                result = run([extrap, "--text", str(path), "--modeler", modeler, "--print", "functions",
                              "--out", str(Path(tmp) / "extrap.txt"), "--disable-progress"])
                print(line(f"Extra-P {modeler} (command line)", result, n), flush=True)
                fastest = rates.get("extrap", (0.0, 0.0))
                rates["extrap"] = (max(fastest[0], n / result["wall"]), max(fastest[1], n / result["cpu"]))
                for line_text in stage_lines(stages(EXTRAP_STAGES, python, str(path), str(out), modeler)):
                    print(line_text, flush=True)
        if not args.skip_million:
            path = input_file(args.folder, million, 1)
            print(f"\n1 parameter, {million:,} series, {path.stat().st_size / 1e6:.0f} MB", flush=True)
            result = run([*pmkit, "model", str(path), "--json", "--out", str(Path(tmp) / "million.json")])
            print(line("pmkit model --json", result, million), flush=True)
            rates["million"] = (result["peak_mb"], result["peak_mb"])
    print("\ntargets (issue 14); the second figure is per CPU-second instead of per wall-clock second")
    ratio = lambda a, b: (a[0] / b[0], a[1] / b[1])  # noqa: E731
    checks = [(f"one parameter, {large:,} series, end to end", rates[f"model 1 {large}"], 50_000, "series/s"),
              (f"two parameters, {large:,} series, end to end", rates[f"model 2 {large}"], 10_000, "series/s")]
    if "extrap" in rates:
        checks.append((f"pmkit at {large:,} ÷ faster Extra-P at {subset:,}",
                       ratio(rates[f"model 1 {large}"], rates["extrap"]), 1_000, "×"))
        checks.append((f"pmkit ÷ faster Extra-P, both at {subset:,}",
                       ratio(rates[f"model 1 {subset}"], rates["extrap"]), 1_000, "×"))
    for label, (wall, cpu), goal, unit in checks:
        print(f"  {label:48} {wall:10,.0f} {cpu:10,.0f} {unit:9} target ≥ {goal:,}: "
              f"{'met' if wall >= goal else 'NOT met'}")
    limits = [(f"pmkit show, {large:,} call paths (seconds)", rates["show"], 5.0, "s")]
    if "million" in rates:
        limits.append((f"peak memory, {million:,} series", rates["million"], 4096, "MB"))
    for label, (wall, cpu), goal, unit in limits:
        second = f"{cpu:10,.1f}" if unit == "s" else " " * 10
        print(f"  {label:48} {wall:10,.1f} {second} {unit:9} target ≤ {goal:,}: {'met' if wall <= goal else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
