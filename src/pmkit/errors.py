"""The errors pmkit raises on purpose: bad input or output (exit code 1) and bad usage (exit code 2).

Anything else escaping to the CLI is a bug in pmkit or a plugin, not in the user's data.
"""

from __future__ import annotations

from os import PathLike


class PmkitError(Exception):
    """Base class of every error pmkit raises deliberately."""


class InputError(PmkitError):
    """A file, or something in it, that pmkit cannot use; says which file, where and why."""

    def __init__(self, path: str | PathLike | None, problem: str, *, line: int | None = None,
                 member: str | None = None) -> None:
        self.path = None if path is None else str(path)
        self.problem = problem
        self.line = line
        self.member = member
        where = self.path or "<input>"
        if member:
            where += f" [{member}]"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {problem}")


class UsageError(PmkitError):
    """A request that cannot be carried out as asked: unknown plugin, bad option, wrong metric."""


class OutputError(PmkitError):
    """A file pmkit was asked to write and could not (full disk, no such folder, no permission)."""

    def __init__(self, path: str | PathLike, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"cannot write {self.path}: {problem}")
