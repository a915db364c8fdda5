"""The ui.jobs widgets in a real Streamlit script (AppTest): Run disabled while its job runs, the estimate before
start and the tick for big jobs, a visible Cancel that stops the job inside a batch, the partial label after."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.ui import job_work
from ui import jobs


def _page() -> None:
    import streamlit as st

    from fairness_core.jobs import run_task
    from fairness_core.store import RunStore
    from tests.ui import job_work
    from ui import jobs

    task = job_work.make_task(tag=st.session_state["tag"])
    key = jobs.key_for(task.kind, task.request)
    store = RunStore(st.session_state["store"])
    if jobs.run_button(key, "Run it", estimate_s=st.session_state.get("estimate"), widget_key="run_it"):
        jobs.start(key, lambda on_progress, cancel: run_task(task, store, on_progress, cancel), label="Long job",
                   units=30)
    job = jobs.show(key)
    if job is not None and job.done and job.error is None:
        jobs.show_partial(job.result)


def _app(tmp_path: Path, tag: str, estimate: float | None = None) -> AppTest:
    app = AppTest.from_function(_page, default_timeout=30)
    app.session_state["tag"] = f"{tag}-{time.monotonic_ns()}"
    app.session_state["store"] = str(tmp_path / "runs.duckdb")
    if estimate is not None:
        app.session_state["estimate"] = estimate
    return app.run()


def _key(app: AppTest) -> str:
    task = job_work.make_task(tag=app.session_state["tag"])
    return jobs.key_for(task.kind, task.request)


def _wait_for_in_batch_progress(key: str) -> jobs.BackgroundJob:
    job = jobs.get(key)
    deadline = time.monotonic() + 60
    while job is not None and (job.progress is None or job.progress.partial == 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job is not None and job.progress is not None and job.progress.partial > 0
    return job


def _progress(app: AppTest) -> list:
    return [element for element in app.get("progress")]


def test_run_is_disabled_while_the_job_runs_and_cancel_stops_it_with_a_partial_label(tmp_path: Path) -> None:
    app = _app(tmp_path, "cancel")
    assert not app.button(key="run_it").disabled
    assert not any("Estimated" in c.value for c in app.caption)  # no estimate given, none shown
    app.button(key="run_it").click().run()
    assert not app.exception, app.exception
    key = _key(app)
    job = _wait_for_in_batch_progress(key)
    app.run()
    assert app.button(key="run_it").disabled  # the same request is running: no second start
    assert any(c.value.startswith("Already running") for c in app.caption)
    second = _app(tmp_path, "other")  # a second tab with the same request sees it running too
    second.session_state["tag"] = app.session_state["tag"]
    second.run()
    assert second.button(key="run_it").disabled

    cancel = app.button(key=f"{key}_cancel_button")  # the visible Cancel under the progress bar
    assert cancel.label == "Cancel" and not cancel.disabled
    assert any("Long job: 0/3 batches (" in p.text and "current batch" in p.text for p in _progress(app))
    cancel.click().run()
    assert job.cancel.cancelled
    jobs.wait(key, 30)  # a batch takes ~1000 s: only an in-batch stop ends the job within this bound
    assert job.done and job.error is None
    app.run()
    assert not app.exception, app.exception
    warnings = [w.value for w in app.warning]
    assert any("Long job was cancelled by the user (partial: 0 of 3 batches)" in w for w in warnings), warnings
    assert any(w.startswith("These results are partial: 0 of 3 batches") for w in warnings), warnings
    assert not app.button(key="run_it").disabled  # finished: it can be run again (and resumes)


@pytest.mark.parametrize(("estimate", "ticks"), [(30.0, False), (3 * 3600.0, True)])
def test_the_estimate_is_shown_before_start_and_a_big_job_needs_a_tick(tmp_path: Path, estimate: float,
                                                                       ticks: bool) -> None:
    app = _app(tmp_path, "estimate", estimate=estimate)
    assert not app.exception, app.exception
    shown = [c.value for c in app.caption if c.value.startswith("Estimated time")]
    assert shown == [f"Estimated time: about {jobs.format_seconds(estimate)} on this machine."]
    if not ticks:
        assert not app.checkbox and not app.button(key="run_it").disabled
        return
    assert app.button(key="run_it").disabled and app.checkbox[0].label == "Yes, start it (about 3 h 00 min)"
    app.checkbox[0].check().run()
    assert not app.button(key="run_it").disabled


def _follower_page() -> None:
    import streamlit as st

    from fairness_core.jobs import run_task
    from fairness_core.store import RunStore
    from tests.ui import job_work
    from ui import jobs

    task = job_work.make_task(tag=st.session_state["tag"])
    if st.button("Start", key="start"):
        key = jobs.key_for(task.kind, task.request)
        st.session_state["followed_job"] = key
        store = RunStore(st.session_state["store"])
        jobs.start(key, lambda on_progress, cancel: run_task(task, store, on_progress, cancel), label="Long job")
    key = jobs.followed("followed_job", "test-long-batches-", "long")
    if key is not None:
        jobs.show(key)


def test_a_reloaded_page_picks_the_running_job_and_still_shows_its_end_after_it_stopped(tmp_path: Path) -> None:
    first = AppTest.from_function(_follower_page, default_timeout=30)
    first.session_state["tag"] = f"follow-{time.monotonic_ns()}"
    first.session_state["store"] = str(tmp_path / "runs.duckdb")
    first.run()
    first.button(key="start").click().run()
    key = _key(first)
    job = _wait_for_in_batch_progress(key)

    reloaded = AppTest.from_function(_follower_page, default_timeout=30)  # a new session: nothing remembered
    reloaded.session_state["tag"] = first.session_state["tag"]
    reloaded.session_state["store"] = first.session_state["store"]
    reloaded.run()
    assert any("1 long job(s) are running on this server" in i.value for i in reloaded.info)
    reloaded.selectbox(key="test-long-batches-_reattach").set_value(key).run()
    assert reloaded.session_state["followed_job"] == key
    reloaded.button(key=f"{key}_cancel_button").click().run()
    jobs.wait(key, 30)
    assert job.done and job.cancel.cancelled
    reloaded.run()  # the job no longer runs, so the picker no longer lists it: the session still follows it
    assert not reloaded.exception, reloaded.exception
    assert any("Long job was cancelled by the user (partial: 0 of 3 batches)" in w.value for w in reloaded.warning)
