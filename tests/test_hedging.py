"""The ``hedge`` modeler option (issue 18): where the points cannot reject a law that predicts far off the chosen
one, the law between the two is taken, and its interval still contains it."""

from __future__ import annotations

import numpy as np
import pytest

import pmkit
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.fitting.hedging import GATE, hedge_choices, put_first
from pmkit.intervals import AlternativeTable
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


def weak_experiment(count: int, seed: int) -> tuple[Experiment, np.ndarray, np.ndarray]:
    """``count`` series of ``c0 + c·size² + d·log2 p`` with ±5% noise on the weak-scaling grid, and the truth
    at 4× both parameters."""
    rng = np.random.default_rng(seed)
    c0, c, d = (10 ** rng.uniform(-1, 1, (count, 1)) for _ in range(3))
    exact = c0 + c * GRID[:, 1] ** 2 / 45 ** 2 * 10 + d * np.log2(GRID[:, 0])
    values = (exact * (1 + rng.uniform(-0.05, 0.05, exact.shape)))[:, :, None]
    target = np.array([4 * 343.0, 4 * 45.0])
    truth = (c0 + c * target[1] ** 2 / 45 ** 2 * 10 + d * np.log2(target[0]))[:, 0]
    tree = CallTree()
    for i in range(count):
        tree.add(f"s{i}")
    return Experiment(("p", "size"), GRID, tree, (Metric("time"),), {"time": values}), target, truth


def used(function) -> set[str]:
    return {f.parameter for t in function.terms if t.coefficient != 0 for f in t.factors if not f.is_trivial}


def test_the_hedge_option_replaces_some_laws_and_their_intervals_contain_them() -> None:
    experiment, target, truth = weak_experiment(120, 5)
    plain = pmkit.model(experiment)
    assert [m.function for m in plain] == [m.function for m in pmkit.model(experiment, hedge=False)]
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


def test_the_hedge_option_is_declared_off_by_default() -> None:
    modeler = get_registry().entry("modeler", "refining").obj
    option = next(o for o in modeler.options if o.name == "hedge")
    assert isinstance(option, Option) and option.type is bool and option.default is False


@pytest.mark.parametrize("text", ["true", "on"])
def test_the_hedge_option_parses_from_text(text: str) -> None:
    experiment, _, _ = weak_experiment(12, 6)
    assert [m.function for m in pmkit.model(experiment, hedge=text)] == \
        [m.function for m in pmkit.model(experiment, hedge=True)]


def hedged_in_steps(monkeypatch: pytest.MonkeyPatch, experiment: Experiment, rows: int
                    ) -> tuple[ModelSet, int]:
    """The ``hedge`` option's models of ``experiment`` with the alternatives built ``rows`` series (whole groups)
    at a time and the hedge chosen ``rows`` series at a time, and how many builds the hedge made."""
    import pmkit.fitting.hedging
    import pmkit.intervals

    monkeypatch.setattr(pmkit.intervals, "STREAM_ROWS", rows)
    monkeypatch.setattr(pmkit.fitting.hedging, "CHOICE_ROWS", rows)
    chunks = pmkit.intervals.Uncertainty.chunks
    builds = []

    def counted(self, wanted=None):
        for chunk, table in chunks(self, wanted):
            builds.append(chunk.size)
            yield chunk, table

    monkeypatch.setattr(pmkit.intervals.Uncertainty, "chunks", counted)
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
    assert sum(m.function != whole[i].function for i, m in enumerate(pmkit.model(experiment))) > 0
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
