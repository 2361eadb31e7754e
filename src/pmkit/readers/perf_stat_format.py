"""One ``perf stat`` output file taken apart: CSV (``-x SEP``), JSON (``-j``) or the human-readable default.

The formats, as perf 6.1 writes them (``tools/perf/Documentation/perf-stat.txt`` and
``util/stat-display.c``) and as the samples in ``shared/data/perf-stat`` show:

* **CSV** (``-x,``; any separator string): ``[TIME,][ID,[COUNT,]]VALUE,UNIT,EVENT,[VARIANCE%,]RUNTIME,
  PCNT-RUNNING,[METRIC-VALUE,METRIC-UNIT]``.  ``TIME`` is the end of the interval with ``-I`` (or
  ``summary`` with ``--interval-summary``); ``ID`` is ``CPU3`` (``-A``), ``S0-D0-C1`` with the number
  of CPUs aggregated (``--per-core``), ``S0``/``S0-D0``/``N0`` likewise (``--per-socket``,
  ``--per-die``, ``--per-node``), or ``comm-tid`` (``--per-thread``, no count).  The variance (``-r``)
  follows the event name, as perf prints it (the manual lists it later).  ``VALUE`` may be
  ``<not counted>`` or ``<not supported>``.  Lines whose value and event are empty carry a further
  derived metric of the line before and are skipped.  perf does not quote fields, so a thread name
  holding the separator gives a line with extra fields; the extra fields are joined back into the name.
* **JSON** (``-j``): one object per line with ``counter-value`` (a string), ``unit``, ``event``,
  ``event-runtime``, ``pcnt-running``, ``variance`` (``-r``), ``interval`` (``-I``), one of ``cpu``,
  ``core``, ``die``, ``socket``, ``node``, ``cluster``, ``cache``, ``thread``, ``cgroup``, and
  ``aggregate-number`` (newer perf: also ``cpu-count``, ``metric-threshold``, ``metricgroup``, and
  ``metric-value`` as a string).  Objects without ``event`` (metric-only lines) are skipped.
* **Human-readable**: ``[TIME] [ID [COUNT]] VALUE [UNIT] EVENT [# METRIC] [( +- VARIANCE% )] [(PCNT%)]``
  with thousands separators in the values (``1,234,567``), a header ``Performance counter stats for
  'COMMAND' (N runs):`` and, without ``-I``, ``seconds time elapsed`` / ``user`` / ``sys`` lines,
  kept as the metrics ``duration_time``, ``user_time`` and ``system_time`` (perf's own names for them).

Every format may start with the ``# started on DATE`` header of ``-o FILE``.  perf scales a
multiplexed counter (counted ``PCNT-RUNNING`` < 100 % of the time) to the whole run unless it ran
with ``--no-scale``; the percentage is kept so the reader can say so (or scale, for ``--no-scale``).

Parsing is done in bulk: lines are split once, the layout is found from the first counter line,
and the columns become numpy arrays in one conversion each; a line that does not fit raises
:class:`~pmkit.errors.InputError` naming the file and the line.  Measured on 192,000 lines of
``-I -A`` output (1,000 intervals × 64 CPUs × 3 events), CPU time of :func:`parse_perf_stat`, best
of 3 on the shared development machine: CSV 0.65 s (11 MB, ~290,000 lines/s), JSON 0.81 s (39 MB),
human 1.1 s (15 MB); the per-line loop it replaced took ~1.6 s for the CSV.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pmkit.errors import InputError

NOT_COUNTED = "<not counted>"
NOT_SUPPORTED = "<not supported>"
STATUS_OK, STATUS_NOT_COUNTED, STATUS_NOT_SUPPORTED = 0, 1, 2
STATUS_TEXT = {STATUS_NOT_COUNTED: NOT_COUNTED, STATUS_NOT_SUPPORTED: NOT_SUPPORTED}

LOCATION_KEYS = ("cpu", "core", "die", "socket", "node", "cluster", "cache", "thread", "cgroup")
"""JSON keys naming what a line's values belong to, and the location kinds of a :class:`PerfStatFile`."""

SEPARATOR_CANDIDATES = (",", ";", "\t", "|", ":", " ")
"""Separators tried, in order, when the CSV separator is not given (``-x`` takes any string)."""

_HEADER = re.compile(r"^#\s*started on (?P<date>.+?)\s*$")
_HUMAN_TITLE = re.compile(r"Performance counter stats for (?P<target>.+?)(?:\s+\((?P<runs>\d+) runs\))?:\s*$")
_HUMAN_TAIL = re.compile(r"^\s*(?P<value>[\d.,]+)(?:\s+\+-\s+(?P<spread>[\d.,]+))?\s+seconds\s+"
                         r"(?P<what>time elapsed|user|sys)(?:\s+\(\s*\+-\s*(?P<variance>[\d.,]+)\s*%\s*\))?\s*$")
_HUMAN_VARIANCE = re.compile(r"\(\s*\+-\s*(?P<variance>[\d.,]+)\s*%\s*\)")
_HUMAN_RUNNING = re.compile(r"\(\s*(?P<pcnt>[\d.,]+)\s*%\s*\)")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
_GROUPED = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_LOCATION_KINDS = (
    ("cpu", re.compile(r"^CPU-?\d+$")),
    ("cache", re.compile(r"^S\d+-D\d+-L\d+-ID\d+$")),
    ("cluster", re.compile(r"^S\d+-D\d+-CLS\d+$")),
    ("core", re.compile(r"^S\d+(?:-D\d+)?-C\d+$")),
    ("die", re.compile(r"^S\d+-D\d+$")),
    ("socket", re.compile(r"^S\d+$")),
    ("node", re.compile(r"^N\d+$")),
)
TAIL_METRICS = {"time elapsed": "duration_time", "user": "user_time", "sys": "system_time"}
"""The human format's closing lines, as the metrics perf itself calls them (all in seconds)."""


@dataclass
class PerfStatFile:
    """The counter lines of one file, columnar: row ``i`` is event ``events[event[i]]``.

    ``value`` is NaN where perf printed ``<not counted>`` or ``<not supported>`` (``status``
    says which); ``location`` indexes ``labels`` (-1: the whole machine); ``time`` is the end of
    the interval in seconds (NaN: the whole run); ``summary`` marks ``--interval-summary`` rows;
    ``variance`` is perf's ``-r`` noise in percent (NaN without ``-r``); ``running`` the percentage
    of the time the counter counted; ``line`` the 1-based line number.  ``units[e]`` is the unit
    perf printed for event ``e`` (``msec``; empty for counts).  ``extras`` holds the human
    format's closing lines by metric name: (seconds, variance %).
    """

    path: Path
    format: str
    separator: str | None
    events: list[str]
    units: list[str]
    event: np.ndarray
    value: np.ndarray
    status: np.ndarray
    location: np.ndarray
    labels: list[str]
    location_kind: str
    time: np.ndarray
    summary: np.ndarray
    variance: np.ndarray
    running: np.ndarray
    line: np.ndarray
    started: str | None = None
    target: str | None = None
    runs: int | None = None
    extras: dict[str, tuple[float, float]] = field(default_factory=dict)
    skipped_lines: int = 0

    def __len__(self) -> int:
        return len(self.value)

    @property
    def has_intervals(self) -> bool:
        return bool(np.isfinite(self.time).any())

    def totals(self) -> tuple[np.ndarray, np.ndarray]:
        """Whole-run values (events × locations, NaN where never counted) and how many intervals
        were summed into each (0 where the file gives the whole-run value itself).

        Without ``-I`` the values are the file's own; with it, the ``summary`` rows when the file
        has them, else the sum of the counted intervals (interval values are increments).
        Locations are ``labels`` in order, plus one last column for values of the whole machine.
        """
        n_loc = len(self.labels) + 1
        loc = np.where(self.location >= 0, self.location, n_loc - 1)
        whole = ~np.isfinite(self.time) | self.summary
        if self.has_intervals and self.summary.any():
            rows = self.summary
        elif self.has_intervals:
            rows = ~whole
        else:
            rows = whole
        out = np.zeros((len(self.events), n_loc))
        seen = np.zeros_like(out, dtype=bool)
        counted = np.zeros_like(out, dtype=np.int64)
        finite = rows & np.isfinite(self.value)
        np.add.at(out, (self.event[finite], loc[finite]), self.value[finite])
        np.add.at(counted, (self.event[finite], loc[finite]), 1)
        seen[self.event[finite], loc[finite]] = True
        intervals = counted if (self.has_intervals and not self.summary.any()) else np.zeros_like(counted)
        return np.where(seen, out, np.nan), intervals


def parse_perf_stat(text: str, path: Path, separator: str | None = None) -> PerfStatFile:
    """Parse one perf stat output; InputError naming the file and line if it is not one."""
    if not text.strip():
        raise InputError(path, "is empty (perf stat writes to stderr unless given -o FILE)")
    lines = text.split("\n")
    started = None
    body_start = 0
    for number, raw in enumerate(lines):
        stripped = raw.strip()
        if not stripped:
            continue
        match = _HEADER.match(stripped)
        if match and started is None:
            started = match["date"]
            body_start = number + 1
            continue
        break
    kind = detect_format(lines[body_start:], separator)
    if kind is None:
        content = [n for n in range(body_start, len(lines))
                   if lines[n].strip() and not lines[n].lstrip().startswith("#")]
        if not content:
            raise InputError(path, "holds no counter values (only perf's header; perf stat --metric-only and runs "
                             "that print nothing give such files)")
        raise InputError(path, "is not perf stat output: no line reads as a counter (VALUE, UNIT, EVENT, ...)",
                         line=content[0] + 1)
    fmt, sep = kind
    if fmt == "json":
        parsed = _parse_json(lines, body_start, path)
    elif fmt == "human":
        parsed = _parse_human(lines, body_start, path)
    else:
        parsed = _parse_csv(lines, body_start, path, sep)
    parsed.started = started
    return parsed


def detect_format(lines: list[str], separator: str | None = None) -> tuple[str, str | None] | None:
    """(``csv``/``json``/``human``, separator) of the first counter line among ``lines``, or None."""
    for raw in lines[:200]:
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("{"):
            try:
                data = json.loads(stripped)
            except (ValueError, RecursionError):
                return None
            if isinstance(data, dict) and ("counter-value" in data or "metric-value" in data or "metricgroup" in data):
                if "event" in data:
                    return "json", None
                continue
            return None
        if "Performance counter stats for" in stripped:
            return "human", None
        candidates = (separator,) if separator else SEPARATOR_CANDIDATES
        for sep in candidates:
            if sep and sep in raw and _first_layout(raw.split(sep), sep) is not None:
                return "csv", sep
        if separator is None and _human_layout(stripped) is not None:
            return "human", None
        if not _is_blank_metric(raw, separator):
            return None
    return None


def _is_blank_metric(raw: str, separator: str | None) -> bool:
    """A CSV continuation line carrying only a derived metric (``,,,,,0.25,frontend cycles idle``)."""
    for sep in (separator,) if separator else SEPARATOR_CANDIDATES[:4]:
        if sep and raw.count(sep) >= 4 and raw.lstrip().startswith(sep):
            return True
    return False


def _numeric(token: str) -> bool:
    return _NUMBER.match(token.strip()) is not None


def _value_like(token: str) -> bool:
    token = token.strip()
    return token in (NOT_COUNTED, NOT_SUPPORTED) or _numeric(token)


def location_kind(label: str) -> str:
    """What an ID prefix names: ``cpu``, ``core``, ``die``, ``socket``, ``node``, ``cache``, ``cluster``,
    or ``thread`` (``comm-tid``, anything else)."""
    for kind, pattern in _LOCATION_KINDS:
        if pattern.match(label):
            return kind
    return "thread"


@dataclass(frozen=True)
class CsvLayout:
    """Where the fields of a CSV counter line are: ``prefix`` fields before the value, of which the
    first is the interval time (``timed``), then a location (``located``) and its CPU count
    (``counted``); ``variance`` says whether ``-r``'s field follows the event name."""

    prefix: int
    timed: bool
    located: bool
    counted: bool
    variance: bool
    width: int


def csv_layout(fields: list[str]) -> CsvLayout | None:
    """The layout of one CSV counter line's fields, or None when they are not one."""
    for k in range(0, 4):
        if len(fields) < k + 5:
            return None
        value, unit, event = fields[k], fields[k + 1], fields[k + 2].strip()
        if not _value_like(value) or _numeric(unit) or not event or _numeric(event):
            continue
        rest = fields[k + 3:]
        variance = bool(rest) and rest[0].strip().endswith("%") and _numeric(rest[0].strip()[:-1])
        if variance:
            rest = rest[1:]
        if len(rest) < 2 or not _numeric(rest[0]) or not _numeric(rest[1]):
            continue
        prefix = _csv_prefix(fields[:k])
        if prefix is None:
            continue
        timed, located, counted = prefix
        return CsvLayout(k, timed, located, counted, variance, len(fields))
    return None


def _first_layout(fields: list[str], separator: str) -> CsvLayout | None:
    """The layout of a first counter line, which may hold a thread name with the separator in it."""
    layout = csv_layout(fields)
    if layout is not None:
        return layout
    for extra in range(1, min(4, len(fields) - 5)):
        for at in (0, 1):
            joined = [*fields[:at], separator.join(fields[at:at + extra + 1]), *fields[at + extra + 1:]]
            layout = csv_layout(joined)
            if layout is not None and layout.located and layout.timed == (at == 1):
                return layout
    return None


def _csv_prefix(prefix: list[str]) -> tuple[bool, bool, bool] | None:
    """(timed, located, counted) for the fields before the value, or None if they make no sense."""
    tokens = [p.strip() for p in prefix]
    timed = bool(tokens) and (tokens[0] == "summary" or _numeric(tokens[0]))
    rest = tokens[1:] if timed else tokens
    if not rest:
        return timed, False, False
    if _numeric(rest[0]) or not rest[0]:
        return None
    if len(rest) == 1:
        return timed, True, False
    if len(rest) == 2 and rest[1].isdigit():
        return timed, True, True
    return None


@dataclass
class _Rows:
    """Counter lines collected field by field before they become arrays."""

    value: list[str] = field(default_factory=list)
    unit: list[str] = field(default_factory=list)
    event: list[str] = field(default_factory=list)
    label: list[str] = field(default_factory=list)
    time: list[str] = field(default_factory=list)
    variance: list[str] = field(default_factory=list)
    running: list[str] = field(default_factory=list)
    line: list[int] = field(default_factory=list)

    def finish(self, path: Path, fmt: str, separator: str | None, *, skipped: int = 0) -> PerfStatFile:
        if not self.value:
            raise InputError(path, "holds no counter values (only perf's header, derived metrics or prose)")
        events: list[str] = []
        event_index: dict[str, int] = {}
        units: list[str] = []
        codes = np.empty(len(self.event), dtype=np.int64)
        for i, (name, unit) in enumerate(zip(self.event, self.unit, strict=True)):
            code = event_index.get(name)
            if code is None:
                code = event_index[name] = len(events)
                events.append(name)
                units.append(unit)
            elif unit and not units[code]:
                units[code] = unit
            codes[i] = code
        lines = np.asarray(self.line, dtype=np.int64)
        value, status = _values(self.value, lines, path)
        labels = sorted({label for label in self.label if label}, key=_natural)
        label_index = {label: i for i, label in enumerate(labels)}
        location = np.fromiter((label_index.get(label, -1) for label in self.label), dtype=np.int64,
                               count=len(self.label))
        kinds = {location_kind(label) for label in labels}
        kind = kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "")
        summary = np.fromiter((t == "summary" for t in self.time), dtype=bool, count=len(self.time))
        time = _floats([("" if t == "summary" else t) for t in self.time], lines, path, "interval time")
        variance = _floats([v.rstrip("%") for v in self.variance], lines, path, "variance")
        running = _floats(self.running, lines, path, "running percentage")
        return PerfStatFile(path, fmt, separator, events, units, codes, value, status, location, labels, kind,
                            time, summary, variance, running, lines, skipped_lines=skipped)


def _natural(label: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", label))


def _values(tokens: list[str], lines: np.ndarray, path: Path) -> tuple[np.ndarray, np.ndarray]:
    stripped = np.char.strip(np.asarray(tokens, dtype=str))
    status = np.zeros(len(tokens), dtype=np.int8)
    status[stripped == NOT_COUNTED] = STATUS_NOT_COUNTED
    status[stripped == NOT_SUPPORTED] = STATUS_NOT_SUPPORTED
    numeric = np.where(status == STATUS_OK, stripped, "nan")
    try:
        value = numeric.astype(float)
    except ValueError:
        bad = next(i for i, token in enumerate(numeric) if not _numeric(token) and token != "nan")
        raise InputError(path, f"expected VALUE,UNIT,EVENT: counter value {tokens[bad].strip()!r} is not a number, "
                         f"{NOT_COUNTED} or {NOT_SUPPORTED}", line=int(lines[bad])) from None
    if not np.isfinite(value[status == STATUS_OK]).all():
        bad = int(np.nonzero((status == STATUS_OK) & ~np.isfinite(value))[0][0])
        raise InputError(path, f"counter value {tokens[bad].strip()!r} is not a finite number", line=int(lines[bad]))
    return value, status


def _floats(tokens: list[str], lines: np.ndarray, path: Path, what: str) -> np.ndarray:
    """Numbers where given, NaN where the field is empty; InputError naming the line of a bad one."""
    stripped = np.char.strip(np.asarray(tokens, dtype=str)) if tokens else np.zeros(0, dtype=str)
    filled = np.where(stripped == "", "nan", stripped)
    try:
        return filled.astype(float)
    except ValueError:
        bad = next(i for i, token in enumerate(filled) if token != "nan" and not _numeric(token))
        raise InputError(path, f"{what} {tokens[bad].strip()!r} is not a number", line=int(lines[bad])) from None


def _parse_csv(lines: list[str], start: int, path: Path, separator: str | None) -> PerfStatFile:
    """All counter lines at once: split every line, find the layout from the first, take the columns."""
    assert separator is not None
    numbered = [(n, raw) for n in range(start, len(lines))
                if (raw := lines[n]).strip() and not raw.lstrip().startswith("#")]
    split = [raw.split(separator) for _, raw in numbered]
    layout: CsvLayout | None = None
    first = 0
    while layout is None and first < len(split):
        layout = _first_layout(split[first], separator)
        if layout is None:
            if not _is_blank_metric(numbered[first][1], separator):
                raise InputError(path, f"is not a perf stat CSV line (separator {separator!r}): "
                                 f"{numbered[first][1].strip()[:80]!r}", line=numbered[first][0] + 1)
            first += 1
    if layout is None:
        raise InputError(path, "holds no counter values (only perf's derived metrics)")
    k = layout.prefix
    kept: list[list[str]] = []
    line_numbers: list[int] = []
    skipped = first
    for (number, _), fields in zip(numbered[first:], split[first:], strict=True):
        if len(fields) != layout.width:
            if len(fields) > k + 2 and not fields[k].strip() and not fields[k + 2].strip():
                skipped += 1  # a further derived metric of the line before
                continue
            fields = _refit(fields, layout, separator, path, number + 1)
        elif not fields[k].strip() and not fields[k + 2].strip():
            skipped += 1
            continue
        kept.append(fields)
        line_numbers.append(number + 1)
    columns = list(zip(*kept, strict=True)) if kept else [()] * layout.width
    rows = _Rows()
    rows.value = list(columns[k])
    rows.unit = [u.strip() for u in columns[k + 1]]
    rows.event = [e.strip() for e in columns[k + 2]]
    empty = [i for i, e in enumerate(rows.event) if not e]
    if empty:
        bad = empty[0]
        raise InputError(path, f"expected VALUE{separator}UNIT{separator}EVENT at field {k + 1}, got "
                         f"{separator.join(kept[bad][k:k + 3])!r}", line=line_numbers[bad])
    blank = [""] * len(kept)
    rows.time = [t.strip() for t in columns[0]] if layout.timed else blank
    rows.label = [c.strip() for c in columns[1 if layout.timed else 0]] if layout.located else blank
    offset = k + 3
    if layout.variance:
        rows.variance = list(columns[offset])
        offset += 1
    else:
        rows.variance = blank
    rows.running = list(columns[offset + 1]) if layout.width > offset + 1 else blank
    rows.line = line_numbers
    return rows.finish(path, "csv", separator, skipped=skipped)


def _refit(fields: list[str], layout: CsvLayout, separator: str, path: Path, line: int) -> list[str]:
    """A line with more fields than the layout: a thread name holding the separator, joined back."""
    extra = len(fields) - layout.width
    if extra > 0 and layout.located:
        at = 1 if layout.timed else 0
        joined = [*fields[:at], separator.join(fields[at:at + extra + 1]), *fields[at + extra + 1:]]
        if csv_layout(joined) == layout:
            return joined
    raise InputError(path, f"has {len(fields)} fields separated by {separator!r} where the first counter line "
                     f"has {layout.width}", line=line)


def _parse_json(lines: list[str], start: int, path: Path) -> PerfStatFile:
    numbered = [(n, lines[n].strip()) for n in range(start, len(lines))
                if lines[n].strip() and not lines[n].lstrip().startswith("#")]
    try:
        objects = json.loads("[" + ",".join(text for _, text in numbered) + "]")
    except (ValueError, RecursionError):
        objects = []
        for number, text in numbered:
            try:
                objects.append(json.loads(text))
            except (ValueError, RecursionError) as exc:
                raise InputError(path, f"is not a JSON object per line: {exc}", line=number + 1) from None
    rows = _Rows()
    skipped = 0
    for (number, _), data in zip(numbered, objects, strict=True):
        if not isinstance(data, dict):
            raise InputError(path, "is not a JSON object per line (perf stat -j)", line=number + 1)
        if "event" not in data:
            skipped += 1  # metric-only lines and metric-group headers of newer perf
            continue
        value = data.get("counter-value")
        event = data.get("event")
        if not isinstance(event, str) or not event.strip():
            raise InputError(path, f'"event" must be a non-empty string, got {event!r}', line=number + 1)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(path, f'"counter-value" of {event} must be a number or a string, got {value!r}',
                             line=number + 1)
        label = ""
        for key in LOCATION_KEYS:
            if key in data:
                label = _json_label(key, data[key])
                break
        rows.value.append(str(value))
        rows.unit.append(str(data.get("unit") or ""))
        rows.event.append(event.strip())
        rows.time.append(_json_field(data, "interval", path, number))
        rows.label.append(label)
        rows.variance.append(_json_field(data, "variance", path, number))
        rows.running.append(_json_field(data, "pcnt-running", path, number))
        rows.line.append(number + 1)
    return rows.finish(path, "json", None, skipped=skipped)


def _json_label(key: str, value: object) -> str:
    text = str(value).strip()
    if key == "cpu" and text.lstrip("-").isdigit():
        return f"CPU{text}"
    return text


def _json_field(data: dict, key: str, path: Path, number: int) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(path, f'"{key}" must be a number, got {value!r}', line=number + 1)
    return str(value)


def _human_number(token: str) -> str | None:
    """A human-format value as plain digits (``1,234,567`` → ``1234567``), or None if it is none."""
    token = token.strip()
    if token in (NOT_COUNTED, NOT_SUPPORTED, "<not_counted>", "<not_supported>"):
        return token.replace("_", " ")
    if _GROUPED.match(token):
        return token.replace(",", "")
    return token if _numeric(token) else None


def _human_layout(line: str) -> tuple[list[str], str, str, str, str, str] | None:
    """(prefix tokens, value, unit, event, variance, running) of one human counter line, or None."""
    body = line.split("#", 1)[0] if "#" in line else line
    tail = line[len(body):]
    variance_match = _HUMAN_VARIANCE.search(tail) or _HUMAN_VARIANCE.search(body)
    variance = variance_match["variance"] if variance_match else ""
    cleaned = _HUMAN_VARIANCE.sub(" ", tail)
    running_match = _HUMAN_RUNNING.search(cleaned) or _HUMAN_RUNNING.search(_HUMAN_VARIANCE.sub(" ", body))
    running = running_match["pcnt"] if running_match else ""
    body = _HUMAN_RUNNING.sub(" ", _HUMAN_VARIANCE.sub(" ", body))
    tokens = body.replace(NOT_COUNTED, "<not_counted>").replace(NOT_SUPPORTED, "<not_supported>").split()
    if len(tokens) < 2:
        return None
    event = tokens[-1]
    if _human_number(event) is not None:
        return None
    if len(tokens) >= 3 and _human_number(tokens[-2]) is None and _human_number(tokens[-3]) is not None:
        value_at, unit = len(tokens) - 3, tokens[-2]
    elif _human_number(tokens[-2]) is not None:
        value_at, unit = len(tokens) - 2, ""
    else:
        return None
    value = _human_number(tokens[value_at])
    assert value is not None
    prefix = tokens[:value_at]
    if _csv_prefix(prefix) is None:
        return None
    return prefix, value, unit, event, variance.replace(",", "."), running.replace(",", ".")


def _parse_human(lines: list[str], start: int, path: Path) -> PerfStatFile:
    rows = _Rows()
    skipped = 0
    target: str | None = None
    runs: int | None = None
    extras: dict[str, tuple[float, float]] = {}
    prose = False
    for number in range(start, len(lines)):
        raw = lines[number]
        stripped = raw.strip()
        if not stripped:
            prose = False
            continue
        if stripped.startswith("#"):
            continue
        title = _HUMAN_TITLE.search(stripped)
        if title:
            target = title["target"].strip().strip("'")
            runs = int(title["runs"]) if title["runs"] else None
            continue
        tail = _HUMAN_TAIL.match(raw)
        if tail:
            variance = float(tail["variance"]) if tail["variance"] else math.nan
            extras[TAIL_METRICS[tail["what"]]] = (float(tail["value"].replace(",", "")), variance)
            continue
        layout = None if prose else _human_layout(raw)
        if layout is None:
            if stripped[0].isdigit() or stripped.startswith("<"):
                raise InputError(path, f"is not a perf stat counter line: {stripped[:80]!r}", line=number + 1)
            prose = True  # perf's advice ("Some events weren't counted. ...") and the lines under it
            skipped += 1
            continue
        prefix, value, unit, event, variance, running = layout
        timed = bool(prefix) and (prefix[0] == "summary" or _numeric(prefix[0]))
        located = len(prefix) > (1 if timed else 0)
        rows.value.append(value)
        rows.unit.append(unit)
        rows.event.append(event)
        rows.time.append(prefix[0] if timed else "")
        rows.label.append(prefix[1 if timed else 0] if located else "")
        rows.variance.append(variance)
        rows.running.append(running)
        rows.line.append(number + 1)
    if not rows.value and extras:
        raise InputError(path, "holds only the elapsed time, no counter values")
    parsed = rows.finish(path, "human", None, skipped=skipped)
    parsed.target, parsed.runs, parsed.extras = target, runs, extras
    return parsed
