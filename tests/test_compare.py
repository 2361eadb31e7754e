"""``pmkit compare`` and ``pmkit.compare``: the example study before and after an optimisation (a tree
gather, the imbalance fixed, one kernel slower), two metrics of one study, and figures exported with
matplotlib."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import pmkit
from pmkit.testing.example_study import EOS, GATHER, HALO_WAIT, generate

PROCESSES = (8, 27, 64, 125, 216, 343)


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare")
    generate(root / "before", processes=PROCESSES, repetitions=2)
    generate(root / "after", processes=PROCESSES, repetitions=2, optimised=True)
    return root / "before", root / "after"


@pytest.fixture(scope="module")
def comparison(studies):
    return pmkit.compare(*studies)


def test_the_comparison_pairs_call_paths_and_finds_what_changed(comparison):
    assert comparison.target == {"p": 4 * 343.0}
    assert comparison.comparable
    by_path = {row.callpath: row for row in comparison.rows}
    gather = by_path[GATHER]
    assert (gather.a.growth_class.label, gather.b.growth_class.label) == ("p", "log p")
    assert gather.class_change == -1 and gather.difference < 0
    assert [row.callpath for row in comparison.changed_class()] == [GATHER]
    wins = [row.callpath for row in comparison.wins(min_share=0.01)]
    assert wins[:2] == [HALO_WAIT, GATHER]  # the imbalance's waiting time is the largest win
    assert [row.callpath for row in comparison.losses(min_share=0.01)] == [EOS]
    assert by_path[EOS].ratio == pytest.approx(1.15, rel=0.03)
    changed, unchanged = comparison.significant(0.01)
    assert {r.callpath for r in changed} == {HALO_WAIT, GATHER, EOS} and unchanged > 5
    assert comparison.total_change < 0


def test_two_metrics_of_one_study_compare_shares(studies):
    both = pmkit.compare(studies[0], studies[0], metric="time", metric_b="bytes_sent")
    assert not both.comparable
    row = next(r for r in both.rows if r.callpath == GATHER)
    assert both.change(row) == pytest.approx(row.b.predicted_share - row.a.predicted_share)
    with pytest.raises(pmkit.UsageError, match="no metric 'nope'"):
        pmkit.compare(studies[0], studies[1], metric="nope")


@pytest.mark.parametrize("width", [80, 120])
def test_terminal_view(studies, pmkit_cli, width):
    result = pmkit_cli("compare", *studies, columns=width)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert all(len(line) <= width for line in text.splitlines())
    assert "total  A " in text and "(-" in text.split("total")[1].splitlines()[0]
    side = text.split("Side by side")[1].split("Growth class changed")[0]
    assert "p → log p" in side and "MPI_Gather" in side and "EvalEOSForElems" in side
    assert re.search(r"… \d+ more call paths of ≥1.0% changed by less than", side)
    changed = text.split("Growth class changed")[1].split("Biggest wins")[0]
    assert "MPI_Gather" in changed and "EvalEOSForElems" not in changed
    wins = text.split("Biggest wins")[1].split("Biggest losses")[0]
    assert wins.index("MPI_Waitall") < wins.index("MPI_Gather")
    losses = text.split("Biggest losses")[1]
    assert "EvalEOSForElems" in losses and re.search(r"\+\d[\d.]* ms\s+\+1[45]\.\d%", losses)
    if width == 80:
        assert "left out at this width: models" in " ".join(side.split())
    else:
        assert re.search(r"A 2\.8\d*e-5 \+ 2e-5·p .*\n.*B [\d.e-]+ \+ 0\.0004\d*·log2\(p\)", side)  # both models


def test_json_and_markdown(studies, pmkit_cli):
    result = pmkit_cli("compare", *studies, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "pmkit.compare/1" and document["parameters"] == ["p"]
    assert document["comparable"] is True and document["target"] == {"p": 1372.0} and document["one_point"] is False
    assert document["a"]["metric"] == "time" and document["total_change"] < 0
    assert document["changed_class"] == [GATHER] and document["losses"] == [EOS]
    assert document["wins"][:2] == [HALO_WAIT, GATHER]
    gather = next(row for row in document["callpaths"] if row["callpath"] == GATHER)
    assert gather["growth_change"] == "slower"
    assert gather["a"]["growth_class"]["label"] == "p" and gather["b"]["model"]["pretty"].endswith("·log2(p)")
    assert gather["difference"] == pytest.approx(gather["b"]["predicted"] - gather["a"]["predicted"])
    markdown = pmkit_cli("compare", *studies, "--markdown").stdout
    assert markdown.startswith("## `") and "### Growth class changed" in markdown
    assert "\n- target: p=1372 (4× the largest measured of both; choose with --at)\n" in markdown
    assert re.search(r"\| `main->VerifyAndWriteFinalOutput->MPI_Gather` \| `[^`]+·p` \| `[^`]+log2\(p\)` \| "
                     r"p → log p \|", markdown)
    assert pmkit_cli("compare", *studies, "--json", "--markdown").returncode == 2


def test_usage_errors(studies, pmkit_cli, tmp_path):
    one = pmkit_cli("compare", studies[0])
    assert one.returncode == 2 and "takes two inputs" in one.stderr
    three = pmkit_cli("compare", *studies, "--metric", "time", "--metric", "visits", "--metric", "time")
    assert three.returncode == 2 and "--metric is given once" in three.stderr
    bad_at = pmkit_cli("compare", *studies, "--at", "q=4")
    assert bad_at.returncode == 2 and "--at names parameter 'q'" in bad_at.stderr
    no_path = pmkit_cli("compare", *studies, "--callpath", "nosuch")
    assert no_path.returncode == 2 and "no call path 'nosuch'" in no_path.stderr


def test_an_unreadable_side_is_the_error_said_once(studies, pmkit_cli, tmp_path):
    """``pmkit compare A empty.txt`` printed the error, "1 of 2 inputs skipped", then the error again: compare
    needs both sides, so nothing is skipped; each unreadable side is one line."""
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    result = pmkit_cli("compare", studies[0], empty)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"error: {empty}: is empty (0 bytes): there is nothing to read"]
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    both = pmkit_cli("compare", broken, empty)
    assert both.returncode == 1 and len(both.stderr.splitlines()) == 2 and "skipped" not in both.stderr


def test_callpath_detail_on_both_sides(studies, pmkit_cli):
    result = pmkit_cli("compare", *studies, "--callpath", "MPI_Gather", columns=100)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.count("Measured") == 2 and "A: " in text and "B: " in text
    document = json.loads(pmkit_cli("compare", *studies, "--callpath", "MPI_Gather", "--json").stdout)
    assert document["detail"]["a"]["callpath"] == GATHER and len(document["detail"]["b"]["points"]) == 6


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plots_for_a_report(studies, pmkit_cli, tmp_path, suffix):
    pytest.importorskip("matplotlib")
    figure = tmp_path / f"gather{suffix}"
    result = pmkit_cli("compare", *studies, "--callpath", "MPI_Gather", "--plot", figure)
    assert result.returncode == 0, result.stderr
    data = figure.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    else:
        svg = data.decode()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        assert "MPI_Gather" in svg and "log2(p)" in svg and "A before" in svg and "B after" in svg
    single = tmp_path / f"one{suffix}"
    result = pmkit_cli("show", studies[0], "--callpath", "MPI_Gather", "--plot", single)
    assert result.returncode == 0, result.stderr
    assert single.stat().st_size > 5_000
    assert not list(tmp_path.glob(".*.part")), "written whole or not at all"


def test_plot_usage_and_a_missing_matplotlib(studies, pmkit_cli, tmp_path, monkeypatch):
    no_path = pmkit_cli("show", studies[0], "--plot", tmp_path / "x.png")
    assert no_path.returncode == 2 and "--plot draws one call path: give --callpath too" in no_path.stderr
    suffix = pmkit_cli("show", studies[0], "--callpath", "MPI_Gather", "--plot", tmp_path / "x.jpg")
    assert suffix.returncode == 2 and "a figure is written as .svg, .png or .pdf" in suffix.stderr
    same = pmkit_cli("show", studies[0], "--callpath", "MPI_Gather", "--plot", tmp_path / "x.svg", "--out",
                     tmp_path / "x.svg")
    assert same.returncode == 2 and "--plot and --out name the same file" in same.stderr
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    monkeypatch.setitem(__import__("sys").modules, "matplotlib.figure", None)
    missing = pmkit_cli("show", studies[0], "--callpath", "MPI_Gather", "--plot", tmp_path / "x.png")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        "error: plotting needs matplotlib, which is not installed: pip install 'pmkit-hpc[plot]'"]
    assert missing.stdout == "", "said before the work starts, not after the whole view"
    assert not (tmp_path / "x.png").exists()


def _falling_study(slope: float) -> pmkit.Experiment:
    """Per-process times of a strong-scaling code: a kernel that falls as 1/p, one that grows with p."""
    from pmkit.experiment import CallTree, Experiment, Metric

    tree = CallTree()
    for path in ("main", "main->solve", "main->MPI_Allreduce"):
        tree.add(path)
    p = np.array([8.0, 16, 32, 64, 128, 256])
    values = np.stack([np.full(p.size, 0.01), 0.05 + slope / p, 1e-3 + 1e-5 * p])
    return Experiment(("p",), p[:, None], tree, (Metric("time", "sec"),),
                      {"time": np.repeat(values[:, :, None], 2, axis=2)})


def test_compare_words_falling_laws_as_show_does():
    from rich.console import Console

    from pmkit.ui.compare import render_comparison

    comparison = pmkit.compare(("before", _falling_study(100.0)), ("after", _falling_study(50.0)))
    console = Console(width=120, record=True, color_system=None)
    render_comparison(console, comparison)
    text = console.export_text()
    assert "falls as 1/p" in text and "decreasing" not in text
    narrow = Console(width=80, record=True, color_system=None)
    render_comparison(narrow, comparison)
    assert all(len(line) <= 80 for line in narrow.export_text().splitlines())
    from pmkit.ui.markdown_report import markdown_comparison

    markdown = markdown_comparison(comparison)
    assert "falls as 1/p" in markdown and "decreasing" not in markdown
