"""Accuracy protocol that chose the default ``snap_tolerance`` of the amdahl modeler.

Synthetic strong-scaling series T(p) = a/p + b·p^c + d with simple true exponents c, measured at
p = 2 … 128 with Gaussian noise (relative, per repetition, 5 repetitions, mean taken), are fitted
once; the fitted c is then snapped with each tolerance.  Printed per tolerance: the share of series
whose exponent is recovered exactly, and the median relative error of the prediction at p = 1024.
Run: ``python plugins/pmkit-amdahl/bench/snap_tolerance.py [series]``.
"""

from __future__ import annotations

import sys
from fractions import Fraction

import numpy as np
from pmkit_amdahl.fitting import fit_amdahl, linear_coefficients
from pmkit_amdahl.modeler import simplest_exponent, smape

TOLERANCES = (0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0)
EXPONENTS = (Fraction(1, 3), Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2))
NOISE = (0.01, 0.03, 0.05)


def main(series: int = 150) -> None:
    rng = np.random.default_rng(1)
    p = 2.0 ** np.arange(1, 8)
    target = 1024.0
    options = {"c_min": -1.0, "c_max": 3.0, "nonnegative": True, "max_denominator": 100}
    exact = {t: 0 for t in TOLERANCES}
    errors: dict[float, list[float]] = {t: [] for t in TOLERANCES}
    for k in range(series):
        c_true = EXPONENTS[k % len(EXPONENTS)]
        noise = NOISE[k % len(NOISE)]
        a, d = rng.uniform(10, 200), rng.uniform(0.1, 5)
        b = rng.uniform(0.2, 2) * (a / 64) / 64 ** float(c_true)  # the p^c part matters around p = 64
        law = a / p + b * p ** float(c_true) + d
        y = np.mean(law[:, None] * (1 + noise * rng.standard_normal((len(p), 5))), axis=1)
        truth = a / target + b * target ** float(c_true) + d
        fit = fit_amdahl(p, y)
        best = smape(y, fit.d + fit.a / p + fit.b * p**fit.c)
        for tolerance in TOLERANCES:
            c = simplest_exponent(p, y, fit.c, best, {**options, "snap_tolerance": tolerance})
            ca, cb, cd = linear_coefficients(p, y, float(c), nonnegative=True)
            predicted = ca / target + cb * target ** float(c) + cd
            exact[tolerance] += c == c_true
            errors[tolerance].append(abs(predicted - truth) / truth)
    print(f"{series} series, p = 2..128, noise {NOISE}, exponents {[str(e) for e in EXPONENTS]}")
    print("tolerance  exact c  median |error| at p=1024  90th percentile")
    for tolerance in TOLERANCES:
        e = np.array(errors[tolerance])
        print(f"{tolerance:9.2f}  {exact[tolerance] / series:7.0%}  {np.median(e):25.1%}  {np.percentile(e, 90):15.1%}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 150)
