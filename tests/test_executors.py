"""Executors: reading and modeling on a Dask cluster (and a process pool) give what in-process gives, to the
last bit; failures are reported and skipped as in-process; a scheduler that cannot be reached is one line.

One Dask LocalCluster for the module, with its workers as threads of this process (``processes=False``):
it runs the same tasks through the same scheduler; that tasks and results also survive pickling is
checked directly (and end to end, with a worker killed, in ``test_executor_faults.py``).
"""

from __future__ import annotations

import contextlib
import itertools
import pickle
import re
import shutil
from pathlib import Path

import executor_cases
import numpy as np
import pytest

import pmkit
from pmkit import executors, modelchunks, progress
from pmkit.errors import ExecutorError, InputError, UsageError
from pmkit.executors import DaskExecutor, Executor
from pmkit.readers.cube import load_run
from pmkit.readers.limits import Limits
from pmkit.testing import example_study
from pmkit.testing.identity import experiment_differences, model_differences

NEEDS_DASK = "the Dask executor needs dask and distributed: pip install 'pmkit-hpc[dask]'"


@pytest.fixture(scope="module")
def distributed():
    """The ``distributed`` package; the test skips, saying what to install, where it is missing (the tests
    that need no Dask run everywhere)."""
    return pytest.importorskip("distributed", reason=NEEDS_DASK)


@pytest.fixture(scope="module")
def dask(distributed) -> DaskExecutor:
    with DaskExecutor(processes=False, workers=2) as engine:
        yield engine


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    example_study.generate(folder, repetitions=2)
    return folder


@pytest.fixture
def chunked(monkeypatch):
    """Batches of 100 series and more go out in chunks of 40 (the defaults need 10,000), with the compiled
    kernels loaded in this process too, as a large batch would load them."""
    from pmkit.fitting.kernels import numba_enabled

    if not numba_enabled():
        pytest.skip("chunks use the compiled kernels; numba is disabled here")
    import numba  # noqa: F401

    monkeypatch.setattr(modelchunks, "MIN_SERIES", 100)
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", 40)


# ---------------------------------------------------------------- the executor itself


@pytest.mark.parametrize("engine", ["local", "local-threads", "dask"])
def test_map_keeps_task_order_reports_progress_and_raises_what_a_task_raised(engine, dask):
    executor, threads = (dask, 1) if engine == "dask" else (Executor(), 3 if engine == "local-threads" else 1)
    events = []
    with progress.listening(events.append):
        assert executor.map(pow, [(2, k) for k in range(9)], description="powers", threads=threads) == \
            [2 ** k for k in range(9)]
    assert [e.completed for e in events if not e.finished][-1] == 9 and events[-1].finished
    assert {e.description for e in events} == {"powers"} and events[0].total == 9
    with pytest.raises(InputError) as caught:
        executor.map(_fails_on, [(k,) for k in range(5)], description="failing", threads=threads)
    assert str(caught.value) == "run3.cubex [member], line 7: is broken"
    assert executor.map(pow, [], description="nothing") == []


def _fails_on(k: int) -> int:
    if k == 3:
        raise InputError("run3.cubex", "is broken", line=7, member="member")
    return k


def test_open_executor_names_and_refusals(dask):
    assert executors.open_executor(None).name == "local" and not executors.open_executor("local").remote
    assert executors.open_executor(dask) is dask
    wrapped = executors.open_executor(dask.client)
    assert wrapped.name == "dask" and wrapped.remote and wrapped.workers == 2
    wrapped.close()  # the caller's client stays open
    assert dask.map(abs, [(-1,)], description="still open") == [1]
    for spec, problem in (("bogus", "unknown executor 'bogus'"), ("local:3", "unknown executor"),
                          ("processes:0", "positive number of processes"), ("processes:x", "got 'x'")):
        with pytest.raises(UsageError, match=problem):
            executors.open_executor(spec)
    with pytest.raises(UsageError, match="positive number of seconds"):
        executors.open_executor("dask:tcp://127.0.0.1:1", timeout=0)
    with pytest.raises(ExecutorError, match="no scheduler file"):
        executors.open_executor("dask:/nonexistent/scheduler.json")


def test_missing_dask_names_what_to_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.split(".")[0] in ("dask", "distributed"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(UsageError) as caught:
        executors.open_executor("dask")
    assert str(caught.value) == executors.MISSING_DASK and "pip install 'pmkit-hpc[dask]'" in str(caught.value)


def test_ctrl_c_while_a_local_cluster_starts_leaves_nothing_for_distributed_to_close_at_exit(distributed):
    """Ctrl-C during ``--executor dask``'s start: distributed's exit handler closed the half-started cluster and
    printed ``AssertionError: Status.init`` after ``interrupted``.  The cluster is closed and forgotten here."""
    import types

    closed = []

    class HalfStarted:
        def close(self, timeout=None):
            closed.append(timeout)
            raise AssertionError("Status.init")  # what closing a cluster whose workers never started raises

    SpecCluster = types.SimpleNamespace(_instances=set())
    earlier = HalfStarted()
    SpecCluster._instances.add(earlier)  # a cluster of someone else's, started before: left alone

    def interrupted_start(**kwargs):
        SpecCluster._instances.add(HalfStarted())
        raise KeyboardInterrupt

    fake = types.SimpleNamespace(SpecCluster=SpecCluster, LocalCluster=interrupted_start)
    with pytest.raises(KeyboardInterrupt):
        executors._local_cluster(fake, 2, True)
    assert SpecCluster._instances == {earlier} and closed == [2]


def test_an_unreachable_scheduler_is_one_line_within_the_timeout(distributed):
    import time

    start = time.perf_counter()
    with pytest.raises(ExecutorError) as caught:
        executors.open_executor("dask:tcp://127.0.0.1:1", timeout=0.5)
    assert time.perf_counter() - start < 5
    message = str(caught.value)
    assert "\n" not in message and message.startswith("executor dask: cannot reach the scheduler at "
                                                      "tcp://127.0.0.1:1 within 0.5 s")


@pytest.fixture
def not_a_scheduler():
    """``serve(answer)``: the address of a local server of another kind — it accepts connections and sends
    ``answer`` (bytes) or, for None, nothing at all, as an HTTP server waits for its request."""
    import socket
    import threading

    servers = []

    def serve(answer: bytes | None) -> str:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def accept() -> None:
            with contextlib.suppress(OSError):
                while True:
                    connection, _ = server.accept()
                    servers.append(connection)
                    if answer is not None:
                        connection.sendall(answer)

        threading.Thread(target=accept, daemon=True).start()
        return f"tcp://127.0.0.1:{server.getsockname()[1]}"

    yield serve
    for server in servers:
        server.close()


@pytest.mark.parametrize("answer", [None, b"SSH-2.0-OpenSSH_9.6\r\n" * 4])
def test_a_server_of_another_kind_is_one_line_within_the_timeout(distributed, not_a_scheduler, answer):
    """Dask's own client would wait forever for a silent server's handshake, and read an SSH banner as the
    length of a frame of exabytes (MemoryError)."""
    import time

    address = not_a_scheduler(answer)
    start = time.perf_counter()
    with pytest.raises(ExecutorError) as caught:
        executors.open_executor(f"dask:{address}", timeout=0.5)
    assert time.perf_counter() - start < 0.5 + executors.HANDSHAKE_GRACE + 2
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"executor dask: {address} is not a Dask scheduler (something ")
    assert message.endswith("the scheduler's port is the one `dask scheduler` prints, 8786 by default (8787 is its "
                            "dashboard)")


def test_malformed_addresses_and_scheduler_files(distributed, tmp_path):
    for address, problem in (("tcp://node17", "missing port number"), ("tcp://a:b:c", "invalid address")):
        with pytest.raises(UsageError, match=f"not a scheduler address like tcp://host:8786 \\({problem}"):
            executors.open_executor(f"dask:{address}")
    for content in ('{"id": "Scheduler-1"}', "[1]", "not json"):
        (tmp_path / "scheduler.json").write_text(content)
        with pytest.raises(ExecutorError, match=r"scheduler.json is not a scheduler file \(.*; dask scheduler "):
            executors.open_executor(f"dask:{tmp_path / 'scheduler.json'}")


# ---------------------------------------------------------------- reading


@pytest.mark.parametrize("locations", [True, False])
def test_a_cube_study_read_on_dask_equals_in_process(study, dask, locations):
    here = pmkit.read(study, locations=locations)
    there = pmkit.read(study, locations=locations, executor=dask)
    assert experiment_differences(here, there) == []
    assert (here.locations is None) == (not locations)


def test_a_task_reduces_over_locations_when_they_are_not_kept(study):
    """What travels back from a worker: the decoded run, one value per call path when the locations
    are not kept — 8 locations here, 8 times fewer bytes of values."""
    file = sorted(study.glob("*.p8.r1/profile.cubex"))[0]
    whole = load_run(file, None, False, Limits())
    reduced = load_run(file, None, False, Limits(), "mean")
    assert {m.shape for m in whole.values.values()} == {(len(whole.paths), 8)}
    assert {m.shape for m in reduced.values.values()} == {(len(whole.paths),)}
    np.testing.assert_array_equal(reduced.values["time"], whole.values["time"].mean(axis=1))
    assert len(pickle.dumps(reduced)) < len(pickle.dumps(whole)) / 3


def test_a_corrupt_run_is_skipped_with_the_same_message_on_dask(study, dask, tmp_path):
    broken = tmp_path / "study"
    shutil.copytree(study, broken)
    victim = sorted(broken.glob("*/profile.cubex"))[3]
    victim.write_bytes(victim.read_bytes()[:3000])
    here = pmkit.read(broken)
    there = pmkit.read(broken, executor=dask)
    assert [s for s, _ in here.provenance.skipped] == [str(victim)]
    assert experiment_differences(here, there) == []


def test_an_otf2_study_read_on_dask_equals_in_process(tmp_path, dask):
    pytest.importorskip("otf2")
    from pmkit.testing.trace_programs import late_sender_study

    folder = tmp_path / "traces"
    late_sender_study(folder, processes=(2, 4), repetitions=2, iterations=10)
    for events in (True, False):
        here = pmkit.read(folder, events=events, jobs=2)
        there = pmkit.read(folder, events=events, executor=dask)
        assert experiment_differences(here, there) == []
    # a run with an event file missing is skipped with the same message (a cut one is not used here: OTF2
    # may read past its end into whatever its buffer holds, and say one thing or another)
    sorted(folder.glob("*.p4.r2/traces/*.evt"))[0].unlink()
    here, there = pmkit.read(folder), pmkit.read(folder, executor=dask)
    assert len(here.provenance.skipped) == 1 and experiment_differences(here, there) == []


def test_errors_come_back_whole_from_another_process():
    error = InputError("/study/" + "x" * 300, "bad " * 400, line=3, member="m" * 300)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is InputError and str(again) == str(error) and again.__dict__ == error.__dict__


# ---------------------------------------------------------------- modeling


@pytest.mark.parametrize(("parameters", "size"), [(1, 40), (1, 1), (2, 40), (2, 3)])
def test_models_in_chunks_on_dask_equal_one_batch_in_process(chunked, dask, monkeypatch, parameters, size):
    """Every model to the last bit, whatever the chunks: a series' model depends on its own values only."""
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", size)
    monkeypatch.setattr(modelchunks, "TASKS_PER_WORKER", 10_000)
    experiment = executor_cases.experiment(90 if parameters == 1 else 50, parameters)
    here = pmkit.model(experiment)
    tasks = []
    with progress.listening(tasks.append):
        there = pmkit.model(experiment, executor=dask)
    assert any(e.description.startswith(f"modeling {len(here)} series in ") for e in tasks), "went out in chunks"
    assert model_differences(here, there) == []
    assert sum(m.ok and not m.function.is_constant for m in here) > len(here) / 3  # type: ignore[union-attr]
    assert parameters == 2 or sum(bool(m.outliers) for m in here) >= 5
    assert any(f.exponent < 0 for m in here if m.ok for t in m.function.terms  # falling laws among them
               for f in t.factors)  # type: ignore[union-attr]


@pytest.mark.parametrize(("parameters", "size"), [(1, 1), (1, 40), (2, 1), (2, 7)])
def test_segmented_models_in_chunks_equal_one_batch_in_process(chunked, dask, monkeypatch, parameters, size):
    """Laws that change at a threshold: segments, change point and its interval to the last bit."""
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", size)
    monkeypatch.setattr(modelchunks, "TASKS_PER_WORKER", 10_000)
    experiment = executor_cases.changing((60 if size == 1 else 120) if parameters == 1 else 30, parameters)
    here = pmkit.model(experiment)
    assert model_differences(here, pmkit.model(experiment, executor=dask)) == []
    assert sum(m.segmented for m in here) > len(here) / 4
    assert parameters == 1 or {m.change_point.parameter for m in here if m.segmented} == {"p"}  # type: ignore[union-attr]


def test_the_segmented_example_study_in_chunks_equals_in_process(chunked, dask, monkeypatch, tmp_path):
    from pmkit.testing import segmented_study

    monkeypatch.setattr(modelchunks, "MIN_SERIES", 2)
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", 1)
    experiment = pmkit.read(segmented_study.write(tmp_path / "segmented.txt"))
    here = pmkit.model(experiment)
    assert {m.callpath for m in here if m.segmented} == set(segmented_study.CHANGES)
    assert model_differences(here, pmkit.model(experiment, executor=dask)) == []


def test_models_under_a_prior_in_chunks_equal_in_process(chunked, dask):
    from pmkit.constraints import Constraint

    experiment = executor_cases.experiment(70, 2, seed=8)
    paths = experiment.callpaths.paths()
    constraints = {path: Constraint(constant=True) if i % 3 == 0 else Constraint(allowed=frozenset({"p"}))
                   for i, path in enumerate(paths) if i % 2}
    here = pmkit.model(experiment, constraints=constraints)
    assert model_differences(here, pmkit.model(experiment, constraints=constraints, executor=dask)) == []


def test_small_batches_local_engines_and_undeclared_modelers_model_in_one_call(dask, monkeypatch):
    from pmkit.testing.plugins import isolated_registry

    class Mean:
        """A modeler that does not declare ``independent_series``."""

        name = "mean"
        description = "the mean"
        options = ()

        def model(self, batch):
            values = batch.reduced("mean")
            return pmkit.ModelSet(batch.parameters, [
                pmkit.Model(cp, m, pmkit.Function(batch.parameters, float(np.nanmean(v))))
                for cp, m, v in zip(batch.callpaths, batch.metrics, values, strict=True)])

    class Registering:
        @pmkit.hookimpl
        def pmkit_register_modelers(self, register):
            register(Mean())

    sent = []
    monkeypatch.setattr(DaskExecutor, "map", lambda self, function, tasks, **kw: sent.append(len(tasks)) or [])
    experiment = executor_cases.experiment(30, 1)
    pmkit.model(experiment, executor=dask)  # 62 series, below MIN_SERIES
    monkeypatch.setattr(modelchunks, "MIN_SERIES", 10)
    pmkit.model(experiment, executor=Executor())  # in-process
    registry = isolated_registry(Registering())
    assert len(pmkit.model(experiment, "mean", registry=registry, executor=dask)) == 62
    assert not modelchunks.independent_series(registry.entry("modeler", "mean"))
    assert sent == []
    assert modelchunks.independent_series(registry.entry("modeler", "refining"))
    assert modelchunks.independent_series(registry.entry("modeler", "multiparam"))


def test_chunk_bounds_cover_the_batch_once():
    for count, workers in ((10_000, 1), (10_001, 2), (123_457, 16), (40_000, 2)):
        bounds = modelchunks.chunk_bounds(count, workers)
        assert bounds[0][0] == 0 and bounds[-1][1] == count
        assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
        assert all(stop - start >= min(modelchunks.CHUNK_SERIES, count) for start, stop in bounds[:-1])
    assert len(modelchunks.chunk_bounds(400_000, 2)) == 2 * modelchunks.TASKS_PER_WORKER


def test_shared_real_studies_read_and_modeled_on_dask_equal_in_process(shared_data, chunked, dask, monkeypatch):
    """Every model's function and quality, for the real Cube and OTF2 studies and Extra-P's text inputs,
    each batch cut into chunks of 3 series."""
    monkeypatch.setattr(modelchunks, "MIN_SERIES", 2)
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", 3)
    inputs = [shared_data / "cube" / "extrap-mm-single", shared_data / "cube" / "extrap-simple-threaded",
              *sorted((shared_data / "extrap-formats" / "text").glob("*.txt"))]
    try:
        import otf2  # noqa: F401

        inputs.append(shared_data / "otf2" / "ping-pong-otf2-papi")
    except ImportError:
        pass
    compared, chunked_inputs, several = 0, 0, 0
    for path in inputs:
        if not path.exists():
            continue
        here = pmkit.read(path)
        there = pmkit.read(path, executor=dask)
        assert experiment_differences(here, there) == [], path
        models_here = pmkit.model(here)
        tasks: list[str] = []
        with progress.listening(lambda event, tasks=tasks: tasks.append(event.description)):
            models_there = pmkit.model(there, executor=dask)
        assert model_differences(models_here, models_there) == [], path
        compared += len(models_here)
        chunked_inputs += any(" chunks on dask" in text for text in tasks)
        several += len(models_here) >= 2
    assert compared > 100 and chunked_inputs == several >= 12


# ---------------------------------------------------------------- the command line


def test_show_and_model_on_a_scheduler_print_what_they_print_in_process(pmkit_cli, study, dask):
    address = dask.client.scheduler.address
    for command in (["show", study], ["show", study, "--json"], ["model", study, "--metric", "time"],
                    ["compare", study, study, "--markdown"]):
        here = pmkit_cli(*command)
        there = pmkit_cli(*command, "--executor", f"dask:{address}")
        assert here.returncode == there.returncode == 0, there.stderr
        assert there.stdout == here.stdout
        first, *rest = there.stderr.splitlines()
        assert executor_cases.reached_line(address).fullmatch(first) and rest == here.stderr.splitlines()


def test_dask_without_an_address_starts_a_local_cluster_and_says_so(pmkit_cli, study, monkeypatch, distributed):
    started = []

    def in_threads(distributed, workers, processes, keep_malloc):
        started.append(workers)
        return distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0")

    monkeypatch.setattr(executors, "_local_cluster", in_threads)
    result = pmkit_cli("show", study, "--executor", "dask")
    assert result.returncode == 0 and result.stdout == pmkit_cli("show", study).stdout
    assert started == [executors.cpu_count()]
    said = [line for line in result.stderr.splitlines() if line.startswith("executor:")]
    assert len(said) == 1 and re.fullmatch(r"executor: dask — a LocalCluster of 1 single-threaded worker \(local "
                                           r"processes\), started for this run; (no dashboard \(install bokeh for "
                                           r"one\)|dashboard http://\S+)", said[0]), result.stderr


def test_an_unreachable_scheduler_leaves_out_untouched(pmkit_cli, study, tmp_path, distributed):
    out = tmp_path / "report.txt"
    out.write_text("the last good report\n")
    result = pmkit_cli("show", study, "--executor", "dask:tcp://127.0.0.1:1", "--scheduler-timeout", "0.3",
                       "--out", out)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: executor dask: cannot reach the scheduler at tcp://127.0.0.1:1 within 0.3 s (Timed out trying to "
        "connect to tcp://127.0.0.1:1 after 0.3 s); is `dask scheduler` running there?"]
    assert out.read_text() == "the last good report\n" and list(tmp_path.iterdir()) == [out]
    for bad in (["--executor", "nope"], ["--scheduler-timeout", "-1"]):
        result = pmkit_cli("model", study, *bad)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr


def test_a_failing_task_leaves_out_untouched(pmkit_cli, study, tmp_path, dask, monkeypatch):
    out = tmp_path / "models.json"
    out.write_text("{}\n")

    def lost(self, function, tasks, **kw):
        raise ExecutorError("executor dask: the cluster dropped the tasks of reading Cube files (lost); did the "
                            "scheduler stop?")

    monkeypatch.setattr(DaskExecutor, "map", lost)
    result = pmkit_cli("model", study, "--json", "--out", out, "--executor", f"dask:{dask.client.scheduler.address}")
    assert result.returncode == 1 and "the cluster dropped the tasks" in result.stderr
    assert out.read_text() == "{}\n" and list(tmp_path.iterdir()) == [out]
