"""The MPI calls of an OTF2 trace as an :class:`~pmkit.experiment.EventTable`.

Takes the per-location call and message arrays of :mod:`pmkit.readers.otf2_events`, translates
communicator ranks to MPI_COMM_WORLD ranks and ticks to seconds, and lets :mod:`pmkit.mpi_events`
decide each call's kind and message size, match sends to receives and group collective instances.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pmkit.experiment import CallTree, EventTable
from pmkit.mpi_events import KIND, collective_instances, collective_kind, collective_message_size, match_messages
from pmkit.readers import otf2_events as ev
from pmkit.readers.otf2_definitions import Definitions, Region


@dataclass
class RunCalls:
    """One run's input to the table: its definitions, locations, and each location's node → call path map."""

    definitions: Definitions
    locations: Sequence[ev.LocationTrace]
    callpath_of: Sequence[np.ndarray]
    info: dict[str, Any]


def _to_world(definitions: Definitions, comm: np.ndarray, local: np.ndarray, own: np.ndarray) -> np.ndarray:
    """World ranks of communicator-local ranks (-1 where unknown; MPI_COMM_SELF's rank 0 is ``own``)."""
    out = np.full(len(local), -1, np.int64)
    for ref in np.unique(comm[comm >= 0]):
        members = definitions.comm_members.get(int(ref))
        if members is None:
            continue
        rows = (comm == ref) & (local >= 0) & (local < len(members))
        world = members[local[rows]]
        out[rows] = np.where(world < 0, own[rows], world)
    return out


def event_table(runs: Sequence[RunCalls], tree: CallTree, regions: list[Region], region_of: Sequence[np.ndarray],
                source: str = "") -> EventTable:
    """All MPI calls of ``runs`` (rows in run, rank, thread and time order) with messages matched.

    ``region_of[i]`` maps run ``i``'s OTF2 region references to positions in ``regions``.
    """
    parts: dict[str, list[np.ndarray]] = {k: [] for k in (
        "callpath", "region", "rank", "location", "run", "start", "end", "sent", "received", "completed", "peer",
        "tag", "comm", "root", "op", "flags", "messages", "comm_size")}
    message_parts: dict[str, list[np.ndarray]] = {k: [] for k in (
        "direction", "call", "time", "peer", "comm", "tag", "bytes", "post", "complete", "rank", "run")}
    offset = 0
    for number, run in enumerate(runs):
        d = run.definitions
        seconds = 1.0 / d.timer_resolution
        for loc, callpath_of in zip(run.locations, run.callpath_of, strict=True):
            calls, messages = loc.calls, loc.messages
            n = len(calls)
            own = np.full(n, loc.rank, np.int64)
            comm = calls[:, ev.C_COMM]
            parts["callpath"].append(callpath_of[calls[:, ev.C_NODE]])
            parts["region"].append(region_of[number][calls[:, ev.C_REGION]])
            parts["rank"].append(own)
            parts["location"].append(np.full(n, loc.ref, np.int64))
            parts["run"].append(np.full(n, number, np.int64))
            parts["start"].append((calls[:, ev.C_START] - d.global_offset) * seconds)
            parts["end"].append((calls[:, ev.C_END] - d.global_offset) * seconds)
            parts["sent"].append(calls[:, ev.C_SENT].astype(float))
            parts["received"].append(calls[:, ev.C_RECV].astype(float))
            parts["completed"].append(calls[:, ev.C_COMPLETED].astype(float))
            single = calls[:, ev.C_PEER] >= 0
            world_peer = _to_world(d, comm, calls[:, ev.C_PEER], own)
            parts["peer"].append(np.where(single, world_peer, calls[:, ev.C_PEER]))
            parts["tag"].append(np.where(calls[:, ev.C_MESSAGES] == 1, calls[:, ev.C_TAG], -1))
            parts["comm"].append(comm)
            root = calls[:, ev.C_ROOT]
            parts["root"].append(np.where(root >= 0, _to_world(d, comm, root, own), -1))
            parts["op"].append(calls[:, ev.C_OP])
            parts["flags"].append(calls[:, ev.C_FLAGS])
            parts["messages"].append(calls[:, ev.C_MESSAGES])
            size = np.where((comm >= 0) & (comm < len(d.comm_size)), d.comm_size[np.clip(comm, 0, None)], -1) \
                if len(d.comm_size) else np.full(n, -1, np.int64)
            parts["comm_size"].append(size)
            m = len(messages)
            mcomm = messages[:, ev.M_COMM]
            message_parts["direction"].append(messages[:, ev.M_DIRECTION])
            message_parts["call"].append(np.where(messages[:, ev.M_CALL] >= 0, messages[:, ev.M_CALL] + offset, -1))
            message_parts["time"].append((messages[:, ev.M_TIME] - d.global_offset) * seconds)
            message_parts["peer"].append(_to_world(d, mcomm, messages[:, ev.M_PEER], np.full(m, loc.rank, np.int64)))
            message_parts["comm"].append(mcomm)
            message_parts["tag"].append(messages[:, ev.M_TAG])
            message_parts["bytes"].append(messages[:, ev.M_BYTES].astype(float))
            message_parts["post"].append(np.where(messages[:, ev.M_POST] >= 0, messages[:, ev.M_POST] + offset, -1))
            message_parts["complete"].append(
                np.where(messages[:, ev.M_COMPLETE] >= 0, messages[:, ev.M_COMPLETE] + offset, -1))
            message_parts["rank"].append(np.full(m, loc.rank, np.int64))
            message_parts["run"].append(np.full(m, number, np.int64))
            offset += n
    col = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in parts.items()}
    msg = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in message_parts.items()}
    return _assemble(col, msg, tree, regions, source, [r.info for r in runs])


def _assemble(col: dict[str, np.ndarray], msg: dict[str, np.ndarray], tree: CallTree, regions: list[Region],
              source: str, runs: list[dict[str, Any]]) -> EventTable:
    n = len(col["start"])
    flags = col["flags"].astype(np.int64)
    op = col["op"].astype(np.int64)
    kind = np.full(n, KIND["other"], np.int64)
    kind = np.where(flags & ev.F_POST, KIND["post"], kind)
    kind = np.where(flags & ev.F_COMPLETE, KIND["completion"], kind)
    kind = np.where(flags & ev.F_RECV, KIND["receive"], kind)
    kind = np.where(flags & ev.F_SEND, KIND["send"], kind)
    kind = np.where((flags & ev.F_SEND) & (flags & ev.F_RECV), KIND["sendrecv"], kind)
    kind = np.where(flags & ev.F_COLLECTIVE, collective_kind(op), kind)
    sent, received = col["sent"], col["received"]
    size = np.full(n, np.nan)
    size = np.where(kind == KIND["send"], sent, size)
    size = np.where((kind == KIND["receive"]) | ((kind == KIND["post"]) & (sent > 0)), np.maximum(sent, received),
                    size)
    size = np.where(kind == KIND["sendrecv"], np.maximum(sent, received), size)
    size = np.where(kind == KIND["completion"], col["completed"], size)
    collective = (flags & ev.F_COLLECTIVE) > 0
    size = np.where(collective, collective_message_size(op, col["comm_size"], sent, received), size)
    start = col["start"]

    # messages: sends and receives, matched
    direction = msg["direction"].astype(np.int64)
    call = msg["call"].astype(np.int64)
    is_send = direction == 0
    s_idx, r_idx = np.nonzero(is_send)[0], np.nonzero(~is_send)[0]
    posted = np.where(msg["post"][r_idx] >= 0, msg["post"][r_idx], call[r_idx]).astype(np.int64)
    post_time = np.where(posted >= 0, start[np.clip(posted, 0, max(n - 1, 0))] if n else 0.0, msg["time"][r_idx])
    sends = {"run": msg["run"][s_idx], "sender": msg["rank"][s_idx], "receiver": msg["peer"][s_idx],
             "comm": msg["comm"][s_idx], "tag": msg["tag"][s_idx], "time": msg["time"][s_idx]}
    receives = {"run": msg["run"][r_idx], "sender": msg["peer"][r_idx], "receiver": msg["rank"][r_idx],
                "comm": msg["comm"][r_idx], "tag": msg["tag"][r_idx], "time": post_time}
    matched = match_messages(sends, receives)
    unmatched_receives = r_idx[matched < 0]
    rows = np.concatenate([s_idx, unmatched_receives])
    send_of = np.full(len(direction), -1, np.int64)
    send_of[r_idx[matched >= 0]] = s_idx[matched[matched >= 0]]
    recv_of_send = np.full(len(direction), -1, np.int64)
    recv_of_send[s_idx[matched[matched >= 0]]] = r_idx[matched >= 0]
    is_s = np.arange(len(rows)) < len(s_idx)
    partner = np.where(is_s, recv_of_send[rows], -1)
    messages = {
        "send_row": np.where(is_s, call[rows], -1),
        "recv_row": np.where(is_s, np.where(partner >= 0, call[np.clip(partner, 0, None)], -1), call[rows]),
        "post_row": np.where(is_s, np.where(partner >= 0, msg["post"][np.clip(partner, 0, None)], -1),
                             msg["post"][rows]),
        "sender": np.where(is_s, msg["rank"][rows], msg["peer"][rows]),
        "receiver": np.where(is_s, msg["peer"][rows], msg["rank"][rows]),
        "comm": msg["comm"][rows], "tag": msg["tag"][rows], "bytes": msg["bytes"][rows],
        "send_time": np.where(is_s, msg["time"][rows], np.nan),
        "recv_time": np.where(is_s, np.where(partner >= 0, msg["time"][np.clip(partner, 0, None)], np.nan),
                              msg["time"][rows]),
    } if len(rows) else {}

    # per call: the partner call of single-message calls, the completion of non-blocking posts
    match = np.full(n, -1, np.int64)
    completion = np.full(n, -1, np.int64)
    single = col["messages"] == 1
    if len(rows):
        send_rows, recv_rows, post_rows = messages["send_row"], messages["recv_row"], messages["post_row"]
        both = (send_rows >= 0) & (recv_rows >= 0)
        match[send_rows[both]] = np.where(single[send_rows[both]], recv_rows[both], -1)
        match[recv_rows[both]] = np.where(single[recv_rows[both]], send_rows[both], -1)
        posted_recv = both & (post_rows >= 0)
        match[post_rows[posted_recv]] = send_rows[posted_recv]
        completion[post_rows[post_rows >= 0]] = recv_rows[post_rows >= 0]
        # an MPI_Irecv's message size is known once its message arrives
        size[post_rows[post_rows >= 0]] = messages["bytes"][post_rows >= 0]
        complete = msg["complete"][s_idx]
        has = (complete >= 0) & (call[s_idx] >= 0)
        completion[call[s_idx][has]] = complete[has]
    size = np.where(size > 0, size, np.where(kind == KIND["other"], np.nan, size))
    instance = collective_instances(col["run"], col["comm"], col["rank"], start, collective)
    columns = {
        "callpath": col["callpath"], "region": col["region"], "rank": col["rank"], "location": col["location"],
        "run": col["run"], "start": start, "end": col["end"], "duration": col["end"] - start, "kind": kind,
        "bytes": size, "bytes_sent": sent, "bytes_received": received, "comm": col["comm"],
        "comm_size": col["comm_size"], "peer": col["peer"], "tag": col["tag"],
        "root": np.where(collective, col["root"], -1), "match": match, "completion": completion, "instance": instance,
    }
    return EventTable(columns, [r.name for r in regions], tree, source, messages=messages, runs=runs,
                      region_roles=[r.role for r in regions], region_paradigms=[r.paradigm for r in regions])
