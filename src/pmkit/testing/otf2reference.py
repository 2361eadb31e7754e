"""The reference for pmkit's OTF2 reader: the same profile from the ``otf2`` package's plain event loop.

Written for clarity, not speed (one Python object per event, ~10⁵ events/s): tests check the
compiled reader (:mod:`pmkit.readers.otf2_events`) against it on generated and real traces, and
``bench/otf2_read.py`` times it as the baseline the issue names.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ReferenceProfile:
    """Per (location, call path as a tuple of region names): visits, exclusive and inclusive ticks, bytes;
    and every MPI call as (location, call path, enter tick, leave tick)."""

    timer_resolution: int
    values: dict[tuple[int, tuple[str, ...]], list[int]] = field(default_factory=dict)
    calls: list[tuple[int, tuple[str, ...], int, int]] = field(default_factory=list)
    events: int = 0


def reference_profile(anchor: str | Path) -> ReferenceProfile:
    """Replay every event of the trace with the ``otf2`` package (visits, exclusive, inclusive, sent, received)."""
    import otf2
    from otf2 import events as ev
    from otf2.enums import Paradigm

    with otf2.reader.open(str(anchor)) as trace:
        profile = ReferenceProfile(int(trace.timer_resolution))
        values: dict[tuple[int, tuple[str, ...]], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
        stacks: dict[int, list[list]] = defaultdict(list)
        for location, event in trace.events:
            profile.events += 1
            ref = location._ref
            stack = stacks[ref]
            if isinstance(event, ev.Enter):
                path = (*(stack[-1][0] if stack else ()), event.region.name)
                stack.append([path, event.time, 0, event.region.paradigm == Paradigm.MPI])
                values[(ref, path)][0] += 1
            elif isinstance(event, ev.Leave):
                path, start, children, mpi = stack.pop()
                spent = event.time - start
                entry = values[(ref, path)]
                entry[1] += spent - children
                entry[2] += spent
                if stack:
                    stack[-1][2] += spent
                if mpi:
                    profile.calls.append((ref, path, start, event.time))
            elif isinstance(event, ev.MpiSend | ev.MpiIsend):
                values[(ref, stack[-1][0])][3] += event.msg_length
            elif isinstance(event, ev.MpiRecv | ev.MpiIrecv):
                values[(ref, stack[-1][0])][4] += event.msg_length
            elif isinstance(event, ev.MpiCollectiveEnd):
                values[(ref, stack[-1][0])][3] += event.size_sent
                values[(ref, stack[-1][0])][4] += event.size_received
        profile.values = dict(values)
    return profile
