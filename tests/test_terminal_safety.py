"""Names from a file never reach the terminal as escape sequences (issue 19 §4): region, metric and
parameter names holding ESC[31m, an OSC title sequence, a C1 control or a bidirectional override are
shown escaped by ``model``, ``show`` (tree, ranking, detail, findings), ``compare`` and ``--markdown``;
the JSON keeps them exactly."""

from __future__ import annotations

import json

import pytest

RED = "\x1b[31m"
TITLE = "\x1b]0;pwned\x07"
HOSTILE = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    lines = ["PARAMETER p", "POINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 )", f"METRIC time{TITLE}"]
    regions = {f"main{RED}": lambda p: 1.0, f"main{RED}->solve{TITLE}": lambda p: 2.0 + 0.5 * p,
               f"main{RED}->evil\x9b2J\u202eexe.txt": lambda p: 0.5 * p * p}
    for name, law in regions.items():
        lines.append(f"REGION {name}")
        lines += [f"DATA {law(p)} {law(p) * 1.01}" for p in (2, 4, 8, 16, 32)]
    paths = []
    for n in range(2):
        path = folder / f"study{n}.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def _clean(text: str) -> None:
    found = [repr(ch) for ch in HOSTILE if ch in text]
    assert not found, f"control characters reached the output: {found}"


@pytest.mark.parametrize("args", [
    ["model"], ["show"], ["show", "--markdown"], ["show", "--callpath", "solve\x1b]0;pwned\x07"],
    ["show", "--full-names", "--min-share", "0"], ["compare", "SECOND"], ["compare", "SECOND", "--markdown"],
])
def test_no_escape_sequence_reaches_the_terminal(files, pmkit_cli, args):
    args = [str(files[1]) if a == "SECOND" else a for a in args]
    result = pmkit_cli(args[0], files[0], *args[1:], columns=120)
    assert result.returncode == 0, result.stderr
    _clean(result.stdout)
    _clean(result.stderr)
    assert "\\x1b[31m" in result.stdout or "\\x1b]0;pwned\\x07" in result.stdout  # shown, escaped


def test_messages_naming_a_hostile_call_path_are_escaped(files, pmkit_cli):
    result = pmkit_cli("show", files[0], "--callpath", f"nosuch{TITLE}")
    assert result.returncode == 2
    _clean(result.stderr)
    assert "nosuch\\x1b]0;pwned\\x07" in result.stderr


def test_json_keeps_the_exact_names(files, pmkit_cli):
    document = json.loads(pmkit_cli("show", files[0], "--json").stdout)
    assert {m["callpath"] for m in document["models"]} >= {f"main{RED}->solve{TITLE}"}
    assert document["show"][0]["metric"] == f"time{TITLE}"
    compared = json.loads(pmkit_cli("compare", *files, "--json").stdout)
    assert f"main{RED}->evil\x9b2J\u202eexe.txt" in {row["callpath"] for row in compared["callpaths"]}


def test_a_hostile_parameter_name_is_escaped_too(tmp_path, pmkit_cli):
    path = tmp_path / "param.txt"
    lines = [f"PARAMETER p{RED}", "POINTS ( 2 ) ( 4 ) ( 8 ) ( 16 ) ( 32 )", "METRIC time", "REGION main"]
    lines += [f"DATA {1 + 0.1 * p}" for p in (2, 4, 8, 16, 32)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for args in ([], ["--callpath", "main"], ["--markdown"]):
        result = pmkit_cli("show", path, *args, columns=120)
        assert result.returncode == 0, result.stderr
        _clean(result.stdout)
        assert "p\\x1b[31m=" in result.stdout
