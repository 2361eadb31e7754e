"""Counter samples over time and locations, as a reader found them: one row per sample, columnar.

``perf stat -I`` prints a value per interval (and per CPU, core, socket or thread with ``-A``,
``--per-core``, ...); an :class:`~pmkit.experiment.Experiment` keeps one value per run, so the
samples behind it are kept here for plots and detectors that want them.  A row is one value of
one metric at one location in one interval of one run: ``time`` is the end of the interval in
seconds since the start of the run (NaN for a whole-run value), ``location`` indexes ``labels``
(``CPU3``, ``S0-D0-C1``, ``bash-1456``; -1 for a value aggregated over the whole machine).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TIMELINE_COLUMNS: Mapping[str, Any] = {
    "point": np.int64,
    "repetition": np.int64,
    "metric": np.int64,
    "location": np.int64,
    "time": np.float64,
    "value": np.float64,
    "variance": np.float64,
    "running": np.float64,
}
"""Columns and their types: ``variance`` is perf's ``-r`` noise in percent of the value (NaN
without ``-r``), ``running`` the percentage of the time the counter was counting (below 100 when
the kernel multiplexed it)."""


@dataclass
class Timeline:
    """Samples of metrics (``metrics[row.metric]``) at locations (``labels[row.location]``).

    ``location_kind`` says what a location is: ``cpu``, ``core``, ``die``, ``socket``, ``node``,
    ``thread``, ``cgroup``, or ``""`` when every value is for the whole run.
    """

    columns: dict[str, np.ndarray]
    metrics: list[str]
    labels: list[str] = field(default_factory=list)
    location_kind: str = ""

    def __post_init__(self) -> None:
        missing = set(TIMELINE_COLUMNS) - set(self.columns)
        if missing:
            raise ValueError(f"timeline lacks columns {sorted(missing)}")
        lengths = {len(v) for v in self.columns.values()}
        if len(lengths) > 1:
            raise ValueError(f"timeline columns have different lengths: {sorted(lengths)}")
        for name, dtype in TIMELINE_COLUMNS.items():
            self.columns[name] = np.asarray(self.columns[name], dtype=dtype)

    def __len__(self) -> int:
        return len(self.columns["value"])

    def __getitem__(self, column: str) -> np.ndarray:
        return self.columns[column]

    @property
    def has_intervals(self) -> bool:
        """True when some sample belongs to an interval (``perf stat -I``)."""
        return bool(np.isfinite(self.columns["time"]).any())

    def series(self, metric: str, point: int, repetition: int = 0,
               location: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(interval end times, values) of one metric in one run, at one location or summed over them.

        Without ``location`` the values of all locations in an interval are summed (NaN where
        none was counted), which is what perf prints without ``-A``.
        """
        if metric not in self.metrics:
            raise KeyError(f"no metric {metric!r} in the timeline; it has {self.metrics}")
        c = self.columns
        rows = ((c["metric"] == self.metrics.index(metric)) & (c["point"] == point)
                & (c["repetition"] == repetition) & np.isfinite(c["time"]))
        if location is not None:
            rows &= c["location"] == location
        times, inverse = np.unique(c["time"][rows], return_inverse=True)
        values = c["value"][rows]
        sums = np.zeros(len(times))
        counted = np.zeros(len(times), dtype=bool)
        finite = np.isfinite(values)
        np.add.at(sums, inverse[finite], values[finite])
        counted[inverse[finite]] = True
        return times, np.where(counted, sums, np.nan)

    @classmethod
    def concatenate(cls, parts: Sequence[Timeline]) -> Timeline:
        """One timeline of several, metrics and labels merged by name (``point`` and ``repetition`` kept)."""
        metrics: list[str] = []
        labels: list[str] = []
        kinds = {p.location_kind for p in parts if p.location_kind}
        chunks: dict[str, list[np.ndarray]] = {name: [] for name in TIMELINE_COLUMNS}
        for part in parts:
            metric_map = np.array([_index(metrics, m) for m in part.metrics] or [0], dtype=np.int64)
            label_map = np.array([_index(labels, lab) for lab in part.labels] or [0], dtype=np.int64)
            for name in TIMELINE_COLUMNS:
                column = part.columns[name]
                if name == "metric":
                    column = metric_map[column]
                elif name == "location":
                    column = np.where(column >= 0, label_map[np.maximum(column, 0)], -1)
                chunks[name].append(column)
        columns = {name: np.concatenate(chunk) if chunk else np.zeros(0, dtype=TIMELINE_COLUMNS[name])
                   for name, chunk in chunks.items()}
        kind = kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "")
        return cls(columns, metrics, labels, kind)


def _index(names: list[str], name: str) -> int:
    try:
        return names.index(name)
    except ValueError:
        names.append(name)
        return len(names) - 1
