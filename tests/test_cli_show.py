"""``pmkit show`` end to end: generated Extra-P text studies, real Cube data, pipes, terminals, JSON, Markdown.

In process (``main([...])``), except where a real terminal is the point."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from pmkit.cli import main
from pmkit.cli.show import parse_target
from pmkit.constraints import Constraint
from pmkit.errors import UsageError
from pmkit.hookspecs import hookimpl
from pmkit.options import Option
from pmkit.plugins import build_registry
from pmkit.testing.plugins import using_registry

LAWS = {
    "main": lambda p: 0.5,
    "main->init": lambda p: 0.2 + 0.01 * p,
    "main->solve": lambda p: 2.0 + 0.3 * np.log2(p),
    "main->solve->halo": lambda p: 0.1 + 0.0005 * p ** 1.5,
    "main->solve->compute": lambda p: 5.0,
}
POINTS = (8, 16, 32, 64, 128, 256, 512)
ESCAPE = "\x1b"
COLOUR = re.compile(r"\x1b\[[0-9;]*(3[0-7]|38|9[0-7])[0-9;]*m")


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    """An Extra-P text file: five call paths with known laws, three repetitions with 0.5 % noise."""
    rng = np.random.default_rng(3)
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {p} )" for p in POINTS), "METRIC time"]
    for path, law in LAWS.items():
        lines.append(f"REGION {path}")
        for p in POINTS:
            reps = law(p) * (1 + 0.005 * rng.standard_normal(3))
            lines.append("DATA " + " ".join(repr(float(v)) for v in reps))
    file = tmp_path_factory.mktemp("study") / "study.txt"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return file


def test_show_to_a_pipe_has_no_escape_codes(study, pmkit_cli):
    result = pmkit_cli("show", str(study))
    assert result.returncode == 0, result.stderr
    assert ESCAPE not in result.stdout and ESCAPE not in result.stderr
    out = result.stdout
    assert all(len(line) <= 80 for line in out.splitlines()), "wider than COLUMNS=80"
    for name in ("main", "init", "solve", "halo", "compute"):
        assert name in out
    assert "target p=2048 (4× the largest" in out
    assert "p^1.5" in out and "p^(3/2)" in out
    ranking = out.split("Fastest growing towards p=2048")[1]
    assert ranking.index("main->solve->halo") < ranking.index("main->init")
    assert "compute" not in ranking


def _terminal_output(args: list[str], env: dict[str, str]) -> str:
    """Run ``pmkit`` with a pseudo-terminal as stdout and return what it wrote."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")}
    full_env.update({"COLUMNS": "100", "TERM": "xterm-256color", "PMKIT_DISABLE_PLUGIN_AUTOLOAD": "1", **env})
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "pmkit.cli", *args], stdout=follower,
                            stderr=subprocess.DEVNULL, env=full_env)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(leader)
    assert proc.returncode == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_and_none_with_no_color(study):
    coloured = _terminal_output(["show", str(study)], {})
    assert COLOUR.search(coloured), "a terminal should get colour"
    plain = _terminal_output(["show", str(study)], {"NO_COLOR": "1"})
    assert not COLOUR.search(plain)
    assert "halo" in plain


def test_wide_terminal_keeps_models_on_one_line(study, pmkit_cli):
    result = pmkit_cli("show", str(study), columns=160)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert all(len(line) <= 160 for line in lines)
    assert any("halo" in line and "p^(3/2)" in line and "p^1.5" in line for line in lines)


def test_json_has_the_model_schema_plus_predictions(study, pmkit_cli):
    result = pmkit_cli("show", str(study), "--json", "--at", "p=65536")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == "pmkit.models/1" and doc["parameters"] == ["p"]
    assert {m["callpath"] for m in doc["models"]} == set(LAWS)
    assert all(m["metric"] == "time" for m in doc["models"])
    show = doc["show"][0]
    assert show["target"] == {"p": 65536.0} and show["reference_point"] == {"p": 512.0}
    halo = next(m for m in doc["models"] if m["callpath"] == "main->solve->halo")
    assert halo["prediction"]["predicted"] == pytest.approx(0.1 + 0.0005 * 65536 ** 1.5, rel=0.1)
    assert halo["prediction"]["growth_class"]["label"] == "p^1.5"
    shares = [m["prediction"]["predicted_share"] for m in doc["models"]]
    assert sum(shares) == pytest.approx(1.0)
    assert halo["prediction"]["predicted_share"] == max(shares)


def test_markdown_and_callpath_detail(study, capsys):
    assert main(["show", str(study), "--markdown"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("## Scaling of `time`")
    assert "| # | call path | model | growth | × | predicted | share |" in text
    assert ESCAPE not in text
    assert main(["show", str(study), "--callpath", "main->solve->halo", "--at", "p=4096"]) == 0
    text = capsys.readouterr().out
    assert "main->solve->halo" in text and "Measured" in text and "Predicted" in text
    assert re.search(r"p=512\s+3\s", text)
    assert re.search(r"p=4096\s+\d", text)
    assert "● mean" in text and "log axes: p" in text


def test_a_metric_zero_everywhere_still_shows_its_call_paths(tmp_path, capsys):
    # no call path has a share when both totals are 0: the tree keeps them all rather than "… 2 more", and an
    # exact 0 (its interval [0, 0]) is not flagged as spanning more than 10×
    lines = ["PARAMETER p", "POINTS 2 4 8 16 32", "METRIC bytes"]
    for path in ("main", "main->send"):
        lines += [f"REGION {path}"] + ["DATA 0"] * 5
    file = tmp_path / "zero.txt"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["show", str(file)]) == 0
    text = capsys.readouterr().out
    tree = text.split("Call tree")[1].split("share now:")[0]
    assert "main" in tree and "send" in tree and "more" not in tree
    assert "0?" not in tree


def test_tree_options(study, capsys):
    assert main(["show", str(study), "--depth", "1"]) == 0
    text = capsys.readouterr().out.split("Fastest growing")[0]
    assert "main +4" in text and "halo" not in text
    assert main(["show", str(study), "--sort", "name", "--min-share", "0"]) == 0
    text = capsys.readouterr().out.split("Fastest growing")[0]
    assert text.index("init") < text.index("solve") and text.index("compute") < text.index("halo")


@pytest.mark.parametrize(("args", "message"), [
    (["--callpath", "nope"], "no call path 'nope'"),
    (["--at", "q=3"], "--at names parameter 'q'"),
    (["--metric", "time", "--metric", "bytes"], "one metric at a time"),
    (["--min-share", "150"], "--min-share"),
    (["--json", "--markdown"], "--json and --markdown are two formats of the same output; choose one"),
    (["--prior", "x.json", "--prior-name", "nope"], "no prior named 'nope'"),
])
def test_usage_errors(study, capsys, args, message):
    assert main(["show", str(study), *args]) == 2
    assert message in capsys.readouterr().err


def test_parse_target_checks_names_and_numbers():
    assert parse_target("p=65536, size=100", ("p", "size")) == {"p": 65536.0, "size": 100.0}
    assert parse_target(None, ("p",)) == {}
    for bad, message in (("q=4", "--at names parameter 'q'"), ("p", "--at expects name=value"),
                         ("p=abc", "is not a number"), ("p=-1", "must be a positive number"), ("p=0", "positive"),
                         ("p=8,p=16", "--at gives p twice"), ("p=inf", "positive")):
        with pytest.raises(UsageError, match=message):
            parse_target(bad, ("p",))


def test_missing_input_is_an_input_error(tmp_path, capsys):
    assert main(["show", str(tmp_path / "absent.txt")]) == 1
    assert "absent.txt" in capsys.readouterr().err


class _ConstantPrior:
    """A prior that declares ``main->solve->halo`` constant, whatever its file says."""

    name = "fixed"
    description = "test prior: halo is constant"
    options = ()

    def load(self, path, **options):
        return self

    def constraints(self, experiment):
        return {"main->solve->halo": Constraint(constant=True, source="fixed", reason="no parameter reaches it")}


class _PriorPlugin:
    @hookimpl
    def pmkit_register_priors(self, register):
        register(_ConstantPrior())


def test_prior_shapes_models_and_is_shown(study, tmp_path, capsys):
    prior_file = tmp_path / "prior.json"
    prior_file.write_text("{}", encoding="utf-8")
    registry = build_registry([_PriorPlugin()], entry_points=False)
    with using_registry(registry):
        assert main(["show", str(study), "--prior", str(prior_file), "--prior-name", "fixed",
                     "--min-share", "0"]) == 0
        text = capsys.readouterr().out
        assert "constant by fixed" in text
        prior = ["--prior", str(prior_file), "--prior-name", "fixed"]
        assert main(["show", str(study), *prior, "--callpath", "halo"]) == 0
        assert "constant by fixed (no parameter reaches it)" in " ".join(capsys.readouterr().out.split())
        tree = text.split("Fastest growing")[0]
        halo = next(line for line in tree.splitlines() if "halo" in line)
        assert "constant" in halo
        assert main(["show", str(study), "--prior", str(prior_file), "--prior-name", "fixed", "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        halo_json = next(m for m in doc["models"] if m["callpath"] == "main->solve->halo")
        assert halo_json["prediction"]["prior_note"] == "constant by fixed (no parameter reaches it)"
        assert main(["show", str(study), "--prior", str(prior_file), "--prior-name", "fixed",
                     "--prior-map", "a=p"]) == 2
        assert "prior fixed has no option map" in capsys.readouterr().err


def test_real_cube_study(shared_data, pmkit_cli):
    study = shared_data / "cube" / "extrap-mm-single"
    if not study.is_dir():
        pytest.skip(f"{study} is absent")
    result = pmkit_cli("show", str(study))
    assert result.returncode == 0, result.stderr
    assert ESCAPE not in result.stdout
    out = result.stdout
    assert all(len(line) <= 80 for line in out.splitlines())
    for name in ("main", "init_mat", "mat_mul", "zero_mat"):
        assert name in out
    assert "9 points x=1…2000" in out and "target x=8000" in out
    assert "Fastest growing towards x=8000" in out
    assert "also   6 other metrics (--metric NAME; pmkit model for all)" in out


def test_header_says_other_metrics_exist_and_how_to_see_them(study, tmp_path, capsys):
    """The screen shows one metric; an input with more says so in one line, an input with one says nothing."""
    assert main(["show", str(study)]) == 0
    assert "other metric" not in capsys.readouterr().out
    lines = ["PARAMETER p", "POINTS " + " ".join(f"( {p} )" for p in POINTS)]
    for metric, scale in (("time", 1.0), ("bytes", 1e6), ("visits", 10.0)):
        lines += [f"METRIC {metric}", "REGION main"]
        lines += [f"DATA {scale * p} {scale * p * 1.01}" for p in POINTS]
    file = tmp_path / "metrics.txt"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["show", str(file), "--metric", "bytes"]) == 0
    out = capsys.readouterr().out
    assert "metric bytes" in out
    assert "also   2 other metrics (--metric NAME; pmkit model for all)" in out
    assert main(["show", str(file), "--metric", "bytes", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["show"][0]["other_metrics"] == ["time", "visits"]
    assert main(["show", str(file), "--markdown"]) == 0
    assert "- also: 2 other metrics (--metric NAME; pmkit model for all)" in capsys.readouterr().out
    assert main(["show", str(study), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["show"][0]["other_metrics"] == []


def test_example_study_at_80_columns(tmp_path, pmkit_cli):
    """The README's command on the example study: at 80 columns no column is cut off."""
    from pmkit.testing.example_study import main as write_study

    write_study([str(tmp_path / "example-study")])
    result = pmkit_cli("show", str(tmp_path / "example-study"), columns=80)
    assert result.returncode == 0, result.stderr
    tree = result.stdout.split("Call tree")[1].split("time is exclusive")[0]
    rows = [line for line in tree.splitlines() if re.search(r"\d%", line)]
    assert len(rows) > 10
    cut = [line for line in rows if not re.search(r"(%|–)$", line.rstrip())]
    assert not cut, f"last column cut off: {cut[:3]}"
    ranking = result.stdout.split("Fastest growing towards p=2048")[1]
    assert "MPI_Gather" in ranking and "MPI_Allreduce" in ranking
    assert ranking.index("MPI_Gather") < ranking.index("MPI_Allreduce")


class _GrowthDetector:
    """Reports every call path whose model grows at least ``factor``-fold towards the target, as a detector would."""

    name = "fourfold"
    description = "test detector"
    options = (Option("factor", float, 4.0, "growth to report"),)

    def detect(self, experiment, models, *, factor):
        from pmkit.findings import Finding

        return [Finding(self.name, f"grows {factor:g}-fold", callpath=m.callpath, metric=m.metric, severity=1.0,
                        unit="s", message="seen by the test detector")
                for m in models if m.function is not None and not m.function.is_constant
                and m.function.evaluate(2048.0) > factor * m.function.evaluate(512.0)]


class _DetectorPlugin:
    @hookimpl
    def pmkit_register_detectors(self, register):
        register(_GrowthDetector())


def test_findings_panel_and_json_with_a_registered_detector(study, capsys):
    with using_registry(build_registry([_DetectorPlugin()], entry_points=False)):
        assert main(["show", str(study)]) == 0
        text = capsys.readouterr().out
        assert "Findings (1)" in text and "grows 4-fold" in text and "main->solve->halo" in text
        assert main(["show", str(study), "--json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert [f["callpath"] for f in doc["findings"]] == ["main->solve->halo"]
        assert main(["show", str(study), "--callpath", "main->init"]) == 0
        assert "No findings." in capsys.readouterr().out  # the detail shows the findings about its call path


def test_detector_options_from_the_command_line(study, capsys):
    with using_registry(build_registry([_DetectorPlugin()], entry_points=False)):
        assert main(["show", str(study), "--json", "-D", "factor=3"]) == 0
        titles = {f["callpath"]: f["title"] for f in json.loads(capsys.readouterr().out)["findings"]}
        assert titles == {"main->solve->halo": "grows 3-fold", "main->init": "grows 3-fold"}
        assert main(["show", str(study), "--json", "--detector-option", "fourfold.factor=5"]) == 0
        assert json.loads(capsys.readouterr().out)["findings"][0]["title"] == "grows 5-fold"
        assert main(["show", str(study), "-D", "no_such_option=1"]) == 2
        assert "no detector that runs has an option no_such_option; their options: " in capsys.readouterr().err
        assert main(["show", str(study), "-D", "factor"]) == 2
        assert "-D expects NAME=VALUE, got 'factor'" in capsys.readouterr().err
        assert main(["show", str(study), "-D", "fourfold.factor=lots"]) == 2
        assert "option factor: 'lots' is not a valid float" in capsys.readouterr().err


def test_show_runs_the_analysis_once_whatever_the_view(study, capsys, monkeypatch):
    """One modeling, one scaling report (and one detail) per input, whichever view renders them."""
    import pmkit.detail
    import pmkit.scaling
    import pmkit.sdk
    from pmkit.modelers.refining import RefiningModeler

    calls: Counter = Counter()

    def counting(name, function):
        def counted(*args, **kwargs):
            calls[name] += 1
            return function(*args, **kwargs)
        return counted

    monkeypatch.setattr(pmkit.sdk, "analyse", counting("sdk.analyse", pmkit.sdk.analyse))
    monkeypatch.setattr(pmkit.scaling, "analyse", counting("scaling.analyse", pmkit.scaling.analyse))
    monkeypatch.setattr(pmkit.detail, "detail", counting("detail", pmkit.detail.detail))
    monkeypatch.setattr(RefiningModeler, "model", counting("model", RefiningModeler.model))
    for view in ([], ["--markdown"], ["--json"]):
        for focus in ([], ["--callpath", "halo"]):
            calls.clear()
            assert main(["show", str(study), *view, *focus]) == 0
            assert "halo" in capsys.readouterr().out
            expected = {"sdk.analyse": 1, "scaling.analyse": 1, "model": 1, **({"detail": 1} if focus else {})}
            assert calls == expected, (view, focus)


def test_detail_compares_with_models_stored_in_an_extrap_file(capsys):
    """An .extra-p file's own models show beside pmkit's, in the view and in the JSON."""
    source = Path(__file__).parent / "extrap_files" / "mm_cube.extra-p"
    assert main(["show", str(source), "--callpath", "zero_mat", "--at", "x=8000"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "stored Extra-P default: 1.107e-6 + 6.53e-11·x^(3/4)·log2(x)^2" in text
    assert main(["show", str(source), "--callpath", "zero_mat", "--at", "x=8000", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    (detail,) = [s["detail"] for s in document["show"] if s.get("detail")]
    (stored,) = detail["stored_models"]
    assert stored["set"] == "Extra-P default" and stored["text"].startswith("1.10")
    assert stored["prediction_at_target"] == pytest.approx(1.04e-5, rel=0.01)


def test_help_explains_the_options_and_the_columns(pmkit_cli):
    """--metric says what it does in each command; no option cites a paper; show's help has a legend."""
    show = pmkit_cli("show", "--help", columns=200).stdout
    model = pmkit_cli("model", "--help", columns=200).stdout
    assert "the metric to show, once" in show and "repeatable" not in show.split("--metric")[1].split("--")[0]
    assert "model only this metric (repeatable" in model
    for name in ("model", "show", "plugins", "taint-filter"):
        text = pmkit_cli(name, "--help", columns=200).stdout
        assert "paper" not in text.lower() and "§" not in text, name
    legend = " ".join(show.split())
    for column in ("share now — the call path's part of the total at the largest measured point",
                   "share then — its part of the predicted total", "× — predicted ÷ fitted",
                   "the tree gives up the model column first"):
        assert column in legend
    # each growth text once, quoted: "falls as 1/p, flattens at 2.0 s, falls as 1/p, grows again ..." read as a list
    for words in ("'falls as 1/p'", "'flattens at 2.0 s'", "'falls as 1/p, grows again beyond p ≈ 900' (before its "
                  "turning point)", "'grows again beyond p ≈ 900' (past it)", "'negative beyond p ≈ 34'"):
        assert legend.count(words) == 1, words


def test_counts_render_without_a_unit(tmp_path, pmkit_cli):
    from pmkit.testing.example_study import generate

    generate(tmp_path / "s", processes=(8, 27, 64, 125, 216), repetitions=1)
    result = pmkit_cli("show", tmp_path / "s", "--metric", "visits", "--min-share", "0", columns=120)
    assert result.returncode == 0, result.stderr
    tree = result.stdout.split("Call tree")[1]
    assert "occ" not in tree and "#" not in tree.split("Fastest")[0]
    assert re.search(r"\s100\s+\d", result.stdout)  # 100 visits per time step, written as a plain count
    sent = pmkit_cli("show", tmp_path / "s", "--metric", "bytes_sent", "--min-share", "0", columns=120)
    assert re.search(r"\d+(\.\d+)? [kMG]B\s", sent.stdout)


@pytest.mark.parametrize("columns", [40, 50, 80])
def test_a_folded_row_deep_in_the_tree_stays_on_one_line(tmp_path, pmkit_cli, columns):
    """``└ … 1 more <1.0%`` under short names was broken after "more", its share alone on the next line (seen at
    80 columns on the trace demo's tree, whose model and growth columns are wide)."""
    points = (8, 16, 32, 64, 128)
    rows = {"main": [1] * 5, "main->a": [1] * 5, "main->a->b": [1] * 5, "main->a->b->c": [10 * p for p in points],
            "main->a->b->d": [0.001] * 5}
    path = tmp_path / "fold.txt"
    path.write_text("PARAMETER p\n" + "".join(f"POINTS ( {p} )\n" for p in points) + "".join(
        f"REGION {name}\nMETRIC time\n" + "".join(f"DATA {v}\n" for v in values) for name, values in rows.items()))
    result = pmkit_cli("show", path, columns=columns)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if "more" in line]
    assert line.strip() == "└ … 1 more <1.0%"
