"""Models: a PMNF function fitted to one series (call path × metric), with its quality figures.

Modelers return a :class:`ModelSet`, which may build its :class:`Model` objects lazily so that a
batched modeler can fit 100,000 series without creating 100,000 Python objects up front.

A *segmented* model follows one law up to a change point in one parameter and another beyond it
(a message crossing MPI's eager limit, a working set leaving the cache).  It keeps its
:class:`Segment` s and the :class:`ChangePoint`; ``Model.function`` stays a plain PMNF function —
the last segment's, the law beyond the largest measured values that extrapolation uses — so every
consumer that knows nothing of segments keeps working, and :meth:`Model.function_at` gives the law
that holds at a given point.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from pmkit.pmnf import Function


@dataclass(frozen=True)
class Quality:
    """How well a model fits its data: RSS, SMAPE (percent), adjusted R², cross-validated SMAPE."""

    rss: float = float("nan")
    smape: float = float("nan")
    adjusted_r2: float = float("nan")
    cv_smape: float | None = None

    def to_json(self) -> dict[str, float | None]:
        """The figures as JSON values; a document made by :mod:`pmkit.schema` turns NaN into null."""
        return {"rss": self.rss, "smape": self.smape, "adjusted_r2": self.adjusted_r2, "cv_smape": self.cv_smape}


@dataclass(frozen=True)
class ChangePoint:
    """Where a segmented model's law changes: ``parameter`` ≈ ``value``, within [``low``, ``high``].

    ``value`` is the best estimate (where the two laws meet, or between the measured points that
    separate them); ``low`` and ``high`` bound the values the data cannot tell apart from it.
    """

    parameter: str
    value: float
    low: float
    high: float

    def to_json(self) -> dict[str, Any]:
        return {"parameter": self.parameter, "value": self.value, "low": self.low,
                "high": self.high}


@dataclass(frozen=True)
class Segment:
    """One law of a segmented model: ``function`` holds for ``start ≤ parameter < end``.

    ``start`` is ``-inf`` for the first segment and ``end`` ``+inf`` for the last; ``measured`` is
    the smallest and the largest measured value of the parameter the law was fitted on, and
    ``quality`` its fit there.
    """

    function: Function
    start: float
    end: float
    measured: tuple[float, float]
    quality: Quality = field(default_factory=Quality)

    def holds(self, value: float | np.ndarray) -> bool | np.ndarray:
        """Whether this segment's law holds at ``value`` of the change parameter."""
        return (self.start <= value) & (value < self.end)

    def to_json(self) -> dict[str, Any]:
        return {"function": self.function.to_json(), "text": self.function.extrap_text(),
                "pretty": self.function.pretty_text(), "from": self.start, "to": self.end,
                "measured": [float(self.measured[0]), float(self.measured[1])], "quality": self.quality.to_json()}


@dataclass(frozen=True)
class Model:
    """The model of one series: which call path and metric, the function, how good, who made it.

    ``notes`` say what shaped the model (``"constant by taint prior"``, ``"2 of 5 points are NaN"``).
    ``function`` is None when no model could be made; ``notes`` then say why.  ``outliers`` are the
    points the modeler left out as outliers (their coordinates; the quality figures are over the
    other points), so that views can mark them.  A segmented model has two or more ``segments`` (in
    order of the change parameter) and its ``change_point``; ``function`` is then the last
    segment's, and :meth:`function_at` gives the law at a point.
    """

    callpath: str
    metric: str
    function: Function | None
    quality: Quality = field(default_factory=Quality)
    modeler: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    n_points: int = 0
    outliers: tuple[Mapping[str, float], ...] = ()
    segments: tuple[Segment, ...] = ()
    change_point: ChangePoint | None = None

    @property
    def ok(self) -> bool:
        """Whether the model has a function (a model without one carries notes saying why)."""
        return self.function is not None

    @property
    def segmented(self) -> bool:
        """Whether the law changes at a change point (two or more segments)."""
        return len(self.segments) > 1 and self.change_point is not None

    def _change_values(self, point: Any) -> tuple[np.ndarray, bool]:
        """The change parameter's value(s) at ``point`` (any form :meth:`Function.evaluate` takes)."""
        assert self.function is not None and self.change_point is not None
        parameters = self.function.parameters
        name = self.change_point.parameter
        if isinstance(point, Mapping):
            value = point[name]
            return np.atleast_1d(np.asarray(value, dtype=float)), np.ndim(value) == 0
        arr = np.asarray(point, dtype=float)
        if len(parameters) == 1:
            return np.atleast_1d(arr).reshape(-1), arr.ndim == 0
        if arr.ndim == 1:
            return arr[parameters.index(name)].reshape(1), True
        return arr[:, parameters.index(name)], False

    def function_at(self, point: Any) -> Function | None:
        """The law that holds at one ``point`` (a value, a sequence in parameter order, or a mapping):
        the segment whose range holds the change parameter's value, else ``function``."""
        if not self.segmented:
            return self.function
        values, _ = self._change_values(point)
        value = float(values[0])
        for segment in self.segments:
            if segment.holds(value):
                return segment.function
        return self.function

    def evaluate(self, points: Any) -> np.ndarray | float:
        """The model's value at ``points`` (as :meth:`Function.evaluate` takes them), each point by the
        segment that holds there; NaN when there is no model."""
        if self.function is None:
            return math.nan
        if not self.segmented:
            return self.function.evaluate(points)
        values, scalar = self._change_values(points)
        out = np.full(values.shape, np.nan)
        for segment in self.segments:
            inside = np.asarray(segment.holds(values), dtype=bool)
            if inside.any():
                out = np.where(inside, np.asarray(segment.function.evaluate(points), dtype=float), out)
        return float(out[0]) if scalar else out

    def to_json(self) -> dict[str, Any]:
        """One entry of the ``models`` list of pmkit's JSON schema (see README)."""
        return {
            "callpath": self.callpath,
            "metric": self.metric,
            "modeler": self.modeler,
            "function": None if self.function is None else self.function.to_json(),
            "text": None if self.function is None else self.function.extrap_text(),
            "pretty": None if self.function is None else self.function.pretty_text(),
            "quality": self.quality.to_json(),
            "points": self.n_points,
            "notes": list(self.notes),
            "outliers": [dict(point) for point in self.outliers],
            "segments": [segment.to_json() for segment in self.segments] if self.segmented else None,
            "change_point": self.change_point.to_json() if self.segmented and self.change_point else None,
        }


class ModelSet(Sequence[Model]):
    """The models of many series, in series order; built lazily from ``make(i)`` when given."""

    def __init__(self, parameters: Sequence[str], models: Sequence[Model] | None = None, *,
                 count: int | None = None, make: Callable[[int], Model] | None = None,
                 modeler: str = "") -> None:
        self.parameters = tuple(parameters)
        self.modeler = modeler
        if models is not None:
            self._cache: list[Model | None] = list(models)
            self._make = None
        else:
            if count is None or make is None:
                raise ValueError("a lazy ModelSet needs both count and make")
            self._cache = [None] * count
            self._make = make
        self._index: dict[tuple[str, str], int] | None = None

    def __len__(self) -> int:
        return len(self._cache)

    @overload
    def __getitem__(self, i: int) -> Model: ...
    @overload
    def __getitem__(self, i: slice) -> list[Model]: ...

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        model = self._cache[i]
        if model is None:
            assert self._make is not None
            model = self._cache[i] = self._make(i)
        return model

    def __iter__(self) -> Iterator[Model]:
        for i in range(len(self)):
            yield self[i]

    def get(self, callpath: str, metric: str) -> Model | None:
        """The model of (call path, metric), or None."""
        if self._index is None:
            self._index = {(m.callpath, m.metric): i for i, m in enumerate(self)}
        i = self._index.get((callpath, metric))
        return None if i is None else self[i]

    def for_metric(self, metric: str) -> list[Model]:
        """The models of ``metric``, in series order."""
        return [m for m in self if m.metric == metric]
