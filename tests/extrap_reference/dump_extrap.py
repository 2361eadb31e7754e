"""Dump what Extra-P itself reads from each Extra-P input file, as reference data for pmkit's readers.

Run with the Python of an environment where Extra-P is installed (Extra-P pins numpy<2, so not
pmkit's own environment); the reference JSON beside this script was produced by:

    /tmp/extrap-venv/bin/python tests/extrap_reference/dump_extrap.py \
        ../shared/data/extrap-formats tests/extrap_reference/extrap_reference.json.gz

For every file it records which Extra-P reader was used and either what it read (parameters,
points in Extra-P's order, call paths, metrics and, per call path, metric and point, the
repetition values) or the error Extra-P raised.  The reference is gzip-compressed JSON (about
60 kB instead of 440 kB): ``{"extrap_version": ..., "files": {relative path: record}}``.  Extra-P
drops repetition values unless asked to keep them, and its JSON Lines path never passes that
request on, so every Measurement is made with ``keep_values=True`` here.
"""

from __future__ import annotations

import gzip
import json
import sys
import warnings
from pathlib import Path

import extrap
import numpy as np
from extrap.entities import measurement as measurement_module
from extrap.fileio.file_reader.json_file_reader import JsonFileReader
from extrap.fileio.file_reader.talpas_file_reader import TalpasFileReader
from extrap.fileio.file_reader.text_file_reader import TextFileReader

_original_init = measurement_module.Measurement.__init__


def _keep_values_init(self, *args, **kwargs):
    kwargs["keep_values"] = True
    _original_init(self, *args, **kwargs)


measurement_module.Measurement.__init__ = _keep_values_init


def reader_for(relative: Path):
    """The Extra-P reader a user would pick for this file (by folder and extension)."""
    folder = relative.parts[0]
    suffix = relative.suffix.lower()
    if folder == "talpas":
        return TalpasFileReader()
    if folder in ("json", "jsonlines") or suffix in (".json", ".jsonl"):
        return JsonFileReader()
    if suffix == ".txt":
        return TextFileReader()
    return None


def values_of(m) -> list[float]:
    values = m.values
    if values is None:
        return []
    if np.ma.isMaskedArray(values):
        values = values.compressed()
    return [float(v) for v in np.asarray(values, dtype=float).ravel()]


def dump(path: Path, reader) -> dict:
    reader.keep_values = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            experiment = reader.read_experiment(path)
    except Exception as exc:  # record whatever Extra-P raises: that is the reference behaviour
        return {"reader": reader.NAME, "status": "error", "error": f"{type(exc).__name__}: {exc}"}
    points = [tuple(float(v) for v in c) for c in experiment.coordinates]
    index = {p: i for i, p in enumerate(points)}
    measurements = []
    for (callpath, metric), ms in experiment.measurements.items():
        for m in ms:
            point = index[tuple(float(v) for v in m.coordinate)]
            measurements.append([callpath.name, metric.name, point, values_of(m)])
    return {
        "reader": reader.NAME,
        "status": "ok",
        "parameters": [p.name for p in experiment.parameters],
        "points": [list(p) for p in points],
        "callpaths": [c.name for c in experiment.callpaths],
        "metrics": [m.name for m in experiment.metrics],
        "measurements": measurements,
    }


def main(root: str, out: str) -> None:
    base = Path(root)
    result = {}
    for path in sorted(p for p in base.rglob("*") if p.is_file()):
        relative = path.relative_to(base)
        reader = reader_for(relative)
        if reader is None:
            continue
        result[relative.as_posix()] = dump(path, reader)
    document = {"extrap_version": extrap.__version__, "files": result}
    text = json.dumps(document, separators=(",", ":"), sort_keys=True) + "\n"
    if out.endswith(".gz"):  # mtime=0 keeps the bytes identical from run to run
        with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as file:
            file.write(text.encode())
    else:
        Path(out).write_text(text)
    ok = sum(1 for r in result.values() if r["status"] == "ok")
    print(f"{len(result)} files, {ok} read, {len(result) - ok} rejected -> {out}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
