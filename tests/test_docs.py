"""docs/hooks.md against the code: every hook documented with a working example and exercised by a test.

As datasette does for its plugin hooks: adding a hook to hookspecs.py without documenting and
testing it fails here, and so does an example on the page that no longer works.  A hook counts as
tested when test code calls it, or implements it and builds a registry with the implementation —
not when its name merely appears in a comment or a string.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit import hookspecs
from pmkit.errors import InputError
from pmkit.testing.plugins import check_modeler, isolated_registry, sample_experiment

ROOT = Path(__file__).resolve().parents[1]
HOOKS_DOC = ROOT / "docs" / "hooks.md"
TEST_DIRS = [ROOT / "tests", *sorted((ROOT / "plugins").glob("*/tests")), *sorted((ROOT / "adapters").glob("*/tests"))]
KIND_OF_HOOK = {hook: kind for kind, (hook, _) in hookspecs.KINDS.items()}


def hook_names() -> list[str]:
    """Every hook declared in hookspecs.py (functions marked with @hookspec)."""
    return sorted(name for name, obj in vars(hookspecs).items() if hasattr(obj, "pmkit_spec"))


def sections() -> dict[str, str]:
    """Level-2 sections of docs/hooks.md by heading."""
    text = HOOKS_DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## +(.+?)\s*$", text, flags=re.MULTILINE)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def python_blocks(section: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)


def example_module(hook: str) -> types.ModuleType:
    """The python example of ``hook``'s section, executed as a module (our own docs, not user input)."""
    blocks = python_blocks(sections()[hook])
    assert blocks, f"section {hook} of docs/hooks.md has no ```python example"
    module = types.ModuleType(f"docs_example_{hook}")
    exec(compile(blocks[0], f"docs/hooks.md#{hook}", "exec"), module.__dict__)
    return module


def registered(hook: str) -> list:
    registry = isolated_registry(example_module(hook), builtins=False)
    return registry.all(KIND_OF_HOOK[hook])


def test_hookspecs_declare_the_hooks_the_registry_collects() -> None:
    assert hook_names() == sorted(KIND_OF_HOOK)


@pytest.mark.parametrize("hook", hook_names())
def test_every_hook_has_a_section_with_an_example(hook: str) -> None:
    found = sections()
    assert hook in found, f"docs/hooks.md has no '## {hook}' section"
    assert f"{hook}(register)" in found[hook], f"section {hook} does not show the hook's signature"
    assert python_blocks(found[hook]), f"section {hook} has no python example"


def test_no_section_documents_a_hook_that_does_not_exist() -> None:
    stale = [heading for heading in sections() if heading.startswith("pmkit_") and heading not in hook_names()]
    assert not stale, f"docs/hooks.md documents hooks hookspecs.py does not declare: {stale}"


REGISTRY_BUILDERS = {"build_registry", "isolated_registry", "pmkit_registry", "using_registry", "make_distribution"}
"""Calls that register a module's plugins (``make_distribution`` installs an embedded plugin's source)."""


def _called_names(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            names.add(func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", ""))
    return names


def _implements(tree: ast.AST, hook: str) -> bool:
    """A function named ``hook`` marked ``hookimpl``, in the code or in a plugin's source held in a string."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == hook and any(
                "hookimpl" in ast.unparse(d) for d in node.decorator_list):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and hook in node.value:
            try:
                embedded = ast.parse(textwrap.dedent(node.value))
            except SyntaxError:
                continue
            if _implements(embedded, hook):
                return True
    return False


def exercises(source: str, hook: str) -> bool:
    """Whether test code calls ``hook``, or implements it and registers the implementation.

    A mention in a comment, a docstring or an error message does not count.
    """
    tree = ast.parse(source)
    called = _called_names(tree)
    return hook in called or (bool(called & REGISTRY_BUILDERS) and _implements(tree, hook))


def test_a_mention_is_not_a_test() -> None:
    hook = "pmkit_register_readers"
    assert not exercises(f"# {hook} is tested elsewhere\ndef test_x():\n    '{hook}'\n", hook)
    implemented = f"import pmkit\n\n@pmkit.hookimpl\ndef {hook}(register):\n    register(object())\n"
    assert not exercises(implemented, hook), "implemented but never registered"
    assert exercises(implemented + "def test_x():\n    build_registry([object()])\n", hook)
    assert exercises(f"def test_x(pm):\n    pm.hook.{hook}(register=print)\n", hook)
    embedded = f"SOURCE = {implemented!r}\ndef test_x(site):\n    make_distribution(site, 'd', '1', 'm', SOURCE)\n"
    assert exercises(embedded, hook)
    assert not exercises(embedded.replace("make_distribution", "print"), hook)


@pytest.mark.parametrize("hook", hook_names())
def test_every_hook_is_exercised_by_a_test(hook: str) -> None:
    this = Path(__file__).resolve()
    users = [path for folder in TEST_DIRS for path in folder.rglob("*.py")
             if path.resolve() != this and exercises(path.read_text(encoding="utf-8"), hook)]
    assert users, f"no test implements and registers, or calls, {hook}; add one that registers through it"


@pytest.mark.parametrize("hook", hook_names())
def test_every_example_registers_a_valid_object_of_its_kind(hook: str) -> None:
    objects = registered(hook)
    assert len(objects) == 1
    kind = KIND_OF_HOOK[hook]
    assert isinstance(objects[0], hookspecs.KINDS[kind][1])
    assert objects[0].name and "\n" not in objects[0].description


def test_reader_example_reads_its_format_and_names_the_bad_line(tmp_path: Path) -> None:
    (reader,) = registered("pmkit_register_readers")
    good = tmp_path / "run.times.csv"
    good.write_text("2,main,10.0\n2,main,10.2\n4,main,5.1\n4,main->mpi,0.3\n", encoding="utf-8")
    assert reader.sniff(good) and not reader.sniff(tmp_path)
    experiment = reader.read(good, metric="time")
    assert experiment.parameters == ("p",) and experiment.callpaths.paths() == ["main", "main->mpi"]
    assert experiment.values("time")[0].tolist() == pytest.approx([10.1, 5.1])
    assert np.isnan(experiment.values("time")[1][0])
    bad = tmp_path / "bad.times.csv"
    bad.write_text("2,main,10.0\nfour,main,5\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.times\.csv, line 2: p and seconds must be numbers"):
        reader.read(bad, metric="time")


def test_modeler_example_keeps_the_contract() -> None:
    (modeler,) = registered("pmkit_register_modelers")
    check_modeler(modeler)
    models = modeler.model(pmkit.SeriesBatch.from_experiment(sample_experiment({"main": lambda p: 3.0})))
    assert models[0].function.pretty_text() == "3"


def test_prior_example_loads_constraints_and_rejects_bad_json(tmp_path: Path) -> None:
    (prior,) = registered("pmkit_register_priors")
    path = tmp_path / "constant.json"
    path.write_text('{"constant": ["main->compute", "main->absent"]}', encoding="utf-8")
    constraints = prior.load(path).constraints(sample_experiment())
    assert list(constraints) == ["main->compute"] and constraints["main->compute"].constant
    path.write_text('{"constant": "main"}', encoding="utf-8")
    with pytest.raises(InputError, match=r"constant\.json \[constant\]"):
        prior.load(path)


def test_detector_example_flags_superlinear_growth() -> None:
    (detector,) = registered("pmkit_register_detectors")
    grows = pmkit.Function(("p",), 1.0, (pmkit.Term(0.1, (pmkit.Factor("p", 2),)),))
    flat = pmkit.Function(("p",), 1.0, (pmkit.Term(0.1, (pmkit.Factor("p", 1),)),))
    models = pmkit.ModelSet(("p",), [pmkit.Model("main->a", "time", grows), pmkit.Model("main->b", "time", flat)])
    findings = detector.detect(sample_experiment(), models, exponent=1.0)
    assert [(f.callpath, f.evidence["exponent"]) for f in findings] == [("main->a", "2")]


def test_testing_section_example_passes_under_pytest_as_a_plugin_author_runs_it(pytester: pytest.Pytester) -> None:
    """The modeler example saved as ``pmkit_mean.py``, the testing example as a test file, the
    conftest line the section gives: pytest runs it with pmkit's fixtures and every test passes."""
    (testing,) = python_blocks(sections()["Testing your plugin"])
    (modeler,) = python_blocks(sections()["pmkit_register_modelers"])
    assert 'pytest_plugins = ["pmkit.testing.plugins"]' in sections()["Testing your plugin"]
    pytester.makepyfile(pmkit_mean=modeler, test_mean=testing,
                        conftest='pytest_plugins = ["pmkit.testing.plugins"]\n')
    pytester.syspathinsert()
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def api_reference() -> types.ModuleType:
    """docs/api_reference.py, the script that writes docs/api.md (our own code, loaded by path)."""
    spec = importlib.util.spec_from_file_location("api_reference", ROOT / "docs" / "api_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_reference_matches_the_docstrings() -> None:
    reference = api_reference()
    committed = reference.OUTPUT.read_text(encoding="utf-8")
    assert committed == reference.render(), "docs/api.md is stale: run `python docs/api_reference.py` and commit it"


def test_every_public_class_and_function_of_the_reference_has_a_docstring() -> None:
    missing = []
    for name, _ in api_reference().MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.startswith("_") or getattr(value, "__module__", None) != name:
                continue
            if (inspect.isclass(value) or inspect.isfunction(value)) and not (value.__doc__ or "").strip():
                missing.append(f"{name}.{attr}")
    assert not missing, f"public objects without a docstring (the API reference shows nothing for them): {missing}"


def test_api_reference_answers_what_plugin_authors_asked() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert "ExperimentBuilder.add_metric(name: str, unit: str = ''" in text
    assert "Its items are `Callpath` objects, not strings" in text
    assert "### fixture `pmkit_registry`" in text
    assert "(api.md)" in (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")


def test_every_module_is_on_the_architecture_map() -> None:
    """docs/architecture.md is the map a newcomer reads: every module of ``src/pmkit`` is named on it."""
    package = ROOT / "src" / "pmkit"
    text = (ROOT / "docs" / "architecture.md").read_text()
    unnamed = [str(path.relative_to(package)) for path in sorted(package.rglob("*.py"))
               if path.stem not in ("__init__", "__main__") and not re.search(rf"\b{path.stem}\b", text)]
    assert not unnamed, f"modules docs/architecture.md does not name: {unnamed}"
