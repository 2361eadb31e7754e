"""Random PMNF functions and noisy measurements of them: the synthetic protocol of paper 000, §4.1.

Terms are classified as in the paper: *common* (x, x², x³, log2 x), *rare* (x^(i/2), x^(i/3),
log2² x) and *exotic* (x^(i/4), x^(i/5), log2^(1/2) x, log2^(3/2) x).  A function of a class has one
or two terms besides ``c0``, at least one of them from its class (the other from the same or a
simpler class, never the same term twice); every coefficient is ``10^a`` with ``a ~ U[-2, 3)``.
Values get ±2% uniform relative noise.  Everything is vectorized over functions, so the same code
feeds the accuracy benchmark (thousands of functions) and the speed benchmark (100,000 series).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as F

import numpy as np

from pmkit.pmnf import Factor, Function, Term
from pmkit.series import SeriesBatch

COMMON: tuple[tuple[F, F], ...] = ((F(1), F(0)), (F(2), F(0)), (F(3), F(0)), (F(0), F(1)))
RARE: tuple[tuple[F, F], ...] = (
    *((F(i, 2), F(0)) for i in (1, 3, 5)),
    *((F(i, 3), F(0)) for i in (1, 2, 4, 5, 7, 8)),
    (F(0), F(2)),
)
EXOTIC: tuple[tuple[F, F], ...] = (
    *((F(i, 4), F(0)) for i in (1, 3, 5, 7, 9, 11)),
    *((F(i, 5), F(0)) for i in range(1, 15) if i not in (5, 10)),
    (F(0), F(1, 2)),
    (F(0), F(3, 2)),
)
TERMS: tuple[tuple[F, F], ...] = COMMON + RARE + EXOTIC
"""Every term shape (α, β) of ``x^α·log2(x)^β``; functions refer to terms by index into this tuple."""

_CLASS_RANGES = {"common": (0, len(COMMON)), "rare": (len(COMMON), len(COMMON) + len(RARE)),
                 "exotic": (len(COMMON) + len(RARE), len(TERMS))}

CASES: tuple[tuple[str, str | None, int], ...] = (
    ("constant", None, 0),
    ("common, 1 term", "common", 1),
    ("common, 2 terms", "common", 2),
    ("rare, 1 term", "rare", 1),
    ("rare, 2 terms", "rare", 2),
    ("exotic, 1 term", "exotic", 1),
    ("exotic, 2 terms", "exotic", 2),
)
"""The seven cases of the paper's Fig. 3: (label, term class, number of non-constant terms)."""

X_SETS: dict[str, np.ndarray] = {
    "2..32": np.array([2.0, 4, 8, 16, 32]),
    "8..128": np.array([8.0, 16, 32, 64, 128]),
    "32..512": np.array([32.0, 64, 128, 256, 512]),
    "128..2048": np.array([128.0, 256, 512, 1024, 2048]),
}
"""The paper's four sets of x values (five points each, powers of two)."""

NOISE = 0.02


def coefficients(rng: np.random.Generator, shape: tuple[int, ...] | int) -> np.ndarray:
    """``10^a`` with ``a`` uniform in [-2, 3), the paper's coefficient distribution."""
    return 10.0 ** rng.uniform(-2.0, 3.0, shape)


def term_basis(term: int, x: np.ndarray) -> np.ndarray:
    """``x^α·log2(x)^β`` of ``TERMS[term]`` at each x."""
    alpha, beta = TERMS[term]
    x = np.asarray(x, dtype=float)
    return x ** float(alpha) * np.log2(x) ** float(beta)


@dataclass
class SyntheticFunctions:
    """``n`` functions ``c0 + Σ_k c_k · TERMS[terms[i, k]]``; ``terms`` is -1 where a slot is unused."""

    case: str
    constant: np.ndarray
    coefficients: np.ndarray
    terms: np.ndarray

    def __len__(self) -> int:
        return len(self.constant)

    def term_values(self, x: np.ndarray) -> np.ndarray:
        """(functions, slots, len(x)): each term's value with its coefficient, 0 in unused slots."""
        x = np.asarray(x, dtype=float)
        out = np.zeros((*self.terms.shape, len(x)))
        for term in np.unique(self.terms[self.terms >= 0]):
            mask = self.terms == term
            out[mask] = self.coefficients[mask][:, None] * term_basis(int(term), x)[None, :]
        return out

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """(functions, len(x)) exact values."""
        return self.constant[:, None] + self.term_values(x).sum(axis=1)

    def lead_terms(self, x_at: float) -> np.ndarray:
        """Index into ``TERMS`` of each function's lead-order term at ``x_at`` (the non-constant term
        contributing most there, as the paper defines it); -1 for constant functions."""
        values = np.abs(self.term_values(np.array([x_at]))[:, :, 0])
        values[self.terms < 0] = -1.0
        slot = values.argmax(axis=1)
        lead = self.terms[np.arange(len(self)), slot]
        return np.where(values.max(axis=1) < 0, -1, lead)

    def function(self, i: int, parameter: str = "x") -> Function:
        """Function ``i`` as a pmkit PMNF function."""
        terms = tuple(Term(float(c), (Factor(parameter, *TERMS[t]),))
                      for c, t in zip(self.coefficients[i], self.terms[i], strict=True) if t >= 0)
        return Function((parameter,), float(self.constant[i]), terms)


def generate(case: str, n: int, rng: np.random.Generator) -> SyntheticFunctions:
    """``n`` random functions of one of the seven ``CASES`` (by label)."""
    spec = {label: (cls, k) for label, cls, k in CASES}
    if case not in spec:
        raise ValueError(f"unknown case {case!r}; choose one of {[c[0] for c in CASES]}")
    cls, k = spec[case]
    terms = np.full((n, 2), -1, dtype=np.int64)
    coefs = np.zeros((n, 2))
    if cls is not None:
        lo, hi = _CLASS_RANGES[cls]
        terms[:, 0] = rng.integers(lo, hi, n)
        coefs[:, 0] = coefficients(rng, n)
        if k == 2:
            # the second term: any term of this class or a simpler one, other than the first
            pool = hi - 1
            second = rng.integers(0, pool, n)
            terms[:, 1] = np.where(second >= terms[:, 0], second + 1, second)
            coefs[:, 1] = coefficients(rng, n)
    return SyntheticFunctions(case, coefficients(rng, n), coefs, terms)


def add_noise(values: np.ndarray, rng: np.random.Generator, noise: float = NOISE,
              repetitions: int = 1) -> np.ndarray:
    """(series, points, repetitions): each repetition is the value times ``1 + U[-noise, noise)``."""
    values = np.asarray(values, dtype=float)
    factor = 1.0 + rng.uniform(-noise, noise, (*values.shape, repetitions))
    return values[..., None] * factor


def two_parameter_values(n: int, grid: tuple[np.ndarray, np.ndarray], rng: np.random.Generator
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Points (25 × 2 for a 5×5 grid) and exact values (n × points) of random two-parameter
    functions: half ``c0 + c1·f(p)·g(q)``, half ``c0 + c1·f(p) + c2·g(q)``, f and g common or rare."""
    p, q = np.meshgrid(grid[0], grid[1], indexing="ij")
    points = np.column_stack([p.ravel(), q.ravel()])
    pool = len(COMMON) + len(RARE)
    tp, tq = rng.integers(0, pool, n), rng.integers(0, pool, n)
    c0, c1, c2 = coefficients(rng, n), coefficients(rng, n), coefficients(rng, n)
    fp = np.empty((n, len(points)))
    fq = np.empty((n, len(points)))
    for t in range(pool):
        fp[tp == t] = term_basis(t, points[:, 0])
        fq[tq == t] = term_basis(t, points[:, 1])
    multiplicative = (np.arange(n) % 2 == 0)[:, None]
    values = np.where(multiplicative, c0[:, None] + c1[:, None] * fp * fq,
                      c0[:, None] + c1[:, None] * fp + c2[:, None] * fq)
    return points, values


def speed_batch(n: int, parameters: int, seed: int = 7) -> SeriesBatch:
    """``n`` noisy synthetic series: one parameter at x = 2..32, or two on the 5×5 grid 2..32 × 2..32."""
    rng = np.random.default_rng(seed)
    if parameters == 1:
        x = X_SETS["2..32"]
        half = n // 2
        exact = np.concatenate([generate("common, 1 term", half, rng).evaluate(x),
                                generate("rare, 1 term", n - half, rng).evaluate(x)])
        points = x[:, None]
        names: tuple[str, ...] = ("x",)
    else:
        grid = X_SETS["2..32"]
        points, exact = two_parameter_values(n, (grid, grid), rng)
        names = ("p", "q")
    values = add_noise(exact, rng)
    labels = [f"s{i}" for i in range(n)]
    return SeriesBatch(names, points, values, labels, ["time"] * n)
