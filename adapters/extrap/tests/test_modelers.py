"""pmkit's modelers used from Extra-P's Python API (ModelGenerator) and its experiment files."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from extrap.entities.measurement import Measure
from extrap.fileio.experiment_io import read_experiment, write_experiment
from extrap.modelers import multi_parameter, single_parameter
from extrap.modelers.abstract_modeler import MultiParameterModeler
from extrap.modelers.model_generator import ModelGenerator

import pmkit
from conftest import EXTRAP_FILES
from pmkit_extrap import register, to_pmkit, to_pmkit_function


def test_every_pmkit_modeler_is_registered_in_both_registries(registry) -> None:
    names = register(registry)
    assert names == [f"pmkit-{n}" for n in registry.names("modeler")]
    for name in names:
        assert name in single_parameter.all_modelers
        assert issubclass(multi_parameter.all_modelers[name], MultiParameterModeler)


@pytest.mark.parametrize("name", ["mm_cube.extra-p", "text_2p.extra-p"])
def test_model_generator_with_a_pmkit_modeler_matches_pmkit(name: str, registry) -> None:
    register(registry)
    experiment = read_experiment(str(EXTRAP_FILES / name))
    generator = ModelGenerator(experiment, modeler="pmkit-line", name="line")
    generator.modeler.exponent = "1/2"
    generator.model_all()
    assert type(generator.modeler).__name__.startswith("PmkitLine")
    mine = pmkit.model(to_pmkit(experiment), "line", exponent="1/2", registry=registry)
    coords = np.array([tuple(c) for c in experiment.coordinates])
    checked = 0
    for (callpath, metric), model in generator.models.items():
        expected = mine.get(callpath.name, metric.name)
        got = np.array([model.hypothesis.function.evaluate(tuple(c)) for c in coords])
        np.testing.assert_allclose(got, expected.function.evaluate(coords), rtol=1e-9)
        exponents = [f.exponent for t in to_pmkit_function(model.hypothesis.function, ("x", "y")[:coords.shape[1]])
                     .terms for f in t.factors]
        assert exponents == [Fraction(1, 2)]
        assert np.isfinite(model.hypothesis.RSS)
        checked += 1
    assert checked == len(experiment.measurements)


def test_model_sets_of_pmkit_modelers_survive_extrap_files(tmp_path: Path, registry) -> None:
    register(registry)
    experiment = read_experiment(str(EXTRAP_FILES / "text_2p.extra-p"))
    generator = ModelGenerator(experiment, modeler="pmkit-line", name="line", use_measure=Measure.MEDIAN)
    generator.modeler.exponent = "2"
    generator.model_all()
    path = tmp_path / "line.extra-p"
    write_experiment(experiment, str(path))
    again = read_experiment(str(path))
    loaded = again.modelers[-1]
    assert type(loaded.modeler) is type(generator.modeler)
    assert loaded.modeler.exponent == "2" and loaded.modeler.use_measure == Measure.MEDIAN
    assert to_pmkit(again).stored_models["line"].modeler == "line"


def test_installed_default_modeler_runs_inside_extrap() -> None:
    registry = pmkit.plugins.get_registry()
    if pmkit.sdk.DEFAULT_MODELER not in registry.names("modeler"):
        pytest.skip(f"pmkit's default modeler {pmkit.sdk.DEFAULT_MODELER!r} is not registered in this pmkit")
    register(registry)
    experiment = read_experiment(str(EXTRAP_FILES / "mm_cube.extra-p"))
    generator = ModelGenerator(experiment, modeler=f"pmkit-{pmkit.sdk.DEFAULT_MODELER}")
    generator.model_all()
    assert len(generator.models) == len(experiment.measurements)
    assert all(np.isfinite(m.hypothesis.function.evaluate((64.0,))) for m in generator.models.values())
