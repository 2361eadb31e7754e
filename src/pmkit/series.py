"""A batch of series to model: many call path × metric rows sharing one set of points.

This is what modelers receive.  Call paths of an experiment share their measurement points, so a
batched modeler can fit one hypothesis to every row with one matrix product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pmkit.constraints import Constraint
from pmkit.experiment import Experiment, reduce_repetitions


@dataclass
class SeriesBatch:
    """``values`` has shape (series, points, repetitions), NaN where missing.

    ``callpaths[i]`` and ``metrics[i]`` name row ``i``; ``constraints[i]`` (optional) restricts its
    search space.  ``experiment`` is the source, for modelers that need more (counters, locations).
    """

    parameters: tuple[str, ...]
    points: np.ndarray
    values: np.ndarray
    callpaths: list[str]
    metrics: list[str]
    constraints: list[Constraint | None] | None = None
    experiment: Experiment | None = None

    def __post_init__(self) -> None:
        self.parameters = tuple(self.parameters)
        self.points = np.asarray(self.points, dtype=float).reshape(-1, len(self.parameters))
        values = np.asarray(self.values, dtype=float)
        if values.ndim == 2:
            values = values[:, :, None]
        self.values = values
        n = values.shape[0]
        if values.shape[1] != len(self.points):
            raise ValueError(f"values have {values.shape[1]} points, the batch has {len(self.points)}")
        if len(self.callpaths) != n or len(self.metrics) != n:
            raise ValueError("callpaths and metrics must name every series")
        if self.constraints is not None and len(self.constraints) != n:
            raise ValueError("constraints must be given for every series (None where there is none)")

    def __len__(self) -> int:
        return self.values.shape[0]

    def reduced(self, measure: str = "mean") -> np.ndarray:
        """(series, points) values with repetitions reduced by ``measure``."""
        return reduce_repetitions(self.values, measure)

    @classmethod
    def from_experiment(cls, experiment: Experiment, metrics: Sequence[str] | None = None,
                        callpaths: Sequence[str] | None = None,
                        constraints: dict[str, Constraint] | None = None) -> SeriesBatch:
        """Every (call path, metric) of ``experiment`` — or the chosen ones — as one batch."""
        metric_names = list(metrics) if metrics else experiment.metric_names
        every = experiment.callpaths.paths()
        if callpaths is None:
            cp_index: list[int] | slice = slice(None)
            paths = every
        else:
            cp_index = [experiment.callpaths.index(c) for c in callpaths]
            paths = [every[i] for i in cp_index]
        reps = max(experiment.measurements[m].shape[2] for m in metric_names)
        blocks = []
        for m in metric_names:
            arr = experiment.measurements[m][cp_index]
            if arr.shape[2] < reps:
                pad = np.full((*arr.shape[:2], reps - arr.shape[2]), np.nan)
                arr = np.concatenate([arr, pad], axis=2)
            blocks.append(arr)
        values = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=0)  # one metric: no copy
        cps = paths * len(metric_names)
        mets = [m for m in metric_names for _ in paths]
        cons = None
        if constraints:
            cons = [constraints.get(c) for c in cps]
        return cls(experiment.parameters, experiment.points, values, cps, mets, cons, experiment)
