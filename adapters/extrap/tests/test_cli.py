"""``pmkit-extrap``: Extra-P's command line with pmkit's modelers, on a real Cube scaling study."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import pmkit
from pmkit.readers.extrap_experiment import ExtrapExperimentReader
from pmkit_extrap.cli import main, with_model_set_name


def test_cli_models_cube_study_with_a_pmkit_modeler(shared_data: Path, tmp_path: Path, registry, capsys) -> None:
    out = tmp_path / "mm.extra-p"
    main(["--cube", str(shared_data / "cube" / "extrap-mm-single"), "--modeler", "pmkit-line",
          "--options", "exponent", "3/2", "--save-experiment", str(out), "--model-set-name", "pmkit line",
          "--disable-progress", "--print", "functions"])
    printed = capsys.readouterr().out
    assert "x^(3/2)" in printed
    experiment = ExtrapExperimentReader().read(out)
    models = experiment.stored_models["pmkit line"]
    assert models.modeler == "extrap:PmkitLineModeler"
    assert len(models) == 28
    mine = pmkit.model(experiment, "line", exponent="3/2", registry=registry)
    for model in models:
        twin = mine.get(model.callpath, model.metric)
        assert model.function.evaluate(1000.0) == pytest.approx(twin.function.evaluate(1000.0), rel=1e-9)


def test_console_script_offers_and_runs_the_installed_modelers(shared_data: Path) -> None:
    script = Path(sys.executable).with_name("pmkit-extrap")
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    installed = pmkit.plugins.get_registry().names("modeler")
    for name in installed:
        assert f"pmkit-{name}" in helped.stdout
    if pmkit.sdk.DEFAULT_MODELER not in installed:
        pytest.skip(f"pmkit's default modeler {pmkit.sdk.DEFAULT_MODELER!r} is not registered in this pmkit")
    done = subprocess.run([str(script), "--cube", str(shared_data / "cube" / "extrap-mm-single"), "--modeler",
                           f"pmkit-{pmkit.sdk.DEFAULT_MODELER}", "--disable-progress", "--print", "functions"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 28
    assert any("x^(" in line for line in lines)


def test_saved_model_sets_are_named_after_their_modeler_unless_named(tmp_path: Path, registry) -> None:
    study = tmp_path / "study.txt"
    study.write_text("PARAMETER p\nPOINTS 2 4 8 16 32\n\nREGION main\nMETRIC time\n"
                     + "".join(f"DATA {3 + 0.5 * p}\n" for p in (2, 4, 8, 16, 32)), encoding="utf-8")
    out = tmp_path / "named.extra-p"
    main(["--text", str(study), "--modeler", "pmkit-line", "--save-experiment", str(out), "--disable-progress"])
    assert list(ExtrapExperimentReader().read(out).stored_models) == ["pmkit-line"]
    assert with_model_set_name(["--text", "x", "--modeler=Refining"])[-2:] == ["--model-set-name", "refining"]
    assert with_model_set_name(["--text", "x"])[-2:] == ["--model-set-name", "default"]
    assert with_model_set_name(["--model-set-name", "mine", "--modeler", "basic"]) == \
        ["--model-set-name", "mine", "--modeler", "basic"]
