"""Segmented laws (issue 21): pmkit against Extra-P's Segmented and Basic modelers, with one-law controls.

Seven segmented cases — a slope change, flat then growing, log then linear, growing then flat and a
jump (eager → rendezvous), each with the change in the middle of the span, plus changes near its
start and near its end (any of the five shapes) — and the seven one-law cases of the paper's
protocol (``synthetic.CASES``) as controls, measured at 9 to 15 points with ±1, ±2 and ±5% uniform
noise (one value per point), from a fixed seed.  Every modeler gets the same values in the same run.

Scores: the prediction at 4× the largest x within ``--tolerance`` (5%) of the truth; for segmented
cases the change point within one measurement step of the true one (positions interpolated between
the measured points, on a log scale) and within the reported interval; for controls the share
split into segments (false segments) and the share whose model is exactly the one pmkit makes with
``segments=off`` (today's).

    python bench/segmented.py                    # 40 functions per case, x-set and noise level
    python bench/segmented.py --per-case 150     # the report's size
    python bench/segmented.py --no-extrap --per-case 300    # pmkit only (seconds)
    python bench/segmented.py --extrap-cache seg.json        # keep Extra-P's results for the next run

Extra-P's Segmented modeler takes about a tenth of a second per series here, so ``--extrap-cache``
keeps its results (per seed, size, x-set and noise level, with a digest of the values) and a later
run with the same data reuses them; pmkit always runs.

A segmented function has a left law up to its change point ``c`` and a right law from there on, each
``c0 + c1·x^α·log2^β(x)``; every coefficient scale is ``10^U[..]`` (below).  It counts only where the
change is material: each law, extended across the change, misses the other side's farthest
measured value by at least 25% (else one law describes both sides, and there is nothing to find).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from extrap_env import extrap_python, extrap_version, model_with_extrap, run_main
from rich.console import Console
from rich.table import Table
from synthetic import CASES, generate

import pmkit
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.models import Model
from pmkit.options import parse_assignments

X_SETS: dict[str, np.ndarray] = {
    "2..512 (9)": 2.0 ** np.arange(1, 10),
    "2..2048 (11)": 2.0 ** np.arange(1, 12),
    "4..48 (12)": np.arange(4.0, 49.0, 4.0),
    "2..32768 (15)": 2.0 ** np.arange(1, 16),
}
"""Points: powers of two (9, 11 and 15 of them) and a linear set like Extra-P's examples."""
NOISES = (0.01, 0.02, 0.05)
SHAPES = ("slope change", "flat, then growing", "log, then linear", "growing, then flat", "jump")
SEGMENTED_CASES: tuple[tuple[str, str], ...] = (*((s, "middle") for s in SHAPES),
                                               ("any shape", "near the start"), ("any shape", "near the end"))
MATERIAL = 0.25
"""Each law, extended across the change, must miss the other side's farthest value by this share."""
EXTRAP = ("Segmented", "Basic")

Law = Callable[[np.ndarray], np.ndarray]


def _scale(rng: np.random.Generator, low: float, high: float, n: int) -> np.ndarray:
    return 10.0 ** rng.uniform(low, high, n)


def change_points(x: np.ndarray, position: str, rng: np.random.Generator, n: int) -> np.ndarray:
    """Change points at a random fractional position between the measured points (log scale):
    ``middle`` leaves at least 4 points on each side, ``near the start``/``near the end`` 3 or 4."""
    m = x.size
    low, high = {"middle": (3.5, m - 4.5), "near the start": (2.5, 3.5), "near the end": (m - 4.5, m - 3.5)}[position]
    t = rng.uniform(low, high, n)
    j = np.floor(t).astype(int)
    lx = np.log(x)
    return np.exp(lx[j] + (t - j) * (lx[j + 1] - lx[j]))


def laws(shape: str, x: np.ndarray, c: np.ndarray, rng: np.random.Generator) -> tuple[Law, Law]:
    """The left and right laws (functions of a points array → series × points) of ``shape`` with
    change points ``c``; continuous at ``c`` except the jump."""
    n = c.size
    a = _scale(rng, -2, 3, n)[:, None]
    cc = c[:, None]
    top = float(x.max())
    if shape in ("slope change", "jump"):
        b = a * _scale(rng, -0.5, 1, n)[:, None] / cc              # the linear term is 0.3-10× a at c
        if shape == "slope change":
            factor, jump = _scale(rng, 0.5, 1.5, n)[:, None], 0.0     # slope ×3-30
        else:
            factor, jump = _scale(rng, 0, 0.5, n)[:, None], _scale(rng, -0.5, 0.5, n)[:, None]  # +30-300%
        at_c = a + b * cc
        return (lambda z: a + b * z[None, :],
                lambda z: at_c * (1 + jump) + factor * b * (z[None, :] - cc))
    if shape == "flat, then growing":
        beta = rng.choice([0.5, 1.0, 1.5, 2.0], n)[:, None]
        growth = _scale(rng, 0.3, 2, n)[:, None]                      # 2-100× at the largest x
        k = a * (growth - 1) / (top ** beta - cc ** beta)
        return (lambda z: np.broadcast_to(a, (n, z.size)),
                lambda z: a + k * (z[None, :] ** beta - cc ** beta))
    if shape == "log, then linear":
        b = a * _scale(rng, -1, 0.5, n)[:, None]
        growth = _scale(rng, 0.3, 1.5, n)[:, None]                    # 2-30× the log law at the largest x
        at_c = a + b * np.log2(cc)
        k = ((a + b * np.log2(top)) * growth - at_c) / (top - cc)
        return (lambda z: a + b * np.log2(z[None, :]),
                lambda z: at_c + k * (z[None, :] - cc))
    if shape == "growing, then flat":
        kind = rng.integers(0, 4, n)[:, None]                          # x^(1/2), x, x², log2 x

        def basis(z: np.ndarray) -> np.ndarray:
            zz = np.broadcast_to(z, (n, z.shape[-1]))
            return np.select([kind == 0, kind == 1, kind == 2], [zz ** 0.5, zz, zz ** 2], np.log2(zz))

        growth = _scale(rng, 0.3, 1.5, n)[:, None]                    # 2-30× from the smallest x to c
        b = a * (growth - 1) / (basis(cc) - basis(np.array([[x.min()]]))[:, :1])
        at_c = a + b * basis(cc)
        return (lambda z: a + b * basis(z[None, :]),
                lambda z: np.broadcast_to(at_c, (n, z.size)))
    raise ValueError(f"unknown shape {shape!r}")


@dataclass
class Truth:
    """``n`` functions of one case: values at any points, true change points (NaN for one law)."""

    case: str
    evaluate: Law
    change: np.ndarray


def segmented_truth(shape: str, position: str, x: np.ndarray, n: int, rng: np.random.Generator) -> Truth:
    """``n`` material segmented functions (rejection sampling; see :data:`MATERIAL`)."""
    parts: list[tuple[Law, np.ndarray]] = []
    changes = []
    got = 0
    ends = (np.array([x.min()]), np.array([x.max()]))
    while got < n:
        batch = 4 * (n - got) + 8
        c = change_points(x, position, rng, batch)
        kinds = rng.integers(0, len(SHAPES), batch) if shape == "any shape" else np.full(batch, SHAPES.index(shape))
        made = {k: laws(SHAPES[k], x, c, rng) for k in np.unique(kinds)}

        def law(side: int, z: np.ndarray, made=made, kinds=kinds, c=c) -> np.ndarray:
            out = np.empty((kinds.size, z.size))
            for k, pair in made.items():
                out[kinds == k] = pair[side](z)[kinds == k]
            return out

        def whole(z: np.ndarray, law=law, c=c) -> np.ndarray:
            return np.where(z[None, :] < c[:, None], law(0, z), law(1, z))

        def miss(side: int, at: np.ndarray, law=law, whole=whole) -> np.ndarray:
            truth = whole(at)[:, 0]
            return np.abs(law(side, at)[:, 0] - truth) / np.abs(truth)

        material = (miss(0, ends[1]) >= MATERIAL) & (miss(1, ends[0]) >= MATERIAL)
        keep = np.flatnonzero(material)[: n - got]
        parts.append((whole, keep))
        changes.append(c[keep])
        got += keep.size

    def evaluate(z: np.ndarray) -> np.ndarray:
        return np.concatenate([whole(z)[keep] for whole, keep in parts])

    return Truth(f"{shape}, {position}" if position != "middle" else shape, evaluate, np.concatenate(changes))


def control_truth(case: str, n: int, rng: np.random.Generator) -> Truth:
    functions = generate(case, n, rng)
    return Truth(f"one law: {case}", functions.evaluate, np.full(n, np.nan))


def position(x: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Fractional position of ``value`` among the measured points (log scale), NaN outside the span."""
    return np.interp(np.log(value), np.log(x), np.arange(x.size), left=np.nan, right=np.nan)


@dataclass
class Result:
    """One modeler on one batch: predictions at the target, change points (NaN: none) and intervals."""

    predicted: np.ndarray
    change: np.ndarray
    low: np.ndarray
    high: np.ndarray
    texts: list[str]


def run_pmkit(x: np.ndarray, values: np.ndarray, target: float, options: dict[str, str]) -> tuple[Result, float]:
    tree = CallTree()
    for i in range(values.shape[0]):
        tree.add(f"s{i}")
    experiment = Experiment(("x",), x[:, None], tree, (Metric("value"),), {"value": values[:, :, None]})
    start = time.perf_counter()
    models = list(pmkit.model(experiment, modeler="refining", **options))
    seconds = time.perf_counter() - start
    return _pmkit_result(models, target), seconds


def _pmkit_result(models: Sequence[Model], target: float) -> Result:
    n = len(models)
    predicted, change, low, high = (np.full(n, np.nan) for _ in range(4))
    for i, m in enumerate(models):
        predicted[i] = m.evaluate(target)
        if m.segmented:
            change[i], low[i], high[i] = m.change_point.value, m.change_point.low, m.change_point.high
    return Result(predicted, change, low, high, [m.function.extrap_text() if m.function else "" for m in models])


class ExtrapCache:
    """Extra-P's results by a digest of the points, values and target (a JSON file; None: no cache)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.entries: dict = {}
        if path:
            try:
                with open(path) as source:
                    self.entries = json.load(source)
            except FileNotFoundError:
                pass

    @staticmethod
    def key(x: np.ndarray, values: np.ndarray, target: float) -> str:
        digest = hashlib.sha256()
        for part in (x, values, np.array([target])):
            digest.update(np.ascontiguousarray(part, dtype=float).tobytes())
        return digest.hexdigest()

    def get(self, key: str) -> tuple[dict[str, Result], dict[str, float]] | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        results = {name: Result(*(np.array(r[f], dtype=float) for f in ("predicted", "change", "low", "high")),
                                r["texts"]) for name, r in entry["results"].items()}
        return results, entry["seconds"]

    def put(self, key: str, results: dict[str, Result], seconds: dict[str, float]) -> None:
        if not self.path:
            return
        self.entries[key] = {"seconds": seconds, "results": {
            name: {"predicted": r.predicted.tolist(), "change": r.change.tolist(), "low": r.low.tolist(),
                   "high": r.high.tolist(), "texts": r.texts} for name, r in results.items()}}
        with open(self.path, "w") as out:
            json.dump(self.entries, out)


def run_extrap(x: np.ndarray, values: np.ndarray, target: float, chunk: int, jobs: int,
               python) -> tuple[dict[str, Result], dict[str, float]]:
    starts = list(range(0, values.shape[0], chunk))

    def one(start: int):
        return model_with_extrap(["x"], x[:, None], values[start:start + chunk, :, None], predict_at=[[target]],
                                 modelers=EXTRAP, python=python)

    results: dict[str, Result] = {}
    seconds = dict.fromkeys(EXTRAP, 0.0)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        answers = list(pool.map(one, starts))
    for name in EXTRAP:
        predicted, change, texts = [], [], []
        for answer in answers:
            got = answer[name]
            seconds[name] += got.seconds
            predicted.append(got.predictions[:, 0])
            texts += got.texts
            for seg in got.segments or [None] * len(got.functions):
                if seg is None or not seg.change_points:
                    change.append(np.nan)
                else:  # one shared point, or half way (log scale) between the two around the change
                    change.append(float(np.exp(np.mean(np.log(seg.change_points)))))
        cp = np.array(change)
        results[name] = Result(np.concatenate(predicted), cp, cp.copy(), cp.copy(), texts)
    return results, seconds


@dataclass
class Tally:
    """Counts over series of one case (and noise level)."""

    series: int = 0
    predicted: int = 0
    split: int = 0
    step: int = 0
    covered: int = 0
    unchanged: int = 0

    def add(self, other: Tally) -> None:
        for name in ("series", "predicted", "split", "step", "covered", "unchanged"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def rate(self, name: str) -> float:
        return 100.0 * getattr(self, name) / self.series if self.series else float("nan")


def tally(result: Result, truth_values: np.ndarray, change: np.ndarray, x: np.ndarray, tolerance: float,
          reference: Result | None) -> Tally:
    ok = np.abs(result.predicted - truth_values) <= tolerance * np.abs(truth_values)
    split = np.isfinite(result.change)
    out = Tally(truth_values.size, int(ok.sum()), int(split.sum()))
    if np.isfinite(change).any():
        step = np.abs(position(x, result.change) - position(x, change)) <= 1.0
        out.step = int((split & step).sum())
        out.covered = int((split & (result.low <= change) & (change <= result.high)).sum())
    if reference is not None:
        out.unchanged = sum(a == b for a, b in zip(result.texts, reference.texts, strict=True))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-case", type=int, default=40, help="functions per case, x-set and noise level (40)")
    parser.add_argument("--seed", type=int, default=20210521, help="random seed (fixed for reproducibility)")
    parser.add_argument("--tolerance", type=float, default=0.05, help="prediction tolerance (0.05: within 5%%)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an option of pmkit's refining modeler (repeatable)")
    parser.add_argument("--no-extrap", action="store_true", help="pmkit only")
    parser.add_argument("--jobs", type=int, default=2, help="Extra-P processes in parallel (2)")
    parser.add_argument("--chunk", type=int, default=200, help="series per Extra-P call")
    parser.add_argument("--json", help="write every rate to this file")
    parser.add_argument("--extrap-cache", help="reuse (and keep) Extra-P's results in this JSON file")
    args = parser.parse_args(argv)
    cache = ExtrapCache(args.extrap_cache)
    console = Console(width=None if sys.stdout.isatty() else 120)
    options = parse_assignments(args.option)
    rng = np.random.default_rng(args.seed)
    pm, today = "pmkit refining", "pmkit segments=off"
    tools = [pm, today] + ([] if args.no_extrap else [f"Extra-P {m}" for m in EXTRAP])
    python = None if args.no_extrap else extrap_python()
    header = (f"segmented laws: {len(SEGMENTED_CASES)} segmented + {len(CASES)} one-law cases × {args.per_case} "
              f"functions × {len(X_SETS)} x-sets × noise ±{'/±'.join(f'{v:.0%}' for v in NOISES)}, seed {args.seed}, "
              f"prediction at 4·x_max within {args.tolerance:.0%}")
    if python is not None:
        header += f"; Extra-P {extrap_version(python)}"
    console.print(header)
    tallies: dict[tuple[str, str, float], Tally] = {}
    seconds = dict.fromkeys(tools, 0.0)
    kinds: dict[str, bool] = {}
    for xs, x in X_SETS.items():
        target = 4.0 * float(x.max())
        for noise in NOISES:
            truths = [segmented_truth(s, p, x, args.per_case, rng) for s, p in SEGMENTED_CASES]
            truths += [control_truth(case, args.per_case, rng) for case, _, _ in CASES]
            exact = np.concatenate([t.evaluate(x) for t in truths])
            values = exact * (1.0 + rng.uniform(-noise, noise, exact.shape))
            truth_at = np.concatenate([t.evaluate(np.array([target]))[:, 0] for t in truths])
            change = np.concatenate([t.change for t in truths])
            results: dict[str, Result] = {}
            results[pm], took = run_pmkit(x, values, target, options)
            seconds[pm] += took
            results[today], took = run_pmkit(x, values, target, {**options, "segments": "off"})
            seconds[today] += took
            if python is not None:
                key = cache.key(x, values, target)
                hit = cache.get(key)
                got, took_ex = hit if hit is not None else run_extrap(x, values, target, args.chunk, args.jobs, python)
                if hit is None:
                    cache.put(key, got, took_ex)
                for name in EXTRAP:
                    results[f"Extra-P {name}"] = got[name]
                    seconds[f"Extra-P {name}"] += took_ex[name]
            console.log(f"x = {xs}, ±{noise:.0%}: {values.shape[0]} series")
            for k, truth in enumerate(truths):
                rows = slice(k * args.per_case, (k + 1) * args.per_case)
                kinds[truth.case] = bool(np.isfinite(truth.change).any())
                for tool, result in results.items():
                    part = Result(result.predicted[rows], result.change[rows], result.low[rows], result.high[rows],
                                  result.texts[rows])
                    reference = results[today]
                    ref = Result(reference.predicted[rows], reference.change[rows], reference.low[rows],
                                 reference.high[rows], reference.texts[rows])
                    t = tally(part, truth_at[rows], change[rows], x, args.tolerance, ref)
                    for key in ((tool, truth.case, noise), (tool, truth.case, 0.0)):
                        tallies.setdefault(key, Tally()).add(t)
    report(console, tools, kinds, tallies, seconds)
    if args.json:
        rates = {f"{tool} | {case} | {'all' if noise == 0 else noise}": {n: t.rate(n) for n in
                 ("predicted", "split", "step", "covered", "unchanged")} for (tool, case, noise), t in tallies.items()}
        with open(args.json, "w") as out:
            json.dump({"per_case": args.per_case, "seed": args.seed, "options": options, "rates": rates,
                       "seconds": seconds}, out, indent=1)
    return 0


def report(console: Console, tools: list[str], kinds: dict[str, bool], tallies: dict, seconds: dict) -> None:
    pm, today = tools[0], tools[1]
    extrap = [t for t in tools if t.startswith("Extra-P")]
    segmented = [c for c, s in kinds.items() if s]
    controls = [c for c, s in kinds.items() if not s]

    for noise in (0.0, *NOISES):
        label = "all noise levels" if noise == 0 else f"±{noise:.0%} noise"
        columns = [(t, "predicted") for t in tools] + [(pm, "step"), (pm, "split")]
        columns += [(t, name) for t in extrap[:1] for name in ("step", "split")]
        _rates_table(console, f"segmented cases, {label}: % predictions within tolerance / % change points within "
                     "one step", tallies, columns, segmented, "all segmented", noise)
    columns = [(t, "predicted") for t in tools] + [(pm, "split"), (pm, "unchanged")]
    columns += [(t, "split") for t in extrap[:1]]
    _rates_table(console, "one-law controls, all noise levels: % predictions within tolerance; false segments %; "
                 f"% models identical to {today}", tallies, columns, controls, "all controls", 0.0)
    _targets(console, tools, segmented, controls, tallies)
    for tool in tools:
        total = sum(t.series for (name, _, noise), t in tallies.items() if name == tool and noise == 0.0)
        console.print(f"{tool}: {seconds[tool]:.2f} s modeling for {total} series "
                      f"({total / max(seconds[tool], 1e-12):,.0f} models/s)")


def _rates_table(console: Console, title: str, tallies: dict, columns: Sequence[tuple[str, str]],
                 cases: Sequence[str], total: str, noise: float) -> None:
    """Print one row a case, then a bold row ``total`` over all ``cases``, and one column a
    ``(tool, tally)`` rate in percent (``predicted`` headed ``pred``)."""
    table = Table(title=title)
    table.add_column("case")
    for tool, name in columns:
        table.add_column(f"{tool}\n{'pred' if name == 'predicted' else name} %", justify="right")
    for case in [*cases, total]:
        members = cases if case == total else [case]
        merged = {tool: _merge(tallies, tool, members, noise) for tool, _ in columns}
        table.add_row(case, *(f"{merged[t].rate(n):.1f}" for t, n in columns), style="bold" if case == total else None)
    console.print(table)


def _merge(tallies: dict, tool: str, cases: Sequence[str], noise: float) -> Tally:
    out = Tally()
    for case in cases:
        t = tallies.get((tool, case, noise))
        if t is not None:
            out.add(t)
    return out


def _targets(console: Console, tools: list[str], segmented: list[str], controls: list[str], tallies: dict) -> None:
    pm = tools[0]
    lines = []
    seg_extrap = "Extra-P Segmented" if "Extra-P Segmented" in tools else None
    if seg_extrap:
        worse = [c for c in segmented for noise in (0.0, *NOISES)
                 if tallies[(pm, c, noise)].rate("predicted") < tallies[(seg_extrap, c, noise)].rate("predicted")]
        lines.append(f"predictions ≥ Extra-P Segmented on every segmented case (and noise level): "
                     f"{'met' if not worse else 'NOT met: ' + ', '.join(sorted(set(worse)))}")
    step = _merge(tallies, pm, segmented, 0.0)
    lines.append(f"change point within one measurement step: {step.rate('step'):.1f}% of segmented series "
                 f"(target ≥ 90%: {'met' if step.rate('step') >= 90 else 'NOT met'}); true change point within the "
                 f"reported interval: {step.rate('covered'):.1f}%")
    unchanged = {c: tallies[(pm, c, 0.0)].rate("unchanged") for c in controls}
    worst = min(unchanged, key=unchanged.get)
    lines.append(f"one-law controls unchanged: ≥ {unchanged[worst]:.1f}% in every case (worst: {worst}; target ≥ 95%: "
                 f"{'met' if unchanged[worst] >= 95 else 'NOT met'}); false segments "
                 f"{_merge(tallies, pm, controls, 0.0).rate('split'):.2f}% of all control series")
    for line in lines:
        console.print(line)


if __name__ == "__main__":
    run_main(main)
