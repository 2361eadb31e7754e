"""The ``hedge`` modeler option (issue 18): where the points cannot reject a law that predicts far off the chosen
one, the law between the two is taken, and its interval still contains it."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pmkit
from pmkit.errors import UsageError
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.fitting.hedging import GATE, HEDGE_MODES, NARROW_SPAN, hedge_choices, narrow, put_first, steep_factor
from pmkit.intervals import AlternativeTable
from pmkit.modelers.multiparam import HEDGE_NOTE
from pmkit.models import ModelSet
from pmkit.options import Option
from pmkit.plugins import get_registry

SIZES = np.array([25.0, 30.0, 35.0, 40.0, 45.0])
P_VALUES = (27.0, 64.0, 125.0, 216.0, 343.0)
GRID = np.array([(p, s) for p in P_VALUES for s in SIZES])


def table_of(x: np.ndarray, y: np.ndarray, laws: list[tuple[int, float]]) -> AlternativeTable:
    """One series over parameters ``("p", "size")`` measured at ``x`` (points × 2): per law ``(parameter, α)``
    the law ``c0 + c·x_parameter^α`` fitted by relative least squares, in order (the first is the chosen one)."""
    table = AlternativeTable.empty(("p", "size"), 1, len(laws), 1)
    for k, (parameter, alpha) in enumerate(laws):
        design = np.column_stack([np.ones(len(x)), x[:, parameter] ** alpha])
        coef = np.linalg.lstsq(design / y[:, None], np.ones(len(x)), rcond=None)[0]
        table.alpha[0, k, 0, parameter] = alpha
        table.coef[0, k] = coef
        table.weight[0, k] = 1.0 / len(laws)
    return table


def noisy_size_law(alpha: float, noise: float, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    exact = 100.0 + 0.01 * GRID[:, 1] ** alpha
    return GRID, exact * (1 + rng.uniform(-noise, noise, len(GRID)))


def test_a_rival_within_the_noise_that_predicts_far_off_is_hedged_between() -> None:
    x, y = noisy_size_law(2.5, 0.05)
    table = table_of(x, y, [(1, 2.0), (1, 3.0), (1, 2.5)])
    far = x.max(axis=0) * 8
    at = np.einsum("skt,skt->sk", table.coef, table.basis(far))[0]
    assert at[1] / at[0] > GATE  # size³ is more than 4× off size² there
    assert hedge_choices(table, x, y[None, :]).tolist() == [2]


def test_a_steep_alternative_is_weighed_but_never_hedged_towards() -> None:
    x, y = noisy_size_law(3.0, 0.2)
    for steep in (4.0, 4.5):
        table = table_of(x, y, [(1, 2.0), (1, 3.0), (1, steep), (1, 2.5)])
        assert steep_factor(table).tolist() == [[False, False, True, False]]
        # kept out, size³ is the far rival and size^2.5 the law between
        assert hedge_choices(table, x, y[None, :]).tolist() == [3]
    # size^3.9 is the far rival, and size³ lies between
    table = table_of(x, y, [(1, 2.0), (1, 3.0), (1, 3.9), (1, 2.5)])
    assert not steep_factor(table).any()
    assert hedge_choices(table, x, y[None, :]).tolist() == [1]


def test_a_rival_the_points_reject_is_not_hedged_towards() -> None:
    x, y = noisy_size_law(2.0, 0.001)
    table = table_of(x, y, [(1, 2.0), (1, 3.0), (1, 2.5)])
    assert hedge_choices(table, x, y[None, :]).tolist() == [0]


def test_a_hedge_never_changes_the_parameters_a_law_uses() -> None:
    x, y = noisy_size_law(2.5, 0.05)
    # the law between is over p, not size: it is no candidate, and neither is a rival over p
    table = table_of(x, y, [(1, 2.0), (1, 3.0), (0, 0.5)])
    assert hedge_choices(table, x, y[None, :]).tolist() != [2]
    table = table_of(x, y, [(1, 2.0), (0, 3.0)])
    assert hedge_choices(table, x, y[None, :]).tolist() == [0]


def test_a_series_with_a_value_at_or_below_zero_keeps_its_law() -> None:
    x, y = noisy_size_law(2.5, 0.05)
    table = table_of(x, y, [(1, 2.0), (1, 3.0), (1, 2.5)])
    y = y.copy()
    y[3] = 0.0
    assert hedge_choices(table, x, y[None, :]).tolist() == [0]


def test_put_first_swaps_the_hedge_with_the_chosen_law() -> None:
    x, y = noisy_size_law(2.5, 0.05)
    table = table_of(x, y, [(1, 2.0), (1, 3.0), (1, 2.5)])
    before = table.coef.copy()
    put_first(table, np.array([2]))
    assert np.array_equal(table.coef[0, 0], before[0, 2]) and np.array_equal(table.coef[0, 2], before[0, 0])
    assert table.alpha[0, 0, 0, 1] == 2.5 and table.alpha[0, 2, 0, 1] == 2.0


def weak_experiment(count: int, seed: int, grid: np.ndarray = GRID) -> tuple[Experiment, np.ndarray, np.ndarray]:
    """``count`` series of ``c0 + c·size² + d·log2 p`` with ±5% noise on the weak-scaling grid (or ``grid``), and
    the truth at 4× both parameters."""
    rng = np.random.default_rng(seed)
    c0, c, d = (10 ** rng.uniform(-1, 1, (count, 1)) for _ in range(3))
    exact = c0 + c * grid[:, 1] ** 2 / 45 ** 2 * 10 + d * np.log2(grid[:, 0])
    values = (exact * (1 + rng.uniform(-0.05, 0.05, exact.shape)))[:, :, None]
    target = 4 * grid.max(axis=0)
    truth = (c0 + c * target[1] ** 2 / 45 ** 2 * 10 + d * np.log2(target[0]))[:, 0]
    tree = CallTree()
    for i in range(count):
        tree.add(f"s{i}")
    return Experiment(("p", "size"), grid, tree, (Metric("time"),), {"time": values}), target, truth


def used(function) -> set[str]:
    return {f.parameter for t in function.terms if t.coefficient != 0 for f in t.factors if not f.is_trivial}


def test_the_hedge_option_replaces_some_laws_and_their_intervals_contain_them() -> None:
    experiment, target, truth = weak_experiment(120, 5)
    plain = pmkit.model(experiment, hedge=False)
    hedged = pmkit.model(experiment, hedge=True)
    point = dict(zip(("p", "size"), target, strict=True))
    before = np.array([m.function.evaluate(list(target)) for m in plain])
    after = np.array([m.function.evaluate(list(target)) for m in hedged])
    changed = before != after
    assert 0 < changed.sum() < len(before)
    value, low, high = hedged.predict(point, level=0.9)
    assert np.allclose(value, after, rtol=1e-12)
    assert np.all((low <= after * (1 + 1e-12)) & (after <= high * (1 + 1e-12)))
    # a hedged law uses the chosen law's parameters, and its quality is its own
    for i in np.flatnonzero(changed).tolist():
        assert used(plain[i].function) == used(hedged[i].function)
        assert hedged[i].quality.rss != plain[i].quality.rss
    # off by 2× less often on this narrow span, the point of the option
    off = [np.mean((v / truth < 0.5) | (v / truth > 2)) for v in (before, after)]
    assert off[1] < off[0]


def test_the_hedge_option_is_declared_auto_by_default() -> None:
    modeler = get_registry().entry("modeler", "refining").obj
    option = next(o for o in modeler.options if o.name == "hedge")
    assert isinstance(option, Option) and option.type is str and option.default == "auto"
    assert option.choices == HEDGE_MODES == ("auto", "true", "false")
    assert f"span a parameter {NARROW_SPAN:g}× or less" in option.help


@pytest.mark.parametrize(("value", "same_as"), [("true", True), ("on", True), ("yes", True), ("false", False),
                                                 ("off", False), ("0", False), ("auto", True), ("AUTO", None)])
def test_the_hedge_option_parses_from_text(value: str, same_as: bool | None) -> None:
    experiment, _, _ = weak_experiment(12, 6)  # a narrow span: auto hedges as true does
    if same_as is None:
        with pytest.raises(UsageError, match=r"^option hedge: 'AUTO' is not one of auto, true, false$"):
            pmkit.model(experiment, hedge=value)
        return
    assert [m.function for m in pmkit.model(experiment, hedge=value)] == \
        [m.function for m in pmkit.model(experiment, hedge=same_as)]


@pytest.mark.parametrize("value", [1, 2.0, None])
def test_the_hedge_option_refuses_what_is_neither_a_word_nor_a_bool(value) -> None:
    experiment, _, _ = weak_experiment(4, 6)
    with pytest.raises(UsageError, match=r"^option hedge of modeler refining must be one of auto, true, false, got"):
        pmkit.model(experiment, hedge=value)


def count_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the builds :meth:`~pmkit.intervals.Uncertainty.chunks` makes from now on, appended as made."""
    import pmkit.intervals

    chunks = pmkit.intervals.Uncertainty.chunks
    builds: list[int] = []

    def counted(self, wanted=None):
        for chunk, table in chunks(self, wanted):
            builds.append(chunk.size)
            yield chunk, table

    monkeypatch.setattr(pmkit.intervals.Uncertainty, "chunks", counted)
    return builds


def hedge_builds(monkeypatch: pytest.MonkeyPatch, experiment: Experiment, **options) -> tuple[ModelSet, int]:
    """``experiment``'s models with ``options`` and how many series' alternatives were built while modeling."""
    with monkeypatch.context() as patch:
        builds = count_builds(patch)
        return pmkit.model(experiment, **options), sum(builds)


WIDE_GRID = np.array([(p, s) for p in P_VALUES for s in (25.0, 50.0, 100.0, 200.0, 400.0)])
"""The weak-scaling p values × sizes spanning 16× (narrow spans nowhere)."""


def functions(models: ModelSet) -> list:
    return [m.function for m in models]


def test_auto_hedges_the_series_of_a_narrow_span_as_true_does(monkeypatch: pytest.MonkeyPatch) -> None:
    experiment, target, _ = weak_experiment(60, 5)
    assert narrow(GRID)
    auto, built = hedge_builds(monkeypatch, experiment)
    forced, _ = hedge_builds(monkeypatch, experiment, hedge="true")
    plain, none = hedge_builds(monkeypatch, experiment, hedge=False)
    assert built == 60 and none == 0
    assert functions(auto) == functions(forced) != functions(plain)
    point = dict(zip(("p", "size"), target, strict=True))
    bounds = [models.predict(point, level=0.9) for models in (auto, forced)]
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(*bounds, strict=True))


def test_auto_builds_no_alternative_where_no_span_is_narrow(monkeypatch: pytest.MonkeyPatch) -> None:
    experiment, target, _ = weak_experiment(60, 5, WIDE_GRID)
    assert not narrow(WIDE_GRID)
    auto, built = hedge_builds(monkeypatch, experiment)
    plain, _ = hedge_builds(monkeypatch, experiment, hedge="false")
    forced, forced_built = hedge_builds(monkeypatch, experiment, hedge=True)
    assert built == 0 and forced_built == 60
    assert functions(auto) == functions(plain)
    assert [m.notes for m in auto] == [m.notes for m in plain]
    assert not auto.uncertainty.built.any()  # intervals built on demand only, as without the hedge
    point = dict(zip(("p", "size"), target, strict=True))
    auto[3].predict(point, level=0.9)
    assert auto.uncertainty.built.sum() < 60  # not whole groups: a row alone, as hedge=false builds it
    assert forced.uncertainty.built.sum() == 0


def test_auto_hedges_only_the_series_measured_on_a_narrow_span(monkeypatch: pytest.MonkeyPatch) -> None:
    """Series measured at the sizes up to 45 only (NaN beyond) are hedged; those measured at every size are not."""
    grid = np.array([(p, s) for p in P_VALUES for s in (25.0, 30.0, 35.0, 40.0, 45.0, 100.0, 200.0, 400.0)])
    experiment, _, _ = weak_experiment(80, 5, grid)
    values = experiment.measurements["time"].copy()
    values[:40, grid[:, 1] > 45] = np.nan
    experiment = Experiment(("p", "size"), grid, experiment.callpaths, (Metric("time"),), {"time": values})
    auto, built = hedge_builds(monkeypatch, experiment)
    plain, _ = hedge_builds(monkeypatch, experiment, hedge=False)
    forced, _ = hedge_builds(monkeypatch, experiment, hedge=True)
    assert built == 40
    assert functions(auto)[40:] == functions(plain)[40:]
    assert functions(auto)[:40] == functions(forced)[:40] != functions(plain)[:40]
    assert any(HEDGE_NOTE in m.notes for m in auto)
    # a series the hedge left alone gets its interval as without the hedge (built alone), a hedged one its
    # whole group's, as the hedge built it
    point = {"p": 1372.0, "size": 1600.0}
    for models in (auto, plain, forced):
        assert not models.uncertainty.built.any()
    wide = [models[60].predict(point, level=0.9) for models in (auto, plain)]
    assert (wide[0].low, wide[0].high) == (wide[1].low, wide[1].high)
    assert auto.uncertainty.built.sum() == 1
    blocks = auto.uncertainty._blocks
    i = next(i for i in range(40) if (blocks == blocks[i]).sum() > 1)
    hedged = [models[i].predict(point, level=0.9) for models in (auto, forced)]
    assert (hedged[0].low, hedged[0].high) == (hedged[1].low, hedged[1].high)
    assert auto.uncertainty.built.sum() == 1 + (blocks == blocks[i]).sum()
    assert (blocks[60] == blocks).sum() > 1  # the series left alone has a group too


def test_a_narrow_span_is_that_of_a_parameter_measured_at_two_values_or_more() -> None:
    assert narrow(np.array([[1.0, 10.0], [1.0, 10.0 * NARROW_SPAN]]))
    assert not narrow(np.array([[1.0, 10.0], [1.0, 10.0 * NARROW_SPAN * 1.01]]))
    assert not narrow(np.array([[5.0, 10.0], [5.0, 10.0 * NARROW_SPAN * 1.01]]))  # p at one value: no span
    assert not narrow(np.array([[0.0, 10.0], [1.0, 10.0 * NARROW_SPAN * 1.01]]))  # a value 0: no ratio
    assert narrow(np.array([[0.0, 10.0], [1.0, 15.0]]))  # the narrow one decides
    assert not narrow(np.zeros((0, 2)))


def test_the_cli_reads_the_three_values_and_refuses_others(tmp_path, capsys) -> None:
    from pmkit.cli import main

    experiment, _, _ = weak_experiment(12, 6)
    lines = ["PARAMETER p", "PARAMETER size",
             "POINTS " + " ".join(f"( {p:g} {s:g} )" for p, s in GRID), "METRIC time"]
    for i in range(12):
        lines.append(f"REGION s{i}")
        lines += [f"DATA {float(v)!r}" for v in experiment.measurements["time"][i, :, 0]]
    file = tmp_path / "weak.txt"
    file.write_text("\n".join(lines) + "\n")
    texts = {}
    for value in ("auto", "true", "false"):
        assert main(["model", str(file), "--json", "-O", f"hedge={value}"]) == 0
        texts[value] = [m["text"] for m in json.loads(capsys.readouterr().out)["models"]]
    assert main(["model", str(file), "--json"]) == 0
    assert [m["text"] for m in json.loads(capsys.readouterr().out)["models"]] == texts["auto"] == texts["true"]
    assert texts["true"] != texts["false"]
    assert main(["model", str(file), "-O", "hedge=maybe"]) == 2
    error = capsys.readouterr().err.strip()
    assert error == "error: option hedge: 'maybe' is not one of auto, true, false"


def hedged_in_steps(monkeypatch: pytest.MonkeyPatch, experiment: Experiment, rows: int
                    ) -> tuple[ModelSet, int]:
    """The ``hedge`` option's models of ``experiment`` with the alternatives built ``rows`` series (whole groups)
    at a time and the hedge chosen ``rows`` series at a time, and how many builds the hedge made."""
    import pmkit.fitting.hedging
    import pmkit.intervals

    monkeypatch.setattr(pmkit.intervals, "STREAM_ROWS", rows)
    monkeypatch.setattr(pmkit.fitting.hedging, "CHOICE_ROWS", rows)
    builds = count_builds(monkeypatch)
    models = pmkit.model(experiment, hedge=True)
    return models, len(builds)


def test_the_hedge_chosen_a_group_at_a_time_is_the_hedge_chosen_on_every_series_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    experiment, target, _ = weak_experiment(120, 5)
    point = dict(zip(("p", "size"), target, strict=True))
    found = {}
    for rows in (10**9, 1):
        with monkeypatch.context() as patch:
            models, builds = hedged_in_steps(patch, experiment, rows)
            bounds = [models.predict(point, level=0.9, keep=keep) for keep in (False, True)]
        found[rows] = (models, builds, bounds)
    (whole, one, whole_bounds), (steps, many, step_bounds) = found[10**9], found[1]
    assert one == 1 and many > 1  # every series in one build; a group per build
    assert sum(m.function != whole[i].function for i, m in enumerate(pmkit.model(experiment, hedge=False))) > 0
    for a, b in zip(whole, steps, strict=True):
        assert a.function == b.function and a.notes == b.notes
        assert repr(a.quality.to_json()) == repr(b.quality.to_json())  # to the last bit
    for a, b in zip(whole_bounds + step_bounds[:1], step_bounds + whole_bounds[1:], strict=True):
        assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))
    assert np.isfinite(whole_bounds[0][1]).sum() > 100


def test_a_hedged_models_interval_alone_is_the_one_every_series_gets() -> None:
    experiment, target, _ = weak_experiment(60, 7)
    point = dict(zip(("p", "size"), target, strict=True))
    _, low, high = pmkit.model(experiment, hedge=True).predict(point, level=0.9)
    models = pmkit.model(experiment, hedge=True)
    alone = models[5].predict(point, level=0.9)
    assert (alone.low, alone.high) == (low[5], high[5])
    # the series' whole group is built with it, as the hedge built it
    assert models.uncertainty.built.sum() > 1


def test_the_tree_marks_a_hedged_law_with_a_footnote() -> None:
    from rich.console import Console

    from pmkit.modelers.multiparam import HEDGE_NOTE
    from pmkit.ui.call_tree import HEDGE_PREFIX, CallTreeView

    assert HEDGE_NOTE.startswith(HEDGE_PREFIX)
    experiment, target, _ = weak_experiment(40, 5)
    models = pmkit.model(experiment, hedge=True)
    hedged = [m.callpath for m in models if HEDGE_NOTE in m.notes]
    assert hedged
    report = pmkit.analyse(experiment, models=models, target=dict(zip(("p", "size"), target, strict=True)),
                           detectors=[]).inputs[0].report
    console = Console(width=120, record=True, color_system=None)
    console.print(CallTreeView(report, min_share=0.0))
    text = console.export_text()
    assert "¹ hedge: the law between the best-fitting one and a rival the points cannot reject" in text


def law_quality_one_by_one(table: AlternativeTable, points: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The reference of :func:`pmkit.modelers.multiparam._law_qualities`: one series (a one-row ``table``) as
    the hedge computed it before, its design from :meth:`AlternativeTable.basis` point by point."""
    from pmkit.fitting.leastsquares import adjusted_r2, fit_design, smape

    design = np.stack([table.basis(p)[0, 0] for p in points])
    used = np.flatnonzero(np.concatenate([[True], table.coef[0, 0, 1:] != 0]))
    predicted = design @ table.coef[0, 0]
    fit = fit_design(y[None, :], design[:, used])
    rss = float(((y - predicted) ** 2).sum())
    tss = float(((y - y.mean()) ** 2).sum())
    r2 = adjusted_r2(np.array([rss]), np.array([tss]), len(y), used.size)
    loo = float(fit.loo_smape[0]) if len(y) > used.size else np.nan
    return np.array([rss, float(smape(y, predicted)), float(r2[0]), loo])


def test_the_hedged_laws_quality_batched_is_each_series_own_to_the_last_bit() -> None:
    from pmkit.modelers.multiparam import _law_qualities

    experiment, _, _ = weak_experiment(150, 9)
    table = pmkit.model(experiment, hedge=True).uncertainty.table()
    # each series' second alternative as its law: laws that share a design and laws that do not
    law = AlternativeTable(table.parameters, table.alpha[:, 1:2], table.beta[:, 1:2], table.coef[:, 1:2],
                           table.cov[:, 1:2], table.df[:, 1:2], table.weight[:, 1:2])
    Y = experiment.measurements["time"][:, :, 0]
    found = _law_qualities(law, GRID, Y)
    expected = np.stack([law_quality_one_by_one(law.rows(np.array([i])), GRID, Y[i]) for i in range(len(Y))])
    designs = {law.alpha[i].tobytes() + law.beta[i].tobytes() for i in range(len(Y))}
    assert 1 < len(designs) < len(Y)
    assert np.isfinite(found).all()
    assert np.array_equal(found.view(np.int64), expected.view(np.int64))
