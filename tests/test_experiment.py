"""The data model: building experiments, validation with clear errors, repetition reduction."""

from __future__ import annotations

import numpy as np
import pytest

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
