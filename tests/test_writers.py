"""The model writers: the JSON document streamed from columns is the document made from Model objects
(compared after parsing), JSON Lines and Parquet/Arrow carry the same entries, and ``pmkit model
--format`` writes them whole or not at all."""

from __future__ import annotations

import functools
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from test_modelcolumns import (
    handmade,
    one_parameter_batch,
    outlier_batch,
    strong_scaling_batch,
    two_parameter_batch,
)

from pmkit.analysis import Skipped
from pmkit.findings import Finding
from pmkit.modelers.refining import RefiningModeler
from pmkit.models import ModelSet
from pmkit.schema import finite_json, models_document
from pmkit.writers import missing_dependency, write_models

CHUNK_SIZE = 7
SKIPPED = [Skipped("bad.txt", "bad.txt, line 3: no \"POINTS\" line")]
FINDINGS = [Finding(detector="imbalance", title="load imbalance", callpath="main->f0", metric="time",
                    location="#3", severity=1.5, unit="s", message="others wait",
                    evidence={"imbalance": math.nan, "by_point": {"p=4": 0.5, 7: np.float64(2.0)}})]


def many_series(count: int) -> ModelSet:
    """Several chunks of series (written ``CHUNK_SIZE`` at a time), so chunk boundaries are crossed."""
    rng = np.random.default_rng(5)
    x = np.array([2.0, 4, 8, 16, 32])
    values = (1 + rng.uniform(0, 10, (count, 1))) * x ** rng.integers(0, 3, (count, 1)) + rng.uniform(0, 5, (count, 1))
    values[::7, 1] = np.nan
    from pmkit.series import SeriesBatch

    batch = SeriesBatch(("x",), x[:, None], values, [f"main->f{i}\"q\\" for i in range(count)], ["time"] * count)
    return RefiningModeler().model(batch)


@functools.cache
def sets() -> dict[str, list[tuple[str, ModelSet]]]:
    model = RefiningModeler().model
    return {
        "one parameter": [("one.txt", model(one_parameter_batch())), ("outlier.txt", model(outlier_batch()))],
        "two parameters": [("two.txt", model(two_parameter_batch()))],
        "strong scaling": [("strong.txt", model(strong_scaling_batch()))],
        "objects": [("hand·made.json", handmade())],
        "chunks": [("many.txt", many_series(3 * CHUNK_SIZE + 2)), ("few.txt", many_series(1))],
        "empty": [],
    }


@pytest.fixture(scope="module", params=list(sets()))
def named_sets(request) -> tuple[tuple[str, ...], list[tuple[str, ModelSet]]]:
    chosen = sets()[request.param]
    parameters = chosen[0][1].parameters if chosen else ("p",)
    return parameters, chosen


def expected(parameters, named) -> dict:
    """The document as the object path makes it, parsed."""
    pairs = [(source, m) for source, models in named for m in models]
    document = models_document(parameters, pairs, sources=[s for s, _ in named], skipped=SKIPPED, findings=FINDINGS)
    return json.loads(json.dumps(document))


def written(fmt: str, parameters, named) -> bytes:
    stream = io.BytesIO()
    write_models(fmt, stream, parameters, named, sources=[s for s, _ in named], skipped=SKIPPED, findings=FINDINGS,
                 chunk=CHUNK_SIZE)
    return stream.getvalue()


def test_the_streamed_document_is_the_document_of_the_objects(named_sets) -> None:
    parameters, named = named_sets
    text = written("json", parameters, named)
    assert json.loads(text) == expected(parameters, named)
    assert text.endswith(b"\n}\n") and text.count(b"\n") >= sum(len(m) for _, m in named), "a model per line"


def test_json_lines_are_the_document_line_by_line(named_sets) -> None:
    parameters, named = named_sets
    lines = written("jsonl", parameters, named).decode().splitlines()
    document = expected(parameters, named)
    head = json.loads(lines[0])
    assert head == {k: v for k, v in document.items() if k != "models"}
    assert [json.loads(line) for line in lines[1:]] == document["models"]


@pytest.mark.parametrize("fmt", ["parquet", "arrow"])
def test_parquet_and_arrow_rows_are_the_entries(named_sets, fmt) -> None:
    pa = pytest.importorskip("pyarrow")
    parameters, named = named_sets
    data = written(fmt, parameters, named)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(pa.BufferReader(data))
    else:
        table = pa.ipc.open_file(pa.BufferReader(data)).read_all()
    document = expected(parameters, named)
    assert json.loads(table.schema.metadata[b"pmkit"]) == {k: v for k, v in document.items() if k != "models"}
    rows = table.to_pylist()
    assert len(rows) == len(document["models"])
    for row, entry in zip(rows, document["models"], strict=True):
        function = None if row["constant"] is None else {"constant": row["constant"], "terms": row["terms"]}
        quality = {k: row[k] for k in ("rss", "smape", "adjusted_r2", "cv_smape")}
        as_entry = {"callpath": row["callpath"], "metric": row["metric"], "modeler": row["modeler"],
                    "function": function, "text": row["text"], "pretty": row["pretty"], "quality": quality,
                    "points": row["points"], "notes": row["notes"],
                    "outliers": [dict(point) for point in row["outliers"]],
                    "segments": None if row["segments"] is None else json.loads(row["segments"]),
                    "change_point": row["change_point"], "source": row["source"]}
        assert finite_json(as_entry) == entry, "Parquet keeps non-finite coefficients, JSON has null"


def test_a_format_needing_a_missing_package_says_what_to_install(monkeypatch) -> None:
    import importlib.util

    assert missing_dependency("json") is None
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert missing_dependency("parquet") == "--format parquet needs pyarrow: pip install 'pmkit-hpc[parquet]'"


def test_writing_a_format_whose_package_is_missing_is_a_usage_error_from_the_sdk(monkeypatch) -> None:
    import importlib.util

    import pmkit

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(pmkit.UsageError, match=r"needs pyarrow: pip install 'pmkit-hpc\[parquet\]'"):
        write_models("parquet", io.BytesIO(), ("p",), [])


TEXT = ("PARAMETER p\nPOINTS 2 4 8 16 32\nMETRIC time\n"
        + "".join(f"REGION main->f{k}\n" + "".join(f"DATA {(k + 1) * v ** 1.5:.6g}\n" for v in (2, 4, 8, 16, 32))
                  for k in range(4)))


@pytest.fixture
def experiment(tmp_path) -> Path:
    path = tmp_path / "exp.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_model_writes_every_format(pmkit_cli, experiment, tmp_path) -> None:
    short = pmkit_cli("model", experiment, "--json")
    assert short.returncode == 0
    document = json.loads(short.stdout)
    assert json.loads(pmkit_cli("model", experiment, "--format", "json").stdout) == document
    lines = pmkit_cli("model", experiment, "--format", "jsonl").stdout.splitlines()
    assert [json.loads(line) for line in lines[1:]] == document["models"]
    assert [m["callpath"] for m in document["models"]] == ["main", *(f"main->f{k}" for k in range(4))]
    for fmt in ("parquet", "arrow"):
        pytest.importorskip("pyarrow")
        out = tmp_path / f"models.{fmt}"
        assert pmkit_cli("model", experiment, "--format", fmt, "--out", out).returncode == 0
        assert out.stat().st_size > 0 and not list(tmp_path.glob("*.part"))
    assert "main->f3" in pmkit_cli("model", experiment, "--format", "table", columns=120).stdout


def test_format_usage_errors(pmkit_cli, experiment, monkeypatch) -> None:
    both = pmkit_cli("model", experiment, "--json", "--format", "jsonl")
    assert both.returncode == 2 and "--json is short for --format json" in both.stderr
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    binary = pmkit_cli("model", experiment, "--format", "parquet")
    assert binary.returncode == 2 and "give --out FILE" in binary.stderr
    monkeypatch.setattr("pmkit.writers.missing_dependency", lambda fmt: f"--format {fmt} needs pyarrow: pip ...")
    missing = pmkit_cli("model", experiment, "--format", "arrow", "--out", experiment.with_suffix(".arrow"))
    assert missing.returncode == 2 and missing.stderr.strip().endswith("--format arrow needs pyarrow: pip ...")
    assert not experiment.with_suffix(".arrow").exists()


@pytest.fixture(scope="module")
def example_study(tmp_path_factory) -> Path:
    from pmkit.testing.example_study import generate

    folder = tmp_path_factory.mktemp("study") / "study"
    generate(folder)
    return folder


@pytest.mark.parametrize("callpath", [None, "MPI_Gather"])
def test_the_streamed_show_document_is_the_document_of_the_objects(example_study, callpath) -> None:
    from pmkit.schema import show_document
    from pmkit.sdk import analyse
    from pmkit.writers.jsonfiles import write_show_document

    analysis = analyse([example_study, example_study], callpath=callpath)
    stream = io.BytesIO()
    write_show_document(stream, analysis, chunk=CHUNK_SIZE)
    streamed = json.loads(stream.getvalue())
    assert streamed["findings"] and streamed["show"][0]["total_predicted"] > 0
    assert sum(m["prediction"] is not None for m in streamed["models"]) > 10
    assert streamed == json.loads(json.dumps(show_document(analysis)))


@pytest.mark.parametrize("negative", [False, True])
def test_the_streamed_show_document_of_a_strong_study_is_the_document_of_the_objects(tmp_path, negative) -> None:
    """The strong-scaling views' keys (issue 12) come from the report's columns and trends alike: speed-ups,
    the call paths left out, and per prediction ``negative``, ``lost`` and ``behaviour``."""
    from pmkit.schema import show_document
    from pmkit.sdk import analyse
    from pmkit.testing.example_study import generate_strong
    from pmkit.writers.jsonfiles import write_show_document

    generate_strong(tmp_path / "strong")
    options = {"target": {"p": 1024.0}, "modeler_options": {"falling": False}} if negative else {}
    analysis = analyse(tmp_path / "strong", detectors=[], **options)
    stream = io.BytesIO()
    write_show_document(stream, analysis, chunk=CHUNK_SIZE)
    streamed = json.loads(stream.getvalue())
    show = streamed["show"][0]
    assert show["strong_parameters"] == ["p"] and show["speedups"]
    assert (show["total"]["left_out"] > 0) == negative and len(show["negative"]) == show["total"]["left_out"]
    predictions = [m["prediction"] for m in streamed["models"] if m["prediction"] is not None]
    assert all(p["behaviour"]["text"] for p in predictions) and any(p["lost"] for p in predictions)
    assert any(p["negative"] for p in predictions) == negative
    assert streamed == json.loads(json.dumps(show_document(analysis)))


REAL_INPUTS = ["extrap-formats/input/input_data_1p.txt", "extrap-formats/input/input_data_3p.txt",
               "extrap-formats/json/input_4.JSON", "extrap-formats/jsonlines/matrix_3p.jsonl",
               "extrap-formats/talpas/talpas_8.txt", "extrap-formats/input/exp_only_mean_median.extra-p",
               "cube/extrap-mm-single"]


@pytest.mark.parametrize("name", REAL_INPUTS)
def test_the_streamed_document_is_the_document_of_the_objects_on_real_files(shared_data, name) -> None:
    import pmkit

    path = shared_data / name
    experiment = pmkit.read(path)
    models = pmkit.model(experiment)
    assert len(models) > 0
    named = [(str(path), models)]
    assert json.loads(written("json", experiment.parameters, named)) == expected(experiment.parameters, named)


def test_entries_joined_from_one_dump_equal_one_dump_each() -> None:
    import orjson

    from pmkit.writers.jsonfiles import _joined, _option

    option = _option()
    entries = [{"callpath": f"main->f{k}\",{{\"callpath\":", "quality": {"rss": float(k), "smape": math.nan},
                "outliers": [], "points": np.float64(k)} for k in range(5)]
    # a parameter named "callpath": the entries' bound also occurs inside an entry, which is then dumped alone
    tricky = [*entries[:2], {"callpath": "g", "outliers": [{"callpath": 2.0}, {"callpath": 4.0}]}, *entries[2:]]
    for chunk in (entries[:1], entries, tricky):
        expected = b",\n    ".join(orjson.dumps(entry, option=option) for entry in chunk)
        assert _joined(chunk, option, b",\n    ") == expected
    assert b'},{"callpath":' in orjson.dumps(tricky[2], option=option)


def test_entry_texts_are_the_entries_as_orjson_dumps_them(named_sets) -> None:
    import orjson

    from pmkit.writers.entries import entry_texts, model_entries
    from pmkit.writers.jsonfiles import _option

    option = _option()
    _, named = named_sets
    for source, models in named:
        columns = models.columns
        n = len(columns)
        for start, stop in [(0, n), *((s, min(s + CHUNK_SIZE, n)) for s in range(0, n, CHUNK_SIZE))]:
            entries = model_entries(columns, source, start, stop)
            assert entry_texts(columns, source, start, stop, option) == [orjson.dumps(e, option=option).decode()
                                                                          for e in entries]


def test_entry_texts_escape_what_orjson_escapes() -> None:
    import orjson

    from pmkit.writers.entries import _quoted

    plain = ["main->f·x", "a b", None, "ü"]
    assert _quoted(plain) == ["null" if s is None else orjson.dumps(s).decode() for s in plain]
    for odd in ['say "hi"', "back\\slash", "tab\there", "bell\x07", "line\u2028sep", "del\x7f"]:
        strings = ["main", odd, None]
        assert _quoted(strings) == ["null" if s is None else orjson.dumps(s).decode() for s in strings]


def test_entry_texts_of_functions_of_their_own_are_their_entries_dumped() -> None:
    import orjson

    from pmkit.models import Model, Quality
    from pmkit.pmnf import Factor, Function, Term
    from pmkit.writers.entries import entry_texts, model_entries
    from pmkit.writers.jsonfiles import _option

    class Own(Function):
        """A function type of a plugin: the columns keep it as it is."""

    params = ("p",)
    laws = [Function(params, 1.0, (Term(2.0, (Factor("p", 1),)),)), Own(params, 3.0, (Term(0.5, (Factor("p", 2),)),)),
            None]
    models = ModelSet(params, [Model(f"main->k{i}", "time", law, Quality(0.1, 2.0, 0.9, 1.0), "mine", {}, (), 5)
                               for i, law in enumerate(laws)])
    columns = models.columns
    assert list(columns.own_functions) == [1]
    option = _option()
    for start, stop in ((0, 3), (1, 2), (2, 3)):
        assert entry_texts(columns, "own", start, stop, option) == [
            orjson.dumps(e, option=option).decode() for e in model_entries(columns, "own", start, stop)]
