"""pmkit's versioned JSON output: the documents ``pmkit model --json`` and ``pmkit show --json`` print.

Scripts depend on this layout; change it only by adding keys, and bump :data:`SCHEMA` when a key
changes meaning.  The README documents every key.  Objects' ``to_json`` methods give plain values;
the documents assembled here pass through :func:`finite_json`, so no NaN or infinity reaches a file.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pmkit.analysis import Analysis, InputAnalysis, Skipped
    from pmkit.findings import Finding
    from pmkit.models import Model

SCHEMA = "pmkit.models/1"


def models_document(parameters: Sequence[str], models: Iterable[tuple[str, Model]], *,
                    sources: Sequence[str] = (), skipped: Iterable[Skipped] = (),
                    findings: Iterable[Finding] = ()) -> dict[str, Any]:
    """The output document for models of one parameter space; ``models`` pairs each with its source."""
    return finite_json(_document(parameters, [_model_entry(source, model) for source, model in models], sources,
                                 skipped, findings))


def show_document(analysis: Analysis) -> dict[str, Any]:
    """``pmkit show --json``: the models document, each model of the shown metric with its ``prediction``,
    and per input under ``show`` the reference point, target, totals, detail and contributed tables."""
    from pmkit.analysis import common_parameters

    parameters = common_parameters([(r.source, r.experiment) for r in analysis.inputs], "show")
    entries = []
    for result in analysis.inputs:
        for model in result.models:
            entry = _model_entry(result.source, model)
            entry["prediction"] = _prediction(result, model)
            entries.append(entry)
    findings = [f for result in analysis.inputs for f in result.findings or ()]
    document = _document(parameters, entries, [r.source for r in analysis.inputs], analysis.skipped, findings)
    document["show"] = [{"source": r.source, **r.report.prediction_document(),
                         **({"detail": r.detail.to_json()} if r.detail is not None else {}),
                         "tables": [t.to_json() for t in r.tables]} for r in analysis.inputs]
    return finite_json(document)


def _model_entry(source: str, model: Model) -> dict[str, Any]:
    return {**model.to_json(), "source": source}


def _prediction(result: InputAnalysis, model: Model) -> dict[str, Any] | None:
    """The scaling row of ``model``'s call path, when the model is of the analysed metric."""
    if model.metric != result.metric or model.callpath not in result.experiment.callpaths:
        return None
    row = result.report.row(model.callpath).to_json()
    return {k: v for k, v in row.items() if k != "callpath"}


def _document(parameters: Sequence[str], entries: list[dict[str, Any]], sources: Sequence[str],
              skipped: Iterable[Skipped], findings: Iterable[Finding]) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "parameters": list(parameters),
        "sources": list(sources),
        "skipped": [s.to_json() for s in skipped],
        "models": entries,
        "findings": [f.to_json() for f in findings],
    }


def finite_json(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, ±inf) replaced by None: JSON has no such numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value
