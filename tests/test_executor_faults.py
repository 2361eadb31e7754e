"""Faults on a real Dask cluster: a worker process killed in the middle of a run loses nothing — Dask runs its
tasks again elsewhere and the result equals the in-process one; tasks, arguments and results cross real
process boundaries here (a LocalCluster of two worker processes, and a local process pool)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

pytest.importorskip("distributed")

import distributed

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


def test_a_worker_killed_mid_read_is_replaced_and_the_experiment_is_the_same(cluster, study):
    client = cluster.client
    killed: list[tuple[str, int]] = []

    def kill_the_busiest_worker(event: progress.ProgressEvent) -> None:
        if killed or event.finished or event.completed < 1:
            return
        processing = client.processing()
        busiest = max(processing, key=lambda worker: len(processing[worker]))
        pid = client.run(os.getpid, workers=[busiest])[busiest]
        os.kill(pid, signal.SIGKILL)
        killed.append((busiest, len(processing[busiest])))

    with progress.listening(kill_the_busiest_worker):
        there = pmkit.read(study, executor=cluster)
    assert killed and killed[0][1] > 0, "a worker died with tasks of the run in hand"
    assert experiment_differences(pmkit.read(study), there) == []
    client.wait_for_workers(2, timeout=30)  # the nanny restarted it
    assert killed[0][0] not in client.scheduler_info()["workers"]


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
    assert model_differences(pmkit.model(here), models) == []
