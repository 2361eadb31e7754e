"""The perf stat reader: every captured sample with values checked by hand, hardware-counter lines
written from the documented format, studies, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit.errors import InputError
from pmkit.readers.perf_stat import PerfStatReader
from pmkit.readers.perf_stat_format import parse_perf_stat
from pmkit.testing.perfwriter import NOT_COUNTED, NOT_SUPPORTED, PerfLine, counters, write_perf_stat

NAN = math.nan
SW = ("task-clock", "context-switches", "cpu-migrations", "page-faults")

# Values read off each captured file by hand: run value per event, and per location where there are locations.
SAMPLES: dict[str, dict[str, object]] = {
    "01_csv_hw_true.out": {"instructions": NAN, "cycles": NAN},
    "02_csv_default.out": {"task-clock": 628.87, "context-switches": 37, "cpu-migrations": 0, "page-faults": 62,
                           "cycles": NAN, "instructions": NAN, "branches": NAN, "branch-misses": NAN},
    "03_csv_sw.out": dict(zip(SW, (607.33, 38, 0, 66), strict=True)),
    "04_csv_repeat5.out": dict(zip(SW, (693.28, 25, 0, 62), strict=True)),
    "05_csv_interval200.out": dict(zip(SW, (199.66 + 200.60 + 201.29 + 30.58, 7 + 2 + 3 + 1, 0, 63), strict=True)),
    "06_csv_percpu_A.out": {"task-clock": [204.59, 204.62], "context-switches": [23, 11], "cpu-migrations": [2, 1],
                            "page-faults": [79, 2]},
    "07_csv_percore.out": {"task-clock": [206.02, 205.88], "context-switches": [17, 15], "cpu-migrations": [1, 2],
                           "page-faults": [77, 2]},
    "08_csv_persocket.out": {"task-clock": [407.58], "context-switches": [49], "cpu-migrations": [8],
                             "page-faults": [82]},
    "09_csv_interval_percpu.out": {"task-clock": [103.98 + 101.48 + 50.44, 104.58 + 100.77 + 50.46],
                                   "context-switches": [17 + 11 + 8, 15 + 5 + 2]},
    "10_csv_semicolon_sep.out": {**dict(zip(SW, (509.51, 2, 0, 62), strict=True)), "instructions": NAN},
    "11_json_sw.out": {**dict(zip(SW, (526.507508, 7, 0, 63), strict=True)), "cycles": NAN},
    "12_json_repeat3.out": dict(zip(SW, (474.280541, 4, 0, 64), strict=True)),
    "13_json_interval.out": dict(zip(SW, (199.780570 + 200.420060 + 30.819789, 4 + 1 + 0, 0, 62 + 0 + 0),
                                     strict=True)),
    "14_json_percore.out": {"task-clock": [202.540831, 202.568587], "context-switches": [15, 19],
                            "cpu-migrations": [2, 2], "page-faults": [75, 2]},
    "15_human_default.out": {**dict(zip(SW, (495.56, 8, 0, 61), strict=True)), "cycles": NAN,
                             "instructions": NAN, "branches": NAN, "branch-misses": NAN,
                             "duration_time": 0.496508895, "user_time": 0.496306, "system_time": 0.0},
    "16_human_repeat3.out": {**dict(zip(SW, (689.88, 27, 0, 63), strict=True)), "duration_time": 0.6842},
    "17_csv_perthread.out": {"task-clock": [25.30, 0.06, 0.19, 0.08, 0.03, 0.07, 0.03, 1.11, 0.07, 0.03, 0.89,
                                            0.11, 0.65, 0.03]},
    "19_json_hw_true.out": {"instructions": NAN, "cycles": NAN},
    "20_csv_to_stderr.err": {"task-clock": 0.77},
    "21_json_percpu_A.out": {"task-clock": [101.658825, 102.431330], "context-switches": [14, 14]},
    "22_json_persocket.out": {"task-clock": [205.503889]},
    "23_csv_repeat_interval.out": {"task-clock": 150.65 + 95.92},
    "24_csv_group.out": {"task-clock": 0.90, "page-faults": 47},
    "25_csv_interval_summary.out": {"task-clock": 1.94},
    "26_json_perthread.out": {"task-clock": [1.187237, 0.009338, 0.034194, 1.702389, 0.064609]},
    "27_csv_systemwide.out": {"task-clock": 205.96, "context-switches": 28},
}
LOCATIONS = {
    "06_csv_percpu_A.out": ("cpu", ["CPU0", "CPU1"]),
    "07_csv_percore.out": ("core", ["S0-D0-C0", "S0-D0-C1"]),
    "08_csv_persocket.out": ("socket", ["S0"]),
    "09_csv_interval_percpu.out": ("cpu", ["CPU0", "CPU1"]),
    "14_json_percore.out": ("core", ["S0-D0-C0", "S0-D0-C1"]),
    "17_csv_perthread.out": ("thread", None),
    "21_json_percpu_A.out": ("cpu", ["CPU0", "CPU1"]),
    "22_json_persocket.out": ("socket", ["S0"]),
    "26_json_perthread.out": ("thread", ["kdamond.0-76", "kworker/0:2-events-88", "memfd:sealed-91-2151",
                                         "perf-10565", "rcu_preempt-15"]),
}
VARIANCES = {
    "04_csv_repeat5.out": {"task-clock": 1.86, "context-switches": 31.15, "cpu-migrations": 0.0, "page-faults": 1.31},
    "12_json_repeat3.out": {"task-clock": 9.12, "context-switches": 22.05, "page-faults": 1.04},
    "16_human_repeat3.out": {"task-clock": 9.76, "context-switches": 38.27, "page-faults": 0.92,
                             "duration_time": 11.05},
}


def _perf(shared_data: Path) -> Path:
    folder = shared_data / "perf-stat"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


def test_every_sample_is_listed(shared_data):
    files = {f.name for f in _perf(shared_data).iterdir()
             if f.suffix in (".out", ".err", ".stdout") and f.name != "capture.stderr"}
    unreadable = {"18_csv_metric_only.out", "20_csv_to_stderr.stdout"}
    assert files == set(SAMPLES) | unreadable


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_sample_values(shared_data, name):
    file = _perf(shared_data) / name
    exp = pmkit.read(file)
    assert exp.provenance.reader == "perf-stat"
    expected = SAMPLES[name]
    assert exp.metric_names == list(expected)
    kind, labels = LOCATIONS.get(name, ("", None))
    for event, value in expected.items():
        measured = exp.measurements[event][0, 0, 0]
        if isinstance(value, list):
            assert exp.locations is not None
            assert exp.locations[event][0][0, 0, :] == pytest.approx(value, abs=1e-9)
            assert measured == pytest.approx(sum(value), abs=1e-9)  # perf's own total: the sum
        elif math.isnan(value):
            assert math.isnan(measured)
        else:
            assert measured == pytest.approx(value, abs=1e-9), event
    assert exp.timeline is not None and exp.timeline.location_kind == kind
    if labels is not None:
        assert exp.timeline.labels == labels
    assert exp.metric("task-clock").unit == "msec" if "task-clock" in expected else True
    for event in expected:
        if event not in ("task-clock", "duration_time", "user_time", "system_time"):
            assert exp.metric(event).unit == "count"


@pytest.mark.parametrize("name", sorted(VARIANCES))
def test_sample_variances(shared_data, name):
    exp = pmkit.read(_perf(shared_data) / name)
    timeline = exp.timeline
    for event, variance in VARIANCES[name].items():
        rows = timeline["metric"] == timeline.metrics.index(event)
        assert timeline["variance"][rows] == pytest.approx([variance])
    assert any("-r means" in n for n in exp.provenance.notes)


def test_intervals_stay_available(shared_data):
    exp = pmkit.read(_perf(shared_data) / "05_csv_interval200.out")
    times, values = exp.timeline.series("task-clock", 0)
    assert times == pytest.approx([0.200323408, 0.400939649, 0.601420478, 0.633346625])
    assert values == pytest.approx([199.66, 200.60, 201.29, 30.58])
    per_cpu = pmkit.read(_perf(shared_data) / "09_csv_interval_percpu.out")
    cpu1 = per_cpu.timeline.labels.index("CPU1")
    _, values = per_cpu.timeline.series("context-switches", 0, location=cpu1)
    assert values == pytest.approx([15, 5, 2])
    assert any("intervals summed" in n for n in exp.provenance.notes)


def test_interval_summary_and_not_counted(shared_data):
    exp = pmkit.read(_perf(shared_data) / "25_csv_interval_summary.out")
    times, values = exp.timeline.series("task-clock", 0)
    assert len(times) == 3 and values[0] == pytest.approx(1.88) and math.isnan(values[1])
    assert any("<not counted> in 1 of its 4 samples" in n for n in exp.provenance.notes)


def test_human_header_and_command(shared_data):
    exp = pmkit.read(_perf(shared_data) / "16_human_repeat3.out")
    assert exp.callpaths[0].path == "sh"
    assert any("(3 runs each)" in n for n in exp.provenance.notes)
    assert any("started on Sat Nov 21 22:27:26 2026" in n for n in exp.provenance.notes)


@pytest.mark.parametrize("name", ["18_csv_metric_only.out", "20_csv_to_stderr.stdout"])
def test_samples_without_counters_are_one_line_errors(shared_data, name):
    with pytest.raises(InputError) as caught:
        pmkit.read(_perf(shared_data) / name, reader="perf-stat")
    assert name in str(caught.value) and "\n" not in str(caught.value)


def test_not_supported_events_are_named(shared_data):
    exp = pmkit.read(_perf(shared_data) / "02_csv_default.out")
    assert "cycles is <not supported> in every file; its values there are NaN" in exp.provenance.notes


# ---------------------------------------------------------------- hardware counters, written by hand


HW_CSV = """# started on Mon Nov 23 10:00:00 2026

1203.45,msec,task-clock,1203450000,100.00,0.999,CPUs utilized
3512345678,,cycles,601234567,50.02,2.919,GHz
4123456789,,instructions,601234567,50.02,1.17,insn per cycle
,,,,,0.45,stalled cycles per insn
812345678,,stalled-cycles-backend,600000000,49.98,23.13,backend cycles idle
<not counted>,,LLC-load-misses,0,0.00,,
1234,,mem_load_retired.l3_miss,1203450000,100.00,,
"""

HW_HUMAN = """# started on Mon Nov 23 10:00:00 2026


 Performance counter stats for './app 64':

          1,203.45 msec task-clock                       #    0.999 CPUs utilized
     3,512,345,678      cycles                           #    2.919 GHz                         (50.02%)
     4,123,456,789      instructions                     #    1.17  insn per cycle              (50.02%)
                                                  #    0.45  stalled cycles per insn
       812,345,678      stalled-cycles-backend           #   23.13% backend cycles idle         (49.98%)
     <not counted>      LLC-load-misses                                                         (0.00%)
             1,234      mem_load_retired.l3_miss

 Some events weren't counted. Try disabling the NMI watchdog:
	echo 0 > /proc/sys/kernel/nmi_watchdog
	perf stat ...
	echo 1 > /proc/sys/kernel/nmi_watchdog

       1.204567890 seconds time elapsed

       1.190000000 seconds user
       0.010000000 seconds sys
"""

HW_JSON_NEW = """{"counter-value" : "1203.450000", "unit" : "msec", "event" : "task-clock", "event-runtime" : 1203450000, "pcnt-running" : 100.00, "metric-value" : "0.999000", "metric-unit" : "CPUs utilized"}
{"counter-value" : "3512345678.000000", "unit" : "", "event" : "cycles", "event-runtime" : 601234567, "pcnt-running" : 50.02, "metric-value" : "2.919000", "metric-unit" : "GHz"}
{"counter-value" : "4123456789.000000", "unit" : "", "event" : "instructions", "event-runtime" : 601234567, "pcnt-running" : 50.02, "metric-value" : "1.170000", "metric-unit" : "insn per cycle", "metric-threshold" : "good"}
{"metric-value" : "0.450000", "metric-unit" : "stalled cycles per insn"}
{"event-runtime" : 600000000, "pcnt-running" : 100.00, "metricgroup" : "TopdownL1"}
{"counter-value" : "812345678.000000", "unit" : "", "event" : "stalled-cycles-backend", "event-runtime" : 600000000, "pcnt-running" : 49.98, "metric-value" : "23.130000", "metric-unit" : "backend cycles idle"}
{"counter-value" : "<not counted>", "unit" : "", "event" : "LLC-load-misses", "event-runtime" : 0, "pcnt-running" : 0.00, "metric-value" : "0.000000", "metric-unit" : ""}
{"counter-value" : "1234.000000", "unit" : "", "event" : "mem_load_retired.l3_miss", "event-runtime" : 1203450000, "pcnt-running" : 100.00}
"""  # noqa: E501

HW_EXPECTED = {"task-clock": 1203.45, "cycles": 3512345678, "instructions": 4123456789,
               "stalled-cycles-backend": 812345678, "LLC-load-misses": NAN, "mem_load_retired.l3_miss": 1234}


@pytest.mark.parametrize("text", [HW_CSV, HW_HUMAN, HW_JSON_NEW], ids=["csv", "human", "json-newer-perf"])
def test_hardware_counter_lines(tmp_path, text):
    file = tmp_path / "app.p64.r1.out"
    file.write_text(text)
    exp = pmkit.read(file)
    assert exp.parameters == ("p",) and exp.points.tolist() == [[64.0]]
    for event, value in HW_EXPECTED.items():
        got = exp.measurements[event][0, 0, 0]
        assert math.isnan(got) if math.isnan(value) else got == pytest.approx(value), event
    notes = " ".join(exp.provenance.notes)
    assert "multiplexed events: cycles (counted 50.0% of the time)" in notes
    assert "perf scaled these to the whole run" in notes
    assert "LLC-load-misses is <not counted> in every file" in notes
    running = exp.timeline["running"][exp.timeline["metric"] == exp.timeline.metrics.index("cycles")]
    assert running == pytest.approx([50.02])


def test_no_scale_output_is_scaled(tmp_path):
    file = write_perf_stat(tmp_path / "raw.csv", [PerfLine("cycles", 1000.0, running=25.0),
                                                  PerfLine("instructions", 800.0, running=100.0)])
    exp = pmkit.read(file, scaled=False)
    assert exp.measurements["cycles"][0, 0, 0] == pytest.approx(4000.0)
    assert exp.measurements["instructions"][0, 0, 0] == pytest.approx(800.0)
    assert any("scaled here by 100/running%" in n for n in exp.provenance.notes)
    assert pmkit.read(file).measurements["cycles"][0, 0, 0] == pytest.approx(1000.0)


@pytest.mark.parametrize("fmt", ["csv", "json", "human"])
@pytest.mark.parametrize("mode", ["cpu", "core", "die", "socket", "node", "thread", "interval", "interval-core"])
def test_written_formats_agree(tmp_path, fmt, mode):
    located = {"cpu": [("CPU0", None), ("CPU1", None)], "core": [("S0-D0-C0", 2), ("S0-D0-C1", 2)],
               "die": [("S0-D0", 8), ("S0-D1", 8)], "socket": [("S0", 4), ("S1", 4)], "node": [("N0", 4), ("N1", 4)],
               "thread": [("app-101", None), ("app-102", None)], "interval": [("", None)],
               "interval-core": [("S0-D0-C0", 2), ("S0-D0-C1", 2)]}[mode]
    lines = []
    for t, time in enumerate((0.5, 1.0) if mode.startswith("interval") else (None,)):
        for i, (label, count) in enumerate(located):
            for event, value in (("cycles", 2e9 + 1e6 * i + 3e5 * t), ("instructions", 3e9 + 7 * i + 11 * t)):
                lines.append(PerfLine(event, value, location=label, count=count, time=time))
    file = write_perf_stat(tmp_path / f"app.p2.r1.{fmt}", lines, fmt=fmt)
    exp = pmkit.read(file)
    expected = {event: sum(line.value for line in lines if line.event == event) for event in ("cycles", "instructions")}
    for event, total in expected.items():
        assert exp.measurements[event][0, 0, 0] == pytest.approx(total)
    if mode.startswith("interval"):
        assert exp.timeline.series("cycles", 0)[0] == pytest.approx([0.5, 1.0])
    if mode == "interval-core":
        assert exp.timeline.location_kind == "core"
        assert exp.locations["cycles"][0][0, 0].tolist() == pytest.approx([4e9 + 3e5, 4e9 + 2e6 + 3e5])
    elif mode != "interval":
        assert exp.timeline.location_kind == mode
        assert exp.locations["cycles"][0][0, 0].tolist() == pytest.approx([2e9, 2e9 + 1e6])


def test_separator_inside_a_thread_name(tmp_path):
    lines = [PerfLine("task-clock", 12.5, "msec", location="weird,name-17"),
             PerfLine("task-clock", 2.5, "msec", location="plain-18")]
    exp = pmkit.read(write_perf_stat(tmp_path / "threads.csv", lines))
    assert exp.timeline.labels == ["plain-18", "weird,name-17"]
    assert exp.measurements["task-clock"][0, 0, 0] == pytest.approx(15.0)


@pytest.mark.parametrize("separator", [";", "|", "\t", "::"])
def test_any_separator(tmp_path, separator):
    file = write_perf_stat(tmp_path / "sep.txt", counters({"cycles": 10.0, "cpu/event=0x3c/": 5.0},
                                                         task_clock_msec=3.25), separator=separator)
    exp = pmkit.read(file, separator=separator) if len(separator) > 1 else pmkit.read(file)
    assert exp.measurements["cpu/event=0x3c/"][0, 0, 0] == 5.0  # an unknown event is kept as it is
    assert exp.measurements["task-clock"][0, 0, 0] == 3.25


def _study(folder: Path, fmt: str = "csv") -> Path:
    for p in (2, 4, 8):
        for r in (1, 2):
            values = {"cycles": 1e9 * (1 + 8 / p) * (1 + 0.01 * r), "instructions": 2e9 * (1 + 8 / p),
                      "cache-misses": NAN if (p, r) == (8, 2) else 1e6 * p}
            write_perf_stat(folder / f"app.p{p}.r{r}.{fmt}", counters(values, task_clock_msec=100.0 * (1 + 8 / p)),
                            fmt=fmt)
    return folder


def test_study_folder(tmp_path):
    exp = pmkit.read(_study(tmp_path / "study"))
    assert exp.parameters == ("p",) and exp.points[:, 0].tolist() == [2, 4, 8]
    assert exp.callpaths[0].path == "app"
    cycles = exp.measurements["cycles"][0]
    assert cycles.shape == (3, 2)
    assert cycles[0].tolist() == pytest.approx([5e9 * 1.01, 5e9 * 1.02])
    assert math.isnan(exp.measurements["cache-misses"][0, 2, 1])
    assert exp.measurements["task-clock"][0, :, 0].tolist() == pytest.approx([500.0, 300.0, 200.0])


def test_study_with_run_folders_and_a_manifest(tmp_path):
    for p in (2, 4):
        write_perf_stat(tmp_path / "runs" / f"app.p{p}.r1" / "perf.json", counters({"cycles": 1e9 / p}), fmt="json")
    exp = pmkit.read(tmp_path / "runs")
    assert exp.measurements["cycles"][0, :, 0].tolist() == pytest.approx([5e8, 2.5e8])
    other = tmp_path / "named"
    for size in (10, 20):
        write_perf_stat(other / f"run-{size}.csv", counters({"cycles": 3.0 * size}))
    (other / "pmkit-manifest.csv").write_text("file,size\nrun-10.csv,10\nrun-20.csv,20\n")
    assert PerfStatReader().sniff(other)
    exp = pmkit.read(other)
    assert exp.parameters == ("size",) and exp.measurements["cycles"][0, :, 0].tolist() == [30.0, 60.0]


def test_a_bad_file_in_a_study_is_skipped(tmp_path):
    folder = _study(tmp_path / "study")
    (folder / "app.p16.r1.csv").write_text("1203.45,msec,task-clock,1203450000,100.00\nnot,a,perf,line\n")
    exp = pmkit.read(folder)
    assert len(exp.points) == 3
    (path, problem), = exp.provenance.skipped
    assert path.endswith("app.p16.r1.csv") and "line 2" in problem


def test_empty_or_garbage_runs_sorted_first_do_not_hide_the_study(tmp_path, pmkit_cli):
    """``app.p1.r1.csv`` and ``app.p16.r1.csv`` (sorted before the rest) empty or garbage: the folder was "no reader
    recognises this input", as sniffing wanted the first three runs to look like perf stat output.  Now they are
    reported and skipped, each once on one line, the file named once."""
    folder = _study(tmp_path / "study")
    (folder / "app.p1.r1.csv").write_text("")
    (folder / "app.p16.r1.csv").write_text("garbage\n")
    assert PerfStatReader().sniff(folder)
    result = pmkit_cli("model", folder, "--json", columns=400)
    assert result.returncode == 0, result.stderr
    warnings = result.stderr.splitlines()
    assert len(warnings) == 2 and all(w.count("app.p1") == 1 for w in warnings), warnings
    assert warnings[0] == f"warning: skipped {folder / 'app.p1.r1.csv'}: is empty (perf stat writes to stderr " \
                          "unless given -o FILE)"
    assert warnings[1].startswith(f"warning: skipped {folder / 'app.p16.r1.csv'}: line 1: is not perf stat output")
    assert [s["source"] for s in json.loads(result.stdout)["skipped"]] == [str(folder / "app.p1.r1.csv"),
                                                                          str(folder / "app.p16.r1.csv")]


@pytest.mark.parametrize(("text", "line", "words"), [
    ("1.0,msec,task-clock,100,100.00,,\n2.0,msec,task-clock\n", 2, "fields"),
    ("1.0,msec,task-clock,100,100.00,,\nabc,,cycles,100,100.00,,\n", 2, "expected VALUE,UNIT,EVENT"),
    ('{"counter-value" : "1.0", "unit" : "", "event" : "cycles", "event-runtime" : 1, "pcnt-running" : 100}\n'
     '{"counter-value" : "2.0", "unit" : ""\n', 2, "JSON"),
    ('{"counter-value" : [1], "unit" : "", "event" : "cycles", "event-runtime" : 1, "pcnt-running" : 100}\n', 1,
     "counter-value"),
    (" Performance counter stats for 'x':\n\n      12,345      cycles\n      1x2      instructions\n", 4,
     "counter line"),
])
def test_bad_lines_name_file_and_line(tmp_path, text, line, words):
    file = tmp_path / "bad.out"
    file.write_text(text)
    with pytest.raises(InputError) as caught:
        pmkit.read(file, reader="perf-stat")
    message = str(caught.value)
    assert message.startswith(str(file)) and f"line {line}" in message and words in message
    assert "\n" not in message


def test_sniff_leaves_other_formats_alone(tmp_path):
    reader = PerfStatReader()
    (tmp_path / "exp.txt").write_text("PARAMETER p\nPOINTS 1 2 3\nREGION main\nDATA 1\nDATA 2\nDATA 3\n")
    (tmp_path / "exp.jsonl").write_text('{"params": {"p": 1}, "callpath": "main", "metric": "time", "value": 1}\n')
    (tmp_path / "data.csv").write_text("a,b,c,d,e\n1,2,3,4,5\n")
    assert not any(reader.sniff(tmp_path / f) for f in ("exp.txt", "exp.jsonl", "data.csv"))
    assert pmkit.read(tmp_path / "exp.txt").provenance.reader == "extrap-text"


def test_value_and_status_columns_are_parsed_in_bulk(tmp_path):
    lines = [PerfLine("cycles", float(i), location=f"CPU{i}") for i in range(2000)]
    lines.append(PerfLine("cycles", NOT_SUPPORTED, location="CPU2000"))
    lines.append(PerfLine("cycles", NOT_COUNTED, location="CPU2001"))
    text = (tmp_path / "x.csv")
    write_perf_stat(text, lines)
    parsed = parse_perf_stat(text.read_text(), text)
    assert parsed.value.dtype == np.float64 and len(parsed) == 2002
    assert parsed.status[-2:].tolist() == [2, 1] and np.isnan(parsed.value[-2:]).all()
    assert parsed.labels[:3] == ["CPU0", "CPU1", "CPU2"] and parsed.labels[-1] == "CPU2001"
    exp = pmkit.read(text)
    assert exp.measurements["cycles"][0, 0, 0] == sum(range(2000))


def test_reader_contract(tmp_path):
    from pmkit.testing.plugins import check_reader

    good = write_perf_stat(tmp_path / "good.csv", counters({"cycles": 5.0, "instructions": 7.0}))
    exp = check_reader(PerfStatReader(), good)
    assert exp.measurements["instructions"][0, 0, 0] == 7.0


CUT_SHORT = "ends before perf's closing 'seconds time elapsed' line"


def test_human_output_cut_before_its_closing_lines_is_read_with_a_warning(tmp_path):
    """The human format has no end marker but perf's closing 'seconds time elapsed' lines: a file
    without them (a run killed, a copy interrupted) is read as far as it goes, with a warning."""
    lines = counters({"instructions": 2.0e9, "cycles": 1.5e9}, task_clock_msec=500.0)
    whole = write_perf_stat(tmp_path / "whole.txt", lines, fmt="human")
    cut = write_perf_stat(tmp_path / "cut.txt", lines, fmt="human", elapsed=None)
    assert pmkit.read(whole).provenance.warnings == []
    experiment = pmkit.read(cut)
    assert [w for w in experiment.provenance.warnings if CUT_SHORT in w] == [
        f"{cut}: {CUT_SHORT}, so the output may be cut short (a run killed, a copy interrupted); read as far as "
        "it goes"]
    assert "instructions" in experiment.metric_names and "duration_time" not in experiment.metric_names
    intervals = [PerfLine("task-clock", 100.0, "msec", time=t) for t in (0.1, 0.2)]
    assert pmkit.read(write_perf_stat(tmp_path / "intervals.txt", intervals, fmt="human")).provenance.warnings == []


def test_shared_human_output_cut_short_is_warned_about(tmp_path, shared_data):
    source = shared_data / "perf-stat" / "15_human_default.out"
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    assert pmkit.read(source).provenance.warnings == []
    text = source.read_text(encoding="utf-8")
    cut = tmp_path / source.name
    cut.write_text(text[: text.index("seconds time elapsed")].rsplit("\n", 1)[0] + "\n", encoding="utf-8")
    assert any(CUT_SHORT in w for w in pmkit.read(cut).provenance.warnings)
