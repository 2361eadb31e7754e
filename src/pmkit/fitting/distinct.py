"""The distinct values of an integer array, numbered as ``np.unique`` numbers them, by a table over their span
(and the distinct rows of integer or float arrays, :func:`distinct_rows`, :func:`distinct_float_rows`).

The searches group many rows by small integer codes (exponents, shape groups, mediants): a few hundred distinct
values among up to a million.  ``np.unique(..., return_index=True, return_inverse=True)`` sorts them; a table
as long as the values' span finds the same values, first rows and numbers 10–30 times faster (0.3 million
codes of 10 values: 36 ms against 1.5 ms), so where the span is small the table is used and elsewhere the sort.
"""

from __future__ import annotations

import numpy as np

TABLE_SPAN = 1 << 16
"""Values spanning up to this many integers (or four per value, if more) are numbered by a table."""


def distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(values, return_index=True, return_inverse=True)`` of a one-dimensional integer array: the
    distinct values in ascending order, the index of each one's first occurrence, and per entry the number of
    its value."""
    values = np.asarray(values).reshape(-1)
    if values.size == 0 or values.dtype.kind not in "iu":
        uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        return uniq, first, inverse.reshape(-1)
    low = int(values.min())
    span = int(values.max()) - low + 1
    if span > max(4 * values.size, TABLE_SPAN):
        uniq, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        return uniq, first, inverse.reshape(-1)
    code = values.astype(np.int64) - low
    present = np.zeros(span, dtype=bool)
    present[code] = True
    inverse = (np.cumsum(present) - 1)[code]
    uniq = (np.flatnonzero(present) + low).astype(values.dtype)
    first = np.full(len(uniq), values.size, dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(values.size, dtype=np.int64))
    return uniq, first, inverse


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True)`` of a two-dimensional array of non-negative integers
    (laws as indices into a table of shapes, one column per term): each row read as one number in base (the
    largest value + 1), so that the numbers order as the rows do, and numbered by :func:`distinct`, not by
    sorting rows (``all_points`` groups ~100,000 rows 92 times per two-parameter model set: 1.4 s of
    ``np.unique`` there)."""
    rows = np.asarray(rows)
    if rows.ndim != 2 or rows.size == 0 or rows.dtype.kind not in "iu" or rows.min() < 0:
        keys, inverse = np.unique(rows, axis=0, return_inverse=True)
        return keys, inverse.reshape(-1)
    base = int(rows.max()) + 1
    if base ** rows.shape[1] >= 1 << 62:
        keys, inverse = np.unique(rows, axis=0, return_inverse=True)
        return keys, inverse.reshape(-1)
    code = np.zeros(len(rows), dtype=np.int64)
    for column in rows.T:
        code = code * base + column.astype(np.int64)
    _, first, inverse = distinct(code)
    return rows[first], inverse


def distinct_float_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a float array (M × C) and, per row, the index of its own among them: ``found[inverse]``
    is ``rows`` to the last bit.  Rows are told apart by a hash of their bits (one sort of M integers, ~10 ms for
    140,000 rows, where ``np.unique(axis=0)`` sorts rows as void records, ~100 ms); where two different rows share a
    hash, ``np.unique(axis=0)`` decides."""
    bits = np.ascontiguousarray(rows).view(np.uint64)
    key = np.zeros(len(rows), dtype=np.uint64)
    for column in bits.T:
        key = _mixed(key ^ column)  # wraps around: a hash
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    found = rows[first]
    if not np.array_equal(found.view(np.uint64)[inverse], bits):
        found, inverse = np.unique(rows, axis=0, return_inverse=True)
    return found, inverse.reshape(-1)


def _mixed(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser of 64-bit words (every bit of a float's, high or low, moves every bit of the hash)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))
