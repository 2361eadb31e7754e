"""Detector ``kluge``: communication overhead of MPI calls beyond their usual time (paper 004).

For every communication call of a trace (``experiment.events``), ``overhead = max(0, duration −
T_f(p, bytes))`` with ``T_f`` from a calibration reference (option ``reference``, written by
``pmkit calibrate``) or, without one, from the trace's own calls (:mod:`pmkit.overhead`).  The
overheads are summed per call site (call path) as the paper does in §10; a call site is reported
when its overhead reaches ``min_share`` of all communication time, and findings are ranked by
total overhead.  The evidence names the ranks, how many calls exceeded ``t_max``, how much of the
overhead each wait-state pattern explains (late sender, late receiver, wait at N×N, ...), and the
largest instances (rank, start, duration, t_max, overhead, the call's number on its rank — the
iteration of a loop) so a user can find them in the trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pmkit.calibration.distributions import DEFAULT_Q_MAX
from pmkit.experiment import Experiment
from pmkit.findings import Finding
from pmkit.hookspecs import hookimpl
from pmkit.models import ModelSet
from pmkit.options import Option

NAME = "kluge"


class KlugeDetector:
    """Finds MPI call sites whose calls take longer than their calibrated usual time."""

    name = NAME
    description = "Communication overhead (Kluge et al.): MPI call time beyond the usual t_max of its (op, p, bytes)"
    options: Sequence[Option] = (
        Option("reference", str, "", "calibration reference JSON from `pmkit calibrate --out` (default: calibrate "
                                     "from the trace's own calls, which is weaker)"),
        Option("q_max", float, DEFAULT_Q_MAX, "quantile of the error distribution taken as usual "
                                              "(self-calibration)"),
        Option("alpha", float, 0.05, "significance level of the χ² goodness-of-fit test (self-calibration)"),
        Option("window", float, 0.0, "histogram window in seconds; 0 chooses (self-calibration)"),
        Option("min_share", float, 0.01, "report call sites whose overhead is at least this share of all "
                                         "communication time"),
        Option("instances", int, 5, "largest instances listed per finding"),
    )

    def detect(self, experiment: Experiment, models: ModelSet, reference: str = "", q_max: float = DEFAULT_Q_MAX,
               alpha: float = 0.05, window: float = 0.0, min_share: float = 0.01, instances: int = 5
               ) -> list[Finding]:
        """One finding per call site with overhead; none when the input has no event table."""
        events = experiment.events
        if events is None or not len(events):
            return []
        from pmkit.calibration.reference import Reference
        from pmkit.overhead import call_overheads

        calibrated = Reference.load(reference) if reference else None
        table = call_overheads(events, calibrated, q_max=q_max, alpha=alpha, window=window or None)
        return findings(table, experiment, min_share, instances, reference)


def findings(table: Any, experiment: Experiment, min_share: float, instances: int, reference: str) -> list[Finding]:
    """The call-site findings of an :class:`~pmkit.overhead.OverheadTable` (see the module)."""
    from pmkit.overhead import PATTERN_TITLES, PATTERNS

    events = table.events
    overhead = np.nan_to_num(table["overhead"], nan=0.0)
    duration = table["duration"]
    total_time = float(duration.sum())
    if total_time <= 0 or not overhead.any():
        return []
    callpath = table["callpath"]
    rank = table["rank"]
    pattern_names = table.pattern_names()
    explained = np.minimum(overhead, table["waiting"])
    source = reference or "self-calibrated from the trace's own calls"
    out = []
    for cp in np.unique(callpath[overhead > 0]):
        rows = np.nonzero(callpath == cp)[0]
        spent = float(overhead[rows].sum())
        if spent < min_share * total_time:
            continue
        by_rank = _sums(rank[rows], overhead[rows])
        patterns = {PATTERN_TITLES[p]: float(explained[rows][pattern_names[rows] == p].sum())
                    for p in PATTERNS[1:] if (pattern_names[rows] == p).any()}
        patterns = {k: v for k, v in patterns.items() if v > 0}
        patterns["unexplained"] = spent - sum(patterns.values())
        dominant = max(patterns, key=lambda k: patterns[k])
        largest = rows[np.argsort(-overhead[rows], kind="stable")[:instances]]
        listed = [_instance(table, events, experiment, i, pattern_names[i]) for i in largest if overhead[i] > 0]
        with_overhead = int((overhead[rows] > 0).sum())
        path = events.callpaths[int(cp)].path
        top_ranks = list(by_rank)[:3]
        where = ("rank " if len(top_ranks) == 1 else "ranks ") + ", ".join(str(r) for r in top_ranks)
        first = listed[0]
        out.append(Finding(
            detector=NAME,
            title=f"{dominant} overhead" if dominant != "unexplained" else "communication overhead",
            callpath=path,
            metric="time",
            location=where,
            severity=spent,
            unit="sec",
            message=(f"{spent / total_time:.1%} of all MPI time; {with_overhead} of {len(rows)} calls over t_max; "
                     f"largest: rank {first['rank']}, call {first['call_number']} at {first['start']:.6f} s took "
                     f"{first['duration'] * 1e6:.3g} µs, t_max {first['t_max'] * 1e6:.3g} µs"),
            evidence={
                "overhead": spent, "share_of_communication": spent / total_time,
                "communication_time": total_time, "calls": len(rows), "calls_with_overhead": with_overhead,
                "overhead_by_rank": {str(r): v for r, v in list(by_rank.items())[:16]},
                "ranks_with_overhead": len(by_rank),
                "patterns": patterns, "largest": listed,
                "reference": source, "self_calibrated": not reference,
                "clamped_calls": int(table["clamped"][rows].sum()),
                "notes": list(table.notes),
            },
        ))
    return sorted(out, key=lambda f: -f.severity)


def _sums(keys: np.ndarray, values: np.ndarray) -> dict[int, float]:
    """Sum of ``values`` per key, largest first, keys with a positive sum only."""
    unique, inverse = np.unique(keys, return_inverse=True)
    sums = np.zeros(len(unique))
    np.add.at(sums, inverse.reshape(-1), values)
    order = np.argsort(-sums, kind="stable")
    return {int(unique[i]): float(sums[i]) for i in order if sums[i] > 0}


def _instance(table: Any, events: Any, experiment: Experiment, i: int, pattern: str) -> dict[str, Any]:
    from pmkit.overhead import PATTERN_TITLES

    row = int(table["row"][i])
    run = int(events["run"][row])
    info = events.runs[run] if run < len(events.runs) else {}
    return {"rank": int(events["rank"][row]), "start": float(events["start"][row]),
            "duration": float(events["duration"][row]), "t_max": float(table["t_max"][i]),
            "overhead": float(table["overhead"][i]), "call_number": int(table["call_number"][i]),
            "pattern": PATTERN_TITLES[pattern], "waiting": float(table["waiting"][i]),
            "bytes": float(np.nan_to_num(events["bytes"][row], nan=0.0)), "processes": int(events["comm_size"][row]),
            "run": info.get("label", str(run)), "coordinates": info.get("coordinates", {})}


@hookimpl(trylast=True)
def pmkit_register_detectors(register: Any) -> None:
    register(KlugeDetector())
