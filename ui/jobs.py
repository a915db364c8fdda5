"""Run a long computation in a background thread with a live progress bar, ETA and a Cancel button.

Generic: any function `work(on_progress, cancel) -> result` that reports
`fairness_core.jobs.Progress` and honours a `CancelToken` (e.g. `run_task` or something built on
it). The job lives in `st.session_state`, so reruns of the page (other widgets moving) do not
restart or lose it; a fragment refreshes only the progress bar every second and triggers one
full rerun when the job ends, so the page can show the results.

    job = ui.jobs.start("sweep", lambda on_progress, cancel: run_task(task, store, on_progress, cancel))
    job = ui.jobs.show("sweep", label="Sweep")      # progress + Cancel while running; None if never started
    if job and job.done and job.error is None: use(job.result)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from fairness_core.jobs import CancelToken, Progress, format_seconds

Work = Callable[[Callable[[Progress], None], CancelToken], Any]
_PREFIX = "_background_job_"


@dataclass
class BackgroundJob:
    key: str
    cancel: CancelToken = field(default_factory=CancelToken)
    progress: Progress | None = None
    result: Any = None
    error: BaseException | None = None
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None
    thread: threading.Thread | None = None
    shown_done: bool = False  # the page has rerun once since the job ended

    @property
    def done(self) -> bool:
        return self.finished is not None

    @property
    def running(self) -> bool:
        return not self.done

    def describe(self) -> tuple[float, str]:
        elapsed = format_seconds(time.monotonic() - self.started)
        if self.progress is None:
            return 0.0, f"starting (loading models)… {elapsed} so far"
        text = self.progress.describe()
        if self.cancel.cancelled:
            text += " — cancelling after the current batch"
        return self.progress.fraction, f"{text}; {elapsed} so far"


def get(key: str) -> BackgroundJob | None:
    return st.session_state.get(_PREFIX + key)


def start(key: str, work: Work) -> BackgroundJob:
    """Start `work` in a daemon thread unless a job under `key` is already running; return the job."""
    existing = get(key)
    if existing is not None and existing.running:
        return existing
    job = BackgroundJob(key)

    def on_progress(progress: Progress) -> None:
        job.progress = progress

    def target() -> None:
        try:
            job.result = work(on_progress, job.cancel)
        except BaseException as error:  # shown in the page; never lost in a thread
            job.error = error
        finally:
            job.finished = time.monotonic()

    job.thread = threading.Thread(target=target, name=f"job-{key}", daemon=True)
    st.session_state[_PREFIX + key] = job
    job.thread.start()
    return job


def clear(key: str) -> None:
    st.session_state.pop(_PREFIX + key, None)


def wait(key: str, timeout_s: float | None = None) -> BackgroundJob | None:
    """Block until the job ends (tests, scripts)."""
    job = get(key)
    if job is not None and job.thread is not None:
        job.thread.join(timeout_s)
    return job


def show(key: str, label: str = "Job") -> BackgroundJob | None:
    """Progress bar with ETA and a Cancel button while the job runs; a status line once it ended."""
    job = get(key)
    if job is None:
        return None
    if job.running:
        _live_progress(key, label)
    elif job.error is not None:
        st.error(f"{label} failed: {job.error}")
    elif job.cancel.cancelled:
        st.warning(f"{label} was cancelled; finished batches are stored and running it again resumes.")
    return job


@st.fragment(run_every=1.0)
def _live_progress(key: str, label: str) -> None:
    job = get(key)
    if job is None:
        return
    if job.done:
        if not job.shown_done:
            job.shown_done = True
            st.rerun()  # whole page: it can now show the results
        return
    fraction, text = job.describe()
    st.progress(min(max(fraction, 0.0), 1.0), text=f"{label}: {text}")
    if st.button("Cancel", key=f"{key}_cancel_button", disabled=job.cancel.cancelled,
                 help="Stops after the batch in flight; finished batches stay stored and a rerun resumes."):
        job.cancel.cancel()
