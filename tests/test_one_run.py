"""One run — a single perf stat file, a single OTF2 trace — has no target: every view shows the measured
values, says once why nothing is predicted, and ``--at`` is a usage error (:func:`pmkit.scaling.no_target`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pmkit
from pmkit.cli import main
from pmkit.errors import UsageError
from pmkit.scaling import ONE_RUN, no_target

PERF_STAT = """# started on Sat Nov 21 22:27:16 2026

607.33,msec,task-clock,607330747,100.00,0.980,CPUs utilized
38,,context-switches,607330747,100.00,62.569,/sec
"""
TARGET_WORDS = ("share then", "share\nthen", "at run=4", "at the target", "Fastest growing", "predicted",
                "choose with --at", "Predicted")


@pytest.fixture(scope="module")
def perf_file(tmp_path_factory) -> Path:
    """One perf stat run whose name holds no parameters: the reader makes it point run=1."""
    file = tmp_path_factory.mktemp("perf") / "sw.out"
    file.write_text(PERF_STAT)
    return file


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    """One OTF2 trace in a folder whose name holds no parameters."""
    pytest.importorskip("otf2")
    from pmkit.testing.trace_programs import late_sender_trace

    folder = tmp_path_factory.mktemp("otf2") / "ring"
    late_sender_trace(folder, ranks=2, iterations=20)
    return folder


@pytest.fixture(params=["perf", "trace"])
def one_run(request) -> Path:
    return request.getfixturevalue("perf_file" if request.param == "perf" else "trace")


def test_one_run_in_the_terminal_shows_what_was_measured_and_says_why_once(one_run, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", str(one_run)]) == 0
    out = capsys.readouterr().out
    assert " ".join(out.split()).count(ONE_RUN) == 1, out
    assert "(the one measured point)" in out and "(measured" in out and "measured" in out.split("Call tree")[1]
    assert not [w for w in TARGET_WORDS if w in out], out
    assert "measure at least" not in out  # the parameter warning would say the same again
    assert all(len(line) <= 80 for line in out.splitlines())


def test_one_run_perf_stat_values(perf_file, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", str(perf_file)]) == 0
    out = capsys.readouterr().out
    assert "\ntotal  607 ms (measured, summed over processes)\n" in out  # perf sums its CPUs and threads
    tree = out.split("Call tree")[1]
    program = next(line for line in tree.splitlines() if line.startswith("program"))
    assert program.split()[-2:] == ["607", "ms"] and "100%" in program


def test_one_run_json_has_no_prediction(one_run, capsys):
    assert main(["show", str(one_run), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (shown,) = document["show"]
    assert shown["target"] is None and shown["no_target"] == ONE_RUN
    assert shown["total_predicted"] is None and shown["total"]["predicted"] is None
    assert shown["total_measured"] > 0 and shown["reference_point"] == {"run": 1.0}
    predictions = [m["prediction"] for m in document["models"] if m["prediction"] is not None]
    assert predictions
    for prediction in predictions:
        assert all(prediction[k] is None for k in ("predicted", "low", "high", "predicted_share", "growth",
                                                   "behaviour"))
        assert prediction["measured"] is not None and prediction["share"] is not None


def test_one_run_markdown(one_run, capsys):
    assert main(["show", str(one_run), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out.count(ONE_RUN) == 1 and "| share | measured |" in out and "1 point (" in out
    paths = len(pmkit.read(one_run).callpaths)
    assert f", {paths} call path{'' if paths == 1 else 's'}\n" in out  # the perf run's one: '1 call path'
    assert not [w for w in TARGET_WORDS if w in out], out


def test_one_run_detail_has_no_predictions(perf_file, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", str(perf_file), "--callpath", "program"]) == 0
    out = capsys.readouterr().out
    assert "Measured" in out and "100% of the total now\n" in out
    assert not [w for w in TARGET_WORDS if w in out], out
    assert "only 1 point" not in out and "modeler    refining, 1 point\n" in out  # the target line says it
    assert main(["show", str(perf_file), "--callpath", "program", "--markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.count(ONE_RUN) == 1 and "only 1 point" not in markdown
    assert main(["show", str(perf_file), "--callpath", "program", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["show"][0]["detail"]["predictions"] == []


def test_at_on_one_run_is_a_one_line_usage_error(one_run, capsys):
    assert main(["show", str(one_run), "--at", "run=4"]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "cannot predict at run=4" in err and ONE_RUN in err
    with pytest.raises(UsageError, match="one run"):
        pmkit.analyse(one_run, target={"run": 4})


def test_several_points_keep_their_target(tmp_path):
    """The decision is by points: a study of two runs still predicts at 4× its largest."""
    for p, value in ((2, 1.0), (4, 2.0)):
        (tmp_path / f"app.p{p}.r1.csv").write_text(PERF_STAT.replace("607.33", str(value)))
    analysis = pmkit.analyse(tmp_path)
    report = analysis.inputs[0].report
    assert no_target(report.experiment) is None and report.no_target is None and report.target == {"p": 16.0}
    experiment = pmkit.analyse(tmp_path / "app.p2.r1.csv").inputs[0].experiment
    assert no_target(experiment) == ONE_RUN


def test_two_runs_compare_at_their_one_point(perf_file, tmp_path, capsys):
    """Before and after, one perf stat file each: compared at the measured point, nothing extrapolated; a
    one-run side against a study would need a prediction, and says so."""
    after = tmp_path / "after.out"
    after.write_text(PERF_STAT.replace("607.33", "500.00"))
    comparison = pmkit.compare(perf_file, after)
    assert comparison.target == {"run": 1.0} and not comparison.default_target
    (program,) = [row for row in comparison.rows if row.callpath == "program"]
    assert program.difference == pytest.approx(500.0 - 607.33)
    assert comparison.one_point
    assert main(["compare", str(perf_file), str(after)]) == 0
    note = "target run=1 (the one measured point of both: one run each, nothing to extrapolate)"
    assert note in " ".join(capsys.readouterr().out.split())
    assert main(["compare", str(perf_file), str(after), "--markdown"]) == 0
    markdown = capsys.readouterr().out
    assert f"\n- {note.replace('target', 'target:', 1)}\n" in markdown  # the same note as the terminal's
    assert "measured total 607 ms" in markdown and "predicted" not in markdown
    assert main(["compare", str(perf_file), str(after), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["one_point"] is True
    study = tmp_path / "study"
    study.mkdir()
    for run in (1, 2):
        (study / f"app.run{run}.r1.csv").write_text(PERF_STAT)
    assert main(["compare", str(perf_file), str(study)]) == 2
    assert "cannot predict at run=8" in capsys.readouterr().err


def test_two_runs_compared_show_no_growth(perf_file, tmp_path, capsys, monkeypatch):
    """One run each holds no growth: neither the terminal nor the Markdown shows a growth column or the
    growth classes that changed; the values, the change and the wins and losses stay."""
    monkeypatch.setenv("COLUMNS", "80")
    after = tmp_path / "after.out"
    after.write_text(PERF_STAT.replace("607.33", "500.00"))
    assert main(["compare", str(perf_file), str(after)]) == 0
    text = capsys.readouterr().out
    assert "growth" not in text.lower() and "A → B" not in text
    assert "change: B − A at the target" in text and "Biggest wins at run=1" in text and "-107 ms" in text
    assert main(["compare", str(perf_file), str(after), "--markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "growth" not in markdown.lower()
    assert "| call path | model A | model B | A at run=1 | B at run=1 | change | B ÷ A |" in markdown


def test_two_perf_stat_runs_compared_say_their_totals_are_summed(perf_file, tmp_path, capsys, monkeypatch):
    """perf stat sums its CPUs and threads: compare says so beside the totals in every view, as show does."""
    after = tmp_path / "sw-after.out"
    after.write_text(PERF_STAT.replace("607.33,msec", "500.00,msec"))
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["compare", str(perf_file), str(after)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "both summed over processes" in out, out
    assert main(["compare", str(perf_file), str(after), "--markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.count("measured total 607 ms (summed over processes)") == 1, markdown
    assert main(["compare", str(perf_file), str(after), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["a"]["summed_over_processes"] is True and document["b"]["summed_over_processes"] is True


@pytest.mark.parametrize(("a", "b", "note"), [(True, True, "; both summed over processes"),
                                              (True, False, "; A summed over processes, B not"),
                                              (False, True, "; B summed over processes, A not"),
                                              (False, False, "")])
def test_the_summed_note_names_the_sides_it_holds_for(a, b, note):
    from types import SimpleNamespace

    from pmkit.ui.compare import summed_note

    sides = SimpleNamespace(a=SimpleNamespace(summed_over_processes=a), b=SimpleNamespace(summed_over_processes=b))
    assert summed_note(sides) == note


def test_one_run_tree_caption_names_no_growth_column(tmp_path, capsys, monkeypatch):
    """A collapsed row (+N) in one run's tree: the caption explains it without pointing at a growth
    column that one run's tree does not have."""
    from pmkit.testing.example_study import generate

    generate(tmp_path / "study", processes=(125,), repetitions=1)
    run = next((tmp_path / "study").iterdir())
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["show", str(run), "--depth", "2"]) == 0
    out = capsys.readouterr().out
    tree = out.split("Call tree")[1].split("Findings")[0]
    assert " +27 " in tree and "growth" not in tree, tree
    assert "counts its N hidden callees" in " ".join(tree.split())
