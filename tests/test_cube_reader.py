"""The Cube reader against real Score-P files, Extra-P's reading of a real study, and generated studies."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit.errors import InputError, UsageError
from pmkit.readers.cube import CubeReader, read_cube
from pmkit.readers.cube_study import parse_run_name
from pmkit.testing.cubewriter import TIME, VISITS, CubeMetric, edit_member, write_cube

REFERENCE = Path(__file__).parent / "cube_reference"


def _cube(shared_data: Path) -> Path:
    folder = shared_data / "cube"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


# ---------------------------------------------------------------- real Score-P files


def test_every_pycubexr_profile_loads(shared_data):
    files = sorted((_cube(shared_data) / "pycubexr").rglob("*.cubex"))
    assert len(files) >= 9
    for file in files:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # defects are reported in the provenance, never as Python warnings
            exp = pmkit.read(file)
        assert bool(exp.provenance.warnings) == ("checksum_bug" in file.name), file
        assert exp.provenance.reader == "cube"
        assert len(exp.callpaths) > 0 and exp.metric_names, file
        assert exp.locations is not None
        for name in exp.metric_names:
            assert np.isfinite(exp.measurements[name]).all(), (file, name)


def _cnode_paths(file: Path) -> dict[int, str]:
    from pycubexr import CubexParser

    with CubexParser(file) as cube:
        paths: dict[int, str] = {}
        for cnode in cube.all_cnodes():
            parent = cnode.parent
            paths[cnode.id] = (paths[parent.id] + "->" if parent is not None else "") + cube.get_region(cnode).name
    return paths


@pytest.mark.parametrize("folder,name", [("call_tree_test", "call_tree_test.cubex"),
                                         ("time.p4.n2000.x1.r0", "profile.cubex"),
                                         ("blast.p64.r1", "profile.cubex")])
@pytest.mark.parametrize("mode", ["incl", "excl"])
def test_values_match_reference_csv(shared_data, folder, name, mode):
    file = _cube(shared_data) / "pycubexr" / folder / name
    exp = read_cube(file, values="inclusive" if mode == "incl" else "exclusive")
    paths = _cnode_paths(file)
    with open(file.parent / f"{mode}.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    header = [h.strip() for h in rows[0]]
    compared = 0
    for row in rows[1:]:
        cnode, location = int(row[0]), int(row[1])
        cp = exp.callpaths.index(paths[cnode])
        for metric, text in zip(header[2:], row[2:], strict=True):
            expected = float(text)
            if metric not in exp.measurements:
                # Score-P declares these but never wrote data: the CSV shows zeros, pmkit leaves them out
                assert expected == 0, (metric, row)
                assert any(metric in note for note in exp.provenance.notes)
                continue
            got = exp.locations[metric][0][cp, 0, location]
            assert got == pytest.approx(expected, rel=1e-5, abs=1e-9), (metric, paths[cnode], location)
            compared += 1
    assert compared > 50
    # the per-run value is the mean over locations (Extra-P's weak scaling)
    np.testing.assert_allclose(exp.measurements["time"][:, 0, 0], np.mean(exp.locations["time"][0][:, 0, :], axis=1))


def test_checksum_bug_file_loads_with_one_warning(shared_data):
    file = _cube(shared_data) / "pycubexr" / "bt-mz_sum.p2.r1" / "cube4.8_with_checksum_bug.cubex"
    exp = pmkit.read(file)
    assert exp.parameters == ("p",) and exp.points.tolist() == [[2.0]]
    assert len(exp.callpaths) == 127
    assert exp.provenance.warnings == [f"{file}: tar header checksums are wrong (a known bug of CubeWriter 4.8); "
                                       "read without checking them"]
    assert not any("checksums" in note for note in exp.provenance.notes), "reported once, not twice"


def test_values_example_loads_supported_types_and_names_the_rest(shared_data):
    file = _cube(shared_data) / "pycubexr" / "test_only_files" / "cube-values_example.cubex"
    exp = pmkit.read(file)
    assert set(exp.metric_names) == {"INT8", "UINT8", "INT16", "UINT16", "INT32", "UINT32", "INT64", "UINT64",
                                     "DOUBLE", "MINDOUBLE", "MAXDOUBLE", "COMPLEX"}
    skipped = {reason.split(":")[0]: reason for _, reason in exp.provenance.skipped}
    assert set(skipped) == {"metric RATE", "metric TAU_ATOMIC", "metric HISTOGRAM5", "metric NDOUBLES10",
                            "metric SCALE_FUNC3", "metric TAU_ATOMIC2"}
    assert "HISTOGRAM(5)" in skipped["metric HISTOGRAM5"]
    assert all(f == str(file) for f, _ in exp.provenance.skipped)
    assert exp.parameters == ("run",)


@pytest.mark.parametrize("study", ["extrap-mm-single", "extrap-simple-threaded"])
def test_studies_read_as_extrap_reads_them(shared_data, study):
    """Reference: tests/cube_reference/STUDY.json, recorded with Extra-P 4.2.5 by
    ``/tmp/extrap-venv/bin/python tests/cube_reference/record_extrap.py ../shared/data/cube/STUDY``.
    """
    ref = json.loads((REFERENCE / f"{study}.json").read_text())
    folder = _cube(shared_data) / study
    weak = pmkit.read(folder)
    strong = pmkit.read(folder, aggregation="sum")
    assert list(weak.parameters) == ref["parameters"]
    assert weak.points.tolist() == ref["points"]
    assert weak.callpaths.paths() == ref["callpaths"]
    assert weak.metric_names == ref["metrics"]
    checked = 0
    for callpath in ref["callpaths"]:
        for metric in ref["metrics"]:
            for pt, point in enumerate(ref["points"]):
                cp = weak.callpaths.index(callpath)
                expected = ref["scalings"]["weak"].get(f"{callpath}|{metric}|{float(point[0])!r}")
                if expected is None:
                    # Extra-P has no value where a metric's index leaves a call path out; Cube reads it as 0
                    assert weak.values(metric)[cp, pt] == 0.0
                    continue
                assert weak.values(metric)[cp, pt] == pytest.approx(expected["mean"], rel=1e-12, abs=1e-300)
                per_location = weak.locations[metric][pt][cp].ravel()
                assert np.median(per_location) == pytest.approx(expected["median"], rel=1e-12, abs=1e-300)
                assert per_location.min() == pytest.approx(expected["minimum"], rel=1e-12, abs=1e-300)
                assert per_location.max() == pytest.approx(expected["maximum"], rel=1e-12, abs=1e-300)
                strong_expected = ref["scalings"]["strong"][f"{callpath}|{metric}|{float(point[0])!r}"]["mean"]
                assert strong.values(metric)[cp, pt] == pytest.approx(strong_expected, rel=1e-12, abs=1e-300)
                checked += 1
    assert checked == len(ref["scalings"]["weak"]) >= 40


def test_extrap_mm_single_notes(shared_data):
    weak = pmkit.read(_cube(shared_data) / "extrap-mm-single")
    assert any("bytes_get" in note and "bytes_put" in note for note in weak.provenance.notes)
    assert any("parameter y" in note for note in weak.provenance.notes)


# ---------------------------------------------------------------- folder names


@pytest.mark.parametrize("name,prefix,coordinates,repetition", [
    # the examples of Extra-P's docs/file-formats.md
    ("mm.a1.1b1.1c1.1", "mm", {"a": 1.1, "b": 1.1, "c": 1.1}, None),
    ("mm.x1y1z1", "mm", {"x": 1, "y": 1, "z": 1}, None),
    ("mm.x1y1z1.r1", "mm", {"x": 1, "y": 1, "z": 1}, 1),
    ("mm.a1,1.b1,1.c1,1.r1", "mm", {"a": 1.1, "b": 1.1, "c": 1.1}, 1),
    ("mm.x1.1,y1,1,z1.1.r1", "mm", {"x": 1.1, "y": 1.1, "z": 1.1}, 1),
    ("mm.x1.1.y1.1.z1.1.r1", "mm", {"x": 1.1, "y": 1.1, "z": 1.1}, 1),
    ("mm.x1.y1.z1.r1", "mm", {"x": 1, "y": 1, "z": 1}, 1),
    ("x1y1z1", "", {"x": 1, "y": 1, "z": 1}, None),
    # issue 4's examples, and a parameter starting with r
    ("lulesh.p64.r2", "lulesh", {"p": 64}, 2),
    ("app.p64.size30.r3", "app", {"p": 64, "size": 30}, 3),
    ("p64.size30", "", {"p": 64, "size": 30}, None),
    ("ranks4", "", {"ranks": 4}, None),
    ("app.ranks4.r12", "app", {"ranks": 4}, 12),
    ("bt-mz_sum.p2.r1", "bt-mz_sum", {"p": 2}, 1),
    ("my.app.v2.p8.r3", "my.app", {"v": 2, "p": 8}, 3),
])
def test_run_names(name, prefix, coordinates, repetition):
    parsed = parse_run_name(name)
    assert (parsed.prefix, parsed.coordinates, parsed.repetition) == (prefix, coordinates, repetition)


@pytest.mark.parametrize("name,message", [
    ("mm.r1", "repetition 1"),          # Extra-P: "Could not detect parameter in ..."
    ("mm.xyz.r1", "cannot find parameters"),
    ("scorep-20240607_1200_123", "cannot find parameters"),  # Score-P's default experiment folder
    ("app.r4", "read as repetition 4"),
    ("mm.x1x2", "appears twice"),
])
def test_bad_run_names(name, message):
    with pytest.raises(ValueError, match=message):
        parse_run_name(name)


def _study(folder: Path, runs: dict[str, np.ndarray | None], callpaths=("main", "main->work", "main->MPI_Allreduce"),
           metrics=(TIME, VISITS)) -> dict[str, dict[str, np.ndarray]]:
    """Write one run per entry (name → time per call path × location); returns what was written."""
    written = {}
    for name, time in runs.items():
        values = {"time": time, "visits": np.ones_like(time)}
        write_cube(folder / name / "profile.cubex", callpaths, metrics, values, processes=time.shape[1])
        written[name] = values
    return written


def test_unparseable_folder_names_the_folder(tmp_path):
    _study(tmp_path, {"scorep-20240607_1200": np.ones((3, 2)), "old": np.ones((3, 2))})
    with pytest.raises(InputError) as info:
        pmkit.read(tmp_path)
    assert info.value.member == "old" and str(tmp_path) in str(info.value)
    assert "manifest" in str(info.value)


def test_a_stray_folder_beside_the_runs_is_skipped_and_said(tmp_path, pmkit_cli):
    """One folder without parameters in its name (Score-P's default scorep-… folder left beside the runs)
    stopped the whole study with an error; it is one bad entry of a set, reported and skipped."""
    _study(tmp_path, {"lulesh.p2.r1": np.ones((3, 2)), "lulesh.p4.r1": np.ones((3, 4)),
                      "scorep-20240607_1200": np.ones((3, 2))})
    experiment = pmkit.read(tmp_path)
    assert experiment.parameters == ("p",) and sorted(experiment.points[:, 0]) == [2, 4]
    ((source, problem),) = experiment.provenance.skipped
    assert "scorep-20240607_1200" in source and "cannot find parameters" in problem
    result = pmkit_cli("model", tmp_path, "--json", columns=400)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("\n") == 1 and "skipped" in result.stderr and "scorep-20240607_1200" in result.stderr
    (skipped,) = json.loads(result.stdout)["skipped"]
    assert "scorep-20240607_1200" in skipped["source"]


def test_runs_naming_different_parameters_are_rejected(tmp_path):
    # Extra-P: "Parameters must be the same and in the same order"
    _study(tmp_path, {"mm.x1y1.r1": np.ones((3, 1)), "mm.x2z1.r1": np.ones((3, 1))})
    with pytest.raises(InputError, match="different parameters"):
        pmkit.read(tmp_path)


def test_folder_without_cube_files(tmp_path):
    (tmp_path / "mm.x1.r1").mkdir()
    assert not CubeReader().sniff(tmp_path)
    with pytest.raises(InputError, match=r"no \.cubex"):
        read_cube(tmp_path)


# ---------------------------------------------------------------- generated studies


def test_repetitions_points_and_aggregations(tmp_path):
    rng = np.random.default_rng(11)
    runs = {f"app.p{p}.n5.r{r}": rng.uniform(1, 2, (3, p)) for p in (2, 4, 8) for r in (1, 2, 3)}
    written = _study(tmp_path, runs)
    assert CubeReader().sniff(tmp_path)
    exp = pmkit.read(tmp_path)
    assert exp.parameters == ("p",)  # n is 5 everywhere and dropped, as Extra-P does
    assert exp.points[:, 0].tolist() == [2, 4, 8]
    assert exp.measurements["time"].shape == (3, 3, 3)
    sums = {agg: read_cube(tmp_path, aggregation=agg, locations=False) for agg in ("sum", "max", "min")}
    for (p, r), name in {((p, r), f"app.p{p}.n5.r{r}") for p in (2, 4, 8) for r in (1, 2, 3)}:
        pt = exp.points[:, 0].tolist().index(p)
        time = written[name]["time"]
        np.testing.assert_allclose(exp.measurements["time"][:, pt, r - 1], time.mean(axis=1), rtol=1e-12)
        np.testing.assert_allclose(exp.locations["time"][pt][:, r - 1, :], time, rtol=1e-12)
        for agg, reduced in (("sum", time.sum(axis=1)), ("max", time.max(axis=1)), ("min", time.min(axis=1))):
            np.testing.assert_allclose(sums[agg].measurements["time"][:, pt, r - 1], reduced, rtol=1e-12)
    assert sums["sum"].locations is None
    assert exp.provenance.aggregation == "exclusive values, mean over locations"


def test_inclusive_values(tmp_path):
    time = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    _study(tmp_path, {"a.p2.r1": time, "a.p4.r1": np.ones((3, 4))})
    exp = read_cube(tmp_path, values="inclusive")
    main = exp.callpaths.index("main")
    np.testing.assert_allclose(exp.locations["time"][0][main, 0], time.sum(axis=0))
    assert exp.metric("time").inclusive and exp.metric("time").unit == "sec"
    assert read_cube(tmp_path).locations["time"][0][main, 0].tolist() == [1.0, 2.0]


def test_call_paths_missing_in_some_runs_are_nan_and_noted(tmp_path):
    _study(tmp_path, {"a.p2.r1": np.ones((3, 2)), "a.p4.r1": np.ones((3, 4))})
    write_cube(tmp_path / "a.p8.r1" / "profile.cubex", ["main", "main->work"], [TIME, VISITS],
               {"time": np.full((2, 8), 2.0), "visits": np.ones((2, 8))}, processes=8)
    exp = pmkit.read(tmp_path)
    cp = exp.callpaths.index("main->MPI_Allreduce")
    assert np.isnan(exp.values("time")[cp, 2]) and exp.values("time")[cp, :2].tolist() == [1.0, 1.0]
    assert np.isnan(exp.locations["time"][2][cp]).all()
    assert exp.values("time")[exp.callpaths.index("main->work"), 2] == 2.0
    assert any("main->MPI_Allreduce (2 of 3 runs)" in note for note in exp.provenance.notes)


def test_locations_that_differ_between_repetitions(tmp_path):
    _study(tmp_path, {"a.p2.r1": np.ones((3, 2)), "a.p2.r2": np.full((3, 3), 3.0), "a.p4.r1": np.ones((3, 4))})
    exp = pmkit.read(tmp_path)
    per_point = exp.locations["time"][0]
    assert per_point.shape == (3, 2, 3)
    assert np.isnan(per_point[:, 0, 2]).all() and (per_point[:, 1, :] == 3.0).all()
    assert any("different numbers of locations ([2, 3])" in note for note in exp.provenance.notes)


def test_corrupt_and_truncated_files_are_skipped_by_name(tmp_path):
    rng = np.random.default_rng(5)
    _study(tmp_path, {f"a.p{p}.r{r}": rng.uniform(1, 2, (3, p)) for p in (2, 4, 8) for r in (1, 2)})
    truncated = tmp_path / "a.p4.r2" / "profile.cubex"
    truncated.write_bytes(truncated.read_bytes()[:1500])
    garbage = tmp_path / "a.p8.r1" / "profile.cubex"
    garbage.write_bytes(b"this is not a tar archive" * 40)
    exp = pmkit.read(tmp_path)
    skipped = dict(exp.provenance.skipped)
    assert set(skipped) == {str(truncated), str(garbage)}
    assert all(reason for reason in skipped.values())
    assert exp.points[:, 0].tolist() == [2, 4, 8]
    assert np.isnan(exp.measurements["time"][:, 1, 1]).all() and np.isfinite(exp.measurements["time"][:, 1, 0]).all()
    assert len(exp.provenance.sources) == 4


def test_all_files_unreadable(tmp_path):
    for name in ("a.p2.r1", "a.p4.r1"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "profile.cubex").write_bytes(b"\0" * 10)
    with pytest.raises(InputError, match="none of the 2 Cube files"):
        pmkit.read(tmp_path)
    # one file: its problem alone, not "a.cubex: none of the 1 Cube files could be read (a.cubex: ...)"
    with pytest.raises(InputError) as one:
        pmkit.read(tmp_path / "a.p2.r1" / "profile.cubex")
    assert str(one.value) == f"{tmp_path / 'a.p2.r1' / 'profile.cubex'}: not a Cube file: it is not a tar archive " \
                             "(truncated header)"


def test_only_requested_metrics_are_decoded(tmp_path):
    _study(tmp_path, {"a.p2.r1": np.ones((3, 2)), "a.p4.r1": np.ones((3, 4))})
    exp = pmkit.read(tmp_path, metrics="visits")
    assert exp.metric_names == ["visits"] and set(exp.locations) == {"visits"}
    with pytest.raises(UsageError, match="no metric 'bogus'"):
        pmkit.read(tmp_path, metrics="time,bogus")


def test_metric_without_data_in_some_runs(tmp_path):
    write_cube(tmp_path / "a.p2.r1" / "profile.cubex", ["main"], [TIME, VISITS],
               {"time": np.ones((1, 2)), "visits": np.ones((1, 2))}, processes=2)
    write_cube(tmp_path / "a.p4.r1" / "profile.cubex", ["main"], [TIME, VISITS],
               {"time": np.ones((1, 4)), "visits": np.ones((1, 4))}, processes=4, without_data=["visits"])
    exp = pmkit.read(tmp_path)
    assert np.isnan(exp.values("visits")[0, 1]) and exp.values("visits")[0, 0] == 1.0
    assert any("visits has no data in 1 of 2 files" in note for note in exp.provenance.notes)


def test_derived_metrics_are_skipped_and_named(tmp_path):
    derived = CubeMetric("avg", "sec", "DOUBLE", "PREDERIVED_EXCLUSIVE", expression="metric::time()")
    for p in (2, 4):
        write_cube(tmp_path / f"a.p{p}.r1" / "profile.cubex", ["main"], [TIME, derived],
                   {"time": np.ones((1, p))}, processes=p)
    exp = pmkit.read(tmp_path)
    assert exp.metric_names == ["time"]
    assert len(exp.provenance.skipped) == 2 and all("derived metric" in r for _, r in exp.provenance.skipped)


def test_parallel_load_gives_the_same_experiment(tmp_path):
    rng = np.random.default_rng(8)
    _study(tmp_path, {f"a.p{p}.r{r}": rng.uniform(1, 2, (3, p)) for p in (2, 3, 4, 5, 6) for r in (1, 2)})
    (tmp_path / "a.p6.r2" / "profile.cubex").write_bytes(b"broken")
    serial = read_cube(tmp_path, jobs=1)
    parallel = read_cube(tmp_path, jobs=2)
    for name in serial.metric_names:
        np.testing.assert_array_equal(serial.measurements[name], parallel.measurements[name])
    assert serial.provenance.skipped == parallel.provenance.skipped


@pytest.mark.parametrize("kind", ["toml", "csv"])
def test_manifest_maps_files_to_coordinates(tmp_path, kind):
    rng = np.random.default_rng(9)
    written = {}
    for i, (p, size) in enumerate([(2, 10), (4, 10), (2, 20), (4, 20)]):
        time = rng.uniform(1, 2, (2, p))
        write_cube(tmp_path / f"run_{i}" / "out.cubex", ["main", "main->x"], [TIME], {"time": time}, processes=p)
        written[(p, size)] = (f"run_{i}/out.cubex", time)
    if kind == "toml":
        text = "".join(f'[[run]]\nfile = "{f}"\np = {p}\nsize = {s}\n\n' for (p, s), (f, _) in written.items())
        (tmp_path / "pmkit-manifest.toml").write_text(text)
    else:
        text = "file,p,size\n" + "".join(f"{f},{p},{s}\n" for (p, s), (f, _) in written.items())
        (tmp_path / "pmkit-manifest.csv").write_text(text)
    assert CubeReader().sniff(tmp_path)
    exp = pmkit.read(tmp_path)
    assert exp.parameters == ("p", "size") and len(exp.points) == 4
    for (p, size), (_, time) in written.items():
        pt = [tuple(x) for x in exp.points.tolist()].index((p, size))
        np.testing.assert_allclose(exp.values("time")[:, pt], time.mean(axis=1), rtol=1e-12)


def test_bad_manifests(tmp_path):
    write_cube(tmp_path / "r" / "out.cubex", ["main"], [TIME], {"time": np.ones((1, 1))})
    manifest = tmp_path / "m.csv"
    manifest.write_text("file,p\nr/out.cubex,four\n")
    with pytest.raises(InputError, match="not a number") as info:
        read_cube(tmp_path, manifest=str(manifest))
    assert info.value.line == 2
    manifest.write_text("file,p\nr/missing.cubex,4\n")
    with pytest.raises(InputError, match="does not exist"):
        read_cube(tmp_path, manifest=str(manifest))
    toml = tmp_path / "m.toml"
    toml.write_text("[[run]]\nfile = 3\n")
    with pytest.raises(InputError, match="no 'file'"):
        read_cube(tmp_path, manifest=str(toml))
    toml.write_text("this is = = not toml")
    with pytest.raises(InputError, match="not valid TOML"):
        read_cube(tmp_path, manifest=str(toml))


def test_single_file_in_a_parseable_folder(tmp_path):
    file = write_cube(tmp_path / "kernel.p16.size8.r2" / "profile.cubex", ["main"], [TIME],
                      {"time": np.full((1, 16), 0.5)}, processes=16)
    exp = pmkit.read(file)
    assert exp.parameters == ("p", "size") and exp.points.tolist() == [[16.0, 8.0]]
    assert exp.locations["time"][0].shape == (1, 1, 16)


def test_reading_reports_progress_and_draws_nothing(tmp_path, capsys):
    from pmkit import progress

    _study(tmp_path, {f"a.p{p}.r1": np.ones((3, p)) for p in (2, 3, 4)})
    events = []
    with progress.listening(events.append):
        read_cube(tmp_path, jobs=2)
    assert capsys.readouterr().err == ""  # a reader never draws
    assert events[0].description == "reading Cube files" and events[0].total == 3
    assert [e.completed for e in events if not e.finished][-1] == 3 and events[-1].finished


def test_same_region_twice_under_one_parent_is_combined(tmp_path):
    file = write_cube(tmp_path / "a.p2.r1" / "profile.cubex", ["main", "main->solve", "main->other"], [TIME],
                      {"time": np.array([[1.0, 1.0], [2.0, 3.0], [4.0, 5.0]])}, processes=2)
    # two call sites of the same region: rename 'other' to 'solve'
    edit_member(file, "anchor.xml", lambda anchor: anchor.replace(b"<name>other</name>", b"<name>solve</name>"))
    exp = pmkit.read(file)
    assert exp.callpaths.paths() == ["main", "main->solve"]
    assert exp.locations["time"][0][1, 0].tolist() == [6.0, 8.0]
    assert any("more than once under the same parent" in note for note in exp.provenance.notes)


def test_sum_over_locations_of_minimum_and_maximum_metrics(tmp_path):
    # Extra-P's strong scaling sums locations; for MINDOUBLE/MAXDOUBLE Cube's "sum" is min/max
    low = CubeMetric("min_time", "sec", "MINDOUBLE", "EXCLUSIVE")
    high = CubeMetric("max_time", "sec", "MAXDOUBLE", "EXCLUSIVE")
    values = np.array([[3.0, 1.0, 2.0]])
    for p in (3, 6):
        write_cube(tmp_path / f"a.p{p}.r1" / "profile.cubex", ["main"], [TIME, low, high],
                   {"time": np.tile(values, (1, p // 3)), "min_time": np.tile(values, (1, p // 3)),
                    "max_time": np.tile(values, (1, p // 3))}, processes=p)
    summed = read_cube(tmp_path, aggregation="sum")
    assert summed.values("min_time")[0].tolist() == [1.0, 1.0]
    assert summed.values("max_time")[0].tolist() == [3.0, 3.0]
    assert summed.values("time")[0].tolist() == [6.0, 12.0]
    assert read_cube(tmp_path).values("min_time")[0].tolist() == [2.0, 2.0]  # mean, as Extra-P's weak scaling


def test_manifest_given_as_the_path(tmp_path):
    for p in (2, 4):
        write_cube(tmp_path / "runs" / f"x{p}.cubex", ["main"], [TIME], {"time": np.full((1, p), float(p))},
                   processes=p)
    manifest = tmp_path / "study.csv"
    manifest.write_text("file,ranks\nruns/x2.cubex,2\nruns/x4.cubex,4\n")
    exp = pmkit.read(manifest, reader="cube")
    assert exp.parameters == ("ranks",) and exp.values("time")[0].tolist() == [2.0, 4.0]
