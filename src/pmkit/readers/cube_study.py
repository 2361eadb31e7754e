"""Which Cube files make up a study, and at which coordinates: Extra-P's folder names or a manifest.

Extra-P's convention (``docs/file-formats.md`` of Extra-P): one folder per run, named
``[PREFIX "."] PAIRS [".r" REPETITION]`` with ``PAIRS = NAME VALUE *(["." / ","] NAME VALUE)``, for
example ``mm.x1y1z1.r1``, ``lulesh.p64.size30.r2``, ``mm.a1,1.b1,1.r1`` (decimal commas) or
``x1y1z1``; runs with the same coordinates are repetitions.  Unlike Extra-P (which cuts at the
first ``.r`` anywhere), only a trailing ``.r<digits>`` is a repetition, so ``app.ranks4`` is a
parameter ``ranks``; and a name without a prefix (``p64.size30``) keeps its first pair.  Studies
named any other way list their files in a manifest (TOML or CSV) instead.
"""

from __future__ import annotations

import csv
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath

from pmkit.errors import InputError, excerpt, os_problem, path_text
from pmkit.readers.limits import MIB, Limits
from pmkit.readers.parsing import read_text

MANIFEST_NAMES = ("pmkit-manifest.toml", "pmkit-manifest.csv")
"""Manifests found automatically in a study folder."""

MANIFEST_MB = 64
"""Largest manifest read (MiB): a line per run, so a million runs fit."""

_REPETITION = re.compile(r"^(?P<base>.*)\.r(?P<rep>\d+)$")
_PAIR = r"[A-Za-z_]+\d+(?:[.,]\d+)?"
_PAIRS = re.compile(rf"{_PAIR}(?:[.,]?{_PAIR})*")
_PAIR_PARTS = re.compile(r"([A-Za-z_]+)(\d+(?:[.,]\d+)?)")


@dataclass(frozen=True)
class RunName:
    """A run folder's name taken apart: its prefix, coordinates by parameter, and repetition."""

    prefix: str
    coordinates: dict[str, float]
    repetition: int | None


@dataclass
class Run:
    """One Cube file of a study and where it belongs."""

    file: Path
    coordinates: dict[str, float]
    repetition: int | None = None
    label: str = ""


@dataclass
class Study:
    """The runs of a study, its parameters in order, what was decided on the way, and the entries of
    the folder that could not be looked into (with why)."""

    runs: list[Run]
    parameters: tuple[str, ...]
    notes: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def parse_run_name(name: str) -> RunName:
    """Coordinates from an Extra-P style run name; ValueError saying why when there are none."""
    base, repetition = name, None
    match = _REPETITION.match(name)
    if match:
        base, repetition = match["base"], int(match["rep"])
    candidates = [("", base)] + [(base[:i], base[i + 1:]) for i, ch in enumerate(base) if ch == "."]
    for prefix, rest in candidates:
        if _PAIRS.fullmatch(rest):
            coordinates: dict[str, float] = {}
            for pname, value in _PAIR_PARTS.findall(rest):
                if pname in coordinates:
                    raise ValueError(f"parameter {pname!r} appears twice in {excerpt(name)}")
                coordinates[pname] = float(value.replace(",", "."))
            return RunName(prefix, coordinates, repetition)
    hint = f" (the trailing .r{repetition} is read as repetition {repetition})" if repetition is not None else ""
    raise ValueError(f"cannot find parameters in the name {excerpt(name)}{hint}; expected [PREFIX.]PARAMS[.rREP] "
                     "with PARAMS like p64, p64.size30 or x1y1z1 (letters then a number), or list the "
                     f"runs in a manifest ({' or '.join(MANIFEST_NAMES)})")


def find_manifest(folder: Path) -> Path | None:
    """The manifest in a study folder, if it has one."""
    for name in MANIFEST_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def discover(path: Path, manifest: Path | None = None) -> Study:
    """The runs of ``path``: a ``.cubex`` file, a folder of run folders, or a manifest (given, in the
    folder, or ``path`` itself).

    Raises InputError naming the folder or manifest and the problem.
    """
    if manifest is None and path.is_dir():
        manifest = find_manifest(path)
    if manifest is None and path.is_file() and path.suffix.lower() in (".toml", ".csv"):
        manifest = path
    if manifest is not None:
        return _from_manifest(manifest)
    if path.is_file():
        return _single(path)
    if path.exists() and not path.is_dir():
        raise InputError(path, "is neither a .cubex file nor a folder of runs (a device or a pipe?)")
    unreadable = _unreadable_entries(path)
    files = sorted(f for f in path.glob("*/*.cubex") if not f.name.startswith(".") and f.is_file())
    if not files:
        direct = sorted(f for f in path.glob("*.cubex") if not f.name.startswith(".") and f.is_file())
        if len(direct) == 1:
            return _single(direct[0])
        if not direct:
            hint = f"; {len(unreadable)} entries cannot be read, e.g. {unreadable[0][0]}: {unreadable[0][1]}" \
                if unreadable else ""
            raise InputError(path, "contains no .cubex files (expected one folder per run, e.g. "
                             f"app.p64.r1/profile.cubex, or a manifest){hint}")
        study = from_names(path, [(f, f.stem) for f in direct])
    else:
        study = from_names(path, [(f, f.parent.name) for f in files])
    study.skipped.extend(unreadable)
    return study


def _unreadable_entries(folder: Path) -> list[tuple[str, str]]:
    """Entries of a study folder that cannot be looked into — a run folder without read permission,
    a symbolic link loop — with why: they are reported as skipped, not silently passed over."""
    try:
        entries = list(os.scandir(folder))
    except OSError as exc:
        raise InputError.from_os_error(folder, exc) from None
    out: list[tuple[str, str]] = []
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.name.startswith("."):
            continue
        try:
            if not entry.is_dir():
                if entry.is_symlink():
                    os.stat(entry.path)  # a dangling link or a loop raises here
                continue
            with os.scandir(entry.path):
                pass
        except OSError as exc:
            out.append((entry.path, os_problem(exc)))
    return out


def _single(file: Path) -> Study:
    try:
        name = parse_run_name(file.parent.name)
    except ValueError:
        return Study([Run(file, {"run": 1.0}, None, file.name)], ("run",),
                     [f"no parameters in the folder name {file.parent.name!r}; the profile is point run=1"])
    return Study([Run(file, name.coordinates, name.repetition, file.parent.name)], tuple(name.coordinates))


def from_names(folder: Path, entries: list[tuple[Path, str]]) -> Study:
    """The study of ``folder``'s runs, each ``(file, label)`` with its parameters in the label (``app.p64.r1``).

    A label without parameters — a stray folder beside the runs (``old/``, Score-P's default
    ``scorep-20240607_1200_123``) — is skipped with why, as an unreadable run is, so that one such entry does
    not stop the whole study; when no label has parameters, the first one's problem is the error.  Runs naming
    different parameters are an error: which of them is the stray one cannot be told.
    """
    runs: list[Run] = []
    skipped: list[tuple[str, str]] = []
    unnamed: list[InputError] = []
    order: tuple[str, ...] | None = None
    first = ""
    for file, label in entries:
        try:
            name = parse_run_name(label)
        except ValueError as exc:
            problem = str(exc).replace(repr(label)[1:-1], path_text(label))  # a byte not UTF-8 as \xfe, not \udcfe
            unnamed.append(InputError(folder, problem, member=label))
            skipped.append((path_text(file), f"not a run of the study: {problem}"))
            continue
        names = tuple(name.coordinates)
        if order is None:
            order, first = names, label
        elif set(names) != set(order):
            raise InputError(folder, f"runs name different parameters: {label!r} has {list(names)} but "
                             f"{first!r} has {list(order)}", member=label)
        runs.append(Run(file, name.coordinates, name.repetition, label))
    if order is None:
        raise unnamed[0]
    study = drop_constant(Study(runs, order))
    study.skipped.extend(skipped)
    return study


def drop_constant(study: Study) -> Study:
    """Drop parameters with one value in every run, as Extra-P does (``x1y1z1`` varies only x)."""
    if len(study.runs) < 2:
        return study
    constant = [p for p in study.parameters if len({r.coordinates[p] for r in study.runs}) == 1]
    if not constant or len(constant) == len(study.parameters):
        if constant:
            study.notes.append("every run has the same coordinates; all parameters are kept")
        return study
    for p in constant:
        study.notes.append(f"parameter {p} is {_num(study.runs[0].coordinates[p])} in every run and was dropped, "
                           "as Extra-P does")
    for run in study.runs:
        run.coordinates = {k: v for k, v in run.coordinates.items() if k not in constant}
    study.parameters = tuple(p for p in study.parameters if p not in constant)
    return study


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def _from_manifest(manifest: Path) -> Study:
    if not manifest.is_file():
        raise InputError(manifest, "manifest not found")
    if manifest.suffix.lower() == ".toml":
        rows = _toml_rows(manifest)
    elif manifest.suffix.lower() == ".csv":
        rows = _csv_rows(manifest)
    else:
        raise InputError(manifest, "a manifest must be a .toml or .csv file")
    if not rows:
        raise InputError(manifest, "lists no runs")
    runs: list[Run] = []
    order: tuple[str, ...] | None = None
    for where, row in rows:
        row = dict(row)
        file_text = row.pop("file", None)
        if not isinstance(file_text, str) or not file_text.strip():
            raise InputError(manifest, "a run has no 'file'", **where)
        repetition = row.pop("repetition", None)
        coordinates: dict[str, float] = {}
        for key, value in row.items():
            shown = f"coordinate {excerpt(key, quote=False)}={excerpt(value)}"
            try:
                number = float(value)
            except (TypeError, ValueError, OverflowError):
                raise InputError(manifest, f"{shown} is not a number", **where) from None
            if not math.isfinite(number):
                raise InputError(manifest, f"{shown} is not a finite number", **where)
            coordinates[str(key)] = number
        if not coordinates:
            raise InputError(manifest, f"run {excerpt(file_text)} has no coordinates", **where)
        if order is None:
            order = tuple(coordinates)
        elif set(coordinates) != set(order):
            raise InputError(manifest, f"run {excerpt(file_text)} has parameters {list(coordinates)}, others have "
                             f"{list(order)}", **where)
        target = _inside(manifest, file_text.strip(), where)
        files = [target] if target.is_file() else sorted(target.glob("[!.]*.cubex")) if target.is_dir() else []
        if not files:
            raise InputError(manifest, f"run file {excerpt(file_text)} does not exist (looked for {target})", **where)
        try:
            rep = None if repetition in (None, "") else int(repetition)
        except (TypeError, ValueError):
            raise InputError(manifest, f"repetition {excerpt(repetition)} is not an integer", **where) from None
        runs.extend(Run(f, dict(coordinates), rep, file_text) for f in files)
    assert order is not None
    return Study(runs, order, [f"runs and coordinates from manifest {manifest}"])


def _inside(manifest: Path, name: str, where: dict) -> Path:
    """A run named in ``manifest``: a path relative to the manifest's folder that stays inside it.

    Absolute paths and paths leading out of the folder (``..``) are refused, so a manifest can name
    only files of its own study — the study folder can be moved or archived whole, and a manifest
    from elsewhere cannot make pmkit read files outside it.  Symbolic links inside the folder are
    the folder owner's choice and are followed.
    """
    given = PurePath(name)
    if given.is_absolute() or given.drive:
        raise InputError(manifest, f"run file {excerpt(name)} is an absolute path; a manifest names its runs "
                         "relative to its own folder (put the manifest at the top of the study)", **where)
    parts = PurePath(os.path.normpath(name)).parts
    if parts and parts[0] == "..":
        raise InputError(manifest, f"run file {excerpt(name)} leads outside the manifest's folder; a manifest "
                         "names only runs inside its own folder (put the manifest at the top of the study)", **where)
    return (manifest.parent / name).resolve()


def _toml_rows(manifest: Path) -> list[tuple[dict, dict]]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    text = read_text(manifest, Limits(input_bytes=MANIFEST_MB * MIB))
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(manifest, f"is not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError(manifest, "is not usable TOML: it is nested too deeply") from None
    runs = data.get("run")
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise InputError(manifest, "expected [[run]] tables, each with file = \"...\" and numeric coordinates")
    return [({"member": f"run {i + 1}"}, r) for i, r in enumerate(runs)]


def _csv_rows(manifest: Path) -> list[tuple[dict, dict]]:
    text = read_text(manifest, Limits(input_bytes=MANIFEST_MB * MIB))
    reader = csv.DictReader(text.splitlines())
    rows = []
    try:
        if not reader.fieldnames or "file" not in [f.strip() for f in reader.fieldnames]:
            raise InputError(manifest, "the header must name a 'file' column and one column per parameter", line=1)
        for row in reader:
            if None in row or None in row.values():
                raise InputError(manifest, "has a different number of fields than the header", line=reader.line_num)
            rows.append(({"line": reader.line_num}, {k.strip(): v.strip() for k, v in row.items()}))
    except csv.Error as exc:  # e.g. a field longer than the csv module's limit (128 KiB)
        raise InputError(manifest, f"is not usable CSV after line {reader.line_num}: {exc}") from None
    return rows
