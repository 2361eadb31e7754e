"""A small Cube 4 writer: a tar of ``anchor.xml`` plus ``N.index``/``N.data`` per metric.

It writes what Score-P and CubeLib write and pycubexr (hence pmkit and Extra-P) reads: a metric
tree, regions, a call tree, one process per rank with one thread per location, and per metric an
index and its values — in every value type Cube knows (the scalar ones and the HISTOGRAM,
NDOUBLES, RATE, TAU_ATOMIC and SCALE_FUNC types pmkit skips), plain or zlib-compressed, and
optionally with what real files have: a gzip-compressed anchor, location ids numbered thread
by thread (as CubeLib's example), indexes that leave call paths out, and the wrong tar header
checksums of CubeWriter 4.8.  pmkit's tests and its example study use it to make realistic profiles on the fly,
so no generated binary file is ever committed.  Values are given *exclusive* per call path and
location; metrics stored ``INCLUSIVE`` (like Score-P's ``time``) are summed up the tree on writing.
"""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import numpy as np

DERIVED_KINDS = ("PREDERIVED_EXCLUSIVE", "PREDERIVED_INCLUSIVE", "POSTDERIVED")
"""Metric kinds Cube computes from a CubePL expression; they have no data members."""

_DTYPES = {"DOUBLE": "<f8", "MINDOUBLE": "<f8", "MAXDOUBLE": "<f8", "UINT64": "<u8", "INT64": "<i8",
           "INT8": "<i1", "UINT8": "<u1", "INT16": "<i2", "UINT16": "<u2", "INT32": "<i4", "UINT32": "<u4",
           "COMPLEX": "<c16"}
_OPAQUE = {"RATE": 16, "TAU_ATOMIC": 36, "SCALE_FUNC": 32, "HISTOGRAM": 16, "NDOUBLES": 0}
"""Bytes per value of the types that are not one number (HISTOGRAM(n) adds 8n, NDOUBLES(n) 8n);
they are written as zeros, since pmkit only names them."""


def _opaque_size(dtype: str) -> int | None:
    """Bytes per value of a non-scalar type such as ``HISTOGRAM(5)``; None for a scalar type."""
    base, _, count = dtype.partition("(")
    if base not in _OPAQUE:
        return None
    return _OPAQUE[base] + 8 * int(count.rstrip(")") or 0)


@dataclass(frozen=True)
class CubeMetric:
    """A metric as the anchor declares it; ``kind`` is how its values are stored (Cube's ``type``).

    A derived ``kind`` writes ``expression`` (CubePL) and no values, like a Cube derived metric.
    """

    name: str
    unit: str = "sec"
    dtype: str = "DOUBLE"
    kind: str = "INCLUSIVE"
    description: str = ""
    expression: str = ""
    children: tuple[CubeMetric, ...] = ()

    def __post_init__(self) -> None:
        if self.dtype not in _DTYPES and _opaque_size(self.dtype) is None:
            raise ValueError(f"unsupported dtype {self.dtype!r}; choose one of {', '.join(_DTYPES)}, "
                             f"{', '.join(_OPAQUE)}")
        if self.kind not in ("INCLUSIVE", "EXCLUSIVE", *DERIVED_KINDS):
            raise ValueError(f"kind must be INCLUSIVE, EXCLUSIVE or one of {DERIVED_KINDS}, got {self.kind!r}")


TIME = CubeMetric("time", "sec", "DOUBLE", "INCLUSIVE", "Total CPU allocation time")
VISITS = CubeMetric("visits", "occ", "UINT64", "EXCLUSIVE", "Number of visits")
BYTES_SENT = CubeMetric("bytes_sent", "bytes", "UINT64", "EXCLUSIVE", "Bytes sent in point-to-point communication")


class _Tree:
    """Call paths as a tree in depth-first pre-order, the order cnode ids are given in."""

    def __init__(self, callpaths: Sequence[str | Sequence[str]]) -> None:
        self.paths: list[tuple[str, ...]] = []
        index: dict[tuple[str, ...], int] = {}
        children: dict[int | None, list[int]] = {None: []}
        for path in callpaths:
            names = tuple(path.split("->")) if isinstance(path, str) else tuple(path)
            for depth in range(1, len(names) + 1):
                key = names[:depth]
                if key not in index:
                    index[key] = len(self.paths)
                    self.paths.append(key)
                    children[index[key]] = []
                    children[index[key[:-1]] if depth > 1 else None].append(index[key])
        self.given = [index[tuple(p.split("->")) if isinstance(p, str) else tuple(p)] for p in callpaths]
        self._index = index
        self.children = children
        self.order: list[int] = []  # depth-first pre-order of the given (insertion) indices

        def visit(node: int) -> None:
            self.order.append(node)
            for child in children[node]:
                visit(child)

        for root in children[None]:
            visit(root)
        self.cnode_id = {node: cid for cid, node in enumerate(self.order)}
        self.parent = [-1] * len(self.paths)
        for node, kids in children.items():
            for kid in kids:
                self.parent[kid] = -1 if node is None else node

    def index_of(self, path: str | Sequence[str]) -> int:
        return self._index[tuple(path.split("->")) if isinstance(path, str) else tuple(path)]

    def wide_order(self) -> list[int]:
        """Cnode ids in the enumeration pycubexr uses for INCLUSIVE metrics (children listed on visit)."""
        order: list[int] = []
        for root in self.children[None]:
            order.append(self.cnode_id[root])
            stack = [root]
            while stack:
                node = stack.pop()
                kids = self.children[node]
                order.extend(self.cnode_id[k] for k in kids)
                stack.extend(reversed(kids))
        return order


def all_metrics(metrics: Sequence[CubeMetric]) -> list[CubeMetric]:
    """The metrics and their children, depth first: the order of their ids in the file."""
    out: list[CubeMetric] = []
    for metric in metrics:
        out += [metric, *all_metrics(metric.children)]
    return out


def write_cube(path: str | Path, callpaths: Sequence[str | Sequence[str]], metrics: Sequence[CubeMetric],
               values: Mapping[str, np.ndarray], *, processes: int = 1, threads: int = 1,
               without_data: Sequence[str] = (), compress: bool = False, creator: str = "pmkit CubeWriter",
               as_stored: bool = False, left_out: Mapping[str, Sequence[str]] | None = None,
               threads_first: bool = False, gzip_anchor: bool = False, broken_checksums: bool = False) -> Path:
    """Write a ``.cubex`` file.

    ``values[metric]`` has shape (len(callpaths), processes × threads), exclusive values in the
    order of ``callpaths`` (ancestors missing from the list are added with zero values), one column
    per location id; ``as_stored`` takes them as the file stores them instead (inclusive metrics
    not summed up the tree).  A region written ``compute[cells=1000]`` is region ``compute`` in a
    call-tree node with the numeric parameter cells = 1000, as Score-P's parameter instrumentation
    writes it (one node per value).  Metrics in ``without_data`` are declared but get no index/data
    members, as Score-P does for metrics that were never measured; metrics of a type that is not
    one number per location get zeros.  ``left_out[metric]`` are call paths its index does not
    list (Cube reads them as 0).  ``compress`` writes zlib-compressed ``ZCUBEX.DATA`` members,
    ``gzip_anchor`` a gzip-compressed ``anchor.xml``; ``threads_first`` numbers locations thread by
    thread (id = thread × processes + rank) as CubeLib's example does; ``broken_checksums`` writes
    tar headers with the wrong checksums of CubeWriter 4.8.
    """
    tree = _Tree(callpaths)
    n_loc = processes * threads
    n = len(tree.paths)
    members: list[tuple[str, bytes]] = []
    for mid, metric in enumerate(all_metrics(metrics)):
        if metric.name in without_data or metric.kind in DERIVED_KINDS:
            continue
        # the cnode at each position of pycubexr's enumeration of the tree, which the index refers to
        order = tree.wide_order() if metric.kind == "INCLUSIVE" else list(range(n))
        left = {tree.cnode_id[tree.index_of(p)] for p in (left_out or {}).get(metric.name, ())}
        positions = [t for t, cnode in enumerate(order) if cnode not in left]
        opaque = _opaque_size(metric.dtype)
        if opaque is not None:
            raw = bytes(opaque * len(positions) * n_loc)
        else:
            by_cnode = _scalar_data(np.asarray(values[metric.name]), metric, tree, n_loc, as_stored)
            raw = by_cnode[[order[t] for t in positions]].tobytes()
        members.append((f"{mid}.index", _index(positions)))
        members.append((f"{mid}.data", _zdata(raw) if compress else b"CUBEX.DATA" + raw))
    anchor = _anchor(tree, metrics, processes, threads, creator, threads_first).encode("utf-8")
    members.append(("anchor.xml", gzip.compress(anchor, mtime=0) if gzip_anchor else anchor))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, payload in members:
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            info.mode = 0o600
            tar.addfile(info, io.BytesIO(payload))
    data = buffer.getvalue()
    path.write_bytes(_break_checksums(data) if broken_checksums else data)
    return path


def edit_member(path: str | Path, name: str, edit: Callable[[bytes], bytes]) -> Path:
    """Rewrite member ``name`` of a written Cube file as ``edit`` returns it (for damaged or unusual files)."""
    with tarfile.open(path) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]
    members[name] = edit(members[name])
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for member, payload in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(payload)
            info.mode = 0o600
            tar.addfile(info, io.BytesIO(payload))
    return Path(path)


def _scalar_data(given: np.ndarray, metric: CubeMetric, tree: _Tree, n_loc: int, as_stored: bool) -> np.ndarray:
    """One metric's values by cnode id, as the file stores them, in the metric's value type."""
    complex_values = metric.dtype == "COMPLEX"
    given = given.astype(complex if complex_values else float)
    if given.shape != (len(tree.given), n_loc):
        raise ValueError(f"values of {metric.name} have shape {given.shape}, expected ({len(tree.given)}, {n_loc})")
    n = len(tree.paths)
    exclusive = np.zeros((n, n_loc), dtype=given.dtype)
    exclusive[tree.given] = given
    stored = exclusive if as_stored else _stored(exclusive, metric, tree)
    by_cnode = np.empty_like(stored)
    by_cnode[[tree.cnode_id[i] for i in range(n)]] = stored
    if not complex_values and metric.dtype not in ("DOUBLE", "MINDOUBLE", "MAXDOUBLE"):
        by_cnode = np.rint(by_cnode)
    return by_cnode.astype(_DTYPES[metric.dtype])


def _break_checksums(data: bytes) -> bytes:
    """Tar headers with checksums off by one, as CubeWriter 4.8 wrote them (readers that check refuse them)."""
    out = bytearray(data)
    offset = 0
    while offset + tarfile.BLOCKSIZE <= len(out) and out[offset:offset + tarfile.BLOCKSIZE].strip(b"\0"):
        header = out[offset:offset + tarfile.BLOCKSIZE]
        size = int(header[124:136].rstrip(b"\0 ") or b"0", 8)
        wrong = 256 + sum(header[:148]) + sum(header[156:]) + 1
        out[offset + 148:offset + 156] = b"%06o\0 " % wrong
        offset += tarfile.BLOCKSIZE * (1 + -(-size // tarfile.BLOCKSIZE))
    return bytes(out)


def _stored(exclusive: np.ndarray, metric: CubeMetric, tree: _Tree) -> np.ndarray:
    """Values as the file stores them: exclusive as given, or summed over each subtree."""
    if metric.kind == "EXCLUSIVE" or metric.dtype in ("MINDOUBLE", "MAXDOUBLE"):
        return exclusive
    inclusive = exclusive.copy()
    for node in reversed(tree.order):
        parent = tree.parent[node]
        if parent >= 0:
            inclusive[parent] += inclusive[node]
    return inclusive


def _index(positions: Sequence[int]) -> bytes:
    """The index: how many call paths the data holds and, in data order, their positions in the tree."""
    count = len(positions)
    return b"CUBEX.INDEX" + struct.pack("<ihbi", 1, 0, 1, count) + struct.pack(f"<{count}i", *positions)


def _zdata(raw: bytes, chunk: int = 1 << 16) -> bytes:
    """The compressed data layout: entry count, (raw offset, compressed offset, size) triples, chunks."""
    blocks = [zlib.compress(raw[i:i + chunk]) for i in range(0, len(raw), chunk)] or [zlib.compress(b"")]
    header, offset = [], 0
    for i, block in enumerate(blocks):
        header += [i * chunk, offset, len(block)]
        offset += len(block)
    return b"ZCUBEX.DATA" + struct.pack("<q", len(blocks)) + struct.pack(f"<{len(header)}q", *header) + b"".join(blocks)


def _region(name: str) -> tuple[str, list[tuple[str, str]]]:
    """``compute[cells=1000]`` → ``("compute", [("cells", "1000")])``: a region and its cnode's parameters."""
    if not name.endswith("]") or "[" not in name:
        return name, []
    region, _, inside = name[:-1].partition("[")
    return region, [tuple(item.split("=", 1)) for item in inside.split(",") if "=" in item]  # type: ignore[misc]


def _anchor(tree: _Tree, metrics: Sequence[CubeMetric], processes: int, threads: int, creator: str,
            threads_first: bool = False) -> str:
    out = ['<?xml version="1.0" encoding="UTF-8"?>', '<cube version="4.4">',
           '<attr key="Cube anchor.xml syntax version" value="4.4"/>',
           f'<attr key="Creator" value={quoteattr(creator)}/>', '<attr key="CUBE_CT_AGGR" value="SUM"/>', "<metrics>"]
    ids = {id(m): mid for mid, m in enumerate(all_metrics(metrics))}

    def metric(m: CubeMetric) -> None:
        out.append(f'<metric id="{ids[id(m)]}" type="{m.kind}"><disp_name>{escape(m.name)}</disp_name>'
                   f"<uniq_name>{escape(m.name)}</uniq_name><dtype>{m.dtype}</dtype><uom>{escape(m.unit)}</uom>"
                   f"<url></url><descr>{escape(m.description)}</descr>"
                   + (f"<cubepl>{escape(m.expression)}</cubepl>" if m.kind in DERIVED_KINDS else ""))
        for child in m.children:
            metric(child)
        out.append("</metric>")

    for m in metrics:
        metric(m)
    out.append("</metrics>")
    out.append("<program>")
    regions: dict[str, int] = {}
    for path in tree.paths:
        regions.setdefault(_region(path[-1])[0], len(regions))
    for name, rid in regions.items():
        paradigm = "mpi" if name.startswith("MPI_") else "compiler"
        out.append(f'<region id="{rid}" mod="" begin="-1" end="-1"><name>{escape(name)}</name>'
                   f"<mangled_name>{escape(name)}</mangled_name><paradigm>{paradigm}</paradigm>"
                   f"<role>function</role><url></url><descr></descr></region>")

    def cnode(node: int) -> None:
        region, parameters = _region(tree.paths[node][-1])
        out.append(f'<cnode id="{tree.cnode_id[node]}" calleeId="{regions[region]}">')
        for key, value in parameters:
            out.append(f'<parameter partype="numeric" parkey={quoteattr(key)} parvalue={quoteattr(value)}/>')
        for child in tree.children[node]:
            cnode(child)
        out.append("</cnode>")

    for root in tree.children[None]:
        cnode(root)
    out.append("</program>")
    out.append('<system><systemtreenode Id="0"><name>machine Linux</name><class>machine</class>'
               '<systemtreenode Id="1"><name>node 0</name><class>node</class>')
    for rank in range(processes):
        out.append(f'<locationgroup Id="{rank}"><name>MPI Rank {rank}</name><rank>{rank}</rank><type>process</type>')
        for thread in range(threads):
            lid = thread * processes + rank if threads_first else rank * threads + thread
            label = "Master thread" if thread == 0 else f"OMP thread {thread}"
            out.append(f'<location Id="{lid}"><name>{label}</name><rank>{thread}</rank><type>thread</type></location>')
        out.append("</locationgroup>")
    out.append("</systemtreenode></systemtreenode><topologies></topologies></system></cube>")
    return "\n".join(out)
