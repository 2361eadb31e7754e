"""The OTF2 reader: against the otf2 package's own event loop, real Score-P traces, Cube files of the same
run, studies with bad runs, and the MPI semantics of the event table."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("otf2")

import pmkit
from pmkit.errors import InputError, UsageError
from pmkit.experiment import CALL_KINDS
from pmkit.readers.otf2_trace import Otf2Reader, location_chunks, read_traces
from pmkit.testing.cubewriter import BYTES_SENT, TIME, VISITS, write_cube
from pmkit.testing.otf2reference import reference_profile
from pmkit.testing.otf2writer import TraceWriter
from pmkit.testing.trace_programs import (
    RECV_CALLPATH,
    calibration_trace,
    late_sender_study,
    late_sender_trace,
)

KIND = {name: code for code, name in enumerate(CALL_KINDS)}


def _otf2(shared_data: Path) -> Path:
    folder = shared_data / "otf2"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


def _agrees_with_reference(exp: pmkit.Experiment, anchor: Path) -> int:
    """Every (location, call path) value of the reader equals the otf2 package's plain replay."""
    reference = reference_profile(anchor)
    compared = 0
    for (location, path), (visits, exclusive, _, sent, received) in reference.values.items():
        cp = exp.callpaths.index("->".join(path))
        assert exp.locations["visits"][0][cp, 0, location] == visits
        assert exp.locations["time"][0][cp, 0, location] == pytest.approx(exclusive / reference.timer_resolution,
                                                                          rel=1e-12, abs=1e-15)
        assert exp.locations["bytes_sent"][0][cp, 0, location] == sent
        assert exp.locations["bytes_received"][0][cp, 0, location] == received
        compared += 1
    assert len(exp.events) == len(reference.calls)
    return compared


# ---------------------------------------------------------------- real Score-P traces


@pytest.mark.parametrize("name", ["ping-pong-otf2", "ping-pong-otf2-papi"])
def test_real_ping_pong_equals_the_otf2_event_loop(shared_data, name):
    run = _otf2(shared_data) / name
    assert Otf2Reader().sniff(run) and Otf2Reader().sniff(run / "traces.otf2")
    exp = pmkit.read(run)
    assert exp.provenance.reader == "otf2"
    assert "int main(int, char**)->MPI_Send" in exp.callpaths
    assert exp.callpaths["int main(int, char**)"].mangled_name == "main"
    assert _agrees_with_reference(exp, run / "traces.otf2") == 14
    events = exp.events
    sends = events["kind"] == KIND["send"]
    assert sends.sum() == 16 and (events["kind"] == KIND["receive"]).sum() == 16
    # every send is matched to the receive with the same size, and the receive ends after the send starts
    assert (events["match"][sends] >= 0).all()
    partner = events["match"][sends]
    np.testing.assert_array_equal(events["bytes"][sends], events["bytes"][partner])
    assert (events["end"][partner] > events["start"][sends]).all()
    assert sorted(set(events["bytes"][sends])) == [2.0 ** k for k in range(14, 22)]
    send = events.regions.index("MPI_Send")
    assert (events.region_roles[send], events.region_paradigms[send]) == ("POINT2POINT", "MPI")
    assert events.region_roles[events.regions.index("MPI_Allreduce")] == "COLL_ALL2ALL"


def test_real_papi_counters_become_metrics(shared_data):
    exp = pmkit.read(_otf2(shared_data) / "ping-pong-otf2-papi")
    assert {"PAPI_TOT_CYC", "PAPI_L2_TCM", "PAPI_BR_MSP"} <= set(exp.metric_names)
    cycles = exp.locations["PAPI_TOT_CYC"][0][:, 0, :]
    assert (cycles >= 0).all() and cycles.sum() > 1e7
    inclusive = read_traces(_otf2(shared_data) / "ping-pong-otf2-papi", values="inclusive")
    main = inclusive.callpaths.index("int main(int, char**)")
    np.testing.assert_allclose(inclusive.locations["PAPI_TOT_CYC"][0][main, 0], cycles.sum(axis=0))


def test_real_traces_model_and_show(shared_data, capsys):
    from pmkit.cli import main

    run = str(_otf2(shared_data) / "ping-pong-otf2")
    assert main(["model", run, "--metric", "time"]) == 0
    assert "MPI_Send" in capsys.readouterr().out
    assert main(["show", run, "--min-share", "0"]) == 0
    assert "MPI_Recv" in capsys.readouterr().out


# ---------------------------------------------------------------- generated traces


def _nonblocking_trace(folder: Path) -> Path:
    """Two ranks: a blocking pair, an Irecv/Isend pair completed by Wait/Waitall, an Allreduce, a Bcast."""
    with TraceWriter(folder, ranks=2) as trace:
        r0, r1 = trace.rank(0), trace.rank(1)
        for r in (r0, r1):
            r.enter(0.0, "main")
        r0.send(1e-6, 2e-6, dest=1, nbytes=100, tag=5)
        r0.send(2e-6, 3e-6, dest=1, nbytes=200, tag=5)
        r1.recv(1e-6, 4e-6, source=0, nbytes=100, tag=5)
        r1.recv(4e-6, 5e-6, source=0, nbytes=200, tag=5)
        request = r0.irecv(6e-6, 6.5e-6, source=1, nbytes=64, tag=9)
        send = r1.isend(7e-6, 7.5e-6, dest=0, nbytes=64, tag=9)
        r0.wait(8e-6, 9e-6, request)
        r1.wait(8e-6, 8.5e-6, [send])
        r0.collective(10e-6, 12e-6, "MPI_Allreduce", nbytes=8)
        r1.collective(11e-6, 12e-6, "MPI_Allreduce", nbytes=8)
        r0.collective(13e-6, 14e-6, "MPI_Bcast", nbytes=1000, root=1)
        r1.collective(13e-6, 14e-6, "MPI_Bcast", nbytes=1000, root=1)
        for r in (r0, r1):
            r.leave(20e-6, "main")
    return folder


def test_generated_trace_equals_the_otf2_event_loop(tmp_path):
    run = _nonblocking_trace(tmp_path / "run")
    exp = pmkit.read(run)
    assert _agrees_with_reference(exp, run / "traces.otf2") == 12


MAIN = "int main(int, char**)"
COUNTERS = {"PAPI_TOT_CYC": 3, "PAPI_L2_TCM": 1, "PAPI_BR_MSP": 2}
"""Counts per timer tick (nanosecond) of the twin's three PAPI counters."""


def _ping_pong(folder: Path, counters: bool) -> Path:
    """The twin of the real ``ping-pong-otf2[-papi]`` traces: 2 ranks send 2^14 … 2^21 bytes back and forth,
    main shown as ``int main(int, char**)``, MPI regions defined that never run; with ``counters``, three
    PAPI counters."""
    with TraceWriter(folder, ranks=2, display_names={"main": MAIN}, counters=COUNTERS if counters else None) as trace:
        for unused in ("MPI_Allreduce", "MPI_Bcast", "MPI_Isend"):
            trace.region(unused)
        ranks = trace.rank(0), trace.rank(1)
        for r in ranks:
            r.enter(0.0, "main")
            for k, name in enumerate(("MPI_Init", "MPI_Comm_size", "MPI_Comm_rank")):
                r.region(1e-6 * (k + 1), 1e-6 * (k + 1) + 5e-7, name)
        t = 1e-5
        for k in range(14, 22):
            for sender, receiver in ((0, 1), (1, 0)):
                ranks[sender].send(t, t + 2e-6, dest=receiver, nbytes=2 ** k)
                ranks[receiver].recv(t, t + 3e-6, source=sender, nbytes=2 ** k)
                t += 1e-5
        for r in ranks:
            r.region(t, t + 1e-6, "MPI_Finalize")
            r.leave(t + 2e-6, "main")
    return folder


def test_ping_pong_twin_equals_the_otf2_event_loop(tmp_path):
    run = _ping_pong(tmp_path / "ping-pong-otf2", counters=False)
    assert Otf2Reader().sniff(run) and Otf2Reader().sniff(run / "traces.otf2")
    exp = pmkit.read(run)
    assert exp.provenance.reader == "otf2"
    assert f"{MAIN}->MPI_Send" in exp.callpaths and exp.callpaths[MAIN].mangled_name == "main"
    assert _agrees_with_reference(exp, run / "traces.otf2") == 14
    events = exp.events
    sends = np.nonzero(events["kind"] == KIND["send"])[0]
    receives = events["match"][sends]
    # the schedule written: 2^k bytes from 0 to 1 and back, matched send by send, received after sent
    schedule = [(sender, 1 - sender, 2.0 ** k) for k in range(14, 22) for sender in (0, 1)]
    got = sorted(zip(events["rank"][sends].tolist(), events["rank"][receives].tolist(), events["bytes"][receives],
                     strict=True), key=lambda row: (row[2], row[0]))
    assert got == schedule
    assert (events["kind"][receives] == KIND["receive"]).all()
    assert (events["end"][receives] > events["start"][sends]).all()
    roles = dict(zip(events.regions, zip(events.region_roles, events.region_paradigms, strict=True), strict=True))
    assert roles["MPI_Send"] == ("POINT2POINT", "MPI") and roles["MPI_Allreduce"][0] == "COLL_ALL2ALL"


def test_ping_pong_twin_counters_become_metrics(tmp_path):
    exp = pmkit.read(_ping_pong(tmp_path / "ping-pong-otf2-papi", counters=True))
    assert set(COUNTERS) <= set(exp.metric_names) and exp.metric("PAPI_TOT_CYC").unit == "#"
    ticks = exp.locations["time"][0][:, 0, :] * 1e9  # exclusive time in timer ticks
    for counter, rate in COUNTERS.items():
        np.testing.assert_allclose(exp.locations[counter][0][:, 0, :], rate * ticks, rtol=1e-9, err_msg=counter)
    inclusive = read_traces(tmp_path / "ping-pong-otf2-papi", values="inclusive")
    main = inclusive.callpaths.index(MAIN)
    cycles = exp.locations["PAPI_TOT_CYC"][0][:, 0, :]
    np.testing.assert_allclose(inclusive.locations["PAPI_TOT_CYC"][0][main, 0], cycles.sum(axis=0))


def test_counters_that_are_not_accumulated_are_named_and_left_out(tmp_path):
    with TraceWriter(tmp_path / "run", ranks=1, counters={"PAPI_TOT_CYC": 2}, other_metrics=("power",)) as trace:
        trace.rank(0).region(0.0, 1e-3, "main")
    exp = pmkit.read(tmp_path / "run")
    assert "PAPI_TOT_CYC" in exp.metric_names and "power" not in exp.metric_names
    assert exp.values("PAPI_TOT_CYC")[0, 0] == 2 * 1e6
    assert any("metrics power are not accumulated integer counters" in note for note in exp.provenance.notes)


def test_ping_pong_twin_models_and_shows(tmp_path, pmkit_cli):
    run = _ping_pong(tmp_path / "ping-pong-otf2", counters=False)
    result = pmkit_cli("model", run, "--metric", "time")
    assert result.returncode == 0, result.stderr
    assert "MPI_Send" in result.stdout
    shown = pmkit_cli("show", run, "--min-share", "0")
    assert shown.returncode == 0, shown.stderr
    assert "MPI_Recv" in shown.stdout


def test_event_table_kinds_bytes_matching_and_instances(tmp_path):
    events = pmkit.read(_nonblocking_trace(tmp_path / "run")).events
    names = list(events.region_names())
    row = {(int(events["rank"][i]), names[i], round(float(events["start"][i]) * 1e6, 1)): i for i in range(len(events))}
    s1, s2 = row[(0, "MPI_Send", 1.0)], row[(0, "MPI_Send", 2.0)]
    r1, r2 = row[(1, "MPI_Recv", 1.0)], row[(1, "MPI_Recv", 4.0)]
    # FIFO on one channel: the first send goes to the first receive
    assert (events["match"][s1], events["match"][s2]) == (r1, r2)
    assert (events["match"][r1], events["match"][r2]) == (s1, s2)
    assert events["bytes"][r2] == 200 and events["bytes_received"][r2] == 200 and events["tag"][r2] == 5
    assert events["peer"][r1] == 0 and events["peer"][s1] == 1
    # Score-P records MpiRecv at the receive's end
    messages = events.messages
    first = int(np.nonzero(messages["send_row"] == s1)[0][0])
    assert messages["recv_time"][first] == pytest.approx(4e-6) and messages["send_time"][first] == pytest.approx(1e-6)
    # non-blocking: the Irecv is matched to the Isend and completed by the Wait that received the message
    irecv, wait = row[(0, "MPI_Irecv", 6.0)], row[(0, "MPI_Wait", 8.0)]
    isend, waitall = row[(1, "MPI_Isend", 7.0)], row[(1, "MPI_Waitall", 8.0)]
    assert events["kind"][irecv] == KIND["post"] and events["kind"][wait] == KIND["completion"]
    assert events["completion"][irecv] == wait and events["completion"][isend] == waitall
    assert events["match"][irecv] == isend and events["match"][wait] == isend and events["match"][isend] == wait
    assert events["bytes"][irecv] == 64 and events["bytes"][wait] == 64 and events["bytes"][waitall] == 64
    assert events["bytes_received"][wait] == 64 and events["bytes_received"][irecv] == 0
    # collectives: Score-P's sizes, the message size b, one instance per operation, the root's rank
    a0, a1 = row[(0, "MPI_Allreduce", 10.0)], row[(1, "MPI_Allreduce", 11.0)]
    assert events["kind"][a0] == KIND["n_to_n"] and events["comm_size"][a0] == 2
    assert events["bytes_sent"][a0] == 16 and events["bytes_received"][a0] == 16 and events["bytes"][a0] == 8
    assert events["instance"][a0] == events["instance"][a1] >= 0
    b0, b1 = row[(0, "MPI_Bcast", 13.0)], row[(1, "MPI_Bcast", 13.0)]
    assert events["kind"][b0] == KIND["one_to_n"] and events["root"][b0] == 1 == events["root"][b1]
    assert (events["bytes_sent"][b1], events["bytes_received"][b1]) == (2000, 1000)
    assert (events["bytes_sent"][b0], events["bytes_received"][b0]) == (0, 1000)
    assert events["bytes"][b0] == events["bytes"][b1] == 1000
    assert events["instance"][b0] == events["instance"][b1] != events["instance"][a0]


def test_many_open_requests_and_a_cancelled_one(tmp_path):
    """More open requests than the request map starts with (it grows), completed out of order."""
    with TraceWriter(tmp_path / "run", ranks=2) as trace:
        r0, r1 = trace.rank(0), trace.rank(1)
        r0.enter(0.0, "main")
        r1.enter(0.0, "main")
        t = 1e-6
        receives = [r0.irecv(t + i * 1e-7, t + i * 1e-7 + 5e-8, source=1, nbytes=8 + i, tag=i) for i in range(150)]
        cancelled = r0.irecv(2e-5, 2.1e-5, source=1, nbytes=1, tag=999)
        sends = [r1.isend(t + i * 1e-7, t + i * 1e-7 + 5e-8, dest=0, nbytes=8 + i, tag=i) for i in range(150)]
        r0.cancelled(3e-5, 3.1e-5, cancelled)
        r0.wait(4e-5, 5e-5, list(reversed(receives)))
        r1.wait(4e-5, 4.5e-5, sends)
        r0.leave(1e-4, "main")
        r1.leave(1e-4, "main")
    events = pmkit.read(tmp_path / "run").events
    names = events.region_names()
    irecv = np.nonzero(names == "MPI_Irecv")[0]
    isend = np.nonzero(names == "MPI_Isend")[0]
    waitall = np.nonzero((names == "MPI_Waitall") & (events["rank"] == 0))[0][0]
    assert len(irecv) == 151 and len(isend) == 150
    matched = irecv[:150]
    assert (events["completion"][matched] == waitall).all()
    assert (events["match"][matched] == isend).all()  # FIFO per tag: the i-th Irecv gets the i-th Isend
    np.testing.assert_array_equal(events["bytes"][matched], 8 + np.arange(150))
    assert events["completion"][irecv[150]] == -1 and events["match"][irecv[150]] == -1
    assert events["bytes_received"][waitall] == sum(8 + i for i in range(150))


def test_study_of_runs_with_repetitions(tmp_path):
    late_sender_study(tmp_path, processes=(2, 4), repetitions=2, iterations=20)
    exp = pmkit.read(tmp_path)
    assert exp.parameters == ("p",)
    assert exp.points[:, 0].tolist() == [2.0, 4.0]
    assert exp.measurements["time"].shape[1:] == (2, 2)
    recv = exp.callpaths.index(RECV_CALLPATH)
    assert np.isfinite(exp.measurements["time"][recv]).all()
    assert exp.locations["time"][1].shape[2] == 4  # 4 locations at p=4
    assert exp.measurements["visits"][recv, 0, 0] == 20
    events = exp.events
    assert sorted(set(events["run"])) == [0, 1, 2, 3]
    assert [run["coordinates"]["p"] for run in events.runs] == [2.0, 2.0, 4.0, 4.0]
    assert (events["comm_size"][events["kind"] == KIND["send"]] == np.repeat([2, 2, 4, 4], [40, 40, 80, 80])).all()
    assert (events["match"][events["kind"] == KIND["receive"]] >= 0).all()


def test_bad_runs_of_a_study_are_skipped_and_reported(tmp_path):
    late_sender_study(tmp_path, processes=(2,), repetitions=4, iterations=10)
    shutil.rmtree(tmp_path / "app.p2.r2" / "traces")  # missing traces/ folder
    event_file = tmp_path / "app.p2.r3" / "traces" / "1.evt"
    event_file.write_bytes(event_file.read_bytes()[:-37])  # truncated event file
    (tmp_path / "app.p2.r4" / "traces.def").write_bytes(b"")  # anchor with no definitions
    exp = pmkit.read(tmp_path)
    assert exp.measurements["time"].shape[2] == 1
    skipped = dict(exp.provenance.skipped)
    assert len(skipped) == 3
    for run in ("r2", "r3", "r4"):
        assert f"app.p2.{run}" in next(reason for file, reason in skipped.items() if f"app.p2.{run}" in file)
    assert all("\n" not in reason for reason in skipped.values())
    assert "traces" in skipped[str(tmp_path / "app.p2.r2" / "traces.otf2")]
    assert "1.evt" in skipped[str(tmp_path / "app.p2.r3" / "traces.otf2")]
    assert "traces.def" in skipped[str(tmp_path / "app.p2.r4" / "traces.otf2")]


@pytest.mark.parametrize("damage", ["no-traces-folder", "truncated", "empty-definitions", "no-definitions"])
def test_one_bad_trace_is_one_line_naming_the_file(tmp_path, damage, capsys):
    from pmkit.cli import main

    run = tmp_path / "app.p2.r1"
    late_sender_trace(run, ranks=2, iterations=10)
    expected = {"no-traces-folder": "traces", "truncated": "0.evt", "empty-definitions": "traces.def",
                "no-definitions": "traces.def"}[damage]
    if damage == "no-traces-folder":
        shutil.rmtree(run / "traces")
    elif damage == "truncated":
        (run / "traces" / "0.evt").write_bytes((run / "traces" / "0.evt").read_bytes()[:100])
    elif damage == "empty-definitions":
        (run / "traces.def").write_bytes(b"")
    else:
        (run / "traces.def").unlink()
    with pytest.raises(InputError) as caught:
        pmkit.read(run)
    assert expected in str(caught.value) and "\n" not in str(caught.value)
    assert main(["model", str(run)]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and expected in err and "Traceback" not in err


def test_an_event_count_other_than_the_definitions_promise_is_an_error(tmp_path):
    """OTF2 does not always notice a truncated file; the event count of the definitions does."""
    from dataclasses import replace

    from pmkit.readers.otf2_definitions import read_definitions
    from pmkit.readers.otf2_events import read_locations

    run = tmp_path / "run"
    late_sender_trace(run, ranks=2, iterations=5)
    definitions = read_definitions(run / "traces.otf2")
    assert all(loc.events > 0 for loc in definitions.locations)
    assert [t.events for t in read_locations(definitions, [0, 1])] == [loc.events for loc in definitions.locations]
    definitions.locations[1] = replace(definitions.locations[1], events=definitions.locations[1].events + 7)
    with pytest.raises(InputError, match=r"1\.evt: is truncated or corrupt: it holds \d+ events, the definitions"):
        read_locations(definitions, [0, 1])


def test_sniff_recognises_traces_only(tmp_path):
    reader = Otf2Reader()
    late_sender_study(tmp_path / "study", processes=(2,), repetitions=1, iterations=2)
    run = tmp_path / "study" / "app.p2.r1"
    assert reader.sniff(run / "traces.otf2") and reader.sniff(run) and reader.sniff(tmp_path / "study")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x.txt").write_text("PARAMETER p\n")
    assert not reader.sniff(tmp_path / "other") and not reader.sniff(tmp_path / "other" / "x.txt")
    assert not reader.sniff(tmp_path / "nope")


def test_missing_otf2_package_names_what_to_install(tmp_path, monkeypatch):
    import sys

    run = tmp_path / "run"
    late_sender_trace(run, ranks=2, iterations=2)
    monkeypatch.setitem(sys.modules, "otf2", None)
    with pytest.raises(UsageError, match=r"pip install 'pmkit-hpc\[otf2\]'"):
        read_traces(run)


def test_threads_and_small_chunks_read_the_same(tmp_path, monkeypatch):
    from pmkit.readers import otf2_events

    run = tmp_path / "run"
    late_sender_trace(run, ranks=8, iterations=30, allreduce_every=5)
    serial, threaded = read_traces(run, jobs=1), read_traces(run, jobs=3)
    monkeypatch.setattr(otf2_events, "CHUNK", 7)  # many chunks per location, resumed replays
    chunked = read_traces(run, jobs=1)
    for other in (threaded, chunked):
        for name in serial.metric_names:
            np.testing.assert_array_equal(serial.measurements[name], other.measurements[name])
        for column in serial.events.columns:
            np.testing.assert_array_equal(serial.events[column], other.events[column])


def test_location_chunks_balance_events():
    from types import SimpleNamespace

    locations = [SimpleNamespace(ref=r, events=e) for r, e in enumerate([100, 10, 10, 80, 5])]
    chunks = location_chunks(locations, 2)
    assert sorted(r for c in chunks for r in c) == [0, 1, 2, 3, 4]
    loads = sorted(sum(locations[r].events for r in c) for c in chunks)
    assert loads == [100, 105]
    assert location_chunks(locations, 9) == [[0], [3], [1], [2], [4]]


def test_trace_and_cube_of_the_same_run_agree(tmp_path):
    """A simulated run written both ways: the profile from the trace equals the Cube profile."""
    rng = np.random.default_rng(5)
    ranks, callpaths = 3, ["main", "main->solve", "main->solve->MPI_Allreduce", "main->io"]
    exclusive = {cp: rng.uniform(1e-4, 1e-3, ranks) for cp in callpaths}
    visits = {"main": 1, "main->solve": 4, "main->solve->MPI_Allreduce": 4, "main->io": 2}
    with TraceWriter(tmp_path / "trace.p3.r1", ranks=ranks) as trace:
        for r in range(ranks):
            w, t = trace.rank(r), 0.0
            w.enter(t, "main")
            t += exclusive["main"][r] / 2
            for _ in range(visits["main->solve"]):
                w.enter(t, "solve")
                t += exclusive["main->solve"][r] / 4
                allreduce = exclusive["main->solve->MPI_Allreduce"][r] / 4
                w.collective(t, t + allreduce, "MPI_Allreduce", nbytes=8)
                t += allreduce
                w.leave(t, "solve")
            for _ in range(visits["main->io"]):
                w.region(t, t + exclusive["main->io"][r] / 2, "io")
                t += exclusive["main->io"][r] / 2
            w.leave(t + exclusive["main"][r] / 2, "main")
    values = {"time": np.array([exclusive[cp] for cp in callpaths]),
              "visits": np.array([[visits[cp]] * ranks for cp in callpaths], dtype=float),
              "bytes_sent": np.array([[0.0] * ranks, [0.0] * ranks, [4 * 3 * 8.0] * ranks, [0.0] * ranks])}
    write_cube(tmp_path / "cube.p3.r1" / "profile.cubex", callpaths, [TIME, VISITS, BYTES_SENT], values,
               processes=ranks)
    from_trace = pmkit.read(tmp_path / "trace.p3.r1")
    from_cube = pmkit.read(tmp_path / "cube.p3.r1" / "profile.cubex")
    for cp in callpaths:
        t, c = from_trace.callpaths.index(cp), from_cube.callpaths.index(cp)
        for metric in ("time", "visits", "bytes_sent"):
            np.testing.assert_allclose(from_trace.locations[metric][0][t, 0], from_cube.locations[metric][0][c, 0],
                                       rtol=1e-6, atol=1e-9, err_msg=f"{cp} {metric}")
            assert from_trace.measurements[metric][t, 0, 0] == pytest.approx(from_cube.measurements[metric][c, 0, 0],
                                                                             rel=1e-6, abs=1e-9)


def test_calibration_trace_reads(tmp_path):
    run = calibration_trace(tmp_path / "calibration", sizes=(8, 1024), repetitions=20)
    exp = pmkit.read(run)
    assert "main->calib_pingpong->MPI_Send" in exp.callpaths
    events = exp.events
    assert (events["kind"] == KIND["n_to_n"]).sum() == 2 * 2 * 20
    assert set(events["bytes"][events["kind"] == KIND["send"]]) == {8.0, 1024.0}
