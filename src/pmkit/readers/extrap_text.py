"""Reader ``extrap-text``: Extra-P's line-based text input format.

The format, as Extra-P's own text reader accepts it::

    # comment
    PARAMETER p                     (one line per parameter, or several names on one line)
    PARAMETER n
    POINTS ( 32 1000 ) ( 64 1000 )  (one or more points per line; for one parameter also
    POINTS ( 128 1000 )              ``POINTS 32 64 128`` or ``POINTS (32) (64)``)
    METRIC time                     (optional; DATA before any METRIC belong to the unnamed metric "")
    REGION main->solve              (a call path)
    DATA 4.1 3.9 4.0                (repetitions at the first point, then the next point, ...)

METRIC and REGION lines restart the DATA sequence at the first point.  Like Extra-P, points
listed twice are kept once and every (REGION, METRIC) with DATA must cover every point.  Unlike
Extra-P, more than four parameters are accepted, keywords may be indented, and a malformed
line is reported with its (1-based) line number instead of being half-read.

The file is parsed in pieces of whole lines (:func:`~pmkit.readers.parsing.text_chunks`), each
in bulk: numpy finds the lines, their keywords and their tokens; ``DATA`` and ``REGION`` lines
never pass through a Python call of their own (other lines and lines with unusual whitespace
or non-ASCII bytes do, with Python's own ``str.split`` rules).  Every check of the line-by-line
reading it replaced is made on the arrays, and the first offending line is reported, so the
Experiment and the errors are those of reading line by line (``tests/test_readers_bulk.py``
compares both on generated files).  Measured in ``bench/read_speed.py``: see ``bench/README.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pmkit.errors import InputError, excerpt
from pmkit.experiment import CallTree, Experiment, ExperimentBuilder
from pmkit.hookspecs import hookimpl
from pmkit.readers.extrap_records import ALLOW_MISSING_OPTION, Point, check_callpath, incomplete_error
from pmkit.readers.limits import MAX_INPUT_OPTION, Limits
from pmkit.readers.parsing import first_content_line, parse_float, read_head, text_chunks

KEYWORDS = ("PARAMETER", "POINTS", "METRIC", "REGION", "DATA")
_POINT_GROUP = re.compile(r"\(([^()]*)\)")

_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True
"""The bytes ``bytes.split()`` splits on."""
_ODD = np.zeros(256, dtype=bool)
_ODD[0x1C:0x20] = True
_ODD[0x80:] = True
"""Bytes that ``str.split()`` may treat differently (more whitespace) or that are not ASCII: a line
holding one is read by Python, not in bulk."""


class ExtrapTextReader:
    """Reads Extra-P text input files (PARAMETER / POINTS / METRIC / REGION / DATA lines)."""

    name = "extrap-text"
    description = "Extra-P text input: PARAMETER, POINTS, METRIC, REGION and DATA lines"
    options = (ALLOW_MISSING_OPTION, MAX_INPUT_OPTION)

    def sniff(self, path: Path) -> bool:
        """True if the first line that is not blank or a comment starts with an Extra-P keyword."""
        head = read_head(Path(path))
        if head is None:
            return False
        first = first_content_line(head)
        return first is not None and first.split(maxsplit=1)[0] in KEYWORDS

    def read(self, path: Path, **options: Any) -> Experiment:
        path = Path(path)
        parser = _TextParser(path)
        for line, piece in text_chunks(path, Limits.from_options(options)):
            parser.feed(line, piece)
        return parser.finish(bool(options.get(ALLOW_MISSING_OPTION.name, False)))


class _TextParser:
    """Extra-P's reading state (parameters, points, current metric and region, position in the DATA
    sequence) carried from piece to piece, and the DATA read so far as arrays."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parameters: list[str] = []
        self.points: dict[Point, int] = {}
        self.point_list: list[Point] = []
        self.notes: list[str] = []
        self.tree = CallTree()  # REGION names in order of declaration; a call path's code is its index
        self.metric_codes: dict[str, int] = {}
        self.metric_names: list[str] = []
        self.declared: list[tuple[int, str]] = []  # (line, metric) where each metric was declared
        self.callpath = -1  # code of the current REGION; -1 before the first
        self.metric = -1  # code of the current METRIC; -1 before the first (DATA then belong to "")
        self.position = 0  # DATA lines since the last REGION or METRIC line
        self.pair = -1  # the current (REGION, METRIC) pair once it has DATA
        self.pairs = 0
        self.seen: dict[int, np.ndarray] = {}  # per metric code: first DATA line of each REGION code (0: none)
        self.pair_callpath: list[np.ndarray] = []
        self.pair_metric: list[np.ndarray] = []
        self.pair_line: list[np.ndarray] = []
        self.data_pair: list[np.ndarray] = []
        self.data_point: list[np.ndarray] = []
        self.data_count: list[np.ndarray] = []
        self.values: list[np.ndarray] = []

    def _name(self, code: Any) -> str:
        return self.tree[int(code)].path

    def metric_code(self, name: str) -> int:
        code = self.metric_codes.get(name)
        if code is None:
            code = self.metric_codes[name] = len(self.metric_names)
            self.metric_names.append(name)
        return code

    # -- one piece of whole lines -------------------------------------------------------------

    def feed(self, first_line: int, piece: bytes) -> None:
        """Parse one piece (whole lines, the first numbered ``first_line``); InputError at the first
        offending line, exactly as reading the file line by line reports it."""
        lines = _Lines(piece, first_line)
        counts_before = (len(self.parameters), len(self.point_list))
        events = self._python_lines(lines)
        self._bulk_regions(lines, events)
        stop = events.stop
        resets = self._resets(events, stop)
        data = _Data(lines, events, stop)
        state = self._state(data, resets, events, counts_before, stop)
        errors = [] if events.error is None else [(events.error[0], 9, events.error[1])]
        values = self._check(data, state, errors)
        if errors:
            raise min(errors, key=lambda e: (e[0], e[1]))[2]()
        self._commit(events, resets, data, state, values)

    def _python_lines(self, lines: _Lines) -> _Events:
        """PARAMETER, POINTS and METRIC lines (and every line with unusual bytes), one by one, until
        the first that fails."""
        events = _Events()
        for index in lines.other:
            number = int(lines.number[index])
            text = lines.text(index).strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split(maxsplit=1)
            keyword, rest = parts[0], parts[1] if len(parts) > 1 else ""
            try:
                self._line(events, keyword, rest, number)
            except InputError as exc:
                events.fail(number, exc)
                break
        return events

    def _line(self, events: _Events, keyword: str, rest: str, number: int) -> None:
        if keyword == "DATA":
            events.data_lines.append(number)
            events.data_tokens.append(rest.split())
        elif keyword == "REGION":
            name = check_callpath(" ".join(rest.split()), self.path, line=number)
            events.region_lines.append(number)
            events.region_names.append(name)
        elif keyword == "METRIC":
            events.metric_lines.append(number)
            events.metric_names.append(" ".join(rest.split()))
        elif keyword in ("PARAMETER", "POINTS"):
            (self._parameter if keyword == "PARAMETER" else self._points)(rest, number)
            events.count_lines.append(number)
            events.count_parameters.append(len(self.parameters))
            events.count_points.append(len(self.point_list))
        else:
            hint = f" (keywords are upper case: {keyword.upper()})" if keyword.upper() in KEYWORDS else ""
            raise InputError(self.path, f"unknown keyword {excerpt(keyword)}; expected one of "
                             f"{', '.join(KEYWORDS)}{hint}", line=number)

    def _parameter(self, rest: str, line: int) -> None:
        names = rest.split()
        if not names:
            raise InputError(self.path, "PARAMETER line names no parameter", line=line)
        if self.points:
            raise InputError(self.path, "PARAMETER after POINTS: declare every parameter before the points",
                             line=line)
        for name in names:
            if name in self.parameters:
                raise InputError(self.path, f"parameter {excerpt(name)} is declared twice", line=line)
            self.parameters.append(name)

    def _points(self, rest: str, line: int) -> None:
        if not self.parameters:
            raise InputError(self.path, "POINTS before any PARAMETER line", line=line)
        n = len(self.parameters)
        if "(" in rest or ")" in rest:
            groups = _POINT_GROUP.findall(rest)
            if not groups or _POINT_GROUP.sub(" ", rest).strip():
                raise InputError(self.path, f"malformed POINTS line {excerpt(rest)}: write each point as "
                                 "( v1 v2 ... )", line=line)
            coordinates = [group.split() for group in groups]
        else:
            tokens = rest.split()
            if not tokens:
                raise InputError(self.path, "POINTS line lists no points", line=line)
            if n != 1:
                raise InputError(self.path, f"POINTS without parentheses lists one-parameter points, but there "
                                 f"are {n} parameters {self.parameters}; write each point as ( v1 v2 ... )",
                                 line=line)
            coordinates = [[token] for token in tokens]
        for tokens in coordinates:
            if len(tokens) != n:
                shown = excerpt(" ".join(tokens), quote=False)
                raise InputError(self.path, f"point ({shown}) has {len(tokens)} coordinates but there are {n} "
                                 f"parameters {self.parameters}", line=line)
            point = tuple(parse_float(t, self.path, "point coordinate", line=line) for t in tokens)
            if point in self.points:
                self.notes.append(f"line {line}: point ({' '.join(tokens)}) is listed twice; kept once, as "
                                  "Extra-P does")
                continue
            self.points[point] = line
            self.point_list.append(point)

    def _bulk_regions(self, lines: _Lines, events: _Events) -> None:
        """The plain REGION lines, merged into the events in line order; a bad call path is an error."""
        names = lines.region_names()
        if not names:
            return
        numbers = lines.number[lines.region]
        bad = [i for i, name in enumerate(names) if name.startswith("->") or name.endswith("->") or "->->" in name]
        if bad and numbers[bad[0]] < events.stop:
            number, name = int(numbers[bad[0]]), names[bad[0]]
            events.fail(number, _failure(lambda: check_callpath(name, self.path, line=number))())
        if events.region_lines:
            merged = np.concatenate([numbers, np.asarray(events.region_lines, dtype=np.int64)])
            order = np.argsort(merged, kind="stable")
            every = names + events.region_names
            events.region_lines = merged[order].tolist()
            events.region_names = [every[i] for i in order.tolist()]
        else:
            events.region_lines, events.region_names = numbers, names

    def _resets(self, events: _Events, stop: float) -> _Resets:
        """REGION and METRIC lines before ``stop``: each starts a new (REGION, METRIC) sequence."""
        region_lines = np.asarray(events.region_lines, dtype=np.int64)
        keep = int(np.searchsorted(region_lines, stop))
        region_codes = self.tree.add_many(events.region_names[:keep])
        metric_lines = np.asarray(events.metric_lines, dtype=np.int64)
        metric_lines = metric_lines[metric_lines < stop]
        metric_codes = np.array([self.metric_code(m) for m in events.metric_names[:len(metric_lines)]],
                                dtype=np.int64)
        line = np.concatenate([region_lines[:keep], metric_lines])
        is_region = np.r_[np.ones(keep, dtype=bool), np.zeros(len(metric_lines), dtype=bool)]
        code = np.concatenate([region_codes, metric_codes])
        order = np.argsort(line, kind="stable")
        line, is_region, code = line[order], is_region[order], code[order]
        index = np.arange(len(line))
        last_region = np.maximum.accumulate(np.where(is_region, index, -1))
        last_metric = np.maximum.accumulate(np.where(~is_region, index, -1))
        callpath = np.where(last_region >= 0, code[np.maximum(last_region, 0)], self.callpath)
        metric = np.where(last_metric >= 0, code[np.maximum(last_metric, 0)], self.metric)
        return _Resets(line, callpath, metric, metric_lines, [self.metric_names[c] for c in metric_codes.tolist()])

    def _state(self, data: _Data, resets: _Resets, events: _Events, before: tuple[int, int],
               stop: float) -> _State:
        """For each DATA line: its call path and metric codes, parameter and point counts, and its
        position in its (REGION, METRIC) sequence — what Extra-P's reader knows when it reaches it."""
        line = data.line
        group = np.searchsorted(resets.line, line, side="right") - 1
        inside = group >= 0
        at = np.maximum(group, 0)
        callpath = np.where(inside, resets.callpath[at] if len(resets.line) else 0, self.callpath)
        metric = np.where(inside, resets.metric[at] if len(resets.line) else 0, self.metric)
        count_lines = np.asarray(events.count_lines, dtype=np.int64)
        count_lines = count_lines[count_lines < stop]
        j = np.searchsorted(count_lines, line, side="right") - 1
        parameters = np.asarray(events.count_parameters[:len(count_lines)] or [0], dtype=np.int64)
        points = np.asarray(events.count_points[:len(count_lines)] or [0], dtype=np.int64)
        n_parameters = np.where(j >= 0, parameters[np.maximum(j, 0)], before[0])
        n_points = np.where(j >= 0, points[np.maximum(j, 0)], before[1])
        opens = np.r_[True, group[1:] != group[:-1]] if len(line) else np.zeros(0, dtype=bool)
        index = np.arange(len(line))
        position = index - np.maximum.accumulate(np.where(opens, index, 0))
        position = position + np.where(group < 0, self.position, 0)
        return _State(group, callpath, metric, n_parameters, n_points, position)

    def _key_metric(self, metric: np.ndarray) -> np.ndarray:
        """Metric codes as the table keys them: DATA before any METRIC belong to the metric ""."""
        if (metric >= 0).all():
            return metric
        return np.where(metric >= 0, metric, self.metric_code(""))

    def _check(self, data: _Data, state: _State, errors: list[tuple[int, int, Callable[[], InputError]]]
               ) -> np.ndarray:
        """Every check of a DATA line, made on all of them at once; the first failure of each kind
        goes to ``errors`` as (line, order of the check within a line, error).  Returns the values."""
        if not len(data.line):
            return np.empty(0)
        path, line = self.path, data.line

        def first(mask: np.ndarray, order: int, make: Callable[[int], InputError]) -> None:
            hits = np.flatnonzero(mask)
            if hits.size:
                i = int(hits[0])
                errors.append((int(line[i]), order, lambda: make(i)))

        first(state.parameters == 0, 1, lambda i: InputError(
            path, "DATA before any PARAMETER line: the file has no parameters", line=int(line[i])))
        first(state.callpath < 0, 2, lambda i: InputError(
            path, "DATA before any REGION line: the values belong to no call path", line=int(line[i])))
        first(data.count == 0, 3, lambda i: InputError(path, "DATA line has no values", line=int(line[i])))
        values, bad = _floats(data.tokens)
        if bad is not None:
            i = int(np.searchsorted(np.cumsum(data.count), bad, side="right"))
            token = data.tokens[bad]
            text = token.decode() if isinstance(token, bytes) else token
            errors.append((int(line[i]), 4, _failure(lambda: parse_float(text, path, "DATA value", line=int(line[i])))))
        metric = self._key_metric(state.metric)
        first(state.position >= state.points, 5, lambda i: InputError(
            path, f"too many DATA lines for region {excerpt(self._name(state.callpath[i]))}, metric "
            f"{excerpt(self.metric_names[int(metric[i])])}: there are {int(state.points[i])} POINTS",
            line=int(line[i])))
        prior = self._prior(state.callpath, metric, state.position, line)
        first(prior > 0, 6, lambda i: InputError(
            path, f"region {excerpt(self._name(state.callpath[i]))}, metric "
            f"{excerpt(self.metric_names[int(metric[i])])} already has DATA for point 1 (line {int(prior[i])}); "
            "a region may appear only once per metric",
            line=int(line[i])))
        return values

    def _prior(self, callpath: np.ndarray, metric: np.ndarray, position: np.ndarray, line: np.ndarray) -> np.ndarray:
        """For each DATA line that opens a (REGION, METRIC) pair, the first DATA line the pair had
        before (0 if none): a region may appear only once per metric."""
        prior = np.zeros(len(line), dtype=np.int64)
        opens = np.flatnonzero((position == 0) & (callpath >= 0))
        if not opens.size:
            return prior
        cp, key_metric = callpath[opens], metric[opens]
        for code, seen in self.seen.items():
            rows = np.flatnonzero(key_metric == code)
            known = rows[cp[rows] < len(seen)]
            prior[opens[known]] = seen[cp[known]]
        key = key_metric * (len(self.tree) + 1) + cp
        order = np.argsort(key, kind="stable")
        again = np.r_[False, key[order][1:] == key[order][:-1]]
        if again.any():
            first = np.maximum.accumulate(np.where(~again, np.arange(len(order)), 0))
            rows = opens[order[again]]
            earlier = line[opens[order[first[again]]]]
            prior[rows] = np.where(prior[rows] > 0, prior[rows], earlier)
        return prior

    def _commit(self, events: _Events, resets: _Resets, data: _Data, state: _State, values: np.ndarray) -> None:
        """Keep a piece that passed every check: its DATA as arrays, and the state for the next piece."""
        self.declared += zip(resets.metric_lines.tolist(), resets.metric_names, strict=True)
        if len(resets.line):
            self.callpath, self.metric = int(resets.callpath[-1]), int(resets.metric[-1])
        if not len(data.line):
            if len(resets.line):
                self.position, self.pair = 0, -1
            return
        if (state.metric < 0).any():
            self.declared.append((int(data.line[np.argmax(state.metric < 0)]), ""))
        metric = self._key_metric(state.metric)
        opens = state.position == 0
        pair = np.where(opens, np.cumsum(opens) - 1 + self.pairs, -1)
        pair = np.maximum.accumulate(pair)
        pair = np.where(pair >= 0, pair, self.pair)
        cp, key, first_line = state.callpath[opens], metric[opens], data.line[opens]
        for code in np.unique(key).tolist():
            rows = key == code
            seen = self.seen.get(code, np.zeros(0, dtype=np.int64))
            if len(seen) < len(self.tree):
                seen = np.concatenate([seen, np.zeros(len(self.tree) - len(seen), dtype=np.int64)])
            seen[cp[rows]] = first_line[rows]
            self.seen[code] = seen
        self.pair_callpath.append(cp.astype(np.int32))
        self.pair_metric.append(key.astype(np.int32))
        self.pair_line.append(first_line)
        self.pairs += int(opens.sum())
        self.data_pair.append(pair.astype(np.int32))
        self.data_point.append(state.position.astype(np.int32))
        self.data_count.append(data.count.astype(np.int32))
        self.values.append(values)
        if state.group[-1] == len(resets.line) - 1:  # the last sequence goes on in the next piece
            self.position, self.pair = int(state.position[-1]) + 1, int(pair[-1])
        else:
            self.position, self.pair = 0, -1

    # -- the end of the file --------------------------------------------------------------------

    def finish(self, allow_missing: bool) -> Experiment:
        """The Experiment, after Extra-P's end-of-file checks."""
        if not self.parameters:
            raise InputError(self.path, "no PARAMETER line: the file defines no parameters")
        if not self.points:
            raise InputError(self.path, "no POINTS line: the file defines no measurement points")
        if not self.pairs:
            raise InputError(self.path, "no DATA lines: the file holds no measured values")
        pair_callpath = np.concatenate(self.pair_callpath)
        pair_metric = np.concatenate(self.pair_metric)
        data_pair = np.concatenate(self.data_pair)
        have = np.bincount(data_pair, minlength=self.pairs)
        short = np.flatnonzero(have < len(self.point_list))
        if short.size and not allow_missing:
            i = int(short[0])
            raise incomplete_error(self.path, self._name(pair_callpath[i]), self.metric_names[int(pair_metric[i])],
                                   int(have[i]), self.point_list, self.point_list[int(have[i]):], self.parameters,
                                   int(np.concatenate(self.pair_line)[i]))
        builder = ExperimentBuilder(self.parameters, source=str(self.path), callpaths=self.tree)
        builder.provenance.reader = ExtrapTextReader.name
        for point in self.point_list:
            builder.add_point(point)
        for name in dict.fromkeys(name for _, name in sorted(self.declared, key=lambda d: d[0])):
            builder.add_metric(name)
        count, point, values = (_joined(parts) for parts in (self.data_count, self.data_point, self.values))
        callpath = pair_callpath[data_pair]
        metric = pair_metric[data_pair]
        del data_pair
        codes = np.unique(metric)
        for code in codes.tolist():
            rows = slice(None) if len(codes) == 1 else metric == code
            chosen = values if len(codes) == 1 else values[np.repeat(rows, count)]
            builder.add_block(self.metric_names[code], callpath[rows], point[rows], chosen, count[rows])
        try:
            experiment = builder.build()
        except ValueError as exc:
            raise InputError(self.path, str(exc)) from None
        experiment.provenance.notes.extend(self.notes)
        return experiment


class _Events:
    """What the lines read through Python set: per kind, their line numbers and content; and the
    first error among them, as (line, function making the error)."""

    def __init__(self) -> None:
        self.region_lines: Any = []
        self.region_names: list[str] = []
        self.metric_lines: list[int] = []
        self.metric_names: list[str] = []
        self.count_lines: list[int] = []
        self.count_parameters: list[int] = []
        self.count_points: list[int] = []
        self.data_lines: list[int] = []
        self.data_tokens: list[list[str]] = []
        self.error: tuple[int, Callable[[], InputError]] | None = None

    @property
    def stop(self) -> float:
        """The line of the first error (infinity if none): nothing at or after it counts."""
        return float("inf") if self.error is None else self.error[0]

    def fail(self, line: int, exc: InputError) -> None:
        if self.error is None or line < self.error[0]:
            self.error = (line, lambda: exc)


class _Resets:
    """REGION and METRIC lines in order, with the call path and metric codes current after each."""

    def __init__(self, line: np.ndarray, callpath: np.ndarray, metric: np.ndarray, metric_lines: np.ndarray,
                 metric_names: list[str]) -> None:
        self.line, self.callpath, self.metric = line, callpath, metric
        self.metric_lines, self.metric_names = metric_lines, metric_names


class _State:
    """Per DATA line: its sequence (index of the REGION/METRIC line before it in the piece, -1 if
    that came in an earlier piece), call path and metric codes, counts of parameters and points so
    far, and its position in the sequence."""

    def __init__(self, group: np.ndarray, callpath: np.ndarray, metric: np.ndarray, parameters: np.ndarray,
                 points: np.ndarray, position: np.ndarray) -> None:
        self.group, self.callpath, self.metric = group, callpath, metric
        self.parameters, self.points, self.position = parameters, points, position


class _Data:
    """The DATA lines before the first error, in order: line numbers, value counts, the tokens."""

    def __init__(self, lines: _Lines, events: _Events, stop: float) -> None:
        number = lines.number[lines.data]
        keep = int(np.searchsorted(number, stop))
        chosen = np.flatnonzero(lines.data)[:keep]
        number, count = number[:keep], lines.tokens[chosen] - 1
        tokens: list[Any] = lines.words_after_keyword(chosen, b"DATA")
        odd = [(n, t) for n, t in zip(events.data_lines, events.data_tokens, strict=True) if n < stop]
        if odd:  # lines read through Python join the bulk ones in line order
            ends = np.cumsum(count)
            per_line = [tokens[a:b] for a, b in zip((ends - count).tolist(), ends.tolist(), strict=True)]
            merged = sorted([*zip(number.tolist(), per_line, strict=True), *odd], key=lambda e: e[0])
            number = np.array([n for n, _ in merged], dtype=np.int64)
            count = np.array([len(t) for _, t in merged], dtype=np.int64)
            tokens = [token for _, t in merged for token in t]
        self.line, self.count, self.tokens = number, count, tokens


class _Lines:
    """One piece's lines, found with numpy: where each starts and ends, its tokens (by the
    whitespace of ``bytes.split``), and which are plain DATA or REGION lines (read in bulk) and which
    go through Python."""

    def __init__(self, piece: bytes, first_line: int) -> None:
        self.piece = piece
        a = np.frombuffer(piece, dtype=np.uint8)
        self.bytes = a
        n = len(a)
        newlines = np.flatnonzero(a == 10)
        starts = np.r_[0, newlines + 1]
        ends = np.r_[newlines, n]
        if starts[-1] == n:  # the piece ends with a newline: there is no line after it
            starts, ends = starts[:-1], ends[:-1]
        self.starts, self.ends = starts, ends
        self.number = first_line + np.arange(len(starts), dtype=np.int64)
        space = _SPACE[a]
        begins = ~space
        begins[1:] &= space[:-1]
        running = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(begins, out=running[1:])
        self.tokens = running[ends] - running[starts]
        length = ends - starts
        plain = np.ones(len(starts), dtype=bool)
        odd = _ODD[a]
        if odd.any():
            np.cumsum(odd, out=running[1:])
            plain = running[ends] == running[starts]
        self.data = plain & self._keyword(b"DATA", length)
        self.region = plain & self._keyword(b"REGION", length) & (self.tokens >= 2)
        self.other = np.flatnonzero(~self.data & ~self.region & (self.tokens > 0)).tolist()

    def _keyword(self, word: bytes, length: np.ndarray) -> np.ndarray:
        """Lines whose first bytes are ``word``, followed by whitespace or the end of the line."""
        a, k = self.bytes, len(word)
        found = np.flatnonzero(length >= k)
        out = np.zeros(len(length), dtype=bool)
        if not found.size:
            return out
        s = self.starts[found]
        ok = np.ones(len(found), dtype=bool)
        for offset, byte in enumerate(word):
            ok &= a[s + offset] == byte
        after = np.where(length[found] > k, a[np.minimum(s + k, len(a) - 1)], 32)
        ok &= _SPACE[after]
        out[found[ok]] = True
        return out

    def text(self, index: int) -> str:
        return self.piece[self.starts[index]:self.ends[index]].decode("utf-8")

    def after_keyword(self, lines: np.ndarray, keyword: bytes) -> bytes:
        """The bytes of the given lines (each starting with ``keyword``) after their keyword, each line
        with its newline, in order: their tokens are this text's ``split()``.

        The lines' bytes are picked with a mask made by ``np.repeat`` of (skipped, kept) runs, not by
        splitting the whole piece into words and gathering the lines' words from an object array:
        ``pmkit.read`` of the 100,000-series two-parameter file 1.98–2.17 → 1.23–1.59 s CPU (fresh
        processes alternated; a mask from a cumulative sum over the piece took 9 ms a 4 MB piece against
        the runs' 3–4.5), ``bench/README.md`` §12."""
        n = len(self.bytes)
        bounds = np.empty(2 * len(lines) + 2, dtype=np.int64)
        bounds[0], bounds[-1] = 0, n
        bounds[1:-1:2] = self.starts[lines] + len(keyword)  # a chosen line holds at least its keyword
        bounds[2:-1:2] = np.minimum(self.ends[lines] + 1, n)  # one past the newline, before the next line
        kept = np.zeros(len(bounds) - 1, dtype=bool)
        kept[1::2] = True
        return self.bytes[np.repeat(kept, np.diff(bounds))].tobytes()

    def words_after_keyword(self, lines: np.ndarray, keyword: bytes) -> list[bytes]:
        """The tokens of the given lines after their keyword, in order, as one list."""
        return self.after_keyword(lines, keyword).split()

    def region_names(self) -> list[str]:
        """The call path of each plain REGION line, its tokens joined by single spaces."""
        chosen = np.flatnonzero(self.region)
        if not chosen.size:
            return []
        if (self.tokens[chosen] == 2).all():  # plain lines are ASCII: str.split() splits them as bytes.split()
            return self.after_keyword(chosen, b"REGION").decode("ascii").split()
        words = self.words_after_keyword(chosen, b"REGION")
        ends = np.cumsum(self.tokens[chosen] - 1)
        return [b" ".join(words[a:b]).decode("utf-8") for a, b in zip((ends - self.tokens[chosen] + 1).tolist(),
                                                                       ends.tolist(), strict=True)]


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The pieces' arrays as one, the list emptied as it goes (so both are never held whole)."""
    out = np.concatenate(parts)
    parts.clear()
    return out


def _failure(call: Callable[[], Any]) -> Callable[[], InputError]:
    """A function returning the InputError that ``call`` raises (made only when it is reported)."""

    def make() -> InputError:
        try:
            call()
        except InputError as exc:
            return exc
        raise AssertionError("a check failed in bulk but passed line by line")  # pragma: no cover

    return make


def _floats(tokens: list[Any]) -> tuple[np.ndarray, int | None]:
    """The tokens as floats — Python's ``float``, so exactly what reading line by line accepts — and
    the index of the first one that is not a number or is infinite (None if every one is fine)."""
    try:
        values = np.fromiter(map(float, tokens), dtype=float, count=len(tokens))
    except ValueError:
        for index, token in enumerate(tokens):
            try:
                value = float(token)
            except ValueError:
                return np.empty(0), index
            if value in (np.inf, -np.inf):
                return np.empty(0), index
        raise AssertionError("float() failed on the tokens, then on none of them") from None  # pragma: no cover
    infinite = np.flatnonzero(np.isinf(values))
    return values, (int(infinite[0]) if infinite.size else None)


@hookimpl(trylast=True)
def pmkit_register_readers(register) -> None:
    register(ExtrapTextReader())
