"""Output safety: ``--out`` is written whole or not at all, never over an input; I/O errors and Ctrl-C
are one line on stderr with the right exit code."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pmkit.cli import main
from pmkit.cli.common import output
from pmkit.errors import OutputError

TEXT = "PARAMETER p\nPOINTS 2 4 8 16 32\nREGION main\nMETRIC time\n" + "".join(f"DATA {v} {v}\n" for v in range(1, 6))


@pytest.fixture
def experiment(tmp_path) -> Path:
    path = tmp_path / "exp.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


def test_output_replaces_the_file_only_when_the_block_ends(tmp_path):
    out = tmp_path / "report.txt"
    out.write_text("old report\n", encoding="utf-8")
    out.chmod(0o640)
    with pytest.raises(KeyboardInterrupt), output(out) as stream:
        stream.write("half of the new rep")
        raise KeyboardInterrupt
    assert out.read_text(encoding="utf-8") == "old report\n"
    assert leftovers(tmp_path) == []
    with output(out) as stream:
        stream.write("new report\n")
    assert out.read_text(encoding="utf-8") == "new report\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o640, "the replaced file keeps its permissions"
    assert leftovers(tmp_path) == []


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    out = tmp_path / "new.txt"
    with output(out) as stream:
        stream.write("x")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~mask


@pytest.mark.parametrize("command", [
    ["model"], ["model", "--json"], ["model", "--format", "jsonl"], ["model", "--format", "parquet"],
    ["model", "--format", "arrow"], ["show"], ["show", "--json"], ["show", "--markdown"],
    ["show", "--callpath", "main"],
])
def test_every_output_is_renamed_into_place_at_the_end(experiment, tmp_path, monkeypatch, capsys, command):
    """An interruption just before the rename (the last moment) leaves the old file and no temporary."""
    if "parquet" in command or "arrow" in command:
        pytest.importorskip("pyarrow")
    out = tmp_path / "out.txt"
    out.write_text("old\n", encoding="utf-8")

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr("pmkit.cli.common.os.replace", interrupted)
    assert main([command[0], str(experiment), *command[1:], "--out", str(out)]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert out.read_text(encoding="utf-8") == "old\n"
    assert leftovers(tmp_path) == []
    monkeypatch.undo()
    assert main([command[0], str(experiment), *command[1:], "--out", str(out)]) == 0
    assert out.read_bytes() != b"old\n" and b"main" in out.read_bytes()


def test_taint_filter_output_is_renamed_into_place(shared_data, tmp_path, monkeypatch, capsys):
    source = shared_data / "perf-taint" / "dataflow" / "matmul.c.json"
    out = tmp_path / "scorep.filter"
    out.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr("pmkit.cli.common.os.replace", lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))
    assert main(["taint-filter", str(source), "--out", str(out)]) == 130
    assert out.read_text(encoding="utf-8") == "old\n" and leftovers(tmp_path) == []


def test_out_naming_an_input_is_refused(experiment, capsys):
    before = experiment.read_text(encoding="utf-8")
    for command in (["model", str(experiment)], ["show", str(experiment), "--json"]):
        assert main([*command, "--out", str(experiment)]) == 2
        err = capsys.readouterr().err
        assert "is one of the inputs" in err and str(experiment) in err
    link = experiment.parent / "link.txt"
    link.symlink_to(experiment)
    assert main(["model", str(experiment), "--out", str(link)]) == 2
    assert experiment.read_text(encoding="utf-8") == before


def test_out_naming_a_file_of_an_input_folder_is_refused(tmp_path, capsys):
    from pmkit.testing.example_study import generate

    study = tmp_path / "study"
    generate(study, processes=(8, 27, 64), repetitions=1)
    run = study / "lulesh.p27.r1" / "profile.cubex"
    before = run.read_bytes()
    assert main(["model", str(study), "--metric", "time", "--out", str(run)]) == 2
    assert "is one of the inputs" in capsys.readouterr().err
    assert run.read_bytes() == before


def test_io_errors_are_user_errors_naming_the_path(experiment, tmp_path, capsys):
    if Path("/dev/full").exists():
        assert main(["model", str(experiment), "--out", "/dev/full"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: cannot write /dev/full: ") and "internal error" not in err
        assert len(err.splitlines()) == 1
    missing = tmp_path / "no" / "such" / "out.json"
    assert main(["show", str(experiment), "--json", "--out", str(missing)]) == 1
    assert f"cannot write {missing}: no folder" in capsys.readouterr().err
    assert main(["model", str(experiment), "--out", str(tmp_path)]) == 1
    assert "it is a folder" in capsys.readouterr().err
    assert main(["model", str(experiment), "--out", os.devnull]) == 0, "a device is written directly"


def test_output_error_names_the_file(tmp_path):
    with pytest.raises(OutputError, match=r"cannot write .*no-dir.*: no folder"):
        with output(tmp_path / "no-dir" / "x.txt") as stream:
            stream.write("x")


# --- real signals and a full stdout, in a process of their own --------------------------------------

SLOW = textwrap.dedent("""
    import sys, time
    import rich.console
    from pmkit.cli import main

    printing = rich.console.Console.print

    def slow(self, *args, **kwargs):
        printing(self, *args, **kwargs)
        self.file.flush()
        sys.__stderr__.write("ready\\n"); sys.__stderr__.flush()
        time.sleep(30)

    rich.console.Console.print = slow
    sys.exit(main(sys.argv[1:]))
""")


def _interrupt_when_ready(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PMKIT_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "40"}
    proc = subprocess.Popen([sys.executable, "-c", SLOW, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    # on a loaded machine progress lines (without a newline of their own) can precede the marker
    while not proc.stderr.readline().endswith("ready\n"):
        assert time.monotonic() < deadline and proc.poll() is None, "the command never started to print"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_sigint_during_a_render_keeps_the_old_file(experiment, tmp_path):
    out = tmp_path / "table.txt"
    out.write_text("old table\n", encoding="utf-8")
    result = _interrupt_when_ready(["model", str(experiment), "--out", str(out)])
    assert result.returncode == 130
    assert result.stderr == "interrupted\n"
    assert out.read_text(encoding="utf-8") == "old table\n"
    assert leftovers(tmp_path) == []


def test_sigint_while_a_message_prints_gives_no_traceback(tmp_path):
    result = _interrupt_when_ready(["model", str(tmp_path / ("long" * 200))])
    assert result.returncode == 130
    assert "Traceback" not in result.stderr
    assert result.stderr.endswith("interrupted\n")


def test_a_full_stdout_is_a_user_error(experiment):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    env = {**os.environ, "PMKIT_DISABLE_PLUGIN_AUTOLOAD": "1"}
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "pmkit.cli", "model", str(experiment)], stdout=full,
                                stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    assert result.returncode == 1
    assert result.stderr == "error: cannot write standard output: No space left on device\n"


@pytest.mark.parametrize("command", [["show"], ["model"], ["show", "--callpath", "main"]])
def test_piped_and_saved_output_has_no_trailing_spaces(experiment, tmp_path, capsys, monkeypatch, command):
    """rich pads table lines to the width; off a terminal those spaces are dropped (diff- and grep-clean)."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main([command[0], str(experiment), *command[1:]]) == 0
    piped = capsys.readouterr().out
    out = tmp_path / "view.txt"
    assert main([command[0], str(experiment), *command[1:], "--out", str(out)]) == 0
    for text in (piped, out.read_text(encoding="utf-8")):
        lines = text.splitlines()
        assert len(lines) > 3 and "main" in text
        assert [line for line in lines if line != line.rstrip(" ")] == []


def test_trimmed_lines_keeps_spaces_inside_a_line_written_in_pieces():
    import io

    from pmkit.cli.common import TrimmedLines

    sink = io.StringIO()
    trimmed = TrimmedLines(sink)
    for piece in ["a  ", " b   ", "\nc", "   \n", "  d  "]:
        trimmed.write(piece)
    assert sink.getvalue() == "a   b\nc\n  d" and not trimmed.isatty()
    trimmed.write(" e \n")
    assert sink.getvalue() == "a   b\nc\n  d   e\n"
