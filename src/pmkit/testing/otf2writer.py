"""A small OTF2 trace writer in Score-P's conventions, for tests, examples and benchmarks.

It writes what a Score-P run with ``SCOREP_ENABLE_TRACING=true`` leaves behind — ``traces.otf2``,
``traces.def`` and ``traces/`` with one event file per MPI rank — through the ``otf2`` package's
writer, so pmkit's tests exercise the OTF2 reader without MPI or Score-P and no binary trace is
ever committed.  The conventions are Score-P's: one location group ``MPI Rank r`` with one
``Master thread`` per rank, the MPI ``COMM_LOCATIONS`` group in rank order, ``MPI_COMM_WORLD`` and
``MPI_COMM_SELF``, regions with Score-P's roles and paradigms, ``MpiSend`` recorded when the send
starts and ``MpiRecv`` when the receive ends, ``MpiIrecv`` inside the call that completes the
request, and collective sizes as Score-P records them (:func:`pmkit.mpi_events.scorep_collective_bytes`).

``counters`` maps hardware counter names to how much each counts per timer tick; they are recorded
as Score-P records PAPI counters: one strictly synchronous class of accumulated ``UINT64`` members
whose running totals (count × ticks since the start) are written just before every enter and
leave, so a call path's exclusive count is its exclusive ticks times the count.
``other_metrics`` declares a class that is not (asynchronous, absolute ``DOUBLE``, like a plugin's
power meter).  ``display_names`` gives regions the
name Score-P shows for compiled code (``int main(int, char**)`` for canonical ``main``).

Times are given in seconds and written as ticks of ``timer_resolution`` per second::

    with TraceWriter("run.p2.r1", ranks=2) as trace:
        r0, r1 = trace.rank(0), trace.rank(1)
        r0.enter(0.0, "main"); r1.enter(0.0, "main")
        r0.send(1e-6, 2e-6, dest=1, nbytes=1024)
        r1.recv(1e-6, 4e-6, source=0, nbytes=1024)
        r0.leave(1e-3, "main"); r1.leave(1e-3, "main")
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pmkit.mpi_events import MPI_FUNCTIONS, OP_CODE, scorep_collective_bytes

UNDEFINED_ROOT = 0xFFFFFFFF
"""OTF2's undefined uint32, the root of collectives that have none."""


class RankWriter:
    """Writes the events of one MPI rank; times must not decrease."""

    def __init__(self, trace: TraceWriter, rank: int, writer: Any) -> None:
        self.trace = trace
        self.rank = rank
        self._writer = writer
        self._last = 0
        self._requests = 0
        self._pending: dict[int, tuple[str, int, int, int]] = {}

    def _tick(self, seconds: float) -> int:
        tick = round(seconds * self.trace.timer_resolution)
        if tick < self._last:
            raise ValueError(f"rank {self.rank}: time {seconds!r} s goes back before {self._last} ticks")
        self._last = tick
        return tick

    def enter(self, time: float, name: str) -> None:
        tick = self._tick(time)
        self._counters(tick)
        self._writer.enter(tick, self.trace.region(name))

    def leave(self, time: float, name: str) -> None:
        tick = self._tick(time)
        self._counters(tick)
        self._writer.leave(tick, self.trace.region(name))

    def _counters(self, tick: int) -> None:
        """The counters' running totals at ``tick``, if the trace records counters."""
        if self.trace.counter_class is not None:
            self._writer.metric(tick, self.trace.counter_class, [rate * tick for rate in self.trace.counters.values()])

    def region(self, start: float, end: float, name: str) -> None:
        """A call of a (user) region from ``start`` to ``end`` seconds."""
        self.enter(start, name)
        self.leave(end, name)

    def send(self, start: float, end: float, dest: int, nbytes: int, tag: int = 0, name: str = "MPI_Send") -> None:
        """A blocking send: ``MpiSend`` is recorded right after the enter, as Score-P does."""
        self.enter(start, name)
        self._writer.mpi_send(self._tick(start), dest, self.trace.world, tag, int(nbytes))
        self.leave(end, name)

    def recv(self, start: float, end: float, source: int, nbytes: int, tag: int = 0, name: str = "MPI_Recv") -> None:
        """A blocking receive: ``MpiRecv`` is recorded when it completes, just before the leave."""
        self.enter(start, name)
        self._writer.mpi_recv(self._tick(end), source, self.trace.world, tag, int(nbytes))
        self.leave(end, name)

    def sendrecv(self, start: float, end: float, dest: int, source: int, nbytes: int, tag: int = 0) -> None:
        """MPI_Sendrecv: the send at its start, the receive at its end."""
        self.enter(start, "MPI_Sendrecv")
        self._writer.mpi_send(self._tick(start), dest, self.trace.world, tag, int(nbytes))
        self._writer.mpi_recv(self._tick(end), source, self.trace.world, tag, int(nbytes))
        self.leave(end, "MPI_Sendrecv")

    def isend(self, start: float, end: float, dest: int, nbytes: int, tag: int = 0) -> int:
        """MPI_Isend; returns the request to complete with :meth:`wait`."""
        self._requests += 1
        request = self._requests
        self.enter(start, "MPI_Isend")
        self._writer.mpi_isend(self._tick(start), dest, self.trace.world, tag, int(nbytes), request)
        self.leave(end, "MPI_Isend")
        self._pending[request] = ("send", dest, tag, int(nbytes))
        return request

    def irecv(self, start: float, end: float, source: int, nbytes: int, tag: int = 0) -> int:
        """MPI_Irecv; the message is recorded in the call that completes the request."""
        self._requests += 1
        request = self._requests
        self.enter(start, "MPI_Irecv")
        self._writer.mpi_irecv_request(self._tick(start), request)
        self.leave(end, "MPI_Irecv")
        self._pending[request] = ("recv", source, tag, int(nbytes))
        return request

    def wait(self, start: float, end: float, requests: int | Sequence[int]) -> None:
        """MPI_Wait (one request) or MPI_Waitall (several): completion events at the end of the call."""
        many = not isinstance(requests, int)
        wanted = list(requests) if many else [requests]  # type: ignore[arg-type]
        name = "MPI_Waitall" if many else "MPI_Wait"
        self.enter(start, name)
        for request in wanted:
            kind, peer, tag, nbytes = self._pending.pop(request)
            if kind == "send":
                self._writer.mpi_isend_complete(self._tick(end), request)
            else:
                self._writer.mpi_irecv(self._tick(end), peer, self.trace.world, tag, nbytes, request)
        self.leave(end, name)

    def cancelled(self, start: float, end: float, request: int) -> None:
        """An MPI_Wait that finds its request cancelled (MPI_Cancel before it): Score-P records MpiRequestCancelled."""
        self._pending.pop(request)
        self.enter(start, "MPI_Wait")
        self._writer.mpi_request_cancelled(self._tick(end), request)
        self.leave(end, "MPI_Wait")

    def collective(self, start: float, end: float, name: str, nbytes: int = 0, root: int | None = None) -> None:
        """A collective on MPI_COMM_WORLD with Score-P's recorded sizes for a message of ``nbytes``."""
        from otf2.enums import CollectiveOp

        _, op_name = MPI_FUNCTIONS[name]
        if op_name is None:
            raise ValueError(f"{name} is not a collective")
        op = OP_CODE[op_name]
        sent, received = scorep_collective_bytes(op, self.trace.ranks, self.rank, -1 if root is None else root,
                                                 nbytes)
        self.enter(start, name)
        self._writer.mpi_collective_begin(self._tick(start))
        self._writer.mpi_collective_end(self._tick(end), getattr(CollectiveOp, op_name), self.trace.world,
                                        UNDEFINED_ROOT if root is None else root, int(sent), int(received))
        self.leave(end, name)


class TraceWriter:
    """An OTF2 archive ``folder/traces.otf2`` of ``ranks`` MPI processes in Score-P's conventions.

    Use as a context manager (the archive is complete when it closes); :meth:`rank` gives each
    rank's writer.  Regions are defined on first use: names in :data:`pmkit.mpi_events.MPI_FUNCTIONS`
    get Score-P's MPI role and paradigm, others are compiler-instrumented functions.
    """

    def __init__(self, folder: str | Path, ranks: int, timer_resolution: int = 1_000_000_000,
                 program: str = "app", counters: Mapping[str, int] | None = None, other_metrics: Sequence[str] = (),
                 display_names: dict[str, str] | None = None) -> None:
        import otf2
        from otf2.enums import GroupType, LocationGroupType, LocationType, Paradigm

        if ranks < 1:
            raise ValueError("a trace needs at least one rank")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.ranks = ranks
        self.timer_resolution = int(timer_resolution)
        self._archive = otf2.writer.Writer(str(self.folder), timer_resolution=self.timer_resolution)
        defs = self._archive.definitions
        machine = defs.system_tree_node("machine")
        node = defs.system_tree_node("node", parent=machine)
        self._locations = []
        for rank in range(ranks):
            group = defs.location_group(f"MPI Rank {rank}", location_group_type=LocationGroupType.PROCESS,
                                        system_tree_parent=node)
            self._locations.append(defs.location("Master thread", type=LocationType.CPU_THREAD, group=group))
        defs.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=self._locations)
        world = defs.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=self._locations)
        self.world = defs.comm("MPI_COMM_WORLD", group=world)
        self_group = defs.group("", group_type=GroupType.COMM_SELF, paradigm=Paradigm.MPI, members=())
        defs.comm("MPI_COMM_SELF", group=self_group)
        self._regions: dict[str, Any] = {}
        self._program = program
        self._display = dict(display_names or {})
        self.counters = {name: int(rate) for name, rate in (counters or {}).items()}
        self.counter_class = self._metric_class(list(self.counters), accumulated=True) if self.counters else None
        if other_metrics:
            self._metric_class(other_metrics, accumulated=False)
        self._writers = [RankWriter(self, r, self._archive.event_writer_from_location(loc))
                         for r, loc in enumerate(self._locations)]

    def _metric_class(self, names: Sequence[str], accumulated: bool) -> Any:
        from otf2.enums import Base, MetricMode, MetricOccurrence, MetricType, RecorderKind, Type

        defs = self._archive.definitions
        members = tuple(defs.metric_member(
            name, name, metric_type=MetricType.PAPI if accumulated else MetricType.OTHER,
            metric_mode=MetricMode.ACCUMULATED_START if accumulated else MetricMode.ABSOLUTE_POINT,
            value_type=Type.UINT64 if accumulated else Type.DOUBLE, base=Base.DECIMAL, exponent=0,
            unit="#" if accumulated else "W") for name in names)
        return defs.metric_class(members, occurrence=MetricOccurrence.SYNCHRONOUS_STRICT if accumulated
                                 else MetricOccurrence.ASYNCHRONOUS, recorder_kind=RecorderKind.CPU)

    def region(self, name: str) -> Any:
        """The region definition of ``name`` (its canonical name), created on first use."""
        found = self._regions.get(name)
        if found is None:
            from otf2.enums import Paradigm, RegionRole

            role, _ = MPI_FUNCTIONS.get(name, ("FUNCTION", None))
            mpi = name in MPI_FUNCTIONS
            found = self._archive.definitions.region(
                self._display.get(name, name), canonical_name=name, region_role=getattr(RegionRole, role),
                paradigm=Paradigm.MPI if mpi else Paradigm.COMPILER, source_file="MPI" if mpi else f"{self._program}.c")
            self._regions[name] = found
        return found

    def rank(self, rank: int) -> RankWriter:
        return self._writers[rank]

    def close(self) -> None:
        self._archive.close()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def anchor(folder: str | Path) -> Path:
    """The anchor file of the archive written into ``folder``."""
    return Path(folder) / "traces.otf2"
