"""Measured runs with one value per process: each run's call paths × processes, and section times from them.

Runs come from Cube studies read file by file (a run is one ``.cubex`` file, named by its folder as
in Extra-P's convention, ``stencil.p8.n32.r1``) or from an :class:`~pmkit.experiment.Experiment`
with per-location values (a run is one repetition at one point).  Values are exclusive per call
path; a call path a run never entered counts 0 there.  A section's time on a process is the sum of
its call paths' values; call paths are given exactly (``main->solve``), by region name
(``MPI_Allreduce``: every call path ending there) or as patterns (``*`` within one region name,
``**`` across levels: ``main->halo->*``, ``**->MPI_Wait*``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pmkit import executors
from pmkit.errors import InputError
from pmkit.experiment import CALLPATH_SEPARATOR, CallTree, Experiment


@dataclass
class MeasuredRun:
    """One run: its name, coordinates (from the folder name), repetition, file, and per metric the
    exclusive values, call paths (of :attr:`Measurements.callpaths`) × processes."""

    label: str
    coordinates: dict[str, float]
    repetition: int | None
    source: str
    values: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def processes(self) -> int:
        return next(iter(self.values.values())).shape[1]


@dataclass
class Measurements:
    """Measured runs sharing one call tree (the union of the runs' trees)."""

    tree: CallTree
    runs: list[MeasuredRun]
    units: dict[str, str] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def callpaths(self) -> list[str]:
        return self.tree.paths()

    def find(self, label: str) -> MeasuredRun | None:
        for run in self.runs:
            if run.label == label:
                return run
        return None


def study_paths(data: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Path]:
    """One path or several, as paths."""
    if isinstance(data, (str, os.PathLike)):
        return [Path(data)]
    return [Path(p) for p in data]


def load_studies(paths: Sequence[str | Path], metrics: Sequence[str]) -> Measurements:
    """Read every run of the Cube studies (folders, files or manifests) in ``paths``.

    A file that cannot be read, or lacks a metric, is listed in ``skipped`` with the reason; an
    InputError is raised only when no run is left.  Each run is a task of the current executor.
    """
    from pmkit.readers.cube_study import discover

    found = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise InputError(path, "no such file or directory")
        found.extend(discover(path).runs)
    tree = CallTree()
    out = Measurements(tree, [])
    labels: dict[str, str] = {}
    for run in found:
        label = run.label or run.file.parent.name
        if label in labels:
            raise InputError(run.file, f"run {label!r} appears twice (also {labels[label]}); give studies whose "
                             "run folders have distinct names")
        labels[label] = str(run.file)
    loaded = executors.current().map(load_run, [(run.file, list(metrics)) for run in found],
                                     description="reading Cube files")
    for run, profile in zip(found, loaded, strict=True):
        if isinstance(profile, str):
            out.skipped.append((str(run.file), profile))
            continue
        missing = [m for m in metrics if m not in profile.values]
        if missing:
            have = ", ".join(sorted(profile.values)) or "none"
            out.skipped.append((str(run.file), f"has no values of metric {', '.join(missing)} (it has {have})"))
            continue
        rows = np.fromiter((tree.add(list(p)) for p in profile.paths), dtype=np.int64, count=len(profile.paths))
        measured = MeasuredRun(run.label or run.file.parent.name, dict(run.coordinates), run.repetition, str(run.file))
        for metric in metrics:
            measured.values[metric] = _Sparse(rows, profile.values[metric])  # type: ignore[assignment]
            out.units.setdefault(metric, profile.metrics[metric].unit)
        out.runs.append(measured)
    if not out.runs:
        reasons = "; ".join(f"{Path(f).name}: {r}" for f, r in out.skipped[:3]) or "no runs found"
        raise InputError(", ".join(map(str, paths)), f"no run could be read ({reasons})")
    for run in out.runs:
        run.values = {m: v.dense(len(tree)) for m, v in run.values.items()}  # type: ignore[attr-defined]
    return out


def load_run(file: Path, metrics: Sequence[str]) -> Any:
    """One run's task: its exclusive per-location values of ``metrics``, or why it cannot be read."""
    from pmkit.readers.cube_profile import CubeFileError, load_profile

    try:
        return load_profile(file, metrics, inclusive=False)
    except CubeFileError as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"


class _Sparse:
    """A run's values on its own call paths, until the union tree is complete."""

    def __init__(self, rows: np.ndarray, matrix: np.ndarray) -> None:
        self.rows = rows
        self.matrix = matrix

    def dense(self, n: int) -> np.ndarray:
        out = np.zeros((n, self.matrix.shape[1]))
        out[self.rows] = np.nan_to_num(self.matrix, nan=0.0)
        return out


def from_experiment(experiment: Experiment, metrics: Sequence[str]) -> Measurements:
    """The runs of an experiment with per-location values: one per point and repetition.

    Runs are named like Extra-P's folders (``p8.n32.r1``, the repetition being the position among
    the point's repetitions) so that parameter tables can refer to them by coordinates.  Inclusive
    values are turned into exclusive ones.  Metrics without per-location values raise InputError.
    """
    locations = experiment.locations or {}
    tree = experiment.callpaths
    out = Measurements(tree, [])
    missing = [m for m in metrics if not locations.get(m) or all(a is None for a in locations[m])]
    if missing:
        raise InputError(experiment.provenance.sources[0] if experiment.provenance.sources else None,
                         f"metric {', '.join(missing)} has no per-process values (Cube profiles keep them; "
                         "other formats have one value per run)")
    parents = np.array([-1 if c.parent is None else c.parent for c in tree], dtype=np.int64)
    for point in range(len(experiment.points)):
        arrays = {m: locations[m][point] for m in metrics}
        if any(a is None for a in arrays.values()):
            continue
        coordinates = {p: float(v) for p, v in zip(experiment.parameters, experiment.points[point], strict=True)}
        repetitions = min(a.shape[1] for a in arrays.values())
        for rep in range(repetitions):
            per_metric = {m: arrays[m][:, rep, :] for m in metrics}
            if any(not np.isfinite(v).any() for v in per_metric.values()):
                continue
            label = ".".join(f"{p}{_number(v)}" for p, v in coordinates.items()) + f".r{rep + 1}"
            run = MeasuredRun(label, coordinates, rep + 1, ", ".join(experiment.provenance.sources[:1]))
            for metric, values in per_metric.items():
                processes = np.isfinite(values).any(axis=0)
                values = np.nan_to_num(values[:, processes], nan=0.0)
                if experiment.metric(metric).inclusive:
                    values = _exclusive(values, parents)
                run.values[metric] = values
                out.units.setdefault(metric, experiment.metric(metric).unit)
            out.runs.append(run)
    if not out.runs:
        raise InputError(experiment.provenance.sources[0] if experiment.provenance.sources else None,
                         "no run has per-process values")
    return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _exclusive(inclusive: np.ndarray, parents: np.ndarray) -> np.ndarray:
    children = np.zeros_like(inclusive)
    rows = np.nonzero(parents >= 0)[0]
    np.add.at(children, parents[rows], inclusive[rows])
    return inclusive - children


def _pattern(text: str) -> re.Pattern[str]:
    """A call path pattern as a regular expression: ``*`` stays within a region name, ``**`` crosses levels."""
    out = []
    i = 0
    one_level = rf"(?:(?!{re.escape(CALLPATH_SEPARATOR)}).)"
    while i < len(text):
        if text.startswith("**", i):
            out.append(".*")
            i += 2
        elif text[i] == "*":
            out.append(one_level + "*")
            i += 1
        elif text[i] == "?":
            out.append(one_level)
            i += 1
        elif text[i] == "[":
            end = text.find("]", i + 1)
            if end < 0:
                out.append(re.escape(text[i]))
                i += 1
            else:
                body = text[i + 1:end].replace("\\", "\\\\")
                out.append(f"[^{body[1:]}]" if body.startswith("!") else f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(text[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def match_callpaths(patterns: Sequence[str], tree: CallTree, *, inclusive: bool = False) -> tuple[list[int], list[str]]:
    """Indices of the call paths ``patterns`` select (with their descendants when ``inclusive``), and the
    patterns that select nothing."""
    paths = tree.paths()
    chosen: list[int] = []
    unmatched: list[str] = []
    for pattern in patterns:
        if any(c in pattern for c in "*?["):
            regex = _pattern(pattern)
            hits = [i for i, p in enumerate(paths) if regex.fullmatch(p)]
        elif CALLPATH_SEPARATOR in pattern:
            hits = [tree.index(pattern)] if pattern in tree else []
        else:
            hits = [c.index for c in tree if c.name == pattern]
        if not hits:
            unmatched.append(pattern)
        chosen.extend(hits)
    if inclusive:
        stack = list(chosen)
        while stack:
            for child in tree.children(stack.pop()):
                chosen.append(child)
                stack.append(child)
    return sorted(set(chosen)), unmatched


def section_values(runs: Sequence[MeasuredRun], metric: str, rows: Sequence[int], width: int) -> np.ndarray:
    """Runs × ``width`` (processes, NaN-padded) sums of the ``rows`` call paths' values."""
    out = np.full((len(runs), width), np.nan)
    index = np.asarray(rows, dtype=np.int64)
    for r, run in enumerate(runs):
        values = run.values[metric]
        out[r, : values.shape[1]] = values[index].sum(axis=0) if index.size else 0.0
    return out
