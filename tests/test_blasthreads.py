"""One OpenBLAS thread while the alternatives are built (pmkit.fitting.blasthreads): set, restored, and the
same tables."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import pmkit
from pmkit.experiment import CallTree, Experiment, Metric
from pmkit.fitting import blasthreads
from pmkit.fitting.blasthreads import one_blas_thread


def _counts() -> list[int]:
    return [get() for get, _ in blasthreads.controls()]


def test_one_thread_within_and_the_count_restored_after() -> None:
    if not blasthreads.controls():
        pytest.skip("numpy is not linked to an OpenBLAS this process can see")
    before = _counts()
    with one_blas_thread():
        assert _counts() == [1] * len(before)
        with one_blas_thread():  # nested: still one, and the outer exit restores
            assert _counts() == [1] * len(before)
        assert _counts() == [1] * len(before)
    assert _counts() == before
    with pytest.raises(ValueError), one_blas_thread():
        raise ValueError("restored on the way out of an error too")
    assert _counts() == before


def test_entries_from_several_threads_restore_the_count_once_all_have_left() -> None:
    if not blasthreads.controls():
        pytest.skip("numpy is not linked to an OpenBLAS this process can see")
    before = _counts()
    inside, leave = threading.Barrier(3), threading.Event()
    seen = []

    def work() -> None:
        with one_blas_thread():
            inside.wait()
            leave.wait()
            seen.append(_counts())

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    inside.wait()
    assert _counts() == [1] * len(before)
    leave.set()
    for thread in threads:
        thread.join()
    assert seen == [[1] * len(before)] * 2
    assert _counts() == before


def _study(parameters: int, count: int) -> Experiment:
    rng = np.random.default_rng(21)
    if parameters == 1:
        points = np.array([2.0, 4, 8, 16, 32])[:, None]
        laws = 3 + rng.uniform(0.1, 5, (count, 1)) * points[:, 0] ** rng.choice([0.5, 1, 1.5, 2], (count, 1))
    else:
        points = np.array([(p, s) for p in (4.0, 8, 16, 32, 64) for s in (10.0, 20, 30, 40, 50)])
        laws = 2 + rng.uniform(0.1, 5, (count, 1)) * points[:, 0] ** rng.choice([0.5, 1], (count, 1)) * points[:, 1]
    values = laws * (1 + rng.uniform(-0.05, 0.05, laws.shape))
    tree = CallTree()
    for i in range(count):
        tree.add(f"s{i}")
    return Experiment(tuple("ps"[:parameters]), points, tree, (Metric("time"),), {"time": values[:, :, None]})


@pytest.mark.parametrize(("parameters", "count"), [(1, 4_000), (2, 400)])
def test_alternatives_built_on_one_thread_equal_those_built_on_all(parameters, count) -> None:
    uncertainty = pmkit.model(_study(parameters, count)).uncertainty
    every = np.ones(count, dtype=bool)
    one = uncertainty._build(every)  # within one_blas_thread
    assert blasthreads._depth == 0
    default = uncertainty._builder(every)  # on OpenBLAS's own thread count
    for field in ("alpha", "beta", "coef", "cov", "df", "weight"):
        np.testing.assert_array_equal(getattr(one, field), getattr(default, field))
    assert (one.weight.sum(axis=1) > 0).mean() > 0.9
