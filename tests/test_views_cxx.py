"""Real C++ call paths at 80, 120 and 160 columns: the generated LULESH-like study with the region names
Score-P records (signatures, namespaces, templates, overloads, operators), through ``pmkit show`` and
``pmkit model``.  Numbers are never cut, models break only between terms, names are short and whole,
and the columns a width cannot hold are named."""

from __future__ import annotations

import re

import pytest

from pmkit.testing import cxx_study
from pmkit.ui.layout import term_pieces

WIDTHS = (80, 120, 160)
NUMBER = re.compile(r"^(?:<?\d+(?:\.\d+)?%|–|-?\d+(?:\.\d+)? ?(?:[pnµm]?s|[kMGT]))$")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cxx") / "lulesh-cxx"
    cxx_study.generate(folder)
    return folder


@pytest.fixture(scope="module")
def analysis(study):
    import pmkit

    return pmkit.analyse(study, detectors=[])


def _fits(text: str, width: int) -> None:
    wide = [line for line in text.splitlines() if len(line) > width]
    assert not wide, f"wider than {width}: {wide[:2]}"


def _tree(text: str) -> list[str]:
    return [line for line in text.split("Call tree")[1].split("share now:")[0].splitlines() if "%" in line]


@pytest.mark.parametrize("width", WIDTHS)
def test_show_at_every_width(study, analysis, pmkit_cli, width):
    result = pmkit_cli("show", study, "-D", "threshold=100", columns=width)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    _fits(text, width)
    rows = _tree(text)
    assert len(rows) >= 20
    for line in rows:  # the last columns are whole numbers: share then, and before it the prediction
        assert NUMBER.match(line.split()[-1]), line
    header = text.split("Call tree")[1].splitlines()[1:3]
    assert header[0].split() == ["share", "share"] and header[1].split()[-1] == "then"
    # short names, each on one line, never the signature
    for name in ("CalcMonotonicQGradientsForElems", "CalcHourglassControlForElems", "vector<…>::operator[]",
                 "lulesh::operator*<double>", "Domain::Domain", "MPI_Waitall"):
        assert re.search(rf"[├└] {re.escape(name)}(?=\s)", text), name
    assert "Domain&" not in text.split("Fastest growing")[0]
    assert "CalcPressureForElems(Real_t*," in text  # overloads keep their parameters
    assert "names shortened (--full-names shows them whole)" in " ".join(text.split())
    # models break between terms only: every term of every growing model shown sits on one line
    ranking = text.split("Fastest growing")[1]
    shown_models = "model" in ranking.splitlines()[2]
    for row in analysis.inputs[0].report.ranking():
        for term in term_pieces(row.model.function.pretty_text(3)):
            assert not shown_models or term in ranking, term
    assert "CalcMonotonicQGradientsForElems" in ranking
    flat = " ".join(text.split())
    if width == 80:  # the stated order: the tree gives up its model column first, the ranking too
        assert "left out at this width: model" in flat
    else:
        assert "left out at this width" not in flat
        assert "0.01 + 0.002·p^(1/3)·log2(p)" in text  # the whole model on one line where there is room


@pytest.mark.parametrize("width", WIDTHS)
def test_model_table_at_every_width(study, pmkit_cli, width):
    result = pmkit_cli("model", study, "--metric", "time", columns=width)
    assert result.returncode == 0, result.stderr
    _fits(result.stdout, width)
    rows = [line for line in result.stdout.splitlines() if re.search(r"\d\.\d{4}$", line)]
    assert len(rows) == len(cxx_study.callpaths()), "every row ends in its whole adjusted R²"
    assert "+ 0.002·p^(1/3)·log2(p)" in result.stdout
    assert "Real_t" not in result.stdout or "CalcPressureForElems(Real_t*" in result.stdout


def test_full_names_and_the_detail_show_signatures(study, pmkit_cli):
    result = pmkit_cli("show", study, "--full-names", "--min-share", "0", "-D", "threshold=100",
                       columns=160)
    assert result.returncode == 0, result.stderr
    _fits(result.stdout, 160)
    assert "void CalcAccelerationForNodes(Domain&, Index_t)" in result.stdout
    assert "names shortened" not in result.stdout
    detail = pmkit_cli("show", study, "--callpath", "CalcMonotonicQGradientsForElems", columns=80)
    assert detail.returncode == 0, detail.stderr
    _fits(detail.stdout, 80)
    flat = " ".join(detail.stdout.split())
    assert "function CalcMonotonicQGradientsForElems" in flat
    assert "void CalcMonotonicQGradientsForElems(Domain&, std::vector<Index_t, std::allocator<Index_t> > const&)" \
        in flat
    by_short_path = pmkit_cli("show", study, "--callpath", "CalcQForElems->CalcMonotonicQGradientsForElems")
    assert by_short_path.returncode == 0, by_short_path.stderr
    ambiguous = pmkit_cli("show", study, "--callpath", "CommSend")
    assert ambiguous.returncode == 2 and "is ambiguous" in ambiguous.stderr


def test_json_keeps_the_full_names(study, pmkit_cli):
    import json

    result = pmkit_cli("show", study, "--json", "--detector", "imbalance")
    document = json.loads(result.stdout)
    paths = {m["callpath"] for m in document["models"]}
    assert any(p.endswith("->void CalcAccelerationForNodes(Domain&, Index_t)") for p in paths)
    assert any(f["callpath"].startswith("int main(int, char**)->") for f in document["findings"])


def test_every_view_fits_every_width(analysis, study):
    """From 60 to 200 columns no line of the whole screen, the detail or the model table spills over."""
    import io

    from rich.console import Console

    import pmkit
    from pmkit.ui import render_show
    from pmkit.ui.model_table import model_table

    result = analysis.inputs[0]
    focus = pmkit.analyse(study, detectors=[], callpath="CalcMonotonicQGradientsForElems")
    for width in range(60, 201, 10):
        console = Console(width=width, file=io.StringIO(), color_system=None)
        render_show(console, analysis, min_share=0.0)
        render_show(console, focus)
        console.print(model_table(result.models, tree=result.experiment.callpaths))
        _fits(console.file.getvalue(), width)
