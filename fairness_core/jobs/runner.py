"""Batched execution of a task with progress, cancellation and resume.

A task is a request (JSON-like), a list of shards, and a *pure* work unit
`work(request, shard) -> rows`. Purity is what lets an executor run shards elsewhere (a process
pool, Ray) later: a work unit gets everything it needs from its arguments, and heavy objects such
as models come from the process-wide model cache.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from fairness_core.store.manifest import build_manifest
from fairness_core.store.store import CANCELLED, CANCELLED_BY_USER, COMPLETE, FAILED, RunInfo, RunStore

Rows = pd.DataFrame | Sequence[dict[str, Any]]
WorkUnit = Callable[[dict[str, Any], dict[str, Any]], Rows]


@dataclass(frozen=True)
class Task:
    """One computation: `kind` names it, `request` determines its output, `shards` split it."""

    kind: str
    request: dict[str, Any]
    shards: Sequence[dict[str, Any]]
    work: WorkUnit

    @property
    def manifest(self) -> dict[str, Any]:
        return build_manifest(self.kind, self.request)


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    elapsed_s: float
    skipped: int = 0  # shards already in the store from an earlier, interrupted run

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else self.done / self.total

    @property
    def eta_s(self) -> float | None:
        """Seconds left, extrapolated from the shards computed in this process."""
        computed = self.done - self.skipped
        if computed <= 0:
            return None
        return self.elapsed_s / computed * (self.total - self.done)

    def describe(self) -> str:
        eta = self.eta_s
        eta_text = "" if eta is None else f", about {format_seconds(eta)} left"
        return f"{self.done}/{self.total} batches ({self.fraction:.0%}){eta_text}"


def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


class CancelToken:
    """Thread-safe flag a UI or signal handler sets; the runner checks it between shards."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


class Executor(Protocol):
    """Runs work units for shards and yields (shard index, rows) as each finishes."""

    def map(self, task: Task, shard_indices: Sequence[int]) -> Iterator[tuple[int, Rows]]: ...


class LocalExecutor:
    """In-process, one shard after another: models stay loaded in this process's cache."""

    def map(self, task: Task, shard_indices: Sequence[int]) -> Iterator[tuple[int, Rows]]:
        for index in shard_indices:
            yield index, task.work(task.request, task.shards[index])


@dataclass
class RunOutcome:
    run: RunInfo
    from_cache: bool
    computed_shards: int = 0
    progress_log: list[Progress] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def status(self) -> str:
        return self.run.status


def run_task(
    task: Task,
    store: RunStore,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: CancelToken | None = None,
    executor: Executor | None = None,
) -> RunOutcome:
    """Answer from the store if a complete run has this manifest, else compute the missing shards.

    Each shard's rows are written in one transaction as soon as it finishes, so an interrupted run
    keeps its finished shards and a later call with the same task resumes where it stopped.
    """
    manifest = task.manifest
    cached = store.find_complete(manifest)
    if cached is not None:
        return RunOutcome(run=cached, from_cache=True)

    run = store.begin_run(manifest, n_shards=len(task.shards))
    already = store.completed_shards(run.run_id)
    pending = [index for index in range(len(task.shards)) if index not in already]
    executor = executor or LocalExecutor()
    started = time.monotonic()
    done = len(already)
    outcome = RunOutcome(run=run, from_cache=False)

    def report() -> None:
        progress = Progress(done, len(task.shards), time.monotonic() - started, skipped=len(already))
        outcome.progress_log.append(progress)
        if on_progress is not None:
            on_progress(progress)

    report()
    try:
        for index, rows in _until_cancelled(executor.map(task, pending), cancel):
            store.write_shard(run.run_id, index, rows)
            done += 1
            outcome.computed_shards += 1
            report()
    except BaseException as error:
        # Ctrl-C / a stop request is the user's choice, not a crash: record it in words, not as a repr.
        if isinstance(error, Exception):
            store.finish_run(run.run_id, FAILED, error=repr(error))
        else:
            store.finish_run(run.run_id, CANCELLED, error=CANCELLED_BY_USER)
        raise
    status = CANCELLED if cancel is not None and cancel.cancelled and done < len(task.shards) else COMPLETE
    store.finish_run(run.run_id, status, error=CANCELLED_BY_USER if status == CANCELLED else None)
    final = store.get_run(run.run_id)
    assert final is not None
    outcome.run = final
    return outcome


def _until_cancelled(
    results: Iterable[tuple[int, Rows]], cancel: CancelToken | None
) -> Iterator[tuple[int, Rows]]:
    iterator = iter(results)
    while cancel is None or not cancel.cancelled:  # checked before each shard starts
        try:
            item = next(iterator)
        except StopIteration:
            return
        yield item
