"""Reader ``talpas``: the Talpas format, one JSON-like record per line with ``;`` between fields.

A line reads ``{"parameters":{"p":4,"n":10};"metric":"time";"callpath":"main";"value":6.5}``.
Extra-P reads it by replacing every ``;`` with ``,`` (inside names too) and parsing JSON; pmkit
does the same, so names come out exactly as in Extra-P.  ``parameters``, ``metric``,
``callpath`` and ``value`` (a number or a list of repetitions) are all required; the first line
fixes the parameters and their order; lines of the same call path, metric and point add
repetitions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pmkit.experiment import Experiment
from pmkit.hookspecs import hookimpl
from pmkit.readers.extrap_records import ALLOW_MISSING_OPTION
from pmkit.readers.limits import MAX_INPUT_OPTION, Limits
from pmkit.readers.parsing import read_head, text_chunks
from pmkit.readers.record_lines import TALPAS_FORMAT, looks_like_record, numbered_lines, read_record_lines


class TalpasReader:
    """Reads Talpas files: ``{"parameters":{...};"metric":...;"callpath":...;"value":...}`` lines."""

    name = "talpas"
    description = "Talpas input: one {parameters; metric; callpath; value} record per line, ';'-separated"
    options = (ALLOW_MISSING_OPTION, MAX_INPUT_OPTION)

    def sniff(self, path: Path) -> bool:
        """True if the first non-blank line is a record with ``;`` separators and a parameters object."""
        head = read_head(Path(path))
        if head is None:
            return False
        first = next((line for line in head.split("\n") if line.strip()), "")
        return ";" in first and looks_like_record(head, TALPAS_FORMAT.params_key, TALPAS_FORMAT.prepare)

    def read(self, path: Path, **options: Any) -> Experiment:
        path = Path(path)
        return read_record_lines(path, numbered_lines(text_chunks(path, Limits.from_options(options))),
                                 TALPAS_FORMAT, bool(options.get(ALLOW_MISSING_OPTION.name, False)))


@hookimpl(trylast=True)
def pmkit_register_readers(register) -> None:
    register(TalpasReader())
