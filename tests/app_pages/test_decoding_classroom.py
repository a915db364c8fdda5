"""Several sessions on the decoding page at once: identical live requests are one job on the model workers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.jobs.queue import LIVE, WorkerPool
from ui import jobs

PAGE = str(Path(__file__).resolve().parents[2] / "app_pages" / "decoding.py")
OTHER = "(other Hugging Face id or local path)"


def _session(tiny_gpt2: Path) -> AppTest:
    app = AppTest.from_file(PAGE, default_timeout=120)
    app.session_state["dec_model"] = OTHER
    app.session_state["dec_model_custom"] = str(tiny_gpt2)
    app.session_state["dec_regard"] = ""
    return app


def _cards(app: AppTest) -> list[str]:
    return [str(m.value) for m in app.markdown if "negative]" in str(m.value)]


def _wait_for(condition, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture()
def one_worker(monkeypatch: pytest.MonkeyPatch) -> WorkerPool:
    """A pool of one model worker, held by a blocking request until the test lets it go."""
    pool = WorkerPool(1, on_drop=jobs._dropped)
    monkeypatch.setattr(jobs, "_POOL", pool)
    return pool


def test_two_sessions_asking_for_the_same_setting_share_one_job(tiny_gpt2: Path, isolated_store: Path,
                                                                one_worker: WorkerPool) -> None:
    teacher = _session(tiny_gpt2)
    teacher.session_state["live_auto"] = False
    teacher.run()  # loads the model and scorers once, generates nothing
    assert not teacher.exception, teacher.exception

    busy, release = threading.Event(), threading.Event()
    one_worker.submit("someone else", "live-busy", LIVE, lambda: (busy.set(), release.wait(60)))
    assert busy.wait(10)
    students = [_session(tiny_gpt2), _session(tiny_gpt2)]
    threads = [threading.Thread(target=student.run) for student in students]
    for thread in threads:
        thread.start()
        # the second student asks only once the first one's request waits in the queue
        _wait_for(lambda: any(len(e.waiters) >= 1 for e in one_worker.queue.order()))
    _wait_for(lambda: [len(e.waiters) for e in one_worker.queue.order()] == [2])
    (entry,) = one_worker.queue.order()
    assert jobs.queue_message(entry.key).startswith("Yours is next in the queue")
    release.set()
    for thread in threads:
        thread.join(120)
    for student in students:
        assert not student.exception, student.exception
    first, second = (_cards(student) for student in students)
    assert first and first == second  # one generation, shown to both
    texts = " ".join(str(m.value) for student in students for m in student.markdown)
    assert texts.count("shared with another session that asked for the same") == 2
    assert jobs.get(entry.key).shared_with == 1


def test_a_newer_move_replaces_the_sessions_queued_request(one_worker: WorkerPool) -> None:
    busy, release = threading.Event(), threading.Event()
    one_worker.submit("someone else", "live-busy", LIVE, lambda: (busy.set(), release.wait(60)))
    assert busy.wait(10)
    first_key, second_key = jobs.key_for("live", {"top_p": 0.5}), jobs.key_for("live", {"top_p": 0.7})
    first = jobs.start(first_key, lambda on_progress, cancel: "p=0.5", lane=LIVE, session="student")
    second = jobs.start(second_key, lambda on_progress, cancel: "p=0.7", lane=LIVE, session="student")
    assert first.dropped and first.done and first.result is None  # never computed
    assert [entry.key for entry in one_worker.queue.order()] == [second_key]
    release.set()
    jobs.wait(second_key, 10)
    assert second.result == "p=0.7"
