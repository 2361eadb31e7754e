"""The ``pmkit`` command: parse arguments, call the SDK, render.  No modeling happens here.

Exit codes: 0 success, 1 bad input (a file pmkit cannot use), 2 usage (unknown option, plugin or
metric), 3 internal error (a bug in pmkit or a plugin; ``PMKIT_DEBUG=1`` shows the traceback).
Heavy modules (numba, scipy, pycubexr) are imported only by the commands that need them, so
``pmkit --help`` starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_INPUT, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit code is 2 as well; keep its text
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _version() -> str:
    from pmkit.distribution import version

    return version()


def _add_input_arguments(parser: argparse.ArgumentParser) -> None:
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = _Parser(prog="pmkit", description="Empirical performance modeling of parallel programs.")
    parser.add_argument("--version", action="version", version=f"pmkit {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p_model = sub.add_parser("model", help="fit a model per call path and metric",
                             description="Read inputs and fit a model per call path and metric.")
    _add_input_arguments(p_model)
    p_model.set_defaults(run=run_model)

    p_show = sub.add_parser("show", help="call tree, scaling ranking and predictions in the terminal",
                            description="Read inputs, model one metric per call path, and show where the program "
                                        "stops scaling: the call tree with models, shares now and at a target "
                                        "scale, the fastest-growing call paths, and findings.")
    _add_input_arguments(p_show)
    _add_show_arguments(p_show)
    p_show.set_defaults(run=run_show)

    p_plugins = sub.add_parser("plugins", help="list readers, modelers, priors and detectors",
                               description="List every registered plugin object and every plugin that failed.")
    p_plugins.add_argument("--json", action="store_true", help="print the list as JSON (options included)")
    p_plugins.add_argument("--options", "-o", action="store_true",
                           help="also list each plugin's options (for -O, -R and -P name=value)")
    p_plugins.set_defaults(run=run_plugins)

    p_filter = sub.add_parser("taint-filter", help="Score-P filter keeping only functions a parameter reaches",
                              description="Write a Score-P filter file from Perf-Taint output: exclude every "
                                          "region, include the functions a registered parameter reaches, and main.")
    p_filter.add_argument("paths", metavar="TAINT_JSON", nargs="+", type=Path,
                          help="Perf-Taint JSON (raw or processed; several per-rank files or a folder)")
    p_filter.add_argument("--include-callers", action="store_true",
                          help="also keep functions that only call parameter-dependent ones")
    p_filter.add_argument("--out", metavar="FILE", type=Path, help="write the filter to FILE instead of stdout")
    p_filter.set_defaults(run=run_taint_filter)
    return parser


def _open_out(out: Path) -> Any:
    """``--out FILE`` opened for writing; a path that cannot be written is a usage error naming it."""
    from pmkit.errors import UsageError

    try:
        return out.open("w", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write --out {out}: {exc.strerror or exc}") from None


def _write_text(out: Path, text: str) -> None:
    with _open_out(out) as handle:
        handle.write(text)


def _console(out: Path | None, stream: Any = None) -> Any:
    from rich.console import Console

    if out is not None:
        return Console(file=_open_out(out), width=160, no_color=True, highlight=False)
    return Console(file=stream or sys.stdout, highlight=False)


def _stderr() -> Any:
    """A console for messages: never hard-wrapped, so each message stays one line for grep and logs."""
    from rich.console import Console

    return Console(file=sys.stderr, highlight=False, soft_wrap=True)


def _say(console: Any, label: str, style: str, message: object) -> None:
    """Print ``label: message`` with the message as plain text: file and call path names may hold
    brackets, which rich would otherwise take for markup."""
    from rich.text import Text

    console.print(Text.assemble((f"{label}:", style), " ", str(message)), highlight=False)


def _registry(*, quiet: bool = False) -> Any:
    """The plugin registry; plugins that failed to load are reported on stderr unless ``quiet``."""
    from pmkit.plugins import get_registry

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry = get_registry()
    err = _stderr()
    for warning in [] if quiet else caught:
        _say(err, "warning", "yellow", warning.message)
    from pmkit.distribution import foreign_pmkit

    foreign = foreign_pmkit()
    if foreign:
        _say(err, "warning", "yellow", foreign)
    return registry


def _emit(text: str, out: Path | None) -> None:
    """Write ``text`` to ``--out FILE``, or to stdout without it."""
    if out is None:
        sys.stdout.write(text)
    else:
        _write_text(out, text)


def _write_json(document: Any, out: Path | None) -> None:
    from pmkit.schema import finite_json

    _emit(json.dumps(finite_json(document), indent=2, allow_nan=False) + "\n", out)


def _common_parameters(loaded: list[tuple[str, Any]], command: str) -> tuple[str, ...]:
    """The parameters every input shares; a usage error when two inputs differ."""
    from pmkit.errors import UsageError

    parameters = loaded[0][1].parameters
    for source, experiment in loaded[1:]:
        if experiment.parameters != parameters:
            raise UsageError(f"{source} has parameters {list(experiment.parameters)}, but {loaded[0][0]} has "
                             f"{list(parameters)}; {command} them in separate runs")
    return parameters


def _model_with_prior(experiment: Any, knowledge: Any, modeler: str, metrics: Any, args: argparse.Namespace,
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
    err = _stderr()
    if not loaded:
        for _, exc in failures[:-1]:
            _say(err, "error", "red", exc)
        raise failures[-1][1]
    for _, exc in failures:
        _say(err, "error", "red", exc)
    if failures:
        _say(err, "warning", "yellow", f"{len(failures)} of {len(args.paths)} inputs skipped")
    args.skipped = [(p, str(e)) for p, e in failures]
    for _, experiment in loaded:
        for source, reason in experiment.provenance.skipped:
            _say(err, "warning", "yellow", f"skipped {source}: {reason}")
            args.skipped.append((source, reason))
    return loaded


def run_model(args: argparse.Namespace) -> int:
    from pmkit.options import parse_assignments
    from pmkit.schema import models_document
    from pmkit.sdk import DEFAULT_MODELER
    from pmkit.ui.model_table import model_table

    registry = _registry()
    loaded = load_inputs(args, registry)
    parameters = _common_parameters(loaded, "model")
    options = parse_assignments(args.option)
    knowledge = _load_prior(args, registry)
    modeler = args.modeler or DEFAULT_MODELER
    results, findings = [], []
    for source, experiment in loaded:
        models, _, contradictions = _model_with_prior(experiment, knowledge, modeler, args.metric, args, registry,
                                                      options)
        findings += contradictions
        results.append((source, experiment, models))
    if args.json:
        pairs = [(source, m) for source, _, models in results for m in models]
        _write_json(models_document(parameters, pairs, sources=[s for s, _ in loaded], skipped=args.skipped,
                                    findings=findings), args.out)
        return EXIT_OK
    console = _console(args.out)
    for source, experiment, models in results:
        title = f"{source} — {len(models)} models, parameters {', '.join(experiment.parameters)}"
        console.print(model_table(models, title=title, show_metric=True))
    if findings:
        from pmkit.ui.findings_panel import findings_panel

        console.print(findings_panel(findings))
    return EXIT_OK


def _load_prior(args: argparse.Namespace, registry: Any) -> Any:
    """The knowledge of ``--prior`` (None without it), read by ``--prior-name`` with its options."""
    from pmkit.options import parse_assignments
    from pmkit.sdk import load_prior

    if args.prior is None:
        return None
    given: dict[str, Any] = dict(parse_assignments(args.prior_option))
    if args.prior_map:
        given["map"] = ",".join(args.prior_map)
    return load_prior(args.prior, args.prior_name, registry=registry, **given)


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
    registry = _registry()
    options = parse_assignments(args.option)
    min_share = args.min_share / 100
    results = []
    knowledge = _load_prior(args, registry)
    with Steps() as steps:
        with steps.step(f"reading {len(args.paths)} input{'s' if len(args.paths) > 1 else ''}"):
            loaded = load_inputs(args, registry)
        for source, experiment in loaded:
            metric = args.metric[0] if args.metric else default_metric(experiment)
            target = parse_target(args.at, experiment.parameters)
            with steps.step(f"modeling {metric} of {len(experiment.callpaths)} call paths in {source}"):
                models, constraints, contradictions = _model_with_prior(
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
    if args.markdown:
        _emit("\n".join(markdown_report(report, source=source, findings=findings, detail=focus, depth=args.depth,
                                        min_share=min_share, sort=args.sort, top=args.top)
                        for source, _, _, report, findings, focus, _ in results), args.out)
        return EXIT_OK
    console = _console(args.out)
    for n, (source, experiment, models, report, findings, _, constraints) in enumerate(results):
        if n:
            console.rule()
        console.print(show_view(experiment, models, metric=report.metric, target=report.target, depth=args.depth,
                                min_share=min_share, sort=args.sort, top=args.top, callpath=args.callpath,
                                findings=findings, measure=args.measure, source=source, constraints=constraints))
    return EXIT_OK


def _show_json(args: argparse.Namespace, loaded: list, results: list) -> int:
    """``pmkit show --json``: the ``pmkit model --json`` document plus a ``prediction`` per model and ``show``."""
    from pmkit.schema import models_document

    parameters = _common_parameters(loaded, "show")
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
    _write_json(document, args.out)
    return EXIT_OK


def run_plugins(args: argparse.Namespace) -> int:
    from pmkit.ui.plugin_table import plugin_table

    registry = _registry(quiet=True)
    if args.json:
        _write_json({"schema": "pmkit.plugins/1", "plugins": [r.to_json() for r in registry.rows()]}, None)
    else:
        _console(None).print(plugin_table(registry, options=args.options))
    return EXIT_OK


def run_taint_filter(args: argparse.Namespace) -> int:
    from pmkit.priors.taint import load, score_p_filter

    paths = args.paths[0] if len(args.paths) == 1 else args.paths
    _emit(score_p_filter(load(paths), include_callers=args.include_callers), args.out)
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
        _say(_stderr(), "error", "red", exc)
        return EXIT_INPUT
    except (UsageError, ModelingError) as exc:
        _say(_stderr(), "error", "red", exc)
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if os.environ.get("PMKIT_DEBUG"):
            raise
        _say(_stderr(), "internal error", "red", f"{type(exc).__name__}: {exc}\nThis is a bug in pmkit or in a "
             "plugin, not in your data; please report it with the traceback that PMKIT_DEBUG=1 shows.")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
