"""Perf-Taint output written from a small description of what a tainted run saw, raw and processed.

A :class:`TaintProgram` lists the registered parameters and the program's functions in the order
of Perf-Taint's name tables.  A function's :class:`Behaviour` s are the distinct ways its loops ran
(one ``loops`` entry each in Perf-Taint's raw file): a body of :class:`Loop` s (the parameters in
the exit condition, nested loops and calls, parameters in branch conditions) and :class:`Call` s
(to loop entry ``entry`` of another function), with the call stacks it was reached through.  A
function without behaviours is in the name tables only (Perf-Taint pruned it); ``unimportant``
lists it among the instrumented functions no parameter reached.  MPI routines are functions named
``MPI_*`` without a source file, whose loop depends on the implicit parameter ``p``.

:meth:`TaintProgram.raw` gives the runtime file (``instance`` trees of loops and call references,
``callstacks`` of function indices) and :meth:`TaintProgram.processed` what Perf-Taint's converter
makes of it for Extra-P (``callstack``, ``data`` dependency trees, ``deps``): callees' trees are
inlined, behaviours merged into one entry, callers without loops of their own dropped from the
call stacks below the outermost one, and the list of unimportant functions left out, as the
converter does.  Tests use it to write Perf-Taint files in a temporary folder::

    program = TaintProgram(("n",), [
        SourceFunction("main", behaviours=[Behaviour((Call("solve"),), (None,))]),
        SourceFunction("solve", "solve(int)", behaviours=[Behaviour((Loop(("n",), (Loop(("n",)),)),))]),
        SourceFunction("atoi")])
    program.write(tmp_path / "app_0.json")          # pmkit show study --prior app_0.json
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union


@dataclass(frozen=True)
class Call:
    """A call of ``callee`` (mangled name) that ran its loop entry ``entry``."""

    callee: str
    entry: int = 0


@dataclass(frozen=True)
class Loop:
    """A loop whose exit condition holds ``params``, with nested loops and calls in ``body``.

    ``branches`` are parameters in branch conditions inside the loop (they change which code runs,
    not how often the loop runs).
    """

    params: tuple[str, ...] = ()
    body: tuple[Statement, ...] = ()
    branches: tuple[str, ...] = ()


Statement = Union[Loop, Call]  # noqa: UP007 (a runtime alias, used in the dataclass above)


@dataclass(frozen=True)
class Behaviour:
    """One distinct behaviour of a function's loops: its ``body`` and the call stacks that reached it.

    A call stack lists the callers from the outermost down (mangled names); None in ``callstacks``
    means called from the root.  Left empty, the behaviour was reached from ``main``.
    """

    body: tuple[Statement, ...]
    callstacks: tuple[tuple[str, ...] | None, ...] = ()


@dataclass
class SourceFunction:
    """A function of the program as Perf-Taint's name tables list it, with what its run showed."""

    mangled: str
    demangled: str | None = None
    name: str | None = None
    file: str | None = "app.cpp"
    line: int | None = 1
    behaviours: Sequence[Behaviour] = ()
    unimportant: bool = False

    @property
    def is_mpi(self) -> bool:
        """An MPI routine (``MPI_*``, ``PMPI_*``), which Perf-Taint's database describes."""
        return self.mangled.startswith(("MPI_", "PMPI_"))


def mpi(name: str) -> SourceFunction:
    """An MPI routine from Perf-Taint's library database: no source location; its cost depends on ``p``."""
    return SourceFunction(name, file=None, line=None)


@dataclass
class TaintProgram:
    """One program's Perf-Taint result: parameters (used and unused) and functions in table order."""

    parameters: Sequence[str]
    functions: Sequence[SourceFunction]
    unused_parameters: Sequence[str] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index = {f.mangled: i for i, f in enumerate(self.functions)}
        self._by_name = {f.mangled: f for f in self.functions}
        for function in self.functions:
            for behaviour in function.behaviours:
                for call in _calls(behaviour.body):
                    callee = self._by_name.get(call.callee)
                    if callee is None:
                        raise ValueError(f"{function.mangled} calls {call.callee}, not a function of the program")
                    if self._behaviours(callee) <= call.entry:
                        raise ValueError(f"{function.mangled} calls entry {call.entry} of {call.callee}, which has "
                                         f"{self._behaviours(callee)}")

    def _behaviours(self, function: SourceFunction) -> int:
        return len(function.behaviours) or (1 if function.is_mpi else 0)

    def _behaviour_list(self, function: SourceFunction) -> list[Behaviour]:
        """Behaviours, an MPI routine given none having the one Perf-Taint's database gives it."""
        if function.behaviours or not function.is_mpi:
            return list(function.behaviours)
        return [Behaviour((Loop(("p",)),), self._callers_of(function.mangled))]

    def _callers_of(self, callee: str) -> tuple[tuple[str, ...], ...]:
        """Call stacks of an MPI routine given no behaviour: each caller's own stacks plus the caller."""
        stacks: list[tuple[str, ...]] = []
        for function in self.functions:
            for behaviour in function.behaviours:
                if any(c.callee == callee for c in _calls(behaviour.body)):
                    for stack in self._stacks(function, behaviour):
                        full = (*(stack or ()), function.mangled)
                        if full not in stacks:
                            stacks.append(full)
        return tuple(stacks)

    def _stacks(self, function: SourceFunction, behaviour: Behaviour) -> tuple[tuple[str, ...] | None, ...]:
        if behaviour.callstacks:
            return behaviour.callstacks
        return (None,) if function.mangled == "main" else (("main",),)

    def _indices(self, stack: tuple[str, ...] | None) -> list[int] | None:
        return None if stack is None else [self._index[name] for name in stack]

    def _tables(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "functions_demangled_names": [f.demangled or f.mangled for f in self.functions],
            "functions_mangled_names": [f.mangled for f in self.functions],
            "functions_names": [f.name or f.demangled or f.mangled for f in self.functions],
            "parameters": list(self.parameters),
        }
        if self.unused_parameters:
            out["unused_parameters"] = list(self.unused_parameters)
        return out

    def raw(self) -> dict[str, Any]:
        """The runtime file Perf-Taint writes per MPI rank."""
        functions: dict[str, Any] = {}
        for function in self.functions:
            behaviours = self._behaviour_list(function)
            if not behaviours:
                continue
            entry = self._location(function, raw=True)
            entry["loops"] = [{"callstacks": [self._indices(s) for s in self._stacks(function, b)],
                               "instance": self._raw_body(b.body, 0)} for b in behaviours]
            functions[function.mangled] = entry
        out = {"functions": functions, **self._tables()}
        unimportant = {f.mangled: self._location(f, raw=True) for f in self.functions if f.unimportant}
        if unimportant:
            out["unimportant_functions"] = unimportant
        return {**out, **self.extra}

    def _location(self, function: SourceFunction, raw: bool) -> dict[str, Any]:
        if raw and function.file is None:
            return {"func_idx": self._index[function.mangled]}
        return {"file": function.file, "func_idx": self._index[function.mangled], "line": function.line}

    def _raw_body(self, body: Sequence[Statement], level: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, statement in enumerate(body):
            if isinstance(statement, Call):
                out[str(k)] = [{"entry_id": statement.entry, "function_idx": self._index[statement.callee]}]
                continue
            loop: dict[str, Any] = {"level": level}
            if statement.branches:
                loop["branches"] = {"0": list(statement.branches)}
            if statement.body:
                loop["loops"] = self._raw_body(statement.body, level + 1)
            loop["params"] = [list(statement.params)] if statement.params else []
            out[str(k)] = loop
        return out

    def processed(self, *, deps: bool = True) -> dict[str, Any]:
        """What Perf-Taint's converter writes for Extra-P (``deps=False`` leaves out ``deps``)."""
        important = {f.mangled for f in self.functions if self._behaviour_list(f)}
        functions: dict[str, Any] = {}
        for function in self.functions:
            behaviours = self._behaviour_list(function)
            if not behaviours:
                continue
            stacks: list[list[int] | None] = []
            for behaviour in behaviours:
                for stack in self._stacks(function, behaviour):
                    kept = None if stack is None else self._indices(
                        tuple(n for k, n in enumerate(stack) if k == 0 or n in important))
                    if kept not in stacks:
                        stacks.append(kept)
            data = [self._tree(b.body) for b in behaviours]
            loop: dict[str, Any] = {"callstack": stacks, "data": data}
            if deps:
                groups = set().union(*(self._groups(b.body) for b in behaviours))
                loop["deps"] = [self._ordered(g) for g in sorted(groups, key=lambda g: (len(g), sorted(g)))]
            loop["not_found_params"] = None
            functions[function.mangled] = {**self._location(function, raw=False), "loops": [loop]}
        return {"functions": functions, **self._tables(), **self.extra}

    def _ordered(self, group: frozenset[str]) -> list[str]:
        order = list(self.parameters) + list(self.unused_parameters)
        return sorted(group, key=lambda p: (order.index(p) if p in order else len(order), p))

    def _entry_body(self, call: Call, active: frozenset[Call]) -> tuple[Statement, ...]:
        """The body a call runs; empty for a recursive call (counted once, as the converter does)."""
        if call in active:
            return ()
        return self._behaviour_list(self._by_name[call.callee])[call.entry].body

    def _tree(self, body: Sequence[Statement], active: frozenset[Call] = frozenset()) -> dict[str, Any]:
        operands = []
        for statement in body:
            if isinstance(statement, Call):  # a list of calls, each the called entry's tree
                operands.append({"dependency": "additive", "operands": [
                    self._tree(self._entry_body(statement, active), active | {statement})]})
            elif not statement.params:
                operands.append(self._tree(statement.body, active))
            elif statement.body:
                operands.append({"dependency": "multiplicative", "operands": [
                    {"dependency": "unknown", "operands": self._ordered(frozenset(statement.params))},
                    self._tree(statement.body, active)]})
            else:
                operands.append({"dependency": "unknown", "operands": self._ordered(frozenset(statement.params))})
        return {"dependency": "additive", "operands": operands}

    def _groups(self, body: Sequence[Statement], active: frozenset[Call] = frozenset()) -> set[frozenset[str]]:
        """The additive terms of ``body``: a loop's parameters times each term of what it contains."""
        out: set[frozenset[str]] = set()
        for statement in body:
            if isinstance(statement, Call):
                out |= self._groups(self._entry_body(statement, active), active | {statement})
                continue
            inner = self._groups(statement.body, active)
            params = frozenset(statement.params)
            if not params:
                out |= inner
            else:
                out |= {params | g for g in inner} if inner else {params}
        return out

    def write(self, path: str | Path, flavour: str = "raw") -> Path:
        """Write the ``raw`` or ``processed`` file."""
        if flavour not in ("raw", "processed"):
            raise ValueError(f"flavour must be 'raw' or 'processed', not {flavour!r}")
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.raw() if flavour == "raw" else self.processed(), indent=4, sort_keys=True))
        return path


def _calls(body: Sequence[Statement]) -> list[Call]:
    out: list[Call] = []
    for statement in body:
        if isinstance(statement, Call):
            out.append(statement)
        else:
            out += _calls(statement.body)
    return out
