"""Hostile input (issue 19): huge tokens, decompression bombs, endless streams, malformed files.

Each case is built here, small (bombs inflate from a few KB on disk), and read the way a user
would (``pmkit.read`` or ``main([...])`` in process).  Every failure must be one short line naming
the file, in bounded memory, never a traceback or a decoder's internals.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import struct
import tarfile
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit.cli import main
from pmkit.errors import InputError
from pmkit.priors.taint import filter_token, score_p_filter
from pmkit.priors.taint_json import TaintAnalysis, TaintFunction, read_taint_file
from pmkit.readers.cube import read_cube
from pmkit.testing.cubewriter import TIME, VISITS, write_cube

HUGE = 2_000_000
"""Characters in a huge token: large enough that quoting it whole would show, small enough for CI."""
MIB = 1 << 20


def one_line_error(capsys, *argv: str) -> str:
    """Run ``pmkit argv`` in process: exit 1 and one short line on stderr, which is returned."""
    code = main(list(argv))
    err = capsys.readouterr().err
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err[:2000]
    assert len(lines[0]) < 600 and "Traceback" not in err
    return lines[0]


def peak_mb(read) -> tuple[BaseException | None, float]:
    """What ``read()`` raised (None if nothing) and the peak of Python and numpy allocations (MiB)."""
    tracemalloc.start()
    try:
        read()
        caught = None
    except Exception as exc:  # the caller checks what was raised
        caught = exc
    peak = tracemalloc.get_traced_memory()[1] / MIB
    tracemalloc.stop()
    return caught, peak


# -- §1 errors quote a short excerpt ---------------------------------------------------------------

@pytest.mark.parametrize(("name", "content", "reader"), [
    ("data.txt", "PARAMETER p\nPOINTS 1 2\nREGION r\nDATA " + "q" * HUGE + "\n", "extrap-text"),
    ("points.txt", "PARAMETER p\nPOINTS ( " + "q" * HUGE + " )\n", "extrap-text"),
    ("keyword.txt", "q" * HUGE + " 1\n", "extrap-text"),
    ("region.txt", "PARAMETER p\nPOINTS 1\nREGION ->" + "q" * HUGE + "\nDATA 1\n", "extrap-text"),
    ("string.jsonl", json.dumps({"params": {"p": 1}, "value": "q" * HUGE}) + "\n", "extrap-jsonl"),
    ("key.jsonl", json.dumps({"params": {"p": 1}, "value": 1}) + "\n"
     + json.dumps({"params": {"p": 1, "q" * HUGE: 2}, "value": 1}) + "\n", "extrap-jsonl"),
    ("callpath.jsonl", json.dumps({"params": {"p": 1}, "callpath": ["q" * HUGE], "value": 1}) + "\n", "extrap-jsonl"),
    ("talpas.txt", '{"parameters":{"p":1};"metric":"m";"callpath":"c";"value":"' + "q" * HUGE + '"}\n', "talpas"),
    ("document.json", json.dumps({"parameters": ["p"], "measurements": {"a": {"m": [
        {"point": ["q" * HUGE], "values": [1]}]}}}), "extrap-json"),
])
def test_errors_quote_a_short_excerpt_of_a_huge_token(tmp_path, capsys, name, content, reader):
    path = tmp_path / name
    path.write_text(content)
    line = one_line_error(capsys, "model", str(path), "--reader", reader)
    assert str(path) in line
    if "q" * 61 in content and "'q" in line:
        assert f"({HUGE:,} characters)" in line or "characters)" in line


def test_an_input_error_is_one_line_of_bounded_length_whatever_it_is_given():
    error = InputError("f.txt", "first\nsecond\r\nthird " + "x" * 5000)
    assert "\n" not in str(error) and "\r" not in str(error)
    assert len(error.problem) < 1100 and error.problem.endswith("(message cut)")


# -- §1 decompression bombs and endless streams --------------------------------------------------

def _tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return path


def _members(cube: Path) -> dict[str, bytes]:
    with tarfile.open(cube) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}  # type: ignore[union-attr]


def _blank_gzip(prefix: bytes, size: int) -> bytes:
    """gzip of ``prefix`` and ``size`` bytes of blanks, written piece by piece (never whole in memory)."""
    stream = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [stream.compress(prefix)]
    block = b" " * MIB
    for _ in range(size // MIB):
        out.append(stream.compress(block))
    return b"".join(out) + stream.flush()


def test_a_gzip_anchor_bomb_is_refused_in_bounded_memory(tmp_path):
    bomb = _blank_gzip(b"<?xml version='1.0'?><cube>", 64 * MIB)
    assert len(bomb) < 100_000
    path = _tar(tmp_path / "bomb.cubex", {"anchor.xml": bomb})
    error, peak = peak_mb(lambda: read_cube(path))
    assert isinstance(error, InputError)
    assert "anchor.xml inflates more than 100 times its compressed size: a decompression bomb" in str(error)
    assert peak < 40, f"{peak:.0f} MiB while refusing a 64 MiB anchor"


def test_anchor_limits_are_reader_options(tmp_path):
    anchor = _members(write_cube(tmp_path / "ok.cubex", ["main"], [TIME], {"time": np.ones((1, 2))},
                                 processes=2))["anchor.xml"]
    path = _tar(tmp_path / "gz.cubex", {**_members(tmp_path / "ok.cubex"), "anchor.xml": gzip.compress(anchor)})
    assert pmkit.read(path).metric_names == ["time"]  # a gzip-compressed anchor of a real size reads
    big = _tar(tmp_path / "big.cubex", {"anchor.xml": _blank_gzip(anchor, 3 * MIB)})
    with pytest.raises(InputError, match=r"inflates to more than 2 MiB \(the max_inflated_mb limit"):
        pmkit.read(big, max_inflated_mb=2)


def test_a_zcubex_data_bomb_inflates_no_further_than_its_index_announces(tmp_path):
    cube = write_cube(tmp_path / "ok.cubex", ["main", "main->solve"], [TIME], {"time": np.ones((2, 4))}, processes=4)
    zeros = zlib.compressobj(9)
    chunk = b"".join(zeros.compress(b"\0" * MIB) for _ in range(64)) + zeros.flush()
    header = struct.pack("<q", 8) + struct.pack("<24q", *[v for i in range(8) for v in (i << 26, 0, len(chunk))])
    members = _members(cube)
    members["0.data"] = b"ZCUBEX.DATA" + header + chunk * 8  # 8 chunks of 64 MiB zeros: 512 MiB
    path = _tar(tmp_path / "bomb.cubex", members)
    assert path.stat().st_size < 1 * MIB
    error, peak = peak_mb(lambda: read_cube(path))
    assert isinstance(error, InputError)
    assert "0.data inflates to more than the 64 bytes its index announces" in str(error)
    assert peak < 16, f"{peak:.0f} MiB while refusing 512 MiB of data"


def test_an_extrap_experiment_bomb_is_refused_in_bounded_memory(tmp_path):
    path = tmp_path / "bomb.extra-p"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("experiment.json", "w") as out:
        out.write(b'{"parameters": ["p"], "pad": "')
        for _ in range(64):
            out.write(b" " * MIB)
        out.write(b'"}')
    assert path.stat().st_size < 100_000
    error, peak = peak_mb(lambda: pmkit.read(path))
    assert isinstance(error, InputError) and "decompression bomb" in str(error)
    assert "[experiment.json]" in str(error)
    assert peak < 40, f"{peak:.0f} MiB while refusing a 64 MiB member"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
@pytest.mark.parametrize("reader", ["extrap-text", "extrap-json", "extrap-jsonl", "talpas", "cube",
                                    "extrap-experiment"])
def test_an_explicit_reader_on_an_endless_stream_stops_with_one_line(capsys, reader):
    line = one_line_error(capsys, "model", "/dev/zero", "--reader", reader)
    assert "/dev/zero" in line


def test_an_endless_stream_of_valid_lines_stops_at_the_input_limit(tmp_path, capsys):
    path = tmp_path / "comments.txt"
    path.write_text("# comment\n" * 300_000)  # 3 MB of lines that never end the file's prologue
    line = one_line_error(capsys, "model", str(path), "--reader", "extrap-text", "-R", "max_input_mb=1")
    assert "max_input_mb limit of 1 MiB" in line


def test_a_line_longer_than_the_limit_is_refused(tmp_path, monkeypatch):
    from pmkit.readers import limits, parsing

    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "long.jsonl"
    path.write_text("{" + " " * 5000 + "}\n")
    with pytest.raises(InputError, match="has a line longer than"):
        list(parsing.text_chunks(path, limits.Limits(), max_line=1000, size=256))


# -- §4 manifests name runs inside their folder -----------------------------------------------------

def _run(folder: Path, name: str) -> Path:
    return write_cube(folder / name / "profile.cubex", ["main"], [TIME], {"time": np.ones((1, 1))})


@pytest.mark.parametrize(("file", "problem"), [
    ("/etc/passwd", "is an absolute path; a manifest names its runs relative to its own folder"),
    ("../elsewhere/profile.cubex", "leads outside the manifest's folder"),
    ("runs/../../elsewhere/profile.cubex", "leads outside the manifest's folder"),
])
def test_a_manifest_names_only_runs_inside_its_folder(tmp_path, file, problem):
    study = tmp_path / "study"
    _run(tmp_path, "elsewhere")
    _run(study / "runs", "a")
    (study / "pmkit-manifest.csv").write_text(f"file,p\nruns/a/profile.cubex,1\n{file},2\n")
    with pytest.raises(InputError, match=problem) as caught:
        pmkit.read(study)
    assert caught.value.line == 3 and caught.value.path == str(study / "pmkit-manifest.csv")


def test_manifest_paths_inside_the_folder_and_links_in_it_are_followed(tmp_path):
    study = tmp_path / "study"
    _run(study / "runs", "a")
    target = _run(tmp_path, "scratch")
    (study / "linked").symlink_to(target.parent, target_is_directory=True)
    (study / "pmkit-manifest.toml").write_text('[[run]]\nfile = "runs/./a/profile.cubex"\np = 1\n'
                                               '[[run]]\nfile = "linked"\np = 2\n')
    assert pmkit.read(study).points[:, 0].tolist() == [1.0, 2.0]


# -- §4 Score-P filters from Perf-Taint names --------------------------------------------------------

def _analysis(*names: str) -> TaintAnalysis:
    functions = {n: TaintFunction(n, n, n, "parametric", groups={frozenset({"p"})}, own_groups={frozenset({"p"})})
                 for n in names}
    return TaintAnalysis(("p",), (), functions, ("taint.json",), frozenset({"raw"}))


def test_filter_names_with_line_breaks_or_control_characters_are_refused_by_name():
    injected = "f\nSCOREP_REGION_NAMES_END\nSCOREP_REGION_NAMES_BEGIN\n  INCLUDE *"
    with pytest.raises(InputError, match=r"taint.json \[functions\]: function name 'f\\nSCOREP_REGION_NAMES_END"):
        score_p_filter(_analysis("solve", injected))
    with pytest.raises(InputError, match="control character"):
        score_p_filter(_analysis("f\x1b[31m"))


def test_filter_wildcards_and_keywords_match_only_themselves():
    text = score_p_filter(_analysis("f*", "g?", "h[1]", "a b", "x#y", "INCLUDE", "EXCLUDE"))
    lines = text.splitlines()
    for token in (r"f\*", r"g\?", r"h\[1\]", r"a\ b", r"x\#y", r"\INCLUDE", r"\EXCLUDE"):
        assert f"  INCLUDE {token}" in lines
    assert lines.count("  EXCLUDE *") == 1 and lines[-1] == "SCOREP_REGION_NAMES_END"
    assert filter_token("main") == "main"


def test_taint_filter_command_refuses_an_injected_name(tmp_path, capsys):
    data = {"functions_mangled_names": ["main", "f\nSCOREP_REGION_NAMES_END"], "parameters": ["p"],
            "functions": {"f\nSCOREP_REGION_NAMES_END": {"loops": [{"callstack": [[0]], "deps": [["p"]]}]}}}
    path = tmp_path / "taint.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "scorep.filter"
    line = one_line_error(capsys, "taint-filter", str(path), "--out", str(out))
    assert "function name 'f\\nSCOREP_REGION_NAMES_END' holds a line break" in line
    assert not out.exists()


# -- §5 honest diagnoses ------------------------------------------------------------------------------

def test_an_unreadable_file_is_reported_as_such(tmp_path, capsys, monkeypatch):
    path = tmp_path / "exp.txt"
    path.write_text("PARAMETER p\nPOINTS 1 2\nREGION r\nDATA 1\nDATA 2\n")
    path.chmod(0)
    if os.geteuid() == 0:  # root reads anything: let the system say no as it would to a user
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p) == path else real(p, mode, **kw))
    try:
        line = one_line_error(capsys, "model", str(path))
    finally:
        path.chmod(0o600)
    assert line == f"error: {path}: permission denied (the file or a folder above it cannot be read)"


def test_a_symbolic_link_loop_is_reported_as_such(tmp_path, capsys):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    line = one_line_error(capsys, "model", str(tmp_path / "a"))
    assert "is a symbolic link loop" in line


def test_an_unreadable_run_folder_in_a_study_is_reported_as_skipped(tmp_path, monkeypatch, capsys):
    for p in (2, 4, 8):
        _run(tmp_path, f"app.p{p}.r1")
    (tmp_path / "app.p16.r1").mkdir()
    (tmp_path / "app.p32.r1").symlink_to(tmp_path / "app.p32.r1")
    from pmkit.readers import cube_study

    real = cube_study.os.scandir

    def scandir(path):
        if Path(path).name == "app.p16.r1":
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(cube_study.os, "scandir", scandir)
    experiment = pmkit.read(tmp_path)
    skipped = dict(experiment.provenance.skipped)
    assert skipped[str(tmp_path / "app.p16.r1")].startswith("permission denied")
    assert skipped[str(tmp_path / "app.p32.r1")].startswith("is a symbolic link loop")
    assert experiment.points[:, 0].tolist() == [2, 4, 8]
    assert main(["model", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert f"warning: skipped {tmp_path / 'app.p16.r1'}: permission denied" in err


def test_a_5000_digit_number_in_json_lines_is_named(tmp_path, capsys):
    path = tmp_path / "big.jsonl"
    path.write_text('{"params": {"p": 1}, "value": 1}\n{"params": {"p": 2}, "value": ' + "9" * 5000 + "}\n")
    line = one_line_error(capsys, "model", str(path))
    assert line == f"error: {path}, line 2: is not usable JSON: it holds a number of more than 4,300 digits"


@pytest.mark.parametrize(("content", "problem"), [
    ('{"functions_mangled_names": ["f"], "functions": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"functions_mangled_names": ["f"], "functions": {"f": {"loops": 5}}}', "'loops' must be a list, found a number"),
    ('{"functions_mangled_names": ["f"], "functions_demangled_names": ["f"], "functions_names": ["f"]}',
     "holds no analysis"),
    ('{"functions_mangled_names": ["f"], "functions": {"f": {"loops": [{"deps": 7}]}}}', "'deps' must be a list"),
    ('{"functions_mangled_names": ["f"], "functions": {}, "parameters": [' + "9" * 5000 + "]}", "4,300 digits"),
])
def test_malformed_perf_taint_files_are_one_line_errors(tmp_path, capsys, content, problem):
    path = tmp_path / "taint.json"
    path.write_text(content)
    with pytest.raises(InputError, match=problem):
        read_taint_file(path)
    line = one_line_error(capsys, "taint-filter", str(path))
    assert str(path) in line


INTERNALS = ("AssertionError", "NoneType", "unpack requires", "findall", "method gz", "Traceback", "KeyError")


def _cube_variants(tmp_path: Path) -> dict[str, Path]:
    """Damaged Cube files of the kinds that once leaked the decoder's internals into messages."""
    good = write_cube(tmp_path / "good" / "profile.cubex", ["main", "main->solve"], [TIME, VISITS],
                      {"time": np.ones((2, 2)), "visits": np.ones((2, 2))}, processes=2, compress=True)
    members = _members(good)
    anchor = members["anchor.xml"].decode()
    index = members["0.index"]
    (count,) = struct.unpack_from("<q", members["0.data"], 11)
    chunks = 11 + 8 + 24 * count
    variants = {
        "index header": {**members, "0.index": b"NOT.AN.INDEX" + index[12:]},
        "index count": {**members, "0.index": index[:18] + struct.pack("<i", 99) + index[22:]},
        "chunk table": {**members, "0.data": b"ZCUBEX.DATA" + struct.pack("<q", 4) + b"\0" * 10},
        "data header": {**members, "0.data": b"JUNK" + members["0.data"][4:]},
        "no program": {**members, "anchor.xml": (anchor.split("<program>")[0]
                                                 + anchor.split("</program>")[1]).encode()},
        "no system": {**members, "anchor.xml": anchor.split("<system>")[0].encode() + b"</cube>"},
        "bad xml": {**members, "anchor.xml": b"<?xml version='1.0'?><cube><metrics>"},
        "zlib": {**members, "0.data": members["0.data"][:chunks] + b"\xff" * (len(members["0.data"]) - chunks)},
    }
    out = {name: _tar(tmp_path / f"{name.replace(' ', '_')}.cubex", payload) for name, payload in variants.items()}
    out["not tar"] = tmp_path / "not_tar.cubex"
    out["not tar"].write_bytes(b"\x1f\x8b" + b"garbage" * 100)
    out["truncated"] = tmp_path / "truncated.cubex"
    out["truncated"].write_bytes(good.read_bytes()[:700])
    return out


def test_damaged_cube_files_are_described_in_words(tmp_path):
    for name, path in _cube_variants(tmp_path).items():
        with pytest.raises(InputError) as caught:
            read_cube(path)
        message = str(caught.value)
        assert "\n" not in message and len(message) < 600, (name, message)
        assert not any(word in message for word in INTERNALS), (name, message)
        assert str(path) in message, name


def test_cube_defects_are_no_python_warnings(tmp_path, recwarn):
    members = _members(write_cube(tmp_path / "ok.cubex", ["main"], [TIME], {"time": np.ones((1, 1))}))
    raw = bytearray(_tar(tmp_path / "bad.cubex", members).read_bytes())
    raw[148:156] = b"000000\0 "  # a wrong header checksum, as CubeWriter 4.8 wrote them
    (tmp_path / "bad.cubex").write_bytes(bytes(raw))
    experiment = read_cube(tmp_path / "bad.cubex")
    assert experiment.provenance.warnings and "checksums are wrong" in experiment.provenance.warnings[0]
    assert not recwarn.list


def test_a_huge_call_path_in_a_json_member_path_is_cut(tmp_path, capsys):
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"parameters": ["p"], "measurements": {"->" + "q" * HUGE: {"m": []}}}))
    line = one_line_error(capsys, "model", str(path))
    assert "[measurements/->qqq" in line and "characters)]" in line


def test_a_manifest_field_beyond_the_csv_limit_is_one_line(tmp_path, capsys):
    (tmp_path / "pmkit-manifest.csv").write_text('file,p\n"' + "q" * 200_000 + '",1\n')
    line = one_line_error(capsys, "model", str(tmp_path))
    assert "pmkit-manifest.csv: is not usable CSV after line 1: field larger than field limit" in line


def test_file_names_that_are_not_utf8_reach_every_output_as_backslash_escapes(tmp_path, capsys):
    """A name with a byte that is not UTF-8 (Python keeps it as a lone surrogate): ``pmkit show --json`` and
    ``pmkit model --format jsonl`` ended in an internal error (orjson refuses lone surrogates), and errors
    printed ``\\udcff``; every output now writes the byte ``\\xff``."""
    from pmkit.testing.example_study import generate

    text = tmp_path / os.fsdecode(b"bad\xffname.txt")
    text.write_text("PARAMETER p\nPOINTS 2 4 8 16 32\nREGION main\nMETRIC time\n"
                    + "".join(f"DATA {v}\n" for v in (1, 2, 3, 4, 5)))
    study = tmp_path / "study"
    generate(study, processes=(8, 27, 64, 125, 216), repetitions=1)
    bad_run = study / os.fsdecode(b"lulesh\xfe.p343.r1")
    bad_run.mkdir()
    (bad_run / "profile.cubex").write_bytes(b"garbage")
    for argv in (["show", str(text), "--json"], ["model", str(text), "--json"], ["show", str(study), "--json"]):
        assert main(argv) == 0, argv
        document = json.loads(capsys.readouterr().out)
        assert {entry["source"] for entry in document["models"]} <= {str(tmp_path / "bad\\xffname.txt"), str(study)}
    assert any("\\xfe" in s["source"] for s in document["skipped"]), document["skipped"]
    assert main(["model", str(text), "--format", "jsonl"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0])["sources"] == [str(tmp_path / "bad\\xffname.txt")]
    message = one_line_error(capsys, "show", os.fsdecode(b"nope\xff.txt"))
    assert message == "error: nope\\xff.txt: no such file or directory"
    bad_run.rename(study / os.fsdecode(b"lulesh.p343.r1\xfe"))  # a run name that does not parse: skipped, named
    assert main(["show", str(study), "--json"]) == 0
    captured = capsys.readouterr()
    (warning,) = captured.err.splitlines()
    assert "lulesh.p343.r1\\xfe/profile.cubex" in warning and "the name 'lulesh.p343.r1\\xfe'" in warning, warning
    (skipped,) = json.loads(captured.out)["skipped"]
    assert "\\udc" not in json.dumps(skipped) and "lulesh.p343.r1\\xfe" in skipped["problem"]
