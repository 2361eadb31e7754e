"""``pmkit show``: the call tree with models, the scaling ranking, predictions, findings."""

from __future__ import annotations

import argparse
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
    warn_idle_prior,
    write_figure,
)

COLUMNS_LEGEND = (
    "Columns of the call tree: model — the fitted function of the parameters; growth — its growth class (the "
    "fastest-growing term: constant, log p, p^0.5, p, p·log p, ...) or, for a law that does not grow towards the "
    "target, how it behaves along the parameter that changes: 'falls as 1/p'; 'flattens at 2.0 s'; 'falls as 1/p, "
    "grows again beyond p ≈ 900' (before its turning point); 'grows again beyond p ≈ 900' (past it); share now — "
    "the call path's "
    "part of the total at the largest measured point; at P=V — the model's prediction at the target; share then — "
    "its part of the predicted total.  A model negative at the target (!, 'negative beyond p ≈ 34') does not hold "
    "there: it is left out of the predicted total (then a lower bound, ≥) and of the shares, and named under the "
    "tree.  Ranking: × — predicted ÷ fitted at the largest measured point, with its 90% interval [low … high] "
    "(marked ? where it spans more than 10×; --rank-by low ranks by its low end); then — the prediction at the "
    "target.  "
    "A strong-scaling study (the measured total falls with a parameter such as p; with values summed over "
    "processes, the total per process) gets the speed-up and parallel efficiency at the target in the header, "
    "over the largest measured point and the smallest, and a ranking of the call paths limiting the speed-up: "
    "lost — what a call path takes at the target beyond ideal scaling from the largest measured point, as a share "
    "of the predicted total (together about 1 − efficiency).  A row marked +N counts its N hidden callees; a "
    "superscript refers to a note below the tree.  At a narrow width the tree gives up the model column first, "
    "then share now, then the prediction; the ranking the model, then the prediction, then × (share then); the "
    "caption says which were left out.")
TARGET_HELP = (
    "target scale, e.g. p=65536,size=100 (default: 4× the largest measured value of each parameter; for a "
    "strong-scaling study — the measured total falls with a parameter such as p — 4× the largest value of that "
    "parameter, the others kept at their largest, as the header says; parameters left out keep their largest "
    "value)")


def _add_show_arguments(parser: argparse.ArgumentParser) -> None:
    add_view_arguments(parser, TARGET_HELP)
    parser.add_argument("--depth", metavar="N", type=int, help="show N levels of the call tree")
    parser.add_argument("--sort", choices=("share", "growth", "name"), default="share",
                        help="order of siblings in the tree: their branch's share at the target, the fastest growth "
                             "in their branch, or name")
    parser.add_argument("--rank-by", choices=("growth", "low"), default="growth",
                        help="order of the ranking: the predicted growth, or the low end of its 90%% interval (the "
                             "growth the measurements are sure of)")
    parser.add_argument("--detector", metavar="NAME", action="append", default=None,
                        help="run only this detector (repeatable; default: all registered)")
    parser.add_argument("--detector-option", "-D", metavar="NAME=VALUE", action="append", default=[],
                        help="detector option, repeatable: NAME=VALUE reaches every detector that has the option, "
                        "DETECTOR.NAME=VALUE only that one, e.g. -D kluge.reference=ref.json (see `pmkit plugins "
                        "--options`)")


def add_parser(sub: Any) -> None:
    p_show = sub.add_parser("show", help="call tree, scaling ranking and predictions in the terminal",
                            description="Read inputs, model one metric per call path, and show where the program "
                                        "stops scaling: the call tree with models, shares now and at a target "
                                        "scale, the fastest-growing call paths, and findings.",
                            epilog=COLUMNS_LEGEND)
    add_input_arguments(p_show, metric_help="the metric to show, once (default: time, else the first)")
    _add_show_arguments(p_show)
    p_show.set_defaults(run=run_show)


def run_show(args: argparse.Namespace) -> int:
    from pmkit.errors import UsageError
    from pmkit.options import parse_assignments
    from pmkit.sdk import DEFAULT_MODELER, analyse
    from pmkit.ui.progress import Steps

    if args.metric and len(args.metric) > 1:
        raise UsageError("pmkit show shows one metric at a time; give --metric once")
    if args.depth is not None and args.depth < 1:
        raise UsageError("--depth must be at least 1")
    check_view_arguments(args)
    check_out(args.out, args.paths)
    registry = plugin_registry()
    modeler_options = parse_assignments(args.option, "-O")
    detector_options = parse_assignments(args.detector_option, "-D")
    prior = load_prior(args, registry)
    with open_executor(args) as executor, Steps() as steps:
        with steps.step(f"reading {len(args.paths)} input{'s' if len(args.paths) > 1 else ''}"):
            inputs = load_inputs(args, registry, executor)
        for _, experiment in inputs.read:  # every input must have the parameters --at names
            target = parse_target(args.at, experiment.parameters)
        analysis = analyse(inputs, metric=args.metric[0] if args.metric else None, target=target,
                           measure=args.measure, modeler=args.modeler or DEFAULT_MODELER,
                           modeler_options=modeler_options, prior=prior, detectors=args.detector,
                           detector_options=detector_options, callpath=args.callpath, registry=registry,
                           executor=executor)
    for result in analysis.inputs:
        warn_idle_prior(args, result.source, result.experiment, result.prior)
    _render(args, analysis, [*args.paths, *inputs.files])
    if args.plot is not None:
        from pmkit.ui.figure import detail_figure

        write_figure(detail_figure([(result.source, result.detail) for result in analysis.inputs]), args.plot,
                     [*args.paths, *inputs.files])
    return EXIT_OK


def _render(args: argparse.Namespace, analysis: Any, inputs: list) -> None:
    """Write the analysis as JSON, Markdown or the terminal screen: every view renders the same result."""
    view = {"depth": args.depth, "min_share": args.min_share / 100, "sort": args.sort, "top": args.top,
            "full_names": args.full_names, "rank_by": args.rank_by}
    if args.json:
        from pmkit.writers.jsonfiles import write_show_document

        with output(args.out, inputs, binary=True) as stream:
            write_show_document(stream, analysis)
    elif args.markdown:
        from pmkit.ui.markdown_report import markdown_report

        emit(markdown_report(analysis, **view), args.out, inputs)
    else:
        from pmkit.ui.show import render_show

        with output(args.out, inputs) as stream:
            render_show(output_console(stream, args.out), analysis, **view)
