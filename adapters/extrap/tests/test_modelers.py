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
from pmkit.behaviour import describe
from pmkit.experiment import ExperimentBuilder
from pmkit_extrap import register, to_extrap, to_pmkit, to_pmkit_function
from pmkit_extrap.cli import main


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


def _strong_scaling_study() -> pmkit.Experiment:
    """p = 1..64 with ±2% noise: a kernel falling as 1/p, one turning up again at p ≈ 45, a growing one."""
    rng = np.random.default_rng(3)
    laws = {"main": lambda p: 2 + 100 / p, "main->solve": lambda p: 0.1 + 100 / p + 0.05 * p,
            "main->init": lambda p: 1 + 0.2 * p}
    builder = ExperimentBuilder(["p"])
    for p in (1, 2, 4, 8, 16, 32, 64):
        for callpath, law in laws.items():
            builder.add_values(callpath, "time", [float(p)], list(law(p) * (1 + rng.uniform(-0.02, 0.02, 3))))
    return builder.build()


def _exponents(generator: ModelGenerator) -> dict[str, list[Fraction]]:
    return {callpath.name: [f.exponent for t in to_pmkit_function(model.hypothesis.function, ("p",)).terms
                            for f in t.factors]
            for (callpath, _), model in generator.models.items()}


def test_falling_laws_in_extrap_through_the_modeler_option(registry) -> None:
    """pmkit's falling-law search is the pmkit-refining modeler's ``falling`` option in Extra-P (on by default)."""
    if "refining" not in registry.names("modeler"):
        pytest.skip("pmkit's refining modeler is not registered in this pmkit")
    register(registry)
    experiment = to_extrap(_strong_scaling_study())
    generator = ModelGenerator(experiment, modeler="pmkit-refining", name="pmkit")
    assert generator.modeler.falling is True
    assert "falling" in {o.field for o in generator.modeler.options_iter()}
    generator.model_all()
    exponents = _exponents(generator)
    assert exponents["main"] == [Fraction(-1)]
    assert exponents["main->solve"] == [Fraction(-1), Fraction(1)]
    assert exponents["main->init"] == [Fraction(1)]
    solve = next(m for (cp, _), m in generator.models.items() if cp.name == "main->solve")
    turning = describe(to_pmkit_function(solve.hypothesis.function, ("p",)), start=1.0).turning_point
    assert turning == pytest.approx(np.sqrt(100 / 0.05), rel=0.2)

    growing_only = ModelGenerator(experiment, modeler="pmkit-refining", name="growing")
    growing_only.modeler.falling = False
    growing_only.model_all()
    assert all(e >= 0 for values in _exponents(growing_only).values() for e in values)


def test_falling_option_from_extrap_command_line(tmp_path: Path, registry, capsys) -> None:
    if "refining" not in registry.names("modeler"):
        pytest.skip("pmkit's refining modeler is not registered in this pmkit")
    path = tmp_path / "strong.txt"
    rows = [f"DATA {' '.join(f'{(2 + 100 / p) * f:.6g}' for f in (0.99, 1.0, 1.01))}" for p in (1, 2, 4, 8, 16, 32, 64)]
    path.write_text("PARAMETER p\nPOINTS 1 2 4 8 16 32 64\nREGION main\nMETRIC time\n" + "\n".join(rows) + "\n")
    main(["--text", str(path), "--modeler", "pmkit-refining", "--disable-progress", "--print", "functions"])
    assert "p^(-1)" in capsys.readouterr().out
    main(["--text", str(path), "--modeler", "pmkit-refining", "--options", "falling=False", "--disable-progress",
          "--print", "functions"])
    assert "p^(-1)" not in capsys.readouterr().out
