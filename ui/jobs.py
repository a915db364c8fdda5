"""Run a long computation in a background thread with a live progress bar, ETA and a Cancel button.

Generic: any function `work(on_progress, cancel) -> result` that reports
`fairness_core.jobs.Progress` and honours a `CancelToken` (e.g. `run_task` or something built on
it). Jobs live in a *process-wide* registry keyed by what they compute (`key_for(kind, request)`,
the request's manifest hash), not in one browser session: a reloaded page or a second tab that asks
for the same computation re-attaches to the running job instead of starting a duplicate, and
`running()` lists jobs started elsewhere so a user can re-attach after a reload. A fragment
refreshes only the progress bar every second and triggers one full rerun when the job ends.

    key = ui.jobs.key_for("sweep", request)
    estimate = ui.jobs.estimate_s("sweep", units=n_generations, seconds_per_unit=0.2)
    if ui.jobs.run_button(key, "Run sweep", estimate_s=estimate):     # disabled while this job runs
        ui.jobs.start(key, lambda on_progress, cancel: run_task(task, store, on_progress, cancel),
                      label="Sweep", units=n_generations)
    job = ui.jobs.show(key)   # progress, live ETA + Cancel while running; "partial: 3 of 10 batches" if cancelled
    if job and job.done and job.error is None:
        use(job.result)
    ui.jobs.show_partial(run_info)   # results read back from the store without a job: labelled when unfinished
    key = ui.jobs.followed("my_job", "sweep-", "sweep")   # after a reload: offer the running ones, then follow it

Page helpers (docs/FOUNDATION.md, "Long work on a page"): `run_button` (disabled while the same job runs;
says the estimated time first and asks for a tick above `CONFIRM_ABOVE_S`), `cancel_button` (the visible
Cancel; work units stop at their next `fairness_core.jobs.checkpoint`, within seconds), `partial_label` /
`partial_note` / `show_partial` (results of a cancelled run), `eta_s` (refreshed every second from in-batch
progress), `estimate_s` / `record_rate` (seconds per unit measured by earlier jobs of the same kind, or the page's
documented cost, scaled by how busy the machine is now: `machine_slowdown`, `fairness_core.jobs.load`).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from fairness_core.jobs import CancelToken, Progress, format_seconds
from fairness_core.jobs.estimates import SHARE_POWERS, Work, calibrated_seconds, measured_ratio
from fairness_core.jobs.load import LoadGauge, load_average_slowdown, rescale, revised_left, share_slowdown
from fairness_core.jobs.queue import (
    LIVE,
    SWEEP,
    Entry,
    WorkerPool,
    live_threads,
    position_message,
    release_free_memory,
    tidy_when_idle,
    usable_cores,
    wait_estimate,
    worker_count,
)
from fairness_core.store.manifest import manifest_hash
from ui.common import escape_markdown

Job = Callable[[Callable[[Progress], None], CancelToken], Any]
#: runs several jobs' items in one call: (items, on_partial(i, partial), cancel) -> one result per item
BatchRunner = Callable[[list[Any], Callable[[int, dict], None], Any], list[Any]]

#: finished jobs kept for re-attaching (their results also live in the run store)
KEEP_FINISHED = 32
#: a Run button whose estimate is above this many seconds asks for a tick first ("big grids")
CONFIRM_ABOVE_S = 120.0

#: jobs whose end one browser session has already shown (a full rerun each), remembered per session
KEEP_SHOWN = 64
#: how often `follow` looks at a job it waits for (seconds): partial results and the queue message
FOLLOW_EVERY_S = 0.1
#: while queued, the place in line is redrawn when it changes or at least this often (seconds)
WAIT_REDRAW_S = 0.5
#: live requests generated in one call have at most this many rows to generate together. The first session of a
#: batch waits for the whole call, whose time grows with its rows (SmolLM2 on one thread: 11 rows ~3.5 s, 44 rows
#: ~8.5 s, 88 rows ~15 s at load ~10), so the bound is on rows, not requests: four of the decoding page's default
#: 11-row moves, which keeps most of the gain per row while a queue of eight moves goes to two workers at once
#: instead of one; a served live move may have 200 rows, and then runs alone
BATCH_ROWS = 48

_REGISTRY: dict[str, BackgroundJob] = {}
_REGISTRY_LOCK = threading.RLock()
_SHOWN_DONE = "_background_jobs_shown_done"
_SESSION_ID = "_background_jobs_session"
#: per job kind: (seconds per unit (a generation, a pair, ...) measured by a finished job in this process, the
#: machine's slowdown when that job started), so the rate is rescaled to the load of the moment it is used
_RATES: dict[str, tuple[float, float]] = {}


def _model_work_running() -> bool:
    """Whether the model workers run or hold work now (the load gauges probe less often meanwhile: `LoadGauge`)."""
    return _POOL is not None and not _POOL.idle()


#: the machine's current slowdown against the quiet reference machine (a short probe, reused for a while);
#: tests replace it with a `LoadGauge` whose probe is fixed
LOAD = LoadGauge(own_work_running=_model_work_running)
#: the same for pure-Python work on one thread (`fairness_core.jobs.estimates.SHARE`): its share of a core only
SHARE_LOAD = LoadGauge(probe=share_slowdown, own_work_running=_model_work_running)
#: per job kind started with a `Work`: (real over first-estimated seconds of the last job of that kind that computed
#: everything here, the slowdown then); the next first estimate of that kind is corrected by it, within bounds
_RATIOS: dict[str, tuple[float, float]] = {}
#: a learnt ratio corrects an estimate by at most this factor either way (one odd job does not swing the next)
MAX_CORRECTION = 3.0
#: the time left moves towards what progress says with this time constant (seconds): the first in-batch reports of
#: a sweep carry its warm-up and extrapolated to twice its time (the figure climbed from 17 s to 54 s left, then
#: fell back), and a job's implied whole time should move with the load, not with each report
ETA_SMOOTHING_S = 10.0
_POOL: WorkerPool | None = None

#: "TIMING job ..." lines (time in the queue, time running) beside the generation task's model and scorer lines, for
#: `bench.classroom`'s breakdown of a move; written to stderr only when FAIRNESS_LAB_TIMING_LOG=1
timing_log = logging.getLogger("fairness_core.timing")
if os.environ.get("FAIRNESS_LAB_TIMING_LOG") == "1" and not timing_log.handlers:
    timing_log.addHandler(logging.StreamHandler(sys.stderr))
    timing_log.setLevel(logging.INFO)
    timing_log.propagate = False


def _name_os_threads(every_s: float = 0.1) -> None:
    """Copy each Python thread's name into its OS thread name (/proc/self/task/<tid>/comm) so `bench.classroom` can
    split the server's CPU by thread (model workers, page scripts, the event loop); only with the timing log. A new
    OS thread starts with its creator's name: one that ends within `every_s` keeps it (a script run that short is
    counted with the event loop), and threads started from C (torch's helpers) keep their creator's for good."""
    named: set[tuple[int, str]] = set()
    while True:
        live = {(thread.native_id, thread.name) for thread in threading.enumerate() if thread.native_id is not None}
        named &= live  # a thread id the system reuses is named again
        for tid, name in live - named:
            try:
                with open(f"/proc/self/task/{tid}/comm", "w") as comm:
                    comm.write(name[:15])
            except OSError:  # the thread ended meanwhile, or /proc is not Linux's
                continue
            named.add((tid, name))
        time.sleep(every_s)


if timing_log.handlers and sys.platform.startswith("linux"):
    threading.Thread(target=_name_os_threads, name="timing-names", daemon=True).start()


def _log_timing(job: BackgroundJob, rows: int | None) -> None:
    if job.finished is not None:
        timing_log.info("TIMING job lane=%s rows=%s queue_s=%.3f run_s=%.3f", job.lane, rows or job.units or 0,
                        job.started - job.asked, job.finished - job.started)
NO_SESSION = "(no browser session)"


@dataclass
class BackgroundJob:
    key: str
    label: str = "Job"
    cancel: CancelToken = field(default_factory=CancelToken)
    progress: Progress | None = None
    result: Any = None
    error: BaseException | None = None
    started: float = field(default_factory=time.monotonic)
    asked: float = field(default_factory=time.monotonic)  # when it was queued (`started` is when a worker took it)
    started_wall: float = field(default_factory=time.time)
    finished: float | None = None
    units: int | None = None  # what the job computes, in the page's units (generations, pairs); for rates
    progress_at: float | None = None  # monotonic time of the last progress report
    lane: str = SWEEP  # LIVE (a slider move) or SWEEP (a background job): the queue serves LIVE first
    begun: bool = False  # False while it waits in the queue for a model worker
    sessions: set[str] = field(default_factory=set)  # browser sessions waiting for it
    shared_with: int = 0  # other sessions that asked for the same computation while it was queued or running
    dropped: bool = False  # a newer request of its only session replaced it before it started
    ended: threading.Event = field(default_factory=threading.Event)
    partials: dict[Any, tuple[int, dict]] = field(default_factory=dict)  # latest partial per row, numbered
    partial_count: int = 0
    batch: tuple[str, Any, BatchRunner] | None = None  # (group, item, runner): may run with queued companions
    slowdown: float | None = None  # the machine's slowdown when it was asked for (jobs with units): scales rates
    seconds_per_unit: float | None = None  # the page's documented cost, until a job of this kind measured one
    work: Work | None = None  # what the job computes and its documented cost (`fairness_core.jobs.estimates`)
    first_s: float | None = None  # the estimate shown when it was asked for (jobs started with a `Work`)
    total_s: float | None = None  # the whole time the progress line implies (time so far + time left), smoothed
    total_at: float | None = None  # the job's elapsed seconds when `total_s` was last revised

    @property
    def done(self) -> bool:
        return self.finished is not None

    def publish(self, partial: dict) -> None:
        """Keep a work unit's partial result (the latest per row) for the sessions that follow this job."""
        with _REGISTRY_LOCK:
            self.partial_count += 1
            self.partials[(partial.get("kind"), partial.get("group"), partial.get("id"))] = (self.partial_count,
                                                                                           partial)

    def partials_since(self, seen: int) -> tuple[list[dict], int]:
        """Partial results newer than number `seen`, in order, and the newest number."""
        with _REGISTRY_LOCK:
            newer = sorted((number, partial) for number, partial in self.partials.values() if number > seen)
            return [partial for _, partial in newer], self.partial_count

    @property
    def running(self) -> bool:
        return not self.done

    def describe(self) -> tuple[float, str]:
        """(fraction done, "3/10 batches (34%; current batch 40%), about 12 s left; 25 s so far")."""
        if not self.begun and self.progress is None:
            return 0.0, queue_message(self.key) or "waiting for a model worker"
        elapsed = format_seconds(time.monotonic() - self.started)
        eta = eta_s(self)
        eta_text = "" if eta is None else left_text(eta, self.progress.fraction if self.progress is not None else 0.0)
        if self.progress is None:
            return 0.0, f"starting (loading models){eta_text}… {elapsed} so far"
        progress = self.progress
        inside = f"; current batch {progress.partial:.0%}" if progress.partial > 0 and progress.unit == "batches" \
            else ""
        text = f"{progress.done}/{progress.total} {progress.unit} ({progress.fraction:.0%}{inside}){eta_text}"
        if self.cancel.cancelled:
            text += " — cancelling"
        return progress.fraction, f"{text}; {elapsed} so far"


def left_text(eta: float, fraction: float = 0.0) -> str:
    """", about 12 s left"; once the time estimated is spent and the job still runs, that, not "about 0 s left"
    frozen for as long as the job takes (issue 43: it stood for 9 s) — or, with all its work reported done (the
    summary after the last batch), that it is finishing."""
    if eta < 1.0:
        return ", finishing" if fraction >= 0.999 else ", taking longer than estimated"
    return f", about {format_seconds(eta)} left"


def kind_of(key: str) -> str:
    """The kind part of a registry key made by `key_for` ("sweep-0123abcd..." -> "sweep")."""
    return key.rsplit("-", 1)[0]


def eta_s(job: BackgroundJob) -> float | None:
    """Seconds left, recomputed now (not frozen at the last report).

    From progress: the time spent so far (including since the last report) over the work done so far,
    whole batches plus the in-batch fraction work units report through `fairness_core.jobs.checkpoint`, times
    the work left; a batch that takes longer than expected makes the estimate grow instead of stalling. While
    little is done, it is blended with the first estimate (`fairness_core.jobs.load.revised_left`), and a rise is
    taken at a pace (`steady_left`). Before the first progress: the first estimate (`first_estimate_s`) less the
    time spent (never probed here, every second).
    """
    if job.done:
        return 0.0
    now = time.monotonic()
    first = first_estimate_s(job)
    progress = job.progress
    if progress is not None:
        fraction = progress.computed_fraction  # weighted by cost where the study's parts cost differently
        if fraction > 0:
            elapsed = progress.elapsed_s + (now - (job.progress_at or now))
            return steady_left(job, elapsed, revised_left(elapsed, fraction, first), first)
    if first is not None:
        spent = now - job.started if job.begun else 0.0  # a queued job has all of its work ahead
        return max(first - spent, 0.0)
    return None


def steady_left(job: BackgroundJob, elapsed: float, left: float, first: float | None = None) -> float:
    """`left`, with a rise of the whole time it implies (elapsed + left) taken at the pace of `ETA_SMOOTHING_S` of
    the job's own time rather than at once: a warm-up or one slow batch does not make the figure jump, a job that is
    really slower still gets there within seconds, and good news (a shorter whole time) is shown at once. The first
    figure the line showed (`first`, the estimate before any progress) is where it starts from."""
    total = elapsed + left
    if job.total_s is None and first is not None:
        job.total_s, job.total_at = first, elapsed
    if job.total_s is None or job.total_at is None or total <= job.total_s:
        job.total_s, job.total_at = total, elapsed
        return left
    weight = min(1.0, max(elapsed - job.total_at, 0.0) / ETA_SMOOTHING_S)
    job.total_s += (total - job.total_s) * weight
    job.total_at = elapsed
    return max(job.total_s - elapsed, 0.0)


def first_estimate_s(job: BackgroundJob) -> float | None:
    """The job's whole time as estimated when it was asked for: for a job started with a `Work`, the figure the page
    showed (`estimate`); else the rate measured by earlier jobs of its kind (else the page's documented cost) times
    its units, rescaled to the machine's slowdown then (`job.slowdown`)."""
    if job.first_s is not None:
        return job.first_s
    measured = _RATES.get(kind_of(job.key)) or ((job.seconds_per_unit, 1.0) if job.seconds_per_unit else None)
    if not job.units or measured is None:
        return None
    rate = rescale(*measured, now=job.slowdown) if job.slowdown is not None else measured[0]
    return rate * job.units


def slowdown_for(work: Work) -> float:
    """The machine's slowdown for this work now: the larger of what the 1-minute load average implies
    (`load.load_average_slowdown`) and a one-thread probe of a core's share (`SHARE_LOAD`, the median of the last two
    minutes' probes), to the power its kind of work feels it (`estimates.SHARE_POWERS`). Each alone missed: the
    probe read 1.1x at load 5-10 while every job ran twice as slow (bursts of other work it did not land in), the
    load average saw 3x where two processes spinning on the cores slowed BERTScore 7x; the torch probe read 2x to 16x
    within minutes while the jobs took the same time (2026-11-28, `python -m bench.job_estimates`). Never below 1: a
    machine faster than the reference is learnt from its first job (`_RATIOS`)."""
    slowdown = max(SHARE_LOAD.slowdown(), load_average_slowdown())
    return slowdown ** SHARE_POWERS[work.scaling] if slowdown > 1.0 else slowdown


def estimate(work: Work, slowdown: float | None = None) -> float:
    """Seconds `work` should take here now: its documented cost at the machine's slowdown for its kind of work,
    corrected by what the last job of its kind measured here (`fairness_core.jobs.estimates.calibrated_seconds`)."""
    now = slowdown_for(work) if slowdown is None else slowdown
    measured = _RATIOS.get(work.kind)
    if measured is not None:
        measured = (min(max(measured[0], 1 / MAX_CORRECTION), MAX_CORRECTION), measured[1])
    return calibrated_seconds(work, now, measured)


def machine_slowdown() -> float:
    """How many times slower than the quiet reference machine work runs here now (`fairness_core.jobs.load`):
    1.0 on a quiet reference machine, far more when torch shares the cores with other processes."""
    return LOAD.slowdown()


def record_rate(kind: str, seconds: float, units: int, slowdown: float = 1.0) -> None:
    """Remember that `units` of work of this kind took `seconds` here while the machine was `slowdown` times
    slower than the reference (used by `estimate_s`, rescaled to the load of the moment)."""
    if units > 0 and seconds > 0:
        _RATES[kind] = (seconds / units, slowdown)


def estimate_s(kind: str, units: int, seconds_per_unit: float | None = None,
               slowdown: float | None = None) -> float | None:
    """Estimated seconds for `units` of work of this kind on this machine now, else None.

    The rate is the one measured by the latest finished job of this kind in this process, else
    `seconds_per_unit` (the page's documented cost on the quiet reference machine, docs/<page>.md); either is
    scaled by the machine's slowdown now (`slowdown`, else `machine_slowdown()`) over the slowdown it was measured
    at (1.0 for the documented cost). The slowdown is probed only when there is a rate to scale.
    """
    measured = _RATES.get(kind) or ((seconds_per_unit, 1.0) if seconds_per_unit is not None else None)
    if measured is None:
        return None
    now = machine_slowdown() if slowdown is None else slowdown
    return rescale(*measured, now=now) * units


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


def session_id() -> str:
    """This browser session's id for the queue (which serves sessions in turn): a random token kept in the
    session's state; a fixed name outside a Streamlit run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return NO_SESSION
    return st.session_state.setdefault(_SESSION_ID, uuid.uuid4().hex)


def pool() -> WorkerPool:
    """The process's model workers (`FAIRNESS_LAB_MODEL_WORKERS`, default one per core), made on first use."""
    global _POOL
    with _REGISTRY_LOCK:
        if _POOL is None:
            _POOL = WorkerPool(worker_count(), on_drop=_dropped, run_batch=_run_batch, max_batch=BATCH_ROWS,
                               max_batch_size=BATCH_ROWS, on_idle=release_free_memory)
            tidy_when_idle(_POOL)
        return _POOL


def start(key: str, work: Job, label: str = "Job", units: int | None = None, lane: str = SWEEP,
          session: str | None = None, batch: tuple[str, Any, BatchRunner] | None = None,
          seconds_per_unit: float | None = None, estimate_of: Work | None = None) -> BackgroundJob:
    """Queue `work` for a model worker unless a job under `key` is already queued or running; return the job.

    `units` (optional): how much work this is in the page's units (generations, pairs); a job that
    computes something records its seconds per unit, which `estimate_s` uses for the next estimate.
    `seconds_per_unit`: the page's documented cost, for the time left before the first progress report while
    no job of this kind has measured one (both are rescaled to the machine's load when the job is asked for).
    `lane`: LIVE for a slider move (served before sweeps; a newer LIVE request of the same session replaces
    its queued one), SWEEP for a background job. `session` defaults to this browser session.
    `batch` = (group, item, runner): a live job that a worker takes together with other queued live jobs of the
    same group is computed by one `runner([item, ...], on_partial, cancel)` call instead of `work`; `units` is
    then its size in rows (a batch holds at most `BATCH_ROWS`).
    `estimate_of`: the job's `Work` (`fairness_core.jobs.estimates`): its first estimate is the page's (`estimate`),
    its progress is revised from there, and when it ends the ratio of real to estimated time corrects the next
    estimate of its kind.
    """
    session = session or session_id()
    with _REGISTRY_LOCK:
        existing = _REGISTRY.get(key)
        if existing is not None and existing.running:
            # same computation already under way (another session, a reload): attach to it
            if session not in existing.sessions:
                existing.shared_with += 1 if existing.sessions else 0
                existing.sessions.add(session)
            attach = True
            job = existing
        else:
            attach = False
            job = BackgroundJob(key, label=label, units=units, lane=lane, sessions={session}, batch=batch)
            _REGISTRY[key] = job
            _forget_old_finished()
    if not attach and estimate_of is not None:
        job.work, job.units = estimate_of, int(estimate_of.units) or None
        job.slowdown = slowdown_for(estimate_of)
        job.first_s = estimate(estimate_of, job.slowdown)
    elif not attach and units and (kind_of(key) in _RATES or seconds_per_unit is not None):
        job.seconds_per_unit = seconds_per_unit
        job.slowdown = machine_slowdown()  # a rate, measured here or documented, is rescaled to this load

    def on_progress(progress: Progress) -> None:
        job.progress = progress
        job.progress_at = time.monotonic()

    def target() -> None:
        job.begun = True
        job.started, job.started_wall = time.monotonic(), time.time()
        try:
            if not job.cancel.cancelled:  # every session left while it was queued
                job.result = work(on_progress, job.cancel)
        except BaseException as error:  # shown in the page; never lost in a thread
            job.error = error
        finally:
            job.finished = time.monotonic()
            job.partials.clear()  # for display while it ran; the store has the rows
            _record_finished(job)
            _log_timing(job, None)
            job.ended.set()

    if attach:
        pool().submit(session, key, job.lane)  # joins the queued entry; lets go of this session's older request
        return job
    _shown(discard=key)
    pool().submit(session, key, lane, target,
                  job.first_s if job.first_s is not None else
                  estimate_s(kind_of(key), units, seconds_per_unit, job.slowdown) if units else None,
                  group=batch[0] if batch is not None else None, size=max(1, units or 0))
    return job


def threads_now() -> int:
    """The most intra-op threads model work starting now may take (a live generation or a sweep): every core when
    no other model work runs on the pool, else an even share (`fairness_core.jobs.queue.live_threads`). The load
    of other programs is the model layer's to read when the job starts (`fairness_core.models.threads`: the
    runnable threads right now), not the one-minute load average here, which counts this server's own last moves
    (a move after a move on a quiet machine got one thread). Call it where the job starts."""
    return live_threads(usable_cores(), pool().busy_workers())


class _AllCancelled:
    """The cancel token of a batch: cancelled once every job in it is (a session still waiting keeps it going)."""

    def __init__(self, batch_jobs: list[BackgroundJob]) -> None:
        self.jobs = batch_jobs

    @property
    def cancelled(self) -> bool:
        return all(job.cancel.cancelled for job in self.jobs)


def _run_batch(entries: list[Entry]) -> None:
    """A worker took several queued live jobs of one group: compute them in one call of their runner."""
    batch_jobs = [job for entry in entries if (job := get(entry.key)) is not None and job.batch is not None]
    now, wall = time.monotonic(), time.time()
    for job in batch_jobs:
        job.begun, job.started, job.started_wall = True, now, wall
    try:
        runner = batch_jobs[0].batch[2]  # type: ignore[index]
        items = [job.batch[1] for job in batch_jobs]  # type: ignore[index]
        results = runner(items, lambda index, partial: batch_jobs[index].publish(partial), _AllCancelled(batch_jobs))
        for job, result in zip(batch_jobs, results, strict=True):
            job.result = result
    except BaseException as error:  # shown in every page of the batch; never lost in a thread
        for job in batch_jobs:
            job.error = error
    finally:
        rows = sum(job.units or 0 for job in batch_jobs)
        for job in batch_jobs:
            job.finished = time.monotonic()
            job.partials.clear()
            _log_timing(job, rows)
            job.ended.set()


def _dropped(entry: Entry) -> None:
    """The queue let go of a request nobody waits for any more (a newer slider move replaced it)."""
    job = get(entry.key)
    if job is not None and not job.begun and not job.done:
        job.dropped = True
        job.cancel.cancel()
        job.finished = time.monotonic()
        job.ended.set()


def release(key: str, session: str | None = None) -> None:
    """This session no longer waits for job `key` (a newer slider move, a closed tab): a queued request nobody
    else waits for is dropped, a running one is cancelled at its next checkpoint."""
    session = session or session_id()
    job = get(key)
    if job is None or job.done:
        return
    with _REGISTRY_LOCK:
        job.sessions.discard(session)
        nobody = not job.sessions
    pool().withdraw(session, key)
    if nobody and job.begun:
        job.cancel.cancel()


def queue_message(key: str) -> str | None:
    """'3 requests ahead of yours, about 8 s' while job `key` waits for a model worker; None once it runs.

    The time is what the requests ahead (and those running now) have left by the seconds per unit that
    finished jobs of their kinds measured here (`record_rate`); without a measurement only the count is given.
    """
    job = get(key)
    if job is None or job.begun or job.done:
        return None
    workers = pool()
    position, ahead, running_now = workers.snapshot(key)
    if position is None:
        return None
    lanes = (LIVE,) if job.lane == LIVE else (LIVE, SWEEP)
    running_left = [eta_s(other) for entry in running_now
                    if (other := get(entry.key)) is not None and other.lane in lanes]
    serving = workers.workers if job.lane == LIVE else workers.sweep_limit
    wait = wait_estimate([entry.estimate_s for entry in ahead], running_left, serving)
    return position_message(position, wait)


def follow(key: str, on_partial: Callable[[dict], None] | None = None,
           on_wait: Callable[[str], None] | None = None, stop: Callable[[], bool] | None = None,
           session: str | None = None) -> BackgroundJob | None:
    """Wait in the page's script for job `key` to end, handing its partial results to `on_partial` and, while it
    is queued, its place in line to `on_wait` (a few times a second: drawing is where Streamlit acts on a newer
    slider move). Returns the job once it ended, or as soon as `stop()` says the page moved on (the job is then
    released for this session); any exception while waiting (Streamlit's rerun request) releases it too."""
    session = session or session_id()
    job = get(key)
    if job is None:
        return None
    seen = 0
    said, said_at = None, -float("inf")
    try:
        while True:
            ended = job.ended.wait(FOLLOW_EVERY_S)
            partials, seen = job.partials_since(seen)
            for partial in partials:
                if on_partial is not None:
                    on_partial(partial)
            if stop is not None and stop():
                release(key, session)
                return job
            if ended:
                return job
            if on_wait is not None and not job.begun:
                message = queue_message(key) or "waiting for a model worker"
                now = time.monotonic()
                if message != said or now - said_at >= WAIT_REDRAW_S:  # a redraw also lets Streamlit act on a move
                    on_wait(message)
                    said, said_at = message, now
    except BaseException:
        release(key, session)
        raise


def _record_finished(job: BackgroundJob) -> None:
    """Seconds per unit of a job that computed batches (not one answered from the store), for estimates; for a job
    started with a `Work`, its real over first-estimated seconds when it computed all of its work here."""
    progress = job.progress
    if job.error is not None or job.cancel.cancelled or not job.units or progress is None or not progress.total:
        return
    if job.work is not None:
        ratio = measured_ratio((job.finished or time.monotonic()) - job.started, job.first_s or 0.0)
        if ratio is not None and progress.skipped == 0 and progress.computed_fraction >= 0.999:
            _RATIOS[job.work.kind] = (ratio, job.slowdown or 1.0)
        return
    computed = (progress.done - progress.skipped) / progress.total
    if computed > 0 and progress.elapsed_s > 0:
        record_rate(kind_of(job.key), progress.elapsed_s, round(job.units * computed) or 1,
                    job.slowdown if job.slowdown is not None else machine_slowdown())


def _shown(add: str | None = None, discard: str | None = None) -> bool:
    """This session's record of jobs whose end it has shown (bounded: the newest `KEEP_SHOWN`); True when `add`
    was already there."""
    shown = st.session_state.setdefault(_SHOWN_DONE, {})
    if discard is not None:
        shown.pop(discard, None)
    if add is None:
        return False
    if add in shown:
        return True
    shown[add] = True
    while len(shown) > KEEP_SHOWN:
        shown.pop(next(iter(shown)))
    return False


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
    if job is not None:
        job.ended.wait(timeout_s)
    return job


def show(key: str, label: str | None = None, cancelled_text: str | None = None) -> BackgroundJob | None:
    """Progress bar with a live ETA and a Cancel button while the job runs; a status line once it ended.

    `cancelled_text`: what a cancelled job's line says after "was cancelled by the user" on a page that shows no
    partial results below it ("" says nothing: the page says it itself); by default, that the results below are
    partial."""
    job = get(key)
    if job is None:
        return None
    label = label or job.label
    if job.running:
        _live_progress(key, label)
    elif job.error is not None:
        st.error(f"{escape_markdown(label)} failed: {escape_markdown(str(job.error))}")
    elif job.cancel.cancelled and cancelled_text is None:
        note = partial_note(job)
        st.warning(f"{label} was cancelled by the user{f' ({note})' if note else ''}; results below are partial. "
                   "Finished batches are stored and running it again resumes.")  # markdown: developer text
    elif job.cancel.cancelled and cancelled_text:
        st.warning(f"{label} was cancelled by the user; {cancelled_text}")  # markdown: developer text
    return job


def computed_here(key: str, session: str | None = None) -> bool:
    """True when job `key` finished here for this browser session, computing its result (not answering from the
    store): a page that reads that result back from the store on its next rerun says "computed now", not "served
    from the run store" (issue 35 §3)."""
    job = get(key)
    if job is None or not job.done or job.error is not None or job.cancel.cancelled or job.result is None:
        return False
    if (session or session_id()) not in job.sessions:
        return False
    return not bool(getattr(job.result, "from_cache", False))


def partial_label(done: int, total: int, unit: str = "batches") -> str:
    """The label results drawn from an unfinished run carry: "partial: 3 of 10 batches"."""
    return f"partial: {done} of {total} {unit}"


def partial_note(source: Any) -> str | None:
    """`partial_label` for a cancelled job, a `RunOutcome` or a stored `RunInfo`; None when it is complete.

    A job is partial when it was cancelled before all batches were done; a run when its status is not
    complete (cancelled, interrupted, failed).
    """
    if isinstance(source, BackgroundJob):
        progress = source.progress
        if progress is None or not source.cancel.cancelled or progress.done >= progress.total:
            return None
        return partial_label(progress.done, progress.total, progress.unit)
    run = getattr(source, "run", source)  # a RunOutcome carries its RunInfo
    status, done, total = (getattr(run, name, None) for name in ("status", "shards_done", "n_shards"))
    if status is None or status == "complete" or done is None or total is None:
        return None
    return partial_label(done, total)


def show_partial(source: Any, what: str = "These results") -> str | None:
    """A warning above results from an unfinished run ("These results are partial: 3 of 10 batches ...")."""
    note = partial_note(source)
    if note is not None:
        st.warning(f"{what} are {note}; running the same request again completes them.")  # markdown: developer text
    return note


def cancel_button(key: str, label: str = "Cancel") -> bool:
    """The visible Cancel for job `key` (shown while it runs); True when pressed now.

    Cancelling sets the job's token: the runner starts no further batch and a work unit in the middle of a
    batch stops at its next `fairness_core.jobs.checkpoint` (work units call it at least every few seconds),
    so the job ends within seconds; finished batches stay stored and running it again resumes.
    """
    job = get(key)
    if job is None or job.done:
        return False
    pressed = st.button(label, key=f"{key}_cancel_button", disabled=job.cancel.cancelled, icon=":material/stop:",
                        help="Stops within seconds; finished batches stay stored and running it again resumes.")
    if pressed:
        job.cancel.cancel()
    return pressed


def run_button(key: str | None, label: str = "Run", *, estimate_s: float | None = None,
               confirm_above_s: float = CONFIRM_ABOVE_S, widget_key: str | None = None, disabled: bool = False,
               help: str | None = None) -> bool:
    """A Run button that is disabled while a job with this `key` runs (in any tab); True when pressed.

    With `estimate_s` it says the estimated time before anything starts, and above `confirm_above_s` it
    asks for a tick first, so a big grid is never started by one stray click. `key` None (no valid
    request yet) or `disabled` shows the button disabled.
    """
    widget_key = widget_key or f"run_{kind_of(key) if key else 'job'}"
    job = get(key) if key else None
    busy = job is not None and job.running
    if busy:
        st.caption(f"Already running (started {time.strftime('%H:%M:%S', time.localtime(job.started_wall))}); "
                   "its progress is below.")  # markdown: developer text
    elif estimate_s is not None:
        st.caption(f"Estimated time: about {format_seconds(estimate_s)} on this machine.")  # markdown: developer text
        if estimate_s > confirm_above_s:
            ticked = st.checkbox(f"Yes, start it (about {format_seconds(estimate_s)})", key=f"{widget_key}_confirm")
            disabled = disabled or not ticked
    pressed = st.button(label, key=widget_key, type="primary", disabled=disabled or busy or key is None, help=help)
    return bool(pressed) and not busy and key is not None


def followed(session_key: str, prefix: str, label: str) -> str | None:
    """The job of this kind that this browser session follows: the one it started (kept under `session_key`), else
    one the user picks among the running ones (`reattach_picker`), which is then kept too, so the page shows its
    end — results, or the cancelled/partial label — after it stops running."""
    key = st.session_state.get(session_key)
    if key is not None and get(key) is None:  # the registry has let it go (KEEP_FINISHED): offer the others again
        del st.session_state[session_key]
        key = None
    if key is None:
        key = reattach_picker(prefix, label)
        if key is not None:
            st.session_state[session_key] = key
    return key


def reattach_picker(prefix: str, label: str) -> str | None:
    """Running jobs of this kind started in another tab or before a reload; returns the key chosen."""
    others = running(prefix)
    if not others:
        return None
    names = {job.key: f"{job.label} started {time.strftime('%H:%M:%S', time.localtime(job.started_wall))} — "
                      f"{job.describe()[1]}" for job in others}
    st.info(f"{len(others)} {label} job(s) are running on this server "
            "(another tab, or before a reload).")  # markdown: developer text
    choice = st.selectbox("Re-attach to a running job", [None, *names], format_func=lambda k: "—" if k is None
                          else names[k], key=f"{prefix}_reattach")
    return choice


@st.fragment(run_every=1.0)
def _live_progress(key: str, label: str) -> None:
    job = get(key)
    if job is None:
        return
    if job.done:
        if not _shown(add=key):
            st.rerun()  # whole page: it can now show the results
        return
    fraction, text = job.describe()
    st.progress(min(max(fraction, 0.0), 1.0), text=f"{label}: {text}")
    cancel_button(key)
