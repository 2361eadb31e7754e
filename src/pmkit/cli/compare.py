"""``pmkit compare A B``: two studies side by side — models, growth classes and predictions at one target,
what changed growth class, and the biggest wins and losses."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pmkit.cli.common import (
    EXIT_OK,
    add_input_arguments,
    add_view_arguments,
    check_out,
    check_view_arguments,
    emit,
    load_inputs,
    load_prior,
    open_executor,
    output,
    output_console,
    parse_target,
    plugin_registry,
    write_figure,
    write_json,
)


def add_parser(sub: Any) -> None:
    p_compare = sub.add_parser(
        "compare", help="two studies side by side: models, growth and predictions, wins and losses",
        description="Read two inputs (before and after an optimisation, two machines, or one study twice with two "
                    "metrics), model both alike, and compare them call path by call path at one target: each side's "
                    "model, growth class and prediction, what changed growth class, and the biggest wins and "
                    "losses.  The change is B − A at the target, in the metric's unit; when the two metrics have "
                    "different units, in points of each side's predicted total.",
        epilog="Columns: growth A → B — the growth class on each side (one when the same); A, B — the predictions "
               "at the target; change — B − A; B ÷ A — the relative change.  At a narrow width the side-by-side "
               "table gives up the models first, then B ÷ A, then A's value, then B's; the caption says which.")
    add_input_arguments(p_compare, metric_help="the metric to compare: once for both sides, or twice, A's then B's "
                                               "(default: time, else the first)")
    add_view_arguments(p_compare)
    p_compare.set_defaults(run=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    from pmkit.comparison import compare
    from pmkit.errors import UsageError
    from pmkit.options import parse_assignments
    from pmkit.ui.progress import Steps

    if len(args.paths) != 2:
        raise UsageError(f"pmkit compare takes two inputs, A and B; got {len(args.paths)}")
    if args.metric and len(args.metric) > 2:
        raise UsageError("--metric is given once (both sides) or twice (A's, then B's)")
    check_view_arguments(args)
    check_out(args.out, args.paths)
    registry = plugin_registry()
    modeler_options = parse_assignments(args.option, "-O")
    prior = load_prior(args, registry)
    metrics = list(args.metric or [None])
    with open_executor(args) as executor, Steps() as steps:
        with steps.step("reading 2 inputs"):
            inputs = load_inputs(args, registry, executor, every=True)
        (a, experiment), b = inputs.read
        comparison = compare((a, experiment), b, metric=metrics[0], metric_b=metrics[-1],
                             target=parse_target(args.at, experiment.parameters), measure=args.measure,
                             modeler=args.modeler, modeler_options=modeler_options, prior=prior,
                             callpath=args.callpath, registry=registry, executor=executor)
    written = [*args.paths, *inputs.files]
    view = {"min_share": args.min_share / 100, "top": args.top, "full_names": args.full_names}
    if args.json:
        from pmkit.schema import compare_document

        write_json(compare_document(comparison, min_share=view["min_share"], top=args.top), args.out, written)
    elif args.markdown:
        from pmkit.ui.markdown_report import markdown_comparison

        emit(markdown_comparison(comparison, **view), args.out, written)
    else:
        from pmkit.ui.compare import render_comparison

        with output(args.out, written) as stream:
            render_comparison(output_console(stream, args.out), comparison, **view)
    if args.plot is not None:
        from pmkit.ui.figure import detail_figure

        labels = [f"{side} {Path(result.source).name or result.source}"
                  for side, result in zip("AB", (comparison.a, comparison.b), strict=True)]
        write_figure(detail_figure(list(zip(labels, comparison.details, strict=True))), args.plot, written)
    return EXIT_OK
