"""Batched jobs: pure work units over shards, progress with ETA, cancel and resume, local or on Ray."""

from fairness_core.jobs.context import ShardCancelled, checkpoint
from fairness_core.jobs.executors import EXECUTORS, get_executor
from fairness_core.jobs.runner import (
    CancelToken,
    Executor,
    LocalExecutor,
    Progress,
    RunOutcome,
    Task,
    format_seconds,
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
