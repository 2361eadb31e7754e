"""What MPI calls in a trace mean: Score-P's conventions, call kinds, message matching, collective instances.

Trace readers hand this module per-call and per-message arrays; it decides what kind of call each
row is (:data:`pmkit.experiment.CALL_KINDS`), derives the message size ``b`` a collective call was
given from the sizes Score-P records, matches point-to-point sends to receives and groups the calls
of one collective operation into an instance.  Nothing here reads files, so other trace formats can
use it too.

Score-P's byte conventions (``scorep_mpi_coll_bytes.c``), for a call given ``b`` bytes on a
communicator of ``P`` processes, are what :func:`scorep_collective_bytes` returns: Barrier sends and
receives nothing; Allreduce, Allgather, Alltoall and Reduce_scatter_block send and receive ``P·b``;
Bcast and Scatter send ``P·b`` at the root, receive ``b`` everywhere, and send nothing elsewhere;
Gather and Reduce send ``b`` everywhere, receive ``P·b`` at the root and nothing elsewhere; Scan
sends ``(P − r)·b`` and receives ``(r + 1)·b`` at rank ``r``.  Point-to-point sizes are the message
length of the ``MpiSend``/``MpiRecv`` events; Score-P records ``MpiRecv`` when the receive completes
(the end of ``MPI_Recv``, or inside the ``MPI_Wait`` of an ``MPI_Irecv``).
"""

from __future__ import annotations

import numpy as np

from pmkit.experiment import CALL_KINDS

KIND = {name: code for code, name in enumerate(CALL_KINDS)}
"""Code of each call kind in the ``kind`` column."""

COLLECTIVE_OPS: dict[int, tuple[str, str]] = {
    0: ("BARRIER", "n_to_n"),
    1: ("BCAST", "one_to_n"),
    2: ("GATHER", "n_to_one"),
    3: ("GATHERV", "n_to_one"),
    4: ("SCATTER", "one_to_n"),
    5: ("SCATTERV", "one_to_n"),
    6: ("ALLGATHER", "n_to_n"),
    7: ("ALLGATHERV", "n_to_n"),
    8: ("ALLTOALL", "n_to_n"),
    9: ("ALLTOALLV", "n_to_n"),
    10: ("ALLTOALLW", "n_to_n"),
    11: ("ALLREDUCE", "n_to_n"),
    12: ("REDUCE", "n_to_one"),
    13: ("REDUCE_SCATTER", "n_to_n"),
    14: ("SCAN", "collective"),
    15: ("EXSCAN", "collective"),
    16: ("REDUCE_SCATTER_BLOCK", "n_to_n"),
}
"""OTF2's collective operation codes (``OTF2_CollectiveOp``): name and call kind."""

OP_CODE = {name: code for code, (name, _) in COLLECTIVE_OPS.items()}
"""OTF2 collective operation code by name (``ALLREDUCE`` → 11)."""

MPI_FUNCTIONS: dict[str, tuple[str, str | None]] = {
    "MPI_Send": ("POINT2POINT", None), "MPI_Ssend": ("POINT2POINT", None), "MPI_Bsend": ("POINT2POINT", None),
    "MPI_Rsend": ("POINT2POINT", None), "MPI_Recv": ("POINT2POINT", None), "MPI_Sendrecv": ("POINT2POINT", None),
    "MPI_Isend": ("POINT2POINT", None), "MPI_Irecv": ("POINT2POINT", None), "MPI_Issend": ("POINT2POINT", None),
    "MPI_Wait": ("FUNCTION", None), "MPI_Waitall": ("FUNCTION", None), "MPI_Waitany": ("FUNCTION", None),
    "MPI_Waitsome": ("FUNCTION", None), "MPI_Test": ("FUNCTION", None), "MPI_Testall": ("FUNCTION", None),
    "MPI_Barrier": ("BARRIER", "BARRIER"), "MPI_Bcast": ("COLL_ONE2ALL", "BCAST"),
    "MPI_Scatter": ("COLL_ONE2ALL", "SCATTER"), "MPI_Gather": ("COLL_ALL2ONE", "GATHER"),
    "MPI_Reduce": ("COLL_ALL2ONE", "REDUCE"), "MPI_Allreduce": ("COLL_ALL2ALL", "ALLREDUCE"),
    "MPI_Allgather": ("COLL_ALL2ALL", "ALLGATHER"), "MPI_Alltoall": ("COLL_ALL2ALL", "ALLTOALL"),
    "MPI_Reduce_scatter_block": ("COLL_ALL2ALL", "REDUCE_SCATTER_BLOCK"), "MPI_Scan": ("COLL_OTHER", "SCAN"),
    "MPI_Init": ("FUNCTION", None), "MPI_Finalize": ("FUNCTION", None), "MPI_Comm_rank": ("FUNCTION", None),
    "MPI_Comm_size": ("FUNCTION", None),
}
"""Score-P's region role of common MPI functions and, for collectives, their operation (for trace writers)."""


def scorep_collective_bytes(op: int, nprocs: int, rank: int, root: int, nbytes: float) -> tuple[float, float]:
    """(sent, received) bytes Score-P records for a collective call given ``nbytes`` (not in place)."""
    name, kind = COLLECTIVE_OPS.get(op, ("", "collective"))
    if name == "BARRIER":
        return 0.0, 0.0
    if kind == "n_to_n":
        return nprocs * nbytes, nprocs * nbytes
    if kind == "one_to_n":
        return (nprocs * nbytes if rank == root else 0.0), nbytes
    if kind == "n_to_one":
        return nbytes, (nprocs * nbytes if rank == root else 0.0)
    if name in ("SCAN", "EXSCAN"):
        return (nprocs - rank) * nbytes, (rank + 1) * nbytes
    return nbytes, nbytes


def collective_message_size(op: np.ndarray, nprocs: np.ndarray, sent: np.ndarray, received: np.ndarray
                            ) -> np.ndarray:
    """The message size ``b`` each collective call was given, from what Score-P recorded (0 for a barrier).

    Inverts :func:`scorep_collective_bytes`: ``b = sent / P`` for all-to-all operations, ``received``
    for one-to-all, ``sent`` for all-to-one, ``(sent + received) / (P + 1)`` for scans.
    """
    op = np.asarray(op, dtype=np.int64)
    nprocs = np.maximum(np.asarray(nprocs, dtype=float), 1.0)
    sent = np.asarray(sent, dtype=float)
    received = np.asarray(received, dtype=float)
    kinds = np.array([COLLECTIVE_OPS.get(int(o), ("", "collective"))[1] for o in range(32)], dtype=object)
    kind = kinds[np.clip(op, 0, 31)]
    b = np.full(op.shape, np.nan)
    b = np.where(kind == "n_to_n", sent / nprocs, b)
    b = np.where(kind == "one_to_n", received, b)
    b = np.where(kind == "n_to_one", sent, b)
    b = np.where(kind == "collective", (sent + received) / (nprocs + 1), b)
    b = np.where(op == OP_CODE["BARRIER"], 0.0, b)
    return np.where(op < 0, np.nan, b)


def collective_kind(op: np.ndarray) -> np.ndarray:
    """The ``kind`` code of collective calls with OTF2 operation codes ``op`` (-1: not a collective)."""
    op = np.asarray(op, dtype=np.int64)
    table = np.full(32, KIND["collective"], dtype=np.int64)
    for code, (_, kind) in COLLECTIVE_OPS.items():
        table[code] = KIND[kind]
    return np.where(op < 0, KIND["other"], table[np.clip(op, 0, 31)])


def dense_key(columns: list[np.ndarray]) -> np.ndarray:
    """One int64 per row, equal exactly where all ``columns`` are equal (codes of their combinations)."""
    key = np.zeros(len(columns[0]), np.int64)
    for column in columns:
        values, codes = np.unique(column, return_inverse=True)
        if len(values) and key.max(initial=0) >= np.iinfo(np.int64).max // (len(values) + 1):
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key = key * len(values) + codes.reshape(-1)
    return key


def position_in_group(key: np.ndarray, order_key: np.ndarray) -> np.ndarray:
    """Each row's position (0, 1, ...) among the rows with the same ``key``, in the order of ``order_key``."""
    if not len(key):
        return np.zeros(0, np.int64)
    order = np.lexsort((order_key, key))
    sorted_key = key[order]
    new_group = np.ones(len(order), dtype=bool)
    new_group[1:] = sorted_key[1:] != sorted_key[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(len(order)), 0))
    position = np.empty(len(order), np.int64)
    position[order] = np.arange(len(order)) - group_start
    return position


def match_messages(sends: dict[str, np.ndarray], receives: dict[str, np.ndarray]) -> np.ndarray:
    """For every receive, the index of its send (-1 if none): FIFO per (sender, receiver, communicator, tag).

    MPI does not let messages between two processes on one communicator and tag overtake each other,
    so the k-th send of such a channel is received by the k-th receive posted on it.  ``sends`` need
    ``run``, ``sender``, ``receiver``, ``comm``, ``tag`` and ``time`` (the send event); ``receives``
    the same with ``time`` the moment the receive was posted (the enter of MPI_Recv, or the MPI_Irecv).
    """
    n_send, n_recv = len(sends["time"]), len(receives["time"])
    if not n_send or not n_recv:
        return np.full(n_recv, -1, np.int64)
    names = ("run", "sender", "receiver", "comm", "tag")
    channel = dense_key([np.concatenate([sends[k], receives[k]]) for k in names])
    s_channel, r_channel = channel[:n_send], channel[n_send:]
    both = dense_key([channel, np.concatenate([position_in_group(s_channel, sends["time"]),
                                                position_in_group(r_channel, receives["time"])])])
    s_key, r_key = both[:n_send], both[n_send:]
    order = np.argsort(s_key, kind="stable")
    found = np.searchsorted(s_key[order], r_key)
    found = np.clip(found, 0, n_send - 1)
    hit = s_key[order][found] == r_key
    return np.where(hit, order[found], -1)


def collective_instances(run: np.ndarray, comm: np.ndarray, rank: np.ndarray, start: np.ndarray,
                         is_collective: np.ndarray) -> np.ndarray:
    """Instance id of every collective call (-1 for others): the k-th collective a process calls on a
    communicator belongs to the k-th operation on it, as MPI orders collectives."""
    out = np.full(len(run), -1, np.int64)
    rows = np.nonzero(is_collective)[0]
    if not len(rows):
        return out
    position = position_in_group(dense_key([run[rows], comm[rows], rank[rows]]), start[rows])
    key = dense_key([run[rows], comm[rows], position])
    out[rows] = np.unique(key, return_inverse=True)[1].reshape(-1)
    return out
