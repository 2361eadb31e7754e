"""The errors pmkit raises on purpose: bad input or output (exit code 1), bad usage (exit code 2), and
a plugin that failed when called (exit code 3, naming the plugin and its package).

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


class PluginError(PmkitError):
    """A reader, modeler, prior or detector raised, or returned the wrong thing, when pmkit called it.

    ``plugin`` names the object and the package that provided it (``detector 'x' of plugin
    pmkit-x 1.0``); the message is one line.  A bug in that plugin, not in the user's data.
    """

    def __init__(self, plugin: str, problem: str, *, path: str | PathLike | None = None) -> None:
        self.plugin = plugin
        self.problem = problem
        self.path = None if path is None else str(path)
        on = f" on {self.path}" if self.path else ""
        super().__init__(f"{plugin} failed{on}: {problem}")
