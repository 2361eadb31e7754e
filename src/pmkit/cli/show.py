"""``pmkit show``: the call tree with models, the scaling ranking, predictions, findings."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from pmkit.cli.common import (
    EXIT_OK,
    add_input_arguments,
    check_out,
    emit,
    load_inputs,
    load_prior,
    output,
    output_console,
    plugin_registry,
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
    parser.add_argument("--detector-option", "-D", metavar="NAME=VALUE", action="append", default=[],
                        help="detector option, repeatable: NAME=VALUE reaches every detector that has the option, "
                        "DETECTOR.NAME=VALUE only that one, e.g. -D kluge.reference=ref.json (see `pmkit plugins "
                        "--options`)")


def add_parser(sub: Any) -> None:
    p_show = sub.add_parser("show", help="call tree, scaling ranking and predictions in the terminal",
                            description="Read inputs, model one metric per call path, and show where the program "
                                        "stops scaling: the call tree with models, shares now and at a target "
                                        "scale, the fastest-growing call paths, and findings.")
    add_input_arguments(p_show)
    _add_show_arguments(p_show)
    p_show.set_defaults(run=run_show)


def parse_target(text: str | None, parameters: Sequence[str]) -> dict[str, float]:
    """``--at "p=65536,size=100"`` → ``{"p": 65536.0, "size": 100.0}``; a usage error naming a bad item."""
    from pmkit.errors import UsageError

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
            number = float(value)
        except ValueError:
            raise UsageError(f"--at {name}: {value.strip()!r} is not a number") from None
        if not math.isfinite(number) or number <= 0:
            raise UsageError(f"--at {name}: {value.strip()!r} must be a positive number")
        target[name] = number
    return target


def run_show(args: argparse.Namespace) -> int:
    from pmkit.errors import UsageError
    from pmkit.options import parse_assignments
    from pmkit.sdk import DEFAULT_MODELER, analyse
    from pmkit.ui.progress import Steps

    if args.metric and len(args.metric) > 1:
        raise UsageError("pmkit show shows one metric at a time; give --metric once")
    if not 0 <= args.min_share <= 100:
        raise UsageError(f"--min-share is a percentage between 0 and 100, got {args.min_share:g}")
    if (args.depth is not None and args.depth < 1) or args.top < 1:
        raise UsageError("--depth and --top must be at least 1")
    check_out(args.out, args.paths)
    registry = plugin_registry()
    modeler_options = parse_assignments(args.option, "-O")
    detector_options = parse_assignments(args.detector_option, "-D")
    prior = load_prior(args, registry)
    with Steps() as steps:
        with steps.step(f"reading {len(args.paths)} input{'s' if len(args.paths) > 1 else ''}"):
            inputs = load_inputs(args, registry)
        for _, experiment in inputs.read:  # every input must have the parameters --at names
            target = parse_target(args.at, experiment.parameters)
        analysis = analyse(inputs, metric=args.metric[0] if args.metric else None, target=target,
                           measure=args.measure, modeler=args.modeler or DEFAULT_MODELER,
                           modeler_options=modeler_options, prior=prior, detectors=args.detector,
                           detector_options=detector_options, callpath=args.callpath, registry=registry)
    _render(args, analysis, [*args.paths, *inputs.files])
    return EXIT_OK


def _render(args: argparse.Namespace, analysis: Any, inputs: list) -> None:
    """Write the analysis as JSON, Markdown or the terminal screen: every view renders the same result."""
    view = {"depth": args.depth, "min_share": args.min_share / 100, "sort": args.sort, "top": args.top}
    if args.json:
        from pmkit.schema import show_document

        write_json(show_document(analysis), args.out, inputs)
    elif args.markdown:
        from pmkit.ui.markdown_report import markdown_report

        emit(markdown_report(analysis, **view), args.out, inputs)
    else:
        from pmkit.ui.show import render_show

        with output(args.out, inputs) as stream:
            render_show(output_console(stream, args.out), analysis, **view)
