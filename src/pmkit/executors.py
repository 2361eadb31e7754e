"""Where pmkit's independent tasks run: in this process, in a local process pool, or on a Dask cluster.

Readers and the SDK hand out work through one call and never learn which engine runs it::

    results = executors.current().map(load_run, [(file, options) for file in files],
                                      description="reading Cube files", threads=4)

``map`` calls ``function(*task)`` for every task and returns the results in task order; it reports
progress through :mod:`pmkit.progress` (one unit per finished task) and raises what a task raised
(pmkit's errors come back whole from other processes).  An engine that fails — a Dask scheduler that
cannot be reached, workers that died on a task more often than Dask retries it, a broken process
pool — is an :class:`~pmkit.errors.ExecutorError` in one line.

Engines, named as ``--executor`` names them (:func:`open_executor`):

* ``local`` (the default): in this process; ``threads`` lets a reader decode on a few threads, as
  it always has.
* ``processes[:N]``: a pool of N local worker processes (default: one per core).
* ``dask``: a ``distributed.LocalCluster`` of one single-threaded worker process per core, started
  for the run and stopped after it; ``dask:ADDRESS`` (``tcp://host:8786``) connects to a running
  scheduler, ``dask:FILE.json`` to the one a ``--scheduler-file`` names.  Dask retries the tasks of
  a worker that dies.

Tasks and their results travel between processes by pickle, so task functions are module-level
and their results compact (arrays, not files); the workers need the same pmkit (and the plugins
the work uses) installed, and must see input files at the same paths.  ``dask`` and ``distributed``
are imported here only, when a Dask engine is opened (``pip install 'pmkit-hpc[dask]'``).

The SDK makes an engine current for the duration of a call (:func:`using`), so a reader calls
:func:`current` rather than taking an argument: third-party readers that never call it simply run
in-process.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pmkit import progress
from pmkit.errors import ExecutorError, UsageError

DEFAULT_TIMEOUT = 5.0
"""Seconds to wait for a Dask scheduler to answer before giving up (``--scheduler-timeout``)."""

MISSING_DASK = "the dask executor needs dask and distributed, which are not installed: pip install 'pmkit-hpc[dask]'"

SPECS = "local, processes[:N], dask or dask:ADDRESS"
"""How ``--executor`` values are spelled, for messages."""

Task = Sequence[Any]
"""The arguments of one call of a mapped function."""


def cpu_count() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class Executor:
    """An engine that runs independent tasks; use it as a context manager (or call :meth:`close`).

    ``remote`` is True when tasks run in other processes (their arguments and results are pickled),
    which is when splitting work into more tasks pays; ``workers`` is how many run at once there.
    ``summary`` is one line for a user saying what was started or reached (empty for ``local``).
    """

    name = "local"
    remote = False
    summary = ""

    @property
    def workers(self) -> int:
        return 1

    def map(self, function: Callable[..., Any], tasks: Sequence[Task], *, description: str,
            threads: int = 1) -> list[Any]:
        """``[function(*task) for task in tasks]``, run by this engine, with progress per finished task.

        ``threads`` is how many tasks the in-process engine may run at once on threads (other engines
        run as many as they have workers).  The first task that raises stops the map: the others
        are cancelled and its exception is raised.
        """
        tasks = list(tasks)
        with progress.task(description, total=len(tasks)) as reporting:
            if threads <= 1 or len(tasks) <= 1:
                results = []
                for task in tasks:
                    results.append(function(*task))
                    reporting.advance()
                return results
            from concurrent.futures import ThreadPoolExecutor

            results = []
            with ThreadPoolExecutor(max_workers=min(threads, len(tasks)), thread_name_prefix="pmkit") as pool:
                for result in pool.map(lambda task: function(*task), tasks):
                    results.append(result)
                    reporting.advance()
            return results

    def close(self) -> None:
        """Stop what this engine started (a process pool, a local cluster); a no-op for ``local``."""

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}, {_count(self.workers, 'worker')}>"


LocalExecutor = Executor
"""The in-process engine (``local``), the default."""


class ProcessExecutor(Executor):
    """``processes[:N]``: a pool of local worker processes (forkserver: a clean process, not a fork of
    this one with its threads)."""

    name = "processes"
    remote = True

    def __init__(self, processes: int | None = None) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self._workers = processes or cpu_count()
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        self._pool = ProcessPoolExecutor(max_workers=self._workers, mp_context=multiprocessing.get_context(method))
        self.summary = ("processes — a pool of "
                        f"{_count(self._workers, 'local worker process', 'local worker processes')}")

    @property
    def workers(self) -> int:
        return self._workers

    def map(self, function: Callable[..., Any], tasks: Sequence[Task], *, description: str,
            threads: int = 1) -> list[Any]:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        tasks = list(tasks)
        futures = {self._pool.submit(function, *task): i for i, task in enumerate(tasks)}
        results: list[Any] = [None] * len(tasks)
        with progress.task(description, total=len(tasks)) as reporting:
            try:
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    reporting.advance()
            except BrokenProcessPool as exc:
                raise ExecutorError(f"executor processes: a worker process died while {description} ({exc}); "
                                    "out of memory? From a script, start the pool under "
                                    "`if __name__ == \"__main__\":` (each worker imports the script)") from None
            finally:
                for future in futures:
                    future.cancel()
        return results

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor(Executor):
    """``dask[:ADDRESS]``: tasks on a Dask cluster — a LocalCluster started here, a running scheduler,
    or a ``distributed.Client`` the caller made (then left open on :meth:`close`)."""

    name = "dask"
    remote = True

    def __init__(self, address: str | None = None, *, timeout: float = DEFAULT_TIMEOUT, client: Any = None,
                 workers: int | None = None, processes: bool = True, keep_malloc: bool = True) -> None:
        distributed = import_distributed()
        self._cluster = None
        self._owned = client is None
        if client is not None:
            self.client = client
            self.summary = f"dask — {client.scheduler.address}, {_count(self.workers, 'worker')}"
            return
        if address is None:
            self._cluster = _local_cluster(distributed, workers or cpu_count(), processes, keep_malloc)
            self.client = distributed.Client(self._cluster, timeout=timeout)
            where = "threads of this process" if not processes else "local processes"
            self.summary = (f"dask — a LocalCluster of {_count(self.workers, 'single-threaded worker')} ({where}), "
                            f"started for this run; {_dashboard(self.client)}")
            return
        self.client = _connect(distributed, address, timeout)
        self.summary = f"dask — {address}, {_count(self.workers, 'worker')}; {_dashboard(self.client)}"
        _check_versions(self.client, address)

    @property
    def workers(self) -> int:
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def map(self, function: Callable[..., Any], tasks: Sequence[Task], *, description: str,
            threads: int = 1) -> list[Any]:
        from concurrent.futures import CancelledError

        from distributed import KilledWorker, as_completed

        tasks = list(tasks)
        if not tasks:
            with progress.task(description, total=0):
                return []
        with warnings.catch_warnings():
            # a chunk of series travels inside its task (not scattered: scattered data dies with its worker,
            # and Dask could not run the task again elsewhere), so a batch's graph is as large as its values
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            futures = self.client.map(function, *zip(*tasks, strict=True), pure=False)
        position = {future.key: i for i, future in enumerate(futures)}
        results: list[Any] = [None] * len(tasks)
        with progress.task(description, total=len(tasks)) as reporting:
            try:
                for future, result in as_completed(futures, with_results=True):  # results gathered in batches
                    results[position[future.key]] = result
                    reporting.advance()
            except KilledWorker as exc:
                raise ExecutorError(f"executor dask: a task of {description} ended the worker running it every "
                                    f"time Dask retried it ({_first_line(exc)}); out of memory?") from None
            except CancelledError as exc:
                raise ExecutorError(f"executor dask: the cluster dropped the tasks of {description} "
                                    f"({_first_line(exc)}); did the scheduler stop?") from None
            finally:
                self.client.cancel(futures)
        return results

    def close(self) -> None:
        if not self._owned:
            return
        self.client.close()
        if self._cluster is not None:
            self._cluster.close()


def import_distributed() -> Any:
    """The ``distributed`` package, or a UsageError saying what to install."""
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise UsageError(MISSING_DASK) from None
    return distributed


KEEP_MALLOC = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
"""Dask config for the workers pmkit starts: glibc's own memory thresholds, not Dask's
``MALLOC_TRIM_THRESHOLD_=65536``.  Setting it fixes glibc's mmap threshold, so every large array
becomes a fresh mmap whose pages fault in one by one: decoding one run of the benchmark study
(bench/dask_scaling.py, 2,000 call paths × 20 metrics × 64 locations) took a median 0.069 s in a
plain process and 0.22 s with it set (a loaded 2-core machine).  Clusters started by hand get the
same from a Dask config file that sets it to ``null`` (docs/cluster.md); the environment variable
``DASK_DISTRIBUTED__NANNY__...`` cannot, as Dask lowercases the key it names."""


def _local_cluster(distributed: Any, workers: int, processes: bool, keep_malloc: bool = True) -> Any:
    """A LocalCluster of single-threaded workers (with :data:`KEEP_MALLOC` unless not ``keep_malloc``,
    for benchmarks); its dashboard on port 8787,
    or any free port when that one is taken (Dask's warning about it is not passed on: the summary
    line names the port)."""
    import logging

    import dask

    started = _clusters(distributed)
    before = set(started)
    try:
        with warnings.catch_warnings(), dask.config.set(KEEP_MALLOC if keep_malloc else {}):
            warnings.filterwarnings("ignore", message="Port .* is already in use", category=UserWarning)
            return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                            dashboard_address=":8787" if _has_bokeh() else ":0",
                                            silence_logs=logging.ERROR)
    except KeyboardInterrupt:
        _abandon([cluster for cluster in list(started) if cluster not in before], started)
        raise
    except Exception as exc:
        raise ExecutorError(f"executor dask: the LocalCluster did not start ({_first_line(exc)})") from None


def _clusters(distributed: Any) -> Any:
    """The set in which ``distributed`` keeps every cluster it has started (a WeakSet; empty if it has none)."""
    return getattr(getattr(distributed, "SpecCluster", None), "_instances", set())


def _abandon(clusters: Sequence[Any], started: Any) -> None:
    """Close clusters whose start Ctrl-C interrupted, quietly, and drop them from ``started``.

    Left there, distributed's exit handler closed them and printed a traceback (``AssertionError:
    Status.init``, a worker not yet started) after pmkit's ``interrupted``; the start's own tasks, ended with
    it, are logged by asyncio as "Task exception was never retrieved" (``Nanny failed to start``) unless its
    logger is quietened — the run is ending, and Ctrl-C is not an error to report.
    """
    import logging

    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    for cluster in clusters:
        with contextlib.suppress(Exception):
            cluster.close(timeout=2)
        started.discard(cluster)


def _connect(distributed: Any, address: str, timeout: float) -> Any:
    """A client of the scheduler at ``address`` (or named by a scheduler file), within ``timeout`` seconds."""
    import logging

    is_file = address.endswith(".json")
    if is_file and not os.path.isfile(address):
        raise ExecutorError(f"executor dask: no scheduler file {address} (dask scheduler --scheduler-file writes it)")
    target = _scheduler_of_file(address) if is_file else address
    try:
        scheme, location = distributed.comm.parse_address(target)
        if scheme in ("tcp", "tls"):
            distributed.comm.parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--executor dask:{address}: not a scheduler address like tcp://host:8786 "
                         f"({_first_line(exc)})") from None
    quiet = logging.getLogger("distributed")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # the retries' log lines; the one-line error below says it all
    try:
        _shake_hands(target, timeout)
        if is_file:
            return distributed.Client(scheduler_file=address, timeout=timeout)
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ExecutorError(f"executor dask: cannot reach the scheduler at {address} within {timeout:g} s "
                            f"({_first_line(exc)}); is `dask scheduler` running there?") from None
    except _NotAScheduler as exc:
        raise ExecutorError(f"executor dask: {target} is not a Dask scheduler ({exc}); the scheduler's port is "
                            "the one `dask scheduler` prints, 8786 by default (8787 is its dashboard)") from None
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--executor dask:{address}: not a scheduler address like tcp://host:8786 "
                         f"({_first_line(exc)})") from None
    finally:
        quiet.setLevel(level)


class _NotAScheduler(Exception):
    """What answered at a scheduler's address does not speak Dask's protocol."""


HANDSHAKE_GRACE = 0.5
"""Seconds beyond the timeout that :func:`_shake_hands` waits for an answer once connected, so that a
scheduler that is merely unreachable is reported as such by Dask's own connect, which gives up at the
timeout."""


def _shake_hands(address: str, timeout: float) -> None:
    """Connect to ``address`` and exchange Dask's handshake, within ``timeout`` (+ :data:`HANDSHAKE_GRACE`)
    seconds, before a Client tries.

    Dask's connect bounds the TCP connection but not the handshake that follows: a server of another
    kind on that port — the dashboard's HTTP server, sshd — makes a Client wait forever, or answers
    bytes that Dask reads as the length of a frame of exabytes (a MemoryError).  Raises OSError when
    nothing can be reached, :class:`_NotAScheduler` when something else answers.
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from distributed.comm import connect
    from distributed.security import Security

    async def shake() -> None:
        connection = connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            comm = await asyncio.wait_for(connection, timeout + HANDSHAKE_GRACE)
        except TimeoutError:
            raise _NotAScheduler(f"something accepted the connection but did not answer as one within "
                                f"{timeout + HANDSHAKE_GRACE:g} s") from None
        except OSError:
            raise
        except Exception as exc:
            raise _NotAScheduler(f"something answered, not in Dask's protocol: {_first_line(exc)}") from None
        await comm.close()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pmkit-connect") as pool:  # a notebook's own loop
        pool.submit(asyncio.run, shake()).result()                                    # may be running here


def _scheduler_of_file(path: str) -> str:
    """The address a ``--scheduler-file`` names."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            address = json.load(handle)["address"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        problem = "it names no address" if isinstance(exc, (KeyError, TypeError)) else _first_line(exc)
        raise ExecutorError(f"executor dask: {path} is not a scheduler file ({problem}; dask scheduler "
                            "--scheduler-file writes one)") from None
    if not isinstance(address, str):
        raise ExecutorError(f"executor dask: {path} is not a scheduler file (it names no address; dask scheduler "
                            "--scheduler-file writes one)")
    return address


def _check_versions(client: Any, address: str) -> None:
    """Refuse workers without pmkit or with another version of it: they could not run the tasks, or
    would compute other results."""
    from pmkit.distribution import version

    mine = version()
    try:
        theirs = client.run(_pmkit_version)
    except Exception as exc:  # a worker without pmkit cannot even unpickle the function
        raise ExecutorError(f"executor dask: the workers at {address} cannot run pmkit ({_first_line(exc)}); "
                            "install pmkit-hpc in the workers' environment") from None
    wrong = {worker: found for worker, found in theirs.items() if found != mine}
    if wrong:
        worker, found = next(iter(wrong.items()))
        raise ExecutorError(f"executor dask: worker {worker} has pmkit {found}, this process {mine}; install the "
                            f"same version on every worker ({len(wrong)} of {len(theirs)} differ)")


def _pmkit_version() -> str:
    from pmkit.distribution import version

    return version()


def _has_bokeh() -> bool:
    import importlib.util

    return importlib.util.find_spec("bokeh") is not None


def _count(number: int, word: str, plural: str | None = None) -> str:
    """``1 worker``, ``2 workers``: the executor summaries name their workers in good English."""
    return f"{number} {word if number == 1 else plural or word + 's'}"


def _dashboard(client: Any) -> str:
    if not _has_bokeh():
        return "no dashboard (install bokeh for one)"
    return f"dashboard {client.dashboard_link}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def open_executor(spec: str | Executor | Any | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> Executor:
    """The engine ``spec`` names (``local``, ``processes[:N]``, ``dask``, ``dask:ADDRESS``), started or
    reached now; an :class:`Executor` or a ``distributed.Client`` is used as it is.

    Close what this returns (``with open_executor("dask") as executor: ...``).  A malformed spec or
    missing dask is a UsageError; a scheduler that does not answer within ``timeout`` seconds an
    ExecutorError.
    """
    if spec is None:
        return Executor()
    if isinstance(spec, Executor):
        return spec
    if not isinstance(spec, str):
        if type(spec).__module__.split(".")[0] == "distributed" and hasattr(spec, "submit"):
            return DaskExecutor(client=spec)
        raise UsageError(f"executor must be one of {SPECS}, an Executor or a distributed.Client, not "
                         f"{type(spec).__name__}")
    kind, _, rest = spec.strip().partition(":")
    if kind == "local" and not rest:
        return Executor()
    if kind == "processes":
        if rest and not (rest.isdigit() and int(rest) > 0):
            raise UsageError(f"--executor processes:N takes a positive number of processes, got {rest!r}")
        return ProcessExecutor(int(rest) if rest else None)
    if kind == "dask":
        if timeout <= 0:
            raise UsageError(f"the scheduler timeout must be a positive number of seconds, got {timeout:g}")
        return DaskExecutor(rest or None, timeout=timeout)
    raise UsageError(f"unknown executor {spec!r}; choose {SPECS}")


_current: ContextVar[Executor | None] = ContextVar("pmkit_executor", default=None)


def current() -> Executor:
    """The engine of the SDK call running now (in-process when none was chosen)."""
    return _current.get() or Executor()


@contextmanager
def using(spec: str | Executor | Any | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> Iterator[Executor]:
    """Make ``spec``'s engine current inside the block; one opened here from a name is closed after it.

    ``None`` keeps the engine already current (an SDK call inside another uses the outer one's).
    """
    if spec is None:
        yield current()
        return
    engine = open_executor(spec, timeout=timeout)
    token = _current.set(engine)
    try:
        yield engine
    finally:
        _current.reset(token)
        if engine is not spec:
            engine.close()
