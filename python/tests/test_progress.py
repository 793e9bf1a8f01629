"""Progress reaches a Python callable while the run goes, with the GIL released."""

from __future__ import annotations

import threading
import time

import pytest
from tqdm import tqdm

import numaplace

# About half a second of simulation (3e7 operations): long enough for hundreds of progress
# calls and for another thread to run meanwhile.
LONG = {
    "workload": {"kind": "gups", "updates": 10_000_000, "working_set_bytes": 16_000_000},
    "report": {"per_page": False},
}


def test_progress_is_called_with_done_and_total_ending_at_the_run_s_operations() -> None:
    calls: list[tuple[int, int]] = []
    r = numaplace.run(LONG, progress=lambda done, total: calls.append((done, total)))
    assert len(calls) > 2
    assert all(done <= total for done, total in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert calls[-1] == (r.summary["ops"], r.summary["ops"])


def test_an_exception_raised_by_progress_is_raised_by_run() -> None:
    class Stop(Exception):
        pass

    def progress(done: int, total: int) -> None:
        raise Stop(f"stopped at {done}")

    with pytest.raises(Stop, match="stopped at"):
        numaplace.run(LONG, progress=progress)


def test_another_thread_runs_python_while_a_simulation_goes() -> None:
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        before = ticks
        numaplace.run(LONG)
        during = ticks - before
    finally:
        done.set()
        t.join()
    assert during > 20


def test_a_tqdm_bar_follows_the_run() -> None:
    with tqdm(total=1, disable=False, mininterval=0) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        r = numaplace.run(LONG, progress=progress)
    assert bar.n == r.summary["ops"]
