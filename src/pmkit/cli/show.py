"""``pmkit show``: the call tree with models, the scaling ranking, predictions, findings."""

from __future__ import annotations

import argparse
from typing import Any

from pmkit.cli.common import (
    EXIT_OK,
    add_input_arguments,
    check_out,
    common_parameters,
    emit,
    load_inputs,
    load_prior,
    model_with_prior,
    output,
    output_console,
    plugin_registry,
    read_files,
    write_json,
)


def _add_show_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--at", metavar="P=V,...", help="target scale, e.g. p=65536,size=100 (default: 4× the "
                        "largest measured value of each parameter; parameters left out keep their largest value)")
    parser.add_argument("--callpath", metavar="PATH", help="detail of one call path, e.g. 'main->solve' (quoted: -> "
                        "is a shell redirection), or the unique end of one, e.g. MPI_Gather")
    parser.add_argument("--depth", metavar="N", type=int, help="show N levels of the call tree")
    parser.add_argument("--min-share", metavar="PERCENT", type=float, default=1.0,
                        help="fold call paths below this share now and at the target (default: 1); the "
                        "ranking goes down to a tenth of it")
    parser.add_argument("--sort", choices=("share", "growth", "name"), default="share",
                        help="order of siblings in the tree: share at the target, growth to it, or name")
    parser.add_argument("--top", metavar="N", type=int, default=10, help="length of the ranking (default: 10)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown report instead")
    parser.add_argument("--detector", metavar="NAME", action="append", default=None,
                        help="run only this detector (repeatable; default: all registered)")


def add_parser(sub: Any) -> None:
    p_show = sub.add_parser("show", help="call tree, scaling ranking and predictions in the terminal",
                            description="Read inputs, model one metric per call path, and show where the program "
                                        "stops scaling: the call tree with models, shares now and at a target "
                                        "scale, the fastest-growing call paths, and findings.")
    add_input_arguments(p_show)
    _add_show_arguments(p_show)
    p_show.set_defaults(run=run_show)


def run_show(args: argparse.Namespace) -> int:
    from pmkit.errors import UsageError
    from pmkit.options import parse_assignments
    from pmkit.scaling import analyse, default_metric, detail, parse_target
    from pmkit.sdk import DEFAULT_MODELER, detect
    from pmkit.ui.markdown_report import markdown_report
    from pmkit.ui.progress import Steps
    from pmkit.ui.show import show_view

    if args.metric and len(args.metric) > 1:
        raise UsageError("pmkit show shows one metric at a time; give --metric once")
    if not 0 <= args.min_share <= 100:
        raise UsageError(f"--min-share is a percentage between 0 and 100, got {args.min_share:g}")
    if (args.depth is not None and args.depth < 1) or args.top < 1:
        raise UsageError("--depth and --top must be at least 1")
    check_out(args.out, args.paths)
    registry = plugin_registry()
    options = parse_assignments(args.option)
    min_share = args.min_share / 100
    results = []
    knowledge = load_prior(args, registry)
    with Steps() as steps:
        with steps.step(f"reading {len(args.paths)} input{'s' if len(args.paths) > 1 else ''}"):
            loaded = load_inputs(args, registry)
        for source, experiment in loaded:
            metric = args.metric[0] if args.metric else default_metric(experiment)
            target = parse_target(args.at, experiment.parameters)
            with steps.step(f"modeling {metric} of {len(experiment.callpaths)} call paths in {source}"):
                models, constraints, contradictions = model_with_prior(
                    experiment, knowledge, args.modeler or DEFAULT_MODELER, [metric], args, registry, options)
            findings = None
            detectors = args.detector if args.detector is not None else registry.names("detector")
            if detectors or constraints:
                with steps.step("running detectors"):
                    found = detect(experiment, models, detectors, registry=registry) if detectors else []
                    findings = sorted([*found, *contradictions], key=lambda f: -f.severity)
            report = analyse(experiment, models, metric, target, args.measure, constraints)
            focus = detail(report, args.callpath) if args.callpath else None
            results.append((source, experiment, models, report, findings, focus, constraints))
    if args.json:
        return _show_json(args, loaded, results)
    inputs = read_files(args.paths, loaded)
    if args.markdown:
        emit("\n".join(markdown_report(report, source=source, findings=findings, detail=focus, depth=args.depth,
                                        min_share=min_share, sort=args.sort, top=args.top)
                        for source, _, _, report, findings, focus, _ in results), args.out, inputs)
        return EXIT_OK
    with output(args.out, inputs) as stream:
        console = output_console(stream, args.out)
        for n, (source, experiment, models, report, findings, _, constraints) in enumerate(results):
            if n:
                console.rule()
            console.print(show_view(experiment, models, metric=report.metric, target=report.target,
                                    depth=args.depth, min_share=min_share, sort=args.sort, top=args.top,
                                    callpath=args.callpath, findings=findings, measure=args.measure, source=source,
                                    constraints=constraints))
    return EXIT_OK


def _show_json(args: argparse.Namespace, loaded: list, results: list) -> int:
    """``pmkit show --json``: the ``pmkit model --json`` document plus a ``prediction`` per model and ``show``."""
    from pmkit.schema import models_document

    parameters = common_parameters(loaded, "show")
    pairs, predictions, shows, findings = [], [], [], []
    for source, experiment, models, report, found, focus, _ in results:
        for m in models:
            pairs.append((source, m))
            known = m.metric == report.metric and m.callpath in experiment.callpaths
            row = report.row(m.callpath).to_json() if known else None
            predictions.append(None if row is None else {k: v for k, v in row.items() if k != "callpath"})
        shows.append({"source": source, **report.prediction_document(),
                      **({"detail": focus.to_json()} if focus is not None else {})})
        findings.extend(found or [])
    document = models_document(parameters, pairs, sources=[s for s, _ in loaded], skipped=args.skipped,
                               findings=findings, extra={"show": shows})
    for entry, prediction in zip(document["models"], predictions, strict=True):
        entry["prediction"] = prediction
    write_json(document, args.out, read_files(args.paths, loaded))
    return EXIT_OK
