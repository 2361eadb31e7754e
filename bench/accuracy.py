"""Accuracy on synthetic data (paper 000, §4.1): pmkit against Extra-P's Refining and Basic modelers.

Seven cases (constant; common, rare and exotic functions with one and with two terms), ``--per-case``
random functions each (the paper: 1000), every function measured at each of the four x-sets
{2..32}, {8..128}, {32..512}, {128..2048} with ±2% uniform noise, from a fixed seed.  Every modeler
gets the same noisy values in the same run.  Two scores per model, as in the paper: the lead-order
exponents (α, β) at 4× the largest x match the true function's exactly, and the prediction at 4× the
largest x is within ±2% of the true value.

    python bench/accuracy.py --per-case 1000     # the paper's size
    python bench/accuracy.py --per-case 100      # a quick check
    python bench/accuracy.py --option nonconstancy=2.5   # try a pmkit modeler option
    python bench/accuracy.py --json out.json     # also write rates and pmkit's misses

Extra-P runs from its own environment (see ``extrap_env.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from extrap_env import (
    EXTRAP_MODELERS,
    ModelerSpec,
    extrap_python,
    extrap_version,
    model_with_extrap,
    run_main,
)
from rich.console import Console
from rich.table import Table
from synthetic import CASES, NOISE, TERMS, X_SETS, SyntheticFunctions, add_noise, generate

import pmkit
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.options import parse_assignments
from pmkit.pmnf import Function

Shape = tuple[Fraction, Fraction]
CONSTANT: Shape = (Fraction(0), Fraction(0))


def shape_text(shape: Shape | None) -> str:
    """``(3/2, 1)`` → ``x^(3/2)·log2(x)``; the constant shape → ``const``; None → ``no model``."""
    if shape is None:
        return "no model"
    alpha, beta = shape
    if shape == CONSTANT:
        return "const"
    parts = []
    if alpha:
        parts.append("x" if alpha == 1 else f"x^({alpha})")
    if beta:
        parts.append("log2(x)" if beta == 1 else f"log2(x)^({beta})")
    return "·".join(parts)


def lead_shape(function: Function | None, x_at: float) -> Shape | None:
    """Exponents (α, β) of a model's lead-order term at ``x_at``; CONSTANT for a constant model."""
    if function is None:
        return None
    term = function.lead_order_term(x_at)
    if term is None or term.coefficient == 0 or not term.factors:
        return CONSTANT
    return term.exponent_of("x")


@dataclass
class Scores:
    """Per series: exact lead-order exponents, prediction within ±2%, and what the model chose."""

    exact: np.ndarray
    predicted: np.ndarray
    chosen: list[Shape | None] = field(default_factory=list)


def score(functions: Sequence[Function | None], truth: SyntheticFunctions, x_at: float) -> Scores:
    """Score models against their true functions at ``x_at`` (4× the largest measured x)."""
    true_lead = truth.lead_terms(x_at)
    true_value = truth.evaluate(np.array([x_at]))[:, 0]
    exact = np.zeros(len(functions), dtype=bool)
    predicted = np.zeros(len(functions), dtype=bool)
    chosen: list[Shape | None] = []
    for i, function in enumerate(functions):
        shape = lead_shape(function, x_at)
        chosen.append(shape)
        expected = CONSTANT if true_lead[i] < 0 else TERMS[true_lead[i]]
        exact[i] = shape == expected
        if function is not None:
            value = float(function.evaluate(x_at))
            predicted[i] = abs(value - true_value[i]) <= NOISE * abs(true_value[i])
    return Scores(exact, predicted, chosen)


def model_with_pmkit(x: np.ndarray, values: np.ndarray, modeler: str, options: dict[str, str] | None = None,
                     interval_at: float | None = None) -> tuple[list[Function | None], float, np.ndarray | None]:
    """Model every series (series × points × repetitions) with pmkit's SDK; returns functions, seconds
    (modeling only) and, with ``interval_at``, every model's 90% interval there (series × (low, high))."""
    tree = CallTree()
    for i in range(values.shape[0]):
        tree.add(f"s{i}")
    experiment = Experiment(("x",), x[:, None], tree, (Metric("value"),), {"value": values})
    start = time.perf_counter()
    models = pmkit.model(experiment, modeler=modeler, **(options or {}))
    functions = [m.function for m in models]
    took = time.perf_counter() - start
    if interval_at is None:
        return functions, took, None
    _, low, high = models.predict({"x": interval_at}, level=0.9)
    return functions, took, np.column_stack([low, high])


def model_with_extrap_chunked(x: np.ndarray, values: np.ndarray, chunk: int, jobs: int, console: Console,
                              modelers: Sequence[ModelerSpec] = EXTRAP_MODELERS
                              ) -> tuple[dict[str, list[Function | None]], dict[str, float]]:
    """Extra-P's modelers on every series, in chunks (optionally in parallel runner processes); results
    are keyed by modeler name, or label for a modeler given with options (see ``extrap_env.ModelerSpec``)."""
    python = extrap_python()
    starts = list(range(0, values.shape[0], chunk))
    labels = [m if isinstance(m, str) else m.get("label", m["name"]) for m in modelers]

    def run(start: int):
        return model_with_extrap(["x"], x, values[start:start + chunk], predict_at=[[4 * x.max()]],
                                 modelers=modelers, python=python)

    functions: dict[str, list[Function | None]] = {m: [] for m in labels}
    seconds = dict.fromkeys(labels, 0.0)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for k, result in enumerate(pool.map(run, starts)):
            for name, models in result.items():
                own = np.array([f.evaluate(4 * x.max()) for f in models.functions])
                if not np.allclose(own, models.predictions[:, 0], rtol=1e-9, equal_nan=True):
                    raise RuntimeError(f"Extra-P {name}: converted functions do not reproduce its predictions")
                functions[name].extend(models.functions)
                seconds[name] += models.seconds
            console.log(f"  Extra-P chunk {k + 1}/{len(starts)} done", style="dim")
    return functions, seconds


def percent(mask: np.ndarray) -> str:
    return f"{100.0 * mask.mean():.1f}" if mask.size else "-"


def add_run_arguments(parser: argparse.ArgumentParser, chunk: int) -> None:
    """The options every synthetic protocol here shares: pmkit modeler options and how Extra-P runs."""
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an option of the pmkit modeler (repeatable), e.g. --option nonconstancy=2.5")
    parser.add_argument("--no-extrap", action="store_true", help="score pmkit only")
    parser.add_argument("--jobs", type=int, default=2, help="Extra-P runner processes in parallel (default 2)")
    parser.add_argument("--chunk", type=int, default=chunk, help="series per Extra-P runner call")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-case", type=int, default=500,
                        help="functions per case (paper: 1000, 9-18 minutes here with Extra-P; default 500)")
    parser.add_argument("--seed", type=int, default=20200826, help="random seed (fixed for reproducibility)")
    parser.add_argument("--repetitions", type=int, default=1,
                        help="noisy repetitions per point (paper: one noisy value per point)")
    parser.add_argument("--pmkit-modeler", default="refining", help="pmkit modeler to score")
    add_run_arguments(parser, chunk=2000)
    parser.add_argument("--misses", type=int, default=4, help="pmkit's most frequent misses to list per case")
    parser.add_argument("--json", help="write rates and pmkit's misses to this file")
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 110)
    options = parse_assignments(args.option)

    rng = np.random.default_rng(args.seed)
    truths = [generate(label, args.per_case, rng) for label, _, _ in CASES]
    n = args.per_case
    label = " ".join([f"pmkit {args.pmkit_modeler}", *args.option])
    tools = [label] + ([] if args.no_extrap else [f"Extra-P {m}" for m in EXTRAP_MODELERS])
    # scores[tool][case][x-set]
    scores: dict[str, dict[str, dict[str, Scores]]] = {t: {c.case: {} for c in truths} for t in tools}
    seconds = dict.fromkeys(tools, 0.0)
    coverage: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    header = (f"accuracy: {len(CASES)} cases × {n} functions × {len(X_SETS)} x-sets, ±{NOISE:.0%} noise, "
              f"{args.repetitions} repetition(s), seed {args.seed}")
    if not args.no_extrap:
        header += f"; Extra-P {extrap_version()}"
    console.print(header)

    for xs_label, x in X_SETS.items():
        exact = np.concatenate([t.evaluate(x) for t in truths])
        values = add_noise(exact, rng, NOISE, args.repetitions)
        x_at = 4 * float(x.max())
        console.log(f"x = {xs_label}: {values.shape[0]} series")
        results: dict[str, list[Function | None]] = {}
        functions, took, intervals = model_with_pmkit(x, values, args.pmkit_modeler, options, interval_at=x_at)
        truth_at = np.concatenate([t.evaluate(np.array([x_at]))[:, 0] for t in truths])
        for k, truth in enumerate(truths):
            part = slice(k * n, (k + 1) * n)
            low, high = intervals[part, 0], intervals[part, 1]
            covered = (low <= truth_at[part]) & (truth_at[part] <= high)
            with np.errstate(all="ignore"):
                width = np.where(low > 0, high / np.where(low > 0, low, 1.0), np.nan)
            coverage.setdefault(truth.case, []).append((covered, width))
        results[tools[0]] = functions
        seconds[tools[0]] += took
        if not args.no_extrap:
            ex_functions, ex_seconds = model_with_extrap_chunked(x, values, args.chunk, args.jobs, console)
            for name in EXTRAP_MODELERS:
                results[f"Extra-P {name}"] = ex_functions[name]
                seconds[f"Extra-P {name}"] += ex_seconds[name]
        for tool, fns in results.items():
            for k, truth in enumerate(truths):
                scores[tool][truth.case][xs_label] = score(fns[k * n:(k + 1) * n], truth, x_at)

    summary = report(console, tools, truths, scores, seconds, args.misses)
    summary["intervals"] = interval_report(console, coverage, tools[0])
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"per_case": n, "seed": args.seed, "repetitions": args.repetitions, "options": options,
                       **summary}, out, indent=1)
    return 0


def report(console: Console, tools: list[str], truths: list[SyntheticFunctions],
           scores: dict[str, dict[str, dict[str, Scores]]], seconds: dict[str, float], n_misses: int) -> dict:
    """Print one table per case, a summary against the targets and pmkit's misses; return the figures."""
    pm = tools[0]
    rates: dict[str, dict[str, dict[str, float]]] = {}
    misses: dict[str, list[dict]] = {}
    for truth in truths:
        case = truth.case
        table = Table(title=f"{case} ({len(truth)} functions per x-set): % exact lead exponents / % predictions ±2%")
        table.add_column("x")
        for tool in tools:
            table.add_column(f"{tool}\nexp %", justify="right")
            table.add_column(f"{tool}\npred %", justify="right")
        for xs in X_SETS:
            cells = []
            for tool in tools:
                cells += [percent(scores[tool][case][xs].exact), percent(scores[tool][case][xs].predicted)]
            table.add_row(xs, *cells)
        cells = []
        for tool in tools:
            per = scores[tool][case]
            all_exact = np.concatenate([per[xs].exact for xs in X_SETS])
            all_pred = np.concatenate([per[xs].predicted for xs in X_SETS])
            rates.setdefault(case, {})[tool] = {"exact": 100 * all_exact.mean(), "predicted": 100 * all_pred.mean(),
                                                **{f"exact {xs}": 100 * per[xs].exact.mean() for xs in X_SETS},
                                                **{f"predicted {xs}": 100 * per[xs].predicted.mean() for xs in X_SETS}}
            cells += [percent(all_exact), percent(all_pred)]
        table.add_row("all", *cells, style="bold")
        console.print(table)
        misses[case] = _misses(truth, scores[pm][case])

    if len(tools) > 1:
        _summary_table(console, tools, truths, rates)
    constant_rate = rates["constant"][pm]["exact"]
    console.print(f"constant functions recognised by {pm}: {constant_rate:.1f}% "
                  f"(target ≥ 98%: {'met' if constant_rate >= 98 else 'NOT met'})")
    for tool in tools:
        total = len(truths) * len(truths[0]) * len(X_SETS)
        console.print(f"{tool}: {seconds[tool]:.2f} s modeling for {total} series "
                      f"({total / max(seconds[tool], 1e-12):,.0f} models/s)")
    for case, rows in misses.items():
        if rows and n_misses:
            text = "; ".join(f"{r['true']} → {r['chosen']} at {r['x_set']} ×{r['count']}" for r in rows[:n_misses])
            console.print(f"[dim]{pm} misses, {case}: {text}[/dim]")
    return {"rates": rates, "seconds": seconds, "pmkit_misses": misses}


def interval_report(console: Console, coverage: dict[str, list[tuple[np.ndarray, np.ndarray]]], tool: str) -> dict:
    """pmkit's 90% prediction intervals at 4× the largest x: how often they contain the true value, per
    case and x-set (target 85–95%), and their median width (high ÷ low)."""
    table = Table(title=f"{tool}: 90% prediction intervals at 4·x_max — % containing the true value "
                        "(per x-set | all) and median width high/low")
    for column in ("case", *X_SETS, "all", "median width"):
        table.add_column(column, justify="left" if column == "case" else "right")
    out = {}
    for case, parts in coverage.items():
        covered = np.concatenate([c for c, _ in parts])
        widths = np.concatenate([w for _, w in parts])
        out[case] = {"covered": 100 * covered.mean(), "width": float(np.nanmedian(widths)),
                     **{f"covered {xs}": 100 * c.mean() for xs, (c, _) in zip(X_SETS, parts, strict=True)}}
        table.add_row(case, *(percent(c) for c, _ in parts), percent(covered), f"×{out[case]['width']:.2f}")
    everything = np.concatenate([c for parts in coverage.values() for c, _ in parts])
    table.add_row("all", *[""] * len(X_SETS), percent(everything), "", style="bold")
    console.print(table)
    return out


def _summary_table(console: Console, tools: list[str], truths: list[SyntheticFunctions],
                   rates: dict[str, dict[str, dict[str, float]]]) -> None:
    pm = tools[0]
    table = Table(title=f"target: {pm} ≥ the better Extra-P modeler in every case")
    for col in ("case", "pmkit\nexp %", "best Extra-P\nexp %", "pmkit\npred %", "best Extra-P\npred %", "met"):
        table.add_column(col, justify="left" if col == "case" else "right")
    for truth in truths:
        per = rates[truth.case]
        best_exact = max(per[t]["exact"] for t in tools[1:])
        best_pred = max(per[t]["predicted"] for t in tools[1:])
        met = per[pm]["exact"] >= best_exact and per[pm]["predicted"] >= best_pred
        table.add_row(truth.case, f"{per[pm]['exact']:.1f}", f"{best_exact:.1f}", f"{per[pm]['predicted']:.1f}",
                      f"{best_pred:.1f}", "yes" if met else "[red]NO[/red]")
    console.print(table)


def _misses(truth: SyntheticFunctions, per_xset: dict[str, Scores]) -> list[dict]:
    """Every (true lead term → chosen lead term, x-set) confusion of a modeler, most frequent first."""
    counter: Counter = Counter()
    for xs, scores in per_xset.items():
        x_at = 4 * float(X_SETS[xs].max())
        lead = truth.lead_terms(x_at)
        for i in np.flatnonzero(~scores.exact):
            expected = CONSTANT if lead[i] < 0 else TERMS[lead[i]]
            counter[(shape_text(expected), shape_text(scores.chosen[i]), xs)] += 1
    return [{"true": t, "chosen": c, "x_set": xs, "count": k} for (t, c, xs), k in counter.most_common()]


if __name__ == "__main__":
    run_main(main)
