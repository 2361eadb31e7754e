"""The ``pmkit.models/1`` document and JSON Lines, written with orjson chunk by chunk.

The document is the one :func:`pmkit.schema.models_document` assembles from Model objects — same
keys, same values once parsed — written member by member, indented by two spaces, with the
``models`` list streamed from the columns one model per line (greppable, and a third smaller and
faster than every key on a line of its own).  JSON Lines: the first line is the document without
``models`` (``schema``, ``parameters``, ``sources``, ``skipped``, ``findings``), then one line per
model with the keys of a ``models`` entry.  ``pmkit model`` writes each entry's text straight from the columns
(:func:`pmkit.writers.entries.entry_texts`, orjson's bytes without the dicts); ``pmkit show``, whose entries
carry a ``prediction``, dumps the entries' dicts with orjson.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from pmkit.collector import collector_paused
from pmkit.schema import models_document
from pmkit.writers import CHUNK
from pmkit.writers.entries import entry_texts, model_entries

if TYPE_CHECKING:
    from pmkit.analysis import Analysis, InputAnalysis, Skipped
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


Annotate = Callable[[int, list[dict[str, Any]]], None]
"""Adds keys to the entries of a chunk, given the chunk's first series (``prediction`` in pmkit show)."""


def _chunks(sets: Sequence[tuple[str, ModelSet]], size: int,
            annotate: Sequence[Annotate | None] = ()) -> Iterator[list[dict[str, Any]]]:
    """The entries of every set, a chunk at a time (``annotate[k]`` adds keys to set ``k``'s).

    The cycle collector is paused while a chunk is built: entries are small acyclic dicts, which it
    would otherwise scan again and again (half the time of building 100,000 of them, measured).
    """
    for k, (source, models) in enumerate(sets):
        columns = models.columns
        for start in range(0, len(columns), size):
            with collector_paused():
                entries = model_entries(columns, source, start, min(start + size, len(columns)))
                if k < len(annotate) and annotate[k] is not None:
                    annotate[k](start, entries)
            yield entries


def _head(parameters: Sequence[str], sources: Sequence[str], skipped: Iterable[Skipped],
          findings: Iterable[Finding]) -> dict[str, Any]:
    return models_document(parameters, [], sources=sources, skipped=skipped, findings=findings)


def _texts(sets: Sequence[tuple[str, ModelSet]], size: int, separator: str) -> Iterator[bytes]:
    """The entries of every set as orjson writes them (:func:`~pmkit.writers.entries.entry_texts`), a chunk at a
    time, joined by ``separator``."""
    option = _option()
    for source, models in sets:
        columns = models.columns
        for start in range(0, len(columns), size):
            with collector_paused():  # as in _chunks: many small objects, no cycles
                texts = entry_texts(columns, source, start, min(start + size, len(columns)), option)
            yield separator.join(texts).encode()


def write_document(stream: BinaryIO, parameters: Sequence[str], sets: Sequence[tuple[str, ModelSet]], *,
                   sources: Sequence[str] = (), skipped: Iterable[Skipped] = (),
                   findings: Iterable[Finding] = (), chunk: int = CHUNK) -> None:
    """``pmkit model --json``: the document of the models of every (source, model set)."""
    _write(stream, _head(parameters, sources, skipped, findings), _texts(sets, chunk, SEPARATOR.decode()))


def write_show_document(stream: BinaryIO, analysis: Analysis, chunk: int = CHUNK) -> None:
    """``pmkit show --json``: the document :func:`pmkit.schema.show_document` makes, each model's
    ``prediction`` taken from the scaling report's arrays."""
    from pmkit.analysis import common_parameters
    from pmkit.schema import finite_json, show_inputs

    inputs = analysis.inputs
    parameters = common_parameters([(r.source, r.experiment) for r in inputs], "show")
    findings = [f for result in inputs for f in result.findings or ()]
    head = _head(parameters, [r.source for r in inputs], analysis.skipped, findings)
    head["show"] = finite_json(show_inputs(analysis))
    sets = [(r.source, r.models) for r in inputs]
    plain = _option()
    _write(stream, head, (_joined(entries, plain, SEPARATOR) for entries in
                          _chunks(sets, chunk, [_predictions(r) for r in inputs])))


def _predictions(result: InputAnalysis) -> Annotate:
    """Adds each entry's ``prediction``: its call path's row of the report when the model is of the
    analysed metric and its call path is in the experiment, else None — the row's numbers from the
    report's arrays, its ``behaviour`` described a chunk at a time (:func:`pmkit.schema.behaviours`)."""
    from pmkit.schema import behaviours

    tree = result.experiment.callpaths
    columns, metric = result.models.columns, result.report.metric

    def annotate(start: int, entries: list[dict[str, Any]]) -> None:
        rows = [tree.index(columns.callpaths[start + k]) if columns.metrics[start + k] == metric
                and columns.callpaths[start + k] in tree else -1 for k in range(len(entries))]
        shown = [i for i in rows if i >= 0]
        predictions = iter(result.report.rows_json(shown))
        described = iter(behaviours(result.report, shown))
        for entry, row in zip(entries, rows, strict=True):
            prediction = next(predictions) if row >= 0 else None
            if prediction is not None:
                del prediction["callpath"]
                prediction["behaviour"] = next(described)
            entry["prediction"] = prediction

    return annotate


ENTRY_BOUND = b'},{"callpath":'
"""Where one entry ends and the next begins in orjson's text of a list of entries (each opens with its call path)."""


def _joined(entries: list[dict[str, Any]], option: int, separator: bytes) -> bytes:
    """Each entry as ``orjson.dumps(entry, option=option)`` writes it, joined by ``separator``: the list dumped at
    once and cut at the entries' bounds (:data:`ENTRY_BOUND`), half the time of a call per entry (0.3 s of
    ``pmkit model --json`` on 100,000 series, ``bench/README.md`` §12).  Where the bound's bytes also occur inside
    an entry (a list of dicts whose first key is "callpath") the entries are dumped one by one."""
    import orjson

    whole = orjson.dumps(entries, option=option)
    if whole.count(ENTRY_BOUND) == len(entries) - 1:
        return whole[1:-1].replace(ENTRY_BOUND, b"}" + separator + b'{"callpath":')
    return separator.join(orjson.dumps(entry, option=option) for entry in entries)


SEPARATOR = b",\n    "
"""Between two entries of the document's ``models``: one entry per line."""


def _write(stream: BinaryIO, head: dict[str, Any], chunks: Iterable[bytes]) -> None:
    """The document ``head`` (its ``models`` empty) with ``models`` streamed from ``chunks`` (each the text of
    entries joined by :data:`SEPARATOR`)."""
    import orjson

    indent = _option("OPT_INDENT_2")
    stream.write(b"{")
    for n, (key, value) in enumerate(head.items()):
        stream.write((b",\n  " if n else b"\n  ") + orjson.dumps(key) + b": ")
        if key != "models":
            stream.write(orjson.dumps(value, option=indent).replace(b"\n", b"\n  "))
            continue
        empty = True
        for text in chunks:
            if text:
                stream.write((b"[\n    " if empty else SEPARATOR) + text)
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
    for text in _texts(sets, chunk, "\n"):
        if text:
            stream.write(text + b"\n")
