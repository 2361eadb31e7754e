"""The amdahl modeler: recovery of a, b, c, d, exact exponents, failures reported as notes, options."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pmkit_amdahl
import pytest
from pmkit_amdahl import AmdahlModeler

import pmkit
from pmkit import SeriesBatch, UsageError
from pmkit.testing.plugins import check_modeler, sample_experiment

P = 2.0 ** np.arange(0, 11)  # 1 … 1024 processes


def law(a: float, b: float, c: float, d: float, p: np.ndarray = P) -> np.ndarray:
    return a / p + b * p**c + d


def batch_of(*rows: np.ndarray, p: np.ndarray = P) -> SeriesBatch:
    return SeriesBatch(("p",), p[:, None], np.array(rows), [f"main->s{i}" for i in range(len(rows))],
                       ["time"] * len(rows))


def coefficients(function: pmkit.Function) -> tuple[float, float, Fraction | None, float]:
    """(a, b, c, d) read back from the PMNF function the modeler returned."""
    a = b = 0.0
    c = None
    for term in function.terms:
        exponent, log_exponent = term.exponent_of("p")
        assert log_exponent == 0
        if exponent == -1:
            a = term.coefficient
        else:
            b, c = term.coefficient, exponent
    return a, b, c, function.constant


@pytest.mark.parametrize(("a", "b", "c", "d"), [
    (100.0, 0.05, Fraction(3, 2), 2.0),
    (50.0, 0.3, Fraction(37, 100), 0.5),
    (10.0, 2.0, Fraction(-1, 2), 1.0),
    (1e-3, 1e-6, Fraction(2), 1e-4),
    (3e4, 40.0, Fraction(2, 3), 0.0),
])
def test_recovers_a_b_c_d_from_noise_free_data(a: float, b: float, c: Fraction, d: float) -> None:
    model = AmdahlModeler().model(batch_of(law(a, b, float(c), d)))[0]
    assert model.ok, model.notes
    got_a, got_b, got_c, got_d = coefficients(model.function)
    assert got_c == c  # exact Fraction, not a float near it
    assert got_a == pytest.approx(a, rel=1e-6)
    assert got_b == pytest.approx(b, rel=1e-6)
    assert got_d == pytest.approx(d, rel=1e-6, abs=1e-9 * a)
    assert model.quality.smape < 1e-6
    assert model.modeler == "amdahl"
    assert model.function.evaluate(np.array([4096.0]))[0] == pytest.approx(law(a, b, float(c), d, 4096.0), rel=1e-6)
    assert any(str(c) in note for note in model.notes)


def test_fitted_exponent_is_written_as_a_small_fraction_and_the_function_is_refitted_for_it() -> None:
    rng = np.random.default_rng(7)
    y = law(200.0, 0.02, 1.5, 3.0) * (1 + 0.02 * rng.standard_normal(len(P)))
    model = AmdahlModeler().model(batch_of(y))[0]
    _, _, c, _ = coefficients(model.function)
    assert c is not None and c.denominator <= 100
    assert abs(float(c) - 1.5) < 0.15
    # The reported quality belongs to the printed function, not to the unrounded fit.
    fitted = model.function.evaluate(P[:, None])
    assert model.quality.rss == pytest.approx(float(np.sum((fitted - y) ** 2)), rel=1e-9)
    assert any("written as" in note for note in model.notes)


def test_a_plain_a_over_p_plus_d_law_has_no_p_to_the_c_term() -> None:
    model = AmdahlModeler().model(batch_of(law(100.0, 0.0, 1.0, 5.0)))[0]
    a, b, c, d = coefficients(model.function)
    assert (a, d) == (pytest.approx(100.0), pytest.approx(5.0))
    assert b == 0 and c is None


def test_non_convergence_is_a_model_without_function_and_a_note() -> None:
    models = AmdahlModeler().model(batch_of(law(100.0, 0.05, 1.5, 2.0), law(10.0, 1.0, 0.5, 1.0)),
                                   max_evaluations=1)
    assert len(models) == 2
    for model in models:
        assert model.function is None and not model.ok
        assert any("did not converge" in note and "maximum number of function evaluations" in note
                   for note in model.notes)
    assert models[1].callpath == "main->s1"


def test_degenerate_series_get_notes_not_exceptions() -> None:
    nan = float("nan")
    p = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    models = AmdahlModeler().model(batch_of(
        np.array([1.0, nan, nan, nan, 2.0]),
        np.full(5, nan),
        np.zeros(5),
        np.array([-1.0, -2.0, -3.0, -4.0, -5.0]),
        p=p))
    assert models[0].function is None and "too few points" in models[0].notes[-1]
    assert models[1].function is None and "5 of 5 points have no value" in models[1].notes
    assert models[2].function is not None and models[2].function.evaluate(np.array([64.0]))[0] == 0
    assert any("negative" in note for note in models[3].notes)


def test_points_where_p_is_not_positive_are_left_out_with_a_note() -> None:
    p = np.array([0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    y = law(100.0, 0.05, 1.5, 2.0, np.where(p > 0, p, 1.0))
    model = AmdahlModeler().model(batch_of(y, p=p))[0]
    assert model.ok and model.n_points == 6
    assert any("p <= 0 left out" in note for note in model.notes)


def test_passes_pmkit_modeler_contract_check() -> None:
    check_modeler(AmdahlModeler())
    check_modeler(AmdahlModeler(), nonnegative="false", starts="2")


def test_multi_parameter_batch_uses_p_when_the_others_are_constant() -> None:
    experiment = sample_experiment({"main": lambda p, size: 100.0 / p + 0.1 * p + size / 10},
                                   points={"size": (30.0,), "p": tuple(P)})
    model = AmdahlModeler().model(pmkit.SeriesBatch.from_experiment(experiment))[0]
    assert model.function.parameters == ("size", "p")
    assert model.function.evaluate(np.array([[30.0, 64.0]]))[0] == pytest.approx(100 / 64 + 6.4 + 3.0, rel=1e-6)
    assert any("size is constant (30)" in note for note in model.notes)


def test_multi_parameter_batch_varying_in_another_parameter_is_refused_clearly() -> None:
    experiment = sample_experiment({"main": lambda p, size: size / p + 0.1 * p},
                                   points={"p": (2.0, 4.0, 8.0, 16.0), "size": (10.0, 20.0)})
    with pytest.raises(UsageError, match=r"T\(p\) of one parameter.*also vary in size.*-O parameter=NAME"):
        AmdahlModeler().model(pmkit.SeriesBatch.from_experiment(experiment))
    with pytest.raises(UsageError, match="no parameter 'q'"):
        AmdahlModeler().model(pmkit.SeriesBatch.from_experiment(experiment), parameter="q")


def test_bad_options_are_usage_errors() -> None:
    batch = batch_of(law(1.0, 1.0, 1.0, 1.0))
    with pytest.raises(UsageError, match="c_min"):
        AmdahlModeler().model(batch, c_min=2.0, c_max=1.0)
    with pytest.raises(UsageError, match="no option bogus"):
        AmdahlModeler().model(batch, bogus=1)


def test_works_through_the_sdk_with_an_isolated_registry(pmkit_registry, pmkit_sample_experiment) -> None:
    registry = pmkit_registry(pmkit_amdahl)
    assert "amdahl" in registry.names("modeler") and "refining" in registry.names("modeler")
    models = pmkit.model(pmkit_sample_experiment, "amdahl", c_max="2")
    assert len(models) == len(pmkit_sample_experiment.callpaths)
    compute = models.get("main->compute", "time")
    assert compute is not None and compute.function.pretty_text() == "1.5 + 100·p^(-1)"
    assert compute.options["c_max"] == 2.0


P7 = 2.0 ** np.arange(1, 8)  # 2 … 128


def noisy(exact: np.ndarray, noise: float, seed: int) -> np.ndarray:
    return exact * (1 + noise * np.random.default_rng(seed).standard_normal(exact.shape))


@pytest.mark.parametrize("seed", range(8))
def test_a_noisy_constant_is_modelled_as_a_constant(seed: int) -> None:
    model = AmdahlModeler().model(batch_of(noisy(np.full(7, 0.5), 0.02, seed), p=P7))[0]
    assert model.function.is_constant, model.function.pretty_text()
    assert model.function.constant == pytest.approx(0.5, rel=0.05)
    assert abs(model.quality.adjusted_r2) < 0.01  # one coefficient, near the mean: it explains no variation
    assert any("dropped: not significant" in note for note in model.notes)


def test_strong_scaling_with_a_serial_part_has_no_p_to_the_c_term() -> None:
    model = AmdahlModeler().model(batch_of(noisy(law(80.0, 0.0, 1.0, 2.0, P7), 0.02, 4), p=P7))[0]
    a, b, c, d = coefficients(model.function)
    assert b == 0 and c is None
    assert a == pytest.approx(80.0, rel=0.1) and d == pytest.approx(2.0, rel=0.2)


def test_a_u_shaped_run_time_keeps_both_terms() -> None:
    y = noisy(law(120.0, 0.02, 1.5, 1.0, P7), 0.01, 5)
    a, b, c, _ = coefficients(AmdahlModeler().model(batch_of(y, p=P7))[0].function)
    assert a > 0 and b > 0 and c == Fraction(3, 2)


def test_significance_one_keeps_every_term_that_lowers_the_error() -> None:
    y = noisy(np.full(7, 0.5), 0.02, 1)
    kept = AmdahlModeler().model(batch_of(y, p=P7), significance=1.0)[0]
    assert not kept.function.is_constant
    with pytest.raises(UsageError, match="significance"):
        AmdahlModeler().model(batch_of(y, p=P7), significance=0.0)
