"""Segmented models (issue 21): the change-point test, the data model, the modelers, the views."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import pmkit
from pmkit.experiment import ExperimentBuilder
from pmkit.fitting import segments
from pmkit.fitting.refinement import RefineSettings, refine_series
from pmkit.modelers.segmented import fit_segmented
from pmkit.models import ChangePoint, Model, Segment
from pmkit.pmnf import simple_function
from pmkit.schema import models_document
from pmkit.testing import segmented_study

SETTINGS = RefineSettings(clean_constant=1e-9)
P = 2.0 ** np.arange(1, 12)  # 2 … 2048, eleven points


def _noisy(values: np.ndarray, noise: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return values * (1.0 + rng.uniform(-noise, noise, values.shape))


def _slope_change(x: np.ndarray, change: float, count: int, seed: int) -> np.ndarray:
    """``3 + 0.5·x`` up to ``change``, a slope ten times steeper from there (continuous)."""
    exact = np.where(x < change, 3 + 0.5 * x, 3 + 0.5 * change + 5 * (x - change))
    return _noisy(np.tile(exact, (count, 1)), 0.02, seed)


def _find(x: np.ndarray, Y: np.ndarray, mode: str = "auto") -> segments.ChangePoints:
    return segments.find_change_points(x, Y, refine_series(x, Y, SETTINGS), SETTINGS, mode)


def test_a_slope_change_is_found_within_one_step_and_each_side_gets_its_law() -> None:
    Y = _slope_change(P, 100.0, 20, seed=1)
    found = _find(P, Y)
    assert found.segmented.all()
    assert ((found.change >= 50) & (found.change <= 200)).all()  # within one measurement step of 100
    assert ((found.low <= found.change) & (found.change <= found.high)).all()
    assert np.isin(found.right_from, (64, 128)).all()
    assert (found.right.alpha[:, 0] == found.right.alpha[:, 1]).all()  # x^1 on the right
    predicted = found.right.evaluate(np.array([8192.0]))[:, 0]
    truth = 3 + 0.5 * 100 + 5 * (8192 - 100)
    assert np.abs(predicted / truth - 1).max() < 0.05


def test_one_law_series_stay_one_law() -> None:
    x = P
    rng = np.random.default_rng(2)
    laws = [np.log2(x), x ** 0.5, x, x ** 1.5, x ** 2, x * np.log2(x)]
    rows = []
    for k in range(120):
        first, second = laws[k % len(laws)], laws[(k // len(laws)) % len(laws)]
        c0, c1, c2 = 10.0 ** rng.uniform(-1, 2, 3)
        rows.append(c0 + c1 * first + (c2 * second if k % 2 else 0.0))
    found = _find(x, _noisy(np.array(rows), 0.02, seed=3))
    assert found.segmented.sum() <= 2  # measured on the protocol: ≤ 1.2 % of any control case


def test_constants_and_short_series_are_never_split() -> None:
    assert not _find(P, _noisy(np.full((50, P.size), 7.0), 0.05, seed=4)).segmented.any()
    short = P[:7]
    assert not _find(short, _slope_change(short, 20.0, 5, seed=5), "always").segmented.any()
    eight = P[:8]
    assert _find(eight, _slope_change(eight, 24.0, 5, seed=5)).segmented.all()  # 4 points on each side


def test_modes_off_and_always_and_a_prior_constant() -> None:
    Y = _slope_change(P, 100.0, 3, seed=6)
    assert not _find(P, Y, "off").segmented.any()
    flat = _noisy(np.full((3, P.size), 7.0), 0.01, seed=7)
    assert _find(P, flat, "always").segmented.all()
    constant = RefineSettings(nonconstancy=np.inf)
    assert not segments.find_change_points(P, Y, refine_series(P, Y, constant), constant, "always").segmented.any()
    with pytest.raises(ValueError, match="mode"):
        _find(P, Y, "sometimes")


def test_the_smooth_two_term_null_fits_sums_of_positive_terms_and_not_kinks() -> None:
    smooth = 4 + 0.3 * np.log2(P) + 0.002 * P ** 2
    kinked = np.where(P < 100, 4 + 0.3 * P, 34 - 300 + 3 * P)
    errors = segments.smooth_error(P, np.stack([smooth, kinked]))
    assert errors[0] < 1e-6
    assert errors[1] > 0.05


def test_a_jump_is_placed_between_the_points_that_separate_it() -> None:
    exact = np.where(P < 100, 10 + 0.1 * P, 80 + 0.1 * P)
    found = _find(P, _noisy(exact[None, :], 0.01, seed=8))
    assert found.segmented[0] and found.right_from[0] == 128
    assert found.change[0] == pytest.approx(math.sqrt(64 * 128))  # half way on the points' (log) scale


def _experiment(values: dict[str, np.ndarray], x: np.ndarray = P):
    builder = ExperimentBuilder(("p",), "generated")
    builder.add_metric("time", unit="s")
    for callpath, series in values.items():
        for p, v in zip(x, series, strict=True):
            builder.add_values(callpath, "time", (float(p),), [float(v)])
    return builder.build()


def test_refining_splits_by_default_and_the_model_keeps_segments_and_change_point() -> None:
    experiment = _experiment({"send": _slope_change(P, 100.0, 1, seed=9)[0], "compute": _noisy(20 + 0.1 * P, 0.02, 1)})
    models = pmkit.model(experiment)
    send, compute = models.get("send", "time"), models.get("compute", "time")
    assert send.segmented and not compute.segmented and compute.segments == ()
    left, right = send.segments
    assert left.start == -math.inf and right.end == math.inf and left.end == right.start == send.change_point.value
    assert left.measured == (2.0, 64.0) and right.measured == (128.0, 2048.0)
    assert send.function == right.function
    assert send.function_at(10) == left.function and send.function_at(1000.0) == right.function
    values = send.evaluate(np.array([10.0, 1000.0]))
    assert values == pytest.approx([left.function.evaluate(10.0), right.function.evaluate(1000.0)])
    assert send.evaluate({"p": 10.0}) == pytest.approx(left.function.evaluate(10.0))
    assert math.isfinite(send.quality.smape) and send.quality.smape < 3
    off = pmkit.model(experiment, segments="off").get("send", "time")
    assert not off.segmented and off.quality.smape > send.quality.smape


def test_a_segmented_models_interval_is_its_last_segments() -> None:
    experiment = _experiment({"send": _slope_change(P, 100.0, 1, seed=9)[0], "compute": _noisy(20 + 0.1 * P, 0.02, 1)})
    models = pmkit.model(experiment)
    send = models.get("send", "time")
    beyond = send.predict({"p": 8192.0})
    assert beyond.value == pytest.approx(send.segments[-1].function.evaluate(8192.0))
    assert beyond.low <= beyond.value <= beyond.high and beyond.high < 2 * beyond.low
    inside = send.predict({"p": 10.0})  # the first segment: its alternatives were never fitted
    assert inside.value == pytest.approx(send.segments[0].function.evaluate(10.0))
    assert math.isnan(inside.low) and math.isnan(inside.high)
    row = [m.callpath for m in models].index("send")
    for point, known in (({"p": 8192.0}, True), ({"p": 10.0}, False)):
        value, low, high = models.predict(point)
        assert value[row] == pytest.approx(send.predict(point).value)
        assert bool(np.isfinite(low[row])) is known and bool(np.isfinite(high[row])) is known
        compute = [m.callpath for m in models].index("compute")
        assert np.isfinite(low[compute]) and low[compute] <= value[compute] <= high[compute]


def test_json_carries_segments_and_change_point_and_stays_finite() -> None:
    experiment = _experiment({"send": _slope_change(P, 100.0, 1, seed=9)[0], "compute": _noisy(20 + 0.1 * P, 0.02, 1)})
    document = models_document(("p",), [("gen", m) for m in pmkit.model(experiment)])
    entries = {e["callpath"]: e for e in document["models"]}
    assert entries["compute"]["segments"] is None and entries["compute"]["change_point"] is None
    send = entries["send"]
    assert set(send["change_point"]) == {"parameter", "value", "low", "high"}
    assert [s["from"] for s in send["segments"]] == [None, send["change_point"]["value"]]
    assert [s["to"] for s in send["segments"]] == [send["change_point"]["value"], None]
    assert send["segments"][1]["function"] == send["function"]
    assert send["segments"][0]["measured"] == [2.0, 64.0]
    json.dumps(document, allow_nan=False)


def test_the_segmented_modeler_always_splits_and_needs_eight_points() -> None:
    line = _noisy(20 + 0.1 * P, 0.02, 1)
    assert pmkit.model(_experiment({"a": line}), modeler="segmented")[0].segmented
    assert not pmkit.model(_experiment({"a": line}))[0].segmented
    assert not pmkit.model(_experiment({"a": line[:7]}, P[:7]), modeler="segmented")[0].segmented


def test_fit_segmented_groups_repeated_values_and_fits_lines() -> None:
    sizes = np.repeat(2.0 ** np.arange(0, 23), 3)  # 1 B … 4 MiB, three repetitions each
    rng = np.random.default_rng(10)
    exact = np.where(sizes <= 65536, 2e-6 + sizes / 10e9, 8e-6 + sizes / 12e9)
    times = exact * (1 + rng.uniform(-0.02, 0.02, sizes.size))
    model = fit_segmented(sizes, times, "bytes")
    assert model.segmented and 65536 <= model.change_point.value <= 131072 and model.n_points == 23
    lines = fit_segmented(sizes, times, "bytes", law="linear")
    for segment in lines.segments:
        (term,) = segment.function.terms
        assert term.factors[0].exponent == 1 and term.factors[0].log_exponent == 0
    assert lines.segments[0].function.constant == pytest.approx(2e-6, rel=0.05)
    assert lines.segments[1].function.terms[0].coefficient == pytest.approx(1 / 12e9, rel=0.05)
    assert fit_segmented(sizes[:21], times[:21], "bytes", segments="off").segments == ()
    with pytest.raises(ValueError, match="rows"):
        fit_segmented(sizes, times[:5])
    with pytest.raises(ValueError, match="law"):
        fit_segmented(sizes, times, law="cubic")


def test_a_change_along_one_parameter_of_two() -> None:
    xs, ys = np.arange(10.0, 101.0, 10.0), np.array([2.0, 4.0, 8.0, 16.0])
    builder = ExperimentBuilder(("x", "y"), "generated")
    builder.add_metric("time")
    rng = np.random.default_rng(11)
    for x in xs:
        for y in ys:
            truth = 0.4 * x * x * y if x < 55 else 1400 + 10 * x * y
            builder.add_values("reg", "time", (x, y), truth * (1 + rng.uniform(-0.01, 0.01, 3)))
    model = pmkit.model(builder.build())[0]
    assert model.segmented and model.change_point.parameter == "x"
    assert 50 <= model.change_point.value <= 60
    left, right = model.segments
    assert left.measured == (10.0, 50.0) and right.measured == (60.0, 100.0)
    assert model.function_at({"x": 20.0, "y": 4.0}) == left.function
    assert model.evaluate({"x": 20.0, "y": 4.0}) == pytest.approx(0.4 * 400 * 4, rel=0.05)
    assert model.evaluate(np.array([[200.0, 4.0]]))[0] == pytest.approx(1400 + 10 * 200 * 4, rel=0.1)


def test_two_parameter_segmented_real_file(shared_data) -> None:
    path = shared_data / "extrap-formats" / "text" / "two_parameter_segmented_1.txt"
    model = pmkit.model(pmkit.read(path))[0]  # x < 55: 0.4·x²·y; from there 1400 + 10·x·y
    assert model.segmented and model.change_point.parameter == "x"
    assert model.change_point.low == 50 and model.change_point.high == 60
    assert model.segments[0].function.pretty_text().endswith("·x^2·y")


def test_model_without_segments_evaluates_its_function() -> None:
    function = simple_function("p", 1.0, 2.0, 1, 0)
    model = Model("a", "time", function)
    assert not model.segmented and model.function_at(5.0) is function
    assert model.evaluate(np.array([1.0, 2.0])) == pytest.approx([3.0, 5.0])
    assert math.isnan(Model("a", "time", None).evaluate(1.0))
    change = ChangePoint("p", 10.0, 8.0, 16.0)
    segmented = Model("a", "time", function, segments=(
        Segment(simple_function("p", 0.0, 1.0, 0, 0), -math.inf, 10.0, (1.0, 8.0)),
        Segment(function, 10.0, math.inf, (16.0, 64.0))), change_point=change)
    assert segmented.evaluate(np.array([4.0, 10.0, 32.0])) == pytest.approx([0.0, 21.0, 65.0])


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return segmented_study.write(tmp_path_factory.mktemp("segmented") / "study.txt")


def test_show_marks_the_changes_with_no_option(study, pmkit_cli) -> None:
    done = pmkit_cli("show", study)
    assert done.returncode == 0, done.stderr
    for callpath, change in segmented_study.CHANGES.items():
        leaf = callpath.split("->")[-1]
        line = next(i for i, text in enumerate(done.stdout.splitlines()) if f"├ {leaf}" in text or f"└ {leaf}" in text)
        following = "\n".join(done.stdout.splitlines()[line:line + 3])
        found = float(following.split("changes at p ≈ ")[1].split()[0])
        assert change / 2 <= found <= change * 2
    assert "compute" in done.stdout and "changes at p ≈" not in next(
        t for t in done.stdout.splitlines() if "├ compute" in t or "└ compute" in t)
    assert max(len(line) for line in done.stdout.splitlines()) <= 80


def test_growth_and_prediction_come_from_the_segment_at_the_target(study, pmkit_cli) -> None:
    below = json.loads(pmkit_cli("show", study, "--at", "p=32", "--json").stdout)
    beyond = json.loads(pmkit_cli("show", study, "--json").stdout)

    def exchange(document):
        return next(m for m in document["models"] if m["callpath"] == "main->exchange")

    low, high = exchange(below), exchange(beyond)
    assert low["segments"] == high["segments"] and low["change_point"]["value"] == high["change_point"]["value"]
    left = low["segments"][0]["function"]
    expected = left["constant"] + left["terms"][0]["coefficient"] * 32 if left["terms"] else left["constant"]
    assert low["prediction"]["predicted"] == pytest.approx(expected)
    assert high["prediction"]["predicted"] == pytest.approx(4.0 + 0.06 * 8192, rel=0.05)


def test_detail_lists_both_segments_and_plots_the_change(study, pmkit_cli) -> None:
    done = pmkit_cli("show", study, "--callpath", "exchange")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "change     p ≈" in text and "between 64 and 128" in text
    assert text.count("segment    p") == 2 and "fitted on p=2…64" in text and "fitted on p=128…2048" in text
    assert "┊ change at p ≈" in text and "┊" in text.split("Predicted")[1]
    markdown = pmkit_cli("show", study, "--callpath", "exchange", "--markdown").stdout
    assert "- change: p ≈" in markdown and markdown.count("- segment: p") == 2
    table = pmkit_cli("model", study).stdout
    assert "(p < " in table and "(p ≥ " in table


def test_the_example_generator_says_what_it_wrote(tmp_path, capsys):
    from pmkit.testing import segmented_study

    assert segmented_study.main([str(tmp_path / "study.txt")]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'study.txt'}\n"
    assert pmkit.read(tmp_path / "study.txt").parameters == ("p",)


def test_entry_texts_of_segmented_models_are_their_entries_dumped() -> None:
    import orjson

    from pmkit.writers.entries import entry_texts, model_entries
    from pmkit.writers.jsonfiles import _option

    experiment = _experiment({"send": _slope_change(P, 100.0, 1, seed=9)[0], "compute": _noisy(20 + 0.1 * P, 0.02, 1)})
    columns = pmkit.model(experiment).columns
    assert columns.segments, "a segmented model is among them"
    option, n = _option(), len(columns)
    assert entry_texts(columns, "gen", 0, n, option) == [orjson.dumps(e, option=option).decode()
                                                          for e in model_entries(columns, "gen", 0, n)]
