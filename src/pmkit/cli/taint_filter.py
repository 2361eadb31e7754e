"""``pmkit taint-filter``: a Score-P filter keeping only the functions a parameter reaches (Perf-Taint)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pmkit.cli.common import EXIT_OK, check_out, emit, plugin_registry


def add_parser(sub: Any) -> None:
    p_filter = sub.add_parser("taint-filter", help="Score-P filter keeping only functions a parameter reaches",
                              description="Write a Score-P filter file from Perf-Taint output: exclude every "
                                          "region, include the functions a registered parameter reaches, and main.")
    p_filter.add_argument("paths", metavar="TAINT_JSON", nargs="+", type=Path,
                          help="Perf-Taint JSON (raw or processed; several per-rank files or a folder)")
    p_filter.add_argument("--include-callers", action="store_true",
                          help="also keep functions that only call parameter-dependent ones")
    p_filter.add_argument("--out", metavar="FILE", type=Path, help="write the filter to FILE instead of stdout")
    p_filter.set_defaults(run=run_taint_filter)


def run_taint_filter(args: argparse.Namespace) -> int:
    from pmkit.errors import UsageError
    from pmkit.sdk import load_prior

    check_out(args.out, args.paths)
    prior = load_prior(args.paths[0] if len(args.paths) == 1 else args.paths, "taint", registry=plugin_registry())
    write_filter = getattr(prior.knowledge, "score_p_filter", None)
    if write_filter is None:
        raise UsageError("the prior registered as taint cannot write Score-P filters")
    emit(write_filter(include_callers=args.include_callers), args.out, args.paths)
    return EXIT_OK
