"""The ``pmkit`` command: parse arguments, call the SDK, render.  No modeling happens here.

Exit codes: 0 success, 1 bad input (a file pmkit cannot use), 2 usage (unknown option, plugin or
metric).  Heavy modules (numba, scipy, pycubexr) are imported only by the commands that need them,
so ``pmkit --help`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit code is 2 as well; keep its text
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pmkit")
    except PackageNotFoundError:
        return "dev"


def _add_input_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", metavar="PATH", nargs="+", type=Path,
                        help="input files or folders (Extra-P text/JSON/JSON Lines/Talpas, Cube study folder, ...)")
    parser.add_argument("--reader", metavar="NAME", help="reader to use (default: the one that recognises the input)")
    parser.add_argument("--reader-option", "-R", metavar="NAME=VALUE", action="append", default=[],
                        help="reader option, repeatable (see `pmkit plugins`)")
    parser.add_argument("--modeler", metavar="NAME", default=None, help="modeler to use (default: refining)")
    parser.add_argument("--option", "-O", metavar="NAME=VALUE", action="append", default=[],
                        help="modeler option, repeatable, e.g. -O acceptance_threshold=1.5")
    parser.add_argument("--metric", metavar="NAME", action="append", default=None,
                        help="model only this metric (repeatable; default: all)")
    parser.add_argument("--measure", choices=("mean", "median", "min", "max"), default="mean",
                        help="how repetitions are reduced (default: mean)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON (schema in the README)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="write the output to FILE instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = _Parser(prog="pmkit", description="Empirical performance modeling of parallel programs.")
    parser.add_argument("--version", action="version", version=f"pmkit {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p_model = sub.add_parser("model", help="fit a model per call path and metric",
                             description="Read inputs and fit a model per call path and metric.")
    _add_input_arguments(p_model)
    p_model.set_defaults(run=run_model)

    p_plugins = sub.add_parser("plugins", help="list readers, modelers, priors and detectors",
                               description="List every registered plugin object and every plugin that failed.")
    p_plugins.add_argument("--json", action="store_true", help="print the list as JSON")
    p_plugins.set_defaults(run=run_plugins)
    return parser


def _console(out: Path | None, stream: Any = None) -> Any:
    from rich.console import Console

    if out is not None:
        return Console(file=out.open("w", encoding="utf-8"), width=160, no_color=True, highlight=False)
    return Console(file=stream or sys.stdout, highlight=False)


def _stderr() -> Any:
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False)


def _registry(*, quiet: bool = False) -> Any:
    """The plugin registry; plugins that failed to load are reported on stderr unless ``quiet``."""
    from pmkit.plugins import get_registry

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = get_registry()
    err = _stderr()
    for warning in [] if quiet else caught:
        err.print(f"[yellow]warning:[/] {warning.message}", markup=True, highlight=False)
    return registry


def _write_json(document: Any, out: Path | None) -> None:
    text = json.dumps(document, indent=2, allow_nan=False)
    if out is None:
        sys.stdout.write(text + "\n")
    else:
        out.write_text(text + "\n", encoding="utf-8")


def load_inputs(args: argparse.Namespace, registry: Any) -> list[tuple[str, Any]]:
    """Read every PATH; a file that fails is reported on stderr and skipped (InputError if all fail)."""
    from pmkit.errors import InputError
    from pmkit.options import parse_assignments
    from pmkit.sdk import read

    reader_options: dict[str, Any] = dict(parse_assignments(args.reader_option))
    if args.metric and args.reader:
        declared = {o.name for o in registry.get("reader", args.reader).options}
        if "metrics" in declared:
            reader_options.setdefault("metrics", ",".join(args.metric))
    loaded, failures = [], []
    for path in args.paths:
        try:
            loaded.append((str(path), read(path, args.reader, registry=registry, **reader_options)))
        except InputError as exc:
            failures.append((str(path), exc))
    err = _stderr()
    for path, exc in failures:
        err.print(f"[red]error:[/] {exc}", markup=True, highlight=False)
    if not loaded:
        raise failures[0][1]
    if failures:
        err.print(f"[yellow]warning:[/] {len(failures)} of {len(args.paths)} inputs skipped", markup=True)
    args.skipped = [(p, str(e)) for p, e in failures]
    return loaded


def run_model(args: argparse.Namespace) -> int:
    from pmkit.errors import UsageError
    from pmkit.options import parse_assignments
    from pmkit.schema import models_document
    from pmkit.sdk import DEFAULT_MODELER, model
    from pmkit.ui.model_table import model_table

    registry = _registry()
    loaded = load_inputs(args, registry)
    parameters = loaded[0][1].parameters
    for source, experiment in loaded[1:]:
        if experiment.parameters != parameters:
            raise UsageError(f"{source} has parameters {list(experiment.parameters)}, but {loaded[0][0]} has "
                             f"{list(parameters)}; model them in separate runs")
    options = parse_assignments(args.option)
    results = []
    for source, experiment in loaded:
        models = model(experiment, args.modeler or DEFAULT_MODELER, metrics=args.metric, measure=args.measure,
                       registry=registry, **options)
        results.append((source, experiment, models))
    if args.json:
        pairs = [(source, m) for source, _, models in results for m in models]
        _write_json(models_document(parameters, pairs, sources=[s for s, _ in loaded], skipped=args.skipped),
                    args.out)
        return EXIT_OK
    console = _console(args.out)
    for source, experiment, models in results:
        title = f"{source} — {len(models)} models, parameters {', '.join(experiment.parameters)}"
        console.print(model_table(models, title=title, show_metric=True))
    return EXIT_OK


def run_plugins(args: argparse.Namespace) -> int:
    from pmkit.ui.plugin_table import plugin_table

    registry = _registry(quiet=True)
    if args.json:
        _write_json({"schema": "pmkit.plugins/1", "plugins": [r.to_json() for r in registry.rows()]}, None)
    else:
        _console(None).print(plugin_table(registry))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``pmkit`` console script; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    run: Callable[[argparse.Namespace], int] | None = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return EXIT_USAGE
    from pmkit.errors import InputError, ModelingError, UsageError

    try:
        return run(args)
    except InputError as exc:
        _stderr().print(f"[red]error:[/] {exc}", markup=True, highlight=False)
        return EXIT_INPUT
    except (UsageError, ModelingError) as exc:
        _stderr().print(f"[red]error:[/] {exc}", markup=True, highlight=False)
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
