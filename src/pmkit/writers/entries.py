"""The JSON entries of a chunk of model columns: what :meth:`pmkit.models.Model.to_json` gives each
model, plus its ``source``, built from the columns without a Model object.

Quality figures stay floats (NaN where unknown); the JSON writers write non-finite numbers as null,
as :func:`pmkit.schema.finite_json` does.
"""

from __future__ import annotations

from typing import Any

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
