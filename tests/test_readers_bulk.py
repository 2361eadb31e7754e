"""Bulk reading gives what reading one value at a time gave: the same Experiment or the same error.

``reference_readers`` holds the readers as they were (a Python call per value through
``ExperimentBuilder.add_values``); here generated files — well-formed ones and ones near the format
with every kind of mistake — go through both, and the Experiments (call paths, their order,
points, metrics, values, NaN placement, notes) or the error messages must be equal.  The bulk text
reader parses in pieces; small pieces are forced so that every state crosses a piece boundary.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import reference_readers as reference
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pmkit.errors import InputError
from pmkit.experiment import Experiment
from pmkit.readers import parsing
from pmkit.readers.extrap_json import ExtrapJsonLinesReader, ExtrapJsonReader
from pmkit.readers.extrap_text import ExtrapTextReader
from pmkit.readers.record_lines import JSONL_FORMAT, TALPAS_FORMAT
from pmkit.readers.talpas import TalpasReader

EXAMPLES = int(os.environ.get("PMKIT_BULK_EXAMPLES", 80))
"""Generated files per test (set PMKIT_BULK_EXAMPLES=3000 for a long run)."""
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def assert_same(new: Experiment, old: Experiment) -> None:
    """Every part of two experiments is equal, NaN where NaN."""
    assert new.parameters == old.parameters
    np.testing.assert_array_equal(new.points, old.points)
    assert list(new.callpaths) == list(old.callpaths)
    assert [new.callpaths.children(i) for i in range(len(new.callpaths))] == \
        [old.callpaths.children(i) for i in range(len(old.callpaths))]
    assert new.metrics == old.metrics
    assert list(new.measurements) == list(old.measurements)
    for name, values in old.measurements.items():
        assert new.measurements[name].shape == values.shape, name
        np.testing.assert_array_equal(new.measurements[name], values)
    assert new.provenance.notes == old.provenance.notes
    assert new.provenance.reader == old.provenance.reader


def compare(read_new, read_old) -> str:
    """Run both; the same error message or equal Experiments.  Returns what happened, for events."""
    try:
        old = read_old()
    except InputError as exc:
        with pytest.raises(InputError) as caught:
            read_new()
        assert str(caught.value) == str(exc)
        return "error"
    assert_same(read_new(), old)
    return "read"


def old_text(path: Path) -> str:
    """The file as the line-by-line readers took it: decoded whole, universal newlines, BOM dropped."""
    with open(path, encoding="utf-8-sig", newline=None) as file:
        return file.read()


# -- Extra-P text ----------------------------------------------------------------------------------

SPACE = st.sampled_from([" ", " ", " ", "  ", "\t", "\x0b", "\x1c", "\u00a0", "\u3000"])
NUMBER = st.one_of(st.floats(-1e6, 1e6).map(repr), st.integers(-5, 2000).map(str),
                   st.sampled_from(["nan", "NaN", "-nan", "inf", "-Infinity", "1e999", "1_0", "0x10", "1e", ".",
                                    "abc", "٣", "1.5e-3", "+2", "1,5", "x"]))
NAME = st.sampled_from(["main", "main->solve", "main->solve->MPI_Allreduce", "init", "a b", "->x", "x->",
                        "a->->b", "Grüße", "f\u00a0g", "main->solve"])
METRIC = st.sampled_from(["time", "visits", "", "bytes sent"])


@st.composite
def text_lines(draw) -> list[str]:
    """Lines of an Extra-P text file: half of them well-formed (unusual whitespace and NaN included),
    half with mistakes of every kind mixed in."""
    clean = draw(st.booleans())
    params = draw(st.lists(st.sampled_from(["p", "n", "q"]), min_size=1, max_size=2, unique=True))
    points = draw(st.lists(st.tuples(*[st.integers(1, 64)] * len(params)), min_size=1, max_size=4))
    lines = [f"PARAMETER {' '.join(params)}"]
    if len(params) == 1 and draw(st.booleans()):
        lines.append("POINTS " + " ".join(str(p[0]) for p in points))
    else:
        lines.append("POINTS " + " ".join("( " + " ".join(map(str, p)) + " )" for p in points))
    value = st.floats(0, 1e6).map(repr) | st.just("nan")
    used: set[tuple[str, str]] = set()
    metric = ""
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.integers(0, 3)) == 0:
            metric = draw(METRIC)
            lines.append(f"METRIC {metric}")
        name = draw(NAME)
        if clean and (name.startswith("->") or name.endswith("->") or "->->" in name or (name, metric) in used):
            continue
        used.add((name, metric))
        lines.append(f"REGION{draw(SPACE)}{name}")
        rows = len(set(points))
        if not clean:
            rows = draw(st.one_of(st.just(rows), st.integers(0, len(points) + 1)))
        for _ in range(rows):
            token = value if clean or draw(st.integers(0, 9)) else NUMBER
            values = draw(st.lists(token, min_size=1 if clean or draw(st.integers(0, 20)) else 0, max_size=3))
            lines.append("DATA" + "".join(draw(SPACE) + v for v in values))
    noise = st.sampled_from(["", "# comment", "  # indented comment", "\x1c", "\u00a0", "  "] if clean else
                            ["  DATA 1", "\tREGION main", "data 1", "REGION", "METRIC", "POINTS ( 1 )",
                             "PARAMETER z", "DATA", "PARAMETER", "REGION main", "DATA 1 2", "FOO bar", "POINTS (1 2",
                             "POINTS ( nan )"])
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), draw(noise))
    return lines


@SETTINGS
@given(lines=text_lines(), newline=st.sampled_from(["\n", "\r\n", "\r"]), bom=st.booleans(),
       piece=st.sampled_from([None, 1, 7, 64]), allow_missing=st.booleans())
def test_text_bulk_equals_line_by_line(tmp_path, monkeypatch, lines, newline, bom, piece, allow_missing):
    path = tmp_path / "exp.txt"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + newline.join(lines).encode())
    with monkeypatch.context() as patch:
        patch.setattr(parsing, "CHUNK_BYTES", piece or parsing.CHUNK_BYTES)
        outcome = compare(lambda: ExtrapTextReader().read(path, allow_missing_points=allow_missing),
                          lambda: reference.read_text(path, old_text(path), allow_missing))
    event(outcome)


def write_text_study(path: Path, callpaths: int, points: int, repetitions: int, metrics: int, seed: int) -> None:
    """A large well-formed text file: every call path, metric and point, repetitions with NaN gaps."""
    rng = np.random.default_rng(seed)
    lines = ["PARAMETER p n", "POINTS " + " ".join(f"( {2 ** k} {10 * k} )" for k in range(1, points + 1))]
    for m in range(metrics):
        lines.append(f"METRIC metric{m}")
        for c in range(callpaths):
            lines.append(f"REGION main->k{c % 17}->leaf{c}")
            for _ in range(points):
                values = rng.uniform(0, 100, rng.integers(1, repetitions + 1))
                lines.append("DATA " + " ".join("nan" if rng.random() < 0.05 else repr(float(v)) for v in values))
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("piece", [None, 4096])
def test_text_bulk_equals_line_by_line_on_a_generated_study(tmp_path, monkeypatch, piece):
    path = tmp_path / "study.txt"
    write_text_study(path, callpaths=400, points=5, repetitions=4, metrics=3, seed=5)
    if piece:
        monkeypatch.setattr(parsing, "CHUNK_BYTES", piece)
    new = ExtrapTextReader().read(path)
    assert_same(new, reference.read_text(path, old_text(path)))
    assert new.measurements["metric0"].shape == (400 + 1 + 17, 5, 4)
    assert np.isnan(new.measurements["metric0"]).any()


# -- JSON Lines, Talpas and JSON --------------------------------------------------------------------

COORD = st.one_of(st.sampled_from([1, 2, 4, 8, 16]), st.sampled_from([2.5, float("nan"), True, "4", None, 10**400,
                                                                       [1], float("inf")]))
VALUE = st.one_of(st.floats(0, 1e6), st.integers(0, 1000), st.just(float("nan")),
                  st.sampled_from([True, "3", None, float("inf"), 10**400, {"a": 1}]))
CLEAN_VALUE = st.one_of(st.floats(0, 1e6), st.integers(0, 1000), st.just(float("nan")))
CALLPATH = st.sampled_from(["main", "main->a", "main->a->MPI_Send", "b", "x;y"])


@st.composite
def records(draw, params_key: str = "params") -> list[dict]:
    """Line records: mostly well-formed (several repetitions, lists, NaN), sometimes with a mistake."""
    clean = draw(st.booleans())
    params = draw(st.lists(st.sampled_from(["p", "n"]), min_size=1, max_size=2, unique=True))
    out = []
    for _ in range(draw(st.integers(1, 12))):
        record: dict = {params_key: {p: draw(st.sampled_from([1, 2, 4, 8]) if clean else COORD) for p in params}}
        record["callpath"] = draw(CALLPATH if clean else st.one_of(CALLPATH, st.sampled_from(["", "a->", 3])))
        record["metric"] = draw(st.sampled_from(["time", "visits"]))
        value = CLEAN_VALUE if clean else VALUE
        record["value"] = draw(st.one_of(value, st.lists(value, max_size=3)))
        if not clean and draw(st.integers(0, 5)) == 0:
            del record[draw(st.sampled_from(["callpath", "metric", "value", params_key]))]
        if not clean and params_key in record and draw(st.integers(0, 8)) == 0:
            record[params_key]["z"] = 1
        out.append(record)
    return out


@SETTINGS
@given(data=records(), batch=st.sampled_from([1, 3, 10_000]), allow_missing=st.booleans(),
       junk=st.sampled_from([None, None, None, None, "", "{", "[1]", '{"params": {"p": 1e999}, "value": 1}',
                             "1" * 5000]))
def test_json_lines_bulk_equals_one_by_one(tmp_path, monkeypatch, data, batch, allow_missing, junk):
    from pmkit.readers import record_lines

    lines = [json.dumps(r) for r in data]
    if junk is not None:
        lines.insert(len(lines) // 2, junk)
    path = tmp_path / "exp.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with monkeypatch.context() as patch:
        patch.setattr(record_lines, "BATCH", batch)
        outcome = compare(lambda: ExtrapJsonLinesReader().read(path, allow_missing_points=allow_missing),
                          lambda: reference.read_record_lines(path, old_text(path), JSONL_FORMAT, allow_missing))
    event(outcome)


@SETTINGS
@given(data=records("parameters"), allow_missing=st.booleans())
def test_talpas_bulk_equals_one_by_one(tmp_path, data, allow_missing):
    path = tmp_path / "talpas.txt"
    path.write_text("\n".join(json.dumps(r, separators=(";", ":")) for r in data) + "\n")
    outcome = compare(lambda: TalpasReader().read(path, allow_missing_points=allow_missing),
                      lambda: reference.read_record_lines(path, old_text(path), TALPAS_FORMAT, allow_missing))
    event(outcome)


@st.composite
def json_documents(draw) -> dict:
    """Extra-P JSON of the new flavour (nested) or the old one (ids), built from line records."""
    data = draw(records())
    params = list(data[0].get("params", {"p": 1}))
    if draw(st.booleans()):
        measurements: dict = {}
        for r in data:
            point = [r.get("params", {}).get(p) for p in params]
            entry = {"point": point if len(point) > 1 or draw(st.booleans()) else point[0], "values": r.get("value")}
            measurements.setdefault(r.get("callpath", "main"), {}).setdefault(r.get("metric", "t"), []).append(entry)
        return {"parameters": params, "measurements": measurements}
    callpaths = list(dict.fromkeys(r.get("callpath", "main") for r in data if isinstance(r.get("callpath"), str)))
    metrics = list(dict.fromkeys(r.get("metric", "t") for r in data))
    points = list(dict.fromkeys(tuple(r["params"].get(p, 1) for p in params) for r in data
                                if all(isinstance(r.get("params", {}).get(p), (int, float)) for p in params)))
    document = {
        "parameters": [{"id": i + 1, "name": p} for i, p in enumerate(params)],
        "callpaths": [{"id": i + 1, "name": c} for i, c in enumerate(callpaths)],
        "metrics": [{"id": i + 1, "name": m} for i, m in enumerate(metrics)],
        "coordinates": [{"id": i + 1, "parameter_value_pairs": [{"parameter_id": k + 1, "parameter_value": v}
                                                                 for k, v in enumerate(pt)]}
                        for i, pt in enumerate(points)],
        "measurements": [],
    }
    for r in data:
        value = r.get("value", 1.0)
        for v in value if isinstance(value, list) else [value]:
            document["measurements"].append({
                "coordinate_id": draw(st.integers(1, max(len(points), 1) + (0 if draw(st.booleans()) else 1))),
                "callpath_id": draw(st.integers(1, max(len(callpaths), 1))),
                "metric_id": draw(st.integers(1, len(metrics))), "value": v})
    return document


@SETTINGS
@given(document=json_documents(), allow_missing=st.booleans())
def test_json_bulk_equals_one_by_one(tmp_path, document, allow_missing):
    path = tmp_path / "exp.json"
    path.write_text(json.dumps(document))
    outcome = compare(lambda: ExtrapJsonReader().read(path, allow_missing_points=allow_missing),
                      lambda: reference.read_json(path, json.loads(old_text(path)), allow_missing))
    event(outcome)
