"""The kluge detector on real MPI timings: does it find the injected late senders, and only them?

    python bench/kluge.py [--data bench/.kluge] [--q-max 0.9,0.95,0.99]

Reads the traces ``bench/kluge_traces.py`` wrote: the calibration runs (``DATA/calibration``, one
per process count) become a reference with pmkit's calibration; every application run
(``DATA/study/app.p{P}.r{R}``) is analysed with that reference and self-calibrated.  Ground truth
is ``injected.json``: the N (rank, iteration) pairs that wait because of the injected delay (the
wave around the ring); a pair is found when its ``MPI_Send`` or its ``MPI_Recv`` has overhead
(which of the two waits depends on the MPI library's protocol).  Per run and setting it prints,
over the application's calls:

* precision (flagged calls that belong to an injected pair) and recall (injected pairs with a
  flagged call) of Kluge's rule itself: a call has overhead when its time exceeds t_max;
* R-precision: of the N calls with the largest overhead, the share belonging to injected pairs;
* the share of all overhead the injected pairs carry;
* the rank among the detector's findings of the first finding at an exchange call site (1 =
  reported first), its title, and the share of its listed largest instances that are injected.
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
    pair_of = {(int(rank), round(start, 9)): (int(rank), int(iteration))
               for rank, iteration, _, start in injected["calls"]}
    pairs = [pair_of.get((int(r), round(float(s), 9))) for r, s in zip(table["rank"], table["start"], strict=True)]
    is_true = np.array([p is not None for p in pairs])
    overhead = np.nan_to_num(table["overhead"], nan=0.0)
    flagged = (overhead > 0) & app
    found_pairs = {pairs[i] for i in np.nonzero(flagged & is_true)[0]}
    n_pairs = len(injected["waits"])
    top = np.argsort(-np.where(app, overhead, -1.0), kind="stable")[:n_pairs]
    found = findings(table, experiment, 0.0, 10, "reference" if reference is not None else "")
    exchange = [i for i, f in enumerate(found) if f.callpath in injected["callpaths"]]
    first = found[exchange[0]] if exchange else None
    listed = first.evidence["largest"] if first else []
    listed_true = sum((i["rank"], round(i["start"], 9)) in pair_of for i in listed)
    return {"truth": n_pairs, "precision": float(is_true[flagged].mean()) if flagged.any() else float("nan"),
            "recall": len(found_pairs) / max(n_pairs, 1),
            "r_precision": float(is_true[top].mean()) if n_pairs else float("nan"),
            "share": float(overhead[is_true].sum() / max(overhead[app].sum(), 1e-300)),
            "rank": exchange[0] + 1 if exchange else None,
            "pattern": f"{first.callpath.rsplit('->', 1)[-1]}: {first.title}" if first else "–",
            "listed": f"{listed_true}/{len(listed)}"}


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
