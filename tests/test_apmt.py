"""The APMT modeler: its laws, machine profile, kernels, CPI/BF_mem, communication, T_app, refinement,
validation, degraded counters, and ``pmkit show --modeler apmt`` — on generated Score-P and perf studies
and on the real PAPI study mm-single."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit.cli import main
from pmkit.errors import InputError, UsageError
from pmkit.experiment import Experiment
from pmkit.fitting.laws import SHAPES, fit_laws
from pmkit.modelers.apmt import ApmtModelSet
from pmkit.modelers.apmt_data import mpi_kind
from pmkit.modelers.apmt_profile import load_profile, normalise, resolve
from pmkit.schema import finite_json
from pmkit.testing.papi_study import default_application, simulate, write_study
from pmkit.testing.plugins import check_modeler, sample_experiment

PROCESSES = (4, 8, 16, 32, 64)


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    return write_study(tmp_path_factory.mktemp("papi") / "study", processes=PROCESSES)


@pytest.fixture(scope="module")
def exact_two_clock_study(tmp_path_factory) -> Path:
    return write_study(tmp_path_factory.mktemp("papi2") / "study", processes=PROCESSES, second_clock=True, noise=0.0)


@pytest.fixture(scope="module")
def apmt(study) -> ApmtModelSet:
    return pmkit.model(pmkit.read(study), "apmt", metrics="time")


def shape_named(name: str) -> int:
    return next(i for i, s in enumerate(SHAPES) if s.name == name)


# ---------------------------------------------------------------- predefined laws


@pytest.mark.parametrize(("name", "truth"), [
    ("linear", lambda x: 3 + 2 * x), ("work per process", lambda x: 0.5 + 100 / x),
    ("log", lambda x: 1 + 4 * np.log2(x)), ("surface per process", lambda x: 7 + 50 * x ** (-2 / 3)),
    ("x log x", lambda x: 2 + 0.1 * x * np.log2(x)), ("exponential", lambda x: 2 * np.exp(0.05 * x)),
    ("power law", lambda x: 30 * x ** (-5 / 4)),
])
def test_each_law_is_recovered(name, truth):
    x = np.array([4.0, 8, 16, 32, 64])
    fits = fit_laws(x, truth(x)[None, :], min_r2=0.9, flat=0.05, margin=4, relative=True)
    assert SHAPES[fits.shape[0]].name == name
    assert fits.evaluate([256.0])[0, 0] == pytest.approx(truth(np.array([256.0]))[0], rel=1e-6)
    assert fits.r2[0] == pytest.approx(1.0)


def test_noise_stays_constant_and_missing_values_are_left_out():
    x = np.array([4.0, 8, 16, 32, 64])
    rng = np.random.default_rng(3)
    noisy = 5 * (1 + 0.02 * rng.uniform(-1, 1, (200, 5)))
    fits = fit_laws(x, noisy, min_r2=0.9, flat=0.05, margin=4, relative=True)
    assert (fits.shape == 0).all()
    holes = np.array([[2.0, np.nan, 5.0, 9.0, 17.0], [np.nan] * 5, [2.0, 2.0, np.nan, np.nan, np.nan]])
    fits = fit_laws(x, holes, relative=True)
    assert fits.points.tolist() == [4, 0, 2]
    assert SHAPES[fits.shape[0]].name == "linear" and np.isnan(fits.evaluate([8.0])[1, 0])
    assert fits.shape[2] == 0 and fits.coefficients[2, 0] == 2.0


def test_laws_of_counts_do_not_go_negative():
    x = np.array([4.0, 8, 16, 32])
    falling = 100 - 3 * x
    fits = fit_laws(x, falling[None, :])
    assert fits.evaluate([64.0, 128.0])[0].tolist() == [0.0, 0.0]


def test_margin_keeps_the_simpler_law_when_a_third_coefficient_barely_helps():
    x = np.array([4.0, 8, 16, 32, 64])
    y = (10 + 200 / x) * np.array([1.01, 0.99, 1.005, 0.995, 1.0])
    loose = fit_laws(x, y[None, :], margin=1.0, relative=True)
    strict = fit_laws(x, y[None, :], margin=4.0, relative=True)
    assert SHAPES[strict.shape[0]].name == "work per process"
    assert SHAPES[loose.shape[0]].coefficients >= SHAPES[strict.shape[0]].coefficients


# ---------------------------------------------------------------- machine profile


def test_shipped_profile_maps_the_paper_counters():
    profile = load_profile()
    assert profile.counters["cycles"][0] == "PAPI_TOT_CYC" and profile.counters["memory_accesses"][0] == "PAPI_L3_TCM"
    assert profile.latencies["memory"].unit == "ns" and profile.latencies["l1"].cycles(3e9) == 4
    assert profile.latencies["memory"].seconds(3e9) == pytest.approx(85e-9)
    names = ["cpu_core/cycles/", "INSTRUCTIONS:u", "PAPI_L2_TCM", "PAPI_L3_TCM", "mem_load_retired.l1_hit"]
    assert resolve(names, profile.counters["cycles"]).plus == ("cpu_core/cycles/",)
    assert resolve(names, profile.counters["instructions"]).plus == ("INSTRUCTIONS:u",)
    llc = resolve(names, profile.counters["llc_hits"])
    assert (llc.plus, llc.minus) == (("PAPI_L2_TCM",), ("PAPI_L3_TCM",))
    assert resolve(names, profile.counters["l1_hits"]).plus == ("mem_load_retired.l1_hit",)
    assert normalise("cpu_atom/CYCLES/:k") == "cycles"


def test_user_profile_overrides_and_bad_keys(tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text('frequency_ghz = 2.2\n[latency]\nmemory = { ns = 120 }\n[counters]\ncycles = ["MY_CYCLES"]\n')
    profile = load_profile(str(mine))
    assert profile.frequency_ghz == 2.2 and profile.latencies["memory"].value == 120
    assert profile.latencies["l2"].value == 12 and profile.counters["cycles"] == ("MY_CYCLES",)
    assert str(mine) in profile.source
    for text, member in [("[latency]\nl4 = { ns = 3 }\n", "latency.l4"),
                         ("[latency]\nl1 = { ms = 3 }\n", "latency.l1"),
                         ("[counters]\ncycles = \"PAPI_TOT_CYC\"\n", "counters.cycles"),
                         ("frequency = 3\n", "frequency")]:
        mine.write_text(text)
        with pytest.raises(InputError) as caught:
            load_profile(str(mine))
        assert str(mine) in str(caught.value) and member in str(caught.value)
    with pytest.raises(InputError, match="not found"):
        load_profile(str(tmp_path / "absent.toml"))


def test_mpi_calls_are_classified():
    assert [mpi_kind(n) for n in ("MPI_Isend", "PMPI_Waitall", "mpi_allreduce_", "MPI_Ibcast", "MPI_Init", "solve")] \
        == ["p2p", "p2p", "collective", "collective", "mpi", "compute"]


# ---------------------------------------------------------------- the model of a generated study


def test_kernels_cpi_and_memory_blocking(apmt):
    result = apmt.apmt
    rows = {row.name: row for row in result.table()}
    kernels = {name for name, row in rows.items() if row.kind == "hotspot"}
    assert {"compute_rhs", "x_solve", "y_solve", "add", "read_input"} <= kernels
    assert rows["global_checksum"].kind in ("hotspot", "non-scalable")
    assert any(row.kind == "rest" for row in rows.values())
    app = {k.name: k for k in default_application().kernels}
    for name in ("compute_rhs", "x_solve", "add"):
        # the paper's CPI counts computation cycles only; the generator adds 5% non-memory stalls
        assert rows[name].cpi == pytest.approx(0.95 * app[name].cpi_core, rel=0.03)
        assert rows[name].cpi_total > rows[name].cpi
        assert rows[name].bf_mem >= app[name].bf_mem * 0.97
        assert rows[name].cpi_deviation < 1e-3
    assert rows["total"].now.total == pytest.approx(result.measured_total(), rel=0.02)


def test_predictions_at_larger_scales(apmt):
    result = apmt.apmt
    app = default_application()
    rng = np.random.default_rng(5)
    for p in (128, 256):
        truth = simulate(app, p, noise=0.0, rng=rng).total_time()
        assert result.t_app({"p": p}) == pytest.approx(truth, rel=0.10)
    assert result.validation is not None and result.validation.meets
    assert result.validation.held_out[0].x == 64 and result.validation.mean_error < 5


def test_communication_models(apmt):
    result = apmt.apmt
    models = {result.data.names[m.row]: m for m in result.fit.comm}
    assert {"MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Bcast"} == set(models)
    assert models["MPI_Waitall"].coefficients["beta"] > 0
    a = default_application().allreduce[0]
    assert models["MPI_Allreduce"].coefficients["a"] == pytest.approx(a, rel=0.15)
    assert {row.name for row in result.table() if row.kind in ("p2p", "collective")} == \
        {"point-to-point", "MPI_Allreduce", "MPI_Bcast"}


def test_per_series_models_and_contract(apmt, study):
    assert isinstance(apmt, ApmtModelSet) and len(apmt) == len(pmkit.read(study).callpaths)
    kernel = apmt.get("main->solve->compute_rhs", "time")
    assert kernel.notes[0].startswith("APMT kernel (hotspot)")
    assert kernel.function.evaluate(64.0) == pytest.approx(
        apmt.apmt.evaluate(next(k for k in apmt.apmt.fit.kernels if k.name == "compute_rhs").total, 64.0))
    assert apmt.get("main->solve->MPI_Allreduce", "time").notes[0].startswith("APMT collective")
    assert "predefined law" in apmt.get("main->MPI_Init", "time").notes[0]
    check_modeler(pmkit.plugins.get_registry().get("modeler", "apmt"), [pmkit.read(study)])


def test_json_carries_the_table(apmt):
    document = finite_json(apmt.apmt.to_json({"p": 256}))
    json.dumps(document, allow_nan=False)
    first = document["kernels"][0]
    for key in ("kernel", "cpi", "cpi_deviation", "cpi_core", "bf_mem", "now", "target", "laws"):
        assert key in first
    assert {"t_comp", "t_mem", "t_mem_exposed", "t_comm", "total"} <= set(first["now"])
    assert document["counters"]["cycles"] == "PAPI_TOT_CYC" and document["target"] == {"p": 256.0}
    assert document["validation"]["held_out"][0]["p"] == 64.0


def test_two_clock_refinement_recovers_the_machine(exact_two_clock_study):
    exp = pmkit.read(exact_two_clock_study)
    assert exp.parameters == ("p", "f")
    result = pmkit.model(exp, "apmt", metrics="time").apmt
    rows = {row.name: row for row in result.table()}
    app = {k.name: k for k in default_application().kernels}
    for name in ("compute_rhs", "y_solve", "add"):
        assert rows[name].cpi_core == pytest.approx(app[name].cpi_core, rel=1e-3)
        assert rows[name].bf_mem == pytest.approx(app[name].bf_mem, rel=1e-3)
        assert rows[name].bf_source.startswith("two clocks")
    plain = pmkit.model(exp, "apmt", metrics="time", refine=False).apmt
    assert {row.name: row.bf_source for row in plain.table()}["add"] == "stall cycles"
    assert any("f=2000" in n for n in result.notes)


# ---------------------------------------------------------------- degraded counters and degenerate data


def _without(exp: Experiment, *names: str) -> Experiment:
    keep = [m for m in exp.metrics if m.name not in names]
    return Experiment(exp.parameters, exp.points, exp.callpaths, tuple(keep),
                      {m.name: exp.measurements[m.name] for m in keep})


def test_missing_counters_degrade_with_notes(study):
    exp = pmkit.read(study)
    no_stalls = pmkit.model(_without(exp, "PAPI_RES_STL"), "apmt", metrics="time").apmt
    row = next(r for r in no_stalls.table() if r.name == "compute_rhs")
    assert math.isnan(row.bf_mem) and any("no stall-cycle counter" in n for n in row.notes)
    assert any("stall_cycles" in n for n in no_stalls.notes)
    time_only = pmkit.model(_without(exp, *[m for m in exp.metric_names if m.startswith("PAPI")]), "apmt",
                            metrics="time").apmt
    row = next(r for r in time_only.table() if r.name == "compute_rhs")
    assert math.isnan(row.cpi) and any("no cycles counter" in n for n in row.notes)
    assert time_only.t_app({"p": 128}) == pytest.approx(no_stalls.t_app({"p": 128}), rel=0.15)


def test_degenerate_and_counterless_experiments():
    models = pmkit.model(sample_experiment(), "apmt")
    assert len(models) > 0 and all(m.notes for m in models)
    from pmkit.testing.plugins import degenerate_experiment

    degenerate = pmkit.model(degenerate_experiment(), "apmt")
    assert len(degenerate) == len(degenerate_experiment().callpaths) * len(degenerate_experiment().metrics)


def test_bad_options_are_usage_errors(study):
    exp = pmkit.read(study)
    with pytest.raises(UsageError, match="no parameter 'q'"):
        pmkit.model(exp, "apmt", parameter="q")
    with pytest.raises(UsageError):
        pmkit.model(exp, "apmt", threshold=2.0)


# ---------------------------------------------------------------- perf stat studies and the real PAPI study


def test_perf_study_with_totals(tmp_path):
    folder = write_study(tmp_path / "perf", processes=PROCESSES, perf=True)
    exp = pmkit.read(folder)
    assert exp.provenance.reader == "perf-stat" and "mem_load_retired.l3_miss" in exp.metric_names
    models = pmkit.model(exp, "apmt", totals=True)
    result = models.apmt
    (row,) = [r for r in result.table() if r.kind not in ("total", "others")]
    assert row.name == "app" and row.bf_mem > 0 and 0.5 < row.cpi < 1.0
    truth = simulate(default_application(), 128, noise=0.0).total_time()
    assert result.t_app({"p": 128}) == pytest.approx(truth, rel=0.15)
    assert models.predicted_total("task-clock", {"p": 128})[0] == pytest.approx(result.t_app(128) * 128 * 1e3)


def test_real_papi_study_mm_single(shared_data):
    folder = shared_data / "cube" / "extrap-mm-single"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    models = pmkit.model(pmkit.read(folder), "apmt", metrics="time")
    result = models.apmt
    assert result.parameter == "x"
    document = result.to_json()
    assert document["counters"]["memory_accesses"] == "PAPI_L3_TCM"
    assert document["counters"]["llc_hits"] == "PAPI_L2_TCM - PAPI_L3_TCM"
    assert document["counters"]["cycles"] is None
    assert any("not in the experiment" in n for n in result.notes)
    assert math.isfinite(result.t_app()) and result.t_app() > 0


# ---------------------------------------------------------------- pmkit show --modeler apmt


def test_show_renders_the_kernel_table(study, capsys):
    assert main(["show", str(study), "--modeler", "apmt", "--at", "p=256"]) == 0
    out = capsys.readouterr().out
    assert "APMT kernels at p=64 (largest measured)" in out and "APMT kernels at p=256 (target)" in out
    assert "APMT T_app" in out and "closed-loop validation" in out and "compute_rhs" in out


def test_show_json_and_markdown(study, capsys, apmt):
    assert main(["show", str(study), "--modeler", "apmt", "--at", "p=256", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    show = document["show"][0]
    assert show["total"]["by"] == "APMT T_app"
    assert show["total"]["predicted"] == pytest.approx(apmt.apmt.t_app({"p": 256}))
    target = next(t for t in show["tables"] if t["title"].startswith("APMT kernels at p=256"))
    record = next(r for r in target["records"] if r["kernel"] == "compute_rhs")
    assert {"cpi", "bf_mem", "t_comp", "t_mem_exposed", "t_comm", "total"} <= set(record)
    assert target["data"]["t_app"]["target"] == pytest.approx(show["total"]["predicted"])
    assert main(["show", str(study), "--modeler", "apmt", "--markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "### APMT kernels at p=256 (target)" in markdown and "(APMT T_app)" in markdown


def test_show_fits_80_columns(study, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", str(study), "--modeler", "apmt"]) == 0
    out = capsys.readouterr().out
    assert "APMT kernels" in out and max(len(line) for line in out.splitlines()) <= 80


def test_one_run_has_no_target_table(tmp_path, capsys, monkeypatch):
    """One perf stat run: the header says 'target none — one run', so APMT shows the measured scale alone,
    with no '(target)' table that repeats it and no T_app 'at the target' beside the measured one."""
    run = write_study(tmp_path / "perf", processes=(16,), perf=True) / "app.p16.r1.csv"
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", str(run), "--modeler", "apmt"]) == 0
    out = capsys.readouterr().out
    assert "target none" in out and "APMT kernels at p=16 (the one measured point)" in out
    assert "(target)" not in out and "(largest measured)" not in out
    assert re.search(r"T_app = .*: \d+ s at p=16 \(measured \d+ s\);", " ".join(out.split()))
    assert "only 1 run at the nominal clock" in out and "there is 1" in " ".join(out.split())
    assert main(["show", str(run), "--modeler", "apmt", "--json"]) == 0
    (kernels,) = [t for t in json.loads(capsys.readouterr().out)["show"][0]["tables"] if "kernels" in t["title"]]
    assert kernels["data"]["t_app"]["now"] == pytest.approx(kernels["records"][-1]["total"])
    assert kernels["data"]["target"] is None and kernels["data"]["t_app"]["target"] is None
    assert all(row["target"] is None and row["now"] is not None for row in kernels["data"]["kernels"])
    assert main(["show", str(run), "--modeler", "apmt", "--markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "### APMT kernels at p=16 (the one measured point)" in markdown and "(target)" not in markdown


def test_a_target_at_the_largest_scale_has_one_table(study):
    analysis = pmkit.analyse(study, modeler="apmt", target={"p": 64}, detectors=[]).inputs[0]
    kernels = [t for t in analysis.tables if "kernels" in t.title]
    assert [t.title for t in kernels] == ["APMT kernels at p=64 (largest measured; the target)"]
    assert kernels[0].data is not None and "at p=64 (measured" in kernels[0].notes[0]


# ---------------------------------------------------------------- a model set contributing to the analysis


def test_a_model_set_can_contribute_tables_and_the_total():
    from pmkit.analysis import ContributedTable
    from pmkit.hookspecs import ContributesToAnalysis
    from pmkit.schema import show_document
    from pmkit.testing.plugins import isolated_registry
    from pmkit.ui.markdown_report import markdown_report

    class Contributing(pmkit.ModelSet):
        def analysis_tables(self, metric, target):
            return [ContributedTable("my table", ("name", "time"), (("x", 1.5),), ("", "s"), ("name", "time"),
                                     ("a note under it",), {"law": "mine"})]

        def predicted_total(self, metric, target):
            return 42.0, "my own law"

    class Modeler:
        name, description, options = "contributing", "a constant per series, and a table", ()

        def model(self, batch):
            return Contributing(batch.parameters, [
                pmkit.Model(c, m, pmkit.Function(batch.parameters, 1.0), modeler=self.name)
                for c, m in zip(batch.callpaths, batch.metrics, strict=True)])

    class Plugin:
        @pmkit.hookimpl
        def pmkit_register_modelers(self, register):
            register(Modeler())

    registry = isolated_registry(Plugin())
    analysis = pmkit.analyse(sample_experiment(), modeler="contributing", detectors=[], registry=registry)
    result = analysis.inputs[0]
    assert isinstance(result.models, ContributesToAnalysis)
    assert result.predicted_total == (42.0, "my own law")
    assert result.tables[0].title == "my table"
    document = show_document(analysis)["show"][0]
    assert document["total"]["predicted"] == 42.0 and document["total"]["by"] == "my own law"
    assert document["tables"][0]["records"] == [{"name": "x", "time": 1.5}]
    assert document["tables"][0]["data"] == {"law": "mine"} and document["tables"][0]["notes"] == ["a note under it"]
    markdown = markdown_report(analysis)
    assert "### my table" in markdown and "_a note under it_" in markdown and "(my own law)" in markdown


def test_an_exponential_law_is_a_function_the_views_can_use():
    from pmkit.modelers.apmt_laws import ExponentialFunction
    from pmkit.testing.plugins import sample_experiment as sample

    exp = sample({"main": lambda p: 2 * np.exp(0.05 * p)}, points={"p": [4, 8, 16, 32, 64]}, noise=0.0)
    model = pmkit.model(exp, "apmt", metrics="time").get("main", "time")
    assert isinstance(model.function, ExponentialFunction)
    assert model.function.evaluate(100.0) == pytest.approx(2 * np.exp(5.0), rel=1e-6)
    assert "e^(0.05·p)" in model.function.pretty_text() and "exp(0.05 * p)" in model.function.extrap_text()
    assert model.function.to_json()["exponentials"][0]["rate"] == pytest.approx(0.05)
    assert any("exponential law" in n for n in model.notes)
    analysis = pmkit.analyse(exp, modeler="apmt", detectors=[], target={"p": 100})
    assert analysis.inputs[0].report.row("main").predicted == pytest.approx(2 * np.exp(5.0), rel=1e-6)


# ---------------------------------------------------------------- the eager/rendezvous switch in Hockney fits

SWITCH_PROCESSES = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@pytest.fixture(scope="module")
def eager_study(tmp_path_factory) -> Path:
    """Halo messages shrink with p and cross a 256 KiB eager limit between p=64 and p=128."""
    app = replace(default_application(), eager_limit=256 * 1024)
    return write_study(tmp_path_factory.mktemp("eager") / "study", app, processes=SWITCH_PROCESSES)


def _halo_time(app, p: int) -> float:
    run = simulate(app, p, noise=0.0)
    return sum(float(np.mean(run.values["time"][run.callpaths.index(f"main->solve->exchange_halo->{name}")]))
               for name in ("MPI_Isend", "MPI_Irecv", "MPI_Waitall"))


def test_hockney_fits_find_the_eager_limit_and_predict_from_its_side(eager_study):
    app = replace(default_application(), eager_limit=256 * 1024)
    switch_p = app.grid / (app.eager_limit / app.halo_bytes) ** 1.5  # where a message is 256 KiB
    assert 64 < switch_p < 128
    experiment = pmkit.read(eager_study)
    models = pmkit.model(experiment, modeler="apmt")
    plain = pmkit.model(experiment, modeler="apmt", segments="off")
    fit = models.apmt.fit
    comm = {fit.data.names[m.row]: m for m in fit.comm}
    for name in ("MPI_Isend", "MPI_Irecv", "MPI_Waitall"):
        assert comm[name].switch is not None and "law changes at" in comm[name].notes[-1]
        assert {"alpha_below", "beta_above", "switch_bytes"} <= set(comm[name].coefficients)
    assert comm["MPI_Waitall"].coefficients["alpha_above"] > 2 * comm["MPI_Waitall"].coefficients["alpha_below"]
    assert all(m.switch is None for m in plain.apmt.fit.comm)
    model = models.get("main->solve->exchange_halo->MPI_Waitall", "time")
    assert model.segmented and model.change_point.parameter == "p"
    assert model.change_point.low <= switch_p <= model.change_point.high
    assert 64 <= model.change_point.value <= 128
    p2p = next(row for row in models.apmt.table(4096) if row.kind == "p2p")
    plain_p2p = next(row for row in plain.apmt.table(4096) if row.kind == "p2p")
    truth = _halo_time(app, 4096)
    assert p2p.target.t_comm == pytest.approx(truth, rel=0.1)
    assert abs(plain_p2p.target.t_comm - truth) / truth > 0.3


def test_one_law_hockney_fits_stay_one_line(tmp_path):
    study = write_study(tmp_path / "study", processes=SWITCH_PROCESSES)
    models = pmkit.model(pmkit.read(study), modeler="apmt")
    plain = pmkit.model(pmkit.read(study), modeler="apmt", segments="off")
    assert all(m.switch is None for m in models.apmt.fit.comm)
    assert models.apmt.t_app(4096) == plain.apmt.t_app(4096)


def test_show_says_where_the_switch_is(eager_study, capsys):
    assert main(["show", str(eager_study), "--modeler", "apmt", "--at", "p=4096"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "MPI_Waitall: Hockney law changes at p ≈" in out and "at p=4096 the line below holds" in out
    assert main(["show", str(eager_study), "--modeler", "apmt", "--at", "p=4096", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    text = json.dumps(document)
    assert "switch_bytes" in text and "Hockney law changes" in text


def test_the_example_generator_says_what_it_wrote_on_stdout(tmp_path, capsys):
    """Like the other example generators: ``wrote FOLDER`` on stdout, nothing on stderr."""
    from pmkit.testing import papi_study

    assert papi_study.main([str(tmp_path / "papi"), "--processes", "4,8,16", "--perf"]) == 0
    said = capsys.readouterr()
    assert said.out == f"wrote {tmp_path / 'papi'}\n" and said.err == ""
    assert sorted(f.name for f in (tmp_path / "papi").iterdir())[:1] == ["app.p16.r1.csv"]
