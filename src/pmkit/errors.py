"""The errors pmkit raises on purpose: bad input or output (exit code 1), bad usage (exit code 2), and
a plugin that failed when called (exit code 3, naming the plugin and its package).

Anything else escaping to the CLI is a bug in pmkit or a plugin, not in the user's data.  An
error quotes what it found in a file through :func:`excerpt`, so a message stays one short line
whatever the file holds (an 8-million-character token once took rich 13 s to wrap).
"""

from __future__ import annotations

import errno
import os
import stat
from os import PathLike

EXCERPT_CHARS = 60
"""How much of an offending token an error message quotes."""

MEMBER_CHARS = 120
"""Longest member path (a JSON path, an archive member) an :class:`InputError` shows; longer ones are cut."""

PROBLEM_CHARS = 1000
"""Longest problem text an :class:`InputError` keeps; anything longer is cut (a last resort)."""


def excerpt(value: object, limit: int = EXCERPT_CHARS, *, quote: bool = True) -> str:
    """``repr(value)`` when it is short; cut, with the full length, when it is long.  Without
    ``quote``, text appears as itself (cut the same way).

    Quoted, control characters come out escaped (``'\\x1b[31m'``), so a quoted token never reaches
    the terminal as an escape sequence.
    """
    if not isinstance(value, str):
        shown = repr(value)
        return shown if len(shown) <= limit else f"{shown[:limit]}… ({len(shown):,} characters)"
    form = repr if quote else str
    if len(value) <= limit:
        return form(value)
    return f"{form(value[:limit])}… ({len(value):,} characters)"


def path_text(path: str | PathLike) -> str:
    """``path`` as text any output can hold: the bytes of a name that are not UTF-8 (which Python keeps
    as lone surrogates, ``\\udcff``) written ``\\xff``, as in ``bad\\xffname.txt``.

    A source named so reaches JSON (orjson refuses lone surrogates: ``pmkit show --json`` failed with an
    internal error), Arrow and the terminal; every name pmkit gives a file in its output passes here.
    """
    text = os.fspath(path)
    if isinstance(text, bytes):
        return text.decode("utf-8", "backslashreplace")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text


class PmkitError(Exception):
    """Base class of every error pmkit raises deliberately."""

    def __reduce__(self) -> tuple:
        """Pickled with its message and attributes exactly, so that an error raised in a worker process or
        a Dask task comes back as it was raised (the subclasses' ``__init__`` take other arguments)."""
        return _restore, (type(self), self.args, self.__dict__)


class InputError(PmkitError):
    """A file, or something in it, that pmkit cannot use; says which file, where and why."""

    def __init__(self, path: str | PathLike | None, problem: str, *, line: int | None = None,
                 member: str | None = None) -> None:
        self.path = None if path is None else path_text(path)
        problem = problem.replace("\r\n", "\n").replace("\r", "\n").replace("\n", " / ")
        if len(problem) > PROBLEM_CHARS:
            problem = problem[:PROBLEM_CHARS] + "… (message cut)"
        self.problem = problem
        self.line = line
        self.member = None if member is None else excerpt(path_text(member), MEMBER_CHARS, quote=False)
        where = self.path or "<input>"
        if self.member:
            where += f" [{self.member}]"
        if line is not None:
            where += f", line {line}"
        super().__init__(f"{where}: {problem}")

    def about(self, path: str | PathLike) -> str:
        """The message for a line that names ``path`` already (``skipped app.p8.r1.csv: …``): without the file's
        name when it is ``path`` (``line 3: …``), whole when the error is about another file."""
        if self.path != path_text(path):
            return str(self)
        where = f"[{self.member}]" if self.member else ""
        if self.line is not None:
            where += f"{', ' if where else ''}line {self.line}"
        return f"{where}: {self.problem}" if where else self.problem

    @classmethod
    def from_os_error(cls, path: str | PathLike, exc: OSError) -> InputError:
        """The error for a file the operating system will not open or read, in plain words."""
        return cls(path, os_problem(exc))


def input_problem(path: str | PathLike) -> str | None:
    """Why ``path`` cannot be read at all — missing, a symbolic link loop, permission denied — or
    None if it can be.  Checked before readers look at an input, so that a file no reader could open
    is not reported as one no reader recognises."""
    try:
        info = os.stat(path)
    except OSError as exc:
        return os_problem(exc)
    wanted = os.R_OK | os.X_OK if stat.S_ISDIR(info.st_mode) else os.R_OK
    if not os.access(path, wanted):
        return "permission denied (the file or a folder above it cannot be read)"
    return None


def os_problem(exc: OSError) -> str:
    """What an OSError means for a user: missing, permission denied, a symbolic link loop, ..."""
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, PermissionError):
        return "permission denied (the file or a folder above it cannot be read)"
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a file"
    if exc.errno == errno.ELOOP:
        return "is a symbolic link loop (the links point at each other and never reach a file)"
    if exc.errno == errno.ENAMETOOLONG:
        return "the file name is too long"
    return f"cannot be read: {exc.strerror or exc}"


class UsageError(PmkitError):
    """A request that cannot be carried out as asked: unknown plugin, bad option, wrong metric."""


class OutputError(PmkitError):
    """A file pmkit was asked to write and could not (full disk, no such folder, no permission)."""

    def __init__(self, path: str | PathLike, problem: str) -> None:
        self.path = path_text(path)
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
        self.path = None if path is None else path_text(path)
        on = f" on {self.path}" if self.path else ""
        super().__init__(f"{plugin} failed{on}: {problem}")


class ExecutorError(PmkitError):
    """The engine running pmkit's tasks failed: a Dask scheduler that cannot be reached, workers that
    died on a task more often than the engine retries it, a process pool that broke (exit code 1)."""


def _restore(cls: type, args: tuple, state: dict) -> PmkitError:
    """An error as it was pickled: its message and attributes exactly (``__init__`` would cut them again)."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error
