"""The pmkit command: fast start, exit codes, and errors without tracebacks (in process: a subprocess
adds nothing but start-up time, except where a fresh interpreter is the point)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def test_help_does_not_import_heavy_modules():
    code = ("import sys, pmkit.cli\n"
            "try:\n    pmkit.cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = {'numba', 'scipy', 'pycubexr', 'otf2', '_otf2', 'matplotlib', 'orjson', 'pyarrow', 'dask',\n"
            "         'distributed'}\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("module", ["pmkit", "pmkit.cli"])
def test_python_dash_m_runs_the_command(module):
    """``python -m pmkit`` said "'pmkit' is a package and cannot be directly executed"."""
    done = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("pmkit "), done.stderr


def test_usage_errors_exit_2(pmkit_cli):
    assert pmkit_cli().returncode == 2
    assert pmkit_cli("model").returncode == 2
    result = pmkit_cli("frobnicate")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_missing_file_exits_1_naming_it(pmkit_cli, tmp_path):
    missing = tmp_path / ("deep" * 30) / "nope.txt"
    result = pmkit_cli("model", str(missing), columns=40)
    assert result.returncode == 1
    assert "nope.txt" in result.stderr
    assert result.stderr.splitlines() == [f"error: {missing}: no such file or directory"], "one unwrapped line"
    assert result.stderr.count("nope.txt") == 1
    assert "Traceback" not in result.stderr


def test_unknown_modeler_is_usage_error(pmkit_cli, tmp_path):
    path = tmp_path / "exp.txt"
    path.write_text("PARAMETER p\nPOINTS 2 4 8 16 32\nREGION main\nMETRIC time\n" + "DATA 1 1.1\n" * 5)
    result = pmkit_cli("model", str(path), "--modeler", "no-such-modeler")
    assert result.returncode == 2, result.stderr
    assert "no modeler named 'no-such-modeler'" in result.stderr


def test_options_of_every_kind_are_checked_and_name_their_flag(pmkit_cli, tmp_path):
    path = tmp_path / "exp.txt"
    path.write_text("PARAMETER p\nPOINTS 2 4 8 16 32\nREGION main\nMETRIC time\n" + "DATA 1 1.1\n" * 5)
    for flag in ("-O", "-R", "-P"):
        result = pmkit_cli("model", str(path), flag, "novalue", "--prior", str(path))
        assert result.returncode == 2 and f"error: {flag} expects NAME=VALUE, got 'novalue'" in result.stderr
    result = pmkit_cli("model", str(path), "-O", "acceptance=lots")
    assert result.returncode == 2 and "option acceptance: 'lots' is not a valid float" in result.stderr
    result = pmkit_cli("model", str(path), "-O", "speed=1")
    assert result.returncode == 2 and "modeler refining has no option speed" in result.stderr
    result = pmkit_cli("model", str(path), "-R", "speed=1")
    assert result.returncode == 2 and "reader extrap-text has no option speed" in result.stderr
    result = pmkit_cli("model", str(path), "--values", "inclusive")
    assert result.returncode == 2 and "--values does not apply to" in result.stderr


def test_plugins_json_lists_builtins(pmkit_cli):
    result = pmkit_cli("plugins", "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == "pmkit.plugins/1"
    kinds = {(p["name"], p["kind"]) for p in document["plugins"]}
    assert ("extrap-text", "reader") in kinds
    assert ("refining", "modeler") in kinds
    assert all(p["status"] == "ok" for p in document["plugins"]), document


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_model_end_to_end(pmkit_cli, tmp_path, fmt):
    path = tmp_path / "exp.txt"
    lines = ["PARAMETER p", "POINTS 2 4 8 16 32", "REGION main", "METRIC time"]
    lines += [f"DATA {3 + 2 * p} {3 + 2 * p}" for p in (2, 4, 8, 16, 32)]
    path.write_text("\n".join(lines) + "\n")
    args = ["model", str(path)] + (["--json"] if fmt == "json" else [])
    result = pmkit_cli(*args)
    assert result.returncode == 0, result.stderr
    if fmt == "json":
        document = json.loads(result.stdout)
        assert document["schema"] == "pmkit.models/1"
        assert document["parameters"] == ["p"]
        (entry,) = document["models"]
        assert entry["callpath"] == "main" and entry["metric"] == "time" and entry["modeler"] == "refining"
        (term,) = entry["function"]["terms"]
        assert term["factors"] == [{"parameter": "p", "exponent": "1", "log_exponent": "0"}]
        assert term["coefficient"] == pytest.approx(2.0)
        assert entry["function"]["constant"] == pytest.approx(3.0)
        assert set(entry["quality"]) >= {"rss", "smape", "adjusted_r2"}
    else:
        assert "main" in result.stdout and "2·p" in result.stdout


def test_model_title_keeps_the_parameter_names_with_their_word(pmkit_cli, tmp_path, monkeypatch):
    """A title longer than the terminal breaks after the input's name, not between "parameters" and the
    names; a title that fits stays on one line."""
    monkeypatch.chdir(tmp_path)
    path = Path("a-study-name-long-enough-to-fill-most-of-an-eighty-column-line") / "exp.txt"
    path.parent.mkdir()
    lines = ["PARAMETER p", "PARAMETER q", "POINTS " + " ".join(f"( {p} {q} )" for p in (2, 4, 8) for q in (1, 2, 3)),
             "REGION main", "METRIC time"]
    lines += [f"DATA {3 + 2 * p + q} {3 + 2 * p + q}" for p in (2, 4, 8) for q in (1, 2, 3)]
    path.write_text("\n".join(lines) + "\n")
    result = pmkit_cli("model", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in out)
    assert out[0].endswith("exp.txt —") and out[1] == "1 model, parameters p, q"
    result = pmkit_cli("model", str(path), columns=200)
    assert result.stdout.splitlines()[0].endswith("exp.txt — 1 model, parameters p, q")


def test_taint_filter_writes_score_p_filter(pmkit_cli, shared_data, tmp_path):
    source = shared_data / "perf-taint" / "dataflow" / "matmul.c.json"
    out = tmp_path / "scorep.filter"
    result = pmkit_cli("taint-filter", str(source), "--out", str(out))
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in out.read_text().splitlines() if not line.startswith("#")]
    assert lines[0] == "SCOREP_REGION_NAMES_BEGIN" and lines[-1] == "SCOREP_REGION_NAMES_END"
    assert lines[1] == "EXCLUDE *"
    assert {"INCLUDE mat_mul", "INCLUDE create_matrix", "INCLUDE main"} <= set(lines)
    assert len([line for line in lines if line.startswith("INCLUDE")]) == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = pmkit_cli("taint-filter", str(bad))
    assert result.returncode == 1 and "bad.json" in result.stderr and "Traceback" not in result.stderr


def test_taint_filter_asks_the_registered_prior(pmkit_cli, shared_data, monkeypatch):
    """The command looks the taint prior up in the registry instead of importing its module."""
    from pmkit.priors.taint import TaintPrior

    loads = []
    original = TaintPrior.load
    monkeypatch.setattr(TaintPrior, "load", lambda self, path, **options: loads.append(options) or
                        original(self, path, **options))
    result = pmkit_cli("taint-filter", str(shared_data / "perf-taint" / "dataflow" / "matmul.c.json"))
    assert result.returncode == 0 and "INCLUDE mat_mul" in result.stdout
    assert loads == [{"map": {}, "unimportant": "data"}], "called once, with every option resolved"


def test_model_with_taint_prior_constrains_and_reports_contradiction(pmkit_cli, shared_data, tmp_path):
    path = tmp_path / "matmul.txt"
    ms = (4, 8, 16, 32, 64)
    lines = ["PARAMETER m", "POINTS " + " ".join(map(str, ms)), "METRIC time"]
    laws = {"mat_mul": lambda m: 0.01 * m**3, "atoi": lambda m: 1 + 0.5 * m}
    for region, law in laws.items():
        lines.append(f"REGION {region}")
        lines += [f"DATA {law(m) * 0.999} {law(m)} {law(m) * 1.001}" for m in ms]
    path.write_text("\n".join(lines) + "\n")
    prior = shared_data / "perf-taint" / "dataflow" / "matmul.c.json"
    result = pmkit_cli("model", str(path), "--prior", str(prior), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    models = {m["callpath"]: m for m in document["models"]}
    assert models["atoi"]["function"]["terms"] == []
    assert any("constant by taint" in note for note in models["atoi"]["notes"])
    assert models["mat_mul"]["function"]["terms"][0]["factors"][0]["exponent"] == "3"
    (finding,) = document["findings"]
    assert finding["callpath"] == "atoi" and "cannot cause" in finding["title"]
    result = pmkit_cli("model", str(path), "--prior", str(prior), "--prior-map", "m=rows", "--prior-map", "x")
    assert result.returncode == 2 and "--prior-map expects NAME=VALUE, got 'x'" in result.stderr
    result = pmkit_cli("model", str(path), "--prior", str(prior), "--prior-map", "a=b")
    assert result.returncode == 2 and "parameter map a=b: neither is a parameter" in result.stderr


def test_cube_shortcuts_reach_the_reader(pmkit_cli, tmp_path):
    from pmkit.pmnf import Function
    from pmkit.testing.example_study import generate

    study = tmp_path / "study"
    generate(study, processes=(8, 27, 64), repetitions=1)

    def main_at_64(*extra: str) -> float:
        result = pmkit_cli("model", str(study), "--metric", "time", "--json", *extra)
        assert result.returncode == 0, result.stderr
        models = {m["callpath"]: m for m in json.loads(result.stdout)["models"]}
        assert {m["metric"] for m in models.values()} == {"time"}
        return Function.from_json(models["main"]["function"], ["p"]).evaluate(64.0)

    exclusive, inclusive = main_at_64(), main_at_64("--values", "inclusive")
    assert inclusive > 10 * exclusive
    assert main_at_64("--values", "inclusive", "--aggregation", "sum") == pytest.approx(64 * inclusive, rel=0.05)


def test_plugins_lists_options_for_the_command_line(pmkit_cli):
    document = json.loads(pmkit_cli("plugins", "--json").stdout)
    refining = next(p for p in document["plugins"] if p["name"] == "refining")
    options = {o["name"]: o for o in refining["options"]}
    assert options["acceptance"]["default"] == 1.5 and options["acceptance"]["type"] == "float"
    assert options["measure"]["choices"] == ["mean", "median", "min", "max"]
    listing = pmkit_cli("plugins", "--options", columns=80)
    assert listing.returncode == 0, listing.stderr
    assert "acceptance=1.5" in listing.stdout and "nonconstancy=2:" in listing.stdout
    assert max(len(line) for line in listing.stdout.splitlines()) <= 80
    # defaults as they are typed: -R locations=true, not Python's True
    assert "locations=true:" in listing.stdout and "=True" not in listing.stdout and "=False" not in listing.stdout
    assert "paper" not in listing.stdout, "users do not have the papers: help says what the option does"
    # the listing says how to give them (it named none of -R, -O, -P, -D)
    for title in ("readers — options: -R NAME=VALUE", "modelers — options: -O NAME=VALUE",
                  "priors — options: -P NAME=VALUE", "detectors — options: -D NAME=VALUE"):
        assert title in listing.stdout.splitlines(), title
    assert "readers" in pmkit_cli("plugins", columns=80).stdout.splitlines()


def test_plugins_help_names_every_plugin_option_flag(pmkit_cli):
    """``pmkit plugins --options`` lists the options of every plugin kind; its help names the flag of each
    (detectors' -D was missing), and each flag it names exists in ``pmkit show``."""
    import re

    from pmkit.hookspecs import KINDS

    plugins_help = " ".join(pmkit_cli("plugins", "--help").stdout.split())
    named = re.search(r"options \(for (.*) name=value\)", plugins_help).group(1)
    flags = re.findall(r"-[A-Z]\b", named)
    assert len(flags) == len(KINDS) == 4, named
    show_help = pmkit_cli("show", "--help").stdout
    assert all(f", {flag} NAME=VALUE" in show_help for flag in flags), flags


def test_option_defaults_are_shown_as_the_command_line_reads_them(builtin_registry):
    """Every option's default, written as ``pmkit plugins --options`` shows it, parses back to the default."""
    options = [option for row in builtin_registry.rows() for option in row.options]
    assert {option.type for option in options} >= {bool, int, float, str, dict}
    for option in options:
        text = option.text(option.default)
        if text == "''":
            assert option.default in ("", {}), option
        else:
            assert option.parse(text) == option.default, (option.name, text)
        assert "True" not in text and "False" not in text and "{" not in text


def test_bracketed_names_are_text_not_markup(pmkit_cli, tmp_path):
    path = tmp_path / "odd[bold]name.txt"
    path.write_text("PARAMETER p\nPOINTS 2 4 8 16 32\nREGION [lambda at x.cpp:3]\nMETRIC time\n"
                    + "".join(f"DATA {v}\n" for v in (1, 2, 3, 4, 5)))
    result = pmkit_cli("model", str(path), columns=160)
    assert result.returncode == 0, result.stderr
    assert "[lambda" in result.stdout and "x.cpp:3]" in result.stdout
    assert "odd[bold]name.txt" in result.stdout.replace("\n", "")
    missing = pmkit_cli("model", str(tmp_path / "nosuch[/].txt"))
    assert missing.returncode == 1 and "nosuch[/].txt" in missing.stderr and "Traceback" not in missing.stderr


def test_a_corrupt_run_in_a_study_is_reported_by_model(pmkit_cli, tmp_path):
    from pmkit.testing.example_study import generate

    study = tmp_path / "study"
    generate(study, processes=(8, 27, 64, 125, 216), repetitions=1)
    (study / "lulesh.p27.r1" / "profile.cubex").write_bytes(b"garbage")
    result = pmkit_cli("model", str(study), "--metric", "time", "--json", columns=400)
    assert result.returncode == 0, result.stderr
    assert "lulesh.p27.r1" in result.stderr and "skipped" in result.stderr
    (skipped,) = json.loads(result.stdout)["skipped"]
    assert "lulesh.p27.r1" in skipped["source"]


def test_a_prior_that_restricts_nothing_is_said_once_per_input(pmkit_cli, tmp_path):
    """A Perf-Taint file of another program (none of its functions is a call path here): the views
    would show no trace of it, so a warning says the models are the data's alone; a prior that does
    restrict a call path gets no warning."""
    from pmkit.testing.taint_files import Behaviour, Call, Loop, SourceFunction, TaintProgram

    program = TaintProgram(("n",), [
        SourceFunction("main", behaviours=[Behaviour((Call("solve"),), (None,))]),
        SourceFunction("solve", "solve(int)", behaviours=[Behaviour((Loop(("n",), (Loop(("n",)),)),))]),
        SourceFunction("atoi")])
    prior = program.write(tmp_path / "app_0.json")
    ns = (4, 8, 16, 32, 64)

    def study(name: str, regions: tuple[str, ...]):
        path = tmp_path / name
        lines = ["PARAMETER n", "POINTS " + " ".join(map(str, ns)), "METRIC time"]
        for region in regions:
            lines += [f"REGION {region}"] + [f"DATA {1 + 0.01 * n * n}" for n in ns]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    other = study("other.txt", ("compute", "exchange"))
    for command in ("model", "show"):
        result = pmkit_cli(command, str(other), "--prior", str(prior))
        assert result.returncode == 0, result.stderr
        assert result.stderr == (f"warning: prior {prior} restricts none of the 2 call paths of {other}: the models "
                                 "are the data's alone (are the names the same? pmkit taint-filter lists the "
                                 "functions it knows)\n")
    same = study("same.txt", ("main", "atoi"))
    assert pmkit_cli("model", str(same), "--prior", str(prior)).stderr == ""
