"""Which OTF2 traces make up a study, and at which coordinates: Extra-P's run folder names.

A Score-P run with tracing leaves a folder with ``traces.otf2`` (the anchor), ``traces.def`` and
``traces/``.  A study is a folder of such run folders named as Extra-P expects
(``app.p8.r1/traces.otf2``, ``app.p8.r2/…``, ``app.p16.r1/…``; see
:mod:`pmkit.readers.cube_study` for the naming rules, shared with Cube studies); runs with the
same coordinates are repetitions.  One anchor file or one run folder is a study of one run.
"""

from __future__ import annotations

from pathlib import Path

from pmkit.errors import InputError
from pmkit.readers.cube_study import Run, Study, from_names, parse_run_name

ANCHOR_SUFFIX = ".otf2"


def anchor_of(folder: Path) -> Path | None:
    """The anchor file of a run folder (``traces.otf2``, or its only ``*.otf2``), if it has one."""
    preferred = folder / "traces.otf2"
    if preferred.is_file():
        return preferred
    anchors = sorted(f for f in folder.glob(f"*{ANCHOR_SUFFIX}") if f.is_file() and not f.name.startswith("."))
    return anchors[0] if len(anchors) == 1 else None


def is_trace_input(path: Path) -> bool:
    """An anchor file, a run folder or a study folder of runs: what the OTF2 reader recognises."""
    if path.is_file():
        return path.suffix == ANCHOR_SUFFIX
    if not path.is_dir():
        return False
    return anchor_of(path) is not None or any(anchor_of(d) is not None for d in _subfolders(path))


def _subfolders(path: Path) -> list[Path]:
    return sorted(d for d in path.iterdir() if d.is_dir() and not d.name.startswith("."))


def discover(path: Path) -> Study:
    """The runs of ``path``: an anchor file, a run folder, or a folder of run folders.

    A run's ``file`` is its anchor.  Raises InputError naming the folder and the problem.
    """
    if path.is_file():
        return _single(path)
    own = anchor_of(path)
    if own is not None:
        return _single(own)
    entries = [(anchor, folder.name) for folder in _subfolders(path) if (anchor := anchor_of(folder)) is not None]
    if not entries:
        raise InputError(path, "contains no OTF2 trace (expected traces.otf2, or one folder per run such as "
                               "app.p8.r1/traces.otf2)")
    return from_names(path, entries)


def _single(anchor: Path) -> Study:
    folder = anchor.resolve().parent
    try:
        name = parse_run_name(folder.name)
    except ValueError:
        return Study([Run(anchor, {"run": 1.0}, None, folder.name)], ("run",),
                     [f"no parameters in the folder name {folder.name!r}; the trace is point run=1"])
    return Study([Run(anchor, name.coordinates, name.repetition, folder.name)], tuple(name.coordinates))
