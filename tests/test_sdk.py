"""The SDK's verbs: model, detect and analyse, options resolved once, the prior passed once."""

from __future__ import annotations

import re

import pytest

import pmkit
from pmkit.analysis import Analysis, LoadedPrior
from pmkit.constraints import Constraint
from pmkit.errors import UsageError
from pmkit.experiment import ExperimentBuilder
from pmkit.findings import Finding
from pmkit.hookspecs import hookimpl
from pmkit.options import Option
from pmkit.plugins import build_registry
from pmkit.sdk import analyse, detect, model, model_with_prior
from pmkit.testing.plugins import sample_experiment


def test_sdk_takes_a_single_metric_name():
    b = ExperimentBuilder(["p"])
    for p in (2, 4, 8, 16, 32):
        b.add_values("main", "time", [p], [float(p)])
        b.add_values("main", "visits", [p], [1.0])
    assert [m.metric for m in model(b.build(), metrics="time")] == ["time"]


class Recorder:
    """A detector that records the options it was called with."""

    def __init__(self, name: str, *options: Option) -> None:
        self.name = name
        self.description = f"test detector {name}"
        self.options = options
        self.calls: list[dict] = []

    def detect(self, experiment, models, **options):
        self.calls.append(options)
        return [Finding(self.name, "seen", severity=float(len(self.calls)))]


TRACER = Recorder("tracer", Option("reference", str, "", "reference run"), Option("q", float, 0.9, "quantile"))
OTHER = Recorder("other", Option("q", float, 0.5, "another quantile"))


class _Detectors:
    @hookimpl
    def pmkit_register_detectors(self, register):
        register(TRACER)
        register(OTHER)


@pytest.fixture
def registry():
    TRACER.calls.clear()
    OTHER.calls.clear()
    return build_registry([_Detectors()], entry_points=False)


def test_detector_options_reach_every_detector_declaring_them_resolved(registry):
    experiment = sample_experiment()
    models = model(experiment, registry=registry)
    detect(experiment, models, ["tracer", "other"], registry=registry, reference="ref.json", q="0.8")
    assert TRACER.calls == [{"reference": "ref.json", "q": 0.8}]
    assert OTHER.calls == [{"q": 0.8}], "parsed to the declared type, every declared option given"
    detect(experiment, models, ["tracer", "other"], registry=registry, **{"tracer.q": 0.99})
    assert TRACER.calls[-1] == {"reference": "", "q": 0.99} and OTHER.calls[-1] == {"q": 0.5}


def test_detect_rejects_an_option_no_selected_detector_declares(registry):
    experiment = sample_experiment()
    models = model(experiment, registry=registry)
    with pytest.raises(UsageError, match="no detector that runs has an option reference"):
        detect(experiment, models, ["other"], registry=registry, reference="ref.json")
    with pytest.raises(UsageError, match="detector tracer has no option speed"):
        detect(experiment, models, ["tracer"], registry=registry, **{"tracer.speed": "1"})
    assert TRACER.calls == [] and OTHER.calls == []


class _Prior:
    """Declares ``main->compute`` constant and reports one contradiction per call, as a taint prior would."""

    def __init__(self) -> None:
        self.asked = 0

    def constraints(self, experiment):
        self.asked += 1
        return {"main->compute": Constraint(constant=True, source="fixed", reason="said so")}

    def contradictions(self, experiment, constrained, unconstrained, constraints):
        assert constrained.get("main->compute", "time").function.is_constant
        assert not unconstrained.get("main->compute", "time").function.is_constant
        return [Finding("fixed", "contradiction", callpath="main->compute", severity=2.0)]


def test_the_prior_is_passed_once_and_its_contradictions_are_findings(monkeypatch):
    calls = []
    from pmkit import sdk

    resolve = sdk.resolve_options
    monkeypatch.setattr(sdk, "resolve_options", lambda *a: calls.append(a[2]) or resolve(*a))
    experiment = sample_experiment()
    knowledge = _Prior()
    prior = LoadedPrior("fixed", ("prior.json",), knowledge)
    models, outcome = model_with_prior(experiment, prior, acceptance="1.5")
    assert calls == ["modeler refining"], "options resolved once, though the modeler ran twice"
    assert knowledge.asked == 1 and outcome.name == "fixed"
    assert models.get("main->compute", "time").function.is_constant
    assert [f.title for f in outcome.contradictions] == ["contradiction"]
    analysis = analyse(experiment, prior=prior, detectors=[])
    result = analysis.inputs[0]
    assert [f.title for f in result.findings] == ["contradiction"]
    assert result.report.row("main->compute").prior_note == "constant by fixed (said so)"
    assert result.prior.constraints["main->compute"].constant


def test_analyse_reads_models_detects_and_reports_once(tmp_path):
    path = tmp_path / "exp.txt"
    lines = ["PARAMETER p", "POINTS 2 4 8 16 32", "REGION main", "METRIC time"]
    lines += [f"DATA {3 + 2 * p} {3.1 + 2 * p}" for p in (2, 4, 8, 16, 32)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    analysis = pmkit.analyse([path, tmp_path / "missing.txt"], target={"p": 128}, callpath="main")
    assert isinstance(analysis, Analysis)
    (result,) = analysis.inputs
    assert result.source == str(path) and result.metric == "time"
    assert result.report.target == {"p": 128.0}
    assert result.report.row("main").predicted == pytest.approx(3.05 + 2 * 128, rel=0.01)
    assert result.detail is not None and result.detail.predictions[-1].point == {"p": 128.0}
    assert result.findings == []  # the built-in detector ran and found nothing
    (skipped,) = analysis.skipped
    assert skipped.source.endswith("missing.txt") and "no such file" in skipped.problem


def test_analyse_with_models_given_skips_modeling():
    experiment = sample_experiment()
    models = model(experiment)
    result = pmkit.analyse(experiment, models=models, detectors=[]).inputs[0]
    assert result.models is models and result.findings is None
    with pytest.raises(UsageError, match="one experiment only"):
        pmkit.analyse([experiment, experiment], models=models)
    with pytest.raises(UsageError, match="no detector that runs has an option reference; their options: none"):
        pmkit.analyse(experiment, detectors=[], detector_options={"reference": "ref.json"})


def test_analyse_resolves_each_plugin_s_options_once_for_all_inputs(monkeypatch, registry):
    from pmkit import sdk

    owners = []
    resolve = sdk.resolve_options
    monkeypatch.setattr(sdk, "resolve_options", lambda *a: owners.append(a[2]) or resolve(*a))
    experiments = [sample_experiment(), sample_experiment(seed=1, noise=0.01)]
    analysis = analyse(experiments, detectors=["tracer", "other"], detector_options={"q": "0.7"},
                       modeler_options={"termination": "3"}, registry=registry)
    assert len(analysis.inputs) == 2
    assert sorted(owners) == ["detector other", "detector tracer", "modeler refining"]
    assert TRACER.calls == [{"reference": "", "q": 0.7}] * 2 and OTHER.calls == [{"q": 0.7}] * 2


def test_a_folder_of_separate_inputs_gets_a_hint_to_name_them(tmp_path):
    """A folder of Extra-P text files is no input on its own; the error says its files are, and how."""
    text = "PARAMETER p\n\nPOINTS ( 2 ) ( 4 ) ( 8 )\n\nREGION main\nMETRIC time\nDATA 1\nDATA 2\nDATA 3\n"
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert pmkit.read(tmp_path / "a.txt").callpaths.paths() == ["main"]
    with pytest.raises(pmkit.InputError) as caught:
        pmkit.read(tmp_path)
    assert "no reader recognises this input" in str(caught.value)
    assert f"its files are inputs of their own (extrap-text): give them one by one, e.g. {tmp_path / '*'}" in str(
        caught.value)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("# not a measurement\n", encoding="utf-8")
    with pytest.raises(pmkit.InputError) as caught:
        pmkit.read(other)
    assert "no reader recognises this input" in str(caught.value)
    assert "choose one with --reader (reader= in pmkit.read)" in str(caught.value)  # the SDK's name too
    assert "inputs of their own" not in str(caught.value)


def test_an_empty_file_or_folder_is_called_empty_not_unrecognised(tmp_path, pmkit_cli):
    """An empty file (``perf stat`` writing to stderr leaves its ``-o`` file empty) or folder: the
    error says it is empty, rather than listing the readers and suggesting ``--reader``."""
    empty = tmp_path / "app.p8.r1.csv"
    empty.write_bytes(b"")
    folder = tmp_path / "runs"
    folder.mkdir()
    for path, text in ((empty, "is empty (0 bytes): there is nothing to read"),
                       (folder, "is an empty folder: there is nothing to read")):
        with pytest.raises(pmkit.InputError) as caught:
            pmkit.read(path)
        assert str(caught.value) == f"{path}: {text}"
        result = pmkit_cli("model", str(path))
        assert result.returncode == 1
        assert result.stderr == f"error: {path}: {text}\n"
    (folder / "notes.md").write_text("# not a measurement\n", encoding="utf-8")
    with pytest.raises(pmkit.InputError, match="no reader recognises this input"):
        pmkit.read(folder)


def test_perf_stat_output_left_empty_on_stdout_is_called_empty(shared_data):
    """The real capture of ``perf stat -x,`` writing to stderr: its stdout file is empty, and says so."""
    path = shared_data / "perf-stat" / "20_csv_to_stderr.stdout"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    with pytest.raises(pmkit.InputError) as caught:
        pmkit.read(path)
    assert str(caught.value).endswith("is empty (0 bytes): there is nothing to read")
    assert "task-clock" in pmkit.read(path.with_suffix(".err")).metric_names


def _assert_extrap3_named(path):
    with pytest.raises(pmkit.InputError) as caught:
        pmkit.read(path)
    assert "is an Extra-P 3 (legacy) experiment, which pmkit does not read" in str(caught.value)
    assert f"extrap --extra-p-3 {path} --save-experiment {path.name}.extra-p" in str(caught.value)


def test_an_extrap3_legacy_experiment_is_named_with_its_conversion(tmp_path):
    """Extra-P 3's binary experiments are named as such, with the Extra-P 4 command that converts
    them, instead of "no reader recognises this input"."""
    generated = tmp_path / "exp3"  # the header of Extra-P 3's files: version fields, then the qualifier
    generated.write_bytes(b"\x01\x00\x11\x00\x00\x00EXTRAP_EXPERIMENT\x03\x00\x00\x001.0\t\x00")
    _assert_extrap3_named(generated)


def test_extrap3_experiments_in_extrap_test_data_are_named(shared_data):
    """The three Extra-P 3 files beside the text inputs in Extra-P's own test data."""
    folder = shared_data / "extrap-formats" / "input"
    legacy = [folder / name for name in ("experiment_3", "experiment_3_mp", "experiment_3_sparse")]
    if not all(path.is_file() for path in legacy):
        pytest.skip(f"Extra-P 3 experiments absent from {folder}")
    for path in legacy:
        _assert_extrap3_named(path)


def test_a_truncated_zip_archive_is_named_damaged(tmp_path):
    """An .extra-p experiment cut short (a copy interrupted half-way): every reader's sniff says no,
    and the error says what the file is instead of "no reader recognises this input"."""
    import zipfile

    whole = tmp_path / "whole.extra-p"
    with zipfile.ZipFile(whole, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("experiment.json", '{"parameters": ["p"]}' + " " * 4000)
    cut = tmp_path / "cut.extra-p"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    with pytest.raises(pmkit.InputError) as caught:
        pmkit.read(cut)
    assert str(caught.value) == (f"{cut}: is a damaged or truncated zip archive (an .extra-p experiment is one): "
                                 "its table of contents is missing; copy or write it again")


def test_the_shared_extra_p_experiment_cut_short_is_named_damaged(tmp_path, shared_data):
    source = shared_data / "extrap-formats" / "input" / "exp_only_mean_median.extra-p"
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    cut = tmp_path / source.name
    cut.write_bytes(source.read_bytes()[:1500])
    with pytest.raises(pmkit.InputError, match="is a damaged or truncated zip archive"):
        pmkit.read(cut)


def _two_parameter_models():
    b = ExperimentBuilder(["p", "n"])
    for p in (2, 4, 8, 16, 32):
        for n in (10, 20, 30, 40, 50):
            b.add_values("main", "time", [p, n], [1.0 + 0.5 * p * n])
    return model(b.build())


@pytest.mark.parametrize(("point", "words"), [
    ({"p": 64, "N": 60}, "no value for n (it names p, N; the model's parameters: p, n)"),
    (64, "1 value(s) for 2 parameter(s) (p, n)"),
    ([64, 60, 1], "3 value(s) for 2 parameter(s) (p, n)"),
    ({"p": 64, "n": "sixty"}, "value for n is not a number: 'sixty'"),
    (None, "a mapping of p, n to numbers, a sequence or one number; got NoneType"),
])
def test_a_point_that_does_not_fit_the_parameters_is_named(point, words):
    models = _two_parameter_models()
    for predict in (models[0].predict, models.predict):
        with pytest.raises(ValueError, match=re.escape(words)):
            predict(point)


def test_a_point_as_a_sequence_or_array_in_parameter_order():
    import numpy as np

    models = _two_parameter_models()
    by_name = models[0].predict({"p": 64, "n": 60})
    assert models[0].predict([64, 60]) == by_name
    assert models[0].predict(np.array([64.0, 60.0])) == by_name
    assert models.predict((64, 60))[0][0] == pytest.approx(by_name.value)


def test_help_on_model_names_real_options_and_how_to_list_them(builtin_registry):
    doc = pmkit.model.__doc__
    named = re.findall(r"``(\w+)``", doc[doc.index("``refining``'s include"):doc.index("pmkit plugins --options")])
    assert named[0] == "refining"
    options = {o.name for o in builtin_registry.get("modeler", "refining").options}
    assert set(named[1:]) <= options and "hedge" in named
    assert "UsageError" in doc and "InputError" in pmkit.read.__doc__


def test_one_detector_name_is_a_name_not_its_letters(registry):
    experiment = sample_experiment({"main": lambda p: p})
    models = model(experiment, registry=registry)
    assert {f.detector for f in detect(experiment, models, "tracer", registry=registry)} == {"tracer"}
    analysis = analyse(experiment, detectors="other", registry=registry)
    assert {f.detector for f in analysis.inputs[0].findings} == {"other"}


def test_a_path_where_an_experiment_belongs_is_a_type_error_saying_what_to_pass(tmp_path):
    experiment = sample_experiment({"main": lambda p: p})
    with pytest.raises(TypeError, match=r"pmkit.model\(\) takes an Experiment: pmkit.read\(path\) gives one; got str"):
        model("example-study")
    with pytest.raises(TypeError, match=r"pmkit.detect\(\) takes an Experiment.*got PosixPath"):
        detect(tmp_path, model(experiment))
    with pytest.raises(TypeError, match=r"pmkit.detect\(\) takes its models: pmkit.model\(experiment\) gives them"):
        detect(experiment, [])


@pytest.mark.parametrize("value", [0, -8, float("nan"), float("inf")])
def test_a_point_or_target_outside_the_positive_parameters_is_refused(value, recwarn):
    models = _two_parameter_models()
    for predict in (models[0].predict, models.predict):
        with pytest.raises(ValueError, match=r"value for p must be a positive number \(a law holds for p, n > 0\)"):
            predict({"p": value, "n": 60})
    experiment = sample_experiment({"main": lambda p: p})
    with pytest.raises(UsageError, match=r"target p: .* must be a positive number"):
        analyse(experiment, target={"p": value})
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_target_that_is_not_a_number_is_named():
    with pytest.raises(UsageError, match=r"target p: 'big' must be a positive number"):
        analyse(sample_experiment({"main": lambda p: p}), target={"p": "big"})


def test_a_model_set_shows_what_it_holds():
    models = _two_parameter_models()
    assert repr(models) == "<ModelSet 1 model of p, n by refining>"
    assert repr(pmkit.ModelSet(("p",), [models[0]] * 2)) == "<ModelSet 2 models of p>"


def test_a_hedged_law_says_so_in_its_notes():
    from test_hedging import weak_experiment

    from pmkit.modelers.multiparam import HEDGE_NOTE

    experiment, _, _ = weak_experiment(60, 5)
    plain, hedged = model(experiment, hedge=False), model(experiment, hedge=True)
    changed = [a.function != b.function for a, b in zip(plain, hedged, strict=True)]
    assert any(changed) and not all(changed)
    assert [HEDGE_NOTE in m.notes for m in hedged] == changed
    assert not any(HEDGE_NOTE in m.notes for m in plain)


class _HalfModeler:
    name = "half"
    description = "a modeler without model()"
    options = ()


class _RegistersHalf:
    @hookimpl
    def pmkit_register_modelers(self, register):
        register(_HalfModeler())


def test_asking_for_a_rejected_plugin_object_says_why_it_was_rejected():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        registry = build_registry([_RegistersHalf()], entry_points=False)
    with pytest.raises(UsageError, match=r"no modeler named 'half'; the modeler 'half' of .* was rejected: "
                                         r"not a modeler: lacks model; available: "):
        model(sample_experiment({"main": lambda p: p}), "half", registry=registry)
