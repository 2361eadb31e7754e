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

import gzip
import tarfile
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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
    call path (a tuple of region names from the root) per location.
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


def load_profile(path: str | Path, metrics: Collection[str] | None = None, inclusive: bool = False) -> Profile:
    """Decode ``path``; ``metrics`` limits which metrics are decoded (None: all).

    Raises :class:`CubeFileError` when the file cannot be used at all.
    """
    path = Path(path)
    try:
        return _load(path, metrics, inclusive)
    except CubeFileError:
        raise
    except Exception as exc:  # any parse failure of a damaged file: report it, do not crash the study
        raise CubeFileError(_describe(exc)) from exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    kind = type(exc).__name__
    if isinstance(exc, (EOFError, tarfile.ReadError)) or "truncated" in text.lower():
        return f"truncated or not a tar archive ({kind}: {text or 'unexpected end of data'})"
    return f"{kind}: {text}" if text else kind


def _load(path: Path, wanted: Collection[str] | None, inclusive: bool) -> Profile:
    from xml.etree import ElementTree

    from pycubexr.parsers.anchor_xml_parser import parse_anchor_xml
    from pycubexr.utils.metric_formats import METRIC_FORMATS

    notes: list[str] = []
    warns: list[str] = []
    try:
        tar = tarfile.open(path)
    except tarfile.ReadError:
        try:
            tar = tarfile.open(path, tarinfo=_UncheckedTarInfo)
            tar.getmembers()
        except tarfile.ReadError as exc:
            raise CubeFileError(f"not a Cube file: the tar archive cannot be read ({exc})") from None
        warns.append("tar header checksums are wrong (a known bug of CubeWriter 4.8); read without checking them")
    with tar:
        members = {m.name for m in tar.getmembers()}
        if "anchor.xml" not in members:
            raise CubeFileError("not a Cube file: it has no anchor.xml member")
        with tar.extractfile("anchor.xml") as handle:  # type: ignore[union-attr]
            raw = handle.read()
        if not raw.startswith(b"<?xml"):
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError) as exc:
                raise CubeFileError(f"anchor.xml is neither XML nor gzip-compressed XML ({exc})") from None
        try:
            root = ElementTree.fromstring(raw)
        except ElementTree.ParseError as exc:
            raise CubeFileError(f"anchor.xml is not well-formed XML ({exc})") from None
        skipped = _drop_derived_metrics(root)
        available = [m.findtext("uniq_name") or "" for m in root.iter("metric")] + [name for name, _ in skipped]
        anchor = parse_anchor_xml(ElementTree.ElementTree(root))

        order, parents, depths = _preorder(anchor.cnodes)
        row_of = {cnode.id: row for row, cnode in enumerate(order)}
        paths: list[tuple[str, ...]] = []
        for row, cnode in enumerate(order):
            prefix = paths[parents[row]] if parents[row] >= 0 else ()
            paths.append((*prefix, cnode.region.name or f"region {cnode.callee_region_id}"))
        n_loc = len(anchor.system_tree_nodes[0].all_locations())

        infos: dict[str, CubeMetricInfo] = {}
        values: dict[str, np.ndarray] = {}
        without: list[str] = []
        for metric in _flatten(anchor.metrics):
            if wanted is not None and metric.name not in wanted:
                continue
            dtype = (metric.data_type or "").split("(")[0].strip().upper()
            infos[metric.name] = CubeMetricInfo(metric.name, metric.units or "", metric.description or "", dtype)
            if dtype in _NOT_SCALAR:
                skipped.append((metric.name, f"values of type {metric.data_type} are not one number per "
                                             "location; pmkit models scalar metrics only"))
                del infos[metric.name]
                continue
            index_name, data_name = f"{metric.id}.index", f"{metric.id}.data"
            if index_name not in members or data_name not in members:
                without.append(metric.name)
                continue
            if not isinstance(METRIC_FORMATS.get(dtype), type):
                skipped.append((metric.name, f"pycubexr cannot decode values of type {metric.data_type}"))
                del infos[metric.name]
                continue
            with tar.extractfile(index_name) as index_file, tar.extractfile(data_name) as data_file:  # type: ignore[union-attr]
                ids, flat = _decode(metric, dtype, METRIC_FORMATS[dtype], index_file, data_file)
            matrix = _matrix(ids, flat, n_loc, row_of, len(order), metric.name)
            kind = "min" if dtype == "MINDOUBLE" else "max" if dtype == "MAXDOUBLE" else "sum"
            unsigned = dtype.startswith("UINT") or dtype.startswith("UNSIGNED")
            matrix = _convert(matrix, metric.metric_type, inclusive, kind, unsigned, parents, depths)
            # complex values are converted as complex numbers, then taken as magnitudes (as pycubexr does)
            values[metric.name] = np.abs(matrix) if np.iscomplexobj(matrix) else matrix

    paths, values, merged = _merge_duplicates(paths, values, infos)
    if merged:
        notes.append(f"{merged} call paths occur more than once under the same parent (e.g. several call "
                     "sites); their values were combined")
    for name in without:
        infos.pop(name, None)
    if wanted is not None:
        skipped = [(name, reason) for name, reason in skipped if name in wanted]
    return Profile(str(path), paths, n_loc, infos, values, available, without, skipped, warns, notes)


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


def _decode(metric: Any, dtype: str, numpy_type: type, index_file: Any, data_file: Any) -> tuple[list[int], np.ndarray]:
    """A metric's cnode ids (in index order) and flat values, as pycubexr decodes them but vectorised."""
    from pycubexr.classes.values import MAX_UINT64_DOUBLE
    from pycubexr.parsers.data_parser import DATA_HEADER, ZDATA_HEADER, decompress_data
    from pycubexr.parsers.index_parser import parse_index

    index = parse_index(index_file)
    header = data_file.read(len(DATA_HEADER))
    if header == DATA_HEADER:
        raw = data_file.read()
    elif header + data_file.read(len(ZDATA_HEADER) - len(DATA_HEADER)) == ZDATA_HEADER:
        raw = decompress_data(data_file, index.endianness_format)
    else:
        raise CubeFileError(f"metric {metric.name}: {metric.id}.data does not start with a Cube data header")
    item = np.dtype(numpy_type).newbyteorder(index.endianness_format)
    if len(raw) % item.itemsize:
        raise CubeFileError(f"metric {metric.name}: {metric.id}.data holds {len(raw)} bytes, not a whole number of "
                            f"{dtype} values (truncated or corrupt)")
    flat = np.frombuffer(raw, dtype=item)
    if dtype in ("UINT64", "UNSIGNED INTEGER"):
        # like CubeLib (and pycubexr): values beyond what a double holds exactly read as 0
        flat = np.where(flat > MAX_UINT64_DOUBLE, 0, flat)
    try:
        ids = [metric.tree_index_to_cid_map[t] for t in index.tree_indices]
    except KeyError as exc:
        raise CubeFileError(f"metric {metric.name}: index names tree position {exc} that the call tree lacks") from None
    values = flat.astype(np.complex128 if np.iscomplexobj(flat) else np.float64)
    return ids, values


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
