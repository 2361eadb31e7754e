"""Prediction intervals: per series, the hypotheses the data cannot reject, each refitted, as one table.

A model's prediction is as sure as the data make it: on a narrow span several laws fit the
measurements within their noise and part company beyond them.  :class:`AlternativeTable` holds, for
every series of a model set, up to ``K`` such hypotheses — each a PMNF function (up to ``T`` terms
over ``P`` parameters, exponents as floats), its coefficients, their covariance and a weight — and
:meth:`AlternativeTable.predict` turns them into an interval at any point: the quantiles of the
mixture of the hypotheses' predictive distributions (Student t on the log of the value, or on the
value where a hypothesis predicts 0 or less), weighted by how well each fits.  The modelers fill the
table (:mod:`pmkit.fitting.alternatives`); the chosen model is always alternative 0.  Columnar on
purpose: evaluating every series at a target is a few array operations, and the table can sit beside
a columnar model set as extra rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pmkit.fitting.distinct import distinct_float_rows

DEFAULT_LEVEL = 0.9
"""The default level of prediction intervals."""
QUANTILE_PRECISION = 1e-5
"""Interval bounds are found to this relative precision (they are shown to two or three digits)."""
WIDE = 10.0
"""An interval whose high end is more than this many times its low end is flagged as wide."""


@dataclass(frozen=True)
class Interval:
    """A prediction with its interval at ``level``: ``low ≤ value ≤ high``; NaN bounds where unknown."""

    value: float
    low: float
    high: float
    level: float = DEFAULT_LEVEL

    def __iter__(self) -> Iterator[float]:
        """``value, low, high = model.predict(point)``."""
        return iter((self.value, self.low, self.high))

    @property
    def known(self) -> bool:
        return bool(np.isfinite(self.low) and np.isfinite(self.high))

    @property
    def ratio(self) -> float:
        """``high / low`` (inf when low ≤ 0 < high, NaN when unknown, 1 when low = high)."""
        return interval_ratio(np.array([self.low]), np.array([self.high]))[0]

    @property
    def wide(self) -> bool:
        """Whether the interval spans more than :data:`WIDE` times (the data cannot tell the laws apart)."""
        return bool(self.ratio > WIDE)

    def to_json(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high, "level": self.level}


def term_values(coords: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Each term's value (without its coefficient) at one point ``coords`` (P): terms' exponents ``alpha`` and log
    exponents ``beta`` (…, P), a factor ``x^α·log2(x)^β`` per parameter (1 where both are 0)."""
    with np.errstate(all="ignore"):
        logs = np.log2(np.where(coords > 0, coords, 1.0))
        power = np.where(alpha == 0, 1.0, np.power(coords, alpha))
        log_part = np.where(beta == 0, 1.0, np.power(np.maximum(logs, 0.0), beta))
        return (power * log_part).prod(axis=-1)


def interval_ratio(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``high / low`` elementwise: inf where the interval reaches 0 or below, NaN where unknown, 1 where it is a
    single value (an exact law's interval, ``[0, 0]`` for a metric that is 0 everywhere, spans nothing)."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    with np.errstate(all="ignore"):
        ratio = np.where(low > 0, high / np.where(low > 0, low, 1.0), np.inf)
    ratio = np.where(low == high, 1.0, ratio)
    return np.where(np.isfinite(low) & np.isfinite(high), ratio, np.nan)


@dataclass
class AlternativeTable:
    """Per series (rows), up to ``K`` alternative hypotheses; see the module docstring.

    ``alpha``, ``beta``: (S, K, T, P) exponents of each term's factor per parameter (0 where a term
    does not use the parameter); ``coef``: (S, K, 1 + T) the constant, then the terms' coefficients
    (0 for absent terms); ``cov``: (S, K, 1 + T, 1 + T) their covariance; ``df``: (S, K) degrees of
    freedom of the noise estimate behind it; ``weight``: (S, K), each row summing to 1 (all 0: no
    interval for that series).
    """

    parameters: tuple[str, ...]
    alpha: np.ndarray
    beta: np.ndarray
    coef: np.ndarray
    cov: np.ndarray
    df: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return len(self.weight)

    @classmethod
    def empty(cls, parameters: Sequence[str], count: int, k: int = 1, t: int = 1) -> AlternativeTable:
        """``count`` rows of room for ``k`` alternatives of ``t`` terms, none filled: every weight 0, no interval
        until :meth:`put` fills a row."""
        p = len(parameters)
        return cls(tuple(parameters), np.zeros((count, k, t, p)), np.zeros((count, k, t, p)),
                   np.zeros((count, k, 1 + t)), np.zeros((count, k, 1 + t, 1 + t)), np.ones((count, k)),
                   np.zeros((count, k)))

    def rows(self, index: np.ndarray | slice) -> AlternativeTable:
        """The table of the series ``index``."""
        return AlternativeTable(self.parameters, self.alpha[index], self.beta[index], self.coef[index],
                                self.cov[index], self.df[index], self.weight[index])

    def put(self, rows: np.ndarray, other: AlternativeTable) -> None:
        """Copy ``other`` (one row per entry of ``rows``, no more alternatives or terms than this table) into
        rows ``rows``, which are still as :meth:`empty` left them: the places ``other`` does not fill are not
        cleared (every caller fills a fresh table, each row once; the multi-parameter builds put ~4,400 groups
        into one: clearing was 1.2 s of ``pmkit show --json`` on 100,000 two-parameter series, cProfile)."""
        k, t = other.weight.shape[1], other.coef.shape[2] - 1
        self.alpha[rows, :k, :t] = other.alpha
        self.beta[rows, :k, :t] = other.beta
        self.coef[rows, :k, : t + 1] = other.coef
        self.cov[rows, :k, : t + 1, : t + 1] = other.cov
        self.df[rows, :k] = other.df
        self.weight[rows, :k] = other.weight

    def basis(self, point: Mapping[str, float] | Sequence[float]) -> np.ndarray:
        """(S, K, 1 + T): 1, then each term's value (without its coefficient) at one point."""
        coords = np.array([float(point[p]) for p in self.parameters] if isinstance(point, Mapping)
                          else [float(v) for v in point])
        if coords.size != len(self.parameters):
            raise ValueError(f"a point needs {len(self.parameters)} coordinates {list(self.parameters)}, "
                             f"got {coords.size}")
        terms = term_values(coords, self.alpha, self.beta)
        ones = np.ones((*terms.shape[:2], 1))
        return np.concatenate([ones, terms], axis=2)

    def bases(self, points: np.ndarray) -> np.ndarray:
        """(S, K, N, 1 + T): :meth:`basis` at each of ``points`` (N × P), the same values to the last bit as
        stacking them on axis 2 (and C-ordered as that stack: ``np.einsum`` sums as its operands lie), each
        distinct term's values and each distinct alternative's design made once: the alternatives are a few
        hundred exponent sets repeated over thousands of series, made of fewer distinct terms.  ``pmkit model
        FILE --json -O hedge=true`` on 20,000 narrow two-parameter series (``bench/interval_speed.py --hedge``)
        made ~100,000 :meth:`basis` calls, 6.0 of its 18.5 s (cProfile); with this and the batched quality
        (:func:`pmkit.modelers.multiparam._law_qualities`), 3572526 → this, three alternated runs, CPU s: that
        command 12.5–13.2 → 6.5–7.9, ``show --json -O hedge=true`` 15.9–17.7 → 10.4–11.1, both documents
        byte-identical (``bench/README.md`` §15, "The hedge, faster")."""
        points = np.asarray(points, dtype=float)
        s, k, t, p = self.alpha.shape
        if points.ndim != 2 or points.shape[1] != p:
            raise ValueError(f"points need {p} coordinates {list(self.parameters)}, got shape {points.shape}")
        exponents = np.concatenate([self.alpha, self.beta], axis=3).reshape(s * k, t * 2 * p)
        alternatives, inverse = distinct_float_rows(exponents)  # each distinct alternative's terms
        terms, term_inverse = distinct_float_rows(alternatives.reshape(-1, 2 * p))  # each distinct term
        alpha, beta = np.ascontiguousarray(terms[:, :p]), np.ascontiguousarray(terms[:, p:])
        values = np.stack([term_values(coords, alpha, beta) for coords in points], axis=1)  # terms × points
        designs = np.ones((len(alternatives), len(points), 1 + t))
        designs[:, :, 1:] = values[term_inverse.reshape(len(alternatives), t)].transpose(0, 2, 1)
        return designs[inverse].reshape(s, k, len(points), 1 + t)

    def predict(self, point: Mapping[str, float] | Sequence[float], level: float = DEFAULT_LEVEL
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per series: the chosen hypothesis's prediction at ``point`` and the ``level`` interval around it.

        The interval is the central ``level`` quantile range of the weighted mixture of the
        hypotheses' predictive distributions, widened where needed to contain the prediction; NaN
        where a series has no alternatives.
        """
        if not 0 < level < 1:
            raise ValueError(f"an interval's level must lie between 0 and 1, got {level}")
        b = self.basis(point)
        with np.errstate(all="ignore"):
            mean = np.einsum("skt,skt->sk", self.coef, b)
            var = np.einsum("skt,sktu,sku->sk", b, self.cov, b)
        value = mean[:, 0]
        sd = np.sqrt(np.maximum(var, 0.0))
        active = (self.weight > 0) & np.isfinite(mean) & np.isfinite(sd)
        weight = np.where(active, self.weight, 0.0)
        total = weight.sum(axis=1)
        has = total > 0
        weight = weight / np.where(has, total, 1.0)[:, None]
        tail = (1 - level) / 2
        components = _Components(mean, sd, self.df)
        low = _mixture_quantile(components, weight, tail)
        high = _mixture_quantile(components, weight, 1 - tail)
        low = np.where(has, np.fmin(low, value), np.nan)
        high = np.where(has, np.fmax(high, value), np.nan)
        return value, low, high


class _Components:
    """Each hypothesis's predictive distribution at one point: Student t on log(value) where its mean is
    positive (relative noise), on the value where it is not; what the mixture's quantiles need, computed
    once for both bounds."""

    def __init__(self, mean: np.ndarray, sd: np.ndarray, df: np.ndarray) -> None:
        with np.errstate(all="ignore"):
            self.positive = mean > 0
            rel = sd / np.where(self.positive, mean, 1.0)
            log_sd = np.sqrt(np.log1p(rel * rel))
            self.center = np.where(self.positive, np.log(np.where(self.positive, mean, 1.0)), mean)
            self.spread = np.where(self.positive, log_sd, sd)
        self.df = np.maximum(df, 1.0)

    def quantile(self, p: float) -> np.ndarray:
        """Each hypothesis's own ``p`` quantile (a mixture's ``p`` quantile lies between the smallest and the
        largest of them)."""
        with np.errstate(all="ignore"):
            at = self.center + student_quantile(self.df, p) * self.spread
            return np.where(self.positive, np.exp(at), at)


DISTINCT_DF = 1_000
""":func:`student_quantile` looks ``stdtrit`` up in a table where the degrees of freedom are whole numbers that span
no more than this many."""


def student_quantile(df: np.ndarray, p: float) -> np.ndarray:
    """``scipy.special.stdtrit(df, p)``, the same values, computed once per distinct ``df`` where the degrees
    of freedom are a few whole numbers (the alternatives' are the points less the coefficients, or the
    repetitions', 1–20 or so): ``stdtrit`` costs ~0.3 µs an element, 0.3 s per bound for every series of
    ``bench/end_to_end.py``'s 100,000 (12 alternatives each), against a few ms for a look-up table."""
    from scipy.special import stdtrit

    df = np.asarray(df, dtype=float)
    if df.size == 0:
        return stdtrit(df, p)
    low, high = float(df.min()), float(df.max())
    if not (np.isfinite(low) and np.isfinite(high) and high - low <= DISTINCT_DF):
        return stdtrit(df, p)
    whole = df.astype(np.int64)
    if not (whole == df).all():
        return stdtrit(df, p)
    table = stdtrit(np.arange(low, high + 1), p)
    return table[whole - int(low)]


def _mixture_quantile(components: _Components, weight: np.ndarray, p: float, iterations: int = 30) -> np.ndarray:
    """Per row, the ``p`` quantile of the mixture ``Σ_k weight·F_k`` (vectorised over rows; components of
    weight 0 take no part).

    The quantile lies between the components' own ``p`` quantiles; the Illinois method (regula falsi
    that halves the stale end's value) closes that bracket in a few evaluations of the mixture's
    distribution function, the costly part, where bisection needs some twenty.
    """
    count = len(weight)
    if count == 0:
        return np.zeros(0)
    own = components.quantile(p)
    with np.errstate(all="ignore"):
        lo = np.where(weight > 0, own, np.inf).min(axis=1)
        hi = np.where(weight > 0, own, -np.inf).max(axis=1)
    ok = np.isfinite(lo) & np.isfinite(hi)
    lo, hi = np.where(ok, lo, 0.0), np.where(ok, hi, 0.0)

    from pmkit.fitting.kernels import mixture_terms

    def excess(q: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        rows = np.arange(count) if rows is None else rows
        return mixture_terms(weight, components.positive, components.center, components.spread, components.df,
                             rows, q).sum(axis=1) - p

    f_lo, f_hi = np.minimum(excess(lo), 0.0), np.maximum(excess(hi), 0.0)
    last = np.zeros(count, dtype=np.int8)
    done = np.zeros(count, dtype=bool)
    for _ in range(iterations):
        done |= (hi - lo <= QUANTILE_PRECISION * np.maximum(np.abs(hi), np.abs(lo))) | (f_hi - f_lo <= 0)
        active = np.flatnonzero(~done)
        if active.size == 0:
            break
        with np.errstate(all="ignore"):
            mid = np.where(f_hi > f_lo, (lo * f_hi - hi * f_lo) / (f_hi - f_lo), (lo + hi) / 2)
        mid = np.clip(np.where(np.isfinite(mid), mid, (lo + hi) / 2), lo, hi)
        f_mid = np.zeros(count)
        f_mid[active] = excess(mid[active], active)
        left = (f_mid < 0) & ~done
        right = (f_mid >= 0) & ~done
        # the end that stays put twice in a row has its value halved, so the next step moves past it
        f_hi = np.where(left & (last == -1), f_hi / 2, f_hi)
        f_lo = np.where(right & (last == 1), f_lo / 2, f_lo)
        lo, f_lo = np.where(left, mid, lo), np.where(left, f_mid, f_lo)
        hi, f_hi = np.where(right, mid, hi), np.where(right, f_mid, f_hi)
        last = np.where(left, -1, np.where(right, 1, last)).astype(np.int8)
    with np.errstate(all="ignore"):
        found = np.where(f_hi > f_lo, (lo * f_hi - hi * f_lo) / (f_hi - f_lo), (lo + hi) / 2)
    return np.where(ok, np.clip(found, np.minimum(lo, hi), np.maximum(lo, hi)), np.nan)


STREAM_ROWS = 4_000
"""Rows per step where every series' interval at a point is wanted once and the alternatives are not kept
(:meth:`Uncertainty.predict` with ``keep=False``, ``pmkit show --json``): the alternatives of that many series
(whole blocks, so each refit is the one a single build does) are built, predicted and dropped, and rows
already built are predicted that many at a time.  Chosen by measurement: ``pmkit show FILE --json`` on
``bench/end_to_end.py``'s 100,000 two-parameter series (groups of up to 1,536 series), peak resident MB (CPU s,
best of 3, a machine at load 3): 500 rows 981, 1,000 981 (45.7 s), 4,000 981 (45.0 s), 16,000 1,037–1,051
(42.7 s) — below 4,000 the peak is the modeling's, above it the chunk's table shows; the CPU seconds differ by
no more than the runs do.  Every series' table at once (before): 2,870 MB (48.0 s).  ``bench/README.md`` §15,
"Every interval without the whole table"."""


class Uncertainty:
    """The alternatives of a model set's ``count`` series, built on first use and only for the series asked
    for (modeling stays as fast as before; a view that shows 20 of 100,000 call paths pays for 20).

    ``build(wanted)`` returns the table of the series of the boolean mask ``wanted``, one row per series in
    order (the modelers' closures over their fits).  ``blocks`` (one label per series, or None: one block)
    says which series a build refits together: a series' alternatives are the same to the last bit whenever
    the same series of its block are built with it (the refits run on the block's rows at once, and the
    floating-point path of a batched solve depends on its rows), so :meth:`predict` without keeping builds
    whole blocks at a time.  The built rows are kept in one table of theirs alone, in series order (a view
    that asked for 20 rows holds 20, not a table of every series).  ``whole`` (True, or a mask of the series
    it holds for): a few rows asked for are built with the rest of their blocks (and those kept too), so every
    row is the one a build of every series gives (the ``hedge`` option chose among those: without, ``pmkit
    show FILE --json -O hedge=true`` on 20,000 two-parameter series moved the last bits of the two bounds it
    asks for row by row)."""

    def __init__(self, build: Callable[[np.ndarray], AlternativeTable], count: int,
                 blocks: np.ndarray | None = None, whole: bool | np.ndarray = False) -> None:
        self._builder = build
        self._blocks = blocks
        self._whole = whole
        self._kept: AlternativeTable | None = None
        self.built = np.zeros(count, dtype=bool)
        """Which series' alternatives are built so far."""

    def chunks(self, rows: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, AlternativeTable]]:
        """The alternatives of the series ``rows`` (sorted; all by default) built :data:`STREAM_ROWS` series (whole
        blocks) at a time and not kept: per chunk its series (sorted) and their table, one row each in order.
        Each row is the one a build of every series gives, and the memory a chunk's (the ``hedge`` option
        chooses among them chunk by chunk: ``pmkit.modelers.multiparam._hedged``)."""
        count = len(self.built)
        for chunk in _whole_blocks(np.arange(count) if rows is None else rows, self._blocks, STREAM_ROWS):
            wanted = np.zeros(count, dtype=bool)
            wanted[chunk] = True
            yield chunk, self._build(wanted)

    def _build(self, wanted: np.ndarray) -> AlternativeTable:
        """The modeler's table of the series ``wanted``, built on one OpenBLAS thread (its many small products
        leave a second thread spinning, CPU time spent on nothing: :mod:`pmkit.fitting.blasthreads`)."""
        from pmkit.fitting.blasthreads import one_blas_thread

        with one_blas_thread():
            return self._builder(wanted)

    def _add(self, missing: np.ndarray) -> None:
        """Build the series of the mask ``missing`` and keep their rows (in the first table's shape)."""
        found = self._build(missing)
        if self._kept is not None:
            every = self.built | missing
            merged = self._empty(int(every.sum()))
            place = np.cumsum(every) - 1
            merged.put(place[self.built], self._kept)
            merged.put(place[missing], found)
            found = merged
        self._kept = found
        self.built |= missing

    def _empty(self, count: int) -> AlternativeTable:
        """``count`` rows without alternatives, shaped as the table kept."""
        kept = self._kept
        assert kept is not None
        return AlternativeTable.empty(kept.parameters, count, kept.weight.shape[1], kept.coef.shape[2] - 1)

    def _rows(self, rows: np.ndarray) -> AlternativeTable:
        """The table of the series ``rows`` from the rows kept (those not built: no alternatives)."""
        kept = self._kept
        assert kept is not None
        built = self.built[rows]
        place = (np.cumsum(self.built) - 1)[rows]
        if built.all():
            if place.size and (np.diff(place) == 1).all():  # a run of its rows, in order: no copy
                return kept if place.size == len(kept) else kept.rows(slice(int(place[0]), int(place[-1]) + 1))
            return kept.rows(place)
        out = self._empty(rows.size)
        out.put(np.flatnonzero(built), kept.rows(place[built]))
        return out

    def _ensure(self, wanted: np.ndarray) -> None:
        missing = wanted & ~self.built
        spread = missing & self._whole  # the rows whose whole blocks are built with them
        if spread.any():
            missing = (np.ones_like(missing) if self._blocks is None
                       else missing | np.isin(self._blocks, np.unique(self._blocks[spread]))) & ~self.built
        if missing.any() or self._kept is None:
            self._add(missing)

    def table(self, rows: np.ndarray | slice | None = None) -> AlternativeTable:
        """The table of every series, its rows ``rows`` (or all) built."""
        wanted = np.zeros_like(self.built)
        wanted[slice(None) if rows is None else rows] = True
        self._ensure(wanted)
        return self._rows(np.arange(len(self.built)))

    def predict(self, point: Mapping[str, float] | Sequence[float], level: float = DEFAULT_LEVEL,
                rows: np.ndarray | None = None, keep: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every series' (or the series ``rows``') prediction at ``point`` with its ``level`` interval (see
        :meth:`AlternativeTable.predict`), :data:`STREAM_ROWS` rows at a time (each row's bounds depend on its
        row alone).  ``keep=False``: the alternatives of series not yet built are built :data:`STREAM_ROWS`
        series (whole blocks) at a time, predicted and dropped — each series' bounds are those of ``keep=True``,
        and the memory a chunk's, not every series' table (a second point builds them again)."""
        count = len(self.built)
        index = np.arange(count) if rows is None else np.asarray(rows, dtype=np.int64)
        if keep:
            wanted = np.zeros(count, dtype=bool)
            wanted[index] = True
            self._ensure(wanted)
        value, low, high = np.full(index.size, np.nan), np.full(index.size, np.nan), np.full(index.size, np.nan)
        built = self.built[index]
        done = np.flatnonzero(built)
        for start in range(0, done.size, STREAM_ROWS):
            at = done[start:start + STREAM_ROWS]
            value[at], low[at], high[at] = self._rows(index[at]).predict(point, level)
        missing = np.unique(index[~built])
        found = np.full((3, missing.size), np.nan)
        for chunk, table in self.chunks(missing):  # the table's rows: the chunk's series, in order
            found[:, np.searchsorted(missing, chunk)] = table.predict(point, level)
        at = np.flatnonzero(~built)
        value[at], low[at], high[at] = found[:, np.searchsorted(missing, index[at])]
        return value, low, high

    def interval(self, row: int, point: Mapping[str, float] | Sequence[float],
                 level: float = DEFAULT_LEVEL) -> Interval:
        value, low, high = self.predict(point, level, np.array([row]))
        return Interval(float(value[0]), float(low[0]), float(high[0]), level)


def _whole_blocks(rows: np.ndarray, blocks: np.ndarray | None, size: int) -> Iterator[np.ndarray]:
    """``rows`` (sorted series) in chunks of whole blocks (``blocks``: one label per series; None: one block),
    each of at least ``size`` series but the last, each sorted."""
    if rows.size == 0:
        return
    if blocks is None:
        yield rows
        return
    label = blocks[rows]
    order = np.argsort(label, kind="stable")
    label = label[order]
    ends = np.append(np.flatnonzero(label[1:] != label[:-1]) + 1, rows.size)  # each block's end
    start = 0
    while start < rows.size:
        stop = int(ends[np.searchsorted(ends, start + size, side="left")]) if start + size < rows.size else rows.size
        yield np.sort(rows[order[start:stop]])
        start = stop
