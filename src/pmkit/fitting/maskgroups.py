"""Group series by which points they have, so each group shares one design matrix.

A call path missing at some points (or a NaN value) changes the points its model is fitted to.
Rows with the same pattern of finite values are fitted together on the columns they have.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MaskGroup:
    """Rows of a (series × points) matrix that have finite values at exactly ``columns``."""

    columns: np.ndarray
    rows: np.ndarray


def group_by_mask(values: np.ndarray) -> list[MaskGroup]:
    """Partition the rows of ``values`` by their pattern of finite entries, largest group first."""
    values = np.asarray(values, dtype=float)
    n_rows, n_cols = values.shape
    finite = np.isfinite(values)
    if finite.all():
        return [MaskGroup(np.arange(n_cols), np.arange(n_rows))]
    if n_cols <= 62:
        keys = finite.astype(np.int64) @ (np.int64(1) << np.arange(n_cols, dtype=np.int64))
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    else:
        uniq, first, inverse = np.unique(finite, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    groups = [MaskGroup(np.flatnonzero(finite[first[g]]), order[bounds[g]:bounds[g + 1]])
              for g in range(len(uniq))]
    return sorted(groups, key=lambda g: -len(g.rows))
