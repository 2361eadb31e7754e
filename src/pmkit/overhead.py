"""Communication overhead per MPI call instance (Kluge, Knüpfer, Nagel, paper 004 §4, §10).

Every communication call of a trace gets its usual time ``t_max = T_f(p, bytes)`` from a
calibration reference (:mod:`pmkit.calibration`) — or, without one, from the trace's own calls of
the same (operation, processes, bytes), which is weaker (the sample includes the overhead it is
meant to find) and is said so — and its overhead ``max(0, duration − t_max)``.  Where the trace
shows why a call waited, the wait is named as Scalasca names it (:data:`PATTERNS`): a receive that
started before its matched send (**late sender**); a blocking send that ran until the receiving
process came into MPI — its receive, or another MPI call that progressed the message, as Open
MPI's shared-memory transport needs (bench/README.md) — (**late receiver**); an all-to-all
collective waiting for its last process (**wait at N×N**); a broadcast's non-root waiting for the
root (**late broadcast**); a reduction's root waiting for the last sender (**early reduce**).
:func:`call_overheads` returns the per-instance table; the ``kluge`` detector sums it per call site.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from pmkit.calibration.distributions import DEFAULT_Q_MAX
from pmkit.calibration.reference import Reference, calibrate
from pmkit.calibration.samples import communication_rows, group_rows
from pmkit.errors import UsageError
from pmkit.experiment import EventTable, Experiment
from pmkit.mpi_events import KIND, dense_key, position_in_group

PATTERNS = ("none", "late_sender", "late_receiver", "wait_nxn", "late_broadcast", "early_reduce")
"""Wait-state patterns (``pattern`` column codes), as Scalasca names them."""

PATTERN_TITLES = {"none": "unexplained", "late_sender": "late sender", "late_receiver": "late receiver",
                  "wait_nxn": "wait at N×N", "late_broadcast": "late broadcast", "early_reduce": "early reduce"}


@dataclass
class OverheadTable:
    """One row per communication call: the event-table ``row`` and what Kluge's method makes of it.

    Columns (numpy arrays): ``row``, ``t_max`` (seconds, NaN where no reference covers the call),
    ``overhead`` (``max(0, duration − t_max)``), ``clamped`` (``T_f`` was evaluated outside the
    calibrated (p, bytes) range), ``pattern`` (code into :data:`PATTERNS`), ``waiting`` (seconds the
    pattern explains, before any overhead is subtracted) and ``call_number`` (1 for the first call of
    its call site on its rank and run, 2 for the next, …: the iteration of a loop).
    """

    events: EventTable
    columns: dict[str, np.ndarray]
    reference: Reference
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.columns:
            return self.columns[name]
        return self.events[name][self.columns["row"]]

    def __len__(self) -> int:
        return len(self.columns["row"])

    def pattern_names(self) -> np.ndarray:
        return np.array(PATTERNS, dtype=object)[self.columns["pattern"]]


def self_reference(events: EventTable, rows: np.ndarray, *, q_max: float = DEFAULT_Q_MAX,
                   alpha: float = 0.05, window: float | None = None, critical: str = "exact") -> Reference:
    """A reference calibrated from the trace's own calls ``rows`` of the same (operation, processes, bytes)."""
    resolution = max((float(run.get("timer_resolution", 0)) for run in events.runs), default=0.0)
    samples = [(op, p, b, events["duration"][index]) for op, p, b, index in group_rows(events, rows)]
    return calibrate(samples, q_max=q_max, alpha=alpha, window=window,
                     resolution=1.0 / resolution if resolution > 0 else 1e-9, critical=critical,
                     source=events.source, self_calibrated=True)


def call_overheads(events: EventTable | Experiment, reference: Reference | str | os.PathLike | None = None, *,
                   q_max: float = DEFAULT_Q_MAX, alpha: float = 0.05, window: float | None = None,
                   critical: str = "exact") -> OverheadTable:
    """``t_max``, overhead and wait-state pattern of every communication call of a trace (see the module).

    ``events`` is an experiment read from a trace or its event table; ``reference`` a calibration
    reference or the path of its JSON file.  Without one (or for operations it does not cover) the
    calls are calibrated from the trace itself with ``q_max``, ``alpha``, ``window`` and
    ``critical``; the notes say so.
    """
    if isinstance(events, Experiment):
        if events.events is None:
            raise UsageError("the experiment has no event table: call overheads need a trace (e.g. traces.otf2)")
        events = events.events
    if reference is not None and not isinstance(reference, Reference):
        reference = Reference.load(reference)
    communicating = communication_rows(events)
    rows = np.nonzero(communicating)[0]
    notes: list[str] = []
    names = events.region_names()[rows]
    own = reference
    if reference is None:
        own = self_reference(events, communicating, q_max=q_max, alpha=alpha, window=window, critical=critical)
        notes.append(f"self-calibrated: t_max of each (operation, processes, bytes) from the trace's own "
                     f"{len(rows)} calls (q_max {q_max:g}); give a calibration reference for a clean one")
    else:
        missing = sorted(set(names) - set(reference.ops()))
        if missing:
            uncovered = np.isin(np.arange(len(events)), rows[np.isin(names, missing)])
            extra = self_reference(events, uncovered, q_max=q_max, alpha=alpha, window=window, critical=critical)
            own = Reference(reference.groups + extra.groups, reference.settings, reference.source, reference.notes)
            notes.append(f"the reference does not cover {', '.join(missing)}; their calls were calibrated from the "
                         "trace itself")
    assert own is not None
    t_max = np.full(len(rows), np.nan)
    clamped = np.zeros(len(rows), bool)
    sizes = np.nan_to_num(events["bytes"][rows], nan=0.0)
    procs = events["comm_size"][rows].astype(float)
    for op in np.unique(names):
        mask = names == op
        t_max[mask], clamped[mask] = own.t_max(str(op), procs[mask], sizes[mask])
    if clamped.any():
        notes.append(f"{int(clamped.sum())} calls lie outside the calibrated (processes, bytes) range; their t_max "
                     "is the nearest calibrated value")
    duration = events["duration"][rows]
    overhead = np.where(np.isfinite(t_max), np.maximum(duration - t_max, 0.0), np.nan)
    pattern, waiting = wait_states(events)
    key = dense_key([events["run"][rows], events["rank"][rows], events["callpath"][rows]])
    number = position_in_group(key, events["start"][rows]) + 1
    columns = {"row": rows, "t_max": t_max, "overhead": overhead, "clamped": clamped, "pattern": pattern[rows],
               "waiting": waiting[rows], "call_number": number}
    return OverheadTable(events, columns, own, notes + list(own.notes))


def wait_states(events: EventTable) -> tuple[np.ndarray, np.ndarray]:
    """Pattern code (:data:`PATTERNS`) and waiting seconds of every row of ``events`` (0 where none)."""
    n = len(events)
    pattern = np.zeros(n, np.int64)
    waiting = np.zeros(n, np.float64)
    start, end, kind = events["start"], events["end"], events["kind"]
    messages = events.messages
    send_row, recv_row, post_row = messages["send_row"], messages["recv_row"], messages["post_row"]
    matched = (send_row >= 0) & (recv_row >= 0)
    s, r, post = send_row[matched], recv_row[matched], post_row[matched]
    posted = np.where(post >= 0, start[np.maximum(post, 0)], start[r])

    # late sender: the receiving call began before the send did
    late = start[s] > start[r]
    wait = np.minimum(start[s], end[r]) - start[r]
    _keep_largest(pattern, waiting, r[late], wait[late], PATTERNS.index("late_sender"))
    # late receiver: a blocking send ran on until the receiving process came into MPI
    blocking = np.isin(kind[s], [KIND["send"], KIND["sendrecv"]])
    s_b, posted_b = s[blocking], posted[blocking]
    receiver = events["rank"][r[blocking]]
    arrived = np.minimum(posted_b, _next_mpi_entry(events, events["run"][s_b], receiver, start[s_b]))
    late = (arrived > start[s_b]) & (arrived < end[s_b])
    _keep_largest(pattern, waiting, s_b[late], (arrived - start[s_b])[late], PATTERNS.index("late_receiver"))

    # collectives: group the calls of one operation
    instance = events["instance"]
    rows = np.nonzero(instance >= 0)[0]
    if len(rows):
        last = np.full(instance.max() + 1, -np.inf)
        np.maximum.at(last, instance[rows], start[rows])
        nxn = rows[kind[rows] == KIND["n_to_n"]]
        _keep_largest(pattern, waiting, nxn, np.minimum(last[instance[nxn]], end[nxn]) - start[nxn],
                      PATTERNS.index("wait_nxn"))
        root = events["root"]
        is_root = rows[root[rows] == events["rank"][rows]]
        root_start = np.full(instance.max() + 1, np.nan)
        root_start[instance[is_root]] = start[is_root]
        one = rows[(kind[rows] == KIND["one_to_n"]) & (root[rows] != events["rank"][rows])]
        _keep_largest(pattern, waiting, one, np.minimum(root_start[instance[one]], end[one]) - start[one],
                      PATTERNS.index("late_broadcast"))
        senders_last = np.full(instance.max() + 1, -np.inf)
        others = rows[root[rows] != events["rank"][rows]]
        np.maximum.at(senders_last, instance[others], start[others])
        roots = is_root[kind[is_root] == KIND["n_to_one"]]
        _keep_largest(pattern, waiting, roots, np.minimum(senders_last[instance[roots]], end[roots]) - start[roots],
                      PATTERNS.index("early_reduce"))
    return pattern, waiting


def _next_mpi_entry(events: EventTable, run: np.ndarray, rank: np.ndarray, time: np.ndarray) -> np.ndarray:
    """When process ``rank`` of ``run`` next entered an MPI call at or after ``time`` — or ``time``
    itself if it was inside one then (it could progress a message at once); inf if never."""
    start, end = events["start"], events["end"]
    process = dense_key([events["run"], events["rank"]])
    order = np.lexsort((start, process))
    span = float(np.nanmax(end) - np.nanmin(start)) + 1.0 if len(start) else 1.0
    base = float(np.nanmin(start)) if len(start) else 0.0
    keys = process[order] * span + (start[order] - base)
    lookup = {(int(a), int(b)): int(k) for a, b, k in zip(events["run"], events["rank"], process, strict=True)}
    wanted = np.array([lookup.get((int(a), int(b)), -1) for a, b in zip(run, rank, strict=True)], np.int64)
    query = wanted * span + (time - base)
    after = np.searchsorted(keys, query, side="left")
    out = np.full(len(time), np.inf)
    has = (after < len(order)) & (wanted >= 0)
    same = np.zeros(len(time), bool)
    same[has] = process[order[after[has]]] == wanted[has]
    out[same] = start[order[after[same]]]
    # inside an MPI call at ``time``: the call before it on the same process has not ended yet
    before = after - 1
    inside = (before >= 0) & (wanted >= 0)
    inside[inside] = (process[order[before[inside]]] == wanted[inside]) & (end[order[before[inside]]] > time[inside])
    return np.where(inside, time, out)


def _keep_largest(pattern: np.ndarray, waiting: np.ndarray, rows: np.ndarray, wait: np.ndarray, code: int) -> None:
    """Name ``code`` the pattern of ``rows`` where its positive wait exceeds the one found so far."""
    wait = np.nan_to_num(wait, nan=0.0)
    better = wait > waiting[rows]
    pattern[rows[better]] = code
    waiting[rows[better]] = wait[better]
