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
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from pmkit.experiment import near_paths, paths_ending
from pmkit.intervals import DEFAULT_LEVEL, Interval, Uncertainty
from pmkit.pmnf import Function

if TYPE_CHECKING:
    from pmkit.modelcolumns import ModelColumns


RELIABLE_POINTS = 5
"""The refinement method's guidance: five points for a reliable model (Extra-P's: five values per parameter)."""


def few_points_note(points: int, constant: bool) -> str | None:
    """The one note on a model of fewer than :data:`RELIABLE_POINTS` points, None from there on: ``only 2
    points: too few to tell growth from noise, constant model (mean)`` where so few gave the constant
    (``constant``), else ``only 4 points: the refinement method needs 5 for a reliable model``."""
    if not 0 < points < RELIABLE_POINTS:
        return None
    why = ("too few to tell growth from noise, constant model (mean)" if constant
           else f"the refinement method needs {RELIABLE_POINTS} for a reliable model")
    return f"only {points} point{'' if points == 1 else 's'}: {why}"


ONE_POINT = few_points_note(1, constant=True)
"""The note on a model of one run's data, which a view whose header says ``one run: nothing to
extrapolate`` (:data:`pmkit.scaling.ONE_RUN`) need not repeat."""


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
    uncertainty: Uncertainty | None = field(default=None, compare=False, repr=False)
    """The alternatives behind :meth:`predict`'s interval (shared by the model set), or None."""
    row: int = field(default=-1, compare=False, repr=False)
    """This model's row in ``uncertainty``."""

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

    def predict(self, point: Mapping[str, float] | Sequence[float] | float, level: float = DEFAULT_LEVEL) -> Interval:
        """The model's prediction at ``point`` with its ``level`` interval: the hypotheses the data cannot
        reject, each refitted (and the repetitions' scatter where there are several), predict between
        ``low`` and ``high`` (see :mod:`pmkit.intervals`).  NaN bounds where the modeler gives none.  A
        segmented model's value is its segment's there; its interval is the last segment's (the law
        beyond the measured range), fitted on that segment's points, so a point in an earlier segment
        gets NaN bounds."""
        if self.function is None:
            return Interval(float("nan"), float("nan"), float("nan"), level)
        coords = _coordinates(point, self.function.parameters)
        value = float(self.evaluate(dict(zip(self.function.parameters, coords, strict=True))))
        if self.uncertainty is None or self.row < 0 or (
                self.segmented and not in_last_segment(self.segments, self.change_point, coords,
                                                           self.function.parameters)):
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
            "segments": [segment.to_json() for segment in self.segments] if self.segmented else None,
            "change_point": self.change_point.to_json() if self.segmented and self.change_point else None,
        }


def in_last_segment(segments: Sequence[Segment], change: ChangePoint | None, coords: Sequence[float],
                        parameters: Sequence[str]) -> bool:
    """Whether the point ``coords`` (in ``parameters``' order) lies in the last of ``segments``, where a
    segmented model's prediction interval holds (True for a model of one law)."""
    if len(segments) < 2 or change is None:
        return True
    return bool(segments[-1].holds(float(coords[list(parameters).index(change.parameter)])))


def _coordinates(point: Mapping[str, float] | Sequence[float] | float, parameters: Sequence[str]) -> list[float]:
    """A point as its coordinates in ``parameters``' order (a mapping by name, a sequence, or one number).

    A point that does not fit the parameters — a missing name, the wrong count of values, a value that
    is not a positive number — is a ValueError naming the parameters, not an error from deep inside the
    evaluation (``zip() argument 2 is longer``) or a prediction of -inf with a numpy warning."""
    names = ", ".join(parameters)
    if isinstance(point, Mapping):
        missing = [p for p in parameters if p not in point]
        if missing:
            given = ", ".join(map(str, point)) or "nothing"
            raise ValueError(f"the point has no value for {', '.join(missing)} (it names {given}; "
                             f"the model's parameters: {names})")
        values = [point[p] for p in parameters]
    elif isinstance(point, (int, float, np.number)):
        values = [point]
    elif isinstance(point, (Sequence, np.ndarray)) and not isinstance(point, (str, bytes)):
        values = list(np.ravel(point)) if isinstance(point, np.ndarray) else list(point)
    else:
        raise ValueError(f"a point is a mapping of {names} to numbers, a sequence or one number; "
                         f"got {type(point).__name__}")
    if len(values) != len(parameters):
        raise ValueError(f"the point has {len(values)} value(s) for {len(parameters)} parameter(s) ({names})")
    coords = []
    for name, value in zip(parameters, values, strict=True):
        try:
            coords.append(parameter_value(value))
        except ValueError as exc:
            if str(exc) == NOT_A_NUMBER:
                raise ValueError(f"the point's value for {name} {NOT_A_NUMBER}: {value!r}") from None
            raise ValueError(f"the point's value for {name} {exc} (a law holds for {names} > 0), "
                             f"got {value!r}") from None
    return coords


NOT_A_NUMBER = "is not a number"
NOT_POSITIVE = "must be a positive number"


def parameter_value(value: object) -> float:
    """``value`` as a parameter's value in a point: a finite positive number, as a law holds for positive
    parameters only (``log2(0)``, ``(-8)^(2/3)``: -inf, NaN and numpy warnings).  ValueError
    :data:`NOT_A_NUMBER` or :data:`NOT_POSITIVE` otherwise; the SDK's targets, ``--at`` and
    :meth:`Model.predict`'s points all pass here and add where the value came from."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(NOT_A_NUMBER) from None
    if not (math.isfinite(number) and number > 0):
        raise ValueError(NOT_POSITIVE)
    return number


class ModelSet(Sequence[Model]):
    """The models of many series, in series order.

    Made from Model objects (``ModelSet(parameters, [Model(...), ...])``, as a third-party modeler
    returns them), from columns (``ModelSet(parameters, columns=ModelColumns(...))``, as the built-in
    modelers do: a Model is built only when one is asked for), or lazily from ``make(i)``.
    :attr:`columns` gives every model as columns whichever way the set was made (built from the
    objects on first use); the scaling analysis and the writers read those, never the objects.
    :attr:`uncertainty` (the columns', or given) holds every series' alternatives: :meth:`predict`
    gives all predictions with their intervals at once.  A model is found by position (``models[0]``) or by
    call path (``models["main->solve"]``, ``models["MPI_Gather", "time"]``: see :meth:`__getitem__`).
    """

    def __init__(self, parameters: Sequence[str], models: Sequence[Model] | None = None, *,
                 count: int | None = None, make: Callable[[int], Model] | None = None,
                 modeler: str = "", columns: ModelColumns | None = None,
                 uncertainty: Uncertainty | None = None) -> None:
        self.parameters = tuple(parameters)
        self._columns = columns
        self._make: Callable[[int], Model] | None = None
        self._uncertainty = uncertainty
        if models is not None:
            self._cache: list[Model | None] = list(models)
        elif columns is not None:
            self._cache = [None] * len(columns)
            self._make = columns.model
            modeler = modeler or columns.modeler
        else:
            if count is None or make is None:
                raise ValueError("a lazy ModelSet needs both count and make, or columns")
            self._cache = [None] * count
            self._make = make
        self.modeler = modeler
        self._index: dict[tuple[str, str], int] | None = None
        self._metrics: dict[str, list[str]] | None = None

    def __repr__(self) -> str:
        """``<ModelSet 39 models of p by refining>``: what a notebook shows, without building a model."""
        by = f" by {self.modeler}" if self.modeler else ""
        count = f"{len(self)} model" + ("" if len(self) == 1 else "s")
        return f"<ModelSet {count} of {', '.join(self.parameters) or 'no parameter'}{by}>"

    def __len__(self) -> int:
        return len(self._cache)

    @overload
    def __getitem__(self, i: int) -> Model: ...
    @overload
    def __getitem__(self, i: slice) -> list[Model]: ...
    @overload
    def __getitem__(self, i: str | tuple[str, str]) -> Model: ...

    def __getitem__(self, i):  # type: ignore[override]
        """The model at position ``i``, the models of a slice, or by call path: ``models["main->solve"]`` (a call
        path modeled in one metric) or ``models["main->solve", "time"]``, the path whole or the unique end of one
        (``models["MPI_Gather"]``, as ``pmkit show --callpath`` takes it); a name without a model is a
        ``KeyError`` saying why and naming the near ones."""
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if isinstance(i, str | tuple):
            return self._named(i)
        if i < 0:
            i += len(self)
        model = self._cache[i]
        if model is None:
            if self._make is None:
                raise IndexError("model index out of range")
            model = self._cache[i] = self._make(i)
        return model

    def __iter__(self) -> Iterator[Model]:
        for i in range(len(self)):
            yield self[i]

    @property
    def columns(self) -> ModelColumns:
        """Every model as columns (:class:`~pmkit.modelcolumns.ModelColumns`); built from the objects
        the first time for a set made of objects."""
        if self._columns is None:
            from pmkit.modelcolumns import ModelColumns

            self._columns = ModelColumns.from_models(self.parameters, list(self))
        return self._columns

    def position(self, callpath: str, metric: str) -> int | None:
        """The position of the model of (call path, metric), or None (read from the columns when the
        set was made from them, without building a model)."""
        return self._positions().get((callpath, metric))

    def _positions(self) -> dict[tuple[str, str], int]:
        """Each (call path, metric)'s position, built on first use."""
        if self._index is None:
            if self._columns is not None:
                pairs: Iterator[tuple[str, str]] = zip(self._columns.callpaths, self._columns.metrics, strict=True)
            else:
                pairs = ((m.callpath, m.metric) for m in self)
            self._index = {pair: i for i, pair in enumerate(pairs)}
        return self._index

    def _named(self, key: str | tuple[str, str]) -> Model:
        """``models[callpath]`` or ``models[callpath, metric]`` (see :meth:`__getitem__`)."""
        callpath, metric = (key, None) if isinstance(key, str) else key
        if self._metrics is None:
            self._metrics = {}
            for path, name in self._positions():
                self._metrics.setdefault(path, []).append(name)
        if callpath not in self._metrics:  # the unique end of one, as ``pmkit show --callpath`` takes it
            paths = list(self._metrics)
            ending = [paths[i] for i in paths_ending(paths, callpath)]
            if len(ending) != 1:
                near = ending or near_paths(paths, callpath)
                hint = f"; {'which of' if ending else 'did you mean'} {', '.join(map(repr, near[:5]))}?" if near else ""
                raise KeyError(f"no model of call path {callpath!r}{hint}")
            callpath = ending[0]
        metrics = self._metrics[callpath] if metric is None else [metric]
        if len(metrics) != 1:
            raise KeyError(f"call path {callpath!r} has models of {len(metrics)} metrics, "
                           f"{', '.join(map(repr, metrics))}: models[{callpath!r}, {metrics[0]!r}] takes one")
        i = self.position(callpath, metrics[0])
        if i is None:
            raise KeyError(f"no model of call path {callpath!r} and metric {metrics[0]!r}; its metrics: "
                           f"{', '.join(map(repr, self._metrics[callpath]))}")
        return self[i]

    def get(self, callpath: str, metric: str) -> Model | None:
        """The model of (call path, metric), or None."""
        i = self.position(callpath, metric)
        return None if i is None else self[i]

    def count_noted(self, prefix: str, metric: str | None = None) -> int:
        """How many models (of ``metric``) carry a note beginning with ``prefix`` (``"hedge:"``: the laws the
        ``hedge`` option chose); from the columns' note groups where the set has columns, no model built."""
        if self._columns is None:
            return sum(any(n.startswith(prefix) for n in m.notes) for m in self if metric is None or m.metric == metric)
        columns = self._columns
        noted = np.array([any(n.startswith(prefix) for n in group) for group in columns.note_groups] or [False])
        groups = columns.note_group if metric is None else columns.note_group[columns.rows_of_metric(metric)]
        return int(noted[groups].sum())

    def for_metric(self, metric: str) -> list[Model]:
        """The models of ``metric``, in series order."""
        return [m for m in self if m.metric == metric]

    def modelers(self, metric: str | None = None) -> list[str]:
        """The names of the modelers that made the models (of ``metric``), sorted."""
        if self._columns is None:
            return sorted({m.modeler for m in self if m.modeler and (metric is None or m.metric == metric)})
        columns = self._columns
        return columns.modelers(None if metric is None else columns.rows_of_metric(metric))

    @property
    def options(self) -> Mapping[str, Any]:
        """The modeler options the models were made with (``{"hedge": "auto", ...}``): the columns' one set, or
        the first model's; empty for an empty set."""
        if self._columns is not None:
            return self._columns.options
        return self[0].options if len(self) else {}

    @property
    def uncertainty(self) -> Uncertainty | None:
        """The alternatives behind the intervals: given to the set, or its columns' (None: no intervals)."""
        if self._uncertainty is not None:
            return self._uncertainty
        return None if self._columns is None else self._columns.uncertainty

    def predict(self, point: Mapping[str, float] | Sequence[float] | float, level: float = DEFAULT_LEVEL,
                rows: np.ndarray | None = None, keep: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every model's (or the models at positions ``rows``') prediction at ``point`` and its ``level``
        interval, as arrays (value, low, high) in series order; NaN where a model has no function, NaN
        bounds where it has no interval (a segmented model's before its last segment).  ``keep=False``: the
        alternatives built for the intervals are dropped once predicted, a chunk at a time (the same bounds, in
        a chunk's memory rather than every series' table; see :meth:`Uncertainty.predict`)."""
        coords = _coordinates(point, self.parameters)
        value = np.asarray(self.columns.evaluate(dict(zip(self.parameters, coords, strict=True))), dtype=float)
        if rows is not None:
            rows = np.asarray(rows, dtype=np.int64)
            value = value[rows]
        count = len(value)
        low, high = np.full(count, np.nan), np.full(count, np.nan)
        if self.uncertainty is not None:
            _, low, high = self.uncertainty.predict(coords, level, rows, keep=keep)
        elif self._columns is None and any(m.uncertainty is not None for m in self):
            chosen = range(len(self)) if rows is None else rows.tolist()
            found = [self[int(i)].predict(coords, level) for i in chosen]
            low, high = np.array([f.low for f in found]), np.array([f.high for f in found])
        known = np.isfinite(low) & np.isfinite(high) & np.isfinite(value)
        segments = {} if self._columns is None else self._columns.segments
        if segments:  # a segmented model's interval is its last segment's (see Model.predict)
            position = np.arange(count) if rows is None else rows
            at = {int(r): k for k, r in enumerate(position.tolist())}
            for i, (pieces, change) in segments.items():
                if i in at and not in_last_segment(pieces, change, coords, self.parameters):
                    known[at[i]] = False
        low = np.where(known, np.fmin(low, value), np.nan)
        high = np.where(known, np.fmax(high, value), np.nan)
        return value, low, high
