"""The kluge detector and the per-call overhead table: injected late senders, Scalasca's wait states,
self-calibration, and the findings in `pmkit show`."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("otf2")

import pmkit
from pmkit.calibration.reference import calibrate
from pmkit.calibration.samples import trace_samples
from pmkit.errors import InputError
from pmkit.overhead import PATTERNS, call_overheads
from pmkit.testing.otf2writer import TraceWriter
from pmkit.testing.trace_programs import RECV_CALLPATH, calibration_trace, late_sender_trace


@pytest.fixture(scope="module")
def reference_file(tmp_path_factory):
    folder = tmp_path_factory.mktemp("calibration")
    trace = calibration_trace(folder / "calib.p4.r1", ranks=4, sizes=(8, 1024), repetitions=200)
    reference = calibrate(trace_samples(pmkit.read(trace).events, callpath_prefix="calib_"), window=1e-7)
    reference.save(folder / "ref.json")
    return folder / "ref.json"


@pytest.fixture(scope="module")
def late_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("app") / "app.p4.r1"
    injected = late_sender_trace(folder, ranks=4, iterations=200, delay=5e-4, allreduce_every=40)
    return folder, injected


def test_injected_late_sender_is_ranked_first_with_its_iterations(late_run, reference_file):
    folder, injected = late_run
    experiment = pmkit.read(folder)
    findings = pmkit.detect(experiment, pmkit.model(experiment, metrics=["time"]), ["kluge"],
                            reference=str(reference_file))
    first = findings[0]
    assert first.detector == "kluge" and first.callpath == RECV_CALLPATH
    assert first.title == "late sender overhead"
    evidence = first.evidence
    assert evidence["self_calibrated"] is False and evidence["reference"] == str(reference_file)
    assert evidence["patterns"]["late sender"] > 0.9 * evidence["overhead"]
    assert evidence["overhead"] == pytest.approx(len(injected.waits) * injected.delay, rel=0.05)
    waits = set(injected.waits)
    for instance in evidence["largest"]:
        assert (instance["rank"], instance["call_number"] - 1) in waits  # call k of the loop = iteration k-1
        assert instance["overhead"] == pytest.approx(instance["duration"] - instance["t_max"])
        assert instance["pattern"] == "late sender" and instance["waiting"] > 0.9 * injected.delay
    assert set(map(int, list(evidence["overhead_by_rank"])[:3])) == {1, 2, 3}  # the wave of the late rank 0
    assert 0 < evidence["share_of_communication"] <= 1
    assert evidence["calls_with_overhead"] >= len(injected.waits)
    assert first.location.startswith("ranks ")


def test_overhead_table_holds_t_max_and_overhead_of_every_call(late_run, reference_file):
    folder, injected = late_run
    from pmkit.calibration.reference import Reference

    events = pmkit.read(folder).events
    table = call_overheads(events, Reference.load(reference_file))
    assert len(table) == (events["kind"] > 0).sum()
    np.testing.assert_allclose(table["overhead"], np.maximum(table["duration"] - table["t_max"], 0.0))
    assert np.isfinite(table["t_max"]).all()
    truth = {(rank, round(start, 9)) for rank, start in injected.recv_starts}
    flagged = {(int(r), round(float(s), 9)) for r, s, o in zip(table["rank"], table["start"], table["overhead"],
                                                                strict=True) if o > 1e-4}
    assert flagged == truth  # every injected wait, nothing else above 0.1 ms
    names = set(table.pattern_names())
    assert {"late_sender", "wait_nxn"} <= names  # the Allreduce checks wait for the last arrival too


def test_self_calibration_says_so(late_run):
    folder, _ = late_run
    experiment = pmkit.read(folder)
    findings = pmkit.detect(experiment, pmkit.model(experiment, metrics=["time"]), ["kluge"])
    assert findings[0].callpath == RECV_CALLPATH
    assert findings[0].evidence["self_calibrated"] is True
    assert any("self-calibrated" in note for note in findings[0].evidence["notes"])


def _two_ranks(folder, script):
    with TraceWriter(folder, ranks=2) as trace:
        r0, r1 = trace.rank(0), trace.rank(1)
        r0.enter(0.0, "main")
        r1.enter(0.0, "main")
        script(r0, r1)
        r0.leave(1.0, "main")
        r1.leave(1.0, "main")
    return pmkit.read(folder).events


def test_wait_states_as_scalasca_names_them(tmp_path):
    def script(r0, r1):
        r1.recv(0.01, 0.05, source=0, nbytes=8)  # late sender: the send starts at 0.04
        r0.send(0.04, 0.0401, dest=1, nbytes=8)
        r0.send(0.10, 0.15, dest=1, nbytes=10**6)  # late receiver: the receive starts at 0.149
        r1.recv(0.149, 0.16, source=0, nbytes=10**6)
        r0.collective(0.20, 0.30, "MPI_Allreduce", nbytes=8)  # wait at N×N: rank 1 arrives at 0.29
        r1.collective(0.29, 0.30, "MPI_Allreduce", nbytes=8)
        r0.collective(0.40, 0.41, "MPI_Bcast", nbytes=8, root=1)  # late broadcast: the root comes at 0.405
        r1.collective(0.405, 0.41, "MPI_Bcast", nbytes=8, root=1)
        r0.collective(0.50, 0.60, "MPI_Reduce", nbytes=8, root=0)  # early reduce: the root waits until 0.58
        r1.collective(0.58, 0.60, "MPI_Reduce", nbytes=8, root=0)
        r1.send(0.70, 0.75, dest=0, nbytes=10, tag=7)  # late receiver by progress: rank 0 comes into MPI at
        r0.send(0.7498, 0.7499, dest=1, nbytes=10, tag=8)  # 0.7498 (its own send), receives only after 0.75
        r0.recv(0.7501, 0.76, source=1, nbytes=10, tag=7)
        r1.recv(0.76, 0.77, source=0, nbytes=10, tag=8)
        r0.recv(0.80, 0.86, source=1, nbytes=10, tag=9)  # rank 0 already waits in MPI: no late receiver
        r1.send(0.85, 0.86, dest=0, nbytes=10, tag=9)

    events = _two_ranks(tmp_path / "run", script)
    table = call_overheads(events)
    got = {(int(r), round(float(s), 3)): (p, round(float(w), 4)) for r, s, p, w in
           zip(table["rank"], table["start"], table.pattern_names(), table["waiting"], strict=True)}
    assert got[(1, 0.01)] == ("late_sender", 0.03)
    assert got[(0, 0.1)] == ("late_receiver", 0.049)
    assert got[(0, 0.2)] == ("wait_nxn", 0.09)
    assert got[(1, 0.29)] == ("none", 0.0)
    assert got[(0, 0.4)] == ("late_broadcast", 0.005)
    assert got[(0, 0.5)] == ("early_reduce", 0.08)
    assert got[(1, 0.7)] == ("late_receiver", 0.0498)
    assert got[(0, 0.8)] == ("late_sender", 0.05) and got[(1, 0.85)] == ("none", 0.0)
    assert set(table.pattern_names()) <= set(PATTERNS)


def test_inputs_without_events_give_no_findings_and_bad_references_one_line(late_run, tmp_path):
    experiment = pmkit.read(late_run[0])
    models = pmkit.model(experiment, metrics=["time"])
    experiment.events = None
    assert pmkit.detect(experiment, models, ["kluge"]) == []
    experiment = pmkit.read(late_run[0])
    (tmp_path / "bad.json").write_text("[]")
    with pytest.raises(InputError, match=r"bad\.json"):
        pmkit.detect(experiment, models, ["kluge"], reference=str(tmp_path / "bad.json"))


def test_show_carries_the_findings_with_their_evidence(late_run, reference_file, capsys, tmp_path):
    from pmkit.cli import main

    folder, _ = late_run
    assert main(["show", str(folder), "--detector", "kluge"]) == 0
    out = capsys.readouterr().out
    assert "late sender overhead" in out and "kluge" in out
    assert main(["show", str(folder), "--json", "-D", f"kluge.reference={reference_file}"]) == 0
    document = json.loads(capsys.readouterr().out)
    finding = next(f for f in document["findings"] if f["detector"] == "kluge")
    assert finding["callpath"] == RECV_CALLPATH and finding["title"] == "late sender overhead"
    assert finding["evidence"]["reference"] == str(reference_file)
    assert finding["evidence"]["largest"][0]["rank"] in (1, 2, 3)
    assert main(["show", str(folder), "--detector", "kluge", "-D", "q_max=0.9", "-D", "instances=2", "--json"]) == 0
    evidence = json.loads(capsys.readouterr().out)["findings"][0]["evidence"]
    assert evidence["self_calibrated"] and len(evidence["largest"]) == 2
    assert main(["show", str(folder), "-D", f"kluge.reference={tmp_path / 'none.json'}"]) == 1
    err = capsys.readouterr().err
    assert "none.json" in err and len(err.strip().splitlines()) == 1


def test_the_demo_generator_without_otf2_says_what_to_install(tmp_path, monkeypatch, capsys):
    """``python -m pmkit.testing.trace_programs demo`` after a plain ``pip install pmkit-hpc``: one line, no
    traceback, nothing written."""
    import sys

    from pmkit.testing import trace_programs

    monkeypatch.setitem(sys.modules, "otf2", None)  # import otf2 raises ImportError
    assert trace_programs.main([str(tmp_path / "demo")]) == 1
    assert capsys.readouterr().err == ("error: writing OTF2 traces needs the otf2 package: pip install "
                                       "'pmkit-hpc[otf2]' (or pip install otf2)\n")
    assert not (tmp_path / "demo").exists()
