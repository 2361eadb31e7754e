"""The ``pmkit.models/1`` document and JSON Lines, written with orjson chunk by chunk.

The document is the one :func:`pmkit.schema.models_document` assembles from Model objects — same
keys, same values once parsed — written member by member, indented by two spaces, with the
``models`` list streamed from the columns one model per line (greppable, and a third smaller and
faster than every key on a line of its own).  JSON Lines: the first line is the document without
``models`` (``schema``, ``parameters``, ``sources``, ``skipped``, ``findings``), then one line per
model with the keys of a ``models`` entry.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from pmkit.schema import models_document
from pmkit.writers import CHUNK
from pmkit.writers.entries import model_entries

if TYPE_CHECKING:
    from pmkit.analysis import Skipped
    from pmkit.findings import Finding
    from pmkit.models import ModelSet


def _option(*names: str) -> int:
    """orjson's options ``names`` with those every write uses: non-string keys written as json.dumps
    writes them, numpy numbers as numbers (NaN and infinity are null, as in :func:`pmkit.schema.finite_json`)."""
    import orjson

    option = orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
    for name in names:
        option |= getattr(orjson, name)
    return option


def _chunks(sets: Sequence[tuple[str, ModelSet]], size: int) -> Iterator[list[dict[str, Any]]]:
    """The entries of every set, a chunk at a time.

    The cycle collector is paused while a chunk is built: entries are small acyclic dicts, which it
    would otherwise scan again and again (half the time of building 100,000 of them, measured).
    """
    for source, models in sets:
        columns = models.columns
        for start in range(0, len(columns), size):
            enabled = gc.isenabled()
            gc.disable()
            try:
                entries = model_entries(columns, source, start, min(start + size, len(columns)))
            finally:
                if enabled:
                    gc.enable()
            yield entries


def _head(parameters: Sequence[str], sources: Sequence[str], skipped: Iterable[Skipped],
          findings: Iterable[Finding]) -> dict[str, Any]:
    return models_document(parameters, [], sources=sources, skipped=skipped, findings=findings)


def write_document(stream: BinaryIO, parameters: Sequence[str], sets: Sequence[tuple[str, ModelSet]], *,
                   sources: Sequence[str] = (), skipped: Iterable[Skipped] = (),
                   findings: Iterable[Finding] = (), chunk: int = CHUNK) -> None:
    """``pmkit model --json``: the document of the models of every (source, model set)."""
    import orjson

    indent, plain = _option("OPT_INDENT_2"), _option()
    stream.write(b"{")
    for n, (key, value) in enumerate(_head(parameters, sources, skipped, findings).items()):
        stream.write((b",\n  " if n else b"\n  ") + orjson.dumps(key) + b": ")
        if key != "models":
            stream.write(orjson.dumps(value, option=indent).replace(b"\n", b"\n  "))
            continue
        empty = True
        for entries in _chunks(sets, chunk):
            if entries:
                stream.write((b"[\n    " if empty else b",\n    ")
                             + b",\n    ".join(orjson.dumps(entry, option=plain) for entry in entries))
                empty = False
        stream.write(b"[]" if empty else b"\n  ]")
    stream.write(b"\n}\n")


def write_lines(stream: BinaryIO, parameters: Sequence[str], sets: Sequence[tuple[str, ModelSet]], *,
                sources: Sequence[str] = (), skipped: Iterable[Skipped] = (),
                findings: Iterable[Finding] = (), chunk: int = CHUNK) -> None:
    """``pmkit model --format jsonl``: the document without ``models`` on the first line, then a line per model."""
    import orjson

    head = _head(parameters, sources, skipped, findings)
    del head["models"]
    line = _option("OPT_APPEND_NEWLINE")
    stream.write(orjson.dumps(head, option=line))
    for entries in _chunks(sets, chunk):
        stream.write(b"".join(orjson.dumps(entry, option=line) for entry in entries))
