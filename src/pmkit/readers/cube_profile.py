"""Decoding one Cube 4 file (``.cubex``) into call paths and per-location value matrices.

pycubexr parses the anchor and each metric's index and data; the inclusive/exclusive conversion is
done here on whole matrices (call paths × locations) instead of pycubexr's per-node recursion:
additive metrics subtract or add children (as pycubexr; unsigned counters never go below zero);
inclusive ``MINDOUBLE``/``MAXDOUBLE`` values are the minimum/maximum over the subtree, zeros
included, as Cube's own ``cube_dump`` gives them (pycubexr skips children whose values are all
zero and differs from Cube there).  Only the metrics
asked for are decoded.  Derived metrics (CubePL expressions) and value types that are not one
number per location (HISTOGRAM, NDOUBLES, TAU_ATOMIC, RATE, SCALE_FUNC) are skipped and named.
The result is plain data so that it can come back from a worker process.
"""

from __future__ import annotations

import struct
import tarfile
import zlib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.readers.limits import MIB, LimitError, Limits, inflate

_NOT_SCALAR = {"TAU_ATOMIC", "RATE", "NDOUBLES", "HISTOGRAM", "SCALE_FUNC"}
_STORED_TYPES = ("INCLUSIVE", "EXCLUSIVE")


class CubeFileError(Exception):
    """The file as a whole cannot be used (corrupt, truncated, not a Cube file); says why."""


@dataclass
class CubeMetricInfo:
    """What the anchor says about a metric."""

    name: str
    unit: str
    description: str
    dtype: str


@dataclass
class Profile:
    """One decoded ``.cubex`` file.

    ``values[metric]`` has shape (len(paths), locations): the exclusive or inclusive value of each
    call path (a tuple of region names from the root) per location — or (len(paths),) once reduced
    over locations (:func:`pmkit.readers.cube.load_run`).
    """

    file: str
    paths: list[tuple[str, ...]]
    locations: int
    metrics: dict[str, CubeMetricInfo]
    values: dict[str, np.ndarray]
    available: list[str] = field(default_factory=list)
    without_data: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load_profile(path: str | Path, metrics: Collection[str] | None = None, inclusive: bool = False,
                 limits: Limits | None = None) -> Profile:
    """Decode ``path``; ``metrics`` limits which metrics are decoded (None: all).

    Compressed members are inflated within ``limits`` (see :mod:`pmkit.readers.limits`).  Raises
    :class:`CubeFileError` when the file cannot be used at all, saying what is wrong in words —
    never the internals of the decoder that failed.
    """
    reading = _Reading(Path(path), limits or Limits())
    try:
        return reading.load(metrics, inclusive)
    except CubeFileError:
        raise
    except LimitError as exc:
        raise CubeFileError(f"{reading.stage} {exc}") from exc
    except (zlib.error, EOFError) as exc:
        raise CubeFileError(f"{reading.stage} is damaged: its compressed data cannot be inflated "
                            f"({_first_line(exc) or 'it ends early'})") from exc
    except tarfile.TarError as exc:
        raise CubeFileError(f"the tar archive is damaged ({_first_line(exc)})") from exc
    except RecursionError as exc:
        raise CubeFileError(f"{reading.stage} is nested too deeply to decode") from exc
    except Exception as exc:  # any other failure of a damaged file: report it, do not crash the study
        raise CubeFileError(f"{reading.stage} is damaged or not what Cube writes ({type(exc).__name__} in the "
                            "decoder)") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


class _Reading:
    """One file being decoded; ``stage`` names the part being read, for messages."""

    def __init__(self, path: Path, limits: Limits) -> None:
        self.path = path
        self.limits = limits
        self.stage = "the file"
        self.warnings: list[str] = []

    def load(self, wanted: Collection[str] | None, inclusive: bool) -> Profile:
        with self._open() as tar:
            self.stage = "the tar archive"
            members = {m.name: m for m in tar.getmembers()}
            root = self._anchor(tar, members)
            skipped = _drop_derived_metrics(root)
            available = [m.findtext("uniq_name") or "" for m in root.iter("metric")] + [name for name, _ in skipped]
            anchor = _parse_anchor(root)
            tree = _Tree(anchor.cnodes)
            n_loc = _locations(anchor)
            decoded = _Metrics(wanted, skipped)
            for metric in _flatten(anchor.metrics):
                self._metric(tar, members, metric, decoded, tree, n_loc, inclusive)
        paths, values, merged = _merge_duplicates(tree.paths, decoded.values, decoded.infos)
        notes = []
        if merged:
            notes.append(f"{merged} call paths occur more than once under the same parent (e.g. several call "
                         "sites); their values were combined")
        for name in decoded.without:
            decoded.infos.pop(name, None)
        skipped = decoded.skipped if wanted is None else [(n, r) for n, r in decoded.skipped if n in wanted]
        return Profile(str(self.path), paths, n_loc, decoded.infos, values, available, decoded.without, skipped,
                       self.warnings, notes)

    def _open(self) -> tarfile.TarFile:
        """The archive (plain tar, as Cube writes it), read without checksums if CubeWriter 4.8 broke them."""
        try:
            return tarfile.open(self.path, "r:")
        except tarfile.ReadError:
            pass
        try:
            tar = tarfile.open(self.path, "r:", tarinfo=_UncheckedTarInfo)
            tar.getmembers()
        except tarfile.ReadError as exc:
            raise CubeFileError(f"not a Cube file: it is not a tar archive ({_first_line(exc)})") from None
        self.warnings.append("tar header checksums are wrong (a known bug of CubeWriter 4.8); read without "
                             "checking them")
        return tar

    def _anchor(self, tar: tarfile.TarFile, members: dict[str, tarfile.TarInfo]) -> Any:
        """anchor.xml, inflated if gzip-compressed (within the limits), parsed as XML."""
        from xml.etree import ElementTree

        self.stage = "anchor.xml"
        member = members.get("anchor.xml")
        if member is None or not member.isfile():
            raise CubeFileError("not a Cube file: it has no anchor.xml member")
        handle = tar.extractfile(member)
        assert handle is not None
        with handle:
            head = handle.read(2)
            if head == b"\x1f\x8b":
                raw = inflate(_prefixed(head, handle.read), member.size, self.limits, wbits=31)
            elif member.size > self.limits.inflated_bytes:
                raise LimitError(f"is {member.size / MIB:,.0f} MiB, more than the max_inflated_mb limit of "
                                 f"{self.limits.inflated_bytes // MIB:,} MiB (raise it with -R max_inflated_mb=N)")
            else:
                raw = head + handle.read()
        if not raw.lstrip().startswith(b"<"):
            raise CubeFileError("anchor.xml is neither XML nor gzip-compressed XML")
        try:
            return ElementTree.fromstring(raw)
        except ElementTree.ParseError as exc:
            raise CubeFileError(f"anchor.xml is not well-formed XML ({exc})") from None

    def _metric(self, tar: tarfile.TarFile, members: dict[str, tarfile.TarInfo], metric: Any, decoded: _Metrics,
                tree: _Tree, n_loc: int, inclusive: bool) -> None:
        """Decode one metric's index and data into a (call paths × locations) matrix, if it is wanted
        and can be."""
        from pycubexr.utils.metric_formats import METRIC_FORMATS

        dtype = decoded.accept(metric, members)
        if dtype is None:
            return
        index_name, data_name = f"{metric.id}.index", f"{metric.id}.data"
        self.stage = index_name
        endian, positions = _read_index(tar, members[index_name])
        ids = _cnode_ids(metric, positions)
        self.stage = data_name
        item = np.dtype(METRIC_FORMATS[dtype]).newbyteorder(endian)
        flat = self._data(tar, members[data_name], metric, dtype, item, endian, len(ids) * n_loc)
        if dtype in ("UINT64", "UNSIGNED INTEGER"):
            from pycubexr.classes.values import MAX_UINT64_DOUBLE

            # like CubeLib (and pycubexr): values beyond what a double holds exactly read as 0
            flat = np.where(flat > MAX_UINT64_DOUBLE, 0, flat)
        flat = flat.astype(np.complex128 if np.iscomplexobj(flat) else np.float64)
        matrix = _matrix(ids, flat, n_loc, tree.row_of, len(tree.paths), metric.name)
        kind = "min" if dtype == "MINDOUBLE" else "max" if dtype == "MAXDOUBLE" else "sum"
        unsigned = dtype.startswith("UINT") or dtype.startswith("UNSIGNED")
        matrix = _convert(matrix, metric.metric_type, inclusive, kind, unsigned, tree.parents, tree.depths)
        # complex values are converted as complex numbers, then taken as magnitudes (as pycubexr does)
        decoded.values[metric.name] = np.abs(matrix) if np.iscomplexobj(matrix) else matrix

    def _data(self, tar: tarfile.TarFile, member: tarfile.TarInfo, metric: Any, dtype: str, item: np.dtype,
              endian: str, count: int) -> np.ndarray:
        """A metric's values, plain or in zlib chunks (ZCUBEX), never inflated beyond the ``count``
        values its index and the system tree announce."""
        handle = tar.extractfile(member)
        assert handle is not None
        expected = count * item.itemsize
        with handle:
            header = handle.read(len(_ZDATA_HEADER))
            if header == _ZDATA_HEADER:
                raw = _read_zdata(handle, member.size - len(header), endian, expected, self.limits)
            elif header.startswith(_DATA_HEADER):
                raw = header[len(_DATA_HEADER):] + handle.read()  # stored plain: no larger than the file
            else:
                raise CubeFileError(f"metric {metric.name}: {member.name} does not start with a Cube data header")
        if len(raw) % item.itemsize:
            raise CubeFileError(f"metric {metric.name}: {member.name} holds {len(raw)} bytes, not a whole number of "
                                f"{dtype} values (truncated or corrupt)")
        return np.frombuffer(raw, dtype=item)


_DATA_HEADER = b"CUBEX.DATA"
_ZDATA_HEADER = b"ZCUBEX.DATA"
_INDEX_HEADER = b"CUBEX.INDEX"


def _prefixed(head: bytes, read: Any) -> Any:
    """``read`` with ``head`` (already read) given back first."""
    pending = [head]

    def read_more(size: int) -> bytes:
        if pending:
            first = pending.pop()
            return first + read(max(size - len(first), 0))
        return read(size)

    return read_more


def _read_index(tar: tarfile.TarFile, member: tarfile.TarInfo) -> tuple[str, np.ndarray]:
    """A metric index: (byte order, the tree position of each stored call path)."""
    handle = tar.extractfile(member)
    assert handle is not None
    with handle:
        raw = handle.read()
    if not raw.startswith(_INDEX_HEADER):
        raise CubeFileError(f"{member.name} is not a Cube index (its header is wrong)")
    if len(raw) < 22:
        raise CubeFileError(f"{member.name} is truncated ({len(raw)} bytes)")
    endian = "<" if struct.unpack_from("<i", raw, 11)[0] == 1 else ">"
    (count,) = struct.unpack_from(f"{endian}i", raw, 18)
    if count <= 0 or len(raw) - 22 != 4 * count:
        raise CubeFileError(f"{member.name} announces {count} call paths but holds {(len(raw) - 22) // 4} "
                            "(truncated or corrupt)")
    return endian, np.frombuffer(raw, dtype=f"{endian}i4", offset=22, count=count)


def _cnode_ids(metric: Any, positions: np.ndarray) -> list[int]:
    """The cnode id of each call path a metric's index lists, in index order."""
    try:
        return [metric.tree_index_to_cid_map[t] for t in positions.tolist()]
    except KeyError as exc:
        raise CubeFileError(f"metric {metric.name}: index names tree position {exc} that the call tree "
                            "lacks") from None


def _read_zdata(handle: Any, size: int, endian: str, expected: int, limits: Limits) -> bytes:
    """ZCUBEX data: a count, (uncompressed position, compressed position, compressed size) per chunk,
    then the zlib chunks; inflated to at most ``expected`` bytes in all."""
    head = handle.read(8)
    if len(head) < 8:
        raise CubeFileError("compressed data ends inside its header (truncated)")
    (count,) = struct.unpack(f"{endian}q", head)
    if count < 0 or 24 * count > size - 8:
        raise CubeFileError(f"compressed data announces {count} chunks, more than it can hold (corrupt)")
    table = np.frombuffer(handle.read(24 * count), dtype=f"{endian}i8").reshape(count, 3)
    sizes = table[:, 2]
    if (sizes < 0).any() or int(sizes.sum()) > size - 8 - 24 * count:
        raise CubeFileError("compressed data announces chunks larger than the member (corrupt)")
    out = bytearray()
    for chunk in sizes.tolist():
        if chunk:
            out += inflate(handle.read, chunk, limits, budget=expected - len(out))
    return bytes(out)


class _Tree:
    """The call tree in preorder: parents, depths, each cnode's row and each row's path of names."""

    def __init__(self, roots: list[Any]) -> None:
        order, self.parents, self.depths = _preorder(roots)
        self.row_of = {cnode.id: row for row, cnode in enumerate(order)}
        self.paths: list[tuple[str, ...]] = []
        for row, cnode in enumerate(order):
            prefix = self.paths[self.parents[row]] if self.parents[row] >= 0 else ()
            self.paths.append((*prefix, cnode.region.name or f"region {cnode.callee_region_id}"))


class _Metrics:
    """What is decided per metric: its anchor information, whether it is decoded, skipped (and why)
    or without data, and the decoded matrices."""

    def __init__(self, wanted: Collection[str] | None, skipped: list[tuple[str, str]]) -> None:
        self.wanted = wanted
        self.skipped = skipped
        self.infos: dict[str, CubeMetricInfo] = {}
        self.values: dict[str, np.ndarray] = {}
        self.without: list[str] = []

    def accept(self, metric: Any, members: dict[str, Any]) -> str | None:
        """The value type if ``metric`` is to be decoded; None if it is not wanted, not scalar, not
        decodable or has no data (each recorded)."""
        from pycubexr.utils.metric_formats import METRIC_FORMATS

        if self.wanted is not None and metric.name not in self.wanted:
            return None
        dtype = (metric.data_type or "").split("(")[0].strip().upper()
        if dtype in _NOT_SCALAR:
            self.skipped.append((metric.name, f"values of type {metric.data_type} are not one number per location; "
                                              "pmkit models scalar metrics only"))
            return None
        self.infos[metric.name] = CubeMetricInfo(metric.name, metric.units or "", metric.description or "", dtype)
        if f"{metric.id}.index" not in members or f"{metric.id}.data" not in members:
            self.without.append(metric.name)
            return None
        if not isinstance(METRIC_FORMATS.get(dtype), type):
            self.skipped.append((metric.name, f"pycubexr cannot decode values of type {metric.data_type}"))
            del self.infos[metric.name]
            return None
        return dtype


def _parse_anchor(root: Any) -> Any:
    """pycubexr's reading of the anchor; a missing or malformed part is a CubeFileError in words."""
    from xml.etree import ElementTree

    from pycubexr.parsers.anchor_xml_parser import parse_anchor_xml

    try:
        return parse_anchor_xml(ElementTree.ElementTree(root))
    except RecursionError:
        raise
    except Exception:
        raise CubeFileError("anchor.xml does not describe one Cube experiment: an element or attribute Cube "
                            "writes is missing or malformed (metrics, regions, call tree or system tree)") from None


def _locations(anchor: Any) -> int:
    try:
        return len(anchor.system_tree_nodes[0].all_locations())
    except (IndexError, AttributeError):
        raise CubeFileError("anchor.xml has no system tree: the file names no location") from None


def _fix_checksum(buf: bytes) -> bytes:
    """A tar header block with its checksum field recomputed (CubeWriter 4.8 wrote wrong ones)."""
    if len(buf) != tarfile.BLOCKSIZE or not buf.strip(b"\0"):
        return buf
    computed = 256 + sum(buf[:148]) + sum(buf[156:])
    return buf[:148] + b"%06o\0 " % computed + buf[156:]


class _UncheckedTarInfo(tarfile.TarInfo):
    """Tar headers read without trusting their checksums (and without warnings, so threads are safe)."""

    @classmethod
    def frombuf(cls, buf, encoding, errors):  # type: ignore[override]
        return super().frombuf(_fix_checksum(buf), encoding, errors)

    @classmethod
    def _frombuf(cls, buf, encoding, errors, **kwargs):  # Python ≥ 3.13 calls this one
        return super()._frombuf(_fix_checksum(buf), encoding, errors, **kwargs)  # type: ignore[misc]


def _drop_derived_metrics(root: Any) -> list[tuple[str, str]]:
    """Remove metrics pycubexr cannot represent (derived ones) from the anchor; returns them."""
    skipped: list[tuple[str, str]] = []
    holders = [root.find("metrics")] if root.find("metrics") is not None else []
    while holders:
        holder = holders.pop()
        for metric in list(holder.findall("metric")):
            kind = metric.get("type", "")
            if kind not in _STORED_TYPES:
                names = [m.findtext("uniq_name") or "?" for m in metric.iter("metric")]
                for name in names:
                    skipped.append((name, f"derived metric (type {kind}): Cube computes it from a CubePL "
                                          "expression, which pmkit does not evaluate"))
                holder.remove(metric)
            else:
                holders.append(metric)
    return skipped


def _flatten(metrics: list[Any]) -> list[Any]:
    out: list[Any] = []
    for metric in metrics:
        out.extend(metric.get_all_children())
    return out


def _preorder(roots: list[Any]) -> tuple[list[Any], np.ndarray, np.ndarray]:
    order: list[Any] = []
    parents: list[int] = []
    depths: list[int] = []
    stack = [(root, -1, 0) for root in reversed(roots)]
    while stack:
        node, parent, depth = stack.pop()
        row = len(order)
        order.append(node)
        parents.append(parent)
        depths.append(depth)
        stack.extend((child, row, depth + 1) for child in reversed(node.get_children()))
    return order, np.asarray(parents, dtype=np.int64), np.asarray(depths, dtype=np.int64)


def _matrix(ids: list[int], flat: np.ndarray, n_loc: int, row_of: dict[int, int], n_rows: int,
            name: str) -> np.ndarray:
    """Values as a dense (call paths × locations) matrix; cnodes absent from the index are 0."""
    if flat.size != len(ids) * n_loc:
        raise CubeFileError(f"metric {name}: {flat.size} values for {len(ids)} call paths × {n_loc} locations "
                            "(truncated or corrupt data)")
    rows = np.fromiter((row_of[i] for i in ids), dtype=np.int64, count=len(ids))
    matrix = np.zeros((n_rows, n_loc), dtype=flat.dtype)
    matrix[rows] = flat.reshape(len(ids), n_loc)
    return matrix


def _scatter(ufunc: np.ufunc, target: np.ndarray, index: np.ndarray, source: np.ndarray) -> None:
    """``ufunc.at(target, index, source)`` for rows, via sort + reduceat (much faster than ``at``)."""
    if index.size == 0:
        return
    order = np.argsort(index, kind="stable")
    sorted_index = index[order]
    starts = np.flatnonzero(np.r_[True, sorted_index[1:] != sorted_index[:-1]])
    reduced = ufunc.reduceat(source[order], starts, axis=0)
    rows = sorted_index[starts]
    target[rows] = ufunc(target[rows], reduced)


def _convert(matrix: np.ndarray, stored: str, inclusive: bool, kind: str, unsigned: bool,
             parents: np.ndarray, depths: np.ndarray) -> np.ndarray:
    """Stored values → the requested view (inclusive or exclusive), level by level up the tree."""
    if (stored == "INCLUSIVE") == inclusive:
        return matrix
    child = np.nonzero(parents >= 0)[0]
    if kind != "sum":
        # Cube's rule (checked against cube_dump's incl.csv): the inclusive minimum/maximum is the
        # extreme over the subtree, zeros included.  A stored inclusive extreme has no exclusive
        # counterpart; it is kept as stored.
        if not inclusive:
            return matrix
        ufunc = np.minimum if kind == "min" else np.maximum
        result = matrix.copy()
        for depth in range(int(depths.max(initial=0)), 0, -1):
            rows = child[depths[child] == depth]
            _scatter(ufunc, result, parents[rows], result[rows])
        return result
    if inclusive:
        result = matrix.copy()
        for depth in range(int(depths.max(initial=0)), 0, -1):
            rows = child[depths[child] == depth]
            _scatter(np.add, result, parents[rows], result[rows])
        return result
    children_sum = np.zeros_like(matrix)
    _scatter(np.add, children_sum, parents[child], matrix[child])
    result = matrix - children_sum
    if unsigned:
        np.maximum(result, 0.0, out=result)
    return result


def _merge_duplicates(paths: list[tuple[str, ...]], values: dict[str, np.ndarray],
                      infos: dict[str, CubeMetricInfo]) -> tuple[list[tuple[str, ...]], dict[str, np.ndarray], int]:
    first: dict[tuple[str, ...], int] = {}
    target = np.empty(len(paths), dtype=np.int64)
    for row, p in enumerate(paths):
        target[row] = first.setdefault(p, len(first))
    if len(first) == len(paths):
        return paths, values, 0
    merged: dict[str, np.ndarray] = {}
    for name, matrix in values.items():
        dtype = infos[name].dtype
        if dtype in ("MINDOUBLE", "MAXDOUBLE"):
            fill = np.inf if dtype == "MINDOUBLE" else -np.inf
            out = np.full((len(first), matrix.shape[1]), fill)
            _scatter(np.minimum if dtype == "MINDOUBLE" else np.maximum, out, target, matrix)
        else:
            out = np.zeros((len(first), matrix.shape[1]))
            _scatter(np.add, out, target, matrix)
        merged[name] = out
    return list(first), merged, len(paths) - len(first)
