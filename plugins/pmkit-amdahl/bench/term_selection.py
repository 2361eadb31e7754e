"""Accuracy protocol that chose how the amdahl modeler decides which terms of a/p + b·p^c + d to keep.

Five kinds of synthetic series, measured at p = 2 … 128 (5 repetitions, relative Gaussian noise,
mean taken): the whole law (a/p + b·p^c + d, p^c mattering from p = 64, and U-shaped: b·p^c reaches a/p
at p = 16), strong scaling with a serial part (a/p + d), growth
without a parallel part (b·p^c + d) and a constant (d).  Each series is fitted once (the full law,
c snapped with the default tolerance); then every rule picks the nested law to keep, and a, b, d are
refitted for it.  Printed per kind and rule: the share of series whose law has the true terms
(and, where there is a p^c term, the true exponent), and the median and 90th percentile of the
relative prediction error at p = 1024.
Run: ``python plugins/pmkit-amdahl/bench/term_selection.py [series per kind]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from pmkit_amdahl.fitting import (
    EXACT,
    candidate_columns,
    f_test_pvalue,
    fit_amdahl,
    free_coefficients,
    select_columns,
    weighted_rss,
)
from pmkit_amdahl.modeler import SNAP_TOLERANCE, simplest_exponent, smape

EXPONENTS = (Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2))
NOISE = (0.0, 0.01, 0.03, 0.05)
KINDS = ("a/p + b·p^c + d", "U-shaped", "a/p + d", "b·p^c + d", "d")
TRUE_COLUMNS = {"a/p + b·p^c + d": (0, 1, 2), "U-shaped": (0, 1, 2), "a/p + d": (0, 2), "b·p^c + d": (1, 2),
                "d": (2,)}
CROSSING = {"U-shaped": 16.0}
"""Where b·p^c reaches a/p (default 64: the p^c part matters at the largest points only)."""
P = 2.0 ** np.arange(1, 8)
TARGET = 1024.0


def log_likelihood_term(rss: float, n: int) -> float:
    return n * float(np.log(max(rss / n, EXACT)))


def aic(rss: float, n: int, k: int) -> float:
    return log_likelihood_term(rss, n) + 2 * k


def aicc(rss: float, n: int, k: int) -> float:
    return aic(rss, n, k) + (2 * k * (k + 1) / (n - k - 1) if n - k - 1 > 0 else np.inf)


def bic(rss: float, n: int, k: int) -> float:
    return log_likelihood_term(rss, n) + k * float(np.log(n))


def by_criterion(criterion: Callable[[float, int, int], float]) -> Callable:
    """Pick the candidate law with the lowest ``criterion`` (fewer columns on ties)."""
    def choose(fits: dict[tuple[int, ...], float], y: np.ndarray, c: float) -> tuple[int, ...]:
        return min(fits, key=lambda cols: (criterion(fits[cols], len(y), free_coefficients(cols)), len(cols)))
    return choose


def forward(significance: float) -> Callable:
    """Forward selection from d: add the term that lowers the RSS most while its F test is significant."""
    def choose(fits: dict[tuple[int, ...], float], y: np.ndarray, c: float) -> tuple[int, ...]:
        current = (2,)
        while True:
            larger = [cols for cols in fits if set(current) < set(cols) and len(cols) == len(current) + 1]
            if not larger:
                return current
            best = min(larger, key=lambda cols: fits[cols])
            if f_test_pvalue(fits[current], free_coefficients(current), fits[best], free_coefficients(best),
                             len(y)) >= significance:
                return current
            current = best
    return choose


def against_whole(significance: float) -> Callable:
    """The simplest law not significantly worse than the whole law (F test)."""
    def choose(fits: dict[tuple[int, ...], float], y: np.ndarray, c: float) -> tuple[int, ...]:
        whole = max(fits, key=len)
        for cols in sorted(fits, key=lambda cols: (free_coefficients(cols), fits[cols])):
            if cols == whole or f_test_pvalue(fits[cols], free_coefficients(cols), fits[whole],
                                              free_coefficients(whole), len(y)) >= significance:
                return cols
        return whole
    return choose


def backward(significance: float) -> Callable:
    """The modeler's rule (:func:`pmkit_amdahl.fitting.select_columns`): backward elimination by F test."""
    def choose(fits: dict[tuple[int, ...], float], y: np.ndarray, c: float) -> tuple[int, ...]:
        return select_columns(P, y, c, nonnegative=True, significance=significance)
    return choose


RULES: dict[str, Callable] = {
    "none (whole law)": lambda fits, y, c: max(fits, key=len),
    "AIC": by_criterion(aic),
    "AICc": by_criterion(aicc),
    "BIC": by_criterion(bic),
    "F forward 0.05": forward(0.05),
    "F vs whole 0.05": against_whole(0.05),
    "F backward 0.01": backward(0.01),
    "F backward 0.05": backward(0.05),
}


def series(kind: str, rng: np.random.Generator, k: int) -> tuple[np.ndarray, float, Fraction | None]:
    """One noisy series of ``kind``: (mean of the repetitions, true value at TARGET, true exponent)."""
    noise = NOISE[k % len(NOISE)]
    c = EXPONENTS[(k // len(NOISE)) % len(EXPONENTS)]
    a = rng.uniform(10, 200) if "a/p" in kind or kind == "U-shaped" else 0.0
    d = rng.uniform(0.1, 5)
    b = 0.0
    if "b·p^c" in kind or kind == "U-shaped":
        crossing = CROSSING.get(kind, 64.0)
        scale = a / crossing if a else d
        b = rng.uniform(0.2, 2) * scale / crossing ** float(c)
    law = a / P + b * P ** float(c) + d
    y = np.mean(law[:, None] * (1 + noise * rng.standard_normal((len(P), 5))), axis=1)
    truth = a / TARGET + b * TARGET ** float(c) + d
    return y, truth, c if b else None


def main(per_kind: int = 200) -> None:
    rng = np.random.default_rng(11)
    options = {"c_min": -1.0, "c_max": 3.0, "nonnegative": True, "max_denominator": 100,
               "snap_tolerance": SNAP_TOLERANCE}
    right = {(kind, rule): 0 for kind in KINDS for rule in RULES}
    errors: dict[tuple[str, str], list[float]] = {(kind, rule): [] for kind in KINDS for rule in RULES}
    for kind in KINDS:
        for k in range(per_kind):
            y, truth, c_true = series(kind, rng, k)
            fit = fit_amdahl(P, y)
            c = simplest_exponent(P, y, fit.c, smape(y, fit.d + fit.a / P + fit.b * P**fit.c), options)
            fits, coefficients = {}, {}
            for columns in candidate_columns(float(c)):
                coefficients[columns], fits[columns] = weighted_rss(P, y, float(c), columns, nonnegative=True)
            for rule, choose in RULES.items():
                columns = choose(fits, y, float(c))
                a, b, d = coefficients[columns]
                predicted = a / TARGET + b * TARGET ** float(c) + d
                has_b = 1 in columns and b != 0
                kept = tuple(i for i, v in zip((0, 1, 2), (a, b, d), strict=True) if v != 0 or i == 2)
                right[kind, rule] += kept == TRUE_COLUMNS[kind] and (not has_b or c == c_true)
                errors[kind, rule].append(abs(predicted - truth) / truth)
    print(f"{per_kind} series per kind, p = {P[0]:g}..{P[-1]:g}, 5 repetitions, noise {NOISE}, exponents "
          f"{[str(e) for e in EXPONENTS]}; prediction at p = {TARGET:g}")
    print(f"{'true law':16} {'rule':17} {'right law':>9} {'median |error|':>14} {'90th pct':>9}")
    for kind in KINDS:
        for rule in RULES:
            e = np.array(errors[kind, rule])
            print(f"{kind:16} {rule:17} {right[kind, rule] / per_kind:9.0%} {np.median(e):14.1%} "
                  f"{np.percentile(e, 90):9.1%}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
