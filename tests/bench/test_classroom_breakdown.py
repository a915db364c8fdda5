"""bench.classroom reads the server's TIMING lines into where a move's time goes."""

from __future__ import annotations

import os
import sys

import pytest

from bench.classroom import breakdown

LOG = """\
TIMING job lane=live rows=11 queue_s=0.500 run_s=1.500
TIMING model rows=11 seconds=1.200
TIMING scorers rows=11 seconds=0.100
some other server line
TIMING job lane=live rows=22 queue_s=1.500 run_s=2.500
TIMING job lane=sweep rows=990 queue_s=0.000 run_s=40.000
TIMING model rows=22 seconds=2.000
"""


def test_the_breakdown_counts_live_jobs_and_subtracts_their_medians_from_the_median_move() -> None:
    line = breakdown(LOG, [3.0, 4.0, 5.0])
    assert "queue p50 1.00 s" in line and "job run p50 2.00 s" in line  # the sweep's job is not a move
    assert "model calls: 2, median 16 rows" in line and "scorers p50 0.10 s" in line
    assert "~1.00 s (median move - median queue - median run)" in line
    assert "queue none" in breakdown("", [])


def test_the_floor_is_the_servers_work_at_the_share_it_gets_against_the_window_the_moves_came_in() -> None:
    """Issue 45 §1: 120 s of server CPU at 0.5 cores needs 240 s of wall; the moves came over 100 s, so the last one
    waits at least 140 s whatever the queue does."""
    from bench.classroom import Session, cpu_seconds, floor_line

    shared, own = Session(0, shared=True), Session(1, shared=False)
    shared.sent, own.sent = [0.0, 50.0], [10.0, 100.0]
    shared.shared_results = 1  # one move answered from another session's job: not computed
    rates = [0.1] * 5 + [0.5] * 45  # idle seconds do not lower the share the server gets when busy
    line = floor_line(120.0, rates, [shared, own], moves=4)
    assert "120 s of CPU for 4 moves and 2 first visits (5 computed: 24.00 s each)" in line
    assert "0.50 cores" in line and "needs 240 s of wall against the 100 s" in line
    assert "a backlog of at least 140 s" in line and "alone at that share 48.0 s" in line
    assert floor_line(float("nan"), rates, [shared], 2) == "    floor: not measured"
    assert "not measured" in floor_line(10.0, [0.0, 0.0], [shared], 2)  # no share: no division by it
    assert cpu_seconds(os.getpid()) > 0  # this very process has used some CPU


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads and names threads through Linux's /proc")
def test_the_servers_cpu_is_split_by_what_its_named_threads_do() -> None:
    """Issue 45 §1: the bench reads each thread's CPU and its OS name, which the server sets from the Python thread's
    name when the timing log is on (ui/jobs.py); here a thread of this very process, named so, burns CPU."""
    import threading
    import time

    from bench.classroom import Monitor, cpu_split_line, thread_kind

    assert thread_kind("model-worker-0") == "model workers" and thread_kind("ScriptRunner.sc") == "page scripts"
    assert thread_kind("tornado-x") == "other threads"
    stop = threading.Event()

    def burn() -> None:
        with open(f"/proc/self/task/{threading.get_native_id()}/comm", "w") as comm:
            comm.write("model-worker-7")
        while not stop.is_set():
            sum(range(10_000))

    monitor = Monitor(os.getpid())
    monitor.run = lambda: None  # sampled by hand below, not on its own thread
    monitor.threads = {}
    worker = threading.Thread(target=burn)
    worker.start()
    try:
        deadline = time.monotonic() + 30  # a busy CI machine gives the thread less than a core
        while monitor.cpu_by_kind().get("model workers", 0.0) < 0.6 and time.monotonic() < deadline:
            time.sleep(0.05)
            monitor.sample_threads()
    finally:
        stop.set()
        worker.join()
    by_kind = monitor.cpu_by_kind()
    assert by_kind["model workers"] >= 0.6  # born after the start: counted from zero
    line = cpu_split_line(by_kind["model workers"] + 3.0, {"model workers": by_kind["model workers"]}, client_s=1.2)
    assert "server CPU by thread: model workers" in line and "not attributed" in line and " 3 s" in line
    assert "clients (and its /proc readings) used 1 s of CPU" in line


def test_the_other_threads_are_named_by_their_largest() -> None:
    from bench.classroom import cpu_split_line

    line = cpu_split_line(30.0, {"model workers": 20.0, "other threads": 9.0}, 0.0,
                          {"load-probe": 6.0, "model-pool-tidy": 3.0, "timing-names": 0.1})
    assert "other threads 9 s (load-probe 6.0 s, model-pool-tidy 3.0 s)" in line and "timing-names" not in line
