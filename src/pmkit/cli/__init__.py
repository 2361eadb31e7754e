"""The ``pmkit`` command: parse arguments, call the SDK, render.  No modeling happens here.

Each command lives in its own module of this package with ``add_parser(subparsers)`` and the
function it runs; :data:`COMMANDS` lists them in the order ``pmkit --help`` shows.  What they share
(input arguments, consoles, output, loading inputs) is in :mod:`pmkit.cli.common`.

Exit codes: 0 success, 1 bad input or output (a file pmkit cannot read or write, an executor that
cannot be reached or fails), 2 usage (unknown option, plugin or metric), 3 a plugin failed (named
with its package) or an internal error (a bug in pmkit or a plugin; ``PMKIT_DEBUG=1`` shows the
traceback), 130 interrupted (Ctrl-C).
Heavy modules (numba, scipy, pycubexr) are imported only by the commands that need them, so
``pmkit --help`` starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from pmkit.cli.common import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    STDOUT,
    Parser,
    plugin_warnings,
    say,
    stderr,
)

COMMANDS: tuple[str, ...] = ("model", "show", "compare", "predict", "calibrate", "plugins", "taint_filter")
"""Modules of :mod:`pmkit.cli` that each add one subcommand."""


def _version() -> str:
    from pmkit.distribution import version

    return version()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = Parser(prog="pmkit", description="Empirical performance modeling of parallel programs.")
    parser.add_argument("--version", action="version", version=f"pmkit {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f"pmkit.cli.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pmkit`` console script; returns the exit code.

    Ctrl-C at any moment — while reading, rendering or printing a message — ends with one line,
    ``interrupted``, on stderr and exit code 130, and leaves no partial ``--out`` file.
    """
    try:
        return _run(argv)
    except KeyboardInterrupt:
        _interrupted()
        return EXIT_INTERRUPTED


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return EXIT_USAGE
    from pmkit.errors import ExecutorError, InputError, OutputError, PluginError, UsageError

    try:
        with plugin_warnings():
            return run(args)
    except PluginError as exc:
        if os.environ.get("PMKIT_DEBUG"):
            raise
        say(stderr(), "error", "red", f"{exc} (a bug in that plugin, not in your data; PMKIT_DEBUG=1 shows the "
                                       "traceback)")
        return EXIT_INTERNAL
    except InputError as exc:
        say(stderr(), "error", "red", exc)
        return EXIT_INPUT
    except OutputError as exc:
        if exc.path == STDOUT:
            _silence_stdout()
        say(stderr(), "error", "red", exc)
        return EXIT_INPUT
    except ExecutorError as exc:
        say(stderr(), "error", "red", exc)
        return EXIT_INPUT
    except UsageError as exc:
        say(stderr(), "error", "red", exc)
        return EXIT_USAGE
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except Exception as exc:
        if os.environ.get("PMKIT_DEBUG"):
            raise
        from pmkit.plugins import blame

        culprit = blame(exc)
        if culprit:
            say(stderr(), "internal error", "red", f"{culprit} raised {type(exc).__name__}: {exc} (a bug in that "
                                                   "plugin, not in your data; PMKIT_DEBUG=1 shows the traceback)")
        else:
            say(stderr(), "internal error", "red", f"{type(exc).__name__}: {exc}\nThis is a bug in pmkit or in a "
                "plugin, not in your data; please report it with the traceback that PMKIT_DEBUG=1 shows.")
        return EXIT_INTERNAL


def _interrupted() -> None:
    """Say ``interrupted`` on stderr; a second Ctrl-C (or a closed stderr) just ends it."""
    with contextlib.suppress(KeyboardInterrupt, OSError):
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's final flush of a broken or full stdout does not
    fail again on exit."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
