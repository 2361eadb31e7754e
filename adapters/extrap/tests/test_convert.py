"""Experiments and models both ways between Extra-P and pmkit, through memory and through files."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from extrap.fileio.experiment_io import read_experiment
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2

import pmkit
from conftest import EXTRAP_FILES, segmented_experiment
from pmkit.experiment import ExperimentBuilder
from pmkit.readers.extrap_experiment import ExtrapExperimentReader
from pmkit_extrap import read_extrap, to_extrap, to_pmkit, write_extrap


def _in_stock_extrap(path: Path, body: str) -> dict:
    """Run ``body`` in a fresh Python with ``e``, the file at ``path`` read by stock Extra-P (pmkit's
    adapter never imported), and return the JSON it prints last."""
    script = ("import json, sys\n"
              "from extrap.fileio.experiment_io import read_experiment\n"
              "e = read_experiment(sys.argv[1])\n"
              "assert 'pmkit_extrap' not in sys.modules\n" + body)
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _extrap_measurements(experiment) -> dict:
    out = {}
    for (callpath, metric), items in experiment.measurements.items():
        for m in items:
            values = None if m.values is None else np.asarray(m.values, dtype=float).tolist()
            out[(callpath.name, metric.name, tuple(m.coordinate))] = (m.mean, m.median, m.minimum, m.maximum, values)
    return out


def _functions_at(experiment) -> dict:
    coords = [tuple(c) for c in experiment.coordinates]
    out = {}
    for generator in experiment.modelers:
        for (callpath, metric), model in generator.models.items():
            out[(generator.name, callpath.name, metric.name)] = [model.hypothesis.function.evaluate(c) for c in coords]
    return out


@pytest.mark.parametrize("name", ["mm_cube.extra-p", "text_2p.extra-p"])
def test_extrap_to_pmkit_to_extrap_is_lossless(name: str) -> None:
    original = read_experiment(str(EXTRAP_FILES / name))
    back = to_extrap(to_pmkit(original))
    assert [p.name for p in back.parameters] == [p.name for p in original.parameters]
    assert [c.name for c in back.callpaths] == [c.name for c in original.callpaths]
    assert [m.name for m in back.metrics] == [m.name for m in original.metrics]
    assert set(back.coordinates) == set(original.coordinates)
    assert _extrap_measurements(back) == _extrap_measurements(original)
    assert [g.name for g in back.modelers] == [g.name for g in original.modelers]
    for g_back, g_orig in zip(back.modelers, original.modelers, strict=True):
        assert type(g_back.modeler) is type(g_orig.modeler)
        assert g_back.modeler.use_measure == g_orig.modeler.use_measure
    before, after = _functions_at(original), _functions_at(back)
    assert before.keys() == after.keys()
    for key in before:
        np.testing.assert_allclose(after[key], before[key], rtol=1e-12)


def test_extrap_segmented_models_arrive_as_segmented_models() -> None:
    experiment = to_pmkit(read_experiment(str(EXTRAP_FILES / "segmented.extra-p")))
    (model,) = experiment.stored_models["segmented"]
    assert model.segmented and model.change_point.parameter == "p"
    assert model.change_point.value == model.change_point.low == model.change_point.high == 256.0
    left, right = model.segments
    assert left.function.pretty_text() == "2.969 + 0.4968·p" and right.function.is_constant
    assert model.function == right.function
    assert left.measured[1] == 256.0 == right.measured[0]  # the point both segments share
    assert model.evaluate(16.0) == pytest.approx(2.9694584253086727 + 0.4968439882034533 * 16)
    assert model.evaluate(1e6) == pytest.approx(130.31932582625052)


def test_segmented_pmkit_models_are_written_as_extrap_segmented_models(tmp_path: Path) -> None:
    experiment = segmented_experiment()
    models = pmkit.model(experiment)
    send = models.get("main->send", "time")
    assert send.segmented and 64 <= send.change_point.value <= 128
    assert not models.get("main->compute", "time").segmented
    path = tmp_path / "segmented.extra-p"
    write_extrap(path, experiment, {"pmkit": models})
    seen = _in_stock_extrap(
        path,
        "from extrap.entities.model import SegmentedModel\n"
        "out = {}\n"
        "for (cp, metric), m in e.modelers[0].models.items():\n"
        "    at = [2.0, 50.0, 5000.0]\n"
        "    out[cp.name] = {'segmented': isinstance(m, SegmentedModel),\n"
        "                    'values': [float(m.hypothesis.function.evaluate(v)) for v in at],\n"
        "                    'change': [c.coordinate[0] for c in getattr(m, 'changing_points', [])],\n"
        "                    'pieces': [len(p.measurements) for p in getattr(m, 'segment_models', [])]}\n"
        "print(json.dumps(out))\n",
    )
    assert seen["main->send"]["segmented"] and not seen["main->compute"]["segmented"]
    assert seen["main->send"]["change"] == [64.0, 128.0]
    assert sum(seen["main->send"]["pieces"]) >= 10
    np.testing.assert_allclose(seen["main->send"]["values"], send.evaluate(np.array([2.0, 50.0, 5000.0])), rtol=1e-12)
    cli = Path(sys.executable).with_name("extrap")
    done = subprocess.run([str(cli), "--experiment", str(path), "--disable-progress", "--print", "functions"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Model 1:" in done.stdout and "Model 2:" in done.stdout
    back = read_extrap(path).stored_models["pmkit"].get("main->send", "time")
    assert back.segmented and back.change_point.low == 64.0 and back.change_point.high == 128.0
    for mine, theirs in zip(send.segments, back.segments, strict=True):
        np.testing.assert_allclose(theirs.function.evaluate(np.array([4.0, 512.0])),
                                   mine.function.evaluate(np.array([4.0, 512.0])), rtol=1e-12)
        assert theirs.measured == mine.measured


def test_cube_study_read_by_extrap_converts_with_repetitions(shared_data: Path) -> None:
    reader = CubeFileReader2()
    reader.keep_values = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        original = reader.read_experiment(str(shared_data / "cube" / "extrap-mm-single"))
    experiment = to_pmkit(original)
    assert experiment.parameters == ("x",)
    assert len(experiment.points) == 9
    for (callpath, metric), items in original.measurements.items():
        row = experiment.values(metric.name)[experiment.callpaths.index(callpath.name)]
        for m in items:
            point = [tuple(p) for p in experiment.points.tolist()].index(tuple(m.coordinate))
            assert row[point] == pytest.approx(m.mean, rel=1e-12)
    assert _extrap_measurements(to_extrap(experiment)) == _extrap_measurements(original)


def _pmkit_experiment():
    builder = ExperimentBuilder(("p", "n"), "generated")
    builder.add_metric("time", unit="s", inclusive=True, description="wall time")
    rng = np.random.default_rng(3)
    for p in (2, 4, 8, 16, 32):
        for n in (10, 20, 40):
            truth = 1.0 + 0.25 * p ** 1.5 * n
            reps = truth * (1 + 0.01 * rng.standard_normal(3))
            builder.add_values("main->solve", "time", (p, n), reps)
            per_location = np.outer(reps, np.ones(4)) + np.array([-0.1, 0.0, 0.0, 0.1])
            for rep in per_location:
                builder.add_locations("main->solve", "time", (p, n), rep)
            if p != 8:
                builder.add_values("main->io", "time", (p, n), [0.5 + 0.01 * p])
    return builder.build()


def test_pmkit_to_file_to_pmkit_keeps_everything(tmp_path: Path, registry) -> None:
    experiment = _pmkit_experiment()
    models = pmkit.model(experiment, "line", exponent="3/2", registry=registry)
    path = tmp_path / "pmkit.extra-p"
    write_extrap(path, experiment, {"line fit": models})
    for back in (ExtrapExperimentReader().read(path), read_extrap(path)):
        assert back.parameters == experiment.parameters
        assert back.metric("time") == experiment.metric("time")
        assert {tuple(p) for p in back.points.tolist()} == {tuple(p) for p in experiment.points.tolist()}
        order = [[tuple(p) for p in back.points.tolist()].index(tuple(p)) for p in experiment.points.tolist()]
        for callpath in ("main->solve", "main->io"):
            mine = experiment.measurements["time"][experiment.callpaths.index(callpath)]
            theirs = back.measurements["time"][back.callpaths.index(callpath)][order]
            # repetitions with per-location values come back as their means over locations: equal to rounding
            np.testing.assert_allclose(theirs[:, : mine.shape[1]], mine, rtol=1e-14)
            assert np.isnan(theirs[:, mine.shape[1]:]).all()
        solve = experiment.callpaths.index("main->solve")
        for pt, back_pt in enumerate(order):
            np.testing.assert_array_equal(back.locations["time"][back_pt][back.callpaths.index("main->solve")],
                                          experiment.locations["time"][pt][solve])
        stored = back.stored_models["line fit"]
        assert stored.get("main", "time") is None  # no values there: Extra-P has no unmeasured call paths
        for model in (m for m in models if m.callpath != "main"):
            twin = stored.get(model.callpath, model.metric)
            assert twin.function == model.function
            assert twin.function.terms[0].factors[0].exponent == Fraction(3, 2)
            assert twin.quality.rss == model.quality.rss
    assert read_extrap(path).stored_models["line fit"].modeler == "line"


def test_stock_extrap_opens_a_file_written_by_pmkit(tmp_path: Path, registry) -> None:
    experiment = _pmkit_experiment()
    models = pmkit.model(experiment, "line", registry=registry)
    path = tmp_path / "for-extrap.extra-p"
    write_extrap(path, experiment, {"pmkit line": models})
    seen = _in_stock_extrap(
        path,
        "g = e.modelers[0]\n"
        "print(json.dumps({'name': g.name, 'models': {k[0].name: [m.hypothesis.function.evaluate(tuple(c))"
        " for c in e.coordinates] for k, m in g.models.items()}, 'coordinates': [list(c) for c in e.coordinates]}))\n",
    )
    assert seen["name"] == "pmkit line"
    for model in (m for m in models if m.function is not None):
        expected = model.function.evaluate(np.array(seen["coordinates"]))
        np.testing.assert_allclose(seen["models"][model.callpath], expected, rtol=1e-12)
    cli = Path(sys.executable).with_name("extrap")
    done = subprocess.run([str(cli), "--experiment", str(path), "--disable-progress", "--print", "callpaths"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "main->solve" in done.stdout
