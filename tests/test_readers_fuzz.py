"""Property-based tests: whatever bytes the Extra-P readers get, they return an Experiment or raise InputError.

Inputs are generated text and JSON near the formats, and truncations and mutations of real
Extra-P example files (when the shared data is present).  A sniff must answer True or False and
never raise.  Any other exception is a bug in a reader.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from pmkit.errors import InputError
from pmkit.experiment import Experiment
from pmkit.readers.extrap_json import ExtrapJsonLinesReader, ExtrapJsonReader
from pmkit.readers.extrap_text import ExtrapTextReader
from pmkit.readers.talpas import TalpasReader

READERS = (ExtrapTextReader(), ExtrapJsonReader(), ExtrapJsonLinesReader(), TalpasReader())
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

SAMPLES = [
    "text/one_parameter_6.txt", "text/two_parameter_1.txt", "text/mpa/2_param_add.txt",
    "input/experiments_MP/experiment_MP.txt", "json/input_1.JSON", "json/new/input2.json",
    "jsonlines/extended2.jsonl", "jsonlines/matrix_3p_bands.jsonl", "talpas/talpas_1.txt", "talpas/talpas_7.txt",
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def samples(shared_data: Path) -> list[bytes]:
    base = shared_data / "extrap-formats"
    found = [(base / name).read_bytes() for name in SAMPLES if (base / name).is_file()]
    if not found:
        pytest.skip(f"no Extra-P example files under {base}")
    return found


def check_every_reader(path: Path, content: bytes) -> list[str]:
    """Write ``content`` and read it with every reader; returns the names of those that parsed it."""
    path.write_bytes(content)
    parsed = []
    for reader in READERS:
        assert reader.sniff(path) in (True, False)
        try:
            experiment = reader.read(path)
        except InputError as exc:
            assert exc.path == str(path)
            assert exc.problem
            continue
        assert isinstance(experiment, Experiment)
        experiment.validate()
        for values in experiment.measurements.values():
            assert values.shape[:2] == (len(experiment.callpaths), len(experiment.points))
            assert not np.isinf(values).any()
        parsed.append(reader.name)
    return parsed


KEYWORD = st.sampled_from(["PARAMETER", "POINTS", "METRIC", "REGION", "DATA", "#", "", "data", "POINT"])
TOKEN = st.one_of(
    st.sampled_from(["p", "n", "(", ")", "( 1 2 )", "(1)", "->", "a->b", "1e309", "nan", "-inf", "0", "-1",
                     "1_0", "0x10", "\t", ")(", "((", "main"]),
    st.integers(-5, 100).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=4),
)
TEXT_LINE = st.builds(lambda k, ts: " ".join([k, *ts]), KEYWORD, st.lists(TOKEN, max_size=6))


@FUZZ
@given(lines=st.lists(TEXT_LINE, max_size=25))
def test_generated_text(workdir, lines):
    check_every_reader(workdir / "gen.txt", "\n".join(lines).encode("utf-8", errors="surrogatepass"))


@FUZZ
@given(data=st.data())
def test_structured_text(workdir, data):
    """Text near the format: well-formed files read back exactly, ill-formed ones raise InputError."""
    params = data.draw(st.lists(st.sampled_from(["p", "n", "q"]), min_size=1, max_size=3, unique=True))
    points = data.draw(st.lists(st.tuples(*[st.integers(1, 64)] * len(params)), min_size=1, max_size=5,
                                unique=True))
    lines = [f"PARAMETER {' '.join(params)}",
             "POINTS " + " ".join("( " + " ".join(map(str, p)) + " )" for p in points)]
    expected: dict[tuple[str, str], list[list[float]]] = {}
    well_formed = True
    for region in data.draw(st.lists(st.sampled_from(["a", "b", "a->c"]), max_size=4)):
        metric = data.draw(st.sampled_from(["time", "bytes"]))
        count = data.draw(st.one_of(st.just(len(points)), st.integers(0, len(points) + 1)))
        rows = data.draw(st.lists(st.lists(st.floats(-10, 1e6), min_size=1, max_size=3),
                                  min_size=count, max_size=count))
        lines += [f"METRIC {metric}", f"REGION {region}"]
        lines += ["DATA " + " ".join(map(repr, row)) for row in rows]
        if rows:  # a block without DATA only declares its region
            well_formed &= len(rows) == len(points) and (region, metric) not in expected
            expected[(region, metric)] = rows
    well_formed &= bool(expected)
    event(f"well formed: {well_formed}")
    parsed = check_every_reader(workdir / "structured.txt", "\n".join(lines).encode())
    assert parsed == (["extrap-text"] if well_formed else [])
    if well_formed:
        experiment = ExtrapTextReader().read(workdir / "structured.txt")
        assert experiment.points.tolist() == [list(p) for p in points]
        for (region, metric), rows in expected.items():
            got = experiment.measurements[metric][experiment.callpaths.index(region)]
            for row, values in zip(got, rows, strict=True):
                assert row[~np.isnan(row)].tolist() == values


JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20),
                        st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5))
JSON_KEY = st.sampled_from(["params", "parameters", "value", "values", "callpath", "metric", "point",
                            "measurements", "callpaths", "metrics", "coordinates", "id", "name", "x",
                            "coordinate_id", "callpath_id", "metric_id", "parameter_value_pairs",
                            "parameter_id", "parameter_value"])
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                               st.dictionaries(JSON_KEY, inner, max_size=5)),
                          max_leaves=25)


@FUZZ
@given(document=st.dictionaries(JSON_KEY, JSON_VALUE, max_size=6))
def test_generated_json_documents(workdir, document):
    check_every_reader(workdir / "gen.json", json.dumps(document).encode())


@FUZZ
@given(records=st.lists(st.one_of(
    st.fixed_dictionaries({"params": st.dictionaries(st.sampled_from(["p", "n"]), JSON_SCALAR, max_size=2)},
                          optional={"value": JSON_VALUE, "callpath": JSON_SCALAR, "metric": JSON_SCALAR}),
    JSON_VALUE), max_size=8), semicolons=st.booleans())
def test_generated_json_lines(workdir, records, semicolons):
    text = "\n".join(json.dumps(r) for r in records)
    if semicolons:
        text = text.replace(", ", "; ")
    check_every_reader(workdir / "gen.jsonl", text.encode())


@FUZZ
@given(data=st.data())
def test_truncated_real_files(workdir, samples, data):
    content = data.draw(st.sampled_from(samples))
    cut = data.draw(st.integers(0, len(content)))
    check_every_reader(workdir / "truncated", content[:cut])


MUTATION = st.sampled_from([b"", b" ", b"\n", b"(", b")", b"{", b"}", b"[", b"]", b";", b",", b":", b'"', b"-",
                            b"->", b"9e999", b"nan", b"NaN", b"Infinity", b"\xff", b"\x00", b"DATA ", b"POINTS ",
                            b"REGION ", b"METRIC ", b"PARAMETER x ", b'"params"', b'"value"', b"0", b"1.5"])


@FUZZ
@given(data=st.data())
def test_mutated_real_files(workdir, samples, data):
    content = bytearray(data.draw(st.sampled_from(samples)))
    for _ in range(data.draw(st.integers(1, 4))):
        start = data.draw(st.integers(0, len(content)))
        length = data.draw(st.integers(0, 8))
        content[start:start + length] = data.draw(MUTATION)
    check_every_reader(workdir / "mutated", bytes(content))


def test_real_samples_parse_with_their_own_reader(workdir, samples):
    # the fuzzers above start from files that do parse: make sure they still do
    assert all(check_every_reader(workdir / "sample", content) for content in samples)


@FUZZ
@given(data=st.data())
def test_json_flavours_agree(workdir, data):
    """The same measurements written as new JSON, JSON Lines and Talpas read back identically."""
    params = data.draw(st.lists(st.sampled_from(["p", "n", "q"]), min_size=1, max_size=3, unique=True))
    points = data.draw(st.lists(st.tuples(*[st.integers(1, 64)] * len(params)), min_size=1, max_size=4,
                                unique=True))
    keys = data.draw(st.lists(st.tuples(st.sampled_from(["main", "main->io", "x;y"]), st.sampled_from(["t", "b"])),
                              min_size=1, max_size=3, unique=True))
    values = {key: {point: data.draw(st.lists(st.floats(-1e9, 1e9), min_size=1, max_size=3)) for point in points}
              for key in keys}
    new = {"parameters": params, "measurements": {}}
    records = []
    for (callpath, metric), per_point in values.items():
        new["measurements"].setdefault(callpath, {})[metric] = [
            {"point": list(point), "values": vals} for point, vals in per_point.items()]
        records += [{"params": dict(zip(params, point, strict=True)), "callpath": callpath, "metric": metric,
                     "value": vals} for point, vals in per_point.items()]
    talpas = "\n".join(json.dumps({"parameters": r["params"], "metric": r["metric"], "callpath": r["callpath"],
                                   "value": r["value"]}, separators=(",", ":")).replace(',"', ';"')
                       for r in records)
    read = {}
    for name, text in (("new.json", json.dumps(new)), ("lines.jsonl", "\n".join(map(json.dumps, records))),
                       ("talpas.txt", talpas)):
        parsed = check_every_reader(workdir / name, text.encode())
        sniffed = [r for r in READERS if r.sniff(workdir / name)]
        assert len(sniffed) == 1 and sniffed[0].name in parsed, (name, parsed)
        read[name] = sniffed[0].read(workdir / name)
    for name, experiment in read.items():
        assert experiment.points.tolist() == [list(p) for p in points], name
        for (callpath, metric), per_point in values.items():
            if name == "talpas.txt":
                callpath = callpath.replace(";", ",")  # Extra-P's conversion reaches into names
            rows = experiment.measurements[metric][experiment.callpaths.index(callpath)]
            for row, vals in zip(rows, per_point.values(), strict=True):
                assert row[~np.isnan(row)].tolist() == vals, name


# -- the same fuzzing on generated twins of the SAMPLES, so it runs without the shared data ----------

def _twin_files(folder: Path) -> list[Path]:
    """One generated file per layout the SAMPLES have (``pmkit.testing.extrap_inputs``)."""
    from pmkit.testing.extrap_inputs import Measurements, write_json, write_jsonl, write_talpas, write_text

    one = Measurements.from_laws(("p",), [(1000,), (2000,), (4000,), (8000,), (16000,)],
                                 {("met1", ""): lambda p: 4.0, ("met2", ""): lambda p: p / 1000}, seed=1)
    two = Measurements.from_laws(("x", "y"), [(x, y) for x in (4, 8, 16) for y in (10, 20)],
                                 {("sweep", "time"): lambda x, y: x * y, ("sweep", "visits"): lambda x, y: 5.0,
                                  ("solve", "time"): lambda x, y: 2.0 + x}, repetitions=3, seed=2)
    return [write_text(folder / "one_parameter_6.txt", one, points="line", region_padding=" "),
            write_text(folder / "two_parameter.txt", two, parameter_lines="each", separator="\t"),
            write_json(folder / "input_1.JSON", two, layout="old"), write_json(folder / "input2.json", two),
            write_jsonl(folder / "extended2.jsonl", two, lists=True), write_talpas(folder / "talpas_7.txt", two)]


@pytest.fixture(scope="module")
def twin_samples(tmp_path_factory) -> list[bytes]:
    return [path.read_bytes() for path in _twin_files(tmp_path_factory.mktemp("twins"))]


def test_twin_samples_parse_with_their_own_reader_only(workdir, twin_samples):
    parsed = [check_every_reader(workdir / "twin", content) for content in twin_samples]
    # the JSON reader also takes JSON Lines (see test_readers_extrap.py)
    assert parsed == [["extrap-text"], ["extrap-text"], ["extrap-json"], ["extrap-json"],
                      ["extrap-json", "extrap-jsonl"], ["talpas"]]


def _damaged(content: bytes, cuts: list[tuple[int, int, bytes]]) -> bytes:
    """``content`` with each (start, length, replacement) applied in turn, positions taken modulo its size."""
    out = bytearray(content)
    for start, length, replacement in cuts:
        at = start % (len(out) + 1)
        out[at:at + length] = replacement
    return bytes(out)


@FUZZ
@given(pick=st.integers(0, 5), cut=st.integers(0, 1 << 20))
def test_truncated_twins(workdir, twin_samples, pick, cut):
    content = twin_samples[pick]
    check_every_reader(workdir / "truncated_twin", content[:cut % (len(content) + 1)])


@FUZZ
@given(pick=st.integers(0, 5), cuts=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 8), MUTATION),
                                             min_size=1, max_size=4))
def test_mutated_twins(workdir, twin_samples, pick, cuts):
    check_every_reader(workdir / "mutated_twin", _damaged(twin_samples[pick], cuts))
