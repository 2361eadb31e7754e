"""Strong scaling in ``pmkit show`` (issue 12): the target rule, speed-up and efficiency, the growth column's
words, the ranking of what limits the speed-up, and negative predictions said loudly — at 80 columns, in
the terminal, Markdown and JSON, on the generated strong-scaling study (``example_study --strong``)."""

from __future__ import annotations

import io
import json
import math
import re
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from pmkit.behaviour import describe
from pmkit.experiment import ExperimentBuilder
from pmkit.models import Model, ModelSet
from pmkit.pmnf import Factor, Function, Term
from pmkit.scaling import analyse
from pmkit.sdk import analyse as analyse_all
from pmkit.strong_scaling import strong_parameters, values_summed
from pmkit.testing.example_study import MPI_INIT, READ_INPUT, STENCIL, generate, generate_strong, strong_times
from pmkit.trend import Trend, about, trend_of, trend_parameter
from pmkit.ui.call_tree import call_tree_view
from pmkit.ui.growth_column import growth_pieces, growth_words, widest_piece, wrap_growth


def law(constant: float, *terms: tuple[float, F | int, F | int]) -> Function:
    return Function(("p",), constant, tuple(Term(c, (Factor("p", a, b),)) for c, a, b in terms))


@pytest.fixture(scope="module")
def strong(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("strong") / "strong-study"
    generate_strong(folder)
    return folder


@pytest.fixture(scope="module")
def strong_analysis(strong):
    return analyse_all(strong, detectors=[]).inputs[0]


def flat(text: str) -> str:
    """The text with its line breaks and runs of spaces as single spaces (wrapped lines read whole)."""
    return " ".join(text.split())


# the analysis


def test_a_falling_total_makes_a_strong_study_and_its_target(strong_analysis):
    report = strong_analysis.report
    assert report.strong_parameters == ("p",) and report.target == {"p": 128.0}
    assert report.strong is not None and not report.strong.summed and report.strong.ideal == pytest.approx(0.25)
    assert report.trend_parameter == "p" and report.trend_start == 2.0


def test_speed_up_and_efficiency_match_the_laws_of_the_study(strong_analysis):
    """The study's laws are known (strong_times): the predicted speed-up over p=32 is within 2% of the truth."""
    over_32, over_2 = strong_analysis.speedups
    truth = sum(strong_times(32).values()) / sum(strong_times(128).values())
    assert over_32.baseline == {"p": 32.0} and over_2.baseline == {"p": 2.0}
    assert over_32.speedup == pytest.approx(truth, rel=0.02)
    report = strong_analysis.report
    assert over_32.speedup == pytest.approx(report.total_measured / report.total_predicted)
    assert over_32.efficiency == pytest.approx(over_32.speedup / 4)
    assert over_2.efficiency == pytest.approx(over_2.speedup / 64)
    assert not over_32.upper_bound


def test_lost_time_ranks_what_stops_falling_and_adds_up_to_the_lost_efficiency(strong_analysis):
    report = strong_analysis.report
    ranked = report.limiting()
    assert [r.callpath for r in ranked[:2]] == [MPI_INIT, READ_INPUT]  # grows with p; constant
    assert report.row(STENCIL).lost == pytest.approx(0.0, abs=0.002)  # falls as 1/p: loses nothing
    total_lost = sum(r.lost for r in report.rows if math.isfinite(r.lost))
    assert total_lost == pytest.approx(1 - strong_analysis.speedups[0].efficiency, abs=0.01)


def test_trends_of_the_study(strong_analysis):
    report = strong_analysis.report
    words = {r.callpath: report.trend(r.index).words() for r in report.rows}
    assert words[STENCIL] == "falls as 1/p"
    assert words["main->solve->halo_exchange->MPI_Waitall"] == "falls as 1/p^(2/3)"
    assert words[READ_INPUT] == "constant"
    assert report.trend(report.row(MPI_INIT).index).state == "grows"


def test_a_weak_study_keeps_its_target_and_ranking(tmp_path):
    generate(tmp_path / "weak", processes=(8, 27, 64, 125, 216), repetitions=1)
    report = analyse_all(tmp_path / "weak", detectors=[]).inputs[0].report
    assert report.strong_parameters == () and report.strong is None
    assert report.target == {"p": 864.0}
    assert all(math.isnan(r.lost) for r in report.rows)


def _text_study(path: Path, laws: dict, points: list[tuple[float, ...]], parameters: tuple[str, ...]) -> Path:
    rng = np.random.default_rng(5)
    lines = [*(f"PARAMETER {name}" for name in parameters),
             "POINTS " + " ".join("( " + " ".join(str(v) for v in point) + " )" for point in points), "METRIC time"]
    for region, f in laws.items():
        lines.append(f"REGION {region}")
        for point in points:
            lines.append("DATA " + " ".join(repr(float(v)) for v in f(*point) * (1 + 0.01 * rng.standard_normal(3))))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_strong_study_over_two_parameters_scales_only_the_process_count(tmp_path, pmkit_cli):
    laws = {"main->compute": lambda p, n: 0.5 * n ** 1.5 / p, "main->serial": lambda p, n: 0.05 * n,
            "main->comm": lambda p, n: 0.02 * np.log2(p) + 0.001 * n}
    points = [(p, n) for p in (2, 4, 8, 16, 32) for n in (10, 20, 30, 40, 50)]
    study = _text_study(tmp_path / "two.txt", laws, points, ("p", "n"))
    result = analyse_all(study, detectors=[]).inputs[0]
    report = result.report
    assert report.strong_parameters == ("p",) and report.target == {"p": 128.0, "n": 50.0}
    assert [s.baseline for s in result.speedups] == [{"p": 32.0, "n": 50.0}, {"p": 2.0, "n": 50.0}]
    out = pmkit_cli("show", study).stdout
    assert "p=128, n=50 (strong scaling: the total falls with p; 4× the largest p, the other parameters kept" \
        in flat(out)
    assert re.search(r"comm .* log p ", out)  # its class along p, not n
    # a target that changes the problem as well has no speed-up
    assert analyse_all(study, target={"p": 128, "n": 100}, detectors=[]).inputs[0].speedups == []


def test_summed_values_fall_per_process(strong, pmkit_cli):
    out = pmkit_cli("show", strong, "--aggregation", "sum", "--detector", "imbalance").stdout
    assert "strong scaling: the time per process falls with p" in flat(out)
    assert re.search(r"^speed-up ×2\.\d\d over p=32", out, re.M)


def test_a_total_summed_over_processes_says_so_in_every_view(strong, pmkit_cli):
    """Summed over processes, the header's total grows beside the speed-up (CPU time, not the time of a
    run): the terminal, Markdown and JSON say which total it is; a study of per-process values does not."""
    args = ("show", strong, "--aggregation", "sum", "--detector", "imbalance")
    out = pmkit_cli(*args).stdout
    assert all(len(line) <= 80 for line in out.splitlines())
    assert re.search(r" total \S+ s now \(measured, summed over processes\) → \S+ s at the target", flat(out))
    markdown = pmkit_cli(*args, "--markdown").stdout
    assert re.search(r"^- total: \S+ s now \(measured, summed over processes\) → ", markdown, re.M)
    total = json.loads(pmkit_cli(*args, "--json").stdout)["show"][0]["total"]
    assert total["summed_over_processes"] is True
    per_process = pmkit_cli("show", strong, "--detector", "imbalance")
    assert "summed over processes" not in flat(per_process.stdout)
    assert json.loads(pmkit_cli("show", strong, "--json").stdout)["show"][0]["total"]["summed_over_processes"] is False


def test_summed_study_detection():
    builder = ExperimentBuilder(["p"])
    for p in (2, 4, 8, 16):
        builder.add_values("main", "time", [p], [10.0 * (1 + 0.01 * p)])  # CPU time summed over p: near-ideal
    experiment = builder.build()
    assert strong_parameters(experiment, "time") == ()
    experiment.provenance.aggregation = "Extra-P scaling: strong"
    assert values_summed(experiment) and strong_parameters(experiment, "time") == ("p",)


def test_degenerate_studies_are_not_strong():
    builder = ExperimentBuilder(["p"])
    builder.add_values("main", "time", [4], [1.0])
    assert strong_parameters(builder.build(), "time") == ()  # one point: nothing falls
    builder = ExperimentBuilder(["p"])
    for p in (2, 4, 8):
        builder.add_values("main", "time", [p], [float("nan")])
    assert strong_parameters(builder.build(), "time") == ()


# trends and the growth column's words


def test_trend_words_say_what_holds_at_the_target():
    turning = describe(law(0.1, (100.0, -1, 0), (0.05, 1, 0)), start=2.0)  # turns at p ≈ 45
    assert Trend(turning, 16.0).words() == "falls as 1/p, grows again beyond p ≈ 45"
    assert Trend(turning, 16.0).state == "turns" and not Trend(turning, 16.0).stopped_falling
    assert Trend(turning, 128.0).words() == "grows again beyond p ≈ 45"
    flattening = describe(law(2.0, (100.0, -1, 0)), start=2.0)
    assert Trend(flattening, 8.0).words() == "falls as 1/p"
    assert Trend(flattening, 1e5).words(lambda v: f"{v:.1f} s") == "flattens at 2.0 s"
    negative = describe(law(73.66, (-14.47, 0, 1)), start=1.0)  # the growing-only fit of 2 + 100/p
    assert Trend(negative, 64.0).state == "negative" and Trend(negative, 64.0).words() == "negative beyond p ≈ 34"
    assert Trend(negative, 16.0).words() == "falls"  # not negative at the target: said in the detail, not here
    assert Trend(describe(law(3.0), start=1.0), 8.0).words() == "constant"
    assert (about(45.2), about(912.0), about(3.43), about(None)) == ("45", "910", "3.4", "?")


def test_trend_parameter_and_start():
    assert trend_parameter(("p", "n"), {"p": 32, "n": 5}, {"p": 128, "n": 5}) == "p"
    assert trend_parameter(("p", "n"), {"p": 32, "n": 5}, {"p": 128, "n": 20}) is None
    assert trend_parameter(("p", "n"), {"p": 32, "n": 5}, {"p": 128, "n": 20}, strong=("p",)) == "p"
    assert trend_of(law(1.0, (1.0, 1, 0)), None, 2.0, {"p": 8.0}) is None
    below = trend_of(law(1.0, (4.0, -1, 0)), "p", 8.0, {"p": 2.0})  # a target below the measurements
    assert below is not None and below.behaviour.start == 2.0


def test_growth_column_styles_and_breaks(strong_analysis):
    report = strong_analysis.report
    stencil, read = report.row(STENCIL), report.row(READ_INPUT)
    assert growth_words(stencil, report.trend(stencil.index), "sec", strong=True).style == "green"
    assert growth_words(read, report.trend(read.index), "sec", strong=True).style == "yellow"  # limits speed-up
    assert growth_words(read, report.trend(read.index), "sec", strong=False).style == "green"
    assert growth_pieces("falls as 1/p, grows again beyond p ≈ 45")[-1] == " p ≈ 45"
    assert growth_pieces("flattens at 40.0 ms") == ["flattens", " at", " 40.0 ms"]
    assert growth_pieces("p·log p") == ["p", "·log p"]
    assert widest_piece("falls as 1/p, grows again beyond p ≈ 45") == 6
    wrapped = wrap_growth(growth_words(stencil, report.trend(stencil.index), "sec"), 6)
    assert wrapped.plain == "falls\nas 1/p"


# the views


def test_show_strong_at_80_columns(strong, pmkit_cli):
    result = pmkit_cli("show", strong, "--detector", "imbalance")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert all(len(line) <= 80 for line in out.splitlines())
    text = flat(out)
    assert "target p=128 (strong scaling: the total falls with p; 4× the largest p; choose with --at)" in text
    assert re.search(r"^speed-up ×2\.03 over p=32 \(efficiency 50\.\d%\) · ×24\.\d over p=2 \(38\.\d%\)", out, re.M)
    assert re.search(r"apply_stencil .* falls as 1/p ", out)
    assert re.search(r"MPI_Waitall .* falls as 1/p\^\(2/3\)", out)
    assert "Fastest growing" not in out
    ranking = out.split("Limiting the speed-up towards p=128 (from p=32)")[1]
    assert re.search(r"^1 main->MPI_Init ", ranking, re.M) and re.search(r"^2 main->read_input ", ranking, re.M)
    assert "together about 1 − efficiency" in flat(ranking)
    assert "apply_stencil" not in ranking


def test_negative_predictions_are_said_loudly_everywhere(strong, pmkit_cli):
    args = ("show", strong, "-O", "falling=false", "--at", "p=1024", "--detector", "imbalance")
    out = pmkit_cli(*args).stdout
    assert all(len(line) <= 80 for line in out.splitlines())
    text = flat(out)
    assert re.search(r"halo_exchange .*negative beyond p ≈ \d+ .* -\d[\d.]* ms! +!", out)
    assert "≥3.11 s at the target (sum of the call paths; 2 left out: negative there)" in text
    assert "! 2 models are negative at p=1024, left out of the predicted total and the shares then" in text
    assert re.search(r"main->solve->halo_exchange from p ≈ \d+; main->solve->halo_exchange->MPI_Waitall from p ≈ \d+",
                     text)
    assert re.search(r"speed-up ≤×0\.\d+ over p=32 \(efficiency ≤0\.\d%\)", text)

    markdown = pmkit_cli(*args, "--markdown").stdout
    assert "**! 2 models are negative at p=1024" in markdown
    assert re.search(r"\| negative beyond p ≈ \d+ \| [\d.]+% \| \*\*-[\d.]+ ms!\*\* \| ! \|", markdown)
    assert "- total: 578 ms now (measured) → ≥3.11 s" in markdown

    document = json.loads(pmkit_cli(*args, "--json").stdout)
    show = document["show"][0]
    assert show["total"]["left_out"] == 2 and all(s["upper_bound"] for s in show["speedups"])
    assert [n["callpath"] for n in show["negative"]] == ["main->solve->halo_exchange",
                                                         "main->solve->halo_exchange->MPI_Waitall"]
    waitall = next(m for m in document["models"] if m["callpath"].endswith("MPI_Waitall"))["prediction"]
    assert waitall["negative"] and waitall["predicted_share"] is None
    assert waitall["behaviour"]["state"] == "negative" and waitall["behaviour"]["negative_from"] < 1024
    shares = [m["prediction"]["predicted_share"] or 0 for m in document["models"]]
    assert sum(shares) == pytest.approx(1.0)


def test_json_has_the_behaviour_and_the_speed_up(strong, pmkit_cli):
    document = json.loads(pmkit_cli("show", strong, "--json", "--detector", "imbalance").stdout)
    show = document["show"][0]
    assert show["strong_parameters"] == ["p"] and show["strong_scaling"]["ideal_factor"] == pytest.approx(0.25)
    assert [s["baseline"] for s in show["speedups"]] == [{"p": 32.0}, {"p": 2.0}]
    assert show["speedups"][0]["speedup"] == pytest.approx(show["total"]["measured"] / show["total"]["predicted"])
    assert show["negative"] == [] and show["total"]["left_out"] == 0
    by_path = {m["callpath"]: m["prediction"] for m in document["models"]}
    waitall = by_path["main->solve->halo_exchange->MPI_Waitall"]
    assert set(waitall) >= {"measured", "share", "fitted", "predicted", "predicted_share", "growth", "growth_class",
                            "prior_note", "negative", "lost", "behaviour"}
    behaviour = waitall["behaviour"]
    assert behaviour["kind"] == "falls" and behaviour["text"] == "falls as 1/p^(2/3)"
    assert behaviour["limit"] == pytest.approx(0.02, rel=0.05) and behaviour["turning_point"] is None
    assert behaviour["negative_from"] is None and -1 < behaviour["local_exponent"] < 0
    assert by_path[READ_INPUT]["lost"] == pytest.approx(0.75 * 0.04 / show["total"]["predicted"], rel=0.03)


def test_markdown_and_detail_of_a_strong_study(strong, pmkit_cli):
    markdown = pmkit_cli("show", strong, "--markdown", "--detector", "imbalance").stdout
    assert "- speed-up: ×2.03 over p=32 (efficiency 50.8%)" in markdown
    assert "### Limiting the speed-up towards p=128 (from p=32)" in markdown
    assert "| # | call path | model | growth | predicted | share | lost |" in markdown
    assert re.search(r"\| 1 \| `main->MPI_Init` \|", markdown)
    detail = pmkit_cli("show", strong, "--callpath", "MPI_Waitall", "--detector", "imbalance").stdout
    assert re.search(r"^along p +falls as 1/p\^\(2/3\) · ∝ p\^-0\.2\d at p=128 · flattens at 20\.\d ms", detail, re.M)
    markdown = pmkit_cli("show", strong, "--callpath", "MPI_Waitall", "--markdown").stdout
    assert "- growth: falls as 1/p^(2/3), ×0.64 from p=32 to p=128" in markdown
    assert "- along p: falls as 1/p^(2/3) · ∝ p^-0.25 at p=128" in markdown


def test_help_states_the_target_rule(pmkit_cli):
    out = flat(pmkit_cli("show", "--help").stdout)
    assert "for a strong-scaling study — the measured total falls with a parameter such as p — 4× the largest " \
           "value of that parameter, the others kept at their largest" in out


def test_a_negative_model_in_a_collapsed_branch_marks_it():
    builder = ExperimentBuilder(["p"])
    builder.add_metric("time", "s")
    laws = {"main": law(1.0), "main->solve": law(0.5), "main->solve->bad": law(2.0, (-0.3, 0, 1))}
    for p in (8, 16, 32, 64, 128):
        for path, f in laws.items():
            builder.add_values(path, "time", [p], [max(float(f.evaluate(float(p))), 0.01)])
    experiment = builder.build()
    models = ModelSet(["p"], [Model(path, "time", f) for path, f in laws.items()])
    report = analyse(experiment, models, target={"p": 1024.0})
    solve = report.row("main->solve")
    assert solve.branch_negative == 1 and not solve.negative
    console = Console(width=80, file=io.StringIO(), color_system=None)
    console.print(call_tree_view(report, depth=2, min_share=0.0), crop=False)
    text = console.file.getvalue()
    assert re.search(r"solve \+1 .* ≥[\d.]+ ms +≥", text)
    assert "≥: a hidden callee is negative at the target and left out" in flat(text)
    assert "main->solve->bad from p ≈ 100" in flat(text)


def test_the_detail_of_a_negative_model_says_so(strong, pmkit_cli):
    args = ("show", strong, "-O", "falling=false", "--at", "p=1024", "--callpath", "MPI_Waitall", "--detector",
            "imbalance")
    out = pmkit_cli(*args).stdout
    assert all(len(line) <= 80 for line in out.splitlines())
    assert re.search(r"^growth +negative beyond p ≈ \d+ *$", out, re.M)  # no factor ×-2
    assert re.search(r"! the model is negative at p=1024 \(from p ≈ \d+\): it does not hold that far", flat(out))
    assert re.search(r"^p=1024 +-[\d.]+ ms! +– *$", out, re.M)
    markdown = pmkit_cli(*args, "--markdown").stdout
    assert "**! the model is negative at p=1024" in markdown
    assert re.search(r"\| p=1024 \| -[\d.]+ ms! \|", markdown)


def test_inclusive_losses_hold_the_callees_and_leave_the_root_out(strong, pmkit_cli):
    out = pmkit_cli("show", strong, "--values", "inclusive", "--detector", "imbalance").stdout
    ranking = out.split("Limiting the speed-up towards p=128 (from p=32)")[1]
    assert re.search(r"^1 main->MPI_Init ", ranking, re.M) and not re.search(r"^\d+ main +", ranking, re.M)
    assert "with its callees' (inclusive time; the whole run's is 1 − efficiency)" in flat(ranking)


def test_speed_ups_are_written_with_three_digits_and_their_bounds():
    from pmkit.strong_scaling import Speedup
    from pmkit.ui.quantities import format_speedups

    text = format_speedups([Speedup({"p": 32.0}, 1.0, 1.0, 2.0311, 0.5078), Speedup({"p": 2.0}, 1.0, 1.0, 4096.3, 64.0),
                            Speedup({"p": 1.0}, 1.0, 1.0, 0.00101, 0.3, upper_bound=True)])
    assert text == "×2.03 over p=32 (efficiency 50.8%) · ×4100 over p=2 (6400%) · ≤×0.00101 over p=1 (≤30.0%)"


def test_the_tree_guides_go_on_where_a_model_takes_a_second_line(strong, pmkit_cli):
    """``│ │ └ MPI_Waitall 0.0201 …`` then a line holding only ``+ 0.3·p^(-2/3)``: the tree's bars stopped for a
    line wherever a model wrapped.  The continuation now carries the bars of the rows that go on."""
    result = pmkit_cli("show", strong, columns=80)
    assert result.returncode == 0, result.stderr
    tree = result.stdout.split("─\n")[1].split("share now:")[0].splitlines()  # the rows, under the header's rule
    assert tree[0].startswith("main") and len(tree) > 10
    assert all(line.startswith(("├", "│", "└")) for line in tree[1:]), "\n".join(tree)
    (waitall,) = [n for n, line in enumerate(tree) if "MPI_Waitall" in line]
    assert tree[waitall + 1].startswith("│ │ ") and "+ 0.3·p^(-2/3)" in tree[waitall + 1]
