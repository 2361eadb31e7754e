"""Reader ``otf2``: Score-P OTF2 traces — one run, or a study folder of runs — as a profile and an event table.

A trace becomes what a Cube profile of the same run holds: the call tree from the Enter/Leave
events (Score-P's region names, so call paths read as in Cube: ``main->MPI_Send``), and per call
path and location the metrics ``time`` (seconds, from the timer resolution), ``visits``,
``bytes_sent`` and ``bytes_received`` (Score-P's profile counts collective bytes too) and the
hardware counters Score-P recorded at every enter and leave (PAPI).  As in the Cube reader, values
are exclusive by default, a run's locations are reduced to one value (``mean``, Extra-P's weak
scaling; ``sum`` for strong scaling) and kept per location; a call path absent from a location is
0 there, absent from a whole run NaN.  The MPI calls become ``experiment.events``, an
:class:`~pmkit.experiment.EventTable` with messages matched (see :mod:`pmkit.readers.otf2_calls`).

A study is a folder of run folders in Extra-P's naming (``app.p8.r1/traces.otf2``,
:mod:`pmkit.readers.otf2_study`); a run that cannot be read is named in ``provenance.skipped`` and
the others still load.  Event files are read per location chunk, one task of the current executor
each (:mod:`pmkit.executors`: threads in-process, worker processes or a Dask cluster; the chunks of
every run go out at once); a task drops the MPI calls and messages when the event table is not
kept.  Needs the ``otf2`` package (``pip install 'pmkit-hpc[otf2]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from pmkit import executors
from pmkit.errors import InputError, UsageError, path_text
from pmkit.experiment import CallTree, Experiment, Metric, Provenance
from pmkit.hookspecs import hookimpl
from pmkit.options import Option
from pmkit.readers.cube import AGGREGATIONS, CubeReader
from pmkit.readers.cube_study import Run

_CUBE_OPTIONS = {option.name: option for option in CubeReader.options}

PARALLEL_MIN_EVENTS = 4_000_000
"""From this many events on, a run's locations are read in several chunks (on threads in-process, as
tasks on the workers of other executors).  Only the
reading and replay run in parallel (the assembly of the experiment does not), so threads pay for
traces with many events per MPI call.  Measured with bench/otf2_read.py (8 ranks, a loaded 2-core
machine): 2.0 M events with 333 k MPI calls read at 3.8 M events/s on one thread and 2.7 M/s on two;
8.0 M events with the same calls at 13.3 M/s on one and 23 M/s on two."""

BASE_METRICS = (
    Metric("time", "sec", False, "time spent in the call path, from the trace's enter and leave events"),
    Metric("visits", "occ", False, "number of times the call path was entered"),
    Metric("bytes_sent", "bytes", False, "bytes sent (point-to-point and collective, as Score-P records them)"),
    Metric("bytes_received", "bytes", False, "bytes received (point-to-point and collective)"),
)


class Otf2Reader:
    """Reads Score-P OTF2 traces: ``traces.otf2``, a run folder, or a folder of runs named like app.p8.r1."""

    name = "otf2"
    description = "Score-P OTF2 traces (traces.otf2): one run, or a folder of runs named like app.p8.r1"
    options = (
        _CUBE_OPTIONS["values"],
        _CUBE_OPTIONS["aggregation"],
        Option("jobs", int, 0, "location chunks of a run read at once on threads by the local executor; 0 chooses, "
               "1 reads serially (other executors read the chunks as tasks on their workers)"),
        _CUBE_OPTIONS["locations"],
        Option("events", bool, True, "keep every MPI call in experiment.events (for communication detectors)"),
    )

    def sniff(self, path: Path) -> bool:
        from pmkit.readers.otf2_study import is_trace_input

        return is_trace_input(Path(path))

    def read(self, path: Path, **options: Any) -> Experiment:
        return read_traces(Path(path), **options)


@dataclass
class RunData:
    """One run read: its place in the study, definitions and per-location results."""

    run: Run
    definitions: Any
    locations: list[Any]
    notes: list[str] = field(default_factory=list)


def _workers(jobs: int, events: int, chunks: int, cpus: int | None = None) -> int:
    if jobs < 0:
        raise UsageError(f"option jobs must be 0 (automatic) or a positive number, got {jobs}")
    if jobs == 0:
        jobs = min(cpus or executors.cpu_count(), 8) if events >= PARALLEL_MIN_EVENTS else 1
    return max(1, min(jobs, chunks))


def location_chunks(locations: Sequence[Any], chunks: int) -> list[list[int]]:
    """Location references split into ``chunks`` groups of about equal event counts (largest first)."""
    groups: list[list[int]] = [[] for _ in range(max(1, chunks))]
    loads = [0] * len(groups)
    for loc in sorted(locations, key=lambda loc: -loc.events):
        smallest = loads.index(min(loads))
        groups[smallest].append(loc.ref)
        loads[smallest] += loc.events
    return [sorted(g) for g in groups if g]


def read_chunk(definitions: Any, refs: list[int], keep_events: bool = True) -> list[Any] | InputError:
    """One task: the locations ``refs`` of a trace read (:func:`~pmkit.readers.otf2_events.read_locations`),
    without their MPI calls and messages unless ``keep_events``; the InputError of a location that
    cannot be read is returned, so that the run is skipped as in-process, wherever the task ran."""
    from pmkit.readers import otf2_events as ev

    try:
        traces = ev.read_locations(definitions, refs)
    except InputError as exc:
        return exc
    if keep_events:
        return traces
    return [replace(t, calls=np.empty((0, t.calls.shape[1]), t.calls.dtype),
                    messages=np.empty((0, t.messages.shape[1]), t.messages.dtype)) for t in traces]


def _definitions(run: Run) -> Any:
    from pmkit.readers.otf2_definitions import read_definitions

    anchor = Path(run.file)
    if not anchor.is_file():
        raise InputError(anchor, "no such anchor file")
    return read_definitions(anchor)


def read_runs(runs: Sequence[Run], jobs: int = 0, keep_events: bool = True) -> list[RunData | InputError]:
    """Definitions and per-location results of each run's trace, or the InputError that kept it from
    being read; the location chunks of every run are tasks of the current executor."""
    executor = executors.current()
    cpus = executor.workers if executor.remote else None
    found: list[Any] = []
    tasks: list[tuple[Any, list[int], bool]] = []
    owner: list[int] = []
    threads = 1
    for number, run in enumerate(runs):
        try:
            definitions = _definitions(run)
        except InputError as exc:
            found.append(exc)
            continue
        found.append(definitions)
        events = sum(loc.events for loc in definitions.locations)
        workers = _workers(jobs, events, len(definitions.locations), cpus)
        threads = max(threads, workers)
        for refs in location_chunks(definitions.locations, workers):
            tasks.append((definitions, refs, keep_events))
            owner.append(number)
    results = executor.map(read_chunk, tasks, description="reading OTF2 traces", threads=threads)
    chunks: list[list[Any]] = [[] for _ in runs]
    for number, result in zip(owner, results, strict=True):
        chunks[number].append(result)
    out: list[RunData | InputError] = []
    for run, definitions, parts in zip(runs, found, chunks, strict=True):
        failed = next((part for part in parts if isinstance(part, InputError)), None)
        if isinstance(definitions, InputError) or failed is not None:
            out.append(definitions if isinstance(definitions, InputError) else failed)
            continue
        locations = sorted((loc for part in parts for loc in part), key=lambda loc: (loc.rank, loc.thread, loc.ref))
        notes = list(definitions.notes) + [note for loc in locations for note in loc.notes]
        out.append(RunData(run, definitions, locations, notes))
    return out


def read_traces(path: Path, values: str = "exclusive", aggregation: str = "mean", jobs: int = 0,
                locations: bool = True, events: bool = True) -> Experiment:
    """Read an anchor file, a run folder or a study folder into an :class:`Experiment` (see the module)."""
    from pmkit.readers.otf2_library import import_otf2
    from pmkit.readers.otf2_study import discover

    if values not in ("exclusive", "inclusive"):
        raise UsageError(f"option values: {values!r} is not one of exclusive, inclusive")
    if aggregation not in AGGREGATIONS:
        raise UsageError(f"option aggregation: {aggregation!r} is not one of {', '.join(AGGREGATIONS)}")
    import_otf2()
    study = discover(path)
    provenance = Provenance(reader="otf2", aggregation=f"{values} values, {aggregation} over locations")
    provenance.notes.extend(study.notes)
    loaded: list[RunData] = []
    for run, data in zip(study.runs, read_runs(study.runs, jobs, events), strict=True):
        if isinstance(data, InputError):
            if len(study.runs) == 1:
                raise data
            provenance.skipped.append((path_text(run.file), data.about(run.file)))
        else:
            loaded.append(data)
    if not loaded:
        reasons = "; ".join(r for _, r in provenance.skipped[:3])
        raise InputError(path, f"none of the {len(study.runs)} traces could be read ({reasons})")
    for data in loaded:
        provenance.notes.extend(f"{data.run.file}: {note}" for note in data.notes)
    provenance.sources = [str(data.run.file) for data in loaded]
    return _assemble(path, study.parameters, loaded, values, aggregation, locations, events, provenance)


def _callpath_maps(loaded: list[RunData], tree: CallTree) -> list[list[np.ndarray]]:
    """Per run and location, the global call path index of every local call-tree node (-1: the root)."""
    from pmkit.readers import otf2_events as ev

    maps: list[list[np.ndarray]] = []
    for data in loaded:
        d = data.definitions
        names = [r.name for r in d.regions]
        cache: dict[bytes, np.ndarray] = {}
        per_location = []
        for loc in data.locations:
            structure = loc.nodes[:, [ev.N_PARENT, ev.N_REGION]]
            key = structure.tobytes()
            mapped = cache.get(key)
            if mapped is None:
                mapped = np.full(len(structure), -1, np.int64)
                paths: list[tuple[str, ...]] = [()] * len(structure)
                for i in range(1, len(structure)):
                    parent, region = structure[i]
                    index = d.region_index[region] if 0 <= region < len(d.region_index) else -1
                    name = names[index] if index >= 0 else f"region {region}"
                    paths[i] = (*paths[parent], name)
                    mapped[i] = tree.add(list(paths[i]), d.regions[index].canonical if index >= 0 else None)
                cache[key] = mapped
            per_location.append(mapped)
        maps.append(per_location)
    return maps


def _run_values(data: RunData, mapped: list[np.ndarray], n_cp: int, metric_names: list[str]
                ) -> dict[str, np.ndarray]:
    """Exclusive values (call paths × locations) of one run; 0 where a location never entered a call path."""
    from pmkit.readers import otf2_events as ev
    from pmkit.readers.otf2_definitions import MAX_METRICS

    seconds = 1.0 / data.definitions.timer_resolution
    counters = {name: i for i, (name, _, _) in enumerate(data.definitions.metrics)}
    columns = {"time": (ev.N_EXCL, seconds), "visits": (ev.N_VISITS, 1.0), "bytes_sent": (ev.N_SENT, 1.0),
               "bytes_received": (ev.N_RECV, 1.0)}
    out = {name: np.zeros((n_cp, len(data.locations))) for name in metric_names}
    for j, (loc, rows) in enumerate(zip(data.locations, mapped, strict=True)):
        for name in metric_names:
            if name in columns:
                column, scale = columns[name]
                np.add.at(out[name][:, j], rows[1:], loc.nodes[1:, column] * scale)
            elif name in counters:
                np.add.at(out[name][:, j], rows[1:], loc.node_metrics[1:, MAX_METRICS + counters[name]].astype(float))
            else:
                out[name][:, j] = np.nan
    return out


def _inclusive(values: np.ndarray, tree: CallTree) -> np.ndarray:
    """Every call path's value plus its subtree's (rows are call paths), level by level from the deepest."""
    out = values.copy()
    parent = np.array([-1 if n.parent is None else n.parent for n in tree], np.int64)
    depth = np.array([n.depth for n in tree], np.int64)
    for level in range(int(depth.max(initial=0)), 0, -1):
        rows = np.nonzero(depth == level)[0]
        np.add.at(out, parent[rows], out[rows])
    return out


def _assemble(path: Path, parameters: tuple[str, ...], loaded: list[RunData], values: str, aggregation: str,
              keep_locations: bool, keep_events: bool, provenance: Provenance) -> Experiment:
    tree = CallTree()
    maps = _callpath_maps(loaded, tree)
    n_cp = len(tree)
    metrics = list(BASE_METRICS)
    counter_index: dict[str, int] = {}
    for data in loaded:
        for i, (name, unit, description) in enumerate(data.definitions.metrics):
            if name not in counter_index:
                counter_index[name] = i
                metrics.append(Metric(name, unit, False, description))
    metrics = [Metric(m.name, m.unit, values == "inclusive", m.description) for m in metrics]
    names = [m.name for m in metrics]

    coords = sorted({tuple(data.run.coordinates[p] for p in parameters) for data in loaded})
    point_of = {c: i for i, c in enumerate(coords)}
    per_point: list[list[int]] = [[] for _ in coords]
    for number, data in enumerate(loaded):
        per_point[point_of[tuple(data.run.coordinates[p] for p in parameters)]].append(number)
    for entries in per_point:
        entries.sort(key=lambda i: (np.inf if loaded[i].run.repetition is None else loaded[i].run.repetition,
                                    loaded[i].run.label))
    reps = max(len(e) for e in per_point)
    measurements = {name: np.full((n_cp, len(coords), reps), np.nan) for name in names}
    per_location: dict[str, list[np.ndarray | None]] = {name: [] for name in names}
    reduce = AGGREGATIONS[aggregation]
    for pt, entries in enumerate(per_point):
        n_loc = max(len(loaded[i].locations) for i in entries)
        loc_arrays = {name: np.full((n_cp, len(entries), n_loc), np.nan) for name in names}
        for rep, number in enumerate(entries):
            data = loaded[number]
            present = np.zeros(n_cp, bool)
            for mapped in maps[number]:
                present[mapped[1:]] = True
            run_values = _run_values(data, maps[number], n_cp, names)
            for name in names:
                matrix = run_values[name] if values == "exclusive" else _inclusive(run_values[name], tree)
                matrix[~present] = np.nan
                loc_arrays[name][:, rep, : matrix.shape[1]] = matrix
                with np.errstate(all="ignore"):
                    measurements[name][present, pt, rep] = reduce(matrix[present], axis=1)
        for name in names:
            per_location[name].append(loc_arrays[name])
    experiment = Experiment(parameters, np.array(coords, dtype=float).reshape(len(coords), len(parameters)), tree,
                            tuple(metrics), measurements, per_location if keep_locations else None, provenance)
    if keep_events:
        experiment.events = _events(loaded, maps, tree, parameters, str(path))
    return experiment


def _events(loaded: list[RunData], maps: list[list[np.ndarray]], tree: CallTree, parameters: tuple[str, ...],
            source: str) -> Any:
    from pmkit.readers.otf2_calls import RunCalls, event_table

    regions: list[Any] = []
    index: dict[str, int] = {}
    region_of = []
    runs = []
    for data, mapped in zip(loaded, maps, strict=True):
        d = data.definitions
        lookup = np.full(len(d.region_index), -1, np.int64)
        for ref, position in enumerate(d.region_index):
            if position >= 0:
                region = d.regions[position]
                lookup[ref] = index.setdefault(region.name, len(index))
                if lookup[ref] == len(regions):
                    regions.append(region)
        region_of.append(lookup)
        info = {"source": str(data.run.file), "label": data.run.label, "repetition": data.run.repetition,
                "coordinates": {p: data.run.coordinates[p] for p in parameters},
                "timer_resolution": d.timer_resolution, "ranks": d.ranks}
        runs.append(RunCalls(d, data.locations, mapped, info))
    return event_table(runs, tree, regions, region_of, source)


@hookimpl(trylast=True)
def pmkit_register_readers(register: Callable[[Any], None]) -> None:
    register(Otf2Reader())
