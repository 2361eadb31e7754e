"""The protocols' significance figures (bench/multistudy.py): McNemar's exact test for a shortfall
against Extra-P and the Clopper–Pearson interval of a case's coverage, against scipy's references."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
multistudy = pytest.importorskip("multistudy")


@pytest.mark.parametrize(("first", "second"), [(0, 0), (0, 1), (2, 4), (7, 10), (0, 10), (30, 5), (50, 50)])
def test_mcnemar_is_the_exact_binomial_test_of_the_discordant_pairs(first: int, second: int) -> None:
    expected = 1.0 if first + second == 0 else binomtest(first, first + second, 0.5).pvalue
    assert multistudy.mcnemar(first, second) == pytest.approx(expected, rel=1e-12)
    assert multistudy.mcnemar(first, second) == multistudy.mcnemar(second, first)


def test_mcnemar_rejects_a_lopsided_split() -> None:
    assert multistudy.mcnemar(0, 10) == pytest.approx(2 / 1024)
    assert multistudy.mcnemar(2, 4) > 0.5


@pytest.mark.parametrize(("covered", "n"), [(0, 300), (270, 300), (235, 300), (300, 300), (5, 12)])
def test_coverage_band_is_clopper_pearson(covered: int, n: int) -> None:
    low, high = multistudy.coverage_band(covered, n)
    expected = binomtest(covered, n).proportion_ci(0.95, method="exact")
    assert (low, high) == pytest.approx((100 * expected.low, 100 * expected.high), abs=1e-9)
    assert low <= 100 * covered / n <= high


def test_discordant_counts_only_the_series_one_tool_got_right() -> None:
    def scores(params: list[bool]) -> multistudy.Scores:
        flags = np.array(params)
        return multistudy.Scores(flags, flags, ~flags, ~flags, flags, np.full(flags.size, np.nan), flags)

    mine, theirs = scores([True, True, False, False]), scores([True, False, True, True])
    assert mine.discordant(theirs) == {"params": (1, 2), "lead": (1, 2), "within": (2, 1)}


def test_rates_count_the_warned_predictions_among_those_off_by_two() -> None:
    off2 = np.array([True, True, False, False, False, False])
    warned = np.array([True, False, True, False, False, False])
    flags = np.ones(6, dtype=bool)
    rates = multistudy.Scores(flags, flags, flags, off2, flags, np.full(6, 3.0), warned).rates()
    assert rates["n_off2"] == 2
    assert rates["warned_off2"] == pytest.approx(50.0)
    assert rates["warned_fine"] == pytest.approx(25.0)
