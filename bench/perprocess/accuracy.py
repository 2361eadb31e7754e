"""Per-process models on real MPI runs, side by side with paper 003's figures.

    python bench/perprocess/study.py                 # run the MPI benchmark, write the Cube studies (~5 min)
    python bench/perprocess/accuracy.py [--data bench/perprocess/data] [--json out.json]

Calibrates the per-process models of ``stencil.c`` on the balanced runs only, then predicts every
other scenario from its per-process parameter table and compares with its measurements: the paper's
error ``|predicted − measured| / measured`` per run (repetitions averaged), mean and max per scenario.

Model variants:

* ``cpu`` (``stencil-cpu.toml``): each rank's work in thread CPU time, ``max`` over ranks — the run
  time on a machine with a core per rank, which is what the paper models;
* ``cpu, ordinary``: the same with unweighted least squares (the default weighs by 1/time);
* ``refined`` (``stencil-cpu-refined.toml``): ``cpu`` with a term in p for the compute sections (a
  rank's CPU time per cell grows with the ranks sharing the machine's cores), chosen on the
  calibration's leave-one-out error;
* ``refined, no CR``: without the communication ratio (the paper's model before §4.4);
* ``wall`` (``stencil-wall.toml``): the measured wall clock of the time-step loop on this machine,
  where the ranks share its cores: ``max(max(process), sum(process) / cores)``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "src"))

import pmkit  # noqa: E402
from pmkit.perprocess import Prediction  # noqa: E402

SCENARIOS = {
    "balanced-test": "balanced, sizes not calibrated on",
    "half3x": "imbalanced subdomains (half the ranks 3× the cells)",
    "hot": "imbalanced particles (half the ranks)",
    "edge": "hot ranks at the domain's edge (1 neighbour)",
    "center": "hot ranks in the middle (2 neighbours)",
}
IMBALANCED = ("half3x", "hot", "edge", "center")
BEST = "refined"
"""The variant whose calibration and imbalance overhead are shown in detail."""
PAPER = {  # paper 003, §4: mean / max prediction error in percent (None where the paper gives no figure)
    "balanced-test": (3.6, 12.87),
    "half3x": (10.26, 15.83),
    "hot": (None, 8.61),
    "edge": (None, 16.19),
    "center": (None, 16.19),
    "imbalanced": (10.2, 16.2),
}


def variants(folder: Path) -> dict[str, Path]:
    """The model files compared, written next to each other in ``folder``."""
    cpu = (HERE / "stencil-cpu.toml").read_text(encoding="utf-8")
    refined = (HERE / "stencil-cpu-refined.toml").read_text(encoding="utf-8")
    out = {"cpu": HERE / "stencil-cpu.toml"}
    ordinary = folder / "ordinary.toml"
    ordinary.write_text(cpu.replace('metric = "cpu_time"', 'metric = "cpu_time"\nfit = "ordinary"'), encoding="utf-8")
    out["cpu, ordinary"] = ordinary
    out["refined"] = HERE / "stencil-cpu-refined.toml"
    no_cr = folder / "no-cr.toml"
    no_cr.write_text(re.sub(r'^factor = "cr".*\n', "", refined, flags=re.MULTILINE), encoding="utf-8")
    out["refined, no CR"] = no_cr
    out["wall"] = HERE / "stencil-wall.toml"
    return out


def processes_of(name: str) -> int:
    return int(re.search(r"\.p(\d+)\.", name).group(1))  # type: ignore[union-attr]


def stats(errors: list[float]) -> tuple[float | None, float | None]:
    return (float(np.mean(errors)), float(np.max(errors))) if errors else (None, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE / "data")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    args = parser.parse_args(argv)
    from rich.console import Console
    from rich.table import Table

    console = Console()
    results: dict[str, dict[str, Prediction]] = {}
    fits: dict[str, list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, model in variants(Path(tmp)).items():
            calibration = pmkit.PerProcessModel.load(model).calibrate(args.data / "balanced")
            fits[label] = [(f.name, f.formula(), f.quality) for f in calibration.sections]
            results[label] = {s: calibration.predict(args.data / s / "pmkit-parameters.csv", args.data / s)
                              for s in SCENARIOS if (args.data / s).is_dir()}
    best = pmkit.PerProcessModel.load(HERE / "stencil-cpu-refined.toml").calibrate(args.data / "balanced")
    calibration_runs = len(best.runs)

    table = Table(title=f"Prediction error, % (mean / max over runs); calibrated on {calibration_runs} balanced runs")
    table.add_column("scenario")
    table.add_column("runs", justify="right")
    table.add_column("paper 003", justify="right")
    for label in results:
        table.add_column(label, justify="right")
    table.add_column("wall, P=2", justify="right")

    def cell(pair: tuple[float | None, float | None]) -> str:
        return " / ".join("–" if v is None else f"{v:.1f}" for v in pair)

    document: dict = {"scenarios": {}, "calibration": {}}
    rows = [*SCENARIOS, "imbalanced"]
    for scenario in rows:
        members = IMBALANCED if scenario == "imbalanced" else (scenario,)
        if not any(m in results["cpu"] for m in members):
            continue
        runs = sum(len(results["cpu"][m].runs) for m in members if m in results["cpu"])
        row = [SCENARIOS.get(scenario, "all imbalanced scenarios"), str(runs), cell(PAPER[scenario])]
        entry = {"runs": runs, "paper": PAPER[scenario]}
        for label, per_scenario in results.items():
            errors = [e for m in members if m in per_scenario for e in per_scenario[m].errors]
            row.append(cell(stats(errors)))
            entry[label] = stats(errors)
        two = [r.error for m in members if m in results["wall"] for r in results["wall"][m].runs
               if r.error is not None and processes_of(r.name) == 2]
        row.append(cell(stats(two)))
        entry["wall, P=2"] = stats(two)
        table.add_row(*row, end_section=scenario == "center")
        document["scenarios"][scenario] = entry
    console.print(table)

    quality = Table(title=f"Calibration ({BEST}): per-section fit over every (run, rank) sample")
    for column in ("section", "predictor", "samples", "adj. R²", "RMS rel. error %", "LOO %"):
        quality.add_column(column, justify="left" if column in ("section", "predictor") else "right")
    for name, formula, q in fits[BEST]:
        quality.add_row(name, formula, str(q.samples), f"{q.adjusted_r2:.4f}", f"{q.rms_relative:.1f}",
                        f"{q.loo_rms_relative:.1f}")
        document["calibration"][name] = {"formula": formula, **q.to_json()}
    console.print(quality)

    if "half3x" in results[BEST] and "balanced-test" in results[BEST]:
        measured_balanced = {}
        for scenario in ("balanced", "balanced-test"):
            folder = args.data / scenario
            for run in best.predict(folder / "pmkit-parameters.csv", folder).runs:
                if run.measured is not None:
                    measured_balanced[run.name] = run.measured.total
        overhead = Table(title=f"Imbalance overhead ({BEST}): half the ranks with 3× the cells, against the "
                               "measured balanced run of the same size")
        for column in ("run", "predicted", "measured", "overhead predicted", "overhead measured"):
            overhead.add_column(column, justify="right" if column != "run" else "left")
        document["overhead"] = []
        for run in results[BEST]["half3x"].runs:
            if run.measured is None or run.name not in measured_balanced:
                continue
            measured_overhead = run.measured.total - measured_balanced[run.name]
            overhead.add_row(run.name, f"{run.total:.3f} s", f"{run.measured.total:.3f} s",
                             f"{run.overhead:.3f} s ({run.overhead_share:.0%})",
                             f"{measured_overhead:.3f} s ({measured_overhead / run.measured.total:.0%})")
            document["overhead"].append({"run": run.name, "predicted": run.total, "measured": run.measured.total,
                                         "overhead": run.overhead, "measured_overhead": measured_overhead})
        console.print(overhead)
    if args.json:
        args.json.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
