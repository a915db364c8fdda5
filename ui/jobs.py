"""Run a long computation in a background thread with a live progress bar, ETA and a Cancel button.

Generic: any function `work(on_progress, cancel) -> result` that reports
`fairness_core.jobs.Progress` and honours a `CancelToken` (e.g. `run_task` or something built on
it). Jobs live in a *process-wide* registry keyed by what they compute (`key_for(kind, request)`,
the request's manifest hash), not in one browser session: a reloaded page or a second tab that asks
for the same computation re-attaches to the running job instead of starting a duplicate, and
`running()` lists jobs started elsewhere so a user can re-attach after a reload. A fragment
refreshes only the progress bar every second and triggers one full rerun when the job ends.

    key = ui.jobs.key_for("sweep", request)
    job = ui.jobs.start(key, lambda on_progress, cancel: run_task(task, store, on_progress, cancel), label="Sweep")
    job = ui.jobs.show(key)          # progress + Cancel while running; None if never started
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
from fairness_core.store.manifest import manifest_hash

Work = Callable[[Callable[[Progress], None], CancelToken], Any]

#: finished jobs kept for re-attaching (their results also live in the run store)
KEEP_FINISHED = 32

_REGISTRY: dict[str, BackgroundJob] = {}
_REGISTRY_LOCK = threading.Lock()
_SHOWN_DONE = "_background_jobs_shown_done"


@dataclass
class BackgroundJob:
    key: str
    label: str = "Job"
    cancel: CancelToken = field(default_factory=CancelToken)
    progress: Progress | None = None
    result: Any = None
    error: BaseException | None = None
    started: float = field(default_factory=time.monotonic)
    started_wall: float = field(default_factory=time.time)
    finished: float | None = None
    thread: threading.Thread | None = None

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
            text += " — cancelling"
        return self.progress.fraction, f"{text}; {elapsed} so far"


def key_for(kind: str, request: Any) -> str:
    """The registry key of a computation: its kind and the hash of its (JSON-like) request."""
    return f"{kind}-{manifest_hash({'kind': kind, 'request': request})[:16]}"


def get(key: str) -> BackgroundJob | None:
    with _REGISTRY_LOCK:
        return _REGISTRY.get(key)


def running(prefix: str = "") -> list[BackgroundJob]:
    """Jobs still running in this server process whose key starts with `prefix` (oldest first)."""
    with _REGISTRY_LOCK:
        jobs = [job for key, job in _REGISTRY.items() if key.startswith(prefix) and job.running]
    return sorted(jobs, key=lambda job: job.started)


def start(key: str, work: Work, label: str = "Job") -> BackgroundJob:
    """Start `work` in a daemon thread unless a job under `key` is already running; return the job."""
    with _REGISTRY_LOCK:
        existing = _REGISTRY.get(key)
        if existing is not None and existing.running:
            return existing  # same computation already under way (another tab, a reload): attach to it
        job = BackgroundJob(key, label=label)
        _REGISTRY[key] = job
        _forget_old_finished()

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
    st.session_state.setdefault(_SHOWN_DONE, set()).discard(key)
    job.thread.start()
    return job


def _forget_old_finished() -> None:
    finished = sorted((job for job in _REGISTRY.values() if job.done), key=lambda job: job.finished or 0)
    for job in finished[: max(0, len(finished) - KEEP_FINISHED)]:
        _REGISTRY.pop(job.key, None)


def clear(key: str) -> None:
    with _REGISTRY_LOCK:
        job = _REGISTRY.get(key)
        if job is not None and job.done:
            _REGISTRY.pop(key, None)


def wait(key: str, timeout_s: float | None = None) -> BackgroundJob | None:
    """Block until the job ends (tests, scripts)."""
    job = get(key)
    if job is not None and job.thread is not None:
        job.thread.join(timeout_s)
    return job


def show(key: str, label: str | None = None) -> BackgroundJob | None:
    """Progress bar with ETA and a Cancel button while the job runs; a status line once it ended."""
    job = get(key)
    if job is None:
        return None
    label = label or job.label
    if job.running:
        _live_progress(key, label)
    elif job.error is not None:
        st.error(f"{label} failed: {job.error}")
    elif job.cancel.cancelled:
        done = f" ({job.progress.done} of {job.progress.total} batches done)" if job.progress else ""
        st.warning(f"{label} was cancelled by the user{done}; results below are partial. Finished batches are "
                   "stored and running it again resumes.")
    return job


def reattach_picker(prefix: str, label: str) -> str | None:
    """Running jobs of this kind started in another tab or before a reload; returns the key chosen."""
    others = running(prefix)
    if not others:
        return None
    names = {job.key: f"{job.label} started {time.strftime('%H:%M:%S', time.localtime(job.started_wall))} — "
                      f"{job.describe()[1]}" for job in others}
    st.info(f"{len(others)} {label} job(s) are running on this server (another tab, or before a reload).")
    choice = st.selectbox("Re-attach to a running job", [None, *names], format_func=lambda k: "—" if k is None
                          else names[k], key=f"{prefix}_reattach")
    return choice


@st.fragment(run_every=1.0)
def _live_progress(key: str, label: str) -> None:
    job = get(key)
    if job is None:
        return
    if job.done:
        shown = st.session_state.setdefault(_SHOWN_DONE, set())
        if key not in shown:
            shown.add(key)
            st.rerun()  # whole page: it can now show the results
        return
    fraction, text = job.describe()
    st.progress(min(max(fraction, 0.0), 1.0), text=f"{label}: {text}")
    if st.button("Cancel", key=f"{key}_cancel_button", disabled=job.cancel.cancelled,
                 help="Stops within seconds; finished batches stay stored and running it again resumes."):
        job.cancel.cancel()
