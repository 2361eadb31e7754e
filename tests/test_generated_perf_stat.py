"""The perf stat reader on generated twins of the captured samples it only met in the shared data.

``test_perf_stat.py`` checks every captured file of ``shared/data/perf-stat`` by hand and writes
hardware-counter lines with ``pmkit.testing.perfwriter``; these twins cover what only the captured
files had: ``-r`` means with their variance in each format (``04_csv_repeat5``, ``12_json_repeat3``,
``16_human_repeat3``), an interval run ending in a ``summary`` line with a ``<not counted>``
interval (``25_csv_interval_summary``), and a file holding only perf's header
(``18_csv_metric_only``).
"""

from __future__ import annotations

import math

import pytest

import pmkit
from pmkit.errors import InputError
from pmkit.testing.perfwriter import NOT_COUNTED, PerfLine, write_perf_stat

VARIANCE = {"task-clock": 1.86, "context-switches": 31.15, "cpu-migrations": 0.0, "page-faults": 1.31}
MEANS = {"task-clock": 693.28, "context-switches": 25, "cpu-migrations": 0, "page-faults": 62}


def repeated() -> list[PerfLine]:
    return [PerfLine(event, MEANS[event], "msec" if event == "task-clock" else "", variance=variance,
                     runtime=693277418) for event, variance in VARIANCE.items()]


@pytest.mark.parametrize("fmt", ["csv", "json", "human"])
def test_repeated_runs_keep_their_variance(tmp_path, fmt):
    path = write_perf_stat(tmp_path / f"repeat.{fmt}", repeated(), fmt=fmt, runs=5, elapsed=0.6842,
                           command="sh -c i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
    exp = pmkit.read(path)
    assert exp.provenance.reader == "perf-stat"
    # the human format closes with the elapsed, user and system times
    extra = ["duration_time", "user_time", "system_time"] if fmt == "human" else []
    assert exp.metric_names == list(MEANS) + extra
    if fmt == "human":
        assert exp.values("duration_time")[0, 0] == pytest.approx(0.6842)
    for event, mean in MEANS.items():
        assert exp.measurements[event][0, 0, 0] == pytest.approx(mean)
        rows = exp.timeline["metric"] == exp.timeline.metrics.index(event)
        assert exp.timeline["variance"][rows] == pytest.approx([VARIANCE[event]])
    notes = " ".join(exp.provenance.notes)
    assert "1 of 1 files are perf stat -r means" in notes
    assert ("(5 runs each)" in notes) == (fmt == "human")  # only the human title says how many
    assert "started on Sat Nov 21 22:27:16 2026" in notes
    if fmt == "human":
        assert exp.callpaths[0].path == "sh"  # the program perf ran, from the title


def test_interval_summary_and_an_interval_not_counted(tmp_path):
    lines = [PerfLine("task-clock", 1.88, "msec", time=0.100280719),
             PerfLine("task-clock", NOT_COUNTED, "msec", time=0.200682017),
             PerfLine("task-clock", 0.06, "msec", time=0.253078223),
             PerfLine("task-clock", 1.94, "msec", time="         summary")]
    exp = pmkit.read(write_perf_stat(tmp_path / "summary.csv", lines))
    assert exp.values("task-clock")[0, 0] == pytest.approx(1.94)  # the summary, not the sum of intervals
    times, values = exp.timeline.series("task-clock", 0)
    assert times == pytest.approx([0.100280719, 0.200682017, 0.253078223])
    assert values[0] == pytest.approx(1.88) and math.isnan(values[1]) and values[2] == pytest.approx(0.06)
    assert any("<not counted> in 1 of its 4 samples" in note for note in exp.provenance.notes)


def test_a_header_without_counters_is_one_line(tmp_path):
    path = write_perf_stat(tmp_path / "metric_only.out", [], started="Sat Nov 21 22:27:28 2026")
    path.write_text(path.read_text() + "\n\n")
    with pytest.raises(InputError, match="holds no counter values") as info:
        pmkit.read(path, reader="perf-stat")
    assert "metric_only.out" in str(info.value) and "\n" not in str(info.value)


def test_an_empty_capture_says_where_perf_wrote(tmp_path):
    """``20_csv_to_stderr.stdout``: perf stat wrote to stderr, the captured stdout is empty."""
    path = tmp_path / "to_stderr.stdout"
    path.write_text("")
    with pytest.raises(InputError, match=r"is empty \(perf stat writes to stderr unless given -o FILE\)"):
        pmkit.read(path, reader="perf-stat")
