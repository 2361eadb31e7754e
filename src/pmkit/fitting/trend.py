"""The Mann–Kendall trend test: is a series monotone in its parameter beyond what noise explains?

Every simplified-PMNF law ``c0 + c1·x^α·log2^β(x)`` is monotone in ``x ≥ 0``, so data that a
growth law explains must rise (or fall) with ``x``; noise around a constant orders its values at
random.  Kendall's ``S = Σ_{i<j} sign((x_j - x_i)(y_j - y_i))`` counts concordant minus discordant
pairs; without a trend every ordering is equally likely, so its exact distribution is that of
``N - 2·inversions`` over the permutations of ``n`` values (``N = n(n-1)/2``).  The refining search
uses the two-sided p-value as a second non-constancy condition (see :mod:`pmkit.fitting.refinement`).
"""

from __future__ import annotations

from functools import lru_cache
from math import erfc, sqrt

import numpy as np

EXACT_UP_TO = 40
"""Exact p-values up to this many points; the normal approximation (continuity-corrected) above."""


def kendall_s(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Kendall's ``S`` of every row of ``Y`` (series × points) against the points ``x``."""
    x = np.asarray(x, dtype=float)
    Y = np.asarray(Y, dtype=float)
    i, j = np.triu_indices(x.size, k=1)
    return (np.sign(x[j] - x[i])[None, :] * np.sign(Y[:, j] - Y[:, i])).sum(axis=1)


@lru_cache(maxsize=64)
def _tail_counts(n: int) -> tuple[float, ...]:
    """``P(inversions ≤ q)`` for a random permutation of ``n`` values, for q = 0..N."""
    counts = [1]
    for m in range(2, n + 1):
        # inserting the m-th value adds 0..m-1 inversions
        new = [0] * (len(counts) + m - 1)
        for q, c in enumerate(counts):
            for extra in range(m):
                new[q + extra] += c
        counts = new
    total = sum(counts)
    cumulative, running = [], 0
    for c in counts:
        running += c
        cumulative.append(running / total)
    return tuple(cumulative)


def trend_pvalue(s: np.ndarray, n: int) -> np.ndarray:
    """Two-sided p-value of ``|S| ≥ |s|`` for series of ``n`` points with no trend (no ties)."""
    s = np.abs(np.asarray(s, dtype=float))
    pairs = n * (n - 1) // 2
    if n < 2:
        return np.ones_like(s)
    if n <= EXACT_UP_TO:
        cumulative = np.array(_tail_counts(n))
        inversions = np.floor((pairs - s) / 2).astype(np.int64)
        return np.minimum(1.0, 2.0 * cumulative[np.clip(inversions, 0, pairs)])
    sd = sqrt(n * (n - 1) * (2 * n + 5) / 18.0)
    z = np.maximum(s - 1.0, 0.0) / sd
    return np.array([erfc(v / sqrt(2.0)) for v in np.atleast_1d(z)]).reshape(s.shape)


def smallest_pvalue(n: int) -> float:
    """The p-value of a strictly monotone series of ``n`` points: the test cannot reject below it."""
    return float(trend_pvalue(np.array([n * (n - 1) / 2]), n)[0])
