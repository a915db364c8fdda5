"""Batched jobs: pure work units over shards, progress with ETA, cancel and resume, local or on Ray."""

from fairness_core.jobs.context import ShardCancelled, checkpoint
from fairness_core.jobs.runner import (
    EXECUTORS,
    CancelToken,
    Executor,
    LocalExecutor,
    Progress,
    RunOutcome,
    Task,
    format_seconds,
    get_executor,
    run_task,
)

__all__ = [
    "EXECUTORS",
    "CancelToken",
    "Executor",
    "LocalExecutor",
    "Progress",
    "RunOutcome",
    "ShardCancelled",
    "Task",
    "checkpoint",
    "format_seconds",
    "get_executor",
    "run_task",
]
