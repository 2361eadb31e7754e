"""The APMT model of a study (paper 001, §3): critical kernels, their counter laws, CPI and BF_mem,
the communication models, and ``T_app`` — fitted on a chosen subset of the runs.

``T_app(p) = Σ_i (T_comp_i(p) + BF_mem_i·T_mem_i(p)) + BF_comm·T_comm(p) + T_others(p)`` (Eq. 2):

* **Critical kernels** (§3.2): compute call paths whose share of the run's cycles (time without a
  cycles counter) exceeds ``threshold`` in some run; those whose time does not fall from the
  smallest to the largest scale (if they reach ``nonscalable_share`` somewhere); the rest summed into
  one kernel.  MPI call paths are communication, not kernels.
* **Computation** (§3.3): every counter of a kernel is a law of the scale (:mod:`pmkit.fitting.laws`).
  ``CPI_i`` (``cpi``) is the kernel's computation cycles per instruction — cycles minus stall cycles,
  as the paper restricts CPI to "the computation time and computation cycles only" — averaged over the
  runs, with Eq. 4's deviation (``cpi_total`` is cycles per instruction); ``T_comp_i =
  instructions_i(p)·CPI_i / f``.  ``T_mem_i = Σ hits_l(p)·latency_l``
  over L1, L2, LLC and memory, and ``BF_mem_i = T_stall_i / T_mem_i`` (Eq. 3), averaged over the
  runs like CPI; the exposed memory time is ``BF_mem_i·T_mem_i(p)`` with T_mem from the hit laws
  (``memory="hits"``, as the paper's refined model Eq. 5 uses it and measured best), or the stall
  law over the clock, ``BF_mem_i(p)·T_mem_i(p) = T_stall_i(p)`` (``memory="stalls"``, §3.3's
  composition of BF_mem from five laws).  Without hit counters it is the stall law.
* **Refinement** (§3.4, Eq. 5): with a run at a second clock, ``CPI = CPI_core + BF_mem·T_mem`` (CPI
  total cycles per instruction, ``T_mem`` memory cycles per instruction at each clock) gives two
  equations: the gradient is ``BF_mem``, the intercept ``CPI_core`` (``cpi_core``; as the paper's
  Fig. 10 says — its Eq. 6 prints the two names the other way round), and ``T_i =
  instructions·CPI_core/f + BF_mem·T_mem(p)``.
* **Communication** (§3.3): point-to-point call paths by Hockney, ``t = α + β·s_tot`` with the call
  path's bytes (waits without bytes take the point-to-point total).  With 8 or more runs the line is
  tested for a change of law in bytes — MPI's eager/rendezvous switch, crossed as strong scaling
  shrinks the messages — by :func:`pmkit.modelers.hockney.fit_switch`; where one is found the model
  is two Hockney lines and a :class:`~pmkit.modelers.apmt_laws.Switch` at the change, and a
  prediction takes the line of the side its bytes (the bytes law at the target) fall on
  (bench/README.md §10: ``python bench/apmt_accuracy.py --switch``).  Collectives per call,
  ``t/n = a·log2(P) + b·s + c`` with the average message size ``s``, times the calls ``n(p)``.
* ``T_others``: what the measured total holds beyond kernels and communication (MPI set-up, I/O),
  as a law of the scale.  ``BF_comm`` is an option (1 for bulk-synchronous codes, as the paper finds
  for NPB; Score-P's profiles cannot separate overlapped communication).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pmkit.fitting.laws import LawFits, fit_laws
from pmkit.modelers.apmt_data import StudyData
from pmkit.modelers.apmt_laws import Combination, Piece, Switch, law
from pmkit.modelers.apmt_profile import HIT_ROLES, LEVELS, MachineProfile
from pmkit.modelers.hockney import HockneyLine, ProtocolSwitch, fit_switch

KERNEL_ROLES = ("instructions", "cycles", "stall_cycles", "computation_cycles", "time", *HIT_ROLES.values())


@dataclass
class LawBook:
    """Series to fit, collected first and fitted in one batch; rows are referred to by index."""

    x: np.ndarray
    series: list[np.ndarray] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    fits: LawFits | None = None

    def add(self, values: np.ndarray | None, name: str) -> int | None:
        if values is None or not np.isfinite(values).any():
            return None
        self.series.append(np.asarray(values, dtype=float))
        self.names.append(name)
        return len(self.series) - 1

    def fit(self, settings: Settings) -> LawFits:
        values = np.stack(self.series) if self.series else np.zeros((0, len(self.x)))
        self.fits = fit_laws(self.x, values, **settings.law_options())
        return self.fits


@dataclass
class KernelModel:
    """One critical kernel: its call paths, why it is critical, its parameters and time laws (seconds)."""

    name: str
    rows: np.ndarray
    kind: str
    share: float
    comp: Combination = field(default_factory=Combination)
    mem: Combination = field(default_factory=Combination)
    t_mem: Combination = field(default_factory=Combination)
    cpi: float = float("nan")
    cpi_deviation: float = float("nan")
    cpi_total: float = float("nan")
    cpi_core: float = float("nan")
    bf_mem: float = float("nan")
    bf_source: str = ""
    laws: dict[str, int] = field(default_factory=dict)
    measured: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> Combination:
        return self.comp + self.mem


@dataclass
class CommModel:
    """One communication call path: its model of time (seconds) and the fitted coefficients."""

    row: int
    kind: str
    operation: str
    time: Combination
    coefficients: dict[str, float]
    laws: dict[str, int] = field(default_factory=dict)
    measured: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    switch: ProtocolSwitch | None = None


@dataclass
class ApmtFit:
    """The APMT model fitted on ``columns`` of a :class:`StudyData`."""

    data: StudyData
    columns: np.ndarray
    book: LawBook
    kernels: list[KernelModel]
    comm: list[CommModel]
    others: Combination
    bf_comm: float
    measured_total: np.ndarray
    measured_others: np.ndarray
    notes: list[str] = field(default_factory=list)

    @property
    def fits(self) -> LawFits:
        assert self.book.fits is not None
        return self.book.fits

    @property
    def x(self) -> np.ndarray:
        return self.data.x[self.columns]

    def t_comm(self) -> Combination:
        out = Combination()
        for model in self.comm:
            out = out + model.time
        return out

    def t_app(self) -> Combination:
        out = self.others + self.t_comm().scaled(self.bf_comm)
        for kernel in self.kernels:
            out = out + kernel.total
        return out

    def evaluate(self, combination: Combination, x: np.ndarray | float) -> np.ndarray:
        return combination.evaluate(self.fits, x)


@dataclass(frozen=True)
class Settings:
    """The options that shape a fit (resolved once by the modeler)."""

    threshold: float = 0.05
    nonscalable_share: float = 0.01
    min_r2: float = 0.9
    relative: bool = True
    flat: float = 0.0
    margin: float = 1.0
    bf_comm: float = 1.0
    refine: bool = True
    memory: str = "hits"
    segments: str = "auto"

    def law_options(self) -> dict[str, Any]:
        return {"min_r2": self.min_r2, "relative": self.relative, "flat": self.flat, "margin": self.margin}


def fit_model(data: StudyData, columns: np.ndarray, settings: Settings, profile: MachineProfile) -> ApmtFit:
    """The APMT model of the runs ``columns`` (indices into ``data.x``)."""
    columns = np.asarray(columns, dtype=np.int64)
    book = LawBook(data.x[columns])
    seconds = data.seconds()[:, columns]
    notes: list[str] = []
    kernels = _kernels(data, columns, seconds, settings, notes)
    pending = [_kernel_series(data, columns, seconds, kernel, book, profile) for kernel in kernels]
    comm, comm_pending = _comm_series(data, columns, seconds, book, settings.segments)
    total = _nansum(seconds, axis=0)
    kernel_time = sum((_nansum(seconds[k.rows], axis=0) for k in kernels), np.zeros(len(columns)))
    comm_time = _nansum(seconds[[m.row for m in comm]], axis=0) if comm else np.zeros(len(columns))
    others_measured = total - kernel_time - comm_time
    scale = np.nanmax(np.abs(total)) if np.isfinite(total).any() else 0.0
    negligible = not (np.abs(np.nan_to_num(others_measured)) > 1e-9 * scale).any()
    others_row = None if negligible else book.add(others_measured, "others")
    book.fit(settings)
    for kernel, finish in zip(kernels, pending, strict=True):
        finish(settings, data.refinement if settings.refine else None)
        kernel.measured = _nansum(seconds[kernel.rows], axis=0)
    for finish in comm_pending:
        finish()
    others = law(others_row) if others_row is not None else Combination()
    return ApmtFit(data, columns, book, kernels, comm, others, settings.bf_comm, total, others_measured, notes)


def _nansum(values: np.ndarray, axis: int) -> np.ndarray:
    """Sum ignoring NaN, NaN where every value is NaN."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return np.zeros(values.shape[1 - axis] if values.ndim == 2 else 0)
    counted = np.isfinite(values).any(axis=axis)
    return np.where(counted, np.nansum(values, axis=axis), np.nan)


def _kernels(data: StudyData, columns: np.ndarray, seconds: np.ndarray, settings: Settings,
             notes: list[str]) -> list[KernelModel]:
    """The critical kernels of §3.2 among the compute call paths."""
    cycles = data.counters["cycles"]
    work = cycles[:, columns] if cycles is not None else seconds
    with np.errstate(all="ignore"):
        shares = work / _nansum(np.where(work > 0, work, np.nan), axis=0)[None, :]
    compute = np.nonzero(data.kinds == "compute")[0]
    present = compute[np.isfinite(seconds[compute]).any(axis=1) & (np.nansum(np.abs(seconds[compute]), axis=1) > 0)]
    if present.size == 0:
        notes.append("no computation call path has time: no kernels")
        return []
    top = np.where(np.isfinite(shares[present]), shares[present], -np.inf).max(axis=1)
    hot = present[top > settings.threshold]
    first = _edge(seconds[present], first=True)
    last = _edge(seconds[present], first=False)
    growing = (last >= first) & np.isfinite(first) & np.isfinite(last) & (top >= settings.nonscalable_share)
    if len(columns) < 2:
        growing[:] = False
    nonscalable = present[growing & ~(top > settings.threshold)]
    share_of = dict(zip(present.tolist(), top.tolist(), strict=True))
    chosen = [(int(r), "hotspot") for r in hot] + [(int(r), "non-scalable") for r in nonscalable]
    chosen.sort(key=lambda item: -share_of[item[0]])
    names = _kernel_names(data, [r for r, _ in chosen])
    kernels = [KernelModel(name, np.array([row]), kind, share_of[row])
               for (row, kind), name in zip(chosen, names, strict=True)]
    rest = np.setdiff1d(present, [r for r, _ in chosen])
    if rest.size:
        rest_work = _nansum(work[rest], axis=0)
        with np.errstate(all="ignore"):
            rest_share = float(np.nanmax(rest_work / _nansum(np.where(work > 0, work, np.nan), axis=0)))
        kernels.append(KernelModel(f"rest ({rest.size} call paths)", rest, "rest", rest_share))
    return kernels


def _edge(values: np.ndarray, first: bool) -> np.ndarray:
    """Each row's first (or last) finite value."""
    finite = np.isfinite(values)
    index = np.argmax(finite, axis=1) if first else values.shape[1] - 1 - np.argmax(finite[:, ::-1], axis=1)
    out = values[np.arange(len(values)), index]
    return np.where(finite.any(axis=1), out, np.nan)


def _kernel_names(data: StudyData, rows: list[int]) -> list[str]:
    """Leaf names, lengthened with parents where two kernels share one."""
    paths = [data.callpaths[r].split("->") for r in rows]
    depth = [1] * len(rows)
    while True:
        names = ["->".join(p[-d:]) for p, d in zip(paths, depth, strict=True)]
        clashes = {n for n in names if names.count(n) > 1}
        if not clashes:
            return names
        depth = [d + 1 if n in clashes and d < len(p) else d for p, d, n in zip(paths, depth, names, strict=True)]
        if all(d >= len(p) for p, d, n in zip(paths, depth, names, strict=True) if n in clashes):
            return ["->".join(p[-d:]) for p, d in zip(paths, depth, strict=True)]


def _kernel_series(data: StudyData, columns: np.ndarray, seconds: np.ndarray, kernel: KernelModel, book: LawBook,
                   profile: MachineProfile) -> Any:
    """Add a kernel's counter series to the book; returns the step that builds its model after the fit."""
    def summed(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else _nansum(values[kernel.rows][:, columns], axis=0)

    series = {role: summed(data.counters[role]) for role in data.counters}
    series["time"] = _nansum(seconds[kernel.rows], axis=0)
    if series["cycles"] is not None and series["stall_cycles"] is not None:
        series["computation_cycles"] = series["cycles"] - series["stall_cycles"]
    else:
        series["computation_cycles"] = None
    for role in KERNEL_ROLES:
        row = book.add(series.get(role), f"{kernel.name}: {role}")
        if row is not None:
            kernel.laws[role] = row
    hz = data.frequency_hz
    latency = {level: profile.latencies[level] for level in LEVELS}

    def t_mem_measured() -> np.ndarray | None:
        parts = [series[HIT_ROLES[level]] * latency[level].seconds(hz) for level in LEVELS
                 if series[HIT_ROLES[level]] is not None]
        return sum(parts) if parts else None

    def finish(settings: Settings, refinement: Any) -> None:
        laws = kernel.laws
        instructions, cycles, stalls = series["instructions"], series["cycles"], series["stall_cycles"]
        hits = [level for level in LEVELS if HIT_ROLES[level] in laws]
        kernel.t_mem = sum((law(laws[HIT_ROLES[level]], latency[level].seconds(hz)) for level in hits), Combination())
        with np.errstate(all="ignore"):
            if cycles is not None and instructions is not None:
                kernel.cpi_total = float(np.nanmean(cycles / instructions))
            measured_mem = t_mem_measured()
            if "instructions" in laws and "cycles" in laws:
                if stalls is not None:
                    compute_cpi = (cycles - stalls) / instructions
                    kernel.cpi = float(np.nanmean(compute_cpi))
                    kernel.cpi_deviation = _deviation(compute_cpi)
                    kernel.comp = law(laws["instructions"], kernel.cpi / hz)
                    if "stall_cycles" in laws:
                        kernel.mem = law(laws["stall_cycles"], 1.0 / hz)
                    if measured_mem is not None:
                        kernel.bf_mem = float(np.nanmean((stalls / hz) / measured_mem))
                        kernel.bf_source = "stall cycles"
                        if settings.memory == "hits" and np.isfinite(kernel.bf_mem):
                            kernel.mem = kernel.t_mem.scaled(kernel.bf_mem)
                    else:
                        kernel.notes.append("no cache-hit counters: T_mem and BF_mem unknown; the exposed memory "
                                            "time is the stall cycles at the clock")
                else:
                    kernel.cpi = kernel.cpi_total
                    kernel.cpi_deviation = _deviation(cycles / instructions)
                    kernel.comp = law(laws["instructions"], kernel.cpi / hz)
                    kernel.notes.append("no stall-cycle counter: memory time stays inside CPI; BF_mem unknown")
                if refinement is not None and hits:
                    _refine(kernel, refinement, columns, data, latency, hz)
            elif "computation_cycles" in laws:
                kernel.comp = law(laws["computation_cycles"], 1.0 / hz)
                kernel.mem = law(laws["stall_cycles"], 1.0 / hz) if "stall_cycles" in laws else Combination()
                kernel.notes.append("no instruction counter: CPI unknown; compute time is computation cycles / clock")
            elif "cycles" in laws:
                kernel.comp = law(laws["cycles"], 1.0 / hz)
                kernel.notes.append("no instruction or stall counter: time is cycles / clock")
            elif "time" in laws:
                kernel.comp = law(laws["time"])
                kernel.notes.append("no cycles counter: the kernel's time is fitted from the time metric")
        if np.isfinite(kernel.cpi_deviation) and kernel.cpi > 0 and np.sqrt(kernel.cpi_deviation) / kernel.cpi > 0.1:
            kernel.notes.append(f"CPI varies by {100 * np.sqrt(kernel.cpi_deviation) / kernel.cpi:.0f}% across runs "
                                "(Eq. 4); a constant CPI is a rough model here")

    return finish


def _deviation(values: np.ndarray) -> float:
    """The paper's Eq. 4: Σ (CPI_p − mean)² / (n − 1) over the runs."""
    finite = values[np.isfinite(values)]
    return float(np.var(finite, ddof=1)) if finite.size > 1 else float("nan")


def _refine(kernel: KernelModel, refinement: Any, columns: np.ndarray, data: StudyData, latency: dict,
            hz: float) -> None:
    """Eq. 5 from the runs at two clocks at one scale: gradient BF_mem, intercept CPI_core."""
    where = np.nonzero(columns == refinement.column)[0]
    if where.size == 0:
        kernel.notes.append("the run at the second clock is outside the runs fitted: no refinement")
        return
    j = int(where[0])
    rows = kernel.rows
    hz2 = refinement.frequency_hz

    def at_nominal(role: str) -> float:
        values = data.counters[role]
        return float(np.nansum(values[rows, columns[j]])) if values is not None else float("nan")

    def at_second(role: str) -> float:
        values = refinement.counters.get(role)
        return float(np.nansum(values[rows])) if values is not None else float("nan")

    cpi1 = at_nominal("cycles") / at_nominal("instructions")
    cpi2 = at_second("cycles") / at_second("instructions")
    levels = [level for level in LEVELS if data.counters[HIT_ROLES[level]] is not None]
    mem1 = sum(at_nominal(HIT_ROLES[lv]) * latency[lv].cycles(hz) for lv in levels) / at_nominal("instructions")
    mem2 = sum(at_second(HIT_ROLES[lv]) * latency[lv].cycles(hz2) for lv in levels) / at_second("instructions")
    if not all(np.isfinite([cpi1, cpi2, mem1, mem2])) or abs(mem1 - mem2) <= 1e-3 * max(abs(mem1), 1e-300):
        kernel.notes.append("two-frequency refinement impossible: T_mem per instruction is the same at both clocks "
                            "(no level with a latency in ns?)")
        return
    bf = (cpi1 - cpi2) / (mem1 - mem2)
    core = cpi1 - bf * mem1
    if not (0 <= bf <= 2 and core > 0):
        kernel.notes.append(f"two-frequency refinement rejected: BF_mem={bf:.3g}, CPI_core={core:.3g} are not "
                            "physical; the stall-based values are kept")
        return
    kernel.cpi_core = float(core)
    kernel.bf_mem = float(bf)
    kernel.bf_source = f"two clocks (Eq. 5: {hz / 1e9:.3g} and {hz2 / 1e9:.3g} GHz)"
    kernel.comp = law(kernel.laws["instructions"], core / hz)
    kernel.mem = kernel.t_mem.scaled(bf)


def _comm_series(data: StudyData, columns: np.ndarray, seconds: np.ndarray, book: LawBook,
                 segments: str = "auto") -> tuple[list[CommModel], list[Any]]:
    """Communication call paths' series in the book, and the steps that fit their models after it."""
    models: list[CommModel] = []
    steps: list[Any] = []
    bytes_all = data.bytes[:, columns] if data.bytes is not None else None
    visits_all = data.visits[:, columns] if data.visits is not None else None
    p2p_rows = np.nonzero(data.kinds == "p2p")[0]
    p2p_rows = p2p_rows[np.isfinite(seconds[p2p_rows]).any(axis=1)] if p2p_rows.size else p2p_rows
    group_bytes = _nansum(bytes_all[p2p_rows], axis=0) if bytes_all is not None and p2p_rows.size else None
    group_row = book.add(group_bytes, "point-to-point bytes") if _varies(group_bytes) else None
    x = data.x[columns]
    for row in p2p_rows:
        own = bytes_all[row] if bytes_all is not None else None
        model = CommModel(int(row), "p2p", data.names[row], Combination(), {}, measured=seconds[row])
        time_row = book.add(seconds[row], f"{data.callpaths[row]}: time")
        if _varies(own):
            regressor, bytes_row, which = own, book.add(own, f"{data.callpaths[row]}: bytes"), "its own bytes"
        elif group_row is not None:
            regressor, bytes_row, which = group_bytes, group_row, "the point-to-point bytes of all call paths"
        else:
            regressor, bytes_row, which = None, None, ""
        models.append(model)
        steps.append(_hockney_step(model, regressor, bytes_row, time_row, which, segments))
    coll_rows = np.nonzero(data.kinds == "collective")[0]
    ones = None
    for row in coll_rows:
        if not np.isfinite(seconds[row]).any():
            continue
        visits = visits_all[row] if visits_all is not None else None
        size = bytes_all[row] if bytes_all is not None else None
        model = CommModel(int(row), "collective", data.names[row], Combination(), {}, measured=seconds[row])
        visits_row = book.add(visits, f"{data.callpaths[row]}: visits") if visits is not None else None
        if visits_row is None:
            ones = ones if ones is not None else book.add(np.ones(len(columns)), "one")
            visits_row = ones
        bytes_row = book.add(size, f"{data.callpaths[row]}: bytes") if _varies(size) else None
        time_row = book.add(seconds[row], f"{data.callpaths[row]}: time")
        models.append(model)
        steps.append(_collective_step(model, x, seconds[row], visits, size, visits_row, bytes_row, time_row))
    return models, steps


def _varies(values: np.ndarray | None) -> bool:
    if values is None:
        return False
    finite = values[np.isfinite(values)]
    return finite.size >= 2 and np.ptp(finite) > 1e-9 * max(np.abs(finite).max(), 1e-300)


def _hockney_step(model: CommModel, regressor: np.ndarray | None, bytes_row: int | None, time_row: int | None,
                  which: str, segments: str = "auto") -> Any:
    def finish() -> None:
        t = model.measured
        assert t is not None
        if regressor is not None and bytes_row is not None:
            ok = np.isfinite(t) & np.isfinite(regressor)
            switch = fit_switch(regressor[ok], t[ok], segments=segments)
            if switch is not None:
                model.switch = switch
                model.coefficients = {"alpha_below": switch.below.latency, "beta_below": switch.below.per_byte,
                                      "alpha_above": switch.above.latency, "beta_above": switch.above.per_byte,
                                      "switch_bytes": switch.change, "switch_low": switch.low,
                                      "switch_high": switch.high}
                model.time = Combination(switches=(Switch(bytes_row, switch.change, _line(switch.below, bytes_row),
                                                          _line(switch.above, bytes_row), switch.low, switch.high),))
                model.laws["bytes"] = bytes_row
                model.notes.append(f"Hockney t = α + β·bytes with {which}; {switch.text()} (bytes per process "
                                   "and run)")
                return
            if ok.sum() >= 2:
                design = np.stack([np.ones(ok.sum()), regressor[ok]], axis=1)
                (alpha, beta), *_ = np.linalg.lstsq(design, t[ok], rcond=None)
                if beta >= 0:
                    model.coefficients = {"alpha": float(alpha), "beta": float(beta)}
                    model.time = Combination(float(alpha), (Piece(float(beta), bytes_row),))
                    model.laws["bytes"] = bytes_row
                    model.notes.append(f"Hockney t = α + β·bytes with {which}")
                    return
                model.notes.append("time falls as bytes grow: Hockney's β would be negative; time fitted over the "
                                   "scale instead")
        elif regressor is None:
            model.notes.append("no byte counts vary across runs: time fitted over the scale")
        if time_row is not None:
            model.time = law(time_row)
            model.laws["time"] = time_row
    return finish


def _line(line: HockneyLine, bytes_row: int) -> Combination:
    return Combination(line.latency, (Piece(line.per_byte, bytes_row),))


def _collective_step(model: CommModel, x: np.ndarray, t: np.ndarray, visits: np.ndarray | None,
                     size: np.ndarray | None, visits_row: int | None, bytes_row: int | None,
                     time_row: int | None) -> Any:
    def finish() -> None:
        calls = visits if visits is not None else np.ones_like(t)
        with np.errstate(all="ignore"):
            per_call = t / calls
            message = size / calls if size is not None else None
        columns = [("a", np.log2(x))]
        if bytes_row is not None and message is not None:
            columns.append(("b", message))
        columns.append(("c", np.ones_like(x)))
        ok = np.isfinite(per_call) & np.isfinite(calls) & (calls > 0)
        for _, column in columns:
            ok &= np.isfinite(column)
        for drop in ("b", "a"):
            if ok.sum() >= len(columns):
                break
            columns = [c for c in columns if c[0] != drop]
        if ok.sum() == 0 or visits_row is None:
            if time_row is not None:
                model.time = law(time_row)
                model.laws["time"] = time_row
            model.notes.append("too few runs for the collective model: time fitted over the scale")
            return
        design = np.stack([c[ok] for _, c in columns], axis=1)
        solution, *_ = np.linalg.lstsq(design, per_call[ok], rcond=None)
        coefficients = dict(zip([name for name, _ in columns], (float(v) for v in solution), strict=True))
        pieces = []
        if "a" in coefficients:
            pieces.append(Piece(coefficients["a"], visits_row, log=1))
        if "b" in coefficients and bytes_row is not None:
            pieces.append(Piece(coefficients["b"], bytes_row))
        pieces.append(Piece(coefficients["c"], visits_row))
        model.coefficients = coefficients
        model.time = Combination(0.0, tuple(pieces))
        model.laws["visits"] = visits_row
        if bytes_row is not None:
            model.laws["bytes"] = bytes_row
        terms = " + ".join({"a": "a·log2(P)", "b": "b·s", "c": "c"}[name] for name, _ in columns)
        model.notes.append(f"collective: t = calls(p)·({terms}), s the average message size")
    return finish
