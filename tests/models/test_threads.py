"""The model layer's thread policy (models/threads.py): per call, from the measured load, for the calling thread only,
restored afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from fairness_core.models import threads as T


def test_never_more_threads_than_the_cores_other_work_leaves_free() -> None:
    assert T.threads_for(others=0, cores=2) == 2  # a quiet machine: every core
    assert T.threads_for(others=1, cores=2) == 1  # another program keeps one core busy
    assert T.threads_for(others=8, cores=2) == 1  # a loaded machine: never fewer than one
    assert T.threads_for(others=2.4, cores=8) == 6
    assert T.threads_for(others=0, cores=8, cap=1) == 1  # the caller's cap (the BiLSTM judge)


def test_the_load_is_read_from_the_runnable_count_without_the_reading_thread(monkeypatch) -> None:
    readings = iter([5, 5, 3, 4])  # an OpenMP worker still spinning (~5 ms) shows in the first readings only
    monkeypatch.setattr(T, "_system_runnable", lambda: next(readings))
    monkeypatch.setattr(T, "SAMPLE_PAUSE_S", 0.0)
    assert T.other_runnable() == 2.0
    monkeypatch.setattr(T, "_system_runnable", lambda: None)  # no /proc: the load average stands in
    monkeypatch.setattr(T.os, "getloadavg", lambda: (3.5, 1.0, 1.0))
    assert T.other_runnable() == 3.5


def _quiet(monkeypatch, cores: int = 2) -> None:
    monkeypatch.delenv(T.FIXED_ENV, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(T, "other_runnable", lambda: 0.0)
    monkeypatch.setattr(T, "usable_cores", lambda: cores)
    monkeypatch.setattr(T._local, "last", None, raising=False)


def test_a_call_sets_this_threads_count_and_puts_it_back(monkeypatch) -> None:
    import torch

    _quiet(monkeypatch)
    before = torch.get_num_threads()
    with T.model_threads(cap=1) as chosen:
        assert chosen == 1 and torch.get_num_threads() == 1
        with T.model_threads() as nested:  # a metric calling the model keeps the outer decision
            assert nested == 1 and torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    monkeypatch.setenv(T.FIXED_ENV, "1")
    with T.model_threads() as pinned:
        assert pinned == 1


def test_other_threads_keep_their_count_while_a_call_runs_on_one(monkeypatch) -> None:
    """The old `one_torch_thread()` set the process's count: a thread that started its torch work meanwhile (a
    Streamlit rerun, another job) ran on one thread for the rest of its life. Now only the calling thread changes.

    "Keep their count" is measured, not assumed: a thread started before the call reads what threads start with
    (another test may have changed it since the policy noted the process's default). Where that is one thread (the
    suite's xdist workers, the second numeric pass) the two cannot be told apart, so the test reruns itself in a
    fresh interpreter with two threads (about 5 s)."""
    import torch

    def new_thread_count() -> int:
        counts: list[int] = []
        reader = threading.Thread(target=lambda: counts.append(torch.get_num_threads()))
        reader.start()
        reader.join()
        return counts[0]

    if new_thread_count() < 2:
        assert not os.environ.get("THREADS_TEST_CHILD"), "OMP_NUM_THREADS=2 still gave a one-thread default"
        env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
        env.update(OMP_NUM_THREADS="2", MKL_NUM_THREADS="2", THREADS_TEST_CHILD="1")
        here = Path(__file__)
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                               f"{here}::{test_other_threads_keep_their_count_while_a_call_runs_on_one.__name__}"],
                              cwd=here.parents[2], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
        return
    _quiet(monkeypatch)
    default = new_thread_count()
    inside, done = threading.Event(), threading.Event()
    seen: dict[str, int] = {}

    def judge() -> None:  # the BiLSTM judge: capped at one thread
        with T.model_threads(cap=1):
            seen["judge"] = torch.get_num_threads()
            inside.set()
            done.wait(10)

    def started_meanwhile() -> None:
        inside.wait(10)
        seen["other"] = torch.get_num_threads()  # this thread's first torch call
        done.set()

    workers = [threading.Thread(target=judge), threading.Thread(target=started_meanwhile)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(20)
    assert seen == {"judge": 1, "other": default}
