"""The plugin system through real entry points, and the helpers pmkit gives plugin authors.

Tiny distributions are written at test time into a folder put on PYTHONPATH: a ``*.dist-info``
with ``METADATA`` and ``entry_points.txt`` beside the plugin module, which is exactly what
``importlib.metadata`` finds for a pip-installed package.  The CLI runs as a subprocess, so each
run discovers entry points afresh.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

import pmkit
from pmkit import plugins as plugin_manager
from pmkit.cli import build_parser
from pmkit.distribution import version as pmkit_version
from pmkit.errors import InputError
from pmkit.testing.plugins import (
    PluginCheckError,
    check_modeler,
    check_reader,
    degenerate_experiment,
    isolated_registry,
    sample_batch,
    sample_experiment,
    using_registry,
)

GOOD_PLUGIN = '''
"""tiny-good: one reader, modeler, prior and detector, each through its hook."""
from pathlib import Path

import numpy as np

import pmkit


class TinyReader:
    name = "tiny-table"
    description = "lines 'p value' in a .tiny file"
    options = ()

    def sniff(self, path):
        return Path(path).suffix == ".tiny"

    def read(self, path):
        builder = pmkit.ExperimentBuilder(("p",), source=str(path))
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise pmkit.InputError(path, f"cannot read: {exc}") from None
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                p, value = (float(x) for x in line.split())
            except ValueError:
                raise pmkit.InputError(path, f"expected 'p value', got {line!r}", line=number) from None
            builder.add_values("main", "time", (p,), [value])
        return builder.build()


class TinyModeler:
    name = "tiny-mean"
    description = "the mean of each series"
    options = (pmkit.Option("offset", float, 0.0, "added to the mean"),)

    def model(self, batch, offset=0.0):
        values = batch.reduced()
        models = []
        for i in range(len(batch)):
            finite = values[i][np.isfinite(values[i])]
            function = pmkit.Function(batch.parameters, float(finite.mean()) + offset) if finite.size else None
            models.append(pmkit.Model(batch.callpaths[i], batch.metrics[i], function, modeler=self.name,
                                      notes=("made by tiny-good",)))
        return pmkit.ModelSet(batch.parameters, models, modeler=self.name)


class TinyPrior:
    name = "tiny-prior"
    description = "everything constant"
    options = ()

    def load(self, path):
        return self

    def constraints(self, experiment):
        return {c: pmkit.Constraint(constant=True, source=self.name) for c in experiment.callpaths.paths()}


class TinyDetector:
    name = "tiny-detector"
    description = "one finding per model"
    options = ()

    def detect(self, experiment, models):
        return [pmkit.Finding(self.name, "seen", callpath=m.callpath, severity=1.0) for m in models]


@pmkit.hookimpl
def pmkit_register_readers(register):
    register(TinyReader())


@pmkit.hookimpl
def pmkit_register_modelers(register):
    register(TinyModeler())


@pmkit.hookimpl
def pmkit_register_priors(register):
    register(TinyPrior())


@pmkit.hookimpl
def pmkit_register_detectors(register):
    register(TinyDetector())
'''

BROKEN_PLUGIN = '''
raise RuntimeError("tiny-broken cannot start: its licence file is missing")
'''

BOOM_PLUGIN = '''
"""tiny-boom: a detector that fails every time it is called."""
import pmkit


class Boom:
    name = "boom"
    description = "divides by zero"
    options = ()

    def detect(self, experiment, models):
        return 1 / 0


@pmkit.hookimpl
def pmkit_register_detectors(register):
    register(Boom())
'''

EXITING_PLUGIN = '''
import sys

sys.exit(3)
'''

FAULTY_PLUGIN = '''
"""tiny-faulty: a hook that raises, and an object that is not a modeler."""
import pmkit


class NotAModeler:
    name = "half-done"
    description = "lacks model()"
    options = ()


@pmkit.hookimpl
def pmkit_register_modelers(register):
    register(NotAModeler())


@pmkit.hookimpl
def pmkit_register_detectors(register):
    raise ValueError("tiny-faulty detectors are not configured")
'''

DUPLICATE_PLUGIN = '''
"""tiny-dup: registers a modeler under a name tiny-good already uses."""
import pmkit


class Other:
    name = "tiny-mean"
    description = "another tiny-mean"
    options = ()

    def model(self, batch):
        raise AssertionError("never used in these tests")


@pmkit.hookimpl
def pmkit_register_modelers(register):
    register(Other())
'''

OVERRIDE_PLUGIN = '''
"""tiny-override: replaces the built-in reader {name!r}."""
from pathlib import Path

import pmkit


class Replacement:
    name = {name!r}
    description = "tiny-override's replacement"
    options = ()

    def sniff(self, path):
        return Path(path).suffix == ".tiny"

    def read(self, path):
        builder = pmkit.ExperimentBuilder(("p",), source=str(path))
        for p in (1.0, 2.0, 4.0):
            builder.add_values("read-by-tiny-override", "time", (p,), [p])
        return builder.build()


@pmkit.hookimpl
def pmkit_register_readers(register):
    register(Replacement())
'''


def make_distribution(site: Path, dist: str, version: str, module: str, source: str) -> None:
    """Install ``module`` as distribution ``dist`` with entry point ``<module> = <module>`` in group pmkit."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[pmkit]\n{module} = {module}\n", encoding="utf-8")
    (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")


def run_pmkit(site: Path | None, *args: str, disable: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", plugin_manager.DISABLE_ENV}}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    if disable:
        env[plugin_manager.DISABLE_ENV] = "1"
    env["COLUMNS"] = "250"
    return subprocess.run([sys.executable, "-m", "pmkit.cli", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def plugin_rows(site: Path | None, disable: bool = False) -> list[dict[str, Any]]:
    result = run_pmkit(site, "plugins", "--json", disable=disable)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "pmkit.plugins/1"
    return document["plugins"]


def builtin_reader_name() -> str:
    """A built-in reader's name, asked of pmkit with entry points off."""
    names = sorted(r["name"] for r in plugin_rows(None, disable=True)
                   if r["kind"] == "reader" and r["builtin"] and r["status"] == "ok")
    assert names, "pmkit registers no built-in reader"
    return names[0]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """good, broken, faulty and duplicate plugins installed side by side."""
    folder = tmp_path_factory.mktemp("site")
    make_distribution(folder, "tiny-good", "1.2.3", "tiny_good", GOOD_PLUGIN)
    make_distribution(folder, "tiny-broken", "0.0.1", "tiny_broken", BROKEN_PLUGIN)
    make_distribution(folder, "tiny-faulty", "0.1", "tiny_faulty", FAULTY_PLUGIN)
    make_distribution(folder, "tiny-dup", "2.0", "tiny_zdup", DUPLICATE_PLUGIN)
    make_distribution(folder, "tiny-exit", "0.3", "tiny_exit", EXITING_PLUGIN)
    make_distribution(folder, "tiny-boom", "0.5", "tiny_boom", BOOM_PLUGIN)
    return folder


@pytest.fixture(scope="module")
def rows(site: Path) -> list[dict[str, Any]]:
    return plugin_rows(site)


@pytest.fixture
def tiny_input(tmp_path: Path) -> Path:
    path = tmp_path / "scaling.tiny"
    path.write_text("2 10\n4 12\n8 14\n16 16\n", encoding="utf-8")
    return path


def by_plugin(rows: list[dict[str, Any]], plugin: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["plugin"] == plugin]


def test_pmkit_plugins_lists_what_the_good_plugin_registers(rows: list[dict[str, Any]]) -> None:
    good = {(r["kind"], r["name"]): r for r in by_plugin(rows, "tiny-good")}
    assert set(good) >= {("reader", "tiny-table"), ("prior", "tiny-prior"), ("detector", "tiny-detector")}
    for row in good.values():
        assert row["version"] == "1.2.3" and row["builtin"] is False
    assert good[("reader", "tiny-table")]["status"] == "ok"
    assert good[("reader", "tiny-table")]["description"] == "lines 'p value' in a .tiny file"


def test_a_plugin_that_raises_on_import_is_reported_with_its_error(rows: list[dict[str, Any]]) -> None:
    (broken,) = by_plugin(rows, "tiny-broken")
    assert broken["status"] == "failed (import)"
    assert broken["version"] == "0.0.1"
    assert broken["error"] == "RuntimeError: tiny-broken cannot start: its licence file is missing"
    assert broken["entry_point"] == "tiny_broken = tiny_broken", "a package may declare several entry points"


def test_the_plugins_table_names_a_failed_entry_point_and_its_package(site: Path) -> None:
    result = run_pmkit(site, "plugins")
    assert result.returncode == 0, result.stderr
    failed = result.stdout.split("plugins that failed to load")[1]
    (line,) = [ln for ln in failed.splitlines() if "tiny-broken" in ln]
    assert line.split()[:3] == ["tiny_broken", "tiny-broken", "0.0.1"]


def test_a_plugin_calling_sys_exit_on_import_is_reported_like_any_failure(rows: list[dict[str, Any]]) -> None:
    (exiting,) = by_plugin(rows, "tiny-exit")
    assert exiting["status"] == "failed (import)" and exiting["version"] == "0.3"
    assert exiting["error"] == "SystemExit: the plugin called sys.exit(3)"
    assert by_plugin(rows, "tiny-good"), "the plugins after it are still loaded"


def test_a_raising_hook_and_an_incomplete_object_are_reported(rows: list[dict[str, Any]]) -> None:
    faulty = by_plugin(rows, "tiny-faulty")
    statuses = {(r["status"], r["name"]): r["error"] for r in faulty}
    assert statuses[("failed (register detectors)", None)] == "ValueError: tiny-faulty detectors are not configured"
    assert statuses[("rejected", "half-done")] == "not a modeler: lacks model"


def test_duplicate_names_of_two_third_party_plugins_are_rejected_naming_both(rows: list[dict[str, Any]]) -> None:
    same = [r for r in rows if r["kind"] == "modeler" and r["name"] == "tiny-mean"]
    assert sorted(r["status"] for r in same) == ["duplicate", "ok"]
    (duplicate,) = [r for r in same if r["status"] == "duplicate"]
    (kept,) = [r for r in same if r["status"] == "ok"]
    assert "tiny-good" in duplicate["error"] and "tiny-dup" in duplicate["error"]
    assert f"keeping {kept['plugin']}" in duplicate["error"]
    assert kept["plugin"] == "tiny-good", "the entry point whose name sorts first keeps the name"


def subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_still_works_beside_a_broken_plugin(site: Path, tiny_input: Path, model_and_show) -> None:
    assert run_pmkit(site, "--help").returncode == 0
    for command in subcommands():
        result = run_pmkit(site, command, "--help")
        assert result.returncode == 0, f"pmkit {command} --help: {result.stderr}"
    listing = run_pmkit(site, "plugins")
    assert listing.returncode == 0 and "tiny-broken" in listing.stdout and "Traceback" not in listing.stderr
    result = run_pmkit(site, "model", str(tiny_input), "--modeler", "tiny-mean", "--json")
    assert result.returncode == 0, result.stderr
    assert "plugin tiny-broken 0.0.1 failed to import and was skipped: RuntimeError" in result.stderr
    assert "plugin tiny-exit 0.3 failed to import and was skipped: SystemExit" in result.stderr
    assert "cannot start: its licence file is missing (entry point tiny_broken = tiny_broken)" in result.stderr
    (model,) = json.loads(result.stdout)["models"]
    assert model["function"]["constant"] == 13.0 and model["modeler"] == "tiny-mean"
    shown = model_and_show["show"]
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr and "tiny-exit" in shown.stderr


@pytest.fixture(scope="module")
def model_and_show(site: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, subprocess.CompletedProcess]:
    """``pmkit model`` and ``pmkit show`` of a .tiny input beside the site's plugins."""
    path = tmp_path_factory.mktemp("input") / "scaling.tiny"
    path.write_text("2 10\n4 12\n8 14\n16 16\n", encoding="utf-8")
    return {command: run_pmkit(site, command, str(path), "--modeler", "tiny-mean") for command in ("model", "show")}


def test_every_command_names_both_plugins_of_a_duplicate_name_and_the_one_used(model_and_show) -> None:
    expected = ("warning: modeler 'tiny-mean' is registered by both tiny-good 1.2.3 and tiny-dup 2.0; using "
                "tiny-good 1.2.3's (rename one of them, or uninstall one)")
    for result in model_and_show.values():
        assert result.returncode == 0, result.stderr
        assert expected in result.stderr.splitlines(), result.stderr


def test_a_detector_failing_when_called_is_skipped_naming_its_package(model_and_show) -> None:
    shown = model_and_show["show"]
    assert shown.returncode == 0, shown.stderr
    assert ("warning: detector 'boom' of plugin tiny-boom 0.5 failed: detect() raised ZeroDivisionError: division by "
            "zero; skipped") in shown.stderr.splitlines()
    assert "internal error" not in shown.stderr


def test_skipped_objects_are_named_without_calling_the_whole_plugin_skipped(model_and_show) -> None:
    lines = [line for line in model_and_show["model"].stderr.splitlines() if "tiny-faulty" in line]
    assert ("warning: plugin tiny-faulty 0.1: its pmkit_register_detectors hook raised ValueError: tiny-faulty "
            "detectors are not configured; it registers no detector; its other objects are unaffected") in lines
    assert ("warning: plugin tiny-faulty 0.1: modeler 'half-done' was skipped (not a modeler: lacks model); its "
            "other objects are used") in lines
    assert not [line for line in lines if "tiny-faulty" in line and "was skipped:" in line]


def test_modeler_options_reach_a_third_party_modeler(site: Path, tiny_input: Path) -> None:
    result = run_pmkit(site, "model", str(tiny_input), "--modeler", "tiny-mean", "-O", "offset=2", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["models"][0]["function"]["constant"] == 15.0
    bad = run_pmkit(site, "model", str(tiny_input), "--modeler", "tiny-mean", "-O", "offst=2")
    assert bad.returncode == 2 and "no option offst" in bad.stderr


def test_disable_autoload_turns_every_entry_point_off(site: Path, tiny_input: Path) -> None:
    rows = plugin_rows(site, disable=True)
    assert not [r for r in rows if str(r["plugin"]).startswith("tiny-")]
    assert [r for r in rows if r["builtin"] and r["status"] == "ok"], "built-ins must stay"
    result = run_pmkit(site, "model", str(tiny_input), "--modeler", "tiny-mean", disable=True)
    assert result.returncode != 0
    assert "no reader recognises" in result.stderr or "no modeler named 'tiny-mean'" in result.stderr


def test_a_third_party_plugin_overrides_a_builtin_of_the_same_name(tmp_path: Path, site: Path,
                                                                    tiny_input: Path) -> None:
    name = builtin_reader_name()
    override = tmp_path / "override-site"
    make_distribution(override, "tiny-override", "3.0", "tiny_override", OVERRIDE_PLUGIN.format(name=name))
    make_distribution(override, "tiny-good", "1.2.3", "tiny_good", GOOD_PLUGIN)
    rows = [r for r in plugin_rows(override) if r["kind"] == "reader" and r["name"] == name]
    assert {(r["plugin"], r["status"]) for r in rows} == {("tiny-override", "ok"), ("pmkit", "overridden")}
    (overridden,) = [r for r in rows if r["status"] == "overridden"]
    assert overridden["builtin"] is True and overridden["error"] == "overridden by tiny-override"
    result = run_pmkit(override, "model", str(tiny_input), "--reader", name, "--modeler", "tiny-mean", "--json")
    assert result.returncode == 0, result.stderr
    assert [m["callpath"] for m in json.loads(result.stdout)["models"]] == ["read-by-tiny-override"]
    assert (f"warning: reader {name!r} is registered by both tiny-override 3.0 and pmkit {pmkit_version()} "
            f"(built-in); using tiny-override 3.0's, which replaces pmkit's built-in reader") in result.stderr


# pmkit.testing.plugins: what plugin authors use in their own tests.

def plugin_module(source: str, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    exec(compile(textwrap.dedent(source), f"<{name}>", "exec"), module.__dict__)
    return module


def test_isolated_registry_is_the_builtins_and_the_given_plugins_and_nothing_else_installed() -> None:
    alone = isolated_registry(plugin_module(GOOD_PLUGIN, "tiny_good"), builtins=False)
    assert alone.names("reader") == ["tiny-table"] and alone.names("modeler") == ["tiny-mean"]
    assert alone.names("prior") == ["tiny-prior"] and alone.names("detector") == ["tiny-detector"]
    registry = isolated_registry(plugin_module(GOOD_PLUGIN, "tiny_good"))
    assert {"tiny-table", "extrap-text"} <= set(registry.names("reader"))
    assert {"tiny-mean", pmkit.sdk.DEFAULT_MODELER} <= set(registry.names("modeler"))
    assert not [r for r in registry.rows() if str(r.plugin).startswith("pmkit-amdahl")], "no installed plugin"


def test_pmkit_registry_fixture_lets_a_reader_plugin_model_with_the_default_modeler(pmkit_registry, tmp_path) -> None:
    pmkit_registry(plugin_module(GOOD_PLUGIN, "tiny_good"))
    path = tmp_path / "run.tiny"
    path.write_text("2 10\n4 12\n8 14\n16 16\n32 18\n", encoding="utf-8")
    models = pmkit.model(pmkit.read(path))
    assert models[0].modeler == pmkit.sdk.DEFAULT_MODELER


def test_isolated_registry_raises_on_a_broken_registration() -> None:
    with pytest.raises(PluginCheckError, match="tiny_faulty failed to register detectors: ValueError"):
        isolated_registry(plugin_module(FAULTY_PLUGIN, "tiny_faulty"))
    lenient = isolated_registry(plugin_module(FAULTY_PLUGIN, "tiny_faulty"), builtins=False, strict=False)
    assert lenient.names("modeler") == [] and lenient.failures


def test_using_registry_is_what_the_sdk_sees_and_is_restored(tmp_path: Path) -> None:
    before = plugin_manager._REGISTRY
    registry = isolated_registry(plugin_module(GOOD_PLUGIN, "tiny_good"), builtins=False)
    path = tmp_path / "run.tiny"
    path.write_text("1 3\n2 5\n", encoding="utf-8")
    with using_registry(registry):
        experiment = pmkit.read(path)
        models = pmkit.model(experiment, "tiny-mean")
        findings = pmkit.detect(experiment, models)
    assert models[0].function.constant == 4.0
    assert [f.detector for f in findings] == ["tiny-detector"]
    assert plugin_manager._REGISTRY is before


def test_sample_experiment_follows_its_laws_and_noise_is_seeded() -> None:
    experiment = sample_experiment({"main": lambda p, n: p * n}, points={"p": (2.0, 4.0), "n": (10.0, 20.0)},
                                   repetitions=3)
    assert experiment.parameters == ("p", "n") and len(experiment.points) == 4
    values = experiment.values("time")[0]
    assert sorted(values.tolist()) == [20.0, 40.0, 40.0, 80.0]
    noisy = sample_experiment(noise=0.05, repetitions=4, seed=9)
    again = sample_experiment(noise=0.05, repetitions=4, seed=9)
    assert (noisy.measurements["time"] == again.measurements["time"]).all()
    assert noisy.measurements["time"].std(axis=2).max() > 0


def test_degenerate_experiment_has_the_hard_cases() -> None:
    batch = sample_batch(degenerate_experiment())
    reduced = dict(zip(batch.callpaths, batch.reduced(), strict=True))
    assert all(v != v for v in reduced["main->missing"])
    assert sum(v == v for v in reduced["main->one_point"]) == 1
    assert (reduced["main->negative"] < 0).all() and (reduced["main->zeros"] == 0).all()


class RaisesOnNaN:
    name = "raises-on-nan"
    description = "fails the contract on NaN"
    options = ()

    def model(self, batch: pmkit.SeriesBatch) -> pmkit.ModelSet:
        if (batch.reduced() != batch.reduced()).any():
            raise ValueError("NaN in input")
        return pmkit.ModelSet(batch.parameters, [
            pmkit.Model(c, m, None) for c, m in zip(batch.callpaths, batch.metrics, strict=True)])


def test_check_modeler_accepts_a_good_modeler_and_names_each_problem_of_a_bad_one() -> None:
    check_modeler(isolated_registry(plugin_module(GOOD_PLUGIN, "tiny_good")).get("modeler", "tiny-mean"))
    with pytest.raises(PluginCheckError) as caught:
        check_modeler(RaisesOnNaN())
    message = str(caught.value)
    assert "degenerate experiment: model() raised ValueError: NaN in input" in message
    assert "no function and no note saying why" in message


class CrashingReader:
    name = "crashing"
    description = "raises the wrong error"
    options = ()

    def sniff(self, path: Path) -> bool:
        return path.read_bytes().startswith(b"p")

    def read(self, path: Path) -> pmkit.Experiment:
        raise KeyError("oops")


def test_check_reader_accepts_a_good_reader_and_names_each_problem_of_a_bad_one(tmp_path: Path) -> None:
    good = tmp_path / "ok.tiny"
    good.write_text("2 1\n4 2\n", encoding="utf-8")
    reader = isolated_registry(plugin_module(GOOD_PLUGIN, "tiny_good")).get("reader", "tiny-table")
    assert check_reader(reader, good).parameters == ("p",)
    with pytest.raises(InputError, match=r"ok\.tiny, line 2: expected 'p value'"):
        good.write_text("2 1\nfour 2\n", encoding="utf-8")
        reader.read(good)
    with pytest.raises(PluginCheckError) as caught:
        check_reader(CrashingReader(), good)
    message = str(caught.value)
    assert "sniff(a missing path) raised FileNotFoundError" in message
    assert "read(random bytes) raised KeyError, not InputError" in message
