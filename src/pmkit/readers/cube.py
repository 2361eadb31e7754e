"""Reader ``cube``: Score-P Cube profiles, one ``.cubex`` file or a study folder of runs.

A study is a folder of run folders named like Extra-P expects (``lulesh.p64.r2/profile.cubex``,
see :mod:`pmkit.readers.cube_study`) or listed in a manifest.  Values follow Extra-P's cube reader
(``cube_file_reader2.py``): exclusive values by default, and per run the values of all locations
(processes × threads) reduced to one — ``mean`` is Extra-P's weak scaling, ``sum`` its strong
scaling, except for minimum/maximum metrics like ``min_time``, whose sum over locations is their
minimum/maximum, as in Cube and Extra-P; ``max`` and ``min`` show the slowest and fastest
location.  The per-location values are kept in ``experiment.locations`` for detectors and
per-process models.  Where Extra-P merges a call
path missing from some runs into its parent, pmkit keeps it, NaN where it was not measured, and
says so in the provenance notes.  Each file is one task of the current executor
(:mod:`pmkit.executors`: a few threads in-process, worker processes, or a Dask cluster); a task
decodes its file and, when the per-location values are not kept, reduces them over locations
before it returns, so only what the Experiment keeps travels back.  A file that cannot be read is
named in ``provenance.skipped`` and the rest of the study still loads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pmkit import executors
from pmkit.errors import InputError, UsageError, os_problem, path_text
from pmkit.experiment import CallTree, Experiment, Metric, Provenance
from pmkit.hookspecs import hookimpl
from pmkit.options import Option
from pmkit.readers.cube_profile import CubeFileError, Profile, load_profile
from pmkit.readers.cube_study import MANIFEST_NAMES, Run, Study, discover
from pmkit.readers.limits import MAX_INFLATED_MB, MAX_INFLATED_OPTION, MAX_RATIO, MAX_RATIO_OPTION, MIB, Limits

AGGREGATIONS: dict[str, Callable[..., np.ndarray]] = {"mean": np.mean, "sum": np.sum, "max": np.max, "min": np.min}
"""How the values of a run's locations become one value: mean (Extra-P weak scaling), sum (strong)."""

PARALLEL_MIN_FILES = 4
"""From this many files on, the in-process executor decodes files on several threads.  Threads, not processes: tar
reads, zlib and numpy release the GIL, and there is nothing to start or pickle.  Measured on the
128 MB benchmark study (bench/cube_load.py, a shared 2-core machine): serial 0.72 s, two threads
0.68 s (median of 4; single runs vary ±30 %), two forkserver processes 1.4–2.1 s — the gain is
small here and grows with idle cores; processes never paid."""



class CubeReader:
    """Reads Score-P Cube 4 profiles: a ``.cubex`` file, or a folder with one run folder per point."""

    name = "cube"
    description = "Score-P Cube profiles (.cubex): one file, or a folder of runs named like app.p64.r1"
    options = (
        Option("values", str, "exclusive", "exclusive (Extra-P's default) or inclusive values per call path",
               choices=("exclusive", "inclusive")),
        Option("aggregation", str, "mean", "how a run's locations become one value: mean (Extra-P's weak "
               "scaling), sum (strong scaling), max or min", choices=tuple(AGGREGATIONS)),
        Option("metrics", str, "", "comma-separated metrics to decode (default: all)"),
        Option("manifest", str, "", f"TOML or CSV file mapping Cube files to coordinates (default: "
               f"{' or '.join(MANIFEST_NAMES)} in the folder, if present)"),
        Option("jobs", int, 0, "files decoded at once on threads by the local executor; 0 chooses, 1 decodes "
               "serially (other executors decode one file per task on their workers)", minimum=0),
        Option("locations", bool, True, "keep the per-location values (for load imbalance and per-process models)"),
        MAX_INFLATED_OPTION,
        MAX_RATIO_OPTION,
    )

    def sniff(self, path: Path) -> bool:
        path = Path(path)
        if path.is_file():
            return path.suffix.lower() == ".cubex"
        if not path.is_dir():
            return False
        if any((path / name).is_file() for name in MANIFEST_NAMES):
            return True
        return any(True for _ in path.glob("*/*.cubex")) or any(True for _ in path.glob("*.cubex"))

    def read(self, path: Path, **options: Any) -> Experiment:
        return read_cube(Path(path), **options)


def read_cube(path: Path, values: str = "exclusive", aggregation: str = "mean", metrics: str = "",
              manifest: str = "", jobs: int = 0, locations: bool = True, max_inflated_mb: int = MAX_INFLATED_MB,
              max_ratio: float = MAX_RATIO) -> Experiment:
    """Read a ``.cubex`` file or a study folder into an :class:`Experiment` (see the module docstring).

    Compressed anchors inflate to at most ``max_inflated_mb`` MiB and ``max_ratio`` times their size;
    data members to exactly what their index announces (see :mod:`pmkit.readers.limits`)."""
    if values not in ("exclusive", "inclusive"):
        raise UsageError(f"option values: {values!r} is not one of exclusive, inclusive")
    if aggregation not in AGGREGATIONS:
        raise UsageError(f"option aggregation: {aggregation!r} is not one of {', '.join(AGGREGATIONS)}")
    wanted = [m.strip() for m in metrics.split(",") if m.strip()] or None
    study = discover(path, Path(manifest) if manifest else None)
    files = [run.file for run in study.runs]
    limits = Limits(inflated_bytes=max_inflated_mb * MIB, ratio=max_ratio)
    reduce_to = None if locations else aggregation
    results = _load_all(files, wanted, values == "inclusive", jobs, limits, reduce_to)
    return _assemble(path, study, results, wanted, values, aggregation, locations)


def load_run(file: Path, wanted: Sequence[str] | None, inclusive: bool, limits: Limits,
             reduce_to: str | None = None) -> Profile | str:
    """One run's task: its file decoded — each metric reduced over locations by ``reduce_to`` when
    given — or the problem that kept it from being read, in words."""
    try:
        profile = load_profile(file, wanted, inclusive, limits)
    except CubeFileError as exc:
        return str(exc)
    except OSError as exc:
        return os_problem(exc)
    if reduce_to is not None:
        profile.values = {name: reducer(reduce_to, profile.metrics[name].dtype)(matrix, axis=1)
                          for name, matrix in profile.values.items()}
    return profile


def reducer(aggregation: str, dtype: str) -> Callable[..., np.ndarray]:
    """How a metric's values over locations become one: ``aggregation``, except that the "sum" of a
    minimum or maximum over locations is their minimum or maximum (Cube, Extra-P)."""
    if aggregation == "sum" and dtype in ("MINDOUBLE", "MAXDOUBLE"):
        return np.min if dtype == "MINDOUBLE" else np.max
    return AGGREGATIONS[aggregation]


def _workers(jobs: int, files: list[Path]) -> int:
    if jobs < 0:
        raise UsageError(f"option jobs must be 0 (automatic) or a positive number, got {jobs}")
    if jobs == 0:
        jobs = min(executors.cpu_count(), 8) if len(files) >= PARALLEL_MIN_FILES else 1
    return max(1, min(jobs, len(files)))


def _load_all(files: list[Path], wanted: list[str] | None, inclusive: bool, jobs: int, limits: Limits,
              reduce_to: str | None) -> list[Profile | str]:
    """Decode every file, one task each on the current executor, reporting progress per file."""
    tasks = [(file, wanted, inclusive, limits, reduce_to) for file in files]
    return executors.current().map(load_run, tasks, description="reading Cube files", threads=_workers(jobs, files))


def _assemble(path: Path, study: Study, results: list[Profile | str], wanted: list[str] | None, values: str,
              aggregation: str, keep_locations: bool) -> Experiment:
    """The decoded files as one Experiment: points, call tree, metrics, values per run and location."""
    provenance = Provenance(reader="cube", aggregation=f"{values} values, {aggregation} over locations")
    provenance.notes.extend(study.notes)
    provenance.skipped.extend(study.skipped)
    loaded = _readable(path, study, results, provenance)
    _check_wanted(loaded, wanted)
    provenance.sources = [prof.file for _, prof in loaded]
    _report_file_issues(loaded, provenance)
    coords, per_point = _points(study, loaded, provenance)
    tree, rows_of = _call_tree(loaded)
    metric_info = _metric_info(path, loaded, wanted)
    measurements, per_location = _values(metric_info, per_point, rows_of, len(tree), aggregation, keep_locations)
    _report_gaps(loaded, per_point, rows_of, len(tree), tree, coords, study.parameters, provenance)
    metrics = tuple(Metric(name, info.unit, values == "inclusive", info.description)
                    for name, info in metric_info.items())
    points = np.array(coords, dtype=float).reshape(len(coords), len(study.parameters))
    return Experiment(study.parameters, points, tree, metrics, measurements,
                      per_location if keep_locations else None, provenance)


def _readable(path: Path, study: Study, results: list[Profile | str],
              provenance: Provenance) -> list[tuple[Run, Profile]]:
    """The runs whose file was decoded; the others go to ``provenance.skipped``.  InputError if none."""
    loaded: list[tuple[Run, Profile]] = []
    for run, result in zip(study.runs, results, strict=True):
        if isinstance(result, str):
            provenance.skipped.append((path_text(run.file), result))
        else:
            loaded.append((run, result))
    if not loaded and len(study.runs) == 1:  # one file: its problem, not "none of the 1 Cube files could be read"
        raise InputError(study.runs[0].file, provenance.skipped[0][1])
    if not loaded:
        reasons = "; ".join(f"{Path(f).name}: {r}" for f, r in provenance.skipped[:3])
        raise InputError(path, f"none of the {len(study.runs)} Cube files could be read ({reasons})")
    return loaded


def _check_wanted(loaded: list[tuple[Run, Profile]], wanted: list[str] | None) -> None:
    if wanted is None:
        return
    available = {m for _, prof in loaded for m in prof.available}
    missing = [m for m in wanted if m not in available]
    if missing:
        raise UsageError(f"no metric {', '.join(map(repr, missing))} in the Cube files; they have "
                         f"{', '.join(sorted(available))}")


def _points(study: Study, loaded: list[tuple[Run, Profile]],
            provenance: Provenance) -> tuple[list[tuple[float, ...]], list[list[tuple[Run, Profile]]]]:
    """The points (sorted, as Extra-P does) and at each the runs in repetition order."""
    parameters = study.parameters
    coords = sorted({tuple(run.coordinates[p] for p in parameters) for run, _ in loaded})
    point_of = {c: i for i, c in enumerate(coords)}
    per_point: list[list[tuple[Run, Profile]]] = [[] for _ in coords]
    for run, prof in loaded:
        per_point[point_of[tuple(run.coordinates[p] for p in parameters)]].append((run, prof))
    for entries in per_point:
        entries.sort(key=lambda e: (math.inf if e[0].repetition is None else e[0].repetition, e[0].label,
                                    str(e[0].file)))
    lost = {tuple(r.coordinates[p] for p in parameters) for r in study.runs} - set(coords)
    if lost:
        provenance.notes.append(f"{len(lost)} points have no readable run and are left out: "
                                + ", ".join(str(dict(zip(parameters, c, strict=True))) for c in sorted(lost)))
    return coords, per_point


def _call_tree(loaded: list[tuple[Run, Profile]]) -> tuple[CallTree, dict[int, np.ndarray]]:
    """The union of the files' call trees, and per file (by ``id``) the tree row of each of its paths."""
    tree = CallTree()
    rows_cache: dict[tuple[tuple[str, ...], ...], np.ndarray] = {}
    rows_of: dict[int, np.ndarray] = {}
    for _, prof in loaded:
        key = tuple(prof.paths)
        if key not in rows_cache:
            rows_cache[key] = np.fromiter((tree.add(list(p)) for p in prof.paths), dtype=np.int64,
                                          count=len(prof.paths))
        rows_of[id(prof)] = rows_cache[key]
    return tree, rows_of


def _metric_info(path: Path, loaded: list[tuple[Run, Profile]], wanted: list[str] | None) -> dict[str, Any]:
    """Each metric with data in some file (the asked ones only, in the asked order), as the first
    file that has it describes it."""
    metric_info: dict[str, Any] = {}
    for _, prof in loaded:
        for name, info in prof.metrics.items():
            metric_info.setdefault(name, info)
    if wanted is not None:
        metric_info = {m: metric_info[m] for m in wanted if m in metric_info}
    if not metric_info:
        raise InputError(path, "no metric with data was found in the Cube files")
    return metric_info


def _values(metric_info: dict[str, Any], per_point: list[list[tuple[Run, Profile]]], rows_of: dict[int, np.ndarray],
            n_cp: int, aggregation: str, keep_locations: bool
            ) -> tuple[dict[str, np.ndarray], dict[str, list[np.ndarray | None]]]:
    """Per metric: the (call paths × points × repetitions) values, each run's locations reduced by
    ``aggregation``; and, if kept, the per-location values per point."""
    reps = max(len(e) for e in per_point)
    measurements: dict[str, np.ndarray] = {}
    per_location: dict[str, list[np.ndarray | None]] = {}
    for name, info in metric_info.items():
        reduce = reducer(aggregation, info.dtype)
        arr = np.full((n_cp, len(per_point), reps), np.nan)
        loc_arrays: list[np.ndarray | None] = []
        for pt, entries in enumerate(per_point):
            n_loc = max(prof.locations for _, prof in entries)
            loc = np.full((n_cp, len(entries), n_loc), np.nan) if keep_locations else None
            for rep, (_, prof) in enumerate(entries):
                matrix = prof.values.get(name)
                if matrix is None:
                    continue
                rows = rows_of[id(prof)]
                arr[rows, pt, rep] = matrix if matrix.ndim == 1 else reduce(matrix, axis=1)  # 1-D: reduced by the task
                if loc is not None:
                    loc[rows, rep, : matrix.shape[1]] = matrix
            loc_arrays.append(loc)
        measurements[name] = arr
        per_location[name] = loc_arrays
    return measurements, per_location


def _report_file_issues(loaded: list[tuple[Run, Profile]], provenance: Provenance) -> None:
    """Defects worked around (once each, as provenance warnings), skipped metrics, metrics without data
    and merged call paths, per file."""
    for _, prof in loaded:
        for text in prof.warnings:
            provenance.warnings.append(f"{prof.file}: {text}")
        for metric, reason in prof.skipped:
            provenance.skipped.append((prof.file, f"metric {metric}: {reason}"))
        for text in prof.notes:
            provenance.notes.append(f"{prof.file}: {text}")
    decoded = {m for _, prof in loaded for m in prof.values}
    empty: dict[str, int] = {}
    for _, prof in loaded:
        for name in prof.without_data:
            empty[name] = empty.get(name, 0) + 1
    never = sorted(m for m in empty if m not in decoded)
    if never:
        provenance.notes.append(f"metrics without data in every file were left out (as Extra-P does): "
                                f"{', '.join(never)}")
    for name, count in sorted(empty.items()):
        if name in decoded:
            provenance.notes.append(f"metric {name} has no data in {count} of {len(loaded)} files; "
                                    "its values there are NaN")


def _report_gaps(loaded: list[tuple[Run, Profile]], per_point: list[list[tuple[Run, Profile]]],
                 rows_of: dict[int, np.ndarray], n_cp: int, tree: CallTree, coords: list[tuple[float, ...]],
                 parameters: tuple[str, ...], provenance: Provenance) -> None:
    """Notes on call paths measured in some runs only, and on runs of a point with other location counts."""
    present = np.zeros(n_cp, dtype=np.int64)
    for _, prof in loaded:
        present[rows_of[id(prof)]] += 1
    partial = np.nonzero(present < len(loaded))[0]
    if partial.size:
        examples = ", ".join(f"{tree[int(i)].path} ({present[i]} of {len(loaded)} runs)" for i in partial[:3])
        more = f" and {partial.size - 3} more" if partial.size > 3 else ""
        provenance.notes.append(f"{partial.size} call paths appear in some runs only and are NaN where they were "
                                f"not measured: {examples}{more}")
    for pt, entries in enumerate(per_point):
        counts = sorted({prof.locations for _, prof in entries})
        if len(counts) > 1:
            label = ", ".join(f"{p}={v:g}" for p, v in zip(parameters, coords[pt], strict=True))
            provenance.notes.append(f"runs at {label} have different numbers of locations ({counts}); "
                                    "per-location values are NaN-padded")


@hookimpl(trylast=True)
def pmkit_register_readers(register: Callable[[Any], None]) -> None:
    register(CubeReader())
