"""``pmkit predict``: calibrate a per-process model on measured runs and predict (imbalanced) scenarios."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pmkit.cli.common import (
    EXIT_OK,
    add_executor_arguments,
    check_out,
    open_executor,
    output,
    output_console,
    say,
    stderr,
    write_json,
)


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "predict", help="per-process model: calibrate on measured runs, predict imbalanced scenarios",
        description="Calibrate a per-process model (a TOML file, see docs/perprocess.md) on the per-process times "
                    "of measured runs, then predict each run of a scenario table: per-process section times, the "
                    "total, the balanced total and what the imbalance costs, and the error where the scenario was "
                    "measured.")
    parser.add_argument("model", metavar="MODEL.toml", type=Path, help="the per-process model file")
    parser.add_argument("--calibrate", metavar="STUDY", type=Path, action="append", required=True,
                        help="Cube study (folder of run folders, .cubex file or manifest) to calibrate on; repeatable")
    parser.add_argument("--parameters", metavar="TABLE.csv", type=Path,
                        help="per-process parameters of the calibration runs: run,rank,NAME,... (default: "
                             "pmkit-parameters.csv in the study folder)")
    parser.add_argument("--scenario", metavar="TABLE.csv", type=Path,
                        help="per-process parameters of the runs to predict: run,rank,NAME,...")
    parser.add_argument("--measured", metavar="STUDY", type=Path, action="append",
                        help="Cube study with measurements of the scenario's runs, to report the prediction error; "
                             "repeatable")
    parser.add_argument("--run", metavar="NAME", action="append", default=[], dest="runs",
                        help="draw the slowest ranks of this scenario run (repeatable; default: the run whose "
                             "imbalance costs most)")
    parser.add_argument("--top", metavar="N", type=int, default=10, help="ranks drawn per run (default: 10)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON (schema pmkit.perprocess/1)")
    parser.add_argument("--out", metavar="FILE", type=Path, help="write the output to FILE instead of stdout")
    add_executor_arguments(parser)
    parser.set_defaults(run=run_predict)


def run_predict(args: argparse.Namespace) -> int:
    from pmkit.errors import UsageError
    from pmkit.perprocess import PerProcessModel
    from pmkit.perprocess.prediction import document
    from pmkit.ui.progress import Steps

    if args.measured and args.scenario is None:
        raise UsageError("--measured needs --scenario: the measurements validate the scenario's predictions")
    if args.runs and args.scenario is None:
        raise UsageError("--run needs --scenario: it names a run of the scenario table")
    if args.top < 1:
        raise UsageError("--top must be at least 1")
    given = [args.model, *args.calibrate, *(args.measured or []),
             *(p for p in (args.parameters, args.scenario) if p is not None)]
    check_out(args.out, given)
    model = PerProcessModel.load(args.model)
    prediction = None
    with open_executor(args) as executor, Steps() as steps:
        with steps.step(f"calibrating {model.name} on {', '.join(map(str, args.calibrate))}"):
            calibration = model.calibrate(args.calibrate, args.parameters, executor=executor)
        if args.scenario is not None:
            with steps.step(f"predicting {args.scenario}"):
                prediction = calibration.predict(args.scenario, args.measured, executor=executor)
    err = stderr()
    for source, reason in calibration.skipped + (prediction.skipped if prediction else []):
        say(err, "warning", "yellow", f"left out {source}: {reason}")
    if prediction is not None:
        known = [r.name for r in prediction.runs]
        unknown = [name for name in args.runs if name not in known]
        if unknown:
            raise UsageError(f"--run {unknown[0]!r} is not a run of {args.scenario}; its runs: "
                             f"{', '.join(known[:6])}{', …' if len(known) > 6 else ''}")
    read = [*given, calibration.parameters, *calibration.sources, *(prediction.measured_sources if prediction else [])]
    if args.json:
        write_json(document(calibration, prediction), args.out, read)
        return EXIT_OK
    from pmkit.ui.prediction import prediction_view

    with output(args.out, read) as stream:
        output_console(stream, args.out).print(prediction_view(calibration, prediction, runs=args.runs, top=args.top))
    return EXIT_OK
