"""Background jobs live in one process-wide registry keyed by what they compute."""

from __future__ import annotations

import threading
import time

import pytest

from fairness_core.jobs import CancelToken, Progress, run_task
from fairness_core.jobs.load import LoadGauge
from tests.jobs.slow_task import make_task
from tests.ui import job_work
from ui import jobs


def test_the_same_computation_attaches_to_the_running_job_instead_of_starting_a_duplicate() -> None:
    release = threading.Event()
    calls: list[int] = []

    def work(on_progress, cancel: CancelToken) -> str:
        calls.append(1)
        on_progress(Progress(0, 2, 0.0))
        release.wait(5)
        return "rows"

    key = jobs.key_for("sweep", {"grid": [0.5, 0.9], "seed": 0})
    assert key == jobs.key_for("sweep", {"seed": 0, "grid": [0.5, 0.9]})  # key order does not matter
    first = jobs.start(key, work, label="Sweep")
    second = jobs.start(key, work, label="Sweep")  # a reloaded tab asking for the same sweep
    assert second is first
    assert [job.key for job in jobs.running("sweep-")] == [key]
    release.set()
    jobs.wait(key, 60)
    assert first.result == "rows" and calls == [1]
    assert jobs.running("sweep-") == []
    again = jobs.start(key, work)  # once finished, asking again starts a new job
    jobs.wait(key, 60)
    assert again is not first and calls == [1, 1]


def test_a_different_request_is_a_different_job() -> None:
    assert jobs.key_for("sweep", {"seed": 0}) != jobs.key_for("sweep", {"seed": 1})
    assert jobs.key_for("sweep", {"seed": 0}) != jobs.key_for("metric-bias", {"seed": 0})


# -- live ETA, measured rates, estimates --------------------------------------------------------------------
class FixedLoad:
    """The machine's slowdown as the test sets it (a gauge's probe)."""

    def __init__(self, value: float = 1.0) -> None:
        self.value = value

    def __call__(self) -> float:
        return self.value


#: the page's own gauge, before the fixture below replaces it with a fixed one
PAGE_LOAD = jobs.LOAD


@pytest.fixture(autouse=True)
def load(monkeypatch: pytest.MonkeyPatch) -> FixedLoad:
    fixed = FixedLoad()
    monkeypatch.setattr(jobs, "LOAD", LoadGauge(probe=fixed, max_age_s=0, background=False,
                                                 window_s=0))  # each call probes; only that probe counts
    return fixed


def _job(key: str = "sweep-0123456789abcdef", **fields) -> jobs.BackgroundJob:
    job = jobs.BackgroundJob(key)
    for name, value in fields.items():
        setattr(job, name, value)
    return job


def test_the_eta_counts_in_batch_progress_and_the_time_since_the_last_report() -> None:
    now = time.monotonic()
    # 1 whole batch + half of the next in 10 s, reported 5 s ago: 15 s for 1.5 batches, 2.5 batches left
    job = _job(progress=Progress(1, 4, 10.0, partial=0.5), progress_at=now - 5)
    eta = jobs.eta_s(job)
    # the clock moves on between `now` and the call (a stall on a loaded machine): 5/3 s of estimate per second
    assert 25.0 <= eta <= 25.0 + (time.monotonic() - now) * 5 / 3 + 0.01
    job.progress_at = now - 20  # no report for 20 s: the batch is slower than thought, the estimate grows
    assert jobs.eta_s(job) > 45.0
    fraction, text = job.describe()
    assert fraction == 0.375 and text.startswith("1/4 batches (38%; current batch 50%), about ")


def test_progress_says_what_it_counts() -> None:
    # metric bias counts its work (pairs × metrics), not its batches: the line must not call them batches
    job = _job(progress=Progress(6, 36, 3.0, unit="pairs × metrics"), progress_at=time.monotonic())
    assert job.describe()[1].startswith("6/36 pairs × metrics (17%)")
    job.cancel.cancel()
    assert jobs.partial_note(job) == "partial: 6 of 36 pairs × metrics"


def test_batches_from_an_earlier_run_do_not_count_as_speed() -> None:
    job = _job(progress=Progress(3, 4, 0.0, skipped=3), progress_at=time.monotonic())
    assert jobs.eta_s(job) is None  # nothing computed yet in this run: no estimate from stored batches
    assert "left" not in job.describe()[1]


def test_a_finished_job_records_its_rate_and_the_next_estimate_uses_it() -> None:
    kind = f"rate-test-{time.monotonic_ns()}"
    assert jobs.estimate_s(kind, 100) is None
    assert jobs.estimate_s(kind, 100, seconds_per_unit=0.5) == 50.0  # the page's own figure until measured

    def work(on_progress, cancel: CancelToken) -> str:
        on_progress(Progress(4, 4, 8.0))  # 4 batches computed in 8 s
        return "done"

    key = jobs.key_for(kind, {"n": 40})
    jobs.start(key, work, units=40)
    jobs.wait(key, 60)
    assert jobs.estimate_s(kind, 100) == 20.0  # 8 s for 40 units, measured
    waiting = _job(key=jobs.key_for(kind, {"n": 10}), units=10)  # not started: rate x units
    assert 0.0 < jobs.eta_s(waiting) <= 2.0


def test_estimates_scale_with_the_load_of_the_moment(load: FixedLoad) -> None:
    kind = f"rate-test-{time.monotonic_ns()}"
    # nothing measured here: the documented cost (quiet reference machine) times the slowdown now
    assert jobs.estimate_s(kind, 100, seconds_per_unit=0.5) == 50.0
    load.value = 10.0  # another job now shares the cores
    assert jobs.estimate_s(kind, 100, seconds_per_unit=0.5) == 500.0
    assert jobs.estimate_s(kind, 100, seconds_per_unit=0.5, slowdown=2.0) == 100.0  # or as the caller says

    def work(on_progress, cancel: CancelToken) -> str:
        on_progress(Progress(4, 4, 8.0))  # 40 units in 8 s while the machine was 10x slower
        return "done"

    key = jobs.key_for(kind, {"n": 40})
    assert jobs.start(key, work, units=40, seconds_per_unit=0.5).slowdown == 10.0
    jobs.wait(key, 60)
    assert jobs.estimate_s(kind, 100) == pytest.approx(20.0, rel=1e-5)  # 0.2 s per unit measured, same load
    load.value = 2.5  # the other job ended
    assert jobs.estimate_s(kind, 100) == pytest.approx(5.0, rel=1e-5)  # 0.2 s per unit x 2.5 / 10


def test_a_started_job_shows_its_documented_estimate_until_its_progress_revises_it(load: FixedLoad) -> None:
    load.value = 4.0
    kind = f"rate-test-{time.monotonic_ns()}"
    job = _job(key=jobs.key_for(kind, {"n": 1}), units=100, seconds_per_unit=0.1, slowdown=4.0)
    assert jobs.first_estimate_s(job) == pytest.approx(40.0, rel=1e-5)
    assert jobs.eta_s(job) == pytest.approx(40.0, rel=1e-5)  # queued: the whole estimate is ahead
    begun = time.monotonic()
    job.begun, job.started = True, begun - 10
    eta = jobs.eta_s(job)
    assert 29.99 - (time.monotonic() - begun) <= eta <= 30.0  # running, no progress yet: less the time spent
    # 1% done after 10 s: progress alone would say 990 s left; the estimate moves towards it at the pace of
    # ETA_SMOOTHING_S of the job's time (issue 35: a warm-up's first report made the figure jump), not to it
    job.progress, job.progress_at = Progress(0, 2, 10.0, partial=0.02), time.monotonic()
    early = jobs.eta_s(job)
    assert 29.9 < early < 990.0 / 2
    assert "left" in job.describe()[1]
    job.progress = Progress(1, 2, 10.0)  # half done in 10 s: progress alone, 10 s left
    assert 9.9 < jobs.eta_s(job) < 10.01 + (time.monotonic() - job.progress_at)  # plus the time since the report


def test_a_run_answered_from_the_store_or_cancelled_records_no_rate() -> None:
    kind = f"rate-test-{time.monotonic_ns()}"

    def from_store(on_progress, cancel: CancelToken) -> None:
        on_progress(Progress(5, 5, 0.01, skipped=5))

    def cancelled(on_progress, cancel: CancelToken) -> None:
        on_progress(Progress(1, 5, 3.0))
        cancel.cancel()

    for n, work in ((1, from_store), (2, cancelled)):
        key = jobs.key_for(kind, {"n": n})
        jobs.start(key, work, units=50)
        jobs.wait(key, 60)
    assert jobs.estimate_s(kind, 10) is None


# -- partial results ----------------------------------------------------------------------------------------
def test_partial_labels_for_jobs_outcomes_and_stored_runs(store) -> None:
    assert jobs.partial_label(3, 10) == "partial: 3 of 10 batches"
    cancelled = _job(progress=Progress(3, 10, 5.0))
    cancelled.cancel.cancel()
    assert jobs.partial_note(cancelled) == "partial: 3 of 10 batches"
    assert jobs.partial_note(_job(progress=Progress(10, 10, 5.0))) is None  # finished
    finished_anyway = _job(progress=Progress(10, 10, 5.0))
    finished_anyway.cancel.cancel()  # cancel pressed after the last batch: nothing is missing
    assert jobs.partial_note(finished_anyway) is None

    token = CancelToken()

    def stop_after_two(progress: Progress) -> None:
        if progress.done >= 2:
            token.cancel()

    outcome = run_task(make_task(base=3), store, on_progress=stop_after_two, cancel=token)
    assert jobs.partial_note(outcome) == "partial: 2 of 12 batches"  # a RunOutcome
    assert jobs.partial_note(store.get_run(outcome.run_id)) == "partial: 2 of 12 batches"  # a stored RunInfo
    complete = run_task(make_task(base=4), store)
    assert jobs.partial_note(complete) is None and jobs.partial_note(complete.run) is None


# -- cancel inside a batch ----------------------------------------------------------------------------------
def test_cancel_stops_a_job_in_the_middle_of_a_long_batch(store) -> None:
    task = job_work.make_task(tag="cancel-in-batch")
    key = jobs.key_for(task.kind, task.request)
    job = jobs.start(key, lambda on_progress, cancel: run_task(task, store, on_progress, cancel), label="Long")
    deadline = time.monotonic() + 60
    while (job.progress is None or job.progress.partial == 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.progress is not None and job.progress.partial > 0  # the bar moves inside the first batch
    job.cancel.cancel()
    jobs.wait(key, 30)  # one batch takes ~1000 s: only an in-batch stop ends the job here
    assert job.done and job.error is None
    assert job.result.status == "cancelled" and job.result.run.shards_done == 0  # nothing partial written
    assert jobs.partial_note(job) == "partial: 0 of 3 batches"


def test_a_live_jobs_thread_cap_does_not_count_this_servers_own_recent_moves(monkeypatch) -> None:
    """The one-minute load average counts this process's last moves: on a quiet machine a move after a move got one
    thread. The cap is the pool's share only; the load of other programs is read by the model layer when the model
    runs (fairness_core.models.threads: runnable threads right now)."""
    import os

    monkeypatch.setattr(os, "getloadavg", lambda: (1.8, 1.0, 0.5))  # two of our own moves just ran
    monkeypatch.setattr(jobs.pool(), "busy_workers", lambda: 1)
    assert jobs.threads_now() == jobs.usable_cores()
    monkeypatch.setattr(jobs.pool(), "busy_workers", lambda: 2 * jobs.usable_cores())  # a full pool: one each
    assert jobs.threads_now() == 1


def test_a_finished_job_logs_its_time_in_the_queue_and_running(caplog) -> None:
    import logging

    key = jobs.key_for("sweep", {"timing": 1})
    with caplog.at_level(logging.INFO, logger="fairness_core.timing"):
        jobs.start(key, lambda on_progress, cancel: "rows", label="Sweep", units=3)
        jobs.wait(key, 60)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any("TIMING job" in r.getMessage() for r in caplog.records):
            time.sleep(0.01)  # the line is written as the worker finishes, beside the job's end
    line = next(r.getMessage() for r in caplog.records if "TIMING job" in r.getMessage())
    assert line.startswith("TIMING job lane=sweep rows=3 queue_s=") and " run_s=" in line


def test_a_job_past_its_estimate_says_so_instead_of_about_0_s_left() -> None:
    job = _job(progress=Progress(3, 4, 10.0), progress_at=time.monotonic())
    job.first_s = 1.0  # the page's estimate, long spent
    job.begun, job.progress = True, None
    job.started = time.monotonic() - 9  # still loading after 9 s: the first estimate less the time spent is 0
    text = job.describe()[1]
    assert "about 0 s left" not in text and "taking longer than estimated" in text, text
    assert jobs.left_text(12.0) == ", about 12 s left"
    assert jobs.left_text(0.2, fraction=1.0) == ", finishing"  # every batch done: the summary after the last one



def test_the_pages_gauges_ask_whether_the_model_workers_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45 §1: the server's gauges keep their figure while its own model work runs (`LoadGauge`)."""

    class Pool:
        def __init__(self, idle: bool) -> None:
            self._idle = idle

        def idle(self) -> bool:
            return self._idle

    for pool, running in ((None, False), (Pool(idle=True), False), (Pool(idle=False), True)):
        monkeypatch.setattr(jobs, "_POOL", pool)
        for gauge in (PAGE_LOAD, jobs.SHARE_LOAD):
            assert gauge.own_work_running is not None and gauge.own_work_running() is running
