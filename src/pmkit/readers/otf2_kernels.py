"""The compiled parts of OTF2 event reading: C callbacks that record events, and the replay kernel.

Each callback is a numba ``cfunc`` that OTF2 calls with one event; it appends the event as a record
of :data:`~pmkit.readers.otf2_events.WIDTH` int64 fields (kind, time, payload) to the buffer its
user-data pointer holds (``buffer[0]`` counts the records).  :func:`replay` turns the records into
the call-tree, call and message tables.  Everything is compiled once and cached (``cache=True``);
this module is imported only when a trace is read, so ``pmkit --help`` never loads numba.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import carray, cfunc, njit, types

from pmkit.readers.otf2_definitions import MAX_METRICS
from pmkit.readers.otf2_events import (
    C_COMM,
    C_COMPLETED,
    C_END,
    C_FLAGS,
    C_MESSAGES,
    C_NODE,
    C_OP,
    C_PEER,
    C_RECV,
    C_REGION,
    C_ROOT,
    C_SENT,
    C_START,
    C_TAG,
    CANCELLED,
    COLL_END,
    E_FULL_CALLS,
    E_FULL_MESSAGES,
    E_FULL_NODES,
    E_FULL_REQUESTS,
    E_LEAVE_EMPTY,
    E_LEAVE_MISMATCH,
    E_TOO_DEEP,
    ENTER,
    F_COLLECTIVE,
    F_COMPLETE,
    F_POST,
    F_RECV,
    F_SEND,
    IRECV_REQUEST,
    ISEND_COMPLETE,
    LEAVE,
    M_BYTES,
    M_CALL,
    M_COMM,
    M_COMPLETE,
    M_DIRECTION,
    M_PEER,
    M_POST,
    M_REQUEST,
    M_TAG,
    M_TIME,
    METRIC,
    N_CHILD,
    N_EXCL,
    N_INCL,
    N_PARENT,
    N_RECV,
    N_REGION,
    N_SENT,
    N_SIBLING,
    N_VISITS,
    NBC_COMPLETE,
    RECV,
    S_AT,
    S_CALLS,
    S_DEPTH,
    S_ERROR,
    S_FIRST,
    S_LAST,
    S_MESSAGES,
    S_NODES,
    SEND,
    WIDTH,
)

_u8, _u32, _u64, _vp, _i32 = types.uint8, types.uint32, types.uint64, types.voidptr, types.int32
_REGION = _i32(_u64, _u64, _u64, _vp, _vp, _u32)
_MESSAGE = _i32(_u64, _u64, _u64, _vp, _vp, _u32, _u32, _u32, _u64)
_NONBLOCKING = _i32(_u64, _u64, _u64, _vp, _vp, _u32, _u32, _u32, _u64, _u64)
_REQUEST = _i32(_u64, _u64, _u64, _vp, _vp, _u64)


@njit(cache=True)
def _slot(user):
    """The record buffer behind ``user`` and the offset of a new record in it."""
    header = carray(user, (1,), np.int64)
    n = header[0]
    buffer = carray(user, (1 + (n + 1) * WIDTH,), np.int64)
    header[0] = n + 1
    return buffer, 1 + n * WIDTH


@njit(cache=True)
def _message(user, kind, time, peer, comm, tag, length, request):
    buffer, o = _slot(user)
    buffer[o], buffer[o + 1], buffer[o + 2], buffer[o + 3] = kind, time, peer, comm
    buffer[o + 4], buffer[o + 5], buffer[o + 6] = tag, length, request


@njit(cache=True)
def _request(user, kind, time, request):
    buffer, o = _slot(user)
    buffer[o], buffer[o + 1], buffer[o + 2] = kind, time, request


@cfunc(_REGION, cache=True)
def on_enter(location, time, position, user, attributes, region):
    buffer, o = _slot(user)
    buffer[o], buffer[o + 1], buffer[o + 2] = ENTER, time, region
    return 0


@cfunc(_REGION, cache=True)
def on_leave(location, time, position, user, attributes, region):
    buffer, o = _slot(user)
    buffer[o], buffer[o + 1], buffer[o + 2] = LEAVE, time, region
    return 0


@cfunc(_MESSAGE, cache=True)
def on_send(location, time, position, user, attributes, peer, comm, tag, length):
    _message(user, SEND, time, peer, comm, tag, length, -1)
    return 0


@cfunc(_NONBLOCKING, cache=True)
def on_isend(location, time, position, user, attributes, peer, comm, tag, length, request):
    _message(user, SEND, time, peer, comm, tag, length, np.int64(request))
    return 0


@cfunc(_MESSAGE, cache=True)
def on_recv(location, time, position, user, attributes, peer, comm, tag, length):
    _message(user, RECV, time, peer, comm, tag, length, -1)
    return 0


@cfunc(_NONBLOCKING, cache=True)
def on_irecv(location, time, position, user, attributes, peer, comm, tag, length, request):
    _message(user, RECV, time, peer, comm, tag, length, np.int64(request))
    return 0


@cfunc(_REQUEST, cache=True)
def on_isend_complete(location, time, position, user, attributes, request):
    _request(user, ISEND_COMPLETE, time, np.int64(request))
    return 0


@cfunc(_REQUEST, cache=True)
def on_irecv_request(location, time, position, user, attributes, request):
    _request(user, IRECV_REQUEST, time, np.int64(request))
    return 0


@njit(cache=True)
def _collective(user, kind, time, op, comm, root, sent, received):
    buffer, o = _slot(user)
    buffer[o], buffer[o + 1], buffer[o + 2], buffer[o + 3] = kind, time, op, comm
    buffer[o + 4], buffer[o + 5], buffer[o + 6] = root, sent, received


@cfunc(_i32(_u64, _u64, _u64, _vp, _vp, _u8, _u32, _u32, _u64, _u64), cache=True)
def on_collective_end(location, time, position, user, attributes, op, comm, root, sent, received):
    _collective(user, COLL_END, time, op, comm, root, sent, received)
    return 0


@njit(cache=True, nogil=True)
def _slot_of(requests, table, request):
    """Where ``request`` is in table ``table`` of the open-addressing request map, or where it would go."""
    capacity = requests.shape[2]
    index = (request * 0x9E3779B97F4A7C15) & (capacity - 1)
    free = -1
    for _ in range(capacity):
        used = requests[table, 2, index]
        if used == 0:
            return index if free < 0 else free, False
        if used == 1 and requests[table, 0, index] == request:
            return index, True
        if used == 2 and free < 0:
            free = index
        index = (index + 1) & (capacity - 1)
    return free, False


@njit(cache=True, nogil=True)
def _put(requests, pending, table, request, value):
    """Remember ``value`` for an open request; False when the map is too full (the caller grows it)."""
    if 2 * (pending[table] + 1) > requests.shape[2]:
        return False
    index, found = _slot_of(requests, table, request)
    if not found:
        pending[table] += 1
    requests[table, 0, index] = request
    requests[table, 1, index] = value
    requests[table, 2, index] = 1
    return True


@njit(cache=True, nogil=True)
def _pop(requests, pending, table, request):
    """The value of a completed request (-1 if unknown), forgetting it."""
    index, found = _slot_of(requests, table, request)
    if not found:
        return -1
    requests[table, 2, index] = 2
    pending[table] -= 1
    return requests[table, 1, index]


CALLBACKS = {
    "Enter": on_enter, "Leave": on_leave, "MpiSend": on_send, "MpiIsend": on_isend, "MpiRecv": on_recv,
    "MpiIrecv": on_irecv, "MpiIsendComplete": on_isend_complete, "MpiIrecvRequest": on_irecv_request,
    "MpiCollectiveEnd": on_collective_end,
}
"""The compiled callback of every frequent OTF2 event pmkit reads, by OTF2's event name.

Each compiled callback costs ~70 ms to load from numba's cache, so the rare events
(``MpiRequestCancelled``, ``NonBlockingCollectiveComplete``) are recorded by Python callbacks
(:data:`PYTHON_CALLBACKS`), and the counter callback is loaded only for traces with counters
(:func:`metric_callback`)."""


def metric_callback():
    """The compiled ``Metric`` callback (loaded on first use: only traces with counters need it)."""
    return _metric()


@cache
def _metric():
    @cfunc(_i32(_u64, _u64, _u64, _vp, _vp, _u32, _u8, _vp, _vp), cache=True)
    def on_metric(location, time, position, user, attributes, metric, count, value_types, values):
        buffer, o = _slot(user)
        buffer[o], buffer[o + 1], buffer[o + 2] = METRIC, time, metric
        given = carray(values, (count,), np.int64)
        for i in range(min(count, MAX_METRICS)):
            buffer[o + 3 + i] = given[i]
        return 0
    return on_metric


def _append(buffer: np.ndarray, fields: tuple) -> None:
    n = int(buffer[0])
    buffer[1 + n * WIDTH: 1 + n * WIDTH + len(fields)] = fields
    buffer[0] = n + 1


def _signed(value: int) -> int:
    """A uint64 as the int64 with the same bits (request ids are stored as int64)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _py_cancelled(buffer: np.ndarray, time: int, request: int) -> None:
    _append(buffer, (CANCELLED, time, _signed(request)))


def _py_nbc_complete(buffer: np.ndarray, time: int, op: int, comm: int, root: int, sent: int, received: int,
                     request: int) -> None:
    _append(buffer, (NBC_COMPLETE, time, op, comm, root, sent, received))


PYTHON_CALLBACKS = {"MpiRequestCancelled": _py_cancelled, "NonBlockingCollectiveComplete": _py_nbc_complete}
"""Rare events recorded in Python: (buffer, time, event arguments) → a record appended to the buffer."""


@njit(cache=True, nogil=True)
def replay(records, count, region_mpi, metric_class, n_metrics, state, stack, stack_metrics, current,
           nodes, node_metrics, calls, messages, requests, pending):
    """Replay ``count`` records into the tables; stops with ``state[S_ERROR]`` set when one is full.

    ``stack`` rows are (node, enter tick, children's inclusive ticks, call row); ``stack_metrics``
    the counters at enter and the children's counter deltas.  Resume after growing the full table
    from ``state[S_AT]``.  Pure Python semantics; compiled with numba by :func:`_kernels`.
    """
    state[S_ERROR] = 0
    for r in range(state[S_AT], count):
        o = r * WIDTH
        kind = records[o]
        time = records[o + 1]
        if state[S_FIRST] < 0:
            state[S_FIRST] = time
        depth = state[S_DEPTH]
        top = stack[depth - 1, 0] if depth > 0 else 0
        call = stack[depth - 1, 3] if depth > 0 else -1
        if kind == ENTER:
            region = records[o + 2]
            if depth >= stack.shape[0]:
                state[S_ERROR] = E_TOO_DEEP
                state[S_AT] = r
                return
            node = nodes[top, N_CHILD]
            while node > 0 and nodes[node, N_REGION] != region:
                node = nodes[node, N_SIBLING]
            if node <= 0:
                if state[S_NODES] >= nodes.shape[0]:
                    state[S_ERROR] = E_FULL_NODES
                    state[S_AT] = r
                    return
                node = state[S_NODES]
                state[S_NODES] += 1
                nodes[node, N_PARENT] = top
                nodes[node, N_REGION] = region
                nodes[node, N_CHILD] = 0
                nodes[node, N_SIBLING] = nodes[top, N_CHILD]
                nodes[top, N_CHILD] = node
            is_mpi = region < region_mpi.shape[0] and region_mpi[region]
            if is_mpi and state[S_CALLS] >= calls.shape[0]:
                state[S_ERROR] = E_FULL_CALLS
                state[S_AT] = r
                return
            nodes[node, N_VISITS] += 1
            row = -1
            if is_mpi:
                row = state[S_CALLS]
                state[S_CALLS] += 1
                calls[row, :] = 0
                calls[row, C_NODE] = node
                calls[row, C_REGION] = region
                calls[row, C_START] = time
                calls[row, C_END] = -1
                calls[row, C_PEER] = -1
                calls[row, C_TAG] = -1
                calls[row, C_COMM] = -1
                calls[row, C_ROOT] = -1
                calls[row, C_OP] = -1
            stack[depth, 0] = node
            stack[depth, 1] = time
            stack[depth, 2] = 0
            stack[depth, 3] = row
            for m in range(n_metrics):
                stack_metrics[depth, m] = current[m]
                stack_metrics[depth, MAX_METRICS + m] = 0
            state[S_DEPTH] = depth + 1
        elif kind == LEAVE:
            region = records[o + 2]
            if depth == 0:
                state[S_ERROR] = E_LEAVE_EMPTY
                state[S_AT] = r
                return
            if nodes[top, N_REGION] != region:
                state[S_ERROR] = E_LEAVE_MISMATCH
                state[S_AT] = r
                return
            spent = time - stack[depth - 1, 1]
            nodes[top, N_INCL] += spent
            nodes[top, N_EXCL] += spent - stack[depth - 1, 2]
            for m in range(n_metrics):
                delta = current[m] - stack_metrics[depth - 1, m]
                node_metrics[top, m] += delta
                node_metrics[top, MAX_METRICS + m] += delta - stack_metrics[depth - 1, MAX_METRICS + m]
                if depth > 1:
                    stack_metrics[depth - 2, MAX_METRICS + m] += delta
            if depth > 1:
                stack[depth - 2, 2] += spent
            if call >= 0:
                calls[call, C_END] = time
            state[S_DEPTH] = depth - 1
        elif kind == SEND or kind == RECV:
            if state[S_MESSAGES] >= messages.shape[0]:
                state[S_ERROR] = E_FULL_MESSAGES
                state[S_AT] = r
                return
            peer, comm, tag, length, request = records[o + 2], records[o + 3], records[o + 4], records[o + 5], \
                records[o + 6]
            row = state[S_MESSAGES]
            state[S_MESSAGES] += 1
            messages[row, M_DIRECTION] = 0 if kind == SEND else 1
            messages[row, M_CALL] = call
            messages[row, M_TIME] = time
            messages[row, M_PEER] = peer
            messages[row, M_COMM] = comm
            messages[row, M_TAG] = tag
            messages[row, M_BYTES] = length
            messages[row, M_REQUEST] = request
            messages[row, M_POST] = -1
            messages[row, M_COMPLETE] = -1
            if kind == SEND:
                nodes[top, N_SENT] += length
                if request != -1 and not _put(requests, pending, 0, request, row):
                    state[S_ERROR] = E_FULL_REQUESTS
                    state[S_AT] = r
                    state[S_MESSAGES] -= 1
                    return
            else:
                nodes[top, N_RECV] += length
                if request != -1:
                    messages[row, M_POST] = _pop(requests, pending, 1, request)
                    messages[row, M_COMPLETE] = call
            if call >= 0:
                if kind == SEND:
                    calls[call, C_SENT] += length
                    calls[call, C_FLAGS] |= F_SEND if request == -1 else F_POST
                else:
                    calls[call, C_RECV] += length
                    calls[call, C_FLAGS] |= F_RECV if request == -1 else F_COMPLETE
                    if request != -1:
                        calls[call, C_COMPLETED] += length
                if calls[call, C_MESSAGES] == 0:
                    calls[call, C_PEER] = peer
                    calls[call, C_TAG] = tag
                    calls[call, C_COMM] = comm
                elif calls[call, C_PEER] != peer or calls[call, C_COMM] != comm:
                    calls[call, C_PEER] = -2
                calls[call, C_MESSAGES] += 1
        elif kind == ISEND_COMPLETE:
            row = _pop(requests, pending, 0, records[o + 2])
            if row >= 0:
                messages[row, M_COMPLETE] = call
                if call >= 0:
                    calls[call, C_COMPLETED] += messages[row, M_BYTES]
            if call >= 0:
                calls[call, C_FLAGS] |= F_COMPLETE
        elif kind == IRECV_REQUEST:
            if not _put(requests, pending, 1, records[o + 2], call):
                state[S_ERROR] = E_FULL_REQUESTS
                state[S_AT] = r
                return
            if call >= 0:
                calls[call, C_FLAGS] |= F_POST
        elif kind == CANCELLED:
            _pop(requests, pending, 0, records[o + 2])
            _pop(requests, pending, 1, records[o + 2])
        elif kind == COLL_END or kind == NBC_COMPLETE:
            nodes[top, N_SENT] += records[o + 5]
            nodes[top, N_RECV] += records[o + 6]
            if call >= 0:
                calls[call, C_OP] = records[o + 2]
                calls[call, C_COMM] = records[o + 3]
                calls[call, C_ROOT] = records[o + 4] if records[o + 4] != 0xFFFFFFFF else -1
                calls[call, C_SENT] += records[o + 5]
                calls[call, C_RECV] += records[o + 6]
                calls[call, C_FLAGS] |= F_COLLECTIVE
        elif kind == METRIC:
            if records[o + 2] == metric_class:
                for m in range(n_metrics):
                    current[m] = records[o + 3 + m]
        state[S_LAST] = time
    state[S_AT] = count
