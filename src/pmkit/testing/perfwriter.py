"""Writes ``perf stat`` output in its three formats, from the documented layout, for tests and examples.

The machine pmkit is developed on cannot count hardware events (``<not supported>``), so lines
with cycles, instructions, cache hits and multiplexing are written here exactly as perf 6.1 prints
them (``tools/perf/util/stat-display.c``; the captured samples in ``shared/data/perf-stat`` show
the same layout for software events):

* CSV: ``[TIME,][ID,[COUNT,]]VALUE,UNIT,EVENT,[VARIANCE%,]RUNTIME,PCNT,METRIC,METRIC-UNIT``;
* JSON: one object per line, ``counter-value`` as a string, keys in perf's order;
* human: ``VALUE UNIT EVENT  # METRIC  ( +- VARIANCE% )  (PCNT%)`` with thousands separators, under
  ``Performance counter stats for 'COMMAND':`` and over ``seconds time elapsed``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

NOT_COUNTED = "<not counted>"
NOT_SUPPORTED = "<not supported>"


@dataclass(frozen=True)
class PerfLine:
    """One counter line: ``value`` is a number or ``<not counted>``/``<not supported>``.

    ``running`` is the percentage of the time the counter counted (below 100: multiplexed);
    ``runtime`` its counting time in ns; ``location`` an ID (``CPU0``, ``S0-D0-C1``, ``bash-12``)
    with ``count`` CPUs aggregated for cores/sockets; ``time`` the end of an interval (``-I``);
    ``variance`` perf's ``-r`` noise in percent.
    """

    event: str
    value: float | str
    unit: str = ""
    running: float = 100.0
    runtime: int = 1_000_000_000
    location: str = ""
    count: int | None = None
    time: float | str | None = None
    variance: float | None = None
    metric: tuple[float, str] | None = None


def _value_text(value: float | str, unit: str, human: bool = False) -> str:
    if isinstance(value, str):
        return value
    if unit == "msec":
        return f"{value:.2f}"
    if human:
        return f"{round(value):,}"
    return f"{round(value)}" if float(value).is_integer() or abs(value) >= 1e3 else f"{value}"


def csv_lines(lines: Sequence[PerfLine], separator: str = ",") -> list[str]:
    """The lines as ``perf stat -x SEPARATOR`` prints them."""
    out = []
    for line in lines:
        fields: list[str] = []
        if line.time is not None:
            fields.append(line.time if isinstance(line.time, str) else f"{line.time:14.9f}")
        if line.location:
            fields.append(line.location)
            if line.count is not None:
                fields.append(str(line.count))
        fields += [_value_text(line.value, line.unit), line.unit, line.event]
        if line.variance is not None:
            fields.append(f"{line.variance:.2f}%")
        missing = isinstance(line.value, str)
        fields += ["0" if missing else str(line.runtime), f"{line.running:.2f}"]
        fields += ["", ""] if line.metric is None or missing else [f"{line.metric[0]:.3f}", line.metric[1]]
        out.append(separator.join(fields))
    return out


def json_lines(lines: Sequence[PerfLine], *, newer: bool = False) -> list[str]:
    """The lines as ``perf stat -j`` prints them (``newer``: metric values as strings, ``cpu-count``)."""
    out = []
    keys = {"cpu": "cpu", "core": "core", "socket": "socket", "die": "die", "node": "node", "thread": "thread"}
    for line in lines:
        record: dict[str, object] = {}
        if line.time is not None:
            record["interval"] = line.time
        if line.location:
            kind = _kind(line.location)
            record[keys[kind]] = line.location[3:] if kind == "cpu" else line.location
            if line.count is not None:
                record["cpu-count" if newer else "aggregate-number"] = line.count
        value = line.value if isinstance(line.value, str) else f"{line.value:f}"
        record.update({"counter-value": value, "unit": line.unit, "event": line.event})
        if line.variance is not None:
            record["variance"] = line.variance
        record["event-runtime"] = 0 if isinstance(line.value, str) else line.runtime
        record["pcnt-running"] = round(line.running, 2)
        metric = line.metric or (0.0, "")
        record["metric-value"] = f"{metric[0]:f}" if newer else metric[0]
        record["metric-unit"] = metric[1]
        out.append(json.dumps(record).replace('": ', '" : '))
    return out


def human_lines(lines: Sequence[PerfLine], command: str = "./app", runs: int | None = None,
                elapsed: float | None = 1.0) -> list[str]:
    """The lines as plain ``perf stat`` prints them, with its title and (without ``-I``) closing lines."""
    suffix = f" ({runs} runs)" if runs else ""
    out = ["", f" Performance counter stats for '{command}'{suffix}:", ""]
    for line in lines:
        prefix = ""
        if line.time is not None:
            prefix += line.time if isinstance(line.time, str) else f"{line.time:14.9f} "
        if line.location:
            prefix += f"{line.location:<12}" + (f"{line.count:>4} " if line.count is not None else "")
        value = _value_text(line.value, line.unit, human=True)
        text = f"{prefix}{value:>18} {line.unit:<4} {line.event:<30}"
        if line.metric is not None and not isinstance(line.value, str):
            text += f" #  {line.metric[0]:8.3f} {line.metric[1]:<20}"
        if line.variance is not None:
            text += f"  ( +- {line.variance:5.2f}% )"
        if line.running < 100:
            text += f"  ({line.running:.2f}%)"
        out.append(text)
    if elapsed is not None and all(line.time is None for line in lines):
        out += ["", f"{elapsed:18.9f} seconds time elapsed", "", f"{elapsed * 0.98:18.9f} seconds user",
                f"{elapsed * 0.01:18.9f} seconds sys", ""]
    return out


def _kind(location: str) -> str:
    if location.startswith("CPU"):
        return "cpu"
    if "-C" in location:
        return "core"
    if "-D" in location:
        return "die"
    if location.startswith("S"):
        return "socket"
    if location.startswith("N") and location[1:].isdigit():
        return "node"
    return "thread"


def write_perf_stat(path: str | Path, lines: Sequence[PerfLine], *, fmt: str = "csv", separator: str = ",",
                    started: str | None = "Sat Nov 21 22:27:16 2026", command: str = "./app",
                    runs: int | None = None, elapsed: float | None = 1.0, newer: bool = False) -> Path:
    """Write a perf stat output file like ``perf stat -o PATH`` (``fmt``: csv, json or human)."""
    if fmt == "csv":
        body = csv_lines(lines, separator)
    elif fmt == "json":
        body = json_lines(lines, newer=newer)
    elif fmt == "human":
        body = human_lines(lines, command, runs, elapsed)
    else:
        raise ValueError(f"unknown format {fmt!r}; choose csv, json or human")
    head = [f"# started on {started}", ""] if started else []
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(head + body) + "\n", encoding="utf-8")
    return path


def counters(values: dict[str, float], *, running: dict[str, float] | None = None,
             task_clock_msec: float | None = None) -> list[PerfLine]:
    """Lines for hardware events ``values`` (NaN → ``<not counted>``), optionally after a task-clock line."""
    out = []
    if task_clock_msec is not None:
        out.append(PerfLine("task-clock", task_clock_msec, "msec", metric=(1.0, "CPUs utilized")))
    for event, value in values.items():
        shown: float | str = NOT_COUNTED if isinstance(value, float) and math.isnan(value) else value
        out.append(PerfLine(event, shown, running=(running or {}).get(event, 100.0)))
    return out
