"""What the APMT modeler returns beside its per-series models: the per-kernel table, ``T_app`` at any
scale, the closed-loop validation, as data (``to_json()``).  :func:`contributed_tables` turns it
into the tables ``pmkit show`` renders; :mod:`pmkit.ui.apmt_table` draws it for SDK users.

Rows of the table, at the largest measured scale ("now") and at a target: one per critical kernel
(``cpi`` — the paper's computation CPI —, ``cpi_deviation`` (Eq. 4), ``cpi_total`` (cycles per
instruction), ``cpi_core`` (Eq. 5, with a run at a second clock), ``bf_mem``, compute time
``t_comp``, memory time ``t_mem`` = Σ hits × latency and its exposed part ``t_mem_exposed`` =
BF_mem·T_mem), one for
point-to-point communication and one per collective operation (``t_comm``), one for ``T_others``,
and the total ``t_app`` (Eq. 2).  All times are seconds per process.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pmkit.modelers.apmt_data import StudyData
from pmkit.modelers.apmt_laws import Combination
from pmkit.modelers.apmt_model import ApmtFit, CommModel
from pmkit.modelers.apmt_profile import ROLES, MachineProfile

DEFAULT_SCALE_UP = 4.0
"""Without a target, predictions are at this many times the largest measured scale (as ``pmkit show``)."""


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


@dataclass(frozen=True)
class Times:
    """One row's times (seconds) at one scale; NaN where the model has no such part."""

    t_comp: float = math.nan
    t_mem: float = math.nan
    t_mem_exposed: float = math.nan
    t_comm: float = math.nan
    total: float = math.nan

    def to_json(self) -> dict[str, float | None]:
        return {"t_comp": _finite(self.t_comp), "t_mem": _finite(self.t_mem),
                "t_mem_exposed": _finite(self.t_mem_exposed), "t_comm": _finite(self.t_comm),
                "total": _finite(self.total)}


@dataclass(frozen=True)
class TableRow:
    """One row of the per-kernel table: a kernel, a communication group, others, or the total."""

    name: str
    kind: str
    callpaths: tuple[str, ...]
    now: Times
    target: Times
    share: float = math.nan
    cpi: float = math.nan
    cpi_deviation: float = math.nan
    cpi_total: float = math.nan
    cpi_core: float = math.nan
    bf_mem: float = math.nan
    bf_source: str = ""
    laws: Mapping[str, str] = field(default_factory=dict)
    coefficients: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.name, "kind": self.kind, "callpaths": list(self.callpaths),
                "share": _finite(self.share), "cpi": _finite(self.cpi), "cpi_deviation": _finite(self.cpi_deviation),
                "cpi_total": _finite(self.cpi_total), "cpi_core": _finite(self.cpi_core),
                "bf_mem": _finite(self.bf_mem), "bf_mem_source": self.bf_source or None,
                "now": self.now.to_json(), "target": self.target.to_json(), "laws": dict(self.laws),
                "coefficients": {k: _finite(v) for k, v in self.coefficients.items()}, "notes": list(self.notes)}


@dataclass(frozen=True)
class HeldOut:
    """One run left out of the fit and what the model said about it."""

    x: float
    measured: float
    predicted: float
    measured_parts: Mapping[str, float]
    predicted_parts: Mapping[str, float]

    @property
    def error(self) -> float:
        """Relative error of T_app in percent."""
        return 100.0 * abs(self.predicted - self.measured) / abs(self.measured) if self.measured else math.nan


@dataclass(frozen=True)
class Validation:
    """Closed-loop validation (§3.4): the model of the other runs against the runs left out."""

    parameter: str
    held_out: tuple[HeldOut, ...]
    accuracy: float
    advice: str

    @property
    def mean_error(self) -> float:
        errors = [h.error for h in self.held_out if math.isfinite(h.error)]
        return float(np.mean(errors)) if errors else math.nan

    @property
    def meets(self) -> bool:
        return math.isfinite(self.mean_error) and self.mean_error <= self.accuracy

    def to_json(self) -> dict[str, Any]:
        return {"held_out": [{self.parameter: h.x, "measured": _finite(h.measured), "predicted": _finite(h.predicted),
                              "error_percent": _finite(h.error),
                              "measured_parts": {k: _finite(v) for k, v in h.measured_parts.items()},
                              "predicted_parts": {k: _finite(v) for k, v in h.predicted_parts.items()}}
                             for h in self.held_out],
                "mean_error_percent": _finite(self.mean_error), "accuracy_percent": self.accuracy,
                "meets_accuracy": self.meets, "advice": self.advice}


class ApmtResult:
    """The APMT model of a study: evaluate it at any scale, tabulate it, validate it, write it as JSON."""

    def __init__(self, fit: ApmtFit, profile: MachineProfile, validation: Validation | None,
                 notes: list[str]) -> None:
        self.fit = fit
        self.profile = profile
        self.validation = validation
        self.notes = notes

    @property
    def data(self) -> StudyData:
        return self.fit.data

    @property
    def parameter(self) -> str:
        return self.data.parameter

    @property
    def reference(self) -> float:
        """The largest measured scale at the nominal clock."""
        return float(self.data.x.max())

    def scale_of(self, target: Mapping[str, float] | float | None) -> float:
        """The value of the scaling parameter at ``target`` (a point, a number, or None: 4× the largest)."""
        if target is None:
            return self.reference * DEFAULT_SCALE_UP
        if isinstance(target, Mapping):
            return float(target.get(self.parameter, self.reference))
        return float(target)

    def evaluate(self, combination: Combination, x: float) -> float:
        return float(self.fit.evaluate(combination, x)[0])

    def t_app(self, target: Mapping[str, float] | float | None = None) -> float:
        """APMT's predicted time of the application (Eq. 2) at ``target``, seconds per process."""
        return self.evaluate(self.fit.t_app(), self.scale_of(target))

    def t_app_in(self, unit_factor: float, target: Mapping[str, float] | float | None = None) -> float:
        """``t_app`` in a unit of ``unit_factor`` seconds (e.g. 1e-3 for msec)."""
        return self.t_app(target) / unit_factor

    def _times(self, comp: Combination, mem: Combination, t_mem: Combination, comm: Combination, x: float) -> Times:
        def value(c: Combination) -> float:
            return math.nan if c.empty else self.evaluate(c, x)

        parts = [v for v in (value(comp), value(mem), value(comm)) if math.isfinite(v)]
        return Times(value(comp), value(t_mem), value(mem), value(comm), float(sum(parts)) if parts else math.nan)

    def table(self, target: Mapping[str, float] | float | None = None) -> list[TableRow]:
        """The per-kernel table: kernels, communication, others and the total, now and at ``target``."""
        now, then = self.reference, self.scale_of(target)
        parameter = self.parameter
        empty = Combination()
        rows: list[TableRow] = []
        for kernel in self.fit.kernels:
            laws = {role: _law_text(self.fit, row, parameter) for role, row in kernel.laws.items()}
            rows.append(TableRow(kernel.name, kernel.kind, tuple(self.data.callpaths[r] for r in kernel.rows),
                                 self._times(kernel.comp, kernel.mem, kernel.t_mem, empty, now),
                                 self._times(kernel.comp, kernel.mem, kernel.t_mem, empty, then), kernel.share,
                                 kernel.cpi, kernel.cpi_deviation, kernel.cpi_total, kernel.cpi_core, kernel.bf_mem,
                                 kernel.bf_source,
                                 laws, {}, tuple(kernel.notes)))
        for name, kind, models in _comm_groups(self.fit.comm):
            total = sum((m.time for m in models), Combination()).scaled(self.fit.bf_comm)
            coefficients = {f"{self.data.callpaths[m.row]}: {k}": v for m in models for k, v in m.coefficients.items()}
            notes = tuple(dict.fromkeys(n for m in models for n in m.notes))
            rows.append(TableRow(name, kind, tuple(self.data.callpaths[m.row] for m in models),
                                 self._times(empty, empty, empty, total, now),
                                 self._times(empty, empty, empty, total, then), coefficients=coefficients,
                                 notes=notes))
        if not self.fit.others.empty:
            others = self.fit.others
            rows.append(TableRow("others", "others", (), Times(total=self.evaluate(others, now)),
                                 Times(total=self.evaluate(others, then)),
                                 laws={"time": _law_text(self.fit, others.pieces[0].law, parameter)},
                                 notes=("time beyond kernels and communication (MPI set-up, I/O, ...)",)))
        rows.append(TableRow("total", "total", (), self._total(now), self._total(then)))
        return rows

    def _total(self, x: float) -> Times:
        def value(c: Combination) -> float:
            return math.nan if c.empty else self.evaluate(c, x)

        comp = sum((k.comp for k in self.fit.kernels), Combination())
        mem = sum((k.mem for k in self.fit.kernels), Combination())
        t_mem = sum((k.t_mem for k in self.fit.kernels), Combination())
        comm = self.fit.t_comm().scaled(self.fit.bf_comm) if self.fit.comm else Combination()
        return Times(value(comp), value(t_mem), value(mem), value(comm), self.evaluate(self.fit.t_app(), x))

    def measured_total(self) -> float:
        """The measured time of the largest run (per process), for comparison with ``t_app`` now."""
        return float(self.fit.measured_total[-1])

    def to_json(self, target: Mapping[str, float] | float | None = None) -> dict[str, Any]:
        """The table and everything behind it as one JSON-ready document.  One run has no target
        (:data:`pmkit.scaling.ONE_RUN`): ``target``, ``t_app.target`` and each kernel's ``target`` are null."""
        data = self.data
        then = self.scale_of(target)
        one_run = len(data.x) == 1
        kernels = [row.to_json() for row in self.table(target)]
        if one_run:
            kernels = [{**row, "target": None} for row in kernels]
        return {
            "modeler": "apmt",
            "parameter": self.parameter,
            "reference": {self.parameter: self.reference},
            "target": None if one_run else {self.parameter: then},
            "t_app": {"now": _finite(self.t_app(self.reference)),
                      "target": None if one_run else _finite(self.t_app(then)),
                      "measured_now": _finite(self.measured_total())},
            "frequency_ghz": data.frequency_hz / 1e9,
            "frequency_source": data.frequency_source,
            "bf_comm": self.fit.bf_comm,
            "profile": self.profile.to_json(),
            "counters": {role: None if data.sources[role] is None else data.sources[role].text()
                         for role in (*ROLES, "time", "bytes", "visits")},
            "kernels": kernels,
            "validation": None if self.validation is None else self.validation.to_json(),
            "notes": list(self.notes),
        }


KINDS = {"hotspot": "hot", "non-scalable": "non-sc.", "rest": "rest", "p2p": "p2p", "collective": "coll.",
         "others": "", "total": ""}
"""Short names of the table rows' kinds, for 80 columns."""


def contributed_tables(result: ApmtResult, target: Mapping[str, float] | float | None = None) -> list[Any]:
    """The per-kernel table at the largest measured scale and at ``target`` (and the validation, when
    there is one), as tables every view of :func:`pmkit.analyse` renders.  The JSON output carries
    each table's ``records`` keyed ``kernel``, ``kind``, ``cpi``, ``bf_mem``, ``t_comp``, ``t_mem_exposed``
    (exposed: BF_mem·T_mem), ``t_comm`` and ``total``, and the last kernel table the whole
    :meth:`ApmtResult.to_json` as ``data``.  A target at the measured scale — one run, which has no
    target to extrapolate to (:data:`pmkit.scaling.ONE_RUN`), or ``--at`` the largest — gets no second
    table repeating the first."""
    from pmkit.analysis import ContributedTable

    parameter = result.parameter
    then = result.scale_of(target)
    table = result.table(target)
    columns = ("kernel", "kind", "CPI", "BF_mem", "compute", "memory", "comm", "total")
    keys = ("kernel", "kind", "cpi", "bf_mem", "t_comp", "t_mem_exposed", "t_comm", "total")
    units = ("", "", "", "", "s", "s", "s", "s")

    def rows(which: str) -> tuple[tuple[str | float, ...], ...]:
        out = []
        for row in table:
            times: Times = getattr(row, which)
            out.append((row.name, KINDS.get(row.kind, row.kind), row.cpi, row.bf_mem, times.t_comp,
                        times.t_mem_exposed, times.t_comm, times.total))
        return tuple(out)

    now = result.t_app(result.reference)
    extrapolated = then != result.reference
    at_target = f", {result.t_app(then):.4g} s at {parameter}={then:g}" if extrapolated else ""
    notes = (f"T_app = Σ(T_comp + BF_mem·T_mem) + BF_comm·T_comm + T_others: {now:.4g} s at "
             f"{parameter}={result.reference:g} (measured {result.measured_total():.4g} s){at_target}; memory is "
             "BF_mem·T_mem, the part of T_mem not hidden by computation",
             f"clock {result.data.frequency_hz / 1e9:.3g} GHz ({result.data.frequency_source}); BF_comm "
             f"{result.fit.bf_comm:g}; profile {result.profile.source}", *switch_notes(result, then), *result.notes)
    measured = "the one measured point" if len(result.data.x) == 1 else "largest measured"
    title = f"APMT kernels at {parameter}={result.reference:g} ({measured}"
    if extrapolated:
        tables = [ContributedTable(f"{title})", columns, rows("now"), units, keys),
                  ContributedTable(f"APMT kernels at {parameter}={then:g} (target)", columns, rows("target"), units,
                                   keys, notes, result.to_json(target))]
    else:
        tables = [ContributedTable(f"{title}{'' if len(result.data.x) == 1 else '; the target'})", columns,
                                   rows("now"), units, keys, notes, result.to_json(target))]
    validation = result.validation
    if validation is not None:
        tables.append(ContributedTable(
            "APMT closed-loop validation (fitted without the largest runs)",
            ("held out", "measured", "predicted", "error %"),
            tuple((f"{parameter}={h.x:g}", h.measured, h.predicted, round(h.error, 1)) for h in validation.held_out),
            ("", "s", "s", ""), (parameter, "measured", "predicted", "error_percent"), (validation.advice,)))
    return tables


def switch_notes(result: ApmtResult, target: float) -> list[str]:
    """Per point-to-point call path whose Hockney law changes in bytes (eager/rendezvous): where, in
    bytes and in the scale, each side's line, and which side holds at ``target``."""
    fit, parameter = result.fit, result.parameter
    out = []
    for model in fit.comm:
        if model.switch is None or not model.time.switches:
            continue
        switch = model.time.switches[0]
        scale = switch.in_scale(fit.fits, fit.x)
        where = f" at {parameter} ≈ {scale[0]:.3g} ({scale[1]:.3g} … {scale[2]:.3g})" if scale else ""
        side = "above" if bool(switch.holds(fit.fits, target)[0]) else "below"
        out.append(f"{result.data.callpaths[model.row]}: Hockney law changes{where}, bytes per process and run "
                   f"{model.switch.where()} — {model.switch.below.text()} below, {model.switch.above.text()} above; "
                   f"at {parameter}={target:g} the line {side} holds")
    return out


def _law_text(fit: ApmtFit, row: int, parameter: str) -> str:
    from pmkit.modelers.apmt_laws import law_text

    return law_text(fit.fits, row, parameter)


def _comm_groups(models: list[CommModel]) -> list[tuple[str, str, list[CommModel]]]:
    """Point-to-point call paths as one row; collectives one row per operation."""
    groups: list[tuple[str, str, list[CommModel]]] = []
    p2p = [m for m in models if m.kind == "p2p"]
    if p2p:
        groups.append(("point-to-point", "p2p", p2p))
    operations: dict[str, list[CommModel]] = {}
    for model in models:
        if model.kind == "collective":
            operations.setdefault(model.operation, []).append(model)
    groups.extend((name, "collective", members) for name, members in operations.items())
    return groups
