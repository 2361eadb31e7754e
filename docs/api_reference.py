"""Write ``docs/api.md``, pmkit's API reference, from the docstrings and signatures of the public modules.

    python docs/api_reference.py           # rewrite docs/api.md
    python docs/api_reference.py --check   # exit 1 if docs/api.md differs from what the code says

The reference is a committed Markdown file rather than a site built elsewhere: it reads on any
forge without hosting, a change to the API shows up in review as a change to the reference, and
``tests/test_docs.py`` runs the check with the ordinary test suite, so a stale reference fails
before anything is merged.  Documented: every public class, function and documented constant
defined in the modules of :data:`MODULES`, in source order; a constant or field is documented by
the string literal that follows its assignment (as Sphinx reads them).  Docstrings are reST-ish
(````code````, ``:class:`~pmkit.X```); they are turned into Markdown.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import itertools
import re
import sys
import textwrap
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().with_name("api.md")

MODULES: tuple[tuple[str, str], ...] = (
    ("pmkit.sdk", "The SDK verbs"),
    ("pmkit.executors", "Where reading and modeling tasks run: in-process, processes, Dask"),
    ("pmkit.comparison", "Comparing two studies"),
    ("pmkit.experiment", "Experiments and how readers build them"),
    ("pmkit.series", "What a modeler receives"),
    ("pmkit.pmnf", "Model functions"),
    ("pmkit.models", "Models and model sets"),
    ("pmkit.findings", "Findings"),
    ("pmkit.overhead", "Communication overhead of MPI calls (traces)"),
    ("pmkit.calibration.reference", "Calibration references: t_max and T_f"),
    ("pmkit.constraints", "Constraints from priors"),
    ("pmkit.options", "Plugin options"),
    ("pmkit.errors", "Errors"),
    ("pmkit.hookspecs", "The plugin contract"),
    ("pmkit.plugins", "The plugin registry"),
    ("pmkit.testing.plugins", "Test helpers for plugin authors"),
    ("pmkit.testing.extrap_inputs", "Extra-P input files written by code"),
    ("pmkit.testing.taint_files", "Perf-Taint output written by code"),
    ("pmkit.testing.identity", "Checking that two experiments or model sets are identical"),
)
"""The modules documented, in the order of the reference, with a title each."""

HEADER = """# pmkit API reference

Generated from the docstrings by `python docs/api_reference.py`; `tests/test_docs.py` fails when
this file no longer matches the code, so do not edit it by hand.  The plugin hooks are explained
with examples in [hooks.md](hooks.md); `import pmkit` gives the names in the table below.
"""

ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|exc|obj):`(~?)([^`]+)`")


def markdown(doc: str) -> str:
    """A docstring in Markdown: reST roles and double backticks become code spans, ``::`` blocks fences."""
    doc = ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", doc)
    doc = doc.replace("``", "`")
    lines = doc.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::") and i + 1 < len(lines):
            out.append(line.rstrip()[:-1] if not line.rstrip().endswith(" ::") else line.rstrip()[:-3])
            block: list[str] = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out).strip()


class _Annotation:
    """An annotation kept as source text (``from __future__ import annotations``), shown without quotes."""

    def __init__(self, text: Any) -> None:
        self.text = text if isinstance(text, str) else inspect.formatannotation(text)

    def __repr__(self) -> str:
        return self.text


def signature(obj: Any) -> str:
    """``(path: str, *, registry: Registry | None = None) -> Experiment``; empty if it has none."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""
    empty = inspect.Parameter.empty
    params = [p.replace(annotation=_Annotation(p.annotation)) if p.annotation is not empty else p
              for p in sig.parameters.values()]
    params = [p.replace(default=_Annotation(_default(p.default))) if p.default is not empty else p for p in params]
    ret = sig.return_annotation
    return str(sig.replace(parameters=params,
                           return_annotation=_Annotation(ret) if ret is not empty else sig.empty))


def _default(value: Any) -> str:
    text = repr(value)
    return "…" if " at 0x" in text or len(text) > 60 else text


def _assigned(node: ast.stmt) -> list[str]:
    """The plain names a statement assigns (``X = ...``, ``X: int = ...``)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def attribute_docs(source: str) -> dict[str, str]:
    """Names assigned in a module or class body → the string literal right after the assignment."""
    docs: dict[str, str] = {}
    body = ast.parse(textwrap.dedent(source)).body
    if len(body) == 1 and isinstance(body[0], ast.ClassDef):
        body = body[0].body
    for node, following in itertools.pairwise(body):
        names = _assigned(node)
        if (names and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)):
            docs[names[0]] = inspect.cleandoc(following.value.value)
    return docs


def _line(obj: Any) -> int:
    try:
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return 10**9


def _members(cls: type) -> list[tuple[str, Any]]:
    """Public methods and properties defined by ``cls`` itself, in source order."""
    found = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        function = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        if inspect.isfunction(function):
            found.append((name, value))
    return sorted(found, key=lambda item: _line(item[1].fget if isinstance(item[1], property)
                                                  else getattr(item[1], "__func__", item[1])))


def _class(qualified: str, cls: type) -> list[str]:
    is_protocol = getattr(cls, "_is_protocol", False)
    init = "" if is_protocol else signature(cls).split(" -> ")[0]
    lines = [f"### class `{qualified}{init}`", ""]
    bases = [b.__name__ for b in cls.__bases__ if b is not object and not b.__name__.startswith("_")]
    if bases and bases != ["Protocol"]:
        lines += [f"Based on {', '.join(f'`{b}`' for b in bases)}.", ""]
    if cls.__doc__:
        lines += [markdown(inspect.cleandoc(cls.__doc__)), ""]
    try:
        field_docs = attribute_docs(inspect.getsource(cls))
    except (OSError, TypeError):
        field_docs = {}
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            if f.name.startswith("_"):
                continue
            doc = f" — {markdown(field_docs[f.name])}" if f.name in field_docs else ""
            lines.append(f"- `{f.name}: {_Annotation(f.type)!r}`{doc}")
        lines.append("")
    elif is_protocol:
        for name, annotation in getattr(cls, "__annotations__", {}).items():
            lines.append(f"- `{name}: {_Annotation(annotation)!r}`")
        lines.append("")
    for name, value in _members(cls):
        if isinstance(value, property):
            head, doc = f"`{qualified}.{name}` (property)", value.fget.__doc__
        else:
            function = getattr(value, "__func__", value)
            kind = "classmethod " if isinstance(value, classmethod) else ""
            shown = re.sub(r"^\((?:self|cls)(?:, |(?=\)))", "(", signature(function))
            head, doc = f"{kind}`{qualified}.{name}{shown}`", function.__doc__
        lines.append(f"#### {head}")
        lines += ["", markdown(inspect.cleandoc(doc)) if doc else "", ""]
    return lines


def module_section(name: str, title: str) -> list[str]:
    """The reference of one module: its docstring, then its public objects in source order."""
    module = importlib.import_module(name)
    lines = [f"## `{name}` — {title}", "", markdown(inspect.cleandoc(module.__doc__ or "")), ""]
    constants = attribute_docs(inspect.getsource(module))
    objects = []
    for attr, value in vars(module).items():
        if attr.startswith("_"):
            continue
        if _is_fixture(value):
            objects.append((_line(inspect.unwrap(value)), attr, value))
        elif (inspect.isclass(value) or inspect.isfunction(value)) and getattr(value, "__module__", None) == name:
            objects.append((_line(value), attr, value))
        elif attr in constants:
            objects.append((_constant_line(module, attr), attr, value))
    for _, attr, value in sorted(objects, key=lambda item: item[0]):
        qualified = f"{name}.{attr}"
        if _is_fixture(value):
            lines += [f"### fixture `{attr}`", "", markdown(inspect.cleandoc(value.__doc__ or "")), ""]
        elif inspect.isclass(value):
            lines += _class(qualified, value)
        elif inspect.isfunction(value):
            lines += [f"### `{qualified}{signature(value)}`", ""]
            lines += [markdown(inspect.cleandoc(value.__doc__)) if value.__doc__ else "", ""]
        else:
            shown = _default(value)
            lines += [f"### `{qualified}`" + (f" = `{shown}`" if shown != "…" else ""), "",
                      markdown(constants[attr]), ""]
    return lines


def _is_fixture(value: Any) -> bool:
    """A pytest fixture, as pytest 8.4+ (a wrapper object) and earlier (a marked function) define them."""
    return hasattr(value, "_fixture_function_marker") or hasattr(value, "_pytestfixturefunction")


def _constant_line(module: Any, name: str) -> int:
    for node in ast.parse(inspect.getsource(module)).body:
        if name in _assigned(node):
            return node.lineno
    return 10**9


def exported() -> list[str]:
    """The table of what ``import pmkit`` gives and where each name is documented."""
    import pmkit

    rows = ["| name | documented in |", "|---|---|"]
    for name in sorted(pmkit.__all__, key=str.lower):
        obj = getattr(pmkit, name)
        homes = [module for module, _ in MODULES if vars(importlib.import_module(module)).get(name) is obj]
        rows.append(f"| `pmkit.{name}` | `{(homes or [obj.__module__])[0]}.{name}` |")
    return rows


def render() -> str:
    """The whole reference as Markdown."""
    lines = [HEADER, *exported(), ""]
    lines += ["Modules: " + ", ".join(f"`{name}`" for name, _ in MODULES) + ".", ""]
    for name, title in MODULES:
        lines += module_section(name, title)
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write docs/api.md from pmkit's docstrings.")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/api.md is stale instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale: run `python docs/api_reference.py` and commit the result", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
