"""Every Extra-P input reader on generated twins of Extra-P's example files: no shared data needed.

Each twin (``pmkit.testing.extrap_inputs``) has the structure of a family of real files in
``shared/data/extrap-formats`` — parameters, point layout, call paths, metrics, repetitions, the
layout of its lines — and reading it must give back exactly what was written: parameters, points
in order, call paths, metrics, every repetition value and NaN where a point has fewer.  The files
Extra-P rejects are twinned too, with the error pmkit gives for the real one.  The real files
themselves are checked against Extra-P in ``test_readers_extrap.py`` when the shared data is there.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit.errors import InputError
from pmkit.plugins import build_registry
from pmkit.sdk import find_reader
from pmkit.testing.extrap_inputs import Measurements, write_json, write_jsonl, write_talpas, write_text

REGISTRY = build_registry(entry_points=False)


def grid(*axes: tuple[float, ...]) -> list[tuple[float, ...]]:
    """Every combination, the first parameter varying slowest (as Extra-P's examples list them)."""
    return list(itertools.product(*axes))


X5 = [(20.0,), (30.0,), (40.0,), (50.0,), (60.0,)]
P5 = [(1000.0,), (2000.0,), (4000.0,), (8000.0,), (16000.0,)]


def law(k: int):
    """The k-th of a family of smooth laws: a different one per (call path, metric) shows a misplaced value."""
    return lambda *x: (k + 1) * 3.0 + 0.5 * (k + 1) * math.prod(x) ** 0.5


def laws(callpaths, metrics, parameters) -> dict:
    return {key: law(k) for k, key in enumerate(itertools.product(callpaths, metrics))}


def study(parameters, points, callpaths, metrics, repetitions=5, seed=0) -> Measurements:
    return Measurements.from_laws(parameters, points, laws(callpaths, metrics, parameters),
                                  repetitions=repetitions, seed=seed)


def fewer_repetitions(m: Measurements, key, counts) -> Measurements:
    """``key`` with ``counts[i]`` repetitions at point i (Extra-P's examples drop some)."""
    m.values[key] = [reps[:n] for reps, n in zip(m.values[key], counts, strict=True)]
    return m


# name → (reader, writer, description, writer options, names as read: {metric: name}, {callpath: name})
TWINS = {
    # text/one_parameter_1.txt: REGION before METRIC, POINTS one per line, 6 repetitions
    "text/one_parameter_1": ("extrap-text", write_text, study(("x",), X5, ["compute"], ["time"], 6),
                             {"order": "region-first"}),
    # text/one_parameter_2.txt: 15 call paths, one metric
    "text/one_parameter_2": ("extrap-text", write_text,
                             study(("x",), X5, [f"main->f{i}" for i in range(15)], ["time"]),
                             {"order": "region-first"}),
    # text/one_parameter_3.txt: METRIC then REGION, two metrics
    "text/one_parameter_3": ("extrap-text", write_text, study(("x",), X5, ["compute"], ["time", "flops"]), {}),
    # text/one_parameter_5.txt: two call paths × two metrics
    "text/one_parameter_5": ("extrap-text", write_text,
                             study(("x",), X5, ["compute", "main->solve"], ["time", "flops"]), {}),
    # text/one_parameter_6.txt (and experiment4, two_parameter_4): no METRIC, POINTS on one line,
    # trailing spaces after region names, fewer repetitions at some points
    "text/one_parameter_6": ("extrap-text", write_text, fewer_repetitions(fewer_repetitions(
        study(("p",), P5, ["met1", "met2", "met3", "met4"], [""]), ("met2", ""), [5, 5, 5, 5, 4]),
        ("met4", ""), [3, 3, 3, 3, 3]), {"points": "line", "region_padding": " "}),
    # input/experiments_SP/experiment2.txt: one METRIC line for every region
    "text/experiment2": ("extrap-text", write_text, study(("p",), P5, ["met1", "met2"], ["test"]),
                         {"points": "line"}),
    # text/two_parameter_5.txt: two parameters on one PARAMETER line, points in groups on one line,
    # a comment after REGION, tab-separated single values, no METRIC
    "text/two_parameter_5": ("extrap-text", write_text,
                             study(("p", "s"), grid((2, 4, 8, 16, 32), (10, 20, 30, 40, 50)),
                                   ["main", "compute", "flat"], [""], 1),
                             {"points": "line", "separator": "\t", "comment": "formula: 2 + 0.884 * s * log(p)"}),
    # text/mpa/relearn_data.txt: a PARAMETER line each, call paths with parentheses, 2 repetitions
    "text/mpa_relearn": ("extrap-text", write_text,
                         study(("p", "n"), grid((32, 64, 128, 256, 512), (5000, 6000, 7000, 8000, 9000)),
                               ["main()", "main()->Initialization"], ["time"], 2),
                         {"parameter_lines": "each"}),
    # text/three_parameter_3.txt: 125 points, two call paths
    "text/three_parameter_3": ("extrap-text", write_text,
                               study(("x", "y", "z"), grid(*[(1, 2, 3, 4, 5)] * 3), ["a", "b"], ["time"]),
                               {"parameter_lines": "each"}),
    # text/mpa/gpr_test_data_1.txt: two metrics with different numbers of repetitions
    "text/gpr_test_data": ("extrap-text", write_text, fewer_repetitions(
        study(("x",), [(2,), (4,), (8,), (16,)], ["main", "main->k"], ["time", "maxtime"], 6),
        ("main->k", "maxtime"), [5, 5, 5, 5]), {}),
    # text/one_parameter_segmented_5.txt: 9 points; one region with 5 repetitions then 1
    "text/one_parameter_segmented_5": ("extrap-text", write_text, fewer_repetitions(
        study(("p",), [(1000.0 * k,) for k in range(1, 10)], ["met1", "met2", "met1+2"], [""]),
        ("met1+2", ""), [5, 5, 5, 5, 1, 1, 1, 1, 1]), {"points": "line"}),
    # input/input_data_1p.txt: the plain POINTS form
    "text/plain_points": ("extrap-text", write_text, study(("x",), X5, ["main"], ["metr"]),
                          {"points": "plain"}),
    # json/input_1.JSON .. input_12.JSON: the old layout with id tables, 1 to 4 parameters
    "json/input_1": ("extrap-json", write_json, study(("x",), [(4,), (8,), (16,), (32,), (64,)], ["sweep"],
                                                      ["time"]), {"layout": "old"}),
    "json/input_4": ("extrap-json", write_json, study(("x",), [(4,), (8,), (16,), (32,), (64,)],
                                                      ["sweep", "solve"], ["time", "flops"]), {"layout": "old"}),
    "json/input_8": ("extrap-json", write_json, study(("x", "y"), grid((4, 8, 16, 32, 64), (10, 20, 30, 40, 50)),
                                                      ["sweep", "solve"], ["time", "flops"]), {"layout": "old"}),
    "json/input_10": ("extrap-json", write_json, study(("x", "y", "z", "t"), grid(*[(1, 2, 3, 4, 5)] * 4),
                                                       ["sweep"], ["time"], 2), {"layout": "old", "indent": None}),
    # json/new/input2.json: the new layout, two metrics with 5 and 1 repetitions
    "json/new/input1": ("extrap-json", write_json, study(("x",), [(4,), (8,), (16,), (32,), (64,)], ["sweep"],
                                                         ["time"]), {}),
    "json/new/input2": ("extrap-json", write_json, fewer_repetitions(fewer_repetitions(
        study(("x", "y"), [(4, 10), (8, 20), (16, 30), (32, 40), (64, 50)], ["sweep", "sweep2"], ["time", "visits"]),
        ("sweep", "visits"), [1] * 5), ("sweep2", "visits"), [1] * 5), {}),
    # jsonlines/input_1.jsonl and most others: metric but no callpath, one record per repetition
    "jsonlines/metric_only": ("extrap-jsonl", write_jsonl,
                              study(("x", "y"), grid((4, 8, 16, 32, 64), (10, 20, 30, 40, 50)), ["<root>"], ["metr"]),
                              {"keys": ["metric"]}),
    # jsonlines/extended1.jsonl: metric and callpath keys
    "jsonlines/extended1": ("extrap-jsonl", write_jsonl,
                            study(("x", "y"), grid((1, 2, 3, 4, 5), (1, 2, 3, 4, 5)), ["test", "other"], ["metr"]), {}),
    # jsonlines/extended2.jsonl: a list of repetitions per record
    "jsonlines/extended2": ("extrap-jsonl", write_jsonl,
                            study(("x", "y"), grid((1, 2, 3), (1, 2, 3)), ["test"], ["metr"]), {"lists": True}),
    # jsonlines/matrix_3p_bands.jsonl: blank lines between records, a sparse set of points
    "jsonlines/matrix_3p_bands": ("extrap-jsonl", write_jsonl, fewer_repetitions(
        study(("x", "y", "z"), [(k, 1, 1) for k in range(1, 6)] + [(1, k, 1) for k in range(2, 6)]
              + [(1, 1, k) for k in range(2, 6)], ["main"], ["metr"], 3), ("main", "metr"), [3] + [1] * 12),
        {"blank_lines": True}),
    # jsonlines/matrix_4p.jsonl: four parameters along lines of the grid
    "jsonlines/matrix_4p": ("extrap-jsonl", write_jsonl,
                            study(("a", "b", "c", "d"), [(1, 1, 1, 1)] + [tuple(k if i == j else 1 for j in range(4))
                                                                          for i in range(4) for k in (2, 3, 4, 5)],
                                  ["main"], ["metr"], 1), {}),
    # talpas/talpas_1.txt .. talpas_9.txt
    "talpas/talpas_1": ("talpas", write_talpas, study(("x",), X5, ["compute"], ["time"]), {}),
    "talpas/talpas_8": ("talpas", write_talpas, study(("x",), X5, ["compute", "main->io"], ["time", "flops"]), {}),
    "talpas/talpas_9": ("talpas", write_talpas, study(("x", "y"), grid((20, 30, 40, 50, 60), (1, 2, 3, 4, 5)),
                                                      ["compute", "solve"], ["time", "flops"]), {}),
    "talpas/talpas_5": ("talpas", write_talpas, study(("x", "y", "z", "t"), grid(*[(1, 2, 3, 4, 5)] * 4),
                                                      ["compute"], ["time"], 1), {"lists": True}),
}
SUFFIX = {"extrap-text": ".txt", "extrap-json": ".json", "extrap-jsonl": ".jsonl", "talpas": ".txt"}


def write_twin(folder: Path, name: str) -> Path:
    reader, writer, m, options = TWINS[name]
    return writer(folder / (name.replace("/", "_") + SUFFIX[reader]), m, **options)


def assert_reads_back(exp: pmkit.Experiment, m: Measurements) -> None:
    """``exp`` holds exactly ``m``: parameters, points in order, names in order, values, NaN padding."""
    assert exp.parameters == m.parameters
    assert exp.points.tolist() == [list(p) for p in m.points]
    assert exp.metric_names == m.metrics
    assert [p for p in exp.callpaths.paths() if p in m.callpaths] == m.callpaths
    for (callpath, metric) in m.values:
        got = exp.measurements[metric][exp.callpaths.index(callpath)]
        want = m.table((callpath, metric))
        padded = np.full(got.shape, np.nan)
        padded[:, :want.shape[1]] = want
        np.testing.assert_array_equal(got, padded, err_msg=f"{callpath} / {metric}")
    for metric in m.metrics:  # nothing where nothing was written
        for callpath in exp.callpaths.paths():
            if (callpath, metric) not in m.values:
                assert np.isnan(exp.measurements[metric][exp.callpaths.index(callpath)]).all()


@pytest.mark.parametrize("name", sorted(TWINS))
def test_twin_reads_back_exactly(tmp_path, name):
    reader = TWINS[name][0]
    path = write_twin(tmp_path, name)
    exp = pmkit.read(path, registry=REGISTRY)
    assert exp.provenance.reader == reader
    assert_reads_back(exp, TWINS[name][2])


@pytest.mark.parametrize("name", sorted(TWINS))
def test_twin_is_sniffed_by_its_reader_only(tmp_path, name):
    path = write_twin(tmp_path, name)
    assert find_reader(path, REGISTRY).name == TWINS[name][0]
    assert [r.name for r in REGISTRY.all("reader") if r.sniff(path)] == [TWINS[name][0]]


def test_names_without_keys_are_extraps_defaults(tmp_path):
    """jsonlines/reduced.jsonl: records with neither metric nor callpath."""
    m = study(("x", "y"), grid((1, 2, 3), (1, 2)), ["main"], ["time"])
    exp = pmkit.read(write_jsonl(tmp_path / "reduced.jsonl", m, keys=()), registry=REGISTRY)
    assert exp.metric_names == ["<default>"] and exp.callpaths.paths() == ["<root>"]
    np.testing.assert_array_equal(exp.measurements["<default>"][0], m.table(("main", "time")))


def test_region_padding_and_indentation_are_stripped(tmp_path):
    """text/mpa/relearn_data.txt writes ``REGION   main()``; one_parameter_6 ``REGION met1 ``."""
    m = study(("p",), P5, ["main()"], ["time"])
    path = write_text(tmp_path / "pad.txt", m, region_padding="   ")
    path.write_text(path.read_text().replace("REGION main()", "REGION   main()"))
    assert pmkit.read(path, registry=REGISTRY).callpaths.paths() == ["main()"]


def test_text_and_json_of_one_study_agree(tmp_path):
    """The same measurements in every format read back identically (Talpas turns ';' in names to ',')."""
    m = study(("p", "n"), grid((2, 4, 8), (10, 20)), ["main", "main->solve", "main->io"], ["time", "bytes"], 3)
    paths = [write_text(tmp_path / "a.txt", m), write_json(tmp_path / "b.json", m),
             write_json(tmp_path / "c.json", m, layout="old"), write_jsonl(tmp_path / "d.jsonl", m),
             write_jsonl(tmp_path / "e.jsonl", m, lists=True), write_talpas(tmp_path / "f.txt", m)]
    for path in paths:
        assert_reads_back(pmkit.read(path, registry=REGISTRY), m)


# -- files Extra-P rejects: the twins of the real *neg* files ---------------------------------------

BASE = study(("p", "n"), grid((1000, 2000, 4000, 8000, 10000), (1000, 2000, 4000, 8000, 10000)),
             ["met1", "met2"], [""])


def test_missing_last_data_line(tmp_path):
    """input/experiments_MP/experiment_MP_neg1.txt: 24 DATA lines for 25 points."""
    path = write_text(tmp_path / "neg1.txt", BASE.without(("met1", ""), 24), points="line")
    with pytest.raises(InputError) as info:
        pmkit.read(path, registry=REGISTRY)
    assert "call path 'met1', metric '' has values at 24 of 25 points" in info.value.problem
    assert info.value.line is not None and str(path) in str(info.value)
    exp = pmkit.read(path, registry=REGISTRY, allow_missing_points=True)
    met1 = exp.measurements[""][exp.callpaths.index("met1")]
    assert np.isnan(met1[24]).all() and np.isfinite(met1[:24]).all()


def test_too_many_data_lines(tmp_path):
    """input/experiments_MP/experiment_MP_neg2.txt: a 26th DATA line for 25 points."""
    path = write_text(tmp_path / "neg2.txt", BASE, points="line")
    lines = path.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("DATA"))
    lines.insert(last + 1, "DATA 1 2 3")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="too many DATA lines for region 'met2'") as info:
        pmkit.read(path, registry=REGISTRY)
    assert info.value.line == last + 2


def test_plain_points_with_several_parameters(tmp_path):
    """input/experiments_SP/experiment3_neg.txt: four PARAMETER lines, POINTS 1000 2000 ..."""
    m = study(("p",), P5, ["met1"], ["test"])
    path = write_text(tmp_path / "neg3.txt", m, points="plain")
    path.write_text(path.read_text().replace("PARAMETER p", "PARAMETER p\nPARAMETER q\nPARAMETER r\nPARAMETER s"))
    with pytest.raises(InputError, match="one-parameter points") as info:
        pmkit.read(path, reader="extrap-text", registry=REGISTRY)
    assert info.value.line == 6


def test_no_parameter_line(tmp_path):
    """input/experiments_SP/experiment_neg.txt: the file starts with POINTS."""
    path = write_text(tmp_path / "neg.txt", study(("p",), P5, ["met1"], [""]), points="plain")
    path.write_text(path.read_text().replace("PARAMETER p\n", ""))
    assert find_reader(path, REGISTRY).name == "extrap-text"
    with pytest.raises(InputError, match="POINTS before any PARAMETER"):
        pmkit.read(path, registry=REGISTRY)


def test_old_json_with_a_missing_measurement(tmp_path):
    """json/input_11.JSON: no value for one coordinate of 'sweep'."""
    m = study(("x",), [(4,), (8,), (16,), (32,), (64,)], ["sweep"], ["time"]).without(("sweep", "time"), 2)
    path = write_json(tmp_path / "input_11.json", m, layout="old")
    with pytest.raises(InputError, match="'sweep', metric 'time' has values at 4 of 5 points"):
        pmkit.read(path, registry=REGISTRY)
    exp = pmkit.read(path, registry=REGISTRY, allow_missing_points=True)
    assert np.isnan(exp.measurements["time"][0, 2]).all() and np.isfinite(exp.values("time")[0, [0, 1, 3, 4]]).all()


def test_talpas_missing_points_allowed_on_request(tmp_path):
    """talpas/talpas_10_neg.txt: 'flops' measured at 3 of 5 points."""
    m = study(("x",), X5, ["compute"], ["time", "flops"]).without(("compute", "flops"), 1).without(
        ("compute", "flops"), 3)
    path = write_talpas(tmp_path / "talpas_10_neg.txt", m)
    with pytest.raises(InputError, match="has values at 3 of 5 points") as info:
        pmkit.read(path, reader="talpas", registry=REGISTRY)
    assert info.value.line is not None
    exp = pmkit.read(path, reader="talpas", registry=REGISTRY, allow_missing_points=True)
    flops = exp.measurements["flops"][exp.callpaths.index("compute")]
    measured = ~np.isnan(flops).all(axis=1)
    assert measured.tolist() == [True, False, True, False, True]
    assert_reads_back(exp, m)


def test_new_json_with_a_missing_point_and_jsonl_too(tmp_path):
    m = study(("x",), X5, ["a", "b"], ["time"]).without(("b", "time"), 0)
    for path in (write_json(tmp_path / "new.json", m), write_jsonl(tmp_path / "lines.jsonl", m)):
        with pytest.raises(InputError, match="'b', metric 'time' has values at 4 of 5 points"):
            pmkit.read(path, registry=REGISTRY)
        assert_reads_back(pmkit.read(path, registry=REGISTRY, allow_missing_points=True), m)


def test_writers_refuse_what_the_format_cannot_say(tmp_path):
    m = study(("x",), X5, ["a"], ["time"])
    with pytest.raises(ValueError, match="only the last points"):
        write_text(tmp_path / "gap.txt", m.without(("a", "time"), 1))
    with pytest.raises(ValueError, match="one-parameter"):
        write_text(tmp_path / "p.txt", study(("x", "y"), [(1, 2)], ["a"], ["t"]), points="plain")
    with pytest.raises(ValueError, match="without a 'callpath' key a file holds one callpath, not 2"):
        write_jsonl(tmp_path / "k.jsonl", study(("x",), X5, ["a", "b"], ["t"]), keys=["metric"])
    with pytest.raises(ValueError, match="coordinates"):
        Measurements(("x",), [(1, 2)])


# -- through the command line ------------------------------------------------------------------------

CLEAN = Measurements.from_laws(("p",), [(2,), (4,), (8,), (16,), (32,), (64,)],
                               {("main", "time"): lambda p: 3.0 + 2.0 * p, ("main->io", "time"): lambda p: 5.0},
                               repetitions=3, noise=0.0)


@pytest.mark.parametrize("writer,name,options", [
    (write_text, "clean.txt", {}), (write_json, "clean.json", {}), (write_json, "old.json", {"layout": "old"}),
    (write_jsonl, "clean.jsonl", {}), (write_talpas, "talpas.txt", {})])
def test_model_and_show_read_every_format(tmp_path, pmkit_cli, writer, name, options):
    path = writer(tmp_path / name, CLEAN, **options)
    result = pmkit_cli("model", path, "--json")
    assert result.returncode == 0, result.stderr
    models = {m["callpath"]: m for m in json.loads(result.stdout)["models"]}
    assert set(models) == {"main", "main->io"}
    assert models["main"]["function"]["constant"] == pytest.approx(3.0)
    (term,) = models["main"]["function"]["terms"]
    assert term["coefficient"] == pytest.approx(2.0)
    assert term["factors"] == [{"parameter": "p", "exponent": "1", "log_exponent": "0"}]
    assert models["main->io"]["function"]["terms"] == []
    shown = pmkit_cli("show", path)
    assert shown.returncode == 0, shown.stderr
    assert "io" in shown.stdout and "main" in shown.stdout and "6 points p=2…64" in shown.stdout


def test_cli_names_a_rejected_file_in_one_line(tmp_path, pmkit_cli):
    path = write_text(tmp_path / "neg.txt", BASE.without(("met1", ""), 24), points="line")
    result = pmkit_cli("model", path)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr and "24 of 25 points" in result.stderr


# -- .extra-p experiments: the twin of input/exp_only_mean_median.extra-p ------------------------------

def _stored_function():
    """``c + a·log2(y) + b·x^(3/2)·log2(x)^2·log2(y)``: the shape of that file's stored models."""
    from fractions import Fraction

    from pmkit.pmnf import Factor, Function, Term

    return Function(("x", "y"), 1.37, (Term(6.7, (Factor("y", 0, 1),)),
                                       Term(0.044, (Factor("x", Fraction(3, 2), 2), Factor("y", 0, 1)))))


def _by_hand(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return 1.37 + 6.7 * np.log2(y) + 0.044 * x ** 1.5 * np.log2(x) ** 2 * np.log2(y)


MEAN_MEDIAN = study(("x", "y"), grid((20, 30, 40, 50, 60), (1, 2, 3, 4, 5)), ["merge", "sort"], ["time"])


@pytest.fixture
def statistics_only(tmp_path) -> Path:
    """Extra-P 4.0.3's layout: statistics only (no value chunks) and one multi-parameter model set."""
    from pmkit.testing.extrap_inputs import StoredModel, write_extrap_experiment

    models = [StoredModel(callpath, "time", _stored_function(), rss=312.5, smape=6.64, ar2=0.99)
              for callpath in MEAN_MEDIAN.callpaths]
    return write_extrap_experiment(tmp_path / "exp_only_mean_median.extra-p", MEAN_MEDIAN, keep_values=False,
                                   version="4.0.3", model_sets={"Default Model": models})


def test_statistics_only_experiment(statistics_only):
    exp = pmkit.read(statistics_only, registry=REGISTRY)
    assert exp.provenance.reader == "extrap-experiment"
    assert exp.parameters == ("x", "y") and exp.metric_names == ["time"]
    assert exp.points.tolist() == [list(p) for p in MEAN_MEDIAN.points]
    assert exp.callpaths.paths() == ["merge", "sort"]
    for callpath in MEAN_MEDIAN.callpaths:
        means = np.nanmean(MEAN_MEDIAN.table((callpath, "time")), axis=1)
        got = exp.measurements["time"][exp.callpaths.index(callpath)]
        assert got.shape[1] == 1  # one value per point: the mean, there are no repetitions
        np.testing.assert_allclose(got[:, 0], means, rtol=1e-15)
    assert any("50 of 50 measurements keep no repetition values" in note for note in exp.provenance.notes)
    median = pmkit.read(statistics_only, registry=REGISTRY, measure="median")
    medians = np.nanmedian(MEAN_MEDIAN.table(("sort", "time")), axis=1)
    np.testing.assert_allclose(median.measurements["time"][1, :, 0], medians, rtol=1e-15)
    assert any("keep no repetition values; their median" in note for note in median.provenance.notes)


def test_stored_models_evaluate_as_written(statistics_only):
    exp = pmkit.read(statistics_only, registry=REGISTRY)
    assert list(exp.stored_models) == ["Default Model"]
    models = exp.stored_models["Default Model"]
    assert models.modeler == "extrap:MultiParameterModeler" and len(models) == 2
    points = exp.points
    extrapolated = points[-1] * np.array([[2.0], [8.0]])
    for callpath in ("merge", "sort"):
        model = models.get(callpath, "time")
        np.testing.assert_allclose(model.function.evaluate(points), _by_hand(points[:, 0], points[:, 1]), rtol=1e-12)
        np.testing.assert_allclose(model.function.evaluate(extrapolated),
                                   _by_hand(extrapolated[:, 0], extrapolated[:, 1]), rtol=1e-12)
        assert (model.quality.rss, model.quality.smape) == (312.5, 6.64)
    from fractions import Fraction

    term = models.get("sort", "time").function.terms[1]
    assert [(f.parameter, f.exponent, f.log_exponent) for f in term.factors] == [
        ("x", Fraction(3, 2), Fraction(2)), ("y", Fraction(0), Fraction(1))]


def test_kept_values_come_back_as_repetitions(tmp_path):
    from pmkit.testing.extrap_inputs import write_extrap_experiment

    m = fewer_repetitions(study(("p",), P5, ["main", "main->solve"], ["time", "visits"]), ("main", "visits"),
                          [1, 1, 1, 1, 1])
    path = write_extrap_experiment(tmp_path / "kept.extra-p", m)
    exp = pmkit.read(path, registry=REGISTRY)
    assert_reads_back(exp, m)
    assert exp.stored_models == {} and not any("keep no" in note for note in exp.provenance.notes)


def test_extra_p_sniffing(statistics_only, tmp_path):
    reader = REGISTRY.get("reader", "extrap-experiment")
    assert reader.sniff(statistics_only)
    assert find_reader(statistics_only, REGISTRY).name == "extrap-experiment"
    text = write_text(tmp_path / "input_data_1p.txt", study(("x",), X5, ["main"], ["metr"]), points="plain")
    assert not reader.sniff(text)
    assert not reader.sniff(tmp_path / "no-such-file.extra-p")


def test_show_prints_the_stored_model_set(statistics_only, pmkit_cli):
    result = pmkit_cli("show", statistics_only, "--callpath", "sort")
    assert result.returncode == 0, result.stderr
    assert "Default Model" in result.stdout


@pytest.mark.parametrize("version,note", [("4.0.3", "Extra-P modeled the median of the repetitions"),
                                          ("4.2.5", "Extra-P modeled the median of the repetitions")])
def test_stored_models_say_what_extrap_modeled(tmp_path, version, note):
    from pmkit.testing.extrap_inputs import StoredModel, write_extrap_experiment

    models = [StoredModel("merge", "time", _stored_function(), measure="median")]
    path = write_extrap_experiment(tmp_path / "median.extra-p", MEAN_MEDIAN, version=version,
                                   model_sets={"median model": models})
    model = pmkit.read(path, registry=REGISTRY).stored_models["median model"].get("merge", "time")
    assert note in model.notes and f"stored by Extra-P {version} in model set 'median model'" in model.notes


def test_windows_line_ends_and_names_outside_ascii(tmp_path):
    m = study(("p", "n"), grid((2, 4, 8), (10, 20)), ["Grüße", "Grüße->naïve_∂"], ["time"], 3)
    path = write_text(tmp_path / "crlf.txt", m)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert_reads_back(pmkit.read(path, registry=REGISTRY), m)


def test_points_line_without_points(tmp_path):
    path = tmp_path / "empty_points.txt"
    path.write_text("PARAMETER p\nPOINTS\nREGION r\nDATA 1\n")
    with pytest.raises(InputError, match="POINTS line lists no points") as info:
        pmkit.read(path, registry=REGISTRY)
    assert info.value.line == 2


def test_data_lines_with_unicode_spaces_join_the_others_in_order(tmp_path):
    """Lines with bytes outside ASCII are read by Python's split (as Extra-P's ``\\s+``), the rest in bulk."""
    m = study(("p",), P5, ["main", "main->solve"], ["time"], 3)
    path = write_text(tmp_path / "spaces.txt", m)
    lines = path.read_text().split("\n")
    odd = [i for i, line in enumerate(lines) if line.startswith("DATA")][1::3]
    for i in odd:
        lines[i] = lines[i].replace(" ", "\u3000").replace("DATA\u3000", "DATA\u00a0")
    path.write_text("\n".join(lines))
    assert_reads_back(pmkit.read(path, registry=REGISTRY), m)


@pytest.mark.parametrize("data,fragment", [("DATA inf x", "'inf' is not a finite number"),
                                           ("DATA 1 -inf", "'-inf' is not a finite number")])
def test_infinite_values_are_named(tmp_path, data, fragment):
    path = tmp_path / "inf.txt"
    path.write_text(f"PARAMETER p\nPOINTS 1\nREGION r\n{data}\n")
    with pytest.raises(InputError, match=fragment) as info:
        pmkit.read(path, registry=REGISTRY)
    assert info.value.line == 4


def test_new_json_names_the_first_bad_value(tmp_path):
    m = study(("x",), X5, ["sweep"], ["time"])
    path = write_json(tmp_path / "bad.json", m)
    document = json.loads(path.read_text())
    document["measurements"]["sweep"]["time"][3]["values"][1] = "fast"
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match="expected a number") as info:
        pmkit.read(path, registry=REGISTRY)
    assert info.value.member == "measurements/sweep/time[3]"
