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

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from pmkit.errors import InputError

if TYPE_CHECKING:
    from pmkit.models import ModelSet
    from pmkit.timeline import Timeline

CALLPATH_SEPARATOR = "->"


@dataclass(frozen=True)
class Metric:
    """A measured quantity: ``time`` in seconds, a hardware counter, bytes sent, ..."""

    name: str
    unit: str = ""
    inclusive: bool = False
    description: str = ""


@dataclass(frozen=True, slots=True)
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

    Nodes are kept as columns (name, parent, path, depth); a :class:`Callpath` is made when one is
    asked for, so a tree of a million call paths holds no object per node beyond its strings.
    """

    def __init__(self) -> None:
        self._names: list[str] = []
        self._parents: list[int] = []  # -1 for a root
        self._paths: list[str] = []
        self._depths: list[int] = []
        self._mangled: dict[int, str] = {}
        self._by_path: dict[str, int] = {}
        self._children: dict[int, list[int]] = {}

    def _new(self, name: str, parent: int, path: str, mangled_name: str | None = None) -> int:
        index = len(self._names)
        self._names.append(name)
        self._parents.append(parent)
        self._paths.append(path)
        self._depths.append(self._depths[parent] + 1 if parent >= 0 else 0)
        self._by_path[path] = index
        if parent >= 0:
            self._children.setdefault(parent, []).append(index)
        if mangled_name is not None:
            self._mangled[index] = mangled_name
        return index

    def add(self, path: str | Sequence[str], mangled_name: str | None = None) -> int:
        """Add a call path (and any missing ancestors); returns its index.  Idempotent."""
        names = path.split(CALLPATH_SEPARATOR) if isinstance(path, str) else list(path)
        if not names or any(n == "" for n in names):
            raise ValueError(f"empty region name in call path {path!r}")
        parent = -1
        for depth, name in enumerate(names):
            key = CALLPATH_SEPARATOR.join(names[: depth + 1])
            index = self._by_path.get(key)
            if index is None:
                index = self._new(name, parent, key, mangled_name if depth == len(names) - 1 else None)
            parent = index
        return parent

    def add_many(self, paths: Sequence[str]) -> np.ndarray:
        """Add call paths given as strings (and their missing ancestors) as :meth:`add` would one by
        one, in the same order; returns their indices.  For readers of large inputs: a path whose
        parent is known costs one lookup, not a walk from the root."""
        by_path, names, parents, depths = self._by_path, self._names, self._parents, self._depths
        indices = [by_path.get(path) for path in paths]
        for k, index in enumerate(indices):
            if index is not None:
                continue
            path = paths[k]
            index = by_path.get(path)  # given twice in ``paths``
            if index is None:
                head, separator, name = path.rpartition(CALLPATH_SEPARATOR)
                parent = by_path.get(head, -2) if separator else -1
                if not name or parent == -2:
                    index = self._add_path(path)
                else:  # the parent is known: what _new does, inlined for speed
                    index = len(names)
                    names.append(name)
                    parents.append(parent)
                    self._paths.append(path)
                    depths.append(depths[parent] + 1 if parent >= 0 else 0)
                    by_path[path] = index
                    if parent >= 0:
                        self._children.setdefault(parent, []).append(index)
            indices[k] = index
        return np.asarray(indices, dtype=np.int64)

    def _add_path(self, path: str) -> int:
        """Add ``path`` and the ancestors it lacks (found by cutting names off its end), top down."""
        missing: list[str] = []
        key = path
        parent = self._by_path.get(key)
        while parent is None:
            missing.append(key)
            head, separator, name = key.rpartition(CALLPATH_SEPARATOR)
            if not name or (separator and not head):
                raise ValueError(f"empty region name in call path {path!r}")
            if not separator:
                parent = -1
                break
            key = head
            parent = self._by_path.get(key)
        for key in reversed(missing):
            parent = self._new(key.rpartition(CALLPATH_SEPARATOR)[2], parent, key)
        return parent

    def _node(self, index: int) -> Callpath:
        parent = self._parents[index]
        return Callpath(index, self._names[index], None if parent < 0 else parent, self._paths[index],
                        self._depths[index], self._mangled.get(index))

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            return self._node(self._by_path[key])
        if isinstance(key, slice):
            return [self._node(i) for i in range(*key.indices(len(self._names)))]
        index = int(key)
        if index < 0:
            index += len(self._names)
        if not 0 <= index < len(self._names):
            raise IndexError("call path index out of range")
        return self._node(index)

    def __iter__(self) -> Iterator[Callpath]:
        return (self._node(i) for i in range(len(self._names)))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._by_path
        return isinstance(item, Callpath) and 0 <= item.index < len(self._names) and self._node(item.index) == item

    def index(self, path: str) -> int:  # type: ignore[override]
        """Position of the call path with string form ``path``; KeyError if absent."""
        return self._by_path[path]

    def children(self, index: int) -> list[int]:
        """Positions of the direct children of the node at ``index``."""
        return list(self._children.get(index, ()))

    def roots(self) -> list[int]:
        """Positions of the nodes without a parent."""
        return [i for i, parent in enumerate(self._parents) if parent < 0]

    def paths(self) -> list[str]:
        """Every call path's string form, in position order."""
        return list(self._paths)

    def parents(self) -> np.ndarray:
        """Every node's parent position (-1 for a root), in position order: the tree as an array."""
        return np.array(self._parents, dtype=np.int64).reshape(-1)

    def depths(self) -> np.ndarray:
        """Every node's depth (0 for a root), in position order."""
        return np.array(self._depths, dtype=np.int64).reshape(-1)


def paths_ending(paths: Sequence[str], callpath: str) -> list[int]:
    """The positions of the call paths in ``paths`` that end with the call path ``callpath`` (``MPI_Gather``
    matches ``main->solve->MPI_Gather``): where it is the unique end of one, that one is meant."""
    return [i for i, path in enumerate(paths) if path.endswith(CALLPATH_SEPARATOR + callpath)]


def near_paths(paths: Sequence[str], callpath: str) -> list[str]:
    """The call paths in ``paths`` whose region name holds ``callpath``'s (case aside): what a name that
    matches none may have meant."""
    leaf = callpath.rsplit(CALLPATH_SEPARATOR, 1)[-1].lower()
    return [path for path in paths if leaf and leaf in path.rsplit(CALLPATH_SEPARATOR, 1)[-1].lower()]


@dataclass
class Provenance:
    """Where an experiment came from and what was done on the way.

    ``skipped`` lists inputs (or parts) left out, with why; ``warnings`` defects of the input the
    reader worked around (the CLI shows both on stderr, one line each); ``notes`` how the input
    was read.
    """

    sources: list[str] = field(default_factory=list)
    reader: str = ""
    aggregation: str = ""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Experiment:
    """Measurements of call paths × metrics at points of a parameter space, with repetitions.

    ``measurements[metric]`` has shape (len(callpaths), len(points), repetitions); NaN marks a
    missing value.  ``locations[metric][point]``, when present, has shape
    (len(callpaths), repetitions, locations at that point).  ``stored_models`` holds models that
    came with the input (the model sets of an Extra-P ``.extra-p`` file), by model-set name, so
    that they can be shown and compared beside pmkit's own.  ``callpaths`` is a :class:`CallTree`
    of :class:`Callpath` objects (``callpaths.paths()`` gives the strings), whose positions index
    the first axis of every measurement array.  ``timeline`` (from ``perf stat``) holds the samples
    behind the values: per interval and location, for plots.
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
    timeline: Timeline | None = None

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

    Values arrive one cell at a time (:meth:`add_values`) or as whole blocks of arrays
    (:meth:`add_block`, what bulk readers use: no Python object per value); both append
    repetitions to a (call path, metric, point) cell in the order they arrive, and :meth:`build`
    lays them out the same way.  ``source`` names the file being read so that validation errors
    point at it; ``callpaths`` is a call tree the reader built already (default: an empty one).
    """

    def __init__(self, parameters: Sequence[str], source: str | None = None, *,
                 callpaths: CallTree | None = None) -> None:
        params = tuple(str(p) for p in parameters)
        if not params:
            raise InputError(source, "no parameters are defined")
        if len(set(params)) != len(params):
            raise InputError(source, f"parameter names repeat: {list(params)}")
        self.parameters = params
        self.source = source
        self.callpaths = callpaths if callpaths is not None else CallTree()
        self._points: dict[tuple[float, ...], int] = {}
        self._metrics: dict[str, Metric] = {}
        self._blocks: dict[str, list[_Block]] = {}
        self._pending: dict[str, _Pending] = {}
        self._entries = 0
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
        pending = self._pending.get(metric)
        if pending is None:
            pending = self._pending[metric] = _Pending()
        pending.add(cp, pt, vals)
        self._entries += 1

    def add_block(self, metric: str, callpaths: ArrayLike, points: ArrayLike, values: ArrayLike,
                  counts: ArrayLike | None = None) -> None:
        """Append many values of ``metric`` at once, as arrays.

        Entry ``k`` is the call path with index ``callpaths[k]`` (in :attr:`callpaths`) at the point
        with index ``points[k]`` (from :meth:`add_point`); it takes the next ``counts[k]`` values of
        ``values`` (one each when ``counts`` is None) as repetitions.  The result is the same as
        calling :meth:`add_values` once per entry in order, without a Python object per value.
        Raises ValueError when the arrays do not fit together or an index is out of range.
        """
        cp = _indices(callpaths)
        pt = _indices(points)
        vals = np.asarray(values, dtype=float).reshape(-1)
        n = np.ones(len(cp), dtype=np.int8) if counts is None else _indices(counts)
        if not len(cp) == len(pt) == len(n):
            raise ValueError(f"add_block: {len(cp)} call paths, {len(pt)} points and {len(n)} counts differ in length")
        if len(cp) and (cp.min() < 0 or cp.max() >= len(self.callpaths)):
            raise ValueError(f"add_block: call path index out of range 0..{len(self.callpaths) - 1}")
        if len(pt) and (pt.min() < 0 or pt.max() >= len(self._points)):
            raise ValueError(f"add_block: point index out of range 0..{len(self._points) - 1}")
        if len(n) and n.min() < 0:
            raise ValueError("add_block: a count is negative")
        if int(n.sum(dtype=np.int64)) != len(vals):
            raise ValueError(f"add_block: counts add up to {int(n.sum(dtype=np.int64))} but there are {len(vals)} "
                             "values")
        self.add_metric(metric)
        self._flush(metric)
        self._blocks.setdefault(metric, []).append(_Block(cp, pt, n, vals))
        self._entries += len(cp)

    def _flush(self, metric: str) -> None:
        pending = self._pending.pop(metric, None)
        if pending is not None:
            self._blocks.setdefault(metric, []).append(pending.block())

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
        if not self._entries:
            raise InputError(self.source, "no measured values were found")
        for metric in list(self._pending):
            self._flush(metric)
        n_cp, n_pt = len(self.callpaths), len(self._points)
        measurements = {name: _layout(self._blocks.get(name, []), n_cp, n_pt) for name in self._metrics}
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


@dataclass
class _Block:
    """Entries of one metric: call path and point indices, how many values each takes, the values."""

    callpaths: np.ndarray
    points: np.ndarray
    counts: np.ndarray
    values: np.ndarray


class _Pending:
    """Values given one cell at a time (:meth:`ExperimentBuilder.add_values`), until they become a block."""

    def __init__(self) -> None:
        self.callpaths: list[int] = []
        self.points: list[int] = []
        self.counts: list[int] = []
        self.values: list[float] = []

    def add(self, callpath: int, point: int, values: list[float]) -> None:
        self.callpaths.append(callpath)
        self.points.append(point)
        self.counts.append(len(values))
        self.values.extend(values)

    def block(self) -> _Block:
        return _Block(np.array(self.callpaths, dtype=np.int64), np.array(self.points, dtype=np.int64),
                      np.array(self.counts, dtype=np.int64), np.array(self.values, dtype=float))


def _indices(values: ArrayLike) -> np.ndarray:
    """Integer indices as given (any integer type, no copy), as a flat array."""
    out = np.asarray(values).reshape(-1)
    if out.dtype.kind not in "iu":
        if out.size and not np.issubdtype(out.dtype, np.number):
            raise ValueError(f"add_block: indices must be integers, got {out.dtype}")
        out = out.astype(np.int64)
    return out


def _layout(blocks: list[_Block], n_cp: int, n_pt: int) -> np.ndarray:
    """One metric's blocks as a callpaths × points × repetitions array, NaN where nothing was given.

    A cell's repetitions are its values in the order they arrived, over every block.  The common
    case — each cell given once, one value each — takes no temporary larger than one array of
    cell numbers.
    """
    if not blocks:
        return np.full((n_cp, n_pt, 1), np.nan)
    if len(blocks) == 1:
        cp, pt, counts, values = blocks[0].callpaths, blocks[0].points, blocks[0].counts, blocks[0].values
    else:
        cp, pt, counts, values = (np.concatenate([getattr(b, f) for b in blocks])
                                  for f in ("callpaths", "points", "counts", "values"))
    cell = cp.astype(np.int64) * n_pt + pt
    repeated = len(cell) > 1 and int(np.bincount(cell, minlength=n_cp * n_pt).max()) > 1
    if not repeated and (counts == 1).all():
        out = np.full((n_cp, n_pt, 1), np.nan)
        out.reshape(-1)[cell] = values
        return out
    offsets = np.zeros(len(cell), dtype=np.int64)
    repetitions = int(counts.max(initial=0))
    if repeated:  # some cell gets values more than once: later ones go after earlier ones
        order = np.argsort(cell, kind="stable")
        ordered = cell[order]
        first = np.r_[True, ordered[1:] != ordered[:-1]]
        group = np.cumsum(first) - 1
        before = np.cumsum(counts[order], dtype=np.int64) - counts[order]
        offsets[order] = before - before[first][group]
        repetitions = int(np.add.reduceat(counts[order].astype(np.int64), np.flatnonzero(first)).max())
    out = np.full((n_cp, n_pt, max(repetitions, 1)), np.nan)
    if len(values):
        entry = np.repeat(np.arange(len(cell)), counts)
        starts = np.cumsum(counts, dtype=np.int64) - counts
        slot = offsets[entry] + np.arange(len(values)) - starts[entry]
        out[cp[entry], pt[entry], slot] = values
    return out


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
