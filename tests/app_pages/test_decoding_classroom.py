"""Several sessions on the decoding page at once: identical live requests are one job on the model workers."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fairness_core.jobs.queue import LIVE, WorkerPool
from tests.markdown_text import shown
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
    pool = WorkerPool(1, on_drop=jobs._dropped, run_batch=jobs._run_batch)
    monkeypatch.setattr(jobs, "_POOL", pool)
    return pool


def test_two_sessions_asking_for_the_same_setting_share_one_job(tiny_gpt2: Path, isolated_store: Path,
                                                                one_worker: WorkerPool) -> None:
    teacher = _session(tiny_gpt2)
    teacher.session_state["live_auto"] = False
    teacher.run()  # loads the model and scorers once, generates nothing
    assert not teacher.exception, teacher.exception

    busy, release = threading.Event(), threading.Event()
    one_worker.submit("someone else", "live-busy", LIVE, lambda: (busy.set(), release.wait(300)))
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


def test_moves_queued_together_for_the_same_model_are_generated_in_one_call_whatever_their_seed(
        tiny_gpt2: Path, isolated_store: Path, one_worker: WorkerPool, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairness_core import decoding as task  # the face the page's live runner calls through

    teacher = _session(tiny_gpt2)
    teacher.session_state["live_auto"] = False
    teacher.run()
    calls: list[int] = []
    routed: list[tuple[int, str]] = []  # (session's index in the batch, generation id) of each partial text
    outcomes: list = []
    real = task.run_batched

    def spy(plans, store, on_partial, cancel, threads=None):
        calls.append(len(plans))
        outcomes.extend(real(plans, store, lambda i, p: (routed.append((i, p["id"])), on_partial(i, p)), cancel,
                             threads))
        return outcomes

    monkeypatch.setattr(task, "run_batched", spy)
    busy, release = threading.Event(), threading.Event()
    one_worker.submit("someone else", "live-busy", LIVE, lambda: (busy.set(), release.wait(300)))
    assert busy.wait(10)
    students = [_session(tiny_gpt2), _session(tiny_gpt2)]
    students[0].session_state["live_top_p"], students[1].session_state["live_top_p"] = 0.5, 0.7
    students[1].session_state["live_seed"] = 3  # a seed of its own: still the same call
    threads = [threading.Thread(target=student.run) for student in students]
    for thread in threads:
        thread.start()
    _wait_for(lambda: len(one_worker.queue) == 2)
    release.set()
    for thread in threads:
        thread.join(120)
    assert calls == [2]  # both sessions' rows in one generation call
    # each partial text went to the session whose row it is, and each session's cards got all of its rows
    assert routed and all(gid in set(outcomes[i].generations["generation_id"]) for i, gid in routed)
    assert {i for i, _ in routed} == {0, 1}
    for student, label in zip(students, ("top\\_p=0\\.5", "top\\_p=0\\.7"), strict=True):
        assert not student.exception, student.exception
        assert any(label in str(m.value) and "generated now" in str(m.value) for m in student.markdown)
        assert len(_cards(student)) == 11
    again = _session(tiny_gpt2)  # the same setting asked later is read back: the rows the batch stored for it
    again.session_state["live_top_p"] = 0.5
    again.run()
    assert _cards(again) == _cards(students[0])


def test_a_newer_move_replaces_the_sessions_queued_request(one_worker: WorkerPool) -> None:
    busy, release = threading.Event(), threading.Event()
    one_worker.submit("someone else", "live-busy", LIVE, lambda: (busy.set(), release.wait(300)))
    assert busy.wait(10)
    first_key, second_key = jobs.key_for("live", {"top_p": 0.5}), jobs.key_for("live", {"top_p": 0.7})
    first = jobs.start(first_key, lambda on_progress, cancel: "p=0.5", lane=LIVE, session="student")
    second = jobs.start(second_key, lambda on_progress, cancel: "p=0.7", lane=LIVE, session="student")
    assert first.dropped and first.done and first.result is None  # never computed
    assert [entry.key for entry in one_worker.queue.order()] == [second_key]
    release.set()
    jobs.wait(second_key, 60)
    assert second.result == "p=0.7"


# -- a served app (FAIRNESS_LAB_SERVED=1): per-session caps, bigger sweeps are the teacher's ------------------
@pytest.fixture()
def served_page(tiny_gpt2: Path, isolated_store: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("FAIRNESS_LAB_SERVED", "1")
    app = _session(tiny_gpt2)
    app.session_state["live_auto"] = False
    return app


def _errors(app: AppTest) -> list[str]:
    return [shown(e.value) for e in app.error]  # as a reader sees them: the page escapes the data it quotes


def test_a_served_sweep_above_the_generation_cap_asks_for_the_teachers_cli(served_page: AppTest) -> None:
    served_page.session_state["sweep_samples"] = 10  # 3 settings x 110 prompts x 10 samples = 3,300 generations
    served_page.run()
    assert not served_page.exception, served_page.exception
    (error,) = _errors(served_page)
    assert "3,300 generations in one sweep is above this server's classroom cap of 2,000" in error
    assert "ask the teacher to run it with the command line (python -m fairness_core decoding" in error
    assert not [b for b in served_page.button if b.key == "sweep_run"]  # nothing to confirm, nothing to run
    assert not [c for c in served_page.checkbox if c.key == "sweep_confirm"]


def test_a_served_grid_above_the_configuration_cap_is_refused(served_page: AppTest) -> None:
    served_page.session_state["sweep_samples"] = 1
    served_page.session_state["sweep_grid_top-p, quick (0.5, 0.7, 0.9)"] = "top_p=" + ",".join(
        f"{0.05 * i:.2f}" for i in range(1, 14))
    served_page.run()
    assert any("13 decoding configurations in one sweep is above this server's classroom cap of 12" in e
               for e in _errors(served_page))


def test_a_served_session_has_a_budget_of_generations_across_its_sweeps(served_page: AppTest) -> None:
    served_page.session_state["decoding_served_generations"] = 5_500  # earlier sweeps of this session
    served_page.run()  # the default sweep (990 generations) would take it past 6,000
    assert any("6,490 generations in this session's sweeps is above this server's classroom cap of 6,000" in e
               for e in _errors(served_page))


def test_a_served_live_move_above_the_live_cap_is_refused_without_generating(served_page: AppTest) -> None:
    served_page.session_state["live_auto"] = True
    served_page.session_state["live_prompts"] = 10
    served_page.session_state["live_samples"] = 20
    served_page.run()
    assert any("2,200 generations in one live move is above this server's classroom cap of 200" in e
               for e in _errors(served_page))
    assert not [m for m in served_page.markdown if "negative]" in str(m.value)]


def test_the_caps_apply_only_when_served(tiny_gpt2: Path, isolated_store: Path) -> None:
    app = _session(tiny_gpt2)
    app.session_state["live_auto"] = False
    app.session_state["sweep_samples"] = 10
    app.run()
    assert not _errors(app) and [b for b in app.button if b.key == "sweep_run"]
