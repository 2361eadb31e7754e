"""Strong scaling on synthetic data: falling laws, falling + growing laws and constants, pmkit against
Extra-P with and without its ``allow_negative_exponents`` option.

Cases (``--per-case`` random functions each, every one measured at both x-sets p = 1, 2, 4, …, 64 and
p = 64, 128, …, 4096, seven points, one value per point with ±2% and with ±5% uniform noise):

* ``constant``: ``c0``;
* one-term falling laws ``c0 + c1·p^(-γ)`` for γ = 1, 1/2, 1/3, 2;
* two-term falling + growing laws ``c0 + a·p^(-γ) + b·g(p)`` for (γ, g) = (1, log2 p), (1, p),
  (1, p^(1/2)), (1/2, p) — the shape of a scaling limit;
* and in two parameters (p = 1..64 × problem size n = 10..160): ``c0 + a·n/p``, ``a·n/p + b·log2 p``,
  ``c0 + a/p + b·n``, ``c0 + a·n/p + b·n·p`` and a growing ``c0 + a·n·p`` (:data:`MULTI_FORMS`).

Coefficients: the value at the smallest p is ``10^u``, u ~ U[-2, 3) (the paper's coefficient
range); the constant's share of it is U[0, 0.5) for one-term laws (so the falling term is visible
over the range) and U[0, 0.3) for two-term laws, whose turning point p* (the minimum) is
log-uniform between twice the smallest and half the largest p, which fixes b.

Scores per model: the lead-order exponents at 4× the largest p are exact (paper 000 §4.1's
definition: the term contributing most there; a constant function needs a constant model); the
prediction at 4× the largest p is within the noise; for two-term laws, the model has a turning point
within 20% of the true one; and the model stays non-negative from the smallest to 4× the largest p.

    python bench/strong_scaling.py                       # 200 per case, Extra-P included
    python bench/strong_scaling.py --per-case 1000       # the reported size
    python bench/strong_scaling.py --no-extrap --option falling=never   # pmkit's search without falling laws
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction as F

import numpy as np
from accuracy import add_run_arguments, lead_shape, model_with_extrap_chunked, model_with_pmkit
from extrap_env import ExtrapUnavailable, extrap_version
from rich.console import Console
from rich.table import Table

from pmkit.behaviour import describe
from pmkit.errors import PmkitError
from pmkit.options import parse_assignments
from pmkit.pmnf import Factor, Function, Term

X_SETS = {"1..64": 2.0 ** np.arange(0, 7), "64..4096": 2.0 ** np.arange(6, 13)}
NOISES = (0.02, 0.05)
TURNING_TOLERANCE = 0.2
"""A model's turning point counts when it is within this share of the true one."""

Shape = tuple[F, F]


@dataclass(frozen=True)
class Case:
    """A family of laws: ``c0`` plus an optional falling term ``p^(-γ)`` and an optional growing term."""

    label: str
    gamma: F | None = None
    growing: Shape | None = None

    @property
    def kind(self) -> str:
        if self.gamma is None:
            return "constant"
        return "falling" if self.growing is None else "falling + growing"


CASES = (
    Case("constant"),
    Case("1/p", F(1)),
    Case("1/p^(1/2)", F(1, 2)),
    Case("1/p^(1/3)", F(1, 3)),
    Case("1/p^2", F(2)),
    Case("1/p + log2 p", F(1), (F(0), F(1))),
    Case("1/p + p", F(1), (F(1), F(0))),
    Case("1/p + p^(1/2)", F(1), (F(1, 2), F(0))),
    Case("1/p^(1/2) + p", F(1, 2), (F(1), F(0))),
)
TOOLS_EXTRAP = ("Basic", {"name": "Basic", "label": "Basic neg", "options": {"allow_negative_exponents": True}},
                "Refining")
"""Extra-P's default modeler without and with negative exponents, and its refining modeler."""


@dataclass
class Truth:
    """``n`` laws of one case at one x-set: coefficients and the exact values at the points."""

    case: Case
    c0: np.ndarray
    a: np.ndarray
    b: np.ndarray
    turning: np.ndarray

    def function(self, i: int) -> Function:
        terms = []
        if self.case.gamma is not None:
            terms.append(Term(float(self.a[i]), (Factor("x", -self.case.gamma),)))
        if self.case.growing is not None:
            terms.append(Term(float(self.b[i]), (Factor("x", *self.case.growing),)))
        return Function(("x",), float(self.c0[i]), tuple(terms))

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        out = np.repeat(self.c0[:, None], len(x), axis=1)
        if self.case.gamma is not None:
            out = out + self.a[:, None] * x[None, :] ** -float(self.case.gamma)
        if self.case.growing is not None:
            alpha, beta = self.case.growing
            out = out + self.b[:, None] * (x ** float(alpha) * np.log2(x) ** float(beta))[None, :]
        return out


def generate(case: Case, n: int, x: np.ndarray, rng: np.random.Generator) -> Truth:
    """``n`` random laws of ``case`` scaled for the points ``x`` (see the module docstring)."""
    lo, hi = float(x.min()), float(x.max())
    level = 10.0 ** rng.uniform(-2.0, 3.0, n)
    zeros = np.zeros(n)
    if case.gamma is None:
        return Truth(case, level, zeros, zeros, np.full(n, np.nan))
    gamma = float(case.gamma)
    serial = rng.uniform(0.0, 0.5 if case.growing is None else 0.3, n)
    a = (1 - serial) * level * lo ** gamma
    if case.growing is None:
        return Truth(case, serial * level, a, zeros, np.full(n, np.nan))
    turning = np.exp(rng.uniform(np.log(2 * lo), np.log(hi / 2), n))
    alpha, beta = (float(v) for v in case.growing)
    # a·γ·p*^(-γ-1) = b·g'(p*) at the turning point p*
    if beta == 0:
        slope = alpha * turning ** (alpha - 1)
    else:  # g = log2 p
        slope = 1.0 / (turning * np.log(2.0))
    b = a * gamma * turning ** (-gamma - 1) / slope
    return Truth(case, serial * level, a, b, turning)


@dataclass
class Scores:
    exact: np.ndarray
    predicted: np.ndarray
    turning: np.ndarray
    physical: np.ndarray


def score(functions: Sequence[Function | None], truth: Truth, x: np.ndarray, noise: float) -> Scores:
    """Score models against ``truth`` (see the module docstring)."""
    x_at = 4 * float(x.max())
    n = len(functions)
    exact = np.zeros(n, dtype=bool)
    predicted = np.zeros(n, dtype=bool)
    turning = np.zeros(n, dtype=bool)
    physical = np.zeros(n, dtype=bool)
    true_at = truth.evaluate(np.array([x_at]))[:, 0]
    for i, function in enumerate(functions):
        if function is None:
            continue
        true_function = truth.function(i)
        exact[i] = lead_shape(function, x_at) == lead_shape(true_function, x_at)
        predicted[i] = abs(float(function.evaluate(x_at)) - true_at[i]) <= noise * abs(true_at[i])
        behaviour = describe(function, "x", start=float(x.min()), horizon=x_at * 4)
        physical[i] = behaviour.negative_from is None or behaviour.negative_from > x_at
        if truth.case.kind == "falling + growing" and behaviour.turning_point is not None:
            turning[i] = abs(behaviour.turning_point / truth.turning[i] - 1) <= TURNING_TOLERANCE
    return Scores(exact, predicted, turning, physical)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-case", type=int, default=200, help="functions per case and x-set (default 200)")
    parser.add_argument("--seed", type=int, default=20261122, help="random seed")
    add_run_arguments(parser, chunk=1500)
    parser.add_argument("--json", help="write every rate to this file")
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 120)
    options = parse_assignments(args.option)
    pm = " ".join(["pmkit", *args.option])
    tools = [pm] + ([] if args.no_extrap else [t if isinstance(t, str) else t["label"] for t in TOOLS_EXTRAP])
    tools = [t if t == pm else f"Extra-P {t}" for t in tools]
    header = (f"strong scaling: {len(CASES)} cases × {args.per_case} functions × {len(X_SETS)} x-sets × "
              f"noise {', '.join(f'±{v:.0%}' for v in NOISES)}, seed {args.seed}")
    if not args.no_extrap:
        header += f"; Extra-P {extrap_version()}"
    console.print(header)

    rng = np.random.default_rng(args.seed)
    rates: dict = {}
    seconds = dict.fromkeys(tools, 0.0)
    for noise in NOISES:
        for xs_label, x in X_SETS.items():
            truths = [generate(case, args.per_case, x, rng) for case in CASES]
            exact_values = np.concatenate([t.evaluate(x) for t in truths])
            values = exact_values[..., None] * (1 + rng.uniform(-noise, noise, (*exact_values.shape, 1)))
            console.log(f"±{noise:.0%}, x = {xs_label}: {values.shape[0]} series")
            results: dict[str, list[Function | None]] = {}
            functions, took = model_with_pmkit(x, values, "refining", options)
            results[pm], seconds[pm] = functions, seconds[pm] + took
            if not args.no_extrap:
                ex, ex_seconds = model_with_extrap_chunked(x, values, args.chunk, args.jobs, console, TOOLS_EXTRAP)
                for name, fns in ex.items():
                    results[f"Extra-P {name}"] = fns
                    seconds[f"Extra-P {name}"] += ex_seconds[name]
            n = args.per_case
            for tool, fns in results.items():
                for k, truth in enumerate(truths):
                    s = score(fns[k * n:(k + 1) * n], truth, x, noise)
                    per = rates.setdefault(f"±{noise:.0%}", {}).setdefault(truth.case.label, {}).setdefault(tool, {})
                    per[xs_label] = {"exact": 100 * s.exact.mean(), "predicted": 100 * s.predicted.mean(),
                                     "turning": 100 * s.turning.mean(), "physical": 100 * s.physical.mean()}
    report(console, tools, rates, seconds, args.per_case)
    multi = multiparameter(args, console, options, tools, rng)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"per_case": args.per_case, "seed": args.seed, "options": options, "rates": rates,
                       "seconds": seconds, "multiparameter": multi}, out, indent=1)
    return 0


GRID = np.array([(p, n) for p in 2.0 ** np.arange(0, 7) for n in (10.0, 20, 40, 80, 160)])
"""The multi-parameter study: p = 1..64 processes × problem sizes n = 10..160 (35 points)."""
TARGET = (256.0, 160.0)
MULTI_FORMS = {
    "c0 + a·n/p": (lambda p, n, a, b, c: 0.3 * c + a * n / p, {(("n", F(1), F(0)), ("p", F(-1), F(0)))}),
    "a·n/p + b·log2 p": (lambda p, n, a, b, c: a * n / p + 20 * b * np.log2(p),
                         {(("n", F(1), F(0)), ("p", F(-1), F(0))), (("p", F(0), F(1)),)}),
    "c0 + a/p + b·n": (lambda p, n, a, b, c: c + 30 * a / p + b * n / 30,
                       {(("p", F(-1), F(0)),), (("n", F(1), F(0)),)}),
    "c0 + a·n/p + b·n·p": (lambda p, n, a, b, c: c + a * n / p + 0.01 * b * n * p,
                           {(("n", F(1), F(0)), ("p", F(-1), F(0))), (("n", F(1), F(0)), ("p", F(1), F(0)))}),
    "c0 + a·n·p (growing)": (lambda p, n, a, b, c: c + a * p * n, {(("n", F(1), F(0)), ("p", F(1), F(0)))}),
}
"""Laws of (p, n) with coefficients a, b, c ~ 10^U[-1, 1), and the terms each must come back with."""


def _structure(function: Function) -> set:
    return {tuple((f.parameter, f.exponent, f.log_exponent) for f in t.factors) for t in function.terms
            if t.factors and t.coefficient != 0}


def multiparameter(args: argparse.Namespace, console: Console, options: dict, tools: list[str],
                   rng: np.random.Generator) -> dict:
    """Strong scaling in two parameters: exact terms, and the prediction at (4·p_max, n_max) within 5%."""
    from extrap_env import extrap_python, model_with_extrap

    import pmkit
    from pmkit.experiment import CallTree, Experiment, Metric

    n_series = max(args.per_case // 2, 1)
    rates: dict = {}
    for noise in NOISES:
        for name, (law, terms) in MULTI_FORMS.items():
            a, b, c = 10 ** rng.uniform(-1, 1, (3, n_series, 1))
            values = law(GRID[:, 0], GRID[:, 1], a, b, c) * (1 + rng.uniform(-noise, noise, (n_series, len(GRID))))
            truth = law(*TARGET, a, b, c)[:, 0]
            tree = CallTree()
            for i in range(n_series):
                tree.add(f"s{i}")
            experiment = Experiment(("p", "n"), GRID, tree, (Metric("value"),), {"value": values[..., None]})
            results = {tools[0]: [m.function for m in pmkit.model(experiment, **options)]}
            if len(tools) > 1:
                python = extrap_python()
                chunks = [model_with_extrap(["p", "n"], GRID, values[k:k + 100], modelers=TOOLS_EXTRAP,
                                            python=python) for k in range(0, n_series, 100)]
                for label, tool in zip(tools[1:], (t if isinstance(t, str) else t["label"] for t in TOOLS_EXTRAP),
                                       strict=True):
                    results[label] = [f for chunk in chunks for f in chunk[tool].functions]
            for tool, functions in results.items():
                exact = np.mean([f is not None and _structure(f) == terms for f in functions])
                near = np.mean([f is not None and abs(float(f.evaluate(list(TARGET))) / t - 1) <= 0.05
                                for f, t in zip(functions, truth, strict=True)])
                rates.setdefault(f"±{noise:.0%}", {}).setdefault(name, {})[tool] = {
                    "exact": 100 * exact, "predicted": 100 * near}
    table = Table(title=f"two parameters, p = 1..64 × n = 10..160, {n_series} laws per form and noise: exact terms % / "
                        "prediction at p = 256, n = 160 within 5% %")
    table.add_column("law")
    for tool in tools:
        table.add_column(tool.replace("Extra-P ", "Extra-P\n"), justify="right")
    for noise, forms in rates.items():
        for name, per in forms.items():
            table.add_row(f"{name} ±{noise[1:]}", *(f"{per[t]['exact']:.0f} / {per[t]['predicted']:.0f}"
                                                      for t in tools))
    console.print(table)
    return rates


def _mean(per_xset: dict, key: str) -> float:
    return float(np.mean([v[key] for v in per_xset.values()]))


def report(console: Console, tools: list[str], rates: dict, seconds: dict, per_case: int) -> None:
    """One table per noise level (cases × tools), then the targets."""
    pm = tools[0]
    for noise, cases in rates.items():
        table = Table(title=f"noise {noise}, {per_case} functions per case and x-set (1..64 | 64..4096 | both): "
                            "exact lead exponents % / prediction at 4·p_max within the noise % / turning point "
                            "within 20% % / non-negative %")
        table.add_column("case")
        for tool in tools:
            table.add_column(tool.replace("Extra-P ", "Extra-P\n"), justify="right")
        for case in CASES:
            cells = []
            for tool in tools:
                per = cases[case.label][tool]
                both = {k: _mean(per, k) for k in ("exact", "predicted", "turning", "physical")}
                turning = f" / t {both['turning']:.1f}" if case.kind == "falling + growing" else ""
                split = " | ".join(f"{v['exact']:.0f}" for v in per.values())
                cells.append(f"{both['exact']:.1f} / {both['predicted']:.1f}{turning} / nn {both['physical']:.1f}\n"
                             f"[dim]({split})[/dim]")
            table.add_row(case.label, *cells)
        console.print(table)
    # targets, at ±2%
    at2 = rates["±2%"]
    falling = [c for c in CASES if c.kind == "falling"]
    pairs = [c for c in CASES if c.kind == "falling + growing"]
    one_term = np.mean([_mean(at2[c.label][pm], "exact") for c in falling])
    turning = np.mean([_mean(at2[c.label][pm], "turning") for c in pairs])
    constant = _mean(at2["constant"][pm], "exact")
    console.print(f"targets at ±2%: lead exponents of one-term falling laws {one_term:.1f}% (≥ 90%: "
                  f"{'met' if one_term >= 90 else 'NOT met'}); turning points within 20% {turning:.1f}%; "
                  f"constants {constant:.1f}% (≥ 98%: {'met' if constant >= 98 else 'NOT met'})")
    rival = "Extra-P Basic neg"
    if rival in tools:
        behind = []
        for noise, cases in rates.items():
            for case in CASES:
                keys = ("exact", "predicted", "physical") + (("turning",) if case.kind == "falling + growing" else ())
                for key in keys:
                    mine, theirs = _mean(cases[case.label][pm], key), _mean(cases[case.label][rival], key)
                    if mine < theirs:
                        behind.append(f"{case.label} {noise} {key} {mine:.1f} < {theirs:.1f}")
        verdict = "yes" if not behind else "NO: " + "; ".join(behind)
        console.print(f"ahead of {rival} in every case and score: {verdict}")
    for tool in tools:
        console.print(f"{tool}: {seconds[tool]:.2f} s modeling")


if __name__ == "__main__":
    try:
        start = time.perf_counter()
        code = main()
        print(f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
        sys.exit(code)
    except (PmkitError, ExtrapUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
