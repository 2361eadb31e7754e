"""Progress reporting: library code reports, listeners draw; nothing happens without a listener."""

from __future__ import annotations

import io
import threading

from pmkit import progress
from pmkit.ui.progress import Steps


def test_no_listener_is_a_no_op():
    with progress.task("quiet", total=3) as task:
        task.advance()
    assert task.completed == 0  # nobody listens: advancing is not even counted


def test_events_reach_the_listener_from_worker_threads():
    events = []
    with progress.listening(events.append), progress.task("work", total=40) as task:
        threads = [threading.Thread(target=lambda: [task.advance() for _ in range(10)]) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert events[0].completed == 0 and events[0].total == 40 and not events[0].finished
    assert max(e.completed for e in events) == 40
    assert events[-1].finished and len({e.task_id for e in events}) == 1


def test_listening_ends_with_the_block():
    events = []
    with progress.listening(events.append):
        progress.task("inside").finish()
    progress.task("outside").finish()
    assert {e.description for e in events} == {"inside"}


def test_steps_draws_reported_tasks_on_a_terminal_only():
    off = Steps(io.StringIO(), enabled=False)
    with off:
        with progress.task("reading", total=2) as task:
            task.advance()
    assert off._tasks == {}
    on = Steps(io.StringIO(), enabled=True)
    with on:
        with progress.task("reading", total=2) as task:
            task.advance()
            assert len(on._tasks) == 1
        assert on._tasks == {}  # the bar goes when the task ends
