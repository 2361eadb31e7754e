"""What every ``pmkit`` command shares: the input arguments, consoles, messages, output and loading.

Heavy modules (numba, scipy, pycubexr) are imported inside the functions that need them, so that
``pmkit --help`` starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import stat
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

STDOUT = "standard output"
"""How messages name stdout when writing to it fails."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit code is 2 as well; keep its text
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_input_arguments(parser: argparse.ArgumentParser, *,
                        metric_help: str = "model only this metric (repeatable; default: all)") -> None:
    """The arguments every command reading inputs shares; ``metric_help`` says what ``--metric`` does there."""
    parser.add_argument("paths", metavar="PATH", nargs="+", type=Path,
                        help="input files or folders (Extra-P text/JSON/JSON Lines/Talpas, Cube study folder, ...)")
    parser.add_argument("--reader", metavar="NAME", help="reader to use (default: the one that recognises the input)")
    parser.add_argument("--reader-option", "-R", metavar="NAME=VALUE", action="append", default=[],
                        help="reader option, repeatable (see `pmkit plugins --options`)")
    parser.add_argument("--modeler", metavar="NAME", default=None, help="modeler to use (default: refining)")
    parser.add_argument("--option", "-O", metavar="NAME=VALUE", action="append", default=[],
                        help="modeler option, repeatable, e.g. -O acceptance=2 (see `pmkit plugins --options`)")
    parser.add_argument("--metric", metavar="NAME", action="append", default=None, help=metric_help)
    parser.add_argument("--measure", choices=("mean", "median", "min", "max"), default="mean",
                        help="how repetitions are reduced (default: mean)")
    parser.add_argument("--values", choices=("exclusive", "inclusive"), default=None,
                        help="Cube: values without callees (exclusive, Extra-P's default) or with them")
    parser.add_argument("--aggregation", choices=("mean", "sum", "max", "min"), default=None,
                        help="Cube: how a run's processes/threads become one value (default: mean, weak scaling; "
                             "sum for strong scaling)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON (schema in the README)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="write the output to FILE instead of stdout")
    parser.add_argument("--prior", metavar="FILE", type=Path,
                        help="prior knowledge restricting the models, e.g. Perf-Taint JSON")
    parser.add_argument("--prior-name", metavar="NAME", help="prior plugin reading FILE (default: taint)")
    parser.add_argument("--prior-map", metavar="A=B", action="append", default=[],
                        help="rename a prior's parameter A to the experiment's B, repeatable")
    parser.add_argument("--prior-option", "-P", metavar="NAME=VALUE", action="append", default=[],
                        help="prior option, repeatable (see `pmkit plugins --options`)")
    parser.add_argument("--full-names", action="store_true",
                        help="show region names whole (a C++ function with namespace, return type and parameters) "
                             "instead of short")
    add_executor_arguments(parser)


def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """``--executor`` and ``--scheduler-timeout``: where the reading and modeling tasks run."""
    parser.add_argument("--executor", metavar="ENGINE", default="local",
                        help="where reading and modeling run: local (this process, the default), processes[:N] (a "
                             "pool of local processes), dask (a Dask LocalCluster started for the run) or "
                             "dask:ADDRESS (a running scheduler, e.g. dask:tcp://host:8786, or dask:FILE.json, its "
                             "scheduler file); the results are the same")
    parser.add_argument("--scheduler-timeout", metavar="SECONDS", type=float, default=None,
                        help="with --executor dask:ADDRESS, how long to wait for the scheduler (default: 5)")


@contextmanager
def open_executor(args: argparse.Namespace) -> Iterator[Any]:
    """The engine ``--executor`` names, open for the block and closed after it; what it started or
    reached (a LocalCluster's workers and dashboard) is one line on stderr."""
    from pmkit.errors import UsageError
    from pmkit.executors import DEFAULT_TIMEOUT
    from pmkit.executors import open_executor as open_engine

    timeout = DEFAULT_TIMEOUT if args.scheduler_timeout is None else args.scheduler_timeout
    if not (timeout > 0 and math.isfinite(timeout)):
        raise UsageError(f"--scheduler-timeout must be a positive number of seconds, got {timeout:g}")
    with open_engine(args.executor, timeout=timeout) as engine:
        if engine.summary:
            say(stderr(), "executor", "cyan", engine.summary)
        yield engine


TARGET_HELP = ("target scale, e.g. p=65536,size=100 (default: 4× the largest measured value of each parameter; "
               "parameters left out keep their largest value)")


def add_view_arguments(parser: argparse.ArgumentParser, target_help: str = TARGET_HELP) -> None:
    """The arguments of commands that analyse towards a target and render it (``show``, ``compare``);
    ``target_help`` says how the command chooses its default target."""
    parser.add_argument("--at", metavar="P=V,...", help=target_help)
    parser.add_argument("--callpath", metavar="PATH", help="detail of one call path, e.g. 'main->solve' (quoted: -> "
                        "is a shell redirection), or the unique end of one, e.g. MPI_Gather (short names as shown)")
    parser.add_argument("--min-share", metavar="PERCENT", type=float, default=1.0,
                        help="leave out call paths below this share now and at the target (default: 1); show's "
                        "ranking goes down to a tenth of it, compare counts smaller changes as none")
    parser.add_argument("--top", metavar="N", type=int, default=10,
                        help="length of show's ranking, of compare's wins and losses (default: 10)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown report instead")
    parser.add_argument("--plot", metavar="FILE", type=Path,
                        help="with --callpath: also draw its measurements and model to FILE (.svg, .png or .pdf; "
                             "needs matplotlib: pip install 'pmkit-hpc[plot]')")


def check_view_arguments(args: argparse.Namespace) -> None:
    """Usage errors of :func:`add_view_arguments`' options, before any work starts."""
    from pmkit.errors import UsageError

    if args.json and args.markdown:
        raise UsageError("--json and --markdown are two formats of the same output; choose one")
    if not 0 <= args.min_share <= 100:
        raise UsageError(f"--min-share is a percentage between 0 and 100, got {args.min_share:g}")
    if args.top < 1:
        raise UsageError("--top must be at least 1")
    if args.plot is not None:
        from pmkit.ui.figure import figure_format, require_matplotlib

        if not args.callpath:
            raise UsageError("--plot draws one call path: give --callpath too")
        figure_format(args.plot)
        require_matplotlib()
        check_out(args.plot, args.paths)
        if args.out is not None and (args.out == args.plot or _same_file(args.out, args.plot)):
            raise UsageError("--plot and --out name the same file")


def parse_target(text: str | None, parameters: Sequence[str]) -> dict[str, float]:
    """``--at "p=65536,size=100"`` → ``{"p": 65536.0, "size": 100.0}``; a usage error naming a bad item."""
    from pmkit.errors import UsageError
    from pmkit.models import parameter_value

    target: dict[str, float] = {}
    for item in (text or "").replace(";", ",").split(","):
        if not item.strip():
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise UsageError(f"--at expects name=value items like p=65536, got {item.strip()!r}")
        if name not in parameters:
            raise UsageError(f"--at names parameter {name!r}; the experiment has {', '.join(parameters)}")
        if name in target:
            raise UsageError(f"--at gives {name} twice")
        try:
            target[name] = parameter_value(value)
        except ValueError as exc:
            raise UsageError(f"--at {name}: {value.strip()!r} {exc}") from None
    return target


def write_figure(figure: Any, path: Path, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Save a matplotlib figure to ``path`` (format from its suffix), whole or not at all."""
    from pmkit.ui.figure import save_figure

    with output(path, inputs, binary=True) as stream:
        save_figure(figure, stream, path)


def check_out(out: Path | None, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Refuse ``--out`` naming one of ``inputs`` (a usage error) and a folder that cannot take it.

    Called before the work starts, so a long analysis does not end in an error it could have
    announced; :func:`output` checks again when it writes.
    """
    from pmkit.errors import OutputError, UsageError

    if out is None:
        return
    for source in inputs:
        if _same_file(out, Path(source)):
            raise UsageError(f"--out {out} is one of the inputs ({source}); choose another file")
    if out.is_dir():
        raise OutputError(out, "it is a folder")
    if not out.exists():
        folder = Path(os.path.realpath(out)).parent
        if not folder.is_dir():
            raise OutputError(out, f"no folder {folder}")
        if not os.access(folder, os.W_OK):
            raise OutputError(out, f"folder {folder} is not writable")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


@contextmanager
def output(out: Path | None, inputs: Sequence[str | os.PathLike] = (), *, binary: bool = False) -> Iterator[Any]:
    """The stream a command writes its result to: stdout, or ``--out FILE`` written whole or not at all.

    A regular file is written to a temporary file in its folder and renamed into place only when
    the block ends without an exception, so an interrupted or failed render leaves the old file as
    it was.  A device or pipe (``/dev/null``, ``/dev/stdout``) is written directly.  I/O errors
    become :class:`~pmkit.errors.OutputError` naming ``out``.  ``binary`` gives a stream of bytes
    (stdout's buffer) instead of text.
    """
    from pmkit.errors import OutputError

    if out is None:
        try:
            stream = _binary_stdout() if binary else sys.stdout
            yield stream
            stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:  # stdout redirected to a full disk, say
            raise OutputError(STDOUT, exc.strerror or str(exc)) from None
        return
    check_out(out, inputs)
    if out.exists() and not stat.S_ISREG(out.stat().st_mode):
        try:
            with out.open("wb") if binary else out.open("w", encoding="utf-8") as handle:
                yield handle
        except OSError as exc:
            raise OutputError(out, exc.strerror or str(exc)) from None
        return
    target = Path(os.path.realpath(out))
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as exc:
        raise OutputError(out, exc.strerror or str(exc)) from None
    try:
        with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        os.chmod(temporary, _mode_for(target))
        os.replace(temporary, target)
    except OSError as exc:
        _remove(temporary)
        raise OutputError(out, exc.strerror or str(exc)) from None
    except BaseException:
        _remove(temporary)
        raise


def _binary_stdout() -> Any:
    """stdout as a stream of bytes: its buffer (after what was written as text), or an adapter that
    decodes for a text-only stdout (a StringIO in a notebook, say)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    return buffer if buffer is not None else _Decoding(sys.stdout)


class _Decoding:
    """A bytes stream writing UTF-8 text into a text stream."""

    def __init__(self, text: TextIO) -> None:
        self.text = text

    def write(self, data: bytes) -> int:
        self.text.write(bytes(data).decode("utf-8"))
        return len(data)

    def flush(self) -> None:
        self.text.flush()


def _mode_for(target: Path) -> int:
    """The permissions the written file gets: the old file's, or what the umask gives a new file."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def output_console(stream: TextIO, out: Path | None) -> Any:
    """A console rendering to ``stream``: plain and 160 columns wide for ``--out FILE``, else the
    terminal's. Off a terminal, lines lose the spaces rich pads them with to the width, so that piped
    and saved output diffs and greps cleanly."""
    from rich.console import Console

    isatty = getattr(stream, "isatty", None)
    if not (isatty and isatty()):
        stream = TrimmedLines(stream)
    if out is not None:
        return Console(file=stream, width=160, no_color=True, highlight=False)
    return Console(file=stream, highlight=False)


class TrimmedLines:
    """A text stream that drops the spaces at the end of each line written through it; spaces not yet
    followed by a newline wait, and are written only if more text follows them on the same line."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.pending = ""

    def write(self, text: str) -> int:
        lines = (self.pending + text).split("\n")
        last = lines.pop()
        head = "".join(line.rstrip(" ") + "\n" for line in lines)
        kept = last.rstrip(" ")
        self.pending = last[len(kept):]
        self.stream.write(head + kept)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def stderr() -> Any:
    """A console for messages: never hard-wrapped, so each message stays one line for grep and logs."""
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False, soft_wrap=True)


def say(console: Any, label: str, style: str, message: object) -> None:
    """Print ``label: message`` with the message as plain text: file and call path names may hold
    brackets, which rich would otherwise take for markup, and control characters, which are shown
    escaped (:func:`pmkit.names.printable`) so that a name cannot recolour or retitle the terminal."""
    from rich.text import Text

    from pmkit.names import printable

    text = "\n".join(printable(line) for line in str(message).split("\n"))
    console.print(Text.assemble((f"{label}:", style), " ", text), highlight=False)


def plugin_registry(*, quiet: bool = False) -> Any:
    """The plugin registry; unless ``quiet``, every problem found building it (failed plugins, skipped
    objects, duplicate and overridden names) is a warning on stderr — on every command, not only the first."""
    from pmkit.plugins import PluginWarning, get_registry

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        registry = get_registry()
    err = stderr()
    for message in [] if quiet else registry.warnings:
        say(err, "warning", "yellow", message)
    from pmkit.distribution import foreign_pmkit

    foreign = foreign_pmkit()
    if foreign:
        say(err, "warning", "yellow", foreign)
    return registry


@contextmanager
def plugin_warnings() -> Iterator[None]:
    """While a command runs, a :class:`~pmkit.plugins.PluginWarning` (a detector skipped, a reader's sniff
    that failed or timed out) is one ``warning:`` line on stderr; other warnings are shown as before."""
    from pmkit.plugins import PluginWarning

    previous = warnings.showwarning

    def show(message: Any, category: type[Warning], filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        if issubclass(category, PluginWarning):
            say(stderr(), "warning", "yellow", message)
        else:
            previous(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


def emit(text: str, out: Path | None, inputs: Sequence[str | os.PathLike] = ()) -> None:
    """Write ``text`` to ``--out FILE`` (whole or not at all), or to stdout without it."""
    with output(out, inputs) as stream:
        stream.write(text)


def write_json(document: Any, out: Path | None, inputs: Sequence[str | os.PathLike] = ()) -> None:
    from pmkit.schema import finite_json

    emit(json.dumps(finite_json(document), indent=2, allow_nan=False) + "\n", out, inputs)


def load_inputs(args: argparse.Namespace, registry: Any, executor: Any = None, *, every: bool = False) -> Any:
    """Read every PATH (:func:`pmkit.sdk.read_inputs`, its tasks on ``executor``); a file that fails is
    reported on stderr and skipped, and the last error is raised when all fail — or, with ``every``
    (compare's A and B: each is needed), when any fails, and then nothing is said to be skipped.
    Returns the :class:`pmkit.analysis.Inputs`.

    ``--values``, ``--aggregation`` and ``--metric`` become options of the readers that declare them;
    the first two are a usage error for a reader without them.
    """
    from pmkit.errors import UsageError
    from pmkit.options import parse_assignments
    from pmkit.sdk import read_inputs

    given: dict[str, Any] = dict(parse_assignments(args.reader_option, "-R"))
    shortcuts = {"metrics": ",".join(args.metric) if args.metric else None, "values": args.values,
                 "aggregation": args.aggregation}

    def options_for(reader: Any, path: Path) -> dict[str, Any]:
        declared = {o.name for o in reader.options}
        options = dict(given)
        for name, value in shortcuts.items():
            if value is not None and name in declared:
                options.setdefault(name, value)
            elif value is not None and name != "metrics":
                raise UsageError(f"--{name} does not apply to {path}: reader {reader.name} has no such option")
        return options

    inputs = read_inputs(args.paths, args.reader, registry=registry, options=options_for, executor=executor)
    err = stderr()
    if not inputs.read or (every and inputs.failed):
        for _, exc in inputs.failed[:-1]:
            say(err, "error", "red", exc)
        raise inputs.failed[-1][1]
    for _, exc in inputs.failed:
        say(err, "error", "red", exc)
    if inputs.failed:
        say(err, "warning", "yellow", f"{len(inputs.failed)} of {len(args.paths)} inputs skipped")
    for _, experiment in inputs.read:
        for text in experiment.provenance.warnings:
            say(err, "warning", "yellow", text)
        for source, reason in experiment.provenance.skipped:
            say(err, "warning", "yellow", f"skipped {source}: {reason}")
    return inputs


def warn_idle_prior(args: argparse.Namespace, source: str, experiment: Any, outcome: Any) -> None:
    """One ``warning:`` line when ``--prior`` restricted none of an input's call paths — its names
    matched none, or what it knows leaves every law open — since the views then show no trace of it,
    and a prior for another program or build looks exactly like one that was applied."""
    from pmkit.ui.quantities import format_count

    if outcome is None or outcome.constraints:
        return
    paths = format_count(len(experiment.callpaths), "call path")
    say(stderr(), "warning", "yellow",
        f"prior {args.prior} restricts none of the {paths} of {source}: the "
        "models are the data's alone (are the names the same? pmkit taint-filter lists the functions it knows)")


def load_prior(args: argparse.Namespace, registry: Any) -> Any:
    """The prior of ``--prior`` (None without it), read by ``--prior-name`` with ``-P`` options and
    ``--prior-map`` as its ``map`` option."""
    from pmkit.options import parse_assignments
    from pmkit.sdk import load_prior

    if args.prior is None:
        return None
    given: dict[str, Any] = dict(parse_assignments(args.prior_option, "-P"))
    if args.prior_map:
        given["map"] = parse_assignments(args.prior_map, "--prior-map")
    return load_prior(args.prior, args.prior_name, registry=registry, **given)
