"""A hedged law (issue 18's ``hedge`` option) and a wide interval, told alike in every view: the tree and the
ranking mark a hedged law with the same footnote at any width, the Markdown report says what the terminal
says, and the SDK finds a call path's model by name."""

from __future__ import annotations

import re

import numpy as np
import pytest
from rich.console import Console
from test_hedging import weak_experiment

import pmkit
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.modelers.multiparam import HEDGE_NOTE
from pmkit.scaling import ScalingReport
from pmkit.ui.call_tree import CallTreeView
from pmkit.ui.interval import WIDE_NOTE, is_wide
from pmkit.ui.markdown_report import markdown_report
from pmkit.ui.quantities import format_value
from pmkit.ui.ranking import RankingView

FOOTNOTE = "¹ hedge: the law between the best-fitting one and a rival the points cannot reject"


@pytest.fixture(scope="module")
def hedged() -> tuple[pmkit.Analysis, list[str]]:
    experiment, target, _ = weak_experiment(40, 5)
    models = pmkit.model(experiment, hedge=True)
    names = [m.callpath for m in models if HEDGE_NOTE in m.notes]
    analysis = pmkit.analyse(experiment, models=models, target=dict(zip(("p", "size"), target, strict=True)),
                             detectors=[])
    return analysis, names


def text_of(view: object, width: int) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(view)
    return console.export_text()


def lines_of(text: str, name: str) -> list[str]:
    """The lines of the row naming ``name`` (a row's cells may wrap onto lines that name nothing)."""
    lines = text.splitlines()
    out: list[str] = []
    for n, line in enumerate(lines):
        if f" {name} " in f" {line} ":
            out.append(line)
            for more in lines[n + 1:]:
                if not more.startswith("   ") or not more.strip() or re.search(r"\bs\d+\b", more):
                    break
                out.append(more)
    return out


@pytest.mark.parametrize("width", [60, 120])
def test_the_trees_footnote_mark_stays_when_the_model_column_is_given_up(hedged, width: int) -> None:
    analysis, names = hedged
    report = analysis.inputs[0].report
    text = text_of(CallTreeView(report, min_share=0.0), width)
    assert FOOTNOTE in " ".join(text.split())
    marked = [name for name in names if any("¹" in line for line in lines_of(text, name))]
    assert marked == names  # every hedged row carries the mark the note under the tree explains
    assert ("left out at this width: model" in text) == (width == 60)


@pytest.mark.parametrize("width", [60, 120])
def test_the_ranking_marks_a_hedged_law_as_the_tree_does(hedged, width: int) -> None:
    analysis, names = hedged
    report = analysis.inputs[0].report
    view = RankingView(report, limit=40, min_share=0.0)
    ranked = {row.callpath for row in view.rows}
    assert ranked & set(names)
    text = text_of(view, width)
    assert FOOTNOTE in " ".join(text.split())
    for row in view.rows:
        marked = any("¹" in line for line in lines_of(text, row.callpath))
        assert marked == (row.callpath in names), row.callpath


def test_the_markdown_ranking_notes_a_hedged_law_and_its_tree_marks_a_wide_interval(hedged) -> None:
    analysis, names = hedged
    report: ScalingReport = analysis.inputs[0].report
    text = markdown_report(analysis, top=40, min_share=0.0)
    ranking, tree = text.split("### Call tree")
    hedged_rows = [line for line in ranking.splitlines() if any(f"`{n}`" in line for n in names)]
    assert hedged_rows and all("— hedge: the law between" in line for line in hedged_rows)
    wide = [row for row in (report.rows[i] for i in range(len(report.rows))) if row.depth == 0 and is_wide(row)]
    assert wide  # a narrow span: some intervals span more than 10×
    for row in wide:
        line = next(line for line in tree.splitlines() if line.startswith(f"| `{row.callpath}` "))
        assert line.split(" | ")[-2].endswith("?")  # the value at the target, marked as the terminal marks it
    assert f"_{WIDE_NOTE}_" in tree


def test_the_wide_interval_note_comes_after_the_clauses_on_the_trees_columns() -> None:
    flat, target, _ = weak_experiment(40, 5)
    tree = CallTree()
    for i in range(40):  # main->a->s0 … hidden under a +20 row, main->s20 … main->s39 shown (s27 wide)
        tree.add(f"main->a->s{i}" if i < 20 else f"main->s{i}")
    measured = flat.measurements["time"]  # rows s0 … s39; main and main->a (indices 0, 1) measured as 1
    assert (tree.index("main"), tree.index("main->a")) == (0, 1)
    values = np.concatenate([np.ones((2, *measured.shape[1:])), measured])
    nested = Experiment(("p", "size"), flat.points, tree, (Metric("time"),), {"time": values})
    report = pmkit.analyse(nested, target=dict(zip(("p", "size"), target, strict=True)), detectors=[],
                           modeler_options={"hedge": True}).inputs[0].report
    text = " ".join(text_of(CallTreeView(report, min_share=0.0, depth=2), 200).split())
    assert "counts its N hidden callees" in text and WIDE_NOTE in text
    assert "(measure at larger scale, or more repetitions); " not in text  # nothing tacked onto its advice



def test_a_law_in_one_parameter_is_plotted_along_it_not_along_one_it_ignores() -> None:
    from test_hedging import GRID

    from pmkit.ui.plot import plot_data

    tree = CallTree()
    tree.add("solve")
    values = (0.7 + 4e-5 * GRID[:, 1] ** 2.5)[None, :, None]  # size alone; p and size each measured at 5 values
    experiment = Experiment(("p", "size"), GRID, tree, (Metric("time"),), {"time": values})
    detail = pmkit.analyse(experiment, callpath="solve", detectors=[]).inputs[0].detail
    assert {f.parameter for t in detail.row.model.function.terms for f in t.factors} == {"size"}
    plot = plot_data(detail)
    assert plot.parameter == "size" and plot.fixed == {"p": 343.0}
    assert plot.curve_y[-1] > 10 * plot.curve_y[0]  # the growth the growth column speaks of, not a flat line


def test_compare_gives_a_total_that_leaves_out_a_negative_model_as_a_lower_bound_as_show_does() -> None:
    from test_hedging import GRID

    from pmkit.ui.compare import header_view
    from pmkit.ui.markdown_report import markdown_comparison

    tree = CallTree()
    for path in ("main->solve", "main->shrink"):
        tree.add(path)
    size = GRID[:, 1]
    shrink = 100 - 0.5 * size * np.log2(GRID[:, 0])  # negative at 4× both parameters
    values = np.stack([np.full(len(GRID), 1.0), 5 + 0.05 * size ** 2, shrink])[:, :, None]
    experiment = Experiment(("p", "size"), GRID, tree, (Metric("time"),), {"time": values})
    comparison = pmkit.compare(experiment, experiment)
    assert comparison.a.report.left_out == 1  # main->shrink is negative at the target
    total = f"≥{format_value(comparison.a.report.total_predicted, '')}"
    assert f"A {total} → B {total}" in text_of(header_view(comparison), 120)
    assert f"predicted total {total}" in markdown_comparison(comparison)

def test_a_model_set_finds_a_call_paths_model_by_its_path_or_the_unique_end_of_it() -> None:
    flat, _, _ = weak_experiment(3, 5)
    tree = CallTree()
    for path in ("main->solve->MPI_Gather", "main->io->MPI_Gather", "main->solve->halo"):
        tree.add(path)
    values = np.concatenate([np.ones((3, *flat.measurements["time"].shape[1:])), flat.measurements["time"]])
    one = Experiment(("p", "size"), flat.points, tree, (Metric("time"),), {"time": values})
    two = Experiment(("p", "size"), flat.points, tree, (Metric("time"), Metric("visits")),
                     {"time": values, "visits": values * 2})
    models = pmkit.model(one)
    assert models["main->solve->halo"] is models.get("main->solve->halo", "time")
    assert models["halo"] is models["solve->halo"] is models["main->solve->halo", "time"]
    point = {"p": 1000, "size": 100}
    assert models["halo"].predict(point, level=0.9) == models.get("main->solve->halo", "time").predict(point)
    with pytest.raises(KeyError, match=r"MPI_Gather.*which of 'main->solve->MPI_Gather', 'main->io->MPI_Gather'"):
        models["MPI_Gather"]
    with pytest.raises(KeyError, match=r"did you mean 'main->solve->halo'"):
        models["Halo"]
    with pytest.raises(KeyError, match=r"metric 'visits'; its metrics: 'time'"):
        models["halo", "visits"]
    both = pmkit.model(two)
    with pytest.raises(KeyError, match=r"2 metrics, 'time', 'visits'.*models\['main->solve->halo', 'time'\]"):
        both["halo"]
    assert both["halo", "visits"].metric == "visits"
    assert models[-1] is models[len(models) - 1] and models[:2] == [models[0], models[1]]


@pytest.mark.parametrize(("given", "recorded"),
                         [({}, "auto"), ({"hedge": False}, "false"), ({"hedge": "true"}, "true")])
def test_show_json_records_the_modeler_options_the_models_were_made_with(given: dict, recorded: str) -> None:
    from pmkit.schema import show_document

    experiment, target, _ = weak_experiment(6, 5)
    analysis = pmkit.analyse(experiment, target=dict(zip(("p", "size"), target, strict=True)), detectors=[],
                             modeler_options=given)
    document = show_document(analysis)
    assert document["show"][0]["modeler_options"]["hedge"] == recorded
    assert document["show"][0]["modeler_options"]["acceptance"] == 1.5
    hedged = [m for m in document["models"] if any(n.startswith("hedge:") for n in m["notes"])]
    assert bool(hedged) == (recorded != "false")  # the narrow grid: auto hedges as true does


def test_the_hedge_options_help_says_how_a_hedged_model_shows_and_what_each_value_does() -> None:
    from pmkit.modelers.search_inputs import OPTIONS

    option = next(o for o in OPTIONS if o.name == "hedge")
    assert "'hedge: …'" in option.help  # how to tell a hedged model in any view
    assert all(f"{value}: " in option.help for value in option.choices)
    assert "pmkit." not in option.help  # words for a user, not a module path


@pytest.mark.parametrize("hedge", [True, False])
def test_the_header_counts_the_hedged_laws_that_the_tables_mark_only_where_they_show_them(hedge: bool) -> None:
    from pmkit.ui.show import header_view

    experiment, target, _ = weak_experiment(40, 5)
    models = pmkit.model(experiment, hedge=hedge)
    count = sum(HEDGE_NOTE in m.notes for m in models)
    assert (count > 0) == hedge
    analysis = pmkit.analyse(experiment, models=models, target=dict(zip(("p", "size"), target, strict=True)),
                             detectors=[])
    header = " ".join(text_of(header_view(analysis.inputs[0]), 80).split())
    markdown = markdown_report(analysis)
    if hedge:
        assert f"hedged {count} models: a law between the best-fitting one" in header
        assert f"- hedged: {count} models: a law between" in markdown
        objects = pmkit.ModelSet(models.parameters, list(models))  # a set of objects counts them alike
        assert objects.count_noted("hedge:", "time") == models.count_noted("hedge:", "time") == count
        assert models.count_noted("hedge:", "visits") == 0
    else:
        assert "hedged" not in header and "- hedged" not in markdown


def test_the_model_table_says_a_note_many_laws_share_once_under_it_and_marks_them() -> None:
    from pmkit.ui.model_table import ModelTable

    experiment, _, _ = weak_experiment(40, 5)
    models = list(pmkit.model(experiment, hedge=True))
    hedged = [m.callpath for m in models if HEDGE_NOTE in m.notes]
    assert len(hedged) > 1
    text = text_of(ModelTable(models), 80)
    assert " ".join(text.split()).count(" ".join(HEDGE_NOTE.split())) == 1  # once, under the table
    assert f"¹ {HEDGE_NOTE[:40]}" in text
    for model in models:
        assert any("¹" in line for line in lines_of(text, model.callpath)) == (model.callpath in hedged)


def test_compare_marks_a_hedged_law_on_either_side_as_show_does() -> None:
    from pmkit.ui.compare import ComparisonTable
    from pmkit.ui.markdown_report import markdown_comparison

    experiment, target, _ = weak_experiment(40, 5)
    comparison = pmkit.compare(experiment, experiment, modeler_options={"hedge": True},
                               target=dict(zip(("p", "size"), target, strict=True)))
    hedged = {row.callpath for row in comparison.rows if row.a is not None and row.a.model is not None
              and HEDGE_NOTE in row.a.model.notes}
    assert hedged
    wide = text_of(ComparisonTable(comparison, comparison.rows, "Side by side"), 200)
    assert FOOTNOTE in wide
    for row in comparison.rows:
        marks = sum(line.count("¹") for line in lines_of(wide, row.callpath))
        assert marks == (2 if row.callpath in hedged else 0), row.callpath  # A's law and B's
    narrow = text_of(ComparisonTable(comparison, comparison.rows, "Side by side"), 60)
    assert "left out at this width: models" in narrow and "¹" not in narrow  # no note on marks not shown
    markdown = markdown_comparison(comparison, min_share=0.0, top=40)
    assert "— hedge: the law between the best-fitting one" in markdown
