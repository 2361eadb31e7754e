"""Calibration (paper 004 §4–8): maximum-likelihood fits, χ² critical values, t_max, T_f, the reference file,
samples from traces and CSV, and `pmkit calibrate`."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from pmkit.calibration.distributions import (
    chi2_critical,
    class_counts,
    error_classes,
    fit_model,
    fit_sample,
    wilson_hilferty,
)
from pmkit.calibration.reference import SCHEMA, Reference, calibrate, interpolate
from pmkit.calibration.samples import csv_samples
from pmkit.errors import InputError

WINDOW = 1e-7


def _poisson_sample(n: int = 400, mean: float = 4.0, seed: int = 1) -> np.ndarray:
    return 2e-6 + WINDOW * np.random.default_rng(seed).poisson(mean, n)


def _geometric_sample(n: int = 400, mean: float = 3.0, seed: int = 2) -> np.ndarray:
    return 2e-6 + WINDOW * (np.random.default_rng(seed).geometric(1 / (1 + mean), n) - 1)


# ---------------------------------------------------------------- fits and tests


def test_closed_form_maximum_likelihood_matches_a_numeric_maximum():
    from scipy.optimize import minimize_scalar
    from scipy.stats import poisson

    errors = _geometric_sample() - 2e-6
    counts = class_counts(errors, WINDOW)
    k = np.arange(len(counts))
    classes = error_classes(errors, WINDOW)
    poisson_fit = fit_model("poisson", classes, WINDOW, 0.95, 0.05)
    numeric = minimize_scalar(lambda lam: -np.sum(counts * poisson.logpmf(k, lam)), bounds=(0.01, 50),
                              method="bounded")
    assert poisson_fit.parameter == pytest.approx(numeric.x, rel=1e-4)
    exponential_fit = fit_model("exponential", classes, WINDOW, 0.95, 0.05)

    def negative_log_likelihood(rate: float) -> float:  # eq. 6: p_k = e^(−λki)(1 − e^(−λi))
        return -float(np.sum(counts * (-rate * k * WINDOW + np.log1p(-np.exp(-rate * WINDOW)))))

    numeric = minimize_scalar(negative_log_likelihood, bounds=(1e4, 1e9), method="bounded",
                              options={"xatol": 1.0})
    assert exponential_fit.parameter == pytest.approx(numeric.x, rel=1e-4)


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1])
def test_wilson_hilferty_agrees_with_the_exact_critical_value_above_30_classes(alpha):
    for dof in (31, 40, 60, 100, 250, 1000):
        exact = chi2_critical(dof, alpha, "exact")
        assert wilson_hilferty(dof, alpha) == pytest.approx(exact, rel=2e-3), dof
        assert chi2_critical(dof, alpha, "paper") == wilson_hilferty(dof, alpha)
    assert chi2_critical(10, 0.05, "paper") == chi2_critical(10, 0.05, "exact") == pytest.approx(18.307, abs=1e-3)
    with pytest.raises(ValueError):
        chi2_critical(10, 0.05, "table")


def test_poisson_errors_keep_the_poisson_model_and_its_quantile():
    sample = _poisson_sample()
    fit = fit_sample(sample, q_max=0.9, window=WINDOW)
    assert fit.model == "poisson" and fit.chosen.accepted
    from scipy.stats import poisson

    lam = fit.chosen.parameter
    assert lam == pytest.approx(np.mean(np.round((sample - sample.min()) / WINDOW)), rel=1e-9)
    assert fit.t_max == pytest.approx(sample.min() + (poisson.ppf(0.9, lam) + 1) * WINDOW)
    assert fit.t_min == sample.min() and fit.n == len(sample)


def test_geometric_errors_keep_the_exponential_model():
    fit = fit_sample(_geometric_sample(), q_max=0.95, window=WINDOW)
    assert fit.model == "exponential" and fit.chosen.accepted
    rate = fit.chosen.parameter
    assert fit.t_max == pytest.approx(fit.t_min - math.log(0.05) / rate)


def test_rejected_models_fall_back_to_the_empirical_quantile_and_say_so():
    rng = np.random.default_rng(3)
    sample = 1e-6 * (1 + rng.pareto(1.2, 500))  # heavy tail, neither model fits
    fit = fit_sample(sample, q_max=0.9, window=WINDOW)
    assert fit.model == "empirical"
    assert fit.t_max == pytest.approx(np.quantile(sample, 0.9))
    assert all(f.accepted is False for f in fit.fits)
    assert any("both models rejected" in note for note in fit.notes)


def test_degenerate_samples_get_a_stated_result():
    small = fit_sample(np.array([1e-6, 2e-6, 3e-6]))
    assert small.model == "empirical" and "only 3 calls" in small.notes[0]
    constant = fit_sample(np.full(50, 1e-6), window=WINDOW)
    assert constant.model == "constant" and constant.t_max == pytest.approx(1e-6 + WINDOW)
    empty = fit_sample(np.array([np.nan]))
    assert empty.n == 0 and math.isnan(empty.t_max)
    with pytest.raises(ValueError):
        fit_sample(_poisson_sample(), q_max=1.0)


def test_a_fine_window_and_far_outliers_stay_cheap():
    """A 1 ns window under 20 ms outliers would be 2·10⁷ classes (minutes of pooling); only the classes
    that expect calls are histogrammed, the rest is one tail class."""
    sample = np.concatenate([_poisson_sample(1000), [0.02, 0.015]])
    fit = fit_sample(sample, window=1e-9)
    assert fit.model == "empirical" and all(f.dof < 1000 for f in fit.fits)
    pooled = fit_sample(sample, window=WINDOW)
    assert pooled.fits[0].chi2 > pooled.fits[0].critical  # the outliers land in the tail class and reject


def test_t_max_is_stable_with_sample_size():
    """The paper's claim (§9): from about 200 calls on, t_max hardly changes with more."""
    sample = _poisson_sample(3000, seed=9)
    values = [fit_sample(sample[:n], window=WINDOW).t_max for n in range(200, 3001, 200)]
    assert max(values) - min(values) <= 2 * WINDOW


# ---------------------------------------------------------------- T_f and the reference


def test_interpolation_is_bilinear_and_clamps():
    p = np.array([2, 2, 4, 4.0])
    b = np.array([0, 1000, 0, 1000.0])
    t = np.array([1.0, 3.0, 2.0, 6.0])
    values, clamped = interpolate(p, b, t, np.array([2, 4, 3, 3, 8, 2]), np.array([500, 500, 0, 500, 500, 5000.0]))
    np.testing.assert_allclose(values, [2.0, 4.0, 1.5, 3.0, 4.0, 3.0])
    assert clamped.tolist() == [False, False, False, False, True, True]
    exact, _ = interpolate(p, b, t, p, b)
    np.testing.assert_allclose(exact, t)
    logged, _ = interpolate(p, b, t, np.array([2.0]), np.array([31.0]), "log")
    assert logged[0] == pytest.approx(1 + 2 * 5 / math.log2(1001))


def test_reference_round_trips_and_rejects_other_files(tmp_path):
    samples = [("MPI_Send", 2, 8.0, _poisson_sample()), ("MPI_Send", 2, 1024.0, _poisson_sample(seed=4) + 1e-6),
               ("MPI_Allreduce", 4, 8.0, _geometric_sample())]
    reference = calibrate(samples, window=WINDOW, source="bench")
    path = tmp_path / "ref.json"
    reference.save(path)
    document = json.loads(path.read_text())
    assert document["schema"] == SCHEMA and len(document["groups"]) == 3
    assert {g["model"] for g in document["groups"]} <= {"poisson", "exponential", "empirical"}
    loaded = Reference.load(path)
    assert [(g.op, g.nprocs, g.nbytes, g.t_max) for g in loaded.groups] == \
        [(g.op, g.nprocs, g.nbytes, g.t_max) for g in reference.groups]
    value, clamped = loaded.t_max("MPI_Send", 2, 516.0)
    low, high = (g.t_max for g in loaded.groups if g.op == "MPI_Send")
    assert value == pytest.approx((low + high) / 2) and not clamped
    assert np.isnan(loaded.t_max("MPI_Bcast", 2, 8.0)[0])
    (tmp_path / "other.json").write_text('{"schema": "pmkit.models/1"}')
    with pytest.raises(InputError, match="not a pmkit calibration reference"):
        Reference.load(tmp_path / "other.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(InputError, match=r"broken\.json"):
        Reference.load(tmp_path / "broken.json")
    with pytest.raises(InputError, match="no such"):
        Reference.load(tmp_path / "missing.json")


def test_csv_samples_and_their_errors(tmp_path):
    good = tmp_path / "sample.csv"
    good.write_text("op,nprocs,bytes,duration\n" + "".join(f"MPI_Send,2,8,{float(t)!r}\n" for t in _poisson_sample(30))
                    + "MPI_Recv,2,8,1e-6\n")
    samples = csv_samples(good)
    assert [(op, p, b, len(t)) for op, p, b, t in samples] == [("MPI_Recv", 2, 8.0, 1), ("MPI_Send", 2, 8.0, 30)]
    bad = tmp_path / "bad.csv"
    bad.write_text("op,nprocs,bytes,duration\nMPI_Send,two,8,1e-6\n")
    with pytest.raises(InputError, match="line 2"):
        csv_samples(bad)
    bad.write_text("a,b\n")
    with pytest.raises(InputError, match="header"):
        csv_samples(bad)
    bad.write_text("op,nprocs,bytes,duration\nMPI_Send,2,8,-1\n")
    with pytest.raises(InputError, match="duration"):
        csv_samples(bad)


# ---------------------------------------------------------------- from traces, and the command


def test_calibrate_command_on_a_benchmark_trace(tmp_path, capsys):
    pytest.importorskip("otf2")
    from pmkit.cli import main
    from pmkit.testing.trace_programs import calibration_trace

    trace = calibration_trace(tmp_path / "calib.p2.r1", sizes=(8, 1024), repetitions=200)
    out = tmp_path / "ref.json"
    assert main(["calibrate", str(trace), "--callpath-prefix", "calib_", "--window", "1e-7", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "MPI_Allreduce" in captured.out and "poisson" in captured.out and "wrote" in captured.err
    assert "─" in captured.out and not set("┏━┃│╭") & set(captured.out)  # the other views' style: one rule, no edge
    reference = Reference.load(out)
    assert {(g.op, g.nprocs, g.nbytes) for g in reference.groups} == {
        (op, 2, b) for op in ("MPI_Send", "MPI_Recv", "MPI_Allreduce") for b in (8.0, 1024.0)}
    assert sum(g.fit.model == "poisson" for g in reference.groups) >= 5
    assert main(["calibrate", str(trace), "--region", "MPI_Allreduce", "--json", "--window", "1e-7"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {g["op"] for g in document["groups"]} == {"MPI_Allreduce"}
    assert document["settings"]["window"] == 1e-7 and document["settings"]["q_max"] == 0.95
    assert main(["calibrate", str(trace), "--callpath-prefix", "nothing_"]) == 2
    assert "no communication calls" in capsys.readouterr().err
    assert main(["calibrate", str(trace), "--q-max", "1"]) == 2
    capsys.readouterr()
    (tmp_path / "other.p2.r1").mkdir()
    (tmp_path / "other.p2.r1" / "traces.otf2").write_text("not a trace")
    study = tmp_path / "study"
    study.mkdir()
    trace.rename(study / trace.name)
    (tmp_path / "other.p2.r1").rename(study / "calib.p2.r2")
    assert main(["calibrate", str(study), "--callpath-prefix", "calib_"]) == 0
    err = capsys.readouterr().err
    assert "skipped" in err and "calib.p2.r2" in err


def test_calibrate_command_on_csv_says_when_it_falls_back(tmp_path, capsys):
    from pmkit.cli import main

    rng = np.random.default_rng(5)
    rows = [f"MPI_Bcast,4,64,{float(t)!r}" for t in 1e-6 * (1 + rng.pareto(1.1, 300))]
    path = tmp_path / "sample.csv"
    path.write_text("op,nprocs,bytes,duration\n" + "\n".join(rows) + "\n")
    assert main(["calibrate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "empirical" in out and "both models rejected" in out


# ---------------------------------------------------------------- the eager/rendezvous switch in T_f


EAGER_LIMIT = 48 * 1024
SIZES = 2 ** np.arange(3, 21)


def _hockney(nbytes: np.ndarray, switched: bool) -> np.ndarray:
    """Eager up to 48 KiB (2 µs + b / 5 GB/s), rendezvous above it (20 µs + b / 8 GB/s); or one law."""
    eager = 2e-6 + nbytes / 5e9
    return np.where(nbytes <= EAGER_LIMIT, eager, 20e-6 + nbytes / 8e9) if switched else eager


def _hockney_samples(switched: bool, processes: tuple[int, ...] = (2,)) -> list:
    rng = np.random.default_rng(21)
    return [("MPI_Send", p, float(b), float(_hockney(np.array(b), switched)) + 1e-8 * rng.poisson(4.0, 200))
            for p in processes for b in SIZES]


def test_t_f_finds_the_eager_limit_and_uses_the_law_beyond_it():
    reference = calibrate(_hockney_samples(True, (2, 4)), window=1e-8)
    switches = reference.protocol_switches()
    assert set(switches) == {("MPI_Send", 2), ("MPI_Send", 4)}
    switch = switches[("MPI_Send", 2)]
    assert switch.low <= EAGER_LIMIT < switch.high and switch.gap == (32 * 1024, 64 * 1024)
    assert switch.below.per_byte == pytest.approx(1 / 5e9, rel=0.05)
    assert switch.above.latency == pytest.approx(20e-6, rel=0.1) and switch.above.per_byte == pytest.approx(1 / 8e9,
                                                                                                        rel=0.05)
    sizes = np.array([50e3, 56e3, 62e3])  # rendezvous, between the last eager and the first rendezvous base point
    truth = _hockney(sizes, True) + 4e-8
    segmented, clamped = reference.t_max("MPI_Send", 3, sizes)
    plain = calibrate(_hockney_samples(True, (2, 4)), window=1e-8, segments="off")
    assert plain.protocol_switches() == {} and plain.settings["segments"] == "off"
    interpolated, _ = plain.t_max("MPI_Send", 3, sizes)
    assert not clamped.any()
    np.testing.assert_allclose(segmented, truth, rtol=0.03)
    assert (np.abs(interpolated - truth) / truth).max() > 0.2
    on_points, _ = reference.t_max("MPI_Send", 2, SIZES.astype(float))
    np.testing.assert_array_equal(on_points, plain.t_max("MPI_Send", 2, SIZES.astype(float))[0])


def test_t_f_of_one_law_has_no_switch():
    reference = calibrate(_hockney_samples(False), window=1e-8)
    assert reference.protocol_switches() == {}
    sizes = np.geomspace(8, 2 ** 20, 50)
    np.testing.assert_array_equal(reference.t_max("MPI_Send", 2, sizes)[0],
                                  calibrate(_hockney_samples(False), window=1e-8, segments="off")
                                  .t_max("MPI_Send", 2, sizes)[0])


def test_the_file_carries_the_switch_and_old_files_stay_readable(tmp_path):
    reference = calibrate(_hockney_samples(True), window=1e-8)
    path = tmp_path / "ref.json"
    reference.save(path)
    document = json.loads(path.read_text())
    assert document["schema"] == "pmkit.calibration/2"
    [entry] = document["switches"]
    assert entry["op"] == "MPI_Send" and entry["nprocs"] == 2 and entry["low"] <= EAGER_LIMIT < entry["high"]
    assert set(entry["below"]) == {"latency", "per_byte", "measured"}
    loaded = Reference.load(path)
    assert loaded.switches == reference.protocol_switches()
    sizes = np.array([100e3])
    assert loaded.t_max("MPI_Send", 2, sizes)[0] == pytest.approx(reference.t_max("MPI_Send", 2, sizes)[0])
    del document["switches"]
    document["schema"] = "pmkit.calibration/1"
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document))
    from_old = Reference.load(old)
    assert from_old.switches is None and from_old.protocol_switches() == reference.protocol_switches()
    document["schema"] = "pmkit.calibration/2"
    document["switches"] = [{"op": "MPI_Send", "nprocs": 2, "change": "many"}]
    (tmp_path / "bad.json").write_text(json.dumps(document))
    with pytest.raises(InputError, match="switch 1 is incomplete"):
        Reference.load(tmp_path / "bad.json")


def test_calibrate_command_shows_the_switch(tmp_path, capsys):
    from pmkit.cli import main

    path = tmp_path / "hockney.csv"
    path.write_text("op,nprocs,bytes,duration\n" + "".join(
        f"{op},{p},{int(b)},{float(t)!r}\n" for op, p, b, times in _hockney_samples(True) for t in times))
    assert main(["calibrate", str(path), "--window", "1e-8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "MPI_Send P=2: law changes at ≈" in out and "(32 KiB … " in out and "segments auto" in out
    assert main(["calibrate", str(path), "--window", "1e-8", "--segments", "off"]) == 0
    assert "law changes" not in capsys.readouterr().out
