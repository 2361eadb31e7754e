"""``pmkit calibrate``: the usual time t_max of MPI calls from a benchmark sample (Kluge et al.)."""

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
    plugin_registry,
    say,
    stderr,
    write_json,
)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("calibrate", help="usual time t_max of MPI calls from a benchmark trace or CSV",
                       description="Fit a Poisson and a discrete exponential distribution to the times of repeated "
                                   "MPI calls per (operation, processes, bytes) and write the usual time t_max of "
                                   "each as a calibration reference for the kluge detector (-D reference=FILE).")
    p.add_argument("path", metavar="INPUT", type=Path,
                   help="a benchmark trace (traces.otf2, a run folder or a study folder) or a CSV file with the "
                        "columns op,nprocs,bytes,duration (seconds)")
    p.add_argument("--callpath-prefix", metavar="TEXT",
                   help="calls below a region whose name starts with TEXT (or whose call path does), e.g. calib_")
    p.add_argument("--region", metavar="NAME", help="only calls of this MPI function, e.g. MPI_Allreduce")
    p.add_argument("--q-max", type=float, default=0.95, metavar="Q",
                   help="quantile of the fitted error distribution taken as usual, 0 < Q < 1 (default 0.95; the "
                        "paper suggests 0.8–1)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the χ² test (default 0.05)")
    p.add_argument("--window", type=float, metavar="SECONDS",
                   help="histogram window (default: Freedman–Diaconis width, at least the timer resolution)")
    p.add_argument("--resolution", type=float, metavar="SECONDS",
                   help="timer resolution (default: the trace's; 1 ns for CSV input)")
    p.add_argument("--critical", choices=("exact", "paper"), default="exact",
                   help="χ² critical values: exact (scipy) or as the paper: tables up to 30 degrees of freedom, "
                        "Wilson–Hilferty above (default exact)")
    p.add_argument("--segments", choices=("auto", "off"), default="auto",
                   help="test each (operation, P) series of 8+ sizes for a change of law in bytes (the eager/"
                        "rendezvous switch) and use the law that holds between sizes (default auto)")
    p.add_argument("--reader", metavar="NAME", help="reader of a trace INPUT (default: the one that recognises it)")
    p.add_argument("--out", metavar="FILE", type=Path, help="write the reference (JSON) to FILE")
    p.add_argument("--json", action="store_true", help="print the reference as JSON instead of a table")
    add_executor_arguments(p)
    p.set_defaults(run=run_calibrate)


def run_calibrate(args: argparse.Namespace) -> int:
    from pmkit.calibration.reference import calibrate
    from pmkit.calibration.samples import csv_samples, trace_samples
    from pmkit.errors import InputError, UsageError
    from pmkit.ui.calibration_table import calibration_table

    if not 0 < args.q_max < 1:
        raise UsageError(f"--q-max must lie between 0 and 1 (exclusive), got {args.q_max:g}")
    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must lie between 0 and 1 (exclusive), got {args.alpha:g}")
    if args.window is not None and args.window <= 0:
        raise UsageError(f"--window must be a positive number of seconds, got {args.window:g}")
    check_out(args.out, [args.path])
    resolution = args.resolution
    if args.path.is_file() and args.path.suffix.lower() == ".csv":
        if args.callpath_prefix or args.region:
            raise UsageError("--callpath-prefix and --region select calls of a trace, not rows of a CSV file")
        samples = csv_samples(args.path)
    else:
        from pmkit.sdk import read
        from pmkit.ui.progress import Steps

        registry = plugin_registry()
        with open_executor(args) as executor, Steps() as steps, steps.step(f"reading {args.path}"):
            experiment = read(args.path, args.reader, registry=registry, executor=executor)
        for source, reason in experiment.provenance.skipped:
            say(stderr(), "warning", "yellow", f"skipped {source}: {reason}")
        events = experiment.events
        if events is None:
            raise InputError(args.path, "has no MPI call events (calibrate needs a trace, e.g. traces.otf2, or a CSV)")
        samples = trace_samples(events, callpath_prefix=args.callpath_prefix, region=args.region)
        if not samples:
            wanted = " ".join(f"{k} {v!r}" for k, v in (("--callpath-prefix", args.callpath_prefix),
                                                         ("--region", args.region)) if v)
            raise UsageError(f"no communication calls in {args.path}" + (f" match {wanted}" if wanted else ""))
        if resolution is None:
            ticks = max((float(run.get("timer_resolution", 0)) for run in events.runs), default=0.0)
            resolution = 1.0 / ticks if ticks > 0 else None
    reference = calibrate(samples, q_max=args.q_max, alpha=args.alpha, window=args.window,
                          resolution=resolution or 1e-9, critical=args.critical, source=str(args.path),
                          segments=args.segments)
    if args.out is not None:
        write_json(reference.to_json(), args.out, [args.path])
    if args.json:
        write_json(reference.to_json(), None)
    else:
        with output(None) as stream:
            output_console(stream, None).print(calibration_table(reference, title=f"{args.path} — "
                                                                 f"{len(reference.groups)} groups"))
    if args.out is not None:
        say(stderr(), "wrote", "green", f"{args.out} ({len(reference.groups)} groups); use it with "
                                        f"pmkit show TRACE -D kluge.reference={args.out}")
    return EXIT_OK
