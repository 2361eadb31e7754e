"""The scaling report works on arrays and builds a row only when a view asks for it.

Each array-based answer is checked against the row-by-row definition it replaced (written out here):
the tree a view keeps, hidden call paths, the fastest-growing call path of a branch, the ranking; and
the strong-scaling views' (issue 12) negative predictions left out, lost shares and the ranking of what
limits the speed-up.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from rich.console import Console

from pmkit.errors import UsageError
from pmkit.experiment import ExperimentBuilder
from pmkit.modelers.refining import RefiningModeler
from pmkit.scaling import CallpathScaling, ScalingReport, analyse
from pmkit.schema import finite_json
from pmkit.sdk import analyse as analyse_all
from pmkit.sdk import model
from pmkit.series import SeriesBatch
from pmkit.ui import render_show
from pmkit.ui.call_tree import NEGATIVE_NAMED, visible_rows

POINTS = (2, 4, 8, 16, 32)


def random_study(count: int, seed: int, inclusive: bool = False):
    """A random call tree; laws of a few kinds (so growth factors tie), some nodes without values."""
    rng = np.random.default_rng(seed)
    builder = ExperimentBuilder(["p"], source="random.txt")
    builder.add_metric("time", "s", inclusive)
    paths = ["main"]
    for i in range(count):
        parent = paths[int(rng.integers(0, len(paths)))]
        paths.append(f"{parent}->r{i}")
    x = np.array(POINTS, dtype=float)
    for k, path in enumerate(paths):
        kind = int(rng.integers(0, 6))
        if kind == 0:
            builder.callpaths.add(path)
            continue
        scale = float(rng.choice([1.0, 2.0, 1e-4]))
        law = {1: 3 + 0 * x, 2: 1 + x, 3: 2 + x ** 2, 4: 1 + np.log2(x), 5: 9 - 0.1 * x}[kind] * scale
        for p, value in zip(POINTS, law, strict=True):
            builder.add_values(path, "time", [p], [value * (1 + 0.01 * (k % 3))])
    experiment = builder.build()
    return experiment, model(experiment)


def reference_kept(report: ScalingReport, depth: int | None, min_share: float) -> list[bool]:
    """The tree a view keeps, row by row (the definition before the arrays)."""
    tree = report.experiment.callpaths
    keep = [False] * len(tree)
    shared = any(math.isfinite(s) for r in report.rows
                 for s in (r.share, r.predicted_share, r.branch_share, r.branch_predicted_share))

    def visit(index: int) -> bool:
        row = report.rows[index]
        inside = depth is None or row.depth < depth
        below = [visit(child) for child in tree.children(index)]
        shares = (row.share, row.predicted_share, row.branch_share, row.branch_predicted_share)
        keep[index] = inside and (any(math.isfinite(s) and s >= min_share for s in shares) or any(below)
                                  or not shared)
        return keep[index]

    for root in tree.roots():
        visit(root)
    return keep


def reference_branch_growth(report: ScalingReport, index: int, min_share: float) -> CallpathScaling | None:
    tree = report.experiment.callpaths
    out, stack = [], [index]
    while stack:
        i = stack.pop()
        out.append(report.rows[i])
        stack.extend(tree.children(i))
    rows = [r for r in out if r.has_model and r.growth_class is not None
            and (r.index == index or (math.isfinite(r.predicted_share) and r.predicted_share >= min_share))]
    if not rows:
        return None
    zero = lambda v: v if math.isfinite(v) else 0.0  # noqa: E731
    return max(rows, key=lambda r: (r.growth_class.order, zero(r.growth), r.index == index))


def reference_ranking(report: ScalingReport, min_share: float, limit: int | None) -> list[CallpathScaling]:
    zero = lambda v: v if math.isfinite(v) else 0.0  # noqa: E731
    rows = [r for r in report.rows if r.has_model and math.isfinite(r.growth) and r.growth > 1.0 + 1e-9
            and r.growth_class is not None and r.growth_class.level > 0
            and (not math.isfinite(r.predicted_share) or r.predicted_share >= min_share)]
    rows.sort(key=lambda r: (-r.growth, -zero(r.predicted_share), r.callpath))
    return rows if limit is None else rows[:limit]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("inclusive", [False, True])
def test_array_answers_are_the_row_by_row_answers(seed: int, inclusive: bool) -> None:
    experiment, models = random_study(300, seed, inclusive)
    report = analyse(experiment, models)
    tree = experiment.callpaths
    for depth, min_share in ((None, 0.0), (None, 0.01), (3, 0.002), (1, 0.5), (None, 2.0)):
        assert report.shown(depth, min_share).tolist() == reference_kept(report, depth, min_share)
    hidden = [sum(1 for _ in report.branch(i)) - 1 for i in range(len(tree))]
    assert report.descendants().tolist() == hidden
    for index in range(0, len(tree), 7):
        for min_share in (0.0, 0.001):
            assert report.branch_growth(index, min_share) is reference_branch_growth(report, index, min_share)
    growth = [r.growth for r in report.ranking()]
    assert len(growth) > len(set(growth)) + 10, "equal growth factors: ties must be broken as before"
    for min_share in (0.0, 0.001, 0.05):
        for limit in (None, 1, 3, 10, 1000):
            assert report.ranking(min_share, limit) == reference_ranking(report, min_share, limit)


def random_strong_study(count: int, seed: int, inclusive: bool = False):
    """A random call tree of a strong-scaling study (its total falls as 1/p): laws that fall, stay constant,
    grow and fall below zero before the target, modeled without falling terms (so some models are negative
    at the target and left out, and lost shares tie)."""
    rng = np.random.default_rng(seed)
    builder = ExperimentBuilder(["p"], source="strong.txt")
    builder.add_metric("time", "s", inclusive)
    paths = ["main"]
    for i in range(count):
        paths.append(f"{paths[int(rng.integers(0, len(paths)))]}->r{i}")
    x = np.array(POINTS, dtype=float)
    for k, path in enumerate(paths):
        kind = int(rng.integers(0, 7)) if k else 0  # the root falls, so that an inclusive total does
        if kind == 6:
            builder.callpaths.add(path)
            continue
        scale = float(rng.choice([1.0, 2.0]))
        law = {0: 500 / x, 1: 64 / x, 2: 3 + 0 * x, 3: 1 + 0.05 * x, 4: 12 - 2 * np.log2(x), 5: 9 - 0.1 * x}[kind]
        for p, value in zip(POINTS, law * scale, strict=True):
            builder.add_values(path, "time", [p], [value * (1 + 0.01 * (k % 3))])
    experiment = builder.build()
    return experiment, model(experiment, falling=False)


def reference_limiting(report: ScalingReport, min_share: float, limit: int | None) -> list[CallpathScaling]:
    tree = report.experiment.callpaths
    whole = {i for i in tree.roots() if tree.children(i)} if report.inclusive else set()
    rows = [r for r in report.rows if r.has_model and math.isfinite(r.lost) and r.lost > 0 and r.lost >= min_share
            and r.index not in whole]
    rows.sort(key=lambda r: (-r.lost, r.callpath))
    return rows if limit is None else rows[:limit]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("inclusive", [False, True])
def test_strong_scaling_columns_are_the_row_by_row_answers(seed: int, inclusive: bool) -> None:
    experiment, models = random_strong_study(300, seed, inclusive)
    report = analyse(experiment, models)
    assert report.strong is not None and report.target == {"p": 128.0}
    tree = experiment.callpaths
    rows = list(report.rows)
    negative = [r for r in rows if r.has_model and r.predicted < 0]
    assert 5 < len(negative) < len(rows) // 2
    assert report.negative_rows() == negative
    counted = tree.roots() if inclusive else range(len(rows))
    assert report.left_out == sum(1 for i in counted if rows[i].predicted < 0)
    for r in rows:
        assert r.negative == (r.predicted < 0)
        assert r.branch_negative == sum(b.predicted < 0 for b in report.branch(r.index))
        if r.negative:
            assert math.isnan(r.predicted_share) and math.isnan(r.lost)
        elif r.has_model:
            assert r.predicted_share == pytest.approx(r.predicted / report.total_predicted)
            assert r.lost == pytest.approx((r.predicted - r.fitted * report.strong.ideal) / report.total_predicted)
    losses = [r.lost for r in report.limiting()]
    assert len(losses) > len(set(losses)) + 10, "equal losses: ties must be broken by call path as before"
    for min_share in (0.0, 0.001, 0.02):
        for limit in (None, 1, 3, 10, 1000):
            assert report.limiting(min_share, limit) == reference_limiting(report, min_share, limit)
    assert finite_json(report.rows_json(range(len(rows)))) == finite_json([r.to_json() for r in rows])


def test_strong_views_build_and_describe_only_the_rows_they_show() -> None:
    experiment, models = random_strong_study(3000, 6)
    analysis = analyse_all(experiment, models=models, detectors=[])
    report = analysis.inputs[0].report
    assert report.strong is not None and report.left_out > 100
    out = io.StringIO()
    render_show(Console(file=out, width=120), analysis, min_share=0.05, top=5)
    built = sum(row is not None for row in report.rows._built)
    assert 0 < built < 200 + NEGATIVE_NAMED and len(report._trends) <= built, (built, len(report._trends))
    named = report.negative_rows(NEGATIVE_NAMED)
    count = report.negative_count()
    assert len(named) == NEGATIVE_NAMED and named == report.negative_rows()[:NEGATIVE_NAMED] and count > 100
    note = " ".join(out.getvalue().split())
    assert f"! {count:,} models are negative at p=128" in note
    assert f"and {count - NEGATIVE_NAMED:,} more (pmkit show --json lists them)" in note


def test_rows_hold_what_the_columns_hold() -> None:
    experiment, models = random_study(60, 3)
    report = analyse(experiment, models)
    for row in report.rows:
        function = row.model.function if row.model is not None else None
        assert row.callpath == experiment.callpaths[row.index].path
        assert row.has_model == (function is not None)
        if function is not None:
            with np.errstate(all="ignore"):
                assert row.fitted == function.evaluate(report.reference["p"])
                assert row.predicted == function.evaluate(report.target["p"])
    tree = experiment.callpaths
    assert tree.parents().tolist() == [-1 if cp.parent is None else cp.parent for cp in tree]
    assert tree.depths().tolist() == [cp.depth for cp in tree]
    assert report.modelers() == ["refining"]
    with pytest.raises(UsageError, match="did you mean main->r0"):
        report.row("R0")


def test_show_builds_only_the_rows_and_models_it_shows() -> None:
    experiment, _ = random_study(3000, 4)
    analysis = analyse_all(experiment, detectors=[])
    result = analysis.inputs[0]
    console = Console(file=io.StringIO(), width=120)
    render_show(console, analysis, min_share=0.05, top=5)
    built = sum(row is not None for row in result.report.rows._built)
    models = sum(m is not None for m in result.models._cache)
    assert 0 < built < 200 and models <= built, (built, models)
    shown = [row for row, *_ in visible_rows(result.report, min_share=0.05) if row is not None]
    assert shown and all(result.report.rows._built[r.index] is r for r in shown)


def test_third_party_models_as_a_plain_list() -> None:
    experiment, models = random_study(40, 5)
    objects = list(RefiningModeler().model(SeriesBatch.from_experiment(experiment)))
    from_list = analyse(experiment, objects)
    from_set = analyse(experiment, models)
    assert [r.growth for r in from_list.rows] == pytest.approx([r.growth for r in from_set.rows], nan_ok=True)
    assert [r.callpath for r in from_list.ranking()] == [r.callpath for r in from_set.ranking()]
