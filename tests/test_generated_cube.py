"""The Cube reader on generated twins of the real Cube files: no shared data needed.

``pmkit.testing.cubewriter`` writes files with the structure of those in ``shared/data/cube``:
every value type of CubeLib's ``cube-values_example`` (locations numbered thread by thread),
CubeWriter 4.8's wrong tar checksums, Score-P's gzip-compressed anchors with compressed data and
metrics declared without data (``extrap-mm-single``), threads (``extrap-simple-threaded``),
inclusive and exclusive values per location (``call_tree_test`` with its CSVs), counters whose
stored inclusive values are below their children's (``hw_counter/*_negative``) and indexes that
leave call paths out.  Each read must give the values written, per location.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pmkit
from pmkit.readers.cube import read_cube
from pmkit.testing.cubewriter import TIME, VISITS, CubeMetric, edit_member, write_cube

RNG = np.random.default_rng(2024)
THREE = ["main", "main->foo", "main->bar"]

SCALAR = {"INT8": "INCLUSIVE", "UINT8": "INCLUSIVE", "INT16": "INCLUSIVE", "UINT16": "INCLUSIVE",
          "INT32": "INCLUSIVE", "UINT32": "INCLUSIVE", "INT64": "INCLUSIVE", "UINT64": "INCLUSIVE",
          "DOUBLE": "INCLUSIVE", "MINDOUBLE": "EXCLUSIVE", "MAXDOUBLE": "EXCLUSIVE", "COMPLEX": "INCLUSIVE"}
OTHER = {"RATE": "RATE", "TAU_ATOMIC": "TAU_ATOMIC", "HISTOGRAM5": "HISTOGRAM(5)", "NDOUBLES10": "NDOUBLES(10)",
         "SCALE_FUNC3": "SCALE_FUNC", "TAU_ATOMIC2": "TAU_ATOMIC"}


def values_example(folder):
    """The twin of pycubexr's ``test_only_files/cube-values_example.cubex``: 2 processes × 2 threads."""
    metrics = [CubeMetric(name, "sec", name, kind) for name, kind in SCALAR.items()]
    metrics += [CubeMetric(name, "sec", dtype, "EXCLUSIVE") for name, dtype in OTHER.items()]
    values = {name: RNG.integers(0, 100, (3, 4)).astype(float) for name in SCALAR}
    values["INT8"] = RNG.integers(-40, 40, (3, 4)).astype(float)
    values["DOUBLE"] = RNG.uniform(-1, 1, (3, 4))
    values["COMPLEX"] = RNG.uniform(0, 1, (3, 4)) + 1j * RNG.uniform(0, 1, (3, 4))
    path = write_cube(folder / "test_only_files" / "cube-values_example.cubex", THREE, metrics, values, processes=2,
                      threads=2, threads_first=True, creator="CubeLib-4.8.2")
    return path, values


def test_every_value_type(tmp_path):
    path, values = values_example(tmp_path)
    exp = pmkit.read(path)
    assert exp.provenance.reader == "cube"
    assert set(exp.metric_names) == set(SCALAR)
    skipped = {reason.split(":")[0]: reason for _, reason in exp.provenance.skipped}
    assert set(skipped) == {f"metric {name}" for name in OTHER}
    assert "HISTOGRAM(5)" in skipped["metric HISTOGRAM5"] and "not one number per location" in skipped["metric RATE"]
    assert exp.parameters == ("run",) and exp.points.tolist() == [[1.0]]
    assert any("no parameters in the folder name 'test_only_files'" in note for note in exp.provenance.notes)
    for name in SCALAR:
        written = np.abs(values[name]) if name == "COMPLEX" else values[name]
        np.testing.assert_allclose(exp.locations[name][0][:, 0, :], written, rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(exp.measurements[name][:, 0, 0], written.mean(axis=1), rtol=1e-12)
    assert exp.metric("UINT64").unit == "sec"


def test_locations_are_taken_by_id(tmp_path):
    """Thread-by-thread numbering: location id k is column k whatever the system tree's order."""
    time = np.arange(12, dtype=float).reshape(3, 4) + 1
    path = write_cube(tmp_path / "a.p2.r1" / "x.cubex", THREE, [TIME], {"time": time}, processes=2, threads=2,
                      threads_first=True)
    np.testing.assert_array_equal(pmkit.read(path).locations["time"][0][:, 0, :], time)


def test_checksum_bug_of_cubewriter_4_8(tmp_path):
    """The twin of ``bt-mz_sum.p2.r1/cube4.8_with_checksum_bug.cubex``: read with one warning."""
    time = RNG.uniform(1, 2, (3, 2))
    file = write_cube(tmp_path / "bt-mz_sum.p2.r1" / "cube4.8_with_checksum_bug.cubex", THREE, [TIME, VISITS],
                      {"time": time, "visits": np.ones((3, 2))}, processes=2, broken_checksums=True)
    import tarfile

    with pytest.raises(tarfile.ReadError):
        tarfile.open(file).getmembers()  # the checksums really are wrong
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exp = pmkit.read(file)
    assert exp.parameters == ("p",) and exp.points.tolist() == [[2.0]]
    assert exp.provenance.warnings == [f"{file}: tar header checksums are wrong (a known bug of CubeWriter 4.8); "
                                       "read without checking them"]
    assert not any("checksums" in note for note in exp.provenance.notes)
    np.testing.assert_allclose(exp.locations["time"][0][:, 0, :], time, rtol=1e-12)


def test_inclusive_and_exclusive_per_location(tmp_path):
    """The twin of ``call_tree_test`` and its ``incl.csv``/``excl.csv``: a deeper tree, each kind of metric."""
    callpaths = ["main", "main->a", "main->a->b", "main->a->c", "main->d", "main->d->a", "main->d->a->b"]
    low = CubeMetric("min_time", "sec", "MINDOUBLE", "EXCLUSIVE")
    high = CubeMetric("max_time", "sec", "MAXDOUBLE", "EXCLUSIVE")
    counter = CubeMetric("PAPI_TOT_CYC", "#", "UINT64", "INCLUSIVE")
    metrics = [TIME, VISITS, low, high, counter]
    values = {"time": RNG.uniform(0, 1, (7, 3)), "visits": RNG.integers(1, 9, (7, 3)).astype(float),
              "min_time": RNG.uniform(0, 1, (7, 3)), "max_time": RNG.uniform(0, 1, (7, 3)),
              "PAPI_TOT_CYC": RNG.integers(0, 10**6, (7, 3)).astype(float)}
    path = write_cube(tmp_path / "call_tree_test" / "call_tree_test.cubex", callpaths, metrics, values, processes=3,
                      compress=True)
    exclusive = read_cube(path, values="exclusive")
    inclusive = read_cube(path, values="inclusive")
    order = [exclusive.callpaths.index(p) for p in callpaths]
    parents = {p: [q for q in callpaths if q == p or q.startswith(p + "->")] for p in callpaths}
    for name, written in values.items():
        np.testing.assert_allclose(exclusive.locations[name][0][order, 0, :], written, rtol=1e-12, err_msg=name)
    for i, path_name in enumerate(callpaths):
        subtree = [callpaths.index(q) for q in parents[path_name]]
        for name in ("time", "visits", "PAPI_TOT_CYC"):
            np.testing.assert_allclose(inclusive.locations[name][0][order[i], 0], values[name][subtree].sum(axis=0),
                                       rtol=1e-12, err_msg=(name, path_name))
        # Cube's rule: the inclusive minimum/maximum is the extreme over the subtree
        np.testing.assert_allclose(inclusive.locations["min_time"][0][order[i], 0],
                                   values["min_time"][subtree].min(axis=0), rtol=1e-12)
        np.testing.assert_allclose(inclusive.locations["max_time"][0][order[i], 0],
                                   values["max_time"][subtree].max(axis=0), rtol=1e-12)
    np.testing.assert_allclose(exclusive.measurements["time"][order, 0, 0], values["time"].mean(axis=1), rtol=1e-12)
    assert inclusive.metric("time").inclusive and not exclusive.metric("time").inclusive


def test_counters_below_their_childrens_sum_read_as_zero(tmp_path):
    """``hw_counter/L2_DCM_negative.cubex``: stored inclusive counters smaller than the children's sum."""
    counter = CubeMetric("PAPI_L2_DCM", "#", "UINT64", "INCLUSIVE")
    stored = np.array([[10.0, 50.0], [30.0, 20.0], [5.0, 40.0]])  # main's 10 < 30 + 5 on location 0
    path = write_cube(tmp_path / "hw_counter" / "L2_DCM_negative.cubex", THREE, [counter], {"PAPI_L2_DCM": stored},
                      processes=2, as_stored=True)
    exp = read_cube(path)
    assert exp.locations["PAPI_L2_DCM"][0][0, 0].tolist() == [0.0, 0.0]  # never below zero
    assert exp.locations["PAPI_L2_DCM"][0][1:, 0].tolist() == [[30.0, 20.0], [5.0, 40.0]]
    assert np.isfinite(exp.measurements["PAPI_L2_DCM"]).all()


def test_call_paths_left_out_of_an_index_read_as_zero(tmp_path):
    time = RNG.uniform(1, 2, (3, 1))
    path = write_cube(tmp_path / "a.p1.r1" / "x.cubex", THREE, [TIME, VISITS],
                      {"time": time, "visits": np.ones((3, 1))}, left_out={"visits": ["main->bar"]}, compress=True,
                      gzip_anchor=True)
    exp = pmkit.read(path)
    assert exp.values("visits")[:, 0].tolist() == [1.0, 1.0, 0.0]
    np.testing.assert_allclose(exp.values("time")[:, 0], time[:, 0], rtol=1e-12)


def test_nested_metric_tree(tmp_path):
    """Score-P's metric hierarchy (time > execution > mpi): every metric of the tree is read."""
    mpi = CubeMetric("mpi", "sec", "DOUBLE", "EXCLUSIVE")
    execution = CubeMetric("execution", "sec", "DOUBLE", "EXCLUSIVE", children=(mpi,))
    time = CubeMetric("time", "sec", "DOUBLE", "INCLUSIVE", children=(execution,))
    values = {name: RNG.uniform(0, 1, (3, 2)) for name in ("time", "execution", "mpi")}
    exp = pmkit.read(write_cube(tmp_path / "a.p2.r1" / "x.cubex", THREE, [time], values, processes=2))
    assert exp.metric_names == ["time", "execution", "mpi"]
    for name, written in values.items():
        np.testing.assert_allclose(exp.locations[name][0][:, 0, :], written, rtol=1e-12)


def test_writer_refuses_unknown_types():
    with pytest.raises(ValueError, match="unsupported dtype 'FLOAT128'"):
        CubeMetric("x", dtype="FLOAT128")


# -- studies -----------------------------------------------------------------------------------------

MM = (1, 10, 25, 50, 100, 250, 500, 1000, 2000)
MM_PATHS = ["main", "main->init_mat", "main->zero_mat", "main->mat_mul"]


def mm_single(folder):
    """The twin of ``extrap-mm-single``: Score-P's layout and metrics, ``mm.x{x}y1z1.r1``, 4 call paths."""
    metrics = [VISITS, TIME, CubeMetric("min_time", "sec", "MINDOUBLE", "EXCLUSIVE"),
               CubeMetric("max_time", "sec", "MAXDOUBLE", "EXCLUSIVE"),
               CubeMetric("bytes_put", "bytes", "UINT64", "EXCLUSIVE"),
               CubeMetric("bytes_get", "bytes", "UINT64", "EXCLUSIVE"),
               CubeMetric("PAPI_FP_OPS", "#", "UINT64", "INCLUSIVE")]
    written = {}
    for x in MM:
        time = np.array([[1e-4], [2e-6 * x * x], [1e-6 * x * x], [1e-9 * x ** 3]])
        values = {"visits": np.ones((4, 1)), "time": time, "min_time": time, "max_time": time,
                  "PAPI_FP_OPS": np.array([[10.0], [0.0], [0.0], [2.0 * x ** 3]])}
        write_cube(folder / f"mm.x{x}y1z1.r1" / "profile.cubex", MM_PATHS, metrics, values, compress=True,
                   gzip_anchor=True, without_data=["bytes_put", "bytes_get"], creator="Score-P 1.4")
        written[x] = values
    return written


def test_mm_single_twin(tmp_path):
    written = mm_single(tmp_path)
    exp = pmkit.read(tmp_path)
    assert exp.parameters == ("x",) and exp.points[:, 0].tolist() == list(map(float, MM))
    assert exp.callpaths.paths() == MM_PATHS
    assert exp.metric_names == ["visits", "time", "min_time", "max_time", "PAPI_FP_OPS"]
    assert [m.unit for m in exp.metrics] == ["occ", "sec", "sec", "sec", "#"]
    assert any("bytes_get" in note and "bytes_put" in note for note in exp.provenance.notes)
    assert any("parameter y" in note for note in exp.provenance.notes)
    assert any("parameter z" in note for note in exp.provenance.notes)
    for pt, x in enumerate(MM):
        # stored inclusive and read back exclusive: exact up to the rounding of the sums
        np.testing.assert_allclose(exp.values("time")[:, pt], written[x]["time"][:, 0], rtol=1e-9)
        np.testing.assert_allclose(exp.values("PAPI_FP_OPS")[:, pt], written[x]["PAPI_FP_OPS"][:, 0], rtol=1e-12)


def test_show_of_the_mm_single_twin(tmp_path, pmkit_cli):
    mm_single(tmp_path / "extrap-mm-single")
    result = pmkit_cli("show", tmp_path / "extrap-mm-single")
    assert result.returncode == 0, result.stderr
    assert max(map(len, result.stdout.splitlines())) <= 80
    expected = ["main", "init_mat", "mat_mul", "zero_mat", "9 points x=1…2000", "target x=8000",
                "Fastest growing towards x=8000"]
    assert [text for text in expected if text not in result.stdout] == []


def test_simple_threaded_twin(tmp_path):
    """The twin of ``extrap-simple-threaded``: ``example.f{f}/cube-example{f}.cubex``, 2 processes × 2 threads;
    weak scaling takes the mean over locations, strong scaling (``aggregation=sum``) their sum."""
    callpaths = ["main", "main->foo", "main->bar", "main->omp parallel", "main->zero"]
    written = {}
    for f in range(1, 6):
        values = {"time": RNG.uniform(0, f, (5, 4)), "visits": RNG.integers(1, 5, (5, 4)).astype(float)}
        write_cube(tmp_path / f"example.f{f}" / f"cube-example{f}.cubex", callpaths,
                   [TIME, CubeMetric("visits", "#", "UINT64", "EXCLUSIVE")], values, processes=2, threads=2)
        written[f] = values
    weak = pmkit.read(tmp_path)
    strong = pmkit.read(tmp_path, aggregation="sum")
    assert weak.parameters == ("f",) and weak.points[:, 0].tolist() == [1, 2, 3, 4, 5]
    assert weak.callpaths.paths() == callpaths and weak.metric_names == ["time", "visits"]
    for pt, f in enumerate(range(1, 6)):
        for name, per_location in written[f].items():
            np.testing.assert_allclose(weak.values(name)[:, pt], per_location.mean(axis=1), rtol=1e-12)
            np.testing.assert_allclose(strong.values(name)[:, pt], per_location.sum(axis=1), rtol=1e-12)
            stored = weak.locations[name][pt][:, 0, :]
            np.testing.assert_allclose(np.median(stored, axis=1), np.median(per_location, axis=1), rtol=1e-12)
            np.testing.assert_allclose(stored.min(axis=1), per_location.min(axis=1), rtol=1e-12, atol=1e-15)


def test_a_value_type_pycubexr_cannot_decode_is_named(tmp_path):
    """A scalar-looking type pycubexr has no decoder for (a newer CubeLib's, or a damaged anchor)."""
    path = write_cube(tmp_path / "a.p2.r1" / "x.cubex", THREE, [TIME, CubeMetric("wide", "sec", "DOUBLE", "EXCLUSIVE")],
                      {"time": np.ones((3, 2)), "wide": np.ones((3, 2))}, processes=2)
    edit_member(path, "anchor.xml", lambda anchor: anchor.replace(b"<uniq_name>wide</uniq_name><dtype>DOUBLE",
                                                                  b"<uniq_name>wide</uniq_name><dtype>FLOAT128"))
    exp = pmkit.read(path)
    assert exp.metric_names == ["time"]
    assert exp.provenance.skipped == [(str(path), "metric wide: pycubexr cannot decode values of type FLOAT128")]
