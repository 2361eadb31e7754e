"""pmkit's versioned JSON output: the documents ``pmkit model --json``, ``pmkit show --json`` and
``pmkit compare --json`` print.

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
    from pmkit.comparison import Comparison
    from pmkit.findings import Finding
    from pmkit.models import Model
    from pmkit.scaling import ScalingReport

SCHEMA = "pmkit.models/1"
COMPARE_SCHEMA = "pmkit.compare/1"


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
    document["show"] = show_inputs(analysis)
    return finite_json(document)


def show_inputs(analysis: Analysis) -> list[dict[str, Any]]:
    """The ``show`` member of ``pmkit show --json``: per input the reference point, target, totals,
    strong-scaling parameters and speed-ups, the call paths left out of the predicted total, detail and
    contributed tables, and the input's other metrics (``--metric NAME`` shows one of them)."""
    return [{"source": r.source, **r.report.prediction_document(),
             "modeler_options": dict(sorted(r.models.options.items())),
             "other_metrics": [m for m in r.experiment.metric_names if m != r.report.metric],
             **({"detail": r.detail.to_json()} if r.detail is not None else {}),
             "total": _total(r), "speedups": [s.to_json() for s in r.speedups],
             "tables": [t.to_json() for t in r.tables]} for r in analysis.inputs]


def compare_document(comparison: Comparison, *, min_share: float = 0.01, top: int = 5) -> dict[str, Any]:
    """``pmkit compare --json``: both sides, the target, every call path on both sides, and the call paths
    that changed growth class, the ``top`` wins and losses (changes of at least ``min_share`` of A's
    predicted total) as lists of call paths; with ``--callpath`` each side's detail."""
    from pmkit.analysis import common_parameters

    a, b = comparison.a, comparison.b
    document: dict[str, Any] = {
        "schema": COMPARE_SCHEMA,
        "parameters": list(common_parameters([(a.source, a.experiment), (b.source, b.experiment)], "compare")),
        "target": comparison.target,
        "one_point": comparison.one_point,
        "comparable": comparison.comparable,
        "a": {"source": a.source, **a.report.prediction_document(), "summed_over_processes": a.summed_over_processes},
        "b": {"source": b.source, **b.report.prediction_document(), "summed_over_processes": b.summed_over_processes},
        "total_change": comparison.total_change,
        "callpaths": [row.to_json() for row in comparison.rows],
        "changed_class": [row.callpath for row in comparison.changed_class()],
        "wins": [row.callpath for row in comparison.wins(top, min_share)],
        "losses": [row.callpath for row in comparison.losses(top, min_share)],
    }
    if any(comparison.details):
        document["detail"] = {side: None if d is None else d.to_json()
                              for side, d in zip("ab", comparison.details, strict=True)}
    return finite_json(document)


def _total(result: InputAnalysis) -> dict[str, Any]:
    """The header's totals: measured now, predicted at the target, and by what; how many call paths were
    left out of the predicted total (their model is negative there), which makes it a lower bound; and
    whether both are summed over each run's processes."""
    predicted, by = result.predicted_total
    left_out = result.report.left_out if result.total is None else 0
    return {"measured": result.report.total_measured, "predicted": predicted, "by": by, "left_out": left_out,
            "summed_over_processes": result.summed_over_processes}


def _model_entry(source: str, model: Model) -> dict[str, Any]:
    return {**model.to_json(), "source": source}


def _prediction(result: InputAnalysis, model: Model) -> dict[str, Any] | None:
    """The scaling row of ``model``'s call path, when the model is of the analysed metric."""
    if model.metric != result.metric or model.callpath not in result.experiment.callpaths:
        return None
    report = result.report
    row = report.row(model.callpath)
    return {**{k: v for k, v in row.to_json().items() if k != "callpath"}, "behaviour": behaviour(report, row.index)}


def behaviour(report: ScalingReport, index: int) -> dict[str, Any] | None:
    """A prediction's ``behaviour``: how row ``index``'s law behaves towards the target
    (:meth:`pmkit.trend.Trend.to_json`, values written in the report's unit); None without a trend."""
    from pmkit.ui.quantities import format_value

    trend = report.trend(index)
    return None if trend is None else trend.to_json(lambda v: format_value(v, report.unit))


def behaviours(report: ScalingReport, indices: Sequence[int]) -> list[dict[str, Any] | None]:
    """:func:`behaviour` of each of ``indices``, the laws with a closed form described at once
    (:meth:`pmkit.scaling.ScalingReport.trends_json`): what ``pmkit show --json`` writes for every row."""
    from pmkit.ui.quantities import format_value

    return report.trends_json(indices, lambda v: format_value(v, report.unit))


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
