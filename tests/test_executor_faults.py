"""Faults on a real Dask cluster: a worker process killed in the middle of a run (reading or modeling) loses
nothing — Dask runs its tasks again elsewhere and the result equals the in-process one; a corrupt file read
on a worker is reported and skipped as in-process; tasks, arguments, errors and results cross real process
boundaries here (a LocalCluster of two worker processes, and a local process pool)."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed", reason="the Dask executor needs dask and distributed: pip install 'pmkit-hpc[dask]'")

import distributed
import executor_cases

import pmkit
from pmkit import modelchunks, progress
from pmkit.executors import DaskExecutor, ProcessExecutor
from pmkit.testing import example_study
from pmkit.testing.identity import experiment_differences, model_differences


@pytest.fixture(scope="module", autouse=True)
def numpy_kernels():
    """The numpy kernels here and in the workers (started with this environment): loading numba's compiled
    code in every fresh worker process would cost seconds; the compiled path is compared in test_executors."""
    from pmkit.fitting.kernels import NO_NUMBA_ENV

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(NO_NUMBA_ENV, "1")
        yield


@pytest.fixture(scope="module")
def cluster(numpy_kernels) -> DaskExecutor:
    local = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = distributed.Client(local)
    try:
        yield DaskExecutor(client=client)
    finally:
        client.close()
        local.close()


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    example_study.generate(folder, repetitions=5)  # 25 runs
    return folder


class WorkerKiller:
    """A progress listener that kills (SIGKILL) the worker process with the most tasks in hand once the
    first task of the work named ``stage`` has finished — a node lost in the middle of a run."""

    def __init__(self, client: distributed.Client, stage: str) -> None:
        self.client = client
        self.stage = stage
        self.killed: list[tuple[str, int]] = []  # (worker, tasks it held)

    def __call__(self, event: progress.ProgressEvent) -> None:
        if self.killed or event.finished or event.completed < 1 or not event.description.startswith(self.stage):
            return
        processing = self.client.processing()
        busiest = max(processing, key=lambda worker: len(processing[worker]))
        pid = self.client.run(os.getpid, workers=[busiest])[busiest]
        os.kill(pid, signal.SIGKILL)
        self.killed.append((busiest, len(processing[busiest])))

    def check(self) -> None:
        """A worker died with tasks of the run in hand, and its nanny started a new one."""
        assert self.killed and self.killed[0][1] > 0, "a worker died with tasks of the run in hand"
        self.client.wait_for_workers(2, timeout=30)
        assert self.killed[0][0] not in self.client.scheduler_info()["workers"]


def test_a_worker_killed_mid_read_is_replaced_and_the_experiment_is_the_same(cluster, study):
    killer = WorkerKiller(cluster.client, "reading")
    with progress.listening(killer):
        there = pmkit.read(study, executor=cluster)
    killer.check()
    assert experiment_differences(pmkit.read(study), there) == []


def test_a_worker_killed_mid_modeling_is_replaced_and_the_models_are_the_same(cluster, monkeypatch):
    """Thirteen chunks of 100 series, a worker killed once the first chunk came back: its chunks are
    modeled again on the other worker (or its replacement), every model as in-process."""
    monkeypatch.setattr(modelchunks, "MIN_SERIES", 10)
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", 100)
    monkeypatch.setattr(modelchunks, "TASKS_PER_WORKER", 10_000)
    experiment = executor_cases.experiment(600, 1, seed=11, missing=0.0)
    killer = WorkerKiller(cluster.client, "modeling")
    with progress.listening(killer):
        there = pmkit.model(experiment, executor=cluster)
    killer.check()
    assert model_differences(pmkit.model(experiment), there) == []


def test_show_on_worker_processes_prints_what_it_prints_in_process_a_corrupt_run_included(cluster, study, tmp_path,
                                                                                          pmkit_cli):
    """The command a user runs, against the cluster's address: the same view, the same one line naming the
    corrupt file (raised on a worker, pickled back), and the executor's line."""
    broken = tmp_path / "study"
    shutil.copytree(study, broken)
    victim = sorted(broken.glob("*/profile.cubex"))[7]
    victim.write_bytes(victim.read_bytes()[:2000])
    address = cluster.client.scheduler.address
    here = pmkit_cli("show", broken)
    there = pmkit_cli("show", broken, "--executor", f"dask:{address}")
    assert here.returncode == there.returncode == 0 and there.stdout == here.stdout
    skipped = [line for line in here.stderr.splitlines() if str(victim) in line]
    assert len(skipped) == 1 and "skipped" in skipped[0] + here.stdout, here.stderr
    first, *rest = there.stderr.splitlines()
    assert executor_cases.reached_line(address).fullmatch(first) and rest == here.stderr.splitlines()


def test_models_in_chunks_on_worker_processes_equal_in_process(cluster, study, monkeypatch):
    """Chunks pickled to other processes, modeled there, their models pickled back."""
    monkeypatch.setattr(modelchunks, "MIN_SERIES", 10)
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", 8)
    experiment = pmkit.read(study)
    assert len(experiment.callpaths) * len(experiment.metrics) >= 40
    assert model_differences(pmkit.model(experiment), pmkit.model(experiment, executor=cluster)) == []


def test_a_process_pool_reads_and_models_as_in_process(study, monkeypatch):
    monkeypatch.setattr(modelchunks, "MIN_SERIES", 10)
    monkeypatch.setattr(modelchunks, "CHUNK_SERIES", 8)
    with ProcessExecutor(2) as pool:
        there = pmkit.read(study, locations=False, executor=pool)
        models = pmkit.model(there, executor=pool)
    here = pmkit.read(study, locations=False)
    assert experiment_differences(here, there) == []
    local = pmkit.model(here)
    assert model_differences(local, models) == []
    target = {name: 4 * float(max(here.points[:, k])) for k, name in enumerate(here.parameters)}
    _, low, high = local.predict(target)
    assert np.isfinite(low).any() and (low <= high).all()
    # chunks come back without their alternatives; the intervals are refitted here, the same as in-process
    assert np.array_equal(models.predict(target)[1], low, equal_nan=True)
    assert np.array_equal(models.predict(target)[2], high, equal_nan=True)


def test_a_dead_pool_worker_is_one_error_naming_the_likely_causes():
    """A worker that dies (here: exits at once; from a script without a main guard, each worker dies
    re-running the script) is an ExecutorError saying what to check, not a BrokenProcessPool traceback."""
    from pmkit.errors import ExecutorError

    with ProcessExecutor(1) as pool, pytest.raises(ExecutorError) as caught:
        assert pool.summary == "processes — a pool of 1 local worker process" and repr(pool).endswith(", 1 worker>")
        pool.map(os._exit, [(1,)], description="reading Cube files")
    message = str(caught.value)
    assert "a worker process died while reading Cube files" in message
    assert 'if __name__ == "__main__":' in message
