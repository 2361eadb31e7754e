"""pmkit's versioned JSON output: the document ``pmkit model --json`` (and ``show --json``) prints.

Scripts depend on this layout; change it only by adding keys, and bump :data:`SCHEMA` when a key
changes meaning.  The README documents every key.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from pmkit.findings import Finding
from pmkit.models import Model

SCHEMA = "pmkit.models/1"


def models_document(parameters: Sequence[str], models: Iterable[tuple[str, Model]], *,
                    sources: Sequence[str] = (), skipped: Sequence[tuple[str, str]] = (),
                    findings: Iterable[Finding] = (), extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The output document for models of one parameter space; ``models`` pairs each with its source."""
    entries = []
    for source, model in models:
        entry = model.to_json()
        entry["source"] = source
        entries.append(entry)
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "parameters": list(parameters),
        "sources": list(sources),
        "skipped": [{"source": s, "problem": p} for s, p in skipped],
        "models": entries,
        "findings": [f.to_json() for f in findings],
    }
    if extra:
        document.update(extra)
    return finite_json(document)


def finite_json(value: Any) -> Any:
    """``value`` with every non-finite float (NaN, ±inf) replaced by None: JSON has no such numbers."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(v) for v in value]
    return value
