"""The kluge detector on real MPI timings: does it find the injected late senders, and only them?

    python bench/kluge.py [--data bench/.kluge] [--q-max 0.9,0.95,0.99]

Reads the traces ``bench/kluge_traces.py`` wrote: the calibration runs (``DATA/calibration``, one
per process count) become a reference with pmkit's calibration; every application run
(``DATA/study/app.p{P}.r{R}``) is analysed with that reference and self-calibrated.  Ground truth
is ``injected.json``: the ``MPI_Recv`` calls that wait because of the injected delay (the wave of
late senders around the ring).  Per run and setting it prints, over the application's calls:

* precision and recall of Kluge's rule itself (a call has overhead when its time exceeds t_max);
* R-precision: of the N calls with the largest overhead (N = injected calls), the share injected;
* the share of all overhead the injected calls carry;
* the rank of the injected call site among the detector's findings (1 = reported first) and its
  pattern, and the share of the finding's listed largest instances that are injected.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def evaluate(run: Path, reference, q_max: float) -> dict:
    import pmkit
    from pmkit.detectors.kluge import findings
    from pmkit.overhead import call_overheads

    experiment = pmkit.read(run)
    events = experiment.events
    injected = json.loads((run / "injected.json").read_text())
    table = call_overheads(events, reference, q_max=q_max)
    paths = np.array([cp.path for cp in events.callpaths] + [""], dtype=object)[table["callpath"]]
    app = np.array([p.startswith("main->app") for p in paths])
    truth = {(int(rank), round(start, 9)) for rank, start in injected["recv_starts"]}
    is_true = np.array([(int(r), round(float(s), 9)) in truth for r, s in zip(table["rank"], table["start"],
                                                                               strict=True)])
    overhead = np.nan_to_num(table["overhead"], nan=0.0)
    flagged = (overhead > 0) & app
    tp, fp, fn = int((flagged & is_true).sum()), int((flagged & ~is_true).sum()), int((~flagged & is_true).sum())
    top = np.argsort(-np.where(app, overhead, -1.0), kind="stable")[: len(truth)]
    found = findings(table, experiment, 0.0, 10, "reference" if reference is not None else "")
    order = [f.callpath for f in found if f.callpath.startswith("main->app")]
    target = injected["callpath"]
    rank = order.index(target) + 1 if target in order else None
    listed = next((f.evidence["largest"] for f in found if f.callpath == target), [])
    listed_true = sum((i["rank"], round(i["start"], 9)) in truth for i in listed)
    pattern = next((f.title for f in found if f.callpath == target), "–")
    return {"truth": len(truth), "tp": tp, "fp": fp, "fn": fn,
            "precision": tp / max(tp + fp, 1), "recall": tp / max(tp + fn, 1),
            "r_precision": float(is_true[top].mean()) if len(truth) else float("nan"),
            "share": float(overhead[is_true].sum() / max(overhead[app].sum(), 1e-300)),
            "rank": rank, "pattern": pattern, "listed": f"{listed_true}/{len(listed)}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / ".kluge")
    parser.add_argument("--q-max", default="0.9,0.95,0.99")
    args = parser.parse_args()
    import pmkit
    from pmkit.calibration.reference import calibrate
    from pmkit.calibration.samples import trace_samples

    runs = sorted((args.data / "study").glob("app.p*.r*"), key=lambda p: (int(p.name.split(".")[1][1:]), p.name))
    if not runs:
        print(f"no application traces in {args.data / 'study'}: run bench/kluge_traces.py first", file=sys.stderr)
        return 1
    calibration = pmkit.read(args.data / "calibration").events
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = ("run", "calibration", "q_max", "injected", "precision", "recall", "R-prec.", "share",
              "rank", "largest", "finding")
    print("{:<11} {:<11} {:>5} {:>8} {:>9} {:>6} {:>7} {:>6} {:>4} {:>7}  {}".format(*header))
    for q in (float(x) for x in args.q_max.split(",")):
        reference = calibrate(trace_samples(calibration, callpath_prefix="calib_"), q_max=q, resolution=1e-9)
        for run in runs:
            for label, ref in (("reference", reference), ("self", None)):
                r = evaluate(run, ref, q)
                print(f"{run.name:<11} {label:<11} {q:>5g} {r['truth']:>8} {r['precision']:>9.2f} {r['recall']:>6.2f} "
                      f"{r['r_precision']:>7.2f} {r['share']:>6.2f} {r['rank'] or '–':>4} {r['listed']:>7}  "
                      f"{r['pattern']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
