"""Background jobs live in one process-wide registry keyed by what they compute."""

from __future__ import annotations

import threading

from fairness_core.jobs import CancelToken, Progress
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
    jobs.wait(key, 5)
    assert first.result == "rows" and calls == [1]
    assert jobs.running("sweep-") == []
    again = jobs.start(key, work)  # once finished, asking again starts a new job
    jobs.wait(key, 5)
    assert again is not first and calls == [1, 1]


def test_a_different_request_is_a_different_job() -> None:
    assert jobs.key_for("sweep", {"seed": 0}) != jobs.key_for("sweep", {"seed": 1})
    assert jobs.key_for("sweep", {"seed": 0}) != jobs.key_for("metric-bias", {"seed": 0})
