"""What every ``pmkit`` command shares: the input arguments, consoles, messages, output and loading.

Heavy modules (numba, scipy, pycubexr) are imported inside the functions that need them, so that
``pmkit --help`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit code is 2 as well; keep its text
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", metavar="PATH", nargs="+", type=Path,
                        help="input files or folders (Extra-P text/JSON/JSON Lines/Talpas, Cube study folder, ...)")
    parser.add_argument("--reader", metavar="NAME", help="reader to use (default: the one that recognises the input)")
    parser.add_argument("--reader-option", "-R", metavar="NAME=VALUE", action="append", default=[],
                        help="reader option, repeatable (see `pmkit plugins --options`)")
    parser.add_argument("--modeler", metavar="NAME", default=None, help="modeler to use (default: refining)")
    parser.add_argument("--option", "-O", metavar="NAME=VALUE", action="append", default=[],
                        help="modeler option, repeatable, e.g. -O acceptance=1.5 (see `pmkit plugins --options`)")
    parser.add_argument("--metric", metavar="NAME", action="append", default=None,
                        help="model only this metric (repeatable; default: all)")
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


def open_out(out: Path) -> Any:
    """``--out FILE`` opened for writing; a path that cannot be written is a usage error naming it."""
    from pmkit.errors import UsageError

    try:
        return out.open("w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write --out {out}: {exc.strerror or exc}") from None


def write_text(out: Path, text: str) -> None:
    with open_out(out) as handle:
        handle.write(text)


def output_console(out: Path | None, stream: Any = None) -> Any:
    from rich.console import Console

    if out is not None:
        return Console(file=open_out(out), width=160, no_color=True, highlight=False)
    return Console(file=stream or sys.stdout, highlight=False)


def stderr() -> Any:
    """A console for messages: never hard-wrapped, so each message stays one line for grep and logs."""
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False, soft_wrap=True)


def say(console: Any, label: str, style: str, message: object) -> None:
    """Print ``label: message`` with the message as plain text: file and call path names may hold
    brackets, which rich would otherwise take for markup."""
    from rich.text import Text

    console.print(Text.assemble((f"{label}:", style), " ", str(message)), highlight=False)


def plugin_registry(*, quiet: bool = False) -> Any:
    """The plugin registry; plugins that failed to load are reported on stderr unless ``quiet``."""
    from pmkit.plugins import get_registry

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = get_registry()
    err = stderr()
    for warning in [] if quiet else caught:
        say(err, "warning", "yellow", warning.message)
    from pmkit.distribution import foreign_pmkit

    foreign = foreign_pmkit()
    if foreign:
        say(err, "warning", "yellow", foreign)
    return registry


def emit(text: str, out: Path | None) -> None:
    """Write ``text`` to ``--out FILE``, or to stdout without it."""
    if out is None:
        sys.stdout.write(text)
    else:
        write_text(out, text)


def write_json(document: Any, out: Path | None) -> None:
    from pmkit.schema import finite_json

    emit(json.dumps(finite_json(document), indent=2, allow_nan=False) + "\n", out)


def common_parameters(loaded: list[tuple[str, Any]], command: str) -> tuple[str, ...]:
    """The parameters every input shares; a usage error when two inputs differ."""
    from pmkit.errors import UsageError

    parameters = loaded[0][1].parameters
    for source, experiment in loaded[1:]:
        if experiment.parameters != parameters:
            raise UsageError(f"{source} has parameters {list(experiment.parameters)}, but {loaded[0][0]} has "
                             f"{list(parameters)}; {command} them in separate runs")
    return parameters


def model_with_prior(experiment: Any, knowledge: Any, modeler: str, metrics: Any, args: argparse.Namespace,
                      registry: Any, options: dict[str, Any]) -> tuple[Any, Any, list[Any]]:
    """Models of ``experiment`` under the prior's constraints (if any), the constraints, and where the
    data contradicts the prior."""
    from pmkit.sdk import model, prior_contradictions

    constraints = knowledge.constraints(experiment) if knowledge is not None else None
    models = model(experiment, modeler, metrics=metrics, measure=args.measure, constraints=constraints,
                   registry=registry, **options)
    contradictions = (prior_contradictions(experiment, knowledge, models, constraints, modeler, metrics=metrics,
                                           measure=args.measure, registry=registry, **options)
                      if constraints else [])
    return models, constraints, contradictions


def load_inputs(args: argparse.Namespace, registry: Any) -> list[tuple[str, Any]]:
    """Read every PATH; a file that fails is reported on stderr and skipped (InputError if all fail)."""
    from pmkit.errors import InputError, UsageError
    from pmkit.options import parse_assignments
    from pmkit.sdk import find_reader, read

    given: dict[str, Any] = dict(parse_assignments(args.reader_option))
    shortcuts = {"metrics": ",".join(args.metric) if args.metric else None, "values": args.values,
                 "aggregation": args.aggregation}
    loaded, failures = [], []
    for path in args.paths:
        try:
            reader = registry.get("reader", args.reader) if args.reader else find_reader(path, registry)
            declared = {o.name for o in reader.options}
            options = dict(given)
            for name, value in shortcuts.items():
                if value is not None and name in declared:
                    options.setdefault(name, value)
                elif value is not None and name != "metrics":
                    raise UsageError(f"--{name} does not apply to {path}: reader {reader.name} has no such option")
            loaded.append((str(path), read(path, reader.name, registry=registry, **options)))
        except InputError as exc:
            failures.append((str(path), exc))
    err = stderr()
    if not loaded:
        for _, exc in failures[:-1]:
            say(err, "error", "red", exc)
        raise failures[-1][1]
    for _, exc in failures:
        say(err, "error", "red", exc)
    if failures:
        say(err, "warning", "yellow", f"{len(failures)} of {len(args.paths)} inputs skipped")
    args.skipped = [(p, str(e)) for p, e in failures]
    for _, experiment in loaded:
        for text in experiment.provenance.warnings:
            say(err, "warning", "yellow", text)
        for source, reason in experiment.provenance.skipped:
            say(err, "warning", "yellow", f"skipped {source}: {reason}")
            args.skipped.append((source, reason))
    return loaded


def load_prior(args: argparse.Namespace, registry: Any) -> Any:
    """The knowledge of ``--prior`` (None without it), read by ``--prior-name`` with its options."""
    from pmkit.options import parse_assignments
    from pmkit.sdk import load_prior

    if args.prior is None:
        return None
    given: dict[str, Any] = dict(parse_assignments(args.prior_option))
    if args.prior_map:
        given["map"] = ",".join(args.prior_map)
    return load_prior(args.prior, args.prior_name, registry=registry, **given)
