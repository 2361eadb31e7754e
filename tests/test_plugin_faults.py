"""Plugins that misbehave when called: each failure names the plugin and its package, and pmkit goes on.

A detector that raises or returns the wrong thing is skipped with a warning; a reader, modeler or
prior the user chose fails with one line (exit 3), never an internal error; a reader's sniff that
raises, answers wrongly, is slow or hangs (even holding the GIL) counts as "no" and is named.
The plugins are modules built from source here and installed with ``using_registry`` beside the
built-ins, and the CLI runs in process.
"""

from __future__ import annotations

import re
import textwrap
import time
import types
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import pmkit
from pmkit import plugins as plugin_manager
from pmkit.cli import main
from pmkit.errors import PluginError
from pmkit.plugins import READER_PRECEDENCE, PluginWarning, build_registry
from pmkit.testing.plugins import isolated_registry, using_registry

FAULTY_AT_CALL_TIME = '''
"""tiny_faults: a reader, modeler, prior and detector of each way to fail when called."""
import sys
from pathlib import Path

import pmkit


class Named:
    description = "misbehaves on purpose"
    options = ()

    def __init__(self, name, behaviour):
        self.name = name
        self.behaviour = behaviour


class Reader(Named):
    def sniff(self, path):
        return Path(path).suffix == "." + self.name

    def read(self, path):
        if self.behaviour == "raise":
            raise KeyError("oops")
        return {"not": "an experiment"}


class Modeler(Named):
    def model(self, batch):
        if self.behaviour == "raise":
            raise RuntimeError("boom")
        if self.behaviour == "exit":
            sys.exit(0)
        if self.behaviour == "short":
            return pmkit.ModelSet(batch.parameters, [], modeler=self.name)
        if self.behaviour == "lying-function":
            models = [pmkit.Model(c, m, LyingFunction(batch.parameters, 1.0), modeler=self.name)
                      for c, m in zip(batch.callpaths, batch.metrics)]
            return pmkit.ModelSet(batch.parameters, models, modeler=self.name)
        return {"models": []}


class LyingFunction(pmkit.Function):
    def evaluate(self, points):
        raise RuntimeError("cannot evaluate")


class Knowledge:
    def constraints(self, experiment):
        raise RuntimeError("constraints lost")


class Prior(Named):
    def load(self, path):
        if self.behaviour == "raise":
            raise ValueError("cannot load")
        if self.behaviour == "no-constraints":
            return object()
        return Knowledge()


class Detector(Named):
    def detect(self, experiment, models):
        if self.behaviour == "raise":
            return 1 / 0
        if self.behaviour == "wrong-items":
            return ["not a finding"]
        return "nothing"


@pmkit.hookimpl
def pmkit_register_readers(register):
    register(Reader("crash", "raise"))
    register(Reader("wrongtype", "wrong"))


@pmkit.hookimpl
def pmkit_register_modelers(register):
    for behaviour in ("raise", "exit", "short", "wrong", "lying-function"):
        register(Modeler(behaviour, behaviour))


@pmkit.hookimpl
def pmkit_register_priors(register):
    register(Prior("broken-load", "raise"))
    register(Prior("no-constraints", "no-constraints"))
    register(Prior("broken-constraints", "constraints"))


@pmkit.hookimpl
def pmkit_register_detectors(register):
    register(Detector("zero-division", "raise"))
    register(Detector("wrong-items", "wrong-items"))
    register(Detector("wrong-type", "wrong"))
'''

SNIFFERS = '''
"""tiny_sniffers: readers whose sniff raises, answers wrongly, sleeps, hangs holding the GIL, or says yes to all."""
import re
import time
from pathlib import Path

import pmkit


class Reader:
    description = "sniffs badly on purpose"
    options = ()

    def __init__(self, name, sniff):
        self.name, self.sniff = name, sniff  # sniff(path), a plain function

    def read(self, path):
        builder = pmkit.ExperimentBuilder(("p",), source=str(path))
        for p in (2.0, 4.0, 8.0, 16.0):
            builder.add_values("read-by-" + self.name, "time", (p,), [p])
        return builder.build()


def raises(path):
    raise OSError("sniffing hurts")


def hangs_holding_the_gil(path):
    return re.fullmatch(r"(a+)+$", "a" * 64 + "b") is not None  # catastrophic backtracking, never releases the GIL


BEHAVIOURS = {
    "a-raises": raises,
    "b-says-yes": lambda path: "yes",
    "c-sleeps": lambda path: time.sleep(60),
    "d-hogs": hangs_holding_the_gil,
    "e-knows-tiny": lambda path: Path(path).suffix == ".tiny",
    "z-greedy": lambda path: True,
}


@pmkit.hookimpl
def pmkit_register_readers(register):
    for name, sniff in {k: v for k, v in BEHAVIOURS.items() if k in ENABLED}.items():
        register(Reader(name, sniff))
'''


def plugin_module(source: str, name: str, **attributes: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    exec(compile(textwrap.dedent(source), f"<{name}>", "exec"), module.__dict__)
    return module


@pytest.fixture
def faults() -> Iterator[None]:
    with using_registry(isolated_registry(plugin_module(FAULTY_AT_CALL_TIME, "tiny_faults"))):
        yield


def sniffers(*enabled: str) -> types.ModuleType:
    return plugin_module(SNIFFERS, "tiny_sniffers", ENABLED=set(enabled))


@pytest.fixture
def extrap_text(tmp_path: Path) -> Path:
    """A small Extra-P text input the built-in reader recognises."""
    path = tmp_path / "scaling.txt"
    lines = ["PARAMETER p", "POINTS 2 4 8 16 32", "", "REGION main", "METRIC time"]
    lines += [f"DATA {3 + 0.5 * p} {3.1 + 0.5 * p}" for p in (2, 4, 8, 16, 32)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_raising_detector_is_skipped_with_a_warning_naming_it_and_its_package(faults, extrap_text, capsys) -> None:
    code, out, err = run(capsys, "show", extrap_text, "--detector", "zero-division", "--detector", "imbalance")
    assert code == 0, err
    assert ("warning: detector 'zero-division' of plugin tiny_faults failed: detect() raised ZeroDivisionError: "
            "division by zero; skipped") in err.splitlines()
    assert "internal error" not in err and "Call tree" in out


@pytest.mark.parametrize(("detector", "problem"), [
    ("wrong-type", "detect() returned str, not a list of Findings"),
    ("wrong-items", "detect() returned str among its findings, not a Finding"),
])
def test_a_detector_returning_the_wrong_type_is_skipped(faults, extrap_text, capsys, detector: str,
                                                        problem: str) -> None:
    code, _, err = run(capsys, "show", extrap_text, "--detector", detector, "--json")
    assert code == 0, err
    assert f"warning: detector {detector!r} of plugin tiny_faults failed: {problem}; skipped" in err


def test_sdk_detect_warns_and_keeps_the_other_detectors_findings(faults, extrap_text) -> None:
    experiment = pmkit.read(extrap_text)
    models = pmkit.model(experiment)
    with pytest.warns(PluginWarning, match=r"detector 'zero-division' of plugin tiny_faults failed"):
        assert pmkit.detect(experiment, models, ["zero-division", "imbalance"]) == []


@pytest.mark.parametrize(("modeler", "problem"), [
    ("raise", "model() raised RuntimeError: boom"),
    ("exit", "model() raised SystemExit: the plugin called sys.exit(0)"),
    ("wrong", "model() returned dict, not a ModelSet"),
    ("short", "model() returned 0 models for 1 series"),
])
def test_a_chosen_modeler_that_fails_is_one_line_naming_it_not_an_internal_error(faults, extrap_text, capsys,
                                                                                 modeler: str, problem: str) -> None:
    code, out, err = run(capsys, "model", extrap_text, "--modeler", modeler)
    assert code == 3 and out == ""
    assert err == (f"error: modeler {modeler!r} of plugin tiny_faults failed: {problem} (a bug in that plugin, not "
                   "in your data; PMKIT_DEBUG=1 shows the traceback)\n")


def test_pmkit_debug_shows_the_plugins_own_traceback(faults, extrap_text, monkeypatch) -> None:
    monkeypatch.setenv("PMKIT_DEBUG", "1")
    with pytest.raises(PluginError) as caught:
        main(["model", str(extrap_text), "--modeler", "raise"])
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_chosen_reader_that_raises_names_the_reader_its_package_and_the_file(faults, tmp_path, capsys) -> None:
    path = tmp_path / "input.crash"
    path.write_text("anything\n", encoding="utf-8")
    code, _, err = run(capsys, "model", path)
    assert code == 3
    assert f"error: reader 'crash' of plugin tiny_faults failed on {path}: read() raised KeyError: 'oops'" in err


def test_a_reader_returning_the_wrong_type_fails_only_its_own_input(faults, tmp_path, extrap_text, capsys) -> None:
    bad = tmp_path / "input.wrongtype"
    bad.write_text("anything\n", encoding="utf-8")
    code, out, err = run(capsys, "model", bad, extrap_text, "--json")
    assert code == 0, err
    assert f"error: reader 'wrongtype' of plugin tiny_faults failed on {bad}: read() returned dict, not an " \
           "Experiment" in err
    assert "1 of 2 inputs skipped" in err and '"main"' in out


@pytest.mark.parametrize(("prior", "problem"), [
    ("broken-load", "load() raised ValueError: cannot load"),
    ("no-constraints", "load() returned object, which has no constraints() method"),
    ("broken-constraints", "constraints() raised RuntimeError: constraints lost"),
])
def test_a_chosen_prior_that_fails_is_one_line_naming_it(faults, extrap_text, tmp_path, capsys, prior: str,
                                                         problem: str) -> None:
    knowledge = tmp_path / "prior.json"
    knowledge.write_text("{}", encoding="utf-8")
    code, _, err = run(capsys, "model", extrap_text, "--prior", knowledge, "--prior-name", prior)
    assert code == 3
    assert f"error: prior {prior!r} of plugin tiny_faults failed" in err and problem in err
    assert "internal error" not in err


def test_an_internal_error_raised_in_a_plugins_code_names_the_plugin(faults, extrap_text, capsys) -> None:
    code, _, err = run(capsys, "show", extrap_text, "--modeler", "lying-function", "--detector", "imbalance")
    assert code == 3
    assert err == ("internal error: plugin tiny_faults (tiny_faults.evaluate) raised RuntimeError: cannot evaluate "
                   "(a bug in that plugin, not in your data; PMKIT_DEBUG=1 shows the traceback)\n")


# Sniffing: precedence, failures, time limits.

def test_reader_precedence_names_every_builtin_reader() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        registry = build_registry(entry_points=False)
    assert sorted(READER_PRECEDENCE) == registry.names("reader"), \
        "place every built-in reader in pmkit.plugins.READER_PRECEDENCE"
    assert [r.name for r in registry.sniff_order()] == list(READER_PRECEDENCE)


def test_builtins_sniff_first_so_a_greedy_plugin_cannot_take_a_builtin_format(extrap_text, tmp_path) -> None:
    registry = isolated_registry(sniffers("z-greedy", "e-knows-tiny"))
    order = [r.name for r in registry.sniff_order()]
    assert order == [*READER_PRECEDENCE, "e-knows-tiny", "z-greedy"]
    tiny = tmp_path / "run.tiny"
    tiny.write_text("x\n", encoding="utf-8")
    with using_registry(registry):
        assert pmkit.read(extrap_text).provenance.reader == "extrap-text"
        assert pmkit.read(tiny).provenance.reader == "e-knows-tiny"
        assert pmkit.read(tmp_path / "run.tiny").callpaths.paths() == ["read-by-e-knows-tiny"]
        other = tmp_path / "run.other"
        other.write_text("x\n", encoding="utf-8")
        assert pmkit.read(other).provenance.reader == "z-greedy"


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "run.tiny"
    path.write_text("x\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("reader", "problem"), [
    ("a-raises", "raised OSError: sniffing hurts; taken as no"),
    ("b-says-yes", "returned str 'yes', not True or False; taken as no"),
])
def test_a_sniff_that_raises_or_answers_wrongly_is_named_and_the_next_reader_reads(tiny, capsys, reader: str,
                                                                                 problem: str) -> None:
    with using_registry(isolated_registry(sniffers(reader, "e-knows-tiny"))):
        code, out, err = run(capsys, "model", tiny, "--json")
    assert code == 0, err
    assert f"warning: reader {reader!r} of plugin tiny_sniffers: sniff() of {tiny} {problem}" in err.splitlines()
    assert "read-by-e-knows-tiny" in out


@pytest.mark.parametrize("reader", ["c-sleeps", "d-hogs"])
def test_a_slow_or_hanging_sniff_is_abandoned_named_and_not_asked_again(tiny, tmp_path, capsys, monkeypatch,
                                                                        reader: str) -> None:
    monkeypatch.setenv("PMKIT_SNIFF_TIMEOUT", "0.3")
    second = tmp_path / "second.tiny"
    second.write_text("x\n", encoding="utf-8")
    with using_registry(isolated_registry(sniffers(reader, "e-knows-tiny"))):
        code, out, err = run(capsys, "model", tiny, second, "--json")
    assert code == 0, err
    warned = [line for line in err.splitlines() if line.startswith(f"warning: reader {reader!r}")]
    assert warned == [f"warning: reader {reader!r} of plugin tiny_sniffers: sniff() of {tiny} gave no answer within "
                      "0.3 s; pmkit stopped waiting and will not ask it again in this run (choose the reader with "
                      "--reader, or allow more time with PMKIT_SNIFF_TIMEOUT=SECONDS)"]
    assert out.count("read-by-e-knows-tiny") == 2


def test_a_bad_sniff_timeout_setting_is_a_usage_error(tiny, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PMKIT_SNIFF_TIMEOUT", "soon")
    with using_registry(isolated_registry(sniffers("e-knows-tiny"))):
        code, _, err = run(capsys, "model", tiny)
    assert code == 2 and "PMKIT_SNIFF_TIMEOUT='soon' is not a number of seconds" in err


def test_where_fork_is_unavailable_a_thread_bounds_the_sniff(tmp_path) -> None:
    assert plugin_manager._in_thread(lambda path: time.sleep(30), tmp_path, 0.2) == ("timeout", None, "")
    assert plugin_manager._in_thread(lambda path: path == tmp_path, tmp_path, 5) == ("answer", True, "")
    outcome, error, trace = plugin_manager._in_thread(lambda path: 1 / 0, tmp_path, 5)
    assert (outcome, error) == ("raised", "ZeroDivisionError: division by zero") and "Traceback" in trace


def test_a_failing_builtin_sniff_is_silent_except_under_pmkit_debug(extrap_text, monkeypatch) -> None:
    registry = isolated_registry()
    cube = registry.entry("reader", "cube").obj

    def broken(path: Path) -> bool:
        raise PermissionError("no entry")

    monkeypatch.setattr(cube, "sniff", broken)
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        assert pmkit.sdk.find_reader(extrap_text, registry).name == "extrap-text"
    assert not [w for w in quiet if issubclass(w.category, PluginWarning)]
    monkeypatch.setenv("PMKIT_DEBUG", "1")
    with pytest.warns(PluginWarning) as loud:
        assert pmkit.sdk.find_reader(extrap_text, registry).name == "extrap-text"
    (message,) = [str(w.message) for w in loud]
    assert re.match(rf"reader 'cube' of plugin pmkit \S+ \(built-in\): sniff\(\) of {re.escape(str(extrap_text))} "
                    r"raised PermissionError: no entry; taken as no\nTraceback", message)


def test_an_object_whose_attributes_raise_is_skipped_alone() -> None:
    source = '''
import pmkit


class Haunted:
    description = "raises when looked at"
    options = ()

    @property
    def name(self):
        raise RuntimeError("no name today")


class Fine:
    name = "fine"
    description = "a detector"
    options = ()

    def detect(self, experiment, models):
        return []


@pmkit.hookimpl
def pmkit_register_detectors(register):
    register(Haunted())
    register(Fine())
'''
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        registry = build_registry([plugin_module(source, "tiny_haunted")], builtins=False, entry_points=False)
    assert registry.names("detector") == ["fine"]
    assert registry.warnings == ["plugin tiny_haunted: a detector it registered was skipped: looking at it raised "
                                 "RuntimeError: no name today; its other objects are used"]
