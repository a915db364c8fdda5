"""The classroom queue: live before sweep, sessions in turn, a newer move replaces the queued one, shared keys."""

from __future__ import annotations

import platform
import threading

import pytest

from fairness_core.jobs.queue import (
    LIVE,
    SWEEP,
    FairQueue,
    WorkerPool,
    live_threads,
    position_message,
    release_free_memory,
    sweep_slots,
    tidy_when_idle,
    wait_estimate,
    worker_count,
)


def _keys(queue: FairQueue) -> list[str]:
    return [entry.key for entry in queue.order()]


def _drain(queue: FairQueue) -> list[str]:
    taken = []
    while (entry := queue.take()) is not None:
        taken.append(entry.key)
    return taken


def test_live_requests_go_before_sweeps_whenever_they_were_queued() -> None:
    queue = FairQueue()
    queue.submit("teacher", "sweep-big", SWEEP, payload="run")
    queue.submit("ana", "live-a", LIVE, payload="run")
    queue.submit("ben", "live-b", LIVE, payload="run")
    assert _keys(queue) == ["live-a", "live-b", "sweep-big"]
    assert _drain(queue) == ["live-a", "live-b", "sweep-big"]


def test_sessions_take_turns_so_one_session_cannot_starve_the_others() -> None:
    queue = FairQueue()
    queue.submit("ana", "sweep-a1", SWEEP, payload="run")
    queue.submit("ben", "sweep-b1", SWEEP, payload="run")
    assert queue.take().key == "sweep-a1"  # ana served: she goes to the back of the line
    queue.submit("ana", "sweep-a2", SWEEP, payload="run")  # ana asks again at once
    queue.submit("cleo", "sweep-c1", SWEEP, payload="run")
    assert _drain(queue) == ["sweep-b1", "sweep-a2", "sweep-c1"]


def test_a_session_served_for_a_live_move_waits_behind_the_others_for_its_sweep() -> None:
    queue = FairQueue()
    queue.submit("ana", "live-a", LIVE, payload="run")
    queue.submit("ana", "sweep-a", SWEEP, payload="run")
    queue.submit("ben", "sweep-b", SWEEP, payload="run")
    assert _keys(queue) == ["live-a", "sweep-b", "sweep-a"]
    assert _drain(queue) == ["live-a", "sweep-b", "sweep-a"]


def test_a_newer_slider_move_replaces_the_sessions_queued_one_in_its_place_in_line() -> None:
    queue = FairQueue()
    queue.submit("ana", "live-p05", LIVE, payload="run")
    queue.submit("ben", "live-b", LIVE, payload="run")
    dropped = queue.submit("ana", "live-p07", LIVE, payload="run")
    assert [entry.key for entry in dropped] == ["live-p05"]  # nobody waits for it any more: never computed
    assert _keys(queue) == ["live-p07", "live-b"]  # ana keeps her turn
    assert len(queue) == 2


def test_identical_requests_from_different_sessions_are_one_entry() -> None:
    queue = FairQueue()
    queue.submit("ana", "live-same", LIVE, payload="run")
    queue.submit("ben", "live-same", LIVE, payload="run")
    queue.submit("cleo", "live-c", LIVE, payload="run")
    assert _keys(queue) == ["live-same", "live-c"]
    assert queue.get("live-same").waiters == ["ana", "ben"]
    # ana moves on: ben still waits for the shared request, which keeps its place and is not dropped
    assert queue.submit("ana", "live-a2", LIVE, payload="run") == []
    assert queue.get("live-same").waiters == ["ben"]
    assert _drain(queue) == ["live-same", "live-c", "live-a2"]  # ana gave her turn to the shared request


def test_withdrawing_drops_a_request_only_when_nobody_waits_for_it() -> None:
    queue = FairQueue()
    queue.submit("ana", "live-x", LIVE, payload="run")
    queue.submit("ben", "live-x", LIVE, payload="run")
    assert queue.withdraw("ana", "live-x") is None
    assert queue.withdraw("ben", "live-x").key == "live-x"
    assert len(queue) == 0 and queue.take() is None


def test_a_request_already_running_only_releases_the_sessions_older_one() -> None:
    queue = FairQueue()
    queue.submit("ana", "live-old", LIVE, payload="run")
    dropped = queue.submit("ana", "live-running-elsewhere", LIVE)  # no payload: another worker computes it
    assert [entry.key for entry in dropped] == ["live-old"] and len(queue) == 0


def test_positions_follow_the_serve_order() -> None:
    queue = FairQueue()
    for session in ("ana", "ben", "cleo", "dan"):
        queue.submit(session, f"live-{session}", LIVE, payload="run", estimate_s=2.0)
    assert queue.position("live-dan") == 3
    assert [entry.key for entry in queue.ahead_of("live-dan")] == ["live-ana", "live-ben", "live-cleo"]
    assert queue.position("live-ana") == 0 and queue.position("live-nobody") is None


def test_the_queue_message_says_where_a_request_stands() -> None:
    assert position_message(3, 8.2) == "3 requests ahead of yours, about 8 s"
    assert position_message(1, None) == "1 request ahead of yours"
    assert position_message(0, 1.0) == "Yours is next in the queue, about 1 s"
    assert position_message(0, 0.2) == "Yours is next in the queue, starting in a moment"  # not "about 0 s"
    # 3 requests of 2 s ahead + 2 s left of the one running, on 2 workers
    assert wait_estimate([2.0, 2.0, 2.0], [2.0], workers=2) == pytest.approx(4.0)
    assert wait_estimate([2.0, None], [], workers=1) is None  # a kind never measured: no number


def test_worker_count_comes_from_the_environment_or_the_cores() -> None:
    assert worker_count({"FAIRNESS_LAB_MODEL_WORKERS": "3"}) == 3
    default = worker_count({})
    assert 1 <= default <= 8
    assert worker_count({"FAIRNESS_LAB_MODEL_WORKERS": "zero"}) == default
    assert worker_count({"FAIRNESS_LAB_MODEL_WORKERS": "0"}) == default
    assert sweep_slots(1) == 1 and sweep_slots(2) == 1 and sweep_slots(4) == 3


def test_the_pool_runs_live_requests_while_its_sweep_slot_is_busy() -> None:
    pool = WorkerPool(2)
    sweep_started, release, done = threading.Event(), threading.Event(), []
    pool.submit("teacher", "sweep-1", SWEEP, lambda: (sweep_started.set(), release.wait(60), done.append("s1")))
    assert sweep_started.wait(10)
    second_sweep = threading.Event()
    pool.submit("ana", "sweep-2", SWEEP, second_sweep.set)  # waits: only one worker may hold a sweep
    live = threading.Event()
    pool.submit("ben", "live-1", LIVE, live.set)
    assert live.wait(10)  # served by the worker kept for live requests
    assert not second_sweep.is_set() and pool.snapshot("sweep-2")[0] == 0
    release.set()
    assert second_sweep.wait(10) and done == ["s1"]


def test_a_dropped_request_is_reported_and_never_run() -> None:
    dropped: list[str] = []
    pool = WorkerPool(1, on_drop=lambda entry: dropped.append(entry.key))
    started, block, ran = threading.Event(), threading.Event(), []
    pool.submit("teacher", "sweep-1", SWEEP, lambda: (started.set(), block.wait(60)))
    # the one worker must be busy before the live requests arrive, else it may take live-1 before live-2 replaces it
    assert started.wait(10)
    pool.submit("ana", "live-1", LIVE, lambda: ran.append("live-1"))
    pool.submit("ana", "live-2", LIVE, lambda: ran.append("live-2"))
    assert dropped == ["live-1"]
    block.set()
    for _ in range(200):
        if ran:
            break
        threading.Event().wait(0.05)
    assert ran == ["live-2"]


def test_a_session_may_queue_several_sweeps_which_take_turns_with_other_sessions() -> None:
    queue = FairQueue()
    assert queue.submit("ana", "sweep-a1", SWEEP, payload="run") == []
    assert queue.submit("ana", "sweep-a2", SWEEP, payload="run") == []  # a sweep never replaces another
    queue.submit("ben", "sweep-b1", SWEEP, payload="run")
    assert _drain(queue) == ["sweep-a1", "sweep-b1", "sweep-a2"]


def test_companions_of_a_live_request_are_bounded_by_their_rows_first_fit_in_serve_order() -> None:
    queue = FairQueue()
    for session, size in (("ana", 11), ("ben", 80), ("cem", 11), ("dan", 11)):
        queue.submit(session, f"live-{session}", LIVE, payload="run", group="smollm2|prompts", size=size)
    queue.submit("eve", "live-eve", LIVE, payload="run", group="another model", size=1)
    first = queue.take()
    assert first is not None and first.key == "live-ana"
    # 11 + 11 + 11 rows fit in 40; ben's 80 rows wait for the next call, eve's other model is never a companion
    assert [e.key for e in queue.take_companions(first, limit=10, max_size=40)] == ["live-cem", "live-dan"]
    assert _keys(queue) == ["live-ben", "live-eve"]
    ben = queue.take()
    assert ben is not None and queue.take_companions(ben, limit=10, max_size=40) == []  # alone: bigger than the bound


def test_a_live_request_alone_on_a_quiet_machine_gets_every_core_and_shares_them_otherwise() -> None:
    assert live_threads(cores=2, busy_workers=1, load=0.3) == 2  # nothing else runs: both cores
    assert live_threads(cores=2, busy_workers=2, load=0.3) == 1  # a sweep or another live request beside it
    assert live_threads(cores=8, busy_workers=3, load=0.0) == 2  # an even share
    assert live_threads(cores=2, busy_workers=1, load=1.2) == 1  # another program keeps one core busy
    assert live_threads(cores=2, busy_workers=1, load=10.0) == 1  # a shared, loaded machine: one thread
    assert live_threads(cores=8, busy_workers=1, load=2.0) == 6  # the cores the load leaves idle
    assert live_threads(cores=2, busy_workers=5, load=0.0) == 1  # never below one
    assert live_threads(cores=1, busy_workers=0) == 1


def test_the_pool_counts_the_workers_busy_with_model_work() -> None:
    pool = WorkerPool(2)
    assert pool.busy_workers() == 0
    started, release, seen = threading.Event(), threading.Event(), []
    pool.submit("teacher", "sweep-1", SWEEP, lambda: (started.set(), release.wait(60)))
    assert started.wait(10)
    ran = threading.Event()
    pool.submit("ana", "live-1", LIVE, lambda: (seen.append(pool.busy_workers()), ran.set()))
    assert ran.wait(10) and seen == [2]  # the live request saw itself and the sweep
    release.set()
    for _ in range(200):
        if pool.busy_workers() == 0:
            break
        threading.Event().wait(0.05)
    assert pool.busy_workers() == 0


def test_the_pool_calls_its_idle_hook_once_the_last_work_ends_and_none_is_queued() -> None:
    idle, release = [], threading.Event()
    pool = WorkerPool(1, on_idle=lambda: idle.append(pool.busy_workers()))
    pool.submit("ana", "sweep-1", SWEEP, lambda: release.wait(60))
    pool.submit("ben", "live-1", LIVE, lambda: None)  # queued behind the sweep: no idle moment in between
    release.set()
    for _ in range(200):
        if idle:
            break
        threading.Event().wait(0.05)
    threading.Event().wait(0.2)
    assert idle == [0]  # once, after both, with nothing running


def test_free_memory_goes_back_to_the_system_where_glibc_is_there() -> None:
    assert release_free_memory() in (True, False)  # never raises; False without glibc (macOS, musl)
    if platform.libc_ver()[0] == "glibc":
        assert release_free_memory() is True


def test_the_tidy_thread_runs_only_while_the_pool_is_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    import fairness_core.jobs.queue as queue

    calls, release = [], threading.Event()
    # only this test's tidy thread counts: a pool another test on this worker made has a tidy thread of its own
    monkeypatch.setattr(queue, "release_free_memory",
                        lambda: (threading.current_thread() is thread and calls.append("trim")) or True)
    pool = WorkerPool(1)
    pool.submit("ana", "sweep-1", SWEEP, lambda: release.wait(60))
    stop = threading.Event()
    thread = tidy_when_idle(pool, every_s=0.02, stop=stop)
    try:
        threading.Event().wait(0.2)
        assert calls == []  # busy: nothing tidied
        release.set()
        for _ in range(200):
            if calls:
                break
            threading.Event().wait(0.05)
        assert calls and pool.idle()
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()
