"""The scaling report works on arrays and builds a row only when a view asks for it.

Each array-based answer is checked against the row-by-row definition it replaced (written out here):
the tree a view keeps, hidden call paths, the fastest-growing call path of a branch, the ranking.
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
from pmkit.sdk import analyse as analyse_all
from pmkit.sdk import model
from pmkit.series import SeriesBatch
from pmkit.ui import render_show
from pmkit.ui.call_tree import visible_rows

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

    def visit(index: int) -> bool:
        row = report.rows[index]
        inside = depth is None or row.depth < depth
        below = [visit(child) for child in tree.children(index)]
        shares = (row.share, row.predicted_share, row.branch_share, row.branch_predicted_share)
        keep[index] = inside and (any(math.isfinite(s) and s >= min_share for s in shares) or any(below))
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
