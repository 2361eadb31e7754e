"""The data model: experiments (profiles with repetitions and per-location values) and event tables.

An :class:`Experiment` holds, per metric, a float array of shape callpaths × points × repetitions,
NaN where a repetition (or a whole call path at a point) is missing — missing is explicit, never
zero.  Per-location values (per process or thread) are kept per point because the number of
locations changes with the scale.  Hardware counters are metrics like any other.  Traces give an
:class:`EventTable`: one row per event instance, columnar.

Readers build experiments with :class:`ExperimentBuilder`, which collects values in any order and
validates them on :meth:`ExperimentBuilder.build`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from pmkit.errors import InputError

if TYPE_CHECKING:
    from pmkit.models import ModelSet

CALLPATH_SEPARATOR = "->"


@dataclass(frozen=True)
class Metric:
    """A measured quantity: ``time`` in seconds, a hardware counter, bytes sent, ..."""

    name: str
    unit: str = ""
    inclusive: bool = False
    description: str = ""


@dataclass(frozen=True)
class Callpath:
    """One node of the call tree; ``path`` is its string form ``main->solve->MPI_Allreduce``."""

    index: int
    name: str
    parent: int | None
    path: str
    depth: int
    mangled_name: str | None = None


class CallTree(Sequence[Callpath]):
    """The call paths of an experiment as a tree, indexable by position and by path string.

    Its items are :class:`Callpath` objects, not strings: ``tree.paths()`` gives the strings
    (``main->solve``), ``tree["main->solve"]`` and ``tree[i]`` the nodes, ``"main->solve" in tree``
    tests a path string.
    """

    def __init__(self) -> None:
        self._nodes: list[Callpath] = []
        self._by_path: dict[str, int] = {}
        self._children: list[list[int]] = []

    def add(self, path: str | Sequence[str], mangled_name: str | None = None) -> int:
        """Add a call path (and any missing ancestors); returns its index.  Idempotent."""
        names = path.split(CALLPATH_SEPARATOR) if isinstance(path, str) else list(path)
        if not names or any(n == "" for n in names):
            raise ValueError(f"empty region name in call path {path!r}")
        parent: int | None = None
        for depth, _ in enumerate(names):
            key = CALLPATH_SEPARATOR.join(names[: depth + 1])
            index = self._by_path.get(key)
            if index is None:
                index = len(self._nodes)
                is_leaf = depth == len(names) - 1
                node = Callpath(index, names[depth], parent, key, depth, mangled_name if is_leaf else None)
                self._nodes.append(node)
                self._children.append([])
                self._by_path[key] = index
                if parent is not None:
                    self._children[parent].append(index)
            parent = index
        assert parent is not None
        return parent

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return self._nodes[self._by_path[key]]
        return self._nodes[key]

    def __len__(self) -> int:
        return len(self._nodes)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._by_path
        return item in self._nodes

    def index(self, path: str) -> int:  # type: ignore[override]
        """Position of the call path with string form ``path``; KeyError if absent."""
        return self._by_path[path]

    def children(self, index: int) -> list[int]:
        """Positions of the direct children of the node at ``index``."""
        return list(self._children[index])

    def roots(self) -> list[int]:
        """Positions of the nodes without a parent."""
        return [n.index for n in self._nodes if n.parent is None]

    def paths(self) -> list[str]:
        """Every call path's string form, in position order."""
        return [n.path for n in self._nodes]


@dataclass
class Provenance:
    """Where an experiment came from and what was done on the way."""

    sources: list[str] = field(default_factory=list)
    reader: str = ""
    aggregation: str = ""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class Experiment:
    """Measurements of call paths × metrics at points of a parameter space, with repetitions.

    ``measurements[metric]`` has shape (len(callpaths), len(points), repetitions); NaN marks a
    missing value.  ``locations[metric][point]``, when present, has shape
    (len(callpaths), repetitions, locations at that point).  ``stored_models`` holds models that
    came with the input (the model sets of an Extra-P ``.extra-p`` file), by model-set name, so
    that they can be shown and compared beside pmkit's own.  ``callpaths`` is a :class:`CallTree`
    of :class:`Callpath` objects (``callpaths.paths()`` gives the strings), whose positions index
    the first axis of every measurement array.
    """

    parameters: tuple[str, ...]
    points: np.ndarray
    callpaths: CallTree
    metrics: tuple[Metric, ...]
    measurements: dict[str, np.ndarray]
    locations: dict[str, list[np.ndarray | None]] | None = None
    provenance: Provenance = field(default_factory=Provenance)
    events: EventTable | None = None
    stored_models: dict[str, ModelSet] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.parameters = tuple(self.parameters)
        self.points = np.asarray(self.points, dtype=float).reshape(-1, len(self.parameters))
        self.metrics = tuple(self.metrics)
        self.validate()

    def validate(self) -> None:
        """Check shapes and names agree; raises ValueError naming the inconsistency."""
        if len(set(self.parameters)) != len(self.parameters):
            raise ValueError(f"duplicate parameter names {list(self.parameters)}")
        names = [m.name for m in self.metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate metric names {names}")
        if set(names) != set(self.measurements):
            raise ValueError(f"metrics {names} do not match measured metrics {sorted(self.measurements)}")
        if len({tuple(p) for p in self.points.tolist()}) != len(self.points):
            raise ValueError("points are not distinct")
        for name, values in self.measurements.items():
            if values.ndim != 3 or values.shape[:2] != (len(self.callpaths), len(self.points)):
                raise ValueError(f"measurements of metric {name!r} have shape {values.shape}, expected "
                                 f"({len(self.callpaths)}, {len(self.points)}, repetitions)")

    def metric(self, name: str) -> Metric:
        """The :class:`Metric` named ``name`` (its unit, inclusiveness, description); KeyError if absent."""
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(f"no metric {name!r}; the experiment has {[m.name for m in self.metrics]}")

    @property
    def metric_names(self) -> list[str]:
        """The metrics' names, in order."""
        return [m.name for m in self.metrics]

    def values(self, metric: str, measure: str = "mean") -> np.ndarray:
        """Repetitions reduced to one value per call path and point (NaN where none were measured)."""
        return reduce_repetitions(self.measurements[metric], measure)

    def point_label(self, index: int) -> str:
        """The point at ``index`` as text, ``p=64, size=30``."""
        return ", ".join(f"{p}={_num(v)}" for p, v in zip(self.parameters, self.points[index], strict=True))

    def __repr__(self) -> str:
        reps = max((v.shape[2] for v in self.measurements.values()), default=0)
        return (f"<Experiment parameters={list(self.parameters)} points={len(self.points)} "
                f"callpaths={len(self.callpaths)} metrics={self.metric_names} repetitions≤{reps}>")

    def __str__(self) -> str:
        lines = [repr(self)]
        for i in range(min(len(self.points), 8)):
            lines.append(f"  point {i}: {self.point_label(i)}")
        if len(self.points) > 8:
            lines.append(f"  ... {len(self.points) - 8} more points")
        for cp in list(self.callpaths)[:8]:
            lines.append(f"  callpath: {cp.path}")
        if len(self.callpaths) > 8:
            lines.append(f"  ... {len(self.callpaths) - 8} more call paths")
        return "\n".join(lines)


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


MEASURES = ("mean", "median", "min", "max")


def reduce_repetitions(values: np.ndarray, measure: str = "mean") -> np.ndarray:
    """Reduce the last axis (repetitions) by ``mean``, ``median``, ``min`` or ``max``, ignoring NaN.

    Where every repetition is NaN the result is NaN (no warning).
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}")
    values = np.asarray(values, dtype=float)
    if values.shape[-1] == 0:
        return np.full(values.shape[:-1], np.nan)
    valid = ~np.isnan(values)
    any_valid = valid.any(axis=-1)
    if valid.all():
        return {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}[measure](values, axis=-1)
    with np.errstate(all="ignore"):
        if measure == "mean":
            out = np.nansum(values, axis=-1) / np.maximum(valid.sum(axis=-1), 1)
        elif measure == "min":
            out = np.where(valid, values, np.inf).min(axis=-1)
        elif measure == "max":
            out = np.where(valid, values, -np.inf).max(axis=-1)
        else:
            filled = np.where(any_valid[..., None], values, 0.0)
            out = np.nanmedian(filled, axis=-1)
    return np.where(any_valid, out, np.nan)


class ExperimentBuilder:
    """Collects values from a reader in any order and builds a validated :class:`Experiment`.

    ``source`` names the file being read so that validation errors point at it.
    """

    def __init__(self, parameters: Sequence[str], source: str | None = None) -> None:
        params = tuple(str(p) for p in parameters)
        if not params:
            raise InputError(source, "no parameters are defined")
        if len(set(params)) != len(params):
            raise InputError(source, f"parameter names repeat: {list(params)}")
        self.parameters = params
        self.source = source
        self.callpaths = CallTree()
        self._points: dict[tuple[float, ...], int] = {}
        self._metrics: dict[str, Metric] = {}
        self._values: dict[tuple[str, int, int], list[float]] = {}
        self._locations: dict[tuple[str, int, int], list[np.ndarray]] = {}
        self.provenance = Provenance(sources=[source] if source else [])

    def add_point(self, coordinates: Sequence[float], *, line: int | None = None) -> int:
        """Register a point; returns its index.  The coordinate count must match the parameters."""
        coords = tuple(float(c) for c in coordinates)
        if len(coords) != len(self.parameters):
            raise InputError(self.source, f"point {list(coords)} has {len(coords)} coordinates but there "
                             f"are {len(self.parameters)} parameters {list(self.parameters)}", line=line)
        if any(not np.isfinite(c) for c in coords):
            raise InputError(self.source, f"point {list(coords)} has a coordinate that is not a finite number",
                             line=line)
        index = self._points.get(coords)
        if index is None:
            index = len(self._points)
            self._points[coords] = index
        return index

    def add_metric(self, name: str, unit: str = "", inclusive: bool = False, description: str = "") -> str:
        """Declare a metric with its ``unit`` (``"sec"``, ``"bytes"``), whether its values are ``inclusive``
        (with callees) and a ``description``; returns ``name``.

        Call it before the first :meth:`add_values` of the metric: a metric first met in
        ``add_values`` is declared without a unit, and a later ``add_metric`` does not change it.
        """
        if name not in self._metrics:
            self._metrics[name] = Metric(name, unit, inclusive, description)
        return name

    def add_values(self, callpath: str | Sequence[str], metric: str, point: Sequence[float] | int,
                   values: Iterable[float], *, line: int | None = None) -> None:
        """Append repetition values for (call path, metric, point)."""
        cp = self.callpaths.add(callpath)
        self.add_metric(metric)
        pt = point if isinstance(point, int) else self.add_point(point, line=line)
        vals = [float(v) for v in values]
        self._values.setdefault((metric, cp, pt), []).extend(vals)

    def add_locations(self, callpath: str | Sequence[str], metric: str, point: Sequence[float] | int,
                      per_location: np.ndarray) -> None:
        """Append one repetition's per-location values for (call path, metric, point)."""
        cp = self.callpaths.add(callpath)
        self.add_metric(metric)
        pt = point if isinstance(point, int) else self.add_point(point)
        self._locations.setdefault((metric, cp, pt), []).append(np.asarray(per_location, dtype=float))

    @property
    def n_points(self) -> int:
        """How many distinct points have been added so far."""
        return len(self._points)

    def build(self) -> Experiment:
        """Assemble arrays, NaN-padding missing repetitions; raises InputError if nothing was read."""
        if not self._points:
            raise InputError(self.source, "no measurement points were found")
        if not self._values:
            raise InputError(self.source, "no measured values were found")
        n_cp, n_pt = len(self.callpaths), len(self._points)
        by_metric: dict[str, list[tuple[int, int, list[float]]]] = {name: [] for name in self._metrics}
        for (m, cp, pt), vals in self._values.items():
            by_metric[m].append((cp, pt, vals))
        measurements: dict[str, np.ndarray] = {}
        for name, entries in by_metric.items():
            reps = max((len(v) for _, _, v in entries), default=0)
            arr = np.full((n_cp, n_pt, max(reps, 1)), np.nan)
            for cp, pt, vals in entries:
                arr[cp, pt, : len(vals)] = vals
            measurements[name] = arr
        locations = self._build_locations(n_cp, n_pt) if self._locations else None
        return Experiment(self.parameters, np.array(list(self._points), dtype=float), self.callpaths,
                          tuple(self._metrics.values()), measurements, locations, self.provenance)

    def _build_locations(self, n_cp: int, n_pt: int) -> dict[str, list[np.ndarray | None]]:
        grouped: dict[tuple[str, int], dict[int, list[np.ndarray]]] = {}
        for (m, cp, pt), reps in self._locations.items():
            grouped.setdefault((m, pt), {})[cp] = reps
        out: dict[str, list[np.ndarray | None]] = {name: [None] * n_pt for name in self._metrics}
        for (name, pt), entries in grouped.items():
            n_rep = max(len(r) for r in entries.values())
            n_loc = max(a.shape[0] for r in entries.values() for a in r)
            arr = np.full((n_cp, n_rep, n_loc), np.nan)
            for cp, reps in entries.items():
                for r, a in enumerate(reps):
                    arr[cp, r, : a.shape[0]] = a
            out[name][pt] = arr
        return {name: per_point for name, per_point in out.items() if any(a is not None for a in per_point)}


@dataclass(frozen=True)
class EventColumn:
    """One column of an :class:`EventTable`: its dtype, the value of a row that has none, and what it holds."""

    dtype: Any
    missing: Any
    doc: str


EVENT_COLUMNS: Mapping[str, EventColumn] = {
    "callpath": EventColumn(np.int64, -1, "index into ``callpaths`` of the call's call path (its call site)"),
    "region": EventColumn(np.int64, -1, "index into ``regions`` of the called function, e.g. MPI_Send"),
    "rank": EventColumn(np.int64, -1, "MPI rank (in MPI_COMM_WORLD) of the process that made the call"),
    "location": EventColumn(np.int64, -1, "trace location (thread) that made the call"),
    "run": EventColumn(np.int64, 0, "index into ``runs``: which run of a study the call belongs to"),
    "start": EventColumn(np.float64, np.nan, "enter time in seconds since the start of the run's trace"),
    "end": EventColumn(np.float64, np.nan, "leave time in seconds since the start of the run's trace"),
    "duration": EventColumn(np.float64, np.nan, "end − start, seconds"),
    "kind": EventColumn(np.int64, 0, "what the call did, an index into CALL_KINDS (send, receive, n_to_n, ...)"),
    "bytes": EventColumn(np.float64, np.nan, "the call's message size b in bytes — the count × type size the "
                                             "program passed (point-to-point: the message length; collectives: "
                                             "derived from Score-P's recorded sizes, see pmkit.mpi_events; 0 for a "
                                             "barrier); NaN for calls that communicate nothing (MPI_Comm_rank)"),
    "bytes_sent": EventColumn(np.float64, 0.0, "bytes the trace records as sent by this call (Score-P's "
                                               "conventions: Allreduce sends P·b)"),
    "bytes_received": EventColumn(np.float64, 0.0, "bytes the trace records as received by this call (an "
                                                   "MPI_Irecv's bytes are received by the call that completes it)"),
    "comm": EventColumn(np.int64, -1, "communicator id within the run, -1 if the call recorded none"),
    "comm_size": EventColumn(np.int64, -1, "number of processes in the communicator, -1 if none"),
    "peer": EventColumn(np.int64, -1, "rank of the partner of a point-to-point call with one message; -1 none, "
                                      "-2 several"),
    "tag": EventColumn(np.int64, -1, "message tag of a point-to-point call with one message, else -1"),
    "root": EventColumn(np.int64, -1, "rank of the root of a rooted collective (Bcast, Reduce, ...), else -1"),
    "match": EventColumn(np.int64, -1, "row of the partner call of a point-to-point call with one message "
                                       "(the send for a receive, the receive for a send), -1 if unmatched"),
    "completion": EventColumn(np.int64, -1, "for MPI_Isend/MPI_Irecv, row of the call that completed the request "
                                            "(MPI_Wait, MPI_Waitall, ...), -1 if the trace does not record it"),
    "instance": EventColumn(np.int64, -1, "collective instance: the rows of one collective operation (one call "
                                          "per participating process) share it; -1 for other calls"),
}
"""The columns of an :class:`EventTable`: one row per MPI call instance."""

REQUIRED_EVENT_COLUMNS = ("callpath", "region", "rank", "start", "duration")
"""Columns an event table cannot be built without; the others default to their ``missing`` value."""

CALL_KINDS = ("other", "send", "receive", "sendrecv", "post", "completion", "n_to_n", "one_to_n", "n_to_one",
              "collective")
"""What an MPI call did (the ``kind`` column): ``send``/``receive`` a blocking point-to-point message,
``sendrecv`` both, ``post`` start a non-blocking one (MPI_Isend, MPI_Irecv), ``completion`` complete
requests (MPI_Wait, MPI_Test, ...), ``n_to_n`` an all-to-all collective (Allreduce, Alltoall,
Allgather, Barrier, ...), ``one_to_n`` a broadcast or scatter, ``n_to_one`` a gather or reduce,
``collective`` another collective (Scan); ``other`` moved no data (MPI_Comm_rank, MPI_Init, ...)."""

MESSAGE_COLUMNS: Mapping[str, EventColumn] = {
    "send_row": EventColumn(np.int64, -1, "row of the call that sent the message (MPI_Send, MPI_Isend, ...)"),
    "recv_row": EventColumn(np.int64, -1, "row of the call in which the receive completed (MPI_Recv, or the "
                                          "MPI_Wait of an MPI_Irecv), -1 if unmatched"),
    "post_row": EventColumn(np.int64, -1, "row of the MPI_Irecv that posted a non-blocking receive, else -1"),
    "sender": EventColumn(np.int64, -1, "rank of the sender"),
    "receiver": EventColumn(np.int64, -1, "rank of the receiver"),
    "comm": EventColumn(np.int64, -1, "communicator id within the run"),
    "tag": EventColumn(np.int64, -1, "message tag"),
    "bytes": EventColumn(np.float64, np.nan, "message length in bytes"),
    "send_time": EventColumn(np.float64, np.nan, "when the send event was recorded, seconds"),
    "recv_time": EventColumn(np.float64, np.nan, "when the receive event was recorded (Score-P: at the end of "
                                                 "the receive), seconds"),
}
"""The columns of :attr:`EventTable.messages`: one row per point-to-point message, sends matched to receives."""


def _columns(given: dict[str, Any], spec: Mapping[str, EventColumn], required: Sequence[str], what: str
             ) -> dict[str, np.ndarray]:
    lengths = {len(v) for v in given.values()}
    if len(lengths) > 1:
        raise ValueError(f"{what} columns have different lengths: {sorted(lengths)}")
    missing = set(required) - set(given)
    if missing:
        raise ValueError(f"{what} lacks columns {sorted(missing)}")
    unknown = set(given) - set(spec)
    if unknown:
        raise ValueError(f"{what} has unknown columns {sorted(unknown)}; known: {', '.join(spec)}")
    n = lengths.pop() if lengths else 0
    return {name: (np.asarray(given[name], dtype=col.dtype) if name in given else np.full(n, col.missing, col.dtype))
            for name, col in spec.items()}


@dataclass
class EventTable:
    """One row per MPI call instance from a trace, columnar (numpy arrays; columns in :data:`EVENT_COLUMNS`).

    ``regions`` names the called functions (``region`` indexes it; ``region_roles`` and
    ``region_paradigms`` give Score-P's role and paradigm of each, e.g. ``POINT2POINT`` and ``MPI``,
    where the trace records them) and ``callpaths`` the call sites.  ``messages`` holds the
    point-to-point messages with sends matched to receives (:data:`MESSAGE_COLUMNS`).  ``runs``
    describes each run of a study (``run`` indexes it): its coordinates, repetition, source file and
    timer resolution.  Columns not given are filled with
    their ``missing`` value; :data:`REQUIRED_EVENT_COLUMNS` must be given.
    """

    columns: dict[str, np.ndarray]
    regions: list[str]
    callpaths: CallTree
    source: str = ""
    messages: dict[str, np.ndarray] | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)
    region_roles: list[str] = field(default_factory=list)
    region_paradigms: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.columns = _columns(self.columns, EVENT_COLUMNS, REQUIRED_EVENT_COLUMNS, "event table")
        self.messages = _columns(self.messages or {}, MESSAGE_COLUMNS, (), "message table")

    def __len__(self) -> int:
        return len(self.columns["start"])

    def __getitem__(self, column: str) -> np.ndarray:
        return self.columns[column]

    def region_names(self) -> np.ndarray:
        """The called function of every row, as an array of names."""
        names = np.array([*self.regions, ""], dtype=object)
        return names[self.columns["region"]]

    def kind_names(self) -> np.ndarray:
        """The kind of every row (``send``, ``n_to_n``, ...), as an array of names."""
        return np.array(CALL_KINDS, dtype=object)[self.columns["kind"]]
