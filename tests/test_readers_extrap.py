"""The Extra-P input readers against what Extra-P itself reads from the same real files.

The reference (``extrap_reference/extrap_reference.json.gz``) was dumped by Extra-P 4.2.5 with
``extrap_reference/dump_extrap.py``; every file Extra-P reads must come out with the same
parameters, points (in the same order), call paths, metrics and repetition values, and every file
it rejects must raise InputError naming the file.  Small generated files cover the format rules
and error messages file by file.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit.errors import InputError
from pmkit.plugins import build_registry
from pmkit.sdk import find_reader

REFERENCE = Path(__file__).parent / "extrap_reference" / "extrap_reference.json.gz"
with gzip.open(REFERENCE, "rt") as _file:
    _DOCUMENT = json.load(_file)
FILES: dict[str, dict] = _DOCUMENT["files"]
LINE_FORMATS = {"extrap-text", "extrap-jsonl", "talpas"}


def pmkit_reader_for(relative: str, extrap_reader: str) -> str:
    """The pmkit reader matching the Extra-P reader the reference used for this file."""
    if extrap_reader == "text":
        return "extrap-text"
    if extrap_reader == "talpas":
        return "talpas"
    return "extrap-json" if relative.lower().endswith(".json") else "extrap-jsonl"


@pytest.fixture(scope="module")
def registry():
    return build_registry(entry_points=False)


@pytest.fixture(scope="module")
def formats_dir(shared_data: Path) -> Path:
    path = shared_data / "extrap-formats"
    if not path.is_dir():
        pytest.skip(f"{path} is absent")
    return path


def test_reference_covers_every_format_and_some_rejections():
    readers = {pmkit_reader_for(k, v["reader"]) for k, v in FILES.items()}
    assert readers == {"extrap-text", "extrap-json", "extrap-jsonl", "talpas"}
    assert sum(v["status"] == "error" for v in FILES.values()) >= 5
    assert sum(v["status"] == "ok" for v in FILES.values()) >= 100


@pytest.mark.parametrize("relative", sorted(k for k, v in FILES.items() if v["status"] == "ok"))
def test_reads_what_extrap_reads(relative, formats_dir, registry):
    expected = FILES[relative]
    name = pmkit_reader_for(relative, expected["reader"])
    exp = pmkit.read(formats_dir / relative, reader=name, registry=registry)

    assert list(exp.parameters) == expected["parameters"]
    assert exp.points.tolist() == expected["points"]
    assert exp.metric_names == expected["metrics"]
    paths = exp.callpaths.paths()
    assert set(expected["callpaths"]) <= set(paths)
    assert [p for p in paths if p in set(expected["callpaths"])] == expected["callpaths"]

    seen = {name: np.zeros(exp.measurements[name].shape[:2], dtype=bool) for name in exp.metric_names}
    for callpath, metric, point, values in expected["measurements"]:
        row = exp.measurements[metric][exp.callpaths.index(callpath), point]
        got = row[~np.isnan(row)]
        assert got.tolist() == values, f"{callpath} / {metric} at point {point}"
        seen[metric][exp.callpaths.index(callpath), point] = True
    for metric, mask in seen.items():
        unexpected = ~mask & ~np.isnan(exp.measurements[metric]).all(axis=2)
        assert not unexpected.any(), f"values Extra-P does not have for metric {metric!r}"


@pytest.mark.parametrize("relative", sorted(k for k, v in FILES.items() if v["status"] == "error"))
def test_rejects_what_extrap_rejects(relative, formats_dir, registry):
    expected = FILES[relative]
    name = pmkit_reader_for(relative, expected["reader"])
    path = formats_dir / relative
    with pytest.raises(InputError) as info:
        pmkit.read(path, reader=name, registry=registry)
    assert str(path) in str(info.value)
    if name in LINE_FORMATS:
        assert info.value.line is not None, str(info.value)


@pytest.mark.parametrize("relative", sorted(FILES))
def test_sniff_picks_the_right_reader(relative, formats_dir, registry):
    expected = pmkit_reader_for(relative, FILES[relative]["reader"])
    assert find_reader(formats_dir / relative, registry).name == expected
    others = [r for r in registry.all("reader") if r.name != expected]
    assert not [r.name for r in others if r.sniff(formats_dir / relative)]


def test_sdk_read_auto_detects_text(formats_dir):
    exp = pmkit.read(formats_dir / "text" / "one_parameter_1.txt")
    assert exp.provenance.reader == "extrap-text"
    assert exp.parameters == ("x",)


def test_missing_points_allowed_on_request(formats_dir, registry):
    path = formats_dir / "talpas" / "talpas_10_neg.txt"
    exp = pmkit.read(path, reader="talpas", registry=registry, allow_missing_points=True)
    flops = exp.measurements["flops"][exp.callpaths.index("compute")]
    measured = ~np.isnan(flops).all(axis=1)
    assert measured.sum() == 3 and len(measured) == 5


# Generated files: each format rule and each error message.

def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def read_text_file(tmp_path: Path, text: str, **options) -> pmkit.Experiment:
    return pmkit.read(write(tmp_path, "exp.txt", text), reader="extrap-text", **options)


TEXT = """# a comment
PARAMETER p
PARAMETER n
POINTS ( 1 10 ) ( 2 10 )
POINTS ( 4 10 )

METRIC time
REGION main
DATA 1 1.5
DATA 2
DATA 4 4.5 5
REGION main->solve
DATA 0.5
DATA 1
DATA 2
METRIC bytes
REGION main
DATA 10
DATA 20
DATA 40
"""


def test_text_blocks_metrics_and_regions(tmp_path):
    exp = read_text_file(tmp_path, TEXT)
    assert exp.parameters == ("p", "n")
    assert exp.points.tolist() == [[1, 10], [2, 10], [4, 10]]
    assert exp.metric_names == ["time", "bytes"]
    assert exp.callpaths.paths() == ["main", "main->solve"]
    assert exp.callpaths["main->solve"].parent == exp.callpaths.index("main")
    time = exp.measurements["time"]
    assert time.shape == (2, 3, 3)
    assert time[0, 0].tolist()[:2] == [1, 1.5] and np.isnan(time[0, 0, 2])
    assert time[0, 2].tolist() == [4, 4.5, 5]
    assert exp.values("bytes")[0].tolist() == [10, 20, 40]
    assert np.isnan(exp.measurements["bytes"][1]).all()


def test_text_one_parameter_point_forms_agree(tmp_path):
    plain = read_text_file(tmp_path, "PARAMETER p\nPOINTS 1 2 4\nREGION r\nDATA 1\nDATA 2\nDATA 3\n")
    groups = read_text_file(tmp_path, "PARAMETER p\nPOINTS (1) (2)\nPOINTS ( 4 )\nREGION r\nDATA 1\nDATA 2\nDATA 3\n")
    assert plain.points.tolist() == groups.points.tolist() == [[1], [2], [4]]
    assert plain.metric_names == [""]
    assert plain.values("")[0].tolist() == [1, 2, 3]


def test_text_tabs_and_duplicate_points(tmp_path):
    exp = read_text_file(tmp_path, "PARAMETER\tp\tq\nPOINTS\t(\t1\t2\t)\t(1 2) (3 4)\nREGION r\nDATA\t5\nDATA 6\n")
    assert exp.points.tolist() == [[1, 2], [3, 4]]
    assert any("listed twice" in note for note in exp.provenance.notes)


@pytest.mark.parametrize(("text", "line", "fragment"), [
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\nDATA 3\n", 6, "too many DATA lines"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\n", 4, "values at 1 of 2 points"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1 x\n", 4, "'x' is not a number"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1 inf\n", 4, "not a finite number"),
    ("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA\n", 4, "DATA line has no values"),
    ("PARAMETER p q\nPOINTS 1 2\n", 2, "one-parameter points"),
    ("PARAMETER p q\nPOINTS (1 2) (3)\n", 2, "has 1 coordinates"),
    ("PARAMETER p q\nPOINTS (1 2) (3 4\n", 2, "malformed POINTS"),
    ("POINTS 1 2\n", 1, "POINTS before any PARAMETER"),
    ("PARAMETER p\nPOINTS 1\nDATA 1\n", 3, "DATA before any REGION"),
    ("PARAMETER p\nPOINTS 1\nREGION r\nDATA 1\nREGION r\nDATA 2\n", 6, "only once per metric"),
    ("PARAMETER p\nPOINTS 1\nregion r\n", 3, "keywords are upper case"),
    ("PARAMETER p\nPOINTS 1\nREGION a->->b\n", 3, "empty region name"),
    ("PARAMETER p p\n", 1, "declared twice"),
    ("PARAMETER p\nPOINTS 1\nPARAMETER q\n", 3, "PARAMETER after POINTS"),
])
def test_text_errors_name_file_and_line(tmp_path, text, line, fragment):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(InputError) as info:
        pmkit.read(path, reader="extrap-text")
    assert info.value.line == line
    assert fragment in info.value.problem
    assert str(path) in str(info.value)


@pytest.mark.parametrize(("text", "fragment"), [
    ("", "no PARAMETER line"),
    ("# only a comment\n\n", "no PARAMETER line"),
    ("PARAMETER p\n", "no POINTS line"),
    ("PARAMETER p\nPOINTS 1\nREGION r\n", "no DATA lines"),
])
def test_text_incomplete_files(tmp_path, text, fragment):
    with pytest.raises(InputError, match=fragment):
        read_text_file(tmp_path, text)


def test_text_not_utf8(tmp_path):
    path = tmp_path / "bin.txt"
    path.write_bytes(b"PARAMETER p\nPOINTS \xff\xfe\n")
    with pytest.raises(InputError, match="not UTF-8"):
        pmkit.read(path, reader="extrap-text")


JSONL = """{"params": {"p": 1, "n": 10}, "callpath": "main", "metric": "time", "value": 1.0}
{"params": {"n": 10, "p": 1}, "callpath": "main", "metric": "time", "value": [1.5, 2.0]}

{"params": {"p": 2, "n": 10}, "callpath": "main", "metric": "time", "value": 2}
{"params": {"p": 1, "n": 10}, "value": 7}
{"params": {"p": 2, "n": 10}, "value": 8}
"""


def test_jsonl_defaults_order_and_repetitions(tmp_path):
    exp = pmkit.read(write(tmp_path, "exp.jsonl", JSONL))
    assert exp.provenance.reader == "extrap-jsonl"
    assert exp.parameters == ("p", "n")
    assert exp.points.tolist() == [[1, 10], [2, 10]]
    assert exp.metric_names == ["time", "<default>"]
    assert exp.callpaths.paths() == ["main", "<root>"]
    assert exp.measurements["time"][0, 0].tolist() == [1.0, 1.5, 2.0]
    assert exp.values("<default>")[1].tolist() == [7, 8]


@pytest.mark.parametrize(("lines", "line", "fragment"), [
    ('{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2, "q": 1}, "value": 1}\n', 2, "has parameter 'q'"),
    ('{"params": {"p": 1, "q": 1}, "value": 1}\n{"params": {"p": 2}, "value": 1}\n', 2, "lacks parameter 'q'"),
    ('{"params": {"p": 1}, "values": [1]}\n', 1, "Extra-P reads 'value'"),
    ('{"params": {"p": 1}, "value": "fast"}\n', 1, "expected a number"),
    ('{"params": {"p": true}, "value": 1}\n', 1, "expected a number, got true"),
    ('{"params": {"p": 1}, "value": 1, "callpath": 3}\n', 1, "'callpath' must be a string"),
    ('{"params": {}, "value": 1}\n', 1, "no parameters"),
    ('{"params": {"p": 1}, "value": 1}\n{"params": {"p": 1}, "value": 1\n', 2, "not valid JSON"),
    ('[1, 2]\n', 1, "not a JSON object"),
    ('{"params": {"p": 1}, "value": 1e999}\n', 1, "not a finite number"),
    ('{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}, "value": 1}\n'
     '{"params": {"p": 1}, "metric": "m", "value": 1}\n', 3, "values at 1 of 2 points"),
])
def test_jsonl_errors_name_file_and_line(tmp_path, lines, line, fragment):
    path = write(tmp_path, "bad.jsonl", lines)
    with pytest.raises(InputError) as info:
        pmkit.read(path, reader="extrap-jsonl")
    assert info.value.line == line
    assert fragment in info.value.problem


def test_talpas_semicolons_become_commas_like_extrap(tmp_path):
    text = ('{"parameters":{"p":1};"metric":"time";"callpath":"a;b";"value":1}\n'
            '{"parameters":{"p":2};"metric":"time";"callpath":"a;b";"value":[2,3]}\n')
    exp = pmkit.read(write(tmp_path, "t.txt", text))
    assert exp.provenance.reader == "talpas"
    assert exp.callpaths.paths() == ["a,b"]
    assert exp.measurements["time"][0, 1].tolist() == [2, 3]


def test_talpas_requires_every_field(tmp_path):
    path = write(tmp_path, "t.txt", '{"parameters":{"p":1};"callpath":"main";"value":1}\n')
    with pytest.raises(InputError, match="lacks 'metric'") as info:
        pmkit.read(path, reader="talpas")
    assert info.value.line == 1


NEW_JSON = {"parameters": ["p"], "measurements": {
    "main": {"time": [{"point": [1], "values": [1, 2]}, {"point": 2, "values": 3}]},
    "main->io": {"time": [{"point": [2], "values": [5]}, {"point": [1], "values": [4]}]}}}


def test_new_json(tmp_path):
    exp = pmkit.read(write(tmp_path, "new.json", json.dumps(NEW_JSON)))
    assert exp.provenance.reader == "extrap-json"
    assert exp.points.tolist() == [[1], [2]]
    assert exp.callpaths.paths() == ["main", "main->io"]
    assert exp.values("time").tolist() == [[1.5, 3], [4, 5]]


def old_json(ids=(1, 2), coordinate_ids=(1, 2)) -> dict:
    return {
        "parameters": [{"id": 1, "name": "p"}],
        "callpaths": [{"id": 1, "name": "main"}],
        "metrics": [{"id": 1, "name": "time"}],
        "coordinates": [{"id": i, "parameter_value_pairs": [{"parameter_id": 1, "parameter_value": v}]}
                        for i, v in zip(ids, (4, 8), strict=True)],
        "measurements": [{"id": k, "coordinate_id": c, "callpath_id": 1, "metric_id": 1, "value": float(v)}
                         for k, (c, v) in enumerate([(coordinate_ids[0], 1), (coordinate_ids[0], 2),
                                                     (coordinate_ids[1], 5)])],
    }


def test_old_json_ids(tmp_path):
    exp = pmkit.read(write(tmp_path, "old.json", json.dumps(old_json())))
    assert exp.points.tolist() == [[4], [8]]
    assert exp.values("time").tolist() == [[1.5, 5]]


def test_old_json_ids_need_not_start_at_one(tmp_path):
    # Extra-P would map id 0 to position -1 (the last coordinate); pmkit looks the id up.
    exp = pmkit.read(write(tmp_path, "old.json", json.dumps(old_json(ids=(0, 7), coordinate_ids=(0, 7)))))
    assert exp.values("time").tolist() == [[1.5, 5]]


def test_old_json_unknown_id(tmp_path):
    path = write(tmp_path, "old.json", json.dumps(old_json(coordinate_ids=(1, 3))))
    with pytest.raises(InputError, match="coordinate_id 3 refers to no entry") as info:
        pmkit.read(path)
    assert info.value.member == "measurements[2]"


@pytest.mark.parametrize(("document", "fragment"), [
    ("[1, 2]", "top level is not a JSON object"),
    ('{"parameters": "p", "measurements": {}}', "'parameters' must be a non-empty list"),
    ('{"parameters": ["p"], "measurements": {"m": {"t": [{"point": [1, 2], "values": [1]}]}}}', "2 coordinates"),
    ('{"parameters": ["p"], "measurements": {"m": {"t": [{"point": [1]}]}}}', "'point' and 'values'"),
    ('{"parameters": ["p"], "measurements": {}}', "no measured values"),
    ('{"callpaths": [], "parameters": [{"id": 1}], "metrics": [], "coordinates": [], "measurements": []}',
     "'name' must be a string"),
    ('{"parameters": ["p"], "measurements": {"m": {"t": [{"point": [1], "values": [1]}', "not valid JSON"),
])
def test_json_errors(tmp_path, document, fragment):
    path = write(tmp_path, "bad.json", document)
    with pytest.raises(InputError, match=fragment):
        pmkit.read(path, reader="extrap-json")


def test_json_reader_falls_back_to_json_lines(tmp_path):
    exp = pmkit.read(write(tmp_path, "lines.json", JSONL), reader="extrap-json")
    assert exp.metric_names == ["time", "<default>"]


def test_sniff_rejects_other_inputs(tmp_path, registry):
    cases = {
        "binary.txt": b"\x00\x01\x02PARAMETER",
        "csv.txt": b"a,b,c\n1,2,3\n",
        "perf.json": b'{"counter-value" : "1.00", "unit" : "", "event" : "task-clock"}\n',
        "plain.json": b'{"other": 1}',
        "empty.txt": b"",
    }
    for name, content in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        assert not [r.name for r in registry.all("reader") if r.name.startswith(("extrap", "talpas"))
                    and r.sniff(path)], name
    assert not any(r.sniff(tmp_path) for r in registry.all("reader") if r.name.startswith(("extrap", "talpas")))


def test_byte_order_mark_is_ignored(tmp_path):
    text = tmp_path / "bom.txt"
    text.write_bytes(b"\xef\xbb\xbf" + TEXT.encode())
    assert pmkit.read(text).metric_names == ["time", "bytes"]
    new = tmp_path / "bom.json"
    new.write_bytes(b"\xef\xbb\xbf" + json.dumps(NEW_JSON).encode())
    assert pmkit.read(new).provenance.reader == "extrap-json"


def test_sniff_a_first_record_longer_than_the_head(tmp_path):
    values = [1.0 + i / 1e4 for i in range(20000)]
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"params": {"p": 1}, "value": values}) + "\n"
                    + json.dumps({"params": {"p": 2}, "value": 3}) + "\n")
    assert path.stat().st_size > 65536
    exp = pmkit.read(path)
    assert exp.provenance.reader == "extrap-jsonl"
    assert exp.measurements["<default>"].shape == (1, 2, 20000)
