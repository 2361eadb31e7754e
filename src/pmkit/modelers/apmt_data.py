"""What APMT needs from an experiment: per call path and run, the counters, time and MPI volume.

The scaling parameter (``p`` unless told), runs at the nominal clock (a study may hold runs at a
second frequency for the paper's refinement, named by a parameter such as ``f``), the profile's
counters resolved against the experiment's metrics, time in seconds, and every call path classified
as computation or MPI (point-to-point, collective, or other).  Values are exclusive per call path
(inclusive metrics are made exclusive by subtracting the children) and reduced over repetitions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from pmkit.errors import UsageError
from pmkit.experiment import Experiment
from pmkit.modelers.apmt_profile import HIT_ROLES, ROLES, TIME_UNITS, MachineProfile, Source, resolve

FREQUENCY_NAMES = ("f", "freq", "frequency", "cpufreq", "clock", "mhz", "ghz", "khz")
"""Parameter names taken for the CPU frequency of a run when ``frequency_parameter`` is not given."""

_P2P = {"send", "recv", "isend", "irecv", "ssend", "issend", "bsend", "ibsend", "rsend", "irsend", "sendrecv",
        "sendrecv_replace", "wait", "waitall", "waitany", "waitsome", "test", "testall", "testany", "testsome",
        "probe", "iprobe", "mprobe", "improbe", "mrecv", "imrecv", "start", "startall", "put", "get", "rput",
        "rget", "accumulate", "raccumulate", "get_accumulate", "rget_accumulate", "fetch_and_op",
        "compare_and_swap", "win_fence", "win_lock", "win_unlock", "win_lock_all", "win_unlock_all", "win_flush",
        "win_flush_all", "win_flush_local", "win_sync", "win_post", "win_start", "win_complete", "win_wait"}
_COLLECTIVE = {"barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv", "allgather",
               "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block", "scan",
               "exscan", "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
               "neighbor_alltoallw"}


def mpi_kind(region: str) -> str:
    """``p2p``, ``collective``, ``mpi`` (setup, I/O and the rest of MPI) or ``compute`` for a region name."""
    name = region.strip().lower().rstrip("_")
    if name.startswith("pmpi_"):
        name = name[1:]
    if not name.startswith("mpi_"):
        return "compute"
    call = name[4:]
    if call in _P2P:
        return "p2p"
    if call in _COLLECTIVE or (call.startswith("i") and call[1:] in _COLLECTIVE):
        return "collective"
    return "mpi"


def frequency_hz(value: float) -> float:
    """A frequency coordinate in Hz: values above 10⁶ are Hz, above 100 MHz, else GHz."""
    if value > 1e6:
        return float(value)
    if value > 100:
        return float(value) * 1e6
    return float(value) * 1e9


@dataclass
class Refinement:
    """The run at a second clock used for the paper's Eq. 5: its point, the nominal column at the same
    scale, its clock in Hz, and its counters per call path."""

    point: int
    column: int
    frequency_hz: float
    counters: dict[str, np.ndarray | None]
    time: np.ndarray | None


@dataclass
class StudyData:
    """Per call path (rows) and nominal run (columns, ascending ``x``): counters, seconds, MPI volume."""

    parameter: str
    parameters: tuple[str, ...]
    x: np.ndarray
    points: np.ndarray
    frequency_hz: float
    frequency_source: str
    callpaths: list[str]
    names: list[str]
    kinds: np.ndarray
    time: np.ndarray | None
    counters: dict[str, np.ndarray | None]
    bytes: np.ndarray | None
    visits: np.ndarray | None
    sources: dict[str, Source | None]
    time_metric: str | None
    time_factor: float
    refinement: Refinement | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def has(self) -> dict[str, bool]:
        return {role: values is not None for role, values in self.counters.items()}

    def seconds(self) -> np.ndarray:
        """Each call path's time per run in seconds: the time metric, else cycles at the clock."""
        if self.time is not None:
            return self.time
        cycles = self.counters["cycles"]
        if cycles is None:
            raise UsageError("modeler apmt needs a time metric or a cycles counter")
        return cycles / self.frequency_hz


def study_data(experiment: Experiment, profile: MachineProfile, *, parameter: str = "", frequency_parameter: str = "",
               measure: str = "mean", frequency_ghz: float = 0.0, totals: bool = False) -> StudyData:
    """Gather what APMT models from ``experiment`` (see the module docstring)."""
    notes: list[str] = []
    params = experiment.parameters
    freq = _frequency_parameter(params, frequency_parameter)
    scale = _scaling_parameter(params, parameter, freq)
    nominal_columns, refine_point, nominal_hz = _columns(experiment, scale, freq, notes)
    x = experiment.points[nominal_columns, params.index(scale)]
    order = np.argsort(x, kind="stable")
    nominal_columns = nominal_columns[order]
    x = x[order]
    names = experiment.metric_names
    sources: dict[str, Source | None] = {role: resolve(names, profile.counters[role]) for role in ROLES}
    sources["time"] = resolve(names, profile.metrics["time"])
    sources["bytes"] = resolve(names, profile.metrics["bytes"], summed=True)
    sources["visits"] = resolve(names, profile.metrics["visits"])
    divide = x if totals else None

    def values(source: Source | None, columns: np.ndarray, by: np.ndarray | None) -> np.ndarray | None:
        if source is None:
            return None
        total = sum(_exclusive(experiment, m, measure)[:, columns] for m in source.plus)
        for m in source.minus:
            total = total - _exclusive(experiment, m, measure)[:, columns]
        return total / by[None, :] if by is not None else total

    counters = {role: values(sources[role], nominal_columns, divide) for role in ROLES}
    time_factor = 1.0
    time_metric = None
    time = None
    if sources["time"] is not None:
        time_metric = sources["time"].plus[0]
        unit = experiment.metric(time_metric).unit.strip()
        time_factor = TIME_UNITS.get(unit.lower(), TIME_UNITS.get(unit, 0.0))
        if not time_factor:
            time_factor = 1.0
            notes.append(f"time metric {time_metric} has unit {unit!r}; taken as seconds")
        time = values(sources["time"], nominal_columns, divide)
        assert time is not None
        time = time * time_factor
    hz, how = _clock(freq, nominal_hz, frequency_ghz, counters, time, experiment, profile, notes)
    tree = experiment.callpaths
    kinds = np.array([mpi_kind(node.name) for node in tree])
    data = StudyData(scale, params, x, experiment.points[nominal_columns], hz, how, [n.path for n in tree],
                     [n.name for n in tree], kinds, time, counters, values(sources["bytes"], nominal_columns, divide),
                     values(sources["visits"], nominal_columns, None), sources, time_metric, time_factor, None, notes)
    if refine_point is not None:
        column = int(np.nonzero(x == experiment.points[refine_point, params.index(scale)])[0][0])
        point = np.array([refine_point])
        by = x[[column]] if totals else None
        refined = {role: (None if v is None else v[:, 0]) for role, v in
                   ((role, values(sources[role], point, by)) for role in ROLES)}
        refine_time = values(sources["time"], point, by)
        assert freq is not None
        data.refinement = Refinement(refine_point, column, frequency_hz(experiment.points[refine_point,
                                                                                           params.index(freq)]),
                                     refined, None if refine_time is None else refine_time[:, 0] * time_factor)
    _counter_notes(data)
    return data


def _frequency_parameter(params: tuple[str, ...], given: str) -> str | None:
    if given:
        if given not in params:
            raise UsageError(f"modeler apmt: no parameter {given!r}; the experiment has {', '.join(params)}")
        return given
    found = [p for p in params if p.lower() in FREQUENCY_NAMES]
    return found[0] if found and len(params) > 1 else None


def _scaling_parameter(params: tuple[str, ...], given: str, freq: str | None) -> str:
    if given:
        if given not in params:
            raise UsageError(f"modeler apmt: no parameter {given!r}; the experiment has {', '.join(params)}")
        if given == freq:
            raise UsageError(f"modeler apmt: {given} is the frequency parameter, not the scale")
        return given
    others = [p for p in params if p != freq]
    return "p" if "p" in others else others[0]


def _columns(experiment: Experiment, scale: str, freq: str | None,
             notes: list[str]) -> tuple[np.ndarray, int | None, float | None]:
    """Nominal-clock columns (one per value of the scale), the refinement run's point, the nominal clock."""
    points = experiment.points
    params = experiment.parameters
    keep = np.ones(len(points), dtype=bool)
    nominal_hz = None
    refine = None
    if freq is not None:
        column = points[:, params.index(freq)]
        counts = Counter(column.tolist())
        nominal = max(counts, key=lambda v: (counts[v], v))
        nominal_hz = frequency_hz(nominal)
        keep = column == nominal
        others = [(v, i) for i, v in enumerate(column) if v != nominal]
        scales = set(points[keep, params.index(scale)].tolist())
        usable = [(v, i) for v, i in others if points[i, params.index(scale)] in scales]
        if usable:
            refine = min(usable)[1]
            second = points[refine, params.index(freq)]
            notes.append(f"runs at {freq}={nominal:g} are the model's; the run at {freq}={second:g}, "
                         f"{scale}={points[refine, params.index(scale)]:g} refines CPI_core and BF_mem (paper Eq. 5)")
        elif others:
            notes.append(f"runs at other values of {freq} have no run at {freq}={nominal:g} with the same {scale}; "
                         "they are not used")
    for name in params:
        if name in (scale, freq):
            continue
        column = points[keep, params.index(name)]
        if len(np.unique(column)) > 1:
            counts = Counter(column.tolist())
            chosen = max(counts, key=lambda v: (counts[v], v))
            keep &= points[:, params.index(name)] == chosen
            notes.append(f"APMT scales over {scale}; only the runs at {name}={chosen:g} are used "
                         f"({name} takes {len(counts)} values)")
    columns = np.nonzero(keep)[0]
    x = points[columns, params.index(scale)]
    if len(np.unique(x)) != len(x):
        raise UsageError(f"modeler apmt: several runs share a value of {scale}; choose the scaling parameter with "
                         "-O parameter=NAME")
    return columns, refine, nominal_hz


def _exclusive(experiment: Experiment, metric: str, measure: str) -> np.ndarray:
    """Exclusive values per call path and point (inclusive metrics: minus the children's values)."""
    values = experiment.values(metric, measure)
    if not experiment.metric(metric).inclusive:
        return values
    tree = experiment.callpaths
    out = values.copy()
    for node in tree:
        children = tree.children(node.index)
        if children:
            out[node.index] = values[node.index] - np.nansum(values[children], axis=0)
    return out


def _clock(freq: str | None, nominal_hz: float | None, given_ghz: float, counters: dict[str, np.ndarray | None],
           time: np.ndarray | None, experiment: Experiment, profile: MachineProfile,
           notes: list[str]) -> tuple[float, str]:
    """The clock (Hz) that turns cycles into seconds, and where it came from."""
    measured = None
    cycles = counters["cycles"]
    if cycles is not None and time is not None:
        both = np.isfinite(cycles) & np.isfinite(time) & (time > 0)
        if both.any():
            per_run = np.nansum(np.where(both, cycles, 0), axis=0) / np.maximum(np.nansum(np.where(both, time, 0),
                                                                                           axis=0), 1e-300)
            runs = per_run[np.isfinite(per_run) & (per_run > 0)]
            measured = float(np.median(runs)) if runs.size else None
    if given_ghz > 0:
        chosen, how = given_ghz * 1e9, "option frequency_ghz"
    elif nominal_hz is not None:
        chosen, how = nominal_hz, f"parameter {freq}"
    elif measured is not None:
        chosen, how = measured, "measured: cycles / time"
    else:
        chosen, how = profile.frequency_ghz * 1e9, f"profile {profile.name}"
    if measured is not None and abs(measured / chosen - 1) > 0.05 and not how.startswith("measured"):
        notes.append(f"the clock measured as cycles/time is {measured / 1e9:.3g} GHz, {how} says "
                     f"{chosen / 1e9:.3g} GHz (turbo or frequency scaling?)")
    return chosen, how


def _counter_notes(data: StudyData) -> None:
    missing = [role for role in ROLES if data.sources[role] is None]
    if missing:
        data.notes.append(f"counters not in the experiment: {', '.join(missing)} (the model degrades: see each "
                          "kernel's notes)")
    if data.sources["time"] is None:
        data.notes.append("no time metric: time is cycles at the clock")
    levels = [level for level, role in HIT_ROLES.items() if data.sources[role] is not None]
    if levels and len(levels) < len(HIT_ROLES):
        upper = "; BF_mem is an upper estimate" if data.sources["stall_cycles"] is not None else ""
        data.notes.append(f"T_mem counts only {', '.join(levels)} accesses{upper}")
