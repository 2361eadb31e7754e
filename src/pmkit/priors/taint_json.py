"""Perf-Taint's JSON output, raw and processed, read into one :class:`TaintAnalysis`.

Perf-Taint (Copik et al., PPoPP'21, ``papers/002_…``) writes, per MPI rank, a *raw* runtime file:
``functions`` keyed by mangled name, each with ``loops`` entries (one per distinct behaviour) holding
``callstacks`` (function indices of the callers) and an ``instance`` tree of loop objects
(``params`` = the parameters in a loop's exit condition, ``loops`` = nested loops) or lists of
call references (``function_idx``/``entry_id``: loop entry ``entry_id`` of the called function).
Its converter turns that into the *processed* file Extra-P reads: ``loops[].callstack``, ``data``
dependency trees (``additive``/``multiplicative``/``unknown``) and ``deps``, the parameter sets of
the additive terms (parameters within a set may multiply).  Both list ``parameters``,
``unused_parameters`` and the ``functions_{mangled,demangled,}names`` tables; raw files also list
``unimportant_functions`` (instrumented, but no registered parameter reached their loops at run
time).  MPI functions come from Perf-Taint's library database, without a source location, and
depend on the implicit parameter ``p`` (the size of ``MPI_COMM_WORLD``).

Dependencies here are *inclusive*: a function's sets include those of the functions it calls, as
Perf-Taint's converter computes them, plus (raw files, whose call stacks are complete) those of
every parametric function it appears above in a call stack.  That is a superset of what its
exclusive time can depend on, so a constraint derived from it never forbids a real dependence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pmkit.errors import InputError, excerpt, input_problem
from pmkit.readers.limits import MIB, Limits
from pmkit.readers.parsing import load_json, read_text

Monomial = frozenset[str]
"""Parameters that may multiply in one additive term."""

PARAMETRIC = "parametric"
CONSTANT = "constant"
PRUNED = "pruned"
UNIMPORTANT = "unimportant"

STATUS_TEXT = {
    PARAMETRIC: "a registered parameter reaches its loops or the functions it calls",
    CONSTANT: "Perf-Taint ran its loops and no registered parameter reached them",
    PRUNED: "Perf-Taint found no loop whose trip count a registered parameter can change",
    UNIMPORTANT: ("Perf-Taint instrumented its loops but saw no registered parameter reach them during "
                  "the taint run: driven by unregistered inputs, or never executed in that run"),
}
"""Why a function has the status it has, for notes and reports."""

_RANK_FILE = re.compile(r"^(?P<prefix>.*)_(?P<rank>\d+)$")


@dataclass
class TaintFunction:
    """What Perf-Taint says about one function, keyed by its mangled name.

    ``groups`` are the inclusive dependency sets (additive terms; parameters within a set may
    multiply); ``own_groups`` only those of the function's own loops and MPI calls (what Perf-Taint
    calls an important function; equal to ``groups`` for processed files, which no longer tell them
    apart).  ``callers`` are the mangled names seen above it in call stacks.
    """

    mangled: str
    demangled: str
    name: str
    status: str
    file: str | None = None
    line: int | None = None
    groups: set[Monomial] = field(default_factory=set)
    own_groups: set[Monomial] = field(default_factory=set)
    callers: set[str] = field(default_factory=set)
    branch_parameters: set[str] = field(default_factory=set)

    @property
    def parameters(self) -> frozenset[str]:
        """Every parameter that may reach the function (the union of its groups)."""
        return frozenset().union(*self.groups) if self.groups else frozenset()

    @property
    def is_mpi(self) -> bool:
        return self.mangled.startswith(("MPI_", "PMPI_"))


@dataclass
class TaintAnalysis:
    """One program's Perf-Taint result, merged over the files (MPI ranks) it came from.

    ``callers_complete`` is False when a processed file was among them: Perf-Taint's converter drops
    non-important callers from call stacks, so a caller's inclusive dependencies may be missing.
    """

    parameters: tuple[str, ...]
    unused_parameters: tuple[str, ...]
    functions: dict[str, TaintFunction]
    sources: tuple[str, ...]
    flavours: frozenset[str]
    notes: list[str] = field(default_factory=list)

    @property
    def callers_complete(self) -> bool:
        return "processed" not in self.flavours

    @property
    def known_parameters(self) -> tuple[str, ...]:
        """Registered parameters, used or not (the implicit ``p`` among them for MPI programs)."""
        return self.parameters + tuple(p for p in self.unused_parameters if p not in self.parameters)

    def with_status(self, *statuses: str) -> list[TaintFunction]:
        return [f for f in self.functions.values() if f.status in statuses]


def taint_files(paths: str | Path | Iterable[str | Path]) -> list[Path]:
    """The files to read: each file given, and from a folder its ``*.json`` files.

    A folder may hold one program's per-rank files (``name_0.json``, ``name_1.json``, ...); files of
    several programs in one folder are an InputError, since merging them would mix programs.
    """
    items = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not items:
        raise InputError(None, "no Perf-Taint file given")
    files: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.is_file())
            if not found:
                raise InputError(path, "the folder holds no Perf-Taint .json files")
            prefixes = sorted({_program_of(p) for p in found})
            if len(prefixes) > 1:
                raise InputError(path, f"the folder holds Perf-Taint output of several programs "
                                 f"({', '.join(prefixes)}); pass one program's files")
            files.extend(found)
        else:
            problem = input_problem(path)
            if problem:
                raise InputError(path, problem)
            files.append(path)  # a file, or a stream read within limits
    return files


def _program_of(path: Path) -> str:
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.stem
    match = _RANK_FILE.match(stem)
    return match.group("prefix") if match else stem


def read_taint(paths: str | Path | Iterable[str | Path]) -> TaintAnalysis:
    """Read Perf-Taint output (one file, several rank files, or a folder of them) and merge it."""
    analyses = [read_taint_file(p) for p in taint_files(paths)]
    return merge(analyses)


MAX_TAINT_MB = 256
"""Largest Perf-Taint file read (MiB): they are kilobytes to a few megabytes."""


def read_taint_file(path: str | Path) -> TaintAnalysis:
    """Read one raw or processed Perf-Taint JSON file; InputError names the file and member."""
    path = Path(path)
    text = read_text(path, Limits(input_bytes=MAX_TAINT_MB * MIB))
    data = load_json(text, path)
    try:
        return parse_taint(data, str(path))
    except RecursionError:
        raise InputError(path, "is not usable Perf-Taint output: it is nested too deeply") from None


def parse_taint(data: Any, source: str) -> TaintAnalysis:
    """Parse the decoded JSON of one Perf-Taint file (``source`` names it in errors)."""
    if not isinstance(data, dict):
        raise InputError(source, f"expected a JSON object at the top level, found {_kind(data)}")
    if "statistics" in data and "functions_mangled_names" not in data:
        raise InputError(source, "this is the statistics file of Perf-Taint's static pass, not its "
                         "runtime output (the .json written when the tainted program runs)")
    if "functions_mangled_names" not in data:
        raise InputError(source, "not Perf-Taint output: there is no 'functions_mangled_names' table",
                         member="functions_mangled_names")
    if not any(key in data for key in ("functions", "unimportant_functions", "parameters", "unused_parameters")):
        raise InputError(source, "holds no analysis: no 'functions', 'unimportant_functions' or parameter lists, "
                         "only function names, so it says nothing about what the parameters reach (an incomplete "
                         "file, or a taint run with no registered parameter)", member="functions")
    mangled = _names(data, "functions_mangled_names", source)
    demangled = _names(data, "functions_demangled_names", source, default=mangled)
    short = _names(data, "functions_names", source, default=demangled)
    if not (len(mangled) == len(demangled) == len(short)):
        raise InputError(source, f"the function name tables differ in length ({len(mangled)} mangled, "
                         f"{len(demangled)} demangled, {len(short)} names)", member="functions_names")
    parameters = tuple(_names(data, "parameters", source, default=[]))
    unused = tuple(_names(data, "unused_parameters", source, default=[]))
    functions_raw = data.get("functions") or {}
    processed_empty = "functions" in data and data["functions"] is None
    if not isinstance(functions_raw, dict):
        raise InputError(source, f"'functions' must be an object, found {_kind(functions_raw)}",
                         member="functions")
    flavour = "processed" if processed_empty else _flavour(functions_raw, source)
    parser = _RawParser(functions_raw, mangled, source) if flavour == "raw" else None

    functions: dict[str, TaintFunction] = {}
    for index, name in enumerate(mangled):
        functions[name] = TaintFunction(name, demangled[index], short[index], PRUNED)
    for name, entry in _mapping(data.get("unimportant_functions") or {}, source, "unimportant_functions").items():
        fn = functions.setdefault(name, TaintFunction(name, name, name, UNIMPORTANT))
        fn.status = UNIMPORTANT
        _locate(fn, entry)

    notes: list[str] = []
    propagate: list[tuple[set[Monomial], list[list[int]]]] = []
    for name, entry in functions_raw.items():
        member = f"functions.{_short(name)}"
        entry = _mapping(entry, source, member)
        fn = functions.setdefault(name, TaintFunction(name, name, name, CONSTANT))
        _locate(fn, entry)
        loops = entry.get("loops") or []
        if not isinstance(loops, list):
            raise InputError(source, f"'loops' must be a list, found {_kind(loops)}", member=f"{member}.loops")
        for k, loop in enumerate(loops):
            where = f"{member}.loops[{k}]"
            loop = _mapping(loop, source, where)
            if parser is not None:
                groups, own, branches = parser.entry(name, k)
                stacks = _callstacks(loop.get("callstacks"), len(mangled), source, f"{where}.callstacks", notes)
            else:
                groups = _processed_groups(loop, source, where)
                own, branches = groups, set()
                stacks = _callstacks(loop.get("callstack"), len(mangled), source, f"{where}.callstack", notes)
            fn.groups |= groups
            fn.own_groups |= own
            fn.branch_parameters |= branches
            for stack in stacks:
                fn.callers.update(mangled[i] for i in stack if mangled[i] != name)
            if groups:
                propagate.append((groups, stacks))
        fn.status = PARAMETRIC if fn.groups else CONSTANT

    for groups, stacks in propagate:
        for stack in stacks:
            for i in stack:
                caller = functions[mangled[i]]
                caller.groups |= groups
                caller.status = PARAMETRIC
    if parser is not None and parser.recursive:
        notes.append(f"{source}: recursive calls through {', '.join(sorted(parser.recursive))} were cut "
                     "(their dependencies are counted once)")
    return TaintAnalysis(parameters, unused, functions, (source,), frozenset({flavour}), notes)


def merge(analyses: Sequence[TaintAnalysis]) -> TaintAnalysis:
    """Merge per-rank analyses of one program: union of dependencies, strongest status wins."""
    if len(analyses) == 1:
        return analyses[0]
    rank = {PARAMETRIC: 3, CONSTANT: 2, PRUNED: 1, UNIMPORTANT: 0}
    parameters: list[str] = []
    unused: list[str] = []
    functions: dict[str, TaintFunction] = {}
    for analysis in analyses:
        parameters += [p for p in analysis.parameters if p not in parameters]
        unused += [p for p in analysis.unused_parameters if p not in unused]
        for name, fn in analysis.functions.items():
            have = functions.get(name)
            if have is None:
                functions[name] = TaintFunction(fn.mangled, fn.demangled, fn.name, fn.status, fn.file, fn.line,
                                                set(fn.groups), set(fn.own_groups), set(fn.callers),
                                                set(fn.branch_parameters))
                continue
            have.groups |= fn.groups
            have.own_groups |= fn.own_groups
            have.callers |= fn.callers
            have.branch_parameters |= fn.branch_parameters
            if rank[fn.status] > rank[have.status]:
                have.status = fn.status
            have.file = have.file or fn.file
            have.line = have.line if have.line is not None else fn.line
    unused = [p for p in unused if p not in parameters]
    return TaintAnalysis(tuple(parameters), tuple(unused), functions,
                         tuple(s for a in analyses for s in a.sources),
                         frozenset().union(*(a.flavours for a in analyses)),
                         [n for a in analyses for n in a.notes])


def tree_groups(node: Any, source: str = "", member: str = "data") -> set[Monomial]:
    """The additive terms of a processed ``data`` tree, as Perf-Taint's converter derives ``deps``.

    ``unknown`` is one term of all its operands (the conservative multiplicative reading of a loop
    exit condition with several parameters); ``additive`` unites its operands' terms;
    ``multiplicative`` forms every product of its operands' terms, skipping empty operands.
    """
    if node is None:
        return set()
    if isinstance(node, list):
        out: set[Monomial] = set()
        for k, item in enumerate(node):
            out |= tree_groups(item, source, f"{member}[{k}]")
        return out
    if not isinstance(node, dict):
        raise InputError(source, f"expected a dependency object, found {_kind(node)}", member=member)
    kind = node.get("dependency")
    operands = node.get("operands") or []
    if not isinstance(operands, list):
        raise InputError(source, f"'operands' must be a list, found {_kind(operands)}", member=f"{member}.operands")
    if kind == "unknown":
        params = _flatten_params(operands, source, f"{member}.operands")
        return {params} if params else set()
    if kind == "additive":
        return tree_groups(operands, source, f"{member}.operands")
    if kind == "multiplicative":
        result: set[Monomial] = set()
        for k, operand in enumerate(operands):
            terms = tree_groups(operand, source, f"{member}.operands[{k}]")
            if not terms:
                continue
            result = terms if not result else {a | b for a in result for b in terms}
        return result
    raise InputError(source, f"unknown dependency kind {excerpt(kind)} (expected additive, multiplicative or unknown)",
                     member=f"{member}.dependency")


class _RawParser:
    """Resolves raw loop instances, following call references into the called functions' entries."""

    def __init__(self, functions: Mapping[str, Any], mangled: Sequence[str], source: str) -> None:
        self.functions = functions
        self.mangled = mangled
        self.source = source
        self.memo: dict[tuple[str, int], tuple[set[Monomial], set[Monomial], set[str]]] = {}
        self.active: set[tuple[str, int]] = set()
        self.recursive: set[str] = set()

    def entry(self, function: str, index: int) -> tuple[set[Monomial], set[Monomial], set[str]]:
        """(inclusive groups, own groups, branch parameters) of loop entry ``index`` of ``function``."""
        key = (function, index)
        if key in self.memo:
            return self.memo[key]
        if key in self.active:
            self.recursive.add(function)
            return set(), set(), set()
        member = f"functions.{_short(function)}.loops[{index}]"
        entry = self.functions.get(function)
        loops = entry.get("loops") if isinstance(entry, dict) else None
        if not isinstance(loops, list) or not 0 <= index < len(loops):
            raise InputError(self.source, f"a call refers to loop entry {index} of {_short(function)}, which does "
                             "not exist", member=member)
        loop = _mapping(loops[index], self.source, member)
        instance = loop.get("instance") or {}
        self.active.add(key)
        try:
            result = self._loop_set(instance, f"{member}.instance")
        finally:
            self.active.discard(key)
        self.memo[key] = result
        return result

    def _loop_set(self, loops: Any, member: str) -> tuple[set[Monomial], set[Monomial], set[str]]:
        loops = _mapping(loops, self.source, member)
        inclusive: set[Monomial] = set()
        own: set[Monomial] = set()
        branches: set[str] = set()
        for key, loop in loops.items():
            inc, mine, br = self._loop(loop, f"{member}.{key}")
            inclusive |= inc
            own |= mine
            branches |= br
        return inclusive, own, branches

    def _loop(self, loop: Any, member: str) -> tuple[set[Monomial], set[Monomial], set[str]]:
        if isinstance(loop, list):
            return self._calls(loop, member)
        loop = _mapping(loop, self.source, member)
        inc_sub: set[Monomial] = set()
        own_sub: set[Monomial] = set()
        branches: set[str] = set()
        sub = loop.get("loops")
        if sub is not None:
            inc_sub, own_sub, branches = self._loop_set(sub, f"{member}.loops")
        for cond in _mapping(loop.get("branches") or {}, self.source, f"{member}.branches").values():
            branches |= _flatten_params(cond, self.source, f"{member}.branches")
        params = _flatten_params(loop.get("params") or [], self.source, f"{member}.params")
        if not params:
            return inc_sub, own_sub, branches
        inclusive = {params | s for s in inc_sub} if inc_sub else {params}
        own = {params | s for s in own_sub} if own_sub else {params}
        return inclusive, own, branches

    def _calls(self, calls: list[Any], member: str) -> tuple[set[Monomial], set[Monomial], set[str]]:
        inclusive: set[Monomial] = set()
        own: set[Monomial] = set()
        branches: set[str] = set()
        for k, call in enumerate(calls):
            where = f"{member}[{k}]"
            call = _mapping(call, self.source, where)
            if "function_idx" not in call:
                inc, mine, br = self._loop_set(call, where)
            else:
                index = call.get("function_idx")
                entry_id = call.get("entry_id", 0)
                if not isinstance(index, int) or not 0 <= index < len(self.mangled):
                    raise InputError(self.source, f"function_idx {excerpt(index)} is not an index into the "
                                     f"{len(self.mangled)} function names", member=where)
                if not isinstance(entry_id, int):
                    raise InputError(self.source, f"entry_id {excerpt(entry_id)} is not an integer", member=where)
                callee = self.mangled[index]
                inc, _, _ = self.entry(callee, entry_id)
                # A call to an MPI routine is the caller's own communication cost (Perf-Taint
                # counts such a function as important); other callees' cost is theirs.
                mine = inc if callee.startswith(("MPI_", "PMPI_")) else set()
                br = set()
            inclusive |= inc
            own |= mine
            branches |= br
        return inclusive, own, branches


def _processed_groups(loop: Mapping[str, Any], source: str, member: str) -> set[Monomial]:
    deps = loop.get("deps")
    if deps is None:
        return tree_groups(loop.get("data"), source, f"{member}.data")
    if not isinstance(deps, list):
        raise InputError(source, f"'deps' must be a list of parameter lists, found {_kind(deps)}",
                         member=f"{member}.deps")
    out: set[Monomial] = set()
    for k, group in enumerate(deps):
        params = _flatten_params(group, source, f"{member}.deps[{k}]")
        if params:
            out.add(params)
    return out


def _flavour(functions: Mapping[str, Any], source: str) -> str:
    for name, entry in functions.items():
        if not isinstance(entry, dict):
            raise InputError(source, f"expected an object, found {_kind(entry)}", member=f"functions.{_short(name)}")
        loops = entry.get("loops") or []
        if not isinstance(loops, list):
            raise InputError(source, f"'loops' must be a list, found {_kind(loops)}",
                             member=f"functions.{_short(name)}.loops")
        for loop in loops:
            if isinstance(loop, dict) and ("instance" in loop or "callstacks" in loop):
                return "raw"
            if isinstance(loop, dict) and ("deps" in loop or "data" in loop or "callstack" in loop):
                return "processed"
    return "raw"


def _callstacks(value: Any, n_functions: int, source: str, member: str, notes: list[str]) -> list[list[int]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(source, f"expected a list of call stacks, found {_kind(value)}", member=member)
    stacks = []
    for k, stack in enumerate(value):
        if stack is None:  # called from the root (main): no caller above it
            continue
        if not isinstance(stack, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in stack):
            raise InputError(source, f"call stack {excerpt(stack)} is not a list of function indices",
                             member=f"{member}[{k}]")
        bad = [i for i in stack if not 0 <= i < n_functions]
        if bad:
            # Call stacks only widen callers' inclusive dependencies; an index outside the name
            # table (Perf-Taint's experimental duplicate removal writes such) cannot name a caller.
            notes.append(f"{source} [{member}[{k}]]: call stack {excerpt(stack, quote=False)} refers to function "
                         f"{excerpt(', '.join(map(str, bad)), quote=False)} beyond the {n_functions} function names; "
                         "those were ignored")
        stacks.append([i for i in stack if 0 <= i < n_functions])
    return stacks


def _flatten_params(value: Any, source: str, member: str) -> Monomial:
    out: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.add(item)
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict) and item.get("dependency") == "unknown":
            stack.extend(item.get("operands") or [])
        else:
            raise InputError(source, f"expected parameter names, found {_kind(item)}", member=member)
    return frozenset(out)


def _names(data: Mapping[str, Any], key: str, source: str, default: list[str] | None = None) -> list[str]:
    value = data.get(key)
    if value is None:
        if default is None:
            raise InputError(source, f"there is no {key!r} list", member=key)
        return list(default)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(source, f"{key!r} must be a list of strings", member=key)
    return value


def _mapping(value: Any, source: str, member: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(source, f"expected an object, found {_kind(value)}", member=member)
    return value


def _locate(fn: TaintFunction, entry: Any) -> None:
    if isinstance(entry, dict):
        file, line = entry.get("file"), entry.get("line")
        fn.file = fn.file or (file if isinstance(file, str) else None)
        if fn.line is None and isinstance(line, int):
            fn.line = line


def _short(name: str) -> str:
    """A function name as a member path shows it: cut when long."""
    return excerpt(name, quote=False)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")
