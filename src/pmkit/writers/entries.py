"""The JSON entries of a chunk of model columns: what :meth:`pmkit.models.Model.to_json` gives each
model, plus its ``source``, built from the columns without a Model object.

Quality figures stay floats (NaN where unknown); the JSON writers write non-finite numbers as null,
as :func:`pmkit.schema.finite_json` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pmkit.modelcolumns import ModelColumns


def model_entries(columns: ModelColumns, source: str, start: int, stop: int) -> list[dict[str, Any]]:
    """The entries of series ``start:stop``, in order."""
    factors = columns.shape_json()
    bounds = columns.term_start[start:stop + 1].tolist()
    first = bounds[0]
    terms = [{"coefficient": c, "factors": factors[s]} for c, s in
             zip(columns.coefficient[first:bounds[-1]].tolist(), columns.shape_of_term[first:bounds[-1]].tolist(),
                 strict=True)]
    texts, pretty = columns.extrap_texts(start, stop), columns.pretty_texts(start, stop)
    c0 = columns.c0[start:stop].tolist()
    has = columns.has_function[start:stop].tolist()
    quality = columns.quality[start:stop].tolist()
    points = columns.points[start:stop].tolist()
    notes = [list(group) for group in columns.note_groups]
    note_group = columns.note_group[start:stop].tolist()
    outliers = [[dict(point) for point in group] for group in columns.outlier_groups]
    outlier_group = columns.outlier_group[start:stop].tolist()
    names = columns.modeler_names
    modeler = columns.modeler_of[start:stop].tolist()
    callpaths, metrics = columns.callpaths[start:stop], columns.metrics[start:stop]
    out = []
    for k in range(stop - start):
        q = quality[k]
        function = ({"constant": c0[k], "terms": terms[bounds[k] - first:bounds[k + 1] - first]} if has[k]
                    else None)
        out.append({"callpath": callpaths[k], "metric": metrics[k], "modeler": names[modeler[k]],
                    "function": function, "text": texts[k], "pretty": pretty[k],
                    "quality": {"rss": q[0], "smape": q[1], "adjusted_r2": q[2], "cv_smape": q[3]},
                    "points": points[k], "notes": notes[note_group[k]], "outliers": outliers[outlier_group[k]],
                    "segments": None, "change_point": None, "source": source})
    for i, function in columns.own_functions.items():
        if start <= i < stop:
            out[i - start]["function"] = function.to_json()
    for i, (segments, change) in columns.segments.items():
        if start <= i < stop:
            out[i - start]["segments"] = [segment.to_json() for segment in segments]
            out[i - start]["change_point"] = change.to_json()
    return out


ENTRY = '{"callpath":%s,"metric":%s,"modeler":%s,"function":%s,"text":%s,"pretty":%s,"quality":%s,%s'
"""An entry of :func:`model_entries` as orjson writes it (compact, keys in order), for the series with neither a
function of their own nor segments; the last part is :data:`TAIL`."""
QUALITY = '{"rss":%s,"smape":%s,"adjusted_r2":%s,"cv_smape":%s}'
TAIL = '"points":%d,"notes":%s,"outliers":%s,"segments":null,"change_point":null,"source":%s}'


def entry_texts(columns: ModelColumns, source: str, start: int, stop: int, option: int) -> list[str]:
    """The entries of series ``start:stop`` as JSON texts: each exactly ``orjson.dumps(entry, option=option)``
    of :func:`model_entries`' entry (decoded), without making the entries.

    Numbers are written by orjson, a list of a chunk's numbers at a time, and cut at the commas; strings and the
    shared parts (factors, notes, outliers) by orjson once each, unless they need no escaping (then they stand in
    quotes as they are, as orjson writes them); the rest is filled into :data:`ENTRY`.  Series with a function of
    their own or segments are written from their entry.  On 100,000 two-parameter models, 8 alternations in one
    process: making the entries as dicts, dumping and freeing them 0.871 s CPU (median 0.944), these texts 0.695
    (0.719), ``bench/README.md`` §12."""
    import orjson

    bounds = columns.term_start[start:stop + 1].tolist()
    first = bounds[0]
    factors = [orjson.dumps(shape, option=option).decode() for shape in columns.shape_json()]
    terms = [f'{{"coefficient":{c},"factors":{factors[s]}}}' for c, s in
             zip(_numbers(columns.coefficient[first:bounds[-1]]),
                 columns.shape_of_term[first:bounds[-1]].tolist(), strict=True)]
    functions = [f'{{"constant":{c},"terms":[{",".join(terms[a - first:b - first])}]}}' if has else "null"
                 for c, has, a, b in zip(_numbers(columns.c0[start:stop]), columns.has_function[start:stop].tolist(),
                                         bounds[:-1], bounds[1:], strict=True)]
    quality = _numbers(columns.quality[start:stop].ravel())
    qualities = [QUALITY % q for q in zip(quality[0::4], quality[1::4], quality[2::4], quality[3::4], strict=True)]
    notes = [orjson.dumps(list(group), option=option).decode() for group in columns.note_groups]
    outliers = [orjson.dumps([dict(point) for point in group], option=option).decode()
                for group in columns.outlier_groups]
    quoted_source = _quoted([source])[0]
    keys = list(zip(columns.points[start:stop].tolist(), columns.note_group[start:stop].tolist(),
                    columns.outlier_group[start:stop].tolist(), strict=True))  # the tail's parts: few distinct
    tails = {key: TAIL % (key[0], notes[key[1]], outliers[key[2]], quoted_source) for key in dict.fromkeys(keys)}
    tail = [tails[key] for key in keys]
    names = _quoted(columns.modeler_names)
    out = [ENTRY % row for row in zip(_quoted(columns.callpaths[start:stop]), _quoted(columns.metrics[start:stop]),
                                      [names[m] for m in columns.modeler_of[start:stop].tolist()], functions,
                                      _quoted(columns.extrap_texts(start, stop)),
                                      _quoted(columns.pretty_texts(start, stop)), qualities, tail, strict=True)]
    for i in {*columns.own_functions, *columns.segments}:
        if start <= i < stop:
            out[i - start] = orjson.dumps(model_entries(columns, source, i, i + 1)[0], option=option).decode()
    return out


def _numbers(values: np.ndarray) -> list[str]:
    """Each number as orjson writes it (NaN and infinity as null): the list dumped at once and cut at its commas."""
    import orjson

    if not len(values):
        return []
    return orjson.dumps(values.tolist())[1:-1].decode().split(",")


def _quoted(strings: Sequence[str | None]) -> list[str]:
    """Each string as orjson writes it, None as null.  A text without quotes, backslashes or unprintable characters
    (orjson escapes the quote, the backslash and the control characters below U+0020, all unprintable) is written
    as it is in quotes; this is checked for all of them at once, and where it fails each is dumped by orjson."""
    present = [s for s in strings if s is not None]
    joined = "".join(present)
    if joined.isprintable() and '"' not in joined and "\\" not in joined:
        return ["null" if s is None else f'"{s}"' for s in strings]
    import orjson

    return ["null" if s is None else orjson.dumps(s).decode() for s in strings]
