"""Findings: what a detector found, where, how bad, and the evidence behind it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One problem a detector reports.

    ``severity`` is the size of the problem in ``unit`` (seconds lost, share of total time, ...),
    used to rank findings.  ``evidence`` holds the numbers behind the claim, JSON-serialisable.
    """

    detector: str
    title: str
    callpath: str | None = None
    metric: str | None = None
    location: str | None = None
    severity: float = 0.0
    unit: str = ""
    message: str = ""
    evidence: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"detector": self.detector, "title": self.title, "callpath": self.callpath,
                "metric": self.metric, "location": self.location, "severity": self.severity,
                "unit": self.unit, "message": self.message, "evidence": dict(self.evidence)}
