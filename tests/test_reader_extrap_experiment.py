"""The ``.extra-p`` reader against what the stock Extra-P reads from the same files.

``tests/extrap_files/*.extra-p`` were written by Extra-P itself and ``reference.json`` holds what
Extra-P's ``read_experiment`` loads from them (see ``make_files.py`` there); the shared data's
``exp_only_mean_median.extra-p`` (written by Extra-P 4.0.3) is checked the same way.  Malformed
files are written here by code.
"""

from __future__ import annotations

import json
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from pmkit import InputError, UsageError
from pmkit.plugins import build_registry
from pmkit.readers.extrap_experiment import (
    ExtrapExperimentReader,
    ExtrapFormatError,
    exponent_from_json,
    function_from_json,
)
from pmkit.sdk import read
from pmkit.testing.extrap_inputs import write_extrap_archive

FILES = Path(__file__).parent / "extrap_files"
REFERENCE = json.loads((FILES / "reference.json").read_text())
OWN_FILES = ["mm_cube.extra-p", "text_2p.extra-p", "segmented.extra-p"]
SHARED_FILE = "exp_only_mean_median.extra-p"
READER = ExtrapExperimentReader()


def _path(name: str, shared_data: Path | None = None) -> Path:
    if name == SHARED_FILE:
        assert shared_data is not None
        return shared_data / "extrap-formats" / "input" / SHARED_FILE
    return FILES / name


def _num(value: float | str) -> float:
    return float(value)


@pytest.fixture(params=[*OWN_FILES, SHARED_FILE])
def case(request: pytest.FixtureRequest) -> tuple[Path, dict]:
    name = request.param
    if name == SHARED_FILE:
        path = _path(name, request.getfixturevalue("shared_data"))
    else:
        path = _path(name)
    return path, REFERENCE[name]


def test_structure_matches_extrap(case: tuple[Path, dict]) -> None:
    path, ref = case
    exp = READER.read(path)
    assert list(exp.parameters) == ref["parameters"]
    assert exp.metric_names == ref["metrics"]
    assert {tuple(p) for p in exp.points.tolist()} == {tuple(c) for c in ref["coordinates"]}
    assert len(exp.points) == len(ref["coordinates"])
    for callpath in ref["callpaths"]:
        assert callpath in exp.callpaths
    assert exp.provenance.reader == "extrap-experiment"


def test_measurements_match_extrap(case: tuple[Path, dict]) -> None:
    path, ref = case
    exp = READER.read(path)
    point_index = {tuple(p): i for i, p in enumerate(exp.points.tolist())}
    means = {m: exp.values(m, "mean") for m in exp.metric_names}
    for entry in ref["measurements"]:
        cp = exp.callpaths.index(entry["callpath"])
        pt = point_index[tuple(entry["coordinate"])]
        np.testing.assert_allclose(means[entry["metric"]][cp, pt], _num(entry["mean"]), rtol=1e-12)
        reps = exp.measurements[entry["metric"]][cp, pt]
        reps = reps[~np.isnan(reps)]
        if entry["values"] is None:
            assert reps.tolist() == [_num(entry["mean"])]
        elif len(entry["values_shape"]) == 1:
            assert reps.tolist() == [_num(v) for v in entry["values"]]
            np.testing.assert_allclose(np.median(reps), _num(entry["median"]), rtol=1e-12)
        else:
            stored = exp.locations[entry["metric"]][pt][cp]
            rows, cols = entry["values_shape"]
            np.testing.assert_array_equal(stored[:rows, :cols].reshape(-1), [_num(v) for v in entry["values"]])


def test_summary_statistic_chosen_by_measure(shared_data: Path) -> None:
    ref = REFERENCE[SHARED_FILE]
    path = _path(SHARED_FILE, shared_data)
    exp = READER.read(path, measure="median")
    point_index = {tuple(p): i for i, p in enumerate(exp.points.tolist())}
    for entry in ref["measurements"]:
        cp, pt = exp.callpaths.index(entry["callpath"]), point_index[tuple(entry["coordinate"])]
        assert exp.measurements[entry["metric"]][cp, pt].tolist() == [_num(entry["median"])]
    assert any("keep no repetition values; their median" in note for note in exp.provenance.notes)


def test_stored_models_evaluate_like_extrap(case: tuple[Path, dict]) -> None:
    path, ref = case
    exp = READER.read(path)
    assert list(exp.stored_models) == [s["name"] for s in ref["model_sets"]]
    coordinates = np.array(ref["coordinates"])
    extrapolated = np.array(ref["extrapolated"])
    checked = 0
    for ref_set in ref["model_sets"]:
        models = exp.stored_models[ref_set["name"]]
        assert models.modeler == f"extrap:{ref_set['modeler']}"
        assert len(models) == len(ref_set["models"])
        for entry in ref_set["models"]:
            model = models.get(entry["callpath"], entry["metric"])
            assert model is not None
            if entry["type"] == "SegmentedFunction":
                assert model.function is None
                assert any("segmented" in note for note in model.notes)
                continue
            at_points = [_num(v) for v in entry["at_points"]]
            np.testing.assert_allclose(model.function.evaluate(coordinates), at_points, rtol=1e-10, atol=1e-300)
            np.testing.assert_allclose(model.function.evaluate(extrapolated), [_num(v) for v in entry["extrapolated"]],
                                       rtol=1e-10, atol=1e-300)
            np.testing.assert_allclose(model.quality.rss, _num(entry["RSS"]), rtol=1e-12)
            np.testing.assert_allclose(model.quality.smape, _num(entry["SMAPE"]), rtol=1e-12)
            checked += 1
    assert checked > 0


def test_exponents_are_exact_fractions() -> None:
    exp = READER.read(FILES / "mm_cube.extra-p")
    ref = REFERENCE["mm_cube.extra-p"]["model_sets"][0]["models"]
    with_fraction = [m for m in ref if "x^(3/4) * log2(x)^(2.0)" in m["text"]]
    assert with_fraction
    for entry in with_fraction:
        model = exp.stored_models["Extra-P default"].get(entry["callpath"], entry["metric"])
        (factor,) = model.function.terms[0].factors
        assert (factor.exponent, factor.log_exponent) == (Fraction(3, 4), Fraction(2))
        assert isinstance(factor.exponent, Fraction)
        assert "x^(3/4) * log2(x)^(2)" in model.function.extrap_text()


def test_multi_parameter_terms_keep_their_parameters() -> None:
    exp = READER.read(FILES / "text_2p.extra-p")
    model = exp.stored_models["mean model"][0]
    shapes = {tuple((f.parameter, f.exponent, f.log_exponent) for f in t.factors) for t in model.function.terms}
    assert (("x", Fraction(3, 2), Fraction(2)), ("y", Fraction(0), Fraction(1))) in shapes
    assert model.modeler == "extrap:MultiParameterModeler"


def test_models_option_off() -> None:
    assert READER.read(FILES / "text_2p.extra-p", models=False).stored_models == {}


def test_found_by_sniffing_through_the_sdk(shared_data: Path) -> None:
    registry = build_registry(entry_points=False)
    exp = read(FILES / "segmented.extra-p", registry=registry)
    assert exp.provenance.reader == "extrap-experiment"
    assert READER.sniff(_path(SHARED_FILE, shared_data))
    assert not READER.sniff(shared_data / "extrap-formats" / "input" / "input_data_1p.txt")
    assert not READER.sniff(FILES / "no-such-file.extra-p")


@pytest.mark.parametrize(("value", "expected"), [
    ("3/4", Fraction(3, 4)), (2.0, Fraction(2)), (1, Fraction(1)), (0.3333333333333333, Fraction(1, 3)),
    ("-1/2", Fraction(-1, 2)), ("0.25", Fraction(1, 4)), (0.1234567891234, Fraction(0.1234567891234)),
])
def test_exponent_parsing(value: object, expected: Fraction) -> None:
    assert exponent_from_json(value) == expected


@pytest.mark.parametrize("value", ["__import__('os').system('true')", "nan", float("inf"), True, None, "1/0"])
def test_exponent_parsing_refuses(value: object) -> None:
    with pytest.raises(ExtrapFormatError):
        exponent_from_json(value)


def test_function_single_parameter_and_constant() -> None:
    data = {"$type": "SingleParameterFunction", "constant_coefficient": "1/2", "compound_terms": [
        {"coefficient": 3.0, "simple_terms": [{"term_type": "polynomial", "exponent": "2/3"},
                                              {"term_type": "logarithm", "exponent": 1.0}]}]}
    f = function_from_json(data, ("p",))
    assert f.evaluate(8.0) == pytest.approx(0.5 + 3.0 * 8 ** (2 / 3) * 3)
    assert f.terms[0].factors[0].exponent == Fraction(2, 3)
    assert function_from_json({"$type": "ConstantFunction", "constant_coefficient": 4.0}, ("p",)).evaluate(9.0) == 4.0


# --- malformed files, written here ------------------------------------------------------------


def _write(path: Path, data: object, arrays: list[np.ndarray] = (), *, raw_json: str | None = None) -> Path:
    """An archive laid out like Extra-P's ``write_experiment`` (JSON plus value chunk 0)."""
    return write_extrap_archive(path, data, arrays, raw_json=raw_json)


def _measurement(x: float, mean: float, values: list[int] | None = None) -> dict:
    out = {"coordinate": [x], "mean": mean, "median": mean, "minimum": mean, "maximum": mean, "std": 0.0}
    if values is not None:
        out["values"] = values
    return out


def _experiment(measurements: list[dict], **extra: object) -> dict:
    return {"Extra-P": "4.2.5", "parameters": ["p"], "measurements": {"main->solve": {"time": measurements}},
            **extra}


def test_two_dimensional_values_become_locations(tmp_path: Path) -> None:
    arrays = [np.array([[1.0, 3.0], [5.0, 7.0]]), np.array([[2.0, 2.0], [4.0, 4.0]])]
    path = _write(tmp_path / "loc.extra-p", _experiment([_measurement(2, 4.0, [0, 0]), _measurement(4, 3.0, [0, 1])]),
                  arrays)
    exp = READER.read(path)
    cp = exp.callpaths.index("main->solve")
    assert exp.measurements["time"][cp, 0].tolist() == [2.0, 6.0]
    assert exp.measurements["time"][cp, 1].tolist() == [2.0, 4.0]
    np.testing.assert_array_equal(exp.locations["time"][0][cp], arrays[0])
    assert "main" in exp.callpaths and np.isnan(exp.measurements["time"][exp.callpaths.index("main")]).all()


def test_stale_values_fall_back_to_statistics(tmp_path: Path) -> None:
    path = _write(tmp_path / "stale.extra-p", _experiment([_measurement(2, 10.0, [0, 0]), _measurement(4, 2.0)]),
                  [np.array([1.0, 2.0, 3.0])])
    exp = READER.read(path)
    assert exp.measurements["time"][1, :, 0].tolist() == [10.0, 2.0]
    assert any("disagree with their stored mean" in note for note in exp.provenance.notes)


@pytest.mark.parametrize(("data", "raw", "arrays", "message", "member"), [
    (None, "{\"parameters\": [\"p\"],\n \"measurements\": {", [], "is not valid JSON", "experiment.json"),
    (None, "[1, 2]", [], "must hold a JSON object", "experiment.json"),
    ({"parameters": ["p"], "measurements": {}}, None, [], "holds no measured values", "experiment.json"),
    ({"measurements": {"a": {"t": [_measurement(1, 1.0)]}}}, None, [], "parameters: missing", "experiment.json"),
    (_experiment([{"coordinate": [1, 2], "mean": 1.0}]), None, [], "has 2 values but there are 1 parameters",
     "experiment.json"),
    (_experiment([{"coordinate": ["x"], "mean": 1.0}]), None, [], "not a number", "experiment.json"),
    (_experiment([_measurement(1, 1.0), _measurement(1, 2.0)]), None, [], "second measurement", "experiment.json"),
    (_experiment([_measurement(1, 1.0, [0, 0])]), None, [], "missing from the archive", "values/0.indx"),
    (_experiment([_measurement(1, 1.0, [0, 3])]), None, [np.array([1.0])], "has no array 3", "values/0.vals"),
    (_experiment([_measurement(1, 1.0, [0, 0])]), None, [np.array([{"a": 1}], dtype=object)], "cannot be read",
     "values/0.vals"),
    (_experiment([_measurement(1, 1.0, "x")]), None, [], "[chunk, index] pair", "experiment.json"),
    ({"parameters": ["p"], "measurements": {"a->->b": {"t": [_measurement(1, 1.0)]}}}, None, [],
     "empty region name", "experiment.json"),
])
def test_bad_files_name_file_member_and_problem(tmp_path: Path, data: object, raw: str | None,
                                                arrays: list[np.ndarray], message: str, member: str) -> None:
    path = _write(tmp_path / "bad.extra-p", data, arrays, raw_json=raw)
    with pytest.raises(InputError) as info:
        READER.read(path)
    assert message in str(info.value)
    assert info.value.member == member
    assert str(path) in str(info.value)


def test_bad_model_json_names_the_model(tmp_path: Path) -> None:
    model = {"hypothesis": {"function": {"$type": "SingleParameterFunction", "constant_coefficient": 1.0,
                                         "compound_terms": [{"coefficient": 1.0, "simple_terms": [
                                             {"term_type": "exponential", "exponent": 1.0}]}]}}}
    data = _experiment([_measurement(1, 1.0)], modelers=[{"name": "m", "modeler": {"$type": "X"},
                                                          "models": {"main->solve": {"time": model}}}])
    with pytest.raises(InputError) as info:
        READER.read(_write(tmp_path / "model.extra-p", data))
    assert "'main->solve' → 'time'" in str(info.value)
    assert "term_type 'exponential'" in str(info.value)


def test_not_an_archive_and_archive_without_experiment(tmp_path: Path) -> None:
    text = tmp_path / "text.extra-p"
    text.write_text("PARAMETER p\n")
    with pytest.raises(InputError, match="zip archives"):
        READER.read(text)
    assert not READER.sniff(text)
    other = tmp_path / "other.extra-p"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert not READER.sniff(other)
    with pytest.raises(InputError, match=r"without experiment\.json"):
        READER.read(other)


def test_unknown_measure_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        READER.read(FILES / "segmented.extra-p", measure="mode")


def test_metric_fields_from_pmkit_tags(tmp_path: Path) -> None:
    data = _experiment([_measurement(1, 1.0)], metrics={"time": {"tags": {
        "pmkit__unit": "s", "pmkit__inclusive": True, "pmkit__description": "wall time", "other": "x"}}})
    metric = READER.read(_write(tmp_path / "tags.extra-p", data)).metric("time")
    assert (metric.unit, metric.inclusive, metric.description) == ("s", True, "wall time")
