"""Reading the event files of an OTF2 archive, one location at a time, at the speed of the C library.

OTF2's reader calls a C callback per event.  pmkit's callbacks are numba ``cfunc``\\ s that copy each
event into a fixed buffer of records (no Python per event); a compiled kernel then replays the
records — the call stack, the call tree, inclusive and exclusive time, visits, bytes and counters,
and every MPI call and message — into a :class:`LocationTrace` of compact arrays.  The buffer
holds :data:`CHUNK` events, so memory grows with the output (call-tree nodes, MPI calls, messages),
never with the number of events.  :func:`read_locations` reads a chunk of locations with its own
OTF2 reader, so chunks can run on threads (the C reading and the compiled replay release the
GIL) and later as one task each on a cluster.

Measured (bench/otf2_read.py, 8 ranks, a loaded 2-core machine; provisional): the ``otf2``
package's Python event loop reads 98,000 events/s; pmkit reads the same 2.0 M-event trace (333,000
MPI calls) end to end — profile and event table — at 3.8 M events/s once numba's cached kernels are
loaded (1.0 M/s including that first load, ~1.2 s), and a trace with 4× the events and the same
output at 13 M/s on one thread, 23 M/s on two, in the same 231 MB peak.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.errors import InputError
from pmkit.readers.otf2_definitions import MAX_METRICS, Definitions
from pmkit.readers.otf2_library import check, describe, library, otf2_errors, set_callback

CHUNK = 1 << 16
"""Events per read: the record buffer holds this many (4 MB)."""

WIDTH = 8
"""int64 fields per record: kind, time, then up to six payload fields."""

MAX_DEPTH = 4096
"""Deepest call stack a location may have."""

# record kinds
ENTER, LEAVE, SEND, RECV, ISEND_COMPLETE, IRECV_REQUEST, CANCELLED, COLL_END, NBC_COMPLETE, METRIC = range(1, 11)

# columns of the node table
N_PARENT, N_REGION, N_CHILD, N_SIBLING, N_VISITS, N_INCL, N_EXCL, N_SENT, N_RECV = range(9)
NODE_COLUMNS = 9
# columns of the call table
(C_NODE, C_REGION, C_START, C_END, C_SENT, C_RECV, C_COMPLETED, C_PEER, C_TAG, C_COMM, C_ROOT, C_OP, C_FLAGS,
 C_MESSAGES) = range(14)
CALL_COLUMNS = 14
# columns of the message table
M_DIRECTION, M_CALL, M_TIME, M_PEER, M_COMM, M_TAG, M_BYTES, M_REQUEST, M_POST, M_COMPLETE = range(10)
MESSAGE_COLUMNS = 10
# call flags
F_SEND, F_RECV, F_POST, F_COMPLETE, F_COLLECTIVE = 1, 2, 4, 8, 16
# state fields
S_DEPTH, S_NODES, S_CALLS, S_MESSAGES, S_ERROR, S_AT, S_FIRST, S_LAST = range(8)
# errors
E_FULL_NODES, E_FULL_CALLS, E_FULL_MESSAGES, E_LEAVE_EMPTY, E_LEAVE_MISMATCH, E_TOO_DEEP, E_FULL_REQUESTS = range(1, 8)


@dataclass
class LocationTrace:
    """What one location's events amount to, as arrays (ticks are the trace's timer ticks).

    ``nodes`` (rows: call-tree nodes; node 0 is the virtual root) has the columns ``N_*`` and
    ``node_metrics`` the inclusive then exclusive counter values per node; ``calls`` has one row per
    MPI call (``C_*``), ``messages`` one per point-to-point message event (``M_*``).
    """

    ref: int
    rank: int
    thread: int
    nodes: np.ndarray
    node_metrics: np.ndarray
    calls: np.ndarray
    messages: np.ndarray
    first: int
    last: int
    events: int
    notes: list[str] = field(default_factory=list)


class _Tables:
    """The growing output arrays of one location and the replay's state."""

    def __init__(self) -> None:
        self.state = np.zeros(8, np.int64)
        self.state[S_FIRST] = -1
        self.state[S_NODES] = 1  # node 0: the virtual root above every first-level region
        self.stack = np.zeros((MAX_DEPTH, 4), np.int64)
        self.stack_metrics = np.zeros((MAX_DEPTH, 2 * MAX_METRICS), np.int64)
        self.current = np.zeros(MAX_METRICS, np.int64)
        self.nodes = np.zeros((64, NODE_COLUMNS), np.int64)
        self.node_metrics = np.zeros((64, 2 * MAX_METRICS), np.int64)
        self.calls = np.zeros((256, CALL_COLUMNS), np.int64)
        self.messages = np.zeros((256, MESSAGE_COLUMNS), np.int64)
        # open requests: [sends|receives, key|value|used, slot]; pending counts per table
        self.requests = np.zeros((2, 3, 64), np.int64)
        self.pending = np.zeros(2, np.int64)

    def grow(self, error: int) -> None:
        if error == E_FULL_NODES:
            self.nodes = _doubled(self.nodes)
            self.node_metrics = _doubled(self.node_metrics)
        elif error == E_FULL_CALLS:
            self.calls = _doubled(self.calls)
        elif error == E_FULL_MESSAGES:
            self.messages = _doubled(self.messages)
        else:
            self._rehash()

    def _rehash(self) -> None:
        """Twice the slots for open requests, every open one moved over."""
        from pmkit.readers.otf2_kernels import _put

        old = self.requests
        self.requests = np.zeros((2, 3, 2 * old.shape[2]), np.int64)
        self.pending[:] = 0
        for table in range(2):
            for slot in np.nonzero(old[table, 2] == 1)[0]:
                _put(self.requests, self.pending, table, old[table, 0, slot], old[table, 1, slot])


def _doubled(array: np.ndarray) -> np.ndarray:
    grown = np.zeros((2 * array.shape[0], array.shape[1]), array.dtype)
    grown[: array.shape[0]] = array
    return grown


_PROBLEMS = {
    E_LEAVE_EMPTY: "a Leave event with no region entered",
    E_LEAVE_MISMATCH: "a Leave event that does not match the last Enter",
    E_TOO_DEEP: f"a call stack deeper than {MAX_DEPTH} regions",
}


def read_locations(definitions: Definitions, refs: list[int]) -> list[LocationTrace]:
    """Read the events of the locations ``refs`` with an OTF2 reader of their own (a task of its own).

    Raises InputError naming the event file of a location that cannot be read (a truncated or
    corrupt file, unbalanced Enter/Leave events).
    """
    from pmkit.readers.otf2_kernels import CALLBACKS, metric_callback

    lib = library()
    anchor = definitions.anchor
    with otf2_errors(anchor, "reading the events") as messages:
        reader = lib.Reader_Open(str(anchor).encode())
        if not reader:
            raise InputError(anchor, f"cannot be opened: {describe(messages) or 'OTF2 gave no reason'}")
        callbacks = None
        try:
            check(lib.Reader_SetSerialCollectiveCallbacks(reader), anchor, "cannot be opened", messages)
            for ref in refs:
                check(lib.Reader_SelectLocation(reader, ref), anchor, f"has no location {ref}", messages)
            _local_definitions(lib, reader, refs, anchor, messages)
            callbacks = lib.EvtReaderCallbacks_New()
            buffer = np.zeros(1 + CHUNK * WIDTH, np.int64)
            for event, function in CALLBACKS.items():
                set_callback(callbacks, event, function.address)
            if definitions.metric_class >= 0:
                set_callback(callbacks, "Metric", metric_callback().address)
            keep = _python_callbacks(callbacks, buffer)
            events_dir = anchor.with_suffix("")
            if not events_dir.is_dir():
                raise InputError(events_dir, f"the event folder of {anchor.name} is missing")
            check(lib.Reader_OpenEvtFiles(reader), events_dir, "cannot be opened", messages)
            by_ref = {loc.ref: loc for loc in definitions.locations}
            traces = [_read_location(lib, reader, callbacks, buffer, definitions, by_ref[ref], messages)
                      for ref in refs]
            del keep  # the Python callbacks may go once the events are read
            return traces
        finally:
            if callbacks:
                lib.EvtReaderCallbacks_Delete(callbacks)
            lib.Reader_Close(reader)


def _read_location(lib: Any, reader: int, callbacks: int, buffer: np.ndarray, definitions: Definitions,
                   location: Any, messages: list) -> LocationTrace:
    """Read one location's events chunk by chunk, replaying each chunk into the location's tables."""
    from pmkit.readers.otf2_kernels import replay

    event_file = definitions.anchor.with_suffix("") / f"{location.ref}.evt"
    evt = lib.Reader_GetEvtReader(reader, location.ref)
    if not evt:
        raise InputError(event_file, f"cannot be read: {describe(messages) or 'OTF2 gave no reason'}")
    check(lib.Reader_RegisterEvtCallbacks(reader, evt, callbacks, buffer.ctypes.data), event_file,
          "cannot be read", messages)
    tables = _Tables()
    region_mpi = definitions.region_mpi
    total = 0
    while True:
        buffer[0] = 0
        read = ctypes.c_uint64()
        code = lib.Reader_ReadLocalEvents(reader, evt, CHUNK, ctypes.byref(read))
        check(code, event_file, f"is truncated or corrupt after {total + read.value} events", messages)
        total += read.value
        count = int(buffer[0])
        tables.state[S_AT] = 0
        while True:
            replay(buffer[1:], count, region_mpi, definitions.metric_class, len(definitions.metrics), tables.state,
                   tables.stack, tables.stack_metrics, tables.current, tables.nodes, tables.node_metrics,
                   tables.calls, tables.messages, tables.requests, tables.pending)
            error = int(tables.state[S_ERROR])
            if error == 0:
                break
            if error in _PROBLEMS:
                where = total - read.value + int(tables.state[S_AT]) + 1
                raise InputError(event_file, f"has {_PROBLEMS[error]} (around event {where})")
            tables.grow(error)
        if read.value < CHUNK:
            break
    lib.Reader_CloseEvtReader(reader, evt)
    if location.events and total != location.events:
        # OTF2 does not always notice a truncated file: past its end it may read whatever the buffer holds
        raise InputError(event_file, f"is truncated or corrupt: it holds {total} events, the definitions promise "
                                     f"{location.events}")
    return _finish(tables, location.ref, location.rank, location.thread, total)


_PYTHON_SIGNATURES = {
    "MpiRequestCancelled": (ctypes.c_uint64,),
    "NonBlockingCollectiveComplete": (ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint64,
                                      ctypes.c_uint64, ctypes.c_uint64),
}


def _python_callbacks(callbacks: int, buffer: np.ndarray) -> list:
    """Register the rare events' Python callbacks writing into ``buffer``; returns what must stay alive."""
    from pmkit.readers.otf2_kernels import PYTHON_CALLBACKS

    keep = []
    for event, record in PYTHON_CALLBACKS.items():
        prototype = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_void_p,
                                     ctypes.c_void_p, *_PYTHON_SIGNATURES[event])

        def on_event(location, time, position, user, attributes, *args, record=record):
            record(buffer, time, *args)
            return 0

        function = prototype(on_event)
        keep.append(function)
        set_callback(callbacks, event, ctypes.cast(function, ctypes.c_void_p).value)
    return keep


def _local_definitions(lib: Any, reader: int, refs: list[int], anchor: Path, messages: list) -> None:
    """Read each location's local definitions (Score-P's mapping tables and clock offsets)."""
    if lib.Reader_OpenDefFiles(reader) != 0:
        messages.clear()  # archives without local definition files are valid
        return
    for ref in refs:
        local = lib.Reader_GetDefReader(reader, ref)
        if local:
            read = ctypes.c_uint64()
            check(lib.Reader_ReadAllLocalDefinitions(reader, local, ctypes.byref(read)),
                  anchor.with_suffix("") / f"{ref}.def", "cannot be read", messages)
            lib.Reader_CloseDefReader(reader, local)
        lib.Reader_GetEvtReader(reader, ref)
    lib.Reader_CloseDefFiles(reader)


def _finish(tables: _Tables, ref: int, rank: int, thread: int, events: int) -> LocationTrace:
    """Trim the tables; close regions still open at the location's last event (and say so)."""
    state = tables.state
    notes = []
    depth = int(state[S_DEPTH])
    if depth:
        last = int(state[S_LAST])
        for level in range(depth - 1, -1, -1):
            node, enter, children, call = tables.stack[level]
            spent = last - enter
            tables.nodes[node, N_INCL] += spent
            tables.nodes[node, N_EXCL] += spent - children
            if level:
                tables.stack[level - 1, 2] += spent
            if call >= 0:
                tables.calls[call, C_END] = last
        notes.append(f"location {ref} (rank {rank}) ends with {depth} regions still entered; they were closed at "
                     "its last event")
    n_nodes, n_calls, n_messages = int(state[S_NODES]), int(state[S_CALLS]), int(state[S_MESSAGES])
    return LocationTrace(ref, rank, thread, tables.nodes[:n_nodes].copy(),
                         tables.node_metrics[:n_nodes, : 2 * MAX_METRICS].copy(),
                         tables.calls[:n_calls].copy(), tables.messages[:n_messages].copy(),
                         int(state[S_FIRST]), int(state[S_LAST]), events, notes)
