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


pool_seeds = pytest.importorskip("pool_seeds")


def _random_scores(rng: np.random.Generator, n: int) -> multistudy.Scores:
    def flags(p: float) -> np.ndarray:
        return rng.random(n) < p

    width = np.where(flags(0.9), rng.uniform(1.0, 10.0, n), np.nan)
    return multistudy.Scores(flags(0.9), flags(0.7), flags(0.6), flags(0.1), flags(0.9), width, flags(0.3))


def _run(seed: int, mine: multistudy.Scores, theirs: multistudy.Scores) -> dict:
    case = {"pmkit": mine.rates(), "Extra-P Basic": theirs.rates()}
    return {"per_case": mine.params.size, "seed": seed, "options": {}, "rates": {"grid": {"case": case}},
            "discordant": {"grid": {"case": {"Extra-P Basic": mine.discordant(theirs)}}}}


def test_pooled_seeds_score_as_one_run_of_all_their_series() -> None:
    rng = np.random.default_rng(3)
    parts = [(_random_scores(rng, n), _random_scores(rng, n)) for n in (300, 200)]
    runs = [_run(seed, *pair) for seed, pair in enumerate(parts)]
    whole = [multistudy.Scores(*(np.concatenate([getattr(pair[k], f) for pair in parts])
                                 for f in multistudy.Scores.__dataclass_fields__)) for k in (0, 1)]
    pooled = pool_seeds.pool_rates(runs)["grid"]["case"]
    expected = whole[0].rates()
    for key in ("params", "lead", "within", "off2", "covered", "intervals", "n_off2", "warned_off2", "warned_fine"):
        assert pooled["pmkit"][key] == pytest.approx(expected[key], rel=1e-12), key
    assert pooled["Extra-P Basic"]["params"] == pytest.approx(whole[1].rates()["params"], rel=1e-12)
    discord = pool_seeds.pool_discordant(runs)["grid"]["case"]["Extra-P Basic"]
    assert discord == whole[0].discordant(whole[1])


def test_pooling_refuses_a_seed_twice_and_other_protocols() -> None:
    rng = np.random.default_rng(4)
    pair = (_random_scores(rng, 50), _random_scores(rng, 50))
    assert pool_seeds.check([_run(1, *pair), _run(2, *pair)]) is None
    assert "twice" in pool_seeds.check([_run(1, *pair), _run(1, *pair)])
    other = _run(2, *pair)
    other["rates"] = {"grid": {"another case": other["rates"]["grid"]["case"]}}
    assert "different protocols" in pool_seeds.check([_run(1, *pair), other])
