"""Reader ``perf-stat``: Linux ``perf stat`` output, one file or a study of runs.

A file is CSV (``-x SEP``), JSON (``-j``) or the human-readable default, with or without ``-r``,
``-I``, ``-A``, ``--per-core``, ``--per-socket``, ``--per-die``, ``--per-node`` or ``--per-thread``
(see :mod:`pmkit.readers.perf_stat_format`).  A study is a folder of such files named like Extra-P
names runs — ``app.p8.r1.csv``, ``app.p8.r2.csv``, ``app.p16.r1.csv`` (or run folders
``app.p8.r1/perf.csv``) — or listed in a manifest (``pmkit-manifest.toml``/``.csv`` with a ``file``
column), as for Cube studies (:mod:`pmkit.readers.cube_study`).

What becomes what:

* each event is a metric named exactly as perf printed it (``cycles``, ``cpu_core/cycles/``,
  ``mem_load_retired.l1_hit``): unknown events are kept, never mapped to a guess; the unit is
  perf's (``msec`` for ``task-clock``), ``count`` where perf prints none;
* the program is one call path, named after the study's prefix (``app``), else the command perf
  ran, else ``program`` (option ``callpath``);
* CPUs, cores, dies, sockets, nodes or threads are locations: their values are kept per point in
  ``experiment.locations`` and reduced to one value per run by ``aggregation`` (``sum`` by
  default: what perf prints without ``-A``);
* with ``-I`` the run's value is the ``--interval-summary`` line, or else the sum of the intervals
  (perf prints increments); every sample — interval, location, ``-r`` variance, running share —
  stays in ``experiment.timeline`` for plots;
* ``<not counted>`` and ``<not supported>`` values are NaN, and the notes say which events and runs;
* a multiplexed event (counted less than 100 % of the time) is, by perf's default, already scaled
  by perf to the whole run: the notes say which events and how much they ran.  For output of
  ``perf stat --no-scale`` set ``scaled=false`` and the reader scales by 100 / running percentage.
  (Issue 16 asked the reader to scale; perf already has unless told not to, and scaling twice
  would inflate the counts, so the reader scales only ``--no-scale`` output.)
* the human format's ``seconds time elapsed`` / ``user`` / ``sys`` lines become the metrics
  ``duration_time``, ``user_time`` and ``system_time`` (seconds), perf's names for those events;
  they are the format's only end marker, so a file without them (and without ``-I``) is read as far
  as it goes with a warning that it may be cut short.

A file that cannot be read is named in ``provenance.skipped`` and the rest of the study loads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pmkit import progress
from pmkit.errors import InputError, UsageError, path_text
from pmkit.experiment import CallTree, Experiment, Metric, Provenance
from pmkit.hookspecs import hookimpl
from pmkit.options import Option
from pmkit.readers.cube_study import (
    MANIFEST_NAMES,
    Run,
    Study,
    _from_manifest,
    find_manifest,
    from_names,
    parse_run_name,
)
from pmkit.readers.parsing import HEAD_BYTES, read_head, read_text
from pmkit.readers.perf_stat_format import (
    STATUS_NOT_COUNTED,
    STATUS_NOT_SUPPORTED,
    STATUS_TEXT,
    PerfStatFile,
    detect_format,
    parse_perf_stat,
)
from pmkit.timeline import TIMELINE_COLUMNS, Timeline

NAME = "perf-stat"
EXTENSIONS = (".csv", ".json", ".txt", ".out", ".stat", ".perf", ".log", ".err")
"""File endings a study folder's perf outputs may have (the content decides, the ending only filters)."""

AGGREGATIONS: dict[str, Callable[..., np.ndarray]] = {"sum": np.nansum, "mean": np.nanmean, "max": np.nanmax,
                                                      "min": np.nanmin}
"""How the values of a run's CPUs, cores, sockets or threads become one value (``sum`` is perf's own)."""

COUNT_UNIT = "count"
"""The unit of an event perf prints without one."""


class PerfStatReader:
    """Reads ``perf stat`` CSV, JSON and human-readable output: a file, or a folder of runs."""

    name = NAME
    description = "Linux perf stat output (CSV -x, JSON -j, human): one file, or a folder of runs like app.p8.r1.csv"
    options = (
        Option("aggregation", str, "sum", "how a run's CPUs/cores/sockets/threads become one value: sum (perf's "
               "own total), mean, max or min", choices=tuple(AGGREGATIONS)),
        Option("scaled", bool, True, "values are perf's multiplex-scaled estimates (perf's default); false for "
               "output of perf stat --no-scale, which the reader then scales by 100/running%"),
        Option("callpath", str, "", "name of the program's call path (default: the study's prefix, else the "
               "command perf ran, else 'program')"),
        Option("manifest", str, "", f"TOML or CSV file mapping perf files to coordinates (default: "
               f"{' or '.join(MANIFEST_NAMES)} in the folder, if present)"),
        Option("separator", str, "", "the CSV separator given to perf stat -x (default: found from the file)"),
    )

    def sniff(self, path: Path) -> bool:
        path = Path(path)
        if path.is_file():
            if path.suffix.lower() in (".toml",):
                return False
            return _looks_like_perf(path)
        if not path.is_dir():
            return False
        manifest = find_manifest(path)
        if manifest is not None:
            try:
                study = _from_manifest(manifest)
            except InputError:
                return False
            return bool(study.runs) and _looks_like_perf(study.runs[0].file)
        # one run that looks like perf stat output makes a study: a damaged or empty run among them is reported
        # and skipped when read, not a reason to leave the whole folder unrecognised (the first one or two of
        # three had to look right)
        return any(_looks_like_perf(f) for f, _ in _candidates(path))

    def read(self, path: Path, **options: Any) -> Experiment:
        return read_perf_stat(Path(path), **options)


def _looks_like_perf(file: Path) -> bool:
    head = read_head(file)
    if head is None:
        return False
    lines = head.split("\n")
    if len(head) >= HEAD_BYTES:
        lines = lines[:-1]
    if detect_format(lines) is not None:
        return True
    first = next((line.strip() for line in lines if line.strip()), "")
    return first.startswith("# started on ")  # perf stat -o's header, perhaps over no counters


def _candidates(folder: Path) -> list[tuple[Path, str]]:
    """(file, run label) of a study folder: ``app.p8.r1.csv`` files, or ``app.p8.r1/`` folders with one perf file."""
    out: list[tuple[Path, str]] = []
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or entry.name in MANIFEST_NAMES:
            continue
        if entry.is_file() and entry.suffix.lower() in EXTENSIONS and _is_run_name(entry.stem):
            out.append((entry, entry.stem))
        elif entry.is_dir() and _is_run_name(entry.name):
            inner = sorted(f for f in entry.iterdir() if f.is_file() and not f.name.startswith(".")
                           and f.suffix.lower() in EXTENSIONS and _looks_like_perf(f))
            if len(inner) == 1:
                out.append((inner[0], entry.name))
    return out


def _is_run_name(name: str) -> bool:
    try:
        parse_run_name(name)
    except ValueError:
        return False
    return True


def discover(path: Path, manifest: Path | None = None) -> Study:
    """The runs of ``path``: one perf file, a folder named like Extra-P's runs, or a manifest."""
    if manifest is None and path.is_dir():
        manifest = find_manifest(path)
    if manifest is not None:
        return _from_manifest(manifest)
    if path.is_file():
        try:
            name = parse_run_name(path.stem)
        except ValueError:
            return Study([Run(path, {"run": 1.0}, None, path.stem)], ("run",),
                         [f"no parameters in the file name {path.name!r}; the file is point run=1"])
        return Study([Run(path, name.coordinates, name.repetition, path.stem)], tuple(name.coordinates))
    files = _candidates(path)
    if not files:
        raise InputError(path, "contains no perf stat outputs named like runs (e.g. app.p8.r1.csv, or folders "
                         "app.p8.r1/ with one perf file), and no manifest")
    return from_names(path, files)


@dataclass
class _Loaded:
    run: Run
    parsed: PerfStatFile
    point: int
    repetition: int


def read_perf_stat(path: Path, aggregation: str = "sum", scaled: bool = True, callpath: str = "",
                   manifest: str = "", separator: str = "") -> Experiment:
    """Read one perf stat file or a study of them into an :class:`Experiment` (see the module docstring)."""
    if aggregation not in AGGREGATIONS:
        raise UsageError(f"option aggregation: {aggregation!r} is not one of {', '.join(AGGREGATIONS)}")
    study = discover(path, Path(manifest) if manifest else None)
    provenance = Provenance(reader=NAME, aggregation=f"{aggregation} over locations")
    provenance.notes.extend(study.notes)
    parsed: list[tuple[Run, PerfStatFile]] = []
    with progress.task("reading perf stat files", total=len(study.runs)) as task:
        for run in study.runs:
            try:
                parsed.append((run, parse_perf_stat(read_text(run.file), run.file, separator or None)))
            except InputError as exc:
                if len(study.runs) == 1:
                    raise
                provenance.skipped.append((path_text(run.file), exc.about(run.file)))
            task.advance()
    if not parsed:
        reasons = "; ".join(f"{Path(f).name}: {r}" for f, r in provenance.skipped[:3])
        raise InputError(path, f"none of the {len(study.runs)} perf stat files could be read ({reasons})")
    if not scaled:
        for _, file in parsed:
            _unscale(file)
    provenance.sources = [path_text(run.file) for run, _ in parsed]
    loaded = _place(study, parsed)
    name = callpath or _program_name(study, parsed)
    return _assemble(study.parameters, loaded, name, aggregation, scaled, provenance)


def _unscale(file: PerfStatFile) -> None:
    """Scale ``--no-scale`` values to the whole run: value × 100 / running percentage."""
    running = file.running
    partial = np.isfinite(running) & (running > 0) & (running < 100)
    file.value = np.where(partial, file.value * 100.0 / np.where(partial, running, 100.0), file.value)


def _place(study: Study, parsed: list[tuple[Run, PerfStatFile]]) -> list[_Loaded]:
    """Each file's point (sorted coordinates, as Extra-P orders them) and repetition slot."""
    coords = sorted({tuple(run.coordinates[p] for p in study.parameters) for run, _ in parsed})
    point_of = {c: i for i, c in enumerate(coords)}
    ordered = sorted(parsed, key=lambda e: (point_of[tuple(e[0].coordinates[p] for p in study.parameters)],
                                            math.inf if e[0].repetition is None else e[0].repetition,
                                            e[0].label, str(e[0].file)))
    slots: dict[int, int] = {}
    out = []
    for run, file in ordered:
        point = point_of[tuple(run.coordinates[p] for p in study.parameters)]
        out.append(_Loaded(run, file, point, slots.get(point, 0)))
        slots[point] = slots.get(point, 0) + 1
    return out


def _program_name(study: Study, parsed: list[tuple[Run, PerfStatFile]]) -> str:
    for run, _ in parsed:
        try:
            prefix = parse_run_name(run.label).prefix
        except ValueError:
            continue
        if prefix:
            return prefix
    for _, file in parsed:
        if file.target:
            words = file.target.split()
            if words and file.target != "system wide":
                return Path(words[0]).name or "program"
            return file.target.replace(" ", "-")
    return "program"


def _assemble(parameters: tuple[str, ...], loaded: list[_Loaded], program: str, aggregation: str, scaled: bool,
              provenance: Provenance) -> Experiment:
    events: list[str] = []
    units: dict[str, str] = {}
    for item in loaded:
        for e, event in enumerate(item.parsed.events):
            if event not in units:
                events.append(event)
                units[event] = item.parsed.units[e] or COUNT_UNIT
        for extra in item.parsed.extras:
            if extra not in units:
                events.append(extra)
                units[extra] = "sec"
    index = {event: i for i, event in enumerate(events)}
    n_pt = max(item.point for item in loaded) + 1
    reps = max(item.repetition for item in loaded) + 1
    values = np.full((len(events), n_pt, reps), np.nan)
    labels_at: list[list[str]] = [[] for _ in range(n_pt)]
    for item in loaded:
        for label in item.parsed.labels:
            if label not in labels_at[item.point]:
                labels_at[item.point].append(label)
    per_location = [np.full((len(events), reps, max(len(labels_at[pt]), 1)), np.nan) for pt in range(n_pt)]
    reduce = AGGREGATIONS[aggregation]
    timeline_parts: list[Timeline] = []
    for item in loaded:
        file = item.parsed
        totals, summed = file.totals()
        rows = np.array([index[e] for e in file.events], dtype=np.int64)
        if file.labels:
            located = totals[:, :-1]
            with np.errstate(all="ignore"):
                counted = np.isfinite(located).any(axis=1)
                reduced = np.full(len(rows), np.nan)
                reduced[counted] = reduce(located[counted], axis=1)
            columns = [labels_at[item.point].index(label) for label in file.labels]
            per_location[item.point][np.ix_(rows, [item.repetition], columns)] = located[:, None, :]
        else:
            reduced = totals[:, -1]
        values[rows, item.point, item.repetition] = reduced
        for extra, (seconds, _) in file.extras.items():
            values[index[extra], item.point, item.repetition] = seconds
        if file.format == "human" and not file.has_intervals and "duration_time" not in file.extras:
            provenance.warnings.append(f"{file.path}: ends before perf's closing 'seconds time elapsed' line, so the "
                                       "output may be cut short (a run killed, a copy interrupted); read as far as "
                                       "it goes")
        timeline_parts.append(_timeline(file, item))
        if summed.any():
            provenance.notes.append(f"{file.path}: -I intervals summed into the run's values (no --interval-summary "
                                    "line); the intervals are in experiment.timeline")
    _notes(loaded, scaled, aggregation, provenance)
    tree = CallTree()
    tree.add(program)
    metrics = tuple(Metric(event, units[event], False, _describe(event)) for event in events)
    measurements = {event: values[i][None, :, :] for i, event in enumerate(events)}
    has_locations = any(item.parsed.labels for item in loaded)
    locations = ({event: [per_location[pt][i][None, :, :] if labels_at[pt] else None for pt in range(n_pt)]
                  for i, event in enumerate(events)} if has_locations else None)
    points = _points(parameters, loaded, n_pt)
    experiment = Experiment(parameters, points, tree, metrics, measurements, locations, provenance)
    experiment.timeline = Timeline.concatenate(timeline_parts)
    return experiment


def _points(parameters: tuple[str, ...], loaded: list[_Loaded], n_pt: int) -> np.ndarray:
    points = np.zeros((n_pt, len(parameters)))
    for item in loaded:
        points[item.point] = [item.run.coordinates[p] for p in parameters]
    return points


def _describe(event: str) -> str:
    return {"duration_time": "wall-clock time of the run (perf's 'seconds time elapsed')",
            "user_time": "user CPU time (perf's 'seconds user')",
            "system_time": "system CPU time (perf's 'seconds sys')"}.get(event, "perf stat event")


def _timeline(file: PerfStatFile, item: _Loaded) -> Timeline:
    """Every sample of the file: its counter lines, plus the human format's closing lines."""
    time = np.where(file.summary, np.nan, file.time)
    n = len(file)
    extras = list(file.extras.items())
    columns = {
        "point": np.full(n + len(extras), item.point),
        "repetition": np.full(n + len(extras), item.repetition),
        "metric": np.concatenate([file.event, np.arange(len(file.events), len(file.events) + len(extras))]),
        "location": np.concatenate([file.location, np.full(len(extras), -1)]),
        "time": np.concatenate([time, np.full(len(extras), np.nan)]),
        "value": np.concatenate([file.value, [seconds for _, (seconds, _) in extras]]),
        "variance": np.concatenate([file.variance, [variance for _, (_, variance) in extras]]),
        "running": np.concatenate([file.running, np.full(len(extras), np.nan)]),
    }
    columns = {name: np.asarray(column, dtype=TIMELINE_COLUMNS[name]) for name, column in columns.items()}
    return Timeline(columns, [*file.events, *(name for name, _ in extras)], list(file.labels), file.location_kind)


def _notes(loaded: list[_Loaded], scaled: bool, aggregation: str, provenance: Provenance) -> None:
    """What the reader did and what the files lack, in words, once per study."""
    _missing_notes(loaded, provenance)
    multiplexed: dict[str, float] = {}
    for item in loaded:
        file = item.parsed
        partial = np.isfinite(file.running) & (file.running < 100) & (file.status == 0)
        for e in np.unique(file.event[partial]):
            least = float(np.min(file.running[partial & (file.event == e)]))
            multiplexed[file.events[e]] = min(least, multiplexed.get(file.events[e], 100.0))
    if multiplexed:
        listed = ", ".join(f"{event} (counted {share:.1f}% of the time)"
                           for event, share in sorted(multiplexed.items()))
        how = ("perf scaled these to the whole run (its default); the running shares are in experiment.timeline"
               if scaled else "scaled here by 100/running% (scaled=false: output of perf stat --no-scale)")
        provenance.notes.append(f"multiplexed events: {listed}; {how}")
    repeated = [item for item in loaded if np.isfinite(item.parsed.variance).any()]
    if repeated:
        counts = sorted({item.parsed.runs for item in repeated if item.parsed.runs})
        times = f" ({', '.join(map(str, counts))} runs each)" if counts else ""
        provenance.notes.append(f"{len(repeated)} of {len(loaded)} files are perf stat -r means{times}: one value "
                                "per file; the variance (±%) is in experiment.timeline")
    kinds = sorted({item.parsed.location_kind for item in loaded if item.parsed.location_kind})
    if kinds:
        provenance.notes.append(f"locations are {' and '.join(kinds)}s; their values are kept per point in "
                                f"experiment.locations and reduced by {aggregation} per run")
    skipped = sum(item.parsed.skipped_lines for item in loaded)
    if skipped:
        provenance.notes.append(f"{skipped} lines of perf's derived metrics or advice were skipped (not counters)")
    dates = [item.parsed.started for item in loaded if item.parsed.started]
    if len(dates) == 1:
        provenance.notes.append(f"perf stat started on {dates[0]}")
    elif dates:
        provenance.notes.append(f"perf stat runs started on {dates[0]} … {dates[-1]} (file order)")


def _missing_notes(loaded: list[_Loaded], provenance: Provenance) -> None:
    """Events perf could not count: in whole files (NaN values), or in some samples of a file."""
    whole: dict[tuple[str, int], int] = {}
    partly: dict[tuple[str, int], list[int]] = {}
    for item in loaded:
        file = item.parsed
        for status in (STATUS_NOT_COUNTED, STATUS_NOT_SUPPORTED):
            for e in np.unique(file.event[file.status == status]):
                mine = file.event == e
                bad = int(np.count_nonzero(mine & (file.status == status)))
                key = (file.events[e], status)
                if bad == int(np.count_nonzero(mine)):
                    whole[key] = whole.get(key, 0) + 1
                else:
                    partly.setdefault(key, [0, 0])
                    partly[key][0] += bad
                    partly[key][1] += int(np.count_nonzero(mine))
    runs = len(loaded)
    for (event, status), count in sorted(whole.items()):
        word = STATUS_TEXT[status]
        where = "every file" if count == runs else f"{count} of {runs} files"
        provenance.notes.append(f"{event} is {word} in {where}; its values there are NaN")
    for (event, status), (bad, total) in sorted(partly.items()):
        provenance.notes.append(f"{event} is {STATUS_TEXT[status]} in {bad} of its {total} samples (intervals or "
                                "locations); the run values count the other samples")


@hookimpl(trylast=True)
def pmkit_register_readers(register: Callable[[Any], None]) -> None:
    register(PerfStatReader())

