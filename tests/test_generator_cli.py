"""The example-study generators the README runs (``python -m pmkit.testing.MODULE TARGET``): ``--help``
is help (stdout, exit 0, 80 columns, no markup), never a study written into a folder named ``--help``
or a traceback; a wrong command line is its usage and exit 2."""

from __future__ import annotations

import importlib

import pytest

MODULES = ("example_study", "cxx_study", "segmented_study", "imbalance_study", "trace_programs")


@pytest.mark.parametrize("name", MODULES)
def test_help_is_help_and_writes_nothing(name, tmp_path, monkeypatch, capsys):
    module = importlib.import_module(f"pmkit.testing.{name}")
    monkeypatch.chdir(tmp_path)
    for flag in ("--help", "-h"):
        assert module.main([flag]) == 0
        out, err = capsys.readouterr()
        assert out.startswith(f"usage: python -m pmkit.testing.{name} ") and not err
        assert f"python -m pmkit.testing.{name} " in out.split("\n\n", 1)[1], "the paragraph about the command"
        assert max(len(line) for line in out.splitlines()) <= 80, out
        assert "``" not in out and ":data:" not in out, out
    assert list(tmp_path.iterdir()) == []
    assert module.main([]) == 2
    out, err = capsys.readouterr()
    assert not out and err.startswith(f"usage: python -m pmkit.testing.{name} ")
    assert module.main(["a", "b"]) == 2
    assert list(tmp_path.iterdir()) == []


def test_trace_programs_refuses_a_folder_that_holds_its_traces(tmp_path, capsys):
    """Running the README's trace example twice: one line saying why, not OTF2's errors and a traceback."""
    pytest.importorskip("otf2")
    from pmkit.testing import trace_programs

    (tmp_path / "demo" / "study").mkdir(parents=True)
    assert trace_programs.main([str(tmp_path / "demo")]) == 1
    out, err = capsys.readouterr()
    assert not out
    assert err == (f"error: {tmp_path / 'demo' / 'study'} exists and OTF2 does not overwrite traces: remove it, "
                   f"or give another folder than {tmp_path / 'demo'}\n")
    assert list((tmp_path / "demo" / "study").iterdir()) == []


def test_flags_and_target_in_any_order(tmp_path, capsys):
    from pmkit.testing import example_study

    assert example_study.main([str(tmp_path / "s"), "--strong"]) == 0
    assert "5 process counts" in capsys.readouterr().out
    assert example_study.main(["--bogus", str(tmp_path / "t")]) == 2
    assert not (tmp_path / "t").exists()


def test_help_piped_into_a_reader_that_leaves_early_is_no_traceback():
    """``python -m pmkit.testing.example_study --help | head -2``: head leaves before the help is
    written; the generator exits 0 without a BrokenPipeError traceback."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-m", "pmkit.testing.example_study", "--help"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # the reader is gone before the child has imported anything
    err = child.stderr.read().decode()
    assert child.wait() == 0 and "Traceback" not in err and "Broken" not in err, err
