"""Models: a PMNF function fitted to one series (call path × metric), with its quality figures.

Modelers return a :class:`ModelSet`, which may build its :class:`Model` objects lazily so that a
batched modeler can fit 100,000 series without creating 100,000 Python objects up front.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from pmkit.intervals import DEFAULT_LEVEL, Interval, Uncertainty
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
class Model:
    """The model of one series: which call path and metric, the function, how good, who made it.

    ``notes`` say what shaped the model (``"constant by taint prior"``, ``"2 of 5 points are NaN"``).
    ``function`` is None when no model could be made; ``notes`` then say why.  ``outliers`` are the
    points the modeler left out as outliers (their coordinates; the quality figures are over the
    other points), so that views can mark them.
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
    uncertainty: Uncertainty | None = field(default=None, compare=False, repr=False)
    """The alternatives behind :meth:`predict`'s interval (shared by the model set), or None."""
    row: int = field(default=-1, compare=False, repr=False)
    """This model's row in ``uncertainty``."""

    @property
    def ok(self) -> bool:
        """Whether the model has a function (a model without one carries notes saying why)."""
        return self.function is not None

    def predict(self, point: Mapping[str, float] | Sequence[float] | float, level: float = DEFAULT_LEVEL) -> Interval:
        """The model's prediction at ``point`` with its ``level`` interval: the hypotheses the data cannot
        reject, each refitted (and the repetitions' scatter where there are several), predict between
        ``low`` and ``high`` (see :mod:`pmkit.intervals`).  NaN bounds where the modeler gives none."""
        if self.function is None:
            return Interval(float("nan"), float("nan"), float("nan"), level)
        coords = _coordinates(point, self.function.parameters)
        value = float(self.function.evaluate(dict(zip(self.function.parameters, coords, strict=True))))
        if self.uncertainty is None or self.row < 0:
            return Interval(value, float("nan"), float("nan"), level)
        found = self.uncertainty.interval(self.row, coords, level)
        if not found.known:
            return Interval(value, float("nan"), float("nan"), level)
        return Interval(value, min(found.low, value), max(found.high, value), level)

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
        }


def _coordinates(point: Mapping[str, float] | Sequence[float] | float, parameters: Sequence[str]) -> list[float]:
    """A point as its coordinates in ``parameters``' order (a mapping by name, a sequence, or one number)."""
    if isinstance(point, Mapping):
        missing = [p for p in parameters if p not in point]
        if missing:
            raise ValueError(f"the point has no value for {missing}")
        return [float(point[p]) for p in parameters]
    if isinstance(point, (int, float)):
        return [float(point)]
    return [float(v) for v in point]


class ModelSet(Sequence[Model]):
    """The models of many series, in series order; built lazily from ``make(i)`` when given.

    ``uncertainty`` (from the modeler, or None) holds every series' alternatives: :meth:`predict` gives
    all predictions with their intervals at once.
    """

    def __init__(self, parameters: Sequence[str], models: Sequence[Model] | None = None, *,
                 count: int | None = None, make: Callable[[int], Model] | None = None,
                 modeler: str = "", uncertainty: Uncertainty | None = None) -> None:
        self.parameters = tuple(parameters)
        self.modeler = modeler
        self.uncertainty = uncertainty
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

    def predict(self, point: Mapping[str, float] | Sequence[float] | float, level: float = DEFAULT_LEVEL
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every model's prediction at ``point`` and its ``level`` interval, as arrays (value, low, high) in
        series order; NaN where a model has no function, NaN bounds where it has no interval."""
        coords = _coordinates(point, self.parameters)
        count = len(self)
        value = np.full(count, np.nan)
        for i, model in enumerate(self):
            if model.function is not None:
                value[i] = float(model.function.evaluate(dict(zip(self.parameters, coords, strict=True))))
        low, high = np.full(count, np.nan), np.full(count, np.nan)
        if self.uncertainty is not None:
            _, low, high = self.uncertainty.predict(coords, level)
        elif count:
            bounds = np.array([[m.predict(coords, level).low, m.predict(coords, level).high] for m in self])
            low, high = bounds[:, 0], bounds[:, 1]
        known = np.isfinite(low) & np.isfinite(high) & np.isfinite(value)
        low = np.where(known, np.fmin(low, value), np.nan)
        high = np.where(known, np.fmax(high, value), np.nan)
        return value, low, high
