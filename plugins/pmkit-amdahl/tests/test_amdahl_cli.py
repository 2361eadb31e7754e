"""The plugin as users meet it: installed with pip, found through its entry point by the ``pmkit`` command.

One test runs the real command in a process of its own; the others call the same command in this
process (``pmkit.cli.main``) with a registry built from the installed entry points, which is faster
and sees the same plugins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from pmkit.cli import main
from pmkit.plugins import build_registry
from pmkit.testing.plugins import using_registry

P = (2, 4, 8, 16, 32, 64, 128, 256)


def installed_entry_point() -> metadata.EntryPoint:
    found = [ep for ep in metadata.entry_points(group="pmkit") if ep.name == "amdahl"]
    assert found, "pmkit-amdahl is not installed: run `pip install plugins/pmkit-amdahl` before these tests"
    return found[0]


def pmkit_process(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PMKIT_DISABLE_PLUGIN_AUTOLOAD"}
    env["COLUMNS"] = "300"  # wide enough that rich does not fold the notes of the table
    return subprocess.run([sys.executable, "-m", "pmkit.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


@pytest.fixture
def pmkit_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """Run ``pmkit ARGS`` in this process with every installed entry point, as the command loads them."""
    registry = build_registry(entry_points=True)
    monkeypatch.setenv("COLUMNS", "300")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        with using_registry(registry):
            code = main(list(args))
        captured = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, captured.out, captured.err)

    return run


@pytest.fixture
def extrap_text_file(tmp_path: Path) -> Path:
    """An Extra-P text input with two regions following known Amdahl laws, three repetitions each."""
    rng = np.random.default_rng(3)
    lines = ["PARAMETER p", "POINTS " + " ".join(map(str, P)), ""]
    laws = {"main": (120.0, 0.02, 1.5, 1.0), "exchange": (0.0, 0.5, 0.5, 0.1)}
    for region, (a, b, c, d) in laws.items():
        lines += [f"REGION {region}", "METRIC time"]
        for p in P:
            exact = a / p + b * p**c + d
            lines.append("DATA " + " ".join(f"{exact * (1 + 0.001 * e):.12g}" for e in rng.standard_normal(3)))
        lines.append("")
    path = tmp_path / "scaling.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_entry_point_is_installed_and_points_at_the_package() -> None:
    ep = installed_entry_point()
    assert ep.value == "pmkit_amdahl"
    assert ep.dist is not None and ep.dist.name == "pmkit-amdahl"


def test_pmkit_plugins_lists_amdahl() -> None:
    installed_entry_point()
    result = pmkit_process("plugins", "--json")
    assert result.returncode == 0, result.stderr
    rows = [r for r in json.loads(result.stdout)["plugins"] if r["name"] == "amdahl"]
    assert len(rows) == 1
    assert rows[0]["kind"] == "modeler" and rows[0]["status"] == "ok"
    assert rows[0]["plugin"] == "pmkit-amdahl" and rows[0]["builtin"] is False
    assert rows[0]["version"] == metadata.version("pmkit-amdahl")


def test_pmkit_model_with_the_amdahl_modeler(pmkit_cli, extrap_text_file: Path) -> None:
    installed_entry_point()
    result = pmkit_cli("model", str(extrap_text_file), "--modeler", "amdahl", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    models = {m["callpath"]: m for m in document["models"]}
    assert set(models) == {"main", "exchange"}
    assert all(m["modeler"] == "amdahl" for m in models.values())
    main = models["main"]
    exponents = {f["exponent"] for t in main["function"]["terms"] for f in t["factors"]}
    assert exponents == {"-1", "3/2"}
    assert main["function"]["constant"] == pytest.approx(1.0, rel=0.05)
    assert main["quality"]["smape"] < 0.5
    exchange = {f["exponent"] for t in models["exchange"]["function"]["terms"] for f in t["factors"]}
    assert "1/2" in exchange


def test_pmkit_model_table_and_options_reach_the_modeler(pmkit_cli, extrap_text_file: Path) -> None:
    installed_entry_point()
    result = pmkit_cli("model", str(extrap_text_file), "--modeler", "amdahl", "-O", "max_evaluations=1")
    assert result.returncode == 0, result.stderr
    assert "did not converge" in result.stdout
    bad = pmkit_cli("model", str(extrap_text_file), "--modeler", "amdahl", "-O", "c_min=high")
    assert bad.returncode == 2
    assert "c_min" in bad.stderr and "Traceback" not in bad.stderr


def test_pmkit_show_with_the_amdahl_modeler(pmkit_cli, extrap_text_file: Path) -> None:
    installed_entry_point()
    result = pmkit_cli("show", str(extrap_text_file), "--modeler", "amdahl", "--at", "p=1024", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    models = {m["callpath"]: m for m in document["models"]}
    assert models["main"]["modeler"] == "amdahl"
    assert "p^(3/2)" in models["main"]["text"]
