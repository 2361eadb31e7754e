"""The global definitions of an OTF2 archive as compact tables: regions, locations and ranks, communicators.

Definitions are small (one entry per region, location and communicator) and are read with the
``otf2`` package's Python API; the event files are read per location by
:mod:`pmkit.readers.otf2_events` with these tables.  Ranks follow Score-P: the MPI
``COMM_LOCATIONS`` group lists the locations in rank order, and a communicator's group lists its
members by rank in the communicator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.errors import InputError
from pmkit.readers.otf2_library import import_otf2, otf2_errors

MAX_METRICS = 5
"""Counters per metric event that pmkit keeps (the members of one synchronous metric class)."""


@dataclass(frozen=True)
class Region:
    """One OTF2 region: its name (as Cube shows it), canonical name, Score-P role and paradigm."""

    name: str
    canonical: str
    role: str
    paradigm: str


@dataclass(frozen=True)
class Location:
    """One OTF2 location (a thread): its reference, MPI rank, thread number and event count."""

    ref: int
    rank: int
    thread: int
    events: int
    name: str


@dataclass
class Definitions:
    """What the event reading needs from the global definitions, as arrays indexed by OTF2 reference.

    ``region_index[ref]`` is the position in ``regions`` (-1: undefined); ``region_mpi[ref]`` marks
    MPI functions, whose calls become rows of the event table.  ``comm_members[ref]`` lists a
    communicator's members by their rank in it (-1 entries for unknown); ``comm_size[ref]`` is its
    size.  ``metric_class`` is the reference of the synchronous counter class whose values Score-P
    records at every enter and leave (-1: none) and ``metrics`` its counters' (name, unit,
    description).
    """

    anchor: Path
    timer_resolution: int
    global_offset: int
    trace_length: int
    regions: list[Region]
    region_index: np.ndarray
    region_mpi: np.ndarray
    locations: list[Location]
    comm_names: dict[int, str]
    comm_members: dict[int, np.ndarray]
    comm_size: np.ndarray
    metric_class: int = -1
    metrics: list[tuple[str, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ranks(self) -> int:
        return 1 + max((loc.rank for loc in self.locations), default=-1)


def _enum_name(value: Any) -> str:
    text = str(value)
    return text.split(".", 1)[1] if "." in text else text


def read_definitions(anchor: Path) -> Definitions:
    """The global definitions of the archive whose anchor file is ``anchor``; InputError if unusable."""
    otf2 = import_otf2()
    definitions_file = anchor.with_suffix(".def")
    if not definitions_file.is_file():
        raise InputError(definitions_file, f"the global definitions of {anchor.name} are missing")
    with otf2_errors(definitions_file, "reading the definitions"):
        try:
            reader = otf2.reader.Reader(str(anchor))
        except otf2.TraceReaderError as exc:
            raise InputError(definitions_file, f"has no usable definitions ({exc})") from None
        try:
            return _tables(anchor, reader.definitions)
        finally:
            reader.close()


def _tables(anchor: Path, defs: Any) -> Definitions:
    clock = defs.clock_properties
    if clock is None or not clock.timer_resolution:
        raise InputError(anchor.with_suffix(".def"), "has no timer resolution (no clock properties)")
    regions = list(defs.regions)
    if not regions or not len(defs.locations):
        raise InputError(anchor.with_suffix(".def"), "defines no regions or no locations: not a trace of a run")
    top = max(r._ref for r in regions) + 1
    region_index = np.full(top, -1, np.int64)
    region_mpi = np.zeros(top, np.bool_)
    table = []
    for i, region in enumerate(regions):
        paradigm = _enum_name(region.paradigm)
        table.append(Region(region.name or f"region {region._ref}", region.canonical_name or region.name or "",
                            _enum_name(region.region_role), paradigm))
        region_index[region._ref] = i
        region_mpi[region._ref] = paradigm == "MPI"
    locations, rank_of = _locations(defs)
    comm_names: dict[int, str] = {}
    comm_members: dict[int, np.ndarray] = {}
    comms = list(defs.comms)
    comm_size = np.full(max((c._ref for c in comms), default=-1) + 1, -1, np.int64)
    for comm in comms:
        group = comm.group
        kind = _enum_name(getattr(group, "group_type", "")) if group is not None else ""
        if kind == "COMM_SELF":
            members = np.array([-1], np.int64)  # rank 0 of MPI_COMM_SELF is the caller itself
        elif kind == "COMM_GROUP":
            members = np.array([rank_of.get(m._ref, -1) for m in group.members], np.int64)
        else:
            continue
        comm_names[comm._ref] = comm.name or f"comm {comm._ref}"
        comm_members[comm._ref] = members
        comm_size[comm._ref] = len(members)
    out = Definitions(anchor, int(clock.timer_resolution), int(clock.global_offset or 0),
                      int(clock.trace_length or 0), table, region_index, region_mpi, locations, comm_names,
                      comm_members, comm_size)
    _metrics(defs, out)
    return out


def _locations(defs: Any) -> tuple[list[Location], dict[int, int]]:
    """Locations with their MPI rank (position in the MPI COMM_LOCATIONS group, as Score-P writes it)."""
    rank_of: dict[int, int] = {}
    for group in defs.groups:
        if _enum_name(group.group_type) == "COMM_LOCATIONS" and _enum_name(group.paradigm) == "MPI":
            rank_of = {loc._ref: i for i, loc in enumerate(group.members)}
            break
    process_rank: dict[int, int] = {}
    for loc in defs.locations:
        if loc._ref in rank_of and loc.group is not None:
            process_rank[loc.group._ref] = rank_of[loc._ref]
    groups = [g._ref for g in defs.location_groups]
    threads: dict[int, int] = {}
    out = []
    for loc in defs.locations:
        group = loc.group._ref if loc.group is not None else -1
        rank = process_rank.get(group, groups.index(group) if group in groups else 0)
        thread = threads.get(group, 0)
        threads[group] = thread + 1
        rank_of.setdefault(loc._ref, rank)
        out.append(Location(loc._ref, rank, thread, int(loc.number_of_events or 0), loc.name or ""))
    return out, rank_of


def _metrics(defs: Any, out: Definitions) -> None:
    """The first strictly synchronous class of accumulated integer counters (Score-P's PAPI counters)."""
    for metric_class in getattr(defs, "metric_classes", ()):
        occurrence = _enum_name(metric_class.occurrence)
        members = list(metric_class.members)
        usable = occurrence == "SYNCHRONOUS_STRICT" and all(
            _enum_name(m.metric_mode) in ("ACCUMULATED_START", "ACCUMULATED_POINT", "ACCUMULATED_LAST")
            and _enum_name(m.value_type) in ("UINT64", "INT64") for m in members)
        if not usable:
            out.notes.append(f"metrics {', '.join(m.name for m in members)} are not accumulated integer counters "
                             "recorded at every enter and leave; they were left out")
            continue
        if out.metric_class >= 0:
            out.notes.append(f"only the first counter class is read; left out: {', '.join(m.name for m in members)}")
            continue
        if len(members) > MAX_METRICS:
            out.notes.append(f"only the first {MAX_METRICS} counters of a class are read; left out: "
                             f"{', '.join(m.name for m in members[MAX_METRICS:])}")
        out.metric_class = metric_class._ref
        out.metrics = [(m.name, "#" if (m.unit or "#") == "#" else m.unit, m.description or "")
                       for m in members[:MAX_METRICS]]
