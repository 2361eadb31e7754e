"""Per-process parameter values from Score-P's parameter instrumentation in Cube files.

``SCOREP_USER_PARAMETER_INT64("cells", n)`` inside a region splits the region's call-tree node by
value: Score-P writes one node per value, each carrying ``<parameter partype="numeric"
parkey="cells" parvalue="n"/>``.  A process's value is the one whose node it visited; where it
visited several (the value changed during the run), the mean weighted by its visits.  pmkit's Cube
reader merges those nodes back into one call path, so section times are unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pmkit.perprocess.measured import MeasuredRun
from pmkit.perprocess.tables import ParameterTable, TableRun

VISITS = "visits"


def read_parameters(runs: Sequence[MeasuredRun], names: Sequence[str],
                    source: str) -> tuple[ParameterTable | None, list[tuple[str, str]]]:
    """A parameter table of ``names`` from the runs' Cube files, and the runs left out with the reason.

    Returns None for the table when no run has any of the parameters.
    """
    from pycubexr import CubexParser

    table: dict[str, TableRun] = {}
    skipped: list[tuple[str, str]] = []
    found_any = False
    for run in runs:
        try:
            with CubexParser(run.source) as parser:
                try:
                    visits = parser.get_metric_values(parser.get_metric_by_name(VISITS))
                except Exception:  # pycubexr raises its own errors for a missing metric
                    skipped.append((run.source, f"has no {VISITS} metric to tell which process had which parameter "
                                                "value"))
                    continue
                weights = np.zeros((len(names), run.processes))
                sums = np.zeros((len(names), run.processes))
                for cnode in parser.all_cnodes():
                    for k, name in enumerate(names):
                        value = cnode.parameters.get(name)
                        if isinstance(value, (int, float)):
                            counts = np.asarray(visits.cnode_values(cnode), dtype=float)[: run.processes]
                            weights[k, : counts.size] += counts
                            sums[k, : counts.size] += counts * float(value)
        except Exception as exc:  # a damaged file was already reported by the reader; say why here too
            skipped.append((run.source, f"parameters cannot be read: {type(exc).__name__}: {exc}"))
            continue
        found_any = found_any or bool(weights.any())
        unknown = np.argwhere(weights == 0)
        if unknown.size:
            name, rank = names[int(unknown[0][0])], int(unknown[0][1])
            skipped.append((run.source, f"rank {rank} never visited a call path with parameter {name} (Score-P "
                                        "parameter instrumentation), so its value is unknown"))
            continue
        with np.errstate(all="ignore"):
            values = sums / weights
        table[run.label] = TableRun(run.label, {rank: (None, values[:, rank].copy()) for rank in range(run.processes)})
    if not found_any:
        return None, []
    return ParameterTable(source, tuple(names), table), skipped
