"""The job runner: batches, progress, cancel, cache hits and resume after a crash."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fairness_core.jobs import CancelToken, Progress, Task, run_task
from fairness_core.store import CANCELLED, COMPLETE, INCOMPLETE, RunStore
from tests.jobs.slow_task import N_SHARDS, ROWS_PER_SHARD, make_task, square_rows

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_a_task_runs_in_batches_and_reports_progress(store: RunStore) -> None:
    seen: list[Progress] = []
    outcome = run_task(make_task(), store, on_progress=seen.append)
    assert outcome.status == COMPLETE and not outcome.from_cache
    assert [p.done for p in seen] == list(range(N_SHARDS + 1))
    assert seen[-1].fraction == 1.0 and seen[-1].eta_s == 0
    assert "12/12 batches (100%)" in seen[-1].describe()
    rows = store.rows(outcome.run_id)
    assert len(rows) == N_SHARDS * ROWS_PER_SHARD
    assert rows["value"].tolist()[:3] == [0.0, 1.0, 4.0]
    assert rows["attrs"][0] == {"base": 7}


def test_an_identical_request_is_served_from_the_store_without_computing(store: RunStore) -> None:
    first = run_task(make_task(), store)
    calls: list[dict] = []

    def must_not_run(request: dict, shard: dict) -> list[dict]:
        calls.append(shard)
        return []

    task = make_task()
    again = run_task(Task(task.kind, task.request, task.shards, must_not_run), store)
    assert again.from_cache and again.run_id == first.run_id and calls == []
    other = run_task(make_task(base=8), store)  # a different request is a different run
    assert not other.from_cache and other.run_id != first.run_id


def test_cancel_keeps_finished_batches_and_a_rerun_resumes(store: RunStore) -> None:
    cancel = CancelToken()

    def cancel_after_three(progress: Progress) -> None:
        if progress.done == 3:
            cancel.cancel()

    outcome = run_task(make_task(), store, on_progress=cancel_after_three, cancel=cancel)
    assert outcome.status == CANCELLED and outcome.run.shards_done == 3
    resumed = run_task(make_task(), store)
    assert resumed.status == COMPLETE and resumed.computed_shards == N_SHARDS - 3
    assert len(store.rows(resumed.run_id)) == N_SHARDS * ROWS_PER_SHARD


def test_a_failing_batch_marks_the_run_failed_and_keeps_earlier_batches(store: RunStore) -> None:
    def fails_on_fourth(request: dict, shard: dict) -> list[dict]:
        if shard["start"] == 3 * ROWS_PER_SHARD:
            raise RuntimeError("boom")
        return square_rows(request, shard)

    task = make_task()
    with pytest.raises(RuntimeError, match="boom"):
        run_task(Task(task.kind, task.request, task.shards, fails_on_fourth), store)
    run = store.list_runs()[0]
    assert run.status == "failed" and run.shards_done == 3 and "boom" in (run.error or "")


@pytest.mark.slow
def test_kill_9_mid_run_then_resume_without_duplicates(tmp_path: Path) -> None:
    """SIGKILL a writer half-way; a reader in this process watches it write; then resume."""
    path = tmp_path / "crash.duckdb"
    env = dict(os.environ, SLOW_TASK_DELAY_S="0.8", PYTHONPATH=str(REPO_ROOT))
    writer = subprocess.Popen([sys.executable, "-m", "tests.jobs.slow_task", str(path)], cwd=REPO_ROOT, env=env)
    reader = RunStore(path, lock_timeout_s=30)
    try:
        deadline = time.monotonic() + 60
        done = 0
        while time.monotonic() < deadline and done < 4:
            time.sleep(0.1)
            if not path.exists():
                continue
            runs = reader.list_runs()  # a second process reading while the first writes
            done = runs[0].shards_done if runs else 0
        assert done >= 4, "the writer never got going"
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
    finally:
        if writer.poll() is None:
            writer.kill()

    crashed = RunStore(path).list_runs()[0]
    assert crashed.status == INCOMPLETE
    assert 4 <= crashed.shards_done < N_SHARDS
    assert crashed.n_rows == crashed.shards_done * ROWS_PER_SHARD  # no half-written batch

    resumed = run_task(make_task(), RunStore(path))
    assert resumed.status == COMPLETE and resumed.computed_shards == N_SHARDS - crashed.shards_done
    rows = RunStore(path).rows(resumed.run_id)
    assert len(rows) == N_SHARDS * ROWS_PER_SHARD
    assert rows["item"].is_unique


def test_a_work_unit_stops_inside_its_shard_when_cancelled_and_reports_partial_progress(store: RunStore) -> None:
    from fairness_core.jobs import checkpoint

    cancel = CancelToken()
    seen: list[Progress] = []

    def long_shard(request: dict, shard: dict) -> list[dict]:
        for step in range(1000):
            if shard["i"] == 1 and step == 3:
                cancel.cancel()  # the user presses Cancel while the second shard is half done
            checkpoint(step, 1000)
            time.sleep(0.001)
        return [{"item": str(shard["i"]), "value": 1.0}]

    task = Task("long", {"v": 1}, [{"i": i} for i in range(3)], long_shard)
    outcome = run_task(task, store, on_progress=seen.append, cancel=cancel)
    assert outcome.status == CANCELLED
    assert outcome.run.error == "cancelled by the user"
    assert store.completed_shards(outcome.run_id) == {0}  # the shard in flight wrote nothing
    assert any(0 < p.partial < 1 for p in seen)  # the bar moved inside the first shard
    resumed = run_task(task, store)
    assert resumed.status == COMPLETE and sorted(store.rows(resumed.run_id)["item"]) == ["0", "1", "2"]


@pytest.mark.parametrize("uptime_s", [0.01, 1e6], ids=["just-booted", "up-for-days"])
def test_the_first_in_shard_report_goes_out_whatever_the_clock_reads(monkeypatch, uptime_s) -> None:
    from fairness_core.jobs import checkpoint
    from fairness_core.jobs.context import shard_context

    # time.monotonic() counts from boot: a freshly booted machine reads less than the report interval
    monkeypatch.setattr("fairness_core.jobs.context.time.monotonic", lambda: uptime_s)
    reported: list[float] = []
    with shard_context(on_fraction=reported.append):
        checkpoint(1, 4)
        checkpoint(2, 4)  # within the report interval: not forwarded
    assert reported == [0.25]


def test_checkpoint_outside_a_job_does_nothing() -> None:
    from fairness_core.jobs import checkpoint

    checkpoint(1, 2)  # no runner, no context: a plain call must not raise


def test_work_units_hand_partial_results_to_a_listening_caller_only(store: RunStore) -> None:
    from fairness_core.jobs.context import publish, wants_partials

    def streaming_shard(request: dict, shard: dict) -> list[dict]:
        listening = wants_partials()
        for step in range(3):
            publish({"shard": shard["i"], "step": step})
        return [{"item": str(shard["i"]), "value": float(listening)}]

    seen: list[dict] = []
    task = Task("streaming", {"v": 1}, [{"i": i} for i in range(2)], streaming_shard)
    outcome = run_task(task, store, on_partial=seen.append)
    assert seen == [{"shard": i, "step": s} for i in range(2) for s in range(3)]
    assert store.rows(outcome.run_id)["value"].tolist() == [1.0, 1.0]
    quiet = run_task(Task("streaming", {"v": 2}, [{"i": 0}], streaming_shard), store)
    assert store.rows(quiet.run_id)["value"].tolist() == [0.0]
    publish({"outside": "a job"})  # no runner, no listener: nothing happens


def test_a_long_estimate_reads_in_hours_with_thousands_separated() -> None:
    from fairness_core.jobs import format_seconds

    assert format_seconds(42) == "42 s"
    assert format_seconds(125) == "2 min 05 s"
    assert format_seconds(3 * 3600 + 60 * 7) == "3 h 07 min"
    assert format_seconds(557_384 * 3600 + 22 * 60) == "557,384 h 22 min"  # a run-away request, said readably
