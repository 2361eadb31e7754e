"""The data model: building experiments, validation with clear errors, repetition reduction."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmkit.errors import InputError
from pmkit.experiment import CallTree, EventTable, Experiment, ExperimentBuilder, Metric, reduce_repetitions
from pmkit.series import SeriesBatch


def _builder() -> ExperimentBuilder:
    b = ExperimentBuilder(["p"], source="exp.txt")
    for p in (2, 4, 8):
        b.add_values("main->solve", "time", [p], [p * 1.0, p * 1.1])
        b.add_values("main", "time", [p], [10.0])
    return b


def test_builder_builds_arrays_with_nan_padding():
    exp = _builder().build()
    assert exp.parameters == ("p",)
    assert exp.points[:, 0].tolist() == [2, 4, 8]
    assert exp.callpaths.paths() == ["main", "main->solve"]
    values = exp.measurements["time"]
    assert values.shape == (2, 3, 2)
    assert np.isnan(values[0, :, 1]).all()
    np.testing.assert_allclose(exp.values("time")[1], [2.1, 4.2, 8.4])


def test_call_tree_parents_and_duplicate_names_stay_distinct():
    tree = CallTree()
    a = tree.add("main->solve->MPI_Allreduce")
    b = tree.add("main->init->MPI_Allreduce")
    assert a != b
    assert tree[a].name == tree[b].name == "MPI_Allreduce"
    assert tree[tree[a].parent].path == "main->solve"
    assert tree.roots() == [0]
    assert len(tree.children(0)) == 2
    with pytest.raises(ValueError, match="empty region"):
        tree.add("main->->x")


def test_point_with_wrong_number_of_coordinates_names_file_and_line():
    b = ExperimentBuilder(["p", "n"], source="exp.txt")
    with pytest.raises(InputError, match=r"exp.txt, line 7: point \[1.0\] has 1 coordinates"):
        b.add_point([1], line=7)


def test_empty_experiment_is_an_input_error():
    with pytest.raises(InputError, match="no measurement points"):
        ExperimentBuilder(["p"], source="empty.json").build()
    with pytest.raises(InputError, match="repeat"):
        ExperimentBuilder(["p", "p"])


def test_experiment_validation_catches_shape_mismatch():
    tree = CallTree()
    tree.add("main")
    with pytest.raises(ValueError, match="shape"):
        Experiment(("p",), np.array([[1.0], [2.0]]), tree, (Metric("time"),), {"time": np.ones((1, 3, 1))})
    with pytest.raises(ValueError, match="not distinct"):
        Experiment(("p",), np.array([[1.0], [1.0]]), tree, (Metric("time"),), {"time": np.ones((1, 2, 1))})


@pytest.mark.parametrize("measure, expected", [("mean", 2.0), ("median", 2.0), ("min", 1.0), ("max", 3.0)])
def test_reduce_repetitions_ignores_nan(measure, expected):
    values = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]])
    out = reduce_repetitions(values, measure)
    assert out[0] == pytest.approx(expected)
    assert np.isnan(out[1])
    with pytest.raises(ValueError, match="unknown measure"):
        reduce_repetitions(values, "mode")


def test_locations_are_kept_per_point():
    b = ExperimentBuilder(["p"])
    for p in (2, 4):
        b.add_values("main", "time", [p], [1.0])
        b.add_locations("main", "time", [p], np.arange(p, dtype=float))
    exp = b.build()
    assert exp.locations is not None
    assert [a.shape for a in exp.locations["time"]] == [(1, 1, 2), (1, 1, 4)]


def test_series_batch_covers_every_callpath_and_metric():
    b = _builder()
    for p in (2, 4, 8):
        b.add_values("main", "visits", [p], [1, 1, 1])
    exp = b.build()
    batch = SeriesBatch.from_experiment(exp)
    assert len(batch) == 4
    assert list(zip(batch.callpaths, batch.metrics, strict=True)) == [
        ("main", "time"), ("main->solve", "time"), ("main", "visits"), ("main->solve", "visits")]
    assert batch.values.shape == (4, 3, 3)
    assert np.isnan(batch.reduced()[3]).all()


def test_event_table_checks_columns():
    cols = {name: np.zeros(3) for name in ("callpath", "region", "rank", "start", "duration", "bytes",
                                           "comm_size", "peer")}
    table = EventTable(cols, ["MPI_Send"], CallTree())
    assert len(table) == 3
    assert table["rank"].dtype == np.int64
    cols["peer"] = np.zeros(2)
    with pytest.raises(ValueError, match="different lengths"):
        EventTable(cols, [], CallTree())


def _old_layout(cells: list[tuple[int, int, list[float]]], n_cp: int, n_pt: int) -> np.ndarray:
    """How ExperimentBuilder laid values out before it had blocks: a dict of lists per cell."""
    by_cell: dict[tuple[int, int], list[float]] = {}
    for cp, pt, vals in cells:
        by_cell.setdefault((cp, pt), []).extend(vals)
    reps = max((len(v) for v in by_cell.values()), default=0)
    arr = np.full((n_cp, n_pt, max(reps, 1)), np.nan)
    for (cp, pt), vals in by_cell.items():
        arr[cp, pt, : len(vals)] = vals
    return arr


CELL = st.tuples(st.integers(0, 3), st.integers(0, 2),
                 st.lists(st.one_of(st.floats(-1e6, 1e6), st.just(float("nan"))), max_size=3))


@settings(max_examples=80, deadline=None)
@given(batches=st.lists(st.tuples(st.booleans(), st.lists(CELL, max_size=6)), min_size=1, max_size=5))
def test_blocks_and_single_values_lay_out_as_before(batches):
    """add_block and add_values, interleaved, give what per-value adding always gave."""
    paths = ["main", "main->a", "main->b", "c"]
    single = ExperimentBuilder(["p"], source="x")
    bulk = ExperimentBuilder(["p"], source="x")
    for b in (single, bulk):
        for p in (1, 2, 4):
            b.add_point([p])
        for path in paths:
            b.callpaths.add(path)
        b.add_metric("time")
    cells = []
    for as_block, entries in batches:
        cells += entries
        for cp, pt, vals in entries:
            single.add_values(paths[cp], "time", pt, vals)
        if as_block:
            bulk.add_block("time", [e[0] for e in entries], [e[1] for e in entries],
                           [v for e in entries for v in e[2]], [len(e[2]) for e in entries])
        else:
            for cp, pt, vals in entries:
                bulk.add_values(paths[cp], "time", pt, vals)
    if not cells:
        with pytest.raises(InputError, match="no measured values"):
            bulk.build()
        return
    expected = _old_layout(cells, 4, 3)
    for builder in (single, bulk):
        np.testing.assert_array_equal(builder.build().measurements["time"], expected)


def test_add_block_checks_its_arrays():
    b = ExperimentBuilder(["p"])
    b.add_point([1])
    b.callpaths.add("main")
    with pytest.raises(ValueError, match="counts add up to 2"):
        b.add_block("time", [0], [0], [1.0], [2])
    with pytest.raises(ValueError, match="call path index out of range"):
        b.add_block("time", [1], [0], [1.0])
    with pytest.raises(ValueError, match="point index out of range"):
        b.add_block("time", [0], [3], [1.0])
    with pytest.raises(ValueError, match="differ in length"):
        b.add_block("time", [0, 0], [0], [1.0, 2.0])
    b.add_block("time", [0, 0], [0, 0], [1.0, 2.0, 3.0], [2, 1])
    assert b.build().measurements["time"][0, 0].tolist() == [1.0, 2.0, 3.0]


PATH = st.lists(st.sampled_from(["a", "b", "MPI_Send"]), min_size=1, max_size=4).map("->".join)


@settings(max_examples=100, deadline=None)
@given(paths=st.lists(st.one_of(PATH, st.sampled_from(["->a", "a->", "a->->b", ""])), max_size=8))
def test_add_many_builds_the_tree_add_builds(paths):
    one, many = CallTree(), CallTree()
    try:
        expected = [one.add(p) for p in paths]
    except ValueError:
        with pytest.raises(ValueError, match="empty region name"):
            many.add_many(paths)
        return
    assert many.add_many(paths).tolist() == expected
    assert list(many) == list(one)
    assert [many.children(i) for i in range(len(many))] == [one.children(i) for i in range(len(one))]
