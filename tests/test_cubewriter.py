"""The test Cube writer and the example study: pycubexr must read back exactly what was written."""

from __future__ import annotations

import tarfile
from fractions import Fraction

import numpy as np
import pytest

from pmkit.testing import example_study
from pmkit.testing.cubewriter import BYTES_SENT, TIME, VISITS, CubeMetric, write_cube

CALLPATHS = ["main", "main->solve", "main->solve->MPI_Waitall", "main->io", "main->io->MPI_Waitall", "main->finish"]


def _values(rng: np.random.Generator, locations: int) -> dict[str, np.ndarray]:
    return {"time": rng.uniform(0.1, 2.0, (len(CALLPATHS), locations)),
            "visits": rng.integers(1, 50, (len(CALLPATHS), locations)).astype(float),
            "bytes_sent": rng.integers(0, 10**9, (len(CALLPATHS), locations)).astype(float)}


def _read_back(path):
    from pycubexr import CubexParser

    out = {}
    with CubexParser(path) as cube:
        paths = {}
        for cnode in cube.all_cnodes():
            parent = cnode.parent
            paths[cnode.id] = (paths[parent.id] + "->" if parent is not None else "") + cube.get_region(cnode).name
        locations = len(cube.get_locations())
        for metric in cube.get_metrics():
            mv = cube.get_metric_values(metric)
            out[metric.name] = {paths[c.id]: (np.asarray(mv.cnode_values(c, convert_to_exclusive=True), dtype=float),
                                              np.asarray(mv.cnode_values(c, convert_to_inclusive=True), dtype=float))
                                for c in cube.all_cnodes()}
        units = {m.name: (m.units, m.metric_type, m.data_type) for m in cube.get_metrics()}
    return out, units, locations


@pytest.mark.parametrize("compress", [False, True])
def test_pycubexr_reads_back_exclusive_and_inclusive_values(tmp_path, compress):
    rng = np.random.default_rng(3)
    values = _values(rng, 6)
    path = write_cube(tmp_path / "run" / "profile.cubex", CALLPATHS, [TIME, VISITS, BYTES_SENT], values,
                      processes=3, threads=2, compress=compress)
    read, units, locations = _read_back(path)
    assert locations == 6
    assert units == {"time": ("sec", "INCLUSIVE", "DOUBLE"), "visits": ("occ", "EXCLUSIVE", "UINT64"),
                     "bytes_sent": ("bytes", "EXCLUSIVE", "UINT64")}
    assert set(read["time"]) == set(CALLPATHS)  # the two MPI_Waitall nodes stay distinct
    for i, cp in enumerate(CALLPATHS):
        np.testing.assert_allclose(read["time"][cp][0], values["time"][i], rtol=1e-12)
        np.testing.assert_array_equal(read["visits"][cp][0], values["visits"][i])
        np.testing.assert_array_equal(read["bytes_sent"][cp][0], values["bytes_sent"][i])
    subtree = [i for i, cp in enumerate(CALLPATHS) if cp.startswith("main->solve")]
    np.testing.assert_allclose(read["time"]["main->solve"][1], values["time"][subtree].sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(read["time"]["main"][1], values["time"].sum(axis=0), rtol=1e-12)


def test_members_regions_and_metrics_without_data(tmp_path):
    rng = np.random.default_rng(4)
    derived = CubeMetric("avg_time", "sec", "DOUBLE", "POSTDERIVED", expression="metric::time()/metric::visits()")
    path = write_cube(tmp_path / "p.cubex", CALLPATHS, [TIME, VISITS, BYTES_SENT, derived], _values(rng, 2),
                      processes=2, without_data=["bytes_sent"])
    with tarfile.open(path) as tar:
        names = set(tar.getnames())
        anchor = tar.extractfile("anchor.xml").read().decode()
    assert names == {"anchor.xml", "0.index", "0.data", "1.index", "1.data"}
    assert anchor.count("<region ") == 5  # 6 call paths; MPI_Waitall is one region, two cnodes
    assert 'type="POSTDERIVED"' in anchor and "<cubepl>metric::time()/metric::visits()</cubepl>" in anchor


def test_rejects_wrong_shapes_and_types(tmp_path):
    with pytest.raises(ValueError, match="shape"):
        write_cube(tmp_path / "x.cubex", CALLPATHS, [TIME], {"time": np.ones((2, 2))}, processes=2)
    with pytest.raises(ValueError, match="dtype"):
        CubeMetric("x", dtype="FLOAT16")
    with pytest.raises(ValueError, match="kind"):
        CubeMetric("x", kind="SOMETIMES")


def test_example_study_is_deterministic_and_named_like_score_p(tmp_path):
    first = example_study.generate(tmp_path / "a", processes=(8, 27), repetitions=2)
    second = example_study.generate(tmp_path / "b", processes=(8, 27), repetitions=2)
    assert [f.relative_to(tmp_path / "a").as_posix() for f in first] == [
        "lulesh.p8.r1/profile.cubex", "lulesh.p8.r2/profile.cubex",
        "lulesh.p27.r1/profile.cubex", "lulesh.p27.r2/profile.cubex"]
    assert [f.read_bytes() for f in first] == [f.read_bytes() for f in second]
    assert example_study.main([]) == 2


def test_example_study_has_its_planted_problems(tmp_path):
    import pmkit

    example_study.generate(tmp_path, processes=(8, 64, 512), repetitions=2)
    exp = pmkit.read(tmp_path)
    assert exp.parameters == ("p",) and exp.points[:, 0].tolist() == [8, 64, 512]
    time = exp.values("time")
    p = exp.points[:, 0]

    def row(cp):
        return time[exp.callpaths.index(cp)]

    allreduce = row(example_study.ALLREDUCE)
    np.testing.assert_allclose(allreduce / allreduce[0], (4e-6 + 1.2e-5 * np.log2(p)) / (4e-6 + 1.2e-5 * 3), rtol=0.03)
    gather = row(example_study.GATHER)
    np.testing.assert_allclose(gather / gather[0], (5e-5 + 2e-5 * (p - 1)) / (5e-5 + 2e-5 * 7), rtol=0.03)
    flat = row("main->lulesh_loop->LagrangeLeapFrog->LagrangeElements->CalcLagrangeElements")
    assert np.ptp(flat) / flat.mean() < 0.02
    kernel = exp.callpaths.index(example_study.IMBALANCED)
    for per_rank in exp.locations["time"]:
        ratio = np.nanmax(per_rank[kernel]) / np.nanmean(per_rank[kernel])
        assert 1.3 < ratio < 1.5
    assert set(example_study.PLANTED) <= set(exp.callpaths.paths())


def test_strong_example_study_is_deterministic_and_named_like_score_p(tmp_path, capsys):
    first = example_study.generate_strong(tmp_path / "a", processes=(2, 4), repetitions=2)
    second = example_study.generate_strong(tmp_path / "b", processes=(2, 4), repetitions=2)
    assert [f.relative_to(tmp_path / "a").as_posix() for f in first] == [
        "jacobi.p2.r1/profile.cubex", "jacobi.p2.r2/profile.cubex",
        "jacobi.p4.r1/profile.cubex", "jacobi.p4.r2/profile.cubex"]
    assert [f.read_bytes() for f in first] == [f.read_bytes() for f in second]
    assert example_study.main(["--strong", str(tmp_path / "c")]) == 0
    assert "wrote 15 Cube files (5 process counts × 3 repetitions)" in capsys.readouterr().out
    assert example_study.main(["--strong"]) == 2


def test_strong_example_study_laws_are_found_and_predict_a_left_out_scale(tmp_path):
    """Five runs p = 2..32: the falling kernels are modeled as falling, and the run's time per rank at
    p = 64 (not measured) is predicted within 15% — the issue's study predicted 1.52 s for 0.33 s."""
    import pmkit
    from pmkit.behaviour import describe

    example_study.generate_strong(tmp_path, repetitions=1)
    exp = pmkit.read(tmp_path)
    assert exp.points[:, 0].tolist() == [2, 4, 8, 16, 32]
    models = pmkit.model(exp)
    stencil = describe(models.get(example_study.STENCIL, "time").function, start=2.0)
    assert stencil.kind == "falls" and stencil.falling == (Fraction(-1), Fraction(0))
    halo = describe(models.get(example_study.HALO, "time").function, start=2.0)
    assert halo.falling == (Fraction(-2, 3), Fraction(0)) and halo.limit == pytest.approx(0.02, rel=0.1)
    allreduce = models.get(example_study.DOT_ALLREDUCE, "time").function
    assert [t.exponent_of("p") for t in allreduce.terms] == [(Fraction(0), Fraction(1))]
    for p in (64.0, 128.0):
        predicted = sum(m.function.evaluate(p) for m in models.for_metric("time"))
        truth = sum(example_study.strong_times(p).values())
        assert abs(predicted / truth - 1) < 0.15, (p, predicted, truth)
