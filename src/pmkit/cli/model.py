"""``pmkit model``: models per call path and metric, as a table, JSON, JSON Lines, Parquet or Arrow."""

from __future__ import annotations

import argparse
from typing import Any

from pmkit.cli.common import (
    EXIT_OK,
    add_input_arguments,
    check_out,
    load_inputs,
    load_prior,
    open_executor,
    output,
    output_console,
    plugin_registry,
    warn_idle_prior,
)
from pmkit.writers import BINARY_FORMATS, FORMATS


def add_parser(sub: Any) -> None:
    p_model = sub.add_parser("model", help="fit a model per call path and metric",
                             description="Read inputs and fit a model per call path and metric.")
    add_input_arguments(p_model)
    p_model.add_argument("--format", choices=("table", *FORMATS), default=None,
                         help="table (default), json (the document --json prints), jsonl (a line per model), "
                         "parquet or arrow (a row per model; need pyarrow); layouts in the README")
    p_model.set_defaults(run=run_model)


def output_format(args: argparse.Namespace) -> str:
    """The format asked for (``--json`` is ``--format json``), checked before any work starts."""
    import sys

    from pmkit.errors import UsageError
    from pmkit.writers import missing_dependency

    fmt = args.format or ("json" if args.json else "table")
    if args.json and fmt != "json":
        raise UsageError(f"--json is short for --format json; it cannot go with --format {fmt}")
    if fmt in BINARY_FORMATS and args.out is None and sys.stdout.isatty():
        raise UsageError(f"--format {fmt} writes a binary file: give --out FILE (or pipe the output)")
    problem = missing_dependency(fmt)
    if problem:
        raise UsageError(problem)
    return fmt


def run_model(args: argparse.Namespace) -> int:
    from pmkit.options import parse_assignments
    from pmkit.sdk import DEFAULT_MODELER, model_with_prior

    fmt = output_format(args)
    check_out(args.out, args.paths)
    registry = plugin_registry()
    options = parse_assignments(args.option, "-O")
    results, findings = [], []
    with open_executor(args) as executor:
        inputs = load_inputs(args, registry, executor)
        parameters = inputs.parameters("model")
        prior = load_prior(args, registry)
        for source, experiment in inputs.read:
            models, outcome = model_with_prior(experiment, prior, args.modeler or DEFAULT_MODELER, metrics=args.metric,
                                               measure=args.measure, registry=registry, executor=executor, **options)
            findings += outcome.contradictions if outcome is not None else ()
            warn_idle_prior(args, source, experiment, outcome)
            results.append((source, experiment, models))
    written = [*args.paths, *inputs.files]
    if fmt != "table":
        from pmkit.writers import write_models

        with output(args.out, written, binary=True) as stream:
            write_models(fmt, stream, parameters, [(source, models) for source, _, models in results],
                         sources=[s for s, _ in inputs.read], skipped=inputs.skipped, findings=findings)
        return EXIT_OK
    from pmkit.ui.model_table import model_table

    with output(args.out, written) as stream:
        console = output_console(stream, args.out)
        for source, experiment, models in results:
            title = (f"{source} — {len(models)} model{'s' if len(models) != 1 else ''}, parameters "
                     f"{', '.join(experiment.parameters)}")
            console.print(model_table(models, title=title, show_metric=True, tree=experiment.callpaths,
                                      full_names=args.full_names))
        if findings:
            from pmkit.ui.findings_panel import findings_panel

            console.print(findings_panel(findings, full_names=args.full_names))
    return EXIT_OK
