"""The refinement search of paper 000 (§3.3), widened, noise-aware and two-way, run for many series at once.

For series sharing their points ``x`` (a matrix ``Y``: series × points, all finite), find per
series the simplified PMNF ``c0 + c1·x^α·log2^β(x)`` on the paper's four slices (β = 0, 1, 2 with
0 < α < 6; α = 0 with 0 < β < 3) and a fifth, falling one (β = 0, −4 < α < 0, ``c1 > 0``), or a
two-term falling + growing law ``c0 + c1·x^(-γ) + c2·x^α·log2^β(x)`` (both coefficients positive:
a law with a turning point, the shape of a scaling limit):

1. start table: on each slice every exponent with denominator up to ``table_denominator`` (5: the
   integers, halves, thirds, quarters and fifths — a superset of Extra-P's ``Basic`` search space
   and of the paper's integer start); shared by every series, so one kernel call covers them all;
   the falling slice is searched by the magnitude γ = −α (the same fractions, the same simplicity),
   for the series whose values fall (see :func:`falling_rows`);
2. refinement: per slice, the Stern–Brocot mediants between its most accurate exponent and that
   exponent's neighbours (bounds) in the table, then between the best and the new bounds (paper
   Fig. 2), until in one iteration no slice gets ``termination`` times more accurate (the paper's
   termination rule); every mediant visited is a candidate for acceptance (below);
3. two-term laws, from :data:`PAIR_MIN_POINTS` points on: a fixed table of falling × growing
   terms (:data:`PAIR_FALLING`, :data:`PAIR_GROWING`), compared with the accepted one-term
   hypothesis by the same penalised error (see :func:`_two_term_laws`);
4. non-constancy: the accepted hypothesis replaces the constant model only if it is
   ``nonconstancy`` times more accurate (SMAPE) and the values show a monotone trend (see
   :func:`_final_fit`); where it fails, the other slices' best laws are tried (see
   :func:`_other_slices`);
5. from 6 points on, one point that no law fits together with the others is left out (see
   :func:`_leave_out_outlier`).

Hypotheses are fitted by relative least squares (weights ``1/y²``: run-to-run noise is a share of
the value) and compared by their RMS relative error times ``acceptance`` to the power of their
*level*: denominator of α minus 1, plus that of β, plus ``mixed_level`` for a product
``x^α·log2^β(x)`` with α, β > 0 (a two-term law: the levels of both terms plus ``pair_level``).
So an exponent one denominator finer, or a log factor on a power, must be ``acceptance`` (1.5)
times more accurate to be chosen — the paper's acceptance threshold, applied to exponent simplicity
instead of to iterations.  The choices and their figures are in :mod:`pmkit.modelers.refining`.
The accepted hypothesis is refitted by ordinary least squares (RSS, as the paper fits) for its
coefficients; falling laws keep their relative least-squares coefficients (they are extrapolated to
their small values).  Mediants differ between series after the start, so each iteration fits the distinct
candidates (few) with one gathered call.

To search a subset of the points (a segment, a cross-validation fold), call :func:`refine_series`
on those columns: ``refine_series(x[keep], Y[:, keep], settings)``; the result describes each
series' law in :class:`SingleFits` arrays (:func:`pmkit.modelers.single.single_function` turns a
row into a :class:`~pmkit.pmnf.Function`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

import numpy as np

from pmkit.fitting.distinct import distinct
from pmkit.fitting.kernels import (
    SLICES,
    fit_table,
    numba_enabled,
    pair_search,
    refine_step,
    relative_search,
    relative_weights,
)
from pmkit.fitting.leastsquares import (
    BasisStats,
    adjusted_r2,
    basis_stats,
    constant_loo_predictions,
    relative_line_fits,
    rowwise,
    smape,
)
from pmkit.fitting.trend import kendall_s, smallest_pvalue, trend_pvalue

MAX_ALPHA = 6
"""Exponents α stay below this (paper: α < 6)."""
MAX_BETA = 3
"""Exponents β stay below this (paper: β < 3)."""
MAX_FALL = 4
"""Falling exponents α stay above minus this (−3 is the steepest simple one: 1/p³)."""
FALLING_SLICE = 4
"""The slice of falling laws ``x^(-γ)``: its fractions are the magnitudes γ."""
PAIR_MIN_POINTS = 6
"""Two-term laws (three coefficients) are searched from this many points on: like the one-term laws' five
(two coefficients, three points to judge them by), they need three points beyond their coefficients."""
PAIR_FALLING = tuple(Fraction(v) for v in ("1/4", "1/3", "1/2", "2/3", "3/4", "1", "4/3", "3/2", "2", "5/2", "3"))
"""Magnitudes γ of the falling term ``x^(-γ)`` of two-term laws."""
PAIR_GROWING = ((Fraction(0), Fraction(1)), (Fraction(0), Fraction(2)), (Fraction(1, 3), Fraction(0)),
                (Fraction(1, 2), Fraction(0)), (Fraction(2, 3), Fraction(0)), (Fraction(1), Fraction(0)),
                (Fraction(4, 3), Fraction(0)), (Fraction(3, 2), Fraction(0)), (Fraction(2), Fraction(0)),
                (Fraction(3), Fraction(0)), (Fraction(1, 2), Fraction(1)), (Fraction(1), Fraction(1)),
                (Fraction(2), Fraction(1)))
"""Exponents (α, β) of the growing term ``x^α·log2^β(x)`` of two-term laws: the paper's common and rare
terms up to x³, and x^α·log2(x) for α = 1/2, 1, 2."""
FALLING_BORDERLINE = 2.5
"""A falling law whose gain over the constant model is below this multiple of ``nonconstancy`` must pass
the trend test (growing laws: :data:`TREND_BORDERLINE`); noise that only raises the first point is
read as a steep fall less often."""
FALLING_SEEN = 2.0
"""A falling term must be at least this many times the law's RMS relative residual at the second
smallest parameter value (see :func:`seen_twice`): a term that explains the first point alone is a
cold start or an outlier, not a law."""
EXACT = 1e-8
"""A one-term law whose RMS relative error is below this fits to rounding: no two-term law replaces it."""
MIN_POINTS = 3
"""Fewer points than this cannot tell a growth law from noise: the model is the constant."""
NUMBA_MIN_SERIES = 10_000
"""Batches smaller than this run the numpy kernels unless numba is already loaded in the process:
importing numba and loading its cached code costs more than the numpy path needs for them
(one-parameter series, 5 points, whole fresh process: 0.26 s numpy vs 0.9 s numba at 1,000
series, 0.64 s vs 0.74 s at 10,000, 4.8 s vs 1.6 s at 100,000)."""

HIGH_POWER = 3
"""Growing powers beyond this one are rarer than the data of a narrow span can tell (see ``HIGH_POWER_LEVEL``)."""
HIGH_POWER_LEVEL = 2
"""Levels a growing power pays per unit above :data:`HIGH_POWER` (x^4: 2, x^5: 4): on a span of 1.8 ``size^5``
fits as well as ``size³`` and predicts 16 times more at 4× the span."""
PARSIMONY_DENOMINATOR = 5
"""Only accepted exponents with a larger denominator are checked against simpler ones within the noise
(see :func:`_simplest_within_noise`)."""
FLAT = 1e-12
"""Series whose values differ by less than this share of their size are constant (rounding only)."""
TREND_BORDERLINE = 2.0
"""Growth that beats the constant model by less than this multiple of the non-constancy threshold
must also pass the trend test; clearer growth need not (noise can swap the flat first points of
``c0 + c1·x³``, which then fails a 5-point trend test although it triples)."""
STRONG_TREND = 1e-3
"""A Mann–Kendall p-value at or below this (reachable from 7 points on) shows growth on its own: the
hypothesis then only has to beat the constant model's SMAPE at all, not by the non-constancy factor."""
OUTLIER_MIN_POINTS = 6
"""Series with at least this many points are checked for one outlier: without it 5 are left, the
refinement's reliable minimum; with 5 points a deviating point cannot be told from the law."""
OUTLIER_FACTOR = 10.0
"""A point is an outlier when the model of the other points misses it by this many times their RMS
relative error (and by at least :data:`OUTLIER_LEAST`)."""
OUTLIER_LEAST = 0.2
"""The smallest relative deviation (symmetric, as in SMAPE) that can make a point an outlier."""
OUTLIER_CANDIDATES = 2
"""Per series, only the points the law of all points misses most (this many, by relative
deviation) are tried as the outlier — a point far off the law of the others is, as a rule, among
them — so the check costs this many searches per series instead of one per point."""
OUTLIER_DISTORTION = 3.0
"""...and when the model of all points is this many times less accurate (RMS relative error over
all points) than the model of the others is on them: no law fits the point together with the rest."""


@dataclass(frozen=True)
class RefineSettings:
    """Thresholds and choices of the search (defaults: the paper's thresholds; others measured)."""

    acceptance: float = 1.5
    termination: float = 2.0
    nonconstancy: float = 2.0
    max_iterations: int = 10
    clean_constant: float = 0.0
    table_denominator: int = 5
    mixed_level: int = 1
    log_level: int = 2
    """Levels each whole log factor beyond the first pays (``log2²(x)``, ``x·log2²(x)``)."""
    third_level: int = 2
    """Levels an exponent with denominator 3 pays (the rule's denominator minus 1); the multi-parameter modeler
    reads a line again with 1, as a half pays (:meth:`pmkit.modelers.multiparam._Search.thirds`)."""
    noise_parsimony: float = 1.0
    """Hypotheses whose fits differ from the accepted one by at most this many times the noise (RMS,
    relative) are indistinguishable from it, and the simplest of them wins (0: off); see
    :func:`_simplest_within_noise`."""
    trend_alpha: float = 0.05
    strong_trend: float = STRONG_TREND
    relative_judge: bool = True
    outlier_factor: float = OUTLIER_FACTOR
    falling: bool = True
    """Whether falling laws are searched too: ``c0 + c1·x^(-γ)`` for series whose values fall and
    ``c0 + a·x^(-γ) + b·x^α·log2^β(x)`` from :data:`PAIR_MIN_POINTS` points on (see
    :func:`falling_rows`); False is the paper's growing search."""
    pair_level: int = 2
    """Levels a two-term law pays for its third coefficient (its error is compared at ``acceptance``
    per level, as a finer exponent's is)."""
    rising_terms: bool = True
    """With falling laws, series of non-negative values get only laws whose terms have positive
    coefficients (a growing term grows, a falling term falls), so no law of them turns negative as
    the parameter grows; ``c0 - c·log2(x)`` readings of falling values give way to falling laws."""
    slice_fallback: bool = True
    """Where the accepted law fails the non-constancy test, the other slices' best laws are tried (see
    :func:`_other_slices`); False: the paper's rule (constant)."""
    use_numba: bool | None = None

    def __post_init__(self) -> None:
        if self.table_denominator < 1:
            raise ValueError(f"table_denominator must be at least 1, got {self.table_denominator}")


@dataclass
class SingleFits:
    """Per-series result arrays of the search: ``c0 + c1·x^α·log2^β(x) + c2·x^α2·log2^β2(x)``.

    ``constant[i]`` rows have ``c1 = c2 = 0`` and no exponents.  One-term laws have ``c2 = 0`` and
    ``α2 = β2 = 0``; two-term laws (``two_term``) have a falling first term (``α < 0``, ``c1 > 0``) and
    a growing second term (``c2 > 0``).  Exponents are exact fractions as (numerator, denominator)
    integer pairs.  ``notes`` apply to every series of the call (they describe the shared points).
    """

    constant: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    c0: np.ndarray
    c1: np.ndarray
    rss: np.ndarray
    smape: np.ndarray
    loo_smape: np.ndarray
    adjusted_r2: np.ndarray
    alpha2: np.ndarray | None = None
    beta2: np.ndarray | None = None
    c2: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    outlier: np.ndarray | None = None
    """Per series, the index (into the points) of the one point left out as an outlier, or -1."""

    FIELDS = ("constant", "alpha", "beta", "c0", "c1", "alpha2", "beta2", "c2", "rss", "smape", "loo_smape",
              "adjusted_r2")
    """The per-series arrays (what :meth:`take` copies between results)."""

    def __post_init__(self) -> None:
        count = len(self.constant)
        if self.c2 is None:
            self.c2 = np.zeros(count)
        for name in ("alpha2", "beta2"):
            if getattr(self, name) is None:
                pairs = np.zeros((count, 2), dtype=np.int64)
                pairs[:, 1] = 1
                setattr(self, name, pairs)

    @classmethod
    def empty(cls, count: int) -> SingleFits:
        zeros = np.zeros((count, 2), dtype=np.int64)
        zeros[:, 1] = 1
        nan = np.full(count, np.nan)
        return cls(np.ones(count, dtype=bool), zeros.copy(), zeros.copy(), nan.copy(), np.zeros(count),
                   nan.copy(), nan.copy(), nan.copy(), nan.copy(), outlier=np.full(count, -1, dtype=np.int64))

    def copy(self) -> SingleFits:
        """An independent copy of the per-series arrays (the notes and outliers are shared)."""
        return SingleFits(**{name: getattr(self, name).copy() for name in self.FIELDS}, notes=self.notes,
                          outlier=self.outlier)

    def subset(self, rows: np.ndarray) -> SingleFits:
        """The results of the series ``rows`` only."""
        return SingleFits(**{name: getattr(self, name)[rows] for name in self.FIELDS}, notes=self.notes,
                          outlier=None if self.outlier is None else self.outlier[rows])

    @property
    def two_term(self) -> np.ndarray:
        """Which series have a two-term law (a falling and a growing term)."""
        return ~self.constant & (self.c2 != 0)

    def take(self, rows: np.ndarray, other: SingleFits, other_rows: np.ndarray | slice = slice(None)) -> None:
        """Copy ``other``'s results (at ``other_rows``) into rows ``rows`` of this result."""
        for name in self.FIELDS:
            getattr(self, name)[rows] = getattr(other, name)[other_rows]

    def terms(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each series' two term bases ``x^α·log2^β(x)`` and ``x^α2·log2^β2(x)`` at ``x`` (series × points),
        0 where a series has no such term."""
        x = np.asarray(x, dtype=float)
        first = _term_values(x, self.alpha, self.beta)
        second = _term_values(x, self.alpha2, self.beta2)
        return np.where(self.constant[:, None], 0.0, first), np.where(self.two_term[:, None], second, 0.0)

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """Every series' model at the points ``x`` (series × points)."""
        first, second = self.terms(x)
        c1 = np.where(self.constant, 0.0, self.c1)
        c2 = np.where(self.two_term, self.c2, 0.0)
        return self.c0[:, None] + c1[:, None] * first + c2[:, None] * second

    def __len__(self) -> int:
        return len(self.constant)


def _term_values(x: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``x^α·log2(x)^β`` (series × points) for per-series exponent pairs; log2 is clipped at 0."""
    a = alpha[:, 0] / alpha[:, 1]
    b = beta[:, 0] / beta[:, 1]
    with np.errstate(all="ignore"):
        logs = np.log2(np.where(x > 0, x, 1.0))[None, :]
        log_part = np.where(b[:, None] == 0, 1.0, np.power(np.maximum(logs, 0.0), b[:, None]))
        return np.power(x[None, :], a[:, None]) * log_part


def exponents(slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(α, β) as floats for hypotheses given as slice and exponent fraction (slices 0–2: α with β = slice;
    3: β with α = 0; 4: α = -fraction with β = 0)."""
    value = num / den
    on_alpha_slice = slices < 3
    alpha = np.where(on_alpha_slice, value, np.where(slices == FALLING_SLICE, -value, 0.0))
    beta = np.where(on_alpha_slice, slices.astype(float), np.where(slices == 3, value, 0.0))
    return alpha, beta


def basis_rows(x: np.ndarray, slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``x^α · log2(x)^β`` (hypotheses × points) for hypotheses given as slice and fraction."""
    alpha, beta = exponents(np.asarray(slices), np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    with np.errstate(all="ignore"):
        power = np.power(x[None, :], alpha[:, None])
        logs = np.log2(np.where(x > 0, x, 1.0))[None, :]
        log_part = np.where(beta[:, None] == 0, 1.0, np.power(np.maximum(logs, 0.0), beta[:, None]))
    return power * log_part


def shape_basis(x: np.ndarray, alpha: Fraction, beta: Fraction) -> np.ndarray:
    """``x^α·log2(x)^β`` at the points ``x`` for one exact shape (log2 clipped at 0, as in the search)."""
    pair = np.array([[alpha.numerator, alpha.denominator]]), np.array([[beta.numerator, beta.denominator]])
    return _term_values(np.asarray(x, dtype=float), *pair)[0]


@dataclass(frozen=True)
class StartTable:
    """The start hypotheses of every slice with their neighbours (refinement bounds) and levels.

    Arrays have one entry per hypothesis, ordered by level so that of equally good hypotheses the
    simpler one wins.  ``lower == value`` means there is no room on the left (α = 0 on a log slice).
    """

    slices: np.ndarray
    num: np.ndarray
    den: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: np.ndarray


def level_of(slices: np.ndarray, num: np.ndarray, den: np.ndarray, mixed_level: int,
             log_level: int = 0, third_level: int = 2) -> np.ndarray:
    """How complex each hypothesis is: denominator minus 1 (``third_level`` for a third), plus ``mixed_level`` for
    ``x^α·log2^β(x)``, plus ``log_level`` for each whole log factor beyond the first (``log2²(x)``, ``x·log2²(x)``)."""
    slices, num, den = np.asarray(slices), np.asarray(num), np.asarray(den)
    mixed = (slices == 1) | (slices == 2)
    extra_logs = np.where(slices == 2, 1, np.where(slices == 3, np.maximum(num // np.maximum(den, 1) - 1, 0), 0))
    # powers beyond x³ pay a level per unit above 3 (growing slices only)
    powers = np.where(slices < 3, np.maximum(-(-num // np.maximum(den, 1)) - HIGH_POWER, 0), 0)
    return (np.where(den == 3, third_level, den - 1) + np.where(mixed & (num > 0), mixed_level, 0)
            + log_level * extra_logs + HIGH_POWER_LEVEL * powers)


@lru_cache(maxsize=32)
def start_table(order: int, log_terms: bool, mixed_level: int, slices: tuple[int, ...] | None = None,
                log_level: int = 0, third_level: int = 2) -> StartTable:
    """Every exponent with denominator ≤ ``order`` on each of ``slices`` (default: the growing slices
    0–3, only β = 0 without ``log_terms``; the falling slice 4 is asked for by name)."""
    rows = []
    if slices is None:
        slices = (0, 1, 2, 3) if log_terms else (0,)
    for s in slices:
        top = MAX_ALPHA if s < 3 else MAX_BETA if s == 3 else MAX_FALL
        seq = sorted({Fraction(n, d) for d in range(1, order + 1) for n in range(0, top * d + 1)})
        for k, value in enumerate(seq[:-1]):
            if value == 0 and s in (0, 3, FALLING_SLICE):
                continue  # α = β = 0 is the constant model, decided separately
            lower = value if k == 0 else seq[k - 1]
            rows.append((s, value, lower, seq[k + 1]))
    slice_ids = np.array([r[0] for r in rows], dtype=np.int64)
    num = np.array([r[1].numerator for r in rows], dtype=np.int64)
    den = np.array([r[1].denominator for r in rows], dtype=np.int64)
    level = level_of(slice_ids, num, den, mixed_level, log_level, third_level)
    order_by = np.argsort(level, kind="stable")
    lower = np.array([[r[2].numerator, r[2].denominator] for r in rows], dtype=np.int64).reshape(-1, 2)
    upper = np.array([[r[3].numerator, r[3].denominator] for r in rows], dtype=np.int64).reshape(-1, 2)
    return StartTable(slice_ids[order_by], num[order_by], den[order_by], lower[order_by], upper[order_by],
                      level[order_by])


def _key(slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return (slices.astype(np.int64) << 42) | (num.astype(np.int64) << 21) | den.astype(np.int64)


def _unkey(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mask = (1 << 21) - 1
    return keys >> 42, (keys >> 21) & mask, keys & mask


def _distinct(slices: np.ndarray, num: np.ndarray, den: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (slice, numerator, denominator) triples in ascending order and each entry's index among them:
    ``np.unique(_key(...), return_inverse=True)``, unpacked.  The triples are coded over their span (in the keys'
    order) and numbered by :func:`~pmkit.fitting.distinct.distinct`: the mediants of one step are a few hundred
    distinct among up to a million entries, and their sort was 5% of ``pmkit model`` on 100,000 two-parameter
    series (``bench/README.md`` §12)."""
    if not slices.size:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    slices, num, den = slices.astype(np.int64), num.astype(np.int64), den.astype(np.int64)
    low = (int(slices.min()), int(num.min()), int(den.min()))
    spans = (int(num.max()) - low[1] + 1, int(den.max()) - low[2] + 1)
    if (int(slices.max()) - low[0] + 1) * spans[0] * spans[1] >= 2 ** 62:
        uniq, inverse = np.unique(_key(slices, num, den), return_inverse=True)
        return (*_unkey(uniq), inverse.reshape(-1))
    code = ((slices - low[0]) * spans[0] + (num - low[1])) * spans[1] + (den - low[2])
    found, _, inverse = distinct(code)
    rest, u_den = np.divmod(found, spans[1])
    u_slices, u_num = np.divmod(rest, spans[0])
    return u_slices + low[0], u_num + low[1], u_den + low[2], inverse


def _penalty(level: np.ndarray, acceptance: float) -> np.ndarray:
    """The factor on the squared relative error: ``acceptance`` per level on the RMS error."""
    with np.errstate(over="ignore"):
        return np.power(float(acceptance), 2.0 * np.asarray(level, dtype=float))


def compiled_kernels(count: int) -> bool:
    """Whether a batch of ``count`` series runs the numba kernels (see :data:`NUMBA_MIN_SERIES`).

    Modelers decide it once per batch (``RefineSettings.use_numba``), so that every group of a batch
    runs the same kernels whatever order the groups are searched in; the numba and numpy twins agree
    to about 1e-12, not to the last bit.
    """
    return (count >= NUMBA_MIN_SERIES or "numba" in sys.modules) and numba_enabled()


def refine_series(x: np.ndarray, Y: np.ndarray, settings: RefineSettings | None = None) -> SingleFits:
    """Search the best simplified-PMNF model of every row of ``Y`` measured at points ``x``.

    ``Y`` must be finite (group rows by their missing points first).  Fewer than
    :data:`MIN_POINTS` points give the constant model; parameter values below 1 rule out log
    terms; negative values leave only integer exponents.  Each row is divided by the power of two
    nearest its largest magnitude first (exact in floating point, so results do not change) and
    the coefficients and RSS scaled back, so squares of huge or tiny values cannot overflow.
    """
    x = np.asarray(x, dtype=float).reshape(-1)
    Y = np.ascontiguousarray(Y, dtype=float).reshape(-1, x.size)
    largest = np.abs(Y).max(axis=1) if Y.size else np.zeros(Y.shape[0])
    usable = np.isfinite(largest) & (largest > 0)
    scale = np.where(usable, np.ldexp(1.0, np.frexp(np.where(usable, largest, 1.0))[1] - 1), 1.0)
    out = _refine_unit(x, Y / scale[:, None], settings)
    out.c0 *= scale
    out.c1 *= scale
    out.c2 *= scale
    with np.errstate(over="ignore"):  # scaled one factor at a time: scale² overflows from 1e155 on, 0·inf is NaN
        out.rss *= scale
        out.rss *= scale
    return out


def _refine_unit(x: np.ndarray, Y: np.ndarray, settings: RefineSettings | None) -> SingleFits:
    """:func:`refine_series` on rows whose largest magnitude lies in [1, 2)."""
    settings = settings or RefineSettings()
    count, n = Y.shape
    if settings.use_numba is None:
        settings = replace(settings, use_numba=compiled_kernels(count))
    out = SingleFits.empty(count)
    if n == 0 or count == 0:
        return out
    mean = Y.mean(axis=1)
    centred = Y - mean[:, None]
    tss = (centred * centred).sum(axis=1)
    const_in = smape(Y, mean[:, None])
    const_loo = smape(Y, constant_loo_predictions(Y))
    out.c0[:] = mean
    out.rss[:] = tss
    out.smape[:] = const_in
    out.loo_smape[:] = const_loo if n > 1 else np.nan
    out.adjusted_r2[:] = adjusted_r2(tss, tss, n, 1)
    flat = np.ptp(Y, axis=1) <= FLAT * np.abs(Y).max(axis=1)
    if flat.all() or n < MIN_POINTS:  # the modeler's notes say when there were too few points
        return out

    log_terms = bool((x >= 1).all())
    negative = bool((x < 0).any())
    if negative:
        out.notes.append("parameter values below 0: integer exponents only, no log terms")
    elif not log_terms:
        out.notes.append("parameter values below 1: no log terms")
    fall, pairs = falling_rows(x, Y, settings.falling)
    fall &= ~flat
    rising = pairs & settings.rising_terms

    # start table: shared hypotheses, one kernel call for all series (and one more for the falling
    # slice, for the series that may fall)
    growing_slices = (0, 1, 2, 3) if log_terms else (0,)
    table = start_table(1 if negative else settings.table_denominator, log_terms, settings.mixed_level,
                        growing_slices + ((FALLING_SLICE,) if fall.any() else ()), settings.log_level,
                        settings.third_level)
    stats = basis_stats(basis_rows(x, table.slices, table.num, table.den))
    penalty = _penalty(table.level, settings.acceptance)
    on_falling = table.slices == FALLING_SLICE
    # relative errors do not depend on the scale: search on values scaled to a largest |y| of 1, so
    # weights 1/y² neither overflow nor underflow whatever the unit
    largest = np.abs(Y).max(axis=1, keepdims=True)
    Ys = Y / np.where(largest > 0, largest, 1.0)
    weights = relative_weights(Ys)
    found = _table_search(Ys, weights, stats, penalty, np.flatnonzero(~on_falling), table.slices, on_falling,
                          rising, settings)
    falls_at = np.flatnonzero(fall)
    if falls_at.size:
        more = _table_search(Ys[falls_at], weights[falls_at], stats, penalty, np.flatnonzero(on_falling),
                             table.slices, on_falling, rising[falls_at], settings)
        for name, values in more.items():
            found[name][falls_at, FALLING_SLICE] = values[:, FALLING_SLICE]
    rows = np.arange(count)
    first = np.argmin(found["crit"], axis=1)
    pick = np.maximum(found["k"][rows, first], 0)
    acc = np.stack([table.slices[pick], table.num[pick], table.den[pick]], axis=1).astype(np.int64)
    acc_crit = found["crit"][rows, first]
    # each slice's refinement starts at its most accurate start exponent, between its table neighbours
    enabled = found["raw_k"] >= 0
    k = np.maximum(found["raw_k"], 0)
    state = np.zeros((count, SLICES, 6), dtype=np.int64)
    state[..., 0], state[..., 1] = table.lower[k, 0], table.lower[k, 1]
    state[..., 2], state[..., 3] = table.num[k], table.den[k]
    state[..., 4], state[..., 5] = table.upper[k, 0], table.upper[k, 1]
    cen_err = found["raw_err"]
    active = enabled.any(axis=1)

    iterations = 0 if negative else settings.max_iterations
    slot_of = np.arange(SLICES * 2, dtype=np.int64)
    for _ in range(iterations):
        live = np.flatnonzero(active)
        if live.size == 0:
            break
        st = state[live]
        slice_ids = np.broadcast_to(np.arange(SLICES)[None, :, None], (live.size, SLICES, 2))
        num = np.stack([st[..., 0] + st[..., 2], st[..., 2] + st[..., 4]], axis=2)
        den = np.stack([st[..., 1] + st[..., 3], st[..., 3] + st[..., 5]], axis=2)
        has = np.stack([~((st[..., 0] == st[..., 2]) & (st[..., 1] == st[..., 3])),
                        np.ones(st.shape[:2], dtype=bool)], axis=2) & enabled[live][:, :, None]
        u_slices, u_num, u_den, inverse = _distinct(slice_ids[has], num[has], den[has])
        u_stats = basis_stats(basis_rows(x, u_slices, u_num, u_den))
        u_pen = _penalty(level_of(u_slices, u_num, u_den, settings.mixed_level, settings.log_level,
                                  settings.third_level),
                         settings.acceptance)
        table_idx = np.full(has.shape, -1, dtype=np.int64)
        table_idx[has] = inverse.reshape(-1)
        cand = relative_search(Ys[live], weights[live], u_stats.basis, u_stats.valid, u_pen,
                               table_idx.reshape(live.size, -1), slot_of, SLICES * 2,
                               positive=u_slices == FALLING_SLICE, rising=rising[live], use_numba=settings.use_numba)
        # a mediant is accepted when its penalised error beats the accepted hypothesis's
        best = np.argmin(cand["crit"], axis=1)
        lrows = np.arange(live.size)
        better = cand["crit"][lrows, best] < acc_crit[live]
        won = live[better]
        acc[won, 0] = best[better] // 2
        acc[won, 1] = num.reshape(live.size, -1)[lrows, best][better]
        acc[won, 2] = den.reshape(live.size, -1)[lrows, best][better]
        acc_crit[won] = cand["crit"][lrows, best][better]
        # the slices move towards their most accurate exponent (paper: Stern–Brocot steps by error)
        err = cand["err"].reshape(live.size, SLICES, 2)
        live_active, live_err = active[live], cen_err[live]
        refine_step(live_active, err, st, live_err, settings.termination, use_numba=settings.use_numba)
        active[live], state[live], cen_err[live] = live_active, st, live_err

    if settings.noise_parsimony > 0:
        _simplest_within_noise(x, Ys, weights, acc, acc_crit, table, fall, rising, settings)
    _final_fit(x, Y, acc, np.isfinite(acc_crit) & ~flat, tss, const_in, settings, out, rising)
    if settings.slice_fallback:
        _other_slices(x, Y, found, table, out.constant & np.isfinite(acc_crit) & ~flat, tss, const_in,
                      settings, out, rising)
    if n >= PAIR_MIN_POINTS:
        pair_at = np.flatnonzero(pairs & ~flat)
        if pair_at.size:
            _two_term_laws(x, Y, Ys, weights, pair_at, acc_crit, tss, const_in, settings, out)
    if settings.outlier_factor > 0 and n >= OUTLIER_MIN_POINTS:
        _leave_out_outlier(x, Y, settings, out)
    return out


def _other_slices(x: np.ndarray, Y: np.ndarray, found: dict[str, np.ndarray], table: StartTable,
                  constant: np.ndarray, tss: np.ndarray, const_in: np.ndarray, settings: RefineSettings,
                  out: SingleFits, rising: np.ndarray) -> None:
    """Where the accepted law failed the non-constancy test, try each other slice's best start-table law
    (in order of the search's penalised error) through the same test; the first that passes is the model.

    The search ranks laws by relative RSS, the test by SMAPE: a law can win the one and fail the other
    while another slice's law passes it clearly.  A second look asks for more evidence: only series whose
    values show a monotone trend (Mann–Kendall p ≤ ``trend_alpha``, where the points can reach it) get it.
    """
    n = x.size
    if settings.trend_alpha <= 0 or (x < 0).any() or smallest_pvalue(n) > settings.trend_alpha:
        return
    rows = np.flatnonzero(constant)
    if rows.size == 0:
        return
    rows = rows[trend_pvalue(kendall_s(x, Y[rows]), n) <= settings.trend_alpha]
    if rows.size == 0:
        return
    crit = found["crit"][rows]
    order = np.argsort(crit, axis=1)
    for rank in range(1, crit.shape[1]):
        slot = order[:, rank]
        has = np.isfinite(crit[np.arange(rows.size), slot]) & out.constant[rows]
        if not has.any():
            break
        pick = np.maximum(found["k"][rows, slot], 0)
        acc = np.zeros((len(Y), 3), dtype=np.int64)
        acc[rows, 0], acc[rows, 1], acc[rows, 2] = table.slices[pick], table.num[pick], table.den[pick]
        mask = np.zeros(len(Y), dtype=bool)
        mask[rows[has]] = True
        _final_fit(x, Y, acc, mask, tss, const_in, settings, out, rising)


def _simplest_within_noise(x: np.ndarray, Ys: np.ndarray, weights: np.ndarray, acc: np.ndarray, acc_crit: np.ndarray,
                           table: StartTable, fall: np.ndarray, rising: np.ndarray, settings: RefineSettings) -> None:
    """Replace each accepted hypothesis by the simplest start-table hypothesis whose fit to the points
    differs from it by less than the noise (in place on ``acc`` and ``acc_crit``).

    Both are fitted by relative least squares; the noise is the accepted fit's RMS relative residual
    with its degrees of freedom (``n - 2``); a hypothesis is indistinguishable when the RMS relative
    difference of the two fitted curves at the points is at most ``noise_parsimony`` times that noise.
    Of those, the one of the lowest level wins (then the smallest penalised error) — so a finer
    exponent than the data support (4/7 on a span of 1.8) gives way to the simpler one (1/2).
    """
    n = x.size
    if n <= 2:
        return
    levels = level_of(acc[:, 0], acc[:, 1], acc[:, 2], settings.mixed_level, settings.log_level, settings.third_level)
    rows = np.flatnonzero(np.isfinite(acc_crit) & (levels > 0) & (acc[:, 2] > PARSIMONY_DENOMINATOR))
    if rows.size == 0:
        return
    basis = basis_rows(x, table.slices, table.num, table.den)
    usable = np.isfinite(basis).all(axis=1)
    penalty = _penalty(table.level, settings.acceptance)
    falling = table.slices == FALLING_SLICE
    chunk = max(16, 2_000_000 // max(len(basis) * n, 1))
    for start in range(0, rows.size, chunk):
        part = rows[start:start + chunk]
        Yc, w = Ys[part], weights[part]
        own = basis_rows(x, acc[part, 0], acc[part, 1], acc[part, 2])
        with np.errstate(all="ignore"):
            sw, swb, swbb = w.sum(axis=1), (w * own).sum(axis=1), (w * own * own).sum(axis=1)
            swy, swby = (w * Yc).sum(axis=1), (w * own * Yc).sum(axis=1)
            det = sw * swbb - swb * swb
            c1 = (sw * swby - swb * swy) / det
            c0 = (swy - c1 * swb) / sw
            accepted = c0[:, None] + c1[:, None] * own
            scale = np.where(Yc != 0, Yc, 1.0)
            noise = ((Yc - accepted) / scale) ** 2
            noise = noise.sum(axis=1) / (n - 2)
            fits = relative_line_fits(Yc, w, np.where(usable[:, None], basis, 0.0), covariance=False)
            curves = fits.coef[:, :, :1] + fits.coef[:, :, 1:] * basis[None, :, :]
            difference = (((curves - accepted[:, None, :]) / scale[:, None, :]) ** 2).mean(axis=2)
        allowed = usable[None, :] & (table.level[None, :] < levels[part, None])
        allowed &= ~falling[None, :] | (fall[part, None] & (fits.coef[:, :, 1] > 0))
        allowed &= ~(rising[part, None] & ~falling[None, :]) | (fits.coef[:, :, 1] > 0)
        close = allowed & (difference <= settings.noise_parsimony ** 2 * noise[:, None]) & np.isfinite(difference)
        if not close.any():
            continue
        crit = np.where(close, fits.rss * penalty[None, :], np.inf)
        rank = np.where(close, table.level[None, :].astype(float) * 1e6, np.inf)
        best_level = rank.min(axis=1)
        crit = np.where(rank == best_level[:, None], crit, np.inf)
        pick = np.argmin(crit, axis=1)
        hit = close.any(axis=1)
        won = part[hit]
        acc[won, 0], acc[won, 1], acc[won, 2] = table.slices[pick[hit]], table.num[pick[hit]], table.den[pick[hit]]
        acc_crit[won] = crit[hit, pick[hit]]


def _table_search(Ys: np.ndarray, weights: np.ndarray, stats: BasisStats, penalty: np.ndarray, columns: np.ndarray,
                  slices: np.ndarray, positive: np.ndarray, rising: np.ndarray, settings: RefineSettings
                  ) -> dict[str, np.ndarray]:
    """:func:`relative_search` of the start-table hypotheses ``columns`` shared by every row, with ``k`` and
    ``raw_k`` turned into table indices."""
    found = relative_search(Ys, weights, stats.basis, stats.valid, penalty, columns[None, :], slices[columns],
                            SLICES, positive=positive, rising=rising, use_numba=settings.use_numba)
    for name in ("k", "raw_k"):
        found[name] = np.where(found[name] >= 0, columns[np.maximum(found[name], 0)], -1)
    return found


def falling_rows(x: np.ndarray, Y: np.ndarray, falling: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Which series (rows of ``Y`` at points ``x``) the search tries one-term falling laws on, and which
    two-term (falling + growing) laws.

    Falling laws need positive parameter values (``x^(-γ)`` at 0 is infinite) and non-negative
    values (a falling term has a positive coefficient).  Two-term laws are tried on every such
    series (a falling term can hide under growth from the first point on: ``a·n/p + b·log2 p``);
    one-term falling laws only where the values :func:`fall` — elsewhere no falling law fits better
    than a growing one (the same models either way on the protocols of
    :mod:`pmkit.modelers.refining`; it saves their search).
    """
    none = np.zeros(Y.shape[0], dtype=bool)
    if not falling or not (x > 0).all():
        return none, none
    eligible = (Y >= 0).all(axis=1) & (Y > 0).any(axis=1)
    return eligible & falls(x, Y), eligible


def falls(x: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Whether each row of ``Y`` falls somewhere: its largest value is not at the largest ``x``."""
    return np.argmax(Y, axis=1) != np.argmax(x)


@dataclass(frozen=True)
class PairTable:
    """Two-term hypotheses ``c0 + a·x^(-γ) + b·x^α·log2^β(x)``: basis rows (falling ones, then growing ones,
    as slice and fraction) and per pair its two rows and its level."""

    slices: np.ndarray
    num: np.ndarray
    den: np.ndarray
    first: np.ndarray
    second: np.ndarray
    level: np.ndarray


@lru_cache(maxsize=8)
def pair_table(mixed_level: int, pair_level: int, log_terms: bool) -> PairTable:
    """Every pair of :data:`PAIR_FALLING` and :data:`PAIR_GROWING` (without log terms: growing powers only)."""
    growing = [(a, b) for a, b in PAIR_GROWING if log_terms or b == 0]
    rows = [(FALLING_SLICE, g) for g in PAIR_FALLING]
    rows += [(int(b), a) if a > 0 else (3, b) for a, b in growing]
    slices = np.array([r[0] for r in rows], dtype=np.int64)
    num = np.array([r[1].numerator for r in rows], dtype=np.int64)
    den = np.array([r[1].denominator for r in rows], dtype=np.int64)
    level = level_of(slices, num, den, mixed_level)
    falling = np.arange(len(PAIR_FALLING))
    growing_rows = np.arange(len(PAIR_FALLING), len(rows))
    first, second = (a.reshape(-1) for a in np.meshgrid(falling, growing_rows, indexing="ij"))
    return PairTable(slices, num, den, first, second, level[first] + level[second] + pair_level)


def _two_term_laws(x: np.ndarray, Y: np.ndarray, Ys: np.ndarray, weights: np.ndarray, rows: np.ndarray,
                   acc_crit: np.ndarray, tss: np.ndarray, const_in: np.ndarray, settings: RefineSettings,
                   out: SingleFits) -> None:
    """Replace the one-term law by a falling + growing two-term law where one is clearly better.

    The pairs of :func:`pair_table` are fitted by relative least squares (both coefficients positive)
    and compared with the accepted one-term hypothesis by the same penalised error, the pair paying
    ``pair_level`` extra levels for its third coefficient.  A winning pair keeps its relative
    least-squares coefficients (as one-term falling laws do, see :func:`_final_fit`) and is kept if it
    beats the constant model's SMAPE :data:`TREND_BORDERLINE` × ``nonconstancy`` times by leave-one-out
    SMAPE (no trend test: a two-term law is not monotone).
    """
    pairs = pair_table(settings.mixed_level, settings.pair_level, bool((x >= 1).all()))
    basis = basis_rows(x, pairs.slices, pairs.num, pairs.den)
    scale = np.abs(basis).max(axis=1, keepdims=True)
    valid = np.isfinite(basis).all(axis=1) & (scale[:, 0] > 0)
    basis = np.where(valid[:, None], basis / np.where(scale > 0, scale, 1.0), 0.0)
    found = pair_search(Ys[rows], weights[rows], basis, valid, pairs.first, pairs.second,
                        _penalty(pairs.level, settings.acceptance), use_numba=settings.use_numba)
    # a one-term law exact to rounding (RMS relative error below 1e-8) leaves nothing to explain
    wins = (found["k"] >= 0) & (found["crit"] < acc_crit[rows]) & (acc_crit[rows] > x.size * EXACT ** 2)
    if not wins.any():
        return
    rows, chosen = rows[wins], found["k"][wins]
    n = x.size
    for k in np.unique(chosen):
        members = rows[chosen == k]
        f_row, g_row = basis[pairs.first[k]], basis[pairs.second[k]]
        design = np.column_stack([np.ones(n), f_row, g_row])
        # relative least squares, as for one-term falling laws (see _final_fit)
        coefficients, loo = relative_design_fit(Y[members], design)
        if settings.clean_constant > 0:
            # c0 that is rounding noise is 0: refit through the origin (as for one-term laws)
            small = np.abs(coefficients[:, 0]) < settings.clean_constant * np.abs(Y[members]).min(axis=1)
            if small.any():
                origin, origin_loo = relative_design_fit(Y[members][small], design[:, 1:])
                coefficients[small] = np.column_stack([np.zeros(small.sum()), origin])
                loo[small] = origin_loo
        predicted = rowwise(coefficients, design)
        residual = Y[members] - predicted
        rss = (residual * residual).sum(axis=1)
        before = const_in[members]
        with np.errstate(all="ignore"):
            gain = np.where(loo <= 0, np.inf, before / np.where(loo > 0, loo, 1.0))
        ok = (np.isfinite(rss) & (coefficients[:, 1] > 0) & (coefficients[:, 2] > 0)
              & (gain >= TREND_BORDERLINE * settings.nonconstancy)
              & seen_twice(x, Y[members], predicted, coefficients[:, 1:2] * f_row, FALLING_SEEN))
        if not np.isfinite(settings.nonconstancy):
            ok[:] = False
        if not ok.any():
            continue
        kept = members[ok]
        pair_rows = np.array([pairs.first[k], pairs.second[k]])
        alpha, beta = _fraction_pairs(pairs.slices[pair_rows], pairs.num[pair_rows], pairs.den[pair_rows])
        out.constant[kept] = False
        out.alpha[kept], out.beta[kept] = alpha[0], beta[0]
        out.alpha2[kept], out.beta2[kept] = alpha[1], beta[1]
        out.c0[kept] = coefficients[ok, 0]
        out.c1[kept] = coefficients[ok, 1] / scale[pairs.first[k], 0]
        out.c2[kept] = coefficients[ok, 2] / scale[pairs.second[k], 0]
        out.rss[kept] = rss[ok]
        out.smape[kept] = smape(Y[kept], predicted[ok])
        out.loo_smape[kept] = loo[ok]
        out.adjusted_r2[kept] = adjusted_r2(rss[ok], tss[kept], n, 3)


def relative_design_fit(Y: np.ndarray, design: np.ndarray, keep: np.ndarray | None = None
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Relative least squares (weights ``1/y²``) of every row of ``Y`` on ``design`` (points × columns,
    shared, or rows × points × columns), on the points ``keep`` (default all): the coefficients (rows ×
    columns) and the leave-one-out SMAPE over the kept points (closed form: residual over ``1 - h``
    with the weighted hat matrix's diagonal ``h``); NaN coefficients and inf where singular."""
    count, n = Y.shape
    designs = np.broadcast_to(design, (count, n, design.shape[-1]))
    k = designs.shape[2]
    largest = np.abs(Y).max(axis=1, keepdims=True)
    largest = np.where(largest > 0, largest, 1.0)
    Ys = Y / largest
    w = relative_weights(Ys) * (np.ones(n) if keep is None else keep)[None, :]
    gram = np.einsum("sn,snk,snj->skj", w, designs, designs)
    rhs = np.einsum("sn,snk,sn->sk", w, designs, Ys)
    with np.errstate(all="ignore"):
        scale = np.sqrt(np.einsum("skk->sk", gram))
        ok = (scale > 0).all(axis=1) & np.isfinite(scale).all(axis=1)
        norm = np.where(ok[:, None], scale, 1.0)
        scaled = np.where(ok[:, None, None], gram / norm[:, :, None] / norm[:, None, :], np.eye(k))
        ok &= np.linalg.cond(scaled) < 1e12
        inverse = np.linalg.inv(np.where(ok[:, None, None], scaled, np.eye(k))) / norm[:, :, None] / norm[:, None, :]
        coefficients = np.einsum("skj,sj->sk", inverse, rhs)
        predicted = np.einsum("snk,sk->sn", designs, coefficients)
        h = w * np.einsum("snk,skj,snj->sn", designs, inverse, designs)
        loo = np.where(1 - h > 1e-12, Ys - (Ys - predicted) / (1 - h), np.inf)
    kept = np.ones(n, dtype=bool) if keep is None else keep.astype(bool)
    coefficients = np.where(ok[:, None], coefficients * largest, np.nan)
    return coefficients, np.where(ok, smape(Ys[:, kept], loo[:, kept]), np.inf)


def _relative_deviation(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``|y - f| / ((|y| + |f|) / 2)`` elementwise (SMAPE's term), 0 where both are 0."""
    scale = (np.abs(y) + np.abs(f)) / 2
    with np.errstate(all="ignore"):
        return np.where(scale > 0, np.abs(y - f) / np.where(scale > 0, scale, 1.0), 0.0)


def _relative_deviations(x: np.ndarray, Y: np.ndarray, fits: SingleFits, keep: np.ndarray) -> np.ndarray:
    """Deviations (SMAPE's term) of every point from each series' law, refitted by relative least squares
    on the points ``keep``.

    The laws' own coefficients are ordinary least squares, dominated by the largest values, so
    they may miss a small value by far more than its noise; refitted with weights ``1/y²`` a law
    meets every point it explains within that point's noise.
    """
    largest = np.abs(Y).max(axis=1, keepdims=True)
    Ys = Y / np.where(largest > 0, largest, 1.0)
    t, t2 = fits.terms(x)
    with np.errstate(all="ignore"):
        w = np.where(Ys != 0, 1.0 / (Ys * Ys), 0.0) * keep[None, :]
        sw, swt, swtt = w.sum(axis=1), (w * t).sum(axis=1), (w * t * t).sum(axis=1)
        swy, swty = (w * Ys).sum(axis=1), (w * t * Ys).sum(axis=1)
        det = sw * swtt - swt * swt
        solvable = ~fits.constant & (np.abs(det) > 1e-12 * np.maximum(sw * swtt, 1e-300))
        c1 = np.where(solvable, (sw * swty - swt * swy) / np.where(solvable, det, 1.0), 0.0)
        c0 = np.where(sw > 0, (swy - c1 * swt) / np.where(sw > 0, sw, 1.0), 0.0)
        predicted = c0[:, None] + c1[:, None] * t
    two = np.flatnonzero(fits.two_term)
    if two.size:
        designs = np.stack([np.ones_like(t[two]), t[two], t2[two]], axis=2)
        coefficients, _ = relative_design_fit(Ys[two], designs, keep)
        predicted[two] = np.einsum("snk,sk->sn", designs, np.nan_to_num(coefficients))
    return _relative_deviation(Ys, predicted)


def _leave_out_outlier(x: np.ndarray, Y: np.ndarray, settings: RefineSettings, out: SingleFits) -> None:
    """Replace a series' model by the model of its other points where one point is an outlier.

    A point other than the largest ``x`` is an outlier when the law found without it misses it by
    :data:`OUTLIER_LEAST` and by ``outlier_factor`` times its RMS relative error on the other
    points, while the law found with it is :data:`OUTLIER_DISTORTION` times less accurate over all
    points: no law fits the point together with the rest (deviations from relative least-squares
    fits, see :func:`_relative_deviations`).  One point is taken out at most: the one missed most,
    relative to the others' error.  The largest ``x`` stays: a law's growth shows most there, so a
    deviating last point may be the law.
    """
    count, n = Y.shape
    inner = replace(settings, outlier_factor=0.0)
    best_ratio = np.zeros(count)
    everything = np.ones(n, dtype=bool)
    deviations = _relative_deviations(x, Y, out, everything)
    full = np.sqrt((deviations ** 2).mean(axis=1))
    # only the points the law of all points misses most can be outliers: search without those
    order = np.argsort(-deviations[:, : n - 1], axis=1, kind="stable")[:, :OUTLIER_CANDIDATES]
    for j in range(n - 1):
        candidates = np.flatnonzero((order == j).any(axis=1) & (full > 0))
        if candidates.size == 0:
            continue
        keep = everything.copy()
        keep[j] = False
        Yc = Y[candidates]
        sub = refine_series(x[keep], Yc[:, keep], inner)
        dev = _relative_deviations(x, Yc, sub, keep)
        spread = np.sqrt((dev[:, keep] ** 2).mean(axis=1))
        with np.errstate(all="ignore"):
            ratio = np.where(spread > 0, dev[:, j] / np.where(spread > 0, spread, 1.0), np.inf)
        distorts = full[candidates] >= OUTLIER_DISTORTION * spread
        hit = ((dev[:, j] >= OUTLIER_LEAST) & (ratio >= settings.outlier_factor) & distorts
               & (ratio > best_ratio[candidates]))
        if not hit.any():
            continue
        rows = candidates[hit]
        best_ratio[rows] = ratio[hit]
        out.take(rows, sub, hit)
        out.outlier[rows] = j


def _final_fit(x: np.ndarray, Y: np.ndarray, acc: np.ndarray, found: np.ndarray, tss: np.ndarray,
               const_in: np.ndarray, settings: RefineSettings, out: SingleFits, rising: np.ndarray) -> None:
    """Refit the accepted hypotheses by least squares and keep those that pass the non-constancy test.

    The test compares the constant model's in-sample SMAPE with the hypothesis's leave-one-out
    SMAPE (a two-coefficient fit always beats the mean in-sample, so the hypothesis is charged for
    its extra coefficient), the better of its ordinary and its relative least-squares fit (the
    ordinary fit, which the model keeps, can miss the small values of a wide range by far more
    than their noise).  A strong trend (Mann–Kendall p ≤ ``strong_trend``, from 7 points on)
    needs only a gain above 1.  Where the points allow it (``x ≥ 0``, enough points to reach
    ``trend_alpha``), borderline growth (below :data:`TREND_BORDERLINE` times the threshold) must
    also show a monotone trend (Mann–Kendall, :mod:`pmkit.fitting.trend`), since every hypothesis
    is monotone.
    """
    rows = np.flatnonzero(found)
    if rows.size == 0:
        return
    n = x.size
    u_slices, u_num, u_den, inverse = _distinct(acc[rows, 0], acc[rows, 1], acc[rows, 2])
    basis = basis_rows(x, u_slices, u_num, u_den)
    stats = basis_stats(basis)
    fit = fit_table(Y[rows], stats.basis, stats.weights, stats.leverage, stats.mean, stats.valid,
                    inverse.reshape(-1, 1).astype(np.int64), use_numba=settings.use_numba)
    c0, c1 = fit["c0"][:, 0], fit["c1"][:, 0]
    rss, sm, loo = fit["rss"][:, 0], fit["smape"][:, 0], fit["loo_smape"][:, 0]
    if settings.clean_constant > 0:
        c0, c1, rss, sm, loo = _clean_constant(Y[rows], basis[inverse], c0, c1, rss, sm, loo,
                                               settings.clean_constant)
    rel_c0, rel_c1, rel_loo = _relative_line(basis[inverse], Y[rows])
    falling = u_slices[inverse] == FALLING_SLICE
    flipped = rising[rows] & ~falling & ~(c1 > 0)
    if flipped.any():
        # a growing term of non-negative values must grow (the search fitted it so): where the ordinary
        # fit's coefficient is not positive, the relative fit's coefficients stand
        c0, c1, rss, sm, loo = (np.array(a, dtype=float) for a in (c0, c1, rss, sm, loo))
        c0[flipped], c1[flipped] = rel_c0[flipped], rel_c1[flipped]
        predicted = c0[flipped, None] + c1[flipped, None] * basis[inverse][flipped]
        rss[flipped] = ((Y[rows][flipped] - predicted) ** 2).sum(axis=1)
        sm[flipped], loo[flipped] = smape(Y[rows][flipped], predicted), rel_loo[flipped]
    if falling.any():
        # falling laws keep their relative least-squares coefficients: a falling law is extrapolated
        # to its small values, which an ordinary fit leaves to the largest (and its coefficient may
        # even turn negative there)
        fb, fy = basis[inverse][falling], Y[rows][falling]
        coefficients = np.stack([rel_c0[falling], rel_c1[falling]], axis=1)
        f_loo = rel_loo[falling]
        # c0 that is rounding noise is 0, and a one-term falling law never flattens below 0 (the values
        # are non-negative): refit through the origin
        small = ((coefficients[:, 0] < 0)
                 | (np.abs(coefficients[:, 0]) < settings.clean_constant * np.abs(fy).min(axis=1)))
        if small.any():
            origin, origin_loo = relative_design_fit(fy[small], fb[small][:, :, None])
            coefficients[small] = np.column_stack([np.zeros(small.sum()), origin[:, 0]])
            f_loo[small] = origin_loo
        c0, c1, rss, sm, loo = (np.array(a, dtype=float) for a in (c0, c1, rss, sm, loo))
        predicted = coefficients[:, :1] + coefficients[:, 1:] * fb
        c0[falling], c1[falling] = coefficients[:, 0], coefficients[:, 1]
        rss[falling] = ((fy - predicted) ** 2).sum(axis=1)
        sm[falling], loo[falling] = smape(fy, predicted), f_loo
    # non-constancy: keep the hypothesis only if it beats the constant model's SMAPE clearly
    before, after = const_in[rows], loo
    if settings.relative_judge:
        after = np.fmin(loo, rel_loo)
    with np.errstate(all="ignore"):
        gain = np.where(after <= 0, np.where(before > 0, np.inf, 1.0), before / np.where(after > 0, after, 1.0))
    ok = np.isfinite(c1) & (c1 != 0) & np.isfinite(rss) & (gain >= settings.nonconstancy)
    if settings.trend_alpha > 0 and (x >= 0).all() and smallest_pvalue(n) <= settings.trend_alpha:
        # every hypothesis is monotone in x ≥ 0: borderline growth must show a monotone trend
        borderline = gain < np.where(u_slices[inverse] == FALLING_SLICE, FALLING_BORDERLINE,
                                     TREND_BORDERLINE) * settings.nonconstancy
        pvalue = trend_pvalue(kendall_s(x, Y[rows]), n)
        ok &= ~borderline | (pvalue <= settings.trend_alpha)
        strong_possible = smallest_pvalue(n) <= settings.strong_trend
        if settings.strong_trend > 0 and strong_possible and np.isfinite(settings.nonconstancy):
            # a trend noise would produce once in a thousand shows growth by itself: the
            # hypothesis then needs only to beat the constant model (an infinite threshold
            # still means "constant")
            strong = np.isfinite(c1) & (c1 != 0) & np.isfinite(rss) & (gain > 1) & (pvalue <= settings.strong_trend)
            ok |= strong
    if falling.any():
        fitted = c0[falling, None] + c1[falling, None] * basis[inverse][falling]
        ok[falling] &= seen_twice(x, Y[rows][falling], fitted, c1[falling, None] * basis[inverse][falling],
                                  FALLING_SEEN)
    if not np.isfinite(settings.nonconstancy):
        ok[:] = False  # an infinite threshold means "constant", even for an exact fit (gain = inf)
    rows, inv = rows[ok], inverse[ok]
    out.constant[rows] = False
    alpha, beta = _fraction_pairs(u_slices[inv], u_num[inv], u_den[inv])
    out.alpha[rows], out.beta[rows] = alpha, beta
    out.c0[rows], out.c1[rows] = c0[ok], c1[ok]
    out.rss[rows], out.smape[rows], out.loo_smape[rows] = rss[ok], sm[ok], loo[ok]
    out.adjusted_r2[rows] = adjusted_r2(rss[ok], tss[rows], n, 2)


def seen_twice(x: np.ndarray, Y: np.ndarray, fitted: np.ndarray, term: np.ndarray, factor: float) -> np.ndarray:
    """Whether a falling term (its values ``term`` in a law whose values are ``fitted``) is seen at more
    than the first point: at the second smallest ``x`` it is at least ``factor`` times the law's RMS
    relative residual of the value there.  A term that only explains the first point is that point's
    deviation (a cold start, an outlier), not a law."""
    if factor <= 0:
        return np.ones(len(Y), dtype=bool)
    second = np.argsort(x)[1]
    with np.errstate(all="ignore"):
        relative = (Y - fitted) / np.where(Y != 0, Y, 1.0)
        scatter = np.sqrt((relative * relative).mean(axis=1))
        share = np.abs(term[:, second]) / np.abs(Y[:, second])
    return share >= factor * scatter


def _relative_line(B: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``c0``, ``c1`` and the leave-one-out SMAPE of ``c0 + c1·b`` fitted by relative least squares
    (weights ``1/y²``), per row.

    Closed form: the deleted residual is the residual over ``1 - h`` with the weighted hat matrix's
    diagonal ``h``; rows of ``B`` are each series' basis values at its points.
    """
    largest = np.abs(Y).max(axis=1, keepdims=True)
    largest = np.where(largest > 0, largest, 1.0)
    Ys = Y / largest
    with np.errstate(all="ignore"):
        w = np.where(Ys != 0, 1.0 / (Ys * Ys), 0.0)
        sw, swb, swbb = w.sum(axis=1), (w * B).sum(axis=1), (w * B * B).sum(axis=1)
        swy, swby = (w * Ys).sum(axis=1), (w * B * Ys).sum(axis=1)
        det = sw * swbb - swb * swb
        c1 = (sw * swby - swb * swy) / det
        c0 = (swy - c1 * swb) / sw
        residual = Ys - c0[:, None] - c1[:, None] * B
        h = w * (swbb[:, None] - 2 * B * swb[:, None] + B * B * sw[:, None]) / det[:, None]
        predicted = np.where(1 - h > 1e-12, Ys - residual / (1 - h), np.inf)
    loo = np.where(np.isfinite(det) & (det > 0), smape(Ys, predicted), np.inf)
    return c0 * largest[:, 0], c1 * largest[:, 0], loo


def _fraction_pairs(slices: np.ndarray, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    on_alpha = slices < 3
    falling = slices == FALLING_SLICE
    alpha = np.stack([np.where(on_alpha, num, np.where(falling, -num, 0)), np.where(on_alpha | falling, den, 1)],
                     axis=1)
    beta = np.stack([np.where(on_alpha, slices, np.where(falling, 0, num)), np.where(on_alpha | falling, 1, den)],
                    axis=1)
    return alpha.astype(np.int64), beta.astype(np.int64)


def _clean_constant(Y: np.ndarray, basis: np.ndarray, c0: np.ndarray, c1: np.ndarray, rss: np.ndarray,
                    sm: np.ndarray, loo: np.ndarray, relative: float) -> tuple[np.ndarray, ...]:
    """Refit through the origin where ``|c0|`` is below ``relative`` × the smallest ``|y|``."""
    small = np.abs(c0) < relative * np.abs(Y).min(axis=1)
    if not small.any():
        return c0, c1, rss, sm, loo
    b, y = basis[small], Y[small]
    bb = (b * b).sum(axis=1)
    k = (b * y).sum(axis=1) / bb
    predicted = k[:, None] * b
    residual = y - predicted
    leverage = b * b / bb[:, None]
    with np.errstate(all="ignore"):
        loo_pred = np.where(1 - leverage > 1e-12, y - residual / (1 - leverage), np.inf)
    c0, c1, rss, sm, loo = c0.copy(), c1.copy(), rss.copy(), sm.copy(), loo.copy()
    c0[small], c1[small] = 0.0, k
    rss[small] = (residual * residual).sum(axis=1)
    sm[small] = smape(y, predicted)
    loo[small] = smape(y, loo_pred)
    return c0, c1, rss, sm, loo
