"""Per-process model files (TOML): parameters, derived parameters, code sections and their predictors,
and the total over processes.  The format is documented, with a complete example, in
``docs/perprocess.md``.

Everything is checked when the file is loaded — unknown keys, names, cycles among derived
parameters, expressions outside the grammar of :mod:`pmkit.perprocess.expressions`, a total that is
still one value per process — and each problem is one :class:`~pmkit.errors.InputError` naming the
file, the line and the offending token.  Nothing from the file is evaluated as Python.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmkit.errors import InputError
from pmkit.perprocess.expressions import FUNCTIONS, Expression, ExpressionError, first_use, per_process
from pmkit.readers.parsing import read_text

PREDICTORS = ("linear", "pmnf")
"""Section predictors: linear in named terms (``a·cells + b``), or a PMNF law of one parameter."""

FITS = ("relative", "ordinary")
"""Least squares weighted by 1/time (relative errors count alike) or unweighted."""

AGGREGATES = ("max", "min", "sum", "mean")
"""How a measured call path's per-process values become the run's value in ``[validation]``."""

PROCESS = "process"
"""The name of the per-process total inside ``[total] expression``."""

P = "p"
"""The global parameter every run has: its number of processes."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

_KEYS = {
    "model": {"name", "metric", "fit", "description"},
    "parameters": {"per_process", "global"},
    "section": {"callpaths", "predictor", "terms", "intercept", "parameter", "factor", "inclusive", "fit",
                "description"},
    "total": {"process", "expression"},
    "validation": {"callpath", "metric", "aggregate"},
}
_TABLES = {"model", "parameters", "derived", "sections", "total", "validation"}


@dataclass(frozen=True)
class Section:
    """A code section: the call paths it covers and how its time per process is predicted.

    Linear: ``factor × (Σ c_k·term_k + c0)``; PMNF: ``factor × (c0 + c1·x^α·log2(x)^β)`` of the named
    ``parameter``.  ``factor`` (default 1) is the paper's communication ratio, known per process.
    """

    name: str
    callpaths: tuple[str, ...]
    predictor: str = "linear"
    terms: tuple[Expression, ...] = ()
    intercept: bool = True
    parameter: str | None = None
    factor: Expression | None = None
    inclusive: bool = False
    fit: str = "relative"
    line: int | None = None

    @property
    def names(self) -> set[str]:
        used = {n for t in self.terms for n in t.names}
        if self.parameter:
            used.add(self.parameter)
        if self.factor is not None:
            used |= self.factor.names
        return used


@dataclass(frozen=True)
class Validation:
    """What a measured run's total is: a call path's inclusive value, aggregated over processes."""

    callpath: str
    metric: str
    aggregate: str = "max"


@dataclass(frozen=True)
class ModelSpec:
    """A loaded, checked model file."""

    path: str
    name: str
    metric: str
    per_process: tuple[str, ...]
    global_parameters: tuple[str, ...]
    derived: dict[str, Expression]
    sections: tuple[Section, ...]
    process: Expression
    total: Expression
    validation: Validation | None = None
    fit: str = "relative"
    description: str = ""

    @property
    def metrics(self) -> list[str]:
        """The metric of the section times, then the validation's metric if it is another one."""
        if self.validation is not None and self.validation.metric != self.metric:
            return [self.metric, self.validation.metric]
        return [self.metric]

    @property
    def section_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.sections)

    def section(self, name: str) -> Section:
        for section in self.sections:
            if section.name == name:
                return section
        raise KeyError(name)

    def varies(self, name: str) -> bool:
        """Whether ``name`` has one value per process (parameters, derived ones, sections) or per run."""
        if name in self.per_process or name in self.section_names or name == PROCESS:
            return True
        if name in self.derived:
            return per_process(self.derived[name].node, self.varies)
        return False

    def parameters_used(self) -> tuple[list[str], list[str]]:
        """Per-process and global parameters the sections and the total need (directly or through derived ones)."""
        used = self.names_used()
        return ([n for n in self.per_process if n in used],
                [n for n in (P, *self.global_parameters) if n in used or n == P])

    def derived_used(self) -> list[str]:
        """The derived parameters the sections and the total need, in the order they are evaluated."""
        used = self.names_used()
        return [n for n in self.derived if n in used]

    def names_used(self) -> set[str]:
        """Every name the sections and the total refer to, directly or through derived parameters."""
        used: set[str] = set()
        for section in self.sections:
            used |= section.names
        used |= self.process.names | self.total.names
        pending = list(used)
        while pending:
            name = pending.pop()
            if name in self.derived:
                for inner in self.derived[name].names - used:
                    used.add(inner)
                    pending.append(inner)
        return used

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.path, "name": self.name, "metric": self.metric, "fit": self.fit,
            "per_process": list(self.per_process), "global": [P, *self.global_parameters],
            "derived": {k: str(v) for k, v in self.derived.items()},
            "sections": [{"name": s.name, "callpaths": list(s.callpaths), "predictor": s.predictor,
                          "terms": [str(t) for t in s.terms], "intercept": s.intercept, "parameter": s.parameter,
                          "factor": None if s.factor is None else str(s.factor), "inclusive": s.inclusive,
                          "fit": s.fit} for s in self.sections],
            "process": str(self.process), "total": str(self.total),
            "validation": None if self.validation is None else {
                "callpath": self.validation.callpath, "metric": self.validation.metric,
                "aggregate": self.validation.aggregate},
        }


class _Lines:
    """Where keys and array items sit in the TOML text (tomllib keeps no positions)."""

    _HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    _PART = r"""(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)"""
    _KEY = re.compile(rf"^\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.keys: dict[tuple[str, ...], int] = {}
        table: tuple[str, ...] = ()
        for number, line in enumerate(self.lines, start=1):
            header = self._HEADER.match(line)
            if header:
                table = self._split(header.group(1))
                self.keys.setdefault(table, number)
                continue
            key = self._KEY.match(line)
            if key:
                self.keys.setdefault(table + self._split(key.group(1)), number)

    @staticmethod
    def _split(dotted: str) -> tuple[str, ...]:
        parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([^.\s]+)', dotted)
        return tuple(next(p for p in part if p) if any(part) else "" for part in parts)

    def of(self, *path: str, item: str | None = None) -> int | None:
        """Line of the key ``path`` (or of its table), or of ``item``'s text in the key's value."""
        for cut in range(len(path), 0, -1):
            line = self.keys.get(tuple(path[:cut]))
            if line is not None:
                break
        else:
            return None
        if item is not None and cut == len(path):
            for number in range(line, min(line + 200, len(self.lines) + 1)):
                if item in self.lines[number - 1]:
                    return number
        return line


def load_model(path: str | Path) -> ModelSpec:
    """Read and check a model file; InputError naming the file, line and problem if it is wrong."""
    return parse_model(read_text(Path(path)), path)


def parse_model(text: str, path: str | Path = "<model>") -> ModelSpec:
    """Check the TOML ``text`` of a model file; ``path`` names it in errors."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\(at line (\d+), column \d+\)", message)
        line = int(found.group(1)) if found else None
        raise InputError(path, f"not valid TOML: {re.sub(r' ?[(]at line.*[)]', '', message)}", line=line) from None
    return _Builder(data, _Lines(text), str(path)).build()


class _Builder:
    def __init__(self, data: dict[str, Any], lines: _Lines, path: str) -> None:
        self.data = data
        self.lines = lines
        self.path = path

    def fail(self, where: Sequence[str], problem: str, item: str | None = None) -> InputError:
        return InputError(self.path, problem, line=self.lines.of(*where, item=item))

    def expression(self, where: Sequence[str], text: Any, label: str) -> Expression:
        if not isinstance(text, str):
            raise self.fail(where, f"{label} must be an expression in quotes, got {text!r}")
        try:
            return Expression.parse(text)
        except ExpressionError as exc:
            raise self.fail(where, f"{label}: {exc} in {text!r}", item=text) from None

    def table(self, key: str) -> dict[str, Any]:
        value = self.data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail((key,), f"[{key}] must be a table")
        return value

    def check_keys(self, where: tuple[str, ...], value: Mapping[str, Any], allowed: set[str]) -> None:
        for key in value:
            if key not in allowed:
                hint = difflib.get_close_matches(key, sorted(allowed), n=1)
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                raise self.fail((*where, key), f"unknown key {key!r} in [{'.'.join(where)}]{suggestion}; "
                                f"known keys: {', '.join(sorted(allowed))}")

    def identifier(self, where: Sequence[str], name: Any, kind: str) -> str:
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise self.fail(where, f"{kind} name {name!r} must be letters, digits and _ (not starting with a digit)",
                            item=str(name))
        if name in FUNCTIONS or name == PROCESS:
            raise self.fail(where, f"{kind} name {name!r} is reserved (a function or the per-process total)",
                            item=name)
        return name

    def names_list(self, where: tuple[str, ...], value: Any, kind: str) -> list[str]:
        if not isinstance(value, list):
            raise self.fail(where, f"{'.'.join(where)} must be a list of names, got {value!r}")
        return [self.identifier(where, v, kind) for v in value]

    def build(self) -> ModelSpec:
        unknown = [k for k in self.data if k not in _TABLES]
        if unknown:
            raise self.fail((unknown[0],), f"unknown table or key {unknown[0]!r}; a model file has "
                            f"{', '.join(f'[{t}]' for t in sorted(_TABLES))}")
        model = self.table("model")
        self.check_keys(("model",), model, _KEYS["model"])
        metric = model.get("metric", "time")
        if not isinstance(metric, str) or not metric:
            raise self.fail(("model", "metric"), f"metric must be a metric name, got {metric!r}")
        fit = self.choice(("model", "fit"), model.get("fit", "relative"), FITS)
        parameters = self.table("parameters")
        self.check_keys(("parameters",), parameters, _KEYS["parameters"])
        per_proc = self.names_list(("parameters", "per_process"), parameters.get("per_process", []), "parameter")
        globals_ = [g for g in self.names_list(("parameters", "global"), parameters.get("global", []), "parameter")
                    if g != P]
        seen: dict[str, str] = {P: "the number of processes"}
        for kind, group in (("per_process", per_proc), ("global", globals_)):
            for name in group:
                if name in seen:
                    raise self.fail(("parameters", kind), f"parameter {name!r} is declared twice", item=name)
                seen[name] = f"a {kind.replace('_', '-')} parameter"
        derived = self.derived(seen)
        sections = self.sections(seen)
        known = {**seen, **{s.name: "a section" for s in sections}}
        self.check_names(("derived",), derived, known)
        spec_stub = ModelSpec(self.path, "", metric, tuple(per_proc), tuple(globals_), derived, sections,
                              Expression.parse("0"), Expression.parse("0"), fit=fit)
        for section in sections:
            self.check_section_names(section, known)
        process, total = self.total(sections, seen, spec_stub)
        validation = self.validation(metric)
        name = model.get("name", Path(self.path).stem)
        description = model.get("description", "")
        if not isinstance(name, str) or not isinstance(description, str):
            raise self.fail(("model",), "model name and description must be text")
        return ModelSpec(self.path, name, metric, tuple(per_proc), tuple(globals_), derived, sections, process, total,
                         validation, fit, description)

    def choice(self, where: tuple[str, ...], value: Any, choices: Sequence[str]) -> str:
        if value not in choices:
            raise self.fail(where, f"{where[-1]} must be one of {', '.join(choices)}, got {value!r}")
        return str(value)

    def derived(self, seen: dict[str, str]) -> dict[str, Expression]:
        table = self.table("derived")
        parsed: dict[str, Expression] = {}
        for name, text in table.items():
            self.identifier(("derived", name), name, "derived parameter")
            if name in seen:
                raise self.fail(("derived", name), f"derived parameter {name!r} is already {seen[name]}")
            parsed[name] = self.expression(("derived", name), text, f"[derived] {name}")
        order: list[str] = []
        state: dict[str, int] = {}

        def visit(name: str, chain: list[str]) -> None:
            if state.get(name) == 2:
                return
            if state.get(name) == 1:
                cycle = " → ".join([*chain[chain.index(name):], name])
                raise self.fail(("derived", name), f"derived parameters refer to each other in a cycle: {cycle}")
            state[name] = 1
            for inner in sorted(parsed[name].names & set(parsed)):
                visit(inner, [*chain, name])
            state[name] = 2
            order.append(name)

        for name in parsed:
            visit(name, [])
        for name in parsed:
            seen[name] = "a derived parameter"
        return {name: parsed[name] for name in order}

    def check_names(self, where: tuple[str, ...], expressions: Mapping[str, Expression],
                    known: Mapping[str, str], *, sections_allowed: bool = False) -> None:
        for key, expression in expressions.items():
            self.check_expression((*where, key), expression, known, f"[{'.'.join(where)}] {key}",
                                  sections_allowed=sections_allowed)

    def check_expression(self, where: tuple[str, ...], expression: Expression, known: Mapping[str, str], label: str,
                         *, sections_allowed: bool = False, process_allowed: bool = False) -> None:
        for name in sorted(expression.names, key=lambda n: first_use(expression.node, n).column):  # type: ignore[union-attr]
            kind = known.get(name)
            if kind == "a section" and not sections_allowed:
                raise self.fail(where, f"{label}: {name!r} is a section; section times can only be used in [total]",
                                item=expression.text)
            if name == PROCESS and process_allowed:
                continue
            if kind is None:
                column = first_use(expression.node, name).column  # type: ignore[union-attr]
                hint = difflib.get_close_matches(name, sorted(known), n=1)
                suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
                raise self.fail(where, f"{label}: unknown name {name!r} at column {column} of "
                                f"{expression.text!r}{suggestion}; declare it in [parameters] or [derived]",
                                item=expression.text)

    def sections(self, seen: dict[str, str]) -> tuple[Section, ...]:
        table = self.table("sections")
        if not table:
            raise self.fail(("sections",), "the model has no [sections.NAME] tables; each code section needs one "
                            "with callpaths = [...]")
        out = []
        for name, body in table.items():
            where = ("sections", name)
            self.identifier(where, name, "section")
            if name in seen:
                raise self.fail(where, f"section {name!r} has the name of {seen[name]}")
            if not isinstance(body, dict):
                raise self.fail(where, f"[sections.{name}] must be a table with callpaths = [...]")
            self.check_keys(where, body, _KEYS["section"])
            callpaths = body.get("callpaths")
            if isinstance(callpaths, str):
                callpaths = [callpaths]
            if not isinstance(callpaths, list) or not callpaths or not all(
                    isinstance(c, str) and c.strip() for c in callpaths):
                raise self.fail((*where, "callpaths"), f"section {name}: callpaths must be a non-empty list of call "
                                "paths or patterns, e.g. [\"main->solve\", \"MPI_Allreduce\", \"main->halo->*\"]")
            predictor = self.choice((*where, "predictor"), body.get("predictor", "linear"), PREDICTORS)
            terms_raw = body.get("terms", [])
            if isinstance(terms_raw, str):
                terms_raw = [terms_raw]
            if not isinstance(terms_raw, list):
                raise self.fail((*where, "terms"), f"section {name}: terms must be a list of expressions")
            terms = tuple(self.expression((*where, "terms"), t, f"section {name} term") for t in terms_raw)
            intercept = body.get("intercept", True)
            inclusive = body.get("inclusive", False)
            for key, value in (("intercept", intercept), ("inclusive", inclusive)):
                if not isinstance(value, bool):
                    raise self.fail((*where, key), f"section {name}: {key} must be true or false, got {value!r}")
            parameter = body.get("parameter")
            if predictor == "pmnf":
                if terms:
                    raise self.fail((*where, "terms"), f"section {name}: a pmnf predictor finds its own term; give "
                                    "parameter = \"NAME\" instead of terms")
                if parameter is None:
                    raise self.fail(where, f"section {name}: a pmnf predictor needs parameter = \"NAME\"")
                parameter = self.identifier((*where, "parameter"), parameter, "parameter")
            elif parameter is not None:
                raise self.fail((*where, "parameter"), f"section {name}: parameter applies to predictor = \"pmnf\"; "
                                "a linear predictor takes terms = [...]")
            elif not terms and not intercept:
                raise self.fail(where, f"section {name}: a linear predictor needs terms, an intercept, or both")
            factor = body.get("factor")
            factor_expr = None if factor is None else self.expression((*where, "factor"), factor,
                                                                      f"section {name} factor")
            fit = self.choice((*where, "fit"), body.get("fit", self.data.get("model", {}).get("fit", "relative")),
                              FITS)
            out.append(Section(name, tuple(c.strip() for c in callpaths), predictor, terms, intercept, parameter,
                               factor_expr, inclusive, fit, self.lines.of(*where)))
        return tuple(out)

    def check_section_names(self, section: Section, known: Mapping[str, str]) -> None:
        where = ("sections", section.name)
        for term in section.terms:
            self.check_expression((*where, "terms"), term, known, f"section {section.name} term")
        if section.factor is not None:
            self.check_expression((*where, "factor"), section.factor, known, f"section {section.name} factor")
        if section.parameter is not None and known.get(section.parameter, "a section") == "a section":
            hint = difflib.get_close_matches(section.parameter, sorted(known), n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise self.fail((*where, "parameter"), f"section {section.name}: unknown parameter "
                            f"{section.parameter!r}{suggestion}")

    def total(self, sections: Sequence[Section], seen: Mapping[str, str],
              spec: ModelSpec) -> tuple[Expression, Expression]:
        table = self.table("total")
        self.check_keys(("total",), table, _KEYS["total"])
        known = {**seen, **{s.name: "a section" for s in sections}}
        process_text = table.get("process", " + ".join(s.name for s in sections))
        process = self.expression(("total", "process"), process_text, "[total] process")
        self.check_expression(("total", "process"), process, known, "[total] process", sections_allowed=True)
        total = self.expression(("total", "expression"), table.get("expression", f"max({PROCESS})"),
                                "[total] expression")
        self.check_expression(("total", "expression"), total, known, "[total] expression", sections_allowed=True,
                              process_allowed=True)
        if per_process(total.node, spec.varies):
            raise self.fail(("total", "expression"), f"[total] expression {total.text!r} still has one value per "
                            "process; aggregate over processes with max(...) for concurrent work, sum(...) for "
                            "sequential work, or mean(...)", item=total.text)
        return process, total

    def validation(self, metric: str) -> Validation | None:
        if "validation" not in self.data:
            return None
        table = self.table("validation")
        self.check_keys(("validation",), table, _KEYS["validation"])
        callpath = table.get("callpath")
        if not isinstance(callpath, str) or not callpath.strip():
            raise self.fail(("validation",), "[validation] needs callpath = \"...\": the call path whose inclusive "
                            "value is a measured run's total (e.g. \"main\")")
        measured_metric = table.get("metric", metric)
        if not isinstance(measured_metric, str) or not measured_metric:
            raise self.fail(("validation", "metric"), f"metric must be a metric name, got {measured_metric!r}")
        aggregate = self.choice(("validation", "aggregate"), table.get("aggregate", "max"), AGGREGATES)
        return Validation(callpath.strip(), measured_metric, aggregate)
