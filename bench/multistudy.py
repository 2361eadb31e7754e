"""Random multi-parameter laws measured on a grid, modeled by pmkit and Extra-P, and scored the same way.

What the multi-parameter protocols share (``multiparam_accuracy.py``, ``weak_scaling.py``): a law is
``c0 + Σ_k c_k·Π_l x_l^α·log2^β(x_l)``; each case draws ``n`` laws of one form with random
coefficients, measures them at the grid's points with uniform relative noise (one or more
repetitions), and every tool models the same values.  Scores per model, at a target point beyond the
grid:

* ``params``: the model depends on exactly the parameters the law depends on;
* ``lead``: the model's lead-order term at the target has the law's lead-order exponents for every
  parameter (paper 000 §4.1's score, per parameter);
* ``within 5%``: the prediction at the target is within 5% of the true value;
* ``off 2×``: the prediction is more than twice or less than half the true value (or missing);
* ``covered`` / ``width``: pmkit's 90% prediction interval contains the true value; its width as
  high/low (pmkit only).

The closing lines (:func:`targets`) say whether a shortfall against Extra-P or a coverage outside 85–95%
is more than sampling error: a shortfall with the series only one tool got right and McNemar's exact
p-value, a case's coverage with its 95% Clopper–Pearson interval.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction as F
from pathlib import Path

import numpy as np
from accuracy import add_run_arguments
from extrap_env import ExtrapUnavailable, ModelerSpec, extrap_python, extrap_version, model_with_extrap
from rich.console import Console
from rich.table import Table

import pmkit
from pmkit.errors import PmkitError
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.options import parse_assignments
from pmkit.pmnf import Factor, Function, Term

Shape = tuple[F, F]
"""(α, β) of ``x^α·log2^β(x)``."""
TermSpec = dict[int, Shape]
"""One term of a law: parameter position → its factor's exponents."""
CACHE = Path(__file__).resolve().parent / ".extrap-cache"
"""Extra-P's answers by chunk (see :func:`model_extrap`); git-ignored."""
LEVEL = 0.9
"""The prediction intervals' level that is scored."""
EXTRAP: tuple[ModelerSpec, ...] = ("Basic",)
"""Extra-P's default multi-parameter modeler (its single-parameter modeler is Basic)."""


@dataclass
class Laws:
    """``n`` laws of one form: the terms (shared) and per law the constant and the coefficients."""

    label: str
    parameters: tuple[str, ...]
    terms: list[list[TermSpec]]
    c0: np.ndarray
    coefficients: np.ndarray

    def __len__(self) -> int:
        return len(self.c0)

    def evaluate(self, points: np.ndarray) -> np.ndarray:
        """Every law at ``points`` (points × parameters): laws × points."""
        out = np.repeat(self.c0[:, None], len(points), axis=1)
        for i, terms in enumerate(self.terms):
            for k, term in enumerate(terms):
                out[i] += self.coefficients[i, k] * term_values(points, term)
        return out

    def function(self, i: int) -> Function:
        terms = tuple(Term(float(self.coefficients[i, k]),
                           tuple(Factor(self.parameters[p], a, b) for p, (a, b) in sorted(t.items())))
                      for k, t in enumerate(self.terms[i]))
        return Function(self.parameters, float(self.c0[i]), terms)


def term_values(points: np.ndarray, term: TermSpec) -> np.ndarray:
    out = np.ones(len(points))
    for p, (alpha, beta) in term.items():
        x = points[:, p]
        out = out * x ** float(alpha) * (np.log2(x) ** float(beta) if beta else 1.0)
    return out


def scaled_laws(label: str, parameters: Sequence[str], terms: list[list[TermSpec]], points: np.ndarray,
                rng: np.random.Generator, share: tuple[float, float] = (-1.0, 0.0),
                constant: tuple[float, float] = (-3.0, 0.0)) -> Laws:
    """Laws with the given terms, scaled so that every term is visible on the grid: the level is 10^U[-2, 3)
    (the paper's coefficient range), each term's largest value on the grid is the level times 10^U(share),
    the constant the level times 10^U(constant)."""
    n = len(terms)
    width = max(len(t) for t in terms)
    level = 10.0 ** rng.uniform(-2.0, 3.0, n)
    coefficients = np.zeros((n, width))
    for i, law in enumerate(terms):
        for k, term in enumerate(law):
            top = float(np.abs(term_values(points, term)).max())
            coefficients[i, k] = level[i] * 10.0 ** rng.uniform(*share) / top
    c0 = level * 10.0 ** rng.uniform(*constant, n)
    return Laws(label, tuple(parameters), terms, c0, coefficients)


def noisy(exact: np.ndarray, noise: float, repetitions: int, rng: np.random.Generator) -> np.ndarray:
    """Measurements (series × points × repetitions) with uniform relative noise ±``noise``."""
    return exact[..., None] * (1 + rng.uniform(-noise, noise, (*exact.shape, repetitions)))


def model_pmkit(parameters: Sequence[str], points: np.ndarray, values: np.ndarray, options: dict,
                target: Sequence[float]) -> tuple[list[Function | None], np.ndarray, float]:
    """pmkit's models of every series: functions, the 90% interval at ``target`` (series × 3: value, low,
    high; NaN where pmkit gives none) and the seconds spent."""
    tree = CallTree()
    for i in range(values.shape[0]):
        tree.add(f"s{i}")
    experiment = Experiment(tuple(parameters), points, tree, (Metric("value"),), {"value": values})
    start = time.perf_counter()
    models = pmkit.model(experiment, **options)
    functions = [m.function for m in models]
    took = time.perf_counter() - start
    intervals = np.full((len(functions), 3), np.nan)
    predict_many = getattr(models, "predict", None)
    if predict_many is not None:
        value, low, high = predict_many(dict(zip(parameters, target, strict=True)), level=LEVEL)
        intervals = np.column_stack([value, low, high])
    return functions, intervals, took


def model_extrap(parameters: Sequence[str], points: np.ndarray, values: np.ndarray, modelers: Sequence[ModelerSpec],
                 chunk: int, jobs: int, console: Console) -> tuple[dict[str, list[Function | None]], dict[str, float]]:
    """Extra-P's models of every series (in chunks, ``jobs`` runner processes), keyed by modeler label.

    Each chunk's answer is kept in ``bench/.extrap-cache`` under a hash of exactly what Extra-P was
    given (parameters, points, values, modelers, Extra-P's version), so re-running a protocol with the
    same seed re-scores pmkit against Extra-P's models of the same values without waiting for Extra-P
    again; ``PMKIT_EXTRAP_FRESH=1`` ignores the cache.
    """
    python = extrap_python()
    labels = [m if isinstance(m, str) else m.get("label", m["name"]) for m in modelers]
    starts = list(range(0, values.shape[0], chunk))
    version = extrap_version(python)

    def run(start: int):
        part = values[start:start + chunk]
        key = hashlib.sha256(json.dumps([list(parameters), np.asarray(points).tolist(), modelers, version],
                                        default=str).encode() + np.ascontiguousarray(part).tobytes()).hexdigest()
        cached = CACHE / f"{key}.pickle"
        if cached.exists() and not os.environ.get("PMKIT_EXTRAP_FRESH"):
            with cached.open("rb") as stream:
                return pickle.load(stream)
        result = model_with_extrap(list(parameters), points, part, modelers=modelers, python=python)
        CACHE.mkdir(exist_ok=True)
        with cached.open("wb") as stream:
            pickle.dump(result, stream)
        return result

    functions: dict[str, list[Function | None]] = {m: [] for m in labels}
    seconds = dict.fromkeys(labels, 0.0)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for k, result in enumerate(pool.map(run, starts)):
            for name, models in result.items():
                functions[name].extend(models.functions)
                seconds[name] += models.seconds
            if len(starts) > 1:
                console.log(f"  Extra-P chunk {k + 1}/{len(starts)} done", style="dim")
    return functions, seconds


def depends_on(function: Function) -> frozenset[str]:
    """The parameters a model's terms use (terms with a zero coefficient do not count)."""
    return frozenset(f.parameter for t in function.terms if t.coefficient != 0 for f in t.factors
                     if not f.is_trivial)


def lead_exponents(function: Function, target: Sequence[float]) -> tuple[Shape, ...] | None:
    """Per parameter, the exponents (α, β) of the lead-order term at ``target``; all zero for a constant."""
    term = function.lead_order_term(list(target))
    if term is None or term.coefficient == 0:
        return tuple((F(0), F(0)) for _ in function.parameters)
    return tuple(term.exponent_of(p) for p in function.parameters)


@dataclass
class Scores:
    """Per series of one case and tool (see the module docstring)."""

    params: np.ndarray
    lead: np.ndarray
    within: np.ndarray
    off2: np.ndarray
    covered: np.ndarray
    width: np.ndarray
    warned: np.ndarray
    """The interval reaches more than 2× away from the prediction (high > 2·value or low < value/2): it
    tells the user the prediction may be off by 2×."""

    def rates(self) -> dict[str, float]:
        out = {name: 100.0 * float(getattr(self, name).mean()) for name in ("params", "lead", "within", "off2")}
        has = np.isfinite(self.width)
        out["covered"] = 100.0 * float(self.covered[has].mean()) if has.any() else math.nan
        out["width"] = float(np.median(self.width[has])) if has.any() else math.nan
        out["intervals"] = float(has.sum())
        if has.any():
            off, fine = has & self.off2, has & ~self.off2
            out["warned_off2"] = 100.0 * float(self.warned[off].mean()) if off.any() else math.nan
            out["warned_fine"] = 100.0 * float(self.warned[fine].mean()) if fine.any() else math.nan
            out["n_off2"] = float(off.sum())
        return out

    def discordant(self, rival: Scores) -> dict[str, tuple[int, int]]:
        """Per score, the series only this tool got right and those only ``rival`` got right: the pairs
        :func:`mcnemar` tests (the series both got right or both missed say nothing about which is better)."""
        return {name: (int((getattr(self, name) & ~getattr(rival, name)).sum()),
                       int((~getattr(self, name) & getattr(rival, name)).sum()))
                for name in ("params", "lead", "within")}


def mcnemar(only_first: int, only_second: int) -> float:
    """Exact two-sided McNemar p-value: how likely a split of the discordant series at least this uneven
    is when both tools are equally good (each discordant series a fair coin)."""
    n = only_first + only_second
    if n == 0:
        return 1.0
    k = min(only_first, only_second)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)


def coverage_band(covered: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson interval (%) of a coverage rate seen as ``covered`` of ``n``: whether a case outside
    85–95% is outside by more than its sampling error (about ±3.4 points at 300 series)."""
    from scipy.stats import beta

    alpha = 1.0 - confidence
    low = beta.ppf(alpha / 2, covered, n - covered + 1) if covered > 0 else 0.0
    high = beta.ppf(1 - alpha / 2, covered + 1, n - covered) if covered < n else 1.0
    return 100.0 * float(low), 100.0 * float(high)


def score(functions: Sequence[Function | None], laws: Laws, target: Sequence[float],
          intervals: np.ndarray | None = None, tolerance: float = 0.05) -> Scores:
    """Score models of ``laws`` at ``target`` (see the module docstring)."""
    n = len(functions)
    truth = laws.evaluate(np.array([target], dtype=float))[:, 0]
    params, lead, within, off2 = (np.zeros(n, dtype=bool) for _ in range(4))
    off2[:] = True
    for i, function in enumerate(functions):
        if function is None:
            continue
        true_function = laws.function(i)
        params[i] = depends_on(function) == depends_on(true_function)
        lead[i] = lead_exponents(function, target) == lead_exponents(true_function, target)
        value = float(function.evaluate(list(target)))
        within[i] = abs(value - truth[i]) <= tolerance * abs(truth[i])
        ratio = value / truth[i] if truth[i] != 0 else math.inf
        off2[i] = not (0.5 <= ratio <= 2.0)
    covered = np.zeros(n, dtype=bool)
    warned = np.zeros(n, dtype=bool)
    width = np.full(n, np.nan)
    if intervals is not None and np.isfinite(intervals).any():
        value, low, high = intervals[:, 0], intervals[:, 1], intervals[:, 2]
        covered = (low <= truth) & (truth <= high)
        with np.errstate(all="ignore"):
            width = np.where((low > 0) & np.isfinite(high), high / low, np.nan)
            warned = (high > 2 * np.abs(value)) | (low < np.abs(value) / 2)
    return Scores(params, lead, within, off2, covered, width, warned)


def cell(r: dict, intervals: bool) -> str:
    text = f"{r['params']:.0f} / {r['lead']:.0f} / {r['within']:.0f} / {r['off2']:.0f}"
    if intervals and np.isfinite(r["covered"]):
        text += f" / {r['covered']:.0f} ×{r['width']:.2g}"
    return text


def _mean(values: list[float]) -> float:
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def report(console: Console, tools: list[str], rates: dict, per_case: int) -> None:
    """One table: cases × tools, and the totals per grid and overall."""
    pm = tools[0]
    table = Table(title=f"{per_case} laws per case: right parameter set % / lead-order exponents % / prediction "
                        "within 5% % / off by more than 2× % (pmkit: / 90% interval covers % ×median high/low)")
    table.add_column("grid")
    table.add_column("case")
    for tool in tools:
        table.add_column(tool.replace("Extra-P ", "Extra-P\n"), justify="right")
    totals: dict = {}
    for grid_label, cases in rates.items():
        for label, per in cases.items():
            table.add_row(grid_label, label, *(cell(per[t], t == pm) for t in tools))
            for key in (grid_label, "all"):
                for t in tools:
                    totals.setdefault(key, {}).setdefault(t, []).append(per[t])
        table.add_section()
    totals["all"] = totals.pop("all")
    for key, per in totals.items():
        means = {t: {k: _mean([r.get(k, math.nan) for r in rs]) for k in rs[0]} for t, rs in per.items()}
        table.add_row(key if key == "all" else "", "all" if key == "all" else f"mean {key}",
                      *(cell(means[t], t == pm) for t in tools), style="bold")
    console.print(table)


@dataclass
class Run:
    """A protocol's command line resolved: its arguments, console, pmkit options and tools (pmkit first)."""

    args: argparse.Namespace
    console: Console
    options: dict
    tools: list[str]
    seconds: dict
    discord: dict

    @classmethod
    def start(cls, doc: str, argv: Sequence[str] | None, per_case: int, seed: int, chunk: int,
              arguments: Callable[[argparse.ArgumentParser], None] | None = None) -> Run:
        """The run a protocol's command line asks for; ``arguments`` adds the protocol's own to the parser."""
        parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                         formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--per-case", type=int, default=per_case, help=f"laws per case (default {per_case})")
        parser.add_argument("--seed", type=int, default=seed, help="random seed")
        add_run_arguments(parser, chunk=chunk)
        if arguments is not None:
            arguments(parser)
        parser.add_argument("--json", help="write every rate to this file")
        args = parser.parse_args(argv)
        console = Console(width=None if sys.stdout.isatty() else 150)
        pm = " ".join(["pmkit", *args.option])
        tools = [pm] + ([] if args.no_extrap else [f"Extra-P {m}" for m in EXTRAP])
        return cls(args, console, parse_assignments(args.option), tools, dict.fromkeys(tools, 0.0), {})

    def header(self, text: str) -> None:
        self.console.print(text + ("" if self.args.no_extrap else f"; Extra-P {extrap_version()}"))

    def model(self, parameters: Sequence[str], points: np.ndarray, values: np.ndarray, target: Sequence[float]
              ) -> dict[str, tuple[list[Function | None], np.ndarray | None]]:
        """Every tool's models of ``values``; pmkit's with its intervals at ``target``."""
        functions, intervals, took = model_pmkit(parameters, points, values, self.options, target)
        results: dict[str, tuple[list[Function | None], np.ndarray | None]] = {self.tools[0]: (functions, intervals)}
        self.seconds[self.tools[0]] += took
        if not self.args.no_extrap:
            ex, ex_seconds = model_extrap(parameters, points, values, EXTRAP, self.args.chunk, self.args.jobs,
                                          self.console)
            for name in EXTRAP:
                results[f"Extra-P {name}"] = (ex[name], None)
                self.seconds[f"Extra-P {name}"] += ex_seconds[name]
        return results

    def score(self, results: dict, cases: Sequence[Laws], target: Sequence[float], rates: dict, label: str) -> None:
        """Score every tool on every case (``cases`` in the order of the series) into ``rates[label]``."""
        n = self.args.per_case
        pm = self.tools[0]
        for k, laws in enumerate(cases):
            per = {}
            for tool, (functions, intervals) in results.items():
                part = None if intervals is None else intervals[k * n:(k + 1) * n]
                per[tool] = score(functions[k * n:(k + 1) * n], laws, target, part)
                rates.setdefault(label, {}).setdefault(laws.label, {})[tool] = per[tool].rates()
            for tool in self.tools[1:]:
                self.discord.setdefault(label, {}).setdefault(laws.label, {})[tool] = per[pm].discordant(per[tool])

    def finish(self, rates: dict) -> None:
        for tool in self.tools:
            self.console.print(f"{tool}: {self.seconds[tool]:.2f} s modeling")
        if self.args.json:
            with open(self.args.json, "w") as out:
                json.dump({"per_case": self.args.per_case, "seed": self.args.seed, "options": self.options,
                           "rates": rates, "seconds": self.seconds, "discordant": self.discord}, out, indent=1)


def run_main(main) -> None:
    """Run a protocol's ``main`` as a script: its exit code, the seconds it took, one line for an error."""
    try:
        start = time.perf_counter()
        code = main()
        print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
        sys.exit(code)
    except (PmkitError, ExtrapUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def targets(console: Console, tools: list[str], rates: dict, off2_at: str | None = None,
            discord: dict | None = None) -> None:
    """Issue 18's targets: (at ``off2_at`` noise) predictions off by more than 2× on ≤ 5% of series, for
    every tool; right parameter sets, lead exponents and predictions within 5% at least Extra-P's in
    every case (each shortfall listed with the series only one tool got right and their exact McNemar
    p-value, from ``discord``: :meth:`Run.score`'s pairs); 90% intervals covering 85–95% per case (each
    case outside listed with its 95% Clopper–Pearson interval)."""
    pm = tools[0]
    if off2_at is not None:
        for tool in tools:
            at = [per[tool]["off2"] for label, cases in rates.items() if label.startswith(off2_at)
                  for per in cases.values()]
            console.print(f"{off2_at}: {tool} off by more than 2× on {np.mean(at):.1f}% of series (target ≤ 5%; "
                          f"worst case {max(at):.0f}%)")
    _warnings(console, pm, rates, off2_at or "")
    for rival in tools[1:]:
        behind = [f"{label} {case} {key} {per[pm][key]:.1f} < {per[rival][key]:.1f}"
                  + _discordant_text(discord, label, case, rival, key)
                  for label, cases in rates.items() for case, per in cases.items()
                  for key in ("params", "lead", "within") if per[pm][key] < per[rival][key]]
        console.print(f"at least {rival}'s in every case: " + ("yes" if not behind else f"NO, {len(behind)} of "
                      f"{3 * sum(len(c) for c in rates.values())}:"))
        for line in behind:
            console.print(f"  {line}")
    covered = [per[pm]["covered"] for cases in rates.values() for per in cases.values()]
    if np.isfinite(covered).any():
        outside = [(label, case, per[pm]) for label, cases in rates.items() for case, per in cases.items()
                   if not 85 <= per[pm]["covered"] <= 95]
        console.print(f"90% intervals: coverage {min(covered):.0f}–{max(covered):.0f}% per case, "
                      f"{np.nanmean(covered):.1f}% overall; {len(outside)} of {len(covered)} cases outside 85–95%"
                      + (":" if outside else ""))
        for label, case, r in outside:
            n = int(r.get("intervals", 0))
            band = ""
            if n:
                low, high = coverage_band(round(r["covered"] * n / 100), n)
                verdict = "overlaps" if low <= 95 and high >= 85 else "misses"
                band = f" (95% CI {low:.1f}–{high:.1f}%: {verdict} 85–95%)"
            console.print(f"  {label} {case} {r['covered']:.1f}%{band}")


def _warnings(console: Console, pm: str, rates: dict, off2_at: str) -> None:
    """Whether pmkit tells the user which predictions are off by 2× (issue 18: "neither tool tells the
    user which ones"): at ``off2_at`` noise, how many of them have an interval reaching more than 2× away
    from the prediction, against how many of the predictions within 2× do (each case weighed by its
    series off by 2×, resp. within); every case where ``off2_at`` is empty."""
    per = [c[pm] for label, cases in rates.items() if label.startswith(off2_at) for c in cases.values()
           if "warned_off2" in c[pm]]
    off = sum(r["n_off2"] for r in per)
    fine = sum(r["intervals"] - r["n_off2"] for r in per)
    if not per or off == 0:
        return
    caught = sum(r["warned_off2"] * r["n_off2"] for r in per if r["n_off2"]) / off
    alarms = sum(r["warned_fine"] * (r["intervals"] - r["n_off2"]) for r in per
                 if r["intervals"] > r["n_off2"]) / fine
    at = off2_at or "all cases"
    console.print(f"{at}: pmkit's 90% interval reaches beyond 2× of its prediction on {caught:.0f}% of the "
                  f"{off:.0f} predictions off by 2× and on {alarms:.0f}% of the {fine:.0f} others")
    missed = off * (1 - caught / 100)
    quiet = missed + fine * (1 - alarms / 100)
    console.print(f"{at}: of the {quiet:.0f} predictions whose interval stays within 2×, {100 * missed / quiet:.1f}% "
                  "are off by 2× (target for all ≤ 5%)")


def _discordant_text(discord: dict | None, label: str, case: str, rival: str, key: str) -> str:
    """`` (pmkit alone b, rival alone c, McNemar p)`` for one shortfall, or nothing without the pairs."""
    if not discord:
        return ""
    mine, theirs = discord[label][case][rival][key]
    return f" (only pmkit right {mine}, only {rival} {theirs}; McNemar p = {mcnemar(mine, theirs):.2g})"
