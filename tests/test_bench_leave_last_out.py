"""``bench/leave_last_out.py`` finds Extra-P as the other benchmarks do: once, through ``extrap_env``'s
``extrap_python()``, the interpreter passed to every call; ``--no-extrap`` scores pmkit alone without
looking for (or installing) Extra-P.  Extra-P itself is never run here: its calls are stand-ins."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
STUDY = "PARAMETER p\nPOINTS 2 4 8 16 32 64\n\nREGION main\nMETRIC time\n" + "".join(
    f"DATA {p * 1.01:g} {p * 0.99:g}\n" for p in (2, 4, 8, 16, 32, 64))


@pytest.fixture
def leave_last_out(monkeypatch, tmp_path):
    # a real call would fail on this interpreter rather than create bench/.extrap-venv
    monkeypatch.setenv("PMKIT_EXTRAP_PYTHON", str(tmp_path / "no-extrap" / "python"))
    monkeypatch.syspath_prepend(str(BENCH))
    for name in ("leave_last_out", "extrap_env"):
        sys.modules.pop(name, None)
    module = importlib.import_module("leave_last_out")
    yield module
    for name in ("leave_last_out", "extrap_env"):
        sys.modules.pop(name, None)


@pytest.fixture
def study(tmp_path) -> Path:
    path = tmp_path / "linear.txt"
    path.write_text(STUDY)
    return path


def test_no_extrap_scores_pmkit_alone_without_looking_for_extrap(leave_last_out, study, monkeypatch, capsys):
    def no_install(*args, **kwargs):
        raise AssertionError("looked for Extra-P")

    monkeypatch.setattr(leave_last_out, "extrap_python", no_install)
    monkeypatch.setattr(sys.modules["extrap_env"], "extrap_python", no_install)
    monkeypatch.setattr(sys.modules["extrap_env"], "call_runner", no_install)
    assert leave_last_out.main([str(study), "--no-extrap", "--min-points", "3"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "pmkit refining" in out and "Extra-P" not in out and "1 series" in out


def test_extrap_is_found_once_and_its_interpreter_used_for_every_call(leave_last_out, study, monkeypatch):
    found: list[Path] = []
    used: list[Path | None] = []
    python = Path("/somewhere/bin/python")

    def extrap_python(create: bool = True) -> Path:
        found.append(python)
        return python

    def call_runner(request, interpreter=None):
        used.append(interpreter)
        count = len(request["series"])
        model = {"function": {"constant": 64.0, "terms": []}, "text": "64", "predictions": [64.0]}
        return {"results": {name: {"models": [model] * count, "seconds": 0.0} for name in request["modelers"]}}

    env = sys.modules["extrap_env"]
    monkeypatch.setattr(leave_last_out, "extrap_python", extrap_python, raising=False)
    monkeypatch.setattr(env, "extrap_python", extrap_python)
    monkeypatch.setattr(env, "call_runner", call_runner)
    monkeypatch.setattr(env.subprocess, "run", lambda *a, **k: type("Done", (), {"stdout": "4.2.5\n"})())
    assert leave_last_out.main([str(study), "--min-points", "3"]) == 0
    assert found == [python] and used and all(u == python for u in used)
