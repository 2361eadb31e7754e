"""Prediction intervals (issue 18): calibrated on noisy laws, wide on a narrow span, in show, JSON and the SDK."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import pmkit
from pmkit.cli import main
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.fitting import kernels
from pmkit.intervals import AlternativeTable, Interval
from pmkit.models import Model, ModelSet
from pmkit.pmnf import Function

P_VALUES = (27.0, 64.0, 125.0, 216.0, 343.0)
SIZES = (25.0, 30.0, 35.0, 40.0, 45.0)
GRID = np.array([(p, s) for p in P_VALUES for s in SIZES])


def experiment(parameters, points, values) -> Experiment:
    tree = CallTree()
    for i in range(values.shape[0]):
        tree.add(f"s{i}")
    return Experiment(parameters, points, tree, (Metric("time"),), {"time": values})


def test_one_parameter_intervals_cover_the_truth_about_as_often_as_they_say() -> None:
    rng = np.random.default_rng(4)
    x = np.array([2.0, 4, 8, 16, 32])
    exact = 3 + 2.5 * x ** 1.5
    values = exact[None, :, None] * (1 + rng.uniform(-0.02, 0.02, (400, 5, 1)))
    models = pmkit.model(experiment(("x",), x[:, None], values))
    value, low, high = models.predict({"x": 128.0}, level=0.9)
    truth = 3 + 2.5 * 128 ** 1.5
    covered = np.mean((low <= truth) & (truth <= high))
    assert 0.8 <= covered <= 0.98
    assert (low <= value).all() and (value <= high).all()
    assert np.median(high / low) < 2.0  # narrow where the data are clear
    # the vectorised form and the per-model form agree
    one = models[0].predict({"x": 128.0})
    value0, low0, high0 = one
    assert (value0, low0, high0) == (one.value, one.low, one.high)
    assert one.value == pytest.approx(value[0]) and one.low == pytest.approx(low[0]) and one.high == pytest.approx(
        high[0])
    # a lower level gives a narrower interval
    _, low50, high50 = models.predict(128.0, level=0.5)
    assert (high50 - low50 <= high - low + 1e-12).all()


def test_a_narrow_span_gives_a_wide_interval() -> None:
    rng = np.random.default_rng(8)
    exact = 0.06 + 8.5e-6 * GRID[:, 1] ** 3
    values = exact[None, :, None] * (1 + rng.uniform(-0.1, 0.1, (60, 25, 1)))
    models = pmkit.model(experiment(("p", "size"), GRID, values))
    _, low, high = models.predict({"p": 1372.0, "size": 180.0})
    far = np.median(high / low)
    _, low_near, high_near = models.predict({"p": 343.0, "size": 45.0})
    assert far > 2 * np.median(high_near / low_near)
    truth = 0.06 + 8.5e-6 * 180 ** 3
    assert np.mean((low <= truth) & (truth <= high)) > 0.7


def test_repetitions_narrow_the_interval() -> None:
    rng = np.random.default_rng(2)
    x = np.array([2.0, 4, 8, 16, 32])
    exact = (3 + 2.5 * x ** 1.5)[None, :, None]
    one = exact * (1 + rng.uniform(-0.02, 0.02, (100, 5, 1)))
    many = exact * (1 + rng.uniform(-0.02, 0.02, (100, 5, 3)))
    widths = []
    for values in (one, many):
        _, low, high = pmkit.model(experiment(("x",), x[:, None], values)).predict(128.0)
        widths.append(np.median(high / low))
    assert widths[1] < widths[0]


def test_models_without_alternatives_say_so() -> None:
    model = Model("main", "time", Function(("p",), 2.0))
    found = model.predict({"p": 10.0})
    assert found.value == 2.0 and math.isnan(found.low) and not found.known and not found.wide
    models = ModelSet(("p",), [model, Model("x", "time", None)])
    value, low, high = models.predict(10.0)
    assert np.isnan(high).all()
    assert value[0] == 2.0 and math.isnan(value[1]) and np.isnan(low).all()
    assert Interval(10.0, 1.0, 20.0).wide and not Interval(10.0, 5.0, 20.0).wide
    with pytest.raises(ValueError):
        AlternativeTable.empty(("p",), 1).predict({"p": 1.0}, level=1.5)


@pytest.fixture
def weak_study(tmp_path):
    rng = np.random.default_rng(7)
    laws = {"forces": lambda p, s: 0.06 + 8.5e-6 * s ** 3, "halo": lambda p, s: 0.002 + 3e-4 * p ** (1 / 3) * s ** 2,
            "reduce": lambda p, s: 0.01 + 0.004 * np.log2(p)}
    lines = ["PARAMETER p", "PARAMETER size", "POINTS " + " ".join(f"( {p:g} {s:g} )" for p, s in GRID),
             "METRIC time"]
    for name, law in laws.items():
        lines.append(f"REGION {name}")
        lines += [f"DATA {float(law(p, s) * (1 + rng.uniform(-0.1, 0.1)))!r}" for p, s in GRID]
    path = tmp_path / "weak.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_show_prints_the_interval_and_json_carries_it(weak_study, capsys) -> None:
    assert main(["show", str(weak_study)]) == 0
    out = capsys.readouterr().out
    assert " … ×" in out and "90% interval" in out
    assert main(["show", str(weak_study), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    predictions = [m["prediction"] for m in document["models"] if m.get("prediction")]
    assert predictions and all(p["low"] <= p["predicted"] <= p["high"] for p in predictions)
    assert all(p["level"] == 0.9 for p in predictions)
    assert main(["show", str(weak_study), "--rank-by", "low", "--markdown"]) == 0
    assert "90% interval" in capsys.readouterr().out


def test_the_caption_mentions_brackets_only_when_a_row_shows_an_interval(tmp_path, capsys) -> None:
    x = [2, 4, 8, 16, 32]
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {v} )" for v in x), "METRIC time"]
    for name, c in (("a", 0.5), ("b", 0.25)):
        lines += [f"REGION {name}"] + [f"DATA {1 + c * v * v!r}" for v in x]  # exact: as sure as its digits
    path = tmp_path / "exact.txt"
    path.write_text("\n".join(lines) + "\n")
    for extra in ([], ["--markdown"]):
        assert main(["show", str(path), *extra]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "predicted ÷ fitted at the largest measured point; then: predicted at the target" in out
        assert " … ×" not in out and "in brackets" not in out


def test_ranking_by_the_low_end() -> None:
    from pmkit.scaling import analyse

    rng = np.random.default_rng(1)
    x = np.array([2.0, 4, 8, 16, 32])
    clear = (1 + 0.5 * x ** 2)[None, :, None] * (1 + rng.uniform(-0.001, 0.001, (1, 5, 1)))
    vague = (1 + 0.02 * x ** 2.5)[None, :, None] * (1 + rng.uniform(-0.15, 0.15, (1, 5, 1)))
    exp = experiment(("x",), x[:, None], np.concatenate([clear, vague]))
    report = analyse(exp, pmkit.model(exp))
    by_low = report.ranking(by="low")
    assert all(math.isfinite(r.low) for r in by_low)
    lows = [r.growth_low for r in by_low]
    assert lows == sorted(lows, reverse=True)
    with pytest.raises(pmkit.errors.UsageError):
        report.ranking(by="width")


def test_predicting_some_rows_gives_their_part_of_all() -> None:
    rng = np.random.default_rng(6)
    x = np.array([2.0, 4, 8, 16, 32])
    values = (1 + 0.3 * x ** 2)[None, :, None] * (1 + rng.uniform(-0.03, 0.03, (20, 5, 1)))
    models = pmkit.model(experiment(("x",), x[:, None], values))
    everything = models.predict(100.0)
    some = models.predict(100.0, rows=np.array([3, 7, 11]))
    for whole, part in zip(everything, some, strict=True):
        np.testing.assert_allclose(part, whole[[3, 7, 11]])


def test_intervals_wider_than_ten_times_are_flagged_in_the_views(tmp_path, capsys) -> None:
    from pmkit.scaling import analyse
    from pmkit.ui.interval import WIDE_MARK, is_wide

    rng = np.random.default_rng(0)
    x = np.array([2.0, 4, 8, 16, 32])
    values = (1 + 0.02 * x ** 2.5)[None, :] * (1 + rng.uniform(-0.3, 0.3, (3, 5)))
    names = ("alpha", "beta", "gamma")
    lines = ["PARAMETER x", "POINTS " + " ".join(f"( {v:g} )" for v in x), "METRIC time"]
    for name, row in zip(names, values, strict=True):
        lines += [f"REGION {name}", *(f"DATA {v!r}" for v in row.tolist())]
    path = tmp_path / "vague.txt"
    path.write_text("\n".join(lines) + "\n")
    exp = experiment(("x",), x[:, None], values[:, :, None])
    wide = {names[r.index]: is_wide(r) for r in analyse(exp, pmkit.model(exp)).ranking()}
    assert sorted(wide.values()) == [False, True, True]

    assert main(["show", str(path)]) == 0
    out = capsys.readouterr().out
    ranking = out.split("Fastest growing")[1]
    for name, flagged in wide.items():
        line = next(t for t in ranking.splitlines() if t.split()[1:2] == [name])
        assert (f"]{WIDE_MARK}" in line) is flagged, line
        tree_line = next(t for t in out.split("Fastest growing")[0].splitlines() if t.split()[:1] == [name])
        assert (WIDE_MARK in tree_line) is flagged, tree_line
    assert "spans more than 10×" in out


def test_the_detail_view_gives_each_prediction_its_interval(weak_study, capsys) -> None:
    assert main(["show", str(weak_study), "--callpath", "forces"]) == 0
    out = capsys.readouterr().out
    assert "90% interval" in out and " … " in out.split("Predicted")[1]
    growth = next(line for line in out.splitlines() if line.startswith("growth"))
    assert " [×" in growth and " … ×" in growth
    assert main(["show", str(weak_study), "--callpath", "forces", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    predictions = document["show"][0]["detail"]["predictions"]
    assert predictions and all(p["low"] <= p["value"] <= p["high"] and p["level"] == 0.9 for p in predictions)
    assert main(["show", str(weak_study), "--callpath", "forces", "--markdown"]) == 0
    assert "| 90% interval |" in capsys.readouterr().out


def test_alternatives_are_built_only_for_the_rows_asked_for() -> None:
    from pmkit.scaling import analyse

    rng = np.random.default_rng(6)
    x = np.array([2.0, 4, 8, 16, 32])
    values = (1 + 0.3 * x ** 2)[None, :, None] * (1 + rng.uniform(-0.03, 0.03, (20, 5, 1)))
    exp = experiment(("x",), x[:, None], values)
    models = pmkit.model(exp)
    some = models.predict(100.0, rows=np.array([3, 7]))
    assert models.uncertainty.built.sum() == 2
    everything = models.predict(100.0)
    assert models.uncertainty.built.all()
    for whole, part in zip(everything, some, strict=True):
        np.testing.assert_allclose(part, whole[[3, 7]])

    fresh = pmkit.model(exp)
    report = analyse(exp, fresh)
    row = report.rows[int(np.flatnonzero(report.columns.has_function)[0])]
    assert math.isfinite(row.low) and fresh.uncertainty.built.sum() == 1
    # every row's interval is predicted once, its alternatives dropped: only the row asked for alone is kept
    assert np.isfinite(report.columns.low[report.columns.has_function]).all() and fresh.uncertainty.built.sum() == 1



def _mixed_laws(count: int, seed: int) -> Experiment:
    """Two-parameter series of four laws (several groups of series sharing a law), ±3% noise."""
    rng = np.random.default_rng(seed)
    p, size = GRID[:, 0], GRID[:, 1]
    laws = np.stack([2 + 0.01 * size ** 2, 1 + 0.3 * p * size, 5 + 0.2 * np.log2(p) * size, 3 + 0.05 * p ** 1.5])
    exact = laws[np.arange(count) % len(laws)] * rng.uniform(0.5, 2.0, (count, 1))
    return experiment(("p", "size"), GRID, (exact * (1 + rng.uniform(-0.03, 0.03, exact.shape)))[:, :, None])


def test_every_rows_interval_without_keeping_equals_all_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import pmkit.intervals as intervals
    import pmkit.scaling as scaling

    exp = _mixed_laws(60, 12)
    target = {"p": 512.0, "size": 180.0}
    kept = pmkit.model(exp, hedge=False)
    whole = kept.predict(target)
    assert kept.uncertainty.built.all() and len(np.unique(kept.uncertainty._blocks)) > 4
    monkeypatch.setattr(intervals, "STREAM_ROWS", 3)  # chunks of whole groups, far smaller than the set
    models = pmkit.model(exp, hedge=False)
    streamed = models.predict(target, keep=False)
    assert not models.uncertainty.built.any()
    for a, b in zip(streamed, whole, strict=True):
        assert a.tobytes() == b.tobytes()
    assert np.isfinite(streamed[1]).sum() > 50
    # rows built before keep their alternatives (built alone), the others are built with the rest of their group,
    # as a build of every missing row at once does
    first, rest = pmkit.model(exp, hedge=False), pmkit.model(exp, hedge=False)
    early = np.array([5, 9, 40])
    for models in (first, rest):
        models.predict(target, rows=early)
    once = first.predict(target)
    chunked = rest.predict(target, keep=False)
    assert rest.uncertainty.built.sum() == early.size
    for a, b in zip(chunked, once, strict=True):
        assert a.tobytes() == b.tobytes()
    # the report's every-row bounds (show --json) are those of the kept table
    report = scaling.analyse(exp, pmkit.model(exp, hedge=False), target=target).columns
    reference = scaling.analyse(exp, kept, target=target).columns
    assert report.low.tobytes() == reference.low.tobytes() and report.high.tobytes() == reference.high.tobytes()


def test_a_sparse_designs_intervals_with_products_stream_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a sparse design the alternatives hold products of every parameter; built a few groups at a time
    (``show --json``) they give the bounds of one build of every row, to the last bit."""
    import pmkit.intervals as intervals

    values = (4.0, 8.0, 16.0, 32.0, 64.0)
    sparse = np.array([(x, y) for x in values for y in values if x == 4 or y == 4 or (x == y and 8 <= x <= 32)])
    x, y = sparse[:, 0], sparse[:, 1]
    laws = np.stack([2 + 0.01 * y ** 2, 1 + 0.3 * x * y, 5 + 0.2 * np.log2(x) * y, 3 + 0.05 * x ** 1.5,
                     1 + 0.001 * x * y ** 2])
    rng = np.random.default_rng(3)
    exact = laws[np.arange(80) % len(laws)] * rng.uniform(0.5, 2.0, (80, 1))
    exp = experiment(("x", "y"), sparse, (exact * (1 + rng.uniform(-0.03, 0.03, exact.shape)))[:, :, None])
    target = {"x": 256.0, "y": 256.0}
    kept = pmkit.model(exp)
    whole = kept.predict(target)
    assert len(np.unique(kept.uncertainty._blocks)) > 4
    monkeypatch.setattr(intervals, "STREAM_ROWS", 3)
    streamed = pmkit.model(exp).predict(target, keep=False)
    assert np.isfinite(streamed[1]).sum() > 60
    for a, b in zip(streamed, whole, strict=True):
        assert a.tobytes() == b.tobytes()


def test_a_kept_table_holds_the_rows_built_alone() -> None:
    exp = _mixed_laws(40, 13)
    models = pmkit.model(exp, hedge=False)
    uncertainty = models.uncertainty
    models.predict({"p": 512.0, "size": 180.0}, rows=np.array([2, 30]))
    models.predict({"p": 512.0, "size": 180.0}, rows=np.array([7]))
    assert len(uncertainty._kept) == 3 and uncertainty.built.sum() == 3
    table = uncertainty.table()
    assert len(table) == 40 and uncertainty.built.all() and table is uncertainty.table()
    assert (table.weight.sum(axis=1) > 0).sum() >= 30


# the compiled paths equal their numpy references to the last bit

def test_mixture_terms_kernel_equals_numpy() -> None:
    rng = np.random.default_rng(3)
    rows, k = 400, 7
    weight = rng.dirichlet(np.ones(k), rows)
    weight[::9, 3] = 0.0
    positive = rng.random((rows, k)) < 0.8
    center = rng.normal(0, 3, (rows, k))
    center[::13, 1] = np.nan
    spread = np.abs(rng.normal(0, 1, (rows, k)))
    spread[::5, 2] = 0.0
    spread[::17, 4] = np.nan
    df = rng.integers(1, 6, (rows, k)).astype(float)
    df[::11, 0] = 2.5
    picked = rng.permutation(rows)[:300]
    q = np.exp(rng.normal(0, 3, picked.size)) * np.where(rng.random(picked.size) < 0.1, -1, 1)
    q[::7] = 0.0
    q[::29] = np.nan
    args = (weight, positive, center, spread, df, picked, q)
    fast = kernels.mixture_terms(*args, use_numba=True)
    slow = kernels.mixture_terms(*args, use_numba=False)
    assert fast.shape == (picked.size, k)
    np.testing.assert_array_equal(fast, slow)
    assert np.isfinite(slow).sum() > 0.9 * slow.size


def _one_parameter() -> Experiment:
    rng = np.random.default_rng(5)
    x = np.array([2.0, 4, 8, 16, 32, 64])
    a, b = rng.uniform(0.5, 5, (2, 60, 1))
    laws = [a + b * x, a + b * x * np.log2(x), a + b * x ** 1.5, a + 0 * x, a + b / x, a + b * np.log2(x)]
    values = np.vstack(laws) * (1 + rng.uniform(-0.05, 0.05, (360, x.size)))
    values[0] = 0.0  # zeros
    values[1, 2] = np.nan  # a missing point
    values[2] = 7.0  # exactly constant
    values[3] = -values[3]  # negative
    values[4, :3] = np.nan  # two points left
    reps = values[:, :, None] * (1 + rng.uniform(-0.02, 0.02, (1, 1, 3)))
    reps[::2, :, 1:] = np.nan  # half the series with one repetition
    return experiment(("p",), x[:, None], reps)


def _two_parameters() -> Experiment:
    rng = np.random.default_rng(6)
    grid = np.array([(p, s) for p in (27.0, 64, 125, 216, 343) for s in (25.0, 30, 35, 40, 45)])
    p, s = grid[:, 0], grid[:, 1]
    laws = [3 + 0.01 * s ** 3, 2 + 0.5 * np.log2(p) * s ** 2 / 100, 1 + 2 * p ** (1 / 3) + 0.3 * s, 5 + 0 * p]
    values = np.repeat(np.vstack(laws), 15, axis=0) * (1 + rng.uniform(-0.05, 0.05, (60, len(grid))))
    values[0, :4] = np.nan
    values[1] = 0.0
    return experiment(("p", "size"), grid, values[:, :, None])


def _segmented() -> Experiment:
    rng = np.random.default_rng(7)
    x = 2.0 ** np.arange(1, 12)
    change = np.where(x < 64, 3 + 0.5 * x, 3 + 0.5 * 64 + 5 * (x - 64))
    values = np.vstack([np.tile(change, (20, 1)), np.tile(2 + x ** 0.5, (20, 1))])
    values = values * (1 + rng.uniform(-0.02, 0.02, values.shape))
    return experiment(("p",), x[:, None], values[:, :, None])


@pytest.mark.parametrize(("study", "point"), [(_one_parameter, {"p": 256.0}),
                                              (_two_parameters, {"p": 1372.0, "size": 180.0}),
                                              (_segmented, {"p": 8192.0})])
def test_intervals_equal_with_and_without_the_compiled_kernels(study, point, monkeypatch) -> None:
    if not kernels.numba_enabled():
        pytest.skip("numba is not installed")
    compiled = pmkit.model(study())
    reference = pmkit.model(study())
    fast = compiled.predict(point, level=0.9)
    monkeypatch.setattr(kernels, "numba_enabled", lambda: False)
    slow = reference.predict(point, level=0.9)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(slow[1]).mean() > 0.5


@pytest.mark.parametrize("points", [5, 11, 150])
def test_line_fits_kernel_equals_numpy(points) -> None:
    rng = np.random.default_rng(points)
    Ys = np.exp(rng.normal(0, 2, (60, points)))
    Ys[0] = 0.0
    Ys[1, 0] = np.nan
    Ys[2, 1:] = 0.0
    Ys[3] = -Ys[3]
    basis = np.exp(rng.normal(0, 1, (9, points)))
    basis[0] = 0.0  # the constant model
    basis[1] = 4.0  # flat
    basis[2, -1] = np.inf
    w = 1 / np.maximum(np.abs(Ys), 1e-3) ** 2
    with np.errstate(all="ignore"):
        sums = (w.sum(axis=1), (w * Ys).sum(axis=1), w @ basis.T, w @ (basis * basis).T, (w * Ys) @ basis.T)
        fast = kernels.line_fits(Ys, basis, *sums, use_numba=True)
        slow = kernels.line_fits(Ys, basis, *sums, use_numba=False)
        bare = [kernels.line_fits(Ys, basis, *sums, covariance=False, use_numba=numba) for numba in (True, False)]
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(slow[2]).mean() > 0.5
    for coef, inv, rss in bare:  # without the covariances: the same coefficients and RSS, to the bit
        assert inv is None
        np.testing.assert_array_equal(coef, slow[0])
        np.testing.assert_array_equal(rss, slow[2])


@pytest.mark.parametrize(("points", "params", "terms"), [(3, 2, 2), (12, 2, 4), (25, 2, 5), (16, 3, 4), (125, 3, 4)])
def test_multi_fits_kernel_equals_numpy(points, params, terms) -> None:
    """The multi-parameter refits' loops give the numpy version's bits: coefficients, RSS, covariances, real
    terms — with padded terms, dropped parameters, zero, negative and missing values, a point at 0 (log2 read as
    0, a falling power infinite)."""
    if not kernels.numba_enabled():
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(points * params + terms)
    grid = 2.0 ** rng.integers(1, 6, (points, params)) * rng.uniform(0.8, 1.2, (points, params))
    grid[0, 0] = 0.0
    shapes = np.array([0.0, 0.25, 0.5, 1.0, 4 / 3, 2.0, 3.0, -1.0, -0.0])
    A = rng.choice(shapes, (40, 9, terms, params)) * (rng.random((40, 9, terms, params)) < 0.7)
    B = rng.choice([0.0, 0.5, 1.0, 2.0], (40, 9, terms, params)) * (rng.random((40, 9, terms, params)) < 0.3)
    A[:, :, -1] = B[:, :, -1] = 0.0  # a padded term
    A[:, 3, :, 0] = B[:, 3, :, 0] = 0.0  # a parameter dropped
    Ys = np.exp(rng.normal(0, 1, (40, points)))
    Ys[0, 1] = 0.0
    Ys[1] = -Ys[1]
    Ys[2, 2] = np.nan
    Ys[3] = 1.0
    Ys /= np.nanmax(np.abs(Ys), axis=1, keepdims=True)
    w = kernels.relative_weights(Ys)
    first = rng.standard_normal((40, terms + 1))
    with np.errstate(all="ignore"):
        fast = kernels.multi_fits(grid, A, B, Ys, w, first, use_numba=True)
        slow = kernels.multi_fits(grid, A, B, Ys, w, first, use_numba=False)
    for a, b in zip(fast, slow, strict=True):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    assert np.isfinite(slow[1]).mean() > 0.5
    np.testing.assert_array_equal(slow[0][:, 0], first)  # the law keeps its own coefficients
    assert kernels._RHS_LAYOUTS[kernels._layout_key((grid, A, B, Ys, w, first))] is not None  # the loops ran


def _stacked_variants(alpha, beta, structures, additions, used, product_a, product_b, substitutes):
    """The hypotheses as multi_alternatives built them before ``_variants``: one array per hypothesis (the law
    broadcast over the rows, copies of it, arrays of zeros for the products), ``np.stack``-ed."""
    from pmkit.fitting.alternatives import _pair_variants

    count, terms, n_params = alpha.shape

    def padded(a):
        return np.broadcast_to(np.vstack([a, np.zeros((terms - a.shape[0], n_params))]), (count, terms, n_params))

    out_a, out_b = [alpha] + [padded(a) for a, _ in structures], [beta] + [padded(b) for _, b in structures]
    for p, shapes in additions.items():
        for m in range(shapes.shape[1]):
            a, b = np.array(alpha), np.array(beta)
            a[:, used, p], b[:, used, p] = shapes[:, m, 0], shapes[:, m, 1]
            out_a.append(a)
            out_b.append(b)
            if used:
                a, b = np.array(alpha), np.array(beta)
                a[:, :used, p], b[:, :used, p] = shapes[:, m, 0][:, None], shapes[:, m, 1][:, None]
                out_a.append(a)
                out_b.append(b)
    for m in range(product_a.shape[1]):
        a, b = np.zeros((count, terms, n_params)), np.zeros((count, terms, n_params))
        a[:, 0], b[:, 0] = product_a[:, m], product_b[:, m]
        out_a.append(a)
        out_b.append(b)
    uses = {p: (alpha[0, :, p] != 0) | (beta[0, :, p] != 0) for p in substitutes}
    for p, shapes in substitutes.items():
        for m in range(shapes.shape[1]):
            a, b = np.array(alpha), np.array(beta)
            a[:, uses[p], p], b[:, uses[p], p] = shapes[:, m, 0][:, None], shapes[:, m, 1][:, None]
            out_a.append(a)
            out_b.append(b)
    for pair in _pair_variants(alpha, beta, substitutes):
        a, b = np.array(alpha), np.array(beta)
        for p, m in (pair[:2], pair[2:]):
            a[:, uses[p], p], b[:, uses[p], p] = substitutes[p][:, m, 0, None], substitutes[p][:, m, 1, None]
        out_a.append(a)
        out_b.append(b)
    return np.stack(out_a, axis=1), np.stack(out_b, axis=1)


@pytest.mark.parametrize("count", [1, 2, 7])
@pytest.mark.parametrize("case", ["full", "added", "products", "constant", "three"])
def test_variants_equal_the_stacked_hypotheses_and_their_layout(count, case) -> None:
    """The hypotheses filled block by block equal those built one array each and stacked, in values and in strides
    (``np.einsum`` sums the refits by the layout, so the intervals' last bits follow it)."""
    from pmkit.fitting.alternatives import _variants

    rng = np.random.default_rng(count)
    n_params = 3 if case == "three" else 2
    law = {"full": [[1.0, 0.0], [0.0, 2.0]], "added": [[1.5, 0.0]], "products": [[1.0, 0.0], [0.0, 2.0]],
           "constant": [], "three": [[1.0, 0.0, 0.0], [0.0, 2.0, 0.5]]}[case]
    used = len(law)
    terms = used + (1 if case in ("added", "constant") else 0) or 1
    alpha = np.zeros((terms, n_params))
    alpha[:used] = np.array(law).reshape(used, n_params)
    beta = np.where(alpha == 2.0, 1.0, 0.0)
    alpha, beta = (np.broadcast_to(v, (count, terms, n_params)) for v in (alpha, beta))

    def shapes(m):
        return np.stack([rng.choice([0.0, 0.5, 1.0, 2.0, 3.0], (count, m)), rng.choice([0.0, 1.0], (count, m))], axis=2)

    structures = [(np.array(law)[::-1].reshape(used, n_params), np.zeros((used, n_params)))] if used > 1 else []
    additions = {1: shapes(6)} if case in ("added", "constant") else {}
    substitutes = {0: shapes(11)} if case == "added" else {} if case == "constant" else \
        {p: shapes(11) for p in range(n_params)}
    if case != "constant":
        substitutes[0][:, 0] = [1.0 if case != "added" else 1.5, 0.0]  # the law's own shape: not paired
    m = 12 if case == "products" else 0
    product_a, product_b = rng.choice([0.5, 1.0], (count, m, n_params)), rng.choice([0.0, 0.5], (count, m, n_params))
    args = (alpha, beta, structures, additions, used, product_a, product_b, substitutes)
    filled, stacked = _variants(*args), _stacked_variants(*args)
    for a, b in zip(filled, stacked, strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.shape[1] > 1
        assert [s for s, d in zip(a.strides, a.shape, strict=True) if d > 1] == \
            [s for s, d in zip(b.strides, b.shape, strict=True) if d > 1]


@pytest.mark.parametrize("use_numba", [True, False])
def test_smallest_equals_a_stable_argsort(use_numba) -> None:
    if use_numba and not kernels.numba_enabled():
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(2)
    values = rng.integers(0, 6, (500, 40)).astype(float)  # many ties
    values[::7, ::3] = np.inf
    values[::11] = np.inf
    values[5, 4] = np.nan
    values[9] = np.nan
    values[13, :30] = -np.inf
    values[17, ::2] = np.nan  # NaN among numbers, sorted last
    values[19, 3] = -0.0  # equal to 0.0
    for count in (0, 1, 6, 11, 39, 40, 45):
        np.testing.assert_array_equal(kernels.smallest(values, count, use_numba=use_numba),
                                      np.argsort(values, axis=1, kind="stable")[:, :count])
    assert kernels.smallest(values[:0], 3, use_numba=use_numba).shape == (0, 3)
    spread = rng.normal(size=(300, 257))  # the alternatives' shape: few kept of many, no ties
    np.testing.assert_array_equal(kernels.smallest(spread, 11, use_numba=use_numba),
                                  np.argsort(spread, axis=1, kind="stable")[:, :11])


def test_single_ratios_kernel_equals_numpy() -> None:
    rng = np.random.default_rng(12)
    rows, width = 300, 40
    rss = np.exp(rng.normal(-6, 3, (rows, width)))
    rss[::7, 3] = np.inf
    rss[::11, 5] = np.nan
    rss[::13, 0] = 0.0
    rss[4] = np.inf  # no finite criterion
    slope = rng.normal(size=(rows, width))
    slope[::9, 6] = np.nan
    penalty = np.exp(rng.normal(0, 1, width))
    penalty[7] = np.inf
    rss[::3, 7] = 0.0  # a NaN criterion: 0 · inf
    positive = rng.random(width) < 0.7
    nonneg = rng.random(rows) < 0.5
    cand_alpha = rng.integers(0, 4, width) / 2.0
    cand_beta = rng.integers(0, 2, width).astype(float)
    alpha = rng.integers(0, 4, rows) / 2.0
    beta = rng.integers(0, 2, rows).astype(float)
    two_term = rng.random(rows) < 0.2
    constant = rng.random(rows) < 0.1
    chosen = np.exp(rng.normal(-6, 3, rows))
    chosen[::5] = np.nan
    chosen[4] = np.nan  # with no finite criterion: NaN ratios
    chosen[::17] = 0.0  # floored at 1e-300
    args = (rss, slope, penalty, positive, nonneg, cand_alpha, cand_beta, alpha, beta, two_term, constant, chosen,
            4.0)
    fast = kernels.single_ratios(*args, use_numba=True)
    slow = kernels.single_ratios(*args, use_numba=False)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    ratio, best = slow
    assert np.isnan(ratio[4]).all() and np.isinf(ratio).any() and (ratio[np.isfinite(ratio)] >= 1).all()
    assert np.isnan(best).any() and (best[~np.isnan(best)] >= 0).all()


def test_student_quantiles_looked_up_equal_scipys() -> None:
    from scipy.special import stdtrit

    from pmkit.intervals import student_quantile

    rng = np.random.default_rng(13)
    whole = rng.integers(1, 30, (200, 12)).astype(float)
    for df in (whole, whole + 0.5, np.where(whole > 20, 1e6, whole), np.full((3, 2), np.nan), np.ones((0, 4)),
               np.where(whole > 25, np.inf, whole)):
        for p in (0.05, 0.95):
            np.testing.assert_array_equal(student_quantile(df, p), stdtrit(df, p))


def test_earlier_repeats_kernel_equals_numpy() -> None:
    rng = np.random.default_rng(8)
    A = rng.integers(0, 2, (200, 9, 2, 3)).astype(float)
    B = rng.integers(0, 2, (200, 9, 2, 3)).astype(float)
    A[::5, 4] = A[::5, 1]
    B[::5, 4] = B[::5, 1]
    A[::7, 2, 0, 0] = -0.0  # equal to 0.0
    A[::9, 3, 1, 2] = np.nan  # never equal
    fast = kernels.earlier_repeats(A, B, use_numba=True) >= 0
    slow = kernels.earlier_repeats(A, B, use_numba=False) >= 0
    np.testing.assert_array_equal(fast, slow)
    assert slow.any() and not slow.all() and not slow[:, 0].any()
    first = kernels.earlier_repeats(A, B, use_numba=False)
    np.testing.assert_array_equal(kernels.earlier_repeats(A, B, use_numba=True), first)
    assert (first[::5, 4] <= 1).all() and (first[::5, 4] >= 0).all()  # the first of the equal ones
    rows, hyps = np.nonzero(first >= 0)
    assert (first[rows, hyps] < hyps).all()
    assert (A[rows, hyps] == A[rows, first[rows, hyps]]).all() and (B[rows, hyps] == B[rows, first[rows, hyps]]).all()


def test_mixture_terms_falls_back_to_numpy_without_scipys_compiled_stdtr(monkeypatch) -> None:
    def missing():
        raise KeyError("__pyx_fuse_0stdtr")

    monkeypatch.setattr(kernels, "_STDTR", None)
    monkeypatch.setattr(kernels, "_stdtr_function", missing)
    weight = np.full((2, 3), 1 / 3)
    args = (weight, weight > 0, np.zeros((2, 3)), np.ones((2, 3)), np.ones((2, 3)), np.arange(2), np.array([1.0, 2.0]))
    np.testing.assert_array_equal(kernels.mixture_terms(*args, use_numba=True),
                                  kernels.mixture_terms(*args, use_numba=False))
    assert kernels._STDTR is False


def test_a_law_padded_to_the_tables_width_is_weighed_as_it_is() -> None:
    """A one-term law refitted in a table of two terms (another structure has two) keeps its constant whole
    and its empty term's coefficient 0, and weighs exactly as in a table of one term: the padding is not a
    coefficient that pays the coefficient price."""
    from pmkit.fitting.alternatives import multi_alternatives

    values = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    points = np.array([(x, y) for x in values for y in values])
    rng = np.random.default_rng(3)
    Y = (5.0 + 0.02 * points[:, 0] * points[:, 1])[None, :] * (1 + rng.uniform(-0.02, 0.02, (4, len(points))))
    alpha, beta = np.array([[1.0, 1.0]]), np.zeros((1, 2))
    coef = np.tile([5.0, 0.02], (4, 1))
    substitutes = {0: np.broadcast_to([[2.0, 0.0], [0.0, 1.0]], (4, 2, 2))}
    alone = multi_alternatives(("x", "y"), points, Y, alpha, beta, coef, substitutes)
    structures = [(np.array([[1.0, 0.0], [0.0, 1.0]]), np.zeros((2, 2)))]  # x + y: two terms
    padded = multi_alternatives(("x", "y"), points, Y, alpha, beta, coef, substitutes, structures)
    def index_of(table, alpha_first: list[float], beta_first: list[float]) -> int:
        first_alpha, first_beta = table.alpha[0, :, 0], table.beta[0, :, 0]
        return int(np.flatnonzero((first_alpha == alpha_first).all(axis=1) & (first_beta == beta_first).all(axis=1))[0])

    for k, (a, b) in enumerate((([2.0, 1.0], [0.0, 0.0]), ([0.0, 1.0], [1.0, 0.0]))):  # x²·y, log2(x)·y
        at = [index_of(alone, a, b), index_of(padded, a, b)]
        np.testing.assert_allclose(padded.coef[:, at[1], :2], alone.coef[:, at[0]], rtol=1e-9)
        assert (padded.coef[:, at[1], 2] == 0).all()
        ratio_alone = alone.weight[:, at[0]] / alone.weight[:, 0]
        ratio_padded = padded.weight[:, at[1]] / padded.weight[:, 0]
        np.testing.assert_allclose(ratio_padded, ratio_alone, rtol=1e-9, err_msg=f"substitute {k}")


def test_multi_parameter_sharpness_follows_the_share_of_the_grid_measured() -> None:
    from pmkit.fitting.alternatives import (
        MULTI_SHARPNESS,
        MULTI_SHARPNESS_FLOOR,
        SHARPNESS_GROWTH,
        grid_share,
        multi_sharpness,
    )

    values = (4.0, 8.0, 16.0, 32.0, 64.0)
    full = np.array([(x, y) for x in values for y in values])
    sparse = np.array([p for p in full if p[0] == 4 or p[1] == 4 or (p[0] == p[1] and 8 <= p[0] <= 32)])
    assert grid_share(full) == 1.0
    assert grid_share(sparse) == pytest.approx(12 / 25)
    assert grid_share(np.vstack([full, full])) == 1.0  # a point measured twice is one point of the grid
    assert multi_sharpness(full) == MULTI_SHARPNESS
    assert multi_sharpness(sparse) == max(MULTI_SHARPNESS * 12 / 25 * (12 / 25) ** SHARPNESS_GROWTH,
                                          MULTI_SHARPNESS_FLOOR)
    assert MULTI_SHARPNESS_FLOOR <= multi_sharpness(sparse) < multi_sharpness(full)


def test_multi_parameter_sharpness_flattens_with_the_noise_the_law_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the chosen law leaves relative noise σ above :data:`NOISE_REFERENCE`, its alternatives are weighed
    with κ·(σ/NOISE_REFERENCE)^-γ: every log weight ratio against the law shrinks by that one factor, a quiet
    series' weights stay as they were, and a noisier series never gets a sharper κ."""
    from pmkit.fitting import alternatives
    from pmkit.fitting.alternatives import (
        COMMON_SHAPES,
        NOISE_FLATTENING,
        NOISE_REFERENCE,
        multi_alternatives,
        noise_flattened,
    )

    sigma = np.array([0.0, 0.5, 1.0, 1.5, 3.0, 10.0, np.nan]) * NOISE_REFERENCE
    factor = noise_flattened(sigma)
    assert NOISE_FLATTENING > 0
    np.testing.assert_array_equal(factor[[0, 1, 2, 6]], 1.0)
    np.testing.assert_allclose(factor[3:6], np.array([1.5, 3.0, 10.0]) ** -NOISE_FLATTENING)
    assert (np.diff(factor[:6]) <= 0).all() and factor[5] < factor[4] < factor[3] < 1

    rng = np.random.default_rng(4)
    law = 3.0 + 0.01 * GRID[:, 0] ** 0.5 * GRID[:, 1] ** 2
    spread = np.array([0.005, 0.005, 0.2, 0.2])[:, None]  # two quiet series, two noisy ones
    Y = law[None, :] * (1 + spread * rng.uniform(-1, 1, (4, 25)))
    alpha, beta = np.array([[0.5, 2.0]]), np.zeros((1, 2))
    coef = np.tile([3.0, 0.01], (4, 1))
    common = np.broadcast_to(COMMON_SHAPES, (4, *COMMON_SHAPES.shape))
    substitutes = {0: common, 1: common}
    flattened = multi_alternatives(("p", "size"), GRID, Y, alpha, beta, coef, substitutes, keep=8)
    residual = (Y - law[None, :]) / Y
    left = np.sqrt((residual * residual).sum(axis=1) / (25 - 2))  # the law's 2 coefficients
    expected = noise_flattened(left)
    monkeypatch.setattr(alternatives, "NOISE_FLATTENING", 0.0)
    sharp = multi_alternatives(("p", "size"), GRID, Y, alpha, beta, coef, substitutes, keep=8)
    assert (left[:2] < NOISE_REFERENCE).all() and (left[2:] > 2 * NOISE_REFERENCE).all() and (expected[2:] < 1).all()
    np.testing.assert_array_equal(flattened.alpha, sharp.alpha)  # scaling every log weight keeps their order
    np.testing.assert_allclose(flattened.weight[:2], sharp.weight[:2], rtol=1e-12)
    for row in (2, 3):
        both = (flattened.weight[row, 1:] > 0) & (sharp.weight[row, 1:] > 0)
        assert both.sum() >= 3
        ratio = (np.log(flattened.weight[row, 1:][both] / flattened.weight[row, 0])
                 / np.log(sharp.weight[row, 1:][both] / sharp.weight[row, 0]))
        np.testing.assert_allclose(ratio, expected[row], rtol=1e-9)


def test_two_factors_are_replaced_at_once() -> None:
    """The search can read both factors of a product wrong (``p^(1/2)·size³`` for ``p^(1/3)·size²``); the
    alternatives hold the law with both replaced, each by one of its line's best shapes, and there it weighs as
    its fit says: on values of the truth it is the heaviest alternative but the law."""
    from pmkit.fitting.alternatives import COMMON_SHAPES, PAIRED, multi_alternatives

    rng = np.random.default_rng(5)
    count = 6
    Y = (3.0 + 0.01 * GRID[:, 0] ** (1 / 3) * GRID[:, 1] ** 2)[None, :] * (1 + rng.uniform(-0.01, 0.01, (count, 25)))
    alpha, beta = np.array([[0.5, 3.0]]), np.zeros((1, 2))
    coef = np.tile([3.0, 1e-4], (count, 1))
    ranked_p = np.broadcast_to([[0.5, 0.0], [1 / 3, 0.0], [0.0, 1.0]], (count, 3, 2))
    ranked_size = np.broadcast_to([[3.0, 0.0], [2.5, 0.0], [2.0, 0.0]], (count, 3, 2))
    common = np.broadcast_to(COMMON_SHAPES, (count, *COMMON_SHAPES.shape))
    substitutes = {0: np.concatenate([ranked_p, common], axis=1), 1: np.concatenate([ranked_size, common], axis=1)}
    table = multi_alternatives(("p", "size"), GRID, Y, alpha, beta, coef, substitutes)
    first = table.alpha[:, :, 0]  # rows × K × parameters: the one term's exponents
    truth = (first[:, :, 0] == 1 / 3) & (first[:, :, 1] == 2.0) & (table.beta[:, :, 0] == 0).all(axis=2)
    assert PAIRED >= 3 and truth.any(axis=1).all()  # p's second best with size's third
    heaviest_other = np.argmax(table.weight[:, 1:], axis=1) + 1
    assert truth[np.arange(count), heaviest_other].all()


def test_several_parameters_keep_more_alternatives_than_one() -> None:
    """A law of several parameters keeps :data:`MULTI_KEEP` alternatives (those with two factors replaced
    beside those with one), a law of one parameter :data:`KEEP`."""
    from pmkit.fitting.alternatives import KEEP, MULTI_KEEP

    rng = np.random.default_rng(8)
    values = (2.0 + 0.001 * GRID[:, 0] ** (1 / 3) * GRID[:, 1] ** 2)[None, :, None] * (
        1 + rng.uniform(-0.05, 0.05, (5, 25, 1)))
    models = pmkit.model(experiment(("p", "size"), GRID, values))
    table = models.uncertainty.table()
    assert MULTI_KEEP > KEEP and table.weight.shape[1] == MULTI_KEEP
    filled = (np.abs(table.coef).sum(axis=2) > 0).sum(axis=1)   # refitted, whatever the pruning left them
    assert (filled > KEEP).any()
    x = np.array([2.0, 4, 8, 16, 32])
    one = pmkit.model(experiment(("x",), x[:, None], (1 + 0.3 * x ** 2)[None, :, None] * np.ones((3, 5, 1))))
    assert one.uncertainty.table().weight.shape[1] == KEEP


def test_a_sparse_design_keeps_more_alternatives_than_a_full_grid() -> None:
    """Where the design measures part of the grid (the lines and a diagonal) κ is at its floor and the weights are
    flat: a law of three parameters there keeps :data:`SPARSE_KEEP` alternatives, more than a full grid's
    :data:`MULTI_KEEP`, and some series fill the places beyond the full grid's."""
    from pmkit.fitting.alternatives import MULTI_KEEP, SPARSE_KEEP, multi_keep

    values = (4.0, 8.0, 16.0, 32.0, 64.0)
    three = np.array([(x, y, z) for x in values for y in values for z in values])
    sparse = np.array([p for p in three if (p == 4).sum() >= 2 or (p[0] == p[1] == p[2] and 8 <= p[0] <= 32)])
    assert multi_keep(three) == MULTI_KEEP and multi_keep(GRID) == MULTI_KEEP
    assert multi_keep(sparse) == SPARSE_KEEP > MULTI_KEEP
    rng = np.random.default_rng(5)
    exact = 1.0 + 0.01 * sparse[:, 0] ** 1.5 + 0.02 * sparse[:, 1] ** (2 / 3) + 0.5 * np.log2(sparse[:, 2]) ** 2
    measured = exact[None, :, None] * (1 + rng.uniform(-0.02, 0.02, (8, len(sparse), 1)))
    table = pmkit.model(experiment(("x", "y", "z"), sparse, measured)).uncertainty.table()
    assert table.weight.shape[1] == SPARSE_KEEP
    filled = (np.abs(table.coef).sum(axis=2) > 0).sum(axis=1)
    assert (filled > MULTI_KEEP).any()
    full = (1.0 + 0.01 * three[:, 0] ** 1.5 + 0.5 * np.log2(three[:, 2]) ** 2)[None, :, None] * np.ones((2, 125, 1))
    assert pmkit.model(experiment(("x", "y", "z"), three, full)).uncertainty.table().weight.shape[1] == MULTI_KEEP


def test_multi_parameter_sharpness_grows_with_the_points_measured() -> None:
    """On a full grid of 125 points the same ratio of fits is stronger evidence than on 25: κ is
    ``(125/25)^SHARPNESS_GROWTH`` times sharper; a sparse design stays at the floor."""
    from pmkit.fitting import alternatives as alt

    values = (4.0, 8.0, 16.0, 32.0, 64.0)
    two = np.array([(x, y) for x in values for y in values])
    three = np.array([(x, y, z) for x in values for y in values for z in values])
    sparse = np.array([p for p in three if (p == 4).sum() >= 2 or (p[0] == p[1] == p[2] and 8 <= p[0] <= 32)])
    assert len(two) == alt.REFERENCE_POINTS and alt.multi_sharpness(two) == alt.MULTI_SHARPNESS
    assert alt.multi_sharpness(three) == pytest.approx(alt.MULTI_SHARPNESS * 5 ** alt.SHARPNESS_GROWTH)
    assert alt.multi_sharpness(three) > alt.multi_sharpness(two)
    assert alt.multi_sharpness(sparse) == alt.MULTI_SHARPNESS_FLOOR


def test_the_lightest_alternatives_are_pruned_from_the_mixture_up_to_their_mass() -> None:
    """Per row the lightest alternatives weighing together at most the pruned mass are set to 0 (the chosen law,
    alternative 0, never), the rest scaled to sum to 1; the interval moves by no more than that mass allows, and a
    weight of 0 takes no part in the mixture's distribution function, compiled or not."""
    from pmkit.fitting.alternatives import pruned

    weight = np.array([[0.001, 0.5, 0.3, 0.19, 0.004, 0.002, 0.003],
                       [0.2, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0]])
    out = pruned(weight, 0.005)
    # the chosen law stays though lightest; 0.002 + 0.003 ≤ 0.005, and 0.004 more would exceed it
    np.testing.assert_array_equal(out[0] == 0, [False, False, False, False, False, True, True])
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    np.testing.assert_allclose(out[0, 1:5] / out[0, 1], weight[0, 1:5] / weight[0, 1])
    np.testing.assert_array_equal(out[1], weight[1])
    np.testing.assert_array_equal(pruned(weight, 0.0), weight)

    rng = np.random.default_rng(4)
    mean = np.exp(rng.normal(0, 0.5, (3, 7)))
    sd = mean * rng.uniform(0.05, 0.3, (3, 7))
    df = np.full((3, 7), 5.0)
    table_weight = pruned(np.tile(weight[0], (3, 1)), 0.005)
    args = (table_weight, mean > 0, np.log(mean), np.sqrt(np.log1p((sd / mean) ** 2)), df, np.arange(3),
            np.array([0.5, 1.0, 2.0]))
    np.testing.assert_array_equal(kernels.mixture_terms(*args, use_numba=True),
                                  kernels.mixture_terms(*args, use_numba=False))
    center = np.array(args[2])
    center[:, 5] = np.nan  # a component of weight 0 contributes 0 even where its distribution is undefined
    spoiled = (args[0], args[1], center, *args[3:])
    assert np.isfinite(kernels.mixture_terms(*spoiled, use_numba=True)).all()
    assert np.isfinite(kernels.mixture_terms(*spoiled, use_numba=False)).all()


def test_a_parameter_added_shares_one_prior_among_its_shapes() -> None:
    """A law that leaves a parameter out is weighed against that parameter added, as a term or a factor, in each
    of the shapes offered: one hypothesis (the parameter matters), so its variants share its prior.  Offering
    twice the shapes halves each variant's weight against the law: the more shapes tried, the more of them fit
    the noise, not the more likely the parameter matters."""
    from pmkit.fitting.alternatives import multi_alternatives

    rng = np.random.default_rng(9)
    count = 5
    Y = (2.0 + 0.5 * np.log2(GRID[:, 0]))[None, :] * (1 + rng.uniform(-0.05, 0.05, (count, 25)))
    alpha, beta = np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]])
    coef = np.tile([2.0, 0.5], (count, 1))
    few = np.broadcast_to([[1.0, 0.0], [2.0, 0.0]], (count, 2, 2))
    many = np.broadcast_to([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [0.0, 1.0]], (count, 4, 2))

    def relative(additions: np.ndarray) -> np.ndarray:
        table = multi_alternatives(("p", "size"), GRID, Y, alpha, beta, coef, {}, additions={1: additions},
                                   keep=12, temperature=1.0)
        added = (table.alpha[:, :, :, 1] != 0).any(axis=2) | (table.beta[:, :, :, 1] != 0).any(axis=2)
        size_factor = (table.alpha[:, :, 0, 1] == 1.0) & (table.alpha[:, :, 0, 0] == 0.0)  # log2(p)·size
        at = np.argmax(size_factor, axis=1)
        rows = np.arange(count)
        assert size_factor.any(axis=1).all() and added.sum(axis=1).min() >= 2 * additions.shape[1] - 1
        return table.weight[rows, at] / table.weight[:, 0]

    np.testing.assert_allclose(relative(many), relative(few) / 2, rtol=1e-9)


SPARSE_VALUES = (4.0, 8.0, 16.0, 32.0, 64.0)
THREE = np.array([(x, y, z) for x in SPARSE_VALUES for y in SPARSE_VALUES for z in SPARSE_VALUES])
SPARSE_THREE = np.array([p for p in THREE if (p == 4).sum() >= 2 or (p[0] == p[1] == p[2] and 8 <= p[0] <= 32)])


def test_product_shapes_grow_along_the_diagonal_in_thirds() -> None:
    """The product terms offered on a sparse design: equal powers of every parameter, their total power in thirds
    from 0 to 3 per parameter and their total log power from 0 to 1 per parameter, the constant left out."""
    from pmkit.fitting.alternatives import PRODUCT_STEPS, product_shapes

    for n_params in (2, 3):
        alpha, beta = product_shapes(n_params)
        assert (alpha == alpha[:, :1]).all() and (beta == beta[:, :1]).all()  # the same factor for every parameter
        total_a, total_b = alpha.sum(axis=1), beta.sum(axis=1)
        assert len(alpha) == (3 * PRODUCT_STEPS * n_params + 1) * (n_params + 1) - 1
        assert not ((total_a == 0) & (total_b == 0)).any()
        np.testing.assert_allclose(np.unique(np.round(total_a * PRODUCT_STEPS, 9)),
                                   np.arange(3 * PRODUCT_STEPS * n_params + 1))
        assert set(np.round(total_b, 9)) == set(range(n_params + 1))
    alpha, beta = product_shapes(3)
    assert ((np.abs(alpha.sum(axis=1) - 4) < 1e-12) & (beta.sum(axis=1) == 0)).any()  # x·y·z² on the diagonal: t^4


def test_a_sparse_design_offers_a_product_of_every_parameter() -> None:
    """On the lines of a sparse design a product term is a sliver of the value (``x·y·z²``: 0.1% at (64, 4, 4)),
    so a search can take a law with no product at all; its alternatives then hold ``c0 + c·term`` for the
    product terms that fit all the points best, read on the diagonal, and the interval at (256, 256, 256) holds
    the truth, which the law's own alternatives miss."""
    from pmkit.fitting.alternatives import PRODUCTS_OFFERED, multi_alternatives, ranked_products

    rng = np.random.default_rng(3)
    count = 6
    exact = 1.0 + 2e-6 * SPARSE_THREE[:, 0] * SPARSE_THREE[:, 1] * SPARSE_THREE[:, 2] ** 2
    Y = exact[None, :] * (1 + rng.uniform(-0.01, 0.01, (count, len(SPARSE_THREE))))
    best_a, best_b, _ = ranked_products(SPARSE_THREE, Y, PRODUCTS_OFFERED)
    assert best_a.shape == best_b.shape == (count, PRODUCTS_OFFERED, 3)
    assert (np.abs(best_a.sum(axis=2) - 4) < 1e-9).any(axis=1).all()  # the truth's diagonal shape, t^4
    alpha, beta = np.array([[1.0, 0.0, 0.0]]), np.zeros((1, 3))  # the law read x alone
    coef = np.tile([Y[:, 0].mean(), 1e-3], (count, 1))
    truth = 1.0 + 2e-6 * 256.0 ** 4
    offered = multi_alternatives(("x", "y", "z"), SPARSE_THREE, Y, alpha, beta, coef, {})
    without = multi_alternatives(("x", "y", "z"), SPARSE_THREE, Y, alpha, beta, coef, {}, products=False)
    every = ((offered.alpha[:, :, 0] != 0).all(axis=2)) & (offered.weight > 0)  # a term holding x, y and z
    assert every.any(axis=1).all()
    _, low, high = offered.predict((256.0, 256.0, 256.0))
    _, _, high0 = without.predict((256.0, 256.0, 256.0))
    assert ((low <= truth) & (truth <= high)).all()
    assert (high0 < truth).all()
    # by pmkit.model too: the sparse design's tables hold product alternatives
    models = pmkit.model(experiment(("x", "y", "z"), SPARSE_THREE, Y[:, :, None]))
    table = models.uncertainty.table()
    diagonal = (np.abs(table.alpha[:, :, 0] - 4 / 3) < 1e-12).all(axis=2)  # x^(4/3)·y^(4/3)·z^(4/3): t^4
    assert (diagonal & (table.weight > 0)).any()


def test_a_full_grid_is_offered_no_product_terms() -> None:
    """A full grid shows how the parameters combine: its alternatives are those without product terms, to the
    last bit."""
    from pmkit.fitting.alternatives import COMMON_SHAPES, multi_alternatives

    rng = np.random.default_rng(6)
    count = 4
    exact = 1.0 + 2e-6 * THREE[:, 0] * THREE[:, 1] * THREE[:, 2] ** 2
    Y = exact[None, :] * (1 + rng.uniform(-0.01, 0.01, (count, 125)))
    alpha, beta = np.array([[1.0, 1.0, 2.0]]), np.zeros((1, 3))
    coef = np.tile([1.0, 2e-6], (count, 1))
    common = np.broadcast_to(COMMON_SHAPES, (count, *COMMON_SHAPES.shape))
    substitutes = {0: common, 1: common, 2: common}
    default = multi_alternatives(("x", "y", "z"), THREE, Y, alpha, beta, coef, substitutes)
    without = multi_alternatives(("x", "y", "z"), THREE, Y, alpha, beta, coef, substitutes, products=False)
    for name in ("alpha", "beta", "coef", "cov", "df", "weight"):
        np.testing.assert_array_equal(getattr(default, name), getattr(without, name))


def test_a_sparse_design_offers_no_product_where_the_values_show_no_growth() -> None:
    """A constant series on a sparse design: a steep product fits one diagonal point's noise and, extrapolated,
    would spread the interval by orders of magnitude; the best product does not beat the constant by the F-test at
    :data:`PRODUCT_SIGNIFICANCE`, so none is offered and the interval is the one without products, to the last bit.
    A growing product passes the same test."""
    from pmkit.fitting.alternatives import PRODUCT_SIGNIFICANCE, PRODUCTS_OFFERED, multi_alternatives, ranked_products

    rng = np.random.default_rng(11)
    count = 40
    flat = 2.0 * (1 + rng.uniform(-0.02, 0.02, (count, len(SPARSE_THREE))))
    *_, shown = ranked_products(SPARSE_THREE, flat, PRODUCTS_OFFERED)
    assert 0 < PRODUCT_SIGNIFICANCE <= 0.05 and shown.mean() <= 0.1
    alpha, beta = np.zeros((0, 3)), np.zeros((0, 3))
    coef = flat.mean(axis=1, keepdims=True)
    offered = multi_alternatives(("x", "y", "z"), SPARSE_THREE, flat, alpha, beta, coef, {})
    without = multi_alternatives(("x", "y", "z"), SPARSE_THREE, flat, alpha, beta, coef, {}, products=False)
    quiet = ~shown
    _, low, high = offered.predict((256.0, 256.0, 256.0))
    _, low0, high0 = without.predict((256.0, 256.0, 256.0))
    np.testing.assert_array_equal(low[quiet], low0[quiet])
    np.testing.assert_array_equal(high[quiet], high0[quiet])
    growing = 2.0 + 1e-6 * (SPARSE_THREE[:, 0] * SPARSE_THREE[:, 1] * SPARSE_THREE[:, 2]) ** (4 / 3)
    *_, shown = ranked_products(SPARSE_THREE, growing[None, :] * (1 + rng.uniform(-0.02, 0.02, (count, 16))),
                                PRODUCTS_OFFERED)
    assert shown.all()


def test_interval_ratio_of_a_single_value_is_one() -> None:
    from pmkit.intervals import interval_ratio

    ratio = interval_ratio([0.0, 0.0, 2.0, 3.0, np.nan, -1.0], [0.0, 5.0, 4.0, 3.0, 1.0, 2.0])
    assert ratio[0] == 1.0 and ratio[3] == 1.0
    assert ratio[1] == np.inf and ratio[5] == np.inf
    assert ratio[2] == 2.0 and np.isnan(ratio[4])


@pytest.mark.parametrize("params", [2, 3])
def test_bases_at_many_points_equal_basis_at_each_to_the_last_bit(params: int) -> None:
    rng = np.random.default_rng(params)
    count, k, t = 60, 7, 4
    exponents = np.array([0.0, 0.0, -0.0, 1 / 3, 0.5, 1.0, 2.0, 2.5, 3.0, -1.0, 1.25])
    table = AlternativeTable(tuple("pqr"[:params]), rng.choice(exponents, (count, k, t, params)),
                             rng.choice([0.0, 0.0, 1.0, 2.0, 0.5], (count, k, t, params)),
                             rng.normal(size=(count, k, 1 + t)), np.zeros((count, k, 1 + t, 1 + t)),
                             np.ones((count, k)), np.full((count, k), 1 / k))
    table.alpha[::3] = table.alpha[0]  # repeated terms, as a table's series share their laws' shapes
    points = rng.choice([0.5, 1.0, 2.0, 4.0, 25.0, 27.0, 35.5, 343.0], (25, params))
    stacked = np.stack([table.basis(p) for p in points], axis=2)
    found = table.bases(points)
    assert found.flags.c_contiguous and found.shape == stacked.shape
    assert np.array_equal(found.view(np.int64), stacked.view(np.int64))
    with pytest.raises(ValueError):
        table.bases(points[:, :1])
    for count, k, t in ((0, 3, 2), (3, 2, 0)):  # no series; laws of no term (the constant alone)
        empty = AlternativeTable.empty(table.parameters, count, k, t)
        assert np.array_equal(empty.bases(points), np.ones((count, k, len(points), 1 + t)))
