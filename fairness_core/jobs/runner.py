"""Batched execution of a task with progress, cancellation and resume.

A task is a request (JSON-like), a list of shards, and a *pure* work unit
`work(request, shard) -> rows`. Purity is what lets an executor run shards elsewhere (Ray workers,
see `ray_executor.py`): a work unit gets everything it needs from its arguments, and heavy objects
such as models come from the process-wide model cache of whichever process runs it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from fairness_core.jobs.context import ShardCancelled, shard_context
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
    partial: float = 0.0  # fraction of the shard in flight that is done (reported from inside the work unit)
    unit: str = "batches"  # what done/total count (a study may count its work instead: "pairs × metrics")
    #: the share of the work done weighted by what each part costs (`jobs.estimates.weighted_fraction`), where the
    #: counted units cost very different amounts (a BLEU candidate and a BERTScore one); None: done/total
    weighted: float | None = None

    @property
    def fraction(self) -> float:
        if self.weighted is not None:
            return min(1.0, max(self.weighted, 0.0))
        return 1.0 if self.total == 0 else min(1.0, (self.done + self.partial) / self.total)

    @property
    def computed_fraction(self) -> float:
        """The share of the work left when this process started that it has done (shards found stored by an
        interrupted run are not counted: they took no time here)."""
        if self.weighted is not None:
            return self.fraction
        computed = self.done - self.skipped + self.partial
        return computed / max(self.total - self.skipped, computed) if computed > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left, extrapolated from the work computed in this process (whole and partial shards)."""
        fraction = self.computed_fraction
        if fraction <= 0:
            return None
        return self.elapsed_s / fraction * (1.0 - fraction)

    def describe(self) -> str:
        eta = self.eta_s
        eta_text = "" if eta is None else f", about {format_seconds(eta)} left"
        return f"{self.done}/{self.total} {self.unit} ({self.fraction:.0%}){eta_text}"


def format_seconds(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes < 60 else f"{minutes // 60:,} h {minutes % 60:02d} min"


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
    """Runs work units for shards and yields (shard index, rows) as each finishes, in any order.

    An executor never writes the store: `run_task` (the one writer) does, as results arrive. When
    `cancel` is set, or the caller closes the iterator, it stops starting shards and returns.
    """

    name: str

    def describe(self) -> str: ...

    def map(
        self, task: Task, shard_indices: Sequence[int], cancel: CancelToken | None = None
    ) -> Iterator[tuple[int, Rows]]: ...


class LocalExecutor:
    """In-process, one shard after another: models stay loaded in this process's cache."""

    name = "local"

    def describe(self) -> str:
        return "local (this process, one batch at a time)"

    def map(
        self, task: Task, shard_indices: Sequence[int], cancel: CancelToken | None = None
    ) -> Iterator[tuple[int, Rows]]:
        for index in shard_indices:
            if cancel is not None and cancel.cancelled:
                return
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
    on_partial: Callable[[dict[str, Any]], None] | None = None,
) -> RunOutcome:
    """Answer from the store if a complete run has this manifest, else compute the missing shards.

    Each shard's rows are written in one transaction as soon as it finishes, so an interrupted run
    keeps its finished shards and a later call with the same task resumes where it stopped.
    `executor` (default: local) decides where shards run; the rows and the manifest do not depend on it.
    `on_partial` receives what in-process work units `publish` before their shard is done (for display).
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

    def report(partial: float = 0.0) -> None:
        progress = Progress(done, len(task.shards), time.monotonic() - started, skipped=len(already),
                            partial=partial)
        outcome.progress_log.append(progress)
        if on_progress is not None:
            on_progress(progress)

    report()
    results = executor.map(task, pending, cancel)
    try:
        # In-process work units see the cancel token and report in-shard progress (jobs/context.py).
        with shard_context(cancel, report, on_partial):
            for index, rows in _until_cancelled(results, cancel):
                store.write_shard(run.run_id, index, rows)
                done += 1
                outcome.computed_shards += 1
                report()
    except ShardCancelled:
        pass  # the shard in flight is discarded; finished shards stay and a rerun resumes
    except BaseException as error:
        store.finish_run(run.run_id, FAILED if isinstance(error, Exception) else CANCELLED, error=describe_error(error))
        raise
    finally:
        _close(results)  # an executor with shards still in flight stops them now
    status = CANCELLED if cancel is not None and cancel.cancelled and done < len(task.shards) else COMPLETE
    store.finish_run(run.run_id, status, error=CANCELLED_BY_USER if status == CANCELLED else None)
    final = store.get_run(run.run_id)
    assert final is not None
    outcome.run = final
    return outcome


def describe_error(error: BaseException) -> str:
    """What the run store records about a run that stopped early, in words a user can read."""
    if isinstance(error, KeyboardInterrupt | ShardCancelled):
        return CANCELLED_BY_USER
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _close(results: Iterable[Any]) -> None:
    close = getattr(results, "close", None)
    if close is not None:
        close()


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
