"""The views of ``pmkit show`` and the scaling analysis behind them, on experiments built in code."""

from __future__ import annotations

import io
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from rich.console import Console

from pmkit.constraints import Constraint
from pmkit.detail import detail
from pmkit.errors import UsageError
from pmkit.experiment import ExperimentBuilder
from pmkit.findings import Finding
from pmkit.growth import growth_of
from pmkit.models import Model, ModelSet, Quality
from pmkit.pmnf import Factor, Function, Term, simple_function
from pmkit.scaling import analyse, default_target, reference_index
from pmkit.sdk import analyse as analyse_all
from pmkit.ui import (
    MeasurementPlot,
    call_tree_view,
    detail_view,
    findings_panel,
    markdown_report,
    ranking_view,
    render_show,
)
from pmkit.ui.plot import plot_data
from pmkit.ui.quantities import format_share, format_value

LAWS = {
    "main": simple_function("p", 0.5, 0, 0, 0),
    "main->init": simple_function("p", 0.2, 0.01, 1, 0),
    "main->solve": simple_function("p", 2.0, 0.3, 0, 1),
    "main->solve->MPI_Allreduce": simple_function("p", 0.01, 0.002, 1, 1),
    "main->solve->compute": simple_function("p", 5.0, 0, 0, 0),
    "main->solve->halo": simple_function("p", 0.1, 0.0005, "3/2", 0),
    "main->io": simple_function("p", 0.001, 0, 0, 0),
}
POINTS = (8, 16, 32, 64, 128, 256, 512)


def build(laws=LAWS, *, inclusive: bool = False, noise: float = 0.03, reps: int = 3):
    rng = np.random.default_rng(7)
    builder = ExperimentBuilder(["p"], source="sample.txt")
    builder.add_metric("time", "s", inclusive)
    for p in POINTS:
        for path, law in laws.items():
            value = law.evaluate(float(p))
            builder.add_values(path, "time", [p], value * (1 + noise * rng.standard_normal(reps)))
    experiment = builder.build()
    models = ModelSet(["p"], [Model(path, "time", law, Quality(0.1, 2.0, 0.99), "handmade", n_points=len(POINTS))
                              for path, law in laws.items()])
    return experiment, models


@pytest.fixture(scope="module")
def sample():
    return build()


def render(renderable, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, force_terminal=False)
    console.print(renderable, crop=False)  # lines too wide must show, not be cut at the width
    return console.file.getvalue()


def assert_fits(text: str, width: int) -> None:
    too_long = [line for line in text.splitlines() if len(line) > width]
    assert not too_long, f"lines wider than {width}: {too_long[:3]}"


# --- analysis --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("function", "kind", "label", "level"), [
    (simple_function("p", 3, 0, 0, 0), "constant", "constant", 0),
    (simple_function("p", 3, 2, 0, 1), "logarithmic", "log p", 1),
    (simple_function("p", 3, 2, "1/2", 0), "polynomial", "p^0.5", 2),
    (simple_function("p", 3, 2, "2/3", 0), "polynomial", "p^(2/3)", 2),
    (simple_function("p", 3, 2, 1, 0), "polynomial", "p", 3),
    (simple_function("p", 3, 2, 1, 1), "polynomial", "p·log p", 4),
    (simple_function("p", 3, 2, "3/2", 0), "polynomial", "p^1.5", 4),
    (simple_function("p", 3, 2, 2, 2), "polynomial", "p^2·log^2 p", 4),
    (simple_function("p", 3, 2, -1, 0), "decreasing", "decreasing", 0),
    (simple_function("p", 3, -2, 1, 0), "decreasing", "decreasing", 0),
])
def test_growth_classes(function, kind, label, level):
    growth = growth_of(function)
    assert (growth.kind, growth.label, growth.level) == (kind, label, level)


def test_growth_takes_the_fastest_positive_term_of_several_parameters():
    f = Function(("p", "size"), 1.0, (Term(0.5, (Factor("p", 1),)),
                                       Term(0.1, (Factor("p", 1), Factor("size", 2))),
                                       Term(-0.01, (Factor("size", Fraction(1, 2)),))))
    growth = growth_of(f)
    assert growth.label == "p·size^2"
    assert growth.level == 4
    assert growth_of(None) is None


def test_a_target_names_parameters_of_the_experiment(sample):
    experiment, models = sample
    with pytest.raises(UsageError, match="target names parameter 'q'; the experiment has p"):
        analyse(experiment, models, target={"q": 4.0})


def test_shares_predictions_and_ranking(sample):
    experiment, models = sample
    report = analyse(experiment, models)
    assert report.metric == "time"
    assert report.reference == {"p": 512.0}
    assert report.target == {"p": 2048.0}
    shares = [r.share for r in report.rows]
    assert sum(shares) == pytest.approx(1.0)
    assert sum(r.predicted_share for r in report.rows) == pytest.approx(1.0)
    halo = report.row("main->solve->halo")
    assert halo.predicted == pytest.approx(0.1 + 0.0005 * 2048 ** 1.5)
    assert halo.growth == pytest.approx((0.1 + 0.0005 * 2048 ** 1.5) / (0.1 + 0.0005 * 512 ** 1.5))
    ranked = [r.callpath for r in report.ranking()]
    assert ranked == ["main->solve->halo", "main->solve->MPI_Allreduce", "main->init", "main->solve"]
    # a call path whose predicted share is small drops out of the ranking when asked
    assert "main->solve" not in [r.callpath for r in report.ranking(min_share=0.05)]
    assert report.row("halo").callpath == "main->solve->halo"  # a unique ending names the call path
    assert report.row("solve->halo").callpath == "main->solve->halo"
    with pytest.raises(UsageError, match="did you mean main->solve->halo"):
        report.row("hal")


def test_inclusive_total_is_the_roots():
    laws = {"main": simple_function("p", 10, 1, 1, 0), "main->a": simple_function("p", 4, 0.5, 1, 0),
            "main->b": simple_function("p", 6, 0.5, 1, 0)}
    experiment, models = build(laws, inclusive=True, noise=0.0, reps=1)
    report = analyse(experiment, models)
    assert report.row("main").share == pytest.approx(1.0)
    assert report.row("main->a").share == pytest.approx((4 + 0.5 * 512) / (10 + 512))
    assert report.total_predicted == pytest.approx(10 + 2048)


def test_reference_and_target_with_two_parameters():
    builder = ExperimentBuilder(["p", "size"])
    for p in (4, 8, 16):
        for size in (10, 20, 30):
            builder.add_values("main", "time", [p, size], [p * size * 0.01])
    experiment = builder.build()
    assert experiment.points[reference_index(experiment)].tolist() == [16.0, 30.0]
    assert default_target(experiment) == {"p": 64.0, "size": 120.0}
    function = Function(("p", "size"), 0.0, (Term(0.01, (Factor("p", 1), Factor("size", 1))),))
    models = ModelSet(["p", "size"], [Model("main", "time", function)])
    report = analyse(experiment, models, target={"p": 1024})
    assert report.target == {"p": 1024.0, "size": 30.0}
    assert report.row("main").predicted == pytest.approx(0.01 * 1024 * 30)
    info = detail(report, "main")
    plot = plot_data(info)
    assert plot is not None and plot.parameter == "p" and plot.fixed == {"size": 30.0}
    assert plot.log_x  # 4, 8, 16 are powers of two
    assert [p.point for p in info.predictions][-1] == {"p": 1024.0, "size": 30.0}


# --- views -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("width", [80, 160])
def test_call_tree_view(sample, width):
    experiment, models = sample
    report = analyse(experiment, models)
    text = render(call_tree_view(report), width)
    assert_fits(text, width)
    for name in ("main", "init", "solve", "halo", "MPI_Allreduce", "compute"):
        assert name in text
    assert "io" not in re.findall(r"\b\w+\b", text)  # 0.0 % now and then: folded
    assert "… 1 more <1.0%" in text
    assert "p^1.5" in text and "p·log p" in text and "log p" in text and "constant" in text
    assert "at p=2048" in text
    assert "46.4 s" in text  # halo at p=2048: 0.1 + 0.0005·2048^1.5
    assert "0.1 + 0.0005·p^(3/2)" in text.replace("\n", " ") or width == 80
    # siblings by share at the target: halo, then MPI_Allreduce, then compute
    assert text.index("halo") < text.index("MPI_Allreduce") < text.index("compute")
    assert "├ halo" in text and "└ compute" in text


def test_call_tree_depth_sort_and_min_share(sample):
    experiment, models = sample
    report = analyse(experiment, models)
    shallow = render(call_tree_view(report, depth=2), 120)
    assert "solve +3" in shallow and "halo" not in shallow
    solve = next(line for line in shallow.splitlines() if "solve +3" in line)
    branch = [report.row(p) for p in LAWS if p.startswith("main->solve")]
    assert format_share(sum(r.share for r in branch)) in solve  # a collapsed row counts its callees
    assert format_value(sum(r.predicted for r in branch), "s") in solve
    assert "p^1.5" in solve  # and shows the fastest growth below it (halo)
    assert "+N counts its N hidden callees" in " ".join(shallow.split())  # the note wraps at the width
    by_name = render(call_tree_view(report, sort="name", min_share=0.0), 120)
    assert by_name.index("├ init") < by_name.index("├ io") < by_name.index("└ solve")
    assert by_name.index("MPI_Allreduce") < by_name.index("compute") < by_name.index("halo")
    by_growth = render(call_tree_view(report, sort="growth"), 120)
    # by the fastest growth in each branch, as the default sort uses the branch's share: solve (its halo
    # grows like p^1.5) before init (p), though solve's own model (log p) grows slower than init's
    assert by_growth.index("solve") < by_growth.index("init")
    assert by_growth.index("halo") < by_growth.index("MPI_Allreduce") < by_growth.index("compute")
    assert "siblings sorted by their branch's fastest growth" in " ".join(by_growth.split())


@pytest.mark.parametrize("width", [80, 160])
def test_ranking_view(sample, width):
    experiment, models = sample
    report = analyse(experiment, models)
    text = render(ranking_view(report), width)
    assert_fits(text, width)
    assert "Fastest growing towards p=2048 (from p=512)" in text
    rows = [line for line in text.splitlines() if re.match(r"\s*\d+\s", line)]
    assert [r.split()[0] for r in rows] == ["1", "2", "3", "4"]
    assert "halo" in rows[0] and "init" in rows[2]
    flat = text.replace("\n", " ")
    assert flat.index("halo") < flat.index("MPI_Allreduce") < flat.index("init")
    assert "×7.9" in text and "×4.9" in text and "37.8%" in text
    assert "compute" not in text  # constant: not a scalability bug


def test_ranking_breaks_long_paths_between_regions():
    deep = "main->" + "->".join(f"level_{i}_with_a_long_name" for i in range(4))
    laws = {"main": simple_function("p", 1, 0, 0, 0), deep: simple_function("p", 1, 0.1, 2, 0)}
    experiment, models = build(laws)
    text = render(ranking_view(analyse(experiment, models)), 80)
    assert_fits(text, 80)
    for i in range(4):
        assert f"level_{i}_with_a_long_name" in text  # never cut inside a region name


@pytest.mark.parametrize("width", [80, 160])
def test_detail_view(sample, width):
    experiment, models = sample
    info = detail(analyse(experiment, models), "main->solve->halo")
    text = render(detail_view(info), width)
    assert_fits(text, width)
    assert "main->solve->halo" in text
    assert "0.1 + 0.0005·p^(3/2)" in text
    assert "0.1 + 0.0005 * p^(3/2)" in text  # Extra-P notation
    assert "SMAPE 2%" in text and "handmade" in text
    for p in POINTS:
        assert re.search(rf"p={p}\s+3\s", text), f"no row for p={p}"
    assert re.search(r"p=1024\s+16\.5 s\s+×2\.8", text)
    assert re.search(r"p=2048\s+46\.4 s\s+×7\.9", text)
    assert text.count("●") >= 6  # measured means (one more in the legend)
    assert "log axes: p, s" in text
    assert any("⠄" in line or "⠂" in line for line in text.splitlines())  # the dotted extrapolation


def test_detail_points_carry_mean_and_spread(sample):
    experiment, models = sample
    info = detail(analyse(experiment, models), "main->init")
    values = experiment.measurements["time"][experiment.callpaths.index("main->init")]
    first = info.points[0]
    assert first.coordinates == {"p": 8.0}
    assert first.repetitions == 3
    assert first.mean == pytest.approx(values[0].mean())
    assert first.spread == pytest.approx((values[0].max() - values[0].min()) / 2 / values[0].mean())
    assert first.fitted == pytest.approx(0.2 + 0.01 * 8)


def test_plot_uses_linear_axes_for_other_points():
    builder = ExperimentBuilder(["n"])
    for n in (10, 20, 30, 40, 50):
        builder.add_values("main", "time", [n], [2.0 * n, 2.1 * n])
    experiment = builder.build()
    models = ModelSet(["n"], [Model("main", "time", simple_function("n", 0, 2.05, 1, 0))])
    plot = plot_data(detail(analyse(experiment, models), "main"))
    assert not plot.log_x and not plot.log_y
    text = render(MeasurementPlot(plot), 60)
    assert_fits(text, 60)
    assert "log axes" not in text
    assert "10" in text.splitlines()[-2] and "200" in text.splitlines()[-2]  # first point and 4× target


def test_findings_panel():
    findings = [Finding("kluge", "MPI_Allreduce waits", callpath="main->solve->MPI_Allreduce", severity=1.5,
                        unit="s", message="overhead over the usual time"),
                Finding("scal", "grows like p^2", callpath="main->x", severity=0.25, unit="share")]
    text = render(findings_panel(findings), 80)
    assert_fits(text, 80)
    assert "Findings (2)" in text
    assert "MPI_Allreduce waits" in text and "1.50 s" in text and "kluge" in text
    assert "25.0%" in text
    assert text.index("MPI_Allreduce waits") < text.index("grows like p^2")
    assert "No findings." in render(findings_panel([]), 80)


def test_findings_panel_keeps_numbers_with_their_units():
    """The Kluge message at the widths where its words used to end a line in "4.04" and start the next in
    "µs": every width from 56 to 120 columns keeps each value with its unit."""
    from pmkit.ui.layout import quantity_pieces

    assert quantity_pieces("at 0.013675 s took 502 µs, t_max 4.04 µs; 40 of 800 calls") == [
        "at", "0.013675 s", "took", "502 µs,", "t_max", "4.04 µs;", "40", "of", "800", "calls"]
    message = ("81.7% of all MPI time; 40 of 800 calls over t_max; largest: rank 1, call 106 at 0.013675 s took "
               "502 µs, t_max 4.04 µs")
    finding = Finding("kluge", "late sender overhead", callpath="main->iterate->exchange->MPI_Recv",
                      location="ranks 1, 2, 3", severity=0.0149, unit="sec", message=message)
    for width in range(56, 121):
        text = render(findings_panel([finding]), width)
        assert_fits(text, width)
        for value in ("0.013675", "502", "4.04"):
            lines = [line for line in text.splitlines() if value in line]
            assert lines and all(re.search(rf"{re.escape(value)} (s|µs)", line) for line in lines), (width, text)


def test_models_without_function_and_prior_notes():
    laws = dict(LAWS)
    experiment, _ = build(laws)
    models = [Model(p, "time", f) for p, f in laws.items() if p != "main->init"]
    models.append(Model("main->init", "time", None, notes=("only 1 point measured",)))
    constraints = {"main->io": Constraint(constant=True, source="taint", reason="no parameter reaches it")}
    report = analyse(experiment, ModelSet(["p"], models), constraints=constraints)
    text = render(call_tree_view(report, min_share=0.0), 160)
    assert "no model: only 1 point measured" in text
    assert "¹ constant by taint" in text
    assert report.row("main->io").prior_note == "constant by taint (no parameter reaches it)"
    assert analyse(experiment, ModelSet(["p"], models)).row("main->io").prior_note is None, "no constraint, no note"
    assert "main->init" not in [r.callpath for r in report.ranking()]


def test_the_model_table_says_no_model_once():
    """A note that already says there is no model is not prefixed with "no model:" again."""
    from pmkit.ui.model_table import ModelTable

    models = [Model("main->a", "cycles", None, notes=("no measured values: no model",)),
              Model("main->b", "cycles", None, notes=("only 1 point measured",))]
    text = " ".join(render(ModelTable(models), 120).split())
    assert "no measured values: no model" in text and "no model: no measured" not in text
    assert "no model: only 1 point measured" in text


def test_render_show_overview_and_detail(sample):
    experiment, models = sample
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    render_show(console, analyse_all(experiment, models=models, target={"p": 65536}, detectors=["imbalance"]))
    text = console.export_text()
    assert "target p=65536" in text and "now    p=512 (largest measured)" in text
    assert "Call tree" in text and "Fastest growing towards p=65536" in text and "No findings." in text
    assert "handmade" in text and "7 points p=8…512" in text
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    render_show(console, analyse_all(experiment, models=models, callpath="main->solve"))
    text = console.export_text()
    assert "Measured" in text and "Predicted" in text and "Call tree" not in text


def test_markdown_report(sample):
    experiment, models = sample
    text = markdown_report(analyse_all(experiment, models=models, detectors=["imbalance"]))
    assert text.startswith("## Scaling of `time` in `sample.txt`")
    ranking = text.split("### Fastest growing")[1].split("### Call tree")[0]
    rows = [line for line in ranking.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert "`main->solve->halo`" in rows[0] and "`main->solve->MPI_Allreduce`" in rows[1]
    assert "| 46.4 s | 37.8% |" in rows[0]
    assert "|---:|---|" in ranking
    assert "No findings." in text
    one = markdown_report(analyse_all(experiment, models=models, callpath="main->solve->halo"))
    assert "### `main->solve->halo`" in one and "```text" in one and "| p=2048 | 46.4 s |" in one


@pytest.mark.parametrize(("value", "unit", "text"), [
    (0.01234, "s", "12.3 ms"), (2.5, "s", "2.50 s"), (3.2e-6, "s", "3.20 µs"), (0.0, "s", "0 s"),
    (4.2e9, "bytes", "4.20 GB"), (512, "bytes", "512 B"), (1234.0, "", "1.23 k"), (math.nan, "s", "–"),
    (0.4641, "", "0.464"), (0.00694, "", "0.00694"), (12.0, "", "12"),
    (16200.0, "#", "16.2 k"), (16200.0, "occ", "16.2 k"), (300.0, "occ", "300"),  # counts: no unit after the prefix
    (99.97e-6, "sec", "100 µs"), (999.7e-6, "s", "1.00 ms"), (9.9996, "s", "10.0 s"),  # rounded before the prefix
])
def test_format_value(value, unit, text):
    assert format_value(value, unit) == text


def test_format_share():
    assert [format_share(s) for s in (0.4213, 0.0004, 1.0, math.nan)] == ["42.1%", "<0.1%", "100%", "–"]


def test_negative_predictions_and_thin_designs_are_flagged():
    laws = {"main": simple_function("p", 2.0, -0.3, 0, 1)}  # turns negative beyond p = 2^(2/0.3) ≈ 101
    builder = ExperimentBuilder(["p"])
    builder.add_metric("time", "s")
    for p in (8, 16, 32):
        builder.add_values("main", "time", [p], [laws["main"].evaluate(float(p))])
    experiment = builder.build()
    models = ModelSet(["p"], [Model("main", "time", laws["main"])])
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    render_show(console, analyse_all(experiment, models=models))
    text = console.export_text()
    assert "! negative at the target (see below)" in " ".join(text.split())  # the note wraps at the width
    assert re.search(r"-\d[\d.]* ms!", text)
    assert "! 1 model is negative at p=128, left out of the predicted total" in text
    assert "main from p ≈ 100" in " ".join(text.split())  # where it turns negative: 2^(2/0.3) ≈ 101
    assert "→ ≥0 s at the target (sum of the call paths; 1 left out: negative there)" in " ".join(text.split())
    assert not re.search(r"^speed-up", text, re.M)  # no header line: nothing is left to divide by
    assert "p has 3 measured values; models and predictions are unreliable below 5" in text


def test_views_fit_every_width(sample):
    """Columns are sized from the width they are printed at: no line may spill over, however narrow."""
    names = [f"Region{i}With{'Long' * i}CamelCaseName" for i in range(5)]
    chain = {"main->solve->halo->" + "->".join(names[:i + 1]): simple_function("p", 0.3 + i / 10, 0, 0, 0)
             for i in range(4)}
    deep = {**LAWS, **chain, "main->solve->halo->" + "->".join(names): simple_function("p", 0.5, 0.01, 2, 1)}
    experiment, models = build(deep)
    report = analyse(experiment, models)
    for width in range(60, 201, 7):
        for view in (call_tree_view(report, min_share=0.0), call_tree_view(report, depth=3), ranking_view(report),
                     detail_view(detail(report, "main->solve->halo"))):
            assert_fits(render(view, width), width)


def test_tree_nodes_without_measurements_and_prior_footnotes():
    laws = {"app->kernel": simple_function("p", 1.0, 0.5, 1, 0), "app->io": simple_function("p", 2.0, 0, 0, 0),
            "app->setup": simple_function("p", 3.0, 0, 0, 0)}
    experiment, _ = build(laws)  # "app" itself is only a node of the tree: never measured
    constant = Constraint(constant=True, source="taint", reason="no parameter reaches it")
    models = ModelSet(["p"], [Model(p, "time", f) for p, f in laws.items()]
                      + [Model("app", "time", None, notes=("no measured values",))])
    constraints = {"app->io": constant, "app->setup": constant}
    text = render(call_tree_view(analyse(experiment, models, constraints=constraints), min_share=0.0), 100)
    assert re.search(r"^app\s+not measured", text, re.M)
    assert re.search(r"io\s+2 ¹", text) and re.search(r"setup\s+3 ¹", text)
    assert "¹ constant by taint" in text and "no parameter reaches it" not in text


def test_shares_use_the_same_non_negative_basis_now_and_then():
    """A negative call path (a measurement artefact) counts 0 in the measured total; its model, negative at the
    target, is left out of the predicted total and has no share there (not 0%), so shares stay ≤ 100%."""
    from pmkit.sdk import model

    b = ExperimentBuilder(["p"])
    for p in (2, 4, 8, 16, 32):
        b.add_values("main", "time", [p], [10.0])
        b.add_values("main->a", "time", [p], [float(p)])
        b.add_values("main->b", "time", [p], [-0.5 * p])
    exp = b.build()
    report = analyse(exp, model(exp), "time", {"p": 128.0}, "mean")
    a = report.row("main->a")
    assert report.total_measured == pytest.approx(42.0)
    assert a.share == pytest.approx(32 / 42)
    assert all(r.share <= 1 and (math.isnan(r.predicted_share) or r.predicted_share <= 1) for r in report.rows)
    b_row = report.row("main->b")
    assert b_row.negative and math.isnan(b_row.predicted_share) and report.left_out == 1
    assert [r.callpath for r in report.negative_rows()] == ["main->b"]
    assert report.total_predicted == pytest.approx(10 + report.row("main->a").predicted)
    assert report.row("main->a").predicted_share + report.row("main").predicted_share == pytest.approx(1.0)


def test_a_contributed_table_is_rendered_by_every_view(sample):
    """A table a plugin adds to the analysis (a modeler's per-kernel figures, say) shows in all three views."""
    import json

    from pmkit.analysis import ContributedTable
    from pmkit.schema import show_document

    experiment, models = sample
    analysis = analyse_all(experiment, models=models, detectors=[])
    analysis.inputs[0].tables.append(ContributedTable(
        "Kernels at the target", ("kernel", "CPI", "memory time"), (("stencil", 1.25, 0.0123), ("halo", 0.8, 2.5)),
        units=("", "", "s")))
    console = Console(width=100, record=True, file=io.StringIO(), color_system=None)
    render_show(console, analysis)
    text = console.export_text()
    assert "Kernels at the target" in text and re.search(r"stencil\s+1\.25\s+12\.3 ms", text)
    markdown = markdown_report(analysis)
    assert "### Kernels at the target" in markdown and "| stencil | 1.25 | 12.3 ms |" in markdown
    assert "|---|---:|---:|" in markdown
    (shown,) = json.loads(json.dumps(show_document(analysis)))["show"]
    assert shown["tables"] == [{"title": "Kernels at the target", "columns": ["kernel", "CPI", "memory time"],
                                "units": ["", "", "s"], "rows": [["stencil", 1.25, 0.0123], ["halo", 0.8, 2.5]]}]


def _spiky():
    """A study whose ``main->spiky`` has one point three times off its law: the modeler leaves it out."""
    builder = ExperimentBuilder(["p"], source="spiky.txt")
    builder.add_metric("time", "s")
    for p in (2, 4, 8, 16, 32, 64, 128):
        builder.add_values("main", "time", [p], [1.0 + 0.1 * p])
        builder.add_values("main->spiky", "time", [p], [(2.0 + 0.05 * p) * (3 if p == 16 else 1)])
    return builder.build()


def test_outlier_removal_is_marked_in_every_view():
    import json

    from pmkit.schema import show_document

    analysis = analyse_all(_spiky(), detectors=[])
    spiky = analysis.inputs[0].report.row("main->spiky")
    assert spiky.model.outliers == ({"p": 16.0},)
    tree = render(call_tree_view(analysis.inputs[0].report, min_share=0.0), 100)
    assert re.search(r"spiky\s+2 \+ 0\.05·p ¹", tree)
    assert "¹ one measured point was left out as an outlier (--callpath shows which)" in " ".join(tree.split())
    assert "main " in tree and "main ¹" not in tree
    markdown = markdown_report(analysis, min_share=0.0)
    assert "`2 + 0.05·p` — one measured point was left out as an outlier" in markdown
    focus = analyse_all(_spiky(), detectors=[], callpath="spiky")
    text = render(detail_view(focus.inputs[0].detail), 100)
    assert re.search(r"^p=16\*\s", text, re.M) and not re.search(r"^p=8\*", text, re.M)
    assert "* left out as an outlier" in text
    assert "| p=16 (outlier, left out) |" in markdown_report(focus)
    document = json.loads(json.dumps(show_document(focus)))
    model = next(m for m in document["models"] if m["callpath"] == "main->spiky")
    assert model["outliers"] == [{"p": 16.0}]
    points = document["show"][0]["detail"]["points"]
    assert [p["point"]["p"] for p in points if p["left_out"]] == [16.0]


def test_plot_ticks_are_round_values():
    from pmkit.ui.plot import nice_ticks
    from pmkit.ui.quantities import format_tick

    assert nice_ticks(2.45e-4, 0.505, True) == [1e-3, 1e-2, 1e-1]  # powers of ten on a log axis
    assert nice_ticks(1.1e-3, 6e-3, True) == [2e-3, 5e-3]  # 1, 2, 5 within one decade
    assert nice_ticks(1.1e-3, 4.9e-3, True) == [2e-3, 3e-3, 4e-3]  # too few of those: linear steps
    assert nice_ticks(0, 0.82, False) == [0.0, 0.2, 0.4, 0.6, 0.8]
    assert nice_ticks(0.2755, 0.2771, False) == [0.2755, 0.276, 0.2765, 0.277]
    assert [format_tick(v, "s") for v in (1e-3, 2.5e-3, 2e-4, 0.2765, 0.0)] == ["1 ms", "2.5 ms", "200 µs",
                                                                               "276.5 ms", "0 s"]
    experiment, models = build()
    text = render(detail_view(detail(analyse(experiment, models), "main->solve->halo")), 100)
    labels = [line.split("┤")[0].strip() for line in text.splitlines() if "┤" in line]
    assert len(labels) >= 2
    for label in labels:  # one significant digit here (a log axis over decades): 1 s, 10 s, 100 s
        assert re.fullmatch(r"[125]0* [munµ]?s", label), label


def test_the_model_table_gives_a_short_law_with_notes_room_for_them():
    """A constant law ("1") with notes once got a column five characters wide, its notes folded mid-word."""
    from pmkit.ui.model_table import ModelTable

    notes = ("24 missing (NaN) repetition value(s) ignored", "all values are equal: constant model")
    model = Model("<root>", "metr", Function(("x",), 1.0), Quality(smape=0.0, adjusted_r2=0.0), notes=notes)
    text = render(ModelTable([model]), 80)
    assert all(note in text for note in notes)
    assert_fits(text, 80)


def test_a_metric_its_file_leaves_unnamed_is_named_in_every_view(tmp_path, pmkit_cli) -> None:
    """An Extra-P text file without a METRIC line has one metric named "": the views call it "(unnamed)" rather
    than leave a blank column and a caption that starts " is exclusive"; the JSON keeps the name as read."""
    import json

    from pmkit.names import UNNAMED_METRIC, metric_name

    assert metric_name("") == UNNAMED_METRIC and metric_name("time") == "time"
    path = tmp_path / "unnamed.txt"
    path.write_text("PARAMETER p\nPOINTS (2) (4) (8) (16) (32)\n\nREGION main\n"
                    + "".join(f"DATA {2 + 0.5 * p} {2.01 + 0.5 * p}\n" for p in (2, 4, 8, 16, 32)))
    shown = pmkit_cli("show", str(path)).stdout
    assert f"metric {UNNAMED_METRIC} (exclusive)" in shown and f"\n{UNNAMED_METRIC} is exclusive" in shown
    assert "metric  (" not in shown and "\n is exclusive" not in shown
    table = pmkit_cli("model", str(path)).stdout
    assert f"main      {UNNAMED_METRIC} " in table
    markdown = pmkit_cli("show", str(path), "--markdown").stdout
    assert f"## Scaling of `{UNNAMED_METRIC}`" in markdown and f"- metric: {UNNAMED_METRIC}, exclusive" in markdown
    assert json.loads(pmkit_cli("model", str(path), "--json").stdout)["models"][0]["metric"] == ""
