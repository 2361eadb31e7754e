"""The JSON entries of a chunk of model columns: what :meth:`pmkit.models.Model.to_json` gives each
model, plus its ``source``, built from the columns without a Model object.

Quality figures stay floats (NaN where unknown); the JSON writers write non-finite numbers as null,
as :func:`pmkit.schema.finite_json` does.
"""

from __future__ import annotations

from typing import Any

from pmkit.modelcolumns import QUALITY_FIELDS, ModelColumns


def model_entries(columns: ModelColumns, source: str, start: int, stop: int) -> list[dict[str, Any]]:
    """The entries of series ``start:stop``, in order."""
    factors = [[f.to_json() for f in shape] for shape in columns.shapes]
    bounds = columns.term_start[start:stop + 1].tolist()
    first, last = bounds[0], bounds[-1]
    coefficients = columns.coefficient[first:last].tolist()
    shapes = columns.shape_of_term[first:last].tolist()
    texts, pretty = columns.extrap_texts(start, stop), columns.pretty_texts(start, stop)
    c0 = columns.c0[start:stop].tolist()
    has = columns.has_function[start:stop].tolist()
    quality = columns.quality[start:stop].tolist()
    points = columns.points[start:stop].tolist()
    notes = [list(group) for group in columns.note_groups]
    outliers = [[dict(point) for point in group] for group in columns.outlier_groups]
    outlier_group = columns.outlier_group[start:stop].tolist()
    note_group = columns.note_group[start:stop].tolist()
    names = columns.modeler_names
    modeler = columns.modeler_of[start:stop].tolist()
    callpaths, metrics = columns.callpaths, columns.metrics
    out = []
    for k in range(stop - start):
        function = None
        if has[k]:
            terms = [{"coefficient": coefficients[t], "factors": factors[shapes[t]]}
                     for t in range(bounds[k] - first, bounds[k + 1] - first)]
            function = {"constant": c0[k], "terms": terms}
        out.append({"callpath": callpaths[start + k], "metric": metrics[start + k], "modeler": names[modeler[k]],
                    "function": function, "text": texts[k], "pretty": pretty[k],
                    "quality": dict(zip(QUALITY_FIELDS, quality[k], strict=True)), "points": points[k],
                    "notes": notes[note_group[k]], "outliers": outliers[outlier_group[k]], "source": source})
    for i, function in columns.own_functions.items():
        if start <= i < stop:
            out[i - start]["function"] = function.to_json()
    return out
