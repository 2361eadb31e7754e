"""APMT on the real Score-P profiles with PAPI counters in ../shared/data/cube: what it finds.

For every study or profile (default: the pycubexr profiles and the Extra-P study mm-single), it
prints which of the paper's counters the profile provides, the critical kernels with CPI and
BF_mem where the counters allow, the communication APMT models, and — for studies with enough
points — its closed-loop validation (the largest point left out) beside pmkit-amdahl and the
refining modeler predicting the same held-out total from the same points.  The data folder is
``../shared/data`` beside the project or ``$PMKIT_SHARED_DATA``.

    python bench/apmt_real.py
    python bench/apmt_real.py ../shared/data/cube/extrap-mm-single
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import pmkit
from pmkit.experiment import CallTree, Experiment, Metric

DATA = Path(os.environ.get("PMKIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")) / "cube"
DEFAULT = [DATA / "extrap-mm-single", DATA / "pycubexr" / "blast.p64.r1", DATA / "pycubexr" / "kripke.p8.d2.g32.r1",
           DATA / "pycubexr" / "hw_counter" / "L2_DCM_negative.cubex",
           DATA / "pycubexr" / "hw_counter" / "L3_DCA_negative.cubex"]


def total_of(exp: Experiment, keep: np.ndarray) -> Experiment:
    tree = CallTree()
    tree.add("total")
    values = np.nansum(exp.measurements["time"][:, keep], axis=0)[None]
    return Experiment(exp.parameters, exp.points[keep], tree, (Metric("time", "sec"),), {"time": values})


def held_out_errors(exp: Experiment) -> dict[str, float]:
    """Each modeler's relative error (%) at the largest point, fitted without it."""
    order = np.argsort(exp.points[:, 0])
    keep, last = order[:-1], order[-1]
    measured = float(np.nansum(exp.measurements["time"][:, last]))
    x = float(exp.points[last, 0])
    out = {}
    for name in ("amdahl", "refining"):
        try:
            function = pmkit.model(total_of(exp, keep), name)[0].function
        except pmkit.PmkitError:
            function = None
        out[name] = (100 * abs(function.evaluate(x) - measured) / measured if function is not None else math.nan)
    return out


def describe(path: Path, console: Console) -> None:
    exp = pmkit.read(path)
    models = pmkit.model(exp, "apmt", metrics="time")
    result = models.apmt
    console.rule(str(path))
    if result is None:
        console.print("no APMT model: " + "; ".join(models.notes))
        return
    document = result.to_json()
    found = {role: source for role, source in document["counters"].items() if source}
    console.print(f"{len(exp.points)} point(s) of {result.parameter}; counters: "
                  + ", ".join(f"{role}={source}" for role, source in found.items()))
    table = Table("kernel", "kind", "share", "CPI", "BF_mem", "now", "notes", title="critical kernels",
                  title_justify="left")
    for row in result.table():
        if row.kind in ("hotspot", "non-scalable", "rest"):
            table.add_row(row.name[:40], row.kind, f"{row.share:.0%}", _num(row.cpi), _num(row.bf_mem),
                          f"{row.now.total:.3g} s", "; ".join(row.notes)[:60])
    console.print(table)
    comm = [row for row in result.table() if row.kind in ("p2p", "collective")]
    if comm:
        console.print("communication: " + ", ".join(f"{row.name} {row.now.t_comm:.3g} s" for row in comm)
                      + f" of {result.measured_total():.3g} s per process")
    if result.validation is not None:
        errors = held_out_errors(exp)
        console.print(f"held out {result.parameter}={result.validation.held_out[-1].x:g}: APMT "
                      f"{result.validation.mean_error:.1f}%, amdahl {errors['amdahl']:.1f}%, refining "
                      f"{errors['refining']:.1f}% error on the total time")
    for note in result.notes:
        console.print(f"  note: {note}")


def _num(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else "–"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=DEFAULT)
    args = parser.parse_args(argv)
    console = Console(width=120)
    for path in args.paths:
        if not path.exists():
            console.print(f"{path} is absent (../shared/data not beside the project?)", style="yellow")
            continue
        describe(path, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
