"""Fuzzing every reader with mutated real and generated files: no traceback, no hang, bounded memory.

The shared example files of every format (Extra-P text, JSON, JSON Lines, Talpas, ``.extra-p``,
Cube; skipped where the shared data is absent) and files generated here (a Cube study file,
plain and compressed, and a text file) are mutated — bytes flipped, cut short, a piece doubled,
a long run of one byte inserted, a block zeroed — and read with reader auto-detection and with
each format's own reader.  Every read must return an Experiment or raise InputError/UsageError,
finish within :data:`SECONDS` and allocate at most :data:`PEAK_MB` (tracemalloc, numpy included).
"""

from __future__ import annotations

import random
import signal
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import pmkit
from pmkit.errors import InputError, UsageError
from pmkit.experiment import Experiment
from pmkit.testing.cubewriter import TIME, VISITS, write_cube

SECONDS = 20
"""Longest a read of a mutated file may take (a hang fails the test, it does not stall it)."""
PEAK_MB = 200
"""Most a read of a mutated file (all well under a megabyte) may allocate."""
MUTATIONS = 10

SHARED = {
    "extrap-text": ["extrap-formats/text/one_parameter_6.txt", "extrap-formats/text/two_parameter_1.txt"],
    "extrap-json": ["extrap-formats/json/input_1.JSON", "extrap-formats/json/new/input2.json"],
    "extrap-jsonl": ["extrap-formats/jsonlines/extended2.jsonl"],
    "talpas": ["extrap-formats/talpas/talpas_1.txt"],
    "extrap-experiment": ["extrap-formats/input/exp_only_mean_median.extra-p"],
    "cube": ["cube/extrap-mm-single/mm.x1y1z1.r1/profile.cubex",
             "cube/pycubexr/call_tree_test/call_tree_test.cubex"],
}


@contextmanager
def time_limit(seconds: int):
    def expired(signum, frame):
        raise TimeoutError(f"a read took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random damage of the kinds real files suffer (and attackers try)."""
    if not data:
        return b"\0"
    kind = rng.randrange(5)
    at = rng.randrange(len(data))
    if kind == 0:
        out = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if kind == 1:
        return data[:at]
    if kind == 2:
        end = min(len(data), at + rng.randint(1, 512))
        return data[:end] + data[at:]
    if kind == 3:
        return data[:at] + bytes([rng.choice(b"9 ({\"x\0\n")]) * rng.randint(1_000, 200_000) + data[at:]
    return data[:at] + b"\0" * min(512, len(data) - at) + data[at + 512:]


def read_bounded(path: Path, reader: str | None) -> str:
    """Read within the time and memory bounds; what happened ('read' or 'refused')."""
    tracemalloc.start()
    try:
        with time_limit(SECONDS):
            experiment = pmkit.read(path, reader)
        assert isinstance(experiment, Experiment)
        experiment.validate()
        outcome = "read"
    except (InputError, UsageError) as exc:
        assert str(exc) and "\n" not in str(exc) and len(str(exc)) < 1200, str(exc)[:300]
        outcome = "refused"
    finally:
        peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
        tracemalloc.stop()
    assert peak < PEAK_MB, f"{path.name} with {reader}: {peak:.0f} MiB"
    return outcome


def generated(folder: Path) -> dict[str, list[Path]]:
    rng = np.random.default_rng(3)
    paths = ["main", "main->init", "main->solve", "main->solve->MPI_Allreduce"]
    values = {m.name: rng.uniform(1, 5, (4, 4)) for m in (TIME, VISITS)}
    plain = write_cube(folder / "app.p4.r1" / "profile.cubex", paths, [TIME, VISITS], values, processes=4)
    packed = write_cube(folder / "app.p8.r1" / "profile.cubex", paths, [TIME, VISITS], values, processes=4,
                        compress=True)
    text = folder / "generated.txt"
    text.write_text("PARAMETER p n\nPOINTS ( 1 2 ) ( 2 2 ) ( 4 2 )\nMETRIC time\n"
                    + "".join(f"REGION main->f{i}\nDATA 1 2\nDATA 3 4\nDATA 5 nan\n" for i in range(20)))
    return {"cube": [plain, packed], "extrap-text": [text]}


def samples(shared: Path | None, folder: Path) -> list[tuple[str, Path]]:
    out = [(reader, path) for reader, paths in generated(folder).items() for path in paths]
    if shared is not None:
        out += [(reader, shared / name) for reader, names in SHARED.items() for name in names
                if (shared / name).is_file()]
    return out


def test_every_format_survives_mutation(tmp_path, shared_data_if_present):
    shared = shared_data_if_present
    rng = random.Random(19)
    outcomes: dict[str, set[str]] = {}
    for reader, source in samples(shared, tmp_path / "generated"):
        data = source.read_bytes()
        target = tmp_path / "mutated" / source.name
        target.parent.mkdir(exist_ok=True)
        for _ in range(MUTATIONS):
            target.write_bytes(mutate(data, rng))
            for chosen in (None, reader):
                outcomes.setdefault(reader, set()).add(read_bounded(target, chosen))
    assert outcomes["cube"] == {"read", "refused"} or outcomes["cube"] == {"refused"}
    assert "refused" in outcomes["extrap-text"]


@pytest.mark.parametrize("reader", ["extrap-text", "extrap-json", "extrap-jsonl", "talpas", "cube",
                                    "extrap-experiment"])
def test_empty_and_binary_files_are_refused_by_every_reader(tmp_path, reader):
    for name, content in (("empty.cubex", b""), ("binary.cubex", bytes(range(256)) * 64)):
        path = tmp_path / name
        path.write_bytes(content)
        assert read_bounded(path, reader) == "refused"
